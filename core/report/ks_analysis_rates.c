/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_analysis_rates.c
 * @brief The errors of a sampled topic's rates and of the partition floor
 *        sized on its peak (ks_analysis.h, "When messages were sampled").
 *
 * Every rate is a count over a span of time, the span exact and the count
 * an estimate while sampled: its error is the count's
 * (ks_analysis_sampling_error(), or the bytes' form) over the same span.
 * The peak and the busiest second are one second's count x, of standard
 * error sqrt(min((N - 1) x, V)) as for any count (the second is a subset
 * of the topic's messages, so V bounds its variance too); but each is the
 * largest of k seconds' estimates, which overshoots: the largest of k
 * noisy estimates of equal counts exceeds them by about sqrt(2 ln k)
 * standard errors (the expected maximum of k normal deviates), so their
 * error is stated at 3 + sqrt(2 ln k) standard errors, k the complete
 * seconds measured. The peak-to-mean
 * ratio takes the two relative errors in quadrature. The partition floor
 * (ks_sizing_partition_floor()) is given again at the peak minus and plus
 * its error: the counts the floor would be with the peak anywhere in its
 * range.
 */
#include <math.h>

#include "ks_analysis.h"
#include "ks_sizing.h"

static double num(const json_t *o, const char *k)
{
        return json_number_value(json_object_get(o, k));
}

/** @returns the error of the rate @p rate over @p span s of messages (or
 *           bytes, @p bytes 1). */
static double rate_error(const ks_analysis_t *a, double rate, double span,
                         int bytes)
{
        if (!(span > 0) || !(rate > 0))
                return 0.0;
        return (bytes ? ks_analysis_bytes_sampling_error(a, rate * span)
                      : ks_analysis_sampling_error(a, rate * span)) /
               span;
}

/** @brief The floor at @p peak, or -1 when there is none to size. */
static double floor_at(const ks_sizing_params_t *p, double peak,
                       double key_skew)
{
        ks_sizing_floor_t fl;

        ks_sizing_partition_floor(p, peak > 0 ? peak : 0, key_skew, &fl);
        return fl.recommended > 0 ? (double)fl.partition_floor : -1;
}

void ks_analysis_set_rates(json_t *topic, const ks_analysis_t *a,
                           const ks_sizing_params_t *p)
{
        json_t *r  = json_object_get(topic, "rates");
        json_t *iv = json_object_get(r, "interval"), *e, *sz, *basis;
        double  elapsed, secs = num(r, "seconds"), peak, peak_e, mean, mean_e;
        double  ptm = num(r, "peak_to_mean"), skew, widen;

        if (!a->sampled || !json_is_object(r))
                return;
        /* the largest of `seconds` estimates (above) */
        widen = (KS_ANALYSIS_SIGMAS + sqrt(2 * log(secs > 1 ? secs : 1))) /
                KS_ANALYSIS_SIGMAS;
        /* msgs_per_s = messages / elapsed: the span from the estimate */
        elapsed = num(r, "msgs_per_s") > 0
                      ? (double)a->messages / num(r, "msgs_per_s")
                      : 0;
        peak    = num(r, "peak_msgs_per_s");
        peak_e  = ks_analysis_sampling_error(a, peak) * widen;
        mean    = num(r, "mean_msgs_per_s");
        mean_e  = rate_error(a, mean, secs, 0);
        e       = json_pack(
                  "{s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "msgs_per_s",
                  rate_error(a, num(r, "msgs_per_s"), elapsed, 0), "bytes_per_s",
                  rate_error(a, num(r, "bytes_per_s"), elapsed, 1),
                  "interval_msgs_per_s",
                  rate_error(a, num(iv, "msgs_per_s"), num(iv, "seconds"), 0),
                  "interval_bytes_per_s",
                  rate_error(a, num(iv, "bytes_per_s"), num(iv, "seconds"), 1),
                  "mean_msgs_per_s", mean_e, "peak_msgs_per_s", peak_e,
                  "peak_bytes_per_s",
                  ks_analysis_bytes_sampling_error(a, num(r, "peak_bytes_per_s")),
                  "max_msgs_per_s",
                  ks_analysis_sampling_error(a, num(r, "max_msgs_per_s")));
        if (e && json_is_number(json_object_get(r, "peak_to_mean")) &&
            peak > 0 && mean > 0)
                json_object_set_new(
                    e, "peak_to_mean",
                    json_real(ptm * sqrt(pow(peak_e / peak, 2) +
                                         pow(mean_e / mean, 2))));
        json_object_set_new(r, "sampling_error", e);

        /* the floor with the peak anywhere in its range; only when the
         * floor reproduces from the report's own inputs */
        sz    = json_object_get(topic, "sizing");
        basis = json_object_get(sz, "basis");
        if (!p || !json_is_integer(json_object_get(sz, "partition_floor")))
                return;
        skew = json_is_number(json_object_get(basis, "measured_key_skew"))
                   ? num(basis, "measured_key_skew")
                   : 0;
        if (floor_at(p, peak, skew) != num(sz, "partition_floor"))
                return;
        json_object_set_new(
            sz, "sampling",
            json_pack("{s:f, s:I, s:I}", "peak_msgs_per_s_error", peak_e,
                      "partition_floor_low",
                      (json_int_t)floor_at(p, peak - peak_e, skew),
                      "partition_floor_high",
                      (json_int_t)floor_at(p, peak + peak_e, skew)));
}
