/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_budget.h
 * @brief keyshift.memory.max.mb, split: every rule of what the key table,
 *        the staging overflow, the sketches and each topic may take lives
 *        here, and the stages ask it (issue 31: a rule in one file).
 *
 * For a producer given M bytes (keyshift.memory.max.mb):
 *
 *  - the drainer's key table (stage/ks_batch.c) gets M / 8 for its slots:
 *    the largest power of two of 64-byte slots that fits, 1024 to
 *    131,072 of them (8 MiB at the default 64 MiB), plus a 4-byte tag word
 *    per slot and the table's fixed part (its runs set aside and the
 *    pass's rates: KS_BUDGET_TABLE_FIXED_BYTES);
 *  - the sketches of all topics get what the table does not take
 *    (ks_budget_sketches()). The budget is not monotonic in M: the table
 *    doubles at 2, 4, ... 64 MiB, so 63 MiB leaves the sketches ~58.7 MiB
 *    and 64 MiB ~55.4 (ks_budget_memory_mb_for());
 *  - a topic's sketches take what bench/ksb_memory measures
 *    (ks_budget_sketch_bytes()); a new topic gets what is left of the
 *    sketch budget divided by max(16, topics analysed including it)
 *    (ks_budget_topic_share()), its sizes shrunk to fit
 *    (ks_budget_fit()) but never below KS_BUDGET_SAMPLE_MIN /
 *    KS_BUDGET_TOPK_MIN;
 *  - the staging overflow may take M / 4 on top, only while the drainer
 *    is behind (ks_budget_overflow()).
 *
 * Pure functions of their arguments: thread-safe.
 */
#ifndef KS_BUDGET_H
#define KS_BUDGET_H

#include <stddef.h>

#include "ks_config.h"

/** The share of keyshift.memory.max.mb (1/n) a producer's key table's
 *  slots may take (their tag words, 1/16 of that, and the table's fixed
 *  part come on top); the sketches get the rest. */
#define KS_BUDGET_TABLE_SHARE 8
/** Slots in the key table: a power of two between these. */
#define KS_BUDGET_TABLE_SLOTS_MIN 1024
#define KS_BUDGET_TABLE_SLOTS_MAX 131072
/** A table slot (one cache line) and its tag word, in bytes
 *  (stage/ks_batch_impl.h; ks_batch.c checks both). */
#define KS_BUDGET_TABLE_SLOT_BYTES 64
#define KS_BUDGET_TABLE_TAG_BYTES 4
/** The table's fixed part, in bytes: its KS_BATCH_EVICTED runs set aside
 *  (64 KiB), the rates of KS_BATCH_TOPICS topics a pass keeps (7 KiB) and
 *  its counters: sizeof(ks_batch_t) on x86-64, and at least it anywhere
 *  (ks_batch.c checks it at compile time). */
#define KS_BUDGET_TABLE_FIXED_BYTES 72904

/** The share of keyshift.memory.max.mb (1/n) that the staging overflow
 *  may take on top of it, only while the drainer is behind. */
#define KS_BUDGET_OVERFLOW_SHARE 4

/** Sample and counter sizes never go below these when a budget shrinks
 *  them: the samples, the smallest keyshift.key.sample.size and
 *  .mixed.sample.size; the hot-key counters, 64 of their own. */
#define KS_BUDGET_SAMPLE_MIN KS_CONFIG_SAMPLE_MIN
#define KS_BUDGET_TOPK_MIN 64

/** A topic's sketch sizes, the ones a budget shrinks. */
typedef struct ks_budget_sizes {
        size_t key_sample;   /**< keys in the distinct-key sample */
        size_t mixed_sample; /**< logical keys in the mixed-key sample */
        size_t topk;         /**< Space-Saving counters */
} ks_budget_sizes_t;

/** @returns what keyshift.memory.max.mb = @p memory_bytes gives the
 *           producer's key table's slots: 1/KS_BUDGET_TABLE_SHARE of it,
 *           the bytes to ks_batch_new() (ks_stage_new()). */
size_t ks_budget_table(size_t memory_bytes);

/** @returns the slots a key table given @p bytes gets: the largest power
 *           of two whose slots (KS_BUDGET_TABLE_SLOT_BYTES each) fit,
 *           within [KS_BUDGET_TABLE_SLOTS_MIN, KS_BUDGET_TABLE_SLOTS_MAX]. */
size_t ks_budget_table_slots(size_t bytes);

/** @returns the bytes a key table of @p slots slots takes: the slots,
 *           their tag words and its fixed part. */
size_t ks_budget_table_bytes_of(size_t slots);

/** @returns the bytes of the key table given @p bytes:
 *           ks_budget_table_bytes_of(ks_budget_table_slots(@p bytes)). */
size_t ks_budget_table_bytes(size_t bytes);

/**
 * @returns the sketch budget keyshift.memory.max.mb = @p memory_bytes
 *          leaves all topics (ks_topic_params_t.sketch_budget): what the
 *          producer's key table, given ks_budget_table() of it, does not
 *          take (ks_budget_table_bytes()).
 */
size_t ks_budget_sketches(size_t memory_bytes);

/**
 * @returns the least keyshift.memory.max.mb above @p from_mb, up to
 *          @p max_mb, whose sketch budget (ks_budget_sketches()) is
 *          @p sketch_bytes or more, or 0 when none is. The budget is not
 *          monotonic (see the file comment): a value below @p from_mb may
 *          do too, but a producer short of room is told the next one up.
 */
int ks_budget_memory_mb_for(size_t sketch_bytes, int from_mb, int max_mb);

/** @returns the overflow a producer given @p memory_bytes
 *           (keyshift.memory.max.mb) gets: 1/KS_BUDGET_OVERFLOW_SHARE of
 *           it (16 MiB, about 260,000 messages, at the default 64 MiB:
 *           a burst of 200,000 messages from a producer's creation is
 *           analysed exactly even if keyshift's thread gets no CPU while
 *           it lasts, as with SCHED_IDLE on a host whose threads fill the
 *           CPUs; sampling starts at seven eighths of it). */
size_t ks_budget_overflow(size_t memory_bytes);

/**
 * @returns the heap one topic's sketches take with sizes @p s: the
 *          HyperLogLog (16 KiB) and the topic's fixed state, plus per entry
 *          of the key sample, the mixed-key sample and the hot-key counters
 *          (bench/ksb_memory measures them). Per-partition counts and flow
 *          matrices are not included: they follow the partition counts.
 */
size_t ks_budget_sketch_bytes(const ks_budget_sizes_t *s);

/**
 * @brief Shrinks @p s's three sizes by one factor (then by 1/16 more while
 *        the hot-key index's power of two leaves it over) so that
 *        ks_budget_sketch_bytes() <= @p bytes, never below
 *        KS_BUDGET_SAMPLE_MIN / KS_BUDGET_TOPK_MIN (so the result can
 *        exceed @p bytes when it is very small). Larger budgets leave the
 *        sizes as they are: they are maximums.
 */
void ks_budget_fit(ks_budget_sizes_t *s, size_t bytes);

/**
 * @returns the sketch bytes a new topic gets, the @p n th analysed (from
 *          1), when the topics made before it took @p taken of
 *          @p budget: what is left divided by max(16, @p n). Sizes are
 *          fixed at creation, so the early topics keep theirs and later
 *          ones get less; all topics stay within the budget (each takes at
 *          most 1/16 of what is left), except that a topic never goes below
 *          the minimum sizes (~66 KiB with the HyperLogLog).
 */
size_t ks_budget_topic_share(size_t taken, size_t budget, size_t n);

/**
 * @returns the least sketch budget with which the @p n th topic (from 1)
 *          would have kept the @p want bytes its sizes ask for, when the
 *          topics before it asked for @p asked_before in all: what they
 *          asked plus max(16, @p n) times its own. The largest over all
 *          topics is the budget that keeps every topic's sizes.
 */
size_t ks_budget_topics_need(size_t asked_before, size_t n, size_t want);

#endif /* KS_BUDGET_H */
