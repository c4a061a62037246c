/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_rates.c
 * @brief ks_rates: the per-second series, its rates, the 0.999 peak and
 *        the peak-to-mean ratio, on synthetic timestamps.
 *
 * Oracles: hand-computed series (the arithmetic is in the comments) and,
 * for random bursty series, the exact nearest-rank quantile of the stored
 * per-second counts (sorted here), against which the histogram must be
 * within its stated bound: true <= reported < (1 + 1/32) x true.
 */
#include "ks_test.h"

#include "ks_rates.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define T0 1000000 /* an arbitrary monotonic start, ms */

/** @brief Adds @p n messages of @p bytes each, spread over second @p sec
 *         (from T0), at sub-second times within it. */
static void add_second(ks_rates_t *r, int64_t sec, uint64_t n, uint64_t bytes)
{
        uint64_t i;

        for (i = 0; i < n; i++)
                ks_rates_add(r, T0 + sec * 1000 + (int64_t)(i * 997 % 1000),
                             bytes);
}

static int cmp_u64(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
        return x < y ? -1 : x > y;
}

/* ------------------------------------------------------------------ */

static void test_bucket_layout(void)
{
        uint64_t hi, lo;
        size_t   b;

        /* 0..63: one bucket each */
        for (b = 0; b < 64; b++) {
                CU_ASSERT_EQUAL(ks_rates_bucket(b), b);
                CU_ASSERT_EQUAL(ks_rates_bucket_lo(b, &hi), b);
                CU_ASSERT_EQUAL(hi, b);
        }
        /* 64 = 2^6: e = 6, width 2^(6-5) = 2, sub-bucket (64>>1)-32 = 0 */
        CU_ASSERT_EQUAL(ks_rates_bucket(64), 64);
        CU_ASSERT_EQUAL(ks_rates_bucket(65), 64);
        CU_ASSERT_EQUAL(ks_rates_bucket(66), 65);
        /* 100: e = 6, (100>>1) - 32 = 18 -> bucket 82 = [100, 101] */
        CU_ASSERT_EQUAL(ks_rates_bucket(100), 82);
        lo = ks_rates_bucket_lo(82, &hi);
        CU_ASSERT_EQUAL(lo, 100);
        CU_ASSERT_EQUAL(hi, 101);
        /* 5000: e = 12 (4096 <= 5000 < 8192), width 2^7 = 128,
         * 5000>>7 = 39, sub 7 -> bucket 64 + (12-6) 32 + 7 = 263 =
         * [39 x 128, 40 x 128 - 1] = [4992, 5119] */
        CU_ASSERT_EQUAL(ks_rates_bucket(5000), 263);
        lo = ks_rates_bucket_lo(263, &hi);
        CU_ASSERT_EQUAL(lo, 4992);
        CU_ASSERT_EQUAL(hi, 5119);
        /* the buckets tile [0, 2^40) without gap or overlap, each within
         * 1/32 of its lower end */
        for (b = 0; b + 1 < KS_RATES_BUCKETS; b++) {
                uint64_t nhi;
                lo = ks_rates_bucket_lo(b, &hi);
                CU_ASSERT_EQUAL(ks_rates_bucket_lo(b + 1, &nhi), hi + 1);
                CU_ASSERT_EQUAL(ks_rates_bucket(lo), b);
                CU_ASSERT_EQUAL(ks_rates_bucket(hi), b);
                CU_ASSERT((double)(hi - lo) < (double)lo / 32.0 + 1e-9 ||
                          lo == hi);
        }
        lo = ks_rates_bucket_lo(KS_RATES_BUCKETS - 1, &hi);
        CU_ASSERT_EQUAL(lo, (1ull << 40) - (1ull << 34)); /* 63 x 2^34 */
        CU_ASSERT_EQUAL(hi, UINT64_MAX);
        /* 2^40 and beyond share the last bucket */
        CU_ASSERT_EQUAL(ks_rates_bucket((1ull << 40) - 1),
                        KS_RATES_BUCKETS - 1);
        CU_ASSERT_EQUAL(ks_rates_bucket(1ull << 40), KS_RATES_BUCKETS - 1);
        CU_ASSERT_EQUAL(ks_rates_bucket(UINT64_MAX), KS_RATES_BUCKETS - 1);
        CU_ASSERT_EQUAL(KS_RATES_BUCKETS, 64 + 34 * 32);
}

static void test_zero_traffic(void)
{
        ks_rates_t         r;
        ks_rates_summary_t s;

        ks_rates_init(&r, T0);
        ks_rates_summarize(&r, T0, &s); /* no time has passed */
        CU_ASSERT_EQUAL(s.elapsed_s, 0);
        CU_ASSERT_EQUAL(s.msgs_per_s, 0);
        CU_ASSERT_EQUAL(s.seconds, 0);
        CU_ASSERT_EQUAL(s.peak_msgs_per_s, 0);
        CU_ASSERT_EQUAL(s.peak_to_mean, 0);
        /* 10 idle seconds: ten zero seconds, no division by zero */
        ks_rates_summarize(&r, T0 + 10000, &s);
        CU_ASSERT_EQUAL(s.seconds, 10);
        CU_ASSERT_DOUBLE_EQUAL(s.elapsed_s, 10.0, 1e-12);
        CU_ASSERT_EQUAL(s.msgs_per_s, 0);
        CU_ASSERT_EQUAL(s.mean_msgs_per_s, 0);
        CU_ASSERT_EQUAL(s.peak_msgs_per_s, 0);
        CU_ASSERT_EQUAL(s.peak_bytes_per_s, 0);
        CU_ASSERT_EQUAL(s.peak_to_mean, 0);
        CU_ASSERT_EQUAL(
            ks_rates_quantile(&r, T0 + 10000, KS_RATES_MSGS, 1000000), 0);
        /* a time before the start counts as the start */
        ks_rates_summarize(&r, T0 - 5000, &s);
        CU_ASSERT_EQUAL(s.seconds, 0);
        CU_ASSERT_EQUAL(s.elapsed_s, 0);
}

static void test_steady(void)
{
        ks_rates_t         r;
        ks_rates_summary_t s;
        int64_t            sec;

        /* 100 messages of 10 bytes in each of 60 seconds */
        ks_rates_init(&r, T0);
        for (sec = 0; sec < 60; sec++)
                add_second(&r, sec, 100, 10);
        /* at T0 + 60 s all 60 seconds are complete:
         * since start 6000 / 60 = 100 msgs/s, 60000 / 60 = 1000 B/s;
         * every second is 100, so peak = mean = 100, ratio 1;
         * 1000 B/s is in bucket [992, 1007] (e = 9, width 16), capped at
         * the exact maximum 1000 */
        ks_rates_summarize(&r, T0 + 60000, &s);
        CU_ASSERT_EQUAL(s.seconds, 60);
        CU_ASSERT_DOUBLE_EQUAL(s.msgs_per_s, 100.0, 1e-9);
        CU_ASSERT_DOUBLE_EQUAL(s.bytes_per_s, 1000.0, 1e-9);
        CU_ASSERT_DOUBLE_EQUAL(s.mean_msgs_per_s, 100.0, 1e-9);
        CU_ASSERT_EQUAL(s.peak_msgs_per_s, 100);
        CU_ASSERT_EQUAL(s.max_msgs_per_s, 100);
        CU_ASSERT_EQUAL(s.peak_bytes_per_s, 1000);
        CU_ASSERT_DOUBLE_EQUAL(s.peak_to_mean, 1.0, 1e-12);
        /* the interval is the whole run until the first mark */
        CU_ASSERT_DOUBLE_EQUAL(s.interval_s, 60.0, 1e-12);
        CU_ASSERT_DOUBLE_EQUAL(s.interval_msgs_per_s, 100.0, 1e-9);
}

static void test_second_in_progress(void)
{
        ks_rates_t         r;
        ks_rates_summary_t s;

        ks_rates_init(&r, T0);
        ks_rates_add(&r, T0 + 100, 1);
        ks_rates_add(&r, T0 + 500, 1); /* 2 messages in second 0 */
        /* at 900 ms second 0 is still in progress: no completed second,
         * but the since-start rate is 2 / 0.9 s */
        ks_rates_summarize(&r, T0 + 900, &s);
        CU_ASSERT_EQUAL(s.seconds, 0);
        CU_ASSERT_EQUAL(s.peak_msgs_per_s, 0);
        CU_ASSERT_DOUBLE_EQUAL(s.msgs_per_s, 2 / 0.9, 1e-9);
        /* at 1000 ms it is complete, though no message closed it */
        ks_rates_summarize(&r, T0 + 1000, &s);
        CU_ASSERT_EQUAL(s.seconds, 1);
        CU_ASSERT_EQUAL(s.peak_msgs_per_s, 2);
        CU_ASSERT_DOUBLE_EQUAL(s.mean_msgs_per_s, 2.0, 1e-12);
        /* summarize did not change the series */
        CU_ASSERT_EQUAL(r.sec, 0);
        CU_ASSERT_EQUAL(r.sec_msgs, 2);
}

static void test_idle_gap(void)
{
        ks_rates_t         r;
        ks_rates_summary_t s;

        /* 10 messages in second 0, nothing, 10 in second 100; at 101 s:
         * 101 seconds, 2 of 10 and 99 of 0. mean = 20 / 101;
         * rank = ceil(0.999 x 101) = ceil(100.899) = 101 -> the largest,
         * 10; peak / mean = 10 / (20/101) = 50.5 */
        ks_rates_init(&r, T0);
        add_second(&r, 0, 10, 1);
        add_second(&r, 100, 10, 1);
        ks_rates_summarize(&r, T0 + 101000, &s);
        CU_ASSERT_EQUAL(s.seconds, 101);
        CU_ASSERT_EQUAL(r.hist_msgs.seconds[0], 99);
        CU_ASSERT_EQUAL(r.hist_msgs.seconds[10], 1); /* second 100 pending */
        CU_ASSERT_DOUBLE_EQUAL(s.mean_msgs_per_s, 20.0 / 101, 1e-12);
        CU_ASSERT_EQUAL(s.peak_msgs_per_s, 10);
        CU_ASSERT_DOUBLE_EQUAL(s.peak_to_mean, 50.5, 1e-9);
        /* the median second is idle */
        CU_ASSERT_EQUAL(
            ks_rates_quantile(&r, T0 + 101000, KS_RATES_MSGS, 500000), 0);
}

/** @brief The bursty series: 10000 s of 100 msgs, except @p bursts seconds
 *         of 5000 (seconds 500, 1500, ...) and, if @p big, second 9999 at
 *         6000. */
static void bursty(ks_rates_t *r, int bursts, int big)
{
        int64_t sec;

        ks_rates_init(r, T0);
        for (sec = 0; sec < 10000; sec++) {
                uint64_t n = 100;
                if (sec % 1000 == 500 && sec / 1000 < bursts)
                        n = 5000;
                if (big && sec == 9999)
                        n = 6000;
                add_second(r, sec, n, 100);
        }
}

static void test_bursty_quantile(void)
{
        ks_rates_t         r;
        ks_rates_summary_t s;

        /* 10 bursts of 5000 + one of 6000 in 10000 s: rank = ceil(0.999 x
         * 10000) = 9990; sorted, 9989 seconds of 100 come first, so the
         * 9990th is the first 5000. Its bucket [4992, 5119] reports 5119
         * (the maximum, 6000, does not cap it): 2.4 % above 5000, within
         * the 1/32 bound.
         * mean = (9989 x 100 + 10 x 5000 + 6000) / 10000 = 105.49;
         * peak / mean = 5119 / 105.49 */
        bursty(&r, 10, 1);
        ks_rates_summarize(&r, T0 + 10000 * 1000, &s);
        CU_ASSERT_EQUAL(s.seconds, 10000);
        CU_ASSERT_EQUAL(s.peak_msgs_per_s, 5119);
        CU_ASSERT_EQUAL(s.max_msgs_per_s, 6000);
        CU_ASSERT_DOUBLE_EQUAL(s.mean_msgs_per_s, 105.49, 1e-9);
        CU_ASSERT_DOUBLE_EQUAL(s.peak_to_mean, 5119 / 105.49, 1e-9);
        CU_ASSERT(s.peak_to_mean > 4); /* PEAK_TO_MEAN_HIGH */
        /* bytes: 100 B each, so 500000 B/s in the 9990th second:
         * e = 18, width 2^13 = 8192, 500000 >> 13 = 61 ->
         * [61 x 8192, 62 x 8192 - 1] = [499712, 507903] */
        CU_ASSERT_EQUAL(s.peak_bytes_per_s, 507903);

        /* 10 bursts of 5000 and no big one: 9990 seconds of 100, so the
         * 9990th smallest is 100: the 0.999 quantile ignores one second
         * in a thousand. 100 is in bucket [100, 101] (see the layout
         * test), reported as 101 (1 % high, never low).
         * peak/mean = 101 / ((9990 x 100 + 50000) / 10000) = 101 / 104.9 */
        bursty(&r, 10, 0);
        ks_rates_summarize(&r, T0 + 10000 * 1000, &s);
        CU_ASSERT_EQUAL(s.peak_msgs_per_s, 101);
        CU_ASSERT_EQUAL(s.max_msgs_per_s, 5000);
        CU_ASSERT_DOUBLE_EQUAL(s.peak_to_mean, 101 / 104.9, 1e-9);
        CU_ASSERT(s.peak_to_mean < 4);

        /* exactly at the cap: 10 bursts of 5000 + 6000 but asked 0.9999:
         * rank = ceil(0.9999 x 10000) = 9999 -> still a 5000 -> 5119;
         * 1.0: rank 10000 -> 6000, the exact maximum (its bucket
         * [5888, 6015] is capped at 6000) */
        bursty(&r, 10, 1);
        CU_ASSERT_EQUAL(
            ks_rates_quantile(&r, T0 + 10000 * 1000, KS_RATES_MSGS, 999900),
            5119);
        CU_ASSERT_EQUAL(
            ks_rates_quantile(&r, T0 + 10000 * 1000, KS_RATES_MSGS, 1000000),
            6000);
        /* 0 ppm: rank 1, the smallest: 100, in bucket [100, 101] -> 101 */
        CU_ASSERT_EQUAL(
            ks_rates_quantile(&r, T0 + 10000 * 1000, KS_RATES_MSGS, 0), 101);
}

/** @returns a uniform double in [0, 1) from a splitmix64 stream. */
static double uniform(uint64_t *state)
{
        uint64_t x = (*state += 0x9E3779B97F4A7C15ull);
        x          = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
        x          = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
        return (double)((x ^ (x >> 31)) >> 11) * 0x1p-53;
}

static void test_random_vs_exact(void)
{
        static const uint32_t ppms[] = {500000, 900000, 990000, 999000,
                                        1000000};
        uint64_t              seed   = 7;
        int                   round;

        /* Pareto-tailed per-second counts (alpha 1.2, scale 20), some idle
         * seconds, n = 3000 s: the histogram quantile against the exact
         * nearest-rank one */
        for (round = 0; round < 5; round++) {
                enum { N = 3000 };
                static uint64_t counts[N], sorted[N];
                ks_rates_t      r;
                size_t          i, q;

                ks_rates_init(&r, T0);
                for (i = 0; i < N; i++) {
                        double u = uniform(&seed);
                        counts[i] =
                            u < 0.1
                                ? 0
                                : (uint64_t)(20.0 * pow(1.0 - uniform(&seed),
                                                        -1.0 / 1.2));
                        /* one message carrying the second's count as bytes,
                         * then the remaining messages (bytes 0) */
                        if (counts[i]) {
                                ks_rates_add(&r, T0 + (int64_t)i * 1000, 0);
                                r.sec_msgs += counts[i] - 1; /* white box:
                                                       * avoid 10^8 calls */
                                r.msgs += counts[i] - 1;
                        }
                }
                memcpy(sorted, counts, sizeof(sorted));
                qsort(sorted, N, sizeof(*sorted), cmp_u64);
                for (q = 0; q < sizeof(ppms) / sizeof(*ppms); q++) {
                        uint64_t rank =
                            ((uint64_t)N * ppms[q] + 999999) / 1000000;
                        uint64_t truth = sorted[(rank ? rank : 1) - 1];
                        uint64_t got   = ks_rates_quantile(
                              &r, T0 + N * 1000, KS_RATES_MSGS, ppms[q]);
                        CU_ASSERT(got >= truth);
                        CU_ASSERT((double)got <
                                      (double)truth * (1.0 + 1.0 / 32) + 1e-9 ||
                                  got == truth);
                        if (truth < 64)
                                CU_ASSERT_EQUAL(got, truth);
                }
        }
}

static void test_interval_mark(void)
{
        ks_rates_t         r;
        ks_rates_summary_t s;
        int64_t            sec;

        /* 10 msgs/s for 10 s, mark at 10 s, 30 msgs/s for 10 s:
         * interval = 300 / 10 = 30 msgs/s; since start = 400 / 20 = 20 */
        ks_rates_init(&r, T0);
        for (sec = 0; sec < 10; sec++)
                add_second(&r, sec, 10, 2);
        ks_rates_mark(&r, T0 + 10000);
        for (sec = 10; sec < 20; sec++)
                add_second(&r, sec, 30, 2);
        ks_rates_summarize(&r, T0 + 20000, &s);
        CU_ASSERT_DOUBLE_EQUAL(s.interval_s, 10.0, 1e-12);
        CU_ASSERT_DOUBLE_EQUAL(s.interval_msgs_per_s, 30.0, 1e-9);
        CU_ASSERT_DOUBLE_EQUAL(s.interval_bytes_per_s, 60.0, 1e-9);
        CU_ASSERT_DOUBLE_EQUAL(s.msgs_per_s, 20.0, 1e-9);
        /* summarising at the mark itself: an empty interval, no NaN */
        ks_rates_mark(&r, T0 + 20000);
        ks_rates_summarize(&r, T0 + 20000, &s);
        CU_ASSERT_EQUAL(s.interval_s, 0);
        CU_ASSERT_EQUAL(s.interval_msgs_per_s, 0);
}

static void test_time_backwards(void)
{
        ks_rates_t         r;
        ks_rates_summary_t s;

        /* a message at 5.2 s, then one stamped 3 s: counted in second 5,
         * not in a second that is already closed */
        ks_rates_init(&r, T0);
        ks_rates_add(&r, T0 + 5200, 1);
        ks_rates_add(&r, T0 + 3000, 1);
        ks_rates_add(&r, T0 - 1000, 1); /* before the start: second 5 too */
        CU_ASSERT_EQUAL(r.sec, 5);
        CU_ASSERT_EQUAL(r.sec_msgs, 3);
        ks_rates_summarize(&r, T0 + 6000, &s);
        CU_ASSERT_EQUAL(s.seconds, 6);
        CU_ASSERT_EQUAL(s.peak_msgs_per_s, 3);
        CU_ASSERT_EQUAL(r.hist_msgs.seconds[0], 5);
}

static void test_huge_counts(void)
{
        ks_rates_t         r;
        ks_rates_summary_t s;

        /* 2^41 messages in one second (set directly) and 2^40 bytes per
         * message: both beyond the resolved range, so the quantile is the
         * exact maximum */
        ks_rates_init(&r, T0);
        ks_rates_add(&r, T0, 1ull << 40);
        ks_rates_add(&r, T0 + 1, 1ull << 40); /* 2^41 bytes in second 0 */
        r.sec_msgs = 1ull << 41;
        r.msgs     = 1ull << 41;
        ks_rates_add(&r, T0 + 1000, 1); /* closes second 0 */
        ks_rates_summarize(&r, T0 + 2000, &s);
        CU_ASSERT_EQUAL(s.seconds, 2);
        CU_ASSERT_EQUAL(s.max_msgs_per_s, 1ull << 41);
        CU_ASSERT_EQUAL(
            ks_rates_quantile(&r, T0 + 2000, KS_RATES_MSGS, 1000000),
            1ull << 41);
        CU_ASSERT_EQUAL(
            ks_rates_quantile(&r, T0 + 2000, KS_RATES_BYTES, 1000000),
            1ull << 41);
        /* the second smallest of 2 at 0.5: rank 1 -> second 1's 1 msg */
        CU_ASSERT_EQUAL(ks_rates_quantile(&r, T0 + 2000, KS_RATES_MSGS, 500000),
                        1);
        /* an idle gap of 10^9 seconds is one O(1) update */
        ks_rates_add(&r, T0 + 1000000000000ll, 1);
        CU_ASSERT_EQUAL(r.sec, 1000000000);
        CU_ASSERT_EQUAL(r.hist_msgs.seconds[0], 1000000000 - 2);
}

void ks_test_register(void)
{
        KS_ADD_SUITE("rates", {"bucket layout", test_bucket_layout},
                     {"zero traffic", test_zero_traffic},
                     {"steady series", test_steady},
                     {"second in progress", test_second_in_progress},
                     {"idle gap", test_idle_gap},
                     {"bursty 0.999 quantile", test_bursty_quantile},
                     {"random series vs exact quantile", test_random_vs_exact},
                     {"interval mark", test_interval_mark},
                     {"time going backwards", test_time_backwards},
                     {"huge counts", test_huge_counts});
}
