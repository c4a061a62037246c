/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_switch.c
 * @brief The count switch of a grown topic (core/report/ks_switch.h) on
 *        synthetic stored records whose partitions come from librdkafka's
 *        own rd_kafka_msg_partitioner_murmur2() (the oracle), each with its
 *        truth (the count that placed it): one switch moment (exact), an
 *        interleaved stretch (bounded ambiguity), a non-doubling increase
 *        decided by offsets without timestamps, and a bounded store.
 */
#include <stdio.h>
#include <string.h>

#include <librdkafka/rdkafka.h>

#include "ks_switch.h"
#include "ks_test.h"

#define MAXN 16

typedef struct sim {
        ks_switch_t *s;
        int32_t      old_n, new_n;
        int64_t      next[MAXN];
        uint64_t     truth_old, truth_new, both_in_stretch;
        int64_t      truth_switch[MAXN]; /**< first new record, -1 */
        uint64_t     seed;
} sim_t;

static uint64_t rnd(uint64_t *s)
{
        uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
        z          = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z          = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
}

/** @brief Writes one record with a random key under @p old (1) or the
 *         new count (0), at @p ts (< 0: none). */
static void put(sim_t *m, int old, int64_t ts, int in_stretch)
{
        char    key[24];
        int     len = snprintf(key, sizeof(key), "k%llu",
                               (unsigned long long)(rnd(&m->seed) % 5000));
        int32_t p   = rd_kafka_msg_partitioner_murmur2(
              NULL, key, (size_t)len, old ? m->old_n : m->new_n, NULL, NULL);
        int32_t po = rd_kafka_msg_partitioner_murmur2(NULL, key, (size_t)len,
                                                      m->old_n, NULL, NULL);
        int32_t pn = rd_kafka_msg_partitioner_murmur2(NULL, key, (size_t)len,
                                                      m->new_n, NULL, NULL);

        if (old)
                m->truth_old++;
        else
                m->truth_new++;
        if (!old && m->truth_switch[p] < 0)
                m->truth_switch[p] = m->next[p];
        m->both_in_stretch += in_stretch && po == p && pn == p;
        ks_switch_add(m->s, key, (size_t)len, p, m->next[p]++, ts);
}

static void sim_init(sim_t *m, int32_t old_n, int32_t new_n, size_t bytes)
{
        int i;

        memset(m, 0, sizeof(*m));
        m->old_n = old_n;
        m->new_n = new_n;
        m->seed  = 28;
        for (i = 0; i < MAXN; i++)
                m->truth_switch[i] = -1;
        m->s = ks_switch_new(1, old_n, new_n, bytes);
        CU_ASSERT_PTR_NOT_NULL_FATAL(m->s);
}

/** One moment: every record decided, counts and switch offsets exact. */
static void test_one_moment(void)
{
        sim_t              m;
        ks_switch_result_t r;
        int                i;
        int32_t            p;

        sim_init(&m, 6, 12, 0);
        for (i = 0; i < 20000; i++)
                put(&m, 1, 1000 + i / 10, 0);
        for (i = 0; i < 20000; i++)
                put(&m, 0, 5000 + i / 10, 0);
        ks_switch_add(m.s, NULL, 0, 0, m.next[0]++, 9000); /* unkeyed */
        CU_ASSERT_EQUAL_FATAL(ks_switch_result(m.s, &r), 0);
        CU_ASSERT(r.one_moment);
        CU_ASSERT_EQUAL(r.old_exact, m.truth_old);
        CU_ASSERT_EQUAL(r.new_exact, m.truth_new);
        CU_ASSERT_EQUAL(r.ambiguous, 0);
        CU_ASSERT_EQUAL(r.unkeyed, 1);
        for (p = 0; p < 12; p++)
                CU_ASSERT_EQUAL(r.parts[p].switch_offset, m.truth_switch[p]);
        ks_switch_result_free(&r);
        ks_switch_destroy(m.s);
}

/** Two producers switching at different moments: the truth within the
 *  bounds, the ambiguity no more than the stretch's "both" records. */
static void test_interleaved(void)
{
        sim_t              m;
        ks_switch_result_t r;
        int                i;

        sim_init(&m, 6, 12, 0);
        for (i = 0; i < 20000; i++)
                put(&m, 1, 1000 + i / 10, 0);
        for (i = 0; i < 6000; i++)
                put(&m, i % 2, 4000 + i / 10, 1);
        for (i = 0; i < 20000; i++)
                put(&m, 0, 6000 + i / 10, 0);
        CU_ASSERT_EQUAL_FATAL(ks_switch_result(m.s, &r), 0);
        CU_ASSERT(!r.one_moment);
        CU_ASSERT(r.old_exact <= m.truth_old &&
                  m.truth_old <= r.old_exact + r.ambiguous);
        CU_ASSERT(r.new_exact <= m.truth_new &&
                  m.truth_new <= r.new_exact + r.ambiguous);
        CU_ASSERT(r.ambiguous > 0 && r.ambiguous <= m.both_in_stretch);
        CU_ASSERT_EQUAL(r.old_exact + r.new_exact + r.ambiguous,
                        m.truth_old + m.truth_new);
        ks_switch_result_free(&r);
        ks_switch_destroy(m.s);
}

/** 6 -> 8 without timestamps: offsets decide where a partition can hold
 *  both kinds; the records between the last old-only and the first
 *  new-only record of such a partition stay ambiguous. */
static void test_offsets_only(void)
{
        sim_t              m;
        ks_switch_result_t r;
        int                i;
        int32_t            p;

        sim_init(&m, 6, 8, 0);
        for (i = 0; i < 20000; i++)
                put(&m, 1, -1, 0);
        for (i = 0; i < 20000; i++)
                put(&m, 0, -1, 0);
        CU_ASSERT_EQUAL_FATAL(ks_switch_result(m.s, &r), 0);
        CU_ASSERT(r.old_exact <= m.truth_old &&
                  m.truth_old <= r.old_exact + r.ambiguous);
        /* a few records around each partition's switch at most */
        CU_ASSERT(r.ambiguous < 200);
        for (p = 0; p < 6; p++) {
                CU_ASSERT(r.parts[p].offsets_used);
                CU_ASSERT(r.parts[p].switch_offset <= m.truth_switch[p]);
                CU_ASSERT(r.parts[p].ambiguous == 0 ||
                          r.parts[p].ambiguous_first >
                              r.parts[p].last_old_only);
        }
        ks_switch_result_free(&r);
        ks_switch_destroy(m.s);
}

/** A store of 16 runs: the rest counted not kept, and ambiguous. */
static void test_bounded(void)
{
        sim_t              m;
        ks_switch_result_t r;
        int                i;

        sim_init(&m, 6, 12, 1);
        for (i = 0; i < 2000; i++)
                put(&m, 1, 1000 + i, 0);
        CU_ASSERT_EQUAL_FATAL(ks_switch_result(m.s, &r), 0);
        CU_ASSERT(r.not_kept > 0);
        CU_ASSERT_EQUAL(r.old_exact + r.ambiguous, m.truth_old);
        ks_switch_result_free(&r);
        ks_switch_destroy(m.s);
        CU_ASSERT_PTR_NULL(ks_switch_new(1, 6, 6, 0));
        CU_ASSERT_PTR_NULL(ks_switch_new(3, 6, 12, 0));
}

void ks_test_register(void)
{
        KS_ADD_SUITE(
            "count switch",
            {"one moment: exact counts and switch offsets", test_one_moment},
            {"an interleaved stretch: bounded ambiguity", test_interleaved},
            {"6 -> 8 decided by offsets alone", test_offsets_only},
            {"a bounded store", test_bounded});
}
