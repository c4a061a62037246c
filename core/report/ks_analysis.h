/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_analysis.h
 * @brief How much of a topic's traffic keyshift analysed, and what that
 *        makes of each figure: exact, an estimate with its error, or a
 *        lower bound (docs/report-schema.md, `analysis`).
 *
 * A figure is exact only if every message it covers was analysed, and
 * none of them stands for others. Two things make figures less than exact
 * when keyshift's analysis falls behind the producer:
 *
 * Skipped messages. When on_send met a full staging ring and overflow it
 * skipped the message (the topic's `keys.unanalysed`,
 * ks_topic_note_unanalysed()); the report's figures then describe the
 * analysed messages only, and this module is the one place that says how
 * to state them for all the produced traffic:
 *
 *  - counts (messages and bytes that move, per-partition loads) count the
 *    analysed messages: a skipped message can only add to them, so they
 *    are lower bounds of the produced traffic's; distinct keys are a
 *    sketch's estimate, stated otherwise (below);
 *  - fractions (of messages, of keys) are estimates: a message is skipped
 *    for when it came (the ring was full), not for its key, so the keys
 *    analysed stand for the keys produced, as a sample. Messages of one
 *    key are placed together, so the sample's unit is the key: the
 *    standard error is that of a proportion over Kish's effective number
 *    of keys, n_eff = (sum of m_k)^2 / sum of m_k^2 (Kish 1965, "Survey
 *    Sampling", 11.7), m_k the messages of sampled key k, with the
 *    proportion taken as (x + 1/2) / (n_eff + 1) so that a fraction of 0
 *    or 1 seen in a sample never claims to be exact.
 *
 * Sampled messages (issue 33). While its backlog grows, a producing thread
 * stages each message with probability 1/N (N = 2^k per ring, at most
 * 1024) and counts the others exactly (ks_topic_counters_t, sampled_*). A
 * staged message then stands for N messages in every analysed per-message
 * figure, which is so a Horvitz-Thompson estimate (Horvitz & Thompson
 * 1952): unbiased, each produced message adding N - 1 to its variance.
 * For a figure x (messages) over messages sampled at most one in N
 * (`one_in_max`), Var(x) = sum over its sampled-period messages of
 * (N_i - 1) <= (N - 1) x (x >= those messages: a plug-in bound, as the
 * hot keys' one), and <= the variance of all the topic's sampled
 * messages, estimated without bias by V = sum of N (N - 1) over the staged
 * ones (`sampled_variance`). The error stated is 3 standard errors:
 *
 *     messages_sampling_error(x) = 3 sqrt(min((N - 1) x, V))
 *
 * (for the topic's `messages` itself, 3 sqrt(V)); bytes as messages of the
 * mean size b (the exact mean of the messages counted), 3 b sqrt(min((N -
 * 1) x / b, V)): exact for messages of one size, low by the factor
 * sqrt(E[b^2]) / E[b] when sizes vary. A fraction f = x / y (x part of y)
 * has Var(f) <= (N - 1) f (1 - f) / y (the numerator's part and the rest
 * are disjoint, so independent): the proportion's error over n = y / (N -
 * 1) effective messages, pulled half a unit as above, times 3. Keys seen
 * only in messages not staged cannot be estimated, so distinct keys are
 * stated as when skipped (below).
 *
 * Distinct keys, skipped or sampled. The distinct-key count is a sketch's
 * (the key sample's exact count while it holds every key, else the
 * HyperLogLog's estimate, relative standard error 1.04 / sqrt(m): Flajolet
 * et al. 2007) of the keys of the analysed messages, so it is stated with
 * the sketch's own error as when complete, never as a lower bound: an
 * estimate may be above the keys produced. What the messages not analysed
 * add cannot be estimated (a key seen only there, as in a start-up burst of
 * new keys), only bounded: each adds at most one key. So, at k standard
 * errors e (relative), the topic's distinct keys D lie in
 *
 *     [E (1 - k e), E (1 + k e) + (produced - analysed)]
 *
 * E the estimate; the moved keys, f E (f the key sample's fraction that
 * moves, standard error e_f), likewise, with the standard error E sqrt(e_f^2
 * + f^2 e^2) (the two sketches' relative errors in quadrature).
 *
 * Used by the report (ks_report.c), its story (ks_story.c), `keyshift
 * merge`, `show`, `html` and `metrics`, so that they state the same.
 *
 * Thread-safety: pure functions of their arguments.
 */
#ifndef KS_ANALYSIS_H
#define KS_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/** A topic's sampling counters (ks_topic_counters_t's sampled_*; the
 *  report's `analysis`). All zero: never sampled. */
typedef struct ks_analysis_sampling {
        uint64_t in_messages, in_bytes;             /**< staged (exact) */
        uint64_t weighted_messages, weighted_bytes; /**< what they stand for:
                                                 *   sum of N, N x bytes */
        uint64_t out_messages, out_bytes; /**< counted, not staged (exact) */
        uint64_t variance;    /**< sum of N (N - 1) over the staged */
        uint64_t one_in_max;  /**< the largest N; 0: never sampled */
        uint64_t seconds;     /**< seconds with a sampled message staged
                              *   (a merge: summed, producer-seconds) */
        double   in_bytes_sq; /**< sum of the staged sizes' squares,
                               *   bytes^2 (0: not known, an older
                               *   report: the mean size stands in) */
} ks_analysis_sampling_t;

/** What one topic's analysis covered. */
typedef struct ks_analysis {
        uint64_t produced;   /**< analysed + sampled out + unanalysed:
                              *   exact */
        uint64_t analysed;   /**< messages staged and analysed (exact) */
        uint64_t unanalysed; /**< `keys.unanalysed`: skipped on a full ring */
        double   analysed_fraction; /**< analysed / produced (1 when 0) */
        int      complete;       /**< 1 when nothing was skipped nor sampled */
        int      skipped;        /**< 1 when some messages were skipped */
        int      sampled;        /**< 1 when some messages were sampled */
        uint64_t messages;       /**< the topic's `messages` (an estimate when
                             *   sampled: weighted) */
        uint64_t bytes;          /**< the topic's `bytes` (likewise) */
        uint64_t bytes_produced; /**< exact bytes of the messages counted:
                                  *   bytes - weighted + in + out */
        ks_analysis_sampling_t smp;
        double uptime_s; /**< the producer's uptime (a merge: summed,
                          *   producer-seconds); < 0: unknown */
} ks_analysis_t;

/** Bytes the partial line needs at most. */
#define KS_ANALYSIS_LINE_MAX 96

/** Bytes the sampled line needs at most. */
#define KS_ANALYSIS_SAMPLED_LINE_MAX 200

/** Sampling's errors are stated at this many standard errors. */
#define KS_ANALYSIS_SIGMAS 3.0

/** @brief *a := the analysis of @p analysed messages, @p unanalysed
 *         skipped, none sampled (bytes and uptime unknown). */
void ks_analysis_init(ks_analysis_t *a, uint64_t analysed, uint64_t unanalysed);

/**
 * @brief *a := the analysis of a topic whose counters say @p messages,
 *        @p bytes (total: weighted when sampled), @p unanalysed skipped
 *        and sampling @p smp (NULL: never sampled), reported after
 *        @p uptime_s seconds (< 0: unknown).
 */
void ks_analysis_init_sampled(ks_analysis_t *a, uint64_t messages,
                              uint64_t bytes, uint64_t unanalysed,
                              const ks_analysis_sampling_t *smp,
                              double                        uptime_s);

/** @brief *smp := the sampling counters of a report's `analysis` object
 *         @p an (NULL or members absent: 0). */
void ks_analysis_sampling_of(const json_t *an, ks_analysis_sampling_t *smp);

/** @brief *a := the analysis a report's topic object states: its
 *         `messages`, `bytes`, `keys.unanalysed` and `analysis`'s sampling
 *         counters (reports before `analysis`, or before sampling, lack
 *         them: absent members count 0). */
void ks_analysis_of_topic(const json_t *topic, ks_analysis_t *a);

/** @brief *a += @p b (a report of several topics, a merge): counts and
 *         sampled seconds summed, one_in_max the larger, uptimes summed
 *         (unknown when either is). */
void ks_analysis_add(ks_analysis_t *a, const ks_analysis_t *b);

/** @brief *a += @p b for topics of one report, that shared the
 *         producer's seconds (`show`, `html`): as ks_analysis_add(), but
 *         sampled seconds and uptime are the larger, not summed. */
void ks_analysis_add_concurrent(ks_analysis_t *a, const ks_analysis_t *b);

/** @returns the topic's `analysis` object (new reference, NULL on
 *           ENOMEM): complete, messages_produced, messages_analysed,
 *           messages_unanalysed, analysed_fraction, sampled, one_in_max,
 *           sampled_seconds, messages_sampled_in, messages_sampled_weighted,
 *           messages_sampled_out, bytes_sampled_in, bytes_sampled_weighted,
 *           bytes_sampled_out, sampled_variance, bytes_produced,
 *           messages_sampling_error, bytes_sampling_error, and uptime_s
 *           when known (docs/report-schema.md). */
json_t *ks_analysis_json(const ks_analysis_t *a);

/** @returns the sampling error (3 standard errors, messages) of a count
 *           of @p messages built from the topic's messages: 3 sqrt(min((N
 *           - 1) x, V)); 0 when never sampled. */
double ks_analysis_sampling_error(const ks_analysis_t *a, double messages);

/** @returns the sampling error (3 standard errors, bytes) of a figure of
 *           @p bytes: w x ks_analysis_sampling_error(@p bytes / w), w the
 *           size-weighted mean size of the staged messages (sum s^2 / sum
 *           s, `bytes_sq_sampled_in` / `bytes_sampled_in`): a subset of
 *           B bytes has sum s^2 = B w for sizes like the staged ones, and
 *           the Horvitz-Thompson variance (N - 1) sum s^2 (Cochran,
 *           Sampling Techniques, 1977, 9A.7) is then w^2 (N - 1) (B / w).
 *           Without the squares (an older report), the mean size, exact
 *           only for messages of one size. 0 when never sampled. */
double ks_analysis_bytes_sampling_error(const ks_analysis_t *a, double bytes);

/** @returns the sampling error (3 standard errors) of a fraction @p f of
 *           @p of messages (both estimates, the numerator part of the
 *           denominator): 3 x the proportion's error over (@p of) / (N -
 *           1) messages; 0 when never sampled. */
double ks_analysis_fraction_sampling_error(const ks_analysis_t *a, double f,
                                           double of);

/**
 * @returns a hot key's `messages_sampling_error` (3 standard errors) for
 *          its @p count, @p hot_error the hot-key summary's own sampling
 *          error (ks_topic_hot_sampling_error()): unchanged when never
 *          sampled; else sqrt(s^2 + N h^2), s the count's sampling error
 *          above, h @p hot_error: a message both sampled by its thread
 *          (one in N) and offered to the summary (one in 8) stands for 8N
 *          messages, of variance 8N - 1 = (N - 1) + N (8 - 1).
 */
double ks_analysis_hot_error(const ks_analysis_t *a, double count,
                             double hot_error);

struct ks_sizing_params;

/**
 * @brief When @p a was sampled, sets the errors (3 sigma) of topic object
 *        @p topic's rates, `rates.sampling_error` ({msgs_per_s,
 *        bytes_per_s, interval_msgs_per_s, interval_bytes_per_s,
 *        mean_msgs_per_s, peak_msgs_per_s, peak_bytes_per_s,
 *        max_msgs_per_s, peak_to_mean}: msgs/s, bytes/s, a ratio), and
 *        `sizing.sampling` ({peak_msgs_per_s_error, partition_floor_low,
 *        partition_floor_high}: the floor, ks_sizing.h, at the peak minus
 *        and plus its error) when @p p sizes a floor. Nothing when never
 *        sampled. ks_analysis_rates.c says how.
 */
void ks_analysis_set_rates(json_t *topic, const ks_analysis_t *a,
                           const struct ks_sizing_params *p);

/**
 * @brief Sets `messages_sampling_error`, `bytes_sampling_error` and
 *        `hashed_messages_sampling_error` of a topic's `window` object
 *        from its own counts (0 when never sampled).
 */
void ks_analysis_set_window(json_t *window, const ks_analysis_t *a);

/**
 * @brief Writes "partial: keyshift analysed 15,582 of 60,000 messages
 *        (26 %)" into @p buf (cut, never overflowed), or "" when the
 *        analysis is complete. The percentage never rounds to 100 % (nor
 *        to 0 % when something was analysed).
 * @returns @p buf.
 */
const char *ks_analysis_partial_line(const ks_analysis_t *a, char *buf,
                                     size_t size);

/**
 * @brief Writes "estimated: the producer was out of CPU for 34 s of 600
 *        (keyshift analysed 1 message in up to 64 then); figures below are
 *        estimates (+/- 3 sigma)" into @p buf (cut, never overflowed), or
 *        "" when nothing was sampled. "of U" only when the uptime is
 *        known; S never reads 0 (a sampled message was staged in at least
 *        one second).
 * @returns @p buf.
 */
const char *ks_analysis_sampled_line(const ks_analysis_t *a, char *buf,
                                     size_t size);

/**
 * @brief Sets `distinct_estimate`, `distinct_error` and
 *        `distinct_lower_bound` of a topic's `keys` object: the distinct
 *        keys @p distinct of the analysed messages, the sketch's relative
 *        standard error @p sketch_error (0 when every key was counted), so
 *        whether the analysis was complete or not; `distinct_lower_bound`
 *        true when it was not: the estimate (within its error) is of the
 *        analysed messages' keys, and the messages not analysed may hold
 *        up to one more key each (above).
 */
void ks_analysis_set_distinct(json_t *keys, double distinct,
                              double sketch_error, const ks_analysis_t *a);

/**
 * @returns the standard error of a fraction @p f of sampled keys
 *          (`distinct_keys_fraction_error`) from @p keys keys: complete
 *          and every key counted (@p sample_full 0), 0; complete and the
 *          key sample full, sqrt(f (1 - f) / keys) as the bottom-k sample
 *          gives; partial, the keys seen as a sample of the keys produced
 *          (above).
 */
double ks_analysis_keys_fraction_error(double f, size_t keys, int sample_full,
                                       const ks_analysis_t *a);

/**
 * @returns the standard error of a fraction @p f of hashed messages
 *          (`messages_fraction_error`, `traffic_fraction_error` with the
 *          hashed share applied by the caller) that skipped messages
 *          make: 0 when none was skipped, else that of a proportion over n_eff =
 *          @p sum_m ^ 2 / @p sum_m2, the key sample's messages per key
 *          (above).
 */
double ks_analysis_messages_fraction_error(double f, double sum_m,
                                           double               sum_m2,
                                           const ks_analysis_t *a);

/**
 * @brief Sets a proposal's `moved.distinct_keys_error`: the standard
 *        error (keys) of `distinct_keys` = f x @p distinct, f its
 *        `distinct_keys_fraction` with standard error e_f, its
 *        `distinct_keys_fraction_error` (both set before), and
 *        @p distinct_error the distinct count's relative standard error
 *        e: @p distinct sqrt(e_f^2 + f^2 e^2) (above); 0 when both are.
 *        Like `distinct_estimate`, of the analysed messages' keys.
 */
void ks_analysis_set_moved_keys_error(json_t *moved, double distinct,
                                      double distinct_error);

/**
 * @brief Writes "more may be among the 2,400 messages not analysed" into
 *        @p buf (cut, never overflowed; KS_ANALYSIS_LINE_MAX suffices): what a distinct-key figure of a
 *        partial or sampled analysis leaves out (produced - analysed
 *        messages: skipped or not staged); "" when complete.
 * @returns @p buf.
 */
const char *ks_analysis_more_keys_note(const ks_analysis_t *a, char *buf,
                                       size_t size);

/** Bytes the distinct-keys line needs at most. */
#define KS_ANALYSIS_DISTINCT_LINE_MAX 200

/**
 * @brief Writes "Distinct keys: 4,386 in the analysed messages (+/- 0.81%,
 *        the sketch's standard error); more may be among the 2,400
 *        messages not analysed" into @p buf (cut, never overflowed) for a
 *        topic whose `keys` say @p distinct with relative standard error
 *        @p error ("(all counted)" when 0; nothing when NAN: reports that
 *        left it null), or "" when the analysis is complete.
 * @returns @p buf.
 */
const char *ks_analysis_distinct_line(const ks_analysis_t *a, double distinct,
                                      double error, char *buf, size_t size);

/**
 * @brief Adds to a proposal's `moved` object what the analysis makes of
 *        it: `messages_exact` (messages and bytes count every message,
 *        or only the analysed ones: then lower bounds; or estimates when
 *        sampled), `messages_fraction_error` and `traffic_fraction_error`
 *        (standard errors: ks_analysis_messages_fraction_error() read from
 *        its own `messages_fraction`, and when sampled, the sampling's
 *        standard error added in quadrature), `messages_sampling_error`,
 *        `bytes_sampling_error`, `messages_fraction_sampling_error`,
 *        `traffic_fraction_sampling_error` (3 standard errors; 0 when
 *        never sampled). @p window_hashed and @p window_all are the
 *        window's hashed and all messages, the fractions' denominators.
 */
void ks_analysis_set_moved(json_t *moved, double sum_m, double sum_m2,
                           double window_hashed, double window_all,
                           const ks_analysis_t *a);

#endif /* KS_ANALYSIS_H */
