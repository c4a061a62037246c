/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli_stats.h
 * @brief Figures show and html draw from a checked report: the
 *        per-partition load and its skew at one count, and the rank-size
 *        curve of keys (messages per key, busiest first) from the hot-key
 *        summary and the uniform key sample.
 */
#ifndef KS_CLI_STATS_H
#define KS_CLI_STATS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "ks_sizing.h"

/** One partition count's load, from a report's `partitions` columns. */
typedef struct ks_cli_loads {
        int32_t            count;    /**< partitions */
        uint64_t          *messages; /**< [count], owned */
        uint64_t           total;
        double             mean;
        int32_t            busiest; /**< index of the busiest partition */
        ks_sizing_spread_t spread;  /**< max, min, median, max / median */
} ks_cli_loads_t;

/**
 * @brief Reads a checked `partitions` object ({messages: [...], bytes:
 *        [...]}, columns indexed by partition) into @p out; the spread is
 *        computed with
 *        ks_sizing_spread() (limit 2.5 x median).
 * @returns 0, or -1 on ENOMEM or an empty array.
 */
int ks_cli_loads_read(const json_t *partitions, ks_cli_loads_t *out);

void ks_cli_loads_free(ks_cli_loads_t *l);

/** One point of the rank-size curve. */
typedef struct ks_cli_rank_point {
        double rank;       /**< 1 = the busiest key */
        double messages;   /**< messages of the key at this rank */
        double cumulative; /**< share of keyed messages of ranks <= this */
        int    hot;        /**< from the hot-key summary (else the sample) */
} ks_cli_rank_point_t;

typedef struct ks_cli_keyrank {
        ks_cli_rank_point_t *points; /**< owned, by rank */
        size_t               cnt;
        double               distinct; /**< distinct keys (estimate) */
        int                  exact;    /**< the sample held every key */
        size_t               hot_cnt;  /**< points from the hot keys */
        double seconds; /**< the time the counts cover, when the report
                         *   has rates over at least 10 s (then the chart
                         *   shows messages/s); 0: show messages */
} ks_cli_keyrank_t;

/**
 * @brief The rank-size curve of a topic's keys. The head comes from the
 *        Space-Saving summary (`merge.hot_keys`, its reliable entries:
 *        count above twice its error), the tail from the bottom-k key
 *        sample (`merge.key_sample`): a uniform sample of k of the D
 *        distinct keys, so its i-th busiest entry stands at rank about
 *        (i + 0.5) D / k and for D / k keys. When the sample is not full
 *        it holds every key and the curve is exact. Sets `seconds` from
 *        the topic's `rates` (messages / msgs_per_s) when they cover at
 *        least 10 s.
 * @param max_points thins the curve to about this many points, evenly on
 *        a log scale of rank (0: keep all).
 * @returns 0, or -1 on ENOMEM.
 */
int ks_cli_keyrank_build(const json_t *topic, size_t max_points,
                         ks_cli_keyrank_t *out);

void ks_cli_keyrank_free(ks_cli_keyrank_t *k);

/**
 * @returns the share of the topic's keyed messages carried by its busiest
 *          @p n keys (from the curve), 0..1.
 */
double ks_cli_keyrank_share_of_top(const ks_cli_keyrank_t *k, double n);

/**
 * @brief A hot key's verdict (`fixable_by_partitions`, `salt_buckets`) in
 *        a few words for @p buf: "partitions spread it", or "salt into N"
 *        when the key alone exceeds one partition's target rate.
 * @returns 0 when the report has no verdict (buf ""), 1 fixable by
 *          partitions, 2 not (salt).
 */
int ks_cli_hot_verdict(const json_t *hot_key, char *buf, size_t size);

/** @brief Appends printf-style text to @p buf at *@p o and advances *@p o
 *         (bounded by @p size: the text is cut, never overflowed). */
void ks_cli_append(char *buf, size_t size, size_t *o, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif /* KS_CLI_STATS_H */
