/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_sizing.c
 * @brief ks_sizing: every formula against cases worked out by hand (the
 *        arithmetic is in the comments) and the edge cases (no traffic,
 *        one key, one partition, huge counts). Skew: test_sizing_skew.c;
 *        the report objects and hot-key recall: test_sizing_json.c.
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
        /* a rate other than 0 (unknown) under 0.001 msgs/s: 1e-9 sized a
         * topic at 4.6e18 partitions (issue 30) */
        err[0] = 0;
        CU_ASSERT_EQUAL(ks_sizing_params_set(&p, "keyshift.consumer.msgs.per.s",
                                             "1e-9", err, sizeof(err)),
                        1);
        CU_ASSERT_PTR_NOT_NULL(strstr(err, "0.001 .. 1e9 msgs/s"));
        CU_ASSERT_EQUAL(
            ks_sizing_params_set(&p, "keyshift.partition.target.msgs.per.s",
                                 "0.0009", err, sizeof(err)),
            1);
        CU_ASSERT_EQUAL(p.partition_target_msgs_per_s, 1000);
        CU_ASSERT_EQUAL(ks_sizing_params_set(&p, "keyshift.consumer.msgs.per.s",
                                             "0.001", err, sizeof(err)),
                        0);
        CU_ASSERT_EQUAL(ks_sizing_params_set(&p, "keyshift.consumer.msgs.per.s",
                                             "0", err, sizeof(err)),
                        0);
        CU_ASSERT_EQUAL(p.consumer_msgs_per_s, 0);
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
        ks_sizing_partition_floor(&p, 12000, 90, &f);
        CU_ASSERT_EQUAL(f.throughput_partitions, 12);
        CU_ASSERT_EQUAL(f.base, 12);
        CU_ASSERT_EQUAL(f.base_source, KS_SIZING_BASE_THROUGHPUT);
        CU_ASSERT_DOUBLE_EQUAL(f.skew_factor, 3, EPS);
        CU_ASSERT_EQUAL(f.partition_floor, 36);
        CU_ASSERT_EQUAL(f.recommended, 64);
        /* 20 consumers planned: max(12, 20) = 20, skew 30 -> 1 -> 2:
         * 40 -> 64 */
        p.consumers_max = 20;
        ks_sizing_partition_floor(&p, 12000, 30, &f);
        CU_ASSERT_EQUAL(f.base, 20);
        CU_ASSERT_EQUAL(f.base_source, KS_SIZING_BASE_CONSUMERS);
        CU_ASSERT_EQUAL(f.partition_floor, 40);
        CU_ASSERT_EQUAL(f.recommended, 64);
        /* skew 150 -> 5 -> 4: with 8 consumers, 12 x 4 = 48 -> 64 */
        p.consumers_max = 8;
        ks_sizing_partition_floor(&p, 12000, 150, &f);
        CU_ASSERT_EQUAL(f.partition_floor, 48);
        /* peak 12001: ceil(12.001) = 13, x 2 = 26 -> 32 */
        ks_sizing_partition_floor(&p, 12001, 10, &f);
        CU_ASSERT_EQUAL(f.throughput_partitions, 13);
        CU_ASSERT_EQUAL(f.partition_floor, 26);
        CU_ASSERT_EQUAL(f.recommended, 32);
        /* nothing configured: no base, no floor, no advice (it was
         * today's count x the skew factor); the factor is still given */
        p = defaults();
        ks_sizing_partition_floor(&p, 12000, 75, &f);
        CU_ASSERT_EQUAL(f.base_source, KS_SIZING_BASE_NONE);
        CU_ASSERT_EQUAL(f.base, 0);
        CU_ASSERT_EQUAL(f.throughput_partitions, 0);
        CU_ASSERT_EQUAL(f.partition_floor, 0);
        CU_ASSERT_EQUAL(f.recommended, 0);
        CU_ASSERT_DOUBLE_EQUAL(f.skew_factor, 2.5, EPS);
        CU_ASSERT_STRING_EQUAL(ks_sizing_base_name(f.base_source), "none");
        ks_sizing_partition_floor(&p, 0, 0, &f);
        CU_ASSERT_EQUAL(f.recommended, 0);
        CU_ASSERT_DOUBLE_EQUAL(f.skew_factor, 2, EPS);
        /* a per-consumer rate alone: the throughput floor, ceil(12000 /
         * 700) = 18 x 2.5 = 45 -> 64 */
        p.consumer_msgs_per_s = 700;
        ks_sizing_partition_floor(&p, 12000, 75, &f);
        CU_ASSERT_EQUAL(f.base_source, KS_SIZING_BASE_THROUGHPUT);
        CU_ASSERT_EQUAL(f.base, 18);
        CU_ASSERT_EQUAL(f.partition_floor, 45);
        CU_ASSERT_EQUAL(f.recommended, 64);
        /* a consumer count alone: the group's parallelism, 5 x 2.5 =
         * 12.5 -> 13 -> 16 */
        p.consumer_msgs_per_s = 0;
        p.consumers_max       = 5;
        ks_sizing_partition_floor(&p, 12000, 75, &f);
        CU_ASSERT_EQUAL(f.base_source, KS_SIZING_BASE_CONSUMERS);
        CU_ASSERT_EQUAL(f.throughput_partitions, 0);
        CU_ASSERT_EQUAL(f.base, 5);
        CU_ASSERT_EQUAL(f.partition_floor, 13);
        CU_ASSERT_EQUAL(f.recommended, 16);
        /* per-consumer known, no traffic: ceil(0) = 0 -> base 1 */
        p                     = defaults();
        p.consumer_msgs_per_s = 1000;
        ks_sizing_partition_floor(&p, 0, 0, &f);
        CU_ASSERT_EQUAL(f.throughput_partitions, 0);
        CU_ASSERT_EQUAL(f.base, 1);
        CU_ASSERT_EQUAL(f.partition_floor, 2);
        CU_ASSERT_EQUAL(f.recommended, 2);
        /* huge: 10^15 msgs/s at 1 per consumer, x 2 = 2 x 10^15;
         * 2^50 = 1.13e15 < 2e15 <= 2^51 = 2.25e15 */
        p.consumer_msgs_per_s = 1;
        ks_sizing_partition_floor(&p, 1e15, 0, &f);
        CU_ASSERT_EQUAL(f.partition_floor, 2000000000000000ll);
        CU_ASSERT_EQUAL(f.recommended, (int64_t)1 << 51);
}

static void test_inputs_missing(void)
{
        ks_sizing_params_t p        = defaults();
        const char        *names[2] = {NULL, NULL};

        CU_ASSERT_EQUAL(ks_sizing_inputs_missing(&p, names), 2);
        CU_ASSERT_STRING_EQUAL(names[0], "keyshift.consumer.msgs.per.s");
        CU_ASSERT_STRING_EQUAL(names[1], "keyshift.consumers.max");
        p.consumer_msgs_per_s = 10;
        CU_ASSERT_EQUAL(ks_sizing_inputs_missing(&p, names), 1);
        CU_ASSERT_STRING_EQUAL(names[0], "keyshift.consumers.max");
        p.consumer_msgs_per_s = 0;
        p.consumers_max       = 3;
        CU_ASSERT_EQUAL(ks_sizing_inputs_missing(&p, names), 1);
        CU_ASSERT_STRING_EQUAL(names[0], "keyshift.consumer.msgs.per.s");
        p.consumer_msgs_per_s = 10;
        CU_ASSERT_EQUAL(ks_sizing_inputs_missing(&p, names), 0);
        /* the names are the properties the configuration accepts */
        CU_ASSERT_EQUAL(
            ks_sizing_params_set(&p, KS_SIZING_PROP_CONSUMERS, "4", NULL, 0),
            0);
        CU_ASSERT_EQUAL(ks_sizing_params_set(&p, KS_SIZING_PROP_CONSUMER_RATE,
                                             "5", NULL, 0),
                        0);
        CU_ASSERT_DOUBLE_EQUAL(p.consumers_max, 4, EPS);
        CU_ASSERT_DOUBLE_EQUAL(p.consumer_msgs_per_s, 5, EPS);
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

void ks_test_register(void)
{
        KS_ADD_SUITE(
            "sizing formulas", {"parameters", test_params},
            {"target rate", test_target_rate},
            {"hot-key verdict", test_hot_key_verdict}, {"shard", test_shard},
            {"skew factor", test_skew_factor},
            {"partition floor", test_partition_floor},
            {"consumer inputs missing", test_inputs_missing},
            {"rebalance stall", test_rebalance},
            {"Raptis-Passarella constraints", test_constraints},
            {"fewest brokers is the fewest", test_fewest_brokers_is_fewest},
            {"split window", test_split_window},
            {"drain and switch", test_drain_and_switch});
}
