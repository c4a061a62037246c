/**
 * @file ks_topk.c
 * @brief Hot keys: the Space-Saving algorithm.
 *
 * What it estimates
 * -----------------
 * Which keys carry the most messages, and how many each carries, in memory
 * fixed by the number of counters m, however many distinct keys there are.
 *
 * Algorithm (Metwally, Agrawal & El Abbadi, "Efficient computation of
 * frequent and top-k elements in data streams", ICDT 2005)
 * ---------------------------------------------------------------------
 * Keep m (key, count, error) counters. A message of a monitored key
 * increments its count. A message of another key, when all m counters are
 * taken, takes over the counter with the smallest count c: count = c + 1,
 * error = c (the newcomer may have had up to c messages while it was not
 * monitored). Hence, with N messages counted:
 *  - the counts sum to N, so the smallest count is <= N / m;
 *  - a key that is not monitored has had at most the smallest count;
 *  - a monitored key's true count is in [count - error, count], and
 *    error <= N / m;
 *  - so every key with more than N / m messages is monitored.
 * On skewed streams (Zipf, s > 1) the bounds are far better than N / m:
 * the hot keys are monitored from early on and their errors are small.
 *
 * `bytes` adds the key + value bytes of the messages counted since the key
 * took its counter, i.e. of exactly count - error of its messages, so
 * bytes / (count - error) is its mean message size and bytes a lower bound
 * of its byte volume. (The c inherited messages were other keys'.)
 *
 * Memory layout (fixed at creation; add() never allocates)
 * ----------------------------------------------------------
 * Counter i is split by how often it is touched:
 *  - heap[m], 16 B: (count, counter id), a binary min-heap on count, so
 *    the counter to take over is heap[0];
 *  - hot[m], 24 B: hash, bytes, heap position, index slot: what a message
 *    of a monitored key reads and writes;
 *  - cold[m], 144 B: error, partitioner hash, key length and the first
 *    KS_TOPK_KEY_MAX key bytes, written when a key takes the counter;
 *  - index[2^b] with 2^b >= 2m, 4 B each: open addressing with linear
 *    probing from the hash's multiplicative (Fibonacci) home slot, holding
 *    counter ids; load <= 1/2; deletion shifts the rest of the probe run
 *    back (Knuth, TAOCP vol. 3, 6.4, algorithm R) instead of leaving
 *    tombstones.
 * 192 B per counter at power-of-two m (at most 200 B): 192 KiB at m = 1024.
 * A message of a monitored key costs an index probe and one sift-down step
 * (a hot key sits near the leaves, so usually none); a takeover costs
 * O(log m) sift steps. Keys are identified by their 64-bit hash.
 *
 * Merging (Agarwal, Cormode, Huang, Phillips, Wei & Yi, "Mergeable
 * summaries", PODS 2012; the Space-Saving form as in Cafaro, Pulimeno &
 * Tempesta, "A parallel space saving algorithm for frequent items and the
 * Hurwitz zeta distribution", Information Sciences 2016)
 * ---------------------------------------------------------------------
 * Let b_A be the most messages a key not monitored by summary A can have
 * had: A's smallest count when A is full, else 0 (or what a previous merge
 * left, see `unseen`). Merging B into A: a key in both gets the sum of
 * counts, errors and bytes; a key only in A gets count + b_B, error + b_B
 * (and symmetrically); the m largest counts are kept. Every bound above
 * still holds for the merged stream: the m kept counts sum to at most
 * N_A + N_B (each side's charged b is at most the count of a counter of
 * that side that was not kept), and a key that is not kept, in one side
 * or in neither, has had at most the smallest kept count.
 */
#include "ks_topk.h"

#include <stdlib.h>
#include <string.h>

/** An index slot holding no counter. */
#define KS_TOPK_EMPTY UINT32_MAX

/** Children per heap node: a 4-ary heap is half as deep as a binary one,
 *  and the 4 children (16 B each) share one 64-byte cache line. */
#define KS_TOPK_ARITY 4

/** The largest capacity accepted (index slots must fit in 32 bits). */
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
        uint64_t total;           /**< N: messages counted */
        uint64_t unseen;          /**< bound for unmonitored keys when
                                   *   not full (non-zero only after a
                                   *   merge with a larger summary) */
        size_t             n;     /**< counters in use */
        size_t             cap;   /**< m */
        unsigned           shift; /**< 64 - log2(index slots) */
        uint32_t           mask;  /**< index slots - 1 */
        uint32_t          *index; /**< [mask + 1] counter ids */
        ks_topk_heapent_t *heap;  /**< [cap] min-heap on count */
        ks_topk_heapent_t *heap_mem; /**< allocation holding heap */
        ks_topk_hot_t     *hot;   /**< [cap] by counter id */
        ks_topk_cold_t    *cold;  /**< [cap] by counter id */
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

/** @brief Indexes counter @p id under its (absent) hash. */
static void ks_topk_index_insert(ks_topk_t *tk, uint32_t id)
{
        uint32_t i = ks_topk_home(tk, tk->hot[id].hash64);

        while (tk->index[i] != KS_TOPK_EMPTY)
                i = (i + 1) & tk->mask;
        tk->index[i]     = id;
        tk->hot[id].slot = i;
}

/**
 * @brief Frees slot @p i, moving back each later entry of its probe run
 *        whose home is not in (i, j] so every key stays reachable.
 */
static void ks_topk_index_delete(ks_topk_t *tk, uint32_t i)
{
        uint32_t j = i, id, home;

        for (;;) {
                j  = (j + 1) & tk->mask;
                id = tk->index[j];
                if (id == KS_TOPK_EMPTY)
                        break;
                home = ks_topk_home(tk, tk->hot[id].hash64);
                if (((j - home) & tk->mask) >= ((j - i) & tk->mask)) {
                        tk->index[i]     = id;
                        tk->hot[id].slot = i;
                        i                = j;
                }
        }
        tk->index[i] = KS_TOPK_EMPTY;
}

/** @brief Stores @p e at heap position @p pos and tells its counter. */
static inline void ks_topk_place(ks_topk_t *tk, size_t pos, ks_topk_heapent_t e)
{
        tk->heap[pos]          = e;
        tk->hot[e.id].heap_pos = (uint32_t)pos;
}

/** @brief Moves the entry at @p pos up while its parent's count is larger. */
static void ks_topk_sift_up(ks_topk_t *tk, size_t pos)
{
        ks_topk_heapent_t x = tk->heap[pos];

        while (pos > 0) {
                size_t parent = (pos - 1) / KS_TOPK_ARITY;
                if (tk->heap[parent].count <= x.count)
                        break;
                ks_topk_place(tk, pos, tk->heap[parent]);
                pos = parent;
        }
        ks_topk_place(tk, pos, x);
}

/** @brief Moves the entry at @p pos down while a child's count is smaller. */
static void ks_topk_sift_down(ks_topk_t *tk, size_t pos)
{
        ks_topk_heapent_t x = tk->heap[pos];
        size_t            first, last, c, min;

        while ((first = KS_TOPK_ARITY * pos + 1) < tk->n) {
                last = first + KS_TOPK_ARITY;
                if (last > tk->n)
                        last = tk->n;
                for (min = first, c = first + 1; c < last; c++)
                        min = tk->heap[c].count < tk->heap[min].count ? c : min;
                if (tk->heap[min].count >= x.count)
                        break;
                ks_topk_place(tk, pos, tk->heap[min]);
                pos = min;
        }
        ks_topk_place(tk, pos, x);
}

/** @returns the most messages an unmonitored key can have had. */
static inline uint64_t ks_topk_bound(const ks_topk_t *tk)
{
        return tk->n == tk->cap ? tk->heap[0].count : tk->unseen;
}

/**
 * @brief Copies @p n <= KS_TOPK_KEY_MAX key bytes with fixed-size moves:
 *        GCC compiles a memcpy() of a variable but bounded length into
 *        `rep movs`, whose start-up cost was a third of a takeover.
 */
static inline void ks_topk_copy_key(uint8_t *dst, const uint8_t *src,
                                    size_t n)
{
        for (; n >= 16; n -= 16, dst += 16, src += 16)
                memcpy(dst, src, 16);
        if (n >= 8) { /* two overlapping 8-byte moves */
                memcpy(dst, src, 8);
                memcpy(dst + n - 8, src + n - 8, 8);
        } else if (n >= 4) {
                memcpy(dst, src, 4);
                memcpy(dst + n - 4, src + n - 4, 4);
        } else {
                for (; n > 0; n--)
                        *dst++ = *src++;
        }
}

/** @brief Gives counter @p id to a key: identity and cold fields. */
static void ks_topk_set_key(ks_topk_t *tk, uint32_t id, const void *key,
                            size_t keylen, uint64_t hash64, uint32_t phash,
                            uint64_t error, uint64_t bytes)
{
        ks_topk_cold_t *c = &tk->cold[id];

        tk->hot[id].hash64 = hash64;
        tk->hot[id].bytes  = bytes;
        c->error           = error;
        c->phash           = phash;
        c->keylen = keylen > UINT32_MAX ? UINT32_MAX : (uint32_t)keylen;
        ks_topk_copy_key(c->key, key,
                         keylen < KS_TOPK_KEY_MAX ? keylen : KS_TOPK_KEY_MAX);
        ks_topk_index_insert(tk, id);
}

/**
 * @brief Gives a counter to a key that is not monitored, whose count and
 *        error already include the charge for what it may have had while
 *        unmonitored: a free counter if any, else the smallest one if the
 *        newcomer's count is larger (on a tie the incumbent stays).
 */
static void ks_topk_admit(ks_topk_t *tk, const void *key, size_t keylen,
                          uint64_t hash64, uint32_t phash, uint64_t count,
                          uint64_t error, uint64_t bytes)
{
        ks_topk_heapent_t e;

        if (tk->n < tk->cap) {
                e.id    = (uint32_t)tk->n++;
                e.count = count;
                ks_topk_set_key(tk, e.id, key, keylen, hash64, phash, error,
                                bytes);
                tk->heap[e.id] = e;
                ks_topk_sift_up(tk, e.id);
                return;
        }
        if (count <= tk->heap[0].count)
                return;
        e.id    = tk->heap[0].id;
        e.count = count;
        ks_topk_index_delete(tk, tk->hot[e.id].slot);
        ks_topk_set_key(tk, e.id, key, keylen, hash64, phash, error, bytes);
        tk->heap[0] = e;
        ks_topk_sift_down(tk, 0);
}

/** @brief Adds counts to counter @p id (its key is monitored). */
static inline void ks_topk_bump(ks_topk_t *tk, uint32_t id, uint64_t count,
                                uint64_t error, uint64_t bytes)
{
        uint32_t pos = tk->hot[id].heap_pos;

        tk->hot[id].bytes += bytes;
        tk->cold[id].error += error;
        tk->heap[pos].count += count;
        ks_topk_sift_down(tk, pos);
}

/**
 * @returns a summary with @p capacity counters (1 <= capacity <= 2^28),
 *          or NULL on ENOMEM or an out-of-range capacity.
 */
ks_topk_t *ks_topk_new(size_t capacity)
{
        ks_topk_t *tk;
        size_t     slots = 2;
        unsigned   bits  = 1;

        if (capacity < 1 || capacity > KS_TOPK_CAPACITY_MAX)
                return NULL;
        while (slots < 2 * capacity) {
                slots <<= 1;
                bits++;
        }
        tk = calloc(1, sizeof(*tk));
        if (!tk)
                return NULL;
        tk->cap   = capacity;
        tk->shift = 64 - bits;
        tk->mask  = (uint32_t)(slots - 1);
        tk->index = malloc(slots * sizeof(*tk->index));
        /* Children 4i+1..4i+4 start a cache line: heap[-1] is aligned. */
        heap_size = ((capacity + 1) * sizeof(*tk->heap) + 63) / 64 * 64;
        tk->heap_mem = aligned_alloc(64, heap_size);
        tk->heap = tk->heap_mem ? tk->heap_mem + 3 : NULL;
        tk->hot   = malloc(capacity * sizeof(*tk->hot));
        tk->cold  = malloc(capacity * sizeof(*tk->cold));
        if (!tk->index || !tk->heap || !tk->hot || !tk->cold) {
                ks_topk_destroy(tk);
                return NULL;
        }
        memset(tk->index, 0xff, slots * sizeof(*tk->index)); /* EMPTY */
        return tk;
}

/** @brief Frees the summary (NULL is allowed). */
void ks_topk_destroy(ks_topk_t *tk)
{
        if (!tk)
                return;
        free(tk->index);
        free(tk->heap_mem);
        free(tk->hot);
        free(tk->cold);
        free(tk);
}

/**
 * @brief Counts one message of @p key (@p key may be NULL only when
 *        @p keylen is 0).
 */
void ks_topk_add(ks_topk_t *tk, const void *key, size_t keylen, uint64_t hash64,
                 uint32_t phash, uint64_t bytes)
{
        uint32_t id = ks_topk_find(tk, hash64);
        uint64_t b;

        tk->total++;
        if (id != KS_TOPK_EMPTY) {
                uint32_t pos = tk->hot[id].heap_pos;
                tk->hot[id].bytes += bytes;
                tk->heap[pos].count++;
                ks_topk_sift_down(tk, pos);
                return;
        }
        b = ks_topk_bound(tk);
        ks_topk_admit(tk, key, keylen, hash64, phash, b + 1, b, bytes);
}

/** @returns messages counted in total (N), merged ones included. */
uint64_t ks_topk_total(const ks_topk_t *tk)
{
        return tk->total;
}

/** @returns m, the number of counters. */
size_t ks_topk_capacity(const ks_topk_t *tk)
{
        return tk->cap;
}

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
        for (i = dst->n / 2; i-- > 0;) /* counts moved unevenly: re-heap */
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

        tk->total += e->count;
        if (id != KS_TOPK_EMPTY) {
                ks_topk_bump(tk, id, e->count, e->error, e->bytes);
                return;
        }
        b = ks_topk_bound(tk);
        ks_topk_admit(tk, e->key, e->keylen, e->hash64, e->phash, b + e->count,
                      b + e->error, e->bytes);
}
