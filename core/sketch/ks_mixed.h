/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_mixed.h
 * @brief Mixed key serializers: logical keys seen under more than one byte
 *        encoding on a topic (the same MMSI as the text "211234567" and as
 *        a 4-byte int), each encoding with its own partition.
 *
 * A bottom-k sample (ks_keysample.h) of distinct *logical* keys
 * (ks_keyenc_logical()), chosen by a 64-bit hash of the logical value, so
 * that every encoding of one value is kept or dropped together: sampling
 * is consistent on the logical value. Each retained value records, for the
 * first two encodings seen, its messages, the partitioner hash of those
 * bytes and the first KS_MIXED_KEY_MAX bytes; further encodings are
 * counted together. Counts are exact for retained values (bottom-k). While
 * fewer than `capacity` logical keys were seen every collision is found;
 * beyond, a uniform sample of them, whose share estimates the total.
 *
 * Memory: capacity x (52 + sizeof(ks_mixed_value_t) = 136) bytes, fixed at
 * creation (272 KiB at capacity 2048).
 *
 * Not thread-safe: the caller serialises access (the topic's lock).
 */
#ifndef KS_MIXED_H
#define KS_MIXED_H

#include <stddef.h>
#include <stdint.h>

#include "ks_keyenc.h"
#include "ks_keysample.h"

#define KS_MIXED_KEY_MAX 40
#define KS_MIXED_SLOTS 2

/** One encoding of a logical key. */
typedef struct ks_mixed_slot {
        uint64_t messages;
        uint32_t phash;  /**< partitioner hash of these bytes */
        uint8_t  enc;    /**< ks_keyenc_t */
        uint8_t  keylen; /**< bytes stored (<= KS_MIXED_KEY_MAX) */
        uint8_t  key_truncated;
        uint8_t  key[KS_MIXED_KEY_MAX];
} ks_mixed_slot_t;

/** What the sample keeps per logical key. */
typedef struct ks_mixed_value {
        uint16_t        enc_mask; /**< bit per ks_keyenc_t seen */
        uint16_t        nslots;
        ks_mixed_slot_t slot[KS_MIXED_SLOTS];
        uint64_t        other_messages; /**< under encodings beyond the slots */
} ks_mixed_value_t;

typedef struct ks_mixed ks_mixed_t;

/** @returns a sample of @p capacity logical keys (>= 2), NULL on ENOMEM. */
ks_mixed_t *ks_mixed_new(size_t capacity);
void        ks_mixed_destroy(ks_mixed_t *m);

/**
 * @brief The logical key's 64-bit hash (computed outside any lock).
 * @returns 0 and sets *lhash, or -1 when the key has no logical value
 *          (binary, NULL, empty).
 */
int ks_mixed_logical_hash(const void *key, size_t len, ks_keyenc_t enc,
                          uint64_t *lhash);

/** @brief Counts one message of logical key @p lhash in encoding @p enc,
 *         whose bytes have partitioner hash @p phash. */
void ks_mixed_add(ks_mixed_t *m, uint64_t lhash, ks_keyenc_t enc,
                  const void *key, size_t len, uint32_t phash, uint64_t bytes);

/** @brief ks_mixed_add() for @p messages messages at once, @p bytes in
 *         all (a drainer's aggregated run). */
void ks_mixed_add_n(ks_mixed_t *m, uint64_t lhash, ks_keyenc_t enc,
                    const void *key, size_t len, uint32_t phash,
                    uint64_t messages, uint64_t bytes);

/** A logical key seen under two or more encodings. */
typedef struct ks_mixed_collision {
        uint64_t         messages; /**< all encodings */
        ks_mixed_value_t v;
} ks_mixed_collision_t;

typedef struct ks_mixed_summary {
        size_t sampled;      /**< logical keys in the sample */
        size_t capacity;     /**< sample size */
        double logical_keys; /**< distinct logical keys (estimate) */
        size_t collisions;   /**< sampled logical keys with >= 2 encodings */
        double collisions_estimate; /**< scaled to all logical keys */
} ks_mixed_summary_t;

/** The sample's raw state, copied under the caller's lock. */
typedef struct ks_mixed_raw {
        ks_keysample_entry_t *entries; /**< [capacity] */
        ks_mixed_value_t     *values;  /**< [capacity] */
        size_t                n, capacity;
        size_t                room; /**< entries and values allocated */
        double logical_keys;        /**< distinct logical keys (estimate) */
        ks_keysample_raw_t sample;  /**< as copied under the lock; unpacked
                                    *   into entries and values after */
} ks_mixed_raw_t;

/** @returns 0 and buffers for ks_mixed_copy() (capacity entries), -1 on
 *           ENOMEM. Free with ks_mixed_raw_free(). */
int  ks_mixed_raw_alloc(const ks_mixed_t *m, ks_mixed_raw_t *raw);
void ks_mixed_raw_free(ks_mixed_raw_t *raw);
/** @brief Keeps @p raw's buffers when they fit @p m, else allocates them
 *         anew (raw zeroed or from an earlier call). @returns 0 or -1. */
int ks_mixed_raw_reserve(const ks_mixed_t *m, ks_mixed_raw_t *raw);
/** @brief Copies the sample (no allocation: under the caller's lock). */
void ks_mixed_copy(const ks_mixed_t *m, ks_mixed_raw_t *raw);
/** @brief ks_mixed_collisions() of a copy (outside any lock). */
size_t ks_mixed_raw_collisions(const ks_mixed_raw_t *raw,
                               ks_mixed_collision_t *out, size_t max,
                               ks_mixed_summary_t *sum);

/**
 * @brief Copies up to @p max collisions, busiest first, into @p out.
 * @returns the number copied; *sum describes the whole sample.
 */
size_t ks_mixed_collisions(const ks_mixed_t *m, ks_mixed_collision_t *out,
                           size_t max, ks_mixed_summary_t *sum);

#endif /* KS_MIXED_H */
