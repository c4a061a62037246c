/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_batch_flush.c
 * @brief The key table flushed: every slot's messages analysed as runs, in
 *        slices between the drainer's collections, the hot-key offers of
 *        each topic's window after them (ks_batch.h; the order is argued
 *        in ks_batch.c's file comment).
 */
#include "ks_batch.h"

#include "ks_batch_impl.h"

void ks_batch_flush_begin(ks_batch_t *b)
{
        /* one under way is finished first: its window's offers are owed */
        while (ks_batch_flush_step(b, SIZE_MAX))
                ;
        b->flushing   = 1;
        b->f_next     = 0;
        b->flush_mark = slot_counted(b);
        b->window++;
}

int ks_batch_rotate(ks_batch_t *b, int64_t now_ms)
{
        if (b->flushing)
                return 0;
        if (!b->last_flush_ms || slot_counted(b) == b->flush_mark) {
                b->last_flush_ms = now_ms; /* nothing to flush: wait again */
                return 0;
        }
        if (now_ms - b->last_flush_ms < KS_BATCH_FLUSH_MS)
                return 0;
        b->last_flush_ms = now_ms;
        ks_batch_flush_begin(b);
        return 1;
}

/**
 * @brief The flush's first pass over slot @p s: its messages recorded in
 *        its topic's hot-key window (ks_topic_record_run_locked(): a key
 *        the summary monitors is counted there); the run of a key it does
 *        not is left in the slot for the offers. A slot taken during this
 *        pass is left for the next flush: its messages all came after this
 *        one began, and its key may have had a run in the window already.
 */
static void flush_run(ks_batch_t *b, ks_batch_hold_t *held, ks_batch_slot_t *s)
{
        ks_key_facts_t f;

        if (!s->messages || (s->flags & KS_SLOT_FRESH))
                return;
        ks_topic_key_facts(s->t, key_of(s), s->keylen, s->partition, &f);
        hold(held, s->t);
        ks_topic_window_begin_locked(s->t, b->window);
        if (ks_topic_record_run_locked(s->t, key_of(s), s->keylen, s->partition,
                                       &f, s->messages, s->bytes, 1)) {
                s->offer_messages = s->messages;
                s->offer_bytes    = s->bytes;
                b->meta[slot_ix(b, s)] |= KS_META_PASS2;
        }
        b->stats.runs++;
        s->messages = 0;
        s->bytes    = 0;
        meta_msgs(b, s);
}

/**
 * @brief The flush's second pass over slot @p s: the run the first left
 *        there offered to its topic's hot-key window; a slot taken during
 *        the first pass is an ordinary one again.
 *
 * A NULL key's run waits for the window's end instead (set aside, offer
 * only: a plain weighted add): where the partitioner hashes a NULL key as
 * the empty key, the hot-key summary knows both as one key, whose two runs
 * (two slots) must not both be offered in one window.
 */
static void flush_offer(ks_batch_t *b, ks_batch_hold_t *held,
                        ks_batch_slot_t *s)
{
        ks_key_facts_t f;

        s->flags &= (uint8_t)~KS_SLOT_FRESH;
        if (!s->offer_messages)
                return;
        if (s->flags & KS_SLOT_NULL) {
                release(
                    held); /* ks_batch_set_aside() may analyse: takes locks */
                ks_batch_set_aside(b, s, KS_ASIDE_OFFER);
                return;
        }
        ks_topic_key_facts(s->t, key_of(s), s->keylen, s->partition, &f);
        hold(held, s->t);
        ks_topic_offer_run_locked(s->t, key_of(s), s->keylen, &f,
                                  s->offer_messages, s->offer_bytes, 1);
        s->offer_messages = 0;
        s->offer_bytes    = 0;
}

int ks_batch_flush_step(ks_batch_t *b, size_t max_slots)
{
        size_t n   = b->mask + 1;
        size_t end = max_slots < n - b->f_next ? b->f_next + max_slots : n;
        ks_batch_hold_t held = {NULL, 0};

        if (!b->flushing)
                return 0;
        /* the tag words say which slots have work: the others' lines
         * are not read */
        for (; b->f_next < end; b->f_next++) {
                uint32_t *m = &b->meta[b->f_next];
                if (b->flushing == 1) {
                        if (*m & KS_META_MSGS)
                                flush_run(b, &held, &b->slots[b->f_next]);
                } else if (*m & KS_META_PASS2) {
                        *m &= ~KS_META_PASS2;
                        flush_offer(b, &held, &b->slots[b->f_next]);
                }
        }
        release(&held);
        if (b->f_next < n)
                return 1;
        if (b->flushing == 1) { /* every run recorded: now the offers */
                b->flushing = 2;
                b->f_next   = 0;
                return 1;
        }
        b->flushing = 0;
        b->stats.flushes++;
        ks_batch_end_pass(b);
        return 0;
}

void ks_batch_flush(ks_batch_t *b)
{
        ks_batch_flush_begin(b);
        while (ks_batch_flush_step(b, SIZE_MAX))
                ;
}

void ks_batch_stats(const ks_batch_t *b, ks_batch_stats_t *out)
{
        *out = b->stats;
}
