/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_sizing.h
 * @brief Hot keys, skew and sizing advice: pure functions from measured
 *        rates and loads to the figures of the report's `skew`, `sizing`
 *        and `migration` objects (ks_sizing.c states each formula and its
 *        source).
 *
 * Units: rates are per second (msgs/s, bytes/s); durations say their unit
 * in their name (_s, _ms); MB is 10^6 bytes. Nothing here allocates,
 * reads a clock or knows librdkafka: every function is pure and
 * thread-safe, except that the skew functions sort the array they are
 * given (the caller passes a copy it owns).
 */
#ifndef KS_SIZING_H
#define KS_SIZING_H

#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------------ */
/* Parameters: every input that is not measured, one keyshift.* property */
/* each (ks_sizing_param_descs lists names, ranges and defaults).        */
/* ------------------------------------------------------------------ */

/** The two consumer inputs without which no count is recommended. */
#define KS_SIZING_PROP_CONSUMER_RATE "keyshift.consumer.msgs.per.s"
#define KS_SIZING_PROP_CONSUMERS "keyshift.consumers.max"

typedef struct ks_sizing_params {
        double partition_target_msgs_per_s; /**< 0: the fair share */
        double consumers_max;       /**< planned consumers, 0: unknown */
        double consumer_msgs_per_s; /**< one consumer's capacity, 0: unknown */
        double rebalance_ms_per_partition; /**< stall per partition: 4 */
        double rebalances_per_day;         /**< 6 */
        double rebalance_stall_warn_s; /**< REBALANCE_STALL_HIGH above: 30 */
        double peak_to_mean_warn;      /**< PEAK_TO_MEAN_HIGH above: 4 */
        double partition_skew_max;     /**< busiest / median limit: 2.5 */
        double producer_throughput_mb_per_s; /**< Tp, one partition: 10 */
        double consumer_throughput_mb_per_s; /**< Tc, one partition: 20 */
        double broker_file_handles_max;      /**< H_max per broker: 10000 */
        double replication_latency_ms_per_partition; /**< l_r: 1 */
        double replication_latency_max_ms;           /**< L: 200 */
        double unavailability_ms_per_partition;      /**< u: 5 */
        double unavailability_max_ms;                /**< U: 2000 */
        double producers_metadata_max_age_ms; /**< split window: 300000 */
        double consumer_lag_ms; /**< consumers' usual lag, 0: unknown */
} ks_sizing_params_t;

/** One property: its name, accepted range and default. */
typedef struct ks_sizing_param_desc {
        const char *name;     /**< "keyshift.consumers.max", ... */
        const char *accepted; /**< for error messages and documentation */
        double      min, max, def;
        int         integer; /**< 1: whole numbers only */
        size_t      offset;  /**< of its double in ks_sizing_params_t */
        /** > 0: a value other than 0 (unknown, or the default rule) must be
         *  at least this: a rate of 1e-9 msgs/s would size a topic at
         *  10^15 partitions per msg/s of traffic (issue 30) */
        double min_nonzero;
} ks_sizing_param_desc_t;

/** Every sizing property, terminated by a row with name NULL. */
extern const ks_sizing_param_desc_t ks_sizing_param_descs[];

/** @brief Sets every parameter to its default. */
void ks_sizing_params_init(ks_sizing_params_t *p);

/**
 * @brief Reads @p s, all of it, as a decimal number the way keyshift's
 *        properties and `keyshift plan` take numbers: an optional '-',
 *        digits, then optionally '.' and digits, then optionally an
 *        exponent (e or E, an optional sign, digits); with @p integer,
 *        digits only after the sign. No white space, hexadecimal ("0x10"),
 *        "12." or ".5", "+5", "inf" or "nan": what strtod() alone would
 *        take (issue 30).
 * @returns 0 with *@p out set, or -1.
 */
int ks_sizing_parse_decimal(const char *s, int integer, double *out);

/**
 * @brief Sets sizing property @p name from its text @p value (white space
 *        around it is ignored, as for the integer properties).
 * @returns 0 when set; 1 when @p value is out of range (errstr says what
 *          is accepted); -1 when @p name is not a sizing property
 *          (errstr untouched).
 */
int ks_sizing_params_set(ks_sizing_params_t *p, const char *name,
                         const char *value, char *errstr, size_t errstr_size);

/* ------------------------------------------------------------------ */
/* Skew                                                                  */
/* ------------------------------------------------------------------ */

/** The spread of per-partition (or per-key) counts. */
typedef struct ks_sizing_spread {
        uint64_t max;             /**< the busiest */
        uint64_t min;             /**< the idlest */
        double   median;          /**< middle value; mean of the two middle
                                   *   ones for an even count */
        double   max_over_median; /**< max / median; 0 when all are 0;
                                   *   INFINITY when only the median is */
        int      within_limit;    /**< max <= limit x median */
} ks_sizing_spread_t;

/**
 * @brief Busiest over median of @p n counts, and whether the busiest is
 *        within @p limit (e.g. 2.5) times the median.
 * @param counts may be reordered (the median is found by selection).
 */
void ks_sizing_spread(uint64_t *counts, size_t n, double limit,
                      ks_sizing_spread_t *out);

/**
 * @brief Key skew: the busiest key's messages over the median key's.
 * @param busiest messages of the busiest key known (the top hot key);
 *        the largest of @p counts is used when larger.
 * @param counts messages of each key of a uniform sample of distinct keys
 *        (the key sample), may be reordered.
 * @returns busiest / median; 0 without keys; INFINITY if the median is 0.
 */
double ks_sizing_key_skew(uint64_t busiest, uint64_t *counts, size_t n);

/**
 * @brief Per-partition messages under @p partition_count estimated from a
 *        key sample: loads[p] = sum of messages[i] with phash[i] % count
 *        == p. Scale by (distinct keys / n) for absolute figures; the
 *        spread needs none.
 * @param loads [partition_count], overwritten.
 */
void ks_sizing_sample_loads(const uint32_t *phash, const uint64_t *messages,
                            size_t n, int32_t partition_count, uint64_t *loads);

/** @returns 1 if @p n is a power of two (1, 2, 4, ...). */
int ks_sizing_is_pow2(int64_t n);

/** @returns the smallest power of two >= @p n (1 for n <= 1; 2^62 at
 *           most). */
int64_t ks_sizing_next_pow2(int64_t n);

/* ------------------------------------------------------------------ */
/* Hot keys                                                              */
/* ------------------------------------------------------------------ */

/**
 * @returns the rate one partition should carry (msgs/s): the
 *          keyshift.partition.target.msgs.per.s property when set, else
 *          the fair share @p topic_msgs_per_s / @p partition_count (0 for
 *          a count < 1).
 */
double ks_sizing_target_rate(const ks_sizing_params_t *p,
                             double topic_msgs_per_s, int64_t partition_count);

typedef struct ks_sizing_hot_verdict {
        double   share_of_topic;        /**< key rate / topic rate, 0..1 */
        double   share_of_partition;    /**< key rate / its partition's rate */
        int      fixable_by_partitions; /**< key rate <= target rate */
        uint64_t salt_buckets; /**< ceil(key rate / target); 1 if fixable */
} ks_sizing_hot_verdict_t;

/**
 * @brief Whether more partitions can spread a hot key, and if not, into
 *        how many salted sub-keys (key#0 .. key#n-1) it must be split.
 * @param partition_msgs_per_s the rate of the key's partition (<= 0:
 *        unknown, share_of_partition 0). Shares are capped at 1 (a hot
 *        key's count is an overestimate by at most its error).
 */
void ks_sizing_hot_key(double key_msgs_per_s, double topic_msgs_per_s,
                       double partition_msgs_per_s, double target_msgs_per_s,
                       ks_sizing_hot_verdict_t *out);

/* ------------------------------------------------------------------ */
/* Partition floor and rebalance cost                                    */
/* ------------------------------------------------------------------ */

/** Skew headroom: key skew / 30, clamped to [2, 4]. */
#define KS_SIZING_SKEW_DIVISOR 30.0
#define KS_SIZING_SKEW_FACTOR_MIN 2.0
#define KS_SIZING_SKEW_FACTOR_MAX 4.0

/** @returns clamp(key_skew / 30, 2, 4) (2 for an unknown skew, <= 0 or
 *           NaN; 4 for an infinite one). */
double ks_sizing_skew_factor(double key_skew);

/** Where the floor's base (before the skew factor) came from. */
typedef enum ks_sizing_base {
        KS_SIZING_BASE_THROUGHPUT = 0, /**< ceil(peak / per consumer) */
        KS_SIZING_BASE_CONSUMERS,      /**< keyshift.consumers.max */
        KS_SIZING_BASE_NONE, /**< neither input given: no floor, no advice */
} ks_sizing_base_t;

/** @returns "throughput", "consumers" or "none". */
const char *ks_sizing_base_name(ks_sizing_base_t b);

/**
 * @brief The consumer inputs of @p p that are not given (0: unknown).
 * @param names [2], set to KS_SIZING_PROP_CONSUMER_RATE and/or
 *        KS_SIZING_PROP_CONSUMERS, in that order.
 * @returns how many (0: the advice has both terms; 2: no advice).
 */
size_t ks_sizing_inputs_missing(const ks_sizing_params_t *p,
                                const char               *names[2]);

/**
 * Per-consumer rates (msgs/s) at which a report without
 * keyshift.consumer.msgs.per.s and keyshift.consumers.max illustrates the
 * floor, each labelled an assumption: a consumer doing a remote write per
 * message (~1 ms) and one doing light in-memory work. Nothing is
 * recommended from them.
 */
#define KS_SIZING_ILLUSTRATION_RATES                                           \
        {                                                                      \
                1000.0, 10000.0                                                \
        }
#define KS_SIZING_ILLUSTRATION_CNT 2

typedef struct ks_sizing_floor {
        int64_t          throughput_partitions; /**< ceil(peak / per
                                                 *   consumer); 0 unknown */
        int64_t          base;            /**< max(throughput, consumers); 0
                                       *   when neither input is given */
        ks_sizing_base_t base_source;     /**< which term gave base */
        double           skew_factor;     /**< always computed */
        int64_t          partition_floor; /**< ceil(base x skew_factor);
                                           *   0: no advice */
        int64_t          recommended;     /**< next power of two; 0: no
                                           *   advice */
} ks_sizing_floor_t;

/**
 * @brief The partition floor max(ceil(peak / per_consumer), max_consumers)
 *        x skew_factor and the recommended count (its next power of two).
 *
 * Advice rests only on inputs that are measured (the peak, the key skew)
 * or given (keyshift.consumer.msgs.per.s, keyshift.consumers.max): with
 * neither consumer input the base is unknown, and base, partition_floor
 * and recommended are 0 (base_source KS_SIZING_BASE_NONE); the skew
 * factor is still set. With one of the two, its term alone is the base.
 */
void ks_sizing_partition_floor(const ks_sizing_params_t *p,
                               double peak_msgs_per_s, double key_skew,
                               ks_sizing_floor_t *out);

typedef struct ks_sizing_rebalance {
        double per_rebalance_s; /**< partitions x ms per partition / 1000 */
        double per_day_s;       /**< per_rebalance_s x rebalances a day */
        int    high;            /**< per_rebalance_s > the warning limit */
} ks_sizing_rebalance_t;

void ks_sizing_rebalance(const ks_sizing_params_t *p, int64_t partitions,
                         ks_sizing_rebalance_t *out);

/* ------------------------------------------------------------------ */
/* Raptis & Passarella (2022) constraints                                */
/* ------------------------------------------------------------------ */

typedef enum ks_sizing_constraint_id {
        KS_CONSTRAINT_THROUGHPUT = 0,      /**< P >= max(T/Tp, T/Tc) */
        KS_CONSTRAINT_CONSUMERS,           /**< P >= planned consumers */
        KS_CONSTRAINT_FILE_HANDLES,        /**< 2 P r / b <= H_max */
        KS_CONSTRAINT_REPLICATION_LATENCY, /**< l_r P r / b <= L (ms) */
        KS_CONSTRAINT_UNAVAILABILITY,      /**< u P / b <= U (ms) */
        KS_CONSTRAINT__CNT
} ks_sizing_constraint_id_t;

/** @returns "throughput", "consumers", "file_handles",
 *           "replication_latency_ms", "unavailability_ms". */
const char *ks_sizing_constraint_name(ks_sizing_constraint_id_t id);

typedef struct ks_sizing_constraint {
        int    known;       /**< 0: an input is missing (brokers unknown) */
        int    lower_bound; /**< 1: P must reach limit; 0: value <= limit */
        double value;       /**< P, or the per-broker figure */
        double limit;       /**< the requirement, or the ceiling */
        double utilisation; /**< lower bound: limit / P; else value / limit:
                             *   above 1 is violated */
        int    ok;
} ks_sizing_constraint_t;

typedef struct ks_sizing_constraints {
        ks_sizing_constraint_t c[KS_CONSTRAINT__CNT];
        int                    satisfied; /**< every known constraint holds */
        int     binding;         /**< ks_sizing_constraint_id_t of the largest
                        *   utilisation (the first violated, or the
                        *   closest to its limit); -1 if none known */
        int64_t fewest_brokers;  /**< smallest b meeting the per-broker
                                 *   constraints (and b >= r); 0 if r unknown */
        int     brokers_suffice; /**< the throughput and consumer bounds
                                  *   hold (no broker count fixes them) */
} ks_sizing_constraints_t;

/**
 * @brief Evaluates the constraints at @p partitions partitions.
 * @param brokers b (0: unknown: per-broker constraints not known).
 * @param replication_factor r (0: unknown).
 * @param throughput_bytes_per_s T, the topic's (peak) produce throughput.
 */
void ks_sizing_constraints(const ks_sizing_params_t *p, int64_t partitions,
                           int32_t brokers, int32_t replication_factor,
                           double                   throughput_bytes_per_s,
                           ks_sizing_constraints_t *out);

/** @returns the fewest brokers b >= r with 2Pr/b <= H_max, l_r P r / b <=
 *           L and u P / b <= U; 0 if @p replication_factor < 1. */
int64_t ks_sizing_fewest_brokers(const ks_sizing_params_t *p,
                                 int64_t                   partitions,
                                 int32_t                   replication_factor);

/* ------------------------------------------------------------------ */
/* What the increase costs                                               */
/* ------------------------------------------------------------------ */

typedef struct ks_sizing_split_window {
        double seconds;                 /**< metadata max age / 1000 */
        double messages_of_moving_keys; /**< moving-key rate x seconds */
} ks_sizing_split_window_t;

/**
 * @brief The window after an increase during which producers that have
 *        not refreshed metadata still use the old count, and the traffic
 *        of keys that move produced in it.
 * @param moving_msgs_per_s the rate of messages whose partition changes.
 */
void ks_sizing_split_window(const ks_sizing_params_t *p,
                            double                    moving_msgs_per_s,
                            ks_sizing_split_window_t *out);

/** Raise the count of the topic itself. */
typedef struct ks_sizing_raise_in_place {
        int64_t                  partition_count;
        uint64_t                 messages_split; /**< history of moving keys */
        double                   distinct_keys_split;
        ks_sizing_split_window_t split_window;
        int                      compacted_stale_values; /**< compacted topic:
                                  *   moved keys keep a stale latest value */
} ks_sizing_raise_in_place_t;

/** Pause producers, drain consumers, switch everyone to a new topic. */
typedef struct ks_sizing_drain_and_switch {
        int64_t partition_count; /**< of the new topic */
        double  drain_s; /**< time consumers need to empty their lag; < 0
                           *   unknown (keyshift.consumer.lag.ms unset) */
        double  pause_s; /**< producers paused: drain_s (< 0 unknown) */
        double  held_msgs_per_s; /**< producers must hold per second of pause */
        double  held_bytes_per_s;
        double  messages_held; /**< over pause_s (< 0 unknown) */
        double  bytes_held;
        double  producer_queue_s; /**< the longest pause the producer queue
                                   *   absorbs (< 0 unknown) */
} ks_sizing_drain_and_switch_t;

/** Route the keys more partitions cannot spread to a new topic. */
typedef struct ks_sizing_shard {
        uint64_t keys_routed;       /**< hot keys not fixable by partitions */
        double   msgs_per_s_routed; /**< their rate */
        double   share_of_topic;    /**< their share of the topic's traffic */
        uint64_t shard_partitions;  /**< sum of their salt buckets */
        uint64_t messages_split;    /**< their history left behind */
} ks_sizing_shard_t;

/**
 * @brief Adds one hot key to the shard migration when more partitions
 *        cannot spread it (@p v->fixable_by_partitions is 0).
 * @param key_messages the key's messages so far (its history).
 */
void ks_sizing_shard_add(ks_sizing_shard_t *s, const ks_sizing_hot_verdict_t *v,
                         double key_msgs_per_s, double topic_msgs_per_s,
                         uint64_t key_messages);

/**
 * @brief Drain-and-switch figures.
 * @param consumer_capacity_msgs_per_s what the group drains per second
 *        (consumers x per-consumer rate); <= 0: assume it just keeps up
 *        (drains at @p msgs_per_s).
 * @param queue_max_messages, queue_max_bytes the producer's
 *        queue.buffering.max.messages / .kbytes x 1024 (<= 0 unknown).
 */
void ks_sizing_drain_and_switch(const ks_sizing_params_t *p,
                                int64_t partition_count, double msgs_per_s,
                                double bytes_per_s,
                                double consumer_capacity_msgs_per_s,
                                double queue_max_messages,
                                double queue_max_bytes,
                                ks_sizing_drain_and_switch_t *out);

#endif /* KS_SIZING_H */
