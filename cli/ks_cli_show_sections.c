/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli_show_sections.c
 * @brief The blocks of a topic in `keyshift show`: what moves, partition
 *        skew, hot keys, mixed serializers and other clients, the delivery
 *        check, sizing and rates.
 */
#include "ks_cli_show.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ks_analysis.h"
#include "ks_cli_fmt.h"
#include "ks_cli_report.h"
#include "ks_cli_stats.h"
#include "ks_sizing_json.h"

void ks_cli_show_moves(const ks_cli_show_t *s, const json_t *t, int32_t cur)
{
        const json_t *props = json_object_get(t, "proposals");
        char          a[32], b[32], d[32], note[KS_ANALYSIS_LINE_MAX];
        size_t        i;
        ks_analysis_t an;

        if (!cur)
                return;
        /* reports from before `messages_exact` existed: the topic's own
         * counts say whether messages were skipped */
        ks_analysis_of_topic(t, &an);
        printf("  %s%-14s %-28s %s%s\n", s->st->dim, "raise",
               "keyed messages that move", "distinct keys that move",
               s->st->off);
        for (i = 0; i < json_array_size(props); i++) {
                const json_t *p  = json_array_get(props, i);
                const json_t *mv = json_object_get(p, "moved");
                int32_t       pc = (int32_t)ks_cli_u64(p, "partition_count");
                double        f  = ks_cli_num(mv, "messages_fraction");
                double fe = ks_cli_num(mv, "distinct_keys_fraction_error");
                double me = ks_cli_num(mv, "messages_fraction_error");
                /* counts of the analysed messages only: lower bounds */
                const char *atl =
                    !an.complete ||
                            json_is_false(json_object_get(mv, "messages_exact"))
                        ? ">="
                        : "";
                char label[40], err[32] = "", merr[32] = "", e[32];
                char cnt[40], keys[40];

                snprintf(label, sizeof(label), "%d -> %d", (int)cur, (int)pc);
                if (me > 0)
                        snprintf(merr, sizeof(merr), " +-%s",
                                 ks_cli_fmt_pct(me, e, sizeof(e)));
                if (fe > 0)
                        snprintf(err, sizeof(err), " +-%s",
                                 ks_cli_fmt_pct(fe, d, sizeof(d)));
                if (pc <= cur) {
                        printf("  %-14s %snot an increase: Kafka cannot lower "
                               "a partition count%s\n",
                               label, s->st->red, s->st->off);
                        continue;
                }
                if (json_is_false(json_object_get(p, "predictable"))) {
                        printf("  %-14s %snot predictable: %s%s\n", label,
                               s->st->red, ks_cli_str(p, "reason", "?"),
                               s->st->off);
                        continue;
                }
                snprintf(d, sizeof(d), "(%s%s)",
                         ks_cli_fmt_pct(f, b, sizeof(b)), merr);
                snprintf(
                    cnt, sizeof(cnt), "%s%s", atl,
                    ks_cli_fmt_count(ks_cli_u64(mv, "messages"), a, sizeof(a)));
                /* a sketch's estimate (key sample x distinct keys), not a
                 * lower bound: what it leaves out is said below */
                ks_cli_fmt_count(ks_cli_u64(mv, "distinct_keys"), keys,
                                 sizeof(keys));
                printf("  %-14s %s%12s %-9s%s %12s ", label,
                       f > 0 ? s->st->yellow : s->st->green, cnt, d, s->st->off,
                       keys);
                printf("(%s%s)\n",
                       ks_cli_fmt_pct(ks_cli_num(mv, "distinct_keys_fraction"),
                                      b, sizeof(b)),
                       err);
        }
        if (*ks_analysis_more_keys_note(&an, note, sizeof(note)))
                printf("  %sdistinct keys that move: of the analysed "
                       "messages' keys; %s%s\n",
                       s->st->dim, note, s->st->off);
}

/** @brief One row of the skew table from a `partitions` array. */
static void ks_show_skew_row(const ks_cli_show_t *s, const char *label,
                             const json_t *parts)
{
        ks_cli_loads_t l;
        char           a[32], b[32], c[32], r[32];
        double         x;

        if (!parts || ks_cli_loads_read(parts, &l))
                return;
        x = l.spread.max_over_median;
        if (isinf(x))
                snprintf(r, sizeof(r), "inf");
        else
                snprintf(r, sizeof(r), "%.2fx", x);
        printf(
            "  %-14s %10d %11s %11s %s%10s%s %11s   p%d\n", label, (int)l.count,
            ks_cli_fmt_count(l.spread.max, a, sizeof(a)),
            ks_cli_fmt_count((uint64_t)llround(l.spread.median), b, sizeof(b)),
            x > 2.5   ? s->st->red
            : x > 1.5 ? s->st->yellow
                      : "",
            r, s->st->off, ks_cli_fmt_count(l.spread.min, c, sizeof(c)),
            (int)l.busiest);
        ks_cli_loads_free(&l);
}

void ks_cli_show_skew(const ks_cli_show_t *s, const json_t *t, int32_t cur)
{
        const json_t *props = json_object_get(t, "proposals");
        char          label[40];
        size_t        i;

        if (!cur)
                return;
        printf("\n  %s%-14s %10s %11s %11s %10s %11s   %s%s\n", s->st->dim,
               "partition load", "partitions", "busiest", "median",
               "max/median", "idlest", "busiest is", s->st->off);
        snprintf(label, sizeof(label), "now");
        ks_show_skew_row(
            s, label,
            json_object_get(json_object_get(t, "current"), "partitions"));
        for (i = 0; i < json_array_size(props); i++) {
                const json_t *p = json_array_get(props, i);
                snprintf(label, sizeof(label), "at %d",
                         (int)ks_cli_u64(p, "partition_count"));
                ks_show_skew_row(s, label, json_object_get(p, "partitions"));
        }
}

/** A hot key's column (characters): the key shown, cut and padded. */
#define KS_SHOW_HOT_KEY_CHARS 32

/** @brief The hot keys' header line: a column per proposal (@p props),
 *         and the verdict's when any key has one. */
static void ks_show_hot_header(const ks_cli_show_t *s, const json_t *props,
                               int verdicts)
{
        size_t j;

        printf("\n  %s%-3s %-32s %10s %7s  %9s", s->st->dim, "#", "hot key",
               "messages", "share", "partition");
        for (j = 0; j < json_array_size(props); j++) {
                char at[24];
                snprintf(at, sizeof(at), "at %d",
                         (int)ks_cli_u64(json_array_get(props, j),
                                         "partition_count"));
                printf(" %7s", at);
        }
        if (verdicts) /* after the "moves" marks */
                printf("  %5s  %s", "", "verdict");
        printf("%s\n", s->st->off);
}

/** @brief Prints hot key @p h's partition at each proposal of @p props
 *         (yellow where it moves).
 *  @returns 1 if it moves at any, else 0. */
static int ks_show_hot_partitions(const ks_cli_show_t *s, const json_t *h,
                                  const json_t *props)
{
        const json_t *pp    = json_object_get(h, "partition_proposed");
        const json_t *moves = json_object_get(h, "moves");
        int           moved = 0;
        size_t        j;

        for (j = 0; j < json_array_size(props); j++) {
                char    name[16];
                json_t *p;
                snprintf(name, sizeof(name), "%d",
                         (int)ks_cli_u64(json_array_get(props, j),
                                         "partition_count"));
                p = json_object_get(pp, name);
                moved |= json_is_true(json_object_get(moves, name));
                char at[24] = "?";
                if (json_is_integer(p))
                        snprintf(at, sizeof(at), "%lld",
                                 (long long)json_integer_value(p));
                printf(" %s%7s%s",
                       json_is_true(json_object_get(moves, name))
                           ? s->st->yellow
                           : "",
                       at, s->st->off);
        }
        return moved;
}

/** @brief The line of hot key @p h, rank @p i + 1: its count, share,
 *         partitions, verdict (when @p verdicts) and errors.
 *  @returns 1 if its count was sampled, else 0. */
static int ks_show_hot_row(const ks_cli_show_t *s, const json_t *h, size_t i,
                           const json_t *props, int verdicts)
{
        const json_t *pcur = json_object_get(h, "partition_current");
        uint64_t      err  = ks_cli_u64(h, "messages_error");
        char          k[64], a[32], b[32], padded[160];
        int           moved, sampled = 0;

        printf("  %-3zu %s %10s %7s  ", i + 1,
               ks_cli_fmt_pad(
                   ks_cli_fmt_key(h, KS_SHOW_HOT_KEY_CHARS, k, sizeof(k)),
                   KS_SHOW_HOT_KEY_CHARS, padded, sizeof(padded)),
               ks_cli_fmt_count(ks_cli_u64(h, "messages"), a, sizeof(a)),
               ks_cli_fmt_pct(ks_cli_num(h, "share"), b, sizeof(b)));
        if (json_is_integer(pcur))
                printf("%9lld", (long long)json_integer_value(pcur));
        else
                printf("%9s", "?");
        moved = ks_show_hot_partitions(s, h, props);
        if (verdicts) {
                int fix = ks_cli_hot_verdict(h, a, sizeof(a));
                printf("  %s%-5s%s  %s%s%s", moved ? s->st->yellow : "",
                       moved ? "moves" : "", s->st->off,
                       fix == 2 ? s->st->red : "", a, s->st->off);
        } else if (moved) {
                printf("  %smoves%s", s->st->yellow, s->st->off);
        }
        if (err)
                printf(" %s(count may be %s high)%s", s->st->dim,
                       ks_cli_fmt_count(err, a, sizeof(a)), s->st->off);
        if ((err = ks_cli_u64(h, "messages_sampling_error"))) {
                printf(" %s(count +/- %s, sampled)%s", s->st->dim,
                       ks_cli_fmt_count(err, a, sizeof(a)), s->st->off);
                sampled = 1;
        }
        printf("\n");
        return sampled;
}

/** @brief The notes under the hot keys of topic @p t: how they were
 *         sampled (when @p sampled), what a verdict says (when
 *         @p verdicts). */
static void ks_show_hot_notes(const ks_cli_show_t *s, const json_t *t,
                              int sampled, int verdicts)
{
        const json_t *hs = json_object_get(t, "hot_keys_sampling");
        char          a[32], b[32];

        if (sampled)
                printf("  %ssampled: keys here rarely repeat, so keyshift "
                       "counted hot keys in one message of %lld at random "
                       "(%s of %s messages); a count is then within +/- the "
                       "figure shown (3 standard errors)%s\n",
                       s->st->dim, (long long)ks_cli_u64(hs, "one_in"),
                       ks_cli_fmt_count(ks_cli_u64(hs, "messages_sampled"), a,
                                        sizeof(a)),
                       ks_cli_fmt_count(ks_cli_u64(hs, "messages_passed_by"), b,
                                        sizeof(b)),
                       s->st->off);
        if (verdicts)
                printf("  %sverdict: whether more partitions can spread the "
                       "key, or salting it into N\n  sub-keys (key#0..key#N-1) "
                       "is needed: the key alone exceeds one partition's\n  "
                       "target rate%s%s\n",
                       s->st->dim,
                       json_is_false(json_object_get(
                           json_object_get(t, "sizing"), "enough_data"))
                           ? " (rough: under 10 s of traffic measured)"
                           : "",
                       s->st->off);
}

void ks_cli_show_hot(const ks_cli_show_t *s, const json_t *t, int32_t cur)
{
        const json_t *hot   = json_object_get(t, "hot_keys");
        const json_t *props = json_object_get(t, "proposals");
        size_t        i, n = json_array_size(hot);
        char          a[32];
        int           verdicts = 0, sampled = 0;

        if (!n || !s->hot_max)
                return;
        for (i = 0; i < n && i < (size_t)s->hot_max; i++)
                verdicts |= ks_cli_hot_verdict(json_array_get(hot, i), a,
                                               sizeof(a)) > 0;
        ks_show_hot_header(s, props, verdicts);
        for (i = 0; i < n && i < (size_t)s->hot_max; i++)
                sampled |= ks_show_hot_row(s, json_array_get(hot, i), i, props,
                                           verdicts);
        ks_show_hot_notes(s, t, sampled, verdicts);
        (void)cur;
}

void ks_cli_show_clients(const ks_cli_show_t *s, const json_t *t, int32_t cur)
{
        const json_t *mk = json_object_get(t, "mixed_keys");
        const json_t *oc = json_object_get(t, "other_clients");
        const char   *name;
        json_t       *m;
        char          a[32], b[32];
        size_t        i;

        if (mk) {
                uint64_t tot = ks_cli_u64(mk, "total");
                printf("\n  mixed key serializers: ");
                if (!tot)
                        printf("%snone%s among %s sampled logical keys\n",
                               s->st->green, s->st->off,
                               ks_cli_fmt_count(ks_cli_u64(mk, "sampled"), a,
                                                sizeof(a)));
                else
                        printf("%s%s logical keys%s (of %s sampled) arrive "
                               "under more than one encoding\n",
                               s->st->red, ks_cli_fmt_count(tot, a, sizeof(a)),
                               s->st->off,
                               ks_cli_fmt_count(ks_cli_u64(mk, "sampled"), b,
                                                sizeof(b)));
                for (i = 0;
                     i < json_array_size(json_object_get(mk, "keys")) && i < 5;
                     i++) {
                        const json_t *k =
                            json_array_get(json_object_get(mk, "keys"), i);
                        const char *enc;
                        json_t     *e;
                        printf("    %s:", ks_cli_str(k, "logical_key", "?"));
                        json_object_foreach(json_object_get(k, "encodings"),
                                            enc, e)
                        {
                                const json_t *pc =
                                    json_object_get(e, "partition_current");
                                printf(
                                    " %s %s msgs", enc,
                                    ks_cli_fmt_count(ks_cli_u64(e, "messages"),
                                                     a, sizeof(a)));
                                if (json_is_integer(pc))
                                        printf(
                                            " in p%lld",
                                            (long long)json_integer_value(pc));
                                printf(";");
                        }
                        printf("\n");
                }
        }
        if (json_object_size(oc)) {
                char text[512];
                int  n = snprintf(text, sizeof(text),
                                  "other clients' partitioners would put this "
                                   "share of keyed traffic in another "
                                   "partition at %d:",
                                  (int)cur);
                json_object_foreach((json_t *)oc, name, m)
                {
                        double f = ks_cli_num(m, "messages_fraction_different");
                        if (n < (int)sizeof(text) - 64)
                                n +=
                                    snprintf(text + n, sizeof(text) - (size_t)n,
                                             " %s %s,", name,
                                             ks_cli_fmt_pct(f, a, sizeof(a)));
                }
                text[n - 1] = '\0';
                printf("  ");
                ks_cli_fmt_print_wrapped(text, 2, 4);
        }
}

void ks_cli_show_acks(const ks_cli_show_t *s, const json_t *t)
{
        const json_t *a  = json_object_get(t, "acknowledged");
        uint64_t      mm = ks_cli_u64(a, "mismatched");
        char          x[32], y[32], z[32], f[32];

        if (json_is_object(json_object_get(t, "audit")))
                return; /* a scan: stored records, no delivery reports */
        if (json_is_false(json_object_get(a, "checked"))) {
                printf(
                    "  delivery check: %s acknowledged, not checked (%s)\n",
                    ks_cli_fmt_count(ks_cli_u64(a, "messages"), x, sizeof(x)),
                    ks_cli_str(a, "not_checked_reason", "?"));
                return;
        }
        printf("  delivery check: %s acknowledged, %s matched the model, "
               "%s%s mismatched%s, %s failed\n",
               ks_cli_fmt_count(ks_cli_u64(a, "messages"), x, sizeof(x)),
               ks_cli_fmt_count(ks_cli_u64(a, "matched"), y, sizeof(y)),
               mm ? s->st->red : "", ks_cli_fmt_count(mm, z, sizeof(z)),
               mm ? s->st->off : "",
               ks_cli_fmt_count(ks_cli_u64(a, "failed"), f, sizeof(f)));
}

/** @brief Appends the consumer properties not given (`sizing.needs`;
 *         both for a report of an earlier keyshift that had none) to
 *         @p text at @p n, joined by @p and. @returns the new length. */
static int show_needs(char *text, size_t size, int n, const json_t *sz,
                      const char *and)
{
        const json_t *needs = json_object_get(sz, "needs"), *v;
        size_t        i, cnt = json_array_size(needs);

        if (!json_is_array(needs))
                return n + snprintf(text + n, size - (size_t)n, "%s%s%s",
                                    KS_SIZING_PROP_CONSUMER_RATE, and,
                                    KS_SIZING_PROP_CONSUMERS);
        json_array_foreach(needs, i, v)
        {
                if ((size_t)n >= size)
                        break;
                n += snprintf(text + n, size - (size_t)n, "%s%s",
                              i == 0         ? ""
                              : i + 1 == cnt ? and
                                             : ", ",
                              json_is_string(v) ? json_string_value(v) : "?");
        }
        return n;
}

/** @brief `sizing` without a recommendation (issue 28): the properties
 *         that would give one, the measured figures, the illustration. */
static void show_no_advice(const ks_cli_show_t *s, const json_t *sz)
{
        const json_t *b = json_object_get(sz, "basis");
        const json_t *fl =
            json_object_get(json_object_get(sz, "illustration"), "floors");
        const json_t *f;
        char          text[768], a[32];
        size_t        i;
        int           n;

        printf("  sizing   %sno count recommended%s\n           ", s->st->bold,
               s->st->off);
        n = snprintf(text, sizeof(text), "give ");
        n = show_needs(text, sizeof(text), n, sz, " and ");
        if (ks_cli_u64(b, "seconds_measured"))
                n += snprintf(text + n, sizeof(text) - (size_t)n,
                              " for advice; measured: peak %s msgs/s",
                              ks_cli_fmt_count(ks_cli_u64(b, "peak_msgs_s"), a,
                                               sizeof(a)));
        else
                n += snprintf(text + n, sizeof(text) - (size_t)n,
                              " for advice; measured: no peak yet (no "
                              "complete second of traffic)");
        if (json_is_number(json_object_get(b, "measured_key_skew")))
                n += snprintf(text + n, sizeof(text) - (size_t)n,
                              ", key skew %.3g (busiest / median key), "
                              "skew factor %.3g",
                              ks_cli_num(b, "measured_key_skew"),
                              ks_cli_num(b, "skew_factor"));
        json_array_foreach(fl, i, f)
        {
                if ((size_t)n >= sizeof(text))
                        break;
                n += snprintf(
                    text + n, sizeof(text) - (size_t)n,
                    "%s %s msgs/s a consumer the floor would be %lld",
                    i ? "; at an assumed"
                      : "; for illustration only, at an assumed",
                    ks_cli_fmt_count(
                        (uint64_t)ks_cli_num(f, "assumed_per_consumer_msgs_s"),
                        a, sizeof(a)),
                    (long long)ks_cli_u64(f, "partition_floor"));
        }
        ks_cli_fmt_print_wrapped(text, 11, 11);
}

/** @brief The `sizing` object a later keyshift adds (optional). */
void ks_cli_show_sizing(const ks_cli_show_t *s, const json_t *t)
{
        const json_t *sz = json_object_get(t, "sizing");
        const json_t *b  = json_object_get(sz, "basis");
        const json_t *rb = json_object_get(sz, "rebalance");
        char          text[768];
        int           n;

        if (!json_is_object(sz))
                return;
        if (!ks_sizing_json_advises(sz)) {
                show_no_advice(s, sz);
                return;
        }
        printf("  sizing   %s%lld partitions recommended%s\n           ",
               s->st->bold, (long long)ks_cli_u64(sz, "recommended"),
               s->st->off);
        n = snprintf(text, sizeof(text),
                     "floor %lld = %lld base (%s) x skew factor %.2g, then "
                     "the next power of two",
                     (long long)ks_cli_u64(sz, "partition_floor"),
                     (long long)ks_cli_u64(b, "base_partitions"),
                     ks_cli_str(b, "base_source", "?"),
                     ks_cli_num(b, "skew_factor"));
        if (json_is_object(json_object_get(sz, "sampling")))
                n += snprintf(
                    text + n, sizeof(text) - (size_t)n,
                    " (sampled: %lld to %lld with the peak anywhere within "
                    "its error)",
                    (long long)ks_cli_u64(json_object_get(sz, "sampling"),
                                          "partition_floor_low"),
                    (long long)ks_cli_u64(json_object_get(sz, "sampling"),
                                          "partition_floor_high"));
        if (json_array_size(json_object_get(sz, "needs"))) {
                n += snprintf(text + n, sizeof(text) - (size_t)n,
                              "; not given: ");
                n = show_needs(text, sizeof(text), n, sz, ", ");
        }
        if (json_is_number(json_object_get(b, "measured_key_skew")))
                n += snprintf(text + n, sizeof(text) - (size_t)n,
                              "; key skew %.3g (busiest / median key)",
                              ks_cli_num(b, "measured_key_skew"));
        if (json_is_boolean(json_object_get(sz, "already_sufficient")))
                n += snprintf(
                    text + n, sizeof(text) - (size_t)n,
                    "; the current count %s",
                    json_is_true(json_object_get(sz, "already_sufficient"))
                        ? "already meets the floor"
                        : "is below it");
        if (json_is_object(rb) &&
            json_is_number(json_object_get(rb, "per_rebalance_s")))
                snprintf(text + n, sizeof(text) - (size_t)n,
                         "; a rebalance at %lld stalls consumers %.2f s "
                         "(%.1f s a day)",
                         (long long)ks_cli_u64(rb, "partition_count"),
                         ks_cli_num(rb, "per_rebalance_s"),
                         ks_cli_num(rb, "per_day_s"));
        ks_cli_fmt_print_wrapped(text, 11, 11);
}

/** @brief " +/- 12.3k" from @p e's member @p k (sampled), else "". */
static const char *pm_si(const json_t *e, const char *k, char *buf, size_t size)
{
        char v[32];

        if (!json_is_number(json_object_get(e, k)))
                return "";
        snprintf(buf, size, " +/- %s",
                 ks_cli_fmt_si(ks_cli_num(e, k), v, sizeof(v)));
        return buf;
}

/** @brief The `rates` object a later keyshift adds (optional); while
 *         sampled, each figure with its error (`rates.sampling_error`). */
void ks_cli_show_rates(const json_t *r)
{
        const json_t *e = json_object_get(r, "sampling_error");
        char          a[32], b[32], pa[48], pb[48];

        if (!json_is_object(r))
                return;
        printf("  rate     %s%s msgs/s, %s/s on average",
               ks_cli_fmt_si(ks_cli_num(r, "msgs_per_s"), a, sizeof(a)),
               pm_si(e, "msgs_per_s", pa, sizeof(pa)),
               ks_cli_fmt_bytes(ks_cli_num(r, "bytes_per_s"), b, sizeof(b)));
        if (json_is_number(json_object_get(e, "bytes_per_s")))
                printf(" (+/- %s/s)",
                       ks_cli_fmt_bytes(ks_cli_num(e, "bytes_per_s"), b,
                                        sizeof(b)));
        if (ks_cli_u64(r, "seconds"))
                printf("; peak %s%s msgs/s (the %.3g quantile of %llu s)",
                       ks_cli_fmt_si((double)ks_cli_u64(r, "peak_msgs_per_s"),
                                     a, sizeof(a)),
                       pm_si(e, "peak_msgs_per_s", pb, sizeof(pb)),
                       ks_cli_num(r, "peak_quantile"),
                       (unsigned long long)ks_cli_u64(r, "seconds"));
        else
                printf("; no whole second measured yet: no peak");
        if (json_is_number(json_object_get(r, "peak_to_mean"))) {
                printf(", peak / mean %.2g", ks_cli_num(r, "peak_to_mean"));
                if (json_is_number(json_object_get(e, "peak_to_mean")))
                        printf(" +/- %.2g", ks_cli_num(e, "peak_to_mean"));
        }
        printf("\n");
}
