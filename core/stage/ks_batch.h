/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_batch.h
 * @brief The drainer's key table: each key's staged messages are counted
 *        in its slot and analysed as one weighted run when the key leaves
 *        the table or the table is flushed.
 *
 * Why: the analysis of one message costs ~130-250 ns (key classification,
 * two hashes, the logical key, the hot-key summary, the key sample, the
 * per-partition loads, under the topic's lock: bench/README.md), and real
 * key streams repeat: Zipf-like over MMSIs, order ids, users. Counting a
 * repeated key is a probe of its tag word and its slot and two additions; the
 * analysis then runs once per key and flush, not once per message.
 *
 * Design:
 *  - a table of 2^k one-line slots (KS_BATCH_SLOTS_MIN..MAX, from the
 *    memory given), open addressing with linear probing over at most
 *    KS_BATCH_PROBE slots, keyed by (topic, key bytes, NULL flag,
 *    partition argument) and placed by ks_batch_key_hash(); the drainer
 *    fetches a message's slot a few messages ahead (ks_batch_look_ahead()):
 *    the table is larger than the caches. A slot holds the key (at most
 *    KS_BATCH_KEY_MAX bytes) and its messages and bytes not analysed yet;
 *    a tag array beside the slots (4 B a slot: 16 bits of the hash, the
 *    CLOCK bit, the messages waiting) is what a probe reads first, so a
 *    new key reads its probe range's tags and then only the slot it takes
 *    (ks_batch.c), and a flush skips the slots with nothing waiting;
 *  - a key new to a full probe range takes an empty slot, else the one
 *    not counted since the last newcomer passed by (second chance, CLOCK,
 *    Corbato 1968) holding the fewest messages: that key's messages are
 *    set aside as a run (an eviction) and analysed at the end of the
 *    drainer's pass (ks_batch_end_pass()); so are a key's messages when
 *    they reach KS_BATCH_RUN_MAX. A topic's lock is held for at most
 *    KS_BATCH_HOLD_RUNS runs at a time (ks_batch.c);
 *  - a flush (ks_batch_flush_begin(), ks_batch_flush_step()) analyses
 *    every slot's messages, in slices of slots so that the drainer keeps
 *    emptying the rings meanwhile: every KS_BATCH_FLUSH_MS
 *    (ks_batch_rotate()), and whenever the drainer is asked to
 *    (ks_stage_sync(): before a report, before a partition count changes);
 *  - a run is analysed by ks_topic_record_run_locked(): the key's facts
 *    (ks_topic_key_facts()) computed once per run, sums for the counters,
 *    loads, flows and moved figures (exact), weighted updates for the key
 *    sample, the mixed-key sample, the HyperLogLog and the hot-key summary
 *    (weighted Space-Saving, same bounds, ks_topk.c). A flush hands its
 *    runs to the hot-key summary as one window per topic (monitored keys
 *    counted first, then the others offered: a merge of the flush's exact
 *    counts, ks_topk.c, Windows), so that the busy keys of a flush are
 *    charged the summary's bound when it began, whatever order the table
 *    holds them in (a NULL key's run, which the summary may know as the
 *    empty key's, comes after the window);
 *  - the per-second rates do not wait for a run: each topic's messages per
 *    millisecond stamp are counted in the pass and added at its end (or
 *    when its stamps are used up), in the order they were staged, a long
 *    key's too, so that each message counts in its own second;
 *  - a key stream the table does not aggregate passes it by: when fewer
 *    than KS_BATCH_PASS_BELOW of 256 probes in a window of
 *    KS_BATCH_PASS_WINDOW find their key (every message a new key, as in
 *    a stream of order ids), the next KS_BATCH_PASS_SPAN messages are set
 *    aside at once as runs of one, without a probe, as newcomers evicted
 *    at once would be; then a window of messages probes the table again
 *    (a trial), and once KS_BATCH_PASS_ABOVE of 256 find their key the
 *    table is used again; only a trial's probes decide (a topic whose
 *    count is unknown probes during a span too, uncounted). Below ~30 %
 *    found, a probe (a miss: the tags, the slot taken, the eviction)
 *    costs more than the runs it saves (bench/README.md). Every figure
 *    that does not depend on the order runs come in is the same either
 *    way (a run is a run), but the hot-key summary's: it is offered one
 *    run of one passed by in KS_HOT_SAMPLE_ONE_IN, at random, weighted
 *    (ks_run_hot_t in ks_topic.h: a new key costs the summary's work only
 *    when sampled; the report states the sampling error beside each hot
 *    key's count); the few figures that depend on the order depended on
 *    the table's order
 *    already (ks_keyenc.h rule 2's text-looking 4-byte keys; which
 *    encodings the mixed-key sample and which Schema Registry ids the id
 *    list keep). A topic whose partition count is not known yet is not
 *    passed by (ks_topic_count_known()): its runs wait for the count, at
 *    most pending_max of them (ks_topic.h), and runs of one would hold
 *    fewer messages than the table's. A stream whose keys come back only
 *    after more than a trial's messages, but while the table would still
 *    hold them, can stay passing it by: the same figures, at the cost of
 *    a run per message. After a long spell of passing by, the trials'
 *    keys hold part of the table, and keys that then repeat can sit a few
 *    slots from their home (a review: 500,000 new keys, then 1,000 keys,
 *    counted at 32 instead of 14 ns a message; a table that
 *    ~30,000-150,000 new keys left partly full did the same before);
 *  - a key longer than KS_BATCH_KEY_MAX is analysed at once, alone
 *    (ks_topic_record_at()). Nothing is dropped.
 *
 * What changes for the reader of a report: a message is counted in its
 * topic when its key's run is analysed: at the latest at the next flush,
 * and the plugin flushes before every report (ks_stage_sync()); the
 * hot-key summary sees a key's messages since its last run (at most
 * KS_BATCH_RUN_MAX) as one weighted update.
 *
 * Memory: 64 B a slot and its 4 B tag word, fixed at creation: slots for
 * an eighth of keyshift.memory.max.mb (8 MiB, 131,072 slots, at the
 * default) and their tags (512 KiB), plus KS_BATCH_EVICTED runs set aside
 * (64 B each, 64 KiB); ks_batch_bytes() counts them all.
 *
 * Not thread-safe: one consumer (the drainer, or the thread that stopped
 * it) uses a batch at a time, as with ks_stage_drain().
 */
#ifndef KS_BATCH_H
#define KS_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "ks_budget.h"
#include "ks_topic.h"

/** Slots in the table: a power of two between these, from the memory
 *  given to ks_batch_new() (64 B a slot: 64 KiB .. 8 MiB; tag words
 *  besides): the budget's rule (ks_budget.h). */
#define KS_BATCH_SLOTS_MIN KS_BUDGET_TABLE_SLOTS_MIN
#define KS_BATCH_SLOTS_MAX KS_BUDGET_TABLE_SLOTS_MAX
/** Slots a key may sit away from its home slot. */
#define KS_BATCH_PROBE 8
/** Topics whose rates one pass keeps (more: added at once). */
#define KS_BATCH_TOPICS 64
/** Key bytes a slot holds; longer keys are analysed alone. A UUID's text
 *  form (36) fits. */
#define KS_BATCH_KEY_MAX 36
/** Runs set aside before they are analysed: at the end of the drainer's
 *  pass, or of the flush under way, or when this many wait. */
#define KS_BATCH_EVICTED 1024
/** Messages a slot counts before they are set aside as a run: a busy key
 *  reaches the hot-key summary early and often, not only at flushes, so
 *  the summary monitors it from its first KS_BATCH_RUN_MAX messages on
 *  (a newcomer's error is at most the summary's bound when it comes in:
 *  ks_topk.c). At most one run per KS_BATCH_RUN_MAX messages. */
#define KS_BATCH_RUN_MAX 256
/** Probes over which the share that find their key is measured (a
 *  trial, while the table is passed by). */
#define KS_BATCH_PASS_WINDOW 4096
/** Of 256 probes, fewer finding their key than this: the table is passed
 *  by (19 %); this many or more: used again (25 %); between the two, the
 *  mode stays. */
#define KS_BATCH_PASS_BELOW 48
#define KS_BATCH_PASS_ABOVE 64
/** Messages passing the table by between two trials: 1 message in 32
 *  still probes it (1 in 8 before issue "Zero drag, decided": a trial's
 *  probes, each a miss of the tags and of the slot taken, were 10 ns of
 *  the 13 that ks_batch_add() cost a message of new keys, bench/README.md;
 *  a stream that starts repeating is back in the table within 131,072
 *  messages, ~45 ms at 3 M messages/s). */
#define KS_BATCH_PASS_SPAN (31 * KS_BATCH_PASS_WINDOW)
/** Messages the drainer looks ahead at most (ks_batch_look_ahead()): a
 *  message that will pass the table by is neither hashed nor fetched. */
#define KS_BATCH_PASS_AHEAD 64
/** Period of the flush ks_batch_rotate() begins (the plugin flushes before
 *  each report and partition count change besides). */
#define KS_BATCH_FLUSH_MS 10000

typedef struct ks_batch ks_batch_t;

/** @returns a new, empty batch whose slots take at most @p bytes (at
 *           least KS_BATCH_SLOTS_MIN slots; their tag words, 4 B each,
 *           besides: ks_budget_table_slots()), or NULL on ENOMEM. */
ks_batch_t *ks_batch_new(size_t bytes);

/** @returns the bytes its slots, tag words and eviction buffer take:
 *           ks_budget_table_bytes() of the bytes it was made with. */
size_t ks_batch_bytes(const ks_batch_t *b);

/** @brief Frees the batch; messages not analysed are lost. */
void ks_batch_destroy(ks_batch_t *b);

/**
 * @returns the hash that places a message's key in the table: a cheap
 *          multiply-xorshift of the key bytes, the topic and the partition
 *          argument (the table's own business; the partitioner's and the
 *          sketches' hashes are in the key's facts).
 */
uint64_t ks_batch_key_hash(const ks_topic_t *t, const void *key, size_t keylen,
                           int32_t partition);

/**
 * @brief What the table needs of a message before ks_batch_add() counts
 *        it, asked at most KS_BATCH_PASS_AHEAD messages ahead: its
 *        ks_batch_key_hash(), and the CPU asked to fetch the slots it is
 *        first looked for in (the table is larger than the caches). A
 *        message that will pass the table by needs neither: on a stream of
 *        new keys the hash and the fetch were ~5 % of a message's
 *        instructions (bench/icount).
 * @returns the key's ks_batch_key_hash(), or 0 for a message that will
 *          pass the table by (ks_batch_add() does not read its hash: a
 *          span under way lasts more than KS_BATCH_PASS_AHEAD messages,
 *          and a topic's count once known stays known).
 * @locality the batch's one consumer.
 */
uint64_t ks_batch_look_ahead(const ks_batch_t *b, const ks_topic_t *t,
                             const void *key, size_t keylen, int32_t partition);

/**
 * @brief Counts one message of topic @p t (key NULL for a NULL key;
 *        partition -1: the partitioner chooses; @p h its
 *        ks_batch_key_hash(), or ks_batch_look_ahead()'s answer for it)
 *        of @p bytes key + value bytes, produced at
 *        monotonic time @p mono_ms. A key longer than KS_BATCH_KEY_MAX is
 *        analysed at once (ks_topic_record_at()).
 * @locality the batch's one consumer. @locks none held; takes topics'
 *           locks when it analyses.
 */
void ks_batch_add(ks_batch_t *b, ks_topic_t *t, uint64_t h, const void *key,
                  size_t keylen, int32_t partition, uint64_t bytes,
                  int64_t mono_ms);

/**
 * @brief ks_batch_add() of a message staged while its thread sampled
 *        (ks_stage.h): it counts as 2^@p shift messages of its key, of
 *        @p bytes each, everywhere (runs, rates); its topic counts it in
 *        sampled_in (ks_topic_note_sampled_in()).
 * @locality the batch's one consumer. @locks as ks_batch_add().
 */
void ks_batch_add_sampled(ks_batch_t *b, ks_topic_t *t, uint64_t h,
                          const void *key, size_t keylen, int32_t partition,
                          uint64_t bytes, int64_t mono_ms, unsigned shift);

/**
 * @brief Ends a pass of the drainer: analyses the runs evictions set
 *        aside and adds the pass's rates to their topics.
 * @locality the batch's one consumer. @locks each topic's, one at a time.
 */
void ks_batch_end_pass(ks_batch_t *b);

/**
 * @brief Begins a flush (ks_batch_flush_step()) when none is under way and
 *        the last one began KS_BATCH_FLUSH_MS before @p now_ms (monotonic).
 * @returns 1 if it began one.
 * @locality the batch's one consumer.
 */
int ks_batch_rotate(ks_batch_t *b, int64_t now_ms);

/** @brief Begins a flush of every slot, after finishing the one under
 *         way, if any. @locality the batch's one consumer. */
void ks_batch_flush_begin(ks_batch_t *b);

/**
 * @brief Analyses the messages of up to @p max_slots more slots of the
 *        flush under way; after the last, ks_batch_end_pass().
 * @returns 1 while slots remain, 0 when the flush is done (or none was
 *          under way).
 * @locality the batch's one consumer. @locks each topic's, one at a time.
 */
int ks_batch_flush_step(ks_batch_t *b, size_t max_slots);

/**
 * @brief Analyses every message counted so far (a whole flush, then
 *        ks_batch_end_pass()).
 * @locality the batch's one consumer. @locks each topic's, one at a time.
 */
void ks_batch_flush(ks_batch_t *b);

/** What the batch did, since it was created. */
typedef struct ks_batch_stats {
        uint64_t messages;  /**< counted */
        uint64_t runs;      /**< weighted runs analysed */
        uint64_t set_aside; /**< of which set aside before a flush: an
                             *   eviction, or KS_BATCH_RUN_MAX reached */
        uint64_t evicted;   /**< of which evictions (a new key took the
                             *   slot) */
        uint64_t flushes;   /**< flushes completed */
        uint64_t direct;    /**< analysed alone: key > KS_BATCH_KEY_MAX */
        uint64_t probes;    /**< messages that probed the table */
        uint64_t found;     /**< of which found their key there */
        uint64_t passed_by; /**< set aside as runs of one without a
                             *   probe (KS_BATCH_PASS_BELOW) */
} ks_batch_stats_t;

/** @brief Copies the counters. @locality the batch's consumer. */
void ks_batch_stats(const ks_batch_t *b, ks_batch_stats_t *out);

#endif /* KS_BATCH_H */
