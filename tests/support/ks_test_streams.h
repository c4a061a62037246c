/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_test_streams.h
 * @brief What the sketches' tests share: key hashes independent of the
 *        code under test (the splitmix64 finaliser of the key number, not
 *        ks_hash.c), a seeded random number generator, a Zipf(1.1) stream
 *        over 100,000 keys built once, exact counts over it, and checks
 *        that report the first few failures of a loop.
 */
#ifndef KS_TEST_STREAMS_H
#define KS_TEST_STREAMS_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define ZIPF_KEYS 100000
#define ZIPF_MSGS 1000000
#define ZIPF_S 1.1

/** Hash -> key id, by binary search in a table sorted by hash. */
typedef struct hash_id {
        uint64_t hash;
        uint32_t id;
} hash_id_t;

/** @returns the x-th output of splitmix64 (Steele, Lea & Flood, 2014). */
uint64_t kst_mix64(uint64_t x);
/** @returns key @p id's sketch hash. */
uint64_t kst_key_hash(uint32_t id);
/** @returns key @p id's partitioner hash (any 32 bits of its own). */
uint32_t kst_key_phash(uint32_t id);
/** @returns key @p id's bytes per message (constant per key). */
uint64_t kst_key_bytes(uint32_t id);
/** @brief Writes key @p id's text ("key-<id>"); @returns its length. */
size_t kst_key_text(uint32_t id, char *buf, size_t size);
/** The generator's state: set it to restart a sequence. */
extern uint64_t kst_rng_state;
/** @returns a uniform double in [0, 1). */
double kst_rng_uniform(void);
/** The Zipf stream, once built ([ZIPF_MSGS] key ids, key 0 the hottest). */
extern uint32_t *kst_zipf_msgs;
/** @returns the Zipf(s = 1.1) stream over ZIPF_KEYS keys, built once. */
const uint32_t *kst_zipf_stream(void);
/** @brief Exact messages per key id over msgs[lo, hi). */
void kst_exact_counts(const uint32_t *msgs, size_t lo, size_t hi,
                      uint64_t *counts);
/** The table of kst_id_of(), sorted by hash, built on its first call. */
extern hash_id_t *kst_by_hash;
/** @brief qsort() comparison of uint64_t values. */
int kst_cmp_u64(const void *a, const void *b);
/** @returns the key id with sketch hash @p h, or -1. */
long kst_id_of(uint64_t h);
/** @brief Frees the stream and the hash table. */
void kst_cleanup_streams(void);

/** Reports the first few failures of a check made in a loop. */
#define CHECK_EACH(cond, fmt, ...)                                             \
        do {                                                                   \
                if (!(cond)) {                                                 \
                        if (bad_++ < 5)                                        \
                                fprintf(stderr, "\n  %s:%d: " fmt, __func__,   \
                                        __LINE__, __VA_ARGS__);                \
                }                                                              \
        } while (0)

#define ASSERT_NEAR(actual, expected, tol, what)                               \
        do {                                                                   \
                double a_ = (actual), e_ = (expected), t_ = (tol);             \
                if (!(fabs(a_ - e_) <= t_))                                    \
                        fprintf(stderr,                                        \
                                "\n  %s: %.6g not within %.4g of %.6g", what,  \
                                a_, t_, e_);                                   \
                CU_ASSERT(fabs(a_ - e_) <= t_);                                \
        } while (0)

#endif /* KS_TEST_STREAMS_H */
