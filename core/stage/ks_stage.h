/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_stage.h
 * @brief Per-thread staging rings: the produce path copies a message's
 *        few fields into a ring owned by the calling thread, and
 *        keyshift's drainer thread analyses them later (ks_batch.h), off
 *        the application's thread.
 *
 * Why: the analysis of a message costs ~100-300 ns and takes the topic's
 * mutex (bench/README.md); on_send must cost a few nanoseconds and never
 * wait for a lock another thread holds (a report's snapshot, the other
 * application threads).
 *
 * Design:
 *  - one ring per (application thread, stage): a single-producer
 *    single-consumer queue of KS_STAGE_RING_ENTRIES 64-byte entries (topic
 *    pointer, key up to KS_STAGE_KEY_INLINE bytes, key and value lengths,
 *    partition, NULL-key flag, coarse monotonic time). The producer
 *    publishes an entry with a release store of `head`; the consumer reads
 *    `head` with acquire and frees space with a release store of `tail`.
 *    No lock and no read-modify-write on the produce path (only a message
 *    that meets a full ring is counted with relaxed atomic additions).
 *    What the producer writes (the ring's header line, the overload
 *    counters) and what the drainer writes (tail, its clock and pass count)
 *    sit on separate cache lines; the drainer reads the producer's line
 *    once per pass, the producer the drainer's once per pass at most;
 *  - a thread finds its ring through thread-local storage (keyed by the
 *    stage's process-unique id, never by its address), registered with the
 *    stage on first use (the stage's mutex, once per thread);
 *  - when the thread exits a pthread key destructor marks its rings
 *    orphaned; a new thread adopts an orphaned ring once it is drained, so
 *    threads that come and go do not pile up rings. A ring is shared by the
 *    stage and its thread with a reference count: whichever lets go last
 *    frees it (a thread may outlive the producer, a producer its threads);
 *  - a key longer than KS_STAGE_KEY_INLINE (up to KS_STAGE_KEY_LONG_MAX)
 *    is copied into the ring's key arena (KS_STAGE_ARENA_BYTES, a byte
 *    ring freed in order as the drainer consumes the entries; its entry
 *    holds the place), so that on_send takes no lock for it either;
 *  - nothing blocks but rare cases: a message whose key is longer than
 *    KS_STAGE_KEY_LONG_MAX or meets a full key arena, or whose thread has
 *    no ring (KS_STAGE_RINGS_MAX in use), is analysed at once on the
 *    application thread, under the topic's lock, as before staging;
 *  - a message whose ring is full (the drainer fell behind: a producer
 *    faster than keyshift's analysis, or keyshift's thread starved of
 *    CPU: on a 2-vCPU machine whose broker and librdkafka threads share
 *    the CPUs, 20-100 ms at a time in a burst right after the producer
 *    was created) goes to the ring's overflow (ks_stage_set_overflow()):
 *    a chain of chunks the producing thread takes within the stage's
 *    budget and the drainer frees as it empties them. Once a thread has
 *    used its overflow it stays on it until the drainer has taken all of
 *    it and the ring (checked once per drainer pass, as the full ring
 *    is), so the drainer, which reads a ring and then its overflow, sees
 *    the messages in the order they were staged (the key arena, freed in
 *    that order, depends on it);
 *  - sampling under overload (issue "Zero drag"): once its backlog stays
 *    high (the overflow seven eighths spent, or with none to spend its ring three
 *    quarters full) a producing thread stages each message with
 *    probability 1/N, N = 2^k: k rises by one per KS_STAGE_SAMPLE_EVERY
 *    messages while the backlog does not shrink (up to
 *    KS_STAGE_SAMPLE_SHIFT_MAX, 1 in 1,024) and falls by one per as many
 *    once its overflow is empty and its ring under an eighth full. A
 *    message not staged is counted exactly in its topic
 *    (ks_topic_note_sampled_out(): messages and bytes); one staged stands
 *    for N in the analysis (its entry's shift, ks_batch_add_sampled()),
 *    whose figures are then estimates with a stated error
 *    (ks_topic_counters_t). Messages, not keys, are sampled (with a
 *    xorshift64 per ring, whatever the key), so a hot key never vanishes;
 *    the figures of what is staged once the backlog clears are exact
 *    again. keyshift.overload=analyse never samples. A burst a drainer
 *    kept off the CPU for a while leaves stays in the overflow and is
 *    analysed exactly: sampling is for a host out of CPU for longer;
 *  - a message that finds the ring and the overflow full is not analysed
 *    but counted in its topic
 *    (ks_topic_note_unanalysed(), the report's `keys.unanalysed` and
 *    warning ANALYSIS_BEHIND): analysing it on the producer's thread
 *    would cost the producer several times what on_send may. With
 *    keyshift.overload=analyse it is analysed there instead (exact
 *    figures for replays and tests that outrun the drainer). Each case is
 *    counted (ks_stage_stats()).
 *
 * Memory: KS_STAGE_RING_ENTRIES x 64 B = 512 KiB per ring (and
 * KS_STAGE_ARENA_BYTES more once the thread stages a long key), the
 * overflow's chunks while the drainer is behind (at most the bytes given
 * to ks_stage_set_overflow() for all rings; a ring keeps the chunk the
 * drainer read last, which its next overflow fills first), at most
 * KS_STAGE_RINGS_MAX rings per producer (one per thread that has produced
 * and is alive or not yet recycled), allocated on a thread's first message;
 * plus 96 B of thread-local slots per application thread, and a 192 B
 * ring header that a thread outliving its producer keeps until it exits.
 *
 * Latency: a message is counted in the drainer's key table within the
 * drainer's period (1 ms while rings carry messages, up to 5 ms when idle)
 * and analysed when its key's run is: when the key leaves the table, at
 * the latest at the next flush (every KS_BATCH_FLUSH_MS, ks_batch.h). A
 * thread that needs every message staged so far analysed (the reporter,
 * before a report) asks the drainer for a flush and waits for it
 * (ks_stage_sync()); a new partition count is queued for the drainer to
 * take after such a flush, never waited for (ks_stage_count_later()); the final
 * report counts everything (ks_stage_drain() after the drainer stopped).
 */
#ifndef KS_STAGE_H
#define KS_STAGE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "ks_batch.h"
#include "ks_topic.h"

/** Entries per ring (a power of two). */
#define KS_STAGE_RING_ENTRIES 8192
/** Key bytes copied into an entry; longer keys go to the ring's key arena. */
#define KS_STAGE_KEY_INLINE 40
/** Keys longer than KS_STAGE_KEY_INLINE and up to this many bytes are
 *  copied into the ring's key arena; longer ones (and any that meet a full
 *  arena) are analysed inline on the producing thread. */
#define KS_STAGE_KEY_LONG_MAX 1024
/** Bytes of a ring's key arena, allocated with its first long key: ~1,000
 *  keys of 64 bytes waiting for the drainer. */
#define KS_STAGE_ARENA_BYTES (64 * 1024)
/** Entries per overflow chunk (ks_stage_set_overflow()): 64 KiB. */
#define KS_STAGE_CHUNK_ENTRIES 1024
/** Rings per stage; further threads analyse inline. */
#define KS_STAGE_RINGS_MAX 64
/** Stages a thread can hold a ring in at once (producers it uses); a slot
 *  holding no ring is reused first. */
#define KS_STAGE_TLS_SLOTS 4

/** The sampling a producing thread goes up to under overload: 1 message
 *  in 2^KS_STAGE_SAMPLE_SHIFT_MAX (1,024). */
#define KS_STAGE_SAMPLE_SHIFT_MAX 10
/** A producing thread looks at its backlog (and adjusts its sampling)
 *  once per this many messages it is given. */
#define KS_STAGE_SAMPLE_EVERY 1024

typedef struct ks_stage ks_stage_t;

/** What the produce path did with its messages, since the stage began. */
typedef struct ks_stage_stats {
        uint64_t staged;          /**< copied into a ring or its overflow */
        uint64_t overflowed;      /**< of those, into an overflow (its ring
                                 *   was full: ks_stage_set_overflow()) */
        size_t   overflow_chunks; /**< overflow chunks held now */
        uint64_t skipped_full;    /**< ring full: not analysed, counted in the
                                 *   topic (ks_topic_note_unanalysed()) */
        uint64_t inline_full;     /**< ring full: analysed on the app thread
                                 *   (keyshift.overload=analyse) */
        uint64_t inline_long;     /**< key > KS_STAGE_KEY_LONG_MAX bytes, or
                                 *   the ring's key arena full */
        uint64_t inline_noring;   /**< no ring for the thread */
        uint64_t sampled_out;     /**< its thread sampling under overload:
                                   *   counted in the topic, not staged
                                   *   (ks_topic_note_sampled_out()) */
        int      shift_max;       /**< the rings' sampling now, the most:
                                   *   1 message in 2^shift_max staged */
        uint64_t drained;         /**< analysed by the drainer */
        uint64_t wakes;           /**< the drainer's pauses a producing thread
                                 *   ended early (ks_stage_pause()) */
        int      rings;           /**< rings allocated */
        ks_batch_stats_t batch;   /**< the drainer's aggregation (messages:
                                 *   the drained ones), as of its last pass */
} ks_stage_stats_t;

/** @returns a new stage whose drainer's key table takes at most
 *           @p batch_bytes (ks_batch_new()), or NULL on ENOMEM. */
ks_stage_t *ks_stage_new(size_t batch_bytes);

/** @returns the bytes of the drainer's key table (fixed at creation). */
size_t ks_stage_batch_bytes(const ks_stage_t *s);

/** @brief keyshift.overload: @p analyse 1, a message that meets a full ring
 *         is analysed on the producing thread (exact figures, the producer
 *         pays); 0 (the default), it is counted as not analysed.
 *  @locality before any ks_stage_push(). */
void ks_stage_set_overload(ks_stage_t *s, int analyse);

/**
 * @brief Lets messages that meet a full ring wait in an overflow of at
 *        most @p bytes in all (chunks of KS_STAGE_CHUNK_ENTRIES entries,
 *        64 KiB, taken by a producing thread when its ring is full and
 *        freed by the drainer as it empties them): a drainer kept off the
 *        CPU for a while (a burst right after the producer is created, a
 *        host whose threads and broker share the CPUs) loses nothing
 *        until the overflow is spent too (the producer gives it
 *        ks_budget_overflow()). 0 (the default): none.
 *  @locality before any ks_stage_push().
 */
void ks_stage_set_overflow(ks_stage_t *s, size_t bytes);

/**
 * @brief Makes every producing thread stage each message with probability
 *        2^-@p shift, whatever its backlog (accuracy benchmarks and tests
 *        of the estimates); -1 goes back to sampling under overload only.
 * @param shift -1, or 0..KS_STAGE_SAMPLE_SHIFT_MAX.
 * @locality before any ks_stage_push().
 */
void ks_stage_force_sampling(ks_stage_t *s, int shift);

/**
 * @brief Frees the stage. Entries not drained are lost: call
 *        ks_stage_drain() first. Rings still owned by live threads are
 *        freed by those threads' exit (or their next use of another stage).
 * @locality one thread, once no ks_stage_push() or drain can run.
 */
void ks_stage_destroy(ks_stage_t *s);

/**
 * @brief Stages one message for topic @p t (or analyses it at once, see
 *        the file comment).
 * @param key NULL for a NULL key. @param partition -1: the partitioner
 *        chooses. @param value_len value bytes.
 * @locality any application thread. @locks none (the topic's on the
 *           fallback path only).
 */
void ks_stage_push(ks_stage_t *s, ks_topic_t *t, const void *key, size_t keylen,
                   int32_t partition, size_t value_len);

/**
 * @returns the topic the calling thread last staged a message of to @p s,
 *          if it is named @p name; else NULL (then look it up in the
 *          registry). Saves on_send the registry's hash and probe.
 * @locality any application thread. Lock-free.
 */
ks_topic_t *ks_stage_last_topic(ks_stage_t *s, const char *name);

/**
 * @brief Moves every staged message into the consumer's batch (ks_batch.h:
 *        repeated keys are counted in the key table, not analysed again),
 *        flushes the batch when ks_stage_sync() asked for it or
 *        KS_BATCH_FLUSH_MS after the last flush, and publishes the coarse
 *        clock the produce path stamps entries with.
 * @returns the messages taken from the rings.
 * @locality one consumer at a time: the drainer thread.
 */
size_t ks_stage_collect(ks_stage_t *s);

/** The drainer's pause while rings carry messages, and at most when
 *  idle: at 1 ms a ring of KS_STAGE_RING_ENTRIES holds 8 M messages/s per
 *  thread before on_send has to leave messages unanalysed. */
#define KS_STAGE_BUSY_MS 1
#define KS_STAGE_IDLE_MS 5

/**
 * @brief The drainer's pause after a pass that took @p collected messages:
 *        none when it took a quarter of a ring or more (the producers
 *        outrun a 1 ms period: the rings would fill while it sleeps),
 *        KS_STAGE_BUSY_MS while messages flow, 1 ms longer per empty pass
 *        up to KS_STAGE_IDLE_MS. A producing thread ends such an idle
 *        pause early when it has staged another quarter of a ring
 *        meanwhile (checked once per 2,048 messages it stages, not per
 *        message), so a burst after an idle spell does not fill its ring
 *        while the drainer sleeps.
 * @param period_ms the drainer's state, KS_STAGE_BUSY_MS at first.
 * @locality the drainer thread. @locks none: it waits on a semaphore that
 *           producing threads post (sem_post() never blocks them).
 */
void ks_stage_pause(ks_stage_t *s, size_t collected, int *period_ms);

/**
 * @returns the ns the drainer spent in ks_stage_pause() so far (sleeping,
 *          with what it took to get a CPU after each), the pause under way
 *          counted up to @p now_ns (CLOCK_MONOTONIC ns): the time it did
 *          not want a CPU, for ks_cpuwatch.h.
 * @locality any thread.
 */
uint64_t ks_stage_slept_ns(ks_stage_t *s, uint64_t now_ns);

/** @returns CLOCK_MONOTONIC in ns: ks_stage_slept_ns()'s clock.
 *  @locality any thread. */
uint64_t ks_stage_mono_ns(void);

/** ks_stage_sync() looks for its flush after 200 us, then twice as long
 *  each time up to every 6.4 ms: a flush served at once is seen at once,
 *  and a wait for a drainer kept off the CPU costs the waiting thread a
 *  few hundred wake-ups a second, not 5,000. */
#define KS_SYNC_POLL_MIN_US 200
#define KS_SYNC_POLL_MAX_US 6400

/**
 * @brief Asks the consumer for a flush and waits for it: when it returns 0,
 *        every message staged before the call is counted in its topic.
 *        The consumer serves the request in its next ks_stage_collect() (or
 *        ks_stage_drain()): within its period plus the flush itself (a scan
 *        of the key table and a run per key waiting, ~5-20 ms at the
 *        default size), seen within KS_SYNC_POLL_MAX_US of its end.
 * @param timeout_ms how long to wait at most.
 * @param cancel NULL, or a flag that ends the wait early once set (a
 *        producer being destroyed does not wait for it).
 * @returns 0, or -1 if no flush ended in time (no consumer running) or the
 *          wait was cancelled.
 * @locality any thread but the consumer's. @locks none held (the consumer
 *           takes topics' locks to serve it).
 */
int ks_stage_sync(ks_stage_t *s, int timeout_ms, const atomic_int *cancel);

/**
 * @brief Has the analysis of topic @p t take partition count @p count once
 *        every message staged before this call is analysed: the consumer
 *        serves a flush (as for ks_stage_sync()), then calls
 *        ks_topic_apply_count() (ks_stage_counts.c), in the order counts
 *        were queued; ks_stage_drain() takes every count waiting. The
 *        caller does not wait: it announced the count to the delivery
 *        checks first (ks_topic_announce_count()).
 * @returns 0, or -1 when the queue could not grow (ENOMEM): the caller
 *          then applies the count itself.
 * @locality any thread but the consumer's (the reporter). @locks none
 *           held; takes the queue's lock (the consumer takes topics' locks
 *           under it).
 */
int ks_stage_count_later(ks_stage_t *s, ks_topic_t *t, int32_t count,
                         ks_count_source_t source, int64_t now_ms);

/** @returns the counts queued by ks_stage_count_later() the consumer has
 *           not taken yet. @locality any thread. */
size_t ks_stage_counts_waiting(ks_stage_t *s);

/**
 * @brief ks_stage_collect(), then analyses everything collected: when it
 *        returns, every message staged before the call is counted in its
 *        topic.
 * @returns the messages taken from the rings.
 * @locality one consumer at a time: the drainer thread, or the thread that
 *           stopped it (at shutdown).
 */
size_t ks_stage_drain(ks_stage_t *s);

/** @returns 1 when every ring is empty (as seen now). */
int ks_stage_empty(ks_stage_t *s);

/** @brief Copies the counters. @locality any thread. */
void ks_stage_stats(ks_stage_t *s, ks_stage_stats_t *out);

#endif /* KS_STAGE_H */
