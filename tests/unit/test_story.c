/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_story.c
 * @brief The topic's headline (ks_story.h) on topic objects built here the
 *        way the report writes them: each part appears when its figures
 *        say so, the advice names the inputs that drove it (and the one
 *        not given), there is none without a consumer rate or count
 *        (issue 28), and it never contradicts the figures (an
 *        unspreadable hot key turns the advice into one for the other
 *        keys).
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "ks_story.h"
#include "ks_test.h"

/** A 6-partition topic, 12 proposed, 50 % moved; partitions balanced at
 *  1.12x now and 1.21x at 12; no consumer input: no advice (the demo's
 *  figures). */
static json_t *topic_balanced(void)
{
        json_error_t e;
        json_t      *t = json_loads(
                 "{\"partition_count\": {\"current\": 6},"
                      " \"proposals\": [{\"partition_count\": 12,"
                      "   \"moved\": {\"messages_fraction\": 0.503,"
                      "               \"distinct_keys_fraction\": 0.5},"
                      "   \"partitions\": {\"messages\": [], \"bytes\": []}}],"
                      " \"skew\": {\"partitions\": {"
                      "   \"6\": {\"max_over_median\": 1.12, \"max\": 112,"
                      "          \"median\": 100, \"limit\": 2.5},"
                      "   \"12\": {\"max_over_median\": 1.21, \"max\": 121,"
                      "           \"median\": 100, \"limit\": 2.5}}},"
                      " \"hot_keys\": [{\"key\": \"219060533\", \"share\": 0.02,"
                      "   \"msgs_per_s\": 213, \"fixable_by_partitions\": true,"
                      "   \"salt_buckets\": 1}],"
                      " \"sizing\": {\"partition_floor\": null,"
                      "   \"recommended\": null, \"already_sufficient\": null,"
                      "   \"needs\": [\"keyshift.consumer.msgs.per.s\","
                      "             \"keyshift.consumers.max\"],"
                      "   \"illustration\": {\"assumption\": \"assumed\","
                      "     \"floors\": [{\"assumed_per_consumer_msgs_s\": 1000,"
                      "       \"throughput_partitions\": 11, \"partition_floor\": 37},"
                      "      {\"assumed_per_consumer_msgs_s\": 10000,"
                      "       \"throughput_partitions\": 2, \"partition_floor\": 7}]},"
                      "   \"basis\": {\"base_partitions\": null,"
                      "     \"base_source\": null, \"skew_factor\": 3.29,"
                      "     \"measured_key_skew\": 98.8, \"peak_msgs_s\": 10017,"
                      "     \"seconds_measured\": 12,"
                      "     \"partition_target_msgs_s\": 830}},"
                      " \"acknowledged\": {\"mismatched\": 0}}",
                 0, &e);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        return t;
}

static int has(const char *text, const char *needle)
{
        if (strstr(text, needle))
                return 1;
        printf("\n  not in the story: \"%s\"\n  story: %s\n", needle, text);
        return 0;
}

/** @brief Gives @p t's sizing an advice of @p rec partitions = @p base
 *         (@p source) x 3.29 = @p floor, with @p needs ("" or one
 *         property) not given. */
static void advise(json_t *t, const char *source, long long base,
                   long long floor, long long rec, const char *needs)
{
        json_t *sz    = json_object_get(t, "sizing");
        json_t *basis = json_object_get(sz, "basis");

        json_object_set_new(basis, "base_source", json_string(source));
        json_object_set_new(basis, "base_partitions", json_integer(base));
        json_object_set_new(sz, "partition_floor", json_integer(floor));
        json_object_set_new(sz, "recommended", json_integer(rec));
        json_object_set_new(sz, "already_sufficient", json_false());
        json_object_set_new(sz, "illustration", json_null());
        json_object_set_new(sz, "needs",
                            *needs ? json_pack("[s]", needs) : json_array());
}

/* issue 28: without a consumer rate and count, no count is recommended;
 * the story names the properties, the measured figures, and the
 * illustration as assumptions */
static void test_no_inputs_no_advice(void)
{
        json_t *t = topic_balanced();
        char    buf[2048];

        ks_story_headline(t, buf, sizeof(buf));
        CU_ASSERT(has(buf, "Raising 6 -> 12 moves 50.3% of keyed messages "
                           "and 50.0% of keys"));
        CU_ASSERT(has(buf, "Partitions are balanced: the busiest is 1.12x "
                           "the median now at 6, 1.21x the median at 12 "
                           "(limit 2.5x)"));
        CU_ASSERT(has(buf, "Sizing: no partition count is recommended "
                           "without keyshift.consumer.msgs.per.s (one "
                           "consumer's msgs/s) and keyshift.consumers.max "
                           "(consumers planned); measured: peak 10017 "
                           "msgs/s, key skew 98.8, skew factor 3.29."));
        CU_ASSERT(has(buf, "Only as an illustration, at an assumed 1000 "
                           "msgs/s a consumer the floor would be 37 "
                           "partitions (11 x 3.29); at an assumed 10000 "
                           "msgs/s a consumer the floor would be 7 "
                           "partitions (2 x 3.29)."));
        CU_ASSERT_PTR_NULL(strstr(buf, "Sizing advice"));
        CU_ASSERT_PTR_NULL(strstr(buf, "recommended:"));
        CU_ASSERT_PTR_NULL(strstr(buf, "headroom"));
        CU_ASSERT_PTR_NULL(strstr(buf, "Hot key"));
        CU_ASSERT_PTR_NULL(strstr(buf, "PARTITIONER_MISMATCH"));
        CU_ASSERT_NOT_EQUAL(buf[strlen(buf) - 1], ' ');
        /* no key sample: the skew is said unknown, not 0 */
        json_object_set_new(
            json_object_get(json_object_get(t, "sizing"), "basis"),
            "measured_key_skew", json_null());
        ks_story_headline(t, buf, sizeof(buf));
        CU_ASSERT(has(buf, "measured: peak 10017 msgs/s, key skew unknown."));
        /* no complete second yet: no peak, no illustration, rough */
        json_object_set_new(
            json_object_get(json_object_get(t, "sizing"), "basis"),
            "seconds_measured", json_integer(0));
        json_object_set_new(
            json_object_get(json_object_get(t, "sizing"), "illustration"),
            "floors", json_array());
        json_object_set_new(json_object_get(t, "sizing"), "enough_data",
                            json_false());
        ks_story_headline(t, buf, sizeof(buf));
        CU_ASSERT(has(buf, "measured: no peak yet (no complete second of "
                           "traffic), key skew unknown. (Rough: under 10 s "
                           "of traffic measured.)"));
        CU_ASSERT_PTR_NULL(strstr(buf, "illustration"));
        /* a report of an earlier keyshift: its count came from today's
         * count x the skew factor; not told as advice */
        advise(t, "current_count", 6, 20, 32, "");
        json_object_del(json_object_get(t, "sizing"), "needs");
        ks_story_headline(t, buf, sizeof(buf));
        CU_ASSERT(has(buf, "Sizing: no partition count is recommended"));
        CU_ASSERT_PTR_NULL(strstr(buf, "32 partitions"));
        CU_ASSERT_PTR_NULL(strstr(buf, "illustration"));
        json_decref(t);
}

static void test_hot_key_changes_advice(void)
{
        json_t *t   = topic_balanced();
        json_t *hot = json_array_get(json_object_get(t, "hot_keys"), 0);
        char    buf[2048];

        advise(t, "consumers", 8, 27, 32, "keyshift.consumer.msgs.per.s");
        /* one key carries half the topic, above a partition's target */
        json_object_set_new(hot, "share", json_real(0.5));
        json_object_set_new(hot, "msgs_per_s", json_real(5000));
        json_object_set_new(hot, "fixable_by_partitions", json_false());
        json_object_set_new(hot, "salt_buckets", json_integer(7));
        json_object_set_new(
            json_object_get(json_object_get(t, "skew"), "partitions"), "12",
            json_pack("{s:f, s:i, s:i, s:f}", "max_over_median", 6.5, "max",
                      650, "median", 100, "limit", 2.5));
        ks_story_headline(t, buf, sizeof(buf));
        CU_ASSERT(has(buf, "Partitions are uneven: the busiest is 1.12x the "
                           "median now at 6, 6.50x the median at 12 (limit "
                           "2.5x)"));
        CU_ASSERT(has(buf, "Hot key 219060533 carries 50.0% of the topic "
                           "(5000 msgs/s, above one partition's target of "
                           "830 msgs/s): no partition count can spread it; "
                           "salt it into 7 buckets (219060533#0..219060533#6"));
        CU_ASSERT(has(buf, "For the other keys, sizing advice: 32 partitions "
                           "= 8 (planned consumers; throughput not checked: "
                           "keyshift.consumer.msgs.per.s not given) x skew "
                           "factor 3.29"));
        CU_ASSERT(has(buf, "= 27, rounded up to a power of two"));
        CU_ASSERT_PTR_NULL(strstr(buf, "headroom"));
        CU_ASSERT_PTR_NULL(strstr(buf, "illustration"));
        /* under 10 s of traffic: no verdict on a key, the advice rough */
        json_object_set_new(json_object_get(t, "sizing"), "enough_data",
                            json_false());
        ks_story_headline(t, buf, sizeof(buf));
        CU_ASSERT_PTR_NULL(strstr(buf, "Hot key"));
        CU_ASSERT(has(buf, "Sizing advice: 32 partitions"));
        CU_ASSERT(has(buf, "(Rough: under 10 s of traffic measured.)"));
        json_decref(t);
}

static void test_throughput_and_sufficient(void)
{
        json_t *t     = topic_balanced();
        json_t *sz    = json_object_get(t, "sizing");
        json_t *basis = json_object_get(sz, "basis");
        char    buf[2048];

        /* both inputs: the seed formula's sentence */
        advise(t, "throughput", 2, 4, 4, "");
        json_object_set_new(basis, "per_consumer_msgs_s", json_real(5000));
        json_object_set_new(basis, "skew_factor", json_real(2));
        json_object_set_new(sz, "already_sufficient", json_true());
        ks_story_headline(t, buf, sizeof(buf));
        CU_ASSERT(has(buf, "Sizing advice: 4 partitions = 2 (throughput: peak "
                           "10017 msgs/s / 5000 msgs/s a consumer) x skew "
                           "factor 2.00"));
        CU_ASSERT(has(buf, "= 4, a power of two"));
        CU_ASSERT(has(buf, "The current 6 partitions already meet the floor"));
        CU_ASSERT_PTR_NULL(strstr(buf, "headroom"));
        CU_ASSERT_PTR_NULL(strstr(buf, "not given"));
        /* the rate alone: the count is named as not given */
        json_object_set_new(sz, "needs",
                            json_pack("[s]", "keyshift.consumers.max"));
        ks_story_headline(t, buf, sizeof(buf));
        CU_ASSERT(has(buf, "(throughput: peak 10017 msgs/s / 5000 msgs/s a "
                           "consumer; keyshift.consumers.max not given) x "));
        json_decref(t);
}

static void test_not_predictable_and_mismatch(void)
{
        json_t *t = topic_balanced();
        json_t *p = json_array_get(json_object_get(t, "proposals"), 0);
        char    buf[2048];

        json_object_set_new(p, "predictable", json_false());
        json_object_set_new(p, "moved", json_null());
        json_object_set_new(p, "reason",
                            json_string("no partitioner explains"));
        json_object_set_new(json_object_get(t, "acknowledged"), "mismatched",
                            json_integer(3));
        ks_story_headline(t, buf, sizeof(buf));
        CU_ASSERT(has(buf, "What raising 6 -> 12 moves cannot be predicted: "
                           "no partitioner explains."));
        CU_ASSERT_PTR_NULL(strstr(buf, "moves 0.0%"));
        /* the proposal's balance is not the model's to tell */
        CU_ASSERT_PTR_NULL(strstr(buf, "at 12 (limit"));
        CU_ASSERT(has(buf, "(PARTITIONER_MISMATCH)"));
        json_decref(t);
}

/** A merged report has no `skew`: the balance comes from the loads. */
static void test_balance_from_loads(void)
{
        json_t *t = topic_balanced();
        json_t *cur =
            json_loads("{\"partitions\": {\"messages\": [10, 40, 10, 10],"
                       " \"bytes\": [0, 0, 0, 0]}}",
                       0, NULL);
        char buf[2048];

        json_object_del(t, "skew");
        json_object_set_new(t, "current", cur);
        ks_story_headline(t, buf, sizeof(buf));
        CU_ASSERT(has(buf, "Partitions are uneven: the busiest is 4.00x the "
                           "median now at 6"));
        json_object_set_new(
            cur, "partitions",
            json_loads("{\"messages\": [0, 5, 0], \"bytes\": [0, 0, 0]}", 0,
                       NULL));
        ks_story_headline(t, buf, sizeof(buf));
        CU_ASSERT(has(buf, "Some partitions receive no traffic at 6"));
        json_decref(t);
}

static void test_unknown_count_and_cut(void)
{
        json_t *t = topic_balanced();
        char    small[40];

        json_object_set_new(json_object_get(t, "partition_count"), "current",
                            json_null());
        ks_story_headline(t, small, sizeof(small));
        CU_ASSERT_EQUAL(strlen(small), sizeof(small) - 1); /* cut, ended */
        CU_ASSERT_EQUAL(strncmp(small, "The current partition count is", 30),
                        0);
        json_decref(t);
}

void ks_test_register(void)
{
        KS_ADD_SUITE("the topic's story (ks_story)",
                     {"no consumer inputs: no advice, an illustration",
                      test_no_inputs_no_advice},
                     {"a hot key partitions cannot spread changes the advice",
                      test_hot_key_changes_advice},
                     {"throughput base, current count sufficient",
                      test_throughput_and_sufficient},
                     {"not predictable, deliveries disagreed",
                      test_not_predictable_and_mismatch},
                     {"balance from the loads (merged reports)",
                      test_balance_from_loads},
                     {"unknown count; a short buffer is cut",
                      test_unknown_count_and_cut});
}
