/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_sizing_json.c
 * @brief ks_sizing_json: the report's sizing objects of a topic computed
 *        by hand, and of one of which nothing is known; and hot-key
 *        recall on a Zipf stream through the real Space-Saving summary
 *        (ks_topk) with the plugin's default capacity (the formulas:
 *        test_sizing.c).
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
         * -> factor 4 (capped). Floor: 100 msgs/s a consumer, 3
         * consumers: max(ceil(300 / 100) = 3, 3) = 3 x 4 = 12 -> 16
         * (without them: no advice, test_json_no_inputs). */
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
        p.consumer_msgs_per_s               = 100;
        p.consumers_max                     = 3;
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
        /* sizing: base = throughput 3, factor 4, floor 12, recommended 16 */
        CU_ASSERT_EQUAL(num_at(out.sizing, "partition_floor"), 12);
        CU_ASSERT_EQUAL(num_at(out.sizing, "recommended"), 16);
        CU_ASSERT_EQUAL(num_at(out.sizing, "already_sufficient"), 0);
        CU_ASSERT_EQUAL(json_array_size(at(out.sizing, "needs")), 0);
        CU_ASSERT_TRUE(json_is_null(at(out.sizing, "illustration")));
        CU_ASSERT_EQUAL(num_at(out.sizing, "basis.throughput_partitions"), 3);
        CU_ASSERT_EQUAL(num_at(out.sizing, "basis.base_partitions"), 3);
        CU_ASSERT_STRING_EQUAL(
            json_string_value(at(out.sizing, "basis.base_source")),
            "throughput");
        CU_ASSERT_DOUBLE_EQUAL(num_at(out.sizing, "basis.skew_factor"), 4, EPS);
        CU_ASSERT_DOUBLE_EQUAL(num_at(out.sizing, "basis.measured_key_skew"),
                               300, EPS);
        CU_ASSERT_DOUBLE_EQUAL(num_at(out.sizing, "basis.rebalance_s"), 0.004,
                               EPS);
        CU_ASSERT_DOUBLE_EQUAL(num_at(out.sizing, "basis.per_consumer_msgs_s"),
                               100, EPS);
        CU_ASSERT_EQUAL(num_at(out.sizing, "basis.max_consumers_planned"), 3);
        /* the consumers constraint is known: 3 planned */
        CU_ASSERT_DOUBLE_EQUAL(
            num_at(out.sizing, "constraints.16.consumers.limit"), 3, EPS);
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

/**
 * The hand-computed topic of test_json without keyshift.consumer.msgs.per.s
 * and keyshift.consumers.max (issue 28): no floor, no recommendation, the
 * two properties named, the measured figures kept, the floor illustrated
 * at the stated per-consumer rates (peak 25,000 msgs/s here: ceil(25000 /
 * 1000) = 25 x 4 = 100; ceil(25000 / 10000) = 3 x 4 = 12), constraints at
 * the current and proposed counts only; then each input alone.
 */
static void test_json_no_inputs(void)
{
        ks_sizing_params_t p       = defaults();
        uint64_t           cur[4]  = {100, 100, 100, 700};
        uint32_t           sph[5]  = {0, 1, 2, 3, 5};
        uint64_t           smsg[5] = {1, 1, 2, 4, 100};
        ks_sizing_hot_in_t hot[1]  = {{3, 610, 10}};
        ks_sizing_input_t  in;
        ks_sizing_json_t   out;
        ks_warn_list_t     wl;

        memset(&in, 0, sizeof(in));
        in.topic                  = "t";
        in.params                 = &p;
        in.rates.elapsed_s        = 10;
        in.rates.msgs_per_s       = 100;
        in.rates.seconds          = 10;
        in.rates.peak_msgs_per_s  = 25000;
        in.rates.peak_bytes_per_s = 30000;
        in.window_s               = 10;
        in.current.count          = 4;
        in.current.loads          = cur;
        in.proposals[0].count     = 8;
        in.proposal_cnt           = 1;
        in.sample_phash           = sph;
        in.sample_messages        = smsg;
        in.sample_cnt             = 5;
        in.hot                    = hot;
        in.hot_cnt                = 1;
        in.brokers                = 3;
        in.replication_factor     = 3;
        in.compacted              = -1;
        ks_warn_list_init(&wl);
        CU_ASSERT_EQUAL_FATAL(ks_sizing_json_build(&in, &out, &wl), 0);
        CU_ASSERT_TRUE(json_is_null(at(out.sizing, "recommended")));
        CU_ASSERT_TRUE(json_is_null(at(out.sizing, "partition_floor")));
        CU_ASSERT_TRUE(json_is_null(at(out.sizing, "already_sufficient")));
        CU_ASSERT_TRUE(json_is_null(at(out.sizing, "fewest_brokers")));
        CU_ASSERT_TRUE(json_is_null(at(out.sizing, "basis.base_partitions")));
        CU_ASSERT_TRUE(json_is_null(at(out.sizing, "basis.base_source")));
        CU_ASSERT_TRUE(
            json_is_null(at(out.sizing, "basis.throughput_partitions")));
        CU_ASSERT_TRUE(
            json_is_null(at(out.sizing, "rebalance.partition_count")));
        CU_ASSERT_TRUE(
            json_is_null(at(out.sizing, "rebalance.per_rebalance_s")));
        CU_ASSERT_EQUAL(json_array_size(at(out.sizing, "needs")), 2);
        CU_ASSERT_STRING_EQUAL(json_string_value(at(out.sizing, "needs.0")),
                               "keyshift.consumer.msgs.per.s");
        CU_ASSERT_STRING_EQUAL(json_string_value(at(out.sizing, "needs.1")),
                               "keyshift.consumers.max");
        /* measured: peak, key skew, factor */
        CU_ASSERT_EQUAL(num_at(out.sizing, "basis.peak_msgs_s"), 25000);
        CU_ASSERT_DOUBLE_EQUAL(num_at(out.sizing, "basis.measured_key_skew"),
                               300, EPS);
        CU_ASSERT_DOUBLE_EQUAL(num_at(out.sizing, "basis.skew_factor"), 4, EPS);
        /* illustrated, labelled */
        CU_ASSERT_TRUE(
            json_is_string(at(out.sizing, "illustration.assumption")));
        CU_ASSERT_EQUAL(json_array_size(at(out.sizing, "illustration.floors")),
                        2);
        CU_ASSERT_DOUBLE_EQUAL(
            num_at(out.sizing,
                   "illustration.floors.0.assumed_per_consumer_msgs_s"),
            1000, EPS);
        CU_ASSERT_EQUAL(
            num_at(out.sizing, "illustration.floors.0.throughput_partitions"),
            25);
        CU_ASSERT_EQUAL(
            num_at(out.sizing, "illustration.floors.0.partition_floor"), 100);
        CU_ASSERT_DOUBLE_EQUAL(
            num_at(out.sizing,
                   "illustration.floors.1.assumed_per_consumer_msgs_s"),
            10000, EPS);
        CU_ASSERT_EQUAL(
            num_at(out.sizing, "illustration.floors.1.partition_floor"), 12);
        /* constraints and stalls at 4 and 8 only; the consumers constraint
         * unknown (null) */
        CU_ASSERT_EQUAL(json_object_size(at(out.sizing, "constraints")), 2);
        CU_ASSERT_PTR_NOT_NULL(at(out.sizing, "constraints.4"));
        CU_ASSERT_PTR_NOT_NULL(at(out.sizing, "constraints.8"));
        CU_ASSERT_TRUE(json_is_null(at(out.sizing, "constraints.4.consumers")));
        CU_ASSERT_EQUAL(json_object_size(at(out.sizing, "rebalance.by_count")),
                        2);
        CU_ASSERT_FALSE(ks_test_has_warning(&wl, KS_WARN_REBALANCE_STALL_HIGH));
        ks_sizing_json_clear(&out);
        ks_warn_list_clear(&wl);

        /* a per-consumer rate alone: the throughput floor, ceil(25000 /
         * 5000) = 5 x 4 = 20 -> 32; keyshift.consumers.max still named */
        p.consumer_msgs_per_s = 5000;
        ks_warn_list_init(&wl);
        CU_ASSERT_EQUAL_FATAL(ks_sizing_json_build(&in, &out, &wl), 0);
        CU_ASSERT_EQUAL(num_at(out.sizing, "partition_floor"), 20);
        CU_ASSERT_EQUAL(num_at(out.sizing, "recommended"), 32);
        CU_ASSERT_STRING_EQUAL(
            json_string_value(at(out.sizing, "basis.base_source")),
            "throughput");
        CU_ASSERT_EQUAL(json_array_size(at(out.sizing, "needs")), 1);
        CU_ASSERT_STRING_EQUAL(json_string_value(at(out.sizing, "needs.0")),
                               "keyshift.consumers.max");
        CU_ASSERT_TRUE(json_is_null(at(out.sizing, "illustration")));
        CU_ASSERT_TRUE(
            json_is_null(at(out.sizing, "constraints.32.consumers")));
        CU_ASSERT_EQUAL(num_at(out.sizing, "fewest_brokers"), 3);
        ks_sizing_json_clear(&out);
        ks_warn_list_clear(&wl);

        /* a consumer count alone: 6 x 4 = 24 -> 32, its constraint known */
        p.consumer_msgs_per_s = 0;
        p.consumers_max       = 6;
        ks_warn_list_init(&wl);
        CU_ASSERT_EQUAL_FATAL(ks_sizing_json_build(&in, &out, &wl), 0);
        CU_ASSERT_EQUAL(num_at(out.sizing, "partition_floor"), 24);
        CU_ASSERT_EQUAL(num_at(out.sizing, "recommended"), 32);
        CU_ASSERT_STRING_EQUAL(
            json_string_value(at(out.sizing, "basis.base_source")),
            "consumers");
        CU_ASSERT_TRUE(
            json_is_null(at(out.sizing, "basis.throughput_partitions")));
        CU_ASSERT_STRING_EQUAL(json_string_value(at(out.sizing, "needs.0")),
                               "keyshift.consumer.msgs.per.s");
        CU_ASSERT_DOUBLE_EQUAL(
            num_at(out.sizing, "constraints.4.consumers.limit"), 6, EPS);
        CU_ASSERT_EQUAL(num_at(out.sizing, "constraints.4.consumers.ok"), 0);
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
        CU_ASSERT_TRUE(json_is_null(at(out.sizing, "recommended")));
        CU_ASSERT_EQUAL(json_array_size(at(out.sizing, "needs")), 2);
        CU_ASSERT_TRUE(json_is_null(at(out.sizing, "already_sufficient")));
        /* no complete second: no peak to illustrate from */
        CU_ASSERT_TRUE(
            json_is_string(at(out.sizing, "illustration.assumption")));
        CU_ASSERT_EQUAL(json_array_size(at(out.sizing, "illustration.floors")),
                        0);
        CU_ASSERT_TRUE(json_is_null(at(out.sizing, "fewest_brokers")));
        CU_ASSERT_TRUE(json_is_null(at(out.sizing, "basis.brokers")));
        ks_sizing_json_clear(&out);
        ks_sizing_json_clear(&out); /* idempotent */
        ks_warn_list_clear(&wl);
}

void ks_test_register(void)
{
        KS_ADD_SUITE("hot keys",
                     {"Zipf recall, 1024 counters", test_zipf_recall});
        KS_ADD_SUITE("sizing report objects",
                     {"hand-computed topic", test_json},
                     {"no consumer inputs: no advice", test_json_no_inputs},
                     {"nothing known", test_json_nothing_known});
}
