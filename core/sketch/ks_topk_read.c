/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_topk_read.c
 * @brief The hot-key summary read out: its entries busiest first, raw
 *        copies taken under a topic's lock and unpacked after it, and
 *        merges of summaries (Agarwal et al. 2012; see ks_topk.c).
 */
#include "ks_topk.h"

#include <stdlib.h>
#include <string.h>

#include "ks_topk_impl.h"

/** @returns whether entry @p a ranks before @p b: higher count, then
 *           smaller error, then (for a stable order) smaller hash. */
static int ks_topk_busier(const ks_topk_entry_t *a, const ks_topk_entry_t *b)
{
        if (a->count != b->count)
                return a->count > b->count;
        if (a->error != b->error)
                return a->error < b->error;
        return a->hash64 < b->hash64;
}

/** @brief qsort() order: busiest first. */
static int ks_topk_cmp_busiest(const void *a, const void *b)
{
        if (ks_topk_busier(a, b))
                return -1;
        return ks_topk_busier(b, a);
}

/** @brief Sift-down in a heap of @p n entries whose root is the least
 *         busy (used to select the busiest n). */
static void ks_topk_select_sift(ks_topk_entry_t *h, size_t n, size_t pos)
{
        ks_topk_entry_t x = h[pos];
        size_t          child;

        while ((child = 2 * pos + 1) < n) {
                if (child + 1 < n && ks_topk_busier(&h[child], &h[child + 1]))
                        child++;
                if (!ks_topk_busier(&x, &h[child]))
                        break;
                h[pos] = h[child];
                pos    = child;
        }
        h[pos] = x;
}

/** @brief Fills @p e with the counter at heap position @p pos. */
static void ks_topk_entry_at(const ks_topk_t *tk, size_t pos,
                             ks_topk_entry_t *e)
{
        uint32_t              id = tk->heap[pos].id;
        const ks_topk_cold_t *c  = &tk->cold[id];

        memset(e, 0, sizeof(*e)); /* key bytes past keylen, padding */
        e->hash64 = tk->hot[id].hash64;
        e->phash  = c->phash;
        e->count  = tk->heap[pos].count;
        e->error  = c->error;
        e->bytes  = tk->hot[id].bytes;
        e->keylen = c->keylen;
        memcpy(e->key, c->key,
               c->keylen < KS_TOPK_KEY_MAX ? c->keylen : KS_TOPK_KEY_MAX);
}

/**
 * @brief Copies the @p n busiest counters (or all, if fewer) into @p out,
 *        busiest first; ties: smaller error first. Selects with a heap of
 *        the n best kept in @p out itself, so nothing is allocated.
 * @returns the number copied.
 */
size_t ks_topk_entries(const ks_topk_t *tk, ks_topk_entry_t *out)
{
        size_t i;

        for (i = 0; i < tk->n; i++)
                ks_topk_entry_at(tk, i, &out[i]);
        return tk->n;
}

int ks_topk_raw_alloc(const ks_topk_t *tk, ks_topk_raw_t *raw)
{
        memset(raw, 0, sizeof(*raw));
        raw->cap  = tk->cap;
        raw->heap = malloc((raw->cap + 1) * sizeof(ks_topk_heapent_t));
        raw->hot  = malloc((raw->cap + 1) * sizeof(ks_topk_hot_t));
        raw->cold = malloc((raw->cap + 1) * sizeof(ks_topk_cold_t));
        if (!raw->heap || !raw->hot || !raw->cold) {
                ks_topk_raw_free(raw);
                return -1;
        }
        /* Touched here, so that the copy under the caller's lock does not
         * take the page faults of fresh memory (glibc maps allocations
         * this large afresh) */
        memset(raw->heap, 0, raw->cap * sizeof(ks_topk_heapent_t));
        memset(raw->hot, 0, raw->cap * sizeof(ks_topk_hot_t));
        memset(raw->cold, 0, raw->cap * sizeof(ks_topk_cold_t));
        return 0;
}

int ks_topk_raw_reserve(const ks_topk_t *tk, ks_topk_raw_t *raw)
{
        if (raw->heap && raw->cap >= tk->cap)
                return 0;
        ks_topk_raw_free(raw);
        return ks_topk_raw_alloc(tk, raw);
}

void ks_topk_raw_free(ks_topk_raw_t *raw)
{
        free(raw->heap);
        free(raw->hot);
        free(raw->cold);
        memset(raw, 0, sizeof(*raw));
}

/* Counter ids in use are 0..n-1 (a new counter takes id n, a takeover
 * keeps its victim's id), so hot[] and cold[] are copied as prefixes. */
void ks_topk_raw_copy(const ks_topk_t *tk, ks_topk_raw_t *raw)
{
        raw->n = tk->n < raw->cap ? tk->n : raw->cap;
        memcpy(raw->heap, tk->heap, raw->n * sizeof(ks_topk_heapent_t));
        memcpy(raw->hot, tk->hot, raw->n * sizeof(ks_topk_hot_t));
        memcpy(raw->cold, tk->cold, raw->n * sizeof(ks_topk_cold_t));
}

size_t ks_topk_raw_entries(const ks_topk_raw_t *raw, ks_topk_entry_t *out)
{
        const ks_topk_heapent_t *heap = raw->heap;
        const ks_topk_hot_t     *hot  = raw->hot;
        const ks_topk_cold_t    *cold = raw->cold;
        size_t                   i, m = 0;

        for (i = 0; i < raw->n; i++) {
                uint32_t              id = heap[i].id;
                const ks_topk_cold_t *c  = &cold[id];
                ks_topk_entry_t      *e  = &out[m];
                if (id >= raw->n) /* not copied (cannot happen) */
                        continue;
                memset(e, 0, sizeof(*e)); /* key bytes past keylen, padding */
                e->hash64 = hot[id].hash64;
                e->phash  = c->phash;
                e->count  = heap[i].count;
                e->error  = c->error;
                e->bytes  = hot[id].bytes;
                e->keylen = c->keylen;
                memcpy(e->key, c->key,
                       c->keylen < KS_TOPK_KEY_MAX ? c->keylen
                                                   : KS_TOPK_KEY_MAX);
                m++;
        }
        return m;
}

void ks_topk_sort(ks_topk_entry_t *entries, size_t n)
{
        qsort(entries, n, sizeof(*entries), ks_topk_cmp_busiest);
}

size_t ks_topk_sorted(const ks_topk_t *tk, ks_topk_entry_t *out, size_t n)
{
        ks_topk_entry_t e;
        size_t          i, cnt = 0;

        if (n == 0)
                return 0;
        for (i = 0; i < tk->n; i++) {
                if (cnt < n) {
                        ks_topk_entry_at(tk, i, &out[cnt++]);
                        if (cnt == n) { /* heapify: least busy at the root */
                                size_t j = n / 2;
                                while (j-- > 0)
                                        ks_topk_select_sift(out, n, j);
                        }
                        continue;
                }
                ks_topk_entry_at(tk, i, &e);
                if (ks_topk_busier(&e, &out[0])) {
                        out[0] = e;
                        ks_topk_select_sift(out, n, 0);
                }
        }
        qsort(out, cnt, sizeof(*out), ks_topk_cmp_busiest);
        return cnt;
}

/**
 * @brief dst := merge(dst, src) (see the file comment). Nothing is
 *        allocated: dst's counters are updated in place, then src's other
 *        keys compete for dst's counters as in add(). @p src may equal
 *        @p dst (everything doubles, as for a stream merged with itself).
 */
void ks_topk_merge(ks_topk_t *dst, const ks_topk_t *src)
{
        uint64_t b_dst, b_src;
        size_t   i;

        dst->filtered = 0; /* its cells do not hold the merged bound */
        if (dst == src) {
                for (i = 0; i < dst->n; i++) {
                        dst->heap[i].count *= 2;
                        dst->hot[i].bytes *= 2;
                        dst->cold[i].error *= 2;
                }
                dst->total *= 2;
                dst->unseen *= 2;
                return;
        }

        b_dst = ks_topk_bound(dst);
        b_src = ks_topk_bound(src);

        /* 1. dst's keys: add src's counter, or src's bound if absent. */
        for (i = 0; i < dst->n; i++) {
                uint32_t id  = dst->heap[i].id;
                uint32_t sid = ks_topk_find(src, dst->hot[id].hash64);
                if (sid == KS_TOPK_EMPTY) {
                        dst->heap[i].count += b_src;
                        dst->cold[id].error += b_src;
                } else {
                        dst->heap[i].count +=
                            src->heap[src->hot[sid].heap_pos].count;
                        dst->cold[id].error += src->cold[sid].error;
                        dst->hot[id].bytes += src->hot[sid].bytes;
                }
        }
        /* Counts moved unevenly: re-heap from the last internal node. */
        for (i = (dst->n + KS_TOPK_ARITY - 2) / KS_TOPK_ARITY; i-- > 0;)
                ks_topk_sift_down(dst, i);

        /* 2. src's keys dst does not monitor, charged dst's bound. A key
         *    found in step 1 but since evicted here fails the lookup, but
         *    cannot come back: its src count + b_dst is at most the summed
         *    count it was evicted with, which is <= dst's minimum now. */
        for (i = 0; i < src->n; i++) {
                uint32_t              sid = src->heap[i].id;
                const ks_topk_cold_t *c   = &src->cold[sid];
                if (ks_topk_find(dst, src->hot[sid].hash64) != KS_TOPK_EMPTY)
                        continue;
                ks_topk_admit(dst, c->key, c->keylen, src->hot[sid].hash64,
                              c->phash, src->heap[i].count + b_dst,
                              c->error + b_dst, src->hot[sid].bytes);
        }

        dst->unseen = b_dst + b_src;
        dst->total += src->total;
}

/**
 * @brief Adds an entry read back from a report: merging a summary that
 *        holds only this key and counted e->count messages (so the total
 *        grows by e->count, and dst's other keys are charged nothing).
 */
void ks_topk_insert_entry(ks_topk_t *tk, const ks_topk_entry_t *e)
{
        uint32_t id = ks_topk_find(tk, e->hash64);
        uint64_t b;

        tk->filtered = 0; /* a merge: see ks_topk_merge() */
        tk->total += e->count;
        if (id != KS_TOPK_EMPTY) {
                ks_topk_bump(tk, id, e->count, e->error, e->bytes);
                return;
        }
        b = ks_topk_bound(tk);
        ks_topk_admit(tk, e->key, e->keylen, e->hash64, e->phash, b + e->count,
                      b + e->error, e->bytes);
}
