/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_topk_impl.h
 * @brief The hot-key summary's state, shared by ks_topk.c (counting,
 *        windows) and ks_topk_read.c (entries out, copies, merges); not
 *        an interface (ks_topk.h is).
 */
#ifndef KS_TOPK_IMPL_H
#define KS_TOPK_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "ks_topk.h"

/** An index slot holding no counter. */
#define KS_TOPK_EMPTY UINT32_MAX

/** Children per heap node: a 4-ary heap is half as deep as a binary one,
 *  and the 4 children (16 B each) share one 64-byte cache line. */
#define KS_TOPK_ARITY 4

/** The largest capacity accepted (4m index slots must fit in 32 bits). */
#define KS_TOPK_CAPACITY_MAX ((size_t)1 << 28)

typedef struct ks_topk_heapent {
        uint64_t count;
        uint32_t id;
} ks_topk_heapent_t;

typedef struct ks_topk_hot {
        uint64_t hash64;
        uint64_t bytes;
        uint32_t heap_pos;
        uint32_t slot;
} ks_topk_hot_t;

typedef struct ks_topk_cold {
        uint64_t error;
        uint32_t phash;
        uint32_t keylen;
        uint8_t  key[KS_TOPK_KEY_MAX];
} ks_topk_cold_t;

struct ks_topk {
        uint64_t total; /**< N: messages counted */
        /** Most messages an unmonitored key can have had while not full:
         *  0, unless a merge brought in a full summary's bound. */
        uint64_t           unseen;
        size_t             n;        /**< counters in use */
        size_t             cap;      /**< m */
        unsigned           shift;    /**< 64 - log2(index slots) */
        uint32_t           mask;     /**< index slots - 1 */
        uint32_t          *index;    /**< [mask + 1] counter ids */
        ks_topk_heapent_t *heap;     /**< [cap] 4-ary min-heap on count */
        ks_topk_heapent_t *heap_mem; /**< the allocation: heap - 3 */
        ks_topk_hot_t     *hot;      /**< [cap] by counter id */
        ks_topk_cold_t    *cold;     /**< [cap] by counter id */
        /** Filtered Space-Saving's hashed counters (see the file comment):
         *  [ncells], the most messages a key not monitored, whose hash
         *  falls in the cell, can have had. */
        uint32_t *filter;
        uint64_t  ncells; /**< 8m */
        /** The filter's bound holds: not after a merge, nor once a cell
         *  would pass UINT32_MAX (then the summary's bound serves, as in
         *  plain Space-Saving). */
        int filtered;
        /** First of the siblings where the last takeover came to rest. */
        size_t   victims;
        uint64_t win_bound; /**< ks_topk_bound() when the window began */
        int      win_clean; /**< no ks_topk_add() since it began */
};

/** @returns the home slot of @p hash64 (Fibonacci hashing). */
static inline uint32_t ks_topk_home(const ks_topk_t *tk, uint64_t hash64)
{
        return (uint32_t)((hash64 * 0x9E3779B97F4A7C15ull) >> tk->shift);
}

/** @returns the counter id monitoring @p hash64, or KS_TOPK_EMPTY. */
static inline uint32_t ks_topk_find(const ks_topk_t *tk, uint64_t hash64)
{
        uint32_t i = ks_topk_home(tk, hash64);
        uint32_t id;

        while ((id = tk->index[i]) != KS_TOPK_EMPTY) {
                if (tk->hot[id].hash64 == hash64)
                        return id;
                i = (i + 1) & tk->mask;
        }
        return KS_TOPK_EMPTY;
}

/** @returns the most messages an unmonitored key can have had. */
static inline uint64_t ks_topk_bound(const ks_topk_t *tk)
{
        return tk->n == tk->cap ? tk->heap[0].count : tk->unseen;
}

/** @brief Restores the heap below @p pos after its count grew
 *         (ks_topk.c). @returns where the entry ends. */
size_t ks_topk_sift_down(ks_topk_t *tk, size_t pos);

/** @brief Gives a counter to a key that is not monitored (ks_topk.c). */
void ks_topk_admit(ks_topk_t *tk, const void *key, size_t keylen,
                   uint64_t hash64, uint32_t phash, uint64_t count,
                   uint64_t error, uint64_t bytes);

/** @brief Counts @p count messages (@p bytes) of a monitored key on its
 *         counter @p id (hot fields and heap only). */
static inline void ks_topk_count(ks_topk_t *tk, uint32_t id, uint64_t count,
                                 uint64_t bytes)
{
        uint32_t pos = tk->hot[id].heap_pos;

        tk->hot[id].bytes += bytes;
        tk->heap[pos].count += count;
        ks_topk_sift_down(tk, pos);
}

/** @brief Adds counts and error to counter @p id (its key is monitored). */
static inline void ks_topk_bump(ks_topk_t *tk, uint32_t id, uint64_t count,
                                uint64_t error, uint64_t bytes)
{
        tk->cold[id].error += error;
        ks_topk_count(tk, id, count, bytes);
}

#endif /* KS_TOPK_IMPL_H */
