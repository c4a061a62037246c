/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_topk.c
 * @brief Hot keys: the Space-Saving algorithm, filtered.
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
 * Filter (Homem & Carvalho, "Finding top-k elements in data streams",
 * Information Sciences 180(24), 2010: Filtered Space-Saving)
 * ----------------------------------------------------------------
 * On a stream of many distinct keys, plain Space-Saving hands a counter
 * to every newcomer: an index delete and insert, the key copied, a sift
 * down, for a key that is never seen again (~55 ns a message, 10 M
 * distinct keys, m = 1024). The filter puts a newcomer's messages in a
 * cell first: 8m hashed cells (ks_topk_cell(): the hash's low 32 bits
 * scaled to 8m), each the most messages a key not monitored whose hash
 * falls in it can have had.
 * A newcomer with w messages whose cell holds a:
 *  - takes the smallest counter c if a + w > c: count a + w, error a;
 *    the key it displaces raises its own cell to at least its count;
 *  - else the cell becomes a + w, and no counter changes.
 * Each unmonitored key's messages are thus in its cell (every message of
 * it while unmonitored was added there, and its count when displaced was
 * an upper bound of all before), so the bounds above hold: a cell never
 * passes the smallest count, which never falls, so a key not monitored
 * has had at most the smallest count, and a newcomer is charged a <= c,
 * never more than plain Space-Saving would charge it at that moment (the
 * two summaries then hold different keys, so one key's final error may
 * still differ either way); error <= the smallest count <= N / m, as the
 * counts now sum to at most N (a cell's messages are in no count). Cells
 * are 32-bit; should one pass 2^32 - 1, and after any merge (below, whose
 * bound the cells do not carry), the summary goes on as plain
 * Space-Saving, whose bound every cell is below.
 *
 * `bytes` adds the key + value bytes of the messages counted since the key
 * took its counter, i.e. of exactly count - error of its messages, so
 * bytes / (count - error) is its mean message size and bytes a lower bound
 * of its byte volume. (The c inherited messages were other keys'.)
 *
 * Memory layout (fixed at creation; add() never allocates)
 * ----------------------------------------------------------
 * Counter i is split by how often it is touched:
 *  - heap[m], 16 B: (count, counter id), a 4-ary min-heap on count, so
 *    the counter to take over is heap[0]; siblings share a cache line;
 *  - hot[m], 24 B: hash, bytes, heap position, index slot: what a message
 *    of a monitored key reads and writes;
 *  - cold[m], 144 B: error, partitioner hash, key length and the first
 *    KS_TOPK_KEY_MAX key bytes, written when a key takes the counter;
 *  - index[2^b] with 2^b >= 4m, 4 B each: open addressing with linear
 *    probing from the hash's multiplicative (Fibonacci) home slot, holding
 *    counter ids; deletion shifts the rest of the probe run back (Knuth,
 *    TAOCP vol. 3, 6.4, algorithm R) instead of leaving tombstones. Load
 *    <= 1/4, not 1/2: when every message is a new key, each one costs a
 *    failed lookup, a delete and an insert, and halving the load took
 *    that from about 95 to 55 ns (10M distinct keys, m = 1024).
 *  - filter[8m], 4 B each: the hashed cells.
 * 232 B per counter at power-of-two m (up to 248 B otherwise, the index
 * being a power of two): 232 KiB at m = 1024 (ks_topk_bytes()). A message
 * of a monitored key costs an index probe and a sift-down that usually
 * stops at once (hot keys sit near the leaves); a newcomer a failed index
 * probe and a cell, and when it takes a counter an index delete and
 * insert and at most log4(m) sift steps, usually fewer
 * (ks_topk_victim()). Keys are identified by their 64-bit hash.
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
 * (and symmetrically); the m largest counts are kept, and b_A + b_B is
 * remembered as the bound for keys in neither. So for the merged stream a
 * kept key's true count is still in [count - error, count], and a key not
 * kept has had at most the smallest kept count. With equal capacities the
 * kept counts also still sum to at most N_A + N_B (at least as many of
 * A's counters are dropped as kept keys are charged b_A, and each dropped
 * count is >= b_A), so error <= N / m as before; merging in a summary of
 * m' < m counters weakens that to N / m'.
 *
 * Windows (keyshift's drainer, ks_batch.h)
 * ----------------------------------------
 * The drainer counts each key's messages between two flushes of its key
 * table exactly and hands a flush over as one run per key: an exact summary W of the window,
 * whose bound for keys it does not hold is 0. Merging W into the summary
 * by the rule above gives a monitored key count + w, and a key not
 * monitored count b + w, error b, where b is the bound when the window
 * began; the m largest are kept. ks_topk_window_begin() records b,
 * ks_topk_window_bump() adds the runs of monitored keys first (so that no
 * key monitored at the start is dropped before its run is counted), and
 * ks_topk_window_add() then offers the other keys: one takes the smallest
 * counter only if b + w exceeds it, else it is dropped, having had at most
 * b + w <= that smallest count (the bound for keys not monitored, as
 * above). Unlike a message-by-message takeover, a key the summary drops
 * costs one index probe, not a takeover: on a stream of many distinct keys
 * only as many keys per window change hands as counters sat at the bound.
 * Counts and bounds keep the guarantees of a merge: [count - error, count]
 * holds the true count, error <= N / m. Should ks_topk_add() run inside a
 * window (a message analysed outside the batch), the window's bound no
 * longer holds for the keys it evicted, and the remaining offers fall
 * back to the current bound (a takeover, as ks_topk_add()).
 * With the filter, a cell bounds its keys whenever they come, so an offer
 * is an ordinary add (ks_topk_add_n()): the window's order (monitored keys
 * first) remains, its bound is not needed.
 */
#include "ks_topk.h"

#include "ks_bytes.h"
#include "ks_topk_impl.h"

#include <stdlib.h>
#include <string.h>

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

/** @brief Moves the entry at @p pos down while a child's count is smaller.
 *         (Locals, not tk->..., so stores into the heap need not reload
 *         them.) @returns where it ends. */
size_t ks_topk_sift_down(ks_topk_t *tk, size_t pos)
{
        ks_topk_heapent_t *heap = tk->heap;
        ks_topk_hot_t     *hot  = tk->hot;
        const size_t       n    = tk->n;
        ks_topk_heapent_t  x    = heap[pos];
        size_t             first, min, c;

        while ((first = KS_TOPK_ARITY * pos + 1) < n) {
                const ks_topk_heapent_t *h = &heap[first];
                if (first + KS_TOPK_ARITY <= n) {
                        /* A tournament of selects, not branches: which
                         * sibling is smallest is a coin toss when many
                         * counts tie (a high-cardinality stream). */
                        size_t   l    = h[1].count < h[0].count;
                        size_t   r    = 2 + (h[3].count < h[2].count);
                        uint64_t mask = -(uint64_t)(h[r].count < h[l].count);
                        min           = l ^ ((l ^ r) & mask);
                } else {
                        for (min = 0, c = 1; first + c < n; c++)
                                if (h[c].count < h[min].count)
                                        min = c;
                }
                if (h[min].count >= x.count)
                        break;
                heap[pos]               = h[min];
                hot[h[min].id].heap_pos = (uint32_t)pos;
                pos                     = first + min;
        }
        heap[pos]          = x;
        hot[x.id].heap_pos = (uint32_t)pos;
        return pos;
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
        ks_bytes_copy_small(
            c->key, key, keylen < KS_TOPK_KEY_MAX ? keylen : KS_TOPK_KEY_MAX);
        ks_topk_index_insert(tk, id);
}

/** @returns the filter cell of @p hash64: its low 32 bits scaled to the
 *           cells (Lemire, "Fast random integer generation in an
 *           interval", 2019), so that there are exactly 8m of them; the
 *           index's home slot uses the high bits. */
static inline uint32_t *ks_topk_cell(const ks_topk_t *tk, uint64_t hash64)
{
        return &tk->filter[((hash64 & 0xffffffffu) * tk->ncells) >> 32];
}

/** @brief Raises the filter cell of @p hash64 to at least @p count; a
 *         count past the cell's range ends the filter (the summary's bound
 *         then serves for every key). */
static void ks_topk_filter_raise(ks_topk_t *tk, uint64_t hash64, uint64_t count)
{
        uint32_t *cell = ks_topk_cell(tk, hash64);

        if (count > UINT32_MAX)
                tk->filtered = 0;
        else if (*cell < count)
                *cell = (uint32_t)count;
}

/**
 * @returns the heap position of a counter with the smallest count, to be
 *          taken over. Any of them will do, and heap[0] costs a sift down
 *          past all the others: with many distinct keys most counts tie at
 *          the minimum. So first try the siblings of where the previous
 *          takeover came to rest (one cache line, near the leaves): one of
 *          them often still has the minimum and then sinks no further.
 */
static size_t ks_topk_victim(const ks_topk_t *tk)
{
        const ks_topk_heapent_t *h   = &tk->heap[tk->victims];
        uint64_t                 min = tk->heap[0].count;
        unsigned                 m;

        if (tk->victims == 0 || tk->victims + KS_TOPK_ARITY > tk->n)
                return 0;
        m = (unsigned)(h[0].count == min) | (unsigned)(h[1].count == min) << 1 |
            (unsigned)(h[2].count == min) << 2 |
            (unsigned)(h[3].count == min) << 3;
        return m ? tk->victims + (size_t)__builtin_ctz(m) : 0;
}

/**
 * @brief Gives a counter to a key that is not monitored, whose count and
 *        error already include the charge for what it may have had while
 *        unmonitored: a free counter if any, else the smallest one if the
 *        newcomer's count is larger (on a tie the incumbent stays).
 */
void ks_topk_admit(ks_topk_t *tk, const void *key, size_t keylen,
                   uint64_t hash64, uint32_t phash, uint64_t count,
                   uint64_t error, uint64_t bytes)
{
        ks_topk_heapent_t e;
        size_t            pos;

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
        pos     = ks_topk_victim(tk);
        e.id    = tk->heap[pos].id;
        e.count = count;
        if (tk->filtered)
                ks_topk_filter_raise(tk, tk->hot[e.id].hash64,
                                     tk->heap[pos].count);
        ks_topk_index_delete(tk, tk->hot[e.id].slot);
        ks_topk_set_key(tk, e.id, key, keylen, hash64, phash, error, bytes);
        tk->heap[pos] = e;
        pos           = ks_topk_sift_down(tk, pos);
        tk->victims =
            pos > 0 ? (pos - 1) / KS_TOPK_ARITY * KS_TOPK_ARITY + 1 : 0;
}

/**
 * @brief Offers @p messages messages (@p bytes) of a key not monitored
 *        (total already counted): a free counter if any; else, filtered,
 *        the key takes the smallest counter when its cell + messages
 *        exceeds it and otherwise only its cell grows; unfiltered, it
 *        takes the smallest counter, charged the summary's bound.
 */
static void ks_topk_offer(ks_topk_t *tk, const void *key, size_t keylen,
                          uint64_t hash64, uint32_t phash, uint64_t messages,
                          uint64_t bytes)
{
        uint32_t *cell;
        uint64_t  a;

        if (!tk->filtered || tk->n < tk->cap) {
                uint64_t b = ks_topk_bound(tk);
                ks_topk_admit(tk, key, keylen, hash64, phash, b + messages, b,
                              bytes);
                return;
        }
        cell = ks_topk_cell(tk, hash64);
        a    = *cell;
        if (a + messages > tk->heap[0].count)
                ks_topk_admit(tk, key, keylen, hash64, phash, a + messages, a,
                              bytes);
        else if (a + messages <= UINT32_MAX)
                *cell = (uint32_t)(a + messages);
        else { /* past the cell's range: plain Space-Saving from here */
                tk->filtered = 0;
                ks_topk_offer(tk, key, keylen, hash64, phash, messages, bytes);
        }
}

/** Filter cells per counter (Filtered Space-Saving's 8m: file comment). */
#define KS_TOPK_CELLS_PER_COUNTER 8

/** @returns the bytes of the heap of @p capacity counters, three entries
 *           ahead of it so that each group of siblings fills a 64-byte
 *           line (ks_topk_new()), rounded up to whole lines. */
static size_t ks_topk_heap_bytes(size_t capacity)
{
        return ((capacity + 3) * sizeof(ks_topk_heapent_t) + 63) / 64 * 64;
}

/** @returns the index slots for @p capacity counters (load <= 1/4),
 *           and their log2 in @p bits. */
static size_t ks_topk_slots(size_t capacity, unsigned *bits)
{
        size_t slots = 2;

        *bits = 1;
        while (slots < 4 * capacity) { /* load <= 1/4: see the file comment */
                slots <<= 1;
                (*bits)++;
        }
        return slots;
}

size_t ks_topk_bytes(size_t capacity)
{
        unsigned bits;

        return sizeof(ks_topk_t) +
               ks_topk_slots(capacity, &bits) * sizeof(uint32_t) +
               ks_topk_heap_bytes(capacity) +
               capacity * (sizeof(ks_topk_hot_t) + sizeof(ks_topk_cold_t) +
                           KS_TOPK_CELLS_PER_COUNTER * sizeof(uint32_t));
}

/**
 * @returns a summary with @p capacity counters (1 <= capacity <= 2^28),
 *          or NULL on ENOMEM or an out-of-range capacity.
 */
ks_topk_t *ks_topk_new(size_t capacity)
{
        ks_topk_t *tk;
        size_t     slots;
        unsigned   bits;

        if (capacity < 1 || capacity > KS_TOPK_CAPACITY_MAX)
                return NULL;
        slots = ks_topk_slots(capacity, &bits);
        tk    = calloc(1, sizeof(*tk));
        if (!tk)
                return NULL;
        tk->cap      = capacity;
        tk->shift    = 64 - bits;
        tk->mask     = (uint32_t)(slots - 1);
        tk->index    = malloc(slots * sizeof(*tk->index));
        tk->ncells   = KS_TOPK_CELLS_PER_COUNTER * (uint64_t)capacity;
        tk->filter   = calloc(tk->ncells, sizeof(*tk->filter));
        tk->filtered = 1;
        /* heap = heap_mem + 3, so each group of siblings 4i+1..4i+4
         * fills one 64-byte line. */
        tk->heap_mem = aligned_alloc(64, ks_topk_heap_bytes(capacity));
        tk->heap     = tk->heap_mem ? tk->heap_mem + 3 : NULL;
        tk->hot      = malloc(capacity * sizeof(*tk->hot));
        tk->cold     = malloc(capacity * sizeof(*tk->cold));
        if (!tk->index || !tk->filter || !tk->heap || !tk->hot || !tk->cold) {
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
        free(tk->filter);
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
        ks_topk_add_n(tk, key, keylen, hash64, phash, 1, bytes);
}

/**
 * @brief Counts @p messages messages of @p key at once: weighted
 *        Space-Saving, with the bounds of @p messages single adds in a
 *        row (a newcomer with cell a takes the smallest counter c with count
 *        a + messages and error a when that exceeds c, else its cell grows
 *        by messages; unfiltered, count c + messages and error c), so the
 *        bounds above hold with N counting messages.
 */
void ks_topk_add_n(ks_topk_t *tk, const void *key, size_t keylen,
                   uint64_t hash64, uint32_t phash, uint64_t messages,
                   uint64_t bytes)
{
        uint32_t id = ks_topk_find(tk, hash64);

        tk->win_clean = 0;
        tk->total += messages;
        if (id != KS_TOPK_EMPTY) {
                ks_topk_count(tk, id, messages, bytes);
                return;
        }
        ks_topk_offer(tk, key, keylen, hash64, phash, messages, bytes);
}

void ks_topk_window_begin(ks_topk_t *tk)
{
        tk->win_bound = ks_topk_bound(tk);
        tk->win_clean = 1;
}

int ks_topk_window_bump(ks_topk_t *tk, uint64_t hash64, uint64_t messages,
                        uint64_t bytes)
{
        uint32_t id = ks_topk_find(tk, hash64);

        if (id == KS_TOPK_EMPTY)
                return 0;
        tk->total += messages;
        ks_topk_count(tk, id, messages, bytes);
        return 1;
}

void ks_topk_window_add(ks_topk_t *tk, const void *key, size_t keylen,
                        uint64_t hash64, uint32_t phash, uint64_t messages,
                        uint64_t bytes)
{
        uint64_t b;

        if (tk->filtered || !tk->win_clean) {
                /* filtered: a cell bounds its keys at any time, no window
                 * bound needed; but the key may have been admitted since
                 * window_bump() missed it (another run of it, outside the
                 * window), so it is looked up again */
                ks_topk_add_n(tk, key, keylen, hash64, phash, messages, bytes);
                return;
        }
        /* not monitored: window_bump() said so, and in a clean window no
         * key has been admitted since but by an earlier offer (one run per
         * key and window) */
        tk->total += messages;
        b = tk->win_bound;
        /* ks_topk_admit() drops it when b + messages <= the smallest */
        ks_topk_admit(tk, key, keylen, hash64, phash, b + messages, b, bytes);
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
