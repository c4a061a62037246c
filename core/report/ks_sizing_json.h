/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_sizing_json.h
 * @brief Builds a topic's `rates`, `skew`, `sizing` and `migration` report
 *        objects, the hot keys' and proposals' extra members, and the
 *        HOT_KEY, PEAK_TO_MEAN_HIGH, REBALANCE_STALL_HIGH and
 *        COMPACTED_TOPIC warnings, from one plain input struct.
 *
 * The caller fills ks_sizing_input_t from a topic snapshot (every pointer
 * is borrowed, nothing is modified) and sets the returned objects into
 * the topic's report object. Runs on whatever thread builds the report;
 * touches no live state.
 */
#ifndef KS_SIZING_JSON_H
#define KS_SIZING_JSON_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "keyshift/keyshift.h"
#include "ks_rates.h"
#include "ks_sizing.h"
#include "ks_warn.h"

#ifndef KS_WARN_HOT_KEY
#define KS_WARN_HOT_KEY "HOT_KEY"
#endif
#ifndef KS_WARN_PEAK_TO_MEAN_HIGH
#define KS_WARN_PEAK_TO_MEAN_HIGH "PEAK_TO_MEAN_HIGH"
#endif
#ifndef KS_WARN_REBALANCE_STALL_HIGH
#define KS_WARN_REBALANCE_STALL_HIGH "REBALANCE_STALL_HIGH"
#endif
#ifndef KS_WARN_COMPACTED_TOPIC
#define KS_WARN_COMPACTED_TOPIC "COMPACTED_TOPIC"
#endif

/** One partition count: the current one or a proposal. */
typedef struct ks_sizing_count_in {
        int32_t         count;          /**< 0: unknown */
        const uint64_t *loads;          /**< [count] messages per partition over
                                 *   window_s, or NULL */
        uint64_t        moved_messages; /**< proposals: messages since
                                  *   analysis_since whose partition changes
                                  *   (ks_proposal_t.moved.messages) */
        double moved_distinct_keys;     /**< proposals: distinct keys that move
                                     *   (estimate) */
} ks_sizing_count_in_t;

/** One hot key as the Space-Saving summary holds it (ks_topk_entry_t). */
typedef struct ks_sizing_hot_in {
        uint32_t phash; /**< partitioner hash */
        uint64_t count; /**< messages (overestimate by <= error) */
        uint64_t error;
} ks_sizing_hot_in_t;

typedef struct ks_sizing_input {
        const char               *topic;  /**< for warnings */
        const ks_sizing_params_t *params; /**< the keyshift.* sizing
                                           *   properties */
        ks_rates_summary_t rates; /**< ks_rates_summarize() of a snapshot */
        double window_s;          /**< seconds the loads and moved counts cover
                          *   (report time - analysis_since) */
        ks_sizing_count_in_t current;
        ks_sizing_count_in_t proposals[KEYSHIFT_PROPOSED_MAX];
        size_t               proposal_cnt;
        /* the key sample (ks_keysample_entry_t phash and messages) */
        const uint32_t *sample_phash;
        const uint64_t *sample_messages;
        size_t          sample_cnt;
        /* hot keys, busiest first */
        const ks_sizing_hot_in_t *hot;
        size_t                    hot_cnt;
        int32_t brokers;            /**< in the cluster metadata; 0 unknown */
        int32_t replication_factor; /**< replicas of partition 0; 0 unknown */
        int     compacted;          /**< cleanup.policy has compact: 1; 0 no; -1
                            *   unknown */
        double
            queue_max_messages; /**< queue.buffering.max.messages; 0 unknown */
        double
            queue_max_bytes; /**< queue.buffering.max.kbytes x 1024; 0 unknown */
        size_t migration_target; /**< index of the proposal the migrations
                                  *   compare (0: the first) */
} ks_sizing_input_t;

/** The built objects; each is a new reference owned by this struct. */
typedef struct ks_sizing_json {
        json_t *rates;         /**< topics[t].rates */
        json_t *skew;          /**< topics[t].skew */
        json_t *sizing;        /**< topics[t].sizing */
        json_t *migration;     /**< topics[t].migration (null: no proposal) */
        json_t *hot_keys;      /**< [hot_cnt] objects: json_object_update()
                            *   topics[t].hot_keys[i] with hot_keys[i] */
        json_t *split_windows; /**< [proposal_cnt]: set as
                                *   topics[t].proposals[i].split_window */
} ks_sizing_json_t;

/**
 * @brief Builds every object of @p out and adds the warnings to @p wl
 *        (may be NULL).
 * @returns 0, or -1 on ENOMEM (then @p out holds nothing).
 */
int ks_sizing_json_build(const ks_sizing_input_t *in, ks_sizing_json_t *out,
                         ks_warn_list_t *wl);

/**
 * @returns 1 when the report's `sizing` object @p sizing recommends a
 *          count: `recommended` is a number resting on a consumer input
 *          (a report of an earlier keyshift whose base was today's count,
 *          `basis.base_source` "current_count", does not); 0 otherwise,
 *          NULL and null included. For the readers of reports (the story,
 *          `keyshift show`, `keyshift html`).
 */
int ks_sizing_json_advises(const json_t *sizing);

/** @brief Releases what @p out still holds (NULL members are skipped). */
void ks_sizing_json_clear(ks_sizing_json_t *out);

#endif /* KS_SIZING_JSON_H */
