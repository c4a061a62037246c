/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_keysample.c
 * @brief A uniform sample of distinct keys with exact per-key counts:
 *        bottom-k sampling, also called KMV ("k minimum values").
 *
 * What it estimates
 * -----------------
 * Questions about the set of distinct keys a topic has seen, such as "what
 * fraction of keys would change partition if the topic went from 6 to 12
 * partitions", and how many distinct keys there are.
 *
 * Algorithm (Bar-Yossef, Jayram, Kumar, Sivakumar & Trevisan, "Counting
 * distinct elements in a data stream", RANDOM 2002; Cohen & Kaplan,
 * "Summarizing data using bottom-k sketches", PODC 2007)
 * ----------------------------------------------------------------------
 * Keep the k distinct keys whose 64-bit hash is smallest. The hash is a
 * random function of the key, so which keys those are is a uniform random
 * choice among the distinct keys, independent of how often each key is
 * produced: a key sent once is as likely to be sampled as the hottest key.
 *
 * Let t be the largest retained hash once more than k keys were seen (the
 * admission threshold). A message whose hash is above t is not in the
 * sample and never will be, because t only falls: that test is one compare
 * and is what almost every message of a high-cardinality topic costs.
 * Conversely a key retained now has been retained since its first message
 * (its hash was below every threshold since), so its message and byte
 * counts are exact, not estimates.
 *
 * Error bounds
 * ------------
 * A fraction f of distinct keys (those with a property computable from the
 * retained entry: the partitioner hash is kept for that) is estimated by
 * the fraction in the sample, with standard error sqrt(f (1 - f) / k)
 * <= 0.5 / sqrt(k) (less when the key population is not much larger than
 * k; exact below k). With the default k = 4096, at most 0.78 %.
 * The number of distinct keys is exact until the sample overflows, and
 * then (k - 1) / (t / 2^64), an unbiased estimate with relative standard
 * error about 1 / sqrt(k - 2) (1.6 % at k = 4096; the HyperLogLog in
 * ks_hll.c is the better distinct count, this one comes free).
 *
 * Memory layout (fixed at creation; add() never allocates)
 * ----------------------------------------------------------
 *  - heap[k]: 40-byte nodes (hash, messages, bytes, partitioner hash, the
 *    index slot pointing back at the node, and the place of its optional
 *    payload), a binary max-heap on the hash, so heap[0] is the largest
 *    retained hash: the threshold.
 *  - payload[k x size] (optional, ks_keysample_new_payload()): caller's
 *    bytes per key, at a place that does not move with heap moves, and a
 *    free list of places.
 *  - index[2^b] with 2^b >= 2k: open addressing with linear probing from
 *    the hash's multiplicative (Fibonacci) home slot, each slot holding a
 *    heap position. It finds a key's node in O(1) and its load factor
 *    stays <= 1/2. Deletion shifts later entries of the probe run back
 *    (Knuth, TAOCP vol. 3, 6.4, algorithm R), so no tombstones build up.
 *    Heap moves update the slot through the node's back pointer.
 * About 52 bytes per retained key at power-of-two k (40 + 2 x 4 + 4), at
 * most 60, plus the payload: 208 KiB at the default k = 4096.
 *
 * Merging
 * -------
 * The bottom-k of the union of two streams is the bottom-k of the union of
 * their bottom-k samples (counts of a key in both are summed and stay
 * exact). When the samples overflowed at different thresholds only keys up
 * to the smaller one are complete in both, so the merge keeps those:
 * merging a smaller sample into a larger one can leave fewer than k keys.
 * In general the retained set is always "every key seen with hash <= the
 * threshold", at most k of them.
 */
#include "ks_keysample.h"

#include <stdlib.h>
#include <string.h>

/** An index slot holding no key. */
#define KS_KEYSAMPLE_EMPTY UINT32_MAX

/** The largest k accepted, so that 2^b >= 2k index slots fit in 32 bits. */
#define KS_KEYSAMPLE_K_MAX ((size_t)1 << 30)

/** One retained key: exactly 32 bytes. */
typedef struct ks_keysample_node {
        uint64_t hash64;
        uint64_t messages;
        uint64_t bytes;
        uint32_t phash;
        uint32_t slot;  /**< index slot whose value is this node's position */
        uint32_t pslot; /**< its payload's place in payload[] (stable) */
} ks_keysample_node_t;

struct ks_keysample {
        /** Only keys with hash64 <= threshold are (or may become) retained:
         *  UINT64_MAX until the sample overflows, then heap[0].hash64. */
        uint64_t             threshold;
        size_t               n;          /**< retained keys */
        size_t               k;          /**< capacity */
        int                  overflowed; /**< a key was ever left out */
        unsigned             shift;      /**< 64 - log2(index slots) */
        uint32_t             mask;       /**< index slots - 1 */
        uint32_t            *index;      /**< [mask + 1] heap positions */
        ks_keysample_node_t *heap;       /**< [k], max-heap on hash64 */
        size_t               psize;      /**< payload bytes per key (0: none) */
        uint8_t  *payload; /**< [k * psize]; a key's place never moves */
        uint32_t *pfree;   /**< [k] payload places not in use */
        size_t    pfree_n;
};

/** @returns the home slot of @p hash64 (Fibonacci hashing). */
static inline uint32_t ks_keysample_home(const ks_keysample_t *ks,
                                         uint64_t              hash64)
{
        return (uint32_t)((hash64 * 0x9E3779B97F4A7C15ull) >> ks->shift);
}

/** @returns the index slot holding @p hash64, or KS_KEYSAMPLE_EMPTY. */
static inline uint32_t ks_keysample_find(const ks_keysample_t *ks,
                                         uint64_t              hash64)
{
        uint32_t i = ks_keysample_home(ks, hash64);
        uint32_t pos;

        while ((pos = ks->index[i]) != KS_KEYSAMPLE_EMPTY) {
                if (ks->heap[pos].hash64 == hash64)
                        return i;
                i = (i + 1) & ks->mask;
        }
        return KS_KEYSAMPLE_EMPTY;
}

/** @brief Points a free slot at heap position @p pos (the key must be
 *         absent). @returns the slot. */
static uint32_t ks_keysample_index_insert(ks_keysample_t *ks, uint64_t hash64,
                                          uint32_t pos)
{
        uint32_t i = ks_keysample_home(ks, hash64);

        while (ks->index[i] != KS_KEYSAMPLE_EMPTY)
                i = (i + 1) & ks->mask;
        ks->index[i] = pos;
        return i;
}

/**
 * @brief Frees slot @p i, moving back each later entry of its probe run
 *        whose home is not in (i, j] so every key stays reachable.
 */
static void ks_keysample_index_delete(ks_keysample_t *ks, uint32_t i)
{
        uint32_t j = i, pos, home;

        for (;;) {
                j   = (j + 1) & ks->mask;
                pos = ks->index[j];
                if (pos == KS_KEYSAMPLE_EMPTY)
                        break;
                home = ks_keysample_home(ks, ks->heap[pos].hash64);
                if (((j - home) & ks->mask) >= ((j - i) & ks->mask)) {
                        ks->index[i]       = pos;
                        ks->heap[pos].slot = i;
                        i                  = j;
                }
        }
        ks->index[i] = KS_KEYSAMPLE_EMPTY;
}

/** @brief Stores @p node at heap position @p pos and tells the index. */
static inline void ks_keysample_place(ks_keysample_t *ks, size_t pos,
                                      const ks_keysample_node_t *node)
{
        ks->heap[pos]         = *node;
        ks->index[node->slot] = (uint32_t)pos;
}

/** @brief Moves the node at @p pos up while its parent's hash is smaller. */
static void ks_keysample_sift_up(ks_keysample_t *ks, size_t pos)
{
        ks_keysample_node_t x = ks->heap[pos];

        while (pos > 0) {
                size_t parent = (pos - 1) / 2;
                if (ks->heap[parent].hash64 >= x.hash64)
                        break;
                ks_keysample_place(ks, pos, &ks->heap[parent]);
                pos = parent;
        }
        ks_keysample_place(ks, pos, &x);
}

/** @brief Moves the node at @p pos down while a child's hash is larger. */
static void ks_keysample_sift_down(ks_keysample_t *ks, size_t pos)
{
        ks_keysample_node_t x = ks->heap[pos];
        size_t              child;

        while ((child = 2 * pos + 1) < ks->n) {
                if (child + 1 < ks->n &&
                    ks->heap[child + 1].hash64 > ks->heap[child].hash64)
                        child++;
                if (ks->heap[child].hash64 <= x.hash64)
                        break;
                ks_keysample_place(ks, pos, &ks->heap[child]);
                pos = child;
        }
        ks_keysample_place(ks, pos, &x);
}

/** @brief Removes the largest retained hash (heap[0]). */
static void ks_keysample_pop_max(ks_keysample_t *ks)
{
        ks->pfree[ks->pfree_n++] = ks->heap[0].pslot;
        ks_keysample_index_delete(ks, ks->heap[0].slot);
        if (--ks->n == 0)
                return;
        ks_keysample_place(ks, 0, &ks->heap[ks->n]);
        ks_keysample_sift_down(ks, 0);
}

/** @brief Re-derives the threshold after the retained set changed. */
static inline void ks_keysample_update_threshold(ks_keysample_t *ks)
{
        ks->threshold =
            ks->overflowed && ks->n > 0 ? ks->heap[0].hash64 : UINT64_MAX;
}

/** @returns the payload at place @p pslot; NULL for a sample without
 *           payloads (NULL + 0 is undefined behaviour in C: UBSan's
 *           pointer-overflow check, found by tests/fuzz's report_cli). */
static inline void *ks_keysample_payload_at(const ks_keysample_t *ks,
                                            uint32_t              pslot)
{
        return ks->payload ? ks->payload + (size_t)pslot * ks->psize : NULL;
}

/**
 * @brief Counts @p messages messages and @p bytes bytes of one key: the
 *        slow path of add(), and one step of merge().
 *
 * A retained key is counted in place. A new key below the threshold is
 * added; when the sample is full it replaces the largest hash, which is
 * then left out for good. A new key above the largest hash of a full
 * sample is left out.
 */
static void *ks_keysample_offer(ks_keysample_t *ks, uint64_t hash64,
                                uint32_t phash, uint64_t messages,
                                uint64_t bytes, int *admitted)
{
        ks_keysample_node_t node;
        uint32_t            slot;
        size_t              pos;

        *admitted = 0;
        if (hash64 > ks->threshold)
                return NULL;

        slot = ks_keysample_find(ks, hash64);
        if (slot != KS_KEYSAMPLE_EMPTY) {
                ks_keysample_node_t *n = &ks->heap[ks->index[slot]];
                n->messages += messages;
                n->bytes += bytes;
                return ks_keysample_payload_at(ks, n->pslot);
        }

        node.hash64   = hash64;
        node.messages = messages;
        node.bytes    = bytes;
        node.phash    = phash;

        if (ks->n < ks->k) {
                pos        = ks->n++;
                node.pslot = ks->pfree[--ks->pfree_n];
                node.slot =
                    ks_keysample_index_insert(ks, hash64, (uint32_t)pos);
                ks->heap[pos] = node;
                ks_keysample_sift_up(ks, pos);
                /* the maximum, hence the threshold, is unchanged */
                *admitted = 1;
                return ks_keysample_payload_at(ks, node.pslot);
        }

        /* Full, and a (k+1)-th distinct key: from now on some key is out. */
        ks->overflowed = 1;
        if (hash64 < ks->heap[0].hash64) {
                node.pslot = ks->heap[0].pslot; /* the evicted key's place */
                ks_keysample_index_delete(ks, ks->heap[0].slot);
                node.slot   = ks_keysample_index_insert(ks, hash64, 0);
                ks->heap[0] = node;
                ks_keysample_sift_down(ks, 0);
                *admitted = 1;
        }
        ks_keysample_update_threshold(ks);
        return *admitted ? ks_keysample_payload_at(ks, node.pslot) : NULL;
}

/**
 * @returns a sample of at most @p k keys (2 <= k <= 2^30), or NULL on
 *          ENOMEM or an out-of-range k.
 */
ks_keysample_t *ks_keysample_new(size_t k)
{
        return ks_keysample_new_payload(k, 0);
}

/**
 * @returns a sample of at most @p k keys, each with @p payload_size bytes
 *          of the caller's (zeroed when the key is admitted), or NULL.
 */
ks_keysample_t *ks_keysample_new_payload(size_t k, size_t payload_size)
{
        ks_keysample_t *ks;
        size_t          slots = 4;
        unsigned        bits  = 2;

        if (k < 2 || k > KS_KEYSAMPLE_K_MAX)
                return NULL;
        while (slots < 2 * k) {
                slots <<= 1;
                bits++;
        }

        ks = calloc(1, sizeof(*ks));
        if (!ks)
                return NULL;
        ks->k         = k;
        ks->threshold = UINT64_MAX;
        ks->shift     = 64 - bits;
        ks->mask      = (uint32_t)(slots - 1);
        ks->heap      = malloc(k * sizeof(*ks->heap));
        ks->index     = malloc(slots * sizeof(*ks->index));
        ks->psize     = payload_size;
        ks->payload   = payload_size ? malloc(k * payload_size) : NULL;
        ks->pfree     = malloc(k * sizeof(*ks->pfree));
        if (!ks->heap || !ks->index || !ks->pfree ||
            (payload_size && !ks->payload)) {
                ks_keysample_destroy(ks);
                return NULL;
        }
        memset(ks->index, 0xff, slots * sizeof(*ks->index)); /* EMPTY */
        for (ks->pfree_n = 0; ks->pfree_n < k; ks->pfree_n++)
                ks->pfree[ks->pfree_n] = (uint32_t)(k - 1 - ks->pfree_n);
        return ks;
}

/** @brief Frees the sample (NULL is allowed). */
void ks_keysample_destroy(ks_keysample_t *ks)
{
        if (!ks)
                return;
        free(ks->heap);
        free(ks->index);
        free(ks->payload);
        free(ks->pfree);
        free(ks);
}

/**
 * @brief Counts one message of the key with these hashes.
 *
 * The common case on a topic with many keys is the first test: one
 * compare against the threshold, no memory touched but the sample header.
 */
void ks_keysample_add(ks_keysample_t *ks, uint64_t hash64, uint32_t phash,
                      uint64_t bytes)
{
        int admitted;

        if (hash64 > ks->threshold)
                return;
        ks_keysample_offer(ks, hash64, phash, 1, bytes, &admitted);
}

/**
 * @brief ks_keysample_add() that also returns the key's payload.
 * @returns the payload of the key when it is retained (zeroed, and
 *          *admitted set, when this message admitted it), else NULL.
 */
void *ks_keysample_add_payload(ks_keysample_t *ks, uint64_t hash64,
                               uint32_t phash, uint64_t bytes, int *admitted)
{
        return ks_keysample_add_payload_n(ks, hash64, phash, 1, bytes,
                                          admitted);
}

/**
 * @brief ks_keysample_add_payload() for @p messages messages of the key
 *        at once (@p bytes in all).
 */
void *ks_keysample_add_payload_n(ks_keysample_t *ks, uint64_t hash64,
                                 uint32_t phash, uint64_t messages,
                                 uint64_t bytes, int *admitted)
{
        void *p;

        *admitted = 0;
        if (hash64 > ks->threshold)
                return NULL;
        p = ks_keysample_offer(ks, hash64, phash, messages, bytes, admitted);
        if (*admitted && p)
                memset(p, 0, ks->psize);
        return p;
}

/**
 * @brief ks_keysample_entries(), also copying each entry's payload into
 *        @p payloads (room for ks_keysample_size() x payload size), in the
 *        same order.
 */
size_t ks_keysample_entries_payload(const ks_keysample_t *ks,
                                    ks_keysample_entry_t *out, void *payloads)
{
        size_t i, n = ks_keysample_entries(ks, out);

        for (i = 0; ks->psize && i < n; i++)
                memcpy((uint8_t *)payloads + i * ks->psize,
                       ks->payload + (size_t)ks->heap[i].pslot * ks->psize,
                       ks->psize);
        return n;
}

int ks_keysample_raw_alloc(const ks_keysample_t *ks, ks_keysample_raw_t *raw)
{
        memset(raw, 0, sizeof(*raw));
        raw->k       = ks->k;
        raw->psize   = ks->psize;
        raw->nodes   = malloc((raw->k + 1) * sizeof(ks_keysample_node_t));
        raw->payload = raw->psize ? malloc(raw->k * raw->psize + 1) : NULL;
        if (!raw->nodes || (raw->psize && !raw->payload)) {
                ks_keysample_raw_free(raw);
                return -1;
        }
        /* Touched here, so that the copy under the caller's lock does not
         * take the page faults of fresh memory (glibc maps allocations
         * this large afresh) */
        memset(raw->nodes, 0, raw->k * sizeof(ks_keysample_node_t));
        if (raw->psize)
                memset(raw->payload, 0, raw->k * raw->psize);
        return 0;
}

int ks_keysample_raw_reserve(const ks_keysample_t *ks, ks_keysample_raw_t *raw)
{
        if (raw->nodes && raw->k >= ks->k && raw->psize == ks->psize)
                return 0;
        ks_keysample_raw_free(raw);
        return ks_keysample_raw_alloc(ks, raw);
}

void ks_keysample_raw_free(ks_keysample_raw_t *raw)
{
        free(raw->nodes);
        free(raw->payload);
        memset(raw, 0, sizeof(*raw));
}

/* A full sample uses every payload place; one not full copies the places
 * up to the highest in use (places are taken lowest first, so while no key
 * has left that is 0..n-1), found in the nodes just copied. */
void ks_keysample_raw_copy(const ks_keysample_t *ks, ks_keysample_raw_t *raw)
{
        const ks_keysample_node_t *nodes = raw->nodes;
        size_t                     i, places = 0;

        raw->n = ks->n < raw->k ? ks->n : raw->k;
        memcpy(raw->nodes, ks->heap, raw->n * sizeof(ks_keysample_node_t));
        if (raw->psize && raw->psize == ks->psize) {
                if (ks->n == ks->k)
                        places = ks->k;
                else
                        for (i = 0; i < raw->n; i++)
                                if (nodes[i].pslot >= places)
                                        places = (size_t)nodes[i].pslot + 1;
                if (places > raw->k)
                        places = 0; /* resized meanwhile: none copied */
                memcpy(raw->payload, ks->payload, places * raw->psize);
        }
        raw->pplaces = places;
}

size_t ks_keysample_raw_entries(const ks_keysample_raw_t *raw,
                                ks_keysample_entry_t *out, void *payloads)
{
        const ks_keysample_node_t *nodes = raw->nodes;
        size_t                     i;

        for (i = 0; i < raw->n; i++) {
                memset(&out[i], 0, sizeof(out[i])); /* padding, too */
                out[i].hash64   = nodes[i].hash64;
                out[i].phash    = nodes[i].phash;
                out[i].messages = nodes[i].messages;
                out[i].bytes    = nodes[i].bytes;
                if (payloads && raw->psize) {
                        uint8_t *d = (uint8_t *)payloads + i * raw->psize;
                        if (nodes[i].pslot < raw->pplaces)
                                memcpy(d,
                                       raw->payload +
                                           (size_t)nodes[i].pslot * raw->psize,
                                       raw->psize);
                        else
                                memset(d, 0, raw->psize);
                }
        }
        return raw->n;
}

/** @returns the payload bytes per key given at creation. */
size_t ks_keysample_payload_size(const ks_keysample_t *ks)
{
        return ks->psize;
}

/** @returns the number of keys retained (<= capacity). */
size_t ks_keysample_size(const ks_keysample_t *ks)
{
        return ks->n;
}

/** @returns k, the most keys the sample retains. */
size_t ks_keysample_capacity(const ks_keysample_t *ks)
{
        return ks->k;
}

/**
 * @brief Copies the retained entries (heap order, i.e. no particular
 *        order) into @p out, which has room for ks_keysample_size().
 * @returns the number copied.
 */
size_t ks_keysample_entries(const ks_keysample_t *ks, ks_keysample_entry_t *out)
{
        size_t i;

        for (i = 0; i < ks->n; i++) {
                memset(&out[i], 0, sizeof(out[i])); /* padding, too */
                out[i].hash64   = ks->heap[i].hash64;
                out[i].phash    = ks->heap[i].phash;
                out[i].messages = ks->heap[i].messages;
                out[i].bytes    = ks->heap[i].bytes;
        }
        return ks->n;
}

/**
 * @returns the estimated number of distinct keys: the exact count while
 *          fewer than k were seen, else (n - 1) / (t / 2^64) with n the
 *          keys retained (k, unless a merge cut the sample) and t the
 *          largest retained hash.
 */
double ks_keysample_distinct_estimate(const ks_keysample_t *ks)
{
        double t;

        if ((!ks->overflowed && ks->n < ks->k) || ks->n < 2)
                return (double)ks->n;
        /* + 1: the hash h stands for the interval [h, h + 1) of 2^64. */
        t = ((double)ks->heap[0].hash64 + 1.0) / 18446744073709551616.0;
        return (double)(ks->n - 1) / t;
}

/**
 * @brief dst := bottom-k(dst ∪ src), counts of common keys summed. Only
 *        keys up to the smaller threshold of the two are known completely,
 *        so larger ones are dropped from dst first. @p src may equal
 *        @p dst (every count doubles, as for a stream merged with itself).
 */
void ks_keysample_merge(ks_keysample_t *dst, const ks_keysample_t *src)
{
        uint64_t cut;
        size_t   i;

        if (dst == src) {
                for (i = 0; i < dst->n; i++) {
                        dst->heap[i].messages *= 2;
                        dst->heap[i].bytes *= 2;
                }
                return;
        }

        cut = src->threshold < dst->threshold ? src->threshold : dst->threshold;
        while (dst->n > 0 && dst->heap[0].hash64 > cut)
                ks_keysample_pop_max(dst);
        if (src->overflowed || dst->overflowed) {
                dst->overflowed = 1;
                dst->threshold  = cut;
        }

        for (i = 0; i < src->n; i++) {
                int   admitted;
                void *p = ks_keysample_offer(
                    dst, src->heap[i].hash64, src->heap[i].phash,
                    src->heap[i].messages, src->heap[i].bytes, &admitted);
                /* A new key takes src's payload; a common key keeps dst's
                 * (payload semantics are the caller's to merge). */
                if (admitted && p && dst->psize == src->psize)
                        memcpy(p,
                               src->payload +
                                   (size_t)src->heap[i].pslot * src->psize,
                               dst->psize);
                else if (admitted && p)
                        memset(p, 0, dst->psize);
        }
        ks_keysample_update_threshold(dst);
}

/**
 * @brief Inserts an entry read back from a report: the same as merging a
 *        sample holding only that key (it is dropped if above the
 *        threshold, summed into the key if retained).
 */
void ks_keysample_insert_entry(ks_keysample_t             *ks,
                               const ks_keysample_entry_t *e)
{
        int   admitted;
        void *p = ks_keysample_offer(ks, e->hash64, e->phash, e->messages,
                                     e->bytes, &admitted);
        if (admitted && p)
                memset(p, 0, ks->psize);
}
