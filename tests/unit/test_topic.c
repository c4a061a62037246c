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
                ks_report_opts_t o = {5, 6000, 0, NULL, 0, 0};
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
        ks_topic_settle_acks(t);
        CU_ASSERT_EQUAL(ks_topic_snapshot(t, &s), 0);
        CU_ASSERT_EQUAL(s.c.ack_mismatched, 1);
        CU_ASSERT(s.has_mismatch);
        CU_ASSERT_EQUAL(s.mismatch.keylen, 3);
        CU_ASSERT_EQUAL(memcmp(s.mismatch.key, "key", 3), 0);
        CU_ASSERT_EQUAL(s.mismatch.expected, rk_murmur2("key", 9));
        ks_topic_snapshot_free(&s);
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

void ks_test_register(void)
{
        KS_ADD_SUITE(
            "topic analysis",
            {"messages wait for the count", test_pending_until_count_known},
            {"count change restarts the window",
             test_count_change_restarts_window},
            {"explicit partitions", test_explicit_partitions},
            {"acknowledgements", test_acks},
            {"flow matrix limit", test_flow_limit});
}
