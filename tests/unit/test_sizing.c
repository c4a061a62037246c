/**
 * @file test_sizing.c
 * @brief ks_sizing and ks_sizing_json: every formula against cases worked
 *        out by hand (the arithmetic is in the comments), the edge cases
 *        (no traffic, one key, one partition, huge counts), and hot-key
 *        recall on a Zipf stream through the real Space-Saving summary
 *        (ks_topk) with the plugin's default capacity.
 */
#include "ks_test.h"
#include "ks_test_warn.h"

#include "ks_hash.h"
#include "ks_partitioner.h"
#include "ks_sizing.h"
#include "ks_sizing_json.h"
#include "ks_topk.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EPS 1e-9

static ks_sizing_params_t defaults(void)
{
        ks_sizing_params_t p;
        ks_sizing_params_init(&p);
        return p;
}

/* ------------------------------------------------------------------ */
/* Parameters                                                           */
/* ------------------------------------------------------------------ */

static void test_params(void)
{
        ks_sizing_params_t p = defaults();
        char               err[256];
        size_t             n = 0;

        CU_ASSERT_EQUAL(p.partition_target_msgs_per_s, 0);
        CU_ASSERT_EQUAL(p.consumers_max, 0);
        CU_ASSERT_EQUAL(p.consumer_msgs_per_s, 0);
        CU_ASSERT_EQUAL(p.rebalance_ms_per_partition, 4);
        CU_ASSERT_EQUAL(p.rebalances_per_day, 6);
        CU_ASSERT_EQUAL(p.rebalance_stall_warn_s, 30);
        CU_ASSERT_EQUAL(p.peak_to_mean_warn, 4);
        CU_ASSERT_EQUAL(p.partition_skew_max, 2.5);
        CU_ASSERT_EQUAL(p.producer_throughput_mb_per_s, 10);
        CU_ASSERT_EQUAL(p.consumer_throughput_mb_per_s, 20);
        CU_ASSERT_EQUAL(p.broker_file_handles_max, 10000);
        CU_ASSERT_EQUAL(p.replication_latency_ms_per_partition, 1);
        CU_ASSERT_EQUAL(p.replication_latency_max_ms, 200);
        CU_ASSERT_EQUAL(p.unavailability_ms_per_partition, 5);
        CU_ASSERT_EQUAL(p.unavailability_max_ms, 2000);
        CU_ASSERT_EQUAL(p.producers_metadata_max_age_ms, 300000);
        CU_ASSERT_EQUAL(p.consumer_lag_ms, 0);
        while (ks_sizing_param_descs[n].name)
                n++;
        /* one property per field of the struct, all doubles */
        CU_ASSERT_EQUAL(n, sizeof(ks_sizing_params_t) / sizeof(double));

        CU_ASSERT_EQUAL(ks_sizing_params_set(&p, "keyshift.consumers.max", "24",
                                             err, sizeof(err)),
                        0);
        CU_ASSERT_EQUAL(p.consumers_max, 24);
        CU_ASSERT_EQUAL(
            ks_sizing_params_set(&p, "keyshift.partition.target.msgs.per.s",
                                 "1e3 ", err, sizeof(err)),
            0);
        CU_ASSERT_EQUAL(p.partition_target_msgs_per_s, 1000);
        CU_ASSERT_EQUAL(ks_sizing_params_set(
                            &p, "keyshift.replication.latency.ms.per.partition",
                            "0.02", err, sizeof(err)),
                        0);
        CU_ASSERT_DOUBLE_EQUAL(p.replication_latency_ms_per_partition, 0.02,
                               EPS);
        /* refused: fractions of a whole-number property, out of range,
         * junk, empty; errstr names the property and the range */
        err[0] = 0;
        CU_ASSERT_EQUAL(ks_sizing_params_set(&p, "keyshift.consumers.max",
                                             "2.5", err, sizeof(err)),
                        1);
        CU_ASSERT_PTR_NOT_NULL(strstr(err, "keyshift.consumers.max"));
        CU_ASSERT_PTR_NOT_NULL(strstr(err, "0 (unknown) .. 100000"));
        CU_ASSERT_EQUAL(ks_sizing_params_set(&p, "keyshift.consumers.max", "-1",
                                             err, sizeof(err)),
                        1);
        CU_ASSERT_EQUAL(ks_sizing_params_set(&p, "keyshift.peak.to.mean.warn",
                                             "0.5", err, sizeof(err)),
                        1);
        CU_ASSERT_EQUAL(ks_sizing_params_set(&p, "keyshift.peak.to.mean.warn",
                                             "4x", err, sizeof(err)),
                        1);
        CU_ASSERT_EQUAL(ks_sizing_params_set(&p, "keyshift.peak.to.mean.warn",
                                             "", err, sizeof(err)),
                        1);
        CU_ASSERT_EQUAL(ks_sizing_params_set(&p, "keyshift.peak.to.mean.warn",
                                             "nan", err, sizeof(err)),
                        1);
        CU_ASSERT_EQUAL(p.consumers_max, 24); /* unchanged by the refusals */
        CU_ASSERT_EQUAL(p.peak_to_mean_warn, 4);
        /* not a sizing property: left to the caller */
        err[0] = 'x';
        CU_ASSERT_EQUAL(ks_sizing_params_set(&p, "keyshift.hot.keys", "20", err,
                                             sizeof(err)),
                        -1);
        CU_ASSERT_EQUAL(err[0], 'x');
}

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

/* ------------------------------------------------------------------ */
/* Hot keys                                                             */
/* ------------------------------------------------------------------ */

static void test_target_rate(void)
{
        ks_sizing_params_t p = defaults();

        /* fair share: 1200 msgs/s over 12 partitions = 100 */
        CU_ASSERT_DOUBLE_EQUAL(ks_sizing_target_rate(&p, 1200, 12), 100, EPS);
        CU_ASSERT_EQUAL(ks_sizing_target_rate(&p, 1200, 0), 0);
        CU_ASSERT_EQUAL(ks_sizing_target_rate(&p, 0, 12), 0);
        /* the property wins when set */
        p.partition_target_msgs_per_s = 500;
        CU_ASSERT_DOUBLE_EQUAL(ks_sizing_target_rate(&p, 1200, 12), 500, EPS);
}

static void test_hot_key_verdict(void)
{
        ks_sizing_hot_verdict_t v;

        /* 250 msgs/s of a 1200 msgs/s topic, in a 400 msgs/s partition,
         * target 100: share 250/1200 = 0.2083, of partition 250/400 =
         * 0.625, not fixable, ceil(250/100) = ceil(2.5) = 3 buckets */
        ks_sizing_hot_key(250, 1200, 400, 100, &v);
        CU_ASSERT_DOUBLE_EQUAL(v.share_of_topic, 250.0 / 1200, EPS);
        CU_ASSERT_DOUBLE_EQUAL(v.share_of_partition, 0.625, EPS);
        CU_ASSERT_FALSE(v.fixable_by_partitions);
        CU_ASSERT_EQUAL(v.salt_buckets, 3);
        /* exactly at target: fixable, one bucket */
        ks_sizing_hot_key(100, 1200, 400, 100, &v);
        CU_ASSERT_TRUE(v.fixable_by_partitions);
        CU_ASSERT_EQUAL(v.salt_buckets, 1);
        /* just above: 100.5 / 100 -> 2 */
        ks_sizing_hot_key(100.5, 1200, 400, 100, &v);
        CU_ASSERT_FALSE(v.fixable_by_partitions);
        CU_ASSERT_EQUAL(v.salt_buckets, 2);
        /* 300 / 100 = 3 exactly -> 3, not 4 */
        ks_sizing_hot_key(300, 1200, 400, 100, &v);
        CU_ASSERT_EQUAL(v.salt_buckets, 3);
        /* floating-point noise: 1.1 / 0.1 = 11.000000000000002 in
         * binary; ceil of that would be 12: 11 buckets suffice */
        ks_sizing_hot_key(1.1, 10, 0, 0.1, &v);
        CU_ASSERT_EQUAL(v.salt_buckets, 11);
        /* a share above 1 (overestimated count) is capped */
        ks_sizing_hot_key(150, 100, 100, 1000, &v);
        CU_ASSERT_DOUBLE_EQUAL(v.share_of_topic, 1.0, EPS);
        CU_ASSERT_DOUBLE_EQUAL(v.share_of_partition, 1.0, EPS);
        /* partition unknown */
        ks_sizing_hot_key(10, 100, -1, 1000, &v);
        CU_ASSERT_EQUAL(v.share_of_partition, 0);
        /* no traffic at all */
        ks_sizing_hot_key(0, 0, 0, 0, &v);
        CU_ASSERT_TRUE(v.fixable_by_partitions);
        CU_ASSERT_EQUAL(v.salt_buckets, 1);
        CU_ASSERT_EQUAL(v.share_of_topic, 0);
        /* one key is the whole topic on one partition: fair share = topic
         * rate, so it is fixable (nothing to spread it against) */
        ks_sizing_hot_key(500, 500, 500, 500, &v);
        CU_ASSERT_TRUE(v.fixable_by_partitions);
        CU_ASSERT_DOUBLE_EQUAL(v.share_of_partition, 1.0, EPS);
        /* huge: 10^30 msgs/s over 1 -> saturates, no UB */
        ks_sizing_hot_key(1e30, 1e30, 1e30, 1, &v);
        CU_ASSERT_EQUAL(v.salt_buckets, UINT64_MAX);
}

static void test_shard(void)
{
        ks_sizing_shard_t       s;
        ks_sizing_hot_verdict_t a = {0.2, 0.5, 0, 3}, b = {0.05, 0.1, 1, 1},
                                c = {0.125, 0.4, 0, 2};

        /* a (250 msgs/s, 1000 msgs so far) and c (150, 600) are routed, b
         * stays: 2 keys, 400 msgs/s = 400/1200 of the topic, 3 + 2 = 5
         * shard partitions, 1600 messages of history left behind */
        memset(&s, 0, sizeof(s));
        ks_sizing_shard_add(&s, &a, 250, 1200, 1000);
        ks_sizing_shard_add(&s, &b, 60, 1200, 500);
        ks_sizing_shard_add(&s, &c, 150, 1200, 600);
        CU_ASSERT_EQUAL(s.keys_routed, 2);
        CU_ASSERT_DOUBLE_EQUAL(s.msgs_per_s_routed, 400, EPS);
        CU_ASSERT_DOUBLE_EQUAL(s.share_of_topic, 400.0 / 1200, EPS);
        CU_ASSERT_EQUAL(s.shard_partitions, 5);
        CU_ASSERT_EQUAL(s.messages_split, 1600);
}

/* ------------------------------------------------------------------ */
/* Floor, skew factor, rebalance                                        */
/* ------------------------------------------------------------------ */

static void test_skew_factor(void)
{
        CU_ASSERT_DOUBLE_EQUAL(ks_sizing_skew_factor(0), 2, EPS);
        CU_ASSERT_DOUBLE_EQUAL(ks_sizing_skew_factor(-3), 2, EPS);
        CU_ASSERT_DOUBLE_EQUAL(ks_sizing_skew_factor(NAN), 2, EPS);
        CU_ASSERT_DOUBLE_EQUAL(ks_sizing_skew_factor(60), 2, EPS); /* 60/30 */
        CU_ASSERT_DOUBLE_EQUAL(ks_sizing_skew_factor(61.5), 2.05, EPS);
        CU_ASSERT_DOUBLE_EQUAL(ks_sizing_skew_factor(90), 3, EPS);
        CU_ASSERT_DOUBLE_EQUAL(ks_sizing_skew_factor(120), 4, EPS);
        CU_ASSERT_DOUBLE_EQUAL(ks_sizing_skew_factor(1e9), 4, EPS);
        CU_ASSERT_DOUBLE_EQUAL(ks_sizing_skew_factor(INFINITY), 4, EPS);
}

static void test_partition_floor(void)
{
        ks_sizing_params_t p = defaults();
        ks_sizing_floor_t  f;

        /* peak 12000, 1000 per consumer, 8 consumers planned, skew 90:
         * max(ceil(12000/1000) = 12, 8) = 12 (throughput) x 90/30 = 3 ->
         * 36 -> 64 */
        p.consumer_msgs_per_s = 1000;
        p.consumers_max       = 8;
        ks_sizing_partition_floor(&p, 12000, 90, 6, &f);
        CU_ASSERT_EQUAL(f.throughput_partitions, 12);
        CU_ASSERT_EQUAL(f.base, 12);
        CU_ASSERT_EQUAL(f.base_source, KS_SIZING_BASE_THROUGHPUT);
        CU_ASSERT_DOUBLE_EQUAL(f.skew_factor, 3, EPS);
        CU_ASSERT_EQUAL(f.partition_floor, 36);
        CU_ASSERT_EQUAL(f.recommended, 64);
        /* 20 consumers planned: max(12, 20) = 20, skew 30 -> 1 -> 2:
         * 40 -> 64 */
        p.consumers_max = 20;
        ks_sizing_partition_floor(&p, 12000, 30, 6, &f);
        CU_ASSERT_EQUAL(f.base, 20);
        CU_ASSERT_EQUAL(f.base_source, KS_SIZING_BASE_CONSUMERS);
        CU_ASSERT_EQUAL(f.partition_floor, 40);
        CU_ASSERT_EQUAL(f.recommended, 64);
        /* skew 150 -> 5 -> 4: with 8 consumers, 12 x 4 = 48 -> 64 */
        p.consumers_max = 8;
        ks_sizing_partition_floor(&p, 12000, 150, 6, &f);
        CU_ASSERT_EQUAL(f.partition_floor, 48);
        /* peak 12001: ceil(12.001) = 13, x 2 = 26 -> 32 */
        ks_sizing_partition_floor(&p, 12001, 10, 6, &f);
        CU_ASSERT_EQUAL(f.throughput_partitions, 13);
        CU_ASSERT_EQUAL(f.partition_floor, 26);
        CU_ASSERT_EQUAL(f.recommended, 32);
        /* nothing configured: today's 6 partitions x 75/30 = 2.5 ->
         * 15 -> 16 */
        p = defaults();
        ks_sizing_partition_floor(&p, 12000, 75, 6, &f);
        CU_ASSERT_EQUAL(f.base_source, KS_SIZING_BASE_CURRENT);
        CU_ASSERT_EQUAL(f.base, 6);
        CU_ASSERT_EQUAL(f.partition_floor, 15);
        CU_ASSERT_EQUAL(f.recommended, 16);
        CU_ASSERT_STRING_EQUAL(ks_sizing_base_name(f.base_source),
                               "current_count");
        /* nothing known at all (no traffic, no count): 1 x 2 = 2 */
        ks_sizing_partition_floor(&p, 0, 0, 0, &f);
        CU_ASSERT_EQUAL(f.base, 1);
        CU_ASSERT_EQUAL(f.partition_floor, 2);
        CU_ASSERT_EQUAL(f.recommended, 2);
        /* per-consumer known, no traffic: ceil(0) = 0 -> base 1 */
        p.consumer_msgs_per_s = 1000;
        ks_sizing_partition_floor(&p, 0, 0, 6, &f);
        CU_ASSERT_EQUAL(f.throughput_partitions, 0);
        CU_ASSERT_EQUAL(f.partition_floor, 2);
        /* huge: 10^15 msgs/s at 1 per consumer, x 2 = 2 x 10^15;
         * 2^50 = 1.13e15 < 2e15 <= 2^51 = 2.25e15 */
        p.consumer_msgs_per_s = 1;
        ks_sizing_partition_floor(&p, 1e15, 0, 6, &f);
        CU_ASSERT_EQUAL(f.partition_floor, 2000000000000000ll);
        CU_ASSERT_EQUAL(f.recommended, (int64_t)1 << 51);
}

static void test_rebalance(void)
{
        ks_sizing_params_t    p = defaults();
        ks_sizing_rebalance_t r;

        /* 64 x 4 ms = 0.256 s; x 6 a day = 1.536 s */
        ks_sizing_rebalance(&p, 64, &r);
        CU_ASSERT_DOUBLE_EQUAL(r.per_rebalance_s, 0.256, EPS);
        CU_ASSERT_DOUBLE_EQUAL(r.per_day_s, 1.536, EPS);
        CU_ASSERT_FALSE(r.high);
        /* 7500 x 4 ms = 30 s: not above 30; 7501 -> 30.004 s: above */
        ks_sizing_rebalance(&p, 7500, &r);
        CU_ASSERT_DOUBLE_EQUAL(r.per_rebalance_s, 30, EPS);
        CU_ASSERT_FALSE(r.high);
        ks_sizing_rebalance(&p, 7501, &r);
        CU_ASSERT_TRUE(r.high);
        CU_ASSERT_DOUBLE_EQUAL(r.per_day_s, 180.024, EPS);
        ks_sizing_rebalance(&p, 0, &r);
        CU_ASSERT_EQUAL(r.per_rebalance_s, 0);
}

/* ------------------------------------------------------------------ */
/* Raptis & Passarella constraints                                      */
/* ------------------------------------------------------------------ */

static void test_constraints(void)
{
        ks_sizing_params_t      p = defaults();
        ks_sizing_constraints_t c;
        const double            T = 50e6; /* 50 MB/s */

        /* P = 12, b = 3, r = 3, T = 50 MB/s, defaults:
         *  throughput: max(50/10, 50/20) = 5 <= 12, utilisation 5/12
         *  consumers: not set
         *  files: 2 x 12 x 3 / 3 = 24 <= 10000
         *  replication: 1 ms x 12 x 3 / 3 = 12 <= 200 ms
         *  unavailability: 5 ms x 12 / 3 = 20 <= 2000 ms
         *  binding: throughput (0.4167 > 0.06 > 0.01 > 0.0024)
         *  fewest brokers: max(r = 3, ceil(72/10000), ceil(36/200),
         *  ceil(60/2000)) = 3 */
        ks_sizing_constraints(&p, 12, 3, 3, T, &c);
        CU_ASSERT_DOUBLE_EQUAL(c.c[KS_CONSTRAINT_THROUGHPUT].limit, 5, EPS);
        CU_ASSERT_DOUBLE_EQUAL(c.c[KS_CONSTRAINT_THROUGHPUT].utilisation,
                               5.0 / 12, EPS);
        CU_ASSERT_FALSE(c.c[KS_CONSTRAINT_CONSUMERS].known);
        CU_ASSERT_DOUBLE_EQUAL(c.c[KS_CONSTRAINT_FILE_HANDLES].value, 24, EPS);
        CU_ASSERT_DOUBLE_EQUAL(c.c[KS_CONSTRAINT_REPLICATION_LATENCY].value, 12,
                               EPS);
        CU_ASSERT_DOUBLE_EQUAL(c.c[KS_CONSTRAINT_UNAVAILABILITY].value, 20,
                               EPS);
        CU_ASSERT_TRUE(c.satisfied);
        CU_ASSERT_EQUAL(c.binding, KS_CONSTRAINT_THROUGHPUT);
        CU_ASSERT_EQUAL(c.fewest_brokers, 3);
        CU_ASSERT_TRUE(c.brokers_suffice);

        /* P = 1000: files 2000 <= 10000; replication 1000 ms > 200
         * (utilisation 5); unavailability 5000/3 = 1666.7 <= 2000.
         * Binding: replication latency. Fewest brokers: max(3,
         * ceil(6000/10000) = 1, ceil(3000/200) = 15, ceil(5000/2000) = 3)
         * = 15 */
        ks_sizing_constraints(&p, 1000, 3, 3, T, &c);
        CU_ASSERT_FALSE(c.c[KS_CONSTRAINT_REPLICATION_LATENCY].ok);
        CU_ASSERT_DOUBLE_EQUAL(
            c.c[KS_CONSTRAINT_REPLICATION_LATENCY].utilisation, 5, EPS);
        CU_ASSERT_DOUBLE_EQUAL(c.c[KS_CONSTRAINT_UNAVAILABILITY].value,
                               5000.0 / 3, EPS);
        CU_ASSERT_TRUE(c.c[KS_CONSTRAINT_UNAVAILABILITY].ok);
        CU_ASSERT_FALSE(c.satisfied);
        CU_ASSERT_EQUAL(c.binding, KS_CONSTRAINT_REPLICATION_LATENCY);
        CU_ASSERT_EQUAL(c.fewest_brokers, 15);
        CU_ASSERT_TRUE(c.brokers_suffice);
        CU_ASSERT_STRING_EQUAL(
            ks_sizing_constraint_name(KS_CONSTRAINT_REPLICATION_LATENCY),
            "replication_latency_ms");

        /* P = 4 < 5 needed for 50 MB/s: throughput violated (5/4 = 1.25),
         * no broker count fixes it */
        ks_sizing_constraints(&p, 4, 3, 3, T, &c);
        CU_ASSERT_FALSE(c.c[KS_CONSTRAINT_THROUGHPUT].ok);
        CU_ASSERT_DOUBLE_EQUAL(c.c[KS_CONSTRAINT_THROUGHPUT].utilisation, 1.25,
                               EPS);
        CU_ASSERT_EQUAL(c.binding, KS_CONSTRAINT_THROUGHPUT);
        CU_ASSERT_FALSE(c.brokers_suffice);

        /* 16 consumers planned, P = 12: 16/12 = 1.33, violated, binding */
        p.consumers_max = 16;
        ks_sizing_constraints(&p, 12, 3, 3, T, &c);
        CU_ASSERT_TRUE(c.c[KS_CONSTRAINT_CONSUMERS].known);
        CU_ASSERT_FALSE(c.c[KS_CONSTRAINT_CONSUMERS].ok);
        CU_ASSERT_EQUAL(c.binding, KS_CONSTRAINT_CONSUMERS);
        p.consumers_max = 0;

        /* brokers unknown: per-broker constraints unknown, fewest brokers
         * still computed from r */
        ks_sizing_constraints(&p, 1000, 0, 3, T, &c);
        CU_ASSERT_FALSE(c.c[KS_CONSTRAINT_FILE_HANDLES].known);
        CU_ASSERT_FALSE(c.c[KS_CONSTRAINT_UNAVAILABILITY].known);
        CU_ASSERT_TRUE(c.satisfied); /* of what is known */
        CU_ASSERT_EQUAL(c.fewest_brokers, 15);
        /* replication factor unknown: no fewest brokers; unavailability
         * (no r in it) still known */
        ks_sizing_constraints(&p, 1000, 3, 0, T, &c);
        CU_ASSERT_EQUAL(c.fewest_brokers, 0);
        CU_ASSERT_TRUE(c.c[KS_CONSTRAINT_UNAVAILABILITY].known);
        CU_ASSERT_FALSE(c.c[KS_CONSTRAINT_FILE_HANDLES].known);
        /* no traffic, one partition, one broker, r = 1 */
        ks_sizing_constraints(&p, 1, 1, 1, 0, &c);
        CU_ASSERT_TRUE(c.satisfied);
        CU_ASSERT_EQUAL(c.fewest_brokers, 1);
        CU_ASSERT_DOUBLE_EQUAL(c.c[KS_CONSTRAINT_THROUGHPUT].limit, 0, EPS);
}

static void test_fewest_brokers_is_fewest(void)
{
        ks_sizing_params_t p = defaults();
        int64_t            P;
        int32_t            r;

        /* brute force: at b = fewest all per-broker constraints hold, at
         * b - 1 (when still >= r) one fails */
        for (r = 1; r <= 4; r++)
                for (P = 1; P <= 200000; P = P * 3 + 1) {
                        ks_sizing_constraints_t c;
                        int64_t b = ks_sizing_fewest_brokers(&p, P, r);
                        int     i, ok = 1;
                        CU_ASSERT(b >= r);
                        ks_sizing_constraints(&p, P, (int32_t)b, r, 0, &c);
                        for (i = KS_CONSTRAINT_FILE_HANDLES;
                             i < KS_CONSTRAINT__CNT; i++)
                                ok &= c.c[i].ok;
                        CU_ASSERT_TRUE(ok);
                        if (b - 1 >= r) {
                                ks_sizing_constraints(&p, P, (int32_t)(b - 1),
                                                      r, 0, &c);
                                ok = 1;
                                for (i = KS_CONSTRAINT_FILE_HANDLES;
                                     i < KS_CONSTRAINT__CNT; i++)
                                        ok &= c.c[i].ok;
                                CU_ASSERT_FALSE(ok);
                        }
                }
        /* P = 100000, r = 3: files ceil(6e5/1e4) = 60, replication
         * ceil(3e5/200) = 1500, unavailability ceil(5e5/2000) = 250 */
        CU_ASSERT_EQUAL(ks_sizing_fewest_brokers(&p, 100000, 3), 1500);
        CU_ASSERT_EQUAL(ks_sizing_fewest_brokers(&p, 100000, 0), 0);
}

/* ------------------------------------------------------------------ */
/* Split window and drain-and-switch                                    */
/* ------------------------------------------------------------------ */

static void test_split_window(void)
{
        ks_sizing_params_t       p = defaults();
        ks_sizing_split_window_t w;

        /* 300000 ms -> 300 s; 40 msgs/s of moving keys -> 12000 */
        ks_sizing_split_window(&p, 40, &w);
        CU_ASSERT_DOUBLE_EQUAL(w.seconds, 300, EPS);
        CU_ASSERT_DOUBLE_EQUAL(w.messages_of_moving_keys, 12000, EPS);
        ks_sizing_split_window(&p, 0, &w);
        CU_ASSERT_EQUAL(w.messages_of_moving_keys, 0);
        p.producers_metadata_max_age_ms = 0;
        ks_sizing_split_window(&p, 40, &w);
        CU_ASSERT_EQUAL(w.seconds, 0);
        CU_ASSERT_EQUAL(w.messages_of_moving_keys, 0);
}

static void test_drain_and_switch(void)
{
        ks_sizing_params_t           p = defaults();
        ks_sizing_drain_and_switch_t d;

        /* lag 30 s at 1000 msgs/s = 30000 messages; a group draining 4000
         * msgs/s needs 30000 / 4000 = 7.5 s; producers hold 7500 messages,
         * 7.5 MB at 1 MB/s; their queue (100000 messages, 1 GiB) lasts
         * min(100000/1000 = 100 s, 1073741824/1e6 = 1073.7 s) = 100 s */
        p.consumer_lag_ms = 30000;
        ks_sizing_drain_and_switch(&p, 12, 1000, 1e6, 4000, 100000,
                                   1073741824.0, &d);
        CU_ASSERT_EQUAL(d.partition_count, 12);
        CU_ASSERT_DOUBLE_EQUAL(d.drain_s, 7.5, EPS);
        CU_ASSERT_DOUBLE_EQUAL(d.pause_s, 7.5, EPS);
        CU_ASSERT_DOUBLE_EQUAL(d.messages_held, 7500, EPS);
        CU_ASSERT_DOUBLE_EQUAL(d.bytes_held, 7.5e6, EPS);
        CU_ASSERT_DOUBLE_EQUAL(d.producer_queue_s, 100, EPS);
        /* capacity unknown: the group only keeps up, drains in lag_s */
        ks_sizing_drain_and_switch(&p, 12, 1000, 1e6, 0, 0, 0, &d);
        CU_ASSERT_DOUBLE_EQUAL(d.drain_s, 30, EPS);
        CU_ASSERT(d.producer_queue_s < 0);
        /* bytes are the tighter queue limit: 1 MiB at 1 MB/s = 1.048576 s */
        ks_sizing_drain_and_switch(&p, 12, 1000, 1e6, 0, 100000, 1048576, &d);
        CU_ASSERT_DOUBLE_EQUAL(d.producer_queue_s, 1.048576, EPS);
        /* lag unknown: pause unknown, per-second figures still there */
        p.consumer_lag_ms = 0;
        ks_sizing_drain_and_switch(&p, 12, 1000, 1e6, 4000, 0, 0, &d);
        CU_ASSERT(d.pause_s < 0);
        CU_ASSERT(d.messages_held < 0);
        CU_ASSERT_DOUBLE_EQUAL(d.held_msgs_per_s, 1000, EPS);
        /* no traffic: nothing to drain */
        p.consumer_lag_ms = 30000;
        ks_sizing_drain_and_switch(&p, 12, 0, 0, 4000, 100, 100, &d);
        CU_ASSERT_EQUAL(d.drain_s, 0);
        CU_ASSERT_EQUAL(d.messages_held, 0);
        CU_ASSERT(d.producer_queue_s < 0);
}

/* ------------------------------------------------------------------ */
/* Hot-key recall on a Zipf stream, with the real Space-Saving summary  */
/* ------------------------------------------------------------------ */

static uint64_t rng;

static double uniform(void)
{
        uint64_t x = (rng += 0x9E3779B97F4A7C15ull);
        x          = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
        x          = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
        return (double)((x ^ (x >> 31)) >> 11) * 0x1p-53;
}

/** @brief Streams @p msgs messages of Zipf(@p s) keys "k<id>" over
 *         @p keys keys into a 1024-counter summary and checks recall:
 *         every key with >= 1 % of the messages is found, with its true
 *         count in [count - error, count]; and, the summary's own
 *         guarantee, every key above N/1024. */
static void zipf_recall(size_t keys, size_t msgs, double s)
{
        double          *cdf   = malloc(keys * sizeof(*cdf));
        uint64_t        *exact = calloc(keys, sizeof(*exact));
        ks_topk_t       *tk    = ks_topk_new(1024);
        ks_topk_entry_t *top   = malloc(1024 * sizeof(*top));
        double           sum   = 0;
        size_t i, j, n, hot = 0, found = 0, above = 0, above_found = 0;

        CU_ASSERT_FATAL(cdf && exact && tk && top);
        for (i = 0; i < keys; i++)
                cdf[i] = (sum += pow((double)(i + 1), -s));
        rng = 1234;
        for (i = 0; i < msgs; i++) {
                double u  = uniform() * sum;
                size_t lo = 0, hi = keys - 1;
                char   k[16];
                int    kl;
                while (lo < hi) {
                        size_t mid = (lo + hi) / 2;
                        if (cdf[mid] > u)
                                hi = mid;
                        else
                                lo = mid + 1;
                }
                exact[lo]++;
                kl = snprintf(k, sizeof(k), "k%zu", lo);
                ks_topk_add(tk, k, (size_t)kl, ks_hash_key64(k, (size_t)kl),
                            ks_hash_murmur2(k, (size_t)kl) & 0x7fffffff, 100);
        }
        n = ks_topk_sorted(tk, top, 1024);
        for (i = 0; i < keys; i++) {
                char     k[16];
                int      kl  = snprintf(k, sizeof(k), "k%zu", i);
                uint64_t h   = ks_hash_key64(k, (size_t)kl);
                int      hit = 0;
                if (exact[i] * 100 < msgs && exact[i] * 1024 <= msgs)
                        continue;
                for (j = 0; j < n; j++)
                        if (top[j].hash64 == h) {
                                hit = 1;
                                CU_ASSERT(top[j].count >= exact[i]);
                                CU_ASSERT(top[j].count - top[j].error <=
                                          exact[i]);
                        }
                if (exact[i] * 100 >= msgs) {
                        hot++;
                        found += hit;
                }
                if (exact[i] * 1024 > msgs) {
                        above++;
                        above_found += hit;
                }
        }
        CU_ASSERT(hot >= 1);
        CU_ASSERT_EQUAL(found, hot);         /* recall 1 at >= 1 % */
        CU_ASSERT_EQUAL(above_found, above); /* and above N/m */
        free(cdf);
        free(exact);
        free(top);
        ks_topk_destroy(tk);
}

static void test_zipf_recall(void)
{
        zipf_recall(100000, 1000000, 1.1); /* ~8 keys >= 1 % */
        zipf_recall(100000, 1000000, 0.8); /* flat: few keys near 1 % */
        zipf_recall(1000, 200000, 0.6);    /* many keys just around 1 % */
        zipf_recall(1, 1000, 1.0);         /* one key: 100 % */
}

/* ------------------------------------------------------------------ */
/* The report objects                                                   */
/* ------------------------------------------------------------------ */

/** @returns the number at @p path ("a.b.c") in @p j, NAN if absent. */
static double num_at(json_t *j, const char *path)
{
        char buf[256], *save = NULL, *tok;

        snprintf(buf, sizeof(buf), "%s", path);
        for (tok = strtok_r(buf, ".", &save); tok && j;
             tok = strtok_r(NULL, ".", &save))
                j = json_is_array(j) ? json_array_get(j, (size_t)atoi(tok))
                                     : json_object_get(j, tok);
        if (json_is_true(j))
                return 1;
        if (json_is_false(j))
                return 0;
        return json_is_number(j) ? json_number_value(j) : NAN;
}

static json_t *at(json_t *j, const char *path)
{
        char buf[256], *save = NULL, *tok;

        snprintf(buf, sizeof(buf), "%s", path);
        for (tok = strtok_r(buf, ".", &save); tok && j;
             tok = strtok_r(NULL, ".", &save))
                j = json_is_array(j) ? json_array_get(j, (size_t)atoi(tok))
                                     : json_object_get(j, tok);
        return j;
}

static void test_json(void)
{
        /* A topic over 10 s: 1000 messages, 100 msgs/s, peak 300, mean
         * 100. Current count 4 with loads 100 100 100 700 (partition 3
         * busiest); proposal 8 with loads 50 x 7 and 650 at partition 3;
         * 300 messages moved; proposal 6 (not a power of two). One hot key
         * with phash 3: count 610, error 10 -> 600 certain -> 60 msgs/s.
         * Fair share at the largest count, 8: 100 / 8 = 12.5 msgs/s;
         * 60 > 12.5: not fixable; ceil(60 / 12.5) = ceil(4.8) = 5 buckets.
         * Share of its partition: current 60 / (700/10) = 0.857; under 8:
         * 60 / (650/10) = 0.923.
         * Split window under 8: 300 moved / 10 s = 30 msgs/s x 300 s =
         * 9000. Key sample 1 1 2 4 100 -> median 2; busiest 600: skew 300
         * -> factor 4 (capped). Floor: nothing configured -> current 4 x 4
         * = 16 -> 16. */
        ks_sizing_params_t p       = defaults();
        uint64_t           cur[4]  = {100, 100, 100, 700};
        uint64_t           p8[8]   = {50, 50, 50, 650, 50, 50, 50, 50};
        uint64_t           p6[6]   = {200, 200, 200, 200, 100, 100};
        uint32_t           sph[5]  = {0, 1, 2, 3, 5};
        uint64_t           smsg[5] = {1, 1, 2, 4, 100};
        ks_sizing_hot_in_t hot[1]  = {{3, 610, 10}};
        ks_sizing_input_t  in;
        ks_sizing_json_t   out;
        ks_warn_list_t     wl;

        memset(&in, 0, sizeof(in));
        in.topic                            = "t";
        in.params                           = &p;
        in.rates.elapsed_s                  = 10;
        in.rates.msgs_per_s                 = 100;
        in.rates.bytes_per_s                = 10000;
        in.rates.seconds                    = 10;
        in.rates.mean_msgs_per_s            = 100;
        in.rates.peak_msgs_per_s            = 300;
        in.rates.peak_bytes_per_s           = 30000;
        in.rates.max_msgs_per_s             = 300;
        in.rates.peak_to_mean               = 3;
        in.window_s                         = 10;
        in.current.count                    = 4;
        in.current.loads                    = cur;
        in.proposals[0].count               = 8;
        in.proposals[0].loads               = p8;
        in.proposals[0].moved_messages      = 300;
        in.proposals[0].moved_distinct_keys = 2.5;
        in.proposals[1].count               = 6;
        in.proposals[1].loads               = p6;
        in.proposals[1].moved_messages      = 500;
        in.proposal_cnt                     = 2;
        in.sample_phash                     = sph;
        in.sample_messages                  = smsg;
        in.sample_cnt                       = 5;
        in.hot                              = hot;
        in.hot_cnt                          = 1;
        in.brokers                          = 3;
        in.replication_factor               = 3;
        in.compacted                        = -1;
        ks_warn_list_init(&wl);
        CU_ASSERT_EQUAL_FATAL(ks_sizing_json_build(&in, &out, &wl), 0);

        /* rates */
        CU_ASSERT_DOUBLE_EQUAL(num_at(out.rates, "msgs_per_s"), 100, EPS);
        CU_ASSERT_DOUBLE_EQUAL(num_at(out.rates, "peak_msgs_per_s"), 300, EPS);
        CU_ASSERT_DOUBLE_EQUAL(num_at(out.rates, "peak_to_mean"), 3, EPS);
        CU_ASSERT_FALSE(ks_test_has_warning(&wl, KS_WARN_PEAK_TO_MEAN_HIGH));
        /* skew: keys 600 / 2 = 300; partitions: 4 -> sorted 100 100 100
         * 700, median 100, 7x, fails; 8 -> median 50, 13x */
        CU_ASSERT_DOUBLE_EQUAL(num_at(out.skew, "key_skew"), 300, EPS);
        CU_ASSERT_DOUBLE_EQUAL(num_at(out.skew, "partitions.4.max_over_median"),
                               7, EPS);
        CU_ASSERT_EQUAL(num_at(out.skew, "partitions.4.within_2_5x_median"), 0);
        CU_ASSERT_DOUBLE_EQUAL(num_at(out.skew, "partitions.8.max_over_median"),
                               13, EPS);
        /* 6 is not a power of two: its spread next to 4's and 8's from the
         * key sample (phash 0 1 2 3 5 with 1 1 2 4 100): at 4: loads
         * 1 101 2 4 -> median (2+4)/2 = 3, 101/3 */
        CU_ASSERT_DOUBLE_EQUAL(num_at(out.skew, "partitions.6.max_over_median"),
                               1, EPS); /* 200 / 200 */
        CU_ASSERT_DOUBLE_EQUAL(
            num_at(out.skew,
                   "partitions.6.compare_power_of_two.4.max_over_median"),
            101.0 / 3, EPS);
        CU_ASSERT_PTR_NOT_NULL(
            at(out.skew, "partitions.6.compare_power_of_two.8"));
        CU_ASSERT_PTR_NOT_NULL(
            at(out.skew, "partitions.6.compare_power_of_two.6"));
        CU_ASSERT_PTR_NULL(at(out.skew, "partitions.8.compare_power_of_two"));
        /* hot key */
        CU_ASSERT_DOUBLE_EQUAL(num_at(out.hot_keys, "0.msgs_per_s"), 60, EPS);
        CU_ASSERT_DOUBLE_EQUAL(num_at(out.hot_keys, "0.share_of_partition"),
                               60.0 / 70, EPS);
        CU_ASSERT_DOUBLE_EQUAL(
            num_at(out.hot_keys, "0.share_of_partition_proposed.8"), 60.0 / 65,
            EPS);
        CU_ASSERT_EQUAL(num_at(out.hot_keys, "0.fixable_by_partitions"), 0);
        CU_ASSERT_EQUAL(num_at(out.hot_keys, "0.salt_buckets"), 5);
        CU_ASSERT_TRUE(json_is_string(at(out.hot_keys, "0.ordering_given_up")));
        CU_ASSERT_TRUE(ks_test_has_warning(&wl, KS_WARN_HOT_KEY));
        /* sizing: base = current 4, factor 4, floor 16, recommended 16 */
        CU_ASSERT_EQUAL(num_at(out.sizing, "partition_floor"), 16);
        CU_ASSERT_EQUAL(num_at(out.sizing, "recommended"), 16);
        CU_ASSERT_EQUAL(num_at(out.sizing, "already_sufficient"), 0);
        CU_ASSERT_DOUBLE_EQUAL(num_at(out.sizing, "basis.skew_factor"), 4, EPS);
        CU_ASSERT_DOUBLE_EQUAL(num_at(out.sizing, "basis.measured_key_skew"),
                               300, EPS);
        CU_ASSERT_DOUBLE_EQUAL(num_at(out.sizing, "basis.rebalance_s"), 0.004,
                               EPS);
        CU_ASSERT_TRUE(
            json_is_null(at(out.sizing, "basis.per_consumer_msgs_s")));
        /* 16 x 4 ms = 0.064 s, x 6 = 0.384 s a day */
        CU_ASSERT_DOUBLE_EQUAL(num_at(out.sizing, "rebalance.per_rebalance_s"),
                               0.064, EPS);
        CU_ASSERT_DOUBLE_EQUAL(num_at(out.sizing, "rebalance.per_day_s"), 0.384,
                               EPS);
        /* constraints at 4, 8, 6 and 16; 30000 B/s needs ceil(0.003) -> 1;
         * at 16 with b = r = 3: unavailability 5 x 16 / 3 = 26.7 ms */
        CU_ASSERT_EQUAL(num_at(out.sizing, "constraints.16.satisfied"), 1);
        CU_ASSERT_DOUBLE_EQUAL(
            num_at(out.sizing, "constraints.16.unavailability_ms.value"),
            80.0 / 3, EPS);
        CU_ASSERT_TRUE(json_is_string(at(out.sizing, "constraints.4.binding")));
        CU_ASSERT_PTR_NOT_NULL(at(out.sizing, "constraints.6"));
        CU_ASSERT_EQUAL(num_at(out.sizing, "fewest_brokers"), 3);
        CU_ASSERT_FALSE(ks_test_has_warning(&wl, KS_WARN_REBALANCE_STALL_HIGH));
        /* split windows, per proposal */
        CU_ASSERT_DOUBLE_EQUAL(num_at(out.split_windows, "0.seconds"), 300,
                               EPS);
        CU_ASSERT_DOUBLE_EQUAL(
            num_at(out.split_windows, "0.messages_of_moving_keys"), 9000, EPS);
        CU_ASSERT_DOUBLE_EQUAL(
            num_at(out.split_windows, "1.messages_of_moving_keys"), 15000,
            EPS); /* 500 / 10 x 300 */
        /* migrations compare the first proposal */
        CU_ASSERT_EQUAL(num_at(out.migration, "target_partition_count"), 8);
        CU_ASSERT_EQUAL(num_at(out.migration, "raise_in_place.messages_split"),
                        300);
        CU_ASSERT_DOUBLE_EQUAL(
            num_at(out.migration, "raise_in_place.messages_in_split_window"),
            9000, EPS);
        CU_ASSERT_TRUE(json_is_null(
            at(out.migration, "raise_in_place.compacted_stale_values")));
        CU_ASSERT_EQUAL(
            num_at(out.migration, "drain_and_switch.messages_split"), 0);
        CU_ASSERT_TRUE(
            json_is_null(at(out.migration, "drain_and_switch.pause_s")));
        CU_ASSERT_DOUBLE_EQUAL(
            num_at(out.migration, "drain_and_switch.held_msgs_per_s"), 300,
            EPS);
        CU_ASSERT_EQUAL(num_at(out.migration, "shard.keys_routed"), 1);
        CU_ASSERT_EQUAL(num_at(out.migration, "shard.shard_partitions"), 5);
        CU_ASSERT_EQUAL(num_at(out.migration, "shard.messages_split"), 610);
        CU_ASSERT_DOUBLE_EQUAL(num_at(out.migration, "shard.share_of_topic"),
                               0.6, EPS);
        CU_ASSERT_FALSE(ks_test_has_warning(&wl, KS_WARN_COMPACTED_TOPIC));
        ks_sizing_json_clear(&out);
        ks_warn_list_clear(&wl);

        /* compacted, bursty, slow rebalances: the other three warnings.
         * peak/mean 5 > 4; 10 s per partition: 4 partitions = 40 s > 30 */
        in.compacted                 = 1;
        in.rates.peak_to_mean        = 5;
        p.rebalance_ms_per_partition = 10000;
        in.migration_target          = 1;
        p.consumer_lag_ms            = 2000;
        ks_warn_list_init(&wl);
        CU_ASSERT_EQUAL_FATAL(ks_sizing_json_build(&in, &out, &wl), 0);
        CU_ASSERT_TRUE(ks_test_has_warning(&wl, KS_WARN_COMPACTED_TOPIC));
        CU_ASSERT_TRUE(ks_test_has_warning(&wl, KS_WARN_PEAK_TO_MEAN_HIGH));
        CU_ASSERT_TRUE(ks_test_has_warning(&wl, KS_WARN_REBALANCE_STALL_HIGH));
        CU_ASSERT_EQUAL(num_at(out.migration, "target_partition_count"), 6);
        CU_ASSERT_EQUAL(
            num_at(out.migration, "raise_in_place.compacted_stale_values"), 1);
        /* lag 2 s, capacity unknown: drain in 2 s, 300 x 2 held */
        CU_ASSERT_DOUBLE_EQUAL(
            num_at(out.migration, "drain_and_switch.pause_s"), 2, EPS);
        CU_ASSERT_DOUBLE_EQUAL(
            num_at(out.migration, "drain_and_switch.messages_held"), 600, EPS);
        ks_sizing_json_clear(&out);
        ks_warn_list_clear(&wl);
}

static void test_json_nothing_known(void)
{
        /* a topic with no traffic, no count, no proposal, no keys: every
         * object builds, unknowns are null, no warning */
        ks_sizing_params_t p = defaults();
        ks_sizing_input_t  in;
        ks_sizing_json_t   out;
        ks_warn_list_t     wl;

        memset(&in, 0, sizeof(in));
        in.topic     = "empty";
        in.params    = &p;
        in.compacted = -1;
        ks_warn_list_init(&wl);
        CU_ASSERT_EQUAL_FATAL(ks_sizing_json_build(&in, &out, &wl), 0);
        CU_ASSERT_EQUAL(wl.cnt, 0);
        CU_ASSERT_TRUE(json_is_null(at(out.rates, "peak_to_mean")));
        CU_ASSERT_TRUE(json_is_null(at(out.skew, "key_skew")));
        CU_ASSERT_EQUAL(json_object_size(at(out.skew, "partitions")), 0);
        CU_ASSERT_TRUE(json_is_null(out.migration));
        CU_ASSERT_EQUAL(json_array_size(out.hot_keys), 0);
        CU_ASSERT_EQUAL(json_array_size(out.split_windows), 0);
        CU_ASSERT_EQUAL(num_at(out.sizing, "recommended"), 2);
        CU_ASSERT_TRUE(json_is_null(at(out.sizing, "already_sufficient")));
        CU_ASSERT_TRUE(json_is_null(at(out.sizing, "fewest_brokers")));
        CU_ASSERT_TRUE(json_is_null(at(out.sizing, "basis.brokers")));
        ks_sizing_json_clear(&out);
        ks_sizing_json_clear(&out); /* idempotent */
        ks_warn_list_clear(&wl);
}

void ks_test_register(void)
{
        KS_ADD_SUITE(
            "sizing formulas", {"parameters", test_params},
            {"spread and partition skew", test_spread},
            {"median by selection = sorted median", test_spread_random},
            {"median by counting = sorted median", test_spread_histogram},
            {"key skew", test_key_skew},
            {"loads from the key sample", test_sample_loads},
            {"powers of two", test_pow2}, {"target rate", test_target_rate},
            {"hot-key verdict", test_hot_key_verdict}, {"shard", test_shard},
            {"skew factor", test_skew_factor},
            {"partition floor", test_partition_floor},
            {"rebalance stall", test_rebalance},
            {"Raptis-Passarella constraints", test_constraints},
            {"fewest brokers is the fewest", test_fewest_brokers_is_fewest},
            {"split window", test_split_window},
            {"drain and switch", test_drain_and_switch});
        KS_ADD_SUITE("hot keys",
                     {"Zipf recall, 1024 counters", test_zipf_recall});
        KS_ADD_SUITE("sizing report objects",
                     {"hand-computed topic", test_json},
                     {"nothing known", test_json_nothing_known});
}
