/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_stage.c
 * @brief Per-thread staging rings (see ks_stage.h).
 *
 * Memory ordering: the owner thread writes an entry, then stores `head`
 * with release; the consumer loads `head` with acquire, reads the entries,
 * then stores `tail` with release; the owner loads `tail` with acquire
 * only when its cached view says the ring is full. A ring's header (the
 * indices, the reference count) is separate from its entries so that a
 * thread that outlives its producer keeps only the header: the stage frees
 * the entries when it is destroyed, and the owner never touches them again
 * (it can no longer push to a destroyed stage).
 */
#include "ks_stage.h"

#include "ks_batch.h"
#include "ks_bytes.h"

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ks_clock.h"
#include "ks_hash.h"
#include "ks_stage_impl.h"

_Static_assert(KS_STAGE_RINGS_MAX <= KS_TOPIC_SAMPLE_RINGS,
               "a topic has a sampled-out slot for every ring");

/* initial-exec: one pointer in the static TLS block, read without a call to
 * __tls_get_addr() on every message although the plugin is dlopen()ed
 * (glibc keeps surplus static TLS for such libraries) */
static _Thread_local ks_stage_tls_t *ks_stage_tls
    __attribute__((tls_model("initial-exec")));
static pthread_key_t        ks_stage_key;
static pthread_once_t       ks_stage_key_once = PTHREAD_ONCE_INIT;
static atomic_uint_fast64_t ks_stage_next_id  = 1;

static void ring_unref(ks_ring_t *r)
{
        if (atomic_fetch_sub(&r->refs, 1) == 1) {
                free(r->e);
                free(r->arena);
                free(r);
        }
}

/**
 * @brief pthread key destructor: the exiting thread lets go of its rings;
 *        each may be adopted by a new thread once drained.
 * @locality the exiting application thread.
 */
static void tls_release(void *arg)
{
        ks_stage_tls_t *l = arg;
        int             i;

        for (i = 0; i < KS_STAGE_TLS_SLOTS; i++) {
                ks_ring_t *r = l->slot[i].ring;
                if (!r)
                        continue;
                atomic_store_explicit(&r->orphaned, 1, memory_order_release);
                ring_unref(r);
        }
        free(l);
        ks_stage_tls = NULL;
}

static void key_create(void)
{
        pthread_key_create(&ks_stage_key, tls_release);
}

/** @brief Frees the chunks of @p r's overflow that the drainer has not
 *         freed (those it has not emptied, and the one it reads). */
static void overflow_free(ks_ring_t *r)
{
        ks_stage_chunk_t *c = r->ovf_r ? r->ovf_r : atomic_load(&r->ovf_first);

        while (c) {
                ks_stage_chunk_t *next = atomic_load(&c->next);
                free(c);
                c = next;
        }
        r->ovf_r = r->ovf_w = NULL;
        atomic_store(&r->ovf_first, NULL);
}

ks_stage_t *ks_stage_new(size_t batch_bytes)
{
        ks_stage_t *s = calloc(1, sizeof(*s));

        if (!s)
                return NULL;
        if (!(s->batch = ks_batch_new(batch_bytes))) {
                free(s);
                return NULL;
        }
        pthread_once(&ks_stage_key_once, key_create);
        s->id = atomic_fetch_add(&ks_stage_next_id, 1);
        pthread_mutex_init(&s->lock, NULL);
        pthread_mutex_init(&s->counts_lock, NULL);
        sem_init(&s->wake, 0, 0);
        atomic_init(&s->waiting, 0);
        atomic_init(&s->nrings, 0);
        atomic_init(&s->now_ms, ks_clock_mono_ms());
        atomic_init(&s->skipped_full, 0);
        atomic_init(&s->inline_full, 0);
        atomic_init(&s->inline_long, 0);
        atomic_init(&s->inline_noring, 0);
        atomic_init(&s->passes, 0);
        atomic_init(&s->wakes, 0);
        atomic_init(&s->drained, 0);
        atomic_init(&s->batch_runs, 0);
        atomic_init(&s->batch_set_aside, 0);
        atomic_init(&s->batch_evicted, 0);
        atomic_init(&s->batch_flushes, 0);
        atomic_init(&s->batch_direct, 0);
        atomic_init(&s->batch_probes, 0);
        atomic_init(&s->batch_found, 0);
        atomic_init(&s->batch_passed_by, 0);
        atomic_init(&s->flush_done, 0);
        atomic_init(&s->flush_asked, 0);
        atomic_init(&s->ovf_chunks, 0);
        s->force_shift = -1;
        return s;
}

void ks_stage_destroy(ks_stage_t *s)
{
        int i, n;

        if (!s)
                return;
        n = atomic_load(&s->nrings);
        for (i = 0; i < n; i++) {
                ks_ring_t *r = s->rings[i];
                /* The owner never reads the entries of a dead stage, nor
                 * its overflow. */
                free(r->e);
                r->e = NULL;
                overflow_free(r);
                atomic_store(&r->detached, 1);
                ring_unref(r);
        }
        ks_stage_counts_free(s);
        pthread_mutex_destroy(&s->counts_lock);
        pthread_mutex_destroy(&s->lock);
        sem_destroy(&s->wake);
        ks_batch_destroy(s->batch);
        free(s);
}

/**
 * @brief Gives the calling thread a ring of @p s: an orphaned one that is
 *        drained, or a new one. @returns it (with the thread's reference),
 *        or NULL when KS_STAGE_RINGS_MAX are in use or on ENOMEM.
 * @locks s->lock (taken here).
 */
static ks_ring_t *ring_register(ks_stage_t *s)
{
        ks_ring_t *r = NULL;
        int        n, i;

        pthread_mutex_lock(&s->lock);
        n = atomic_load(&s->nrings);
        for (i = 0; i < n && !r; i++) {
                ks_ring_t *o = s->rings[i];
                if (atomic_load_explicit(&o->orphaned, memory_order_acquire) &&
                    atomic_load(&o->head) == atomic_load(&o->tail) &&
                    atomic_load(&o->ovf_head) == atomic_load(&o->ovf_tail)) {
                        atomic_store(&o->orphaned, 0);
                        atomic_fetch_add(&o->refs, 1);
                        o->tail_cache = atomic_load(&o->tail);
                        o->ovf_active = 0;
                        /* a new thread's own load decides its sampling,
                         * not the one that left the ring (drained: no
                         * backlog) */
                        o->shift =
                            (uint8_t)(s->force_shift > 0 ? s->force_shift : 0);
                        o->backlog_last = 0;
                        atomic_store_explicit(&o->shift_pub, o->shift,
                                              memory_order_relaxed);
                        r = o;
                }
        }
        if (!r && n < KS_STAGE_RINGS_MAX &&
            (r = aligned_alloc(64, sizeof(*r)))) {
                memset(r, 0, sizeof(*r));
                r->e = aligned_alloc(64, KS_STAGE_RING_ENTRIES * sizeof(*r->e));
                if (!r->e) {
                        free(r);
                        r = NULL;
                } else {
                        atomic_init(&r->head, 0);
                        atomic_init(&r->tail, 0);
                        atomic_init(&r->ktail, 0);
                        atomic_init(&r->ovf_head, 0);
                        atomic_init(&r->sampled_out, 0);
                        atomic_init(&r->shift_pub,
                                    s->force_shift > 0 ? s->force_shift : 0);
                        r->idx = (uint8_t)n;
                        /* a seed of its own (xorshift64: never 0) */
                        {
                                uint64_t seed[2] = {s->id, (uint64_t)n};
                                r->rng = ks_hash_murmur64a(seed, sizeof(seed),
                                                           0x73616d706c65ULL) |
                                         1;
                        }
                        r->shift =
                            s->force_shift > 0 ? (uint8_t)s->force_shift : 0;
                        atomic_init(&r->ovf_tail, 0);
                        atomic_init(&r->ovf_first, NULL);
                        atomic_init(&r->orphaned, 0);
                        atomic_init(&r->detached, 0);
                        atomic_init(&r->refs, 2); /* stage + thread */
                        s->rings[n] = r;
                        atomic_store_explicit(&s->nrings, n + 1,
                                              memory_order_release);
                }
        }
        pthread_mutex_unlock(&s->lock);
        return r;
}

/**
 * @brief The slow path of ring_for(): thread-local slots set up, slots of
 *        destroyed stages released, a ring registered on first use.
 * @locality application thread.
 */
static ks_ring_t *ring_for_slow(ks_stage_t *s)
{
        ks_stage_tls_t *l = ks_stage_tls;
        ks_stage_slot_t tmp;
        int             i, found = -1, free_slot = -1, ringless = -1;

        if (!l) {
                if (!(l = calloc(1, sizeof(*l))))
                        return NULL;
                ks_stage_tls = l;
                pthread_setspecific(ks_stage_key, l);
        }
        for (i = 0; i < KS_STAGE_TLS_SLOTS; i++) {
                ks_stage_slot_t *sl = &l->slot[i];
                if (sl->stage_id == s->id) {
                        found = i;
                        continue;
                }
                if (sl->ring && atomic_load(&sl->ring->detached)) {
                        ring_unref(sl->ring);
                        memset(sl, 0, sizeof(*sl));
                }
                if (!sl->stage_id && free_slot < 0)
                        free_slot = i;
                else if (sl->stage_id && !sl->ring && ringless < 0)
                        ringless = i;
        }
        if (found < 0) {
                /* else a slot that holds no ring (its stage had none to
                 * give, and may be gone: nothing tells): that stage only
                 * asks for a ring again sooner */
                if (free_slot < 0)
                        free_slot = ringless;
                if (free_slot < 0)
                        return NULL; /* more producers than slots */
                found = free_slot;
                memset(&l->slot[found], 0, sizeof(l->slot[found]));
                l->slot[found].stage_id = s->id;
        }
        if (!l->slot[found].ring) {
                if (l->slot[found].retry_in) {
                        l->slot[found].retry_in--;
                        return NULL;
                }
                if (!(l->slot[found].ring = ring_register(s))) {
                        l->slot[found].retry_in = KS_STAGE_NORING_RETRY;
                        return NULL;
                }
        }
        /* Most recently used first: the fast path checks slot 0 only. */
        tmp            = l->slot[0];
        l->slot[0]     = l->slot[found];
        l->slot[found] = tmp;
        return l->slot[0].ring;
}

/** @returns the calling thread's ring of @p s, or NULL. */
static inline ks_ring_t *ring_for(ks_stage_t *s)
{
        ks_stage_tls_t *l = ks_stage_tls;

        if (l && l->slot[0].stage_id == s->id && l->slot[0].ring)
                return l->slot[0].ring;
        return ring_for_slow(s);
}

/**
 * @brief Copies a long key into @p r's arena (allocated on first use),
 *        contiguous: when it does not fit before the arena's end, from its
 *        start, the end left unused. @returns 0 with @p at set, or -1 when
 *        the arena is full (the drainer frees it as it consumes entries)
 *        or cannot be allocated.
 * @locality the ring's owner thread.
 */
static int arena_put(ks_ring_t *r, const void *key, size_t keylen,
                     ks_arena_at_t *at)
{
        size_t pos = r->khead % KS_STAGE_ARENA_BYTES;
        size_t gap = pos + keylen > KS_STAGE_ARENA_BYTES
                         ? KS_STAGE_ARENA_BYTES - pos
                         : 0;
        size_t end = r->khead + gap + keylen; /* khead once it is taken */

        if (!r->arena && !(r->arena = malloc(KS_STAGE_ARENA_BYTES)))
                return -1;
        if (end - r->ktail_cache > KS_STAGE_ARENA_BYTES) {
                r->ktail_cache =
                    atomic_load_explicit(&r->ktail, memory_order_acquire);
                if (end - r->ktail_cache > KS_STAGE_ARENA_BYTES)
                        return -1;
        }
        at->off  = (uint32_t)((pos + gap) % KS_STAGE_ARENA_BYTES);
        at->span = (uint32_t)(gap + keylen);
        memcpy(r->arena + at->off, key, keylen);
        r->khead += at->span;
        return 0;
}

/** @brief Ends the drainer's pause (ks_stage_pause()) now: a post, which
 *         never blocks (a futex wake only when the drainer waits).
 *  @locality a producing thread. @locks none. */
static void wake_drainer(ks_stage_t *s)
{
        sem_post(&s->wake);
}

/**
 * @brief Writes a message's fields into entry @p e of @p r (a ring slot or
 *        an overflow slot). @returns 0, or -1 when its long key meets a
 *        full key arena (the caller analyses it inline).
 * @locality the ring's owner thread.
 */
static inline int entry_fill(ks_stage_t *s, ks_ring_t *r, ks_stage_entry_t *e,
                             ks_topic_t *t, const void *key, size_t keylen,
                             int32_t partition, size_t value_len)
{
        e->t     = t;
        e->shift = r->shift;
        e->mono32 =
            (uint32_t)atomic_load_explicit(&s->now_ms, memory_order_relaxed);
        e->value_len =
            value_len > UINT32_MAX ? UINT32_MAX : (uint32_t)value_len;
        e->partition = partition;
        e->keylen    = (uint16_t)keylen;
        e->key_null  = key == NULL;
        e->key_long  = keylen > KS_STAGE_KEY_INLINE;
        if (!e->key_long) {
                ks_bytes_copy_small(e->key, key, keylen);
        } else {
                ks_arena_at_t at;
                if (arena_put(r, key, keylen, &at))
                        return -1;
                memcpy(e->key, &at, sizeof(at));
        }
        return 0;
}

/** @brief Wakes a drainer in an idle pause once per KS_STAGE_WAKE_EVERY
 *         messages staged (@p staged: this ring's or overflow's count). */
static inline void maybe_wake(ks_stage_t *s, size_t staged)
{
        if (!(staged & (KS_STAGE_WAKE_EVERY - 1)) &&
            atomic_load_explicit(&s->waiting, memory_order_relaxed) >
                KS_STAGE_BUSY_MS)
                wake_drainer(s);
}

/**
 * @brief Stages a message in @p r's overflow: a chain of chunks taken
 *        within the stage's budget (ks_stage_set_overflow()), which the
 *        drainer frees as it empties them.
 * @returns 0; -1 when the budget is spent (or ENOMEM); -2 when a long key
 *          meets a full key arena.
 * @locality the ring's owner thread.
 */
static int overflow_put(ks_stage_t *s, ks_ring_t *r, ks_topic_t *t,
                        const void *key, size_t keylen, int32_t partition,
                        size_t value_len)
{
        size_t pos = atomic_load_explicit(&r->ovf_head, memory_order_relaxed);

        if (pos == r->ovf_w_end) { /* the chunk written is full: another */
                ks_stage_chunk_t *c = NULL;
                if (atomic_fetch_add_explicit(&s->ovf_chunks, 1,
                                              memory_order_relaxed) >=
                        s->ovf_chunks_max ||
                    !(c = aligned_alloc(64, sizeof(*c)))) {
                        atomic_fetch_sub_explicit(&s->ovf_chunks, 1,
                                                  memory_order_relaxed);
                        return -1;
                }
                atomic_init(&c->next, NULL);
                /* published with the entry that follows: ovf_head's
                 * release store */
                if (r->ovf_w)
                        atomic_store_explicit(&r->ovf_w->next, c,
                                              memory_order_relaxed);
                else
                        atomic_store_explicit(&r->ovf_first, c,
                                              memory_order_relaxed);
                r->ovf_w = c;
                r->ovf_w_end += KS_STAGE_CHUNK_ENTRIES;
        }
        if (entry_fill(s, r, &r->ovf_w->e[pos & (KS_STAGE_CHUNK_ENTRIES - 1)],
                       t, key, keylen, partition, value_len))
                return -2;
        atomic_store_explicit(&r->ovf_head, pos + 1, memory_order_release);
        maybe_wake(s, pos + 1);
        return 0;
}

/**
 * @brief ks_stage_push()'s path when @p r was found full, or its overflow
 *        is in use. Once the drainer began another pass since the last
 *        look, its tail (a line the drainer writes) is read again, so that
 *        a producer faster than the drainer does not miss the cache on
 *        every message. @returns 0 when the message was staged (in the
 *        ring's overflow), 1 when it is to be analysed inline, -1 when it
 *        was left unanalysed.
 */
static int push_full(ks_stage_t *s, ks_ring_t *r, size_t head, ks_topic_t *t,
                     const void *key, size_t keylen, int32_t partition,
                     size_t value_len)
{
        uint64_t pass = atomic_load_explicit(&s->passes, memory_order_relaxed);

        if (pass != r->full_pass) {
                size_t tail =
                    atomic_load_explicit(&r->tail, memory_order_acquire);
                if (!r->ovf_active) {
                        r->tail_cache = tail;
                } else if (tail == head &&
                           atomic_load_explicit(&r->ovf_tail,
                                                memory_order_acquire) ==
                               atomic_load_explicit(&r->ovf_head,
                                                    memory_order_relaxed)) {
                        r->ovf_active = 0; /* all taken: the ring again */
                        r->tail_cache = tail;
                }
        }
        if (!r->ovf_active && head - r->tail_cache < KS_STAGE_RING_ENTRIES)
                return 2; /* space in the ring after all */
        r->full_pass = pass;
        switch (overflow_put(s, r, t, key, keylen, partition, value_len)) {
        case 0:
                /* the ring stays "full" to the fast path until the drainer
                 * has taken the overflow: messages keep their order */
                r->ovf_active = 1;
                r->tail_cache = head - KS_STAGE_RING_ENTRIES;
                return 0;
        case -2:
                atomic_fetch_add_explicit(&s->inline_long, 1,
                                          memory_order_relaxed);
                return 1;
        }
        /* the drainer fell behind by more than the overflow holds: counted,
         * not analysed (analysing here would cost the producer what
         * keyshift exists not to cost it), unless the producer asked for
         * exact figures */
        if (s->overload_analyse) {
                atomic_fetch_add_explicit(&s->inline_full, 1,
                                          memory_order_relaxed);
                return 1;
        }
        atomic_fetch_add_explicit(&s->skipped_full, 1, memory_order_relaxed);
        ks_topic_note_unanalysed(t);
        return -1;
}

/**
 * @brief Once per KS_STAGE_SAMPLE_EVERY messages a thread is given: its
 *        sampling follows its backlog (the entries of its ring and of its
 *        overflow the drainer has not taken). Under pressure (the overflow
 *        seven eighths spent, or with none to spend the ring three quarters full)
 *        and a backlog not shrinking, it stages half as many messages
 *        again (up to 1 in 2^KS_STAGE_SAMPLE_SHIFT_MAX); with no overflow
 *        in use and its ring under an eighth full, twice as many again,
 *        until it stages every message. The overflow alone absorbs what a
 *        drainer kept off the CPU for a while leaves (exact figures);
 *        sampling starts only when that does not suffice.
 * @locality the ring's owner thread.
 */
static void sample_adjust(ks_stage_t *s, ks_ring_t *r, size_t head)
{
        size_t backlog =
            head - atomic_load_explicit(&r->tail, memory_order_acquire);
        int pressed;

        if (s->force_shift >= 0) {
                r->shift = (uint8_t)s->force_shift;
                atomic_store_explicit(&r->shift_pub, r->shift,
                                      memory_order_relaxed);
                return;
        }
        if (s->overload_analyse) /* exact figures: the producer pays */
                return;
        if (r->ovf_active)
                backlog +=
                    atomic_load_explicit(&r->ovf_head, memory_order_relaxed) -
                    atomic_load_explicit(&r->ovf_tail, memory_order_acquire);
        pressed = s->ovf_chunks_max
                      ? r->ovf_active &&
                            8 * atomic_load_explicit(&s->ovf_chunks,
                                                     memory_order_relaxed) >=
                                7 * s->ovf_chunks_max
                      : backlog >= KS_STAGE_RING_ENTRIES / 4 * 3;
        if (pressed && backlog >= r->backlog_last &&
            r->shift < KS_STAGE_SAMPLE_SHIFT_MAX)
                r->shift++;
        else if (!r->ovf_active && backlog < KS_STAGE_RING_ENTRIES / 8 &&
                 r->shift)
                r->shift--;
        r->backlog_last = backlog;
        atomic_store_explicit(&r->shift_pub, r->shift, memory_order_relaxed);
}

/** @returns whether @p r, sampling, stages this message: probability
 *           2^-shift, independently of the message (its key, its time). */
static inline int sample_keep(ks_ring_t *r)
{
        r->rng ^= r->rng << 13;
        r->rng ^= r->rng >> 7;
        r->rng ^= r->rng << 17;
        return !(r->rng >> (64 - r->shift));
}

void ks_stage_push(ks_stage_t *s, ks_topic_t *t, const void *key, size_t keylen,
                   int32_t partition, size_t value_len)
{
        ks_ring_t *r;
        size_t     head;

        if (keylen > KS_STAGE_KEY_LONG_MAX) {
                atomic_fetch_add_explicit(&s->inline_long, 1,
                                          memory_order_relaxed);
                goto record_inline;
        }
        if (!(r = ring_for(s))) {
                atomic_fetch_add_explicit(&s->inline_noring, 1,
                                          memory_order_relaxed);
                goto record_inline;
        }
        ks_stage_tls->slot[0].last = t; /* ring_for() made it slot 0 */
        head = atomic_load_explicit(&r->head, memory_order_relaxed);
        if (__builtin_expect(!(++r->seen & (KS_STAGE_SAMPLE_EVERY - 1)), 0))
                sample_adjust(s, r, head);
        if (__builtin_expect(r->shift, 0) && !sample_keep(r)) {
                /* counted exactly in its topic, not analysed: the staged
                 * ones stand for it (entry_fill(): their shift) */
                ks_topic_note_sampled_out(t, r->idx,
                                          (uint64_t)keylen + value_len);
                atomic_store_explicit(
                    &r->sampled_out,
                    atomic_load_explicit(&r->sampled_out,
                                         memory_order_relaxed) +
                        1,
                    memory_order_relaxed);
                return;
        }
        if (head - r->tail_cache >= KS_STAGE_RING_ENTRIES) {
                switch (push_full(s, r, head, t, key, keylen, partition,
                                  value_len)) {
                case 0:
                case -1:
                        return;
                case 1:
                        goto record_inline;
                }
        }
        if (entry_fill(s, r, &r->e[head & (KS_STAGE_RING_ENTRIES - 1)], t, key,
                       keylen, partition, value_len)) {
                atomic_fetch_add_explicit(&s->inline_long, 1,
                                          memory_order_relaxed);
                goto record_inline;
        }
        atomic_store_explicit(&r->head, head + 1, memory_order_release);
        maybe_wake(s, head + 1);
        /* the entry written a few messages from now was last read by the
         * drainer on its core: ask for it for writing now, so the store
         * does not wait for it then */
        __builtin_prefetch(&r->e[(head + 4) & (KS_STAGE_RING_ENTRIES - 1)], 1);
        return;

record_inline:
        ks_topic_record(t, key, keylen, partition, value_len);
}

size_t ks_stage_batch_bytes(const ks_stage_t *s)
{
        return ks_batch_bytes(s->batch);
}

void ks_stage_set_overload(ks_stage_t *s, int analyse)
{
        s->overload_analyse = analyse;
}

void ks_stage_force_sampling(ks_stage_t *s, int shift)
{
        s->force_shift = shift < 0 ? -1
                         : shift > KS_STAGE_SAMPLE_SHIFT_MAX
                             ? KS_STAGE_SAMPLE_SHIFT_MAX
                             : shift;
}

void ks_stage_set_overflow(ks_stage_t *s, size_t bytes)
{
        s->ovf_chunks_max = bytes / sizeof(ks_stage_chunk_t);
}

ks_topic_t *ks_stage_last_topic(ks_stage_t *s, const char *name)
{
        ks_stage_tls_t *l = ks_stage_tls;

        /* a name comparison, not the rkt's address: handles are freed and
         * their addresses reused, a topic name maps to one topic for the
         * producer's whole life (the registry never removes one) */
        if (l && l->slot[0].stage_id == s->id && l->slot[0].last &&
            !strcmp(ks_topic_name(l->slot[0].last), name))
                return l->slot[0].last;
        return NULL;
}
