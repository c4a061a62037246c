/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_story.c
 * @brief The topic's headline (ks_story.h).
 */
#include "ks_story.h"

#include "ks_sizing_json.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ks_analysis.h"

/** The busiest partition's limit over the median when the report has none
 *  (keyshift.partition.skew.max's default). */
#define KS_STORY_SKEW_LIMIT 2.5

typedef struct story {
        char  *buf;
        size_t size, o;
} story_t;

static void say(story_t *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/** @brief Appends to the story (bounded). */
static void say(story_t *s, const char *fmt, ...)
{
        va_list ap;
        int     n;

        if (s->o >= s->size)
                return;
        va_start(ap, fmt);
        n = vsnprintf(s->buf + s->o, s->size - s->o, fmt, ap);
        va_end(ap);
        if (n > 0)
                s->o = s->o + (size_t)n < s->size ? s->o + (size_t)n : s->size;
}

static double num(const json_t *o, const char *k)
{
        const json_t *j = json_object_get(o, k);
        return json_is_number(j) ? json_number_value(j) : 0.0;
}

static long long integer(const json_t *o, const char *k)
{
        const json_t *j = json_object_get(o, k);
        return json_is_integer(j) ? (long long)json_integer_value(j) : 0;
}

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return (x > y) - (x < y);
}

/** @returns busiest over median of a `partitions` object's `messages`
 *           column, INFINITY when the median is 0 and the busiest not,
 *           or NAN. */
static double loads_max_over_median(const json_t *parts)
{
        const json_t *msgs = json_object_get(parts, "messages");
        size_t        n    = json_array_size(msgs), i;
        double       *v, max = 0, med;

        if (!n || !(v = malloc(n * sizeof(*v))))
                return NAN;
        for (i = 0; i < n; i++) {
                v[i] = json_number_value(json_array_get(msgs, i));
                max  = v[i] > max ? v[i] : max;
        }
        qsort(v, n, sizeof(*v), cmp_double);
        med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
        free(v);
        if (max <= 0)
                return NAN;
        return med > 0 ? max / med : INFINITY;
}

/** @returns the busiest-over-median figure at @p count: @p t's `skew`
 *           (the report's), else from the per-partition loads @p parts
 *           (a merged report has no `skew`), or NAN. */
static double max_over_median(const json_t *t, const json_t *parts,
                              long long count, double *limit)
{
        const json_t *skew = json_object_get(t, "skew");
        char          k[24];
        const json_t *p;

        snprintf(k, sizeof(k), "%lld", count);
        p = json_object_get(json_object_get(skew, "partitions"), k);
        if (!json_is_object(p))
                return loads_max_over_median(parts);
        if (json_is_number(json_object_get(p, "limit")))
                *limit = num(p, "limit");
        if (num(p, "median") <= 0)
                return num(p, "max") > 0 ? INFINITY : NAN;
        return num(p, "max_over_median");
}

/** @brief 0: when messages were skipped, that the figures are partial:
 *         "partial: keyshift analysed X of Y messages (P %)", and what
 *         that makes of them; when messages were sampled, "estimated: the
 *         producer was out of CPU for S s of U (...)" and what that makes
 *         of them; then either way, that distinct keys are the analysed
 *         messages' with their sketch's error, and more may be among the
 *         others (ks_analysis.h). */
static void tell_partial(story_t *s, const json_t *t)
{
        const json_t *keys = json_object_get(t, "keys");
        const json_t *derr = json_object_get(keys, "distinct_error");
        ks_analysis_t a;
        char          line[KS_ANALYSIS_LINE_MAX];
        char          dline[KS_ANALYSIS_DISTINCT_LINE_MAX];

        char sline[KS_ANALYSIS_SAMPLED_LINE_MAX];

        ks_analysis_of_topic(t, &a);
        if (a.skipped)
                say(s,
                    "%s: the others met a full staging ring and overflow and "
                    "were skipped (ANALYSIS_BEHIND), so fractions below are "
                    "estimates from the analysed messages and message counts "
                    "are lower bounds. ",
                    ks_analysis_partial_line(&a, line, sizeof(line)));
        if (a.sampled)
                say(s,
                    "%s: while its backlog lasted, each producing thread "
                    "staged one message in N and counted the others exactly "
                    "(analysis), so each per-message figure is the sampled "
                    "count times N, with its error (*_sampling_error). ",
                    ks_analysis_sampled_line(&a, sline, sizeof(sline)));
        /* a sketch's estimate, not a lower bound: it can be above the
         * keys produced; earlier versions left the error null when
         * partial */
        if (!a.complete)
                say(s, "%s. ",
                    ks_analysis_distinct_line(
                        &a, num(keys, "distinct_estimate"),
                        json_is_number(derr) ? json_number_value(derr) : NAN,
                        dline, sizeof(dline)));
}

/** @brief 1: what the least-moving increase moves. */
static void tell_move(story_t *s, const json_t *t, long long cur)
{
        const json_t *props = json_object_get(t, "proposals");
        const json_t *best = NULL, *unpredictable = NULL, *p;
        double        best_f = 2;
        size_t        i, increases = 0;

        json_array_foreach(props, i, p)
        {
                const json_t *moved = json_object_get(p, "moved");
                if (integer(p, "partition_count") <= cur)
                        continue;
                if (json_is_false(json_object_get(p, "predictable")) ||
                    !json_is_object(moved)) {
                        if (!unpredictable)
                                unpredictable = p;
                        continue;
                }
                increases++;
                if (num(moved, "messages_fraction") < best_f) {
                        best_f = num(moved, "messages_fraction");
                        best   = p;
                }
        }
        if (best)
                say(s,
                    "Raising %lld -> %lld%s moves %.1f%% of keyed messages "
                    "and %.1f%% of keys to another partition (their order "
                    "breaks at the switch). ",
                    cur, integer(best, "partition_count"),
                    increases > 1 ? ", the least of the proposals," : "",
                    100 * best_f,
                    100 * num(json_object_get(best, "moved"),
                              "distinct_keys_fraction"));
        else if (unpredictable) {
                const json_t *r = json_object_get(unpredictable, "reason");
                say(s,
                    "What raising %lld -> %lld moves cannot be predicted: %s. ",
                    cur, integer(unpredictable, "partition_count"),
                    json_is_string(r) ? json_string_value(r)
                                      : "no modelled partitioner explains "
                                        "the deliveries");
        } else
                say(s, "No proposed count is above the current %lld. ", cur);
}

/** @brief 2: whether partitions are balanced now and at each proposal.
 *  @returns 1 when every count measured is within the limit. */
static int tell_balance(story_t *s, const json_t *t, long long cur)
{
        const json_t *props = json_object_get(t, "proposals"), *p;
        double        limit = KS_STORY_SKEW_LIMIT, worst = 0, f;
        long long     worst_at = 0, counts[1 + 64];
        double        figs[1 + 64];
        size_t        i, n = 0;

        f = max_over_median(
            t, json_object_get(json_object_get(t, "current"), "partitions"),
            cur, &limit);
        if (!isnan(f)) {
                counts[n] = cur;
                figs[n++] = f;
        }
        json_array_foreach(props, i, p)
        {
                long long c = integer(p, "partition_count");
                if (n == sizeof(counts) / sizeof(counts[0]) || c == cur ||
                    json_is_false(json_object_get(p, "predictable")))
                        continue;
                f = max_over_median(t, json_object_get(p, "partitions"), c,
                                    &limit);
                if (!isnan(f)) {
                        counts[n] = c;
                        figs[n++] = f;
                }
        }
        if (!n)
                return 0;
        for (i = 0; i < n; i++)
                if (figs[i] > worst) {
                        worst    = figs[i];
                        worst_at = counts[i];
                }
        if (isinf(worst)) {
                say(s,
                    "Some partitions receive no traffic at %lld while "
                    "others do. ",
                    worst_at);
                return 0;
        }
        say(s, worst > limit ? "Partitions are uneven: the busiest is "
                             : "Partitions are balanced: the busiest is ");
        for (i = 0; i < n; i++)
                say(s, "%s%.2fx the median %s%lld", i ? ", " : "", figs[i],
                    counts[i] == cur ? "now at " : "at ", counts[i]);
        say(s, " (limit %.1fx). ", limit);
        return worst <= limit;
}

/** @brief 3: the busiest hot key that more partitions cannot spread.
 *  @returns 1 when there is one. */
static int tell_hot_key(story_t *s, const json_t *t)
{
        const json_t *hot = json_object_get(t, "hot_keys"), *h;
        const json_t *basis =
            json_object_get(json_object_get(t, "sizing"), "basis");
        size_t i;

        /* under 10 s of traffic a key's rate says little (HOT_KEY is held
         * back then too, ks_report_sizing.c) */
        if (json_is_false(
                json_object_get(json_object_get(t, "sizing"), "enough_data")))
                return 0;
        json_array_foreach(hot, i, h)
        {
                const json_t *key = json_object_get(h, "key");
                char          name[48];
                long long     nb = integer(h, "salt_buckets");
                if (!json_is_false(json_object_get(h, "fixable_by_partitions")))
                        continue;
                if (json_is_string(key))
                        snprintf(name, sizeof(name), "%.40s%s",
                                 json_string_value(key),
                                 strlen(json_string_value(key)) > 40 ? "..."
                                                                     : "");
                else {
                        const json_t *hex = json_object_get(h, "key_hex");
                        snprintf(name, sizeof(name), "0x%.32s%s",
                                 json_is_string(hex) ? json_string_value(hex)
                                                     : "",
                                 integer(h, "key_length") > 16 ? "..." : "");
                }
                say(s,
                    "Hot key %s carries %.1f%% of the topic (%.0f msgs/s, "
                    "above one partition's target of %.0f msgs/s): no "
                    "partition count can spread it; salt it into %lld "
                    "buckets (%s#0..%s#%lld; its order then holds only "
                    "within each) or choose another key. ",
                    name, 100 * num(h, "share"), num(h, "msgs_per_s"),
                    num(basis, "partition_target_msgs_s"), nb, name, name,
                    nb - 1);
                return 1;
        }
        return 0;
}

/** @returns 1 when the report's `sizing.needs` names property @p name. */
static int needs(const json_t *sz, const char *name)
{
        const json_t *n;
        size_t        i;

        json_array_foreach(json_object_get(sz, "needs"), i, n)
        {
                if (json_is_string(n) && !strcmp(json_string_value(n), name))
                        return 1;
        }
        return 0;
}

/** @brief 4 without a consumer rate or count: no advice; what was
 *         measured, what would give one, and the floor at the report's
 *         assumed per-consumer rates, said to be assumptions. */
static void tell_no_advice(story_t *s, const json_t *sz)
{
        const json_t *basis = json_object_get(sz, "basis");
        const json_t *skew  = json_object_get(basis, "measured_key_skew");
        const json_t *fl =
            json_object_get(json_object_get(sz, "illustration"), "floors");
        const json_t *f;
        size_t        i;

        say(s, "Sizing: no partition count is recommended "
               "without " KS_SIZING_PROP_CONSUMER_RATE
               " (one consumer's msgs/s) and " KS_SIZING_PROP_CONSUMERS
               " (consumers planned); measured: ");
        if (integer(basis, "seconds_measured"))
                say(s, "peak %.0f msgs/s, ", num(basis, "peak_msgs_s"));
        else
                say(s, "no peak yet (no complete second of traffic), ");
        if (json_is_number(skew))
                say(s, "key skew %.1f, skew factor %.2f. ",
                    json_number_value(skew), num(basis, "skew_factor"));
        else
                say(s, "key skew unknown. ");
        json_array_foreach(fl, i, f)
        {
                say(s,
                    "%s %.0f msgs/s a consumer the floor would be %lld "
                    "partitions (%lld x %.2f)",
                    i ? "; at an assumed"
                      : "Only as an illustration, at an "
                        "assumed",
                    num(f, "assumed_per_consumer_msgs_s"),
                    integer(f, "partition_floor"),
                    integer(f, "throughput_partitions"),
                    num(basis, "skew_factor"));
        }
        if (json_array_size(fl))
                say(s, ". ");
        if (json_is_false(json_object_get(sz, "enough_data")))
                say(s, "(Rough: under 10 s of traffic measured.) ");
}

/** @brief 4: the advice and its inputs.
 *  @param balanced unused since the advice rests only on given inputs
 *         (it qualified an advice from today's count). */
static void tell_advice(story_t *s, const json_t *t, long long cur,
                        int balanced, int hot_key)
{
        const json_t *sz    = json_object_get(t, "sizing");
        const json_t *basis = json_object_get(sz, "basis");
        const json_t *src   = json_object_get(basis, "base_source");
        const char   *base_source =
            json_is_string(src) ? json_string_value(src) : "";
        long long rec   = integer(sz, "recommended");
        long long floor = integer(sz, "partition_floor");
        long long base  = integer(basis, "base_partitions");
        char      why[240];

        (void)balanced;
        if (!json_is_object(sz))
                return;
        if (!ks_sizing_json_advises(sz)) {
                tell_no_advice(s, sz);
                return;
        }
        if (!strcmp(base_source, "throughput"))
                snprintf(why, sizeof(why),
                         "(throughput: peak %.0f msgs/s / %.0f msgs/s a "
                         "consumer%s)",
                         num(basis, "peak_msgs_s"),
                         num(basis, "per_consumer_msgs_s"),
                         needs(sz, KS_SIZING_PROP_CONSUMERS)
                             ? "; " KS_SIZING_PROP_CONSUMERS " not given"
                             : "");
        else
                snprintf(why, sizeof(why), "(planned consumers%s)",
                         needs(sz, KS_SIZING_PROP_CONSUMER_RATE)
                             ? "; throughput not "
                               "checked: " KS_SIZING_PROP_CONSUMER_RATE
                               " not given"
                             : "");
        say(s,
            "%sizing advice: %lld partitions = %lld %s x skew factor %.2f "
            "(key skew %.1f / 30, kept within 2..4) = %lld, %s. ",
            hot_key ? "For the other keys, s" : "S", rec, base, why,
            num(basis, "skew_factor"), num(basis, "measured_key_skew"), floor,
            rec == floor ? "a power of two" : "rounded up to a power of two");
        if (json_is_false(json_object_get(sz, "enough_data")))
                say(s, "(Rough: under 10 s of traffic measured.) ");
        if (json_is_true(json_object_get(sz, "already_sufficient")))
                say(s, "The current %lld partitions already meet the floor. ",
                    cur);
}

const char *ks_story_headline(const json_t *t, char *buf, size_t size)
{
        story_t       s       = {buf, size, 0};
        const json_t *pc      = json_object_get(t, "partition_count");
        long long     cur     = integer(pc, "current");
        long long     cluster = integer(pc, "cluster");
        int           balanced, hot_key;
        size_t        len;

        if (!size)
                return buf;
        buf[0] = '\0';
        tell_partial(&s, t);
        if (!cur) {
                say(&s, "The current partition count is unknown: nothing "
                        "can be said of an increase yet.");
                return buf;
        }
        if (cluster && cluster != cur)
                say(&s,
                    "A rehearsal of %lld partitions (keyshift.partitions."
                    "current; the topic has %lld): the figures are modelled "
                    "for %lld. ",
                    cur, cluster, cur);
        tell_move(&s, t, cur);
        balanced = tell_balance(&s, t, cur);
        hot_key  = tell_hot_key(&s, t);
        tell_advice(&s, t, cur, balanced, hot_key);
        if (integer(json_object_get(t, "acknowledged"), "mismatched"))
                say(&s, "Delivered partitions disagreed with the model "
                        "(PARTITIONER_MISMATCH): these figures are in doubt.");
        for (len = strlen(buf); len && buf[len - 1] == ' '; len--)
                buf[len - 1] = '\0';
        return buf;
}
