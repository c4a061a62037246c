/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_topk.h
 * @brief Hot keys: the Space-Saving algorithm (Metwally, Agrawal &
 *        El Abbadi, "Efficient computation of frequent and top-k elements
 *        in data streams", ICDT 2005).
 *
 * With capacity m counters over a stream of N messages, every key with
 * more than N/m messages is retained, and each retained key's count
 * overestimates its true count by at most its recorded `error` (<= N/m):
 * true count is in [count - error, count]. Keys are identified by their
 * 64-bit hash (ks_hash_key64) and carry the first KS_TOPK_KEY_MAX bytes of
 * the key for the report. Newcomers are filtered through 8m hashed
 * counters first (Filtered Space-Saving: Homem & Carvalho, Information
 * Sciences 2010), so that a key seen once costs a counter increment, not
 * a takeover; same bounds, and a newcomer is charged its cell, never more
 * than plain Space-Saving would charge it then (ks_topk.c).
 *
 * Memory: ks_topk_bytes(): 184 B a counter, an index of 4 to 8 slots a
 * counter (4 B each, a power of two in all) and 8 filter cells a counter
 * (4 B each): 232-248 B a counter, fixed at creation. Update: O(log m)
 * (min-heap on count).
 * Mergeable (Agarwal et al., "Mergeable summaries", PODS 2012): counts of
 * common keys are summed, a key missing from one side is charged that
 * side's minimum as error, and the m largest are kept (a merged summary
 * goes on without the filter).
 *
 * Not thread-safe: the caller serialises access.
 */
#ifndef KS_TOPK_H
#define KS_TOPK_H

#include <stddef.h>
#include <stdint.h>

#define KS_TOPK_KEY_MAX 128

typedef struct ks_topk_entry {
        uint64_t hash64; /**< ks_hash_key64() of the whole key */
        uint32_t phash;  /**< partitioner hash of the whole key */
        uint64_t count;  /**< messages (an overestimate by <= error) */
        uint64_t error;  /**< max overestimate of count */
        uint64_t bytes;  /**< key + value bytes counted with count */
        uint32_t keylen; /**< the key's full length in bytes */
        uint8_t  key[KS_TOPK_KEY_MAX]; /**< first min(keylen, KEY_MAX) bytes */
} ks_topk_entry_t;

typedef struct ks_topk ks_topk_t;

/** @returns the bytes a summary of @p capacity counters allocates (heap,
 *           counters, index, filter; not malloc's own overhead). */
size_t ks_topk_bytes(size_t capacity);

/** @returns a summary with @p capacity counters (>= 1), NULL on ENOMEM. */
ks_topk_t *ks_topk_new(size_t capacity);
void       ks_topk_destroy(ks_topk_t *tk);

/** @brief Counts one message of @p key (whose hashes the caller computed
 *         once for all analyses) carrying @p bytes key+value bytes. */
void ks_topk_add(ks_topk_t *tk, const void *key, size_t keylen, uint64_t hash64,
                 uint32_t phash, uint64_t bytes);

/** @brief ks_topk_add() for @p messages messages of one key at once
 *         (@p bytes in all): weighted Space-Saving, same bounds. */
void ks_topk_add_n(ks_topk_t *tk, const void *key, size_t keylen,
                   uint64_t hash64, uint32_t phash, uint64_t messages,
                   uint64_t bytes);

/**
 * @brief Begins a window: the caller then adds each key's messages of the
 *        window as one run, first every key with ks_topk_window_bump(),
 *        then the keys it did not take with ks_topk_window_add() (a merge
 *        of the window's exact counts, same bounds: ks_topk.c).
 */
void ks_topk_window_begin(ks_topk_t *tk);

/** @brief Adds a run of a monitored key. @returns 1 if the key is
 *         monitored (counted), 0 if not (offer it with window_add). */
int ks_topk_window_bump(ks_topk_t *tk, uint64_t hash64, uint64_t messages,
                        uint64_t bytes);

/** @brief Offers a run of a key ks_topk_window_bump() did not find. With
 *         the filter (not merged, no cell past 2^32 - 1), as
 *         ks_topk_add_n(): charged its cell. Without: it
 *         takes the smallest counter if the window's bound + @p messages
 *         exceeds that counter's count, else only N grows. At most one run
 *         per key and window. */
void ks_topk_window_add(ks_topk_t *tk, const void *key, size_t keylen,
                        uint64_t hash64, uint32_t phash, uint64_t messages,
                        uint64_t bytes);

/** @returns messages counted in total (N). */
uint64_t ks_topk_total(const ks_topk_t *tk);
size_t   ks_topk_capacity(const ks_topk_t *tk);

/** @brief Copies up to @p n entries into @p out, busiest first (ties:
 *         smaller error first). @returns the number copied. */
size_t ks_topk_sorted(const ks_topk_t *tk, ks_topk_entry_t *out, size_t n);

/** @brief Copies every retained entry, unsorted, into @p out (room for
 *         ks_topk_capacity()): the cheap copy to take under a lock.
 *  @returns the number copied. */
size_t ks_topk_entries(const ks_topk_t *tk, ks_topk_entry_t *out);

/**
 * The summary's counters copied as they lie in memory, to take under a
 * lock (three memcpy()s, nothing else) and unpack into entries after
 * releasing it (ks_topk_raw_entries()). Buffers sized by
 * ks_topk_raw_alloc() for the capacity at that time.
 */
typedef struct ks_topk_raw {
        size_t cap;  /**< counters the buffers hold */
        size_t n;    /**< counters copied */
        void  *heap; /**< [cap] (count, id) */
        void  *hot;  /**< [cap] by id: hash64, bytes */
        void  *cold; /**< [cap] by id: error, phash, key */
} ks_topk_raw_t;

/** @returns 0 and buffers for ks_topk_raw_copy() (ks_topk_capacity()
 *           counters), -1 on ENOMEM. Free with ks_topk_raw_free(). */
int  ks_topk_raw_alloc(const ks_topk_t *tk, ks_topk_raw_t *raw);
void ks_topk_raw_free(ks_topk_raw_t *raw);
/** @brief Keeps @p raw's buffers when they hold ks_topk_capacity()
 *         counters, else allocates them anew (raw zeroed or from an
 *         earlier call). @returns 0, or -1 on ENOMEM. */
int ks_topk_raw_reserve(const ks_topk_t *tk, ks_topk_raw_t *raw);
/** @brief Copies the counters in use (at most raw->cap): the cheap copy to
 *         take under a lock. */
void ks_topk_raw_copy(const ks_topk_t *tk, ks_topk_raw_t *raw);
/** @brief Unpacks a raw copy into @p out (room for raw->n), unsorted, as
 *         ks_topk_entries() copies them. @returns raw->n. */
size_t ks_topk_raw_entries(const ks_topk_raw_t *raw, ks_topk_entry_t *out);

/** @brief Sorts entries busiest first, as ks_topk_sorted() orders them. */
void ks_topk_sort(ks_topk_entry_t *entries, size_t n);

/** @brief dst := merge(dst, src), as described above. */
void ks_topk_merge(ks_topk_t *dst, const ks_topk_t *src);

/** @brief Adds an entry as read back from a report (count, error, bytes
 *         as given), for merging; total is increased by its count. */
void ks_topk_insert_entry(ks_topk_t *tk, const ks_topk_entry_t *e);

#endif /* KS_TOPK_H */
