/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_topic.c
 * @brief The per-topic analysis: messages before the count is known, a
 *        count change underneath, explicit partitions, acknowledgement
 *        checks, and the report built from it. Expected partitions come
 *        from librdkafka's own partitioner functions.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <librdkafka/rdkafka.h>

#include "ks_config.h"
#include "ks_registry.h"
#include "ks_report.h"
#include "ks_test.h"
#include "ks_topic.h"

static ks_topic_params_t params(ks_partitioner_t p)
{
        ks_topic_params_t tp = {0};
        tp.partitioner       = p;
        tp.sticky_linger_ms  = 10;
        tp.key_sample_size   = 1024;
        tp.mixed_sample_size = 256;
        tp.topk_capacity     = 256;
        tp.flow_max_cells    = 65536;
        tp.pending_max       = 100;
        return tp;
}

static int32_t rk_murmur2(const char *key, int32_t cnt)
{
        return rd_kafka_msg_partitioner_murmur2(NULL, key, strlen(key), cnt,
                                                NULL, NULL);
}

static void test_pending_until_count_known(void)
{
        ks_topic_params_t   tp = params(KS_PARTITIONER_MURMUR2_RANDOM);
        ks_topic_t         *t  = ks_topic_new("t", &tp, 1000);
        ks_topic_snapshot_t s;
        uint64_t            expect[8] = {0};
        char                key[32];
        int                 i;

        for (i = 0; i < 150; i++) { /* 100 kept, 50 beyond pending_max */
                snprintf(key, sizeof(key), "k%d", i % 40);
                ks_topic_record(t, key, strlen(key), -1, 10);
                if (i < 100)
                        expect[rk_murmur2(key, 8)]++;
        }
        CU_ASSERT_EQUAL(ks_topic_snapshot(t, &s), 0);
        CU_ASSERT_EQUAL(s.partition_count, 0);
        CU_ASSERT_PTR_NULL(s.current);
        CU_ASSERT_EQUAL(s.pending, 100);
        CU_ASSERT_EQUAL(s.c.unplaced, 50);
        ks_topic_snapshot_free(&s);
        /* NULL keys (sticky) while the count is unknown join the window. */
        for (i = 0; i < 7; i++)
                ks_topic_record(t, NULL, 0, -1, 10);

        CU_ASSERT_EQUAL(
            ks_topic_set_partition_count(t, 8, KS_COUNT_METADATA, 2000),
            0); /* the first count is not a change */
        CU_ASSERT_EQUAL(ks_topic_snapshot(t, &s), 0);
        CU_ASSERT_EQUAL(s.partition_count, 8);
        CU_ASSERT_EQUAL(s.pending, 0);
        CU_ASSERT_EQUAL(s.window_hashed.messages, 100);
        CU_ASSERT_EQUAL(s.window_total.messages, 107);
        for (i = 0; i < 8; i++)
                CU_ASSERT_EQUAL(s.current[i].messages, expect[i]);
        CU_ASSERT_EQUAL(s.proposal_cnt, 1);
        CU_ASSERT_EQUAL(s.proposals[0].partition_count, 16);
        CU_ASSERT_EQUAL(s.c.hashed.messages, 150); /* sketches saw all */
        ks_topic_snapshot_free(&s);
        ks_topic_destroy(t);
}

static void test_count_change_restarts_window(void)
{
        ks_topic_params_t   tp = params(KS_PARTITIONER_MURMUR2);
        ks_topic_t         *t;
        ks_topic_snapshot_t s;
        int                 i;

        tp.proposed[0]  = 12;
        tp.proposed_cnt = 1;
        t               = ks_topic_new("t", &tp, 0);
        ks_topic_set_partition_count(t, 6, KS_COUNT_METADATA, 1);
        for (i = 0; i < 50; i++)
                ks_topic_record(t, "abc", 3, -1, 1);
        /* Someone really raises the count to 12 underneath. */
        CU_ASSERT_EQUAL(
            ks_topic_set_partition_count(t, 12, KS_COUNT_METADATA, 5000), 1);
        for (i = 0; i < 20; i++)
                ks_topic_record(t, "abc", 3, -1, 1);
        CU_ASSERT_EQUAL(ks_topic_snapshot(t, &s), 0);
        CU_ASSERT_EQUAL(s.partition_count, 12);
        CU_ASSERT_EQUAL(s.previous_count, 6);
        CU_ASSERT_EQUAL(s.count_changed_at_ms, 5000);
        CU_ASSERT_EQUAL(s.analysis_since_ms, 5000);
        CU_ASSERT_EQUAL(s.c.total.messages, 70);      /* cumulative */
        CU_ASSERT_EQUAL(s.window_total.messages, 20); /* since the change */
        CU_ASSERT_EQUAL(s.current[rk_murmur2("abc", 12)].messages, 20);
        /* 12 -> 12 moves nothing; and a proposal not above current is
         * flagged in the report. */
        CU_ASSERT_EQUAL(s.proposals[0].moved.messages, 0);
        {
                ks_warn_list_t   wl;
                ks_report_opts_t o = {5, 6000, 0, NULL, 0, 0, 0, 0, NULL};
                json_t          *j;
                size_t           k;
                int              found = 0;
                ks_warn_list_init(&wl);
                j = ks_report_topic(&s, &o, &wl);
                for (k = 0; k < wl.cnt; k++)
                        found |= !strcmp(wl.items[k].code,
                                         "PROPOSAL_NOT_AN_INCREASE") ||
                                 0;
                CU_ASSERT(found);
                CU_ASSERT_EQUAL(
                    json_integer_value(json_object_get(
                        json_object_get(j, "partition_count"), "previous")),
                    6);
                json_decref(j);
                ks_warn_list_clear(&wl);
        }
        ks_topic_snapshot_free(&s);
        ks_topic_destroy(t);
}

static void test_explicit_partitions(void)
{
        ks_topic_params_t   tp = params(KS_PARTITIONER_CONSISTENT_RANDOM);
        ks_topic_t         *t  = ks_topic_new("t", &tp, 0);
        ks_topic_snapshot_t s;

        ks_topic_set_partition_count(t, 4, KS_COUNT_CONFIG, 1);
        ks_topic_record(t, "x", 1, 3, 9);
        ks_topic_record(t, "x", 1, 7, 9); /* beyond the count */
        ks_topic_record(t, NULL, 0, 2, 9);
        CU_ASSERT_EQUAL(ks_topic_snapshot(t, &s), 0);
        CU_ASSERT_EQUAL(s.c.explicit_partition.messages, 3);
        CU_ASSERT_EQUAL(s.c.explicit_out_of_range, 1);
        CU_ASSERT_EQUAL(s.window_total.messages, 2); /* refused: nowhere */
        CU_ASSERT_EQUAL(s.current[3].messages, 1);
        CU_ASSERT_EQUAL(s.current[2].messages, 1);
        CU_ASSERT_EQUAL(s.proposals[0].partitions[3].messages, 1);
        CU_ASSERT_EQUAL(s.proposals[0].moved.messages, 0);
        CU_ASSERT_EQUAL(s.c.hashed.messages, 0);
        ks_topic_snapshot_free(&s);
        ks_topic_destroy(t);
}

static void test_acks(void)
{
        ks_topic_params_t   tp = params(KS_PARTITIONER_MURMUR2_RANDOM);
        ks_topic_t         *t  = ks_topic_new("t", &tp, 0);
        ks_topic_snapshot_t s;
        int32_t p6 = rk_murmur2("key", 6), p9 = rk_murmur2("key", 9);

        /* Before the count is known: kept, then checked. */
        CU_ASSERT_EQUAL(ks_topic_ack(t, "key", 3, p6, 0), 0);
        ks_topic_ack(t, NULL, 0, 1, 0);   /* NULL key: not predictable */
        ks_topic_ack(t, "key", 3, -1, 1); /* failed */
        ks_topic_set_partition_count(t, 6, KS_COUNT_METADATA, 1);
        CU_ASSERT_EQUAL(ks_topic_snapshot(t, &s), 0);
        CU_ASSERT_EQUAL(s.c.ack_matched, 1);
        CU_ASSERT_EQUAL(s.c.ack_not_predictable, 1);
        CU_ASSERT_EQUAL(s.c.ack_failed, 1);
        CU_ASSERT_EQUAL(s.c.ack_pending, 0);
        ks_topic_snapshot_free(&s);

        /* librdkafka saw 9 partitions before keyshift did: pending, then
         * explained by the new count. */
        if (p9 != p6) {
                CU_ASSERT_EQUAL(ks_topic_ack(t, "key", 3, p9, 0), 1);
                ks_topic_set_partition_count(t, 9, KS_COUNT_METADATA, 2);
                CU_ASSERT_EQUAL(ks_topic_snapshot(t, &s), 0);
                CU_ASSERT_EQUAL(s.c.ack_matched, 2);
                CU_ASSERT_EQUAL(s.c.ack_mismatched, 0);
                ks_topic_snapshot_free(&s);
        }
        /* A partition no count explains is a mismatch, with an example. */
        ks_topic_ack(t, "key", 3, (rk_murmur2("key", 9) + 1) % 9, 0);
        ks_topic_settle_acks(t, 1);
        CU_ASSERT_EQUAL(ks_topic_snapshot(t, &s), 0);
        CU_ASSERT_EQUAL(s.c.ack_mismatched, 1);
        CU_ASSERT(s.has_mismatch);
        CU_ASSERT_EQUAL(s.mismatch.keylen, 3);
        CU_ASSERT_EQUAL(memcmp(s.mismatch.key, "key", 3), 0);
        CU_ASSERT_EQUAL(s.mismatch.expected, rk_murmur2("key", 9));
        ks_topic_snapshot_free(&s);
        ks_topic_destroy(t);
}

/** @returns the topic's counters and (@p has_mismatch) whether a
 *           mismatch was confirmed, from a snapshot. */
static ks_topic_counters_t acks_of(ks_topic_t *t, int *has_mismatch,
                                   ks_mismatch_example_t *example)
{
        ks_topic_snapshot_t s;
        ks_topic_counters_t c;

        memset(&c, 0, sizeof(c));
        CU_ASSERT_EQUAL_FATAL(ks_topic_snapshot(t, &s), 0);
        c = s.c;
        if (has_mismatch)
                *has_mismatch = s.has_mismatch;
        if (example)
                *example = s.mismatch;
        ks_topic_snapshot_free(&s);
        return c;
}

/** Acknowledgements once the count is known: the common outcomes are
 *  counted without the topic's lock, in the same counters; after a
 *  disagreement every acknowledgement is checked under the lock again, so
 *  that the partitioner families are followed (diag_checked). */
static void test_acks_unlocked(void)
{
        ks_topic_params_t     tp = params(KS_PARTITIONER_MURMUR2_RANDOM);
        ks_topic_t           *t  = ks_topic_new("t", &tp, 0);
        ks_topic_counters_t   c;
        ks_mismatch_example_t ex;
        int                   hm;
        int32_t               p6 = rk_murmur2("key", 6);

        ks_topic_set_partition_count(t, 6, KS_COUNT_METADATA, 1);
        CU_ASSERT_EQUAL(ks_topic_ack(t, "key", 3, p6, 0), 0);
        ks_topic_ack(t, NULL, 0, 2, 0);   /* not predictable */
        ks_topic_ack(t, "key", 3, -1, 1); /* failed */
        c = acks_of(t, &hm, &ex);
        CU_ASSERT_EQUAL(c.ack_messages, 3);
        CU_ASSERT_EQUAL(c.ack_matched, 1);
        CU_ASSERT_EQUAL(c.ack_not_predictable, 1);
        CU_ASSERT_EQUAL(c.ack_failed, 1);
        CU_ASSERT_EQUAL(c.diag_checked, 0);

        /* a disagreement: diagnosed from now on, the agreeing ones too */
        CU_ASSERT_EQUAL(ks_topic_ack(t, "key", 3, (p6 + 1) % 6, 0), 1);
        ks_topic_ack(t, "key", 3, p6, 0);
        c = acks_of(t, &hm, &ex);
        CU_ASSERT_EQUAL(c.ack_messages, 5);
        CU_ASSERT_EQUAL(c.ack_matched, 2);
        CU_ASSERT_EQUAL(c.ack_pending, 1);
        CU_ASSERT_EQUAL(c.diag_checked, 1);   /* the agreeing one */
        CU_ASSERT_EQUAL(c.diag_follow[1], 1); /* murmur2 */
        ks_topic_destroy(t);
}

/** A key whose partition differs under 6 and under 12 partitions. */
static void key_moving_6_12(int i, char *key, size_t size)
{
        do
                snprintf(key, size, "key-%d", i++);
        while (rk_murmur2(key, 6) == rk_murmur2(key, 12));
}

/**
 * @p doubted deliveries placed under a count keyshift had not seen yet
 * (6 -> 12), then (@p stale) an answer still saying 6, then 100
 * deliveries under the new count once keyshift knows it: the
 * doubts are explained by the new count (those beyond the KS_SUSPECTS_MAX
 * kept are unverified, never mismatched unchecked); the diagnosis they
 * began ends with them, its figures dropped, and later acknowledgements
 * are counted without the lock again (none diagnosed).
 */
static void run_doubts_explained(int doubted, int stale)
{
        ks_topic_params_t   tp = params(KS_PARTITIONER_MURMUR2_RANDOM);
        ks_topic_t         *t  = ks_topic_new("t", &tp, 0);
        ks_topic_counters_t c;
        char                key[32];
        int                 i, hm;

        ks_topic_set_partition_count(t, 6, KS_COUNT_METADATA, 1);
        for (i = 0; i < doubted; i++) {
                key_moving_6_12(i * 1000, key, sizeof(key));
                ks_topic_ack(t, key, strlen(key), rk_murmur2(key, 12), 0);
        }
        if (stale) { /* an answer from a broker that does not know yet */
                ks_topic_set_partition_count(t, 6, KS_COUNT_METADATA, 2);
                c = acks_of(t, &hm, NULL);
                CU_ASSERT_EQUAL(c.ack_mismatched, 0);
                CU_ASSERT_FALSE(hm);
        }
        ks_topic_set_partition_count(t, 12, KS_COUNT_METADATA, 3);
        for (i = 0; i < 100; i++) {
                snprintf(key, sizeof(key), "k%d", i);
                ks_topic_ack(t, key, strlen(key), rk_murmur2(key, 12), 0);
        }
        c = acks_of(t, &hm, NULL);
        CU_ASSERT_EQUAL(c.ack_messages, (uint64_t)doubted + 100);
        CU_ASSERT_EQUAL(c.ack_matched + c.ack_unverified,
                        (uint64_t)doubted + 100);
        CU_ASSERT_EQUAL(c.ack_unverified > 0, doubted > 65536);
        CU_ASSERT_EQUAL(c.ack_mismatched, 0);
        CU_ASSERT_EQUAL(c.ack_pending, 0);
        CU_ASSERT_EQUAL(c.diag_checked, 0);
        CU_ASSERT_FALSE(hm);
        ks_topic_destroy(t);
}

static void test_acks_count_change_ends_diagnosis(void)
{
        run_doubts_explained(100, 0);
        run_doubts_explained(70000, 0); /* more than are kept */
        run_doubts_explained(100, 1);   /* a stale answer first */
}

/** Deliveries before the count is known, on a topic with messages sent to
 *  explicit partitions: one the count does not explain may have been sent
 *  there explicitly, so it is unverified, not a mismatch. */
static void test_acks_explicit_before_count(void)
{
        ks_topic_params_t     tp = params(KS_PARTITIONER_MURMUR2_RANDOM);
        ks_topic_t           *t  = ks_topic_new("t", &tp, 0);
        ks_topic_counters_t   c;
        ks_mismatch_example_t ex;
        int                   hm;
        int32_t               p6 = rk_murmur2("key", 6);

        ks_topic_note_explicit(t);
        ks_topic_ack(t, "key", 3, p6, 0);
        ks_topic_ack(t, "key", 3, (p6 + 1) % 6, 0); /* sent there */
        ks_topic_set_partition_count(t, 6, KS_COUNT_METADATA, 1);
        c = acks_of(t, &hm, &ex);
        CU_ASSERT_EQUAL(c.ack_matched, 1);
        CU_ASSERT_EQUAL(c.ack_unverified, 1);
        CU_ASSERT_EQUAL(c.ack_mismatched, 0);
        CU_ASSERT_FALSE(hm);
        ks_topic_destroy(t);
}

/** A custom partitioner: disagreements confirmed by a second answer of
 *  the same count (one answer may be stale). Each disagreeing delivery is
 *  diagnosed once (those acknowledged while the diagnosis ran were
 *  counted then, not again when confirmed), and the mismatch example
 *  names no key when its key was not kept (only the first KS_SUSPECT_KEYS
 *  acknowledgements waiting keep theirs). */
static void test_acks_confirmed_mismatch(void)
{
        ks_topic_params_t     tp = params(KS_PARTITIONER_MURMUR2_RANDOM);
        ks_topic_t           *t  = ks_topic_new("t", &tp, 0);
        ks_topic_counters_t   c;
        ks_mismatch_example_t ex;
        int                   hm;
        char                  key[32];
        int                   i;

        /* 20 deliveries before the count, as predicted: kept keys */
        for (i = 0; i < 20; i++) {
                snprintf(key, sizeof(key), "early-%d", i);
                ks_topic_ack(t, key, strlen(key), rk_murmur2(key, 6), 0);
        }
        /* then 5 that the count will not explain */
        for (i = 0; i < 5; i++) {
                snprintf(key, sizeof(key), "late-%d", i);
                ks_topic_ack(t, key, strlen(key), (rk_murmur2(key, 6) + 1) % 6,
                             0);
        }
        ks_topic_set_partition_count(t, 6, KS_COUNT_METADATA, 1);
        c = acks_of(t, &hm, &ex);
        CU_ASSERT_EQUAL(c.ack_matched, 20);
        CU_ASSERT_EQUAL(c.ack_mismatched, 0);
        CU_ASSERT_EQUAL(c.ack_pending, 5);
        CU_ASSERT_FALSE(hm);
        ks_topic_set_partition_count(t, 6, KS_COUNT_METADATA, 2);
        c = acks_of(t, &hm, &ex);
        CU_ASSERT_EQUAL(c.ack_mismatched, 5);
        CU_ASSERT_EQUAL(c.ack_pending, 0);
        CU_ASSERT(hm);
        CU_ASSERT_EQUAL(ex.keylen, KS_MISMATCH_KEY_NOT_KEPT);
        CU_ASSERT_EQUAL(c.diag_checked, 5); /* the confirmed ones, once */
        ks_topic_destroy(t);

        /* count known first: the first disagreement begins the diagnosis,
         * the next four are counted in it as they come */
        t = ks_topic_new("t", &tp, 0);
        ks_topic_set_partition_count(t, 6, KS_COUNT_METADATA, 1);
        for (i = 0; i < 5; i++) {
                snprintf(key, sizeof(key), "late-%d", i);
                ks_topic_ack(t, key, strlen(key), (rk_murmur2(key, 6) + 1) % 6,
                             0);
        }
        ks_topic_settle_acks(t, 1);
        c = acks_of(t, &hm, &ex);
        CU_ASSERT_EQUAL(c.ack_mismatched, 5);
        CU_ASSERT_EQUAL(c.diag_checked, 5);
        CU_ASSERT_EQUAL(ex.keylen, 6);
        CU_ASSERT_EQUAL(memcmp(ex.key, "late-0", 6), 0);
        ks_topic_destroy(t);
}

static void test_flow_limit(void)
{
        ks_topic_params_t   tp = params(KS_PARTITIONER_MURMUR2);
        ks_topic_t         *t;
        ks_topic_snapshot_t s;

        tp.flow_max_cells = 6 * 12;
        tp.proposed[0]    = 12;
        tp.proposed[1]    = 13;
        tp.proposed_cnt   = 2;
        t                 = ks_topic_new("t", &tp, 0);
        ks_topic_set_partition_count(t, 6, KS_COUNT_METADATA, 1);
        ks_topic_record(t, "a", 1, -1, 1);
        CU_ASSERT_EQUAL(ks_topic_snapshot(t, &s), 0);
        CU_ASSERT_PTR_NOT_NULL(s.proposals[0].flow);
        CU_ASSERT_PTR_NULL(s.proposals[1].flow); /* 78 cells > 72 */
        CU_ASSERT_EQUAL(s.proposals[1].partitions[rk_murmur2("a", 13)].messages,
                        1);
        ks_topic_snapshot_free(&s);
        ks_topic_destroy(t);
}

/** A topic's sketch sizes, as its snapshot gives them. */
typedef struct sizes {
        size_t key_sample, mixed_sample, topk;
} sizes_t;

/** @brief Makes topic "t<i>" in @p reg with @p tp and tallies its
 *         snapshot in @p tally. @returns its sketches' sizes. */
static sizes_t make_topic(ks_registry_t *reg, const ks_config_t *conf,
                          const ks_topic_params_t *tp, size_t i,
                          ks_sketch_tally_t *tally)
{
        char                name[16];
        int                 created;
        ks_topic_t         *t;
        ks_topic_snapshot_t s;
        sizes_t             z;

        snprintf(name, sizeof(name), "t%zu", i);
        t = ks_registry_get(reg, name, conf, tp, 1, &created);
        CU_ASSERT_FATAL(t != NULL);
        CU_ASSERT_EQUAL_FATAL(ks_topic_snapshot(t, &s), 0);
        ks_sketch_tally_add(tally, &s, tp);
        z = (sizes_t){s.sample_capacity, s.mixed_summary.capacity,
                      s.topk_capacity};
        ks_topic_snapshot_free(&s);
        return z;
}

/** The sketch budget: shrinking keeps the minimums, a large budget leaves
 *  the sizes, and 100 topics made one by one stay within the budget while
 *  the first keep their full sizes (keyshift.memory.max.mb). */
static void test_sketch_budget(void)
{
        ks_topic_params_t    tp = params(KS_PARTITIONER_CONSISTENT), fit;
        ks_registry_t        reg;
        ks_sketch_tally_t    tally;
        ks_registry_budget_t b;
        ks_config_t          conf;
        size_t i, pass, needed, expect, full = ks_topic_sketch_bytes(&tp);
        size_t min_cap = SIZE_MAX;

        fit = tp;
        ks_topic_params_fit(&fit, full * 2);
        CU_ASSERT_EQUAL(fit.key_sample_size, tp.key_sample_size);
        CU_ASSERT_EQUAL(fit.topk_capacity, tp.topk_capacity);
        fit = tp;
        ks_topic_params_fit(&fit, full / 2);
        CU_ASSERT(ks_topic_sketch_bytes(&fit) <= full / 2);
        CU_ASSERT(fit.key_sample_size < tp.key_sample_size);
        CU_ASSERT(fit.mixed_sample_size < tp.mixed_sample_size);
        /* every budget between: fitted, or at the minimums (the hot-key
         * index's power of two makes the cost a step function of the
         * capacity) */
        for (i = 1; i <= 97; i++) {
                size_t budget = full / 40 + (full - full / 40) * i / 97;
                fit           = tp;
                ks_topic_params_fit(&fit, budget);
                CU_ASSERT(ks_topic_sketch_bytes(&fit) <= budget ||
                          (fit.key_sample_size == KS_TOPIC_SAMPLE_MIN &&
                           fit.mixed_sample_size == KS_TOPIC_SAMPLE_MIN &&
                           fit.topk_capacity == KS_TOPIC_TOPK_MIN));
        }
        fit = tp;
        ks_topic_params_fit(&fit, 0);
        CU_ASSERT_EQUAL(fit.key_sample_size, KS_TOPIC_SAMPLE_MIN);
        CU_ASSERT_EQUAL(fit.mixed_sample_size, KS_TOPIC_SAMPLE_MIN);
        CU_ASSERT_EQUAL(fit.topk_capacity, KS_TOPIC_TOPK_MIN);

        CU_ASSERT_EQUAL(ks_config_init(&conf), 0);
        CU_ASSERT_EQUAL(conf.memory_max_mb, 64);
        /* the default sizes; 100 topics on 20 topics' worth */
        tp.key_sample_size   = 4096;
        tp.mixed_sample_size = 2048;
        tp.topk_capacity     = 1024;
        full                 = ks_topic_sketch_bytes(&tp);
        tp.sketch_budget     = 20 * full;
        CU_ASSERT_EQUAL(ks_registry_init(&reg, 1000), 0);
        memset(&tally, 0, sizeof(tally));
        for (i = 0; i < 100; i++) {
                size_t cap = make_topic(&reg, &conf, &tp, i, &tally).key_sample;
                if (cap < min_cap)
                        min_cap = cap;
                if (i == 0) /* 1/16 of the budget: more than its sizes */
                        CU_ASSERT_EQUAL(cap, tp.key_sample_size);
                if (i == 19) {
                        CU_ASSERT(cap < tp.key_sample_size);
                        CU_ASSERT(cap > KS_TOPIC_SAMPLE_MIN);
                        /* within the budget while no topic is at the
                         * minimum sizes */
                        CU_ASSERT(reg.sketch_bytes <= tp.sketch_budget);
                }
        }
        fit = tp;
        ks_topic_params_fit(&fit, 0);
        /* past that, by at most the minimum sizes per topic */
        CU_ASSERT(reg.sketch_bytes <=
                  tp.sketch_budget + 100 * ks_topic_sketch_bytes(&fit));
        /* SKETCHES_REDUCED's figures, from the topics' snapshots */
        CU_ASSERT_EQUAL(tally.topics, 100);
        CU_ASSERT(tally.reduced > 0 && tally.reduced < 100);
        CU_ASSERT_EQUAL(tally.key_sample_reduced, tally.reduced);
        CU_ASSERT_EQUAL(tally.key_sample_min, min_cap);
        CU_ASSERT(min_cap < 4096);
        CU_ASSERT(tally.topk_min < 1024);
        /* equal topics: the 100th, made last, keeps its sizes only when
         * what the 99 before it leave is 100 times its sketches */
        ks_registry_budget(&reg, &b);
        needed = b.needed;
        CU_ASSERT_EQUAL(needed, (2 * 100 - 1) * full);
        /* what the sketches take: past the budget (the last topics at
         * the minimum sizes), as the registry counted it */
        CU_ASSERT_EQUAL(b.taken, reg.sketch_bytes);
        CU_ASSERT(b.taken > tp.sketch_budget);
        ks_registry_destroy(&reg);
        /* the budget it names keeps every topic's sizes; a byte less
         * shrinks the last one made, and only it */
        for (pass = 0; pass < 2; pass++) {
                memset(&tally, 0, sizeof(tally));
                tp.sketch_budget = needed - pass;
                CU_ASSERT_EQUAL(ks_registry_init(&reg, 1000), 0);
                for (i = 0; i < 100; i++) {
                        size_t cap =
                            make_topic(&reg, &conf, &tp, i, &tally).key_sample;
                        if (i == 99)
                                CU_ASSERT_EQUAL(cap < 4096, pass);
                }
                CU_ASSERT_EQUAL(tally.reduced, pass);
                ks_registry_budget(&reg, &b);
                CU_ASSERT_EQUAL(b.needed, needed);
                CU_ASSERT(b.taken <= tp.sketch_budget);
                ks_registry_destroy(&reg);
        }
        /* fewer than 16 equal topics: each is made wanting 1/16 */
        tp.sketch_budget = 1;
        CU_ASSERT_EQUAL(ks_registry_init(&reg, 1000), 0);
        memset(&tally, 0, sizeof(tally));
        for (i = 0; i < 5; i++)
                make_topic(&reg, &conf, &tp, i, &tally);
        CU_ASSERT_EQUAL(tally.reduced, 5);
        ks_registry_budget(&reg, &b);
        CU_ASSERT_EQUAL(b.needed, (5 + 15) * full);
        ks_registry_destroy(&reg);
        /* a key sample asked at its minimum cannot shrink: the topics the
         * other sketches' shrinking reduced are counted all the same */
        tp.key_sample_size = KS_TOPIC_SAMPLE_MIN;
        tp.sketch_budget   = 20 * ks_topic_sketch_bytes(&tp);
        CU_ASSERT_EQUAL(ks_registry_init(&reg, 1000), 0);
        memset(&tally, 0, sizeof(tally));
        for (i = 0, expect = 0; i < 100; i++) {
                sizes_t z = make_topic(&reg, &conf, &tp, i, &tally);
                expect += z.mixed_sample < tp.mixed_sample_size ||
                          z.topk < tp.topk_capacity;
        }
        CU_ASSERT(expect > 0);
        CU_ASSERT_EQUAL(tally.reduced, expect);
        CU_ASSERT_EQUAL(tally.key_sample_reduced, 0);
        ks_registry_destroy(&reg);
        ks_config_destroy(&conf);
}

void ks_test_register(void)
{
        KS_ADD_SUITE(
            "topic analysis",
            {"messages wait for the count", test_pending_until_count_known},
            {"count change restarts the window",
             test_count_change_restarts_window},
            {"explicit partitions", test_explicit_partitions},
            {"acknowledgements", test_acks},
            {"acknowledgements without the lock", test_acks_unlocked},
            {"acknowledgements: a count change ends the diagnosis",
             test_acks_count_change_ends_diagnosis},
            {"acknowledgements: explicit partitions before the count",
             test_acks_explicit_before_count},
            {"acknowledgements: confirmed mismatches",
             test_acks_confirmed_mismatch},
            {"flow matrix limit", test_flow_limit},
            {"sketch budget", test_sketch_budget});
}
