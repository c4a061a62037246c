/**
 * @file ks_batch.c
 * @brief The drainer's aggregation of staged messages (see ks_batch.h).
 *
 * Two windows: messages are counted into the collecting window while the
 * previous one is analysed in slices (ks_batch_flush_step()), so the
 * drainer keeps emptying the staging rings during an analysis that may
 * take milliseconds. Each slot keeps a count, a byte sum and a chain link
 * per window (indexed by the window's parity); a slot is given to a new
 * key only when neither window counts it.
 */
#include "ks_batch.h"

#include <stdlib.h>
#include <string.h>

#include "ks_bytes.h"

/** End of a topic's chain of slots. */
#define KS_BATCH_END UINT32_MAX
/** Millisecond stamps kept per topic and window (more: applied at once). */
#define KS_BATCH_RATES 4

/** A slot: two cache lines, the first all a probe compares (and the key),
 *  the second the counts and the facts. */
typedef struct ks_batch_slot {
        ks_topic_t *t;   /**< NULL: empty */
        uint32_t    tag; /**< high bits of ks_batch_key_hash() */
        int32_t     partition;
        uint16_t    keylen;
        uint8_t     key_null;
        uint8_t     seen;        /**< counted since a new key last passed by
                                  *   (second chance: CLOCK, Corbato 1968) */
        uint8_t     topic_ix[2]; /**< into the window's topics */
        uint8_t     key[KS_BATCH_KEY_MAX];
        /* second line */
        uint32_t       messages[2]; /**< per window; 0: not counted */
        uint32_t       next[2];     /**< next slot of the topic, per window */
        uint64_t       bytes[2];    /**< per window */
        ks_key_facts_t f;
} ks_batch_slot_t;

_Static_assert(sizeof(ks_batch_slot_t) == 128, "two cache lines a slot");

/** Messages of one topic at one millisecond stamp. */
typedef struct ks_batch_rate {
        int64_t  mono_ms;
        uint64_t messages, bytes;
} ks_batch_rate_t;

/** A topic counted in a window. */
typedef struct ks_batch_topic {
        ks_topic_t     *t;
        uint32_t        head, tail; /**< its slots, in arrival order */
        int             nrates;
        ks_batch_rate_t rates[KS_BATCH_RATES];
} ks_batch_topic_t;

/** One window: what was counted in it, by topic. */
typedef struct ks_batch_window {
        uint64_t         messages; /**< counted */
        uint64_t         runs;     /**< slots counting them */
        int64_t          first_ms; /**< stamp of the first */
        int              ntopics;
        int              last_ix; /**< topic of the previous message */
        ks_batch_topic_t topics[KS_BATCH_TOPICS];
} ks_batch_window_t;

struct ks_batch {
        ks_batch_slot_t  *slots; /**< [mask + 1] */
        size_t            mask;  /**< slots - 1 (a power of two) */
        ks_batch_window_t win[2];
        int               cur; /**< the collecting window's parity */
        /* the analysis in progress of window cur ^ 1 (flushing) */
        int      flushing;
        int      f_topic; /**< topic being analysed */
        int      f_pass;  /**< 0: not begun, 1: runs, 2: offers */
        uint32_t f_slot;  /**< next slot of its chain */
        uint32_t f_offers, f_offers_tail; /**< runs left for the offers */
        ks_batch_stats_t stats;
};

_Static_assert(KS_BATCH_TOPICS <= 256, "topic_ix is a byte");

size_t ks_batch_slots_for(size_t bytes)
{
        size_t n = KS_BATCH_SLOTS_MIN;

        while (n < KS_BATCH_SLOTS_MAX &&
               2 * n * sizeof(ks_batch_slot_t) <= bytes)
                n *= 2;
        return n;
}

ks_batch_t *ks_batch_new(size_t bytes)
{
        ks_batch_t *b = calloc(1, sizeof(*b));
        size_t      n = ks_batch_slots_for(bytes);

        if (!b)
                return NULL;
        if (!(b->slots = aligned_alloc(64, n * sizeof(*b->slots)))) {
                free(b);
                return NULL;
        }
        memset(b->slots, 0, n * sizeof(*b->slots));
        b->mask = n - 1;
        return b;
}

size_t ks_batch_bytes(const ks_batch_t *b)
{
        return (b->mask + 1) * sizeof(*b->slots);
}

void ks_batch_destroy(ks_batch_t *b)
{
        if (!b)
                return;
        free(b->slots);
        free(b);
}

/** @brief Adds one message at @p mono_ms to a topic's rates of a window,
 *         or straight to the topic when its stamps are used up. */
static void rate_add(ks_batch_topic_t *bt, int64_t mono_ms, uint64_t bytes)
{
        if (bt->nrates && bt->rates[bt->nrates - 1].mono_ms == mono_ms) {
                bt->rates[bt->nrates - 1].messages++;
                bt->rates[bt->nrates - 1].bytes += bytes;
                return;
        }
        if (bt->nrates < KS_BATCH_RATES) {
                bt->rates[bt->nrates++] = (ks_batch_rate_t){mono_ms, 1, bytes};
                return;
        }
        ks_topic_lock(bt->t);
        ks_topic_rate_locked(bt->t, mono_ms, 1, bytes);
        ks_topic_unlock(bt->t);
}

/** @brief Starts analysing the collecting window; collection goes on in
 *         the other one. The caller made sure no analysis is in progress. */
static void flush_begin(ks_batch_t *b)
{
        b->cur ^= 1;
        b->flushing      = b->win[b->cur ^ 1].ntopics > 0;
        b->f_topic       = 0;
        b->f_pass        = 0;
        b->f_offers      = KS_BATCH_END;
        b->f_offers_tail = KS_BATCH_END;
}

/** @brief Ends the analysis: the window is empty again. */
static void flush_end(ks_batch_t *b)
{
        ks_batch_window_t *w = &b->win[b->cur ^ 1];

        w->ntopics  = 0;
        w->last_ix  = 0;
        w->messages = 0;
        w->runs     = 0;
        b->flushing = 0;
}

/** @brief Asks for the two lines of slot @p i (an analysis reads both);
 *         nothing for KS_BATCH_END. */
static inline void fetch_slot(const ks_batch_t *b, uint32_t i)
{
        if (i != KS_BATCH_END) {
                const char *s = (const char *)&b->slots[i];
                __builtin_prefetch(s);
                __builtin_prefetch(s + 64);
        }
}

int ks_batch_flush_step(ks_batch_t *b, unsigned max_runs)
{
        int                q    = b->cur ^ 1;
        ks_batch_window_t *w    = &b->win[q];
        unsigned           done = 0;

        if (!b->flushing)
                return 0;
        while (b->f_topic < w->ntopics && done < max_runs) {
                ks_batch_topic_t *bt = &w->topics[b->f_topic];
                int               j;

                ks_topic_lock(bt->t);
                if (b->f_pass == 0) {
                        ks_topic_window_begin_locked(bt->t);
                        for (j = 0; j < bt->nrates; j++)
                                ks_topic_rate_locked(
                                    bt->t, bt->rates[j].mono_ms,
                                    bt->rates[j].messages, bt->rates[j].bytes);
                        b->f_pass = 1;
                        b->f_slot = bt->head;
                }
                /* every run, then the hot-key offers (ks_topk.c, Windows).
                 * A run not left for an offer frees its slot at once; the
                 * others are chained again, through the same links, into
                 * the offers' chain (f_offers) */
                for (; b->f_pass == 1 && done < max_runs;) {
                        ks_batch_slot_t *sl;
                        uint32_t         here = b->f_slot;
                        if (here == KS_BATCH_END) {
                                b->f_pass = 2;
                                b->f_slot = b->f_offers;
                                break;
                        }
                        sl        = &b->slots[here];
                        b->f_slot = sl->next[q];
                        fetch_slot(b, b->f_slot); /* the next run's */
                        b->stats.runs++;
                        done++;
                        if (ks_topic_record_run_locked(
                                bt->t, sl->key_null ? NULL : sl->key,
                                sl->keylen, sl->partition, &sl->f,
                                sl->messages[q], sl->bytes[q], 1)) {
                                sl->next[q] = KS_BATCH_END;
                                if (b->f_offers_tail == KS_BATCH_END)
                                        b->f_offers = here;
                                else
                                        b->slots[b->f_offers_tail].next[q] =
                                            here;
                                b->f_offers_tail = here;
                        } else {
                                sl->messages[q] = 0;
                                sl->bytes[q]    = 0;
                        }
                }
                for (; b->f_pass == 2 && done < max_runs;) {
                        ks_batch_slot_t *sl;
                        if (b->f_slot == KS_BATCH_END) {
                                b->f_pass        = 0;
                                b->f_offers      = KS_BATCH_END;
                                b->f_offers_tail = KS_BATCH_END;
                                b->f_topic++;
                                break;
                        }
                        sl        = &b->slots[b->f_slot];
                        b->f_slot = sl->next[q];
                        fetch_slot(b, b->f_slot);
                        ks_topic_offer_run_locked(
                            bt->t, sl->key_null ? NULL : sl->key, sl->keylen,
                            &sl->f, sl->messages[q], sl->bytes[q]);
                        done++;
                        sl->messages[q] = 0;
                        sl->bytes[q]    = 0;
                }
                ks_topic_unlock(bt->t);
        }
        if (b->f_topic < w->ntopics)
                return 1;
        flush_end(b);
        return 0;
}

void ks_batch_flush(ks_batch_t *b)
{
        int k;

        /* the window being analysed, then the collecting one */
        for (k = 0; k < 2; k++) {
                while (ks_batch_flush_step(b, UINT32_MAX))
                        ;
                if (k == 0 && b->win[b->cur].messages)
                        flush_begin(b);
        }
}

int ks_batch_rotate(ks_batch_t *b, int64_t now_ms)
{
        const ks_batch_window_t *w = &b->win[b->cur];

        if (b->flushing || !w->messages ||
            (now_ms - w->first_ms < KS_BATCH_FLUSH_MS &&
             w->runs < (b->mask + 1) / 4))
                return 0;
        flush_begin(b);
        return 1;
}

/** @returns the index of @p t among the window's topics, added if new;
 *           -1 when KS_BATCH_TOPICS are taken. */
static int topic_ix(ks_batch_window_t *w, ks_topic_t *t)
{
        int i;

        if (w->last_ix < w->ntopics && w->topics[w->last_ix].t == t)
                return w->last_ix;
        for (i = 0; i < w->ntopics; i++)
                if (w->topics[i].t == t)
                        return w->last_ix = i;
        if (w->ntopics == KS_BATCH_TOPICS)
                return -1;
        w->topics[i] =
            (ks_batch_topic_t){t, KS_BATCH_END, KS_BATCH_END, 0, {{0}}};
        w->ntopics++;
        return w->last_ix = i;
}

uint64_t ks_batch_key_hash(const ks_topic_t *t, const void *key, size_t keylen,
                           int32_t partition)
{
        const uint8_t *k = key;
        uint64_t       h = 0x9E3779B97F4A7C15ULL * (keylen + 1), w;
        size_t         i = 0;

        for (; i + 8 <= keylen; i += 8) {
                memcpy(&w, k + i, 8);
                h = (h ^ w) * 0xBF58476D1CE4E5B9ULL;
                h ^= h >> 31;
        }
        if (i < keylen) {
                w = 0;
                if (keylen - i >= 4) { /* two overlapping 4-byte loads */
                        uint32_t lo, hi;
                        memcpy(&lo, k + i, 4);
                        memcpy(&hi, k + keylen - 4, 4);
                        w = (uint64_t)lo | (uint64_t)hi << 32;
                } else {
                        for (; i < keylen; i++)
                                w = w << 8 | k[i];
                }
                h = (h ^ w) * 0x94D049BB133111EBULL;
        }
        /* the topic and partition argument spread keys that repeat across
         * topics (Fibonacci hashing of the pointer) */
        h ^= (uintptr_t)t * 0x9E3779B97F4A7C15ULL ^ (uint32_t)partition;
        h ^= h >> 32; /* every bit into the low bits that pick the slot */
        h *= 0xD6E8FEB86659FD93ULL;
        return h ^ h >> 32;
}

/** @returns the slot a key of hash @p h is first looked for in. */
static inline size_t home_of(const ks_batch_t *b, uint64_t h)
{
        return (size_t)h & b->mask;
}

void ks_batch_prefetch(const ks_batch_t *b, uint64_t h)
{
        fetch_slot(b, (uint32_t)home_of(b, h));
}

/** @returns whether the @p n bytes at @p a and @p b are equal; both are
 *           KS_BATCH_KEY_MAX-byte arrays, so up to 16 bytes are compared
 *           with overlapping word loads, without a call. */
static inline int key_equal(const uint8_t *a, const uint8_t *b, size_t n)
{
        uint64_t x0, x1, y0, y1;
        uint32_t u0, u1, v0, v1;

        if (n > 16)
                return !memcmp(a, b, n);
        if (n >= 8) {
                memcpy(&x0, a, 8);
                memcpy(&y0, b, 8);
                memcpy(&x1, a + n - 8, 8);
                memcpy(&y1, b + n - 8, 8);
                return ((x0 ^ y0) | (x1 ^ y1)) == 0;
        }
        if (n >= 4) {
                memcpy(&u0, a, 4);
                memcpy(&v0, b, 4);
                memcpy(&u1, a + n - 4, 4);
                memcpy(&v1, b + n - 4, 4);
                return ((u0 ^ v0) | (u1 ^ v1)) == 0;
        }
        for (; n; n--)
                if (*a++ != *b++)
                        return 0;
        return 1;
}

/** @returns whether slot @p s holds this message's key. */
static inline int slot_matches(const ks_batch_slot_t *s, const ks_topic_t *t,
                               uint32_t tag, const void *key, size_t keylen,
                               int32_t partition)
{
        return s->t == t && s->tag == tag && s->keylen == keylen &&
               s->partition == partition && s->key_null == (key == NULL) &&
               key_equal(s->key, key, keylen);
}

/**
 * @returns the slot of this message's key, found or taken (facts computed),
 *          or NULL when every slot of its window is counted in a window.
 */
static ks_batch_slot_t *slot_for(ks_batch_t *b, ks_topic_t *t, uint64_t h,
                                 const void *key, size_t keylen,
                                 int32_t partition)
{
        size_t           home = home_of(b, h);
        uint32_t         tag  = (uint32_t)(h >> 32);
        ks_batch_slot_t *take = NULL, *second = NULL;
        int              i;

        for (i = 0; i < KS_BATCH_PROBE; i++) {
                ks_batch_slot_t *s = &b->slots[(home + (size_t)i) & b->mask];
                if (slot_matches(s, t, tag, key, keylen, partition)) {
                        s->seen = 1;
                        return s;
                }
                if (!s->t) { /* never taken: the key is not further on */
                        if (!take)
                                take = s;
                        break;
                }
                if (s->messages[0] || s->messages[1])
                        continue;
                /* a free slot: taken if not counted since a newcomer last
                 * passed by, else given a second chance */
                if (!s->seen) {
                        if (!take)
                                take = s;
                } else if (!second) {
                        second = s;
                }
        }
        for (i = 0; i < KS_BATCH_PROBE; i++) /* the newcomer passes by */
                b->slots[(home + (size_t)i) & b->mask].seen = 0;
        if (!take && !(take = second))
                return NULL;
        take->t         = t;
        take->tag       = tag;
        take->partition = partition;
        take->keylen    = (uint16_t)keylen;
        take->key_null  = key == NULL;
        ks_bytes_copy_small(take->key, key, keylen);
        ks_topic_key_facts(t, key, keylen, partition, &take->f);
        b->stats.facts++;
        return take;
}

void ks_batch_add(ks_batch_t *b, ks_topic_t *t, uint64_t h, const void *key,
                  size_t keylen, int32_t partition, uint64_t bytes,
                  int64_t mono_ms)
{
        int                p = b->cur;
        ks_batch_window_t *w = &b->win[p];
        ks_batch_slot_t   *s;
        int                ix;

        b->stats.messages++;
        if (!(s = slot_for(b, t, h, key, keylen, partition))) {
                /* every slot of its probe range counts another key: this
                 * one is analysed alone, the others go on aggregating */
                b->stats.direct++;
                ks_topic_record_at(t, key, keylen, partition, bytes - keylen,
                                   mono_ms);
                return;
        }
        if (!s->messages[p]) {
                ks_batch_topic_t *bt;
                if ((ix = topic_ix(w, t)) < 0) {
                        /* KS_BATCH_TOPICS topics in this window: it is
                         * analysed now (and the previous one first) */
                        b->stats.early++;
                        ks_batch_flush(b);
                        p  = b->cur;
                        w  = &b->win[p];
                        ix = topic_ix(w, t);
                }
                w->runs++;
                bt             = &w->topics[ix];
                s->topic_ix[p] = (uint8_t)ix;
                s->next[p]     = KS_BATCH_END;
                if (bt->tail == KS_BATCH_END)
                        bt->head = (uint32_t)(s - b->slots);
                else
                        b->slots[bt->tail].next[p] = (uint32_t)(s - b->slots);
                bt->tail = (uint32_t)(s - b->slots);
        }
        if (!w->messages++)
                w->first_ms = mono_ms;
        s->messages[p]++;
        s->bytes[p] += bytes;
        rate_add(&w->topics[s->topic_ix[p]], mono_ms, bytes);
}

void ks_batch_stats(const ks_batch_t *b, ks_batch_stats_t *out)
{
        *out = b->stats;
}
