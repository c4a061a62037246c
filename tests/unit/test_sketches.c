/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_sketches.c
 * @brief The bounded-memory sketches against exact answers computed here:
 *        HyperLogLog (ks_hll) and the bottom-k key sample (ks_keysample);
 *        Space-Saving hot keys (ks_topk) in test_topk.c.
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

#include "ks_hll.h"
#include "ks_keysample.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* HyperLogLog                                                         */
/* ------------------------------------------------------------------ */

static ks_hll_t hll_a, hll_b, hll_c;

static void test_hll_empty_and_error(void)
{
        ks_hll_init(&hll_a);
        CU_ASSERT_EQUAL(ks_hll_estimate(&hll_a), 0.0);
        ASSERT_NEAR(ks_hll_std_error(), 1.04 / 128.0, 1e-12, "std error");
        CU_ASSERT_EQUAL(sizeof(ks_hll_t), 16384);
}

/* Across the range, including just above 2.5m = 40960, where the classic
 * switch from linear counting to the raw estimate is ~2.4 % biased. */
static void test_hll_accuracy(void)
{
        static const uint64_t ns[] = {1, 2, 100, 10000, 41000, 1000000};
        const double          se   = ks_hll_std_error();
        size_t                i, seed;
        uint64_t              j;
        char                  what[64];

        for (i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
                size_t seeds = ns[i] >= 1000000 ? 1 : 4;
                for (seed = 0; seed < seeds; seed++) {
                        ks_hll_init(&hll_a);
                        for (j = 0; j < ns[i]; j++) {
                                uint64_t h =
                                    kst_mix64(j + ((uint64_t)seed << 40));
                                ks_hll_add(&hll_a, h);
                                if (j % 3 == 0) /* duplicates do not count */
                                        ks_hll_add(&hll_a, h);
                        }
                        snprintf(what, sizeof(what), "hll n=%llu seed=%zu",
                                 (unsigned long long)ns[i], seed);
                        ASSERT_NEAR(ks_hll_estimate(&hll_a), (double)ns[i],
                                    3 * se * (double)ns[i], what);
                }
        }
}

static void test_hll_merge_is_union(void)
{
        uint64_t j;

        ks_hll_init(&hll_a);
        ks_hll_init(&hll_b);
        ks_hll_init(&hll_c);
        for (j = 0; j < 60000; j++)
                ks_hll_add(&hll_a, kst_mix64(j));
        for (j = 40000; j < 100000; j++)
                ks_hll_add(&hll_b, kst_mix64(j));
        for (j = 0; j < 100000; j++)
                ks_hll_add(&hll_c, kst_mix64(j));

        ks_hll_merge(&hll_a, &hll_b);
        CU_ASSERT(memcmp(&hll_a, &hll_c, sizeof(hll_a)) == 0);
        CU_ASSERT_EQUAL(ks_hll_estimate(&hll_a), ks_hll_estimate(&hll_c));
        ASSERT_NEAR(ks_hll_estimate(&hll_a), 100000,
                    3 * ks_hll_std_error() * 100000, "hll union");

        ks_hll_merge(&hll_a, &hll_a); /* idempotent */
        CU_ASSERT(memcmp(&hll_a, &hll_c, sizeof(hll_a)) == 0);
        ks_hll_init(&hll_b);
        ks_hll_merge(&hll_a, &hll_b); /* the empty sketch is neutral */
        CU_ASSERT(memcmp(&hll_a, &hll_c, sizeof(hll_a)) == 0);
}

/* ------------------------------------------------------------------ */
/* Key sample                                                          */
/* ------------------------------------------------------------------ */

#define KS_K 4096

static void keysample_add_range(ks_keysample_t *ks, const uint32_t *msgs,
                                size_t lo, size_t hi)
{
        for (; lo < hi; lo++)
                ks_keysample_add(ks, kst_key_hash(msgs[lo]),
                                 kst_key_phash(msgs[lo]),
                                 kst_key_bytes(msgs[lo]));
}

/** @returns the retained entries sorted by hash (caller frees). */
static ks_keysample_entry_t *sorted_sample(const ks_keysample_t *ks, size_t *n)
{
        ks_keysample_entry_t *e = calloc(ks_keysample_size(ks) + 1, sizeof(*e));
        CU_ASSERT_FATAL(e != NULL);
        *n = ks_keysample_entries(ks, e);
        CU_ASSERT_EQUAL(*n, ks_keysample_size(ks));
        qsort(e, *n, sizeof(*e), kst_cmp_u64); /* hash64 is the first member */
        return e;
}

/**
 * @brief Checks that @p ks holds exactly the size() smallest hashes of the
 *        keys counted in @p counts, each with its exact messages, bytes
 *        and partitioner hash; with @p expect_full, size() is also
 *        min(k, keys seen).
 */
static void check_bottom_k_exact(const ks_keysample_t *ks,
                                 const uint64_t *counts, int expect_full)
{
        uint64_t             *seen = malloc(ZIPF_KEYS * sizeof(*seen));
        ks_keysample_entry_t *e;
        size_t                n, nseen = 0, i;
        int                   bad_ = 0;

        CU_ASSERT_FATAL(seen != NULL);
        for (i = 0; i < ZIPF_KEYS; i++)
                if (counts[i])
                        seen[nseen++] = kst_key_hash((uint32_t)i);
        qsort(seen, nseen, sizeof(*seen), kst_cmp_u64);

        e = sorted_sample(ks, &n);
        CU_ASSERT(n <= ks_keysample_capacity(ks));
        CU_ASSERT(n <= nseen);
        if (expect_full)
                CU_ASSERT(n == (nseen < ks_keysample_capacity(ks)
                                    ? nseen
                                    : ks_keysample_capacity(ks)));
        for (i = 0; i < n && i < nseen; i++) {
                long id = kst_id_of(e[i].hash64);
                CHECK_EACH(e[i].hash64 == seen[i],
                           "rank %zu: hash %llx != %llx", i,
                           (unsigned long long)e[i].hash64,
                           (unsigned long long)seen[i]);
                CHECK_EACH(id >= 0, "unknown hash %llx",
                           (unsigned long long)e[i].hash64);
                if (id < 0)
                        continue;
                CHECK_EACH(e[i].messages == counts[id],
                           "key %ld: %llu messages, exact %llu", id,
                           (unsigned long long)e[i].messages,
                           (unsigned long long)counts[id]);
                CHECK_EACH(
                    e[i].bytes == counts[id] * kst_key_bytes((uint32_t)id),
                    "key %ld: bytes %llu", id, (unsigned long long)e[i].bytes);
                CHECK_EACH(e[i].phash == kst_key_phash((uint32_t)id),
                           "key %ld: phash", id);
        }
        CU_ASSERT_EQUAL(bad_, 0);
        free(e);
        free(seen);
}

/** @brief Asserts two samples retain the same keys with the same counts. */
static void check_same_sample(const ks_keysample_t *a, const ks_keysample_t *b)
{
        size_t                na, nb;
        ks_keysample_entry_t *ea = sorted_sample(a, &na);
        ks_keysample_entry_t *eb = sorted_sample(b, &nb);

        CU_ASSERT_EQUAL_FATAL(na, nb);
        CU_ASSERT(memcmp(ea, eb, na * sizeof(*ea)) == 0);
        CU_ASSERT_EQUAL(ks_keysample_distinct_estimate(a),
                        ks_keysample_distinct_estimate(b));
        free(ea);
        free(eb);
}

static void test_keysample_bounds(void)
{
        ks_keysample_t *ks;
        uint32_t        i;

        CU_ASSERT_PTR_NULL(ks_keysample_new(0));
        CU_ASSERT_PTR_NULL(ks_keysample_new(1));
        ks = ks_keysample_new(64);
        CU_ASSERT_PTR_NOT_NULL_FATAL(ks);
        CU_ASSERT_EQUAL(ks_keysample_capacity(ks), 64);
        CU_ASSERT_EQUAL(ks_keysample_size(ks), 0);
        CU_ASSERT_EQUAL(ks_keysample_distinct_estimate(ks), 0.0);
        for (i = 0; i < 100000; i++) {
                ks_keysample_add(ks, kst_key_hash(i), kst_key_phash(i), 1);
                if (ks_keysample_size(ks) > 64)
                        break;
        }
        CU_ASSERT_EQUAL(ks_keysample_size(ks), 64);
        ks_keysample_destroy(ks);
        ks_keysample_destroy(NULL);
}

/* Fewer distinct keys than k: everything is exact. */
static void test_keysample_small_exact(void)
{
        static uint64_t counts[ZIPF_KEYS];
        ks_keysample_t *ks = ks_keysample_new(64);
        uint32_t        i, r;

        CU_ASSERT_PTR_NOT_NULL_FATAL(ks);
        for (r = 0; r < 5; r++)
                for (i = 0; i <= 50; i += 1 + r % 2) {
                        ks_keysample_add(ks, kst_key_hash(i), kst_key_phash(i),
                                         kst_key_bytes(i));
                        counts[i]++;
                }
        CU_ASSERT_EQUAL(ks_keysample_size(ks), 51);
        CU_ASSERT_EQUAL(ks_keysample_distinct_estimate(ks), 51.0);
        check_bottom_k_exact(ks, counts, 1);
        ks_keysample_destroy(ks);
}

static void test_keysample_zipf_exact_counts(void)
{
        const uint32_t *msgs   = kst_zipf_stream();
        uint64_t       *counts = malloc(ZIPF_KEYS * sizeof(*counts));
        ks_keysample_t *ks     = ks_keysample_new(KS_K);
        size_t          i, nseen = 0;
        double          se;

        CU_ASSERT_FATAL(ks && counts);
        keysample_add_range(ks, msgs, 0, ZIPF_MSGS);
        kst_exact_counts(msgs, 0, ZIPF_MSGS, counts);
        CU_ASSERT_EQUAL(ks_keysample_size(ks), KS_K);
        check_bottom_k_exact(ks, counts, 1);

        for (i = 0; i < ZIPF_KEYS; i++)
                nseen += counts[i] != 0;
        se = 1.0 / sqrt(KS_K - 2.0); /* KMV relative standard error */
        ASSERT_NEAR(ks_keysample_distinct_estimate(ks), (double)nseen,
                    4 * se * (double)nseen, "keysample distinct (zipf)");
        free(counts);
        ks_keysample_destroy(ks);
}

/** @brief Fraction-of-keys estimates vs the exact fraction over all
 *         distinct keys of a stream of 1M distinct keys. */
static void test_keysample_fractions(void)
{
        ks_keysample_t       *ks    = ks_keysample_new(KS_K);
        ks_keysample_entry_t *e     = malloc(KS_K * sizeof(*e));
        const uint32_t        n     = 1000000;
        uint64_t              moved = 0, tenth = 0, s_moved = 0, s_tenth = 0;
        uint32_t              i;
        size_t                ne, j;
        double                f, fs, tol;

        CU_ASSERT_FATAL(ks && e);
        for (i = 0; i < n; i++) {
                uint32_t ph = kst_key_phash(i);
                ks_keysample_add(ks, kst_key_hash(i), ph, kst_key_bytes(i));
                if (i % 7 == 0) /* repeats change no fraction */
                        ks_keysample_add(ks, kst_key_hash(i), ph,
                                         kst_key_bytes(i));
                moved += ph % 6 != ph % 12;
                tenth += ph % 10 == 0;
        }
        ne = ks_keysample_entries(ks, e);
        CU_ASSERT_EQUAL_FATAL(ne, KS_K);
        for (j = 0; j < ne; j++) {
                s_moved += e[j].phash % 6 != e[j].phash % 12;
                s_tenth += e[j].phash % 10 == 0;
        }

        f   = (double)moved / n;
        fs  = (double)s_moved / (double)ne;
        tol = 4 * sqrt(f * (1 - f) / KS_K);
        ASSERT_NEAR(fs, f, tol, "fraction moved 6->12");
        f   = (double)tenth / n;
        fs  = (double)s_tenth / (double)ne;
        tol = 4 * sqrt(f * (1 - f) / KS_K);
        ASSERT_NEAR(fs, f, tol, "fraction phash%10==0");

        ASSERT_NEAR(ks_keysample_distinct_estimate(ks), n,
                    4.0 / sqrt(KS_K - 2.0) * n, "keysample distinct (1M)");
        free(e);
        ks_keysample_destroy(ks);
}

/* The KMV estimate is unbiased: the mean over 16 independent streams of
 * 100k distinct keys is within 4 standard errors of the mean (1/4 of one
 * sample's), tight enough to see a 5 % bias one sample cannot. */
static void test_keysample_distinct_unbiased(void)
{
        const int      streams = 16;
        const uint32_t n       = 100000;
        double         sum     = 0, se;
        int            s;
        uint32_t       i;

        for (s = 0; s < streams; s++) {
                ks_keysample_t *ks = ks_keysample_new(KS_K);
                CU_ASSERT_PTR_NOT_NULL_FATAL(ks);
                for (i = 0; i < n; i++)
                        ks_keysample_add(ks, kst_mix64(((uint64_t)s << 32) | i),
                                         0, 1);
                sum += ks_keysample_distinct_estimate(ks) / n - 1;
                ks_keysample_destroy(ks);
        }
        se = 1.0 / sqrt(KS_K - 2.0) / sqrt((double)streams);
        ASSERT_NEAR(sum / streams, 0, 4 * se, "mean relative error");
}

/* Two halves of a stream, merged, are the sample of the whole stream. */
static void test_keysample_merge_halves(void)
{
        const uint32_t *msgs   = kst_zipf_stream();
        uint64_t       *counts = malloc(ZIPF_KEYS * sizeof(*counts));
        ks_keysample_t *whole  = ks_keysample_new(KS_K);
        ks_keysample_t *a      = ks_keysample_new(KS_K);
        ks_keysample_t *b      = ks_keysample_new(KS_K);

        CU_ASSERT_FATAL(counts && whole && a && b);
        keysample_add_range(whole, msgs, 0, ZIPF_MSGS);
        keysample_add_range(a, msgs, 0, ZIPF_MSGS / 2);
        keysample_add_range(b, msgs, ZIPF_MSGS / 2, ZIPF_MSGS);
        ks_keysample_merge(a, b);
        check_same_sample(a, whole);
        kst_exact_counts(msgs, 0, ZIPF_MSGS, counts);
        check_bottom_k_exact(a, counts, 1);

        /* The merged sample goes on sampling like the whole one. */
        keysample_add_range(a, msgs, 0, 1000);
        keysample_add_range(whole, msgs, 0, 1000);
        check_same_sample(a, whole);

        /* Merging into an empty sample copies; merging with itself
         * doubles every count. */
        ks_keysample_destroy(b);
        b = ks_keysample_new(KS_K);
        CU_ASSERT_FATAL(b != NULL);
        ks_keysample_merge(b, whole);
        check_same_sample(b, whole);
        ks_keysample_merge(b, b);
        {
                size_t                n1, n2, i;
                ks_keysample_entry_t *e1   = sorted_sample(b, &n1);
                ks_keysample_entry_t *e2   = sorted_sample(whole, &n2);
                int                   bad_ = 0;
                CU_ASSERT_EQUAL_FATAL(n1, n2);
                for (i = 0; i < n1; i++)
                        CHECK_EACH(e1[i].messages == 2 * e2[i].messages &&
                                       e1[i].bytes == 2 * e2[i].bytes,
                                   "entry %zu not doubled", i);
                CU_ASSERT_EQUAL(bad_, 0);
                free(e1);
                free(e2);
        }
        free(counts);
        ks_keysample_destroy(whole);
        ks_keysample_destroy(a);
        ks_keysample_destroy(b);
}

/* Interleaved halves, and a smaller sample merged into a larger one: the
 * result is the bottom-n of the whole stream for some n <= k, exact. */
static void test_keysample_merge_uneven(void)
{
        const uint32_t *msgs   = kst_zipf_stream();
        uint64_t       *counts = malloc(ZIPF_KEYS * sizeof(*counts));
        ks_keysample_t *a      = ks_keysample_new(KS_K);
        ks_keysample_t *b      = ks_keysample_new(1024);
        ks_keysample_t *whole  = ks_keysample_new(KS_K);
        size_t          i, nseen = 0;
        double          se;

        CU_ASSERT_FATAL(counts && a && b && whole);
        for (i = 0; i < ZIPF_MSGS; i++) {
                ks_keysample_t *dst = i % 2 ? a : b;
                ks_keysample_add(dst, kst_key_hash(msgs[i]),
                                 kst_key_phash(msgs[i]),
                                 kst_key_bytes(msgs[i]));
        }
        ks_keysample_merge(a, b);
        kst_exact_counts(msgs, 0, ZIPF_MSGS, counts);
        CU_ASSERT(ks_keysample_size(a) >= 1024);
        CU_ASSERT(ks_keysample_size(a) < KS_K);
        check_bottom_k_exact(a, counts, 0);
        for (i = 0; i < ZIPF_KEYS; i++)
                nseen += counts[i] != 0;
        se = 1.0 / sqrt((double)ks_keysample_size(a) - 2.0);
        ASSERT_NEAR(ks_keysample_distinct_estimate(a), (double)nseen,
                    4 * se * (double)nseen, "uneven merge distinct");

        /* A full k = 1024 sample merged into an empty k = 4096 one: only
         * 1024 keys, but a sample of all keys (not an exact count of
         * 1024), that goes on rejecting keys above its threshold. */
        ks_keysample_destroy(a);
        ks_keysample_destroy(b);
        a = ks_keysample_new(KS_K);
        b = ks_keysample_new(1024);
        CU_ASSERT_FATAL(a && b);
        keysample_add_range(b, msgs, 0, ZIPF_MSGS / 2);
        ks_keysample_merge(a, b);
        CU_ASSERT_EQUAL(ks_keysample_size(a), 1024);
        CU_ASSERT_EQUAL(ks_keysample_distinct_estimate(a),
                        ks_keysample_distinct_estimate(b));
        keysample_add_range(a, msgs, ZIPF_MSGS / 2, ZIPF_MSGS);
        CU_ASSERT(ks_keysample_size(a) >= 1024);
        CU_ASSERT(ks_keysample_size(a) < 2048);
        check_bottom_k_exact(a, counts, 0);
        se = 1.0 / sqrt((double)ks_keysample_size(a) - 2.0);
        ASSERT_NEAR(ks_keysample_distinct_estimate(a), (double)nseen,
                    4 * se * (double)nseen, "small into large distinct");

        /* Rebuilding a sample from its entries (as from a report). */
        {
                ks_keysample_entry_t *e = malloc(KS_K * sizeof(*e));
                size_t                n;
                CU_ASSERT_FATAL(e != NULL);
                keysample_add_range(whole, msgs, 0, ZIPF_MSGS);
                n = ks_keysample_entries(whole, e);
                ks_keysample_destroy(b);
                b = ks_keysample_new(KS_K);
                CU_ASSERT_FATAL(b != NULL);
                for (i = 0; i < n; i++)
                        ks_keysample_insert_entry(b, &e[n - 1 - i]);
                check_same_sample(b, whole);
                free(e);
        }
        free(counts);
        ks_keysample_destroy(a);
        ks_keysample_destroy(b);
        ks_keysample_destroy(whole);
}

static void test_zz_cleanup(void)
{
        kst_cleanup_streams();
        CU_PASS("streams freed");
}

void ks_test_register(void)
{
        KS_ADD_SUITE("hll", {"empty and std error", test_hll_empty_and_error},
                     {"accuracy 1..1e6", test_hll_accuracy},
                     {"merge is union", test_hll_merge_is_union});
        KS_ADD_SUITE("keysample", {"bounds", test_keysample_bounds},
                     {"small exact", test_keysample_small_exact},
                     {"zipf exact counts", test_keysample_zipf_exact_counts},
                     {"fractions", test_keysample_fractions},
                     {"distinct unbiased", test_keysample_distinct_unbiased},
                     {"merge halves", test_keysample_merge_halves},
                     {"merge uneven", test_keysample_merge_uneven},
                     {"cleanup", test_zz_cleanup});
}
