/**
 * @file ks_batch.h
 * @brief The drainer's aggregation of staged messages: a key's messages
 *        of a ~10 ms window are counted, then analysed as one weighted run.
 *
 * Why: the analysis of one message costs ~130-250 ns (key classification,
 * two hashes, the logical key, the hot-key summary, the key sample, the
 * per-partition loads, under the topic's lock: bench/README.md), and real
 * key streams repeat: Zipf-like over MMSIs, order ids, users. Counting a
 * repeated key is a table probe and two additions.
 *
 * Design:
 *  - a table of 2^k slots (KS_BATCH_SLOTS_MIN..MAX, from the memory given),
 *    open addressing with linear probing over at most KS_BATCH_PROBE
 *    slots, keyed by (topic, key bytes, NULL flag, partition argument) and
 *    placed by ks_batch_key_hash(); the drainer fetches a message's slot a
 *    few messages ahead (ks_batch_prefetch()): the table is larger than
 *    the caches;
 *  - a slot keeps its key's facts (ks_topic_key_facts(): classification,
 *    partitioner hash, 64-bit and logical hashes) for as long as it keeps
 *    the key, so a key seen again is not hashed again: the facts depend on
 *    the key bytes and the topic's constant partitioner settings only. A
 *    new key takes an empty slot of its probe range, else one counted in
 *    no window and not counted since the last newcomer passed by (second
 *    chance, CLOCK);
 *  - two windows: messages are counted in the collecting one, per slot
 *    (messages, bytes) and per topic (a chain of its slots, the messages
 *    per millisecond stamp for the rates). ks_batch_rotate() closes it
 *    after KS_BATCH_FLUSH_MS or when it counts a quarter of the slots, and
 *    ks_batch_flush_step() analyses the closed one in slices, each topic's
 *    lock held for one slice, while the drainer goes on emptying the rings
 *    into the other window: ks_topic_record_run_locked() for every run
 *    (sums for the counters and loads: exact; weighted updates for the
 *    sketches), then the hot-key summary's offers (ks_topk.c, Windows);
 *  - a key new to a full probe range is analysed at once, alone
 *    (ks_topic_record_at()); a window with KS_BATCH_TOPICS topics is
 *    analysed before another topic joins. Nothing is dropped.
 *
 * What changes for the reader of a report: a message is counted in its
 * topic when its window is analysed (within ~10-20 ms), and the hot-key
 * summary sees a key's messages of one window as one run (same bounds,
 * ks_topk.h).
 *
 * Memory: 128 B a slot, fixed at creation: an eighth of
 * keyshift.memory.max.mb (8 MiB, 65,536 slots, at the default).
 *
 * Not thread-safe: one consumer (the drainer, or the thread that stopped
 * it) uses a batch at a time, as with ks_stage_drain().
 */
#ifndef KS_BATCH_H
#define KS_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "ks_topic.h"

/** Slots in the table: a power of two between these, from the memory
 *  given to ks_batch_new() (128 B a slot: 128 KiB .. 8 MiB). */
#define KS_BATCH_SLOTS_MIN 1024
#define KS_BATCH_SLOTS_MAX 65536
/** Slots a key may sit away from its home slot. */
#define KS_BATCH_PROBE 8
/** Topics counted in one flush (more: flushed early). */
#define KS_BATCH_TOPICS 64
/** Key bytes a slot holds (the staging rings' limit). */
#define KS_BATCH_KEY_MAX 40
/** The share of keyshift.memory.max.mb (1/n) a producer's key table may
 *  take; the sketches get the rest (ks_client_new()). */
#define KS_BATCH_BUDGET_SHARE 8
/** Age of a window's first message at which ks_batch_rotate() closes it. */
#define KS_BATCH_FLUSH_MS 10

typedef struct ks_batch ks_batch_t;

/** @returns the slots a batch given @p bytes gets: the largest power of
 *           two whose table fits, within [KS_BATCH_SLOTS_MIN,
 *           KS_BATCH_SLOTS_MAX]. */
size_t ks_batch_slots_for(size_t bytes);

/** @returns a new, empty batch whose table takes at most @p bytes (at
 *           least KS_BATCH_SLOTS_MIN slots), or NULL on ENOMEM. */
ks_batch_t *ks_batch_new(size_t bytes);

/** @returns the bytes its table takes. */
size_t ks_batch_bytes(const ks_batch_t *b);

/** @brief Frees the batch; runs not flushed are lost. */
void ks_batch_destroy(ks_batch_t *b);

/**
 * @returns the hash that places a message's key in the table: a cheap
 *          multiply-xorshift of the key bytes, the topic and the partition
 *          argument (the table's own business; the partitioner's and the
 *          sketches' hashes are in the key's facts).
 */
uint64_t ks_batch_key_hash(const ks_topic_t *t, const void *key, size_t keylen,
                           int32_t partition);

/** @brief Asks the CPU to fetch the slot a key of hash @p h is first
 *         looked for in (call it a few messages ahead of ks_batch_add():
 *         the table is larger than the caches). */
void ks_batch_prefetch(const ks_batch_t *b, uint64_t h);

/**
 * @brief Counts one message of topic @p t (key NULL for a NULL key, at
 *        most KS_BATCH_KEY_MAX bytes; partition -1: the partitioner
 *        chooses; @p h its ks_batch_key_hash()) of @p bytes key + value
 *        bytes, produced at monotonic time @p mono_ms. A key new to a full
 *        probe range is analysed at once (ks_topic_record_at()); a window
 *        with KS_BATCH_TOPICS topics is analysed before another topic
 *        joins it.
 * @locality the batch's one consumer. @locks none held; takes topics'
 *           locks when it analyses.
 */
void ks_batch_add(ks_batch_t *b, ks_topic_t *t, uint64_t h, const void *key,
                  size_t keylen, int32_t partition, uint64_t bytes,
                  int64_t mono_ms);

/**
 * @brief When no window is being analysed and the collecting window's
 *        first message is KS_BATCH_FLUSH_MS old (at @p now_ms, monotonic),
 *        closes it for analysis (ks_batch_flush_step()); messages are then
 *        counted in the other window.
 * @returns 1 if it closed the window.
 * @locality the batch's one consumer.
 */
int ks_batch_rotate(ks_batch_t *b, int64_t now_ms);

/**
 * @brief Analyses up to @p max_runs runs of the closed window (each topic's
 *        lock held for at most that many).
 * @returns 1 while runs remain, 0 when the window is analysed (or none was
 *          closed).
 * @locality the batch's one consumer. @locks each topic's, one at a time.
 */
int ks_batch_flush_step(ks_batch_t *b, unsigned max_runs);

/**
 * @brief Analyses every message counted so far: the closed window, then
 *        the collecting one.
 * @locality the batch's one consumer. @locks each topic's, one at a time.
 */
void ks_batch_flush(ks_batch_t *b);

/** What the batch did, since it was created. */
typedef struct ks_batch_stats {
        uint64_t messages; /**< counted */
        uint64_t runs;     /**< weighted runs applied */
        uint64_t facts;    /**< keys whose facts were computed (misses) */
        uint64_t early;    /**< flushes forced by KS_BATCH_TOPICS topics */
        uint64_t direct;   /**< analysed alone: every slot of the key's
                            *   window held another key of the window */
} ks_batch_stats_t;

/** @brief Copies the counters. @locality the batch's consumer. */
void ks_batch_stats(const ks_batch_t *b, ks_batch_stats_t *out);

#endif /* KS_BATCH_H */
