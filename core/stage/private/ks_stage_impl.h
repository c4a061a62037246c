/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_stage_impl.h
 * @brief The staging rings' layout, shared by ks_stage.c (the producing
 *        threads' side: rings, entries, the key arena) and
 *        ks_stage_drain.c (keyshift's drainer: collection, pauses,
 *        flushes on request); not an interface (ks_stage.h is).
 */
#ifndef KS_STAGE_IMPL_H
#define KS_STAGE_IMPL_H

#include <semaphore.h>
#include <stdatomic.h>
#include <stdint.h>

#include "ks_batch.h"
#include "ks_stage.h"

typedef struct ks_stage_entry {
        ks_topic_t *t;
        uint32_t    mono32;    /**< coarse monotonic ms, low 32 bits */
        uint32_t    value_len; /**< clamped to UINT32_MAX */
        int32_t     partition;
        uint16_t    keylen;
        uint8_t     key_null : 1;
        uint8_t     key_long : 1; /**< key in the ring's arena: key[] holds its
                                   *   offset and the bytes it took
                                   *   (ks_arena_at_t) */
        uint8_t     shift; /**< staged while its thread sampled (ks_stage.h): it
                        *   stands for 2^shift messages; 0: for itself */
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

/** A block of a ring's overflow (ks_stage.h): entries staged while the
 *  ring was full, linked in the order they were written. */
typedef struct ks_stage_chunk {
        _Alignas(64) _Atomic(struct ks_stage_chunk *) next; /**< set by the
                                 * owner before it publishes the next
                                 * chunk's first entry */
        _Alignas(64) ks_stage_entry_t e[KS_STAGE_CHUNK_ENTRIES];
} ks_stage_chunk_t;

_Static_assert((KS_STAGE_CHUNK_ENTRIES & (KS_STAGE_CHUNK_ENTRIES - 1)) == 0,
               "chunk size is a power of two");

typedef struct ks_ring {
        _Alignas(64) atomic_size_t head; /**< written by the owner thread */
        size_t   tail_cache;             /**< the owner's view of tail */
        uint64_t full_pass;  /**< the owner's: the drainer's pass count when
                             *   it last found the ring full */
        ks_stage_entry_t *e; /**< [KS_STAGE_RING_ENTRIES] */
        uint8_t *arena;      /**< [KS_STAGE_ARENA_BYTES], NULL until a long key;
                         *   set by the owner before it publishes the entry */
        size_t   khead;      /**< the owner's: arena bytes taken, ever */
        /* sampling under overload (ks_stage.h), the owner's */
        uint32_t seen;         /**< messages it was given, ever (mod 2^32) */
        uint8_t  shift;        /**< stages 1 message in 2^shift */
        uint8_t  idx;          /**< its index in the stage's rings */
        uint64_t rng;          /**< xorshift64 state, never 0 */
        size_t   backlog_last; /**< its backlog at the last look */
        atomic_uint_fast64_t sampled_out; /**< given but not staged, ever */
        atomic_int           shift_pub;   /**< shift, for ks_stage_stats() */
        size_t               ktail_cache; /**< the owner's view of ktail */
        /* the overflow, the owner's side: while `ovf_active`, every
         * message goes to the overflow (tail_cache then says "full"), until
         * the drainer has taken all of it and the ring is empty again: the
         * drainer reads the ring first, then the overflow, so messages are
         * analysed in the order they were staged */
        int                         ovf_active;
        ks_stage_chunk_t           *ovf_w;     /**< the chunk being written */
        size_t                      ovf_w_end; /**< ovf_head where it ends */
        atomic_size_t               ovf_head;  /**< overflow entries, ever */
        _Atomic(ks_stage_chunk_t *) ovf_first; /**< the first chunk ever */
        _Alignas(64) atomic_size_t tail;       /**< written by the consumer */
        atomic_size_t     ovf_tail; /**< the consumer's: overflow entries
                                     *   taken, ever */
        ks_stage_chunk_t *ovf_r;    /**< the consumer's: the chunk being read
                                     *   (it frees the ones before it) */
        atomic_size_t     ktail; /**< the consumer's: arena bytes freed, ever */
        atomic_int        orphaned; /**< its thread exited: may be adopted */
        atomic_int        detached; /**< its stage was destroyed */
        atomic_int        refs;     /**< the stage's and the owner thread's */
} ks_ring_t;

struct ks_stage {
        /* read-mostly */
        uint64_t        id;   /**< process-unique, never reused */
        pthread_mutex_t lock; /**< registration of rings */
        ks_ring_t      *rings[KS_STAGE_RINGS_MAX];
        atomic_int      nrings;
        ks_batch_t     *batch;   /**< the consumer's aggregation */
        int    overload_analyse; /**< ring full: analyse inline, not skip */
        size_t ovf_chunks_max;   /**< overflow chunks all rings may hold */
        int    force_shift;      /**< -1, or the sampling every ring uses
                                  *   (ks_stage_force_sampling()) */
        /* overflow chunks held: taken by producing threads, given back by
         * the drainer (one read-modify-write per KS_STAGE_CHUNK_ENTRIES
         * messages, only while the drainer is behind) */
        _Alignas(64) atomic_size_t ovf_chunks;
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
        /* read by the watcher's look at the CPU (ks_cpuwatch.h) */
        atomic_uint_fast64_t slept_ns;   /**< pauses ended, summed */
        atomic_uint_fast64_t sleep_from; /**< the one under way: its start
                                          *   (mono ns), 0: none */
        sem_t wake; /**< posted by a producing thread: sem_post() never
                     *   blocks (with a mutex, on_send could wait for a
                     *   drainer descheduled while holding it) */
        /* partition counts the consumer takes at a flush point
         * (ks_stage_counts.c): queued by the reporter, under counts_lock */
        pthread_mutex_t        counts_lock;
        struct ks_stage_count *counts;
        size_t                 counts_cnt, counts_cap;
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

/** @brief Has the analysis take the counts queued with a ticket up to
 *         @p done (a flush served), in the order they were queued; all of
 *         them with @p done UINT64_MAX. @locality the consumer.
 *         (ks_stage_counts.c) */
void ks_stage_counts_apply(ks_stage_t *s, uint64_t done);

/** @brief Frees the queue (ks_stage_destroy()). */
void ks_stage_counts_free(ks_stage_t *s);

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

#endif /* KS_STAGE_IMPL_H */
