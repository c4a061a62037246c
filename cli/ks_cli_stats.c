/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli_stats.c
 * @brief Per-partition load and skew, and the rank-size curve of keys.
 *
 * The rank-size curve ("messages per key, busiest first") is what a Zipf
 * plot shows: a few hot keys on the left, the long tail on the right.
 * A report holds no per-key list, only two sketches, and each is good at
 * one end:
 *  - the Space-Saving summary (ks_topk.h) holds every key above N/m
 *    messages with a count overestimated by at most its `error`: the
 *    head, ranked exactly where count is large against error;
 *  - the bottom-k sample (ks_keysample.h) is a uniform sample of k of
 *    the D distinct keys with exact counts: its i-th busiest entry is an
 *    estimate of the key at rank (i + 0.5) D / k (the sample quantile of
 *    a uniform sample), standing for D / k keys.
 * The curve joins the two at the last reliable hot key.
 */
#include "ks_cli_stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stdarg.h>

#include "ks_cli_report.h"
#include "ks_pack.h"

int ks_cli_loads_read(const json_t *partitions, ks_cli_loads_t *out)
{
        const json_t *msgs = json_object_get(partitions, "messages");
        size_t        i, n = json_array_size(msgs);
        uint64_t     *copy;

        memset(out, 0, sizeof(*out));
        if (!n)
                return -1;
        out->messages = calloc(n, sizeof(*out->messages));
        copy          = calloc(n, sizeof(*copy));
        if (!out->messages || !copy) {
                free(copy);
                ks_cli_loads_free(out);
                return -1;
        }
        out->count = (int32_t)n;
        for (i = 0; i < n; i++) {
                json_int_t v     = json_integer_value(json_array_get(msgs, i));
                uint64_t   m     = v > 0 ? (uint64_t)v : 0;
                out->messages[i] = copy[i] = m;
                out->total += m;
                if (m > out->messages[out->busiest])
                        out->busiest = (int32_t)i;
        }
        out->mean = (double)out->total / (double)n;
        ks_sizing_spread(copy, n, 2.5, &out->spread);
        free(copy);
        return 0;
}

void ks_cli_loads_free(ks_cli_loads_t *l)
{
        free(l->messages);
        memset(l, 0, sizeof(*l));
}

/** @brief qsort() order: largest first. */
static int ks_cli_desc_u64(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
        return x < y ? 1 : x > y ? -1 : 0;
}

typedef struct ks_cli_hot_count {
        uint64_t count, error;
} ks_cli_hot_count_t;

/** @brief qsort() order of hot-key counts: largest first. */
static int ks_cli_desc_hot(const void *a, const void *b)
{
        const ks_cli_hot_count_t *x = a, *y = b;
        return x->count < y->count ? 1 : x->count > y->count ? -1 : 0;
}

/** @brief Keeps about @p max points, evenly spaced on log(rank); the
 *         first and last points always stay. */
static void ks_cli_keyrank_thin(ks_cli_keyrank_t *k, size_t max)
{
        double last_rank, scale;
        long   prev = -1;
        size_t i, o = 0;

        if (!max || k->cnt <= max)
                return;
        last_rank = k->points[k->cnt - 1].rank;
        scale     = last_rank > 1 ? (double)max / log(last_rank) : 1;
        for (i = 0; i < k->cnt; i++) {
                long b = (long)(log(k->points[i].rank) * scale);
                if (b == prev && i + 1 < k->cnt)
                        continue;
                prev           = b;
                k->points[o++] = k->points[i];
        }
        k->cnt = o;
}

/** @returns member `packed` of a checked sketch object @p o, its length
 *           in *len ("" when absent: then it unpacks to an error). */
static const char *packed_of(const json_t *o, size_t *len)
{
        const json_t *j = json_object_get(o, "packed");

        *len = json_string_length(j);
        return j ? json_string_value(j) : "";
}

/** A hot key's count is plotted while it is at least this many times
 *  its possible overestimate (the top-K sketch's error). */
#define KS_KEYRANK_RELIABLE 2
/** Rates are plotted (messages/s) when the counts span this many
 *  seconds at least; counts otherwise. */
#define KS_KEYRANK_RATE_MIN_S 10

/** The counts a rank-size curve is drawn from, busiest first. */
typedef struct ks_keyrank_counts {
        uint64_t           *s;  /**< the key sample's counts */
        size_t              k;  /**< ... their number */
        ks_cli_hot_count_t *hc; /**< the hot keys' counts and errors */
        size_t              h;  /**< ... their number */
} ks_keyrank_counts_t;

/**
 * @brief Reads the packed key sample and hot keys of @p merge (checked
 *        when the report was read, ks_cli_report_check(): one that does
 *        not unpack counts as empty) into @p c, each sorted busiest
 *        first.
 * @returns 0, or -1 (out of memory) with nothing held.
 */
static int ks_keyrank_counts(const json_t *merge, ks_keyrank_counts_t *c)
{
        ks_keysample_entry_t *se = NULL;
        ks_topk_entry_t      *he = NULL;
        const char           *ps;
        char                  why[256];
        size_t                i, len;

        memset(c, 0, sizeof(*c));
        ps = packed_of(json_object_get(merge, "key_sample"), &len);
        if (ks_unpack_key_sample(ps, len, &se, &c->k, why, sizeof(why)))
                c->k = 0;
        ps = packed_of(json_object_get(merge, "hot_keys"), &len);
        if (ks_unpack_hot_keys(ps, len, &he, &c->h, why, sizeof(why)))
                c->h = 0;
        c->s  = calloc(c->k ? c->k : 1, sizeof(*c->s));
        c->hc = calloc(c->h ? c->h : 1, sizeof(*c->hc));
        if (!c->s || !c->hc) {
                free(se);
                free(he);
                free(c->s);
                free(c->hc);
                return -1;
        }
        for (i = 0; i < c->k; i++)
                c->s[i] = se[i].messages;
        qsort(c->s, c->k, sizeof(*c->s), ks_cli_desc_u64);
        for (i = 0; i < c->h; i++) {
                c->hc[i].count = he[i].count;
                c->hc[i].error = he[i].error;
        }
        free(se);
        free(he);
        qsort(c->hc, c->h, sizeof(*c->hc), ks_cli_desc_hot);
        return 0;
}

/**
 * @brief Adds the points of @p c to @p out, cumulative shares of
 *        @p keyed messages: when the sample is not exact, first the hot
 *        keys whose counts are reliable (KS_KEYRANK_RELIABLE), then the
 *        sample's keys, each standing for distinct / sampled keys.
 */
static void ks_keyrank_points(ks_cli_keyrank_t          *out,
                              const ks_keyrank_counts_t *c, double keyed)
{
        double w, sum      = 0;
        size_t i, reliable = 0;

        if (!out->exact) {
                /* head: the hot keys whose count is at least twice its
                 * possible overestimate, while they stay so */
                while (reliable < c->h && c->hc[reliable].count > 0 &&
                       c->hc[reliable].count >=
                           KS_KEYRANK_RELIABLE * c->hc[reliable].error)
                        reliable++;
                for (i = 0; i < reliable; i++) {
                        sum += (double)c->hc[i].count;
                        out->points[out->cnt++] = (ks_cli_rank_point_t){
                            (double)(i + 1), (double)c->hc[i].count,
                            sum / keyed, 1};
                }
                out->hot_cnt = reliable;
        }
        w = c->k ? out->distinct / (double)c->k : 1;
        for (i = 0; i < c->k; i++) {
                double rank = out->exact ? (double)(i + 1) : (i + 0.5) * w;
                if (rank <= (double)out->hot_cnt || !c->s[i])
                        continue;
                sum += (double)c->s[i] * (out->exact ? 1 : w);
                out->points[out->cnt++] = (ks_cli_rank_point_t){
                    rank, (double)c->s[i], fmin(1.0, sum / keyed), 0};
        }
}

int ks_cli_keyrank_build(const json_t *topic, size_t max_points,
                         ks_cli_keyrank_t *out)
{
        const json_t *merge = json_object_get(topic, "merge");
        size_t cap = (size_t)ks_cli_u64(json_object_get(merge, "key_sample"),
                                        "capacity");
        double keyed =
            (double)ks_cli_u64(json_object_get(topic, "keys"), "hashed");
        ks_keyrank_counts_t c;
        size_t              i;
        double              rate, secs;

        memset(out, 0, sizeof(*out));
        if (ks_keyrank_counts(merge, &c))
                return -1;
        if (!(out->points = calloc(c.k + c.h + 1, sizeof(*out->points)))) {
                free(c.s);
                free(c.hc);
                return -1;
        }
        out->exact    = c.k < cap;
        out->distinct = out->exact ? (double)c.k
                                   : ks_cli_num(json_object_get(topic, "keys"),
                                                "distinct_estimate");
        if (out->distinct < (double)c.k)
                out->distinct = (double)c.k;
        if (keyed <= 0)
                keyed = 1;
        ks_keyrank_points(out, &c, keyed);
        if (out->exact) { /* the report's hot keys are the busiest ones */
                out->hot_cnt =
                    json_array_size(json_object_get(topic, "hot_keys"));
                for (i = 0; i < out->cnt && i < out->hot_cnt; i++)
                        out->points[i].hot = 1;
        }
        rate = ks_cli_num(json_object_get(topic, "rates"), "msgs_per_s");
        secs = rate > 0 ? (double)ks_cli_u64(topic, "messages") / rate : 0;
        out->seconds = secs >= KS_KEYRANK_RATE_MIN_S ? secs : 0;
        free(c.s);
        free(c.hc);
        ks_cli_keyrank_thin(out, max_points);
        return 0;
}

void ks_cli_keyrank_free(ks_cli_keyrank_t *k)
{
        free(k->points);
        memset(k, 0, sizeof(*k));
}

double ks_cli_keyrank_share_of_top(const ks_cli_keyrank_t *k, double n)
{
        double share = 0;
        size_t i;

        for (i = 0; i < k->cnt && k->points[i].rank <= n; i++)
                share = k->points[i].cumulative;
        return share;
}

void ks_cli_append(char *buf, size_t size, size_t *o, const char *fmt, ...)
{
        va_list ap;
        int     n;

        if (*o >= size)
                return;
        va_start(ap, fmt);
        n = vsnprintf(buf + *o, size - *o, fmt, ap);
        va_end(ap);
        if (n > 0)
                *o += (size_t)n;
}

int ks_cli_hot_verdict(const json_t *hot_key, char *buf, size_t size)
{
        const json_t *fix = json_object_get(hot_key, "fixable_by_partitions");
        const json_t *nb  = json_object_get(hot_key, "salt_buckets");

        if (!json_is_boolean(fix)) {
                snprintf(buf, size, "%s", "");
                return 0;
        }
        if (json_is_true(fix)) {
                snprintf(buf, size, "partitions spread it");
                return 1;
        }
        if (json_is_integer(nb))
                snprintf(buf, size, "salt into %lld",
                         (long long)json_integer_value(nb));
        else
                snprintf(buf, size, "salt it");
        return 2;
}
