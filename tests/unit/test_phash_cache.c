/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_phash_cache.c
 * @brief The delivery check's per-thread cache of partitioner hashes
 *        (ks_phash_cache.h): every answer is ks_partitioner_hash()'s
 *        (itself checked against librdkafka's partitioner functions in
 *        test_partitioner), keys that share a slot included, from several
 *        threads at once; repeated keys are found, long and empty keys
 *        are hashed every time.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ks_phash_cache.h"
#include "ks_test.h"

#define POOL 6000 /* distinct keys: three times the slots, so keys collide */
#define DRAWS 200000

static const ks_partitioner_t hashing[] = {
    KS_PARTITIONER_CONSISTENT, KS_PARTITIONER_CONSISTENT_RANDOM,
    KS_PARTITIONER_MURMUR2,    KS_PARTITIONER_MURMUR2_RANDOM,
    KS_PARTITIONER_FNV1A,      KS_PARTITIONER_FNV1A_RANDOM};
#define NHASHING (sizeof(hashing) / sizeof(hashing[0]))

static uint64_t splitmix(uint64_t *s)
{
        uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
        z          = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z          = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
}

/** @brief Key @p id: 1..40 bytes (some past the cache's 24), binary,
 *         with a few sharing their first bytes. */
static size_t key_of(uint32_t id, uint8_t *out)
{
        uint64_t s   = id;
        size_t   len = 1 + splitmix(&s) % 40, i;

        for (i = 0; i < len; i++)
                out[i] = (uint8_t)splitmix(&s);
        if (id % 7 == 0) /* differs from key id - 1 only in later bytes */
                memset(out, 0xAB, len < 8 ? len : 8);
        return len;
}

typedef struct run {
        uint64_t               seed;
        unsigned               wrong;
        unsigned               checked;
        ks_phash_cache_stats_t stats;
} run_t;

/** @brief Draws keys (Zipf-like: half from the first 100) and
 *         partitioners, compares every cached answer with the hash. */
static void *draw(void *arg)
{
        run_t  *r = arg;
        uint8_t key[64];
        size_t  i;

        for (i = 0; i < DRAWS; i++) {
                uint64_t x         = splitmix(&r->seed);
                uint32_t id        = (uint32_t)(x >> 32) % (x & 1 ? 100 : POOL);
                ks_partitioner_t p = hashing[(x >> 8) % NHASHING];
                size_t           len = key_of(id, key);
                if (ks_phash_cached(p, key, len) !=
                    ks_partitioner_hash(p, key, len))
                        r->wrong++;
                r->checked++;
        }
        /* empty and NULL keys: hashed, not cached */
        for (i = 0; i < NHASHING; i++) {
                r->wrong += ks_phash_cached(hashing[i], "", 0) !=
                            ks_partitioner_hash(hashing[i], "", 0);
                r->wrong += ks_phash_cached(hashing[i], NULL, 0) !=
                            ks_partitioner_hash(hashing[i], NULL, 0);
        }
        ks_phash_cache_stats(&r->stats);
        return NULL;
}

static void test_same_as_hash(void)
{
        run_t r = {.seed = 1};

        draw(&r);
        CU_ASSERT_EQUAL(r.wrong, 0);
        CU_ASSERT_EQUAL(r.checked, DRAWS);
        CU_ASSERT_EQUAL(r.stats.hits + r.stats.misses + r.stats.bypass,
                        DRAWS + 2 * NHASHING);
        /* the busy keys are found, the rest mostly miss */
        CU_ASSERT(r.stats.hits > DRAWS / 4);
        CU_ASSERT(r.stats.misses > DRAWS / 10);
        /* keys over 24 bytes (about 40 %) and the empty ones */
        CU_ASSERT(r.stats.bypass > DRAWS / 5);
}

static void test_threads(void)
{
        pthread_t t[4];
        run_t     r[4];
        int       i;

        for (i = 0; i < 4; i++) {
                r[i] = (run_t){.seed = 100 + (uint64_t)i};
                CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, draw, &r[i]),
                                      0);
        }
        for (i = 0; i < 4; i++) {
                pthread_join(t[i], NULL);
                CU_ASSERT_EQUAL(r[i].wrong, 0);
                /* each thread its own slots: its own counts */
                CU_ASSERT_EQUAL(r[i].stats.hits + r[i].stats.misses +
                                    r[i].stats.bypass,
                                DRAWS + 2 * NHASHING);
        }
}

/* Keys that differ only in their last bytes, and one key under two
 * partitioners, each pair asked alternately: wherever the two share a slot
 * (1 in 2048 pairs), the second must not be given the first's hash. */
static void test_slot_sharers(void)
{
        uint8_t  a[20], b[20];
        uint32_t i;
        unsigned wrong = 0, round;

        memset(a, 'k', 16);
        memcpy(b, a, 16);
        for (i = 0; i < 40000; i++) {
                uint32_t j = i | 0x80000000u;
                memcpy(a + 16, &i, 4);
                memcpy(b + 16, &j, 4);
                for (round = 0; round < 2; round++) {
                        wrong +=
                            ks_phash_cached(KS_PARTITIONER_MURMUR2, a, 20) !=
                            ks_partitioner_hash(KS_PARTITIONER_MURMUR2, a, 20);
                        wrong +=
                            ks_phash_cached(KS_PARTITIONER_MURMUR2, b, 20) !=
                            ks_partitioner_hash(KS_PARTITIONER_MURMUR2, b, 20);
                        wrong +=
                            ks_phash_cached(KS_PARTITIONER_CONSISTENT, a, 20) !=
                            ks_partitioner_hash(KS_PARTITIONER_CONSISTENT, a,
                                                20);
                }
        }
        CU_ASSERT_EQUAL(wrong, 0);
}

void ks_test_register(void)
{
        KS_ADD_SUITE(
            "partitioner hash cache",
            {"the same as ks_partitioner_hash()", test_same_as_hash},
            {"keys and partitioners sharing a slot", test_slot_sharers},
            {"four threads, each its own slots", test_threads});
}
