/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_stage_drain.c
 * @brief keyshift's drainer side of the staging rings: entries moved into
 *        the key table (ks_batch.h), the pause between passes, flushes on
 *        request (ks_stage_sync()), and the counters (ks_stage.h).
 */
#include "ks_stage.h"

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ks_clock.h"
#include "ks_stage_impl.h"

/** Ring entries whose table slots are fetched ahead of their counting. */
#define KS_STAGE_AHEAD 16
/** Every 256 entries read (a mask), and at the end, a pass gives the
 *  producing thread back the slots and key arena bytes read so far, so
 *  that it can stage into them before the pass ends. */
#define KS_DRAIN_RELEASE_MASK 255
_Static_assert(KS_STAGE_AHEAD <= KS_BATCH_PASS_AHEAD,
               "ks_batch_look_ahead() knows which will pass the table by");

/** @returns where long-key entry @p e's key sits in its ring's arena. */
static inline ks_arena_at_t entry_at(const ks_stage_entry_t *e)
{
        ks_arena_at_t at;

        memcpy(&at, e->key, sizeof(at));
        return at;
}

/** @returns entry @p e's key: in the entry, in @p r's arena, or NULL. */
static inline const void *entry_key(const ks_ring_t        *r,
                                    const ks_stage_entry_t *e)
{
        if (e->key_null)
                return NULL;
        return e->key_long ? r->arena + entry_at(e).off : e->key;
}

/** @brief Looks ahead at ring entry @p k: its key's place in the batch
 *         into hq[k % KS_STAGE_AHEAD], and that slot fetched
 *         (ks_batch_look_ahead(): neither for a message passing it by). */
static inline void look_ahead(ks_stage_t *s, const ks_ring_t *r,
                              const ks_stage_entry_t *ents, size_t k,
                              uint64_t *hq)
{
        const ks_stage_entry_t *e = &ents[k & (KS_STAGE_RING_ENTRIES - 1)];

        hq[k % KS_STAGE_AHEAD] = ks_batch_look_ahead(
            s->batch, e->t, entry_key(r, e), e->keylen, e->partition);
}

/** @brief Counts staged entry @p e (its key @p key, hashed @p h for the
 *         key table, staged at @p at) in the batch: as 2^shift messages
 *         when its thread was sampling. */
static inline void add_entry(ks_stage_t *s, const ks_stage_entry_t *e,
                             uint64_t h, const void *key, int64_t at)
{
        if (__builtin_expect(e->shift, 0))
                ks_batch_add_sampled(
                    s->batch, e->t, h, key, e->keylen, e->partition,
                    (uint64_t)e->keylen + e->value_len, at, e->shift);
        else
                ks_batch_add(s->batch, e->t, h, key, e->keylen, e->partition,
                             (uint64_t)e->keylen + e->value_len, at);
}

/**
 * @brief Moves @p r's overflow (entries staged while its ring was full,
 *        after the ring's) into the batch, freeing each chunk once it is
 *        emptied, up to @p head (ovf_head as read before the ring was
 *        found empty). @p ktail: the ring's key arena bytes freed, ever
 *        (the arena is taken in the order the entries were staged).
 * @returns the entries moved.
 */
static size_t collect_overflow(ks_stage_t *s, ks_ring_t *r, int64_t now,
                               size_t *ktail, size_t head)
{
        uint32_t now32 = (uint32_t)now;
        size_t tail = atomic_load_explicit(&r->ovf_tail, memory_order_relaxed);
        size_t n    = 0;

        for (; tail != head; tail++, n++) {
                size_t                  i = tail & (KS_STAGE_CHUNK_ENTRIES - 1);
                const ks_stage_entry_t *e;
                const void             *key;
                int64_t                 at;

                if (!i) { /* the next chunk: the one before it is empty */
                        ks_stage_chunk_t *next =
                            r->ovf_r
                                ? atomic_load_explicit(&r->ovf_r->next,
                                                       memory_order_acquire)
                                : atomic_load_explicit(&r->ovf_first,
                                                       memory_order_acquire);
                        if (r->ovf_r) {
                                free(r->ovf_r);
                                atomic_fetch_sub_explicit(&s->ovf_chunks, 1,
                                                          memory_order_relaxed);
                        }
                        r->ovf_r = next;
                }
                e   = &r->ovf_r->e[i];
                key = entry_key(r, e);
                at  = now - (int64_t)(uint32_t)(now32 - e->mono32);
                add_entry(s, e,
                          ks_batch_look_ahead(s->batch, e->t, key, e->keylen,
                                              e->partition),
                          key, at);
                if (e->key_long)
                        *ktail += entry_at(e).span;
                /* free space as we go */
                if ((tail & KS_DRAIN_RELEASE_MASK) == KS_DRAIN_RELEASE_MASK) {
                        atomic_store_explicit(&r->ktail, *ktail,
                                              memory_order_release);
                        atomic_store_explicit(&r->ovf_tail, tail + 1,
                                              memory_order_release);
                }
        }
        atomic_store_explicit(&r->ovf_tail, tail, memory_order_release);
        return n;
}

/**
 * @brief Moves ring @p r's staged messages into the batch, then its
 *        overflow's when the ring is empty, and frees their slots and key
 *        arena bytes as it goes. @returns how many it moved.
 * @locality the drainer thread.
 */
static size_t collect_ring(ks_stage_t *s, ks_ring_t *r, int64_t now)
{
        uint32_t now32 = (uint32_t)now;
        size_t   n     = 0;
        size_t   tail  = atomic_load_explicit(&r->tail, memory_order_relaxed);
        size_t   head  = atomic_load_explicit(&r->head, memory_order_acquire);
        size_t   ktail = atomic_load_explicit(&r->ktail, memory_order_relaxed);
        size_t   ovf_head;
        uint64_t hq[KS_STAGE_AHEAD];
        size_t   k;
        /* read once: the ring's header line is the producing
         * thread's, rewritten with every message it stages */
        const ks_stage_entry_t *ents = r->e;

        /* the slots of the next KS_STAGE_AHEAD entries are fetched
         * while earlier ones are counted */
        for (k = tail; k != head && k - tail < KS_STAGE_AHEAD; k++)
                look_ahead(s, r, ents, k, hq);
        for (; tail != head; tail++) {
                const ks_stage_entry_t *e =
                    &ents[tail & (KS_STAGE_RING_ENTRIES - 1)];
                /* entries are at most 49 days old: the low 32 bits
                 * of the age are the age */
                int64_t at = now - (int64_t)(uint32_t)(now32 - e->mono32);
                add_entry(s, e, hq[tail % KS_STAGE_AHEAD], entry_key(r, e), at);
                if (e->key_long) /* its arena bytes are free */
                        ktail += entry_at(e).span;
                if (k != head) {
                        /* entries the producing thread wrote sit in
                         * its core's cache: ask for them early */
                        __builtin_prefetch(&ents[(k + 2 * KS_STAGE_AHEAD) &
                                                 (KS_STAGE_RING_ENTRIES - 1)]);
                        look_ahead(s, r, ents, k, hq);
                        k++;
                }
                /* free space as we go */
                if ((tail & KS_DRAIN_RELEASE_MASK) == KS_DRAIN_RELEASE_MASK) {
                        atomic_store_explicit(&r->ktail, ktail,
                                              memory_order_release);
                        atomic_store_explicit(&r->tail, tail + 1,
                                              memory_order_release);
                }
                n++;
        }
        atomic_store_explicit(&r->tail, tail, memory_order_release);
        /* What was staged while the ring was full came after every
         * message in the ring then; but the thread may have staged
         * more in the ring after `head` was read here, then filled
         * it and gone on in its overflow. Those ring messages come
         * first: their long keys sit in the arena before the
         * overflow's, and the arena is freed in that order (ktail).
         * So the overflow is read only when no message is left in
         * the ring: its head read after the overflow's (a ring
         * message staged before an overflow message this pass
         * reads is then in it). Else the next pass reads the ring
         * first; the thread stages in its overflow only until
         * both are empty, so the ring does not grow meanwhile. */
        if (atomic_load_explicit(&r->ovf_tail, memory_order_relaxed) !=
                (ovf_head = atomic_load_explicit(&r->ovf_head,
                                                 memory_order_acquire)) &&
            atomic_load_explicit(&r->head, memory_order_acquire) == tail)
                n += collect_overflow(s, r, now, &ktail, ovf_head);
        atomic_store_explicit(&r->ktail, ktail, memory_order_release);
        return n;
}

/** @brief Moves every staged message into the batch. @returns how many. */
static size_t collect(ks_stage_t *s, int64_t now)
{
        size_t total = 0;
        int    n, i;

        atomic_store_explicit(&s->now_ms, now, memory_order_relaxed);
        atomic_store_explicit(
            &s->passes,
            atomic_load_explicit(&s->passes, memory_order_relaxed) + 1,
            memory_order_relaxed);
        n = atomic_load_explicit(&s->nrings, memory_order_acquire);
        for (i = 0; i < n; i++)
                total += collect_ring(s, s->rings[i], now);
        ks_batch_end_pass(s->batch);
        if (total)
                atomic_fetch_add_explicit(&s->drained, total,
                                          memory_order_relaxed);
        return total;
}

/** @brief Publishes the batch's counters for ks_stage_stats(). */
static void publish_batch_stats(ks_stage_t *s)
{
        ks_batch_stats_t b;

        ks_batch_stats(s->batch, &b);
        atomic_store_explicit(&s->batch_runs, b.runs, memory_order_relaxed);
        atomic_store_explicit(&s->batch_set_aside, b.set_aside,
                              memory_order_relaxed);
        atomic_store_explicit(&s->batch_evicted, b.evicted,
                              memory_order_relaxed);
        atomic_store_explicit(&s->batch_flushes, b.flushes,
                              memory_order_relaxed);
        atomic_store_explicit(&s->batch_direct, b.direct, memory_order_relaxed);
        atomic_store_explicit(&s->batch_probes, b.probes, memory_order_relaxed);
        atomic_store_explicit(&s->batch_found, b.found, memory_order_relaxed);
        atomic_store_explicit(&s->batch_passed_by, b.passed_by,
                              memory_order_relaxed);
}

size_t ks_stage_collect(ks_stage_t *s)
{
        int64_t now = ks_clock_mono_ms();
        /* read before the rings are: a message staged before an asker
         * asked is in the batch once they are collected */
        uint64_t asked =
            atomic_load_explicit(&s->flush_asked, memory_order_acquire);
        size_t n = collect(s, now);

        if (asked !=
                atomic_load_explicit(&s->flush_done, memory_order_relaxed) &&
            ks_stage_counts_waiting(s)) {
                /* A partition count waits for this flush: what the
                 * analysis takes before it must be a prefix of what was
                 * produced, so nothing is collected until the count is
                 * taken. (Collected between slices, a key's later message
                 * would join its slot not flushed yet and be analysed
                 * under the old count, while messages produced before it
                 * in slots already flushed wait for the new one.) The
                 * rings fill meanwhile, then their overflows. */
                ks_batch_flush(s->batch);
        } else {
                if (asked !=
                    atomic_load_explicit(&s->flush_done, memory_order_relaxed))
                        ks_batch_flush_begin(s->batch);
                else if (!ks_batch_rotate(s->batch, now))
                        goto out;
                /* analysed in slices, the rings emptied between them */
                while (ks_batch_flush_step(s->batch, KS_STAGE_FLUSH_SLICE))
                        n += collect(s, ks_clock_mono_ms());
        }
        ks_stage_counts_apply(s, asked);
        atomic_store_explicit(&s->flush_done, asked, memory_order_release);
out:
        publish_batch_stats(s);
        return n;
}

size_t ks_stage_drain(ks_stage_t *s)
{
        uint64_t asked =
            atomic_load_explicit(&s->flush_asked, memory_order_acquire);
        size_t n = collect(s, ks_clock_mono_ms());

        ks_batch_flush(s->batch);
        /* nothing is staged after the last message drained here: every
         * count waiting is taken */
        ks_stage_counts_apply(s, UINT64_MAX);
        atomic_store_explicit(&s->flush_done, asked, memory_order_release);
        publish_batch_stats(s);
        return n;
}

uint64_t ks_stage_mono_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t ks_stage_slept_ns(ks_stage_t *s, uint64_t now_ns)
{
        uint64_t from  = atomic_load(&s->sleep_from);
        uint64_t slept = atomic_load(&s->slept_ns);

        /* a pause that ended between the two loads is missed once (at
         * most KS_STAGE_IDLE_MS), and counted at the next look */
        return slept + (from && now_ns > from ? now_ns - from : 0);
}

void ks_stage_pause(ks_stage_t *s, size_t collected, int *period_ms)
{
        struct timespec until;
        uint64_t        from;
        int             kicked;

        if (collected >= KS_STAGE_RING_ENTRIES / 4)
                return;
        if (collected)
                *period_ms = KS_STAGE_BUSY_MS;
        else if (*period_ms < KS_STAGE_IDLE_MS)
                (*period_ms)++;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_nsec += (long)*period_ms * 1000000;
        if (until.tv_nsec >= 1000000000) {
                until.tv_sec++;
                until.tv_nsec -= 1000000000;
        }
        atomic_store(&s->waiting, *period_ms);
        from = ks_stage_mono_ns();
        atomic_store(&s->sleep_from, from);
        do /* a post, the deadline, or an error other than a signal */
                kicked = !sem_clockwait(&s->wake, CLOCK_MONOTONIC, &until);
        while (!kicked && errno == EINTR);
        atomic_store(&s->waiting, 0);
        atomic_fetch_add(&s->slept_ns, ks_stage_mono_ns() - from);
        atomic_store(&s->sleep_from, 0);
        while (!sem_trywait(&s->wake)) /* posts meanwhile: one wake is enough */
                ;
        if (kicked) { /* a producer's burst: stay attentive */
                atomic_fetch_add_explicit(&s->wakes, 1, memory_order_relaxed);
                *period_ms = KS_STAGE_BUSY_MS;
        }
}

int ks_stage_sync(ks_stage_t *s, int timeout_ms, const atomic_int *cancel)
{
        uint64_t ticket = atomic_fetch_add_explicit(&s->flush_asked, 1,
                                                    memory_order_acq_rel) +
                          1;
        int64_t deadline = ks_clock_mono_ms() + timeout_ms;
        long    wait_us  = KS_SYNC_POLL_MIN_US;

        for (;;) {
                struct timespec ts = {0, wait_us * 1000};
                if (atomic_load_explicit(&s->flush_done,
                                         memory_order_acquire) >= ticket)
                        return 0;
                if (ks_clock_mono_ms() > deadline ||
                    (cancel && atomic_load(cancel)))
                        return -1;
                nanosleep(&ts, NULL);
                /* a drainer kept off the CPU (SCHED_IDLE, the host busy)
                 * is not polled 5,000 times a second meanwhile */
                if (wait_us < KS_SYNC_POLL_MAX_US)
                        wait_us *= 2;
        }
}

int ks_stage_empty(ks_stage_t *s)
{
        int n = atomic_load_explicit(&s->nrings, memory_order_acquire), i;

        for (i = 0; i < n; i++)
                if (atomic_load(&s->rings[i]->head) !=
                        atomic_load(&s->rings[i]->tail) ||
                    atomic_load(&s->rings[i]->ovf_head) !=
                        atomic_load(&s->rings[i]->ovf_tail))
                        return 0;
        return 1;
}

void ks_stage_stats(ks_stage_t *s, ks_stage_stats_t *out)
{
        int n = atomic_load_explicit(&s->nrings, memory_order_acquire), i;

        memset(out, 0, sizeof(*out));
        for (i = 0; i < n; i++) {
                uint64_t o  = atomic_load(&s->rings[i]->ovf_head);
                int      sh = atomic_load(&s->rings[i]->shift_pub);
                out->staged += atomic_load(&s->rings[i]->head) + o;
                out->overflowed += o;
                out->sampled_out += atomic_load(&s->rings[i]->sampled_out);
                if (sh > out->shift_max)
                        out->shift_max = sh;
        }
        out->overflow_chunks = atomic_load(&s->ovf_chunks);
        out->skipped_full    = atomic_load(&s->skipped_full);
        out->inline_full     = atomic_load(&s->inline_full);
        out->inline_long     = atomic_load(&s->inline_long);
        out->inline_noring   = atomic_load(&s->inline_noring);
        out->drained         = atomic_load(&s->drained);
        out->wakes           = atomic_load(&s->wakes);
        out->rings           = n;
        out->batch.messages  = out->drained;
        out->batch.runs      = atomic_load(&s->batch_runs);
        out->batch.set_aside = atomic_load(&s->batch_set_aside);
        out->batch.evicted   = atomic_load(&s->batch_evicted);
        out->batch.flushes   = atomic_load(&s->batch_flushes);
        out->batch.direct    = atomic_load(&s->batch_direct);
        out->batch.probes    = atomic_load(&s->batch_probes);
        out->batch.found     = atomic_load(&s->batch_found);
        out->batch.passed_by = atomic_load(&s->batch_passed_by);
}
