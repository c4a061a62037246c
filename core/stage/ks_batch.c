/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_batch.c
 * @brief The drainer's key table (see ks_batch.h).
 *
 * A message costs a probe of its slot's line (fetched ahead by the
 * caller) and two additions; a key's facts and analysis come once per run:
 * when a newcomer evicts it, at a flush, or when it reaches
 * KS_BATCH_RUN_MAX messages. While few probes find their key, messages
 * pass the table by as runs of one (pass_by(), pass_decide()). A slot
 * keeps its key after a flush (messages 0), so a key seen again is counted
 * in place; slots are never emptied, which keeps linear probing's rule
 * that a key is not beyond the first never-taken slot.
 *
 * A flush is two passes over the slots, each in slices between which the
 * drainer empties the rings: the first records every run in its topic's
 * hot-key window (a key the summary monitors is counted at once), the
 * second offers the runs of the keys it did not monitor (ks_topk.c,
 * Windows: a merge of the flush's exact counts, so that a busy key the
 * summary first sees in a flush is charged the summary's bound when the
 * flush began, not what the flush's other newcomers raised it to). With
 * the summary's filter (ks_topk.c: on unless a cell passed 2^32 - 1) a
 * newcomer is charged its own cell whenever it comes, so the bounds no
 * longer need this order; it stays, as the monitored keys' runs are then
 * counted before any newcomer can displace them. The
 * window takes one run per key and no other update: a run set aside
 * meanwhile waits for the offers' end (up to KS_BATCH_EVICTED of them),
 * and a slot taken during the first pass (its key may have had a run in
 * it already) waits for the next flush.
 */
#include "ks_batch.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "ks_batch_impl.h"
#include "ks_bytes.h"

_Static_assert(sizeof(ks_batch_slot_t) == KS_BUDGET_TABLE_SLOT_BYTES,
               "the budget's slot is the table's");
_Static_assert(sizeof(((ks_batch_t *)0)->meta[0]) == KS_BUDGET_TABLE_TAG_BYTES,
               "the budget's tag word is the table's");
/* at most: a platform whose ks_batch_t is smaller (32-bit pointers) is
 * counted a little over; a ks_batch_t that grows past it must raise it */
_Static_assert(sizeof(ks_batch_t) <= KS_BUDGET_TABLE_FIXED_BYTES,
               "the budget's fixed part holds the table's (ks_budget.h)");

ks_batch_t *ks_batch_new(size_t bytes)
{
        ks_batch_t *b     = calloc(1, sizeof(*b));
        size_t      n     = ks_budget_table_slots(bytes);
        size_t      size  = n * sizeof(*b->slots);
        size_t      align = 64;

        if (!b)
                return NULL;
        b->rng = 0x9E3779B97F4A7C15ULL; /* any seed but 0 */
        /* a table of whole huge pages is asked to be backed by them: a
         * message's slot is a random line of it, and the table spans more
         * 4 KiB pages than the TLB holds (~10 % of the drainer's time on a
         * Zipf stream, bench/README.md). Advice only: where transparent
         * huge pages are off, nothing changes. */
        if (size >= KS_HUGE_PAGE)
                align = KS_HUGE_PAGE;
        if (!(b->slots = aligned_alloc(align, size))) {
                free(b);
                return NULL;
        }
        if (align == KS_HUGE_PAGE)
                (void)madvise(b->slots, size, MADV_HUGEPAGE);
        if (!(b->meta = calloc(n, sizeof(*b->meta)))) {
                free(b->slots);
                free(b);
                return NULL;
        }
        memset(b->slots, 0, size);
        b->mask = n - 1;
        return b;
}

size_t ks_batch_bytes(const ks_batch_t *b)
{
        return ks_budget_table_bytes_of(b->mask + 1);
}

void ks_batch_destroy(ks_batch_t *b)
{
        if (!b)
                return;
        free(b->slots);
        free(b->meta);
        free(b);
}

/** @brief Adds the pass's rates to their topics. */
static void apply_rates(ks_batch_t *b)
{
        int i, j;

        for (i = 0; i < b->ntopics; i++) {
                ks_batch_topic_t *bt = &b->topics[i];
                ks_topic_lock(bt->t);
                for (j = 0; j < bt->nrates; j++)
                        ks_topic_rate_locked(bt->t, bt->rates[j].mono_ms,
                                             bt->rates[j].messages,
                                             bt->rates[j].bytes);
                ks_topic_unlock(bt->t);
        }
        b->ntopics   = 0;
        b->last_ix   = 0;
        b->last_rate = NULL;
}

/** @brief Counts @p n messages at @p mono_ms in their topic's rates of the
 *         pass, or straight in the topic when its stamps are used up. */
static void rate_add(ks_batch_t *b, ks_topic_t *t, int64_t mono_ms, uint32_t n,
                     uint64_t bytes)
{
        ks_batch_topic_t *bt;
        int               i = b->last_ix;

        if (i >= b->ntopics || b->topics[i].t != t) {
                for (i = 0; i < b->ntopics && b->topics[i].t != t; i++)
                        ;
                if (i == KS_BATCH_TOPICS) {
                        apply_rates(b);
                        i = 0;
                }
                if (i == b->ntopics) {
                        b->topics[i].t      = t;
                        b->topics[i].nrates = 0;
                        b->ntopics++;
                }
                b->last_ix = i;
        }
        bt           = &b->topics[i];
        b->last_rate = NULL;
        if (bt->nrates && bt->rates[bt->nrates - 1].mono_ms == mono_ms) {
                bt->rates[bt->nrates - 1].messages += n;
                bt->rates[bt->nrates - 1].bytes += bytes;
        } else {
                if (bt->nrates == KS_BATCH_RATES) {
                        /* the topic's stamps are used up: they go to the
                         * topic now, in order, before this one (the series
                         * counts a stamp older than its second in progress
                         * in that second: ks_rates.h) */
                        ks_topic_lock(t);
                        for (i = 0; i < bt->nrates; i++)
                                ks_topic_rate_locked(t, bt->rates[i].mono_ms,
                                                     bt->rates[i].messages,
                                                     bt->rates[i].bytes);
                        ks_topic_unlock(t);
                        bt->nrates = 0;
                }
                bt->rates[bt->nrates++] = (ks_batch_rate_t){mono_ms, n, bytes};
        }
        b->last_rate   = &bt->rates[bt->nrates - 1];
        b->last_rate_t = t;
}

/** @brief rate_add(), where a message of the previous message's topic and
 *         millisecond is two additions (most messages: 3 M a second are
 *         3,000 a stamp). */
static inline void rate_count(ks_batch_t *b, ks_topic_t *t, int64_t mono_ms,
                              uint32_t n, uint64_t bytes)
{
        ks_batch_rate_t *r = b->last_rate;

        if (r && b->last_rate_t == t && r->mono_ms == mono_ms) {
                r->messages += n;
                r->bytes += bytes;
                return;
        }
        rate_add(b, t, mono_ms, n, bytes);
}

/**
 * @brief Analyses a run set aside: its messages (ks_topic_record_run_locked()
 *        with a plain weighted add to the hot-key summary), and the offer a
 *        flush left in its slot, if the key was evicted before the offers.
 */
static void apply_run(ks_batch_t *b, ks_batch_hold_t *held,
                      const ks_batch_slot_t *s)
{
        ks_key_facts_t f;

        ks_topic_key_facts(s->t, key_of(s), s->keylen, s->partition, &f);
        hold(held, s->t);
        if (s->messages) {
                ks_topic_record_run_locked(
                    s->t, key_of(s), s->keylen, s->partition, &f, s->messages,
                    s->bytes,
                    !(s->flags & KS_SLOT_PASSED) ? KS_RUN_HOT_NOW
                    : s->flags & KS_SLOT_SAMPLED ? KS_RUN_HOT_SAMPLED
                                                 : KS_RUN_HOT_SKIPPED);
                b->stats.runs++;
        }
        if (s->offer_messages)
                ks_topic_offer_run_locked(s->t, key_of(s), s->keylen, &f,
                                          s->offer_messages, s->offer_bytes, 0);
}

/** @brief Analyses the runs set aside. */
static void apply_evicted(ks_batch_t *b)
{
        ks_batch_hold_t held = {NULL, 0};
        size_t          i;

        for (i = 0; i < b->nevicted; i++)
                apply_run(b, &held, &b->evicted[i]);
        release(&held);
        b->nevicted = 0;
}

/** @returns the next place of a run set aside, the runs waiting analysed
 *           first when all KS_BATCH_EVICTED places are taken. */
static ks_batch_slot_t *aside_run(ks_batch_t *b)
{
        if (b->nevicted == KS_BATCH_EVICTED)
                apply_evicted(b);
        return &b->evicted[b->nevicted++];
}

/**
 * @brief Sets @p what of slot @p s aside as a run (KS_ASIDE_*), the rest
 *        staying in the slot. Analysed by ks_batch_end_pass(), after the
 *        offers of a flush under way, or now when KS_BATCH_EVICTED wait.
 * @locks none held (analysing takes topics' locks).
 */
void ks_batch_set_aside(ks_batch_t *b, ks_batch_slot_t *s, unsigned what)
{
        ks_batch_slot_t *r = aside_run(b);

        *r = *s;
        if (what & KS_ASIDE_MESSAGES) {
                b->stats.set_aside++;
                s->messages = 0;
                s->bytes    = 0;
                meta_msgs(b, s);
        } else {
                r->messages = 0;
                r->bytes    = 0;
        }
        if (what & KS_ASIDE_OFFER) {
                s->offer_messages = 0;
                s->offer_bytes    = 0;
        } else {
                r->offer_messages = 0;
                r->offer_bytes    = 0;
        }
}

void ks_batch_end_pass(ks_batch_t *b)
{
        if (!b->flushing)
                apply_evicted(b);
        apply_rates(b);
}

/** @returns ks_batch_key_hash(), inlined where the drainer asks it. */
static inline uint64_t key_hash(const ks_topic_t *t, const void *key,
                                size_t keylen, int32_t partition)
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

uint64_t ks_batch_key_hash(const ks_topic_t *t, const void *key, size_t keylen,
                           int32_t partition)
{
        return key_hash(t, key, keylen, partition);
}

/** @returns the slot a key of hash @p h is first looked for in. */
static inline size_t home_of(const ks_batch_t *b, uint64_t h)
{
        return (size_t)h & b->mask;
}

/** @returns whether a message of @p t counted at most KS_BATCH_PASS_AHEAD
 *           messages from now passes the table by (add_n()'s test then). */
static inline int will_pass(const ks_batch_t *b, const ks_topic_t *t)
{
        return b->pass_left > KS_BATCH_PASS_AHEAD && ks_topic_count_known(t);
}

uint64_t ks_batch_look_ahead(const ks_batch_t *b, const ks_topic_t *t,
                             const void *key, size_t keylen, int32_t partition)
{
        uint64_t h;
        size_t   i;

        if (will_pass(b, t))
                return 0;
        h = key_hash(t, key, keylen, partition);
        i = home_of(b, h);
        /* and the next: at the default table's fill on a key stream that
         * fills it (100,000 keys in 131,072 slots) a key is often one
         * slot on (linear probing); 13 % less drainer CPU, A/B */
        __builtin_prefetch(&b->meta[i]);
        __builtin_prefetch(&b->slots[i]);
        __builtin_prefetch(&b->slots[(i + 1) & b->mask]);
        return h;
}

/** @returns whether the @p n bytes at @p a and @p b are equal; both are
 *           KS_BATCH_KEY_MAX-byte arrays or longer, so up to 16 bytes are
 *           compared with overlapping word loads, without a call. */
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
                               uint16_t tag, const void *key, size_t keylen,
                               int32_t partition)
{
        return s->t == t && s->tag == tag && s->keylen == keylen &&
               s->partition == partition &&
               !(s->flags & KS_SLOT_NULL) == (key != NULL) &&
               key_equal(s->key, key, keylen);
}

/**
 * @returns the slot of this message's key: found, or taken from the key of
 *          its probe range that CLOCK picks (that key's messages set aside
 *          as a run). Reads the range's tag words, and a slot only where
 *          the tag matches or to take it.
 */
static ks_batch_slot_t *slot_for(ks_batch_t *b, ks_topic_t *t, uint64_t h,
                                 const void *key, size_t keylen,
                                 int32_t partition)
{
        size_t           home = home_of(b, h);
        uint16_t         tag  = (uint16_t)(h >> 48);
        uint32_t        *meta = b->meta;
        size_t           take = home, ix;
        uint64_t         best = UINT64_MAX;
        ks_batch_slot_t *s;
        int              i, n;

        for (i = 0; i < KS_BATCH_PROBE; i++) {
                uint32_t m;
                uint64_t rank;
                ix = (home + (size_t)i) & b->mask;
                m  = meta[ix];
                if (!(m & KS_META_USED)) { /* the key is not further on */
                        take = ix;
                        i++;
                        break;
                }
                if ((uint16_t)(m >> KS_META_TAG_SHIFT) == tag &&
                    slot_matches(&b->slots[ix], t, tag, key, keylen,
                                 partition)) {
                        meta[ix] = m | KS_META_SEEN;
                        b->stats.found++;
                        return &b->slots[ix];
                }
                /* not counted since a newcomer last passed by first (second
                 * chance), then the fewest messages waiting */
                rank = (uint64_t)(m & KS_META_SEEN) << 32 |
                       (uint64_t)(m & KS_META_MSGS);
                if (rank < best) {
                        best = rank;
                        take = ix;
                }
        }
        for (n = i, i = 0; i < n; i++) /* the newcomer passes by */
                meta[(home + (size_t)i) & b->mask] &= ~KS_META_SEEN;
        s = &b->slots[take];
        if (s->messages || s->offer_messages) {
                ks_batch_set_aside(b, s, KS_ASIDE_MESSAGES | KS_ASIDE_OFFER);
                b->stats.evicted++;
        }
        s->t         = t;
        s->tag       = tag;
        s->partition = partition;
        s->keylen    = (uint8_t)keylen;
        s->flags     = (uint8_t)((key ? 0 : KS_SLOT_NULL) |
                             (b->flushing == 1 ? KS_SLOT_FRESH : 0));
        ks_bytes_copy_small(s->key, key, keylen);
        meta[take] = (uint32_t)tag << KS_META_TAG_SHIFT | KS_META_USED |
                     (b->flushing == 1 ? KS_META_PASS2 : 0);
        return s;
}

/**
 * @brief Sets one message aside as a run of its own, without a probe: what
 *        a newcomer evicted at once would be (ks_batch_set_aside()).
 */
static void pass_by(ks_batch_t *b, ks_topic_t *t, const void *key,
                    size_t keylen, int32_t partition, uint32_t n, uint32_t nb)
{
        ks_batch_slot_t *r = aside_run(b);
        unsigned         sampled;

        b->rng ^= b->rng << 13;
        b->rng ^= b->rng >> 7;
        b->rng ^= b->rng << 17;
        sampled =
            (b->rng >> 40) % KS_HOT_SAMPLE_ONE_IN == 0 ? KS_SLOT_SAMPLED : 0;
        *r = (ks_batch_slot_t){.t         = t,
                               .messages  = (uint16_t)n,
                               .partition = partition,
                               .bytes     = nb,
                               .keylen    = (uint8_t)keylen,
                               .flags     = (uint8_t)((key ? 0 : KS_SLOT_NULL) |
                                                  KS_SLOT_PASSED | sampled)};
        ks_bytes_copy_small(r->key, key, keylen);
        b->stats.passed_by++;
}

/** @brief Begins a window of probes. */
static void pass_window(ks_batch_t *b)
{
        b->w_probes0 = b->stats.probes;
        b->w_found0  = b->stats.found;
}

/**
 * @brief Ends a window of KS_BATCH_PASS_WINDOW probes: the table is passed
 *        by once fewer than KS_BATCH_PASS_BELOW of 256 probes find their
 *        key, and used again once KS_BATCH_PASS_ABOVE do; while it is
 *        passed by, the next KS_BATCH_PASS_SPAN messages pass it by, and
 *        then a window of them probes it again (a trial).
 */
static void pass_decide(ks_batch_t *b)
{
        uint64_t found =
            (b->stats.found - b->w_found0) * 256 / KS_BATCH_PASS_WINDOW;

        if (found < KS_BATCH_PASS_BELOW)
                b->passing = 1;
        else if (found >= KS_BATCH_PASS_ABOVE)
                b->passing = 0;
        b->pass_left = b->passing ? KS_BATCH_PASS_SPAN : 0;
        pass_window(b);
}

/**
 * @brief ks_batch_add() of @p n messages of one key at once, @p bytes each
 *        (a staged message that stands for n: ks_batch_add_sampled()); n
 *        is 1 for every other message, a constant the compiler folds.
 */
static inline void add_n(ks_batch_t *b, ks_topic_t *t, uint64_t h,
                         const void *key, size_t keylen, int32_t partition,
                         uint64_t bytes, int64_t mono_ms, uint32_t n)
{
        ks_batch_slot_t *s;
        uint64_t         all = bytes * n;
        uint32_t         nb  = all > UINT32_MAX ? UINT32_MAX : (uint32_t)all;

        b->stats.messages++;
        if (keylen > KS_BATCH_KEY_MAX) {
                ks_key_facts_t f;
                b->stats.direct++;
                ks_topic_key_facts(t, key, keylen, partition, &f);
                ks_topic_lock(t);
                ks_topic_record_run_locked(t, key, keylen, partition, &f, n,
                                           all, KS_RUN_HOT_NOW);
                ks_topic_unlock(t);
                rate_count(b, t, mono_ms, n, all); /* in order, as the rest */
                return;
        }
        if (b->pass_left && ks_topic_count_known(t)) {
                /* not while its count is unknown (ks_batch.h) */
                if (!--b->pass_left) /* a trial begins */
                        pass_window(b);
                pass_by(b, t, key, keylen, partition, n, nb);
                rate_count(b, t, mono_ms, n, all);
                return;
        }
        s = slot_for(b, t, h, key, keylen, partition);
        b->stats.probes++;
        /* a window is of probes while nothing passes by: the probes of
         * topics whose count is unknown, during a span, do not decide */
        if (!b->pass_left &&
            b->stats.probes - b->w_probes0 == KS_BATCH_PASS_WINDOW)
                pass_decide(b);
        /* a slot holds at most KS_BATCH_RUN_MAX messages, or one staged
         * message's n (<= 2^KS_STAGE_SAMPLE_SHIFT_MAX) */
        if ((s->messages && s->messages + n > KS_BATCH_RUN_MAX) ||
            nb > UINT32_MAX - s->bytes)
                ks_batch_set_aside(b, s, KS_ASIDE_MESSAGES);
        s->messages = (uint16_t)(s->messages + n);
        s->bytes += nb;
        meta_msgs(b, s);
        rate_count(b, t, mono_ms, n, all);
}

void ks_batch_add(ks_batch_t *b, ks_topic_t *t, uint64_t h, const void *key,
                  size_t keylen, int32_t partition, uint64_t bytes,
                  int64_t mono_ms)
{
        add_n(b, t, h, key, keylen, partition, bytes, mono_ms, 1);
}

void ks_batch_add_sampled(ks_batch_t *b, ks_topic_t *t, uint64_t h,
                          const void *key, size_t keylen, int32_t partition,
                          uint64_t bytes, int64_t mono_ms, unsigned shift)
{
        ks_topic_note_sampled_in(t, shift, bytes, mono_ms);
        add_n(b, t, h, key, keylen, partition, bytes, mono_ms,
              (uint32_t)1 << shift);
}
