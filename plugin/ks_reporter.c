/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_reporter.c
 * @brief The reporter thread: refreshes each topic's partition count from
 *        broker metadata and writes the periodic report, off the produce
 *        path (the drainer, which analyses what on_send staged, is
 *        ks_drainer.c). The final report is written by ks_client_destroy()
 *        after both have stopped.
 */
#include "ks_reporter.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ks_budget.h"
#include "ks_clock.h"
#include "ks_hash.h"
#include "ks_metrics.h"
#include "ks_metadata.h"
#include "ks_priority.h"
#include "ks_report.h"
#include "ks_report_reuse.h"

/**
 * Metadata requests failed in a row before a report says METADATA_FAILED
 * (a refresh with no broker up counts as one). One failing between
 * answered ones is no news: under load an answer can outlast its timeout
 * (bounded above), and the counts are as of the last answer, one refresh
 * interval older. Failures in a row mean the counts may be stale now.
 */
#define KS_METADATA_FAILURES_WARN 3

/** Retry delay while some topic's count is still unknown. */
#define KS_METADATA_RETRY_MS 200

/** A report of topics that did not change since the last one is not
 *  written again (its file is left as is, its mtime touched), but at least
 *  this often it is, so that its `generated_at` does not grow older than
 *  this. Its topics' texts are reused then (ks_report_reuse.h): a topic's
 *  figures, rates and sizing included, are as of its last change. */
#define KS_UNCHANGED_REWRITE_MS 60000

/** Temporary report files of dead processes older than this are removed
 *  at start (ks_report_remove_stale()). */
#define KS_STALE_TMP_AGE_S 60

/**
 * @brief Appends to @p parts (@p n bytes written of @p size) one reduced
 *        sketch, "<what> down to <min> of <asked><unit> in <topics>", after
 *        a comma when not the first; nothing when no topic has it reduced.
 * @returns the bytes written now.
 */
static size_t reduced_part(char *parts, size_t size, size_t n, const char *what,
                           const char *unit, size_t min, size_t asked,
                           size_t topics)
{
        int w;

        if (!topics || n >= size)
                return n;
        w = snprintf(parts + n, size - n, "%s%s down to %zu of %zu%s in %zu",
                     n ? ", " : "", what, min, asked, unit, topics);
        return w < 0 ? n : n + (size_t)w;
}

/**
 * @brief SKETCHES_REDUCED when keyshift.memory.max.mb's share gave some of
 *        the report's topics (@p tl, from their snapshots) smaller
 *        sketches than the properties ask (ks_registry.h): which sketches,
 *        how small, what their smaller size costs, whether the minimum
 *        sizes took the sketches past the budget, and the budget that
 *        keeps the sizes asked for the topics made so far.
 */
static void warn_reduced(ks_client_t *c, ks_warn_list_t *wl,
                         const ks_sketch_tally_t *tl)
{
        ks_registry_budget_t b;
        char                 parts[256], fix[160], over[160] = "";
        size_t               n = 0;
        int                  mb;

        if (!tl->reduced)
                return;
        parts[0] = 0;
        n        = reduced_part(parts, sizeof(parts), n, "key sample", " keys",
                                tl->key_sample_min, c->params.key_sample_size,
                                tl->key_sample_reduced);
        n        = reduced_part(parts, sizeof(parts), n, "hot-key counters", "",
                                tl->topk_min, c->params.topk_capacity,
                                tl->topk_reduced);
        reduced_part(parts, sizeof(parts), n, "mixed-key sample", "",
                     tl->mixed_sample_min, c->params.mixed_sample_size,
                     tl->mixed_sample_reduced);
        /* the registry's figures are of the topics made so far, which a
         * periodic report may not all hold yet: said with their count */
        ks_registry_budget(&c->reg, &b);
        if (b.taken > c->params.sketch_budget)
                snprintf(over, sizeof(over),
                         "; the %zu topics made take %.1f MiB at the minimum "
                         "sizes, over the %.1f MiB left",
                         b.topics, (double)b.taken / (1 << 20),
                         (double)c->params.sketch_budget / (1 << 20));
        mb = ks_budget_memory_mb_for(b.needed, c->conf.memory_max_mb,
                                     KS_MEMORY_MAX_MB_MAX);
        if (mb)
                snprintf(fix, sizeof(fix),
                         "keyshift.memory.max.mb=%d keeps the sizes asked for "
                         "the %zu topics made",
                         mb, b.topics);
        else
                snprintf(fix, sizeof(fix),
                         "no keyshift.memory.max.mb up to %d keeps them: "
                         "lower the sample sizes",
                         KS_MEMORY_MAX_MB_MAX);
        /* < 512 bytes (ks_warn_t.message) with the longest numbers: all
         * three sketches, over the budget, no budget that keeps them */
        ks_warn_add(wl, KS_WARN_SKETCHES_REDUCED, NULL,
                    "smaller sketches than asked in %zu of %zu topics (a new "
                    "topic gets what is left of keyshift.memory.max.mb=%d / "
                    "max(16, topics)): %s; wider errors, stated per topic%s; "
                    "%s",
                    tl->reduced, tl->topics, c->conf.memory_max_mb, parts, over,
                    fix);
}

typedef struct ks_change_ctx {
        int64_t now_ms;
        size_t  changed;
} ks_change_ctx_t;

static void note_topic_changes(ks_topic_t *t, void *opaque)
{
        ks_change_ctx_t *ctx = opaque;

        ctx->changed += (size_t)ks_topic_note_changes(t, ctx->now_ms);
}

/**
 * @brief Whether nothing a report shows changed since the last report
 *        written: no topic changed (ks_topic_note_changes(), which also
 *        dates each topic's last change), and nothing producer-level (new
 *        topics, messages beyond keyshift.topics.max, warnings carried,
 *        metadata failures, a partitioner mismatch). Linear in topics.
 * @locality reporter thread. @locks each topic's, one at a time.
 */
static int unchanged(ks_client_t *c, int64_t now_ms)
{
        ks_change_ctx_t ctx   = {now_ms, 0};
        uint64_t        fp[6] = {0};

        ks_registry_foreach(&c->reg, note_topic_changes, &ctx);
        fp[0] = ks_registry_seen(&c->reg);
        fp[1] = atomic_load(&c->reg.untracked_messages) ^
                atomic_load(&c->acks_unchecked) << 32 ^
                (uint64_t)atomic_load(&c->ack_shift) << 60;
        fp[2] = c->carry.cnt;
        fp[3] = (uint64_t)c->metadata_failures;
        fp[4] =
            ks_hash_key64(c->partitioner_detail, strlen(c->partitioner_detail));
        { /* publishing's state (not its counts or the error's words,
           * which differ at each failure): said when it changes, so an
           * unchanged producer's file keeps the REPORT_TOPIC_FAILED
           * warning it was written with while records keep failing */
                ks_report_publish_t pub;
                char                perr[512];
                if (ks_publish_state(c->publish, &pub, perr, sizeof(perr))) {
                        const char *st = ks_report_publish_state(&pub);
                        fp[5]          = ks_hash_key64(st, strlen(st));
                }
        }
        fp[0] = ks_hash_murmur64a(fp, sizeof(fp), (uint64_t)ctx.changed);
        if (ctx.changed || fp[0] != c->report_fp || c->report_failed ||
            !c->reports_written ||
            now_ms - c->report_written_ms >= KS_UNCHANGED_REWRITE_MS) {
                c->report_fp = fp[0];
                return 0;
        }
        return 1;
}

/**
 * @brief Writes keyshift.metrics.path from @p m (the topics of this
 *        report, NULL on ENOMEM) and the producer-level warnings of
 *        @p wl; frees @p m. A failure is a warning, now and in the next
 *        report, as for the report itself.
 * @locality reporter thread, or the thread writing the final report.
 */
static void write_metrics(ks_client_t *c, ks_warn_list_t *wl, ks_metrics_t *m)
{
        json_t *warnings = ks_warn_list_json(wl, NULL);
        char    errstr[512];

        ks_metrics_warnings(m, warnings);
        json_decref(warnings);
        if (ks_metrics_write_atomic(m, c->metrics_path, errstr,
                                    sizeof(errstr))) {
                ks_warn_add(wl, KS_WARN_METRICS_WRITE_FAILED, NULL, "%s",
                            errstr);
                ks_warn_add(&c->carry, KS_WARN_METRICS_WRITE_FAILED, NULL,
                            "previous metrics not written: %s", errstr);
        }
        ks_metrics_free(m);
}

/**
 * @brief Says in @p wl, the report being written, that reports were not
 *        written since the last one that was (a full disk, a folder made
 *        read-only): how many, from when to when, the last error; the
 *        file at the path stayed the last report written until this one
 *        (issue 30: a full disk lost reports without a word in the
 *        reports that followed).
 * @locality the reporter thread, or the application thread writing the
 *           final report.
 */
static void lost_warning(ks_client_t *c, ks_warn_list_t *wl)
{
        char first[40], last[40];

        if (!c->reports_lost)
                return;
        ks_report_rfc3339(c->lost_first_ms, first, sizeof(first));
        ks_report_rfc3339(c->lost_last_ms, last, sizeof(last));
        if (c->reports_lost == 1)
                ks_warn_add(wl, KS_WARN_REPORT_WRITE_FAILED, NULL,
                            "1 report was not written, at %s (the previous "
                            "report stayed in place): %s",
                            first, c->lost_error);
        else
                ks_warn_add(wl, KS_WARN_REPORT_WRITE_FAILED, NULL,
                            "%llu reports were not written, from %s to %s "
                            "(the previous report stayed in place); the "
                            "last error: %s",
                            (unsigned long long)c->reports_lost, first, last,
                            c->lost_error);
}

/**
 * @brief The final report's words on why a topic's partition count may
 *        still be unknown: the producer was destroyed before a metadata
 *        answer named its topic (a producer that lives 10 ms). keyshift
 *        does not ask at destroy: librdkafka (2.0.2) handles metadata
 *        answers on its main thread, the one that calls on_destroy, so a
 *        request made then only waits out its timeout.
 * @locality the thread writing the final report, after the reporter
 *           thread was joined.
 */
static void count_unknown_why(const ks_client_t *c, int64_t now_ms, char *buf,
                              size_t size)
{
        long long age = (long long)(now_ms - c->started_at_ms);

        if (c->metadata_answers)
                snprintf(buf, size,
                         "the producer was destroyed %lld ms after it was "
                         "created, before a metadata answer named this topic",
                         age);
        else
                snprintf(buf, size,
                         "the producer was destroyed %lld ms after it was "
                         "created, before any metadata answer (%s); keyshift "
                         "does not ask at destroy, where librdkafka would "
                         "hold rd_kafka_destroy() until the request timed out",
                         age,
                         *c->metadata_error ? c->metadata_error
                         : atomic_load(&c->brokers_up)
                             ? "its first request was still outstanding"
                             : "no broker was up");
}

/** @returns the report's producer block for @p c as of now (the publish
 *           state is added by ks_reporter_write() when there is one). */
static ks_report_producer_t producer_block(const ks_client_t *c)
{
        return (ks_report_producer_t){
            .client_id          = c->client_id,
            .client_name        = c->name,
            .pid                = (long)getpid(),
            .librdkafka_version = ks_rdk.rd_kafka_version_str(),
            .librdkafka_library = ks_host_library(),
            .partitioner        = ks_partitioner_name(c->params.partitioner),
            .partitioner_source = c->partitioner_source,
            .sticky_linger_ms   = c->params.sticky_linger_ms,
            .started_at_ms      = c->started_at_ms,
            .report_interval_ms = c->conf.report_interval_ms,
            .report_path        = c->report_path,
            .drainer_priority   = ks_priority_name(
                  (ks_priority_t)atomic_load(&c->drainer_priority)),
            .reporter_priority = ks_priority_name(
                (ks_priority_t)atomic_load(&c->reporter_priority)),
            .cpu_watched          = 1,
            .out_of_cpu_ms        = atomic_load(&c->out_of_cpu_ms),
            .delivery_thread_ms   = atomic_load(&c->delivery_bound_ms),
            .out_of_cpu_now       = atomic_load(&c->ack_shift) != 0,
            .deliveries_unchecked = atomic_load(&c->acks_unchecked),
            .delivery_check_one_in =
                atomic_load(&c->cpu_watched) ? 1u << KS_ACK_SAMPLE_SHIFT : 1,
        };
}

/**
 * @brief Waits until every message staged so far is analysed (the final
 *        report's caller drained the rings itself: the drainer has
 *        stopped, so @p final does not wait); a wait that runs out says
 *        so in @p wl (ANALYSIS_BEHIND).
 * @returns 0, or -1 when on_destroy cut it short (the final report comes
 *          next: this one is not to be written).
 */
static int wait_for_analysis(ks_client_t *c, int final, ks_warn_list_t *wl)
{
        if (final ||
            !ks_stage_sync(c->stage, KS_SYNC_TIMEOUT_MS, &c->sync_cancel))
                return 0;
        if (atomic_load(&c->sync_cancel))
                return -1;
        ks_warn_add(wl, KS_WARN_ANALYSIS_BEHIND, NULL,
                    "keyshift's thread had not analysed every message "
                    "produced before this report after %d ms: this "
                    "report may not count the last seconds of them",
                    KS_SYNC_TIMEOUT_MS);
        return 0;
}

/** @brief Nothing new since the last report: its file (and the metrics')
 *         stands, its mtime advanced for readers; no work, no repeated log
 *         lines; its records published again (their time says the
 *         producer is alive). */
static void stand_unchanged(ks_client_t *c)
{
        (void)utimensat(AT_FDCWD, c->report_path, NULL, 0);
        if (*c->metrics_path) /* node_exporter's textfile mtime */
                (void)utimensat(AT_FDCWD, c->metrics_path, NULL, 0);
        if (!c->report_failed)
                ks_publish_report(c->publish, c->report_path, NULL, NULL,
                                  c->name, 1);
}

/** @brief The producer-level warnings of the report into @p wl: those
 *         carried from the last report, the report topic's, a partitioner
 *         mismatch, failing metadata requests, topics beyond
 *         keyshift.topics.max. */
static void producer_warnings(ks_client_t *c, ks_warn_list_t *wl)
{
        uint64_t untracked;
        size_t   i;

        for (i = 0; i < c->carry.cnt; i++)
                ks_warn_add(wl, c->carry.items[i].code, NULL, "%s",
                            c->carry.items[i].message);
        ks_warn_list_clear(&c->carry);
        ks_publish_take_warnings(c->publish, wl);
        if (*c->partitioner_detail)
                ks_warn_add(wl, KS_WARN_PARTITIONER_MISMATCH, NULL,
                            "%s: keyshift models %s", c->partitioner_detail,
                            ks_partitioner_name(c->params.partitioner));
        if (c->metadata_failures >= KS_METADATA_FAILURES_WARN)
                ks_warn_add(wl, KS_WARN_METADATA_FAILED, NULL,
                            "the last %d metadata requests failed, the last "
                            "with: %s; partition counts are as of the last "
                            "answer, if any",
                            c->metadata_failures, c->metadata_error);
        if ((untracked = atomic_load(&c->reg.untracked_messages)))
                ks_warn_add(wl, KS_WARN_TOPICS_MAX, NULL,
                            "%llu messages went to topics beyond "
                            "keyshift.topics.max=%d and were not analysed",
                            (unsigned long long)untracked, c->conf.topics_max);
}

/**
 * @brief Opens the report file and writes its head and every topic, each
 *        rebuilt only when it changed since its text was written
 *        (ks_report_reuse.h); with keyshift.report.topic, the texts are
 *        kept in @p head, @p warnings and the publisher for the records
 *        (ks_publish.h). @p rt is set up here; the caller ends @p w.
 */
static void write_topics(ks_client_t *c, const ks_report_producer_t *p,
                         const ks_report_opts_t *opts, ks_warn_list_t *wl,
                         ks_report_topics_t *rt, ks_report_writer_t *w,
                         ks_report_text_t *head, ks_report_text_t *warnings)
{
        memset(rt, 0, sizeof(*rt));
        rt->w           = w;
        rt->wl          = wl;
        rt->opts        = opts;
        rt->asked       = &c->params;
        rt->reuse       = 1;
        rt->on_text     = c->publish ? ks_publish_topic_text : NULL;
        rt->on_text_arg = c->publish;
        ks_publish_report_begin(c->publish);
        if (*c->metrics_path) {
                json_t *h = ks_report_head(p, opts);
                /* NULL (ENOMEM): said when the metrics are written */
                rt->metrics = h ? ks_metrics_new(h) : NULL;
                json_decref(h);
        }
        if (ks_report_writer_open(w, c->report_path))
                return;
        if (c->publish) {
                w->keep_head     = head;
                w->keep_warnings = warnings;
        }
        if (!ks_report_writer_begin(w, p, opts))
                ks_registry_foreach(&c->reg, ks_report_topics_add, rt);
}

/**
 * @brief Ends the report written in @p w with the warnings of @p wl, and
 *        keeps its outcome at @p now_ms: a report not written is said now
 *        on stderr and in the next report written (the file at the path
 *        stays the last report written); one missing topics (ENOMEM, @p
 *        oom) says so in the next too.
 */
static void end_report(ks_client_t *c, ks_report_writer_t *w,
                       ks_warn_list_t *wl, int oom, int64_t now_ms)
{
        char errstr[512];

        if (ks_report_writer_end(w, wl, errstr, sizeof(errstr))) {
                ks_warn_add(wl, KS_WARN_REPORT_WRITE_FAILED, NULL, "%s",
                            errstr);
                if (!c->reports_lost++)
                        c->lost_first_ms = now_ms;
                c->lost_last_ms = now_ms;
                snprintf(c->lost_error, sizeof(c->lost_error), "%s", errstr);
                c->report_failed = 1;
                return;
        }
        c->reports_lost = 0;
        c->reports_written++;
        c->report_failed     = 0;
        c->report_written_ms = now_ms;
        if (oom)
                ks_warn_add(&c->carry, KS_WARN_REPORT_WRITE_FAILED, NULL,
                            "previous report incomplete: some "
                            "topics were missing (out of memory)");
}

void ks_reporter_write(ks_client_t *c, int final)
{
        ks_report_opts_t     opts = {.hot_keys           = c->conf.hot_keys,
                                     .now_ms             = ks_clock_wall_ms(),
                                     .final              = final,
                                     .sizing             = &c->conf.sizing,
                                     .queue_max_messages = c->queue_max_messages,
                                     .queue_max_bytes    = c->queue_max_bytes,
                                     .bulk_by_writer     = 1,
                                     .started_at_ms      = c->started_at_ms};
        ks_report_producer_t p    = producer_block(c);
        ks_report_publish_t  pub;
        char                 pub_err[512];
        ks_warn_list_t       wl;
        ks_report_topics_t   rt;
        ks_report_writer_t   w;
        ks_report_text_t     head = {0}, warnings = {0};
        char                 why[640];

        if (final) {
                count_unknown_why(c, opts.now_ms, why, sizeof(why));
                opts.count_unknown_why = why;
        }
        /* A producer that has not produced yet gets a report too (topics
         * {}, messages 0): it says keyshift is loaded. */
        if (!final) /* the first interval: rd_kafka_new() has returned */
                ks_metadata_learn_name(c);
        ks_warn_list_init(&wl);
        if (wait_for_analysis(c, final, &wl)) {
                ks_warn_list_clear(&wl);
                return;
        }
        /* the final report is always written */
        if (unchanged(c, opts.now_ms) && !final && !wl.cnt) {
                stand_unchanged(c);
                ks_warn_list_clear(&wl);
                return;
        }
        producer_warnings(c, &wl);
        if (ks_publish_state(c->publish, &pub, pub_err, sizeof(pub_err)))
                p.publish = &pub;
        write_topics(c, &p, &opts, &wl, &rt, &w, &head, &warnings);
        warn_reduced(c, &wl, &rt.tally);
        if (rt.oom) /* said in this report, and again in the next */
                ks_warn_add(&wl, KS_WARN_REPORT_WRITE_FAILED, NULL,
                            "some topics are missing from this report (out "
                            "of memory)");
        lost_warning(c, &wl);
        end_report(c, &w, &wl, rt.oom, opts.now_ms);
        if (*c->metrics_path)
                write_metrics(c, &wl, rt.metrics);
        if (!c->report_failed)
                ks_publish_report(c->publish, c->report_path, &head, &warnings,
                                  c->name, 0);
        ks_report_text_free(&head);
        ks_report_text_free(&warnings);
        ks_warn_list_log(&wl, stderr, c->name);
        ks_warn_list_clear(&wl);
}

static void *reporter_main(void *arg)
{
        ks_client_t *c            = arg;
        int64_t      now          = ks_clock_wall_ms();
        int64_t      next_refresh = now + c->conf.metadata_refresh_ms;
        int64_t      next_report  = c->conf.report_interval_ms
                                        ? now + c->conf.report_interval_ms
                                        : INT64_MAX;

        size_t stale;

        /* named as librdkafka names its threads (rdk:main, rdk:broker1) */
        pthread_setname_np(pthread_self(), "ks:reporter");
        /* as created: it is latency-bound (ks_priority.h) */
        atomic_store(&c->reporter_priority, (int)KS_PRIORITY_NORMAL);
        if ((stale =
                 ks_report_remove_stale(c->report_path, KS_STALE_TMP_AGE_S)))
                ks_warn_log_line(stderr, 6, c->name,
                                 "removed %zu temporary report files that "
                                 "killed processes left beside %s",
                                 stale, c->report_path);
        pthread_mutex_lock(&c->lock);
        while (!c->stop) {
                int64_t wake_at =
                    next_refresh < next_report ? next_refresh : next_report;
                int             refresh, report;
                struct timespec ts = {(time_t)(wake_at / 1000),
                                      (long)(wake_at % 1000) * 1000000};

                if (!c->wake && !atomic_load(&c->refresh_requested))
                        pthread_cond_timedwait(&c->cond, &c->lock, &ts);
                if (c->stop)
                        break;
                now     = ks_clock_wall_ms();
                refresh = c->wake ||
                          atomic_exchange(&c->refresh_requested, 0) ||
                          now >= next_refresh;
                report  = now >= next_report;
                c->wake = 0;
                pthread_mutex_unlock(&c->lock);

                ks_metadata_take_admin_results(c);

                if (refresh) {
                        ks_refresh_ctx_t ctx = {c, now, 0, 0, ""};
                        ks_metadata_refresh(&ctx);
                        ks_registry_foreach(&c->reg, ks_metadata_after_refresh,
                                            &ctx);
                        /* A topic without a count yet is asked again soon:
                         * its messages wait for it. */
                        next_refresh =
                            now +
                            (ctx.unknown && KS_METADATA_RETRY_MS <
                                                c->conf.metadata_refresh_ms
                                 ? KS_METADATA_RETRY_MS
                                 : c->conf.metadata_refresh_ms);
                        if (*ctx.last_error) {
                                snprintf(c->metadata_error,
                                         sizeof(c->metadata_error), "%s",
                                         ctx.last_error);
                                c->metadata_failures++;
                        } else if (ctx.answered) {
                                c->metadata_failures = 0;
                        }
                        c->metadata_answers += ctx.answered != 0;
                }
                if (report) {
                        ks_reporter_write(c, 0);
                        while (next_report <= now)
                                next_report += c->conf.report_interval_ms;
                }
                pthread_mutex_lock(&c->lock);
        }
        pthread_mutex_unlock(&c->lock);
        ks_metadata_take_admin_results(c);
        if (c->admin_q)
                ks_rdk.rd_kafka_queue_destroy(c->admin_q);
        c->admin_q = NULL;
        return NULL;
}

int ks_reporter_start(ks_client_t *c)
{
        atomic_store(&c->sync_cancel, 0);
        if (pthread_create(&c->thread, NULL, reporter_main, c))
                return -1;
        c->thread_running = 1;
        return 0;
}

void ks_reporter_stop(ks_client_t *c)
{
        if (c->thread_running) {
                /* a flush the reporter waits for is not waited for: the
                 * final report drains everything after */
                atomic_store(&c->sync_cancel, 1);
                pthread_mutex_lock(&c->lock);
                c->stop = 1;
                pthread_cond_signal(&c->cond);
                pthread_mutex_unlock(&c->lock);
                pthread_join(c->thread, NULL);
                c->thread_running = 0;
        }
}
