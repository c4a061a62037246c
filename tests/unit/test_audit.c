/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_audit.c
 * @brief The partitioner audit of stored records (core/report/ks_audit.h) and
 *        the analysis of stored records (ks_topic_record_stored_locked()),
 *        on synthetic records whose partitions are computed by the oracle:
 *        librdkafka's own rd_kafka_msg_partitioner_consistent(),
 *        _murmur2() and _fnv1a() (linked from the installed librdkafka),
 *        never by the code under test.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <librdkafka/rdkafka.h>

#include "ks_audit.h"
#include "ks_test.h"
#include "ks_test_warn.h"
#include "ks_topic.h"

typedef int32_t(oracle_fn)(const rd_kafka_topic_t *, const void *, size_t,
                           int32_t, void *, void *);

/** The oracle of each family, in ks_audit order. */
static oracle_fn *const oracle[KS_AUDIT_FAMILIES] = {
    rd_kafka_msg_partitioner_consistent, rd_kafka_msg_partitioner_murmur2,
    rd_kafka_msg_partitioner_fnv1a};

enum { FAM_CONSISTENT = 0, FAM_MURMUR2 = 1, FAM_FNV1A = 2, FAM_NONE = -1 };

/** One synthetic stored record. */
typedef struct rec {
        uint8_t key[24];
        size_t  keylen;
        int32_t partition;
        int64_t offset;
} rec_t;

typedef struct recs {
        rec_t  *r;
        size_t  n, cap;
        int64_t next_offset[64];
} recs_t;

static uint64_t rnd(uint64_t *s)
{
        uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
        z          = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z          = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
}

/**
 * @brief Appends @p n records with fresh keys (text or binary), placed by
 *        family @p fam's oracle under @p count partitions, or, for
 *        FAM_NONE, in a random partition of @p count.
 */
static void add_recs(recs_t *rs, size_t n, int fam, int32_t count,
                     uint64_t *seed)
{
        size_t i, j;

        for (i = 0; i < n; i++) {
                rec_t *r;
                if (rs->n == rs->cap) {
                        rs->cap = rs->cap ? rs->cap * 2 : 1024;
                        rs->r   = realloc(rs->r, rs->cap * sizeof(*rs->r));
                }
                r = &rs->r[rs->n++];
                if (rnd(seed) & 1) {
                        r->keylen = (size_t)snprintf(
                            (char *)r->key, sizeof(r->key), "user-%llu",
                            (unsigned long long)(rnd(seed) % 100000000));
                } else {
                        r->keylen = 1 + rnd(seed) % 20;
                        for (j = 0; j < r->keylen; j++)
                                r->key[j] = (uint8_t)rnd(seed);
                }
                r->partition = fam == FAM_NONE
                                   ? (int32_t)(rnd(seed) % (uint64_t)count)
                                   : oracle[fam](NULL, r->key, r->keylen, count,
                                                 NULL, NULL);
                r->offset    = rs->next_offset[r->partition]++;
        }
}

static ks_audit_t *audit_of(const recs_t *rs, int32_t c, size_t max_bytes)
{
        ks_audit_t *a = ks_audit_new(c, max_bytes);
        size_t      i;

        CU_ASSERT_PTR_NOT_NULL_FATAL(a);
        for (i = 0; i < rs->n; i++)
                ks_audit_add(a, rs->r[i].key, rs->r[i].keylen,
                             rs->r[i].partition, rs->r[i].offset);
        return a;
}

/** @brief Every explained cell and `unexplained` against the oracle. */
static void check_cells(const ks_audit_t *a, const recs_t *rs, int32_t c)
{
        uint64_t unexplained = 0;
        int      f;
        int32_t  n;
        size_t   i;

        for (f = 0; f < KS_AUDIT_FAMILIES; f++)
                for (n = 1; n <= c; n++) {
                        uint64_t want = 0;
                        for (i = 0; i < rs->n; i++)
                                want += oracle[f](NULL, rs->r[i].key,
                                                  rs->r[i].keylen, n, NULL,
                                                  NULL) == rs->r[i].partition;
                        CU_ASSERT_EQUAL(ks_audit_explained(a, f, n), want);
                }
        for (i = 0; i < rs->n; i++) {
                int any = 0;
                for (f = 0; f < KS_AUDIT_FAMILIES && !any; f++)
                        for (n = 1; n <= c && !any; n++)
                                any = oracle[f](NULL, rs->r[i].key,
                                                rs->r[i].keylen, n, NULL,
                                                NULL) == rs->r[i].partition;
                unexplained += !any;
        }
        CU_ASSERT_EQUAL(ks_audit_unexplained(a), unexplained);
        CU_ASSERT_EQUAL(ks_audit_keyed(a), rs->n);
}

/** @returns the index of step (@p fam, @p count) in @p h, or -1. */
static int step_of(const ks_audit_history_t *h, int fam, int32_t count)
{
        size_t i;

        for (i = 0; i < h->cnt; i++)
                if (h->steps[i].family == fam && h->steps[i].count == count)
                        return (int)i;
        return -1;
}

/** One family at the current count: one step, no warning. */
static void test_single_family(void)
{
        recs_t             rs   = {0};
        uint64_t           seed = 1;
        ks_audit_history_t h;
        ks_warn_list_t     wl;
        ks_audit_t        *a;
        uint64_t           nc[3];

        add_recs(&rs, 5000, FAM_MURMUR2, 12, &seed);
        a = audit_of(&rs, 12, 0);
        check_cells(a, &rs, 12);
        CU_ASSERT_EQUAL(ks_audit_explained(a, FAM_MURMUR2, 12), 5000);
        CU_ASSERT_EQUAL(ks_audit_unexplained(a), 0);
        CU_ASSERT_EQUAL(ks_audit_newest_family(a, nc), FAM_MURMUR2);
        {
                /* the newest KS_AUDIT_NEWEST of each partition */
                uint64_t want = 0;
                int32_t  p;
                for (p = 0; p < 12; p++)
                        want += rs.next_offset[p] < KS_AUDIT_NEWEST
                                    ? (uint64_t)rs.next_offset[p]
                                    : KS_AUDIT_NEWEST;
                CU_ASSERT_EQUAL(nc[FAM_MURMUR2], want);
                CU_ASSERT(want < 5000);
        }
        CU_ASSERT_EQUAL_FATAL(ks_audit_history(a, &h), 0);
        CU_ASSERT_EQUAL(h.cnt, 1);
        CU_ASSERT_EQUAL(step_of(&h, FAM_MURMUR2, 12), 0);
        CU_ASSERT_EQUAL(h.steps[0].records, 5000);
        CU_ASSERT_EQUAL(h.uncovered, 0);
        ks_warn_list_init(&wl);
        ks_audit_warnings(a, &h, "t", -1, -1, &wl);
        CU_ASSERT_EQUAL(wl.cnt, 0);
        ks_warn_list_clear(&wl);
        ks_audit_history_free(&h);
        ks_audit_destroy(a);
        free(rs.r);
}

/**
 * Three producers: consistent under an earlier count 3, then murmur2 and
 * fnv1a under 6 (a murmur2 producer last), plus records in random
 * partitions (explicit partitions).
 */
static void test_mixed_history(void)
{
        recs_t             rs   = {0};
        uint64_t           seed = 7, pairs_sum = 0;
        ks_audit_history_t h;
        ks_warn_list_t     wl;
        ks_audit_t        *a;
        int                sc, sm, sf;
        size_t             i;
        int32_t            p;

        add_recs(&rs, 2000, FAM_CONSISTENT, 3, &seed);
        add_recs(&rs, 3000, FAM_FNV1A, 6, &seed);
        add_recs(&rs, 300, FAM_NONE, 6, &seed);
        add_recs(&rs, 6000, FAM_MURMUR2, 6, &seed);
        a = audit_of(&rs, 6, 0);
        check_cells(a, &rs, 6);
        CU_ASSERT_EQUAL(ks_audit_newest_family(a, NULL), FAM_MURMUR2);
        CU_ASSERT_EQUAL_FATAL(ks_audit_history(a, &h), 0);
        sm = step_of(&h, FAM_MURMUR2, 6);
        sf = step_of(&h, FAM_FNV1A, 6);
        sc = step_of(&h, FAM_CONSISTENT, 3);
        CU_ASSERT_EQUAL(sm, 0); /* the largest first */
        CU_ASSERT(sf > 0);
        CU_ASSERT(sc > 0);
        /* The cover keeps at least each producer's own records, give or
         * take those another pair explains too (and the random ones). */
        if (sm >= 0)
                CU_ASSERT(h.steps[sm].records >= 6000);
        if (sf >= 0)
                CU_ASSERT(h.steps[sf].records >= 3000 * 5 / 6 - 100);
        if (sc >= 0) {
                CU_ASSERT(h.steps[sc].records >= 2000 / 3);
                /* old records only in partitions 0..2, at the old offsets */
                for (p = 3; p < 6; p++)
                        CU_ASSERT_EQUAL(h.steps[sc].partitions[p].records, 0);
                for (p = 0; p < 3; p++)
                        CU_ASSERT(h.steps[sc].partitions[p].last_offset <
                                  (int64_t)rs.next_offset[p]);
        }
        for (i = 0; i < h.cnt; i++)
                pairs_sum += h.steps[i].records;
        CU_ASSERT_EQUAL(pairs_sum + h.uncovered + ks_audit_unexplained(a),
                        rs.n);
        ks_warn_list_init(&wl);
        ks_audit_warnings(a, &h, "t", -1, -1, &wl);
        CU_ASSERT(ks_test_has_warning(&wl, "MIXED_PARTITIONERS"));
        CU_ASSERT(ks_test_has_warning(&wl, "RECORDS_FROM_OLD_COUNT"));
        CU_ASSERT(ks_test_has_warning(&wl, "UNEXPLAINED_PLACEMENT"));
        for (i = 0; i < wl.cnt; i++)
                if (!strcmp(wl.items[i].code, "RECORDS_FROM_OLD_COUNT"))
                        CU_ASSERT_PTR_NOT_NULL(
                            strstr(wl.items[i].message, "under 3 partitions"));
        {
                json_t *j = ks_audit_json(a, &h, "murmur2_random", "audit");
                CU_ASSERT_PTR_NOT_NULL_FATAL(j);
                CU_ASSERT_EQUAL(
                    json_integer_value(json_object_get(
                        json_object_get(json_object_get(j, "explained"),
                                        "fnv1a"),
                        "6")),
                    (json_int_t)ks_audit_explained(a, FAM_FNV1A, 6));
                CU_ASSERT_STRING_EQUAL(
                    json_string_value(json_object_get(
                        json_object_get(j, "newest"), "family")),
                    "murmur2");
                json_decref(j);
        }
        ks_warn_list_clear(&wl);
        ks_audit_history_free(&h);
        ks_audit_destroy(a);
        free(rs.r);
}

/** NULL and empty keys are unkeyed; partitions out of range are counted
 *  apart; a tiny budget leaves groups out but not the counters. */
static void test_unkeyed_and_bounded(void)
{
        recs_t             rs   = {0};
        uint64_t           seed = 3;
        ks_audit_history_t h;
        ks_audit_t        *a;

        add_recs(&rs, 20000, FAM_NONE, 32, &seed);
        a = audit_of(&rs, 32, 1); /* the smallest: 16 groups */
        ks_audit_add(a, NULL, 0, 1, 0);
        ks_audit_add(a, "", 0, 2, 0);
        ks_audit_add(a, "k", 1, 32, 0);
        check_cells(a, &rs, 32);
        CU_ASSERT_EQUAL(ks_audit_unkeyed(a), 2);
        CU_ASSERT_EQUAL_FATAL(ks_audit_history(a, &h), 0);
        {
                json_t *j = ks_audit_json(a, &h, "murmur2_random", "default");
                CU_ASSERT_EQUAL(json_integer_value(
                                    json_object_get(j, "records_out_of_range")),
                                1);
                CU_ASSERT(json_integer_value(
                              json_object_get(json_object_get(j, "history"),
                                              "records_not_grouped")) > 0);
                CU_ASSERT(json_integer_value(
                              json_object_get(json_object_get(j, "history"),
                                              "signature_groups")) <= 16);
                json_decref(j);
        }
        /* random partitions: no family explains the newest records */
        CU_ASSERT_EQUAL(ks_audit_newest_family(a, NULL), -1);
        ks_audit_history_free(&h);
        ks_audit_destroy(a);
        free(rs.r);
}

static ks_topic_t *topic_new(ks_partitioner_t p, int32_t current,
                             int32_t proposed)
{
        ks_topic_params_t prm = {0};
        ks_topic_t       *t;

        prm.partitioner       = p;
        prm.proposed[0]       = proposed;
        prm.proposed_cnt      = 1;
        prm.key_sample_size   = 1024;
        prm.mixed_sample_size = 256;
        prm.topk_capacity     = 1024;
        prm.flow_max_cells    = 1 << 20;
        prm.pending_max       = 1024;
        t                     = ks_topic_new("t", &prm, 0);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        ks_topic_set_partition_count(t, current, KS_COUNT_METADATA, 0);
        return t;
}

/**
 * Stored records read back: the current loads are the real partitions
 * (whatever placed them), and for records a murmur2 producer placed the
 * moved figures equal the plugin's (ks_topic_record(), partition -1).
 */
static void test_record_stored(void)
{
        recs_t              rs   = {0};
        uint64_t            seed = 11, per[6] = {0};
        ks_topic_t         *scan, *plugin;
        ks_topic_snapshot_t a, b;
        size_t              i;
        int32_t             p;

        add_recs(&rs, 4000, FAM_MURMUR2, 6, &seed);
        scan   = topic_new(KS_PARTITIONER_MURMUR2_RANDOM, 6, 12);
        plugin = topic_new(KS_PARTITIONER_MURMUR2_RANDOM, 6, 12);
        for (i = 0; i < rs.n; i++) {
                ks_key_facts_t f;
                ks_topic_key_facts(scan, rs.r[i].key, rs.r[i].keylen, -1, &f);
                ks_topic_lock(scan);
                ks_topic_record_stored_locked(scan, rs.r[i].key, rs.r[i].keylen,
                                              rs.r[i].partition, &f, 1, 10);
                ks_topic_unlock(scan);
                ks_topic_record_at(plugin, rs.r[i].key, rs.r[i].keylen, -1,
                                   10 - rs.r[i].keylen, 0);
        }
        CU_ASSERT_EQUAL_FATAL(ks_topic_snapshot(scan, &a), 0);
        CU_ASSERT_EQUAL_FATAL(ks_topic_snapshot(plugin, &b), 0);
        CU_ASSERT_EQUAL(a.proposals[0].moved.messages,
                        b.proposals[0].moved.messages);
        CU_ASSERT(a.proposals[0].moved.messages > 0);
        for (p = 0; p < 6; p++)
                CU_ASSERT_EQUAL(a.current[p].messages, b.current[p].messages);
        for (p = 0; p < 12; p++)
                CU_ASSERT_EQUAL(a.proposals[0].partitions[p].messages,
                                b.proposals[0].partitions[p].messages);
        ks_topic_snapshot_free(&a);
        ks_topic_snapshot_free(&b);
        ks_topic_destroy(scan);
        ks_topic_destroy(plugin);

        /* fnv1a records analysed as murmur2: loads stay the real ones */
        rs.n = 0;
        memset(rs.next_offset, 0, sizeof(rs.next_offset));
        add_recs(&rs, 3000, FAM_FNV1A, 6, &seed);
        scan = topic_new(KS_PARTITIONER_MURMUR2_RANDOM, 6, 12);
        for (i = 0; i < rs.n; i++) {
                ks_key_facts_t f;
                per[rs.r[i].partition]++;
                ks_topic_key_facts(scan, rs.r[i].key, rs.r[i].keylen, -1, &f);
                ks_topic_lock(scan);
                ks_topic_record_stored_locked(scan, rs.r[i].key, rs.r[i].keylen,
                                              rs.r[i].partition, &f, 1, 10);
                ks_topic_unlock(scan);
        }
        /* a NULL key: counted where it is, in no proposal */
        {
                ks_key_facts_t f;
                ks_topic_key_facts(scan, NULL, 0, -1, &f);
                ks_topic_lock(scan);
                ks_topic_record_stored_locked(scan, NULL, 0, 5, &f, 1, 10);
                ks_topic_record_stored_locked(scan, NULL, 0, 6, &f, 1, 10);
                ks_topic_unlock(scan);
                per[5]++;
        }
        CU_ASSERT_EQUAL_FATAL(ks_topic_snapshot(scan, &a), 0);
        for (p = 0; p < 6; p++)
                CU_ASSERT_EQUAL(a.current[p].messages, per[p]);
        CU_ASSERT_EQUAL(a.c.unplaced, 1); /* partition 6 of 6 */
        ks_topic_snapshot_free(&a);
        ks_topic_destroy(scan);
        free(rs.r);
}

void ks_test_register(void)
{
        KS_ADD_SUITE(
            "audit",
            {"one family at the current count: one step, no warning",
             test_single_family},
            {"three producers and an old count: cells, history, warnings",
             test_mixed_history},
            {"unkeyed records, out-of-range partitions, bounded groups",
             test_unkeyed_and_bounded},
            {"stored records: real loads, the plugin's moved figures",
             test_record_stored});
}
