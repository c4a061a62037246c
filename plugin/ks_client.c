/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_client.c
 * @brief A producer's keyshift state and the produce-path interceptors.
 */
#include "ks_client.h"

#include "ks_budget.h"
#include "ks_clock.h"
#include "ks_cpuwatcher.h"
#include "ks_drainer.h"
#include "ks_metadata.h"
#include "ks_report.h"
#include "ks_reporter.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int  claim_report_path(char *path, size_t size);
static void release_report_path(const char *path);
static void claim_metrics_path(ks_client_t *c);
static int  start_threads(ks_client_t *c);

/** Messages kept per topic while its partition count is unknown. */

/** @brief Reads a configuration value as a string ("" if unset). */
static void conf_str(const rd_kafka_conf_t *conf, const char *name, char *out,
                     size_t size)
{
        size_t sz = size;

        if (ks_rdk.rd_kafka_conf_get(conf, name, out, &sz) != RD_KAFKA_CONF_OK)
                out[0] = '\0';
}

/**
 * @brief Reads the partitioner this producer really uses, from its final
 *        configuration (librdkafka's default topic configuration).
 */
static void read_partitioner(ks_client_t *c, const rd_kafka_conf_t *conf)
{
        char buf[256];

        c->params.partitioner = KS_PARTITIONER_CONSISTENT_RANDOM;
        snprintf(c->partitioner_source, sizeof(c->partitioner_source),
                 "partitioner");
        conf_str(conf, "partitioner", buf, sizeof(buf));
        if (*buf && ks_partitioner_from_name(buf, &c->params.partitioner))
                snprintf(c->partitioner_detail, sizeof(c->partitioner_detail),
                         "unknown partitioner \"%.30s\"", buf);
        if (c->conf.partitioner >= 0) {
                c->params.partitioner = (ks_partitioner_t)c->conf.partitioner;
                snprintf(c->partitioner_source, sizeof(c->partitioner_source),
                         "keyshift.partitioner");
                c->partitioner_detail[0] = '\0';
        }
        conf_str(conf, "sticky.partitioning.linger.ms", buf, sizeof(buf));
        c->params.sticky_linger_ms = *buf ? atoi(buf) : 10;
        /* a topic's own configuration (kcat -X partitioner=..., or
         * rd_kafka_topic_new() with a tconf) can name another partitioner,
         * unseen here: each topic learns it from its deliveries
         * (ks_learn.h) unless keyshift.partitioner settles it */
        c->params.learn = c->conf.partitioner < 0;
}

/**
 * @brief Reads what the sizing advice needs from the producer itself: its
 *        queue limits, and how soon it learns a new partition count
 *        (topic.metadata.refresh.interval.ms), unless
 *        keyshift.producers.metadata.max.age.ms says otherwise.
 */
static void read_producer_limits(ks_client_t *c, const rd_kafka_conf_t *conf)
{
        char buf[64];

        conf_str(conf, "queue.buffering.max.messages", buf, sizeof(buf));
        c->queue_max_messages = atof(buf);
        conf_str(conf, "queue.buffering.max.kbytes", buf, sizeof(buf));
        c->queue_max_bytes = atof(buf) * 1024.0;
        conf_str(conf, "topic.metadata.refresh.interval.ms", buf, sizeof(buf));
        if (!c->conf.sizing_metadata_age_set && atof(buf) > 0)
                c->conf.sizing.producers_metadata_max_age_ms = atof(buf);
}

/** ks_client_t.id of the next producer. */
static atomic_uint_fast64_t ks_client_next_id = 1;

/**
 * @brief Says that keyshift is loaded on this producer, in librdkafka's
 *        log format at level 6 (info): version, report path and interval,
 *        proposed counts and the topics analysed. The producer's name
 *        (rdkafka#producer-N) is not known yet in on_new: the line names
 *        its client.id.
 * @locality application thread in rd_kafka_new() (on_new).
 */
static void log_start(const ks_client_t *c)
{
        char   proposed[KEYSHIFT_PROPOSED_MAX * 12] = "";
        size_t i, n = 0;

        for (i = 0; i < c->params.proposed_cnt && n < sizeof(proposed); i++)
                n +=
                    (size_t)snprintf(proposed + n, sizeof(proposed) - n, "%s%d",
                                     i ? "," : "", (int)c->params.proposed[i]);
        ks_warn_log_line(
            stderr, 6, c->client_id,
            "keyshift %s loaded (librdkafka %s): report %s every %lld ms "
            "and at shutdown; proposed partition counts %s; topics %s",
            KEYSHIFT_VERSION_STR, ks_rdk.rd_kafka_version_str(), c->report_path,
            (long long)c->conf.report_interval_ms,
            c->params.proposed_cnt ? proposed : "2x each topic's current",
            c->conf.topics_regex ? c->conf.topics_regex : "all");
}

/** The topic of the last acknowledgement the calling thread (one of
 *  librdkafka's broker threads) handled, and whose producer's it was: a
 *  name comparison instead of a registry lookup for the next (one topic
 *  per batch of acknowledgements, most often). */
static _Thread_local struct {
        uint64_t    client;
        ks_topic_t *t;
} ks_ack_last __attribute__((tls_model("initial-exec"))); /* as ks_stage.c's */

/** The calling thread's acknowledgements while sampled: which to check. */
static _Thread_local uint32_t ks_ack_seq
    __attribute__((tls_model("initial-exec")));

/** The producer (ks_client_t id) whose ack_tids holds the calling thread:
 *  a broker thread says its tid once, not per delivery. */
static _Thread_local uint64_t ks_ack_told
    __attribute__((tls_model("initial-exec")));

/** @brief Adds the calling thread to @p c's delivery threads, which the
 *         watcher watches (ks_cpuwatcher.c, KS_CPUWATCH_DELIVERY); beyond
 *         KS_ACK_THREADS_WATCHED, it goes unwatched. */
static void tell_ack_thread(ks_client_t *c)
{
        long tid = (long)syscall(SYS_gettid);
        int  i;

        ks_ack_told = c->id;
        for (i = 0; i < KS_ACK_THREADS_WATCHED; i++) {
                long had = 0;

                if (atomic_compare_exchange_strong(&c->ack_tids[i], &had,
                                                   tid) ||
                    had == tid)
                        return;
        }
}

ks_client_t *ks_client_new(rd_kafka_t *rk, const rd_kafka_conf_t *conf,
                           const ks_config_t *kconf, char *errstr,
                           size_t errstr_size)
{
        ks_client_t *c = calloc(1, sizeof(*c));
        char         why[200];

        if (!c || ks_config_copy(&c->conf, kconf)) {
                free(c);
                snprintf(errstr, errstr_size, "keyshift: out of memory");
                return NULL;
        }
        if (ks_registry_init(&c->reg, (size_t)kconf->topics_max) ||
            !(c->stage = ks_stage_new(
                  ks_budget_table((size_t)kconf->memory_max_mb << 20)))) {
                ks_registry_destroy(&c->reg);
                ks_config_destroy(&c->conf);
                free(c);
                snprintf(errstr, errstr_size, "keyshift: out of memory");
                return NULL;
        }
        ks_stage_set_overload(c->stage, kconf->overload_analyse);
        ks_stage_set_overflow(
            c->stage, ks_budget_overflow((size_t)kconf->memory_max_mb << 20));
        c->rk            = rk;
        c->started_at_ms = ks_clock_wall_ms();
        c->id            = atomic_fetch_add(&ks_client_next_id, 1);
        conf_str(conf, "client.id", c->client_id, sizeof(c->client_id));
        snprintf(c->name, sizeof(c->name), "%s", c->client_id);
        read_partitioner(c, conf);
        read_producer_limits(c, conf);
        ks_topic_params_from_config(&c->params, kconf);
        ks_warn_list_init(&c->carry);
        if (ks_config_report_path(&c->conf, c->client_id, (long)getpid(),
                                  c->report_path, sizeof(c->report_path)) ||
            ks_report_path_fits(c->report_path, why, sizeof(why))) {
                if (ks_config_report_path(&c->conf, c->client_id,
                                          (long)getpid(), c->report_path,
                                          sizeof(c->report_path)))
                        snprintf(why, sizeof(why), "the path is too long");
                snprintf(c->report_path, sizeof(c->report_path),
                         "keyshift-%ld.json", (long)getpid());
                ks_warn_add(&c->carry, KS_WARN_REPORT_WRITE_FAILED, NULL,
                            "keyshift.report.path with this client.id (%zu "
                            "bytes) cannot be written: %s; writing %s in "
                            "the working directory instead",
                            strlen(c->client_id), why, c->report_path);
        }
        if (kconf->proposed_dups)
                ks_warn_add(&c->carry, KS_WARN_PROPOSALS_REPEATED, NULL,
                            "keyshift.partitions.proposed gave %zu count%s "
                            "again: each count is modelled once",
                            kconf->proposed_dups,
                            kconf->proposed_dups > 1 ? "s" : "");
        if (claim_report_path(c->report_path, sizeof(c->report_path)))
                ks_warn_log_line(stderr, 5, c->client_id,
                                 "another producer in this process writes "
                                 "the same keyshift.report.path: this one "
                                 "writes %s",
                                 c->report_path);
        if (c->conf.metrics_path)
                claim_metrics_path(c);
        c->publish =
            ks_publish_new(conf, kconf, c->client_id, c->started_at_ms);
        pthread_mutex_init(&c->lock, NULL);
        pthread_mutex_init(&c->brokers_lock, NULL);
        c->metadata_timeout_ms = 1000;
        atomic_init(&c->last_ack_wake_ms, 0);
        atomic_init(&c->brokers_up, 0);
        pthread_cond_init(&c->cond, NULL);
        atomic_init(&c->refresh_requested, 0);
        atomic_init(&c->drainer_stop, 0);
        atomic_init(&c->sync_cancel, 0);

        log_start(c);
        c->started = 1;
        if (start_threads(c)) {
                c->started = 0;
                snprintf(errstr, errstr_size,
                         "keyshift: cannot start the reporter thread");
                ks_client_destroy(c);
                return NULL;
        }
        return c;
}

/* Report paths in use by this process's producers: two producers with the
 * same client.id (an AdminClient made from a producer's configuration is a
 * producer too) would otherwise overwrite each other's report. */
static pthread_mutex_t ks_paths_lock = PTHREAD_MUTEX_INITIALIZER;
static char           *ks_paths[256];

/** @brief Claims @p path for this producer, making it unique in the
 *         process ("name-2.json", ...). @returns 1 if it had to change. */
static int claim_report_path(char *path, size_t size)
{
        char        base[4096], try[4096];
        const char *dot;
        int         n, i, taken, changed = 0;

        snprintf(base, sizeof(base), "%s", path);
        dot = strrchr(base, '.');
        if (dot && strchr(dot, '/'))
                dot = NULL;
        pthread_mutex_lock(&ks_paths_lock);
        for (n = 1; n < 1000; n++) {
                int len;
                if (n == 1)
                        len = snprintf(try, sizeof(try), "%s", base);
                else if (dot)
                        len = snprintf(try, sizeof(try), "%.*s-%d%s",
                                       (int)(dot - base), base, n, dot);
                else
                        len = snprintf(try, sizeof(try), "%s-%d", base, n);
                if (len < 0 || (size_t)len >= size) {
                        /* no room for a suffix: share the path */
                        snprintf(try, sizeof(try), "%s", base);
                        break;
                }
                for (i = 0, taken = 0; i < 256 && !taken; i++)
                        taken = ks_paths[i] && !strcmp(ks_paths[i], try);
                if (!taken)
                        break;
                changed = 1;
        }
        for (i = 0; i < 256; i++)
                if (!ks_paths[i]) {
                        ks_paths[i] = strdup(try);
                        break;
                }
        pthread_mutex_unlock(&ks_paths_lock);
        snprintf(path, size, "%s", try);
        return changed;
}

/**
 * @brief Expands keyshift.metrics.path into c->metrics_path and claims it
 *        as the report's path is claimed. Too long: no metrics file, and a
 *        warning in the first report.
 */
static void claim_metrics_path(ks_client_t *c)
{
        char why[200];

        if (ks_config_expand_path(c->conf.metrics_path, c->client_id,
                                  (long)getpid(), c->metrics_path,
                                  sizeof(c->metrics_path)) ||
            ks_report_path_fits(c->metrics_path, why, sizeof(why))) {
                c->metrics_path[0] = '\0';
                ks_warn_add(&c->carry, KS_WARN_METRICS_WRITE_FAILED, NULL,
                            "keyshift.metrics.path expands to a path too "
                            "long: no metrics are written");
                return;
        }
        /* the report's own file: it would be replaced by the metrics at
         * each report (and "another producer" was named) */
        if (!strcmp(c->metrics_path, c->report_path)) {
                ks_warn_add(&c->carry, KS_WARN_METRICS_WRITE_FAILED, NULL,
                            "keyshift.metrics.path is the report's own file "
                            "%s (keyshift.report.path): no metrics are "
                            "written",
                            c->report_path);
                c->metrics_path[0] = '\0';
                return;
        }
        if (claim_report_path(c->metrics_path, sizeof(c->metrics_path)))
                ks_warn_log_line(stderr, 5, c->client_id,
                                 "another producer in this process writes "
                                 "the same keyshift.metrics.path: this one "
                                 "writes %s",
                                 c->metrics_path);
}

static void release_report_path(const char *path)
{
        int i;

        pthread_mutex_lock(&ks_paths_lock);
        for (i = 0; i < 256; i++)
                if (ks_paths[i] && !strcmp(ks_paths[i], path)) {
                        free(ks_paths[i]);
                        ks_paths[i] = NULL;
                        break;
                }
        pthread_mutex_unlock(&ks_paths_lock);
}

/** @brief Wakes the reporter thread (new topic: fetch its metadata now). */
static void wake_reporter(ks_client_t *c)
{
        pthread_mutex_lock(&c->lock);
        c->wake = 1;
        pthread_cond_signal(&c->cond);
        pthread_mutex_unlock(&c->lock);
}

void ks_client_on_send(ks_client_t *c, const rd_kafka_message_t *m)
{
        ks_topic_t *t;
        const char *name;
        int         created;

        if (!m->rkt)
                return;
        name = ks_rdk.rd_kafka_topic_name(m->rkt);
        if ((t = ks_stage_last_topic(c->stage, name)))
                goto stage;
        t = ks_registry_get(&c->reg, name, &c->conf, &c->params, 0, &created);
        if (!t)
                return;
        if (created) {
                if (c->conf.current_override)
                        ks_topic_set_partition_count(
                            t, c->conf.current_override, KS_COUNT_CONFIG,
                            ks_clock_wall_ms());
                else
                        wake_reporter(c);
        }
stage:
        if (m->partition >= 0)
                ks_topic_note_explicit(t); /* before any ack can check it */
        ks_stage_push(c->stage, t, m->key, m->key_len, m->partition, m->len);
}

void ks_client_on_ack(ks_client_t *c, const rd_kafka_message_t *m)
{
        ks_topic_t *t;
        const char *name;
        int shift = atomic_load_explicit(&c->ack_shift, memory_order_relaxed);

        if (ks_ack_told != c->id)
                tell_ack_thread(c);
        /* the host out of CPU (ks_cpuwatch.h): 1 in 1 << shift checked;
         * the others are counted without touching the message, whose
         * first touch here is a cache miss on the thread that bounds
         * delivery. Unless the topic this thread acknowledged last (one
         * topic per batch, most often) wants every acknowledgement: a
         * partitioner being learned, a count not yet known. */
        if (shift && (++ks_ack_seq & ((1u << shift) - 1)) &&
            ks_ack_last.client == c->id && ks_ack_last.t &&
            !ks_topic_ack_wants_all(ks_ack_last.t)) {
                atomic_fetch_add_explicit(&c->acks_unchecked, 1,
                                          memory_order_relaxed);
                return;
        }
        if (!m->rkt)
                return;
        name = ks_rdk.rd_kafka_topic_name(m->rkt);
        if (ks_ack_last.client == c->id && ks_ack_last.t &&
            !strcmp(ks_topic_name(ks_ack_last.t), name)) {
                t = ks_ack_last.t;
        } else {
                /* A topic on_send did not analyse has nothing to compare. */
                if (!(t = ks_registry_find(&c->reg, name)))
                        return;
                ks_ack_last.client = c->id;
                ks_ack_last.t      = t;
        }
        if (ks_topic_ack_message(t, m->key, m->key_len, m->partition,
                                 (uint64_t)m->key_len + m->len, m->err != 0)) {
                /* Has the count changed? Ask now, but at most once a
                 * second, whatever the delivery rate. */
                int64_t now  = ks_clock_mono_ms();
                int64_t last = atomic_load(&c->last_ack_wake_ms);
                if (now - last >= 1000 && atomic_compare_exchange_strong(
                                              &c->last_ack_wake_ms, &last, now))
                        wake_reporter(c);
        }
}

void ks_client_on_broker_state(ks_client_t *c, const char *name,
                               const char *state)
{
        int up = !strcmp(state, "UP") || !strcmp(state, "UPDATE");
        int i;

        pthread_mutex_lock(&c->brokers_lock);
        for (i = 0; i < c->broker_up_cnt; i++)
                if (!strcmp(c->broker_up_names[i], name))
                        break;
        if (up && i == c->broker_up_cnt && i < KS_BROKERS_TRACKED) {
                snprintf(c->broker_up_names[i], sizeof(c->broker_up_names[i]),
                         "%s", name);
                c->broker_up_cnt++;
        } else if (!up && i < c->broker_up_cnt) {
                c->broker_up_cnt--;
                memmove(c->broker_up_names[i], c->broker_up_names[i + 1],
                        (size_t)(c->broker_up_cnt - i) *
                            sizeof(c->broker_up_names[0]));
        }
        atomic_store(&c->brokers_up, c->broker_up_cnt);
        pthread_mutex_unlock(&c->brokers_lock);
        if (up)
                wake_reporter(c); /* metadata can be asked now */
}

/**
 * @brief Starts the drainer, the reporter and the watcher (unless
 *        keyshift.overload=analyse: nothing to watch when exact figures
 *        are asked for; a watcher that cannot start leaves every delivery
 *        checked). @returns 0, or -1 (none left running).
 * @locality application thread in rd_kafka_new() (on_new).
 */
static int start_threads(ks_client_t *c)
{
        if (ks_drainer_start(c))
                return -1;
        if (ks_reporter_start(c)) {
                ks_drainer_stop(c);
                return -1;
        }
        if (!c->conf.overload_analyse)
                ks_cpuwatcher_start(c);
        return 0;
}

/**
 * @brief Stops and joins the watcher, the reporter and the drainer, in
 *        that order; messages still staged are left for the caller to
 *        drain (ks_stage_drain()).
 * @locality rdk:main (on_destroy), or the thread destroying the client.
 */
static void stop_threads(ks_client_t *c)
{
        ks_cpuwatcher_stop(c);
        ks_reporter_stop(c);
        ks_drainer_stop(c);
}

void ks_client_stop(ks_client_t *c)
{
        stop_threads(c);
        /* for the final report's lines, if no broker came up before */
        ks_metadata_learn_name(c);
        c->rk = NULL;
}

static void settle_acks(ks_topic_t *t, void *opaque)
{
        (void)opaque;
        ks_topic_settle_acks(t, 1);
}

/** @brief Says on stderr how many messages on_send had to analyse on the
 *         application thread (no ring free) or could not stage (ring and
 *         overflow full: not analysed), and how many waited in the
 *         overflow while the analysis was behind. */
static void log_stage_stats(ks_client_t *c)
{
        ks_stage_stats_t st;

        ks_stage_stats(c->stage, &st);
        if (st.skipped_full || st.inline_full || st.inline_noring ||
            st.overflowed || st.sampled_out)
                ks_warn_log_line(
                    stderr, 6, c->name,
                    "of %llu messages, %llu waited in the staging overflow "
                    "while keyshift's analysis was behind, %llu were counted "
                    "but not analysed while it sampled, %llu met a full "
                    "staging ring and overflow and were not analysed, %llu "
                    "met them full and were analysed on the producing thread "
                    "(keyshift.overload=analyse), %llu were analysed there "
                    "for want of a ring",
                    (unsigned long long)(st.staged + st.sampled_out +
                                         st.skipped_full + st.inline_full +
                                         st.inline_long + st.inline_noring),
                    (unsigned long long)st.overflowed,
                    (unsigned long long)st.sampled_out,
                    (unsigned long long)st.skipped_full,
                    (unsigned long long)st.inline_full,
                    (unsigned long long)st.inline_noring);
}

void ks_client_destroy(ks_client_t *c)
{
        if (!c)
                return;
        stop_threads(c);
        c->rk = NULL;
        /* The drainer has stopped: this thread is the rings' consumer now,
         * and the final report counts every message on_send saw. */
        ks_stage_drain(c->stage);
        if (c->started) {
                log_stage_stats(c);
                ks_registry_foreach(&c->reg, settle_acks, NULL);
                ks_reporter_write(c, 1);
        }
        /* its final records, waited for at most flush.ms */
        ks_publish_destroy(c->publish);
        release_report_path(c->report_path);
        if (*c->metrics_path)
                release_report_path(c->metrics_path);
        ks_stage_destroy(c->stage);
        ks_registry_destroy(&c->reg);
        ks_warn_list_clear(&c->carry);
        pthread_cond_destroy(&c->cond);
        pthread_mutex_destroy(&c->lock);
        pthread_mutex_destroy(&c->brokers_lock);
        ks_config_destroy(&c->conf);
        free(c);
}
