/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_test_streams.c
 * @brief Key hashes, random numbers and a Zipf stream for the sketches'
 *        tests (test_sketches.c, test_topk.c): see ks_test_streams.h.
 */
#include "ks_test_streams.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ks_test.h"

/** @returns the x-th output of splitmix64 (Steele, Lea & Flood, OOPSLA
 *           2014): its finaliser applied to x times the golden-ratio
 *           increment. (The finaliser of x + constant, i.e. of consecutive
 *           integers, spread HLL errors 1.26x wider than 1.04/sqrt(m).) */
uint64_t kst_mix64(uint64_t x)
{
        x *= 0x9E3779B97F4A7C15ull;
        x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
        x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
        return x ^ (x >> 31);
}

/** The 64-bit sketch hash, partitioner hash and message size of key id. */
uint64_t kst_key_hash(uint32_t id)
{
        return kst_mix64(((uint64_t)id << 8) ^ 0x5EED);
}
uint32_t kst_key_phash(uint32_t id)
{
        return (uint32_t)(kst_mix64((uint64_t)id * 7919 + 0xB0B) >> 32);
}
uint64_t kst_key_bytes(uint32_t id)
{
        return 10 + id % 50; /* constant per key: see test_topk_zipf */
}
size_t kst_key_text(uint32_t id, char *buf, size_t size)
{
        return (size_t)snprintf(buf, size, "key-%u", id);
}

uint64_t kst_rng_state;

/** @returns a uniform double in [0, 1). */
double kst_rng_uniform(void)
{
        return (double)(kst_mix64(++kst_rng_state) >> 11) * 0x1p-53;
}

uint32_t *kst_zipf_msgs; /* [ZIPF_MSGS] key ids, key 0 the hottest */

/** @returns the Zipf(s = 1.1) stream over 100k keys, built once. */
const uint32_t *kst_zipf_stream(void)
{
        double *cdf;
        double  sum = 0;
        size_t  i;

        if (kst_zipf_msgs)
                return kst_zipf_msgs;
        cdf           = malloc(ZIPF_KEYS * sizeof(*cdf));
        kst_zipf_msgs = malloc(ZIPF_MSGS * sizeof(*kst_zipf_msgs));
        CU_ASSERT_FATAL(cdf && kst_zipf_msgs);
        for (i = 0; i < ZIPF_KEYS; i++)
                cdf[i] = (sum += pow((double)(i + 1), -ZIPF_S));
        kst_rng_state = 42;
        for (i = 0; i < ZIPF_MSGS; i++) {
                double u  = kst_rng_uniform() * sum;
                size_t lo = 0, hi = ZIPF_KEYS - 1;
                while (lo < hi) {
                        size_t mid = (lo + hi) / 2;
                        if (cdf[mid] > u)
                                hi = mid;
                        else
                                lo = mid + 1;
                }
                kst_zipf_msgs[i] = (uint32_t)lo;
        }
        free(cdf);
        return kst_zipf_msgs;
}

/** @brief Exact messages per key id over msgs[lo, hi). */
void kst_exact_counts(const uint32_t *msgs, size_t lo, size_t hi,
                      uint64_t *counts)
{
        memset(counts, 0, ZIPF_KEYS * sizeof(*counts));
        for (; lo < hi; lo++)
                counts[msgs[lo]]++;
}

hash_id_t *kst_by_hash;

static int kst_cmp_hash_id(const void *a, const void *b)
{
        uint64_t x = ((const hash_id_t *)a)->hash;
        uint64_t y = ((const hash_id_t *)b)->hash;
        return x < y ? -1 : x > y;
}

int kst_cmp_u64(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
        return x < y ? -1 : x > y;
}

/** @returns the key id with sketch hash @p h, or -1. */
long kst_id_of(uint64_t h)
{
        hash_id_t k = {h, 0}, *f;
        uint32_t  i;

        if (!kst_by_hash) {
                kst_by_hash = malloc(ZIPF_KEYS * sizeof(*kst_by_hash));
                CU_ASSERT_FATAL(kst_by_hash != NULL);
                for (i = 0; i < ZIPF_KEYS; i++)
                        kst_by_hash[i] = (hash_id_t){kst_key_hash(i), i};
                qsort(kst_by_hash, ZIPF_KEYS, sizeof(*kst_by_hash),
                      kst_cmp_hash_id);
        }
        f = bsearch(&k, kst_by_hash, ZIPF_KEYS, sizeof(*kst_by_hash),
                    kst_cmp_hash_id);
        return f ? (long)f->id : -1;
}

void kst_cleanup_streams(void)
{
        free(kst_zipf_msgs);
        free(kst_by_hash);
        kst_zipf_msgs = NULL;
        kst_by_hash   = NULL;
}
