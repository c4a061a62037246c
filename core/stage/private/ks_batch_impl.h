/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_batch_impl.h
 * @brief The drainer's key table's state, shared by ks_batch.c (the table,
 *        runs set aside, passing it by) and ks_batch_flush.c (flushes);
 *        not an interface (ks_batch.h is).
 */
#ifndef KS_BATCH_IMPL_H
#define KS_BATCH_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "ks_batch.h"

/** A transparent huge page (x86-64, arm64 with 4 KiB pages). */
#define KS_HUGE_PAGE ((size_t)2 << 20)

/** Runs recorded under one hold of a topic's lock (~10-30 us). */
#define KS_BATCH_HOLD_RUNS 64

/** Millisecond stamps kept per topic and pass (more: those kept go to the
 *  topic first, in order, and the pass keeps counting). */
#define KS_BATCH_RATES 4

/** Slot flags. */
#define KS_SLOT_NULL 1  /**< the key is NULL */
#define KS_SLOT_FRESH 4 /**< taken during a flush's first pass */
/** A run of one passed by (pass_by()), and whether the hot-key summary
 *  sees it (ks_run_hot_t). */
#define KS_SLOT_PASSED 8
#define KS_SLOT_SAMPLED 16

/**
 * A slot's tag word, in the tag array beside the slots (4 B a slot, 16
 * slots a line): what a probe and the choice of a slot to take need, so
 * that a new key reads one or two lines of tags (512 KiB for 131,072
 * slots: within the L2 cache) and then only the slot it takes, instead of its
 * whole probe range of slots (8 lines of an 8 MiB table: a new key per
 * message spent ~40 % of the drainer's time waiting for them, perf). A
 * tag match is confirmed on the slot (slot_matches()).
 */
#define KS_META_TAG_SHIFT 16    /**< bits 16-31: the key hash's tag */
#define KS_META_USED (1u << 15) /**< taken once (never emptied again) */
#define KS_META_SEEN                                                           \
        (1u << 14) /**< counted since a newcomer last passed by (second
                    *   chance: CLOCK, Corbato 1968) */
#define KS_META_PASS2                                                          \
        (1u << 13) /**< a flush's second pass has work here: an offer left,
                    *   or KS_SLOT_FRESH to clear */
#define KS_META_MSGS 0x1fffu /**< the slot's messages, as slot.messages */

_Static_assert(KS_BATCH_RUN_MAX <= KS_META_MSGS, "messages fit the tag word");

/** A slot: one cache line, all a message's probe reads and writes. Also
 *  the form of a run set aside. */
typedef struct ks_batch_slot {
        ks_topic_t *t;        /**< NULL: never taken */
        uint16_t    tag;      /**< bits of ks_batch_key_hash() */
        uint16_t    messages; /**< counted, not analysed yet
                               *   (<= KS_BATCH_RUN_MAX) */
        int32_t     partition;
        uint32_t    bytes;          /**< their key + value bytes */
        uint32_t    offer_bytes;    /**< a run recorded in the flush's first
                                  *   pass, left for its offers */
        uint16_t    offer_messages; /**< 0: none */
        uint8_t     keylen;
        uint8_t     flags; /**< KS_SLOT_* */
        uint8_t     key[KS_BATCH_KEY_MAX];
} ks_batch_slot_t;

_Static_assert(sizeof(ks_batch_slot_t) == 64, "one cache line a slot");
_Static_assert(KS_BATCH_KEY_MAX <= UINT8_MAX, "keylen is a byte");
_Static_assert(KS_BATCH_RUN_MAX <= UINT16_MAX, "messages are 16 bits");

/** Messages of one topic at one millisecond stamp. */
typedef struct ks_batch_rate {
        int64_t  mono_ms;
        uint64_t messages, bytes;
} ks_batch_rate_t;

/** A topic's rates counted in the pass. */
typedef struct ks_batch_topic {
        ks_topic_t     *t;
        int             nrates;
        ks_batch_rate_t rates[KS_BATCH_RATES];
} ks_batch_topic_t;

struct ks_batch {
        ks_batch_slot_t *slots; /**< [mask + 1] */
        uint32_t        *meta;  /**< [mask + 1] tag words (KS_META_*) */
        size_t           mask;  /**< slots - 1 (a power of two) */
        /* runs set aside, analysed by ks_batch_end_pass() (after the
         * offers of a flush under way) */
        size_t          nevicted;
        ks_batch_slot_t evicted[KS_BATCH_EVICTED];
        /* the pass's rates */
        int ntopics;
        int last_ix; /**< topic of the previous message */
        /** the rates' entry the previous message was counted in (NULL:
         *  none since the pass's rates were added) and its topic: the
         *  next message of that topic and millisecond is counted there
         *  without a look (rate_count()) */
        ks_batch_rate_t *last_rate;
        ks_topic_t      *last_rate_t;
        ks_batch_topic_t topics[KS_BATCH_TOPICS];
        /* the flush under way */
        int      flushing;      /**< 0: none; 1: runs; 2: hot-key offers */
        size_t   f_next;        /**< next slot of the pass */
        uint64_t window;        /**< the flush's number, from 1: its hot-key
                            *   windows (ks_topic_window_begin_locked()) */
        int64_t  last_flush_ms; /**< ks_batch_rotate()'s last; 0: none */
        uint64_t flush_mark;    /**< slot_counted() when the last flush
                              *   began */
        /* passing the table by (pass_by(), pass_decide()): the mode, the
         * messages to pass by before the next trial window, and
         * stats.probes and .found when the window under way began */
        int      passing;
        uint32_t pass_left;
        uint64_t w_probes0, w_found0;
        /* which runs of one passed by the hot-key summary sees: a random
         * one in KS_HOT_SAMPLE_ONE_IN (xorshift64, Marsaglia 2003; never
         * a function of the key, so every key is sampled alike) */
        uint64_t         rng;
        ks_batch_stats_t stats;
};

/** @returns the index of table slot @p s. */
static inline size_t slot_ix(const ks_batch_t *b, const ks_batch_slot_t *s)
{
        return (size_t)(s - b->slots);
}

/** @brief Writes table slot @p s's message count into its tag word. */
static inline void meta_msgs(ks_batch_t *b, const ks_batch_slot_t *s)
{
        uint32_t *m = &b->meta[slot_ix(b, s)];

        *m = (*m & ~KS_META_MSGS) | s->messages;
}

/** @returns the key of slot (or run) @p s, NULL for a NULL key. */
static inline const void *key_of(const ks_batch_slot_t *s)
{
        return s->flags & KS_SLOT_NULL ? NULL : s->key;
}

/** The topic lock a run of the drainer's holds across runs of one topic. */
typedef struct ks_batch_hold {
        ks_topic_t *t;    /**< NULL: none held */
        unsigned    runs; /**< recorded under it since it was taken */
} ks_batch_hold_t;

/** @brief Takes @p t's lock for one more run: the one held is kept when
 *         it is @p t's, for at most KS_BATCH_HOLD_RUNS runs, so that an
 *         acknowledgement (librdkafka's broker thread) or a snapshot
 *         waits for tens of microseconds at most. */
static inline void hold(ks_batch_hold_t *h, ks_topic_t *t)
{
        if (h->t != t || h->runs == KS_BATCH_HOLD_RUNS) {
                if (h->t)
                        ks_topic_unlock(h->t);
                ks_topic_lock(h->t = t);
                h->runs = 0;
        }
        h->runs++;
}

/** @brief Releases the lock @p h holds, if any. */
static inline void release(ks_batch_hold_t *h)
{
        if (h->t)
                ks_topic_unlock(h->t);
        h->t = NULL;
}

/** What set_aside() moves out of a slot. */
#define KS_ASIDE_MESSAGES 1 /**< its messages not analysed yet */
#define KS_ASIDE_OFFER 2    /**< the run a flush left for its offers */

/**
 * @brief Sets @p what of slot @p s aside as a run (KS_ASIDE_*), the rest
 *        staying in the slot (ks_batch.c).
 * @locks none held (analysing takes topics' locks).
 */
void ks_batch_set_aside(ks_batch_t *b, ks_batch_slot_t *s, unsigned what);

/** @returns the messages counted in slots so far (not analysed alone). */
static inline uint64_t slot_counted(const ks_batch_t *b)
{
        return b->stats.messages - b->stats.direct;
}

#endif /* KS_BATCH_IMPL_H */
