/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli_scan.c
 * @brief `keyshift scan`: options, the analysis of each record read (the
 *        plugin's per-topic analysis and the partitioner audit), and the
 *        report (docs/keyshift-cli.md, docs/report-schema.md).
 *
 * Every record feeds:
 *  - the audit (core/report/ks_audit.h): key, partition, offset;
 *  - one ks_topic per candidate partitioner (consistent_random,
 *    murmur2_random, fnv1a_random; only --partitioner's when given),
 *    through ks_topic_record_stored_locked(): the record counts in the
 *    partition it is stored in, and under each proposed count where that
 *    partitioner would put it. After the scan the audit names the family
 *    of the newest records and that topic's analysis is reported;
 *  - a per-second series of record timestamps (the rates and sizing).
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "keyshift/keyshift.h"
#include "ks_audit.h"
#include "ks_cli.h"
#include "ks_cli_scan.h"
#include "ks_clock.h"
#include "ks_config.h"
#include "ks_report.h"
#include "ks_switch.h"
#include "ks_topic.h"

#define CMD "scan"

typedef struct ks_scan_ctx {
        int32_t         count; /**< the topic's current count */
        ks_audit_t     *audit;
        ks_topic_t     *topic[KS_AUDIT_FAMILIES]; /**< by family, or NULL */
        ks_scan_times_t times;
} ks_scan_ctx_t;

static int  ctx_init(ks_scan_ctx_t *c, const scan_opts_t *o,
                     const ks_scan_reader_t *r);
static void ctx_free(ks_scan_ctx_t *c);

/** @brief ks_scan_record_cb: feeds one record everywhere. */
static void on_record(void *opaque, const rd_kafka_message_t *m)
{
        ks_scan_ctx_t *c     = opaque;
        const void    *key   = m->key;
        uint64_t       bytes = (uint64_t)m->key_len + (uint64_t)m->len;
        int            f;

        ks_audit_add(c->audit, key, m->key_len, m->partition, m->offset);
        for (f = 0; f < KS_AUDIT_FAMILIES; f++) {
                ks_key_facts_t kf;
                ks_topic_t    *t = c->topic[f];
                if (!t)
                        continue;
                ks_topic_key_facts(t, key, m->key_len, -1, &kf);
                /* a hashed record counts where its key goes under the
                 * current count, wherever it is stored: a record placed
                 * before an increase says what its key does now, not
                 * where the old count put it (issue 28) */
                ks_topic_lock(t);
                ks_topic_record_stored_locked(
                    t, key, m->key_len,
                    kf.place == KS_PLACE_HASHED
                        ? ks_partition_of(kf.phash, c->count)
                        : m->partition,
                    &kf, 1, bytes);
                ks_topic_unlock(t);
        }
        ks_scan_times_add(&c->times, rd_kafka_message_timestamp(m, NULL),
                          bytes);
}

static void on_sigint(int sig)
{
        ks_scan_interrupted = sig; /* SIGINT or SIGTERM: not 0 */
}

/** @returns the `scan` object of the report. */
static json_t *scan_json(const scan_opts_t *o, const ks_scan_reader_t *r,
                         int64_t started_ms, int64_t ended_ms,
                         const ks_scan_ctx_t *c)
{
        json_t *o_json;
        json_t *low = json_array(), *high = json_array(), *start = json_array(),
               *end = json_array(), *recs = json_array(), *last = json_array(),
               *done = json_array(), *parts;
        char    started[40];
        int32_t p;

        /* columns indexed by partition (keyshift.report.v2) */
        for (p = 0; p < r->partition_count; p++) {
                const ks_scan_part_t *s = &r->parts[p];
                json_array_append_new(low, json_integer((json_int_t)s->low));
                json_array_append_new(high, json_integer((json_int_t)s->high));
                json_array_append_new(start,
                                      json_integer((json_int_t)s->start));
                json_array_append_new(end, json_integer((json_int_t)s->end));
                json_array_append_new(recs,
                                      json_integer((json_int_t)s->records));
                json_array_append_new(last, s->last >= 0 ? json_integer(s->last)
                                                         : json_null());
                json_array_append_new(done, json_boolean(s->done));
        }
        parts = json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
                          "low_watermark", low, "high_watermark", high,
                          "start_offset", start, "end_offset", end, "records",
                          recs, "last_offset", last, "done", done);
        ks_report_rfc3339(started_ms, started, sizeof(started));
        o_json = json_pack(
            "{s:s, s:s, s:s, s:o, s:b, s:s, s:I, s:I, s:f, s:I, s:I,"
            " s:o}",
            "bootstrap", o->bootstrap, "topic", o->topic, "from", o->from_text,
            "max_messages",
            o->max_messages ? json_integer((json_int_t)o->max_messages)
                            : json_null(),
            "complete", !strcmp(r->stopped_by, "end"), "stopped_by",
            r->stopped_by, "records", (json_int_t)r->records, "to_read",
            (json_int_t)r->to_read, "duration_s",
            (double)(ended_ms - started_ms) / 1000.0,
            "records_without_timestamp", (json_int_t)c->times.missing,
            "rates_resolution_s",
            (json_int_t)(c->times.any ? c->times.width : 1), "partitions",
            parts);
        /* --until: null, or as given ("increase": each partition's end is
         * its switch offset, audit.switch) */
        if (o_json)
                json_object_set_new(o_json, "until",
                                    o->until_text ? json_string(o->until_text)
                                                  : json_null());
        return o_json;
}

/** @returns the family whose analysis is reported and why (@p source). */
static int choose_family(const scan_opts_t *o, const ks_audit_history_t *h,
                         const ks_audit_t *a, const char **source)
{
        int f;

        if (o->partitioner >= 0) {
                *source = "--partitioner";
                return -1;
        }
        if ((f = ks_audit_newest_family(a, NULL)) >= 0) {
                *source = "audit";
                return f;
        }
        if (h->cnt) { /* unless another family explains as many there */
                int32_t  n   = h->steps[0].count;
                uint64_t e   = ks_audit_explained(a, h->steps[0].family, n);
                int      tie = 0;
                for (f = 0; f < KS_AUDIT_FAMILIES; f++)
                        tie |= f != h->steps[0].family &&
                               ks_audit_explained(a, f, n) >= e;
                if (!tie) {
                        *source = "audit history";
                        return h->steps[0].family;
                }
        }
        *source = "default";
        return 1; /* murmur2: Java's */
}

/**
 * @brief The increase whose switch the second pass measures: the family
 *        the proposals use (the audit's, or --partitioner's) and, of its
 *        history steps under a count below the current one, the one with
 *        the most records (the last increase; an earlier one stays in the
 *        history). @returns 0 with @p family and @p old, or -1: none.
 */
static int find_increase(const scan_opts_t *o, const ks_scan_ctx_t *c,
                         int *family, int32_t *old)
{
        ks_audit_history_t h;
        const char        *source;
        uint64_t           best = 0;
        size_t             i;
        int                f;

        if (ks_audit_history(c->audit, &h))
                return -1;
        f = choose_family(o, &h, c->audit, &source);
        for (i = 0; f < 0 && i < KS_AUDIT_FAMILIES; i++)
                if (ks_topic_diag_families[i] ==
                    ks_partitioner_hash_family(
                        (ks_partitioner_t)o->partitioner))
                        f = (int)i;
        *old = -1;
        for (i = 0; i < h.cnt; i++)
                if (h.steps[i].family == f && h.steps[i].count < c->count &&
                    h.steps[i].records > best) {
                        best = h.steps[i].records;
                        *old = h.steps[i].count;
                }
        ks_audit_history_free(&h);
        *family = f;
        return f >= 0 && *old > 0 ? 0 : -1;
}

/**
 * @brief After the first pass: the switch of a grown topic (a second
 *        pass), and for --until increase a third pass over each
 *        partition up to its switch, into a fresh analysis.
 * @returns 1 when @p sw was filled, 0 when there is no switch, -1 on a
 *          failure (printed; @p c may then be half built).
 */
static int grown(const scan_opts_t *o, ks_scan_reader_t *r, ks_scan_ctx_t *c,
                 ks_switch_result_t *sw, char *err, size_t errsz)
{
        size_t   mem = (size_t)o->kconf.memory_max_mb << 20;
        int      family;
        int32_t  old, p;
        int64_t *ends;

        if (strcmp(r->stopped_by, "end") ||
            find_increase(o, c, &family, &old)) {
                if (o->until == KS_SCAN_UNTIL_INCREASE)
                        fprintf(stderr, "keyshift scan: --until increase: no "
                                        "increase found in the records (the "
                                        "audit's history has no older count "
                                        "of the family): the whole range is "
                                        "reported\n");
                return 0;
        }
        if (ks_cli_scan_switch(r, family, old, mem / 2, sw, err, errsz)) {
                fprintf(stderr, "keyshift scan: the count switch: %s\n", err);
                return -1;
        }
        if (o->until != KS_SCAN_UNTIL_INCREASE)
                return 1;
        if (!(ends = malloc((size_t)r->partition_count * sizeof(*ends))))
                return -1;
        for (p = 0; p < r->partition_count; p++)
                ends[p] = sw->parts[p].switch_offset;
        ctx_free(c);
        memset(c, 0, sizeof(*c));
        if (ctx_init(c, o, r) || ks_scan_rewind(r, ends, err, errsz) ||
            ks_scan_read(r, on_record, c, err, errsz)) {
                free(ends);
                fprintf(stderr, "keyshift scan: --until increase: %s\n",
                        *err ? err : r->stopped_by);
                return -1;
        }
        free(ends);
        return 1;
}

/** The candidate partitioners' random-key variants, by audit family. */
static const ks_partitioner_t random_of[KS_AUDIT_FAMILIES] = {
    KS_PARTITIONER_CONSISTENT_RANDOM, KS_PARTITIONER_MURMUR2_RANDOM,
    KS_PARTITIONER_FNV1A_RANDOM};

/** What the scan chose, for the report and its summary. */
typedef struct ks_scan_choice {
        ks_audit_history_t        h;      /**< the audit's history */
        ks_partitioner_t          pt;     /**< the partitioner reported */
        const char               *source; /**< how it was chosen */
        const ks_switch_result_t *sw;     /**< the count switch, or NULL */
} ks_scan_choice_t;

/**
 * @brief Adds to @p topic (the topic's report, ks_report_topic()) what the
 *        scan knows beside the analysis: the partitioner's source, the
 *        audit's, the switch's and compaction's warnings (into @p wl too),
 *        and the audit.
 */
static void scan_topic_extras(const scan_opts_t *o, const ks_scan_reader_t *r,
                              const ks_scan_ctx_t    *c,
                              const ks_scan_choice_t *ch, json_t *topic,
                              ks_warn_list_t *wl)
{
        json_t *pt_o = json_object_get(topic, "partitioner"), *ws;
        size_t  first;

        /* the audit, not keyshift.partitioner, chose it; its evidence is
         * the audit's, and only a family the records single out is
         * confirmed */
        json_object_set_new(pt_o, "source", json_string(ch->source));
        json_object_set_new(pt_o, "confirmed",
                            json_boolean(!strncmp(ch->source, "audit", 5)));
        json_object_del(pt_o, "evidence");
        json_object_del(pt_o, "learning");
        first = wl->cnt;
        ks_audit_warnings(c->audit, &ch->h, o->topic,
                          ch->sw ? ch->sw->family : -1,
                          ch->sw ? ch->sw->old_count : -1, wl);
        if (ch->sw)
                ks_switch_warnings(ch->sw, o->topic, wl);
        if (r->compacted == 1)
                ks_warn_add(wl, KS_WARN_TOPIC_COMPACTED, o->topic,
                            "the topic is compacted: the records "
                            "scanned are what compaction kept (the "
                            "latest of each key, and older ones not "
                            "compacted yet), so per-record figures "
                            "(loads, moved records, rates) undercount "
                            "what producers sent; per-key figures "
                            "(keys that move, the audit) hold");
        ws = ks_warn_list_json_since(wl, o->topic, first);
        /* json_array_extend() copies: the list is ours to free */
        json_array_extend(json_object_get(topic, "warnings"), ws);
        json_decref(ws);
        json_object_set_new(topic, "audit",
                            ks_audit_json(c->audit, &ch->h,
                                          ks_partitioner_name(ch->pt),
                                          ch->source));
        json_object_set_new(json_object_get(topic, "audit"), "switch",
                            ch->sw ? ks_switch_json(ch->sw) : json_null());
}

/** @brief Prints the scan's summary on standard output: records, the
 *         partitioner's history, the switch, the warnings @p wl, the
 *         report's @p path. */
static void print_summary(const scan_opts_t *o, const ks_scan_reader_t *r,
                          const ks_scan_ctx_t *c, const ks_scan_choice_t *ch,
                          const ks_warn_list_t *wl, const char *path)
{
        const ks_switch_result_t *sw = ch->sw;
        size_t                    i;

        printf("%s: %" PRIu64 " records of %d partitions (%s), "
               "%" PRIu64 " keyed; proposals use %s (%s)\n",
               o->topic, r->records, (int)r->partition_count, r->stopped_by,
               ks_audit_keyed(c->audit), ks_partitioner_name(ch->pt),
               ch->source);
        for (i = 0; i < ch->h.cnt; i++)
                printf("  history %zu: %s under %d partitions: "
                       "%" PRIu64 " records\n",
                       i + 1, ks_audit_family_name(ch->h.steps[i].family),
                       (int)ch->h.steps[i].count, ch->h.steps[i].records);
        printf("  unexplained %" PRIu64 ", uncovered %" PRIu64 "\n",
               ks_audit_unexplained(c->audit), ch->h.uncovered);
        if (sw)
                printf("  switch %s %d -> %d (%s moment): old %" PRIu64
                       ", new %" PRIu64 ", ambiguous %" PRIu64 "\n",
                       ks_audit_family_name(sw->family), (int)sw->old_count,
                       (int)sw->new_count,
                       sw->one_moment ? "one"
                       : sw->old_only_last_ms >= 0 && sw->new_only_first_ms >= 0
                           ? "interleaved"
                           : "unknown",
                       sw->old_exact, sw->new_exact, sw->ambiguous);
        for (i = 0; i < wl->cnt; i++)
                printf("  %s: %s\n", wl->items[i].code, wl->items[i].message);
        printf("report: %s\n", path);
}

/** @brief Builds and writes the report. @returns 0 or 1. */
static int write_report(const scan_opts_t *o, ks_scan_reader_t *r,
                        ks_scan_ctx_t *c, int64_t started_ms, const char *path,
                        const ks_switch_result_t *sw)
{
        ks_scan_choice_t    ch = {.sw = sw};
        ks_topic_snapshot_t s;
        ks_warn_list_t      wl;
        int                 f, ret = 1;
        int64_t             now   = ks_clock_wall_ms();
        json_t             *topic = NULL, *report = NULL, *topics;
        char                errstr[600];
        ks_report_opts_t    ropts = {
               o->kconf.hot_keys, now, 1, &o->kconf.sizing, 0, 0, 0, 0, NULL};
        ks_report_producer_t prod = {0};

        if (ks_audit_history(c->audit, &ch.h))
                return ks_cli_fail(CMD, "out of memory");
        f     = choose_family(o, &ch.h, c->audit, &ch.source);
        ch.pt = f >= 0 ? random_of[f] : (ks_partitioner_t)o->partitioner;
        if (f < 0)
                f = 0; /* the only topic fed is topic[0] */
        ks_warn_list_init(&wl);
        if (ks_topic_snapshot(c->topic[f], &s)) {
                ks_audit_history_free(&ch.h);
                return ks_cli_fail(CMD, "out of memory");
        }
        s.mono_ms = ks_scan_times_rates(&c->times, &s.rates);
        prod      = (ks_report_producer_t){
                 .client_id          = "keyshift-scan",
                 .client_name        = rd_kafka_name(r->rk),
                 .pid                = (long)getpid(),
                 .librdkafka_version = rd_kafka_version_str(),
                 .partitioner        = ks_partitioner_name(ch.pt),
                 .partitioner_source = ch.source,
                 .started_at_ms      = started_ms,
                 .report_path        = path,
        };
        topic = ks_report_topic(&s, &ropts, &wl);
        if (topic) {
                scan_topic_extras(o, r, c, &ch, topic, &wl);
                topics = json_object();
                json_object_set_new(topics, o->topic, topic);
                report = ks_report_build(&prod, &ropts, topics, &wl);
        }
        if (report) {
                json_object_set_new(report, "source", json_string("scan"));
                json_object_set_new(report, "scan",
                                    scan_json(o, r, started_ms, now, c));
                if (ks_report_write_atomic(report, path, errstr,
                                           sizeof(errstr)))
                        ks_cli_fail(CMD, "%s", errstr);
                else
                        ret = 0;
        } else {
                ks_cli_fail(CMD, "out of memory building the report");
        }
        if (!ret)
                print_summary(o, r, c, &ch, &wl, path);
        json_decref(report);
        ks_warn_list_clear(&wl);
        ks_topic_snapshot_free(&s);
        ks_audit_history_free(&ch.h);
        return ret;
}

/** @brief Creates the audit and the topics for @p r's partition count.
 *  @returns 0 or -1 (ENOMEM). */
static int ctx_init(ks_scan_ctx_t *c, const scan_opts_t *o,
                    const ks_scan_reader_t *r)
{
        ks_topic_params_t p   = {0};
        size_t            mem = (size_t)o->kconf.memory_max_mb << 20;
        int               f, n = o->partitioner >= 0 ? 1 : KS_AUDIT_FAMILIES;
        int64_t           now = ks_clock_wall_ms();

        ks_topic_params_from_config(&p, &o->kconf);
        /* half the memory for the audit's groups, half for the sketches
         * of the topics fed (one per candidate partitioner) */
        ks_topic_params_fit(&p, p.sketch_budget / 2 / (size_t)n);
        c->count       = r->partition_count;
        c->audit       = ks_audit_new(r->partition_count, mem / 2);
        c->times.msgs  = calloc(KS_SCAN_TIME_BUCKETS, sizeof(uint64_t));
        c->times.bytes = calloc(KS_SCAN_TIME_BUCKETS, sizeof(uint64_t));
        if (!c->audit || !c->times.msgs || !c->times.bytes)
                return -1;
        for (f = 0; f < n; f++) {
                p.partitioner = o->partitioner >= 0
                                    ? (ks_partitioner_t)o->partitioner
                                    : random_of[f];
                c->topic[f]   = ks_topic_new(o->topic, &p, now);
                if (!c->topic[f])
                        return -1;
                ks_topic_set_partition_count(c->topic[f], r->partition_count,
                                             KS_COUNT_METADATA, now);
                ks_topic_set_cluster_info(c->topic[f], r->brokers,
                                          r->replication_factor, r->compacted);
        }
        return 0;
}

static void ctx_free(ks_scan_ctx_t *c)
{
        int f;

        ks_audit_destroy(c->audit);
        for (f = 0; f < KS_AUDIT_FAMILIES; f++)
                if (c->topic[f])
                        ks_topic_destroy(c->topic[f]);
        free(c->times.msgs);
        free(c->times.bytes);
}

/** The exit status of a scan interrupted by signal N: 128 + N, as a
 *  shell's. */
#define KS_SCAN_EXIT_SIGNAL_BASE 128

/**
 * @brief Writes the report's path into @p path (--output, or
 *        keyshift-scan-TOPIC.json) and checks that a report can be written
 *        there: the report is the scan's end, so a path it cannot be
 *        written at is said before millions of records are read (issue
 *        30).
 * @returns 0, or KS_CLI_EXIT_FAIL (said on stderr).
 */
static int scan_report_path(const scan_opts_t *o, char *path, size_t pathsz)
{
        char err[1024] = "";

        if (o->output)
                snprintf(path, pathsz, "%s", o->output);
        else
                snprintf(path, pathsz, "keyshift-scan-%s.json", o->topic);
        if (ks_report_path_check(path, err, sizeof(err)))
                return ks_cli_fail(CMD, "cannot write the report at %s: %s",
                                   path, err);
        return 0;
}

/**
 * @brief Ends the scan that @p r read (@p read_rc: ks_scan_read()'s
 *        answer): writes the report unless nothing was read or the count
 *        switch failed (@p has_sw < 0).
 * @returns the command's exit status: 0, 1, or 128 + the signal that
 *          interrupted the scan (its partial report written).
 */
static int scan_finish(const scan_opts_t *o, ks_scan_reader_t *r,
                       ks_scan_ctx_t *c, int64_t started, const char *path,
                       int has_sw, const ks_switch_result_t *sw, int read_rc)
{
        if (has_sw < 0)
                return KS_CLI_EXIT_FAIL;
        if (!r->records)
                return ks_cli_fail(CMD, "no record read from %s (%s)", o->topic,
                                   r->stopped_by);
        if (write_report(o, r, c, started, path, has_sw ? sw : NULL))
                return KS_CLI_EXIT_FAIL;
        if (!strcmp(r->stopped_by, "interrupt")) {
                fprintf(stderr,
                        "keyshift scan: interrupted (%s): partial report "
                        "(complete: false)\n",
                        ks_scan_interrupted == SIGTERM ? "SIGTERM" : "SIGINT");
                return KS_SCAN_EXIT_SIGNAL_BASE +
                       (ks_scan_interrupted == SIGTERM ? SIGTERM : SIGINT);
        }
        if (!strcmp(r->stopped_by, "max-messages"))
                return KS_CLI_EXIT_OK;
        return read_rc ? KS_CLI_EXIT_FAIL : KS_CLI_EXIT_OK;
}

int ks_cli_scan_main(int argc, char **argv)
{
        scan_opts_t        o         = {0};
        ks_scan_reader_t   r         = {0};
        ks_scan_ctx_t      c         = {0};
        char               err[1024] = "", path[1024];
        int                ret, has_sw = 0;
        int64_t            started;
        struct sigaction   sa = {0};
        ks_switch_result_t sw = {0};

        o.rk_conf = rd_kafka_conf_new();
        if (!o.rk_conf || ks_config_init(&o.kconf))
                return ks_cli_fail(CMD, "out of memory");
        ks_cli_scan_consumer_defaults(o.rk_conf);
        if ((ret = ks_cli_scan_parse_args(&o, argc, argv)) ||
            (ret = scan_report_path(&o, path, sizeof(path)))) {
                rd_kafka_conf_destroy(o.rk_conf);
                ks_config_destroy(&o.kconf);
                return ret < 0 ? KS_CLI_EXIT_OK : ret;
        }
        r.timeout_ms   = o.timeout_ms;
        r.max_messages = o.max_messages;
        r.until        = o.until;
        r.until_arg    = o.until_arg;
        r.progress     = isatty(STDERR_FILENO);
        started        = ks_clock_wall_ms();
        if (ks_scan_open(&r, o.rk_conf, o.topic, o.from, o.from_arg, err,
                         sizeof(err))) {
                ks_scan_close(&r);
                ks_config_destroy(&o.kconf);
                return ks_cli_fail(CMD, "%s", err);
        }
        if (r.compacted == 1)
                fprintf(stderr,
                        "keyshift scan: %s is compacted (cleanup.policy "
                        "contains compact): the scan reads what compaction "
                        "kept, the latest record of each key and the older "
                        "ones not compacted yet, not every record produced "
                        "(warning TOPIC_COMPACTED in the report)\n",
                        o.topic);
        if (ctx_init(&c, &o, &r)) {
                ctx_free(&c);
                ks_scan_close(&r);
                ks_config_destroy(&o.kconf);
                return ks_cli_fail(CMD, "out of memory");
        }
        /* SIGTERM (kill, a container stopped) ends the scan as Ctrl-C
         * does: the partial report is written */
        sa.sa_handler = on_sigint;
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        ret = ks_scan_read(&r, on_record, &c, err, sizeof(err));
        if (ret && *err)
                fprintf(stderr, "keyshift scan: %s\n", err);
        if (r.records && !ret)
                has_sw = grown(&o, &r, &c, &sw, err, sizeof(err));
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        ret = scan_finish(&o, &r, &c, started, path, has_sw, &sw, ret);
        if (has_sw > 0)
                ks_switch_result_free(&sw);
        ctx_free(&c);
        ks_scan_close(&r);
        ks_config_destroy(&o.kconf);
        return ret;
}
