/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli_show.c
 * @brief `keyshift show REPORT.json`: the report in the terminal. Per
 *        topic: current -> proposed counts, traffic and keys that move,
 *        partition skew now and after (busiest / median of the
 *        per-partition arrays), hot keys, mixed key serializers, other
 *        clients, the delivery check, sizing when present, warnings.
 *        Colour only when standard output is a terminal.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ks_analysis.h"
#include "ks_cli.h"
#include "ks_cli_fmt.h"
#include "ks_cli_report.h"
#include "ks_cli_audit.h"
#include "ks_story.h"
#include "ks_cli_show.h"
#include "ks_cli_stats.h"

#define KS_SHOW_TOPICS_MAX 64
/** --hot's default and most: hot keys listed per topic. */
#define KS_SHOW_HOT_DEFAULT 10
#define KS_SHOW_HOT_MAX 1000
/** ks_show_parse_args(): the arguments are good, show on. */
#define KS_SHOW_GO_ON (-1)

static const ks_cli_show_style_t ks_show_color = {
    "\033[1m",  "\033[2m",  "\033[31m", "\033[33m",
    "\033[32m", "\033[36m", "\033[0m"};
static const ks_cli_show_style_t ks_show_plain = {"", "", "", "", "", "", ""};

/** @brief Prints the usage of `keyshift show` to @p fp. */
static void ks_show_help(FILE *fp)
{
        fprintf(fp,
                "Usage: keyshift show [OPTIONS] REPORT.json\n"
                "Summarises a keyshift report (or a merged one) in the "
                "terminal: per topic,\n"
                "current -> proposed partitions, traffic and keys that move, "
                "partition skew\n"
                "before and after, hot keys, mixed key serializers, other "
                "clients, warnings.\n\n"
                "  -t, --topic NAME   only this topic (repeatable; default "
                "all)\n"
                "  -k, --hot N        hot keys listed per topic (default 10)\n"
                "      --color WHEN   auto (default: only on a terminal), "
                "always, never\n"
                "  -h, --help         this help\n\n"
                "REPORT.json may be - for standard input. NO_COLOR set turns "
                "auto colour off.\n"
                "Exit: 0 ok, 1 unreadable or invalid report or unknown topic, "
                "2 usage.\n");
}

/**
 * @brief First of all, when any topic shown had messages skipped: "partial:
 *        keyshift analysed X of Y messages (P %)" over those topics
 *        (ks_analysis.h), so that no figure below reads as complete; when
 *        any was sampled, "estimated: the producer was out of CPU for S s
 *        of U (...)", S the most of any topic shown, U the report's
 *        uptime_s.
 */
static void ks_show_partial(const ks_cli_show_t *s, const ks_cli_report_t *r,
                            const char *const *only, size_t only_cnt)
{
        ks_analysis_t all, one;
        const char   *name;
        json_t       *t;
        size_t        i;
        char          line[KS_ANALYSIS_LINE_MAX];
        char          sline[KS_ANALYSIS_SAMPLED_LINE_MAX];

        ks_analysis_init(&all, 0, 0);
        json_object_foreach(ks_cli_report_topics(r), name, t)
        {
                int want = !only_cnt;
                for (i = 0; i < only_cnt; i++)
                        want |= !strcmp(only[i], name);
                if (!want)
                        continue;
                ks_analysis_of_topic(t, &one);
                ks_analysis_add_concurrent(&all, &one);
        }
        if (json_is_number(json_object_get(r->root, "uptime_s")))
                all.uptime_s = ks_cli_num(r->root, "uptime_s");
        if (all.skipped)
                printf("%s%s%s\n", s->st->red,
                       ks_analysis_partial_line(&all, line, sizeof(line)),
                       s->st->off);
        if (all.sampled)
                printf("%s%s%s\n", s->st->red,
                       ks_analysis_sampled_line(&all, sline, sizeof(sline)),
                       s->st->off);
}

/**
 * @brief When deliveries went unchecked while the host was out of CPU
 *        (producer.out_of_cpu, core/stage/ks_cpuwatch.h): "delivery checks
 *        sampled: ...", how long, and how long of it a delivery thread
 *        was short of CPU, so that `acknowledged` reads as a
 *        sample.
 */
static void ks_show_unchecked(const ks_cli_show_t *s, const ks_cli_report_t *r)
{
        const json_t *o =
            json_object_get(json_object_get(r->root, "producer"), "out_of_cpu");
        double n       = ks_cli_num(o, "deliveries_unchecked");
        double dt      = ks_cli_num(o, "delivery_thread_seconds");
        char   why[96] = "";

        if (!json_is_object(o) || !(n > 0))
                return;
        if (dt > 0)
                snprintf(why, sizeof(why),
                         " (%.1f s of it a delivery thread with no CPU to "
                         "spare)",
                         dt);
        printf("%sdelivery checks sampled: the host was out of CPU for %.1f "
               "s%s; %.0f deliveries were not checked (1 in %d checked "
               "meanwhile)%s\n",
               s->st->red, ks_cli_num(o, "seconds"), why, n,
               (int)ks_cli_num(o, "delivery_check_one_in"), s->st->off);
}

/** Stale producers a fleet report's header lists, at most. */
#define KS_SHOW_STALE_MAX 20

/**
 * @brief A fleet report's producers (`fleet`, written by `keyshift
 *        fleet`): how many it merges of how many, by state, and the stale
 *        ones by name, each with its last record and whether it is
 *        merged (docs/report-schema.md).
 */
static void ks_show_fleet(const json_t *fleet)
{
        const json_t *ps = json_object_get(fleet, "producers");
        size_t        i, listed = 0;

        printf("  fleet: merges %lld of %zu producers (%lld live, %lld "
               "stale, %lld ended%s), report topic %s on %s, read %s\n",
               (long long)ks_cli_u64(fleet, "merged"), json_array_size(ps),
               (long long)ks_cli_u64(fleet, "live"),
               (long long)ks_cli_u64(fleet, "stale"),
               (long long)ks_cli_u64(fleet, "ended"),
               json_is_true(json_object_get(fleet, "live_only"))
                   ? "; --live: live ones only"
                   : "",
               ks_cli_str(fleet, "report_topic", "?"),
               ks_cli_str(fleet, "bootstrap", "?"),
               ks_cli_str(fleet, "read_at", "?"));
        for (i = 0; i < json_array_size(ps); i++) {
                const json_t *p = json_array_get(ps, i);
                if (strcmp(ks_cli_str(p, "state", ""), "stale"))
                        continue;
                if (!listed)
                        printf("  stale producers (no record within "
                               "--stale-after):\n");
                if (++listed > KS_SHOW_STALE_MAX)
                        continue;
                printf(
                    "    %s@%s pid %lld (%s), last record %s, %s\n",
                    ks_cli_str(p, "client_id", "?"), ks_cli_str(p, "host", "?"),
                    (long long)ks_cli_u64(p, "pid"), ks_cli_str(p, "name", "?"),
                    ks_cli_str(p, "last_record_at", "?"),
                    json_is_true(json_object_get(p, "merged")) ? "merged"
                                                               : "not merged");
        }
        if (listed > KS_SHOW_STALE_MAX)
                printf("    ... and %zu more\n", listed - KS_SHOW_STALE_MAX);
        if (!ks_cli_u64(fleet, "records_left_out"))
                return;
        printf("  %lld records left out of their topic's figures (their "
               "producer had not learned the partition count):\n",
               (long long)ks_cli_u64(fleet, "records_left_out"));
        for (i = 0, listed = 0; i < json_array_size(ps); i++) {
                const json_t *p  = json_array_get(ps, i);
                const json_t *lo = json_object_get(p, "left_out");
                const char   *tn;
                json_t       *why;
                if (!json_object_size(lo) || ++listed > KS_SHOW_STALE_MAX)
                        continue;
                printf("    %s@%s pid %lld:", ks_cli_str(p, "client_id", "?"),
                       ks_cli_str(p, "host", "?"),
                       (long long)ks_cli_u64(p, "pid"));
                json_object_foreach((json_t *)lo, tn, why) printf(" %s", tn);
                printf("\n");
        }
        if (listed > KS_SHOW_STALE_MAX)
                printf("    ... and %zu more producers\n",
                       listed - KS_SHOW_STALE_MAX);
}

/** @brief Which producer (or which merged reports, or which fleet), when,
 *         how final. */
static void ks_show_header(const ks_cli_report_t *r)
{
        const json_t *pr    = json_object_get(r->root, "producer");
        const json_t *mf    = json_object_get(pr, "merged_from");
        const json_t *fleet = json_object_get(r->root, "fleet");
        double        up    = ks_cli_num(r->root, "uptime_s");

        printf("keyshift report %s\n", r->path);
        if (json_is_object(fleet))
                ks_show_fleet(fleet);
        else if (json_array_size(mf)) {
                size_t i;
                printf("  merged from %zu producer reports:",
                       json_array_size(mf));
                for (i = 0; i < json_array_size(mf) && i < 6; i++)
                        printf("%s %s (%s)", i ? "," : "",
                               ks_cli_str(json_array_get(mf, i), "file", "?"),
                               ks_cli_str(json_array_get(mf, i), "name", "?"));
                printf("%s\n", json_array_size(mf) > 6 ? ", ..." : "");
        } else
                printf("  producer %s (pid %lld), librdkafka %s, keyshift %s\n",
                       ks_cli_str(pr, "name", "?"),
                       (long long)ks_cli_u64(pr, "pid"),
                       ks_cli_str(pr, "librdkafka_version", "?"),
                       ks_cli_str(pr, "keyshift_version", "?"));
        if (json_is_object(json_object_get(pr, "report_topic"))) {
                const json_t *rt = json_object_get(pr, "report_topic");
                printf("  report topic %s: %s, %lld records queued, %lld "
                       "delivered, %lld failed",
                       ks_cli_str(rt, "topic", "?"),
                       ks_cli_str(rt, "state", "?"),
                       (long long)ks_cli_u64(rt, "records_queued"),
                       (long long)ks_cli_u64(rt, "records_delivered"),
                       (long long)ks_cli_u64(rt, "records_failed"));
                if (ks_cli_str(rt, "last_error", NULL))
                        printf("; last error %s: %s",
                               ks_cli_str(rt, "last_error_at", "?"),
                               ks_cli_str(rt, "last_error", ""));
                printf("\n");
        }
        printf("  generated %s, %.1f s after start%s\n",
               ks_cli_str(r->root, "generated_at", "?"), up,
               json_is_true(json_object_get(r->root, "final"))
                   ? " (final report)"
                   : " (the producer was still running)");
}

/** @brief The warnings [{code, message}] under @p title, messages
 *         wrapped. */
static void ks_show_warnings(const ks_cli_show_t *s, const json_t *arr,
                             const char *title)
{
        size_t i;

        if (!json_array_size(arr))
                return;
        printf("\n  %s%s%s\n", s->st->bold, title, s->st->off);
        for (i = 0; i < json_array_size(arr); i++) {
                const json_t *w    = json_array_get(arr, i);
                const char   *code = ks_cli_str(w, "code", "?");
                printf("    %s%s%s: ", s->st->red, code, s->st->off);
                ks_cli_fmt_print_wrapped(ks_cli_str(w, "message", ""),
                                         6 + (int)strlen(code), 6);
        }
}

/** @brief Topic @p name's heading: its count now and proposed, where
 *         they come from, and its headline (ks_story.h). */
static void ks_show_heading(const ks_cli_show_t *s, const char *name,
                            const json_t *t, int32_t cur)
{
        const json_t *props = json_object_get(t, "proposals");
        const json_t *pc    = json_object_get(t, "partition_count");
        char          verdict[KS_STORY_MAX];
        size_t        i;

        printf("\n%s== topic %s: ", s->st->bold, name);
        if (cur)
                printf("%d", (int)cur);
        else
                printf("? (count unknown)");
        for (i = 0; i < json_array_size(props); i++)
                printf("%s%d", i ? ", " : " -> ",
                       (int)ks_cli_u64(json_array_get(props, i),
                                       "partition_count"));
        printf(" partitions ==%s\n", s->st->off);
        printf("  partitioner %s, current count from %s, analysis since %s\n",
               ks_cli_topic_partitioner(t, "?"), ks_cli_str(pc, "source", "?"),
               ks_cli_str(pc, "analysis_since", "?"));
        printf("  %s", s->st->bold);
        ks_cli_fmt_print_wrapped(ks_story_headline(t, verdict, sizeof(verdict)),
                                 2, 2);
        printf("%s", s->st->off);
}

/** @brief Topic @p t's traffic line: messages, bytes, keyed, null key,
 *         explicit partition. */
static void ks_show_traffic(const json_t *t)
{
        const json_t *keys  = json_object_get(t, "keys");
        uint64_t      msgs  = ks_cli_u64(t, "messages");
        uint64_t      keyed = ks_cli_u64(keys, "hashed");
        char          a[32], b[32], c[32], d[32], e[32], f[32];

        printf("  traffic  %s messages, %s; keyed %s (%s), null key %s, "
               "explicit partition %s\n",
               ks_cli_fmt_count(msgs, a, sizeof(a)),
               ks_cli_fmt_bytes((double)ks_cli_u64(t, "bytes"), b, sizeof(b)),
               ks_cli_fmt_count(keyed, c, sizeof(c)),
               ks_cli_fmt_pct(msgs ? (double)keyed / (double)msgs : 0, d,
                              sizeof(d)),
               ks_cli_fmt_count(ks_cli_u64(keys, "null"), e, sizeof(e)),
               ks_cli_fmt_count(ks_cli_u64(keys, "explicit_partition"), f,
                                sizeof(f)));
}

/**
 * @brief Topic @p t's keys line: distinct keys, a sketch's estimate with
 *        its error, partial or not: never a lower bound (an estimate can
 *        be above the keys produced); when partial, of the analysed
 *        messages, more may be among the others. Then the busiest keys'
 *        share.
 */
static void ks_show_keys(const json_t *t)
{
        const json_t    *keys = json_object_get(t, "keys");
        const json_t    *derr = json_object_get(keys, "distinct_error");
        char             a[32], b[32], note[KS_ANALYSIS_LINE_MAX];
        ks_cli_keyrank_t kr;
        ks_analysis_t    an;
        int              partial;

        /* a report from before `analysis` existed says "exact" of what
         * skipped messages made partial: the topic's own counts decide */
        ks_analysis_of_topic(t, &an);
        partial = !an.complete ||
                  json_is_true(json_object_get(keys, "distinct_lower_bound"));
        printf("  keys     %s distinct",
               ks_cli_fmt_count(ks_cli_u64(keys, "distinct_estimate"), a,
                                sizeof(a)));
        if (partial)
                printf(" in the analysed messages");
        if (ks_cli_num(keys, "distinct_error") > 0)
                printf(" (estimate +-%s)",
                       ks_cli_fmt_pct(ks_cli_num(keys, "distinct_error"), b,
                                      sizeof(b)));
        else if (partial && json_is_number(derr))
                printf(" (all counted)");
        else if (!partial)
                printf(" (exact)");
        if (*ks_analysis_more_keys_note(&an, note, sizeof(note)))
                printf("; %s", note);
        if (!ks_cli_keyrank_build(t, 0, &kr)) {
                size_t nh = json_array_size(json_object_get(t, "hot_keys"));
                if (nh && kr.cnt)
                        printf("; the busiest %zu carry %s of keyed messages",
                               nh,
                               ks_cli_fmt_pct(
                                   ks_cli_keyrank_share_of_top(&kr, (double)nh),
                                   b, sizeof(b)));
                ks_cli_keyrank_free(&kr);
        }
        printf("\n");
}

/** @brief One topic: heading, verdict, traffic, then every section. */
static void ks_show_topic(const ks_cli_show_t *s, const char *name,
                          const json_t *t)
{
        int32_t cur = ks_cli_topic_current(t);

        ks_show_heading(s, name, t, cur);
        ks_show_traffic(t);
        ks_show_keys(t);
        ks_cli_show_rates(json_object_get(t, "rates"));
        printf("\n");
        ks_cli_show_moves(s, t, cur);
        ks_cli_show_skew(s, t, cur);
        ks_cli_show_hot(s, t, cur);
        ks_cli_show_clients(s, t, cur);
        ks_cli_show_audit(t);
        ks_cli_show_acks(s, t);
        ks_cli_show_sizing(s, t);
        ks_show_warnings(s, json_object_get(t, "warnings"), "warnings");
}

/** `keyshift show`'s command line. */
typedef struct ks_show_args {
        const char *only[KS_SHOW_TOPICS_MAX]; /**< --topic, in order */
        size_t      only_cnt;
        const char *report; /**< REPORT.json */
} ks_show_args_t;

/**
 * @brief Parses `keyshift show`'s arguments into @p a and @p s (hot keys
 *        listed, colours).
 * @returns KS_SHOW_GO_ON, or the exit code (--help, or a usage error
 *          said on stderr).
 */
static int ks_show_parse_args(int argc, char **argv, ks_show_args_t *a,
                              ks_cli_show_t *s)
{
        static const struct option longopts[] = {
            {"topic", required_argument, NULL, 't'},
            {"hot", required_argument, NULL, 'k'},
            {"color", required_argument, NULL, 'c'},
            {"colour", required_argument, NULL, 'c'},
            {"help", no_argument, NULL, 'h'},
            {NULL, 0, NULL, 0}};
        const char *color = "auto";
        char        err[1024];
        long long   v;
        int         c, on;

        optind = 1;
        while ((c = getopt_long(argc, argv, "t:k:h", longopts, NULL)) != -1) {
                switch (c) {
                case 't':
                        if (a->only_cnt == KS_SHOW_TOPICS_MAX)
                                return ks_cli_usage_error("show",
                                                          "at most %d --topic",
                                                          KS_SHOW_TOPICS_MAX);
                        a->only[a->only_cnt++] = optarg;
                        break;
                case 'k':
                        if (ks_cli_parse_long(optarg, 0, KS_SHOW_HOT_MAX, &v,
                                              err, sizeof(err)))
                                return ks_cli_usage_error("show", "--hot: %s",
                                                          err);
                        s->hot_max = (int)v;
                        break;
                case 'c':
                        color = optarg;
                        break;
                case 'h':
                        ks_show_help(stdout);
                        return KS_CLI_EXIT_OK;
                default:
                        return ks_cli_usage_error("show", "bad option");
                }
        }
        if ((on = ks_cli_color_mode(color, STDOUT_FILENO)) < 0)
                return ks_cli_usage_error(
                    "show", "--color: '%s' is not auto, always or never",
                    color);
        s->st = on ? &ks_show_color : &ks_show_plain;
        if (argc - optind != 1)
                return ks_cli_usage_error("show", "expected one REPORT.json");
        a->report = argv[optind];
        return KS_SHOW_GO_ON;
}

/** @brief Shows report @p r: what it leaves out, its head, the
 *         producer's warnings, then each topic --topic selects (all
 *         without it). */
static void ks_show_report(const ks_cli_show_t *s, const ks_show_args_t *a,
                           ks_cli_report_t *r)
{
        const char *name;
        json_t     *t;
        size_t      i;

        ks_show_partial(s, r, a->only, a->only_cnt);
        ks_show_unchecked(s, r);
        ks_show_header(r);
        /* the producer's own warnings (SKETCHES_REDUCED, TOPICS_MAX_REACHED,
         * ...) first: after many topics they would read as the last
         * topic's */
        ks_show_warnings(s, json_object_get(r->root, "warnings"),
                         "producer warnings");
        json_object_foreach(ks_cli_report_topics(r), name, t)
        {
                int want = !a->only_cnt;
                for (i = 0; i < a->only_cnt; i++)
                        want |= !strcmp(a->only[i], name);
                if (want)
                        ks_show_topic(s, name, t);
        }
        if (!json_object_size(ks_cli_report_topics(r)))
                printf("\n  no topics: the producer sent nothing (or "
                       "keyshift.topics matched none)\n");
}

int ks_cli_show_main(int argc, char **argv)
{
        ks_show_args_t  a = {.only_cnt = 0};
        ks_cli_show_t   s = {.hot_max = KS_SHOW_HOT_DEFAULT};
        ks_cli_report_t r;
        char            err[1024];
        size_t          i;
        int             rc;

        if ((rc = ks_show_parse_args(argc, argv, &a, &s)) != KS_SHOW_GO_ON)
                return rc;
        if (ks_cli_report_load(a.report, &r, err, sizeof(err)))
                return ks_cli_fail("show", "%s", err);
        for (i = 0; i < a.only_cnt; i++)
                if (!json_object_get(ks_cli_report_topics(&r), a.only[i])) {
                        ks_cli_fail("show",
                                    "%s: topics: no topic '%s' in "
                                    "this report",
                                    r.path, a.only[i]);
                        ks_cli_report_free(&r);
                        return KS_CLI_EXIT_FAIL;
                }
        ks_show_report(&s, &a, &r);
        ks_cli_report_free(&r);
        return KS_CLI_EXIT_OK; /* main() flushes, and names a write error */
}
