/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_learn.c
 * @brief The confirmation rule of ks_learn.h, with partitions from
 *        librdkafka's own rd_kafka_msg_partitioner_* functions (the
 *        oracle), not from keyshift's hashes:
 *  - keys on which every candidate gives the same partition prove nothing;
 *  - 31 distinct discriminating keys do not confirm, the 32nd does;
 *  - one key one candidate gets wrong rules it out;
 *  - the same key acknowledged many times counts once;
 *  - a placement no candidate explains is unexplained;
 *  - the candidates: the configured one and the other families' _random.
 */
#include <stdio.h>
#include <string.h>

#include <librdkafka/rdkafka.h>

#include "ks_learn.h"
#include "ks_test.h"

typedef int32_t(rk_partitioner_f)(const rd_kafka_topic_t *, const void *,
                                  size_t, int32_t, void *, void *);

static rk_partitioner_f *const oracle[3] = {rd_kafka_msg_partitioner_consistent,
                                            rd_kafka_msg_partitioner_murmur2,
                                            rd_kafka_msg_partitioner_fnv1a};

static int32_t part(int family, const char *key, int32_t count)
{
        return oracle[family](NULL, key, strlen(key), count, NULL, NULL);
}

/** @returns 1 if the three families put @p key in one partition. */
static int all_agree(const char *key, int32_t count)
{
        return part(0, key, count) == part(1, key, count) &&
               part(1, key, count) == part(2, key, count);
}

#define COUNT 6

static void test_candidates(void)
{
        ks_learn_t l;

        ks_learn_init(&l, KS_PARTITIONER_CONSISTENT_RANDOM, 10);
        CU_ASSERT_EQUAL(l.cnt, 3);
        CU_ASSERT_EQUAL(l.cand[0], KS_PARTITIONER_CONSISTENT_RANDOM);
        CU_ASSERT_EQUAL(l.cand[1], KS_PARTITIONER_MURMUR2_RANDOM);
        CU_ASSERT_EQUAL(l.cand[2], KS_PARTITIONER_FNV1A_RANDOM);
        ks_learn_init(&l, KS_PARTITIONER_MURMUR2, 10); /* keeps its rules */
        CU_ASSERT_EQUAL(l.cnt, 3);
        CU_ASSERT_EQUAL(l.cand[0], KS_PARTITIONER_MURMUR2);
        ks_learn_init(&l, KS_PARTITIONER_RANDOM, 10);
        CU_ASSERT_EQUAL(l.cnt, 4);
}

static void test_agreeing_keys_prove_nothing(void)
{
        ks_learn_t l;
        char       key[32];
        int        i, n = 0;

        ks_learn_init(&l, KS_PARTITIONER_CONSISTENT_RANDOM, 10);
        for (i = 0; n < 200 && i < 1000000; i++) {
                snprintf(key, sizeof(key), "%d", 200000000 + i);
                if (!all_agree(key, COUNT))
                        continue;
                n++;
                CU_ASSERT_EQUAL(ks_learn_ack(&l, key, strlen(key), COUNT,
                                             part(1, key, COUNT)),
                                -1);
        }
        CU_ASSERT_EQUAL(n, 200);
        CU_ASSERT_EQUAL(l.discriminating, 0);
        CU_ASSERT_EQUAL(l.state, KS_LEARN_LEARNING);
        /* NULL and empty keys prove nothing either */
        CU_ASSERT_EQUAL(ks_learn_ack(&l, NULL, 0, COUNT, 0), -1);
        CU_ASSERT_EQUAL(ks_learn_ack(&l, "", 0, COUNT, 0), -1);
        CU_ASSERT_EQUAL(l.discriminating, 0);
}

/** @brief Feeds @p n distinct discriminating keys delivered as family
 *         @p truth places them. @returns the last ks_learn_ack(). */
static int feed(ks_learn_t *l, int truth, int n, int *next)
{
        char key[32];
        int  r = -1;

        while (n > 0) {
                snprintf(key, sizeof(key), "%d", 300000000 + (*next)++);
                if (all_agree(key, COUNT))
                        continue;
                r = ks_learn_ack(l, key, strlen(key), COUNT,
                                 part(truth, key, COUNT));
                n--;
        }
        return r;
}

static void test_confirmed_at_32(void)
{
        ks_learn_t l;
        int        next = 0;

        ks_learn_init(&l, KS_PARTITIONER_CONSISTENT_RANDOM, 10);
        CU_ASSERT_EQUAL(feed(&l, 1, KS_LEARN_CONFIRM_KEYS - 1, &next), -1);
        CU_ASSERT_EQUAL(l.state, KS_LEARN_LEARNING);
        CU_ASSERT_EQUAL(feed(&l, 1, 1, &next), 1); /* murmur2_random */
        CU_ASSERT_EQUAL(l.state, KS_LEARN_CONFIRMED);
        CU_ASSERT_EQUAL(l.cand[l.confirmed], KS_PARTITIONER_MURMUR2_RANDOM);
        CU_ASSERT_EQUAL(l.disagree[1], 0);
        CU_ASSERT(l.disagree[0] > 0 && l.disagree[2] > 0);
        /* settled: nothing more */
        CU_ASSERT_EQUAL(feed(&l, 2, 5, &next), -1);

        /* the configured one confirmed */
        ks_learn_init(&l, KS_PARTITIONER_CONSISTENT_RANDOM, 10);
        CU_ASSERT_EQUAL(feed(&l, 0, KS_LEARN_CONFIRM_KEYS, &next), 0);
}

static void test_one_key_against_rules_out(void)
{
        ks_learn_t l;
        int        next = 0;
        char       key[32];

        ks_learn_init(&l, KS_PARTITIONER_CONSISTENT_RANDOM, 10);
        feed(&l, 2, 10, &next);
        /* one discriminating key delivered as murmur2 places it: fnv1a is
         * out too, and nothing explains every key */
        do
                snprintf(key, sizeof(key), "%d", 300000000 + next++);
        while (part(1, key, COUNT) == part(2, key, COUNT));
        ks_learn_ack(&l, key, strlen(key), COUNT, part(1, key, COUNT));
        CU_ASSERT(l.disagree[2] > 0);
        CU_ASSERT_EQUAL(feed(&l, 2, KS_LEARN_CONFIRM_KEYS, &next), -1);
        CU_ASSERT_EQUAL(l.state, KS_LEARN_UNEXPLAINED);
}

static void test_repeated_key_counts_once(void)
{
        ks_learn_t l;
        char       key[32];
        int        i = 0;

        ks_learn_init(&l, KS_PARTITIONER_CONSISTENT_RANDOM, 10);
        do
                snprintf(key, sizeof(key), "%d", 400000000 + i++);
        while (all_agree(key, COUNT));
        for (i = 0; i < 100; i++)
                CU_ASSERT_EQUAL(ks_learn_ack(&l, key, strlen(key), COUNT,
                                             part(1, key, COUNT)),
                                -1);
        CU_ASSERT_EQUAL(l.key_cnt, 1);
        CU_ASSERT_EQUAL(l.discriminating, 100);
        CU_ASSERT_EQUAL(l.state, KS_LEARN_LEARNING);
}

static void test_unexplained(void)
{
        ks_learn_t l;
        char       key[32];
        int        i, n = 0;

        /* every key to partition 0 (an application partitioner_cb) */
        ks_learn_init(&l, KS_PARTITIONER_CONSISTENT_RANDOM, 10);
        for (i = 0; n < 64; i++) {
                snprintf(key, sizeof(key), "%d", 500000000 + i);
                if (all_agree(key, COUNT))
                        continue;
                n++;
                CU_ASSERT_EQUAL(ks_learn_ack(&l, key, strlen(key), COUNT, 0),
                                -1);
        }
        CU_ASSERT_EQUAL(l.state, KS_LEARN_UNEXPLAINED);
        CU_ASSERT_EQUAL(l.confirmed, -1);

        /* the same deliveries under a configured random partitioner: it
         * explains them (it predicts nothing a delivery can contradict) */
        ks_learn_init(&l, KS_PARTITIONER_RANDOM, 10);
        for (i = 0, n = 0; n < 64; i++) {
                snprintf(key, sizeof(key), "%d", 500000000 + i);
                if (all_agree(key, COUNT))
                        continue;
                n++;
                ks_learn_ack(&l, key, strlen(key), COUNT, 0);
        }
        CU_ASSERT_EQUAL(l.state, KS_LEARN_CONFIRMED);
        CU_ASSERT_EQUAL(l.confirmed, 0);
}

void ks_test_register(void)
{
        KS_ADD_SUITE(
            "partitioner learned from deliveries (ks_learn)",
            {"candidates", test_candidates},
            {"keys on which candidates agree prove nothing",
             test_agreeing_keys_prove_nothing},
            {"confirmed at 32 distinct discriminating keys",
             test_confirmed_at_32},
            {"one key against rules a candidate out",
             test_one_key_against_rules_out},
            {"a repeated key counts once", test_repeated_key_counts_once},
            {"no candidate explains: unexplained", test_unexplained});
}
