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

void ks_analysis_init(ks_analysis_t *a, uint64_t analysed, uint64_t unanalysed)
{
        a->analysed   = analysed;
        a->unanalysed = unanalysed;
        a->produced   = analysed + unanalysed;
        a->complete   = unanalysed == 0;
        a->analysed_fraction =
            a->produced ? (double)analysed / (double)a->produced : 1.0;
}

static uint64_t u64_of(const json_t *o, const char *k)
{
        const json_t *j = json_object_get(o, k);
        return json_is_integer(j) && json_integer_value(j) > 0
                   ? (uint64_t)json_integer_value(j)
                   : 0;
}

void ks_analysis_of_topic(const json_t *topic, ks_analysis_t *a)
{
        ks_analysis_init(a, u64_of(topic, "messages"),
                         u64_of(json_object_get(topic, "keys"), "unanalysed"));
}

void ks_analysis_add(ks_analysis_t *a, const ks_analysis_t *b)
{
        ks_analysis_init(a, a->analysed + b->analysed,
                         a->unanalysed + b->unanalysed);
}

json_t *ks_analysis_json(const ks_analysis_t *a)
{
        return json_pack("{s:b, s:I, s:I, s:I, s:f}", "complete", a->complete,
                         "messages_produced", (json_int_t)a->produced,
                         "messages_analysed", (json_int_t)a->analysed,
                         "messages_unanalysed", (json_int_t)a->unanalysed,
                         "analysed_fraction", a->analysed_fraction);
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
        if (a->complete)
                return buf;
        fmt_count(a->analysed, an);
        fmt_count(a->produced, pr);
        fmt_pct(a, pct, sizeof(pct));
        snprintf(buf, size,
                 "partial: keyshift analysed %s of %s messages (%s %%)", an, pr,
                 pct);
        return buf;
}

void ks_analysis_set_distinct(json_t *keys, double distinct,
                              double sketch_error, const ks_analysis_t *a)
{
        json_object_set_new(keys, "distinct_estimate",
                            json_integer((json_int_t)llround(distinct)));
        json_object_set_new(keys, "distinct_error",
                            a->complete ? json_real(sketch_error)
                                        : json_null());
        json_object_set_new(keys, "distinct_lower_bound",
                            json_boolean(!a->complete));
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
        if (a->complete)
                return 0.0;
        return proportion_error(f, sum_m2 > 0 ? sum_m * sum_m / sum_m2 : 0);
}

void ks_analysis_set_moved(json_t *moved, double sum_m, double sum_m2,
                           double hashed_share, const ks_analysis_t *a)
{
        double f =
            json_number_value(json_object_get(moved, "messages_fraction"));
        double err = ks_analysis_messages_fraction_error(f, sum_m, sum_m2, a);

        json_object_set_new(moved, "messages_exact", json_boolean(a->complete));
        json_object_set_new(moved, "messages_fraction_error", json_real(err));
        json_object_set_new(moved, "traffic_fraction_error",
                            json_real(err * hashed_share));
}
