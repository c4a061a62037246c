/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_analysis.c
 * @brief How much of a topic keyshift analysed, and how each figure is
 *        stated then (ks_analysis.h).
 */
#include "ks_analysis.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/** The standard error said of a fraction with no sample to estimate it
 *  from: the largest a fraction's standard deviation can be. */
#define KS_ANALYSIS_ERROR_UNKNOWN 0.5

void ks_analysis_init_sampled(ks_analysis_t *a, uint64_t messages,
                              uint64_t bytes, uint64_t unanalysed,
                              const ks_analysis_sampling_t *smp,
                              double                        uptime_s)
{
        memset(a, 0, sizeof(*a));
        if (smp)
                a->smp = *smp;
        a->messages   = messages;
        a->bytes      = bytes;
        a->unanalysed = unanalysed;
        a->uptime_s   = uptime_s;
        /* messages counted out before any staged one was analysed (they
         * wait in the rings) are sampled too: N not yet known */
        a->sampled  = a->smp.one_in_max > 0 || a->smp.out_messages > 0;
        a->skipped  = unanalysed > 0;
        a->complete = !a->sampled && !a->skipped;
        /* the weights stand for messages not staged: take them off, add
         * the staged ones once (ks_topic_counters_t) */
        a->analysed = messages - a->smp.weighted_messages + a->smp.in_messages;
        a->produced = a->analysed + a->smp.out_messages + unanalysed;
        a->bytes_produced =
            bytes - a->smp.weighted_bytes + a->smp.in_bytes + a->smp.out_bytes;
        a->analysed_fraction =
            a->produced ? (double)a->analysed / (double)a->produced : 1.0;
}

void ks_analysis_init(ks_analysis_t *a, uint64_t analysed, uint64_t unanalysed)
{
        ks_analysis_init_sampled(a, analysed, 0, unanalysed, NULL, -1);
}

static uint64_t u64_of(const json_t *o, const char *k)
{
        const json_t *j = json_object_get(o, k);
        return json_is_integer(j) && json_integer_value(j) > 0
                   ? (uint64_t)json_integer_value(j)
                   : 0;
}

/** @returns @p o's number @p k when above 0, else 0. */
static double num_of(const json_t *o, const char *k)
{
        double d = json_number_value(json_object_get(o, k));
        return d > 0 ? d : 0.0;
}

void ks_analysis_sampling_of(const json_t *an, ks_analysis_sampling_t *smp)
{
        smp->in_messages       = u64_of(an, "messages_sampled_in");
        smp->in_bytes          = u64_of(an, "bytes_sampled_in");
        smp->weighted_messages = u64_of(an, "messages_sampled_weighted");
        smp->weighted_bytes    = u64_of(an, "bytes_sampled_weighted");
        smp->out_messages      = u64_of(an, "messages_sampled_out");
        smp->out_bytes         = u64_of(an, "bytes_sampled_out");
        smp->variance          = u64_of(an, "sampled_variance");
        smp->in_bytes_sq       = num_of(an, "bytes_sq_sampled_in");
        smp->one_in_max        = u64_of(an, "one_in_max");
        smp->seconds           = u64_of(an, "sampled_seconds");
}

void ks_analysis_of_topic(const json_t *topic, ks_analysis_t *a)
{
        const json_t          *an = json_object_get(topic, "analysis");
        const json_t          *up = json_object_get(an, "uptime_s");
        ks_analysis_sampling_t smp;

        ks_analysis_sampling_of(an, &smp);
        ks_analysis_init_sampled(
            a, u64_of(topic, "messages"), u64_of(topic, "bytes"),
            u64_of(json_object_get(topic, "keys"), "unanalysed"), &smp,
            json_is_number(up) ? json_number_value(up) : -1);
}

void ks_analysis_add(ks_analysis_t *a, const ks_analysis_t *b)
{
        ks_analysis_sampling_t s = a->smp;

        s.in_messages += b->smp.in_messages;
        s.in_bytes += b->smp.in_bytes;
        s.weighted_messages += b->smp.weighted_messages;
        s.weighted_bytes += b->smp.weighted_bytes;
        s.out_messages += b->smp.out_messages;
        s.out_bytes += b->smp.out_bytes;
        s.variance += b->smp.variance;
        s.in_bytes_sq += b->smp.in_bytes_sq;
        s.seconds += b->smp.seconds;
        if (b->smp.one_in_max > s.one_in_max)
                s.one_in_max = b->smp.one_in_max;
        ks_analysis_init_sampled(
            a, a->messages + b->messages, a->bytes + b->bytes,
            a->unanalysed + b->unanalysed, &s,
            a->uptime_s >= 0 && b->uptime_s >= 0 ? a->uptime_s + b->uptime_s
                                                 : -1);
}

void ks_analysis_add_concurrent(ks_analysis_t *a, const ks_analysis_t *b)
{
        uint64_t secs =
            a->smp.seconds > b->smp.seconds ? a->smp.seconds : b->smp.seconds;
        double up = a->uptime_s > b->uptime_s ? a->uptime_s : b->uptime_s;

        ks_analysis_add(a, b);
        a->smp.seconds = secs;
        a->uptime_s    = up;
}

json_t *ks_analysis_json(const ks_analysis_t *a)
{
        json_t *o = json_pack(
            "{s:b, s:I, s:I, s:I, s:f, s:b, s:I, s:I, s:I, s:I, s:I, s:I, "
            "s:I, s:I, s:I, s:I, s:f}",
            "complete", a->complete, "messages_produced",
            (json_int_t)a->produced, "messages_analysed",
            (json_int_t)a->analysed, "messages_unanalysed",
            (json_int_t)a->unanalysed, "analysed_fraction",
            a->analysed_fraction, "sampled", a->sampled, "one_in_max",
            (json_int_t)a->smp.one_in_max, "sampled_seconds",
            (json_int_t)a->smp.seconds, "messages_sampled_in",
            (json_int_t)a->smp.in_messages, "messages_sampled_weighted",
            (json_int_t)a->smp.weighted_messages, "messages_sampled_out",
            (json_int_t)a->smp.out_messages, "bytes_sampled_in",
            (json_int_t)a->smp.in_bytes, "bytes_sampled_weighted",
            (json_int_t)a->smp.weighted_bytes, "bytes_sampled_out",
            (json_int_t)a->smp.out_bytes, "sampled_variance",
            (json_int_t)a->smp.variance, "bytes_produced",
            (json_int_t)a->bytes_produced, "messages_sampling_error",
            ks_analysis_sampling_error(a, (double)a->messages));

        if (o)
                json_object_set_new(o, "bytes_sq_sampled_in",
                                    json_real(a->smp.in_bytes_sq));
        if (o)
                json_object_set_new(o, "bytes_sampling_error",
                                    json_real(ks_analysis_bytes_sampling_error(
                                        a, (double)a->bytes)));
        if (o && a->uptime_s >= 0)
                json_object_set_new(o, "uptime_s", json_real(a->uptime_s));
        return o;
}

double ks_analysis_sampling_error(const ks_analysis_t *a, double messages)
{
        double n1, var;

        if (!a->sampled || a->smp.one_in_max < 2 || !(messages > 0))
                return 0.0; /* N = 1: exact; N unknown: none analysed */
        n1  = (double)a->smp.one_in_max - 1;
        var = n1 * messages;
        if ((double)a->smp.variance < var)
                var = (double)a->smp.variance;
        return KS_ANALYSIS_SIGMAS * sqrt(var);
}

/** @returns the size-weighted mean size of the staged messages (sum s^2
 *           / sum s), bytes; without the squares, the exact mean size of
 *           the messages counted (analysed and sampled out); 0 when none. */
static double weighted_bytes(const ks_analysis_t *a)
{
        uint64_t m = a->produced - a->unanalysed;

        if (a->smp.in_bytes_sq > 0 && a->smp.in_bytes)
                return a->smp.in_bytes_sq / (double)a->smp.in_bytes;
        return m ? (double)a->bytes_produced / (double)m : 0.0;
}

double ks_analysis_bytes_sampling_error(const ks_analysis_t *a, double bytes)
{
        double b = weighted_bytes(a);

        if (!a->sampled || !(b > 0))
                return 0.0;
        return b * ks_analysis_sampling_error(a, bytes / b);
}

double ks_analysis_hot_error(const ks_analysis_t *a, double count,
                             double hot_error)
{
        double s;

        if (!a->sampled || !a->smp.one_in_max)
                return hot_error;
        s = ks_analysis_sampling_error(a, count);
        return sqrt(s * s + (double)a->smp.one_in_max * hot_error * hot_error);
}

void ks_analysis_set_window(json_t *window, const ks_analysis_t *a)
{
        json_object_set_new(
            window, "messages_sampling_error",
            json_real(ks_analysis_sampling_error(
                a, json_number_value(json_object_get(window, "messages")))));
        json_object_set_new(
            window, "bytes_sampling_error",
            json_real(ks_analysis_bytes_sampling_error(
                a, json_number_value(json_object_get(window, "bytes")))));
        json_object_set_new(window, "hashed_messages_sampling_error",
                            json_real(ks_analysis_sampling_error(
                                a, json_number_value(json_object_get(
                                       window, "hashed_messages")))));
}

/** @brief "60,000" into @p out (at least 27 bytes). */
static void fmt_count(uint64_t v, char *out)
{
        char   d[24];
        size_t n = (size_t)snprintf(d, sizeof(d), "%llu",
                                    (unsigned long long)v),
               i, o = 0;

        for (i = 0; i < n; i++) {
                if (i && (n - i) % 3 == 0)
                        out[o++] = ',';
                out[o++] = d[i];
        }
        out[o] = '\0';
}

/** @brief The analysed percentage with the fewest decimals (up to 3)
 *         that never say "100" while something was skipped nor "0"
 *         while something was analysed. */
static void fmt_pct(const ks_analysis_t *a, char *out, size_t size)
{
        double pct = 100.0 * a->analysed_fraction, back;
        int    dec;

        for (dec = 0; dec <= 3; dec++) {
                snprintf(out, size, "%.*f", dec, pct);
                back = strtod(out, NULL);
                if (back < 100 && (back > 0 || !a->analysed))
                        return;
        }
        if (pct >= 50) /* 99.9996: cut, not rounded */
                snprintf(out, size, "%.3f", floor(pct * 1000) / 1000);
        else
                snprintf(out, size, "<0.001");
}

const char *ks_analysis_partial_line(const ks_analysis_t *a, char *buf,
                                     size_t size)
{
        char an[32], pr[32], pct[16];

        if (!size)
                return buf;
        buf[0] = '\0';
        if (!a->skipped)
                return buf;
        fmt_count(a->analysed, an);
        fmt_count(a->produced, pr);
        fmt_pct(a, pct, sizeof(pct));
        snprintf(buf, size,
                 "partial: keyshift analysed %s of %s messages (%s %%)", an, pr,
                 pct);
        return buf;
}

const char *ks_analysis_sampled_line(const ks_analysis_t *a, char *buf,
                                     size_t size)
{
        char of[48] = "", secs[32];

        if (!size)
                return buf;
        buf[0] = '\0';
        if (!a->sampled)
                return buf;
        /* a sampled message was staged in at least one second */
        fmt_count(a->smp.seconds ? a->smp.seconds : 1, secs);
        if (a->uptime_s >= 0) {
                char up[32];
                fmt_count((uint64_t)llround(a->uptime_s), up);
                snprintf(of, sizeof(of), " of %s", up);
        }
        if (!a->smp.one_in_max) /* sampling began: none analysed yet */
                snprintf(buf, size,
                         "estimated: the producer was out of CPU for %s s%s "
                         "(keyshift began sampling; its first sampled "
                         "messages are not analysed yet); figures below "
                         "miss them",
                         secs, of);
        else
                snprintf(buf, size,
                         "estimated: the producer was out of CPU for %s s%s "
                         "(keyshift analysed 1 message in up to %llu then); "
                         "figures below are estimates (+/- 3 sigma)",
                         secs, of, (unsigned long long)a->smp.one_in_max);
        return buf;
}

void ks_analysis_set_distinct(json_t *keys, double distinct,
                              double sketch_error, const ks_analysis_t *a)
{
        /* the sketch's error whether complete or not: a partial analysis
         * leaves keys out, it does not make the estimate exact, nor a
         * lower bound (an estimate can be above the keys produced) */
        json_object_set_new(keys, "distinct_estimate",
                            json_integer((json_int_t)llround(distinct)));
        json_object_set_new(keys, "distinct_error", json_real(sketch_error));
        json_object_set_new(keys, "distinct_lower_bound",
                            json_boolean(!a->complete));
}

void ks_analysis_set_moved_keys_error(json_t *moved, double distinct,
                                      double distinct_error)
{
        double f =
            json_number_value(json_object_get(moved, "distinct_keys_fraction"));
        double fe = json_number_value(
            json_object_get(moved, "distinct_keys_fraction_error"));

        json_object_set_new(
            moved, "distinct_keys_error",
            json_real(distinct *
                      sqrt(fe * fe + f * f * distinct_error * distinct_error)));
}

const char *ks_analysis_more_keys_note(const ks_analysis_t *a, char *buf,
                                       size_t size)
{
        char n[32];

        if (!size)
                return buf;
        buf[0] = '\0';
        if (a->complete)
                return buf;
        fmt_count(a->produced - a->analysed, n);
        snprintf(buf, size, "more may be among the %s messages not analysed",
                 n);
        return buf;
}

const char *ks_analysis_distinct_line(const ks_analysis_t *a, double distinct,
                                      double error, char *buf, size_t size)
{
        char n[32], qual[64] = "", more[KS_ANALYSIS_LINE_MAX];

        if (!size)
                return buf;
        buf[0] = '\0';
        if (a->complete)
                return buf;
        fmt_count(distinct > 0 ? (uint64_t)llround(distinct) : 0, n);
        if (error > 0)
                snprintf(qual, sizeof(qual),
                         " (+/- %.2f%%, the sketch's standard error)",
                         100 * error);
        else if (error == 0)
                snprintf(qual, sizeof(qual), " (all counted)");
        snprintf(buf, size, "Distinct keys: %s in the analysed messages%s; %s",
                 n, qual, ks_analysis_more_keys_note(a, more, sizeof(more)));
        return buf;
}

/** @returns the standard error of a proportion @p f over @p n sampled
 *           units, the proportion pulled half a unit towards 1/2. */
static double proportion_error(double f, double n)
{
        double p;

        if (!(n > 0))
                return KS_ANALYSIS_ERROR_UNKNOWN;
        p = (f * n + 0.5) / (n + 1);
        return sqrt(p * (1 - p) / n);
}

double ks_analysis_keys_fraction_error(double f, size_t keys, int sample_full,
                                       const ks_analysis_t *a)
{
        if (a->complete)
                return sample_full && keys ? sqrt(f * (1 - f) / (double)keys)
                                           : 0.0;
        return proportion_error(f, (double)keys);
}

double ks_analysis_messages_fraction_error(double f, double sum_m,
                                           double               sum_m2,
                                           const ks_analysis_t *a)
{
        if (!a->skipped)
                return 0.0;
        return proportion_error(f, sum_m2 > 0 ? sum_m * sum_m / sum_m2 : 0);
}

double ks_analysis_fraction_sampling_error(const ks_analysis_t *a, double f,
                                           double of)
{
        if (!a->sampled || a->smp.one_in_max < 2) /* N = 1: exact */
                return 0.0;
        return KS_ANALYSIS_SIGMAS *
               proportion_error(f, of / ((double)a->smp.one_in_max - 1));
}

void ks_analysis_set_moved(json_t *moved, double sum_m, double sum_m2,
                           double window_hashed, double window_all,
                           const ks_analysis_t *a)
{
        double f =
            json_number_value(json_object_get(moved, "messages_fraction"));
        double tf =
            json_number_value(json_object_get(moved, "traffic_fraction"));
        double m = json_number_value(json_object_get(moved, "messages"));
        double b = json_number_value(json_object_get(moved, "bytes"));
        double hashed_share = window_all > 0 ? window_hashed / window_all : 0;
        double err  = ks_analysis_messages_fraction_error(f, sum_m, sum_m2, a);
        double fs   = ks_analysis_fraction_sampling_error(a, f, window_hashed);
        double ts   = ks_analysis_fraction_sampling_error(a, tf, window_all);
        double terr = err * hashed_share;

        /* the sampling's standard error beside the skips': independent
         * (which messages were skipped does not depend on which were
         * staged), so their variances add */
        err  = sqrt(err * err +
                    fs * fs / (KS_ANALYSIS_SIGMAS * KS_ANALYSIS_SIGMAS));
        terr = sqrt(terr * terr +
                    ts * ts / (KS_ANALYSIS_SIGMAS * KS_ANALYSIS_SIGMAS));
        json_object_set_new(moved, "messages_exact", json_boolean(a->complete));
        json_object_set_new(moved, "messages_fraction_error", json_real(err));
        json_object_set_new(moved, "traffic_fraction_error", json_real(terr));
        json_object_set_new(moved, "messages_sampling_error",
                            json_real(ks_analysis_sampling_error(a, m)));
        json_object_set_new(moved, "bytes_sampling_error",
                            json_real(ks_analysis_bytes_sampling_error(a, b)));
        json_object_set_new(moved, "messages_fraction_sampling_error",
                            json_real(fs));
        json_object_set_new(moved, "traffic_fraction_sampling_error",
                            json_real(ts));
}
