/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli_html.c
 * @brief `keyshift html REPORT.json -o report.html`: one self-contained
 *        page (inline CSS and SVG; no script, no font, no network) that
 *        shows a Kafka engineer at a glance what a partition increase
 *        would do: headline figures, the keys ranked by traffic, the load
 *        per partition now and at each proposed count, the flow matrix
 *        as a heat map, hot keys, other clients, warnings and the sizing
 *        basis when the report has one.
 *
 * The page is written to a temporary file beside the output and renamed
 * over it, so a browser never shows half a page.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "keyshift/keyshift.h"
#include "ks_analysis.h"
#include "ks_cli.h"
#include "ks_cli_fmt.h"
#include "ks_cli_audit.h"
#include "ks_story.h"
#include "ks_cli_html.h"
#include "ks_cli_report.h"
#include "ks_cli_stats.h"
#include "ks_cli_svg.h"
#include "ks_report.h"

#define KS_HTML_TOPICS_MAX 64
/** The partition skew (busiest over median) a card marks bad:
 *  keyshift.partition.skew.max's default (core/report/ks_sizing.c). */
#define KS_HTML_SKEW_LIMIT 2.5
/** Room (characters) kept in the skew card's text for the limit's note;
 *  a proposal's skew is added only while it fits. */
#define KS_HTML_SKEW_NOTE_ROOM 40

typedef struct ks_html_opts {
        const char *only[KS_HTML_TOPICS_MAX];
        size_t      only_cnt;
        int         hot_max;
} ks_html_opts_t;

/** @brief Prints the usage of `keyshift html` to @p fp. */
static void ks_html_help(FILE *fp)
{
        fprintf(fp,
                "Usage: keyshift html [OPTIONS] REPORT.json [-o PAGE.html]\n"
                "Writes the report as one self-contained HTML page (inline "
                "CSS and SVG charts,\n"
                "no script, nothing fetched): keys ranked by traffic, load "
                "per partition now\n"
                "and at each proposed count, the current -> proposed flow "
                "as a heat map, hot\n"
                "keys, other clients, warnings, and the sizing basis when "
                "the report has one.\n\n"
                "  -o, --output FILE  the page (default: REPORT with .html "
                "instead of .json;\n"
                "                     - for standard output)\n"
                "  -t, --topic NAME   only this topic (repeatable; default "
                "all)\n"
                "  -k, --hot N        hot keys listed per topic (default 20)\n"
                "  -h, --help         this help\n\n"
                "Exit: 0 ok, 1 unreadable or invalid report, unknown topic or "
                "unwritable page,\n"
                "2 usage.\n");
}

/** @brief One headline figure. */
static void ks_html_card(FILE *fp, const char *cls, const char *big,
                         const char *what)
{
        fprintf(fp, "<div class=\"card %s\"><div class=\"big\">", cls);
        ks_cli_fmt_xml(fp, big);
        fprintf(fp, "</div><div class=\"what\">");
        ks_cli_fmt_xml(fp, what);
        fprintf(fp, "</div></div>\n");
}

/** @brief The card of proposal @p p: the share of keyed messages that
 *         moves, with messages and distinct keys (@p an: the topic's
 *         analysis, @p note: what it leaves out). */
static void ks_html_card_moved(FILE *fp, const json_t *p,
                               const ks_analysis_t *an, const char *note)
{
        const json_t *mv = json_object_get(p, "moved");
        double        f  = ks_cli_num(mv, "messages_fraction");
        char          big[96], what[384], a[32], b[32], c[32];
        /* counts of the analysed messages only: lower bounds */
        const char *atl =
            !an->complete ||
                    json_is_false(json_object_get(mv, "messages_exact"))
                ? "at least "
                : "";

        snprintf(big, sizeof(big), "%s", ks_cli_fmt_pct(f, a, sizeof(a)));
        if (ks_cli_num(mv, "messages_fraction_error") > 0) {
                char e[32];
                snprintf(
                    big + strlen(big), sizeof(big) - strlen(big), " +-%s",
                    ks_cli_fmt_pct(ks_cli_num(mv, "messages_fraction_error"), e,
                                   sizeof(e)));
        }
        /* moved keys: a sketch's estimate, not a lower bound */
        snprintf(
            what, sizeof(what),
            "of keyed messages move at %d partitions (%s%s "
            "messages; %s of distinct keys, %s%s%s)",
            (int)ks_cli_u64(p, "partition_count"), atl,
            ks_cli_fmt_count(ks_cli_u64(mv, "messages"), b, sizeof(b)),
            ks_cli_fmt_pct(ks_cli_num(mv, "distinct_keys_fraction"), a,
                           sizeof(a)),
            ks_cli_fmt_count(ks_cli_u64(mv, "distinct_keys"), c, sizeof(c)),
            *note ? " in the analysed messages: " : "", note);
        ks_html_card(fp, f > 0 ? "warn" : "ok", big, what);
}

/** @brief The partition skew card of topic @p t: busiest partition over
 *         the median now and at each proposal, bad past
 *         KS_HTML_SKEW_LIMIT; none without current loads. */
static void ks_html_card_skew(FILE *fp, const json_t *t)
{
        const json_t  *props = json_object_get(t, "proposals");
        ks_cli_loads_t now   = {0}, at;
        char           big[96], what[384];
        double         worst;
        size_t         i;
        int            n = 0;

        if (ks_cli_loads_read(
                json_object_get(json_object_get(t, "current"), "partitions"),
                &now))
                return;
        worst = now.spread.max_over_median;
        snprintf(big, sizeof(big), "%.2fx now", now.spread.max_over_median);
        n = snprintf(what, sizeof(what), "busiest partition over the median");
        for (i = 0; i < json_array_size(props); i++)
                if (!ks_cli_loads_read(
                        json_object_get(json_array_get(props, i), "partitions"),
                        &at)) {
                        if (n < (int)sizeof(what) - KS_HTML_SKEW_NOTE_ROOM)
                                n += snprintf(
                                    what + n, sizeof(what) - (size_t)n,
                                    "%s at %d: %.2fx", i ? "," : ";",
                                    (int)at.count, at.spread.max_over_median);
                        worst = fmax(worst, at.spread.max_over_median);
                        ks_cli_loads_free(&at);
                }
        if (n < (int)sizeof(what) - KS_HTML_SKEW_NOTE_ROOM)
                snprintf(what + n, sizeof(what) - (size_t)n,
                         " (keyshift's limit 2.5x)");
        ks_html_card(fp, worst > KS_HTML_SKEW_LIMIT ? "bad" : "", big, what);
        ks_cli_loads_free(&now);
}

/** @brief The hot keys' card of topic @p t: the share of keyed messages
 *         of the busiest keys listed (@p note: what the analysis leaves
 *         out). */
static void ks_html_card_hot(FILE *fp, const json_t *t, const char *note)
{
        ks_cli_keyrank_t kr;
        size_t           nh;
        char             big[96], what[384], a[32], b[32];

        if (ks_cli_keyrank_build(t, 0, &kr))
                return;
        nh = json_array_size(json_object_get(t, "hot_keys"));
        if (nh && kr.cnt) {
                snprintf(
                    big, sizeof(big), "%s",
                    ks_cli_fmt_pct(ks_cli_keyrank_share_of_top(&kr, (double)nh),
                                   a, sizeof(a)));
                /* a sketch's estimate, not a lower bound */
                snprintf(what, sizeof(what),
                         "of keyed messages come from the busiest %zu "
                         "of %s distinct keys%s%s%s",
                         nh,
                         ks_cli_fmt_count(ks_cli_u64(json_object_get(t, "keys"),
                                                     "distinct_estimate"),
                                          b, sizeof(b)),
                         *note ? " in the analysed messages (" : "", note,
                         *note ? ")" : "");
                ks_html_card(fp, "", big, what);
        }
        ks_cli_keyrank_free(&kr);
}

/** @brief The headline figures of topic @p t: what moves per proposal,
 *         partition skew, the busiest keys' share, the traffic. */
static void ks_html_cards(FILE *fp, const json_t *t, int32_t cur)
{
        const json_t *props = json_object_get(t, "proposals");
        uint64_t      msgs  = ks_cli_u64(t, "messages");
        uint64_t      keyed = ks_cli_u64(json_object_get(t, "keys"), "hashed");
        char          big[96], what[384], a[32], b[32], c[32];
        char          note[KS_ANALYSIS_LINE_MAX];
        size_t        i;
        ks_analysis_t an;

        /* reports from before `analysis` existed: the topic's own counts
         * say whether messages were skipped; distinct keys are then the
         * analysed messages', more may be among the others */
        ks_analysis_of_topic(t, &an);
        ks_analysis_more_keys_note(&an, note, sizeof(note));
        fprintf(fp, "<div class=\"cards\">\n");
        for (i = 0; i < json_array_size(props); i++)
                ks_html_card_moved(fp, json_array_get(props, i), &an, note);
        if (cur)
                ks_html_card_skew(fp, t);
        ks_html_card_hot(fp, t, note);
        snprintf(big, sizeof(big), "%s",
                 ks_cli_fmt_si((double)msgs, a, sizeof(a)));
        snprintf(what, sizeof(what), "messages (%s), %s keyed by hash",
                 ks_cli_fmt_bytes((double)ks_cli_u64(t, "bytes"), b, sizeof(b)),
                 ks_cli_fmt_pct(msgs ? (double)keyed / (double)msgs : 0, c,
                                sizeof(c)));
        ks_html_card(fp, "", big, what);
        fprintf(fp, "</div>\n");
}

/** @brief The messages arriving in each proposed partition from another
 *         one: column sums of proposal @p p's flow minus the diagonal.
 *         @returns an array of @p cols (owned), or NULL without a flow
 *         matrix. */
static uint64_t *ks_html_moved_in(const json_t *p, int32_t rows, int32_t cols)
{
        char      why[160];
        uint64_t *flow = ks_report_flow_read(p, rows, cols, why, sizeof(why));
        uint64_t *in   = flow ? calloc((size_t)cols, sizeof(*in)) : NULL;
        int32_t   r, c;

        for (r = 0; in && r < rows; r++)
                for (c = 0; c < cols; c++)
                        if (c != r)
                                in[c] += flow[(size_t)r * cols + c];
        free(flow);
        return in;
}

/** @brief The load charts of the current and each proposed count, on one
 *         y scale, stacked in a column. */
static void ks_html_loads(FILE *fp, const json_t *t, int32_t cur)
{
        const json_t  *props = json_object_get(t, "proposals");
        ks_cli_loads_t l[1 + KEYSHIFT_PROPOSED_MAX];
        uint64_t      *in[1 + KEYSHIFT_PROPOSED_MAX] = {NULL};
        size_t         n                             = 0, i;
        double         ymax                          = 0;
        char           title[160];

        if (!cur ||
            ks_cli_loads_read(
                json_object_get(json_object_get(t, "current"), "partitions"),
                &l[n]))
                return;
        n++;
        for (i = 0; i < json_array_size(props) && n < 1 + KEYSHIFT_PROPOSED_MAX;
             i++) {
                const json_t *p = json_array_get(props, i);
                if (ks_cli_loads_read(json_object_get(p, "partitions"), &l[n]))
                        continue;
                in[n] = ks_html_moved_in(p, cur, l[n].count);
                n++;
        }
        for (i = 0; i < n; i++)
                ymax = fmax(ymax, (double)l[i].spread.max);
        fprintf(fp, "<div class=\"col\">\n");
        for (i = 0; i < n; i++) {
                snprintf(title, sizeof(title),
                         "%s %d partitions: busiest %.2fx the median%s",
                         i ? "Load at" : "Load now,", (int)l[i].count,
                         l[i].spread.max_over_median,
                         in[i] ? " (amber: moved in)" : "");
                ks_cli_svg_partitions(fp, title, &l[i], in[i], ymax, 640,
                                      n > 2 ? 230 : 280);
                ks_cli_loads_free(&l[i]);
                free(in[i]);
        }
        fprintf(fp, "</div>\n");
}

/** @brief One topic's section: heading, verdict, cards, charts, tables. */
static void ks_html_topic(FILE *fp, const ks_html_opts_t *o, const char *name,
                          const json_t *t)
{
        const json_t    *props = json_object_get(t, "proposals");
        const json_t    *pc    = json_object_get(t, "partition_count");
        int32_t          cur   = ks_cli_topic_current(t);
        ks_cli_keyrank_t kr;
        size_t           i;
        char             caption[320], verdict[KS_STORY_MAX];

        fprintf(fp, "<section class=\"topic\" id=\"topic-");
        ks_cli_fmt_xml(fp, name);
        fprintf(fp, "\">\n<h2>Topic <code>");
        ks_cli_fmt_xml(fp, name);
        fprintf(fp, "</code>: ");
        if (cur)
                fprintf(fp, "%d", (int)cur);
        else
                fprintf(fp, "? (count unknown)");
        for (i = 0; i < json_array_size(props); i++)
                fprintf(fp, "%s%d", i ? ", " : " &#x2192; ",
                        (int)ks_cli_u64(json_array_get(props, i),
                                        "partition_count"));
        fprintf(fp, " partitions</h2>\n<p class=\"sub\">partitioner ");
        ks_cli_fmt_xml(fp, ks_cli_topic_partitioner(t, "?"));
        fprintf(fp, " &middot; current count from ");
        ks_cli_fmt_xml(fp, ks_cli_str(pc, "source", "?"));
        fprintf(fp, " &middot; partition figures since ");
        ks_cli_fmt_xml(fp, ks_cli_str(pc, "analysis_since", "?"));
        fprintf(fp, "</p>\n<p class=\"verdict\">");
        ks_cli_fmt_xml(fp, ks_story_headline(t, verdict, sizeof(verdict)));
        fprintf(fp, "</p>\n");
        ks_html_cards(fp, t, cur);

        /* row 1: keys ranked and the flows | the load per partition */
        fprintf(fp, "<div class=\"row\">\n<div class=\"col\">\n");
        if (!ks_cli_keyrank_build(t, 600, &kr)) {
                ks_cli_svg_rank(fp, &kr, json_object_get(t, "hot_keys"), 640,
                                420);
                ks_cli_keyrank_free(&kr);
        }
        for (i = 0; cur && i < json_array_size(props); i++) {
                const json_t *p  = json_array_get(props, i);
                int32_t   pcount = (int32_t)ks_cli_u64(p, "partition_count");
                char      why[160];
                uint64_t *flow =
                    ks_report_flow_read(p, cur, pcount, why, sizeof(why));
                if (flow)
                        ks_cli_svg_flow(fp, flow, cur, pcount, 640);
                else
                        fprintf(fp,
                                "<p class=\"ks-nosizing\">No flow matrix to "
                                "%d partitions: %d x %d cells is above "
                                "keyshift.flow.max.cells.</p>\n",
                                (int)pcount, (int)cur, (int)pcount);
                free(flow);
        }
        fprintf(fp, "</div>\n");
        ks_html_loads(fp, t, cur);
        /* row 2: hot keys | warnings, other clients, checks, sizing. The
         * hot keys take their table's width (one column per proposal;
         * scrolled sideways when wider than the page) and the rest takes
         * what is left, from 400 px: at 1,400 px three proposals' table
         * and the rest sit side by side (with a 560 px basis they wrapped
         * and the page used its left half only). */
        fprintf(fp, "</div>\n<div class=\"row\">\n<div class=\"ks-scroll\">\n");
        ks_cli_html_hot_keys(fp, t, o->hot_max);
        fprintf(fp, "</div>\n<div class=\"col ks-side\">\n");
        snprintf(caption, sizeof(caption), "Warnings for %s", name);
        ks_cli_html_warnings(fp, json_object_get(t, "warnings"), caption);
        ks_cli_html_sizing(fp, t);
        ks_cli_html_clients(fp, t);
        ks_cli_html_audit(fp, t);
        fprintf(fp, "</div>\n</div>\n</section>\n");
}

/** @brief First in the header, when any topic on the page had messages
 *         skipped: "partial: keyshift analysed X of Y messages (P %)"
 *         over those topics (ks_analysis.h); when any was sampled, the
 *         sampled line after it (as `show`). */
static void ks_html_partial(FILE *fp, const ks_cli_report_t *r,
                            const ks_html_opts_t *o)
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
                int want = !o->only_cnt;
                for (i = 0; i < o->only_cnt; i++)
                        want |= !strcmp(o->only[i], name);
                if (!want)
                        continue;
                ks_analysis_of_topic(t, &one);
                ks_analysis_add_concurrent(&all, &one);
        }
        if (json_is_number(json_object_get(r->root, "uptime_s")))
                all.uptime_s =
                    json_number_value(json_object_get(r->root, "uptime_s"));
        if (all.skipped) {
                fprintf(fp, "<p class=\"ks-partial\">");
                ks_cli_fmt_xml(
                    fp, ks_analysis_partial_line(&all, line, sizeof(line)));
                fprintf(fp, "</p>");
        }
        if (all.sampled) {
                fprintf(fp, "<p class=\"ks-partial ks-sampled\">");
                ks_cli_fmt_xml(
                    fp, ks_analysis_sampled_line(&all, sline, sizeof(sline)));
                fprintf(fp, "</p>");
        }
}

/** @brief The whole page of report @p r. */
static void ks_html_page(FILE *fp, const ks_cli_report_t *r,
                         const ks_html_opts_t *o)
{
        const json_t *pr = json_object_get(r->root, "producer");
        const json_t *mf = json_object_get(pr, "merged_from");
        const char   *name;
        json_t       *t;
        size_t        i;

        fprintf(fp, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta "
                    "charset=\"utf-8\">\n<meta name=\"viewport\" "
                    "content=\"width=device-width, initial-scale=1\">\n"
                    "<link rel=\"icon\" href=\"data:,\">\n<title>keyshift: ");
        ks_cli_fmt_xml(fp, r->path);
        fprintf(fp, "</title>\n<style>%s</style>\n</head><body>\n<header>",
                ks_cli_html_css);
        ks_html_partial(fp, r, o);
        fprintf(fp, "<h1>keyshift: what a partition increase would do</h1><p>");
        ks_cli_fmt_xml(fp, r->path);
        fprintf(fp, " &middot; ");
        if (json_array_size(mf))
                fprintf(fp, "merged from %zu producer reports",
                        json_array_size(mf));
        else {
                fprintf(fp, "producer ");
                ks_cli_fmt_xml(fp, ks_cli_str(pr, "name", "?"));
                fprintf(fp, " (pid %lld, librdkafka ",
                        (long long)ks_cli_u64(pr, "pid"));
                ks_cli_fmt_xml(fp, ks_cli_str(pr, "librdkafka_version", "?"));
                fprintf(fp, ")");
        }
        fprintf(fp, " &middot; generated ");
        ks_cli_fmt_xml(fp, ks_cli_str(r->root, "generated_at", "?"));
        fprintf(fp, ", %.1f s after start%s</p></header>\n",
                ks_cli_num(r->root, "uptime_s"),
                json_is_true(json_object_get(r->root, "final"))
                    ? " (final report)"
                    : "");
        json_object_foreach(ks_cli_report_topics(r), name, t)
        {
                int want = !o->only_cnt;
                for (i = 0; i < o->only_cnt; i++)
                        want |= !strcmp(o->only[i], name);
                if (want)
                        ks_html_topic(fp, o, name, t);
        }
        if (!json_object_size(ks_cli_report_topics(r)))
                fprintf(fp, "<section class=\"topic\"><p>No topics: the "
                            "producer sent nothing.</p></section>\n");
        if (json_array_size(json_object_get(r->root, "warnings"))) {
                fprintf(fp, "<section class=\"topic\">\n");
                ks_cli_html_warnings(fp, json_object_get(r->root, "warnings"),
                                     "Producer warnings");
                fprintf(fp, "</section>\n");
        }
        fprintf(fp,
                "<footer>keyshift %s &middot; %s &middot; hover a bar, "
                "dot or cell for its figures</footer>\n</body></html>\n",
                KEYSHIFT_VERSION_STR, KEYSHIFT_REPORT_SCHEMA);
}

/** @brief Writes the page to @p out ("-": stdout) through a temporary
 *         file renamed over it. @returns 0, or -1 with @p err set. */
static int ks_html_write(const char *out, const ks_cli_report_t *r,
                         const ks_html_opts_t *o, char *err, size_t errsz)
{
        char  tmp[4096];
        int   fd;
        FILE *fp;

        if (!strcmp(out, "-")) {
                ks_html_page(stdout, r, o);
                if (fflush(stdout) || ferror(stdout)) {
                        snprintf(err, errsz,
                                 "standard output: cannot write: %s",
                                 errno ? strerror(errno) : "write error");
                        return -1;
                }
                return 0;
        }
        if (snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", out) >=
            (int)sizeof(tmp)) {
                snprintf(err, errsz, "%.900s: path too long", out);
                return -1;
        }
        if ((fd = mkstemp(tmp)) < 0 || !(fp = fdopen(fd, "w"))) {
                snprintf(err, errsz, "%.900s: cannot create: %s", out,
                         strerror(errno));
                if (fd >= 0)
                        close(fd);
                return -1;
        }
        ks_html_page(fp, r, o);
        if (fflush(fp) || ferror(fp) || fclose(fp)) {
                snprintf(err, errsz, "%.900s: cannot write: %s", out,
                         strerror(errno));
                unlink(tmp);
                return -1;
        }
        if (chmod(tmp, 0644) || rename(tmp, out)) {
                snprintf(err, errsz, "%.900s: cannot write: %s", out,
                         strerror(errno));
                unlink(tmp);
                return -1;
        }
        return 0;
}

int ks_cli_html_main(int argc, char **argv)
{
        static const struct option longopts[] = {
            {"output", required_argument, NULL, 'o'},
            {"topic", required_argument, NULL, 't'},
            {"hot", required_argument, NULL, 'k'},
            {"help", no_argument, NULL, 'h'},
            {NULL, 0, NULL, 0}};
        ks_html_opts_t  o   = {.hot_max = 20};
        const char     *out = NULL;
        char            err[1024], def[4096];
        ks_cli_report_t r;
        long long       v;
        size_t          i;
        int             c;

        optind = 1;
        while ((c = getopt_long(argc, argv, "o:t:k:h", longopts, NULL)) != -1) {
                switch (c) {
                case 'o':
                        out = optarg;
                        break;
                case 't':
                        if (o.only_cnt == KS_HTML_TOPICS_MAX)
                                return ks_cli_usage_error("html",
                                                          "at most %d --topic",
                                                          KS_HTML_TOPICS_MAX);
                        o.only[o.only_cnt++] = optarg;
                        break;
                case 'k':
                        if (ks_cli_parse_long(optarg, 0, 1000, &v, err,
                                              sizeof(err)))
                                return ks_cli_usage_error("html", "--hot: %s",
                                                          err);
                        o.hot_max = (int)v;
                        break;
                case 'h':
                        ks_html_help(stdout);
                        return KS_CLI_EXIT_OK;
                default:
                        return ks_cli_usage_error("html", "bad option");
                }
        }
        if (argc - optind != 1)
                return ks_cli_usage_error("html", "expected one REPORT.json");
        if (!out) {
                const char *in  = argv[optind];
                size_t      len = strlen(in);
                if (!strcmp(in, "-"))
                        out = "-";
                else if (len > 5 && !strcmp(in + len - 5, ".json"))
                        snprintf(def, sizeof(def), "%.*s.html", (int)(len - 5),
                                 in);
                else
                        snprintf(def, sizeof(def), "%s.html", in);
                out = out ? out : def;
        }
        if (ks_cli_report_load(argv[optind], &r, err, sizeof(err)))
                return ks_cli_fail("html", "%s", err);
        for (i = 0; i < o.only_cnt; i++)
                if (!json_object_get(ks_cli_report_topics(&r), o.only[i])) {
                        ks_cli_fail("html",
                                    "%s: topics: no topic '%s' in this report",
                                    r.path, o.only[i]);
                        ks_cli_report_free(&r);
                        return KS_CLI_EXIT_FAIL;
                }
        if (ks_html_write(out, &r, &o, err, sizeof(err))) {
                ks_cli_report_free(&r);
                return ks_cli_fail("html", "%s", err);
        }
        if (strcmp(out, "-"))
                fprintf(stderr, "keyshift html: wrote %s\n", out);
        ks_cli_report_free(&r);
        return KS_CLI_EXIT_OK;
}
