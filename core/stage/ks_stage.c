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

typedef struct ks_stage_entry {
        ks_topic_t *t;
        uint32_t    mono32;    /**< coarse monotonic ms, low 32 bits */
        uint32_t    value_len; /**< clamped to UINT32_MAX */
        int32_t     partition;
        uint16_t    keylen;
        uint8_t     key_null;
        uint8_t     key_long; /**< key in the ring's arena: key[] holds its
                               *   offset and the bytes it took (ks_arena_at_t) */
        uint8_t     key[KS_STAGE_KEY_INLINE];
} ks_stage_entry_t;

/** Where a long key sits in its ring's arena (in the entry's key[]). */
typedef struct ks_arena_at {
        uint32_t off;  /**< its first byte */
        uint32_t span; /**< arena bytes it took: its length, plus the end
                        *   of the arena left unused when it did not fit */
} ks_arena_at_t;

_Static_assert(sizeof(ks_stage_entry_t) == 64, "one cache line per entry");
_Static_assert((KS_STAGE_RING_ENTRIES & (KS_STAGE_RING_ENTRIES - 1)) == 0,
               "ring size is a power of two");

typedef struct ks_ring {
        _Alignas(64) atomic_size_t head; /**< written by the owner thread */
        size_t   tail_cache;             /**< the owner's view of tail */
        uint64_t full_pass;  /**< the owner's: the drainer's pass count when
                             *   it last found the ring full */
        ks_stage_entry_t *e; /**< [KS_STAGE_RING_ENTRIES] */
        uint8_t *arena;      /**< [KS_STAGE_ARENA_BYTES], NULL until a long key;
                         *   set by the owner before it publishes the entry */
        size_t   khead;      /**< the owner's: arena bytes taken, ever */
        size_t   ktail_cache;            /**< the owner's view of ktail */
        _Alignas(64) atomic_size_t tail; /**< written by the consumer */
        atomic_size_t ktail;    /**< the consumer's: arena bytes freed, ever */
        atomic_int    orphaned; /**< its thread exited: may be adopted */
        atomic_int    detached; /**< its stage was destroyed */
        atomic_int    refs;     /**< the stage's and the owner thread's */
} ks_ring_t;

struct ks_stage {
        /* read-mostly */
        uint64_t        id;   /**< process-unique, never reused */
        pthread_mutex_t lock; /**< registration of rings */
        ks_ring_t      *rings[KS_STAGE_RINGS_MAX];
        atomic_int      nrings;
        ks_batch_t     *batch; /**< the consumer's aggregation */
        int overload_analyse;  /**< ring full: analyse inline, not skip */
        /* written by the drainer, every pass */
        _Alignas(64) atomic_int_fast64_t now_ms; /**< coarse clock */
        atomic_uint_fast64_t passes;             /**< collections begun */
        atomic_uint_fast64_t wakes; /**< pauses ended by a producer */
        atomic_uint_fast64_t drained;
        /* the batch's counters as of the consumer's last call */
        atomic_uint_fast64_t batch_runs, batch_set_aside, batch_evicted,
            batch_flushes, batch_direct, batch_probes, batch_found,
            batch_passed_by;
        atomic_uint_fast64_t flush_done; /**< the last flush_asked served */
        /* written by threads that want every staged message analysed */
        _Alignas(64) atomic_uint_fast64_t flush_asked;
        /* the drainer's pause (ks_stage_pause()): written by the drainer
         * when it pauses and resumes, read by producing threads once per
         * KS_STAGE_WAKE_EVERY messages each */
        _Alignas(64) atomic_int waiting; /**< ms of the pause under way */
        sem_t wake; /**< posted by a producing thread: sem_post() never
                     *   blocks (with a mutex, on_send could wait for a
                     *   drainer descheduled while holding it) */
        /* written by producing threads, when a message cannot be staged */
        _Alignas(64) atomic_uint_fast64_t skipped_full;
        atomic_uint_fast64_t inline_full;
        atomic_uint_fast64_t inline_long;
        atomic_uint_fast64_t inline_noring;
};

/** Slots of the key table a flush analyses between two collections (at
 *  most as many runs, ~0.2-0.5 ms of the drainer; a ring takes 2.7 ms to
 *  fill at 3 M messages/s). */
#define KS_STAGE_FLUSH_SLICE 2048

/** A producing thread wakes a drainer in an idle pause (longer than
 *  KS_STAGE_BUSY_MS) every this many messages it stages (a quarter of a
 *  ring): a burst after an idle spell is drained as it comes, not after a
 *  pause of up to KS_STAGE_IDLE_MS in which a ring fills at 1.6 M
 *  messages/s (a file piped to kcat -P lost up to a third to full rings).
 *  The check costs a load of a shared line every 2,048 messages; the wake
 *  (sem_post(): a futex call, never a wait) happens once per burst: the
 *  drainer's pause is then KS_STAGE_BUSY_MS again, which producers do not
 *  cut short. */
#define KS_STAGE_WAKE_EVERY (KS_STAGE_RING_ENTRIES / 4)

/** Messages a thread without a ring analyses inline before asking again. */
#define KS_STAGE_NORING_RETRY 4096

typedef struct ks_stage_slot {
        uint64_t    stage_id; /**< 0: free */
        ks_ring_t  *ring;     /**< NULL: none available, retry later */
        ks_topic_t *last;     /**< the topic of the last message staged */
        uint32_t    retry_in;
} ks_stage_slot_t;

typedef struct ks_stage_tls {
        ks_stage_slot_t slot[KS_STAGE_TLS_SLOTS];
} ks_stage_tls_t;

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
        sem_init(&s->wake, 0, 0);
        atomic_init(&s->waiting, 0);
        atomic_init(&s->nrings, 0);
        atomic_init(&s->now_ms, ks_topic_mono_ms());
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
                /* The owner never reads the entries of a dead stage. */
                free(r->e);
                r->e = NULL;
                atomic_store(&r->detached, 1);
                ring_unref(r);
        }
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
                    atomic_load(&o->head) == atomic_load(&o->tail)) {
                        atomic_store(&o->orphaned, 0);
                        atomic_fetch_add(&o->refs, 1);
                        o->tail_cache = atomic_load(&o->tail);
                        r             = o;
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

void ks_stage_push(ks_stage_t *s, ks_topic_t *t, const void *key, size_t keylen,
                   int32_t partition, size_t value_len)
{
        ks_ring_t        *r;
        ks_stage_entry_t *e;
        size_t            head;

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
        head = atomic_load_explicit(&r->head, memory_order_relaxed);
        if (head - r->tail_cache >= KS_STAGE_RING_ENTRIES) {
                /* found full: tail (a line the drainer writes) is looked at
                 * again only once the drainer began another pass, so that
                 * a producer faster than the drainer does not miss the
                 * cache on every message it cannot stage */
                uint64_t pass =
                    atomic_load_explicit(&s->passes, memory_order_relaxed);
                if (pass != r->full_pass)
                        r->tail_cache = atomic_load_explicit(
                            &r->tail, memory_order_acquire);
                if (head - r->tail_cache >= KS_STAGE_RING_ENTRIES) {
                        r->full_pass = pass;
                        /* the drainer fell behind: counted, not analysed
                         * (analysing here would cost the producer what
                         * keyshift exists not to cost it), unless the
                         * producer asked for exact figures */
                        if (s->overload_analyse) {
                                atomic_fetch_add_explicit(&s->inline_full, 1,
                                                          memory_order_relaxed);
                                goto record_inline;
                        }
                        atomic_fetch_add_explicit(&s->skipped_full, 1,
                                                  memory_order_relaxed);
                        ks_topic_note_unanalysed(t);
                        return;
                }
        }
        ks_stage_tls->slot[0].last = t; /* ring_for() made it slot 0 */
        e                          = &r->e[head & (KS_STAGE_RING_ENTRIES - 1)];
        e->t                       = t;
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
                if (arena_put(r, key, keylen, &at)) {
                        atomic_fetch_add_explicit(&s->inline_long, 1,
                                                  memory_order_relaxed);
                        goto record_inline;
                }
                memcpy(e->key, &at, sizeof(at));
        }
        atomic_store_explicit(&r->head, head + 1, memory_order_release);
        if (!((head + 1) & (KS_STAGE_WAKE_EVERY - 1)) &&
            atomic_load_explicit(&s->waiting, memory_order_relaxed) >
                KS_STAGE_BUSY_MS)
                wake_drainer(s);
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

/** Ring entries whose table slots are fetched ahead of their counting. */
#define KS_STAGE_AHEAD 16
_Static_assert(KS_STAGE_AHEAD <= KS_BATCH_PASS_AHEAD,
               "ks_batch_prefetch() knows which will pass the table by");

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
 *         into hq[k % KS_STAGE_AHEAD], and that slot fetched. */
static inline void look_ahead(ks_stage_t *s, const ks_ring_t *r,
                              const ks_stage_entry_t *ents, size_t k,
                              uint64_t *hq)
{
        const ks_stage_entry_t *e = &ents[k & (KS_STAGE_RING_ENTRIES - 1)];

        hq[k % KS_STAGE_AHEAD] =
            ks_batch_key_hash(e->t, entry_key(r, e), e->keylen, e->partition);
        ks_batch_prefetch(s->batch, e->t, hq[k % KS_STAGE_AHEAD]);
}

/** @brief Moves every staged message into the batch. @returns how many. */
static size_t collect(ks_stage_t *s, int64_t now)
{
        uint32_t now32 = (uint32_t)now;
        size_t   total = 0;
        int      n, i;

        atomic_store_explicit(&s->now_ms, now, memory_order_relaxed);
        atomic_store_explicit(
            &s->passes,
            atomic_load_explicit(&s->passes, memory_order_relaxed) + 1,
            memory_order_relaxed);
        n = atomic_load_explicit(&s->nrings, memory_order_acquire);
        for (i = 0; i < n; i++) {
                ks_ring_t *r = s->rings[i];
                size_t     tail =
                    atomic_load_explicit(&r->tail, memory_order_relaxed);
                size_t head =
                    atomic_load_explicit(&r->head, memory_order_acquire);
                size_t ktail =
                    atomic_load_explicit(&r->ktail, memory_order_relaxed);
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
                        int64_t at =
                            now - (int64_t)(uint32_t)(now32 - e->mono32);
                        ks_batch_add(s->batch, e->t, hq[tail % KS_STAGE_AHEAD],
                                     entry_key(r, e), e->keylen, e->partition,
                                     (uint64_t)e->keylen + e->value_len, at);
                        if (e->key_long) /* its arena bytes are free */
                                ktail += entry_at(e).span;
                        if (k != head) {
                                /* entries the producing thread wrote sit in
                                 * its core's cache: ask for them early */
                                __builtin_prefetch(
                                    &ents[(k + 2 * KS_STAGE_AHEAD) &
                                          (KS_STAGE_RING_ENTRIES - 1)]);
                                look_ahead(s, r, ents, k, hq);
                                k++;
                        }
                        if ((tail & 255) == 255) { /* free space as we go */
                                atomic_store_explicit(&r->ktail, ktail,
                                                      memory_order_release);
                                atomic_store_explicit(&r->tail, tail + 1,
                                                      memory_order_release);
                        }
                        total++;
                }
                atomic_store_explicit(&r->ktail, ktail, memory_order_release);
                atomic_store_explicit(&r->tail, tail, memory_order_release);
        }
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
        int64_t now = ks_topic_mono_ms();
        /* read before the rings are: a message staged before an asker
         * asked is in the batch once they are collected */
        uint64_t asked =
            atomic_load_explicit(&s->flush_asked, memory_order_acquire);
        size_t n = collect(s, now);

        if (asked != atomic_load_explicit(&s->flush_done, memory_order_relaxed))
                ks_batch_flush_begin(s->batch);
        else if (!ks_batch_rotate(s->batch, now))
                goto out;
        /* analysed in slices, the rings emptied between them */
        while (ks_batch_flush_step(s->batch, KS_STAGE_FLUSH_SLICE))
                n += collect(s, ks_topic_mono_ms());
        atomic_store_explicit(&s->flush_done, asked, memory_order_release);
out:
        publish_batch_stats(s);
        return n;
}

size_t ks_stage_drain(ks_stage_t *s)
{
        uint64_t asked =
            atomic_load_explicit(&s->flush_asked, memory_order_acquire);
        size_t n = collect(s, ks_topic_mono_ms());

        ks_batch_flush(s->batch);
        atomic_store_explicit(&s->flush_done, asked, memory_order_release);
        publish_batch_stats(s);
        return n;
}

void ks_stage_pause(ks_stage_t *s, size_t collected, int *period_ms)
{
        struct timespec until;
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
        do /* a post, the deadline, or an error other than a signal */
                kicked = !sem_clockwait(&s->wake, CLOCK_MONOTONIC, &until);
        while (!kicked && errno == EINTR);
        atomic_store(&s->waiting, 0);
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
        int64_t deadline = ks_topic_mono_ms() + timeout_ms;

        for (;;) {
                struct timespec ts = {0, 200 * 1000};
                if (atomic_load_explicit(&s->flush_done,
                                         memory_order_acquire) >= ticket)
                        return 0;
                if (ks_topic_mono_ms() > deadline ||
                    (cancel && atomic_load(cancel)))
                        return -1;
                nanosleep(&ts, NULL);
        }
}

int ks_stage_empty(ks_stage_t *s)
{
        int n = atomic_load_explicit(&s->nrings, memory_order_acquire), i;

        for (i = 0; i < n; i++)
                if (atomic_load(&s->rings[i]->head) !=
                    atomic_load(&s->rings[i]->tail))
                        return 0;
        return 1;
}

void ks_stage_stats(ks_stage_t *s, ks_stage_stats_t *out)
{
        int n = atomic_load_explicit(&s->nrings, memory_order_acquire), i;

        memset(out, 0, sizeof(*out));
        for (i = 0; i < n; i++)
                out->staged += atomic_load(&s->rings[i]->head);
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
