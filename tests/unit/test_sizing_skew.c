/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_sizing_skew.c
 * @brief ks_sizing's skew figures (core/report/ks_sizing_skew.c) and
 *        powers of two: medians by selection and by counting against a
 *        sort, spreads, key skew and loads from the key sample, worked
 *        out by hand (the other formulas: test_sizing.c).
 */
#include "ks_test.h"

#include "ks_hash.h"
#include "ks_partitioner.h"
#include "ks_sizing.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EPS 1e-9

/* ------------------------------------------------------------------ */
/* Skew                                                                 */
/* ------------------------------------------------------------------ */

static int cmp_u64_asc(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
        return x < y ? -1 : x > y;
}

/** Small loads are counted per value (select_median()'s histogram), the
 *  others selected by digits: both give the sorted answer, at the
 *  boundaries between them too (max 4 x n, max 4,095 and 4,096). */
static void test_spread_histogram(void)
{
        static uint64_t v[2048], w[2048];
        uint64_t        x = 0x2545f4914f6cdd1dull;
        size_t          n, i, round;

        for (round = 0; round < 600; round++) {
                ks_sizing_spread_t s;
                uint64_t           mods[] = {2,
                                             4 * (uint64_t)(1 + round % 2048) + 1,
                                             4 * (uint64_t)(1 + round % 2048) + 2,
                                             4096,
                                             4097,
                                             100000};
                uint64_t           mod    = mods[round % 6];
                double             median;
                n = 1 + (round * 37) % 2048;
                if (round % 6 == 1 || round % 6 == 2)
                        n = 1 + round % 2048;
                for (i = 0; i < n; i++) {
                        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                        v[i] = x % mod;
                        w[i] = v[i];
                }
                qsort(w, n, sizeof(*w), cmp_u64_asc);
                median = n % 2 ? (double)w[n / 2]
                               : ((double)w[n / 2 - 1] + (double)w[n / 2]) / 2;
                ks_sizing_spread(v, n, 2.5, &s);
                CU_ASSERT_EQUAL(s.median, median);
                CU_ASSERT_EQUAL(s.min, w[0]);
                CU_ASSERT_EQUAL(s.max, w[n - 1]);
        }
}

/** The median is found by selection, not sorting: compare it with the
 *  sorted answer on random arrays, with and without many ties. */
static void test_spread_random(void)
{
        uint64_t v[257], w[257], x = 0x9e3779b97f4a7c15ull;
        size_t   n, i, round;

        for (round = 0; round < 2000; round++) {
                ks_sizing_spread_t s;
                double             median;
                n = 1 + round % 257;
                for (i = 0; i < n; i++) {
                        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                        v[i] = round % 3 ? x % (round % 2 ? 5 : 1000) : x;
                        w[i] = v[i];
                }
                qsort(w, n, sizeof(*w), cmp_u64_asc);
                median = n % 2 ? (double)w[n / 2]
                               : ((double)w[n / 2 - 1] + (double)w[n / 2]) / 2;
                ks_sizing_spread(v, n, 2.5, &s);
                CU_ASSERT_DOUBLE_EQUAL(s.median, median, 1e-6);
                CU_ASSERT_EQUAL(s.min, w[0]);
                CU_ASSERT_EQUAL(s.max, w[n - 1]);
        }
}

static void test_spread(void)
{
        ks_sizing_spread_t s;

        { /* odd: sorted 1 2 3 4 10, median 3, 10/3; 10 > 2.5 x 3 */
                uint64_t v[] = {10, 3, 1, 4, 2};
                ks_sizing_spread(v, 5, 2.5, &s);
                CU_ASSERT_EQUAL(s.max, 10);
                CU_ASSERT_EQUAL(s.min, 1);
                CU_ASSERT_DOUBLE_EQUAL(s.median, 3, EPS);
                CU_ASSERT_DOUBLE_EQUAL(s.max_over_median, 10.0 / 3, EPS);
                CU_ASSERT_FALSE(s.within_limit);
                /* the values stay (selection may reorder, not change) */
                CU_ASSERT_EQUAL(v[0] + v[1] + v[2] + v[3] + v[4], 20);
        }
        { /* even: 1 2 3 4, median (2+3)/2 = 2.5, 4/2.5 = 1.6 */
                uint64_t v[] = {4, 1, 3, 2};
                ks_sizing_spread(v, 4, 2.5, &s);
                CU_ASSERT_DOUBLE_EQUAL(s.median, 2.5, EPS);
                CU_ASSERT_DOUBLE_EQUAL(s.max_over_median, 1.6, EPS);
                CU_ASSERT_TRUE(s.within_limit);
        }
        { /* exactly 2.5x: 5 <= 2.5 x 2 holds (the limit is inclusive) */
                uint64_t v[] = {2, 5, 2};
                ks_sizing_spread(v, 3, 2.5, &s);
                CU_ASSERT_DOUBLE_EQUAL(s.max_over_median, 2.5, EPS);
                CU_ASSERT_TRUE(s.within_limit);
        }
        { /* one partition: its own median */
                uint64_t v[] = {7};
                ks_sizing_spread(v, 1, 2.5, &s);
                CU_ASSERT_DOUBLE_EQUAL(s.max_over_median, 1, EPS);
                CU_ASSERT_TRUE(s.within_limit);
        }
        { /* no traffic: 0, within (0 <= 0) */
                uint64_t v[] = {0, 0, 0};
                ks_sizing_spread(v, 3, 2.5, &s);
                CU_ASSERT_EQUAL(s.max_over_median, 0);
                CU_ASSERT_TRUE(s.within_limit);
        }
        { /* most partitions idle: median 0, busiest 5: infinite */
                uint64_t v[] = {0, 5, 0};
                ks_sizing_spread(v, 3, 2.5, &s);
                CU_ASSERT(isinf(s.max_over_median));
                CU_ASSERT_FALSE(s.within_limit);
        }
        { /* huge counts: no overflow in the even median */
                uint64_t v[] = {UINT64_MAX, UINT64_MAX - 1, 1, UINT64_MAX};
                ks_sizing_spread(v, 4, 2.5, &s);
                CU_ASSERT_DOUBLE_EQUAL(s.median, 1.8446744073709552e19, 1e5);
                CU_ASSERT_DOUBLE_EQUAL(s.max_over_median, 1.0, EPS);
        }
        /* no partitions at all */
        ks_sizing_spread(NULL, 0, 2.5, &s);
        CU_ASSERT_EQUAL(s.max_over_median, 0);
        CU_ASSERT_TRUE(s.within_limit);
}

static void test_key_skew(void)
{
        { /* the busiest hot key 1000; sample 1 2 3 5 8, median 3:
                 * 1000 / 3 */
                uint64_t v[] = {5, 1, 8, 3, 2};
                CU_ASSERT_DOUBLE_EQUAL(ks_sizing_key_skew(1000, v, 5),
                                       1000.0 / 3, EPS);
        }
        { /* busiest unknown (0): the sample's own maximum, 8 / 3 */
                uint64_t v[] = {5, 1, 8, 3, 2};
                CU_ASSERT_DOUBLE_EQUAL(ks_sizing_key_skew(0, v, 5), 8.0 / 3,
                                       EPS);
        }
        { /* one key */
                uint64_t v[] = {42};
                CU_ASSERT_DOUBLE_EQUAL(ks_sizing_key_skew(42, v, 1), 1, EPS);
        }
        /* no keys */
        CU_ASSERT_EQUAL(ks_sizing_key_skew(100, NULL, 0), 0);
}

static void test_sample_loads(void)
{
        /* phash 0..7 with messages 1..8 at 4 partitions (phash % 4):
         * p0 = 1 + 5, p1 = 2 + 6, p2 = 3 + 7, p3 = 4 + 8 */
        uint32_t ph[]  = {0, 1, 2, 3, 4, 5, 6, 7};
        uint64_t msg[] = {1, 2, 3, 4, 5, 6, 7, 8};
        uint64_t loads[4];
        uint32_t big[] = {0xffffffffu}; /* unsigned remainder: */
        uint64_t one[] = {1};           /* 4294967295 % 6 = 3 */
        uint64_t l6[6];

        ks_sizing_sample_loads(ph, msg, 8, 4, loads);
        CU_ASSERT_EQUAL(loads[0], 6);
        CU_ASSERT_EQUAL(loads[1], 8);
        CU_ASSERT_EQUAL(loads[2], 10);
        CU_ASSERT_EQUAL(loads[3], 12);
        ks_sizing_sample_loads(big, one, 1, 6, l6);
        CU_ASSERT_EQUAL(l6[3], 1);
        CU_ASSERT_EQUAL(l6[0] + l6[1] + l6[2] + l6[4] + l6[5], 0);
        /* the model's own partition function agrees */
        CU_ASSERT_EQUAL(ks_partition_of(0xffffffffu, 6), 3);
}

static void test_pow2(void)
{
        CU_ASSERT_EQUAL(ks_sizing_next_pow2(-5), 1);
        CU_ASSERT_EQUAL(ks_sizing_next_pow2(0), 1);
        CU_ASSERT_EQUAL(ks_sizing_next_pow2(1), 1);
        CU_ASSERT_EQUAL(ks_sizing_next_pow2(2), 2);
        CU_ASSERT_EQUAL(ks_sizing_next_pow2(3), 4);
        CU_ASSERT_EQUAL(ks_sizing_next_pow2(12), 16);
        CU_ASSERT_EQUAL(ks_sizing_next_pow2(16), 16);
        CU_ASSERT_EQUAL(ks_sizing_next_pow2(100000), 131072);
        CU_ASSERT_EQUAL(ks_sizing_next_pow2(INT64_MAX), (int64_t)1 << 62);
        CU_ASSERT_FALSE(ks_sizing_is_pow2(0));
        CU_ASSERT_TRUE(ks_sizing_is_pow2(1));
        CU_ASSERT_FALSE(ks_sizing_is_pow2(6));
        CU_ASSERT_TRUE(ks_sizing_is_pow2(1024));
        CU_ASSERT_FALSE(ks_sizing_is_pow2(-4));
}

void ks_test_register(void)
{
        KS_ADD_SUITE(
            "skew", {"spread and partition skew", test_spread},
            {"median by selection = sorted median", test_spread_random},
            {"median by counting = sorted median", test_spread_histogram},
            {"key skew", test_key_skew},
            {"loads from the key sample", test_sample_loads},
            {"powers of two", test_pow2});
}
