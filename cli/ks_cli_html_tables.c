/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli_html_tables.c
 * @brief The tables of the HTML page: hot keys, warnings, other clients,
 *        mixed key serializers, the delivery check, and the sizing basis.
 *        Every text from the report is escaped (keys are user data).
 */
#include <math.h>
#include <string.h>

#include "ks_cli_fmt.h"
#include "ks_cli_html.h"
#include "ks_cli_report.h"
#include "ks_cli_stats.h"
#include "ks_sizing_json.h"

/** A hot key's characters in its table cell. */
#define KS_HTML_HOT_KEY_CHARS 40
/** The mixed-serializer keys listed, at most (the report lists more). */
#define KS_HTML_MIXED_KEYS_MAX 10
/** The index of `mismatched` in the delivery check's rows: marked bad
 *  when not 0. */
#define KS_HTML_ACK_MISMATCHED 2

/** @brief <td> with a count, right-aligned. */
static void ks_td_count(FILE *fp, uint64_t v)
{
        char b[32];
        fprintf(fp, "<td class=\"num\">%s</td>",
                ks_cli_fmt_count(v, b, sizeof(b)));
}

/** @brief <td> with a share as a percentage, right-aligned. */
static void ks_td_pct(FILE *fp, double f)
{
        char b[32];
        fprintf(fp, "<td class=\"num\">%s</td>",
                ks_cli_fmt_pct(f, b, sizeof(b)));
}

/** @brief <td> with escaped text @p s and an optional class. */
static void ks_td_text(FILE *fp, const char *cls, const char *s)
{
        fprintf(fp, "<td%s%s%s>", cls ? " class=\"" : "", cls ? cls : "",
                cls ? "\"" : "");
        ks_cli_fmt_xml(fp, s);
        fprintf(fp, "</td>");
}

/** @brief The hot keys table's header: a column per proposal of
 *         @p props, and the verdict's when @p verdicts. */
static void ks_html_hot_header(FILE *fp, const json_t *props, int verdicts)
{
        size_t j;

        fprintf(fp, "<table class=\"ks-table ks-hot\"><caption>Hot keys, "
                    "busiest first</caption>\n<thead><tr><th>#</th><th>key"
                    "</th><th class=\"num\">messages</th><th "
                    "class=\"num\">share</th><th class=\"num\">partition "
                    "now</th>");
        for (j = 0; j < json_array_size(props); j++)
                fprintf(fp, "<th class=\"num\">at %d</th>",
                        (int)ks_cli_u64(json_array_get(props, j),
                                        "partition_count"));
        if (verdicts)
                fprintf(fp, "<th title=\"Whether more partitions can spread "
                            "the key's load, or the key alone exceeds one "
                            "partition's target rate and must be salted "
                            "into N sub-keys key#0..key#N-1\">verdict</th>");
        fprintf(fp, "</tr></thead><tbody>\n");
}

/** @brief Hot key @p h's count cell, with its error: sampled (+-), or
 *         the top-K sketch's overcount (*), in the tooltip. */
static void ks_html_hot_count(FILE *fp, const json_t *h)
{
        uint64_t err  = ks_cli_u64(h, "messages_error");
        uint64_t serr = ks_cli_u64(h, "messages_sampling_error");

        if (serr) {
                char cnt[32], se[32], oe[32];
                ks_cli_fmt_count(ks_cli_u64(h, "messages"), cnt, sizeof(cnt));
                ks_cli_fmt_count(serr, se, sizeof(se));
                ks_cli_fmt_count(err, oe, sizeof(oe));
                fprintf(fp,
                        "<td class=\"num\" title=\"an estimate from "
                        "sampled messages (keys here rarely repeat): "
                        "within &#xB1;%s (3 standard errors)%s%s%s\">"
                        "%s&#x2009;&#xB1;%s</td>",
                        se, err ? ", and may be up to " : "", err ? oe : "",
                        err ? " too high" : "", cnt, se);
        } else if (err)
                fprintf(fp,
                        "<td class=\"num\" title=\"may be up to %llu "
                        "too high\">%llu&#x2009;*</td>",
                        (unsigned long long)err,
                        (unsigned long long)ks_cli_u64(h, "messages"));
        else
                ks_td_count(fp, ks_cli_u64(h, "messages"));
}

/** @brief The row of hot key @p h, rank @p i + 1: key, count, share,
 *         partition now and at each proposal, verdict (when
 *         @p verdicts). */
static void ks_html_hot_row(FILE *fp, const json_t *h, size_t i,
                            const json_t *props, int verdicts)
{
        const json_t *pp   = json_object_get(h, "partition_proposed");
        const json_t *mv   = json_object_get(h, "moves");
        const json_t *pcur = json_object_get(h, "partition_current");
        char          key[160], name[16], verdict[48];
        size_t        j;

        fprintf(fp, "<tr><td class=\"num\">%zu</td>", i + 1);
        ks_td_text(fp, "key",
                   ks_cli_fmt_key(h, KS_HTML_HOT_KEY_CHARS, key, sizeof(key)));
        ks_html_hot_count(fp, h);
        ks_td_pct(fp, ks_cli_num(h, "share"));
        if (json_is_integer(pcur))
                fprintf(fp, "<td class=\"num\">%lld</td>",
                        (long long)json_integer_value(pcur));
        else
                fprintf(fp, "<td class=\"num\">?</td>");
        for (j = 0; j < json_array_size(props); j++) {
                const json_t *p;
                int           moves;
                snprintf(name, sizeof(name), "%d",
                         (int)ks_cli_u64(json_array_get(props, j),
                                         "partition_count"));
                p     = json_object_get(pp, name);
                moves = json_is_true(json_object_get(mv, name));
                if (!json_is_integer(p)) { /* not predictable */
                        fprintf(fp, "<td class=\"num\">?</td>");
                        continue;
                }
                fprintf(fp, "<td class=\"num%s\">%lld%s</td>",
                        moves ? " moves" : "", (long long)json_integer_value(p),
                        moves ? " &#x2192; moves" : "");
        }
        if (verdicts) {
                int fix = ks_cli_hot_verdict(h, verdict, sizeof(verdict));
                ks_td_text(fp, fix == 2 ? "verdict bad" : "verdict", verdict);
        }
        fprintf(fp, "</tr>\n");
}

void ks_cli_html_hot_keys(FILE *fp, const json_t *topic, int max)
{
        const json_t *hot   = json_object_get(topic, "hot_keys");
        const json_t *props = json_object_get(topic, "proposals");
        size_t        i;
        char          verdict[48];
        int           verdicts = 0;

        for (i = 0; i < json_array_size(hot) && i < (size_t)max; i++)
                verdicts |= ks_cli_hot_verdict(json_array_get(hot, i), verdict,
                                               sizeof(verdict)) > 0;
        ks_html_hot_header(fp, props, verdicts);
        for (i = 0; i < json_array_size(hot) && i < (size_t)max; i++)
                ks_html_hot_row(fp, json_array_get(hot, i), i, props, verdicts);
        if (!json_array_size(hot))
                fprintf(fp, "<tr><td colspan=\"9\">no hashed keys</td></tr>\n");
        fprintf(fp, "</tbody></table>\n");
}

void ks_cli_html_warnings(FILE *fp, const json_t *arr, const char *caption)
{
        size_t i;

        fprintf(fp, "<table class=\"ks-table ks-warnings\"><caption>");
        ks_cli_fmt_xml(fp, caption);
        fprintf(fp, "</caption>\n<tbody>\n");
        for (i = 0; i < json_array_size(arr); i++) {
                const json_t *w = json_array_get(arr, i);
                fprintf(fp, "<tr>");
                ks_td_text(fp, "code", ks_cli_str(w, "code", "?"));
                ks_td_text(fp, NULL, ks_cli_str(w, "message", ""));
                fprintf(fp, "</tr>\n");
        }
        if (!json_array_size(arr))
                fprintf(fp, "<tr><td class=\"ok\">none</td></tr>\n");
        fprintf(fp, "</tbody></table>\n");
}

/** @brief The table of other clients' partitioners (@p oc: the topic's
 *         `other_clients`) at the current count of @p topic. */
static void ks_html_other_clients(FILE *fp, const json_t *topic,
                                  const json_t *oc)
{
        const char *name;
        json_t     *m;

        fprintf(fp,
                "<table class=\"ks-table ks-clients\"><caption>Other "
                "clients on this topic at %d partitions</caption>\n"
                "<thead><tr><th>client model</th><th "
                "class=\"num\">keyed traffic placed elsewhere</th>"
                "<th class=\"num\">keys</th><th>rule</th></tr>"
                "</thead><tbody>\n",
                (int)ks_cli_topic_current(topic));
        json_object_foreach((json_t *)oc, name, m)
        {
                fprintf(fp, "<tr>");
                ks_td_text(fp, "code", name);
                ks_td_pct(fp, ks_cli_num(m, "messages_fraction_different"));
                ks_td_pct(fp, ks_cli_num(m, "keys_fraction_different"));
                ks_td_text(fp, "rule", ks_cli_str(m, "is", ""));
                fprintf(fp, "</tr>\n");
        }
        fprintf(fp, "</tbody></table>\n");
}

/** @brief The table of mixed key serializers (@p mk: the topic's
 *         `mixed_keys`): each logical key's encodings, the first
 *         KS_HTML_MIXED_KEYS_MAX keys. */
static void ks_html_mixed_keys(FILE *fp, const json_t *mk)
{
        const json_t *keys = json_object_get(mk, "keys");
        char          b[64], b2[32];
        size_t        i;

        fprintf(fp,
                "<table class=\"ks-table ks-mixed\"><caption>Mixed "
                "key serializers: %s logical keys under several "
                "encodings (of %s sampled)</caption>\n<tbody>\n",
                ks_cli_fmt_count(ks_cli_u64(mk, "total"), b, sizeof(b)),
                ks_cli_fmt_count(ks_cli_u64(mk, "sampled"), b2, sizeof(b2)));
        for (i = 0; i < json_array_size(keys) && i < KS_HTML_MIXED_KEYS_MAX;
             i++) {
                const json_t *k = json_array_get(keys, i);
                const char   *enc;
                json_t       *e;
                fprintf(fp, "<tr>");
                ks_td_text(fp, "key", ks_cli_str(k, "logical_key", ""));
                fprintf(fp, "<td>");
                json_object_foreach(json_object_get(k, "encodings"), enc, e)
                {
                        const json_t *pc =
                            json_object_get(e, "partition_current");
                        ks_cli_fmt_xml(fp, enc);
                        fprintf(fp, ": %s msgs",
                                ks_cli_fmt_count(ks_cli_u64(e, "messages"), b,
                                                 sizeof(b)));
                        if (json_is_integer(pc))
                                fprintf(fp, " in partition %lld",
                                        (long long)json_integer_value(pc));
                        fprintf(fp, "; ");
                }
                fprintf(fp, "</td></tr>\n");
        }
        if (!json_array_size(keys))
                fprintf(fp, "<tr><td class=\"ok\">none</td></tr>\n");
        fprintf(fp, "</tbody></table>\n");
}

/** @brief The delivery check's table (@p ack: the topic's
 *         `acknowledged`): delivered partitions against the model. */
static void ks_html_acks(FILE *fp, const json_t *ack)
{
        static const char *const f[] = {
            "messages",        "matched",    "mismatched",          "failed",
            "not_predictable", "unverified", "pending_verification"};
        size_t i;

        fprintf(fp,
                "<table class=\"ks-table ks-acks\"><caption>Delivery check: "
                "delivered partitions against the model</caption><tbody>\n");
        if (json_is_false(json_object_get(ack, "checked"))) {
                fprintf(fp, "<tr><td>not checked: ");
                ks_cli_fmt_xml(fp, ks_cli_str(ack, "not_checked_reason", "?"));
                fprintf(fp, "</td></tr>\n");
        }
        for (i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
                fprintf(fp, "<tr>");
                ks_td_text(fp,
                           i == KS_HTML_ACK_MISMATCHED && ks_cli_u64(ack, f[i])
                               ? "code bad"
                               : "code",
                           f[i]);
                ks_td_count(fp, ks_cli_u64(ack, f[i]));
                fprintf(fp, "</tr>\n");
        }
        fprintf(fp, "</tbody></table>\n");
}

void ks_cli_html_clients(FILE *fp, const json_t *topic)
{
        const json_t *oc = json_object_get(topic, "other_clients");
        const json_t *mk = json_object_get(topic, "mixed_keys");

        if (json_object_size(oc))
                ks_html_other_clients(fp, topic, oc);
        if (json_is_object(mk))
                ks_html_mixed_keys(fp, mk);
        if (json_is_object(json_object_get(topic, "audit")))
                return; /* a scan: stored records, no delivery reports */
        ks_html_acks(fp, json_object_get(topic, "acknowledged"));
}

/** @brief One row of the sizing table: a label and a member as text. */
static void ks_sizing_row(FILE *fp, const char *label, const json_t *v,
                          const char *unit)
{
        char b[64];

        fprintf(fp, "<tr>");
        ks_td_text(fp, NULL, label);
        if (json_is_integer(v))
                fprintf(fp, "<td class=\"num\">%s%s</td>",
                        ks_cli_fmt_count((uint64_t)json_integer_value(v), b,
                                         sizeof(b)),
                        unit);
        else if (json_is_real(v))
                fprintf(fp, "<td class=\"num\">%.4g%s</td>", json_real_value(v),
                        unit);
        else if (json_is_string(v))
                ks_td_text(fp, "num", json_string_value(v));
        else if (json_is_boolean(v))
                fprintf(fp, "<td class=\"num\">%s</td>",
                        json_is_true(v) ? "yes" : "no");
        else
                fprintf(fp, "<td class=\"num unknown\">unknown</td>");
        fprintf(fp, "</tr>\n");
}

/** @brief The constraints of @p sz at @p count whose inputs are known
 *         (a null constraint, e.g. consumers without
 *         keyshift.consumers.max, is left out: issue 28). */
static void ks_sizing_constraint_rows(FILE *fp, const json_t *sz,
                                      long long count, const char *which)
{
        const json_t *cs, *c;
        const char   *name;
        char          key[24];

        snprintf(key, sizeof(key), "%lld", count);
        cs = json_object_get(json_object_get(sz, "constraints"), key);
        json_object_foreach((json_t *)cs, name, c)
        {
                char label[96], v[32], l[32];
                int  ok = json_is_true(json_object_get(c, "ok"));
                if (!json_is_object(c))
                        continue;
                snprintf(label, sizeof(label), "at %s partitions%s: %s", key,
                         which, name);
                fprintf(fp, "<tr>");
                ks_td_text(fp, NULL, label);
                ks_cli_fmt_si(ks_cli_num(c, "value"), v, sizeof(v));
                ks_cli_fmt_si(ks_cli_num(c, "limit"), l, sizeof(l));
                if (!strcmp(ks_cli_str(c, "bound", ""), "at_least"))
                        fprintf(fp,
                                "<td class=\"num%s\">needs %s, has "
                                "%s: %s</td>",
                                ok ? "" : " bad", l, v, ok ? "ok" : "violated");
                else
                        fprintf(fp,
                                "<td class=\"num%s\">%s, limit %s: "
                                "%s</td>",
                                ok ? "" : " bad", v, l, ok ? "ok" : "violated");
                fprintf(fp, "</tr>\n");
        }
}

/** @brief The consumer properties not given, as one row (`sizing.needs`;
 *         both for a report of an earlier keyshift that had none). */
static void ks_sizing_needs_row(FILE *fp, const json_t *sz, int advises)
{
        const json_t *needs = json_object_get(sz, "needs"), *v;
        char          text[160];
        size_t        i, o = 0;

        if (!json_is_array(needs))
                snprintf(text, sizeof(text), "%s, %s",
                         KS_SIZING_PROP_CONSUMER_RATE,
                         KS_SIZING_PROP_CONSUMERS);
        else if (!json_array_size(needs))
                return;
        else
                json_array_foreach(needs, i, v)
                {
                        if (o < sizeof(text))
                                o += (size_t)snprintf(
                                    text + o, sizeof(text) - o, "%s%s",
                                    i ? ", " : "",
                                    json_is_string(v) ? json_string_value(v)
                                                      : "?");
                }
        fprintf(fp, "<tr>");
        ks_td_text(fp, NULL,
                   advises ? "not given (the advice lacks its term)"
                           : "not given (give them for a recommendation)");
        ks_td_text(fp, "num unknown", text);
        fprintf(fp, "</tr>\n");
}

/** @brief The sizing table's rows of the recommendation (@p sz: the
 *         topic's `sizing`, @p b its `basis`): count, floor, sufficient,
 *         base. */
static void ks_sizing_advice_rows(FILE *fp, const json_t *sz, const json_t *b)
{
        ks_sizing_row(fp, "recommended (next power of two of the floor)",
                      json_object_get(sz, "recommended"), "");
        ks_sizing_row(fp, "partition floor = ceil(base x skew factor)",
                      json_object_get(sz, "partition_floor"), "");
        ks_sizing_row(fp, "current count already sufficient",
                      json_object_get(sz, "already_sufficient"), "");
        ks_sizing_row(fp, "base partitions",
                      json_object_get(b, "base_partitions"), "");
        ks_sizing_row(fp, "base from", json_object_get(b, "base_source"), "");
}

/** @brief The sizing table's rows of the inputs (@p b: the basis): rates,
 *         consumers, key skew and its factor. */
static void ks_sizing_input_rows(FILE *fp, const json_t *b)
{
        ks_sizing_row(fp, "peak messages/s (0.999 of seconds)",
                      json_object_get(b, "peak_msgs_s"), "");
        ks_sizing_row(fp, "one consumer's messages/s",
                      json_object_get(b, "per_consumer_msgs_s"), "");
        ks_sizing_row(fp, "consumers planned",
                      json_object_get(b, "max_consumers_planned"), "");
        ks_sizing_row(fp, "measured key skew (busiest / median key)",
                      json_object_get(b, "measured_key_skew"), "");
        ks_sizing_row(fp, "skew factor clamp(skew / 30, 2, 4)",
                      json_object_get(b, "skew_factor"), "");
}

/** @brief The sizing table's illustration rows (@p sz: the sizing):
 *         the floor at each assumed consumer rate, marked assumed. */
static void ks_sizing_illustration_rows(FILE *fp, const json_t *sz)
{
        const json_t *b = json_object_get(sz, "basis");
        const json_t *fl, *f;
        size_t        i;

        fl = json_object_get(json_object_get(sz, "illustration"), "floors");
        json_array_foreach(fl, i, f)
        {
                char label[128], r[32];
                snprintf(label, sizeof(label),
                         "illustration only: floor at an assumed %s msgs/s "
                         "a consumer",
                         ks_cli_fmt_count((uint64_t)ks_cli_num(
                                              f, "assumed_per_consumer_msgs_s"),
                                          r, sizeof(r)));
                fprintf(fp, "<tr class=\"assumed\">");
                ks_td_text(fp, NULL, label);
                fprintf(fp, "<td class=\"num unknown\">%lld = %lld x %.3g</td>",
                        (long long)ks_cli_u64(f, "partition_floor"),
                        (long long)ks_cli_u64(f, "throughput_partitions"),
                        ks_cli_num(b, "skew_factor"));
                fprintf(fp, "</tr>\n");
        }
}

void ks_cli_html_sizing(FILE *fp, const json_t *topic)
{
        const json_t *sz = json_object_get(topic, "sizing");
        const json_t *b  = json_object_get(sz, "basis");
        const json_t *rb = json_object_get(sz, "rebalance");
        int           advises;

        if (!json_is_object(sz)) {
                fprintf(fp, "<p class=\"ks-nosizing\">This report has no "
                            "sizing basis (written by a keyshift before "
                            "sizing advice). <code>keyshift plan</code> "
                            "gives the advice from planned rates.</p>\n");
                return;
        }
        advises = ks_sizing_json_advises(sz);
        if (advises)
                fprintf(fp,
                        "<table class=\"ks-table ks-sizing\"><caption>Sizing: "
                        "%lld partitions recommended</caption><tbody>\n",
                        (long long)ks_cli_u64(sz, "recommended"));
        else
                fprintf(fp, "<table class=\"ks-table ks-sizing\"><caption>"
                            "Sizing: no count recommended (no consumer rate "
                            "or count given)</caption><tbody>\n");
        if (advises)
                ks_sizing_advice_rows(fp, sz, b);
        ks_sizing_needs_row(fp, sz, advises);
        ks_sizing_input_rows(fp, b);
        ks_sizing_illustration_rows(fp, sz);
        if (advises) {
                ks_sizing_row(fp, "rebalance stall at the recommended count",
                              json_object_get(rb, "per_rebalance_s"), " s");
                ks_sizing_row(fp, "fewest brokers",
                              json_object_get(sz, "fewest_brokers"), "");
        }
        /* constraints whose inputs are known: at the recommended count,
         * else at today's */
        if (advises)
                ks_sizing_constraint_rows(
                    fp, sz, (long long)ks_cli_u64(sz, "recommended"), "");
        else
                ks_sizing_constraint_rows(
                    fp, sz,
                    (long long)ks_cli_u64(
                        json_object_get(topic, "partition_count"), "current"),
                    " (today's)");
        fprintf(fp, "</tbody></table>\n");
}
