/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_topk.c
 * @brief Space-Saving hot keys (ks_topk) against exact answers computed
 *        here (the other sketches: test_sketches.c).
 *
 * Oracles are independent of the code under test: exact count tables over
 * the same streams, a sort of all seen hashes for "the k smallest", and
 * the published error bounds of each sketch. Key hashes come from the
 * splitmix64 finaliser of the key number (not ks_hash.c): the sketches
 * only need good 64-bit hashes. Streams are generated from fixed seeds, so
 * every run sees the same values; tolerances are 3-4 standard errors.
 */
#include "ks_test.h"
#include "ks_test_streams.h"

#include "ks_topk.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Hot keys                                                            */
/* ------------------------------------------------------------------ */

#define TK_CAP 1024

static void topk_add_range(ks_topk_t *tk, const uint32_t *msgs, size_t lo,
                           size_t hi)
{
        char   key[32];
        size_t len;

        for (; lo < hi; lo++) {
                len = kst_key_text(msgs[lo], key, sizeof(key));
                ks_topk_add(tk, key, len, kst_key_hash(msgs[lo]),
                            kst_key_phash(msgs[lo]), kst_key_bytes(msgs[lo]));
        }
}

/** @returns whether two entries are equal field by field. */
static int topk_entry_eq(const ks_topk_entry_t *a, const ks_topk_entry_t *b)
{
        return a->hash64 == b->hash64 && a->phash == b->phash &&
               a->count == b->count && a->error == b->error &&
               a->bytes == b->bytes && a->keylen == b->keylen &&
               memcmp(a->key, b->key, sizeof(a->key)) == 0;
}

/**
 * @brief Checks a summary of the Zipf messages counted in @p counts (@p n
 *        in all): keys with >= 1 % and > bound shares are found, true
 *        counts are within [count - error, count], error <= bound, order.
 *        With @p equal_caps (only summaries of one capacity merged), the
 *        counts also sum to at most n.
 */
static void check_topk(const ks_topk_t *tk, const uint64_t *counts, uint64_t n,
                       double bound, int equal_caps)
{
        ks_topk_entry_t *e     = malloc(TK_CAP * sizeof(*e));
        char            *found = calloc(ZIPF_KEYS, 1);
        char             key[32];
        size_t           got, i, heavy = 0;
        uint64_t         sum  = 0;
        int              bad_ = 0;

        CU_ASSERT_FATAL(e && found);
        CU_ASSERT_EQUAL(ks_topk_total(tk), n);
        got = ks_topk_sorted(tk, e, TK_CAP);
        CU_ASSERT(got <= ks_topk_capacity(tk));
        for (i = 0; i < got; i++) {
                long id = kst_id_of(e[i].hash64);
                CHECK_EACH(id >= 0, "unknown hash %llx",
                           (unsigned long long)e[i].hash64);
                if (id < 0)
                        continue;
                found[id] = 1;
                sum += e[i].count;
                CHECK_EACH(e[i].count - e[i].error <= counts[id] &&
                               counts[id] <= e[i].count,
                           "key %ld: true %llu not in [%llu - %llu, %llu]", id,
                           (unsigned long long)counts[id],
                           (unsigned long long)e[i].count,
                           (unsigned long long)e[i].error,
                           (unsigned long long)e[i].count);
                CHECK_EACH((double)e[i].error <= bound, "key %ld: error %llu",
                           id, (unsigned long long)e[i].error);
                /* bytes are those of the count - error exact messages */
                CHECK_EACH(e[i].bytes == (e[i].count - e[i].error) *
                                             kst_key_bytes((uint32_t)id),
                           "key %ld: bytes %llu", id,
                           (unsigned long long)e[i].bytes);
                CHECK_EACH(e[i].phash == kst_key_phash((uint32_t)id) &&
                               e[i].keylen == kst_key_text((uint32_t)id, key,
                                                           sizeof(key)) &&
                               memcmp(e[i].key, key, e[i].keylen) == 0,
                           "key %ld: identity", id);
                if (i > 0)
                        CHECK_EACH(e[i - 1].count > e[i].count ||
                                       (e[i - 1].count == e[i].count &&
                                        e[i - 1].error <= e[i].error),
                                   "order at %zu", i);
        }
        if (equal_caps)
                CU_ASSERT(sum <= n);
        for (i = 0; i < ZIPF_KEYS; i++) {
                /* a full summary's smallest count bounds every key it
                 * does not hold */
                if (got == ks_topk_capacity(tk) && !found[i])
                        CHECK_EACH(counts[i] <= e[got - 1].count,
                                   "key %zu (%llu msgs) over the smallest "
                                   "count %llu",
                                   i, (unsigned long long)counts[i],
                                   (unsigned long long)e[got - 1].count);
                if ((double)counts[i] > bound)
                        CHECK_EACH(found[i], "key %zu (%llu msgs) missing", i,
                                   (unsigned long long)counts[i]);
                if (counts[i] * 100 >= n) {
                        heavy++;
                        CHECK_EACH(found[i], "heavy key %zu missing", i);
                }
        }
        CU_ASSERT(heavy >= 5); /* the stream has heavy hitters to find */
        CU_ASSERT_EQUAL(bad_, 0);
        free(found);
        free(e);
}

static void test_topk_zipf(void)
{
        const uint32_t *msgs   = kst_zipf_stream();
        uint64_t       *counts = malloc(ZIPF_KEYS * sizeof(*counts));
        ks_topk_t      *tk     = ks_topk_new(TK_CAP);
        ks_topk_entry_t top[10], all[TK_CAP];
        uint64_t        sum = 0;
        size_t          i;

        CU_ASSERT_FATAL(counts && tk);
        topk_add_range(tk, msgs, 0, ZIPF_MSGS);
        kst_exact_counts(msgs, 0, ZIPF_MSGS, counts);
        check_topk(tk, counts, ZIPF_MSGS, (double)ZIPF_MSGS / TK_CAP, 1);

        /* Plain Space-Saving's counts sum to N; with the filter, the
         * messages a cell absorbed are in no count. */
        CU_ASSERT_EQUAL(ks_topk_sorted(tk, all, TK_CAP), TK_CAP);
        for (i = 0; i < TK_CAP; i++)
                sum += all[i].count;
        CU_ASSERT(sum <= ZIPF_MSGS);
        CU_ASSERT(sum > ZIPF_MSGS / 2);
        /* The busiest 10 are the first 10 of the full order, and the
         * hottest key is key 0. */
        CU_ASSERT_EQUAL(ks_topk_sorted(tk, top, 10), 10);
        for (i = 0; i < 10; i++)
                CU_ASSERT(topk_entry_eq(&top[i], &all[i]));
        CU_ASSERT_EQUAL(kst_id_of(top[0].hash64), 0);
        CU_ASSERT_EQUAL(ks_topk_sorted(tk, top, 0), 0);
        free(counts);
        ks_topk_destroy(tk);
}

static void test_topk_merge_halves(void)
{
        const uint32_t *msgs   = kst_zipf_stream();
        uint64_t       *counts = malloc(ZIPF_KEYS * sizeof(*counts));
        ks_topk_t      *a      = ks_topk_new(TK_CAP);
        ks_topk_t      *b      = ks_topk_new(TK_CAP);
        ks_topk_t      *small  = ks_topk_new(256);

        CU_ASSERT_FATAL(counts && a && b && small);
        topk_add_range(a, msgs, 0, ZIPF_MSGS / 2);
        topk_add_range(b, msgs, ZIPF_MSGS / 2, ZIPF_MSGS);
        ks_topk_merge(a, b);
        kst_exact_counts(msgs, 0, ZIPF_MSGS, counts);
        check_topk(a, counts, ZIPF_MSGS, (double)ZIPF_MSGS / TK_CAP, 1);

        /* Counting on after the merge keeps every bound. */
        topk_add_range(a, msgs, 0, 200000);
        for (size_t i = 0; i < 200000; i++)
                counts[msgs[i]]++;
        check_topk(a, counts, ZIPF_MSGS + 200000,
                   (double)(ZIPF_MSGS + 200000) / TK_CAP, 1);

        /* A smaller summary merged in: bounds relative to its capacity. */
        ks_topk_destroy(b);
        b = ks_topk_new(TK_CAP);
        CU_ASSERT_FATAL(b != NULL);
        for (size_t i = 0; i < ZIPF_MSGS; i++)
                topk_add_range(i % 3 ? b : small, msgs, i, i + 1);
        ks_topk_merge(b, small);
        kst_exact_counts(msgs, 0, ZIPF_MSGS, counts);
        check_topk(b, counts, ZIPF_MSGS, (double)ZIPF_MSGS / 256, 0);

        free(counts);
        ks_topk_destroy(a);
        ks_topk_destroy(b);
        ks_topk_destroy(small);
}

/** @returns a summary of @p cap counters without the filter: plain
 *  Space-Saving, as after a merge (merging an empty summary changes
 *  nothing else). */
static ks_topk_t *topk_plain(size_t cap)
{
        ks_topk_t *tk = ks_topk_new(cap), *none = ks_topk_new(cap);

        CU_ASSERT_FATAL(tk && none);
        ks_topk_merge(tk, none);
        ks_topk_destroy(none);
        return tk;
}

/* Hand-computed plain Space-Saving steps with 2 counters. */
static void test_topk_takeover(void)
{
        ks_topk_t      *tk = topk_plain(2);
        ks_topk_entry_t e[2];

        CU_ASSERT_PTR_NOT_NULL_FATAL(tk);
        ks_topk_add(tk, "a", 1, 1, 11, 5);
        ks_topk_add(tk, "a", 1, 1, 11, 5);
        ks_topk_add(tk, "b", 1, 2, 22, 7);
        ks_topk_add(tk, "c", 1, 3, 33, 9); /* takes b's counter (1) */
        CU_ASSERT_EQUAL(ks_topk_sorted(tk, e, 2), 2);
        CU_ASSERT_EQUAL(e[0].hash64, 1); /* a: 2, error 0 */
        CU_ASSERT_EQUAL(e[0].count, 2);
        CU_ASSERT_EQUAL(e[0].error, 0);
        CU_ASSERT_EQUAL(e[0].bytes, 10);
        CU_ASSERT_EQUAL(e[1].hash64, 3); /* c: 1 + 1, error 1 */
        CU_ASSERT_EQUAL(e[1].count, 2);
        CU_ASSERT_EQUAL(e[1].error, 1);
        CU_ASSERT_EQUAL(e[1].bytes, 9);
        CU_ASSERT_EQUAL(e[1].phash, 33);
        CU_ASSERT_EQUAL(e[1].key[0], 'c');
        CU_ASSERT_EQUAL(ks_topk_total(tk), 4);
        ks_topk_add(tk, "b", 1, 2, 22, 7); /* takes one of the 2s */
        CU_ASSERT_EQUAL(ks_topk_sorted(tk, e, 2), 2);
        CU_ASSERT_EQUAL(e[0].hash64, 2);
        CU_ASSERT_EQUAL(e[0].count, 3);
        CU_ASSERT_EQUAL(e[0].error, 2);
        CU_ASSERT_EQUAL(e[0].bytes, 7);
        CU_ASSERT_EQUAL(e[1].count, 2);
        CU_ASSERT_EQUAL(ks_topk_total(tk), 5);
        ks_topk_destroy(tk);
}

/** @brief Adds @p times messages of the one-letter key @p k (hash = k). */
static void topk_add_n(ks_topk_t *tk, char k, int times)
{
        while (times-- > 0)
                ks_topk_add(tk, &k, 1, (uint64_t)k, (uint32_t)k, 1);
}

/** @brief Expects sorted entry @p e to be key @p k with count and error. */
static void expect_entry(const ks_topk_entry_t *e, char k, uint64_t count,
                         uint64_t error)
{
        CU_ASSERT_EQUAL(e->hash64, (uint64_t)k);
        CU_ASSERT_EQUAL(e->key[0], (uint8_t)k);
        CU_ASSERT_EQUAL(e->count, count);
        CU_ASSERT_EQUAL(e->error, error);
        CU_ASSERT_EQUAL(e->bytes, count - error);
}

/* Merges worked out by hand: the charges for keys missing on one side,
 * the choice of the m largest, and what a merge leaves as the bound for
 * keys it has not seen. */
static void test_topk_merge_by_hand(void)
{
        ks_topk_t      *a = topk_plain(2), *b = topk_plain(2);
        ks_topk_t      *c = ks_topk_new(3), *d = ks_topk_new(8);
        ks_topk_entry_t e[8];

        CU_ASSERT_FATAL(a && b && c && d);
        /* A = {a 10/0, c 5/4} (c took b's 4), bound 5; true a10 b4 c1.
         * B = {b 8/0, d 3/0}, bound 3; true b8 d3. */
        topk_add_n(a, 'a', 10);
        topk_add_n(a, 'b', 4);
        topk_add_n(a, 'c', 1);
        topk_add_n(b, 'b', 8);
        topk_add_n(b, 'd', 3);
        /* a 10+3 / 0+3; c 5+3 / 4+3; b (not in A) 8+5 / 0+5; d 3+5 / 5:
         * the 2 largest are a 13 and b 13 (true 10 and 12). */
        ks_topk_merge(a, b);
        CU_ASSERT_EQUAL_FATAL(ks_topk_sorted(a, e, 8), 2);
        expect_entry(&e[0], 'a', 13, 3);
        CU_ASSERT_EQUAL(e[1].hash64, 'b');
        CU_ASSERT_EQUAL(e[1].count, 13);
        CU_ASSERT_EQUAL(e[1].error, 5);
        CU_ASSERT_EQUAL(e[1].bytes, 8); /* B's 8 messages, 1 byte each */
        CU_ASSERT_EQUAL(ks_topk_total(a), 26);

        /* C (m = 3, not full: bound 0) = {x 20, z 15}; D-like {x 5, y 10}
         * in a full m = 2 summary (bound 5). x 25/0, y 10/0 (C charges
         * 0), z 15+5 / 5: the 2 largest are x and z, y goes. */
        ks_topk_destroy(b);
        b = ks_topk_new(2);
        CU_ASSERT_FATAL(b != NULL);
        topk_add_n(b, 'x', 5);
        topk_add_n(b, 'y', 10);
        topk_add_n(c, 'x', 20);
        topk_add_n(c, 'z', 15);
        ks_topk_merge(b, c);
        CU_ASSERT_EQUAL_FATAL(ks_topk_sorted(b, e, 8), 2);
        expect_entry(&e[0], 'x', 25, 0);
        CU_ASSERT_EQUAL(e[1].hash64, 'z');
        CU_ASSERT_EQUAL(e[1].count, 20);
        CU_ASSERT_EQUAL(e[1].error, 5);

        /* A full m = 2 summary {p 8/0, r 4/3} (bound 4; true p8 q3 r2)
         * merged into an empty m = 8 one: keys it dropped may have had up
         * to 4, so a newcomer is charged 4 even though D is not full. */
        ks_topk_destroy(c);
        c = topk_plain(2);
        topk_add_n(c, 'p', 8);
        topk_add_n(c, 'q', 3);
        topk_add_n(c, 'r', 1);
        ks_topk_merge(d, c);
        topk_add_n(d, 'q', 1); /* true q: 3 + 1 */
        CU_ASSERT_EQUAL_FATAL(ks_topk_sorted(d, e, 8), 3);
        expect_entry(&e[0], 'p', 8, 0);
        expect_entry(&e[1], 'q', 5, 4);
        expect_entry(&e[2], 'r', 4, 3);
        CU_ASSERT_EQUAL(ks_topk_total(d), 13);

        /* An entry from a report, inserted into a full summary, is
         * charged its bound like a merge: {a 10, y 4} + (z 3/0) gives
         * z 4+3 / 4, which takes y's counter. */
        ks_topk_destroy(a);
        a = ks_topk_new(2);
        CU_ASSERT_FATAL(a != NULL);
        topk_add_n(a, 'a', 10);
        topk_add_n(a, 'y', 4);
        memset(e, 0, sizeof(e[0]));
        e[0].hash64 = 'z';
        e[0].key[0] = 'z';
        e[0].keylen = 1;
        e[0].count  = 3;
        e[0].bytes  = 3;
        ks_topk_insert_entry(a, &e[0]);
        CU_ASSERT_EQUAL_FATAL(ks_topk_sorted(a, e, 8), 2);
        expect_entry(&e[0], 'a', 10, 0);
        expect_entry(&e[1], 'z', 7, 4);
        CU_ASSERT_EQUAL(ks_topk_total(a), 17);

        ks_topk_destroy(a);
        ks_topk_destroy(b);
        ks_topk_destroy(c);
        ks_topk_destroy(d);
}

static void test_topk_keys_and_bounds(void)
{
        ks_topk_t      *tk = ks_topk_new(8);
        ks_topk_entry_t e[8];
        uint8_t         longkey[300];
        size_t          i, n;

        CU_ASSERT_PTR_NULL(ks_topk_new(0));
        CU_ASSERT_PTR_NOT_NULL_FATAL(tk);
        CU_ASSERT_EQUAL(ks_topk_capacity(tk), 8);
        for (i = 0; i < sizeof(longkey); i++)
                longkey[i] = (uint8_t)(i * 7 + 1);
        for (i = 0; i < 3; i++)
                ks_topk_add(tk, longkey, sizeof(longkey), 100, 1, 300);
        ks_topk_add(tk, "abc", 3, 200, 2, 3);
        ks_topk_add(tk, "abc", 3, 200, 2, 3);
        ks_topk_add(tk, NULL, 0, 300, 3, 0); /* NULL key */
        n = ks_topk_sorted(tk, e, 8);
        CU_ASSERT_EQUAL_FATAL(n, 3);
        CU_ASSERT_EQUAL(e[0].keylen, 300);
        CU_ASSERT(memcmp(e[0].key, longkey, KS_TOPK_KEY_MAX) == 0);
        CU_ASSERT_EQUAL(e[0].count, 3);
        CU_ASSERT_EQUAL(e[0].bytes, 900);
        CU_ASSERT_EQUAL(e[1].keylen, 3);
        CU_ASSERT(memcmp(e[1].key, "abc\0\0", 5) == 0);
        CU_ASSERT_EQUAL(e[2].keylen, 0);
        CU_ASSERT_EQUAL(e[2].key[0], 0);

        /* Never more than capacity counters, whatever the key count. */
        for (i = 0; i < 10000; i++)
                ks_topk_add(tk, "x", 1, kst_mix64(i), 0, 1);
        n = ks_topk_sorted(tk, e, 8);
        CU_ASSERT_EQUAL(n, 8);
        CU_ASSERT_EQUAL(ks_topk_total(tk), 10006);
        ks_topk_destroy(tk);
        ks_topk_destroy(NULL);
}

/* All-distinct stream (worst case): every true count is 1. */
static void test_topk_distinct_stream(void)
{
        ks_topk_t      *tk = ks_topk_new(TK_CAP);
        ks_topk_entry_t e[TK_CAP];
        uint64_t        i, sum = 0;
        size_t          n;
        int             bad_ = 0;

        CU_ASSERT_PTR_NOT_NULL_FATAL(tk);
        for (i = 0; i < 100000; i++)
                ks_topk_add(tk, &i, sizeof(i), kst_mix64(i), 0, 1);
        n = ks_topk_sorted(tk, e, TK_CAP);
        CU_ASSERT_EQUAL(n, TK_CAP);
        for (i = 0; i < n; i++) {
                sum += e[i].count;
                CHECK_EACH(e[i].count - e[i].error <= 1 && e[i].count >= 1 &&
                               e[i].error <= 100000 / TK_CAP,
                           "entry %llu", (unsigned long long)i);
        }
        /* the cells took most newcomers: counts sum to less than N */
        CU_ASSERT(sum <= 100000);
        CU_ASSERT_EQUAL(ks_topk_total(tk), 100000);
        CU_ASSERT_EQUAL(bad_, 0);
        ks_topk_destroy(tk);
}

/** The hash of one-letter key @p k in the filter tests: the high bits of
 *  its low 32 choose the cell ((hash & 0xffffffff) x 16 >> 32 = k with 2
 *  counters, 16 cells). */
#define FH(k) ((uint64_t)(k) << 28)

/** @brief Adds @p times messages of key @p k (hash FH(k)), 1 byte each. */
static void filter_add(ks_topk_t *tk, char k, int times)
{
        while (times-- > 0)
                ks_topk_add(tk, &k, 1, FH(k), (uint32_t)k, 1);
}

/** @brief expect_entry() for a key added by filter_add(). */
static void expect_filtered(const ks_topk_entry_t *e, char k, uint64_t count,
                            uint64_t error)
{
        CU_ASSERT_EQUAL(e->hash64, FH(k));
        CU_ASSERT_EQUAL(e->key[0], (uint8_t)k);
        CU_ASSERT_EQUAL(e->count, count);
        CU_ASSERT_EQUAL(e->error, error);
        CU_ASSERT_EQUAL(e->bytes, count - error);
}

/* Filtered Space-Saving steps by hand, 2 counters (8 cells per counter:
 * keys 1..6 fall in cells 1..6). */
static void test_topk_filter_by_hand(void)
{
        ks_topk_t      *tk = ks_topk_new(2);
        ks_topk_entry_t e[2];

        CU_ASSERT_PTR_NOT_NULL_FATAL(tk);
        filter_add(tk, 1, 3); /* not full: counters taken as they come */
        filter_add(tk, 2, 2);
        /* 3: its cell 0 + 1 does not exceed the smallest count (2): the
         * cell absorbs it */
        filter_add(tk, 3, 1);
        CU_ASSERT_EQUAL_FATAL(ks_topk_sorted(tk, e, 2), 2);
        expect_filtered(&e[0], 1, 3, 0);
        expect_filtered(&e[1], 2, 2, 0);
        /* 3 again: cell 1 + 1 = 2, still no more than 2; once more: 3 > 2,
         * so 3 takes 2's counter with count 3, error its cell's 2; 2's
         * cell keeps 2's count */
        filter_add(tk, 3, 2);
        CU_ASSERT_EQUAL_FATAL(ks_topk_sorted(tk, e, 2), 2);
        expect_filtered(&e[0], 1, 3, 0);
        expect_filtered(&e[1], 3, 3, 2);
        CU_ASSERT_EQUAL(ks_topk_total(tk), 8);
        /* 2 comes back with 1: cell 2 + 1 = 3 does not exceed 3; with one
         * more, 4 does: 2 is back with count 4 (its true count), error 3 */
        filter_add(tk, 2, 1);
        CU_ASSERT_EQUAL_FATAL(ks_topk_sorted(tk, e, 2), 2);
        expect_filtered(&e[1], 3, 3, 2);
        filter_add(tk, 2, 1);
        CU_ASSERT_EQUAL_FATAL(ks_topk_sorted(tk, e, 2), 2);
        expect_filtered(&e[0], 2, 4, 3);
        CU_ASSERT_EQUAL(e[1].count, 3); /* 1 or 3 stayed */
        CU_ASSERT(e[1].hash64 == FH(1) || e[1].hash64 == FH(3));
        /* a run of 5 of key 4: 0 + 5 > 3, error 0 (plain Space-Saving
         * would charge it the smallest count, 3) */
        ks_topk_add_n(tk, "\4", 1, FH(4), 4, 5, 5);
        CU_ASSERT_EQUAL_FATAL(ks_topk_sorted(tk, e, 2), 2);
        expect_filtered(&e[0], 4, 5, 0);
        expect_filtered(&e[1], 2, 4, 3);
        CU_ASSERT_EQUAL(ks_topk_total(tk), 15);
        /* 5 takes 2's counter; 4 then reaches 2^33 + 5 */
        ks_topk_add_n(tk, "\5", 1, FH(5), 5, (uint64_t)1 << 33, 1);
        ks_topk_add_n(tk, "\4", 1, FH(4), 4, (uint64_t)1 << 33, 1);
        /* a run of 2^32 of key 6 would take its cell past 2^32 - 1: plain
         * Space-Saving from there on, charged the smallest count, 2^33 */
        ks_topk_add_n(tk, "\6", 1, FH(6), 6, (uint64_t)1 << 32, 1);
        CU_ASSERT_EQUAL_FATAL(ks_topk_sorted(tk, e, 2), 2);
        CU_ASSERT_EQUAL(e[0].hash64, FH(6));
        CU_ASSERT_EQUAL(e[0].count, (uint64_t)3 << 32);
        CU_ASSERT_EQUAL(e[0].error, (uint64_t)1 << 33);
        CU_ASSERT_EQUAL(e[1].hash64, FH(4));
        ks_topk_destroy(tk);
}

/* Random streams, weighted runs included, against exact counts: every key
 * not monitored has had at most the smallest count, every monitored key's
 * true count is in [count - error, count], and error <= N / m. */
static void test_topk_filter_bounds(void)
{
        enum { KEYS = 2000, CAP = 64, RUNS = 200000 };
        uint64_t       *exact = calloc(KEYS, sizeof(*exact));
        ks_topk_t      *tk    = ks_topk_new(CAP);
        ks_topk_entry_t e[CAP];
        char           *held = calloc(KEYS, 1);
        uint64_t        n    = 0, i;
        size_t          got, j;
        int             bad_ = 0;

        CU_ASSERT_FATAL(exact && tk && held);
        kst_rng_state = 42;
        for (i = 0; i < RUNS; i++) {
                /* log-uniform: key k drawn ~ 1 / (k + 1), so many keys sit
                 * near the summary's smallest count and change hands */
                uint32_t k = (uint32_t)pow(KEYS + 1.0, kst_rng_uniform()) - 1;
                uint64_t w = 1 + (uint64_t)(kst_rng_uniform() * 4);
                ks_topk_add_n(tk, &k, sizeof(k), kst_key_hash(k), 0, w, w);
                exact[k] += w;
                n += w;
        }
        got = ks_topk_sorted(tk, e, CAP);
        CU_ASSERT_EQUAL_FATAL(got, CAP);
        CU_ASSERT_EQUAL(ks_topk_total(tk), n);
        for (j = 0; j < got; j++) {
                long id = kst_id_of(e[j].hash64);
                CU_ASSERT_FATAL(id >= 0 && id < KEYS);
                held[id] = 1;
                CHECK_EACH(e[j].count - e[j].error <= exact[id] &&
                               exact[id] <= e[j].count && e[j].error <= n / CAP,
                           "key %ld: true %llu, count %llu error %llu", id,
                           (unsigned long long)exact[id],
                           (unsigned long long)e[j].count,
                           (unsigned long long)e[j].error);
        }
        for (i = 0; i < KEYS; i++)
                if (!held[i])
                        CHECK_EACH(exact[i] <= e[got - 1].count,
                                   "key %llu: %llu messages, not held",
                                   (unsigned long long)i,
                                   (unsigned long long)exact[i]);
        for (i = 0; i < 20; i++)
                CHECK_EACH(held[i], "busy key %llu missing",
                           (unsigned long long)i);
        CU_ASSERT_EQUAL(bad_, 0);
        free(exact);
        free(held);
        ks_topk_destroy(tk);
}

/* Rebuilding from entries (a report) and merging them back. */
static void test_topk_insert_entry(void)
{
        const uint32_t *msgs = kst_zipf_stream();
        ks_topk_t      *a    = ks_topk_new(TK_CAP);
        ks_topk_t      *b    = ks_topk_new(TK_CAP);
        ks_topk_entry_t ea[TK_CAP], eb[TK_CAP];
        size_t          na, nb, i;

        CU_ASSERT_FATAL(a && b);
        topk_add_range(a, msgs, 0, ZIPF_MSGS);
        na = ks_topk_sorted(a, ea, TK_CAP);
        for (i = 0; i < na; i++)
                ks_topk_insert_entry(b, &ea[(i * 7) % na]);
        nb = ks_topk_sorted(b, eb, TK_CAP);
        CU_ASSERT_EQUAL_FATAL(na, nb);
        for (i = 0; i < na; i++)
                CU_ASSERT(topk_entry_eq(&ea[i], &eb[i]));
        {
                uint64_t sum = 0; /* an entry adds its count to N */
                for (i = 0; i < na; i++)
                        sum += ea[i].count;
                CU_ASSERT_EQUAL(ks_topk_total(b), sum);
        }

        /* Same key again: summed in place. */
        ks_topk_insert_entry(b, &ea[0]);
        nb = ks_topk_sorted(b, eb, 1);
        CU_ASSERT_EQUAL(eb[0].count, 2 * ea[0].count);
        CU_ASSERT_EQUAL(eb[0].error, 2 * ea[0].error);
        CU_ASSERT_EQUAL(eb[0].bytes, 2 * ea[0].bytes);

        /* Merging a summary with itself doubles it. */
        ks_topk_merge(a, a);
        CU_ASSERT_EQUAL(ks_topk_total(a), 2 * ZIPF_MSGS);
        nb = ks_topk_sorted(a, eb, TK_CAP);
        for (i = 0; i < nb; i++)
                CU_ASSERT(eb[i].count == 2 * ea[i].count &&
                          eb[i].hash64 == ea[i].hash64);
        ks_topk_destroy(a);
        ks_topk_destroy(b);
}

static void test_zz_cleanup(void)
{
        kst_cleanup_streams();
        CU_PASS("streams freed");
}

void ks_test_register(void)
{
        KS_ADD_SUITE("topk", {"zipf heavy hitters", test_topk_zipf},
                     {"merge halves", test_topk_merge_halves},
                     {"takeover by hand", test_topk_takeover},
                     {"filter by hand", test_topk_filter_by_hand},
                     {"filter bounds, weighted runs", test_topk_filter_bounds},
                     {"merge by hand", test_topk_merge_by_hand},
                     {"keys and bounds", test_topk_keys_and_bounds},
                     {"distinct stream", test_topk_distinct_stream},
                     {"insert entry", test_topk_insert_entry},
                     {"cleanup", test_zz_cleanup});
}
