/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_topic.h
 * @brief Per-topic analysis: what the producer sent to one topic, and where
 *        each message lands under the current and each proposed partition
 *        count.
 *
 * Data path: ks_topic_record_at() is called for every produced message
 * (by keyshift's drainer thread for what on_send staged, ks_stage.h, or on
 * the application's thread when staging falls back to it);
 * ks_topic_note_explicit() by on_send itself; ks_topic_ack() for
 * every delivery report (on_acknowledgement, librdkafka's broker threads);
 * ks_topic_set_partition_count() when metadata says the count (keyshift's
 * reporter thread); ks_topic_snapshot() when a report is built (reporter
 * thread, or the application thread at shutdown).
 *
 * What is cumulative and what restarts when the current count changes:
 *  - cumulative since the topic was first seen: messages, bytes, the key
 *    kinds (null, empty, explicit partition, hashed, sticky, random), the
 *    sketches (distinct keys, key sample, hot keys: they store each key's
 *    partitioner hash, so they are evaluated at any count when reported),
 *    and the acknowledgement counters;
 *  - since the current count took effect (`analysis_since`): per-partition
 *    load under the current and proposed counts, the flow matrices and the
 *    moved messages and bytes. A change of the current count (an increase
 *    that really happened) closes that window: the new count becomes the
 *    current one, default proposals (2x current) follow it, and the counts
 *    restart, so "what would move" always describes traffic under the
 *    count the topic really has.
 *
 * Messages that arrive before the count is known are kept (their
 * partitioner hash, 16 bytes per run of identical messages) up to
 * `pending_max` runs and counted in when it is; beyond that they are
 * counted as `unplaced` and reported.
 *
 * Memory per topic (bounded whatever the key cardinality):
  *   16 KiB (HyperLogLog) + key_sample_size x 68 B (with other clients'
 *   hashes) + mixed_sample_size x 136 B + topk_capacity x 232 B
 *   + 16 B x (current + sum of proposed counts) + 8 B x flow cells
 *   (<= flow_max_cells per proposal) + 16 B x pending runs (freed once
 *   the count is known) + 24 B x acknowledgements that wait for the count (at most 65,536;
 *   freed once checked) (while some
 *   wait for metadata).
 *
 * @locks every function takes the topic's own mutex; no function is called
 *        with another keyshift lock held.
 */
#ifndef KS_TOPIC_H
#define KS_TOPIC_H

#include <stddef.h>
#include <stdint.h>

#include "keyshift/keyshift.h"
#include "ks_budget.h"
#include "ks_clients.h"
#include "ks_clock.h"
#include "ks_config.h"
#include "ks_hll.h"
#include "ks_keyenc.h"
#include "ks_keysample.h"
#include "ks_mixed.h"
#include "ks_partitioner.h"
#include "ks_rates.h"
#include "ks_topk.h"

/** Where the current partition count came from. */
typedef enum ks_count_source {
        KS_COUNT_UNKNOWN = 0,
        KS_COUNT_METADATA,
        KS_COUNT_CONFIG,
} ks_count_source_t;

const char *ks_count_source_name(ks_count_source_t s);

typedef struct ks_topic_params {
        ks_partitioner_t partitioner;
        int sticky_linger_ms; /**< effective sticky.partitioning.linger.ms */
        int32_t proposed[KEYSHIFT_PROPOSED_MAX];
        size_t  proposed_cnt;      /**< 0: twice the current count */
        size_t  key_sample_size;   /**< keys in the distinct-key sample */
        size_t  mixed_sample_size; /**< logical keys in the mixed-key sample */
        size_t  topk_capacity;     /**< Space-Saving counters */
        int64_t flow_max_cells; /**< largest current x proposed matrix kept */
        size_t  pending_max;    /**< runs of messages kept while the count
                                 *   is unknown */
        /** all topics' sketches together (keyshift.memory.max.mb), bytes;
         *  0: every topic gets the sizes above (ks_topic_params_fit()) */
        size_t sketch_budget;
        /** 1: learn the partitioner from the acknowledgements (ks_learn.h)
         *  when `partitioner` is only what the configuration says; 0: it
         *  is settled (keyshift.partitioner, or a stored record's scan) */
        int learn;
} ks_topic_params_t;

struct ks_config;

/** Runs of messages kept while a topic's count is unknown
 *  (ks_topic_params_t.pending_max as ks_topic_params_from_config() sets
 *  it). */
#define KS_PENDING_MAX 65536

/**
 * @brief Sets @p p's proposals, sketch sizes, flow limit, pending runs and
 *        sketch budget from keyshift.* properties @p k (the hot-key
 *        counters: 16 per hot key listed, at least 1024; the sketch
 *        budget: what keyshift.memory.max.mb leaves after the drainer's
 *        key table, ks_budget_sketches()). The partitioner and sticky
 *        linger are left as they are.
 */
void ks_topic_params_from_config(ks_topic_params_t      *p,
                                 const struct ks_config *k);

/** Sample and counter sizes never go below these when a budget shrinks
 *  them (the smallest keyshift.key.sample.size and .mixed.sample.size):
 *  the budget's rule (ks_budget.h). */
#define KS_TOPIC_SAMPLE_MIN KS_BUDGET_SAMPLE_MIN
#define KS_TOPIC_TOPK_MIN KS_BUDGET_TOPK_MIN

/** Hot-key counters per hot key listed, and their least number
 *  (ks_topic_params_from_config()). */
#define KS_TOPIC_TOPK_PER_HOT 16
#define KS_TOPIC_TOPK_FLOOR 1024

/** The largest capacities a topic's sketches can have (the key sample's
 *  and the mixed-key sample's, the hot-key counters'): what the largest
 *  keyshift.key.sample.size, .mixed.sample.size and .hot.keys give. A
 *  report's capacities are within these, and the report readers (`keyshift
 *  show`, `merge`, ...) refuse larger ones by name rather than allocate
 *  what a file says; docs/keyshift.report.v2.schema.json states the same
 *  bounds (tests/unit/test_limits.c holds them equal). */
#define KS_TOPIC_SAMPLE_MAX ((size_t)KS_CONFIG_SAMPLE_MAX)
#define KS_TOPIC_TOPK_MAX                                                      \
        ((size_t)KS_CONFIG_HOT_KEYS_MAX * KS_TOPIC_TOPK_PER_HOT)

/** @returns ks_budget_sketch_bytes() of @p p's sizes: the heap one
 *           topic's sketches take (ks_budget.h holds the rule). */
size_t ks_topic_sketch_bytes(const ks_topic_params_t *p);

/**
 * @brief ks_budget_fit() of @p p's key sample, mixed-key sample and
 *        hot-key counters to @p bytes (ks_budget.h holds the rule). The
 *        report states the capacities in effect and the errors that
 *        follow from them.
 */
void ks_topic_params_fit(ks_topic_params_t *p, size_t bytes);

/** Messages and bytes (key + value) that one partition receives. */
typedef struct ks_load {
        uint64_t messages;
        uint64_t bytes;
} ks_load_t;

/** Cumulative counters (see the file comment). */
typedef struct ks_topic_counters {
        ks_load_t total;
        uint64_t  null_keys;             /**< key == NULL */
        uint64_t  empty_keys;            /**< key != NULL, length 0 */
        ks_load_t explicit_partition;    /**< sent to an explicit partition */
        ks_load_t hashed;                /**< placed by the key's hash */
        ks_load_t sticky;                /**< placed on the sticky partition */
        ks_load_t random;                /**< placed at random */
        uint64_t  unplaced;              /**< pending overflow: not analysed */
        uint64_t  unanalysed;            /**< met a full staging ring and
                               *   overflow (keyshift's analysis fell
                               *   behind): not analysed, not in total
                               *   (ks_stage.h) */
        uint64_t  explicit_out_of_range; /**< explicit partition >= count */
        uint64_t  key_encodings[KS_KEYENC__CNT]; /**< messages per encoding */
        /* the hot-key summary's share of runs of one passed by the
         * drainer's key table (ks_run_hot_t) */
        uint64_t hot_passed_by; /**< hashed messages passed by */
        uint64_t hot_sampled;   /**< of those, offered to the summary
                                       *   (each weighted KS_HOT_SAMPLE_ONE_IN) */
        /* delivery reports (on_acknowledgement) */
        uint64_t ack_messages;
        uint64_t ack_matched;         /**< partition == the model's */
        uint64_t ack_mismatched;      /**< partition != the model's */
        uint64_t ack_failed;          /**< delivery failed (err != 0) */
        uint64_t ack_not_predictable; /**< sticky or random placement */
        uint64_t ack_unverified;      /**< count unknown, or explicit partitions
                                    *   on this topic make it ambiguous */
        uint64_t ack_disagree_explicit; /**< of ack_unverified: disagreed on
                                         *   a topic with explicit
                                         *   partitions (beyond its
                                         *   explicit messages, some are
                                         *   mismatches for sure) */
        /* once a delivered partition disagrees: which hash the delivered
         * partitions of non-empty keys follow (up to KS_DIAGNOSE_MAX) */
        uint64_t diag_checked;
        uint64_t diag_follow[3]; /**< CRC-32, murmur2, FNV-1a */
        uint64_t ack_pending;    /**< differ from the model under the count
                                    *   keyshift knows; checked again against
                                    *   the next metadata (a count change
                                    *   librdkafka saw first explains them) */
        /* sampling under overload (ks_stage.h): while keyshift's analysis
         * was behind, a producing thread staged each message with
         * probability 1/N (N = 2^k per ring, rising and falling with its
         * backlog) and counted the others exactly. A staged message then
         * stands for N messages in every analysed figure (total, hashed,
         * key encodings, loads, flows, moved, hot keys, rates): those are
         * estimates (Horvitz-Thompson: unbiased, variance N (N - 1) per
         * sampled message). Exact: sampled_in, sampled_out, and the
         * messages produced, total - sampled_weighted + sampled_in +
         * sampled_out + unanalysed. */
        ks_load_t sampled_in;       /**< staged while sampling (exact) */
        ks_load_t sampled_weighted; /**< what those stand for in total:
                                     *   the sum of N, of N x bytes */
        ks_load_t sampled_out;      /**< counted but not staged (exact; not
                                     *   in total) */
        uint64_t  sampled_variance; /**< sum of N (N - 1) over sampled_in:
                                     *   the variance of total.messages */
        double    sampled_in_sq;    /**< sum of the squares of sampled_in's
                                     *   sizes, bytes^2: with
                                     *   sampled_in.bytes, the size-weighted
                                     *   mean size that bytes' sampling
                                     *   error needs (ks_analysis.h) */
        uint64_t  one_in_max;       /**< the largest N; 0: never sampled */
        uint64_t  sampled_seconds;  /**< seconds (of the monotonic clock)
                                     *   in which a sampled message was
                                     *   staged */
} ks_topic_counters_t;

/** The hash families of librdkafka's partitioners, in diag_follow order. */
extern const ks_partitioner_t ks_topic_diag_families[3];

/** Other clients' partitioner hashes of a sampled key, computed once when
 *  the key enters the key sample (ks_clients.h). */
typedef struct ks_model_hashes {
        uint32_t hash[KS_CLIENT__CNT];
        uint8_t  hashes_mask; /**< bit m: model m places this key by hash */
} ks_model_hashes_t;

/** Mixed-key collisions copied into a snapshot, at most. */
#define KS_TOPIC_MIXED_MAX 1000

/** Schema Registry ids framing keys, kept per topic. */
#define KS_TOPIC_SCHEMA_IDS 16

/**
 * Schema Registry ids framing a topic's keys, with how many distinct keys
 * each frames, counted up to 2: random bytes look framed once in ~500 keys
 * (ks_keyenc.h, rule 7), each with an "id" of its own that frames that one
 * key (two framed-looking random keys share their 31-bit id once in 2^31
 * pairs), while a serializer's id frames every key it writes. When all 16
 * places are taken, a new id takes the place of the id framing one key
 * that was seen least recently (its messages go to other_messages): ids of
 * random keys come and go, a hot one stays listed, and a serializer's new
 * id frames its second key long before 16 other new ids come by.
 */
typedef struct ks_schema_ids {
        int32_t  id[KS_TOPIC_SCHEMA_IDS];
        uint64_t messages[KS_TOPIC_SCHEMA_IDS];
        /** ks_hash_key64() of the first key framed with id[i] */
        uint64_t first_key[KS_TOPIC_SCHEMA_IDS];
        /** distinct keys framed with id[i]: 1, or 2 for two or more */
        uint8_t keys[KS_TOPIC_SCHEMA_IDS];
        /** when id[i] framed a key last (clock then) */
        uint64_t seen[KS_TOPIC_SCHEMA_IDS];
        uint64_t clock; /**< framed runs counted */
        size_t   cnt;
        uint64_t other_messages; /**< keys with ids not kept */
} ks_schema_ids_t;

/** ks_mismatch_example_t.keylen of an example whose key keyshift did not
 *  keep (only the first acknowledgements waiting for a count keep theirs). */
#define KS_MISMATCH_KEY_NOT_KEPT UINT32_MAX

/** One mismatch, kept as an example for the report. */
typedef struct ks_mismatch_example {
        uint8_t  key[64];
        uint32_t keylen; /**< full key length, or KS_MISMATCH_KEY_NOT_KEPT */
        int32_t  expected;
        int32_t  actual;
        int32_t  partition_count;
} ks_mismatch_example_t;

/** Analysis under one proposed count, since `analysis_since`. */
typedef struct ks_proposal {
        int32_t    partition_count;
        ks_load_t *partitions; /**< [partition_count] */
        uint64_t  *flow;       /**< [current][proposed] messages, or NULL */
        ks_load_t  moved;      /**< hashed traffic whose partition changes */
} ks_proposal_t;

/** A consistent copy of a topic's state, taken under its lock. */
/** Where a topic's modelled partitioner comes from. */
typedef enum ks_partitioner_source {
        KS_PSOURCE_CONFIG,     /**< the producer's configuration, unconfirmed */
        KS_PSOURCE_DELIVERIES, /**< confirmed by acknowledgements (ks_learn.h) */
        KS_PSOURCE_OVERRIDE,   /**< keyshift.partitioner (or a scan's) */
} ks_partitioner_source_t;

/** @returns "config", "deliveries" or "keyshift.partitioner". */
const char *ks_partitioner_source_name(ks_partitioner_source_t s);

/** What the acknowledgements say of the partitioner (ks_learn.h). */
typedef struct ks_topic_learned {
        ks_partitioner_source_t source;
        int              confirmed;   /**< by deliveries, or config matched */
        int              unexplained; /**< no candidate explains them */
        int              learning;    /**< candidates still analysed */
        ks_partitioner_t configured;  /**< what the configuration said */
        uint64_t         discriminating_keys, agreeing, disagreeing;
} ks_topic_learned_t;

typedef struct ks_topic_snapshot {
        char            *name;
        ks_partitioner_t partitioner;
        /** what the deliveries say of the partitioner; when unexplained,
         *  `current` holds the acknowledged loads, not a model's */
        ks_topic_learned_t  learned;
        int                 sticky_linger_ms;
        ks_topic_counters_t c;
        int32_t             partition_count; /**< 0 = unknown */
        ks_count_source_t   count_source;
        int32_t             previous_count; /**< 0 = never changed */
        int64_t count_changed_at_ms; /**< wall clock, 0 = never changed */
        /** wall clock of the last ks_topic_note_changes() that found the
         *  topic changed; 0 = never asked */
        int64_t last_changed_at_ms;
        int64_t analysis_since_ms;   /**< wall clock */
        int64_t analysis_since_mono; /**< the same, monotonic (rates' clock) */
        ks_load_t     window_total;  /**< all messages since analysis_since */
        ks_load_t     window_hashed; /**< hashed messages since then */
        ks_load_t    *current;       /**< [partition_count] or NULL */
        size_t        proposal_cnt;
        ks_proposal_t proposals[KEYSHIFT_PROPOSED_MAX];
        int           proposals_default; /**< 1: proposals are 2x current */
        size_t        pending;           /**< messages waiting for the count */
        ks_hll_t      hll;
        ks_keysample_entry_t *sample; /**< [sample_cnt] */
        size_t                sample_cnt;
        size_t                sample_capacity;
        double                sample_distinct_estimate;
        ks_model_hashes_t    *sample_models; /**< [sample_cnt], same order */
        ks_mixed_collision_t *mixed;         /**< [mixed_cnt], busiest first */
        size_t                mixed_cnt;
        ks_mixed_summary_t    mixed_summary;
        ks_topk_entry_t      *hot; /**< [hot_cnt], busiest first */
        size_t                hot_cnt;
        uint64_t              topk_total;
        size_t                topk_capacity;
        ks_mismatch_example_t mismatch;
        int                   has_mismatch;
        ks_schema_ids_t       schema_ids;
        int                   brokers;            /**< 0: unknown */
        int                   replication_factor; /**< 0: unknown */
        int                   compacted;          /**< 1, 0, -1: unknown */
        /** the cluster's count while partition_count comes from
         *  keyshift.partitions.current; 0: unknown */
        int32_t    metadata_count;
        ks_rates_t rates;   /**< per-second series since start */
        int64_t    mono_ms; /**< monotonic time of the snapshot */
        /** how long ks_topic_snapshot() held the topic's lock (ns, on
         *  CLOCK_MONOTONIC): what the drainer may wait. Not reported. */
        int64_t lock_held_ns;
} ks_topic_snapshot_t;

typedef struct ks_topic ks_topic_t;

/** @returns a new topic, or NULL on ENOMEM. @p params is copied. */
ks_topic_t *ks_topic_new(const char *name, const ks_topic_params_t *params,
                         int64_t now_ms);
void        ks_topic_destroy(ks_topic_t *t);
const char *ks_topic_name(const ks_topic_t *t);

/**
 * @brief Counts one produced message.
 * @param key NULL for a NULL key.
 * @param partition the message's partition as produced: -1
 *        (RD_KAFKA_PARTITION_UA) lets the partitioner choose; any other
 *        value is an explicit partition.
 * @param value_len value bytes (key bytes are added to it).
 * @locality any application thread calling produce().
 */
void ks_topic_record(ks_topic_t *t, const void *key, size_t keylen,
                     int32_t partition, size_t value_len);

/** @brief ks_topic_record() at monotonic time @p mono_ms (for the rates;
 *         ks_topic_record() reads CLOCK_MONOTONIC_COARSE). */
void ks_topic_record_at(ks_topic_t *t, const void *key, size_t keylen,
                        int32_t partition, size_t value_len, int64_t mono_ms);

/** @brief ks_topic_record_at() of @p messages messages of one key, of
 *         @p bytes key + value bytes in all (a message staged while its
 *         thread sampled stands for several: ks_batch_add_sampled()). */
void ks_topic_record_n_at(ks_topic_t *t, const void *key, size_t keylen,
                          int32_t partition, uint64_t messages, uint64_t bytes,
                          int64_t mono_ms);

/**
 * What the analysis needs to know of one key on one topic, computed by
 * ks_topic_key_facts(): a function of the key bytes, whether the message
 * names a partition, and the topic's partitioner settings only, so
 * keyshift's drainer computes it once per run of a key (ks_batch.h), not
 * for every message.
 */
typedef struct ks_key_facts {
        uint64_t h64;       /**< ks_hash_key64() (hashed keys only) */
        uint64_t lhash;     /**< the logical key's hash, if has_logical */
        uint32_t phash;     /**< the partitioner's hash (hashed keys only) */
        int32_t  schema_id; /**< Schema Registry id, or -1 */
        uint8_t  enc;       /**< ks_keyenc_classify(), before the topic's int32
                         *   rule (ks_keyenc.h, rule 2) */
        uint8_t  place;     /**< ks_placement_t (KS_PLACE_HASHED when the
                         *   message names its partition) */
        uint8_t  has_logical; /**< the key has a logical value (ks_mixed.h) */
        uint8_t  partitioner; /**< the ks_partitioner_t they were made for */
} ks_key_facts_t;

/**
 * @brief Computes @p f for @p key (NULL for a NULL key) in a message to
 *        partition @p partition (-1: the partitioner chooses) on @p t.
 *        Cost: key classification, the partitioner's hash and a 64-bit
 *        hash (~50-60 ns for a 9-byte key here).
 * @locality any thread. @locks none (reads constant settings only).
 */
void ks_topic_key_facts(const ks_topic_t *t, const void *key, size_t keylen,
                        int32_t partition, ks_key_facts_t *f);

/** @brief Takes / releases the topic's lock around the *_locked calls. */
void ks_topic_lock(ks_topic_t *t);
void ks_topic_unlock(ks_topic_t *t);

/**
 * How a run reaches the hot-key summary (ks_topic_record_run_locked()'s
 * @p hot). Runs of one that the drainer's key table passed by (ks_batch.h:
 * a stream whose keys rarely repeat) are offered one in
 * KS_HOT_SAMPLE_ONE_IN, chosen at random whatever the key, each weighted
 * KS_HOT_SAMPLE_ONE_IN: a new key then costs the summary's work (~25-35 ns,
 * bench/README.md) only when sampled. A listed key's count is then an
 * estimate: its sampled part c_s = KS_HOT_SAMPLE_ONE_IN x Binomial(m, 1 /
 * KS_HOT_SAMPLE_ONE_IN) for its m messages passed by has variance
 * m (KS_HOT_SAMPLE_ONE_IN - 1), so the report states
 * 3 sqrt(count (KS_HOT_SAMPLE_ONE_IN - 1)) beside each count
 * (ks_topic_hot_sampling_error(): count >= c_s, so at least 3 standard
 * errors), on top of Space-Saving's one-sided bound. Runs of the table
 * (a key counted in its slot) are offered whole, as before: exact streams
 * stay exact. Every other figure counts every message.
 */
typedef enum ks_run_hot {
        KS_RUN_HOT_NOW     = 0, /**< the summary counts the run at once */
        KS_RUN_HOT_WINDOW  = 1, /**< the run belongs to a window (below) */
        KS_RUN_HOT_SAMPLED = 2, /**< a run of one passed by and sampled:
                                 *   counted at once, weighted */
        KS_RUN_HOT_SKIPPED = 3, /**< a run of one passed by, not sampled:
                                 *   the summary does not see it */
} ks_run_hot_t;

/** One run of one passed by in this many is offered to the hot-key
 *  summary (ks_run_hot_t). */
#define KS_HOT_SAMPLE_ONE_IN 8

/** @returns the sampling error (3 standard errors, messages) stated beside
 *           a hot key's @p count on a topic whose hot-key summary got
 *           @p sampled messages by sample (ks_topic_counters_t.hot_sampled;
 *           0: none, and the error is 0), ks_run_hot_t. */
uint64_t ks_topic_hot_sampling_error(uint64_t sampled, uint64_t count);

/**
 * @brief Counts @p messages identical messages (same key, same partition
 *        argument), @p bytes key + value bytes in all, whose key has facts
 *        @p f: exactly what as many ks_topic_record_at() calls do, except
 *        the rates (ks_topic_rate_locked()). Counters, loads, flows and the
 *        moved figures are sums, so they are exact; the sketches take
 *        weighted updates (ks_topk_add_n(), ks_keysample_add_payload_n(),
 *        ks_mixed_add_n()) with unchanged error bounds.
 * @param windowed a ks_run_hot_t. KS_RUN_HOT_NOW (0): the hot-key summary
 *        counts the run at once. KS_RUN_HOT_WINDOW (1): the run belongs to
 *        a window begun with ks_topic_window_begin_locked() (one run per
 *        key and window): a key the summary monitors is counted, another
 *        is left for ks_topic_offer_run_locked(). KS_RUN_HOT_SAMPLED,
 *        KS_RUN_HOT_SKIPPED: a run of one the key table passed by.
 * @returns 1 when the run must be offered to the hot-key summary, after
 *          every run of the window was recorded; else 0.
 * @locks the caller holds ks_topic_lock(t).
 */
int ks_topic_record_run_locked(ks_topic_t *t, const void *key, size_t keylen,
                               int32_t partition, const ks_key_facts_t *f,
                               uint64_t messages, uint64_t bytes, int windowed);

/**
 * @brief Counts @p messages identical records read back from a topic
 *        (`keyshift scan`) that are stored in partition @p stored, as
 *        ks_topic_record_run_locked() counts messages sent to the
 *        partitioner (partition -1), except where they count under the
 *        current count: in partition @p stored, where they really are, not
 *        where the model would put them. So the current loads are the
 *        topic's real per-partition loads, and a proposal's moved figures
 *        count the hashed records whose proposed partition (the model's,
 *        with the topic's partitioner) differs from the one they are in.
 *        Records the partitioner does not hash (NULL keys under a
 *        *_random partitioner) count in @p stored's current load and in no
 *        proposal, as the plugin leaves them out of proposals. The current
 *        count must be set first (ks_topic_set_partition_count()); records
 *        met before it, or with @p stored >= the count, count as
 *        `unplaced`. @p f comes from ks_topic_key_facts() with partition
 *        -1. Not windowed: the hot-key summary counts the run at once.
 * @returns 0.
 * @locks the caller holds ks_topic_lock(t).
 */
int ks_topic_record_stored_locked(ks_topic_t *t, const void *key, size_t keylen,
                                  int32_t stored, const ks_key_facts_t *f,
                                  uint64_t messages, uint64_t bytes);

/** @brief Begins a window of runs (ks_topk_window_begin()) unless the
 *         topic's last window began with the same @p window id (the
 *         drainer's flush number: one window per topic and flush).
 *  @locks the caller holds ks_topic_lock(t). */
void ks_topic_window_begin_locked(ks_topic_t *t, uint64_t window);

/** @brief Offers a run that ks_topic_record_run_locked() left to the
 *         hot-key summary: in its window (ks_topk_window_add()) if
 *         @p windowed, else as a plain weighted add (ks_topk_add_n(): a
 *         run that could not wait for its window's offers).
 *  @locks the caller holds ks_topic_lock(t). */
void ks_topic_offer_run_locked(ks_topic_t *t, const void *key, size_t keylen,
                               const ks_key_facts_t *f, uint64_t messages,
                               uint64_t bytes, int windowed);

/** @brief Counts @p messages messages, @p bytes in all, produced at
 *         monotonic time @p mono_ms in the per-second rates.
 *  @locks the caller holds ks_topic_lock(t). */
void ks_topic_rate_locked(ks_topic_t *t, int64_t mono_ms, uint64_t messages,
                          uint64_t bytes);

/**
 * @brief Notes that a message to @p t names its partition, before it is
 *        analysed: ks_topic_ack() then treats a disagreeing delivery as
 *        possibly explicit even while that message waits in a staging ring
 *        (ks_stage.h). Lock-free.
 * @locality any application thread calling produce().
 */
void ks_topic_note_explicit(ks_topic_t *t);

/**
 * @returns whether a partition count of @p t has been known (set once,
 *          never unset): its runs are placed when recorded, not kept
 *          pending (at most ks_topic_params_t.pending_max runs), so the
 *          drainer's key table may pass its messages by as runs of one
 *          (ks_batch.h). Lock-free.
 * @locality any thread.
 */
int ks_topic_count_known(const ks_topic_t *t);

/**
 * @brief Counts a message that a producing thread sampling under overload
 *        did not stage (ks_stage.h): exact, in the topic's slot for
 *        @p ring (ks_topic_counters_t.sampled_out). Each slot has one
 *        writer, the ring's thread: no read-modify-write, no shared line.
 *        The slots (64 B each, KS_TOPIC_SAMPLE_RINGS of them, 4 KiB) are
 *        allocated with the topic's first such message; when that fails,
 *        the message is counted with an atomic add instead.
 * @param ring the ring's index in its stage, < KS_TOPIC_SAMPLE_RINGS.
 * @param bytes its key and value bytes.
 * @locality the ring's owner thread (produce()). Lock-free.
 */
void ks_topic_note_sampled_out(ks_topic_t *t, unsigned ring, uint64_t bytes);

/**
 * @brief Counts a message staged while its thread sampled, which stands
 *        for 2^@p shift messages in the analysis (its run carries the
 *        weight): sampled_in, sampled_weighted, sampled_variance,
 *        one_in_max, and the second @p mono_ms falls in (sampled_seconds).
 * @locality the drainer thread only (each field has that one writer).
 *           Lock-free.
 */
void ks_topic_note_sampled_in(ks_topic_t *t, unsigned shift, uint64_t bytes,
                              int64_t mono_ms);

/**
 * @brief Counts a message on_send could not stage (its thread's ring was
 *        full: keyshift's drainer fell behind) and so never analyses.
 *        Lock-free (a relaxed atomic add).
 * @locality any application thread calling produce().
 */
void ks_topic_note_unanalysed(ks_topic_t *t);

/** Slots for sampled-out messages per topic: one per staging ring
 *  (KS_STAGE_RINGS_MAX, checked in ks_stage.c). */
#define KS_TOPIC_SAMPLE_RINGS 64

/**
 * @brief Counts one delivery report and checks the partition librdkafka
 *        assigned against the model.
 * @param failed non-zero if delivery failed.
 * @returns 1 when the partition disagrees with the model under the count
 *          keyshift knows (the caller should refresh metadata: the count
 *          may have changed), else 0.
 * @locality librdkafka's broker threads or the application's poll thread;
 *           the key's partitioner hash comes from the thread's cache when
 *           the thread checked that key last (ks_phash_cache.h: 64 KiB
 *           per thread that checks deliveries).
 */
int ks_topic_ack(ks_topic_t *t, const void *key, size_t keylen,
                 int32_t partition, int failed);

/**
 * @returns 1 when every acknowledgement of @p t is wanted, however busy
 *          the host: while its partitioner is learned or a disagreement
 *          diagnosed (they count every acknowledgement), or before its
 *          count is known; 0 when a sample of them would do.
 * @locality any thread; lock-free (the count ks_topic_ack() publishes).
 */
int ks_topic_ack_wants_all(const ks_topic_t *t);

/** @brief ks_topic_ack() with the message's key + value @p bytes, counted
 *         in the delivered loads while the partitioner is learned or
 *         unexplained (ks_learn.h). */
int ks_topic_ack_message(ks_topic_t *t, const void *key, size_t keylen,
                         int32_t partition, uint64_t bytes, int failed);

/**
 * @brief A partition count an answer gave (metadata, at every refresh):
 *        deliveries are checked against it from now on (besides the
 *        analysis's count and the one before, which a message produced
 *        before the change was placed under), and the acknowledgements
 *        pending verification are checked against it, as in
 *        ks_topic_set_partition_count(). The analysis does not take it:
 *        ks_topic_apply_count() does, once every message produced before it
 *        is analysed (the drainer, ks_stage_count_later()), so that the
 *        reporter never waits for the drainer, which may run at idle
 *        priority, before deliveries can be verified.
 * @returns 1 if @p count is not the newest count given before (the caller
 *          then has the analysis take it), else 0.
 * @locality the reporter thread. @locks the topic's.
 */
int ks_topic_announce_count(ks_topic_t *t, int32_t count);

/**
 * @brief The analysis takes partition count @p count, announced before
 *        (ks_topic_announce_count()): the first known count places the
 *        pending messages; a different count starts a new analysis window.
 *        Acknowledgements are not checked again (the announcement did).
 * @returns 1 if the count changed (not for the first known count), else 0.
 * @locality the drainer thread (at a flush point, ks_stage.h), or any
 *           thread through ks_topic_set_partition_count(). @locks the
 *           topic's.
 */
int ks_topic_apply_count(ks_topic_t *t, int32_t count, ks_count_source_t source,
                         int64_t now_ms);

/**
 * @brief Sets the current partition count (from metadata or
 *        configuration) at once: ks_topic_announce_count(), then
 *        ks_topic_apply_count(). For callers with nothing staged ahead of
 *        the count (configuration, `keyshift scan`, tests). The first known count
 *        places the pending messages; a different count starts a new
 *        analysis window. Acknowledgements pending verification are
 *        checked against this count: matched; mismatched for good when a
 *        second answer does not explain them either (ks_topic_ack.c,
 *        ks_topic_verify_suspects()); else pending until the next.
 * @returns 1 if the count changed (not for the first known count), else 0.
 */
int ks_topic_set_partition_count(ks_topic_t *t, int32_t count,
                                 ks_count_source_t source, int64_t now_ms);

/**
 * @brief Notes whether the topic changed since the previous call: a
 *        message analysed, an acknowledgement counted, a partition count
 *        or cluster answer, a verification settled (a 64-bit fingerprint
 *        of those counters, ks_hash_murmur64a()). Time alone changes
 *        nothing: rates of a silent topic stay as last reported (its text
 *        is reused, ks_report_reuse.h).
 * @returns 1 if it changed, or at the first call; 0 if not. The
 *          snapshot's last_changed_at_ms is @p now_ms (wall clock, ms) of
 *          the last call that returned 1.
 * @locality keyshift's reporter thread (one caller). @locks the topic's.
 */
int ks_topic_note_changes(ks_topic_t *t, int64_t now_ms);

/**
 * @returns how many calls of ks_topic_note_changes() found the topic
 *          changed: 0 before the first call; a report built from a
 *          snapshot taken after the call that returned generation g holds
 *          the topic as it stands until a later call finds it changed,
 *          which ks_report_reuse.c relies on to reuse a topic's text.
 * @locality any thread. @locks the topic's.
 */
uint64_t ks_topic_change_gen(ks_topic_t *t);

/**
 * @returns what the thread writing reports keeps with the topic
 *          (ks_topic_keep()), or NULL.
 * @locality the thread writing reports: keyshift's reporter thread, then
 *           the thread writing the final report after it stopped; never
 *           two at once. No lock.
 */
void *ks_topic_kept(const ks_topic_t *t);

/**
 * @brief Keeps @p kept with the topic (what was kept before is freed with
 *        its own @p free_fn, unless it is @p kept), freed with
 *        @p free_fn when the topic is destroyed. @p kept is opaque here:
 *        the report's text of the topic (ks_report_reuse.c).
 * @locality as ks_topic_kept().
 */
void ks_topic_keep(ks_topic_t *t, void *kept, void (*free_fn)(void *kept));

/** @brief Checks acknowledgements pending verification against the count
 *         keyshift knows, as a metadata answer does: with @p final (at
 *         shutdown, when no newer count can come) each is matched or
 *         mismatched for good; else a disagreement is confirmed by a
 *         second check (keyshift.partitions.current: each refresh). */
void ks_topic_settle_acks(ks_topic_t *t, int final);

/**
 * @brief Records the partition count the cluster's metadata gives while
 *        the model's count comes from keyshift.partitions.current: when
 *        they differ the run is a rehearsal of another count, whose
 *        deliveries cannot be checked against the model (ks_report.c).
 */
void ks_topic_set_metadata_count(ks_topic_t *t, int32_t count);

/**
 * @brief Records what metadata and the Admin API say of the topic:
 *        @p brokers in the cluster, @p replication_factor (replicas of
 *        partition 0), @p compacted (cleanup.policy contains compact: 1,
 *        0, or -1 unknown). 0 for brokers/replication_factor = unknown.
 */
void ks_topic_set_cluster_info(ks_topic_t *t, int brokers,
                               int replication_factor, int compacted);

/** @returns 1 once ks_topic_set_cluster_info() was given a compacted
 *           answer (even -1: asked, no answer), so it is asked once. */
int ks_topic_cleanup_policy_asked(ks_topic_t *t);

/** @returns the count the analysis uses, 0 if unknown. */
int32_t ks_topic_partition_count(ks_topic_t *t);

/** @returns the newest partition count known (announced or applied), 0
 *           if none yet. @locks the topic's. */
int32_t ks_topic_announced_count(ks_topic_t *t);

/**
 * @brief Copies the topic's state. @returns 0, or -1 on ENOMEM (then
 *        nothing needs freeing).
 */
int  ks_topic_snapshot(ks_topic_t *t, ks_topic_snapshot_t *snap);
void ks_topic_snapshot_free(ks_topic_snapshot_t *snap);

/**
 * Topics whose sketches are smaller than the properties ask
 * (keyshift.key.sample.size, keyshift.mixed.sample.size, the hot-key
 * counters of keyshift.hot.keys) because keyshift.memory.max.mb's share
 * made them so (ks_registry.h), tallied over a report's snapshots: the
 * SKETCHES_REDUCED warning, which so agrees with the topics' own figures.
 * Sizes in keys (samples) or counters.
 */
typedef struct ks_sketch_tally {
        size_t topics;  /**< snapshots tallied */
        size_t reduced; /**< of them, with any sketch below its size asked */
        /** per sketch: the topics where it is below the size asked, and
         *  the smallest such size */
        size_t key_sample_reduced, key_sample_min;
        size_t mixed_sample_reduced, mixed_sample_min;
        size_t topk_reduced, topk_min;
} ks_sketch_tally_t;

/** @brief Tallies @p s's sketch sizes against @p asked's in @p tl (zeroed
 *         before the first). */
void ks_sketch_tally_add(ks_sketch_tally_t *tl, const ks_topic_snapshot_t *s,
                         const ks_topic_params_t *asked);
/** @brief ks_sketch_tally_add() of a topic's sizes as a snapshot states
 *         them (sample_capacity, mixed_summary.capacity, topk_capacity):
 *         for a topic whose report text is reused without a snapshot. */
void ks_sketch_tally_add_sizes(ks_sketch_tally_t *tl, size_t sample_capacity,
                               size_t mixed_capacity, size_t topk_capacity,
                               const ks_topic_params_t *asked);

#endif /* KS_TOPIC_H */
