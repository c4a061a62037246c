/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_keysample.h
 * @brief A uniform sample of distinct keys: bottom-k (KMV) sampling on
 *        ks_hash_key64() (Bar-Yossef et al. 2002; Cohen & Kaplan 2007).
 *
 * Keeps the k distinct keys with the smallest 64-bit hash. Because the
 * admission threshold only falls, a key retained at the end has been in
 * the sample since its first message, so its message and byte counts are
 * exact. The sample is uniform over distinct keys, so any fraction of
 * distinct keys (e.g. keys whose partition changes from 6 to 12) is
 * estimated from it with standard error <= sqrt(f(1-f)/k) <= 0.5/sqrt(k).
 * The k-th smallest hash also gives a distinct-count estimate
 * (k-1) / (h_k / 2^64).
 *
 * Memory: about 52 bytes per retained key (node + index + free list) plus
 * the optional payload, fixed at
 * creation. Mergeable: the bottom-k of the union of two samples is the
 * bottom-k of the union of two streams (counts of a key present in both
 * are summed).
 *
 * Not thread-safe: the caller serialises access.
 */
#ifndef KS_KEYSAMPLE_H
#define KS_KEYSAMPLE_H

#include <stddef.h>
#include <stdint.h>

typedef struct ks_keysample_entry {
        uint64_t hash64;   /**< ks_hash_key64() of the key */
        uint32_t phash;    /**< the partitioner hash (ks_partitioner_hash) */
        uint64_t messages; /**< messages of this key since it was first seen */
        uint64_t bytes;    /**< key + value bytes of those messages */
} ks_keysample_entry_t;

typedef struct ks_keysample ks_keysample_t;

/** @returns a sample of at most @p k keys (k >= 2), or NULL on ENOMEM. */
ks_keysample_t *ks_keysample_new(size_t k);
void            ks_keysample_destroy(ks_keysample_t *ks);

/**
 * @brief A sample whose keys each carry @p payload_size bytes of the
 *        caller's (e.g. other clients' partitioner hashes, computed once
 *        when a key is admitted). The payload of an evicted key is reused.
 *        Merging copies payloads of keys new to dst and leaves common
 *        keys' payloads to the caller.
 */
ks_keysample_t *ks_keysample_new_payload(size_t k, size_t payload_size);

/**
 * @brief ks_keysample_add() that returns the key's payload when the key is
 *        retained (NULL otherwise); *admitted is 1 when this message
 *        admitted it (the payload is then zeroed for the caller to fill).
 */
void *ks_keysample_add_payload(ks_keysample_t *ks, uint64_t hash64,
                               uint32_t phash, uint64_t bytes, int *admitted);

/** @brief ks_keysample_add_payload() for @p messages messages of one key
 *         at once, @p bytes in all (a drainer's aggregated run). */
void *ks_keysample_add_payload_n(ks_keysample_t *ks, uint64_t hash64,
                                 uint32_t phash, uint64_t messages,
                                 uint64_t bytes, int *admitted);

/** @returns the payload bytes per key given at creation (0: none). */
size_t ks_keysample_payload_size(const ks_keysample_t *ks);

/** @brief ks_keysample_entries() plus each entry's payload, in the same
 *         order, into @p payloads (size() x payload size bytes). */
size_t ks_keysample_entries_payload(const ks_keysample_t *ks,
                                    ks_keysample_entry_t *out, void *payloads);

/**
 * The retained keys copied as they lie in memory, to take under a lock
 * (two memcpy()s) and unpack after releasing it
 * (ks_keysample_raw_entries()). Buffers sized by ks_keysample_raw_alloc()
 * for the capacity at that time.
 */
typedef struct ks_keysample_raw {
        size_t   k;       /**< keys the buffers hold */
        size_t   n;       /**< keys copied */
        size_t   psize;   /**< payload bytes per key */
        size_t   pplaces; /**< payload places copied */
        void    *nodes;   /**< [k] */
        uint8_t *payload; /**< [k * psize] */
} ks_keysample_raw_t;

/** @returns 0 and buffers for ks_keysample_raw_copy(), -1 on ENOMEM. Free
 *           with ks_keysample_raw_free(). */
int  ks_keysample_raw_alloc(const ks_keysample_t *ks, ks_keysample_raw_t *raw);
void ks_keysample_raw_free(ks_keysample_raw_t *raw);
/** @brief Keeps @p raw's buffers when they fit @p ks (capacity, payload
 *         size), else allocates them anew (raw zeroed or from an earlier
 *         call). @returns 0, or -1 on ENOMEM. */
int ks_keysample_raw_reserve(const ks_keysample_t *ks, ks_keysample_raw_t *raw);
/** @brief Copies the retained keys and their payloads (at most raw->k):
 *         the cheap copy to take under a lock. */
void ks_keysample_raw_copy(const ks_keysample_t *ks, ks_keysample_raw_t *raw);
/** @brief Unpacks a raw copy as ks_keysample_entries_payload() copies:
 *         entries into @p out (room for raw->n), payloads into
 *         @p payloads (raw->n x payload size; NULL: none).
 *  @returns the number of entries. */
size_t ks_keysample_raw_entries(const ks_keysample_raw_t *raw,
                                ks_keysample_entry_t *out, void *payloads);

/** @brief Counts one message of the key with these hashes. O(1) for a
 *         key above the threshold (the common case), O(log k) otherwise. */
void ks_keysample_add(ks_keysample_t *ks, uint64_t hash64, uint32_t phash,
                      uint64_t bytes);

/** @returns the number of keys retained (<= k). */
size_t ks_keysample_size(const ks_keysample_t *ks);
size_t ks_keysample_capacity(const ks_keysample_t *ks);

/** @brief Copies the retained entries, in no particular order, into
 *         @p out (room for ks_keysample_size()). @returns the count. */
size_t ks_keysample_entries(const ks_keysample_t *ks,
                            ks_keysample_entry_t *out);

/** @returns the estimated number of distinct keys: exact while fewer than
 *           k keys were seen, else (k-1) / (h_k / 2^64). */
double ks_keysample_distinct_estimate(const ks_keysample_t *ks);

/** @brief dst := bottom-k(dst ∪ src); counts of common keys are summed. */
void ks_keysample_merge(ks_keysample_t *dst, const ks_keysample_t *src);

/** @brief Inserts an entry as read back from a report (for merging).
 *         Same semantics as merging a one-key sample. */
void ks_keysample_insert_entry(ks_keysample_t             *ks,
                               const ks_keysample_entry_t *e);

#endif /* KS_KEYSAMPLE_H */
