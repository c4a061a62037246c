/**
 * @file ks_analysis.h
 * @brief How much of a topic's traffic keyshift analysed, and what that
 *        makes of each figure: exact, an estimate with its error, or a
 *        lower bound (docs/report-schema.md, `analysis`).
 *
 * A figure is exact only if every message it covers was analysed. When
 * on_send met a full staging ring and overflow it skipped the message (the
 * topic's `keys.unanalysed`, ks_topic_note_unanalysed()); the report's figures
 * then describe the analysed messages only, and this module is the one
 * place that says how to state them for all the produced traffic:
 *
 *  - counts (messages and bytes that move, per-partition loads, distinct
 *    keys) count the analysed messages: a skipped message can only add
 *    to them, so they are lower bounds of the produced traffic's;
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

/** What one topic's analysis covered. */
typedef struct ks_analysis {
        uint64_t produced;   /**< analysed + unanalysed messages */
        uint64_t analysed;   /**< the topic's `messages` */
        uint64_t unanalysed; /**< `keys.unanalysed`: skipped on a full ring */
        double   analysed_fraction; /**< analysed / produced (1 when 0) */
        int      complete;          /**< 1 when nothing was skipped */
} ks_analysis_t;

/** Bytes the partial line needs at most. */
#define KS_ANALYSIS_LINE_MAX 96

/** @brief *a := the analysis of @p analysed messages, @p unanalysed
 *         skipped. */
void ks_analysis_init(ks_analysis_t *a, uint64_t analysed, uint64_t unanalysed);

/** @brief *a := the analysis a report's topic object states: its
 *         `messages` and `keys.unanalysed` (reports before `analysis`
 *         existed have both; absent members count 0). */
void ks_analysis_of_topic(const json_t *topic, ks_analysis_t *a);

/** @brief *a += @p b (a report of several topics, a merge). */
void ks_analysis_add(ks_analysis_t *a, const ks_analysis_t *b);

/** @returns the topic's `analysis` object (new reference, NULL on
 *           ENOMEM): complete, messages_produced, messages_analysed,
 *           messages_unanalysed, analysed_fraction. */
json_t *ks_analysis_json(const ks_analysis_t *a);

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
 * @brief Sets `distinct_estimate`, `distinct_error` and
 *        `distinct_lower_bound` of a topic's `keys` object: complete, the
 *        sketch's figure and relative standard error (@p sketch_error, 0
 *        when every key was counted); partial, the distinct keys of the
 *        analysed messages, a lower bound (`distinct_lower_bound` true),
 *        and `distinct_error` null: keys seen only in skipped messages
 *        cannot be estimated from the keys analysed.
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
 *          hashed share applied by the caller): 0 when complete (every
 *          message was counted), else that of a proportion over n_eff =
 *          @p sum_m ^ 2 / @p sum_m2, the key sample's messages per key
 *          (above).
 */
double ks_analysis_messages_fraction_error(double f, double sum_m,
                                           double               sum_m2,
                                           const ks_analysis_t *a);

/**
 * @brief Adds to a proposal's `moved` object what the analysis makes of
 *        it: `messages_exact` (messages and bytes count every message,
 *        or only the analysed ones: then lower bounds),
 *        `messages_fraction_error` and `traffic_fraction_error` (from
 *        ks_analysis_messages_fraction_error(), read from its own
 *        `messages_fraction`; @p hashed_share = hashed / all messages).
 */
void ks_analysis_set_moved(json_t *moved, double sum_m, double sum_m2,
                           double hashed_share, const ks_analysis_t *a);

#endif /* KS_ANALYSIS_H */
