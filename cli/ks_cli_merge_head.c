/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli_merge_head.c
 * @brief The top level of a merged report, from the inputs' own top
 *        levels (their topics not needed): `started_at` the earliest
 *        start, `generated_at` the latest report, `final` only if every
 *        input was final, `producer.merged_from` the inputs, and the
 *        inputs' producer-level warnings prefixed with their file; and the
 *        refusal of two inputs of one producer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "keyshift/keyshift.h"
#include "ks_cli_merge.h"
#include "ks_cli_report.h"
#include "ks_report.h"

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

json_t *ks_cli_merge_head(const ks_cli_report_t *r, size_t n, json_t **warnings,
                          char *err, size_t errsz)
{
        const char *started = NULL, *generated = NULL;
        int         final = 1;
        size_t      i, j;
        char        msg[1024];
        json_t     *out;

        *warnings = NULL;
        if (ks_merge_distinct_producers(r, n, err, errsz))
                return NULL;
        *warnings = json_array();
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
                            *warnings,
                            json_pack(
                                "{s:s, s:s}", "code",
                                ks_cli_str(json_array_get(ws, j), "code", "?"),
                                "message", msg));
                }
        }
        if (!started)
                started = generated ? generated : "";
        if (!generated)
                generated = started;
        out = json_pack("{s:s, s:s, s:s, s:f, s:b, s:o}", "schema",
                        KEYSHIFT_REPORT_SCHEMA, "generated_at", generated,
                        "started_at", started, "uptime_s",
                        ks_report_rfc3339_parse(started) >= 0 &&
                                ks_report_rfc3339_parse(generated) >= 0
                            ? ks_report_rfc3339_parse(generated) -
                                  ks_report_rfc3339_parse(started)
                            : 0.0,
                        "final", final, "producer", ks_merge_producer(r, n));
        if (!out) {
                json_decref(*warnings);
                *warnings = NULL;
                snprintf(err, errsz, "out of memory");
        }
        return out;
}
