/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli_merge.c
 * @brief `keyshift merge A.json B.json ... -o fleet.json`: one report for
 *        a fleet of producer processes of the same topics.
 *
 * Topics are merged one by one over the inputs that have them
 * (ks_cli_merge_topic.c); the top level says where the data came from:
 * `started_at` the earliest start, `generated_at` the latest report,
 * `final` only if every input was final, `producer.merged_from` the
 * inputs, and the inputs' producer-level warnings prefixed with their
 * file. The output is checked like any input before it is written, and
 * written atomically (core/report/ks_report.h).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "keyshift/keyshift.h"
#include "ks_cli.h"
#include "ks_cli_merge.h"
#include "ks_cli_report.h"
#include "ks_report.h"

/** @brief Prints the usage of `keyshift merge` to @p fp. */
static void ks_merge_help(FILE *fp)
{
        fprintf(fp,
                "Usage: keyshift merge [OPTIONS] REPORT.json... [-o "
                "FLEET.json]\n"
                "Combines the reports of several producer processes of the "
                "same topics into\n"
                "one %s report. Exact counters are summed (messages,\n"
                "bytes, keys, per-partition loads, flows, moved, "
                "acknowledged, key encodings);\n"
                "sketches are merged (distinct-key HyperLogLog, key sample, "
                "hot keys), and\n"
                "distinct keys, moved-key fractions and hot keys recomputed "
                "from them. A topic\n"
                "whose partition count, proposed counts or partitioner "
                "differ between reports\n"
                "is refused, and so are two reports of one producer (its "
                "reports are cumulative).\n\n"
                "  -o, --output FILE  the merged report (default - : "
                "standard output)\n"
                "  -k, --hot N        hot keys listed per topic (default: "
                "the most any input\n"
                "                     lists)\n"
                "  -h, --help         this help\n\n"
                "Exit: 0 ok, 1 unreadable, invalid or incompatible report, "
                "or unwritable output,\n"
                "2 usage.\n",
                KEYSHIFT_REPORT_SCHEMA);
}

/**
 * @brief Appends to @p out the producer reports @p r stands for, one
 *        object {file, client_id, name, pid, started_at, generated_at,
 *        final} each: its own, or, for a merged report, its
 *        `producer.merged_from` (nested merges list the producers'
 *        reports, not the intermediate files).
 */
static void ks_merge_leaves(const ks_cli_report_t *r, json_t *out)
{
        const json_t *p  = json_object_get(r->root, "producer");
        const json_t *mf = json_object_get(p, "merged_from");
        size_t        i;

        if (json_is_array(mf) && json_array_size(mf)) {
                for (i = 0; i < json_array_size(mf); i++)
                        json_array_append_new(
                            out, json_deep_copy(json_array_get(mf, i)));
                return;
        }
        json_array_append_new(
            out,
            json_pack("{s:s, s:s, s:s, s:I, s:s, s:s, s:b}", "file", r->path,
                      "client_id", ks_cli_str(p, "client_id", ""), "name",
                      ks_cli_str(p, "name", ""), "pid",
                      (json_int_t)ks_cli_u64(p, "pid"), "started_at",
                      ks_cli_str(r->root, "started_at", ""), "generated_at",
                      ks_cli_str(r->root, "generated_at", ""), "final",
                      json_is_true(json_object_get(r->root, "final"))));
}

/** @brief The producer object of the merged report. */
static json_t *ks_merge_producer(const ks_cli_report_t *r, size_t n)
{
        const json_t *p0   = json_object_get(r[0].root, "producer");
        json_t       *from = json_array();
        const char   *part = ks_cli_str(p0, "partitioner", "?");
        const char   *rdk  = ks_cli_str(p0, "librdkafka_version", "?");
        char          name[64];
        size_t        i;

        for (i = 0; i < n; i++) {
                const json_t *p = json_object_get(r[i].root, "producer");
                if (strcmp(part, ks_cli_str(p, "partitioner", "?")))
                        part = "mixed";
                if (strcmp(rdk, ks_cli_str(p, "librdkafka_version", "?")))
                        rdk = "mixed";
                ks_merge_leaves(&r[i], from);
        }
        snprintf(name, sizeof(name), "keyshift merge of %zu reports", n);
        return json_pack(
            "{s:s, s:s, s:I, s:s, s:s, s:s, s:s, s:O, s:O, s:o}", "client_id",
            "keyshift-merge", "name", name, "pid", (json_int_t)getpid(),
            "librdkafka_version", rdk, "keyshift_version", KEYSHIFT_VERSION_STR,
            "partitioner", part, "partitioner_source", "merged",
            "sticky_partitioning_linger_ms",
            json_object_get(p0, "sticky_partitioning_linger_ms")
                ? json_object_get(p0, "sticky_partitioning_linger_ms")
                : json_integer(0),
            "report_interval_ms",
            json_object_get(p0, "report_interval_ms")
                ? json_object_get(p0, "report_interval_ms")
                : json_integer(0),
            "merged_from", from);
}

/** @returns the identity of producer report @p leaf (ks_merge_leaves()):
 *           name, pid and start; the report's time for entries written
 *           before merged_from carried the start. */
static void ks_merge_leaf_id(const json_t *leaf, char *out, size_t size)
{
        const char *at = ks_cli_str(leaf, "started_at", "");

        snprintf(out, size, "%s, pid %llu, %s %s", ks_cli_str(leaf, "name", ""),
                 (unsigned long long)ks_cli_u64(leaf, "pid"),
                 *at ? "started at" : "reported at",
                 *at ? at : ks_cli_str(leaf, "generated_at", ""));
}

/**
 * @returns 0, or -1 with @p err set when two inputs stand for one producer
 *          (same name, pid and start; through a merged report's
 *          `merged_from` too): a producer's reports are cumulative, so
 *          merging two of them (the same file twice, a periodic report and
 *          the final one, or a merge and one of its inputs) would count
 *          its messages twice.
 */
static int ks_merge_distinct_producers(const ks_cli_report_t *r, size_t n,
                                       char *err, size_t errsz)
{
        json_t *seen = json_object(); /* identity -> the input holding it */
        json_t *leaves;
        size_t  i, a;
        int     dup = 0;

        for (i = 0; i < n && !dup; i++) {
                ks_merge_leaves(&r[i], leaves = json_array());
                for (a = 0; a < json_array_size(leaves) && !dup; a++) {
                        char          id[512];
                        const json_t *at;
                        ks_merge_leaf_id(json_array_get(leaves, a), id,
                                         sizeof(id));
                        at = json_object_get(seen, id);
                        if (at && (size_t)json_integer_value(at) != i) {
                                snprintf(err, errsz,
                                         "%s and %s both hold a report of one "
                                         "producer (%s): its reports are "
                                         "cumulative, merge only its latest",
                                         r[json_integer_value(at)].path,
                                         r[i].path, id);
                                dup = 1;
                        } else {
                                json_object_set_new(
                                    seen, id, json_integer((json_int_t)i));
                        }
                }
                json_decref(leaves);
        }
        json_decref(seen);
        return dup ? -1 : 0;
}

json_t *ks_cli_merge_reports(const ks_cli_report_t *r, size_t n, size_t hot_max,
                             char *err, size_t errsz)
{
        json_t            *topics = json_object(), *warnings = json_array();
        ks_cli_merge_in_t *in      = calloc(n, sizeof(*in));
        const char        *started = NULL, *generated = NULL, *name;
        json_t            *t, *out;
        int                final    = 1;
        json_int_t         messages = 0;
        size_t             i, j, cnt;
        char               msg[1024];

        if (ks_merge_distinct_producers(r, n, err, errsz)) {
                free(in);
                json_decref(topics);
                json_decref(warnings);
                return NULL;
        }

        for (i = 0; i < n; i++) {
                const char   *s  = ks_cli_str(r[i].root, "started_at", NULL);
                const char   *g  = ks_cli_str(r[i].root, "generated_at", NULL);
                const json_t *ws = json_object_get(r[i].root, "warnings");
                if (s && (!started || strcmp(s, started) < 0))
                        started = s;
                if (g && (!generated || strcmp(g, generated) > 0))
                        generated = g;
                final &= json_is_true(json_object_get(r[i].root, "final"));
                for (j = 0; j < json_array_size(ws); j++) {
                        snprintf(
                            msg, sizeof(msg), "%s: %s", r[i].path,
                            ks_cli_str(json_array_get(ws, j), "message", ""));
                        json_array_append_new(
                            warnings,
                            json_pack(
                                "{s:s, s:s}", "code",
                                ks_cli_str(json_array_get(ws, j), "code", "?"),
                                "message", msg));
                }
                /* topics in the order first seen */
                json_object_foreach(ks_cli_report_topics(&r[i]), name, t)
                {
                        if (json_object_get(topics, name))
                                continue;
                        for (cnt = 0, j = i; j < n; j++)
                                if ((in[cnt].topic = json_object_get(
                                         ks_cli_report_topics(&r[j]), name)))
                                        in[cnt++].report = &r[j];
                        if (!(t = ks_cli_merge_topic(name, in, cnt, hot_max, n,
                                                     err, errsz))) {
                                free(in);
                                json_decref(topics);
                                json_decref(warnings);
                                return NULL;
                        }
                        json_object_set_new(topics, name, t);
                }
        }
        free(in);
        if (!started)
                started = generated ? generated : "";
        if (!generated)
                generated = started;
        json_object_foreach(topics, name, t)
        {
                json_int_t m =
                    json_integer_value(json_object_get(t, "messages"));
                if (messages > INT64_MAX - m) {
                        snprintf(err, errsz,
                                 "messages: overflow: the merged topics' "
                                 "messages sum past 2^63 - 1");
                        json_decref(topics);
                        json_decref(warnings);
                        return NULL;
                }
                messages += m;
        }
        out = json_pack("{s:s, s:s, s:s, s:f, s:b, s:o, s:o, s:I, s:o}",
                        "schema", KEYSHIFT_REPORT_SCHEMA, "generated_at",
                        generated, "started_at", started, "uptime_s",
                        ks_report_rfc3339_parse(started) >= 0 &&
                                ks_report_rfc3339_parse(generated) >= 0
                            ? ks_report_rfc3339_parse(generated) -
                                  ks_report_rfc3339_parse(started)
                            : 0.0,
                        "final", final, "producer", ks_merge_producer(r, n),
                        "topics", topics, "messages", messages, "warnings",
                        warnings);
        if (!out)
                snprintf(err, errsz, "out of memory");
        return out;
}

int ks_cli_merge_main(int argc, char **argv)
{
        static const struct option longopts[] = {
            {"output", required_argument, NULL, 'o'},
            {"hot", required_argument, NULL, 'k'},
            {"help", no_argument, NULL, 'h'},
            {NULL, 0, NULL, 0}};
        const char      *out     = "-";
        size_t           hot_max = 0, n, i;
        ks_cli_report_t *r;
        json_t          *merged, *file = NULL;
        char             err[2048];
        long long        v;
        int              c, rc = KS_CLI_EXIT_OK;

        optind = 1;
        while ((c = getopt_long(argc, argv, "o:k:h", longopts, NULL)) != -1) {
                switch (c) {
                case 'o':
                        out = optarg;
                        break;
                case 'k':
                        if (ks_cli_parse_long(optarg, 1, 1000, &v, err,
                                              sizeof(err)))
                                return ks_cli_usage_error("merge", "--hot: %s",
                                                          err);
                        hot_max = (size_t)v;
                        break;
                case 'h':
                        ks_merge_help(stdout);
                        return KS_CLI_EXIT_OK;
                default:
                        return ks_cli_usage_error("merge", "bad option");
                }
        }
        if (optind >= argc)
                return ks_cli_usage_error("merge", "no REPORT.json given");
        n = (size_t)(argc - optind);
        r = calloc(n, sizeof(*r));
        for (i = 0; i < n; i++)
                if (ks_cli_report_load(argv[optind + (int)i], &r[i], err,
                                       sizeof(err))) {
                        rc = ks_cli_fail("merge", "%s", err);
                        goto done;
                }
        if (!(merged = ks_cli_merge_reports(r, n, hot_max, err, sizeof(err)))) {
                rc = ks_cli_fail("merge", "%s", err);
                goto done;
        }
        /* what we write must read back as a report: its file form */
        file = ks_report_file_form(merged);
        if (!file) {
                rc = ks_cli_fail("merge", "out of memory");
        } else if (ks_cli_report_check(file, out, err, sizeof(err))) {
                rc = ks_cli_fail("merge",
                                 "internal error, merged report "
                                 "invalid: %s",
                                 err);
        } else if (!strcmp(out, "-")) {
                if (json_dumpf(file, stdout,
                               JSON_INDENT(1) | JSON_PRESERVE_ORDER) ||
                    fputc('\n', stdout) == EOF || fflush(stdout))
                        rc = ks_cli_fail("merge", "cannot write the output");
        } else if (ks_report_write_atomic(merged, out, err, sizeof(err))) {
                rc = ks_cli_fail("merge", "%s", err);
        } else {
                fprintf(stderr,
                        "keyshift merge: wrote %s (%zu reports, %zu "
                        "topics)\n",
                        out, n,
                        json_object_size(json_object_get(merged, "topics")));
        }
        json_decref(file);
        json_decref(merged);
done:
        for (i = 0; i < n; i++)
                ks_cli_report_free(&r[i]);
        free(r);
        return rc;
}
