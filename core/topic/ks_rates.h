/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_rates.h
 * @brief Message and byte rates of one topic: since start, over the last
 *        report interval, and the per-second peak (the 0.999 quantile of
 *        per-second counts) in fixed memory.
 *
 * The series is cut into whole seconds counted from the time the series
 * started (ks_rates_init()), so its first second is a full one. Each
 * completed second's message count and byte count go into two log-linear
 * histograms (ks_rates.c explains the layout): values below 64 exactly,
 * larger ones within 1/32 (3.1 %) of their true value, never below it.
 * Seconds in which nothing was produced count as zero seconds, so the
 * peak-to-mean ratio of a bursty producer is not flattered by its idle
 * time being left out.
 *
 * Time is always an argument: nothing here reads a clock, so tests are
 * deterministic. Pass a monotonic clock in milliseconds (e.g.
 * CLOCK_MONOTONIC_COARSE); a time earlier than the second in progress is
 * counted in the second in progress.
 *
 * Memory: sizeof(ks_rates_t) = 9,304 bytes, inline, no allocation; a
 * snapshot is a struct copy.
 *
 * Not thread-safe: the caller serialises access (the topic's lock).
 */
#ifndef KS_RATES_H
#define KS_RATES_H

#include <stddef.h>
#include <stdint.h>

/** Sub-buckets per power of two: the relative resolution is 1/32. */
#define KS_RATES_SUB_BITS 5
/** Values below this are counted exactly (one bucket each). */
#define KS_RATES_EXACT (2u << KS_RATES_SUB_BITS)
/** Per-second values up to 2^KS_RATES_VALUE_BITS - 1 are resolved; larger
 *  ones fall into the last bucket (the exact maximum is kept apart). */
#define KS_RATES_VALUE_BITS 40
#define KS_RATES_BUCKETS                                                       \
        (KS_RATES_EXACT + (KS_RATES_VALUE_BITS - KS_RATES_SUB_BITS - 1) *      \
                              (1u << KS_RATES_SUB_BITS))

/** The peak is this quantile of per-second counts, in parts per million
 *  (999000 = 0.999: the busiest second but one in a thousand). */
#define KS_RATES_PEAK_PPM 999000u

/** A histogram of per-second values (messages or bytes). */
typedef struct ks_rates_hist {
        uint32_t seconds[KS_RATES_BUCKETS]; /**< seconds per bucket */
        uint64_t max;                       /**< largest value, exact */
} ks_rates_hist_t;

typedef struct ks_rates {
        int64_t         start_ms;   /**< the series' origin (monotonic ms) */
        int64_t         sec;        /**< the second in progress, from start */
        uint64_t        sec_msgs;   /**< messages in the second in progress */
        uint64_t        sec_bytes;  /**< bytes in the second in progress */
        uint64_t        msgs;       /**< messages since start */
        uint64_t        bytes;      /**< bytes since start */
        int64_t         mark_ms;    /**< start of the current interval */
        uint64_t        mark_msgs;  /**< msgs at mark_ms */
        uint64_t        mark_bytes; /**< bytes at mark_ms */
        ks_rates_hist_t hist_msgs;  /**< completed seconds: messages */
        ks_rates_hist_t hist_bytes; /**< completed seconds: bytes */
} ks_rates_t;

/** What the series says at one time; every rate is per second. */
typedef struct ks_rates_summary {
        double   elapsed_s;            /**< since start */
        double   msgs_per_s;           /**< since start: msgs / elapsed_s */
        double   bytes_per_s;          /**< since start: bytes / elapsed_s */
        double   interval_s;           /**< since the last ks_rates_mark() */
        double   interval_msgs_per_s;  /**< over the last interval */
        double   interval_bytes_per_s; /**< over the last interval */
        uint64_t seconds;              /**< completed seconds in the series */
        double   mean_msgs_per_s;      /**< mean of the completed seconds */
        uint64_t peak_msgs_per_s;      /**< 0.999 quantile of messages/second */
        uint64_t peak_bytes_per_s;     /**< 0.999 quantile of bytes/second */
        uint64_t max_msgs_per_s;       /**< busiest completed second, exact */
        double   peak_to_mean;         /**< peak_msgs_per_s / mean_msgs_per_s; 0
                                *   while no completed second had traffic */
} ks_rates_summary_t;

/** Which per-second series a quantile is asked of. */
typedef enum ks_rates_series {
        KS_RATES_MSGS = 0,
        KS_RATES_BYTES,
} ks_rates_series_t;

/** @brief Starts an empty series at @p now_ms (also the first interval). */
void ks_rates_init(ks_rates_t *r, int64_t now_ms);

/** @brief Closes the second in progress and the seconds up to @p sec
 *         (internal to ks_rates_add(); called once per second at most). */
void ks_rates_roll(ks_rates_t *r, int64_t sec);

/**
 * @brief Counts @p messages produced messages of @p bytes key + value
 *        bytes in all at @p now_ms.
 *
 * Cost: one subtraction, one division by a constant (a multiply), one
 * compare and four additions; once per second of traffic also two
 * histogram increments (a count-leading-zeros each). O(1), no allocation,
 * no clock read.
 *
 * @locality keyshift's drainer, or the application thread when a message
 *           is analysed inline (ks_stage.h).
 * @locks the caller holds the topic's lock.
 */
static inline void ks_rates_add_n(ks_rates_t *r, int64_t now_ms,
                                  uint64_t messages, uint64_t bytes)
{
        int64_t sec = now_ms > r->start_ms ? (now_ms - r->start_ms) / 1000 : 0;

        if (sec > r->sec)
                ks_rates_roll(r, sec);
        r->sec_msgs += messages;
        r->sec_bytes += bytes;
        r->msgs += messages;
        r->bytes += bytes;
}

/** @brief ks_rates_add_n() of one message. */
static inline void ks_rates_add(ks_rates_t *r, int64_t now_ms, uint64_t bytes)
{
        ks_rates_add_n(r, now_ms, 1, bytes);
}

/** @brief Starts a new "last interval" at @p now_ms (call it when a report
 *         has been built from a snapshot: the next report's interval rates
 *         cover the time since). */
void ks_rates_mark(ks_rates_t *r, int64_t now_ms);

/**
 * @brief The @p ppm / 10^6 quantile (nearest rank: the ceil(q n)-th
 *        smallest of the n completed seconds) of per-second messages or
 *        bytes, as of @p now_ms (seconds that ended since the last message
 *        count, the idle ones as zeros).
 * @returns the value, exact below 64; above, the upper end of its bucket
 *          capped at the exact maximum: true <= returned < 1.0313 x true.
 *          0 while no second has completed.
 */
uint64_t ks_rates_quantile(const ks_rates_t *r, int64_t now_ms,
                           ks_rates_series_t series, uint32_t ppm);

/** @brief Fills @p out as of @p now_ms (does not modify the series). */
void ks_rates_summarize(const ks_rates_t *r, int64_t now_ms,
                        ks_rates_summary_t *out);

/** @returns the histogram bucket of per-second value @p v (exposed for the
 *           tests of the bucket layout). */
size_t ks_rates_bucket(uint64_t v);

/** @returns the smallest and (via @p hi) largest value of bucket @p b. */
uint64_t ks_rates_bucket_lo(size_t b, uint64_t *hi);

#endif /* KS_RATES_H */
