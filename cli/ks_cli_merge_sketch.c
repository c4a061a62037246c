/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli_merge_sketch.c
 * @brief A topic's sketches merged across reports, with the core's own
 *        merge operations, and the figures recomputed from them.
 *
 *  - HyperLogLog (ks_hll.h): the union of streams is the register-wise
 *    maximum; the estimate of the union is as good as of one stream
 *    (relative standard error 1.04 / sqrt(2^14) = 0.81 %).
 *  - Bottom-k key sample (ks_keysample.h): the k smallest key hashes of
 *    the union are among the k smallest of each input, so inserting every
 *    input's entries into one sample of the smallest input k gives exactly
 *    the sample the whole stream would have given, counts of a key seen by
 *    several producers summed. Moved-key fractions come from it, with
 *    standard error sqrt(f (1 - f) / k).
 *  - Space-Saving hot keys (ks_topk.h): each input's summary is rebuilt
 *    from its entries (same capacity, so its bound, the smallest counter,
 *    is the same) and merged by Agarwal et al. 2012: true counts stay in
 *    [count - error, count].
 */
#include "ks_cli_merge.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ks_hex.h"
#include "ks_hll.h"
#include "ks_keysample.h"
#include "ks_pack.h"
#include "ks_partitioner.h"
#include "ks_report.h"
#include "ks_report_fmt.h"
#include "ks_topic.h"
#include "ks_topk.h"

struct ks_cli_sketch {
        ks_hll_t        hll;
        ks_keysample_t *sample;
        ks_topk_t      *hot;
        /* the inputs' runs of one passed by and those the hot-key summary
         * got by sample (ks_run_hot_t), summed */
        uint64_t hot_passed_by, hot_sampled;
};

ks_cli_sketch_t *ks_cli_sketch_new(size_t sample_capacity, size_t hot_capacity)
{
        ks_cli_sketch_t *m = calloc(1, sizeof(*m));

        if (!m)
                return NULL;
        ks_hll_init(&m->hll);
        m->sample = ks_keysample_new(sample_capacity < 2 ? 2 : sample_capacity);
        m->hot    = ks_topk_new(hot_capacity < 1 ? 1 : hot_capacity);
        if (!m->sample || !m->hot) {
                ks_cli_sketch_destroy(m);
                return NULL;
        }
        return m;
}

void ks_cli_sketch_destroy(ks_cli_sketch_t *m)
{
        if (!m)
                return;
        ks_keysample_destroy(m->sample);
        ks_topk_destroy(m->hot);
        free(m);
}

/** @returns member `packed` of sketch object @p o (checked by
 *           ks_cli_report_check()), and its length in *len. */
static const char *ks_sketch_packed(const json_t *o, size_t *len)
{
        const json_t *j = json_object_get(o, "packed");

        *len = json_string_length(j);
        return json_string_value(j);
}

/**
 * @brief Rebuilds one input's Space-Saving summary from its counters
 *        (same capacity, so the same bound) and merges it into @p m.
 * @returns 0, or -1 with @p err set.
 */
static int ks_sketch_add_hot(ks_cli_sketch_t *m, const json_t *hot, char *err,
                             size_t errsz)
{
        uint64_t         passed, sampled;
        size_t           cap = (size_t)ks_cli_u64(hot, "capacity"), n, i, len;
        const char      *s   = ks_sketch_packed(hot, &len);
        ks_topk_t       *one;
        ks_topk_entry_t *e;
        char             why[256];

        if (ks_unpack_hot_keys(s ? s : "", len, &e, &n, why, sizeof(why))) {
                snprintf(err, errsz, "merge.hot_keys.packed: %s", why);
                return -1;
        }
        if (cap < n)
                cap = n;
        if (!(one = ks_topk_new(cap ? cap : 1))) {
                free(e);
                snprintf(err, errsz, "out of memory");
                return -1;
        }
        for (i = 0; i < n; i++)
                ks_topk_insert_entry(one, &e[i]);
        free(e);
        ks_topk_merge(m->hot, one);
        ks_topk_destroy(one);
        passed  = ks_cli_u64(hot, "passed_by");
        sampled = ks_cli_u64(hot, "sampled");
        if (passed > INT64_MAX - m->hot_passed_by ||
            sampled > INT64_MAX - m->hot_sampled) {
                snprintf(err, errsz,
                         "merge.hot_keys: passed_by or sampled past 2^63 - 1 "
                         "when summed");
                return -1;
        }
        m->hot_passed_by += passed;
        m->hot_sampled += sampled;
        return 0;
}

int ks_cli_sketch_add(ks_cli_sketch_t *m, const json_t *merge, char *err,
                      size_t errsz)
{
        const json_t         *ks = json_object_get(merge, "key_sample");
        const char           *s;
        ks_hll_t              one;
        ks_keysample_entry_t *e;
        size_t                i, n, len;
        char                  why[256];

        s = ks_sketch_packed(json_object_get(merge, "distinct_hll"), &len);
        if (ks_unpack_hll(s ? s : "", len, &one, NULL, why, sizeof(why))) {
                snprintf(err, errsz, "merge.distinct_hll.packed: %s", why);
                return -1;
        }
        ks_hll_merge(&m->hll, &one);
        s = ks_sketch_packed(ks, &len);
        if (ks_unpack_key_sample(s ? s : "", len, &e, &n, why, sizeof(why))) {
                snprintf(err, errsz, "merge.key_sample.packed: %s", why);
                return -1;
        }
        for (i = 0; i < n; i++)
                ks_keysample_insert_entry(m->sample, &e[i]);
        free(e);
        return ks_sketch_add_hot(m, json_object_get(merge, "hot_keys"), err,
                                 errsz);
}

double ks_cli_sketch_distinct(const ks_cli_sketch_t *m, double *rel_err)
{
        size_t n = ks_keysample_size(m->sample);

        if (n < ks_keysample_capacity(m->sample)) {
                *rel_err = 0;
                return (double)n;
        }
        *rel_err = ks_hll_std_error();
        return ks_hll_estimate(&m->hll);
}

void ks_cli_sketch_moved(const ks_cli_sketch_t *m, int32_t cur, int32_t prop,
                         double distinct, const ks_analysis_t *a,
                         double window_hashed, double window_all, json_t *moved)
{
        size_t                n = ks_keysample_size(m->sample), i, moves = 0;
        ks_keysample_entry_t *e = calloc(n ? n : 1, sizeof(*e));
        double                f, f_err, d_err, sum_m = 0, sum_m2 = 0;

        if (!e)
                return;
        ks_keysample_entries(m->sample, e);
        for (i = 0; i < n; i++) {
                double msgs = (double)e[i].messages;
                sum_m += msgs;
                sum_m2 += msgs * msgs;
                if (cur > 0 && prop > 0)
                        moves += ks_partition_of(e[i].phash, cur) !=
                                 ks_partition_of(e[i].phash, prop);
        }
        free(e);
        f     = n ? (double)moves / (double)n : 0;
        f_err = ks_analysis_keys_fraction_error(
            f, n, n >= ks_keysample_capacity(m->sample), a);
        ks_analysis_set_moved(moved, sum_m, sum_m2, window_hashed, window_all,
                              a);
        json_object_set_new(moved, "distinct_keys",
                            json_integer((json_int_t)llround(f * distinct)));
        json_object_set_new(moved, "distinct_keys_fraction", json_real(f));
        json_object_set_new(moved, "distinct_keys_fraction_error",
                            json_real(f_err));
        /* the distinct count's own relative error: its sketch's */
        ks_cli_sketch_distinct(m, &d_err);
        ks_analysis_set_moved_keys_error(moved, distinct, d_err);
}

json_t *ks_cli_sketch_hot_keys(const ks_cli_sketch_t *m, int32_t cur,
                               const int32_t *props, size_t prop_cnt,
                               uint64_t topic_messages, size_t max,
                               const ks_analysis_t *a)
{
        size_t           cap = ks_topk_capacity(m->hot), n, i, j;
        ks_topk_entry_t *e   = calloc(cap, sizeof(*e));
        json_t          *arr = json_array();
        char             hex[2 * KS_TOPK_KEY_MAX + 1], name[16];

        if (!e || !arr) {
                free(e);
                return arr;
        }
        n = ks_topk_sorted(m->hot, e, max < cap ? max : cap);
        for (i = 0; i < n; i++) {
                size_t  kl = e[i].keylen < KS_TOPK_KEY_MAX ? e[i].keylen
                                                           : KS_TOPK_KEY_MAX;
                json_t *pp = json_object(), *mv = json_object();
                int32_t pc = cur > 0 ? ks_partition_of(e[i].phash, cur) : -1;

                for (j = 0; pc >= 0 && j < prop_cnt; j++) {
                        int32_t p = ks_partition_of(e[i].phash, props[j]);
                        snprintf(name, sizeof(name), "%d", (int)props[j]);
                        json_object_set_new(pp, name, json_integer(p));
                        json_object_set_new(mv, name, json_boolean(p != pc));
                }
                ks_hex_encode(e[i].key, kl, hex);
                json_array_append_new(
                    arr, json_pack(
                             "{s:o, s:s, s:i, s:b, s:I, s:I, s:I, s:I, s:f, "
                             "s:o, s:o, s:o}",
                             "key", ks_report_key(e[i].key, kl), "key_hex", hex,
                             "key_length", (int)e[i].keylen, "key_truncated",
                             e[i].keylen > KS_TOPK_KEY_MAX, "messages",
                             (json_int_t)e[i].count, "messages_error",
                             (json_int_t)e[i].error, "messages_sampling_error",
                             (json_int_t)ceil(ks_analysis_hot_error(
                                 a, (double)e[i].count,
                                 (double)ks_topic_hot_sampling_error(
                                     m->hot_sampled, e[i].count))),
                             "bytes", (json_int_t)e[i].bytes, "share",
                             topic_messages
                                 ? (double)e[i].count / (double)topic_messages
                                 : 0.0,
                             "partition_current",
                             pc >= 0 ? json_integer(pc) : json_null(),
                             "partition_proposed", pp, "moves", mv));
        }
        free(e);
        return arr;
}

json_t *ks_cli_sketch_hot_sampling(const ks_cli_sketch_t *m)
{
        return ks_report_hot_sampling_json(m->hot_passed_by, m->hot_sampled);
}

json_t *ks_cli_sketch_json(const ks_cli_sketch_t *m, uint64_t hot_total)
{
        size_t                n    = ks_keysample_size(m->sample);
        size_t                hcap = ks_topk_capacity(m->hot);
        ks_keysample_entry_t *se   = calloc(n ? n : 1, sizeof(*se));
        ks_topk_entry_t      *he   = calloc(hcap, sizeof(*he));
        json_t               *o    = NULL;

        if (se && he) {
                ks_report_merge_in_t in = {
                    .hll             = &m->hll,
                    .sample          = se,
                    .sample_cnt      = n,
                    .sample_capacity = ks_keysample_capacity(m->sample),
                    .hot             = he,
                    .hot_capacity    = hcap,
                    .hot_total       = hot_total,
                    .hot_passed_by   = m->hot_passed_by,
                    .hot_sampled     = m->hot_sampled,
                };
                ks_keysample_entries(m->sample, se);
                in.hot_cnt = ks_topk_sorted(m->hot, he, hcap);
                o          = ks_report_merge_object(&in);
        }
        free(se);
        free(he);
        return o;
}
