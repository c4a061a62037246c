/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli_audit.c
 * @brief The `audit` of a scan report in words and tables (ks_cli_audit.h).
 */
#include "ks_cli_audit.h"

#include <string.h>

#include "ks_cli_fmt.h"
#include "ks_cli_report.h"
#include "ks_cli_stats.h"

/** @returns @p part / @p whole, 0 when @p whole is 0. */
static double share(uint64_t part, uint64_t whole)
{
        return whole ? (double)part / (double)whole : 0;
}

/**
 * @brief The count switch (audit.switch) in words, after the history's
 *        steps: the steps give records both counts explain to whichever
 *        step came first (greedy), so for a grown topic they say nothing
 *        of how many records the old count placed; the switch does.
 */
static void audit_switch(const json_t *sw, char *buf, size_t size, size_t *o)
{
        char a[32], b[32], c[32];

        if (!json_is_object(sw))
                return;
        ks_cli_append(
            buf, size, o,
            "The steps give records that both counts explain to either; "
            "where the count switched (%s %d -> %d, %s): %s records placed "
            "under %d, %s under %d",
            ks_cli_str(sw, "family", "?"), (int)ks_cli_u64(sw, "old_count"),
            (int)ks_cli_u64(sw, "new_count"),
            !strcmp(ks_cli_str(sw, "moment", ""), "one") ? "at one moment"
            : !strcmp(ks_cli_str(sw, "moment", ""), "interleaved")
                ? "producers switched at different moments"
                : "one side of the switch only",
            ks_cli_fmt_count(ks_cli_u64(sw, "old_records"), a, sizeof(a)),
            (int)ks_cli_u64(sw, "old_count"),
            ks_cli_fmt_count(ks_cli_u64(sw, "new_records"), b, sizeof(b)),
            (int)ks_cli_u64(sw, "new_count"));
        if (ks_cli_u64(sw, "ambiguous_records"))
                ks_cli_append(
                    buf, size, o,
                    ", %s ambiguous (either count, no evidence "
                    "decides). ",
                    ks_cli_fmt_count(ks_cli_u64(sw, "ambiguous_records"), c,
                                     sizeof(c)));
        else
                ks_cli_append(buf, size, o, " (exact). ");
}

const char *ks_cli_audit_summary(const json_t *audit, char *buf, size_t size)
{
        const json_t *hist  = json_object_get(audit, "history");
        const json_t *steps = json_object_get(hist, "steps");
        const json_t *nw    = json_object_get(audit, "newest");
        uint64_t      keyed = ks_cli_u64(audit, "keyed_records");
        uint64_t      unexp = ks_cli_u64(audit, "unexplained");
        uint64_t      uncov = ks_cli_u64(hist, "uncovered_records");
        size_t        o     = 0, i;
        char          a[32], b[32];

        buf[0] = '\0';
        if (!json_is_object(audit))
                return buf;
        ks_cli_append(buf, size, &o,
                      "Audit of %s keyed records (%s without a key) under "
                      "%d partitions: ",
                      ks_cli_fmt_count(keyed, a, sizeof(a)),
                      ks_cli_fmt_count(ks_cli_u64(audit, "unkeyed_records"), b,
                                       sizeof(b)),
                      (int)ks_cli_u64(audit, "partition_count"));
        if (!json_array_size(steps))
                ks_cli_append(buf, size, &o,
                              "no (partitioner, count) pair "
                              "explains a significant share. ");
        for (i = 0; i < json_array_size(steps); i++) {
                const json_t *st = json_array_get(steps, i);
                uint64_t      r  = ks_cli_u64(st, "records");
                ks_cli_append(
                    buf, size, &o, "%s%s under %d placed %s (%s)",
                    i ? (i + 1 == json_array_size(steps) ? " and " : ", ") : "",
                    ks_cli_str(st, "family", "?"), (int)ks_cli_u64(st, "count"),
                    ks_cli_fmt_count(r, a, sizeof(a)),
                    ks_cli_fmt_pct(share(r, keyed), b, sizeof(b)));
                if (i + 1 == json_array_size(steps))
                        ks_cli_append(buf, size, &o, ". ");
        }
        audit_switch(json_object_get(audit, "switch"), buf, size, &o);
        if (unexp || uncov)
                ks_cli_append(buf, size, &o,
                              "%s records sit where no hash family puts them "
                              "(a custom partitioner or explicit partitions), "
                              "%s more only where no significant pair does. ",
                              ks_cli_fmt_count(unexp, a, sizeof(a)),
                              ks_cli_fmt_count(uncov, b, sizeof(b)));
        else
                ks_cli_append(buf, size, &o,
                              "Every keyed record is explained. ");
        ks_cli_append(buf, size, &o,
                      "The newest records (up to %d a partition) follow %s; "
                      "the proposals use %s (%s).",
                      (int)ks_cli_u64(nw, "per_partition"),
                      ks_cli_str(nw, "family", "no single family"),
                      ks_cli_str(audit, "proposals_partitioner", "?"),
                      ks_cli_str(audit, "proposals_partitioner_source", "?"));
        return buf;
}

const char *ks_cli_audit_ranges(const json_t *step, int max, char *buf,
                                size_t size)
{
        const json_t *parts = json_object_get(step, "partitions");
        const json_t *recs  = json_object_get(parts, "records");
        const json_t *first = json_object_get(parts, "first_offset");
        const json_t *last  = json_object_get(parts, "last_offset");
        size_t        o = 0, i, shown = 0, with = 0;

        buf[0] = '\0';
        /* columns indexed by partition (keyshift.report.v2) */
        for (i = 0; i < json_array_size(recs); i++) {
                if (json_integer_value(json_array_get(recs, i)) <= 0)
                        continue;
                with++;
                if (shown == (size_t)max)
                        continue;
                ks_cli_append(
                    buf, size, &o, "%sp%d %lld-%lld", shown ? ", " : "", (int)i,
                    (long long)json_integer_value(json_array_get(first, i)),
                    (long long)json_integer_value(json_array_get(last, i)));
                shown++;
        }
        if (with > shown)
                ks_cli_append(buf, size, &o, ", ... (%zu partitions)", with);
        return buf;
}

/** One history step as text, for a table row. */
typedef struct audit_row {
        const char *family;
        int         count;
        char        records[32], share[32], where[1024];
} audit_row_t;

/** @brief Step @p i of @p audit's history as text (at most @p max
 *         partitions in `where`). */
static void audit_row(const json_t *audit, size_t i, int max, audit_row_t *r)
{
        const json_t *st = json_array_get(
            json_object_get(json_object_get(audit, "history"), "steps"), i);
        uint64_t records = ks_cli_u64(st, "records");

        r->family = ks_cli_str(st, "family", "?");
        r->count  = (int)ks_cli_u64(st, "count");
        ks_cli_fmt_count(records, r->records, sizeof(r->records));
        ks_cli_fmt_pct(share(records, ks_cli_u64(audit, "keyed_records")),
                       r->share, sizeof(r->share));
        ks_cli_audit_ranges(st, max, r->where, sizeof(r->where));
}

/** @returns the number of history steps of @p audit. */
static size_t audit_steps(const json_t *audit)
{
        return json_array_size(
            json_object_get(json_object_get(audit, "history"), "steps"));
}

void ks_cli_show_audit(const json_t *topic)
{
        const json_t *audit = json_object_get(topic, "audit");
        char          text[2048];
        audit_row_t   r;
        size_t        i;

        if (!json_is_object(audit))
                return;
        printf("\n  ");
        ks_cli_fmt_print_wrapped(
            ks_cli_audit_summary(audit, text, sizeof(text)), 2, 2);
        if (!audit_steps(audit))
                return;
        printf("  %-4s %-11s %5s %10s %7s  %s\n", "step", "partitioner",
               "count", "records", "share",
               "where (partition first-last offset)");
        for (i = 0; i < audit_steps(audit); i++) {
                audit_row(audit, i, 4, &r);
                printf("  %-4zu %-11s %5d %10s %7s  %s\n", i + 1, r.family,
                       r.count, r.records, r.share, r.where);
        }
}

void ks_cli_html_audit(FILE *fp, const json_t *topic)
{
        const json_t *audit = json_object_get(topic, "audit");
        char          text[2048];
        audit_row_t   r;
        size_t        i;

        if (!json_is_object(audit))
                return;
        fprintf(fp, "<p class=\"audit\">");
        ks_cli_fmt_xml(fp, ks_cli_audit_summary(audit, text, sizeof(text)));
        fprintf(fp, "</p>\n");
        if (!audit_steps(audit))
                return;
        fprintf(fp, "<table class=\"ks-table ks-audit\"><caption>Which "
                    "partitioner and partition count placed the stored "
                    "records</caption>\n<thead><tr><th>step</th>"
                    "<th>partitioner</th><th class=\"num\">count</th>"
                    "<th class=\"num\">records</th><th class=\"num\">share"
                    "</th><th>where (partition first-last offset)</th></tr>"
                    "</thead><tbody>\n");
        for (i = 0; i < audit_steps(audit); i++) {
                audit_row(audit, i, 8, &r);
                fprintf(fp, "<tr><td class=\"num\">%zu</td><td><code>", i + 1);
                ks_cli_fmt_xml(fp, r.family);
                fprintf(fp,
                        "</code></td><td class=\"num\">%d</td><td "
                        "class=\"num\">%s</td><td class=\"num\">%s</td><td>",
                        r.count, r.records, r.share);
                ks_cli_fmt_xml(fp, r.where);
                fprintf(fp, "</td></tr>\n");
        }
        fprintf(fp, "</tbody></table>\n");
}
