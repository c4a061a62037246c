/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_sizing_skew.c
 * @brief Skew: how unevenly keys and loads spread over partitions, and
 *        the sampled loads under a proposed count (ks_sizing.h; the
 *        formulas and their sources are in ks_sizing.c's file comment).
 */
#include "ks_sizing.h"

#include "ks_partitioner.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Skew                                                                 */
/* ------------------------------------------------------------------ */

/**
 * @returns the @p k-th smallest (0-based) of @p v[n] (k < n), all of them
 *          <= @p max: radix selection on 8-bit digits, from the highest
 *          digit @p max has down. Each digit is one pass counting, among
 *          the values that agree with the digits fixed so far, how many
 *          have each digit value (the others in bucket 256); the bucket
 *          that holds the k-th fixes the next digit. Four interleaved
 *          histograms, so that runs of values in one bucket (most of them,
 *          in the later passes) do not wait for each other's increment.
 *          Loads below 2^24 take 3 passes of ~1-2 cycles per value, no
 *          data-dependent branch, where Hoare's selection (before)
 *          mispredicted about one comparison in two and was ~12 % of a
 *          report's time (11 medians of 1,000-2,048 loads per topic,
 *          bench/ksb_report). @p v is not reordered.
 */
static uint64_t kth_smallest(const uint64_t *v, size_t n, size_t k,
                             uint64_t max)
{
        uint64_t prefix = 0, mask = 0;
        int      shift = 0;
        size_t   i, d;

        while (shift < 56 && (max >> (shift + 8)))
                shift += 8;
        for (; shift >= 0; shift -= 8) {
                size_t cnt[4][257];
                memset(cnt, 0, sizeof(cnt));
#define KS_BUCKET(x)                                                           \
        (((x)&mask) == prefix ? (size_t)(((x) >> shift) & 255) : 256)
                for (i = 0; i + 4 <= n; i += 4) {
                        cnt[0][KS_BUCKET(v[i])]++;
                        cnt[1][KS_BUCKET(v[i + 1])]++;
                        cnt[2][KS_BUCKET(v[i + 2])]++;
                        cnt[3][KS_BUCKET(v[i + 3])]++;
                }
                for (; i < n; i++)
                        cnt[0][KS_BUCKET(v[i])]++;
#undef KS_BUCKET
                for (d = 0; d < 255; d++) {
                        size_t c =
                            cnt[0][d] + cnt[1][d] + cnt[2][d] + cnt[3][d];
                        if (k < c)
                                break;
                        k -= c;
                }
                prefix |= (uint64_t)d << shift;
                mask |= (uint64_t)255 << shift;
        }
        return prefix;
}

/** @returns the median of @p v[n] (n >= 1), all <= @p max: the middle
 *           value, or the mean of the two middle ones. */
/** Loads below this are counted per value for the median (a histogram
 *  of 16 KiB on the stack). */
#define KS_MEDIAN_HIST 4096

/**
 * @brief *lo, *hi := the (k-1)-th and k-th smallest of @p v[n] (0 < k < n),
 *        all <= @p max < KS_MEDIAN_HIST, from one pass counting each value
 *        and one over the counts. The loads of a report's counts are
 *        mostly small (tens to hundreds of messages per partition): this
 *        replaces kth_smallest()'s two or three passes and the pass for
 *        the (k-1)-th.
 */
static void two_middle_by_count(const uint64_t *v, size_t n, size_t k,
                                uint64_t max, uint64_t *lo, uint64_t *hi)
{
        uint32_t cnt[KS_MEDIAN_HIST];
        size_t   i, seen = 0;
        uint64_t x;
        int      have_lo = 0;

        memset(cnt, 0, ((size_t)max + 1) * sizeof(cnt[0]));
        for (i = 0; i < n; i++)
                cnt[v[i]]++;
        *lo = *hi = max;
        for (x = 0; x <= max; x++) { /* ends by max: n > k values */
                seen += cnt[x];
                if (!have_lo && seen > k - 1) {
                        *lo     = x;
                        have_lo = 1;
                }
                if (seen > k) {
                        *hi = x;
                        break;
                }
        }
}

static double select_median(const uint64_t *v, size_t n, uint64_t max)
{
        size_t   k = n / 2, i, below_cnt = 0;
        uint64_t m, below = 0;

        if (n >= 2 && max < KS_MEDIAN_HIST && max <= 4 * (uint64_t)n) {
                uint64_t lo, hi;
                two_middle_by_count(v, n, k, max, &lo, &hi);
                return n % 2 ? (double)hi : ((double)lo + (double)hi) / 2.0;
        }
        m = kth_smallest(v, n, k, max);
        if (n % 2)
                return (double)m;
        /* the (k-1)-th: m again if fewer than k values are below m, else
         * the largest value below m; one pass, no second selection */
        for (i = 0; i < n; i++) {
                int lt = v[i] < m;
                below_cnt += (size_t)lt;
                below = lt && v[i] > below ? v[i] : below;
        }
        if (below_cnt < k)
                below = m;
        return ((double)below + (double)m) / 2.0;
}

/** @brief *lo, *hi := the smallest and largest of @p v[n] (n >= 1). */
static void min_max(const uint64_t *v, size_t n, uint64_t *lo, uint64_t *hi)
{
        size_t i;

        *lo = *hi = v[0];
        for (i = 1; i < n; i++) {
                if (v[i] < *lo)
                        *lo = v[i];
                if (v[i] > *hi)
                        *hi = v[i];
        }
}

/** @returns a / median: 0 when both are 0, INFINITY when only median is. */
static double over_median(double a, double median)
{
        if (median > 0)
                return a / median;
        return a > 0 ? INFINITY : 0.0;
}

void ks_sizing_spread(uint64_t *counts, size_t n, double limit,
                      ks_sizing_spread_t *out)
{
        memset(out, 0, sizeof(*out));
        out->within_limit = 1;
        if (!n)
                return;
        min_max(counts, n, &out->min, &out->max);
        out->median          = select_median(counts, n, out->max);
        out->max_over_median = over_median((double)out->max, out->median);
        out->within_limit    = (double)out->max <= limit * out->median;
}

double ks_sizing_key_skew(uint64_t busiest, uint64_t *counts, size_t n)
{
        uint64_t lo, hi;

        if (!n)
                return 0.0;
        min_max(counts, n, &lo, &hi);
        if (hi > busiest)
                busiest = hi;
        return over_median((double)busiest, select_median(counts, n, hi));
}

void ks_sizing_sample_loads(const uint32_t *phash, const uint64_t *messages,
                            size_t n, int32_t partition_count, uint64_t *loads)
{
        uint32_t d = (uint32_t)partition_count;
        /* remainders by a multiplication (ks_partition_of_m()): a report
         * takes this sum over the key sample (4,096 keys) at up to 3 counts
         * per proposed count */
        uint64_t m;
        size_t   i;

        if (partition_count < 1)
                return;
        m = ks_partition_m(d);
        memset(loads, 0, (size_t)partition_count * sizeof(*loads));
        for (i = 0; i < n; i++)
                loads[ks_partition_of_m(phash[i], m, d)] += messages[i];
}

int ks_sizing_is_pow2(int64_t n)
{
        return n > 0 && (n & (n - 1)) == 0;
}

int64_t ks_sizing_next_pow2(int64_t n)
{
        int64_t p = 1;

        while (p < n && p < ((int64_t)1 << 62))
                p <<= 1;
        return p;
}
