/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli_fleet.c
 * @brief `keyshift fleet --bootstrap B`: one report of every producer that
 *        publishes to keyshift.report.topic (issue 32).
 *
 * The topic holds, per producer and topic, that producer's latest report
 * of the topic (cumulative since the producer started), and one record of
 * the producer itself (its report with no topic: `final` once it ended).
 * Each record is parsed and checked as any report is (the schema, and its
 * sketches read whole), on worker threads (ks_cli_fleet_parse.c):
 * one that is not is garbage, counted,
 * skipped and named by its offset. The records of one producer make one
 * report; the producers' reports are merged by `keyshift merge`'s code
 * (ks_cli_merge.h), so exact figures are sums and estimates carry the
 * merged sketches' errors. A producer is `ended` when its records are its
 * final report's, `stale` when its last record is older than --stale-after
 * (default 3 of its report intervals), `live` otherwise. A record whose
 * producer had not learned its topic's partition count is left out of
 * that topic's figures when another producer knows it (the merge's rule,
 * ks_cli_merge_left_out()), noted in its producer's `left_out`, counted
 * and warned (FLEET_RECORDS_LEFT_OUT), not a failed merge.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "keyshift/keyshift.h"
#include "ks_cli.h"
#include "ks_cli_fleet.h"
#include "ks_cli_merge.h"
#include "ks_cli_report.h"
#include "ks_metrics.h"
#include "ks_report.h"

/** --stale-after's default: a producer is stale after this many of its
 *  report intervals without a record (fleet's help: "3 of its report
 *  intervals"). */
#define KS_FLEET_STALE_INTERVALS 3.0

static int64_t wall_ms(void)
{
        struct timeval tv;

        gettimeofday(&tv, NULL);
        return (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

/** @returns 1 if topic @p t is selected by --topic. */
static int selected(const ks_fleet_opts_t *o, const char *t)
{
        size_t i;

        for (i = 0; i < o->only_cnt; i++)
                if (!strcmp(o->only[i], t))
                        return 1;
        return !o->only_cnt;
}

/** @returns one report of producer @p p: its latest head, the topics of
 *           its records (those --topic selects). A new reference. */
static json_t *producer_report(const ks_fleet_opts_t     *o,
                               const ks_fleet_producer_t *p)
{
        const char *name;
        json_t     *t, *head = p->own, *r, *topics = json_object();
        json_int_t  messages = 0;

        json_object_foreach(p->topics, name, t)
        {
                if (!head)
                        head = t;
                if (!selected(o, name))
                        continue;
                json_object_set(
                    topics, name,
                    json_object_get(json_object_get(t, "topics"), name));
                messages += json_integer_value(json_object_get(
                    json_object_get(json_object_get(t, "topics"), name),
                    "messages"));
        }
        r = json_copy(head);
        json_object_set_new(r, "topics", topics);
        json_object_set_new(r, "messages", json_integer(messages));
        return r;
}

/** @brief Sets each producer's state (live, stale, ended). */
static void set_states(const ks_fleet_opts_t *o, ks_fleet_producer_t *ps,
                       size_t n, int64_t now)
{
        size_t i;

        for (i = 0; i < n; i++) {
                ks_fleet_producer_t *p    = &ps[i];
                const json_t        *head = p->own;
                const char          *tn;
                json_t              *t;
                double               stale_ms;
                int                  final;

                json_object_foreach(p->topics, tn, t) if (!head) head = t;
                final    = json_is_true(json_object_get(head, "final"));
                stale_ms = o->stale_after_s >= 0
                               ? o->stale_after_s * 1000
                               : KS_FLEET_STALE_INTERVALS *
                                     (double)ks_cli_u64(
                                         json_object_get(head, "producer"),
                                         "report_interval_ms");
                if (final)
                        p->state = "ended";
                else if (stale_ms > 0 && (double)(now - p->last_ms) > stale_ms)
                        p->state = "stale";
                else
                        p->state = "live";
                p->merged = (double)(now - p->last_ms) <= o->since_s * 1000 &&
                            (!o->live_only || !strcmp(p->state, "live"));
        }
}

/** @returns the `fleet` object's producers[] entry of @p p. */
static json_t *producer_json(const ks_fleet_producer_t *p)
{
        const json_t *head = p->own, *prod;
        const char   *tn;
        json_t       *t, *topics = json_array(), *o;
        char          started[40], last[40];

        json_object_foreach(p->topics, tn, t)
        {
                if (!head)
                        head = t;
                json_array_append_new(topics, json_string(tn));
        }
        prod = json_object_get(head, "producer");
        ks_report_rfc3339(
            json_integer_value(json_object_get(p->key, "started_at_ms")),
            started, sizeof(started));
        ks_report_rfc3339(p->last_ms, last, sizeof(last));
        o = json_pack(
            "{s:O, s:O, s:O, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:s, "
            "s:o, s:b}",
            "client_id", json_object_get(p->key, "client_id"), "host",
            json_object_get(p->key, "host"), "pid",
            json_object_get(p->key, "pid"), "started_at", started, "name",
            ks_cli_str(prod, "name", ""), "librdkafka_version",
            ks_cli_str(prod, "librdkafka_version", ""), "keyshift_version",
            ks_cli_str(prod, "keyshift_version", ""), "partitioner",
            ks_cli_str(prod, "partitioner", ""), "generated_at",
            ks_cli_str(head, "generated_at", ""), "last_record_at", last,
            "report_interval_ms",
            (json_int_t)ks_cli_u64(prod, "report_interval_ms"), "state",
            p->state, "topics", topics, "merged", p->merged);
        return o;
}

/**
 * @brief Notes in each merged producer's producers[] entry (@p plist, in
 *        the order of @p ps) the topics whose figures leave out its
 *        record (ks_cli_merge_left_out(): its count unknown while another
 *        producer's is known), as `left_out` {topic: reason}, and names
 *        the first in @p first.
 * @returns the records left out.
 */
static size_t note_left_out(const ks_fleet_producer_t *ps, size_t np,
                            json_t *plist, const json_t *merged, char *first,
                            size_t firstsz)
{
        const json_t *topics = json_object_get(merged, "topics");
        const char   *tn;
        json_t       *t;
        size_t        i, n = 0;

        for (i = 0; i < np; i++) {
                json_t *lo = NULL;
                if (!ps[i].merged)
                        continue;
                json_object_foreach(ps[i].topics, tn, t)
                {
                        const json_t *mt = json_object_get(topics, tn);
                        if (!mt || !ks_cli_merge_left_out(
                                       json_object_get(
                                           json_object_get(t, "topics"), tn),
                                       ks_cli_topic_current(mt)))
                                continue;
                        if (!lo)
                                lo = json_object();
                        json_object_set_new(
                            lo, tn, json_string("partition count unknown"));
                        if (!n++)
                                snprintf(first, firstsz, "%s (topic %s)",
                                         ps[i].label, tn);
                }
                if (lo)
                        json_object_set_new(json_array_get(plist, i),
                                            "left_out", lo);
        }
        return n;
}

/** @brief Writes @p report's Prometheus metrics (ks_metrics.h) to
 *         @p path atomically. @returns 0, or -1 with @p err set. */
static int write_metrics(const json_t *report, const char *path, char *err,
                         size_t errsz)
{
        ks_metrics_t *m = ks_metrics_new(report);
        const char   *name;
        json_t       *t;
        int           r;

        if (!m) {
                snprintf(err, errsz, "out of memory");
                return -1;
        }
        json_object_foreach(json_object_get(report, "topics"), name, t)
            ks_metrics_topic(m, name, t);
        ks_metrics_warnings(m, json_object_get(report, "warnings"));
        r = ks_metrics_write_atomic(m, path, err, errsz);
        ks_metrics_free(m);
        return r;
}

/** @brief Writes "client_id@host pid N" of producer @p p into its label. */
static void producer_label(ks_fleet_producer_t *p)
{
        snprintf(p->label, sizeof(p->label), "%s@%s pid %lld",
                 json_string_value(json_object_get(p->key, "client_id")),
                 json_string_value(json_object_get(p->key, "host")),
                 (long long)json_integer_value(json_object_get(p->key, "pid")));
}

/**
 * @brief Gives each producer of @p rd its state (set_states()), counts
 *        them by state and gathers the reports of those to merge in
 *        rd->in.
 * @returns the `fleet` object's producers[] (a new reference).
 */
static json_t *gather_producers(const ks_fleet_opts_t *o, ks_fleet_round_t *rd)
{
        json_t *plist = json_array();
        size_t  i;

        set_states(o, rd->ps, rd->np, rd->now);
        rd->in = calloc(rd->np ? rd->np : 1, sizeof(*rd->in));
        for (i = 0; i < rd->np; i++) {
                ks_fleet_producer_t *p = &rd->ps[i];

                json_array_append_new(plist, producer_json(p));
                rd->cnt[!strcmp(p->state, "live")    ? KS_FLEET_LIVE
                        : !strcmp(p->state, "stale") ? KS_FLEET_STALE
                                                     : KS_FLEET_ENDED]++;
                if (!p->merged)
                        continue;
                producer_label(p);
                rd->in[rd->nin].path   = p->label;
                rd->in[rd->nin++].root = producer_report(o, p);
        }
        return plist;
}

/**
 * @brief Names the merged report's producer after the fleet of @p rd.
 * @returns the report's `fleet` object, holding @p plist (taken).
 */
static json_t *fleet_json(const ks_fleet_opts_t *o, const ks_fleet_round_t *rd,
                          uint64_t records, json_t *merged, json_t *plist)
{
        char    name[96], at[40];
        json_t *prod = json_object_get(merged, "producer");

        snprintf(name, sizeof(name), "keyshift fleet of %zu producers",
                 rd->nin);
        json_object_set_new(prod, "name", json_string(name));
        ks_report_rfc3339(rd->now, at, sizeof(at));
        return json_pack(
            "{s:s, s:s, s:s, s:I, s:I, s:o, s:f, s:b, s:I, s:I, s:I, "
            "s:I, s:o}",
            "bootstrap", o->bootstrap, "report_topic", o->report_topic,
            "read_at", at, "records", (json_int_t)records, "records_garbage",
            (json_int_t)rd->garbage, "stale_after_s",
            o->stale_after_s >= 0 ? json_real(o->stale_after_s) : json_null(),
            "since_s", o->since_s, "live_only", o->live_only, "live",
            rd->cnt[KS_FLEET_LIVE], "stale", rd->cnt[KS_FLEET_STALE], "ended",
            rd->cnt[KS_FLEET_ENDED], "merged", (json_int_t)rd->nin, "producers",
            plist);
}

/** @brief Appends warning {code, message} to @p ws. */
static void add_warning(json_t *ws, const char *code, const char *message)
{
        json_array_append_new(
            ws, json_pack("{s:s, s:s}", "code", code, "message", message));
}

/**
 * @brief Appends to @p merged's warnings what the round of @p rd met:
 *        records left out (@p left_out of them), records skipped, stale
 *        producers.
 */
static void fleet_warnings(const ks_fleet_round_t *rd, json_t *merged,
                           size_t left_out)
{
        json_t *ws = json_object_get(merged, "warnings");
        char    msg[2048];
        size_t  i;

        if (left_out) {
                snprintf(msg, sizeof(msg),
                         "%zu records were left out of their topic's "
                         "figures: their producer had not learned the "
                         "topic's partition count (a short-lived producer, "
                         "or a record published before the metadata "
                         "answer), so their messages cannot be placed on "
                         "partitions; the first: %s (fleet.producers[]."
                         "left_out names them all)",
                         left_out, rd->first_out);
                add_warning(ws, "FLEET_RECORDS_LEFT_OUT", msg);
        }
        if (rd->garbage) {
                snprintf(msg, sizeof(msg),
                         "%zu records of the report topic were skipped (not "
                         "keyshift reports, or unreadable), the first at %s",
                         rd->garbage, rd->first_bad);
                add_warning(ws, "FLEET_RECORDS_SKIPPED", msg);
        }
        if (rd->cnt[KS_FLEET_STALE]) {
                size_t n = (size_t)snprintf(
                    msg, sizeof(msg),
                    "%lld of %zu producers are stale (no record within "
                    "--stale-after):",
                    (long long)rd->cnt[KS_FLEET_STALE], rd->np);
                for (i = 0; i < rd->np && n < sizeof(msg); i++)
                        if (!strcmp(rd->ps[i].state, "stale"))
                                n += (size_t)snprintf(
                                    msg + n, sizeof(msg) - n, " %s@%s pid %lld",
                                    json_string_value(json_object_get(
                                        rd->ps[i].key, "client_id")),
                                    json_string_value(
                                        json_object_get(rd->ps[i].key, "host")),
                                    (long long)json_integer_value(
                                        json_object_get(rd->ps[i].key, "pid")));
                add_warning(ws, "FLEET_PRODUCERS_STALE", msg);
        }
}

/**
 * @brief Writes the fleet's report @p merged to --out (and its metrics to
 *        --metrics), checked first as any report is.
 * @returns KS_CLI_EXIT_OK, or KS_CLI_EXIT_FAIL (said on stderr).
 */
static int write_fleet(const ks_fleet_opts_t *o, const ks_fleet_round_t *rd,
                       const json_t *merged, size_t left_out)
{
        json_t *file = NULL;
        char    err[2048];
        int     rc = KS_CLI_EXIT_FAIL;

        if (o->metrics && write_metrics(merged, o->metrics, err, sizeof(err)))
                ks_cli_fail("fleet", "%s", err);
        else if (!(file = ks_report_file_form(merged)) ||
                 ks_cli_report_check(file, o->out, err, sizeof(err)))
                ks_cli_fail("fleet", "internal error, report invalid: %s",
                            file ? err : "out of memory");
        else if (!strcmp(o->out, "-")) {
                if (json_dumpf(file, stdout,
                               JSON_INDENT(1) | JSON_PRESERVE_ORDER) ||
                    fputc('\n', stdout) == EOF || fflush(stdout))
                        ks_cli_fail("fleet", "cannot write the output");
                else
                        rc = KS_CLI_EXIT_OK;
        } else if (ks_report_write_atomic(merged, o->out, err, sizeof(err)))
                ks_cli_fail("fleet", "%s", err);
        else {
                fprintf(stderr,
                        "keyshift fleet: wrote %s (%zu producers merged: "
                        "%lld live, %lld stale, %lld ended; %zu records "
                        "skipped, %zu left out)\n",
                        o->out, rd->nin, (long long)rd->cnt[KS_FLEET_LIVE],
                        (long long)rd->cnt[KS_FLEET_STALE],
                        (long long)rd->cnt[KS_FLEET_ENDED], rd->garbage,
                        left_out);
                rc = KS_CLI_EXIT_OK;
        }
        json_decref(file);
        return rc;
}

/** @brief Frees what the round @p rd holds. */
static void round_free(ks_fleet_round_t *rd)
{
        size_t i;

        for (i = 0; i < rd->nin; i++)
                json_decref(rd->in[i].root);
        free(rd->in);
        for (i = 0; i < rd->np; i++) {
                json_decref(rd->ps[i].key);
                json_decref(rd->ps[i].own);
                json_decref(rd->ps[i].topics);
        }
        free(rd->ps);
}

int ks_fleet_run(const ks_fleet_opts_t *o, rd_kafka_conf_t *conf)
{
        ks_fleet_read_t  recs;
        ks_fleet_round_t rd;
        size_t           left_out;
        json_t          *merged = NULL, *fleet, *plist;
        char             err[2048];
        int              rc = KS_CLI_EXIT_FAIL;

        memset(&rd, 0, sizeof(rd));
        if (ks_fleet_read(conf, o->report_topic, o->timeout_ms,
                          isatty(STDERR_FILENO), &recs, err, sizeof(err)))
                return ks_cli_fail("fleet", "%s", err);
        rd.now = wall_ms();
        ks_fleet_group_records(o, &recs, &rd);
        plist = gather_producers(o, &rd);
        if (!rd.nin) {
                ks_cli_fail("fleet",
                            "no producer to merge: %zu producers on %s, none "
                            "whose last record is within --since%s (%zu "
                            "records, %zu skipped)",
                            rd.np, o->report_topic,
                            o->live_only ? " and live" : "",
                            (size_t)recs.records, rd.garbage);
                json_decref(plist);
                goto done;
        }
        if (!(merged = ks_cli_merge_reports(rd.in, rd.nin, o->hot_max, err,
                                            sizeof(err)))) {
                ks_cli_fail("fleet", "%s", err);
                json_decref(plist);
                goto done;
        }
        fleet    = fleet_json(o, &rd, recs.records, merged, plist);
        left_out = note_left_out(rd.ps, rd.np, plist, merged, rd.first_out,
                                 sizeof(rd.first_out));
        json_object_set_new(fleet, "records_left_out",
                            json_integer((json_int_t)left_out));
        fleet_warnings(&rd, merged, left_out);
        json_object_set_new(merged, "source", json_string("fleet"));
        json_object_set_new(merged, "fleet", fleet);
        rc = write_fleet(o, &rd, merged, left_out);
done:
        json_decref(merged);
        round_free(&rd);
        ks_fleet_read_free(&recs);
        return rc;
}
