/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli_report_check.c
 * @brief Checks, field by field, what the CLI reads of a report.
 *
 * The checker walks the report with a path ("topics.ais.proposals[0]")
 * and stops at the first problem, which it names with that path: a user
 * who edited, truncated or hand-built a report learns where it is wrong,
 * and the subcommands never meet a missing member or a string where a
 * count should be.
 */
#include "ks_cli_report.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keyshift/keyshift.h"
#include "ks_analysis.h"
#include "ks_cli_report_fields.h"
#include "ks_cli_schema.h"
#include "ks_hll.h"
#include "ks_pack.h"
#include "ks_report.h"
#include "ks_topic.h"
#include "ks_topk.h"

/** What a member must be. */
enum {
        KS_V_INT = 1, /**< an integer >= 0 */
        KS_V_NUM,     /**< any number */
        KS_V_STR,
        KS_V_OBJ,
        KS_V_ARR,
        KS_V_BOOL,
        KS_V_KIND   = 0xff,
        KS_V_NULL   = 0x100, /**< JSON null is accepted too */
        KS_V_OPTION = 0x200, /**< may be absent */
};

typedef struct ks_vctx {
        const char *file;
        char       *err;
        size_t      errsz;
        char        path[512];
        size_t      len;
        int         failed;
} ks_vctx_t;

/** @brief Appends a path segment; @returns the length to restore. */
static size_t ks_vpush(ks_vctx_t *v, const char *fmt, ...)
{
        size_t  old = v->len;
        va_list ap;
        int     n;

        if (v->len && fmt[0] != '[' && v->len < sizeof(v->path) - 1)
                v->path[v->len++] = '.';
        va_start(ap, fmt);
        n = vsnprintf(v->path + v->len, sizeof(v->path) - v->len, fmt, ap);
        va_end(ap);
        if (n > 0)
                v->len += (size_t)n;
        if (v->len >= sizeof(v->path))
                v->len = sizeof(v->path) - 1;
        return old;
}

/** @brief Restores the path to the length ks_vpush() returned. */
static void ks_vpop(ks_vctx_t *v, size_t len)
{
        v->len       = len;
        v->path[len] = '\0';
}

/** @brief Records the first problem as "FILE: PATH: problem". */
static void ks_vfail(ks_vctx_t *v, const char *fmt, ...)
{
        char    msg[512];
        va_list ap;

        if (v->failed)
                return;
        v->failed = 1;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        if (v->len)
                snprintf(v->err, v->errsz, "%s: %s: %s", v->file, v->path, msg);
        else
                snprintf(v->err, v->errsz, "%s: %s", v->file, msg);
}

/** @returns what a member of @p kind must be, for error messages. */
static const char *ks_vwant(int kind)
{
        static const char *names[] = {"?",         "a non-negative integer",
                                      "a number",  "a string",
                                      "an object", "an array",
                                      "a boolean"};
        return names[kind & KS_V_KIND];
}

/** @returns 1 if @p j is of @p kind (KS_V_INT: an integer >= 0). */
static int ks_vkind_ok(const json_t *j, int kind)
{
        switch (kind & KS_V_KIND) {
        case KS_V_INT:
                return json_is_integer(j) && json_integer_value(j) >= 0;
        case KS_V_NUM:
                return json_is_number(j);
        case KS_V_STR:
                return json_is_string(j);
        case KS_V_OBJ:
                return json_is_object(j);
        case KS_V_ARR:
                return json_is_array(j);
        case KS_V_BOOL:
                return json_is_boolean(j);
        }
        return 0;
}

/** @brief Checks one value at the current path. @returns it, or NULL. */
static json_t *ks_vis(ks_vctx_t *v, json_t *j, int kind)
{
        if (v->failed)
                return NULL;
        if (json_is_null(j) && (kind & KS_V_NULL))
                return j;
        if (!ks_vkind_ok(j, kind)) {
                ks_vfail(v, "expected %s, got %s", ks_vwant(kind),
                         ks_cli_json_what(j));
                return NULL;
        }
        return j;
}

/** @brief Checks member @p key of @p obj. @returns it, or NULL when
 *         absent (and optional) or wrong (then v->failed is set). */
static json_t *ks_vget(ks_vctx_t *v, json_t *obj, const char *key, int kind)
{
        json_t *j;
        size_t  mark;

        if (v->failed)
                return NULL;
        j    = json_object_get(obj, key);
        mark = ks_vpush(v, "%s", key);
        if (!j) {
                if (!(kind & KS_V_OPTION))
                        ks_vfail(v, "missing");
        } else {
                j = ks_vis(v, j, kind);
        }
        ks_vpop(v, mark);
        return j;
}

/** @brief Checks that @p j (at the current path) is an even-length hex
 *         string of at most @p max_bytes bytes (exactly, when @p exact). */
static void ks_vhex_value(ks_vctx_t *v, json_t *j, size_t max_bytes, int exact)
{
        const char *s;
        size_t      n, i;

        if (!ks_vis(v, j, KS_V_STR))
                return;
        s = json_string_value(j);
        n = strlen(s);
        for (i = 0; i < n; i++)
                if (!strchr("0123456789abcdefABCDEF", s[i]))
                        break;
        if (i < n || n % 2)
                ks_vfail(v, "not a hex string");
        else if (n / 2 > max_bytes || (exact && n / 2 != max_bytes))
                ks_vfail(v, "%zu bytes, expected %s%zu", n / 2,
                         exact ? "" : "at most ", max_bytes);
}

/** @brief Checks that each of the NULL-terminated @p keys of @p obj
 *         is an integer >= 0. */
static void ks_vints(ks_vctx_t *v, json_t *obj, const char *const *keys)
{
        for (; *keys; keys++)
                ks_vget(v, obj, *keys, KS_V_INT);
}

/** @brief One per-partition column of @p obj: exactly @p count values,
 *         each non-negative integers (or null too, with KS_V_NULL). */
static void ks_check_column(ks_vctx_t *v, json_t *obj, const char *key,
                            int64_t count, int kind)
{
        json_t *col = ks_vget(v, obj, key, KS_V_ARR | (kind & KS_V_OPTION));
        size_t  i, mark, m2;

        if (!col || v->failed)
                return;
        mark = ks_vpush(v, "%s", key);
        if ((int64_t)json_array_size(col) != count)
                ks_vfail(v,
                         "expected %lld values (the partition count), got %zu",
                         (long long)count, json_array_size(col));
        for (i = 0; !v->failed && i < json_array_size(col); i++) {
                m2 = ks_vpush(v, "[%zu]", i);
                ks_vis(v, json_array_get(col, i), kind & ~KS_V_OPTION);
                ks_vpop(v, m2);
        }
        ks_vpop(v, mark);
}

/** @brief partitions: {messages, bytes[, messages_sampling_error]},
 *         columns of exactly @p count counts indexed by partition. */
static void ks_check_partitions(ks_vctx_t *v, json_t *obj, int64_t count)
{
        if (!obj || v->failed)
                return;
        ks_check_column(v, obj, "messages", count, KS_V_INT);
        ks_check_column(v, obj, "bytes", count, KS_V_INT);
        ks_check_column(v, obj, "messages_sampling_error", count,
                        KS_V_INT | KS_V_OPTION);
}

/** @brief flow: null, or @p rows arrays of @p cols counts. */
static void ks_check_flow(ks_vctx_t *v, json_t *flow, int64_t rows,
                          int64_t cols)
{
        size_t i, j, mark;

        if (!flow || json_is_null(flow) || v->failed)
                return;
        if ((int64_t)json_array_size(flow) != rows) {
                ks_vfail(v, "expected %lld rows (the current count), got %zu",
                         (long long)rows, json_array_size(flow));
                return;
        }
        for (i = 0; i < json_array_size(flow) && !v->failed; i++) {
                json_t *row = json_array_get(flow, i);
                mark        = ks_vpush(v, "[%zu]", i);
                if (ks_vis(v, row, KS_V_ARR) &&
                    (int64_t)json_array_size(row) != cols)
                        ks_vfail(v, "expected %lld cells, got %zu",
                                 (long long)cols, json_array_size(row));
                for (j = 0; !v->failed && j < json_array_size(row); j++) {
                        size_t m2 = ks_vpush(v, "[%zu]", j);
                        ks_vis(v, json_array_get(row, j), KS_V_INT);
                        ks_vpop(v, m2);
                }
                ks_vpop(v, mark);
        }
}

/** @brief A proposal's `moved`: what an increase moves, with the errors
 *         of the estimates. */
static void ks_check_moved(ks_vctx_t *v, json_t *moved)
{
        static const char *const mi[] = {"messages", "bytes", "distinct_keys",
                                         NULL};
        static const char *const mn[] = {
            "messages_fraction", "traffic_fraction", "distinct_keys_fraction",
            "distinct_keys_fraction_error", NULL};
        static const char *const ms[] = {
            "messages_sampling_error", "bytes_sampling_error",
            "messages_fraction_sampling_error",
            "traffic_fraction_sampling_error", NULL};
        const char *const *k;

        ks_vints(v, moved, mi);
        for (k = mn; *k; k++)
                ks_vget(v, moved, *k, KS_V_NUM);
        /* since the report's `analysis` (ks_analysis.h) */
        ks_vget(v, moved, "messages_exact", KS_V_BOOL | KS_V_OPTION);
        ks_vget(v, moved, "messages_fraction_error", KS_V_NUM | KS_V_OPTION);
        ks_vget(v, moved, "traffic_fraction_error", KS_V_NUM | KS_V_OPTION);
        /* since sampling (ks_analysis.h): 3 standard errors */
        for (k = ms; *k; k++)
                ks_vget(v, moved, *k, KS_V_NUM | KS_V_OPTION);
        /* since moved keys carry their error (keys, 1 sigma) */
        ks_vget(v, moved, "distinct_keys_error", KS_V_NUM | KS_V_OPTION);
}

/**
 * @brief A proposal's flow from @p current to @p count partitions: the
 *        `flow` matrix, or its sparse form `flow_nonzero` (not both), read
 *        whole, so no more cells than keyshift ever writes
 *        (KS_CONFIG_FLOW_CELLS_MAX), whatever the file says.
 */
static void ks_check_proposal_flow(ks_vctx_t *v, json_t *p, int64_t current,
                                   int64_t count)
{
        json_t *flow;
        size_t  mark;

        flow = ks_vget(v, p, "flow", KS_V_ARR | KS_V_NULL | KS_V_OPTION);
        if (current &&
            ((flow && !json_is_null(flow)) ||
             json_object_get(p, "flow_nonzero")) &&
            current * count > KS_CONFIG_FLOW_CELLS_MAX) {
                mark = ks_vpush(
                    v, flow && !json_is_null(flow) ? "flow" : "flow_nonzero");
                ks_vfail(v,
                         "%lld x %lld cells, above keyshift's limit of %d "
                         "(keyshift.flow.max.cells)",
                         (long long)current, (long long)count,
                         KS_CONFIG_FLOW_CELLS_MAX);
                ks_vpop(v, mark);
                return;
        }
        mark = ks_vpush(v, "flow");
        if (current)
                ks_check_flow(v, flow, current, count);
        ks_vpop(v, mark);
        if (json_object_get(p, "flow_nonzero")) {
                uint64_t *m;
                char      why[160];
                mark = ks_vpush(v, "flow_nonzero");
                if (flow && !json_is_null(flow))
                        ks_vfail(v, "given with a flow matrix too");
                else if (current && count > 0 &&
                         !(m = ks_report_flow_read(p, (int32_t)current,
                                                   (int32_t)count, why,
                                                   sizeof(why))))
                        ks_vfail(v, "%s", why);
                else if (current && count > 0)
                        free(m);
                ks_vpop(v, mark);
        }
}

/** @brief One proposals[] entry: partition_count, partitions (when the
 *         current count is known), moved, flow. */
static void ks_check_proposal(ks_vctx_t *v, json_t *p, int64_t current)
{
        json_t *pc, *moved;
        int64_t count;
        size_t  mark;

        if (!ks_vis(v, p, KS_V_OBJ) ||
            !(pc = ks_vget(v, p, "partition_count", KS_V_INT)))
                return;
        count = json_integer_value(pc);
        if (count < 1 || count > KEYSHIFT_PARTITIONS_MAX) {
                mark = ks_vpush(v, "partition_count");
                ks_vfail(v, "%lld is not a partition count", (long long)count);
                ks_vpop(v, mark);
                return;
        }
        if (json_is_false(json_object_get(p, "predictable"))) {
                /* no figures: no partitioner keyshift models explains the
                 * deliveries (the report's `reason`) */
                ks_vget(v, p, "reason", KS_V_STR);
                return;
        }
        if (current) {
                json_t *parts = ks_vget(v, p, "partitions", KS_V_OBJ);
                mark          = ks_vpush(v, "partitions");
                ks_check_partitions(v, parts, count);
                ks_vpop(v, mark);
        }
        if ((moved = ks_vget(v, p, "moved", KS_V_OBJ))) {
                mark = ks_vpush(v, "moved");
                ks_check_moved(v, moved);
                ks_vpop(v, mark);
        }
        ks_check_proposal_flow(v, p, current, count);
}

/** @brief The hot-key summary's sampling (ks_run_hot_t in ks_topic.h),
 *         absent from reports written before it: @p one_in must be the
 *         one this keyshift samples with (a merge of other rates would
 *         state a wrong error), and the messages sampled at most those
 *         passed by. */
static void ks_check_hot_sampling(ks_vctx_t *v, json_t *o, const char *one_in,
                                  const char *passed_by, const char *sampled)
{
        json_t *r = ks_vget(v, o, one_in, KS_V_INT | KS_V_OPTION);
        json_t *p = ks_vget(v, o, passed_by, KS_V_INT | KS_V_OPTION);
        json_t *m = ks_vget(v, o, sampled, KS_V_INT | KS_V_OPTION);
        size_t  mark;

        if (v->failed)
                return;
        if (r && json_integer_value(r) != KS_HOT_SAMPLE_ONE_IN) {
                mark = ks_vpush(v, "%s", one_in);
                ks_vfail(v, "%lld: this keyshift samples one in %d",
                         (long long)json_integer_value(r),
                         KS_HOT_SAMPLE_ONE_IN);
                ks_vpop(v, mark);
        } else if (m && (!p || json_integer_value(m) > json_integer_value(p))) {
                mark = ks_vpush(v, "%s", sampled);
                ks_vfail(v, "more than %s", passed_by);
                ks_vpop(v, mark);
        }
}

/** @brief Column @p key of @p obj: exactly @p n values (one per hot key),
 *         each of @p kind (KS_V_OPTION: the column may be absent), hex
 *         strings of a key's kept bytes when @p hex. @returns it or NULL. */
static json_t *ks_check_list(ks_vctx_t *v, json_t *obj, const char *key,
                             size_t n, int kind, int hex)
{
        json_t *col = ks_vget(v, obj, key, KS_V_ARR | (kind & KS_V_OPTION));
        size_t  i, mark, m2;

        if (!col)
                return NULL;
        mark = ks_vpush(v, "%s", key);
        if (json_array_size(col) != n)
                ks_vfail(v, "expected %zu values (the hot keys), got %zu", n,
                         json_array_size(col));
        for (i = 0; !v->failed && i < n; i++) {
                m2 = ks_vpush(v, "[%zu]", i);
                if (hex)
                        ks_vhex_value(v, json_array_get(col, i),
                                      KS_TOPK_KEY_MAX, 0);
                else
                        ks_vis(v, json_array_get(col, i), kind & ~KS_V_OPTION);
                ks_vpop(v, m2);
        }
        ks_vpop(v, mark);
        return v->failed ? NULL : col;
}

/** @brief Per-count column object @p key of @p obj: `{"<count>": [n
 *         values of @p kind]}`. */
static void ks_check_count_lists(ks_vctx_t *v, json_t *obj, const char *key,
                                 size_t n, int kind)
{
        json_t     *o = ks_vget(v, obj, key, KS_V_OBJ | (kind & KS_V_OPTION));
        const char *count;
        json_t     *c;
        size_t      mark;

        if (!o)
                return;
        mark = ks_vpush(v, "%s", key);
        json_object_foreach(o, count, c)
            ks_check_list(v, o, count, n, kind & ~KS_V_OPTION, 0);
        ks_vpop(v, mark);
}

/**
 * @brief A topic's `hot_keys`: columns of one value per key
 *        (docs/report-schema.md; ks_report_hot_keys_columns()), `{}` when
 *        the topic has none. The sizing columns come together or not at
 *        all, as ks_report_topic() writes them.
 */
static void ks_check_hot_keys(ks_vctx_t *v, json_t *h)
{
        static const char *const ints[] = {
            "key_length",     "messages",
            "messages_error", "messages_sampling_error",
            "bytes",          NULL};
        const char *const *k;
        json_t            *key;
        size_t             n;

        if (!json_object_size(h))
                return;
        if (!(key = ks_vget(v, h, "key", KS_V_ARR)))
                return;
        n = json_array_size(key);
        ks_check_list(v, h, "key", n, KS_V_STR | KS_V_NULL, 0);
        ks_check_list(v, h, "key_hex", n, KS_V_STR, 1);
        ks_check_list(v, h, "key_truncated", n, KS_V_BOOL, 0);
        for (k = ints; *k; k++)
                ks_check_list(v, h, *k, n, KS_V_INT, 0);
        ks_check_list(v, h, "share", n, KS_V_NUM, 0);
        ks_check_list(v, h, "partition_current", n, KS_V_INT | KS_V_NULL, 0);
        ks_check_count_lists(v, h, "partition_proposed", n, KS_V_INT);
        ks_check_count_lists(v, h, "moves", n, KS_V_BOOL);
        ks_check_list(v, h, "msgs_per_s", n, KS_V_NUM | KS_V_OPTION, 0);
        ks_check_list(v, h, "share_of_partition", n,
                      KS_V_NUM | KS_V_NULL | KS_V_OPTION, 0);
        ks_check_count_lists(v, h, "share_of_partition_proposed", n,
                             KS_V_NUM | KS_V_NULL | KS_V_OPTION);
        ks_check_list(v, h, "fixable_by_partitions", n, KS_V_BOOL | KS_V_OPTION,
                      0);
        ks_check_list(v, h, "salt_buckets", n, KS_V_INT | KS_V_OPTION, 0);
        ks_vget(v, h, "ordering_given_up", KS_V_STR | KS_V_NULL | KS_V_OPTION);
}

/** What a packed sketch decodes to (ks_pack.h), for the checks below. */
typedef struct ks_vpacked {
        ks_hll_t              hll;
        ks_keysample_entry_t *sample;
        ks_topk_entry_t      *hot;
        size_t                n; /**< entries of sample or hot */
} ks_vpacked_t;

/**
 * @brief Member `packed` of sketch object @p o: a base64 string of @p kind
 *        that ks_pack_read.c reads whole (layout version, length,
 *        checksum, entries), with at most @p o's `capacity` entries when
 *        it has one. Fills @p out (the caller frees its arrays).
 */
static void ks_vpacked(ks_vctx_t *v, json_t *o, ks_pack_kind_t kind,
                       ks_vpacked_t *out)
{
        json_t     *j = ks_vget(v, o, "packed", KS_V_STR);
        const char *s;
        size_t      len, mark;
        char        why[256];
        int         r;

        if (!j)
                return;
        s    = json_string_value(j);
        len  = json_string_length(j);
        mark = ks_vpush(v, "packed");
        if (kind == KS_PACK_HLL)
                r = ks_unpack_hll(s, len, &out->hll, NULL, why, sizeof(why));
        else if (kind == KS_PACK_KEY_SAMPLE)
                r = ks_unpack_key_sample(s, len, &out->sample, &out->n, why,
                                         sizeof(why));
        else
                r = ks_unpack_hot_keys(s, len, &out->hot, &out->n, why,
                                       sizeof(why));
        if (r)
                ks_vfail(v, "%s", why);
        else if (json_is_integer(json_object_get(o, "capacity")) &&
                 out->n > (uint64_t)json_integer_value(
                              json_object_get(o, "capacity")))
                ks_vfail(v, "%zu entries, above the sketch's capacity %lld",
                         out->n,
                         (long long)json_integer_value(
                             json_object_get(o, "capacity")));
        ks_vpop(v, mark);
}

/** @brief The `merge` sketches (docs/report-schema.md, "merge"): their
 *         counts, and each packed string read whole. */
static void ks_check_sketches(ks_vctx_t *v, json_t *m)
{
        json_t      *hll, *ks, *hk, *p;
        size_t       mark;
        ks_vpacked_t pk = {0};

        if ((hll = ks_vget(v, m, "distinct_hll", KS_V_OBJ))) {
                mark = ks_vpush(v, "distinct_hll");
                if ((p = ks_vget(v, hll, "p", KS_V_INT)) &&
                    json_integer_value(p) != KS_HLL_P) {
                        ks_vpush(v, "p");
                        ks_vfail(v,
                                 "%lld, but this keyshift's HyperLogLog "
                                 "has p = %d",
                                 (long long)json_integer_value(p), KS_HLL_P);
                }
                ks_vpacked(v, hll, KS_PACK_HLL, &pk);
                ks_vpop(v, mark);
        }
        if ((ks = ks_vget(v, m, "key_sample", KS_V_OBJ))) {
                mark = ks_vpush(v, "key_sample");
                if (ks_vget(v, ks, "capacity", KS_V_INT))
                        ks_vpacked(v, ks, KS_PACK_KEY_SAMPLE, &pk);
                ks_vpop(v, mark);
        }
        if ((hk = ks_vget(v, m, "hot_keys", KS_V_OBJ))) {
                mark = ks_vpush(v, "hot_keys");
                if (ks_vget(v, hk, "capacity", KS_V_INT) &&
                    ks_vget(v, hk, "total", KS_V_INT))
                        ks_check_hot_sampling(v, hk, "sampled_one_in",
                                              "passed_by", "sampled");
                ks_vpacked(v, hk, KS_PACK_HOT_KEYS, &pk);
                ks_vpop(v, mark);
        }
        free(pk.sample);
        free(pk.hot);
}

/** @brief A warnings array: [{code, message}]. */
static void ks_check_warnings(ks_vctx_t *v, json_t *arr)
{
        size_t i, mark;

        for (i = 0; !v->failed && i < json_array_size(arr); i++) {
                json_t *w = json_array_get(arr, i);
                mark      = ks_vpush(v, "warnings[%zu]", i);
                if (ks_vis(v, w, KS_V_OBJ)) {
                        ks_vget(v, w, "code", KS_V_STR);
                        ks_vget(v, w, "message", KS_V_STR);
                }
                ks_vpop(v, mark);
        }
}

/**
 * @brief The sampling counters of a topic's `analysis` (ks_analysis.h;
 *        absent before sampling: then all 0), against each other: staged
 *        messages stand for at least themselves and at most one_in_max
 *        each, one_in_max is a power of two (N = 2^k), the variance sum of
 *        N (N - 1) lies between sum (N - 1) and N sum (N - 1), and a topic
 *        is `sampled` exactly when one_in_max is not 0 or messages were
 *        counted out (before any staged one was analysed: only the counts
 *        out then).
 * @returns 0, or -1 after ks_vfail().
 */
static int ks_check_sampling(ks_vctx_t *v, json_t *t, json_t *a)
{
        static const char *const ints[] = {"one_in_max",
                                           "sampled_seconds",
                                           "messages_sampled_in",
                                           "messages_sampled_weighted",
                                           "messages_sampled_out",
                                           "bytes_sampled_in",
                                           "bytes_sampled_weighted",
                                           "bytes_sampled_out",
                                           "sampled_variance",
                                           NULL};
        const char *const       *k;
        ks_analysis_sampling_t   smp;
        json_t                  *sampled, *sq;
        uint64_t                 extra;
        double                   n;

        for (k = ints; *k; k++)
                ks_vget(v, a, *k, KS_V_INT | KS_V_OPTION);
        sampled = ks_vget(v, a, "sampled", KS_V_BOOL | KS_V_OPTION);
        sq      = ks_vget(v, a, "bytes_sq_sampled_in", KS_V_NUM | KS_V_OPTION);
        if (v->failed)
                return -1;
        if (sq && !(json_number_value(sq) >= 0)) {
                ks_vfail(v, "bytes_sq_sampled_in %g is negative",
                         json_number_value(sq));
                return -1;
        }
        ks_analysis_sampling_of(a, &smp);
        n     = (double)smp.one_in_max;
        extra = smp.weighted_messages - smp.in_messages;
        if (smp.one_in_max & (smp.one_in_max - 1))
                ks_vfail(v, "one_in_max %llu is not a power of two",
                         (unsigned long long)smp.one_in_max);
        else if (sampled && json_is_true(sampled) !=
                                (smp.one_in_max > 0 || smp.out_messages > 0))
                ks_vfail(v, "sampled is %s but one_in_max is %llu",
                         json_is_true(sampled) ? "true" : "false",
                         (unsigned long long)smp.one_in_max);
        else if (!smp.one_in_max &&
                 (smp.in_messages || smp.weighted_messages || smp.in_bytes ||
                  smp.weighted_bytes || smp.variance || smp.seconds ||
                  smp.in_bytes_sq > 0))
                ks_vfail(v, "sampling counters without one_in_max");
        else if (smp.one_in_max && !smp.in_messages)
                ks_vfail(v, "one_in_max %llu without a message sampled in",
                         (unsigned long long)smp.one_in_max);
        else if (smp.in_messages > smp.weighted_messages ||
                 smp.in_bytes > smp.weighted_bytes)
                ks_vfail(v, "more sampled in than they stand for "
                            "(sampled_weighted)");
        else if ((double)smp.weighted_messages > n * (double)smp.in_messages ||
                 (double)smp.weighted_bytes > n * (double)smp.in_bytes)
                ks_vfail(v, "sampled_weighted above one_in_max x sampled_in");
        else if ((double)smp.variance < (double)extra ||
                 (double)smp.variance > n * (double)extra)
                ks_vfail(v,
                         "sampled_variance %llu is not between %llu and "
                         "one_in_max x %llu (sum of N (N - 1) over the "
                         "sampled)",
                         (unsigned long long)smp.variance,
                         (unsigned long long)extra, (unsigned long long)extra);
        else if (smp.weighted_messages > ks_cli_u64(t, "messages") ||
                 smp.weighted_bytes > ks_cli_u64(t, "bytes"))
                ks_vfail(v, "sampled_weighted exceeds the topic's messages "
                            "or bytes, which include it");
        return v->failed ? -1 : 0;
}

/**
 * @brief The topic's `analysis` (ks_analysis.h; absent in reports before
 *        it): its counts restate `messages`, `keys.unanalysed` and its
 *        sampling counters (messages_analysed = messages - weighted +
 *        sampled in; messages_produced = analysed + sampled out +
 *        unanalysed), and a partial or sampled analysis, and only it,
 *        says its distinct keys are the analysed messages'
 *        (`distinct_lower_bound`; earlier versions: `distinct_error` null).
 */
static void ks_check_analysis(ks_vctx_t *v, json_t *t)
{
        static const char *const ints[] = {"messages_produced",
                                           "messages_analysed",
                                           "messages_unanalysed", NULL};
        json_t *a    = ks_vget(v, t, "analysis", KS_V_OBJ | KS_V_OPTION);
        json_t *keys = json_object_get(t, "keys");
        size_t  mark;

        if (!a || v->failed)
                return;
        mark = ks_vpush(v, "analysis");
        ks_vints(v, a, ints);
        ks_vget(v, a, "analysed_fraction", KS_V_NUM);
        ks_vget(v, a, "complete", KS_V_BOOL);
        ks_vget(v, a, "uptime_s", KS_V_NUM | KS_V_OPTION);
        if (!v->failed && !ks_check_sampling(v, t, a)) {
                ks_analysis_t an;
                ks_analysis_of_topic(t, &an);
                if (ks_cli_u64(a, "messages_analysed") != an.analysed ||
                    ks_cli_u64(a, "messages_unanalysed") != an.unanalysed ||
                    ks_cli_u64(a, "messages_produced") != an.produced ||
                    json_is_true(json_object_get(a, "complete")) != an.complete)
                        ks_vfail(v, "does not restate messages, "
                                    "keys.unanalysed and the sampling "
                                    "counters");
        }
        ks_vpop(v, mark);
        if (!v->failed &&
            json_is_null(json_object_get(keys, "distinct_error")) &&
            !json_is_true(json_object_get(keys, "distinct_lower_bound"))) {
                mark = ks_vpush(v, "keys.distinct_error");
                ks_vfail(v, "null, but distinct_lower_bound is not true");
                ks_vpop(v, mark);
        }
        /* the distinct keys of a partial or sampled analysis are the
         * analysed messages': more may be among the others */
        if (!v->failed &&
            json_is_true(json_object_get(keys, "distinct_lower_bound")) ==
                json_is_true(json_object_get(a, "complete"))) {
                mark = ks_vpush(v, "keys.distinct_lower_bound");
                ks_vfail(v, "must be true exactly when analysis.complete is "
                            "false");
                ks_vpop(v, mark);
        }
}

/** @brief Every member of @p obj is a column of @p count values (what
 *         the schema says of each, ks_check_column() does again). */
static void ks_check_columns(ks_vctx_t *v, json_t *obj, int64_t count)
{
        const char *key;
        json_t     *col;
        size_t      mark;

        json_object_foreach(obj, key, col)
        {
                if (v->failed)
                        return;
                if ((int64_t)json_array_size(col) != count) {
                        mark = ks_vpush(v, "%s", key);
                        ks_vfail(v,
                                 "expected %lld values (the partition "
                                 "count), got %zu",
                                 (long long)count, json_array_size(col));
                        ks_vpop(v, mark);
                }
        }
}

/**
 * @brief The per-partition columns of a scan report's `audit` (of its
 *        partition_count) and of its `switch` (of its new_count): the
 *        schema has their types, this their lengths.
 */
static void ks_check_audit(ks_vctx_t *v, json_t *t)
{
        json_t *a = json_object_get(t, "audit"), *steps, *sw;
        int64_t count;
        size_t  i, mark, m2;

        if (!a || v->failed)
                return;
        mark  = ks_vpush(v, "audit");
        count = json_integer_value(json_object_get(a, "partition_count"));
        if ((int64_t)json_array_size(
                json_object_get(a, "unexplained_by_partition")) != count) {
                m2 = ks_vpush(v, "unexplained_by_partition");
                ks_vfail(v,
                         "expected %lld values (the partition count), got "
                         "%zu",
                         (long long)count,
                         json_array_size(
                             json_object_get(a, "unexplained_by_partition")));
                ks_vpop(v, m2);
        }
        steps = json_object_get(json_object_get(a, "history"), "steps");
        for (i = 0; !v->failed && i < json_array_size(steps); i++) {
                m2 = ks_vpush(v, "history.steps[%zu].partitions", i);
                ks_check_columns(
                    v, json_object_get(json_array_get(steps, i), "partitions"),
                    count);
                ks_vpop(v, m2);
        }
        sw = json_object_get(a, "switch");
        if (json_is_object(sw) && !v->failed) {
                m2 = ks_vpush(v, "switch.partitions");
                ks_check_columns(
                    v, json_object_get(sw, "partitions"),
                    json_integer_value(json_object_get(sw, "new_count")));
                ks_vpop(v, m2);
        }
        ks_vpop(v, mark);
}

/** @brief A scan report's `scan.partitions`: columns of one length, the
 *         scanned topic's audited partition count. */
static void ks_check_scan(ks_vctx_t *v, json_t *root)
{
        json_t *scan = json_object_get(root, "scan"), *parts, *t;
        int64_t count;
        size_t  mark;

        if (!scan || v->failed)
                return;
        parts = json_object_get(scan, "partitions");
        t     = json_object_get(json_object_get(root, "topics"),
                                json_string_value(json_object_get(scan, "topic")));
        count = t ? json_integer_value(json_object_get(
                        json_object_get(t, "audit"), "partition_count"))
                  : 0;
        if (!count) /* no audit to measure by: one length for all */
                count =
                    (int64_t)json_array_size(json_object_get(parts, "records"));
        mark = ks_vpush(v, "scan.partitions");
        ks_check_columns(v, parts, count);
        ks_vpop(v, mark);
}

/**
 * @brief A topic's head: partition_count, partitioner, messages and
 *        bytes, keys, analysis, window.
 * @returns the current partition count, or 0 when unknown.
 */
static int64_t ks_check_topic_head(ks_vctx_t *v, json_t *t)
{
        static const char *const keys[] = {"null",
                                           "empty",
                                           "explicit_partition",
                                           "hashed",
                                           "distinct_estimate",
                                           NULL};
        static const char *const win[]  = {
             "messages", "bytes", "hashed_messages", "hashed_bytes", NULL};
        static const char *const top[] = {"messages", "bytes", NULL};
        json_t                  *pc, *cur, *o;
        int64_t                  current = 0;
        size_t                   mark;

        if ((pc = ks_vget(v, t, "partition_count", KS_V_OBJ)) &&
            (cur = ks_vget(v, pc, "current", KS_V_INT | KS_V_NULL)) &&
            json_is_integer(cur)) {
                current = json_integer_value(cur);
                if (current < 1 || current > KEYSHIFT_PARTITIONS_MAX) {
                        ks_vpush(v, "partition_count.current");
                        ks_vfail(v, "%lld is not a partition count",
                                 (long long)current);
                }
        }
        /* a name (older reports) or {name, source, confirmed, evidence} */
        if (!json_is_string(json_object_get(t, "partitioner")) &&
            (o = ks_vget(v, t, "partitioner", KS_V_OBJ))) {
                mark = ks_vpush(v, "partitioner");
                ks_vget(v, o, "name", KS_V_STR);
                ks_vget(v, o, "source", KS_V_STR);
                ks_vpop(v, mark);
        }
        ks_vints(v, t, top);
        if ((o = ks_vget(v, t, "keys", KS_V_OBJ))) {
                mark = ks_vpush(v, "keys");
                ks_vints(v, o, keys);
                /* null: a partial analysis of earlier versions, which
                 * called the estimate a lower bound (ks_check_analysis()) */
                ks_vget(v, o, "distinct_error", KS_V_NUM | KS_V_NULL);
                ks_vget(v, o, "distinct_lower_bound", KS_V_BOOL | KS_V_OPTION);
                ks_vget(v, o, "unanalysed", KS_V_INT | KS_V_OPTION);
                ks_vpop(v, mark);
        }
        ks_check_analysis(v, t);
        if ((o = ks_vget(v, t, "window", KS_V_OBJ))) {
                mark = ks_vpush(v, "window");
                ks_vints(v, o, win);
                ks_vpop(v, mark);
        }
        return current;
}

/** @brief A topic's `current`: its per-partition loads, as many as the
 *         @p current partition count (0: unknown), null only when the
 *         count is unknown. */
static void ks_check_topic_current(ks_vctx_t *v, json_t *t, int64_t current)
{
        json_t *o, *cur_parts = NULL;
        size_t  mark;

        o = ks_vget(v, t, "current", KS_V_OBJ | KS_V_NULL);
        if (o && json_is_object(o)) {
                json_t *msgs, *bytes;
                mark      = ks_vpush(v, "current");
                cur_parts = ks_vget(v, o, "partitions", KS_V_OBJ);
                msgs      = json_object_get(cur_parts, "messages");
                bytes     = json_object_get(cur_parts, "bytes");
                ks_vpop(v, mark);
                /* the columns agree with each other, not with the count:
                 * name the count (a column of its own length is named by
                 * ks_check_partitions()) */
                if (!v->failed && json_is_array(msgs) &&
                    json_array_size(msgs) == json_array_size(bytes) &&
                    (int64_t)json_array_size(msgs) != current) {
                        mark = ks_vpush(v, "partition_count.current");
                        if (current)
                                ks_vfail(v,
                                         "%lld, but current.partitions has "
                                         "%zu values a column",
                                         (long long)current,
                                         json_array_size(msgs));
                        else
                                ks_vfail(v,
                                         "null, but current.partitions has "
                                         "%zu values a column",
                                         json_array_size(msgs));
                        ks_vpop(v, mark);
                }
                mark = ks_vpush(v, "current.partitions");
                ks_check_partitions(v, cur_parts, current);
                ks_vpop(v, mark);
        }
        if (!v->failed && current && !cur_parts) {
                mark = ks_vpush(v, "current");
                ks_vfail(v, "null although partition_count.current is %lld",
                         (long long)current);
                ks_vpop(v, mark);
        }
}

/** @brief A topic's proposals[]: each entry (ks_check_proposal()), at
 *         most KEYSHIFT_PROPOSED_MAX of them. */
static void ks_check_proposals(ks_vctx_t *v, json_t *t, int64_t current)
{
        json_t *arr = ks_vget(v, t, "proposals", KS_V_ARR);
        size_t  i, mark;

        for (i = 0; !v->failed && i < json_array_size(arr); i++) {
                mark = ks_vpush(v, "proposals[%zu]", i);
                ks_check_proposal(v, json_array_get(arr, i), current);
                ks_vpop(v, mark);
        }
        if (!v->failed && json_array_size(arr) > KEYSHIFT_PROPOSED_MAX) {
                mark = ks_vpush(v, "proposals");
                ks_vfail(v, "%zu proposals, at most %d", json_array_size(arr),
                         KEYSHIFT_PROPOSED_MAX);
                ks_vpop(v, mark);
        }
}

/** @brief Every member of one topic object the CLI reads. */
static void ks_check_topic(ks_vctx_t *v, json_t *t)
{
        json_t *o;
        int64_t current;
        size_t  mark;

        if (!ks_vis(v, t, KS_V_OBJ))
                return;
        current = ks_check_topic_head(v, t);
        ks_check_topic_current(v, t, current);
        ks_check_proposals(v, t, current);
        if ((o = ks_vget(v, t, "hot_keys", KS_V_OBJ))) {
                mark = ks_vpush(v, "hot_keys");
                ks_check_hot_keys(v, o);
                ks_vpop(v, mark);
        }
        if ((o = ks_vget(v, t, "hot_keys_sampling", KS_V_OBJ | KS_V_OPTION))) {
                mark = ks_vpush(v, "hot_keys_sampling");
                ks_check_hot_sampling(v, o, "one_in", "messages_passed_by",
                                      "messages_sampled");
                ks_vpop(v, mark);
        }
        ks_vget(v, t, "acknowledged", KS_V_OBJ);
        ks_vget(v, t, "key_encodings", KS_V_OBJ | KS_V_OPTION);
        ks_vget(v, t, "mixed_keys", KS_V_OBJ | KS_V_OPTION);
        ks_vget(v, t, "other_clients", KS_V_OBJ | KS_V_NULL | KS_V_OPTION);
        if ((o = ks_vget(v, t, "merge", KS_V_OBJ))) {
                mark = ks_vpush(v, "merge");
                ks_check_sketches(v, o);
                ks_vpop(v, mark);
        }
        ks_check_warnings(v, ks_vget(v, t, "warnings", KS_V_ARR));
        ks_vget(v, t, "summary", KS_V_STR | KS_V_OPTION);
        ks_check_audit(v, t);
}

/**
 * @brief Refuses a report of another schema with one line that says which
 *        version and which keyshift wrote it, and what to do: a v1 report
 *        (keyshift 0.1.0 before v2) is refused rather than read, since
 *        keyshift 0.1.0 was never released with it (docs/report-schema.md,
 *        "What changed from v1").
 */
static void ks_check_version(ks_vctx_t *v, json_t *root, const char *found)
{
        const char *by      = json_string_value(json_object_get(
                 json_object_get(root, "producer"), "keyshift_version"));
        char        who[96] = "";

        if (by)
                snprintf(who, sizeof(who), " (written by keyshift %.40s)", by);
        ks_vpush(v, "schema");
        if (!strcmp(found, "keyshift.report.v1"))
                ks_vfail(v,
                         "\"%s\"%s, but this keyshift %s reads only \"%s\": "
                         "write the report again with this keyshift (its "
                         "plugin, keyshift scan, or keyshift merge of v2 "
                         "reports)",
                         found, who, KEYSHIFT_VERSION_STR,
                         KEYSHIFT_REPORT_SCHEMA);
        else
                ks_vfail(v,
                         "\"%.80s\"%s is not a schema this keyshift %s reads "
                         "(\"%s\"): read it with the keyshift that wrote it, "
                         "or write it again with this one",
                         found, who, KEYSHIFT_VERSION_STR,
                         KEYSHIFT_REPORT_SCHEMA);
}

int ks_cli_report_check(json_t *root, const char *path, char *err, size_t errsz)
{
        ks_vctx_t   v = {.file = path, .err = err, .errsz = errsz};
        json_t     *schema, *topics;
        char        msg[512];
        int         rc;
        const char *name;
        json_t     *t;
        size_t      mark;

        if (!json_is_object(root)) {
                ks_vfail(&v,
                         "not a keyshift report: the top level is %s, "
                         "not an object",
                         ks_cli_json_what(root));
                return -1;
        }
        schema = ks_vget(&v, root, "schema", KS_V_STR);
        if (schema &&
            strcmp(json_string_value(schema), KEYSHIFT_REPORT_SCHEMA)) {
                ks_check_version(&v, root, json_string_value(schema));
                return -1;
        }
        if (v.failed)
                return -1;
        /* the published schema, compiled in: every member's presence and
         * type (ks_cli_schema.h); what follows checks what a schema cannot
         * say (lengths against the partition count, sums, sketches) */
        rc = ks_cli_schema_validate(ks_cli_schema_report(), root, v.path,
                                    sizeof(v.path), msg, sizeof(msg));
        if (rc) {
                v.len = strlen(v.path);
                ks_vfail(&v, "%s%s",
                         rc == -2 ? "this keyshift's report schema is "
                                    "broken: "
                                  : "",
                         msg);
                return -1;
        }
        ks_vget(&v, root, "generated_at", KS_V_STR);
        ks_vget(&v, root, "producer", KS_V_OBJ);
        topics = ks_vget(&v, root, "topics", KS_V_OBJ);
        json_object_foreach(topics, name, t)
        {
                if (v.failed)
                        break;
                mark = ks_vpush(&v, "topics.%s", name);
                ks_check_topic(&v, t);
                ks_vpop(&v, mark);
        }
        ks_check_warnings(&v, ks_vget(&v, root, "warnings", KS_V_ARR));
        ks_check_scan(&v, root);
        if (v.failed)
                return -1;
        return ks_cli_report_ranges(root, path, err, errsz);
}
