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

/** Garbage records named one by one on stderr, at most. */
#define KS_FLEET_GARBAGE_NAMED 10

/** One producer: its records' reports grouped. */
typedef struct ks_fleet_producer {
        json_t     *key;     /**< the identity (a record's key without topic) */
        json_t     *own;     /**< its own record's report (no topic), or NULL */
        json_t     *topics;  /**< topic -> that topic's report */
        int64_t     last_ms; /**< its latest record's time */
        const char *state;
        int         merged;
        char        label[400]; /**< "client_id@host pid N": merged_from */
} ks_fleet_producer_t;

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

/**
 * @brief Checks one parsed record (@p key, ks_fleet_parse_record()): its
 *        value @p val a report holding the key's topic alone (none for
 *        the producer's own record) that the report check passes. The
 *        check reads every packed sketch whole (ks_cli_report_check(),
 *        "merge"), with the functions the merge reads them with: a record
 *        whose sketches do not read is garbage here, not a failed merge.
 *        (A merge of each record alone, to the same end, took 13 % of
 *        `keyshift fleet`'s time over 100 x 100.)
 * @returns 0, or -1 with @p err set.
 */
static int check_record(json_t *key, json_t *val, const char *where, char *err,
                        size_t errsz)
{
        const char *topic = json_string_value(json_object_get(key, "topic"));
        json_t     *topics;

        if (ks_cli_report_check(val, where, err, errsz) ||
            ks_cli_report_rows(val, where, err, errsz)) /* hot keys */
                return -1;
        topics = json_object_get(val, "topics");
        if (json_object_size(topics) != (*topic ? 1u : 0u) ||
            (*topic && !json_object_get(topics, topic))) {
                snprintf(err, errsz,
                         "its report does not hold topic \"%s\" alone", topic);
                return -1;
        }
        return 0;
}

/** @brief Writes where record @p rec is into @p where. */
static void record_where(const ks_fleet_opts_t *o, const ks_fleet_rec_t *rec,
                         char *where, size_t wheresz)
{
        snprintf(where, wheresz, "%s [%d] offset %lld", o->report_topic,
                 (int)rec->partition, (long long)rec->offset);
}

/** @brief check_record() as a ks_fleet_check_t (@p arg: the options).
 *  @locality a parser's worker thread. */
static int check_parsed(void *arg, const ks_fleet_rec_t *rec, json_t *key,
                        json_t *val, char *err, size_t errsz)
{
        char where[600];

        record_where(arg, rec, where, sizeof(where));
        return check_record(key, val, where, err, errsz);
}

/** @returns the producer of @p key in @p ps (added if new), or NULL. */
static ks_fleet_producer_t *producer_of(ks_fleet_producer_t **ps, size_t *n,
                                        json_t *key)
{
        json_t *id = json_deep_copy(key);
        size_t  i;
        void   *grown;

        json_object_del(id, "topic");
        for (i = 0; i < *n; i++)
                if (json_equal((*ps)[i].key, id)) {
                        json_decref(id);
                        return &(*ps)[i];
                }
        if (!(grown = realloc(*ps, (*n + 1) * sizeof(**ps)))) {
                json_decref(id);
                return NULL;
        }
        *ps = grown;
        memset(&(*ps)[*n], 0, sizeof(**ps));
        (*ps)[*n].key     = id;
        (*ps)[*n].topics  = json_object();
        (*ps)[*n].last_ms = -1;
        return &(*ps)[(*n)++];
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
                               : 3.0 * (double)ks_cli_u64(
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

int ks_fleet_run(const ks_fleet_opts_t *o, rd_kafka_conf_t *conf)
{
        ks_fleet_read_t      rd;
        ks_fleet_parser_t   *parser;
        ks_fleet_producer_t *ps = NULL;
        ks_cli_report_t     *in = NULL;
        size_t               np = 0, nin = 0, i, garbage = 0, left_out;
        json_t              *merged = NULL, *file = NULL, *fleet, *plist, *ws;
        char                 err[2048], where[600], first_bad[600] = "";
        char                 first_out[700] = "";
        int64_t              now;
        int                  rc     = KS_CLI_EXIT_FAIL;
        json_int_t           cnt[3] = {0, 0, 0};

        if (ks_fleet_read(conf, o->report_topic, o->timeout_ms,
                          isatty(STDERR_FILENO), &rd, err, sizeof(err)))
                return ks_cli_fail("fleet", "%s", err);
        now    = wall_ms();
        parser = ks_fleet_parser_start(&rd, check_parsed, (void *)o);
        for (i = 0; i < rd.cnt; i++) {
                ks_fleet_rec_t      *rec = &rd.recs[i];
                json_t              *key = NULL, *val = NULL;
                ks_fleet_producer_t *p;
                const char          *topic;
                int                  r;

                record_where(o, rec, where, sizeof(where));
                if (parser) /* parsed and checked */
                        r = ks_fleet_parser_take(parser, i, &key, &val, err,
                                                 sizeof(err));
                else if (!rec->value)
                        r = 1;
                else {
                        r = ks_fleet_parse_record(rec, &key, &val, err,
                                                  sizeof(err)) ||
                                    check_record(key, val, where, err,
                                                 sizeof(err))
                                ? -1
                                : 0;
                        free(rec->value); /* its text is not needed */
                        rec->value = NULL;
                }
                if (r == 1) /* deleted */
                        continue;
                if (r) {
                        json_decref(key);
                        json_decref(val);
                        if (garbage < KS_FLEET_GARBAGE_NAMED) {
                                /* the check's words name the record
                                 * already: said once */
                                size_t      wl  = strlen(where);
                                const char *why = err;
                                if (!strncmp(err, where, wl) &&
                                    !strncmp(err + wl, ": ", 2))
                                        why = err + wl + 2;
                                fprintf(stderr,
                                        "keyshift fleet: skipped the record "
                                        "at %s: %s\n",
                                        where, why);
                        }
                        if (!garbage)
                                snprintf(first_bad, sizeof(first_bad), "%s",
                                         where);
                        garbage++;
                        continue;
                }
                topic = json_string_value(json_object_get(key, "topic"));
                if (!(p = producer_of(&ps, &np, key))) {
                        json_decref(key);
                        json_decref(val);
                        break;
                }
                if (*topic)
                        json_object_set_new(p->topics, topic, val);
                else {
                        json_decref(p->own);
                        p->own = val;
                }
                if (rec->timestamp_ms > p->last_ms)
                        p->last_ms = rec->timestamp_ms;
                json_decref(key);
        }
        ks_fleet_parser_stop(parser);
        if (garbage > KS_FLEET_GARBAGE_NAMED)
                fprintf(stderr, "keyshift fleet: %zu more records skipped\n",
                        garbage - KS_FLEET_GARBAGE_NAMED);
        set_states(o, ps, np, now);
        in    = calloc(np ? np : 1, sizeof(*in));
        plist = json_array();
        for (i = 0; i < np; i++) {
                json_array_append_new(plist, producer_json(&ps[i]));
                cnt[!strcmp(ps[i].state, "live")    ? 0
                    : !strcmp(ps[i].state, "stale") ? 1
                                                    : 2]++;
                if (!ps[i].merged)
                        continue;
                snprintf(
                    ps[i].label, sizeof(ps[i].label), "%s@%s pid %lld",
                    json_string_value(json_object_get(ps[i].key, "client_id")),
                    json_string_value(json_object_get(ps[i].key, "host")),
                    (long long)json_integer_value(
                        json_object_get(ps[i].key, "pid")));
                in[nin].path   = ps[i].label;
                in[nin++].root = producer_report(o, &ps[i]);
        }
        if (!nin) {
                ks_cli_fail("fleet",
                            "no producer to merge: %zu producers on %s, none "
                            "whose last record is within --since%s (%zu "
                            "records, %zu skipped)",
                            np, o->report_topic,
                            o->live_only ? " and live" : "", (size_t)rd.records,
                            garbage);
                json_decref(plist);
                goto done;
        }
        if (!(merged = ks_cli_merge_reports(in, nin, o->hot_max, err,
                                            sizeof(err)))) {
                ks_cli_fail("fleet", "%s", err);
                json_decref(plist);
                goto done;
        }
        {
                char    name[96], at[40];
                json_t *prod = json_object_get(merged, "producer");
                snprintf(name, sizeof(name), "keyshift fleet of %zu producers",
                         nin);
                json_object_set_new(prod, "name", json_string(name));
                ks_report_rfc3339(now, at, sizeof(at));
                fleet = json_pack(
                    "{s:s, s:s, s:s, s:I, s:I, s:o, s:f, s:b, s:I, s:I, s:I, "
                    "s:I, s:o}",
                    "bootstrap", o->bootstrap, "report_topic", o->report_topic,
                    "read_at", at, "records", (json_int_t)rd.records,
                    "records_garbage", (json_int_t)garbage, "stale_after_s",
                    o->stale_after_s >= 0 ? json_real(o->stale_after_s)
                                          : json_null(),
                    "since_s", o->since_s, "live_only", o->live_only, "live",
                    cnt[0], "stale", cnt[1], "ended", cnt[2], "merged",
                    (json_int_t)nin, "producers", plist);
        }
        ws = json_object_get(merged, "warnings");
        left_out =
            note_left_out(ps, np, plist, merged, first_out, sizeof(first_out));
        json_object_set_new(fleet, "records_left_out",
                            json_integer((json_int_t)left_out));
        if (left_out) {
                snprintf(err, sizeof(err),
                         "%zu records were left out of their topic's "
                         "figures: their producer had not learned the "
                         "topic's partition count (a short-lived producer, "
                         "or a record published before the metadata "
                         "answer), so their messages cannot be placed on "
                         "partitions; the first: %s (fleet.producers[]."
                         "left_out names them all)",
                         left_out, first_out);
                json_array_append_new(ws, json_pack("{s:s, s:s}", "code",
                                                    "FLEET_RECORDS_LEFT_OUT",
                                                    "message", err));
        }
        if (garbage) {
                snprintf(err, sizeof(err),
                         "%zu records of the report topic were skipped (not "
                         "keyshift reports, or unreadable), the first at %s",
                         garbage, first_bad);
                json_array_append_new(ws, json_pack("{s:s, s:s}", "code",
                                                    "FLEET_RECORDS_SKIPPED",
                                                    "message", err));
        }
        if (cnt[1]) {
                size_t n = (size_t)snprintf(
                    err, sizeof(err),
                    "%lld of %zu producers are stale (no record within "
                    "--stale-after):",
                    (long long)cnt[1], np);
                for (i = 0; i < np && n < sizeof(err); i++)
                        if (!strcmp(ps[i].state, "stale"))
                                n += (size_t)snprintf(
                                    err + n, sizeof(err) - n, " %s@%s pid %lld",
                                    json_string_value(json_object_get(
                                        ps[i].key, "client_id")),
                                    json_string_value(
                                        json_object_get(ps[i].key, "host")),
                                    (long long)json_integer_value(
                                        json_object_get(ps[i].key, "pid")));
                json_array_append_new(ws, json_pack("{s:s, s:s}", "code",
                                                    "FLEET_PRODUCERS_STALE",
                                                    "message", err));
        }
        json_object_set_new(merged, "source", json_string("fleet"));
        json_object_set_new(merged, "fleet", fleet);
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
                        o->out, nin, (long long)cnt[0], (long long)cnt[1],
                        (long long)cnt[2], garbage, left_out);
                rc = KS_CLI_EXIT_OK;
        }
done:
        json_decref(file);
        json_decref(merged);
        for (i = 0; i < nin; i++)
                json_decref(in[i].root);
        free(in);
        for (i = 0; i < np; i++) {
                json_decref(ps[i].key);
                json_decref(ps[i].own);
                json_decref(ps[i].topics);
        }
        free(ps);
        ks_fleet_read_free(&rd);
        return rc;
}
