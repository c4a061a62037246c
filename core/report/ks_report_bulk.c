/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_report_bulk.c
 * @brief Writes the bulk of a topic's report straight from its snapshot:
 *        the per-partition columns without a JSON value per number,
 *        and the `merge` object, whose sketches are packed
 *        (ks_report_merge.c), in the keyshift.report.v2 schema.
 *
 * Why: for 50 topics x 1,000 partitions x 3 proposed counts, the
 * per-partition columns are ~2 million JSON values (5,700 per-partition
 * {messages, bytes} pairs per topic). Building them with jansson, dumping
 * and freeing them took ~1 s on keyshift's thread (bench/ksb_report);
 * formatted here into a buffer they take a few percent of that. The
 * sketches were too until they were packed into one base64 string each:
 * three strings a topic, built once. Everything else of a topic
 * (counters, hot keys, sizing, warnings...) is small and still
 * built with jansson by ks_report_topic(), which leaves null placeholders
 * where the bulk goes; this file writes the topic's members in their
 * order, putting the bulk in place of the placeholders. The result parses
 * to the same JSON as ks_report_topic() without placeholders (a unit test
 * compares them).
 *
 * @locality the thread writing the report; snapshots only.
 */
#include "ks_report.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ks_base64.h"
#include "ks_pack.h"
#include "ks_report_jout.h"
#include "ks_report_parts.h"

/** @brief One column of @p n per-partition figures: "[v0,v1,...]". */
static void put_column(ks_jout_t *o, const ks_load_t *l, int32_t n, int which,
                       const ks_analysis_t *a)
{
        int32_t i;

        PUT_LIT(o, "[");
        for (i = 0; i < n; i++) {
                char    *d = jout_room(o, 32), *b = d;
                uint64_t v = which == 0 ? l[i].messages
                             : which == 1
                                 ? l[i].bytes
                                 : (uint64_t)ceil(ks_analysis_sampling_error(
                                       a, (double)l[i].messages));
                if (i)
                        *d++ = ',';
                d = fmt_u64(d, v);
                o->n += (size_t)(d - b);
        }
        PUT_LIT(o, "]");
}

/** @brief {messages: [...], bytes: [...]} as partitions_json(), with a
 *         `messages_sampling_error` column when @p a was sampled. */
static void put_partitions(ks_jout_t *o, const ks_load_t *l, int32_t n,
                           const ks_analysis_t *a)
{
        PUT_LIT(o, "{\"messages\":");
        put_column(o, l, n, 0, a);
        PUT_LIT(o, ",\"bytes\":");
        put_column(o, l, n, 1, a);
        if (a->sampled) {
                PUT_LIT(o, ",\"messages_sampling_error\":");
                put_column(o, l, n, 2, a);
        }
        PUT_LIT(o, "}");
}

/** @brief A packed sketch @p pb as a JSON string: its base64, written in
 *         pieces of KS_JOUT_ELEM_MAX characters (base64 of whole 3-byte
 *         groups, so the pieces join into ks_base64_encode() of the
 *         whole). A pack that failed (ENOMEM) fails the write. */
static void put_packed(ks_jout_t *o, const ks_pack_buf_t *pb)
{
        const size_t piece = KS_JOUT_ELEM_MAX / 4 * 3; /* bytes */
        size_t       at;

        if (pb->failed) {
                o->failed = 1;
                return;
        }
        PUT_LIT(o, "\"");
        for (at = 0; at < pb->n; at += piece) {
                size_t take = pb->n - at < piece ? pb->n - at : piece;
                char  *d    = jout_room(o, ks_base64_len(take));
                o->n += (size_t)(ks_base64_encode(pb->b + at, take, d) - d);
        }
        PUT_LIT(o, "\"");
}

/** @brief A member `"name":v` of the `merge` object, v an integer; @p
 *         first: no comma before it. */
static void put_merge_int(ks_jout_t *o, const char *name, int64_t v, int first)
{
        char *d = jout_room(o, 64), *b = d;

        d += snprintf(d, 48, "%s\"%s\":", first ? "" : ",", name);
        d = fmt_i64(d, v);
        o->n += (size_t)(d - b);
}

/** @brief The `merge` object, written as ks_report_merge_object() builds
 *         it (docs/report-schema.md, "merge"; the unit test of the bulk
 *         writer compares the two), without a JSON value between the
 *         packed bytes and the text: those strings are a third of a
 *         report at 1,000 partitions, and as jansson strings they were
 *         copied three times and scanned for escapes (bench/README.md,
 *         issue 29). */
static void put_merge(ks_jout_t *o, const ks_topic_snapshot_t *s)
{
        ks_pack_buf_t pb = {0};

        ks_pack_hll(&pb, &s->hll);
        PUT_LIT(o, "{\"distinct_hll\":{");
        put_merge_int(o, "p", KS_HLL_P, 1);
        PUT_LIT(o, ",\"packed\":");
        put_packed(o, &pb);
        ks_pack_buf_reset(&pb);
        ks_pack_key_sample(&pb, s->sample, s->sample_cnt);
        PUT_LIT(o, "},\"key_sample\":{");
        put_merge_int(o, "capacity", (int64_t)s->sample_capacity, 1);
        PUT_LIT(o, ",\"packed\":");
        put_packed(o, &pb);
        ks_pack_buf_reset(&pb);
        ks_pack_hot_keys(&pb, s->hot, s->hot_cnt);
        PUT_LIT(o, "},\"hot_keys\":{");
        put_merge_int(o, "capacity", (int64_t)s->topk_capacity, 1);
        put_merge_int(o, "total", (int64_t)s->topk_total, 0);
        put_merge_int(o, "sampled_one_in", KS_HOT_SAMPLE_ONE_IN, 0);
        put_merge_int(o, "passed_by", (int64_t)s->c.hot_passed_by, 0);
        put_merge_int(o, "sampled", (int64_t)s->c.hot_sampled, 0);
        PUT_LIT(o, ",\"packed\":");
        put_packed(o, &pb);
        PUT_LIT(o, "}}");
        ks_pack_buf_free(&pb);
}

/** @brief One column of the sparse flow from its @p n cells @p at (row x
 *         cols + column, ascending): each cell's row (@p what 0), column
 *         (1) or messages (2). */
static void put_flow_column(ks_jout_t *o, const uint64_t *flow, int32_t cols,
                            const uint32_t *at, size_t n, int what)
{
        size_t k;

        PUT_LIT(o, "[");
        for (k = 0; k < n; k++) {
                char *d = jout_room(o, 32), *b = d;
                if (k)
                        *d++ = ',';
                d = fmt_u64(d, what == 0   ? at[k] / (uint32_t)cols
                               : what == 1 ? at[k] % (uint32_t)cols
                                           : flow[at[k]]);
                o->n += (size_t)(d - b);
        }
        PUT_LIT(o, "]");
}

/** @returns the cells of @p flow that are not 0 into @p at (row x cols +
 *           column, ascending), or -1 once there are too many for the
 *           sparse form (ks_report_flow_sparse(): then dense). One pass
 *           over the matrix, stopped early when it is dense. */
static long flow_cells(const uint64_t *flow, int32_t rows, int32_t cols,
                       uint32_t *at)
{
        size_t cells = (size_t)rows * (size_t)cols, i, n = 0;

        for (i = 0; i < cells; i++) {
                if (!flow[i])
                        continue;
                if (!ks_report_flow_sparse(n + 1, rows, cols))
                        return -1;
                at[n++] = (uint32_t)i;
        }
        return (long)n;
}

/** @brief A kept flow matrix as ks_report_flow_set() writes it: the value
 *         of `flow` (the dense rows, or null followed by
 *         `,"flow_nonzero":{"from":[...],"to":[...],"messages":[...]}`). */
static void put_flow(ks_jout_t *o, const uint64_t *flow, int32_t rows,
                     int32_t cols)
{
        size_t    cells = (size_t)rows * (size_t)cols;
        uint32_t *at = cells <= UINT32_MAX ? malloc((cells / 4 + 1) * 4) : NULL;
        long      n  = at ? flow_cells(flow, rows, cols, at) : -2;
        int32_t   i, j;

        if (n >= 0) {
                PUT_LIT(o, "null,\"flow_nonzero\":{\"from\":");
                put_flow_column(o, flow, cols, at, (size_t)n, 0);
                PUT_LIT(o, ",\"to\":");
                put_flow_column(o, flow, cols, at, (size_t)n, 1);
                PUT_LIT(o, ",\"messages\":");
                put_flow_column(o, flow, cols, at, (size_t)n, 2);
                PUT_LIT(o, "}");
                free(at);
                return;
        }
        free(at);
        if (n == -2 &&
            ks_report_flow_sparse(ks_report_flow_nonzero(flow, rows, cols),
                                  rows, cols)) {
                o->failed = 1; /* out of memory for the sparse form */
                return;
        }
        PUT_LIT(o, "[");
        for (i = 0; i < rows; i++) {
                const uint64_t *row = flow + (size_t)i * cols;
                if (i)
                        PUT_LIT(o, ",[");
                else
                        PUT_LIT(o, "[");
                for (j = 0; j < cols; j++) {
                        char *d = jout_room(o, 32), *b = d;
                        if (j)
                                *d++ = ',';
                        d = fmt_u64(d, row[j]);
                        o->n += (size_t)(d - b);
                }
                PUT_LIT(o, "]");
        }
        PUT_LIT(o, "]");
}

/** @brief An object of @p v's members, the null "partitions" member
 *         replaced by @p l's per-partition array. */
static void put_with_partitions(ks_jout_t *o, const json_t *v,
                                const ks_load_t *l, int32_t n,
                                const uint64_t *flow, int32_t flow_rows,
                                const ks_analysis_t *a)
{
        const char *key;
        json_t     *m;
        int         first = 1;

        PUT_LIT(o, "{");
        json_object_foreach((json_t *)v, key, m)
        {
                ks_jout_put_key(o, key, first);
                first = 0;
                if (!strcmp(key, "partitions") && json_is_null(m) && l)
                        put_partitions(o, l, n, a);
                else if (!strcmp(key, "flow") && json_is_null(m) && flow)
                        put_flow(o, flow, flow_rows, n);
                else
                        ks_jout_put_json(o, m);
        }
        PUT_LIT(o, "}");
}

/** @returns the snapshot's proposal that @p o (a proposals[] element)
 *           describes, by its partition count (unique per topic), or
 *           NULL: its placeholder then stays null. */
static const ks_proposal_t *proposal_of(const ks_topic_snapshot_t *s,
                                        const json_t              *o)
{
        json_int_t n =
            json_integer_value(json_object_get(o, "partition_count"));
        size_t i;

        /* an unpredictable proposal has no figures (ks_report.c) */
        if (json_is_false(json_object_get(o, "predictable")))
                return NULL;
        for (i = 0; i < s->proposal_cnt; i++)
                if (s->proposals[i].partition_count == n)
                        return &s->proposals[i];
        return NULL;
}

int ks_report_writer_topic_snapshot(ks_report_writer_t        *w,
                                    const ks_topic_snapshot_t *s,
                                    const json_t              *topic)
{
        return ks_report_writer_topic_keep(w, s, topic, NULL);
}

int ks_report_writer_topic_keep(ks_report_writer_t        *w,
                                const ks_topic_snapshot_t *s,
                                const json_t *topic, ks_report_text_t *keep)
{
        ks_jout_t     o;
        const char   *key;
        json_t       *m;
        int           first = 1;
        ks_analysis_t an;

        if (w->failed)
                return -1;
        ks_report_analysis(s, -1, &an); /* the per-partition errors */
        errno    = 0;
        o.fd     = fileno(w->fp);
        o.failed = fflush(w->fp) != 0; /* the head, before this topic */
        o.n      = 0;
        o.keep   = NULL;
        if (w->topics)
                PUT_LIT(&o, ",");
        if (keep) { /* from the name on: the comma depends on the place */
                keep->len    = 0;
                keep->failed = 0;
                o.keep       = keep;
                o.keep_at    = o.n;
        }
        ks_jout_put_key(&o, s->name, 1);
        PUT_LIT(&o, "{");
        json_object_foreach((json_t *)topic, key, m)
        {
                ks_jout_put_key(&o, key, first);
                first = 0;
                if (!strcmp(key, "current") && json_is_object(m)) {
                        put_with_partitions(&o, m, s->current,
                                            s->partition_count, NULL, 0, &an);
                } else if (!strcmp(key, "proposals") && json_is_array(m)) {
                        size_t i;
                        PUT_LIT(&o, "[");
                        for (i = 0; i < json_array_size(m); i++) {
                                const ks_proposal_t *p =
                                    proposal_of(s, json_array_get(m, i));
                                if (i)
                                        PUT_LIT(&o, ",");
                                put_with_partitions(&o, json_array_get(m, i),
                                                    p ? p->partitions : NULL,
                                                    p ? p->partition_count : 0,
                                                    p ? p->flow : NULL,
                                                    s->partition_count, &an);
                        }
                        PUT_LIT(&o, "]");
                } else if (!strcmp(key, "merge") && json_is_null(m)) {
                        put_merge(&o, s);
                } else if (!strcmp(key, "hot_keys") && json_is_array(m)) {
                        json_t *cols = ks_report_hot_keys_columns(m);
                        ks_jout_put_json(&o, cols); /* NULL: fails */
                        json_decref(cols);
                } else {
                        ks_jout_put_json(&o, m);
                }
        }
        PUT_LIT(&o, "}");
        ks_jout_flush(&o);
        if (o.failed) {
                if (!w->failed)
                        snprintf(w->errstr, sizeof(w->errstr),
                                 "cannot write %s: %s", w->tmp,
                                 strerror(errno ? errno : EIO));
                w->failed = 1;
                return -1;
        }
        w->messages += s->c.total.messages;
        w->topics++;
        ks_report_writer_kick(w);
        return 0;
}
