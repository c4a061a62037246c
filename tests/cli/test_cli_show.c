/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_cli_show.c
 * @brief `keyshift show` on reports of real producers: every figure it
 *        prints is checked against the report (the skew against max and
 *        median computed here from the per-partition arrays), colour
 *        appears on a terminal (a pseudo-terminal from forkpty) and never
 *        in a pipe, and the AIS replay's report reads as a summary.
 */
#include <math.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_test_support.h"
#include "ks_e2e_support.h"
#include "ks_test.h"

static char report[600];

static int setup(void)
{
        snprintf(report, sizeof(report), "%s/orders.json",
                 ks_e2e_tmpdir("cli-show"));
        return 0;
}

/** @brief "34,013" as show prints counts. */
static const char *commas(long long v, char *buf)
{
        char   d[32];
        size_t n = (size_t)sprintf(d, "%lld", v), i, o = 0;

        for (i = 0; i < n; i++) {
                if (i && (n - i) % 3 == 0)
                        buf[o++] = ',';
                buf[o++] = d[i];
        }
        buf[o] = '\0';
        return buf;
}

static int cmp_ll(const void *a, const void *b)
{
        long long x = *(const long long *)a, y = *(const long long *)b;
        return x < y ? -1 : x > y;
}

/** @returns busiest / median of a partitions object's `messages`
 *           column, computed here. */
static double max_over_median(json_t *parts)
{
        json_t   *msgs = json_object_get(parts, "messages");
        size_t    n    = json_array_size(msgs), i;
        long long v[256];
        double    med;

        for (i = 0; i < n; i++)
                v[i] = json_integer_value(json_array_get(msgs, i));
        qsort(v, n, sizeof(v[0]), cmp_ll);
        med = n % 2 ? (double)v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
        return (double)v[n - 1] / med;
}

/** Each hot key's row (up to the 10 shown) ends with its verdict as the
 *  report gives it: "partitions spread it" or "salt into N". */
static void check_verdicts(const char *out, const json_t *t)
{
        json_t *hot = ks_e2e_hot_keys(t);
        size_t  i;

        for (i = 0; i < json_array_size(hot) && i < 10; i++) {
                const json_t *h = json_array_get(hot, i);
                char          head[16], want[48], line[512];
                const char   *at, *end;

                snprintf(head, sizeof(head), "\n  %-3zu ", i + 1);
                at = strstr(out, head);
                CU_ASSERT_PTR_NOT_NULL_FATAL(at);
                at++;
                end = strchr(at, '\n');
                snprintf(line, sizeof(line), "%.*s",
                         (int)(end ? end - at : (long)strlen(at)), at);
                CU_ASSERT_FATAL(json_is_boolean(
                    json_object_get(h, "fixable_by_partitions")));
                if (json_is_true(json_object_get(h, "fixable_by_partitions"))) {
                        snprintf(want, sizeof(want), "partitions spread it");
                } else {
                        snprintf(want, sizeof(want), "salt into %lld",
                                 (long long)json_integer_value(
                                     json_object_get(h, "salt_buckets")));
                }
                if (!ks_clit_has(line, want))
                        fprintf(stderr, "hot key %zu: no '%s' in: %s\n", i + 1,
                                want, line);
                CU_ASSERT(ks_clit_has(line, want));
        }
        json_decref(hot);
        CU_ASSERT(ks_clit_has(out, "verdict"));
}

/* A key that partitions cannot spread: the report's verdict turned for
 * the second hot key (the mock producer's rates are far below any
 * partition's target), show and html say to salt it. */
static void test_show_hot_verdicts(void)
{
        ks_clit_run_t r;
        json_t       *rep, *t, *h;
        char          salted[700];
        char         *page;

        ks_clit_make_report(report, 20000);
        rep = ks_e2e_load_json(report);
        CU_ASSERT_PTR_NOT_NULL_FATAL(rep);
        t = ks_e2e_get(rep, "topics/orders");
        CU_ASSERT_FATAL(json_array_size(ks_e2e_get(t, "hot_keys/key")) > 2);
        CU_ASSERT_EQUAL_FATAL(ks_clit_run(&r, "show '%s'", report), 0);
        check_verdicts(r.out, t);
        ks_clit_run_free(&r);

        h = json_object_get(t, "hot_keys"); /* columns: key 1 salted */
        json_array_set_new(json_object_get(h, "fixable_by_partitions"), 1,
                           json_false());
        json_array_set_new(json_object_get(h, "salt_buckets"), 1,
                           json_integer(7));
        snprintf(salted, sizeof(salted), "%s.salted.json", report);
        CU_ASSERT_FATAL(json_dump_file(rep, salted, 0) == 0);
        CU_ASSERT_EQUAL_FATAL(ks_clit_run(&r, "show '%s'", salted), 0);
        check_verdicts(r.out, t);
        CU_ASSERT(ks_clit_has(r.out, "salt into 7"));
        ks_clit_run_free(&r);

        CU_ASSERT_EQUAL_FATAL(
            ks_clit_run(&r, "html '%s' -o '%s.html'", salted, salted), 0);
        ks_clit_run_free(&r);
        snprintf(salted + strlen(salted), sizeof(salted) - strlen(salted),
                 ".html");
        page = ks_clit_read(salted, NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(page);
        CU_ASSERT(ks_clit_has(page, "<td class=\"verdict bad\">salt into 7"
                                    "</td>"));
        CU_ASSERT(ks_clit_has(page, "<td class=\"verdict\">partitions "
                                    "spread it</td>"));
        free(page);
        json_decref(rep);
}

/** @brief Collapses every run of spaces and newlines in @p s into one
 *         space (show wraps its headline). */
static void squeeze(char *s)
{
        char *o  = s;
        int   sp = 0;

        for (; *s; s++) {
                if (*s == ' ' || *s == '\n') {
                        sp = 1;
                        continue;
                }
                if (sp && o != s)
                        *o++ = ' ';
                sp   = 0;
                *o++ = *s;
        }
        *o = '\0';
}

/* One story (ks_story.h): the report's summary is what show and html
 * print as the topic's headline. */
static void test_one_story(void)
{
        ks_clit_run_t r;
        json_t       *rep;
        const char   *summary;
        char          html[700], esc[4096], *page;
        size_t        o = 0;

        ks_clit_make_report(report, 20000);
        rep = ks_e2e_load_json(report);
        CU_ASSERT_PTR_NOT_NULL_FATAL(rep);
        summary = json_string_value(ks_e2e_get(rep, "topics/orders/summary"));
        CU_ASSERT_PTR_NOT_NULL_FATAL(summary);
        CU_ASSERT(ks_clit_has(summary, "Raising "));
        CU_ASSERT(ks_clit_has(summary, "Sizing: no partition count is "
                                       "recommended"));
        CU_ASSERT_EQUAL_FATAL(ks_clit_run(&r, "show '%s'", report), 0);
        squeeze(r.out);
        CU_ASSERT(ks_clit_has(r.out, summary));
        ks_clit_run_free(&r);

        snprintf(html, sizeof(html), "%s.html", report);
        CU_ASSERT_EQUAL_FATAL(
            ks_clit_run(&r, "html '%s' -o '%s'", report, html), 0);
        ks_clit_run_free(&r);
        for (; *summary && o + 8 < sizeof(esc); summary++)
                o +=
                    (size_t)snprintf(esc + o, sizeof(esc) - o, "%s",
                                     *summary == '\''  ? "&#39;"
                                     : *summary == '&' ? "&amp;"
                                     : *summary == '<' ? "&lt;"
                                     : *summary == '>' ? "&gt;"
                                     : *summary == '"' ? "&quot;"
                                                       : (char[]){*summary, 0});
        page = ks_clit_read(html, NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(page);
        CU_ASSERT(ks_clit_has(page, esc));
        free(page);
        json_decref(rep);
}

/** @returns the page `keyshift html` writes for @p rep (owned). */
static char *html_of(const char *rep)
{
        ks_clit_run_t r;
        char          html[700];

        snprintf(html, sizeof(html), "%s.html", rep);
        CU_ASSERT_EQUAL(ks_clit_run(&r, "html '%s' -o '%s'", rep, html), 0);
        ks_clit_run_free(&r);
        return ks_clit_read(html, NULL);
}

/* Issue 28, "sizing only from real inputs": without
 * keyshift.consumer.msgs.per.s and keyshift.consumers.max no count is
 * recommended anywhere (report, story, show, html), the properties are
 * named and the illustration is said to be assumed; with both, the seed
 * formula max(ceil(peak / rate), consumers) x clamp(key skew / 30, 2, 4),
 * then the next power of two, computed here from the report's measured
 * peak and key skew. */
static void test_sizing_only_from_inputs(void)
{
        const char   *replay = getenv("KS_REPLAY");
        char          none[700], both[700], want[160], *page;
        ks_clit_run_t r;
        json_t       *rep, *sz, *fl;
        const char   *summary;
        double        peak, skew, factor, f;
        long long     floor_, rec;
        size_t        i;

        snprintf(none, sizeof(none), "%s.none.json", report);
        snprintf(both, sizeof(both), "%s.both.json", report);
        CU_ASSERT_PTR_NOT_NULL_FATAL(replay);
        /* 2.5 s of the synthetic AIS feed at 10,000 msgs/s: a measured
         * peak (whole seconds) and key skew */
        CU_ASSERT_EQUAL_FATAL(
            ks_e2e_system("'%s' --plugin '%s' -p 6 --proposed 12 --rate 10000 "
                          "-n 25000 --report '%s' >/dev/null 2>&1",
                          replay, ks_e2e_plugin(), none),
            0);
        CU_ASSERT_EQUAL_FATAL(
            ks_e2e_system("'%s' --plugin '%s' -p 6 --proposed 12 --rate 10000 "
                          "-n 25000 -X keyshift.consumer.msgs.per.s=700 "
                          "-X keyshift.consumers.max=3 --report '%s' "
                          ">/dev/null 2>&1",
                          replay, ks_e2e_plugin(), both),
            0);

        /* no inputs */
        rep = ks_e2e_load_json(none);
        CU_ASSERT_PTR_NOT_NULL_FATAL(rep);
        sz = ks_e2e_get(rep, "topics/ais/sizing");
        CU_ASSERT_FATAL(json_is_object(sz));
        CU_ASSERT(json_is_null(json_object_get(sz, "recommended")));
        CU_ASSERT(json_is_null(json_object_get(sz, "partition_floor")));
        CU_ASSERT(json_is_null(json_object_get(sz, "fewest_brokers")));
        CU_ASSERT_EQUAL(json_array_size(json_object_get(sz, "needs")), 2);
        CU_ASSERT_STRING_EQUAL(json_string_value(ks_e2e_get(sz, "needs/0")),
                               "keyshift.consumer.msgs.per.s");
        CU_ASSERT_STRING_EQUAL(json_string_value(ks_e2e_get(sz, "needs/1")),
                               "keyshift.consumers.max");
        CU_ASSERT_PTR_NULL(ks_e2e_get(sz, "constraints/16"));
        peak   = json_number_value(ks_e2e_get(sz, "basis/peak_msgs_s"));
        skew   = json_number_value(ks_e2e_get(rep, "topics/ais/skew/key_skew"));
        factor = fmin(fmax(skew / 30.0, 2.0), 4.0);
        CU_ASSERT(peak > 0);
        CU_ASSERT_DOUBLE_EQUAL(
            json_number_value(ks_e2e_get(sz, "basis/skew_factor")), factor,
            1e-9);
        fl = ks_e2e_get(sz, "illustration/floors");
        CU_ASSERT_EQUAL(json_array_size(fl), 2);
        for (i = 0; i < json_array_size(fl); i++) {
                json_t *e    = json_array_get(fl, i);
                double  rate = json_number_value(
                     ks_e2e_get(e, "assumed_per_consumer_msgs_s"));
                CU_ASSERT(rate > 0);
                f = fmax(ceil(peak / rate), 1) * factor;
                CU_ASSERT_EQUAL(ks_e2e_int(e, "partition_floor"),
                                (long long)ceil(f - 1e-9));
        }
        summary = json_string_value(ks_e2e_get(rep, "topics/ais/summary"));
        CU_ASSERT_PTR_NOT_NULL_FATAL(summary);
        CU_ASSERT(ks_clit_has(summary, "Sizing: no partition count is "
                                       "recommended without "
                                       "keyshift.consumer.msgs.per.s"));
        CU_ASSERT(ks_clit_has(summary, "Only as an illustration, at an "
                                       "assumed 1000 msgs/s a consumer"));
        CU_ASSERT_PTR_NULL(strstr(summary, "Sizing advice"));
        CU_ASSERT_EQUAL_FATAL(ks_clit_run(&r, "show '%s'", none), 0);
        CU_ASSERT(ks_clit_has(r.out, "sizing   no count recommended"));
        CU_ASSERT_PTR_NULL(strstr(r.out, "partitions recommended"));
        CU_ASSERT_PTR_NULL(strstr(r.out, "Sizing advice"));
        ks_clit_run_free(&r);
        page = html_of(none);
        CU_ASSERT_PTR_NOT_NULL_FATAL(page);
        CU_ASSERT(ks_clit_has(page, "<caption>Sizing: no count recommended"));
        CU_ASSERT(ks_clit_has(page, "illustration only: floor at an assumed "
                                    "1,000 msgs/s a consumer"));
        CU_ASSERT(ks_clit_has(page, "at 6 partitions (today&#39;s): "
                                    "throughput"));
        /* only the constraints whose inputs are known */
        CU_ASSERT_PTR_NULL(strstr(page, "partitions recommended"));
        CU_ASSERT_PTR_NULL(strstr(page, "inputs unknown"));
        CU_ASSERT_PTR_NULL(strstr(page, "partitions (today&#39;s): consumers"));
        CU_ASSERT_PTR_NULL(strstr(page, "Sizing advice"));
        free(page);
        json_decref(rep);

        /* both inputs: the seed formula, unchanged */
        rep = ks_e2e_load_json(both);
        CU_ASSERT_PTR_NOT_NULL_FATAL(rep);
        sz     = ks_e2e_get(rep, "topics/ais/sizing");
        peak   = json_number_value(ks_e2e_get(sz, "basis/peak_msgs_s"));
        skew   = json_number_value(ks_e2e_get(rep, "topics/ais/skew/key_skew"));
        factor = fmin(fmax(skew / 30.0, 2.0), 4.0);
        f      = fmax(fmax(ceil(peak / 700.0), 3), 1) * factor;
        floor_ = ks_e2e_int(sz, "partition_floor");
        rec    = ks_e2e_int(sz, "recommended");
        CU_ASSERT_EQUAL(floor_, (long long)ceil(f - 1e-9));
        CU_ASSERT(rec >= floor_ && (rec & (rec - 1)) == 0 && rec < 2 * floor_);
        CU_ASSERT_EQUAL(json_array_size(json_object_get(sz, "needs")), 0);
        CU_ASSERT(json_is_null(json_object_get(sz, "illustration")));
        summary = json_string_value(ks_e2e_get(rep, "topics/ais/summary"));
        CU_ASSERT_PTR_NOT_NULL_FATAL(summary);
        snprintf(want, sizeof(want), "Sizing advice: %lld partitions = ", rec);
        CU_ASSERT(ks_clit_has(summary, want));
        CU_ASSERT_PTR_NULL(strstr(summary, "illustration"));
        CU_ASSERT_PTR_NULL(strstr(summary, "not given"));
        CU_ASSERT_EQUAL_FATAL(ks_clit_run(&r, "show '%s'", both), 0);
        snprintf(want, sizeof(want), "sizing   %lld partitions recommended",
                 rec);
        CU_ASSERT(ks_clit_has(r.out, want));
        ks_clit_run_free(&r);
        page = html_of(both);
        CU_ASSERT_PTR_NOT_NULL_FATAL(page);
        snprintf(want, sizeof(want),
                 "<caption>Sizing: %lld partitions "
                 "recommended</caption>",
                 rec);
        CU_ASSERT(ks_clit_has(page, want));
        snprintf(want, sizeof(want), "at %lld partitions: consumers", rec);
        CU_ASSERT(ks_clit_has(page, want));
        CU_ASSERT_PTR_NULL(strstr(page, "illustration"));
        free(page);
        json_decref(rep);
}

/** @returns the column (UTF-8 characters) of the first @p c in the line
 *           of @p out that starts with @p prefix, or -1. */
static long column_of(const char *out, const char *prefix, char c)
{
        const char *l   = strstr(out, prefix);
        long        col = 0;

        if (l && *l == '\n')
                l++; /* the line itself */

        for (; l && *l && *l != '\n'; l++) {
                if (*l == c)
                        return col;
                col += ((unsigned char)*l & 0xc0) != 0x80;
        }
        return -1;
}

/* A hot key with multi-byte characters: its row's columns line up with
 * the others' (printf pads by bytes). */
static void test_show_utf8_key_columns(void)
{
        ks_clit_run_t r;
        json_t       *rep, *h;
        char          path[700];

        ks_clit_make_report(report, 20000);
        rep = ks_e2e_load_json(report);
        CU_ASSERT_PTR_NOT_NULL_FATAL(rep);
        h = ks_e2e_get(rep, "topics/orders/hot_keys/key");
        CU_ASSERT_PTR_NOT_NULL_FATAL(h);
        json_array_set_new(h, 0,
                           json_string("\xc3\xbc\xe2\x82\xac"
                                       "2"));
        snprintf(path, sizeof(path), "%s.utf8.json", report);
        CU_ASSERT_FATAL(json_dump_file(rep, path, 0) == 0);
        CU_ASSERT_EQUAL_FATAL(ks_clit_run(&r, "show --color never '%s'", path),
                              0);
        CU_ASSERT(ks_clit_has(r.out, "\xc3\xbc\xe2\x82\xac"
                                     "2"));
        CU_ASSERT(column_of(r.out, "\n  1   ", '%') > 0);
        CU_ASSERT_EQUAL(column_of(r.out, "\n  1   ", '%'),
                        column_of(r.out, "\n  2   ", '%'));
        ks_clit_run_free(&r);
        json_decref(rep);
}

static void test_show_figures(void)
{
        ks_clit_run_t r;
        json_t       *rep, *t;
        char          buf[64], want[128];
        size_t        i;

        ks_clit_make_report(report, 20000);
        rep = ks_e2e_load_json(report);
        CU_ASSERT_PTR_NOT_NULL_FATAL(rep);
        t = ks_e2e_get(rep, "topics/orders");
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);

        CU_ASSERT_EQUAL_FATAL(ks_clit_run(&r, "show '%s'", report), 0);
        CU_ASSERT(ks_clit_has(r.out, "topic orders: 6 -> 8, 12 partitions"));
        CU_ASSERT(ks_clit_has(r.out, commas(ks_e2e_int(t, "messages"), buf)));
        for (i = 0; i < 2; i++) {
                char p[64];
                snprintf(p, sizeof(p), "proposals/%zu/moved/messages", i);
                snprintf(want, sizeof(want), "6 -> %d",
                         (int)ks_e2e_int(t, i ? "proposals/1/partition_count"
                                              : "proposals/0/partition_count"));
                CU_ASSERT(ks_clit_has(r.out, want));
                CU_ASSERT(ks_clit_has(r.out, commas(ks_e2e_int(t, p), buf)));
                snprintf(p, sizeof(p), "proposals/%zu/partitions", i);
                snprintf(want, sizeof(want), "%.2fx",
                         max_over_median(ks_e2e_get(t, p)));
                CU_ASSERT(ks_clit_has(r.out, want));
        }
        snprintf(want, sizeof(want), "%.2fx",
                 max_over_median(ks_e2e_get(t, "current/partitions")));
        CU_ASSERT(ks_clit_has(r.out, want));
        /* the busiest key, its count, its partitions */
        if (json_is_string(ks_e2e_get(t, "hot_keys/key/0")))
                snprintf(want, sizeof(want), "%s",
                         json_string_value(ks_e2e_get(t, "hot_keys/key/0")));
        else /* binary keys are shown in hex */
                snprintf(
                    want, sizeof(want), "0x%s",
                    json_string_value(ks_e2e_get(t, "hot_keys/key_hex/0")));
        CU_ASSERT(ks_clit_has(r.out, want));
        CU_ASSERT(ks_clit_has(
            r.out, commas(ks_e2e_int(t, "hot_keys/messages/0"), buf)));
        /* mixed serializers: the report has some, show says so */
        CU_ASSERT(ks_e2e_int(t, "mixed_keys/total") > 0);
        CU_ASSERT(ks_clit_has(r.out, "arrive under more than one encoding"));
        CU_ASSERT(ks_clit_has(r.out, "MIXED_KEY_SERIALIZERS"));
        CU_ASSERT(ks_clit_has(r.out, "KEYS_WOULD_MOVE"));
        CU_ASSERT(ks_clit_has(r.out, "delivery check"));
        /* a pipe: no colour */
        CU_ASSERT(!ks_clit_has(r.out, "\033["));
        ks_clit_run_free(&r);

        CU_ASSERT_EQUAL(
            ks_clit_run(&r, "show --hot 3 --topic orders '%s'", report), 0);
        CU_ASSERT(ks_clit_has(r.out, "\n  3   "));
        CU_ASSERT(!ks_clit_has(r.out, "\n  4   "));
        ks_clit_run_free(&r);
        CU_ASSERT_EQUAL(ks_clit_run(&r, "show --color=always '%s'", report), 0);
        CU_ASSERT(ks_clit_has(r.out, "\033["));
        ks_clit_run_free(&r);
        CU_ASSERT_EQUAL(ks_clit_run(&r, "show --color=sometimes '%s'", report),
                        2);
        ks_clit_run_free(&r);
        CU_ASSERT_EQUAL(ks_clit_run(&r, "show --help"), 0);
        CU_ASSERT(ks_clit_has(r.out, "Usage: keyshift show"));
        ks_clit_run_free(&r);
        json_decref(rep);
}

/* The producer's own warnings come before the topics: after many topics
 * they would read as the last one's. */
static void test_show_producer_warnings_first(void)
{
        char          path[700];
        json_t       *rep = ks_e2e_load_json(report), *w;
        ks_clit_run_t r;
        const char   *at_w, *at_t;

        CU_ASSERT_PTR_NOT_NULL_FATAL(rep);
        w = json_pack("{s:s, s:s}", "code", "SKETCHES_REDUCED", "message",
                      "smaller sketches than asked in 1 of 1 topics");
        CU_ASSERT_EQUAL_FATAL(
            json_array_append_new(json_object_get(rep, "warnings"), w), 0);
        snprintf(path, sizeof(path), "%s.pw.json", report);
        CU_ASSERT_EQUAL_FATAL(json_dump_file(rep, path, JSON_COMPACT), 0);
        CU_ASSERT_EQUAL_FATAL(ks_clit_run(&r, "show '%s'", path), 0);
        at_w = strstr(r.out, "producer warnings\n    SKETCHES_REDUCED: ");
        at_t = strstr(r.out, "== topic orders");
        CU_ASSERT_PTR_NOT_NULL(at_w);
        CU_ASSERT_PTR_NOT_NULL(at_t);
        CU_ASSERT(at_w && at_t && at_w < at_t);
        /* a topic's own warnings stay under it */
        CU_ASSERT(at_t && strstr(at_t, "\n  warnings\n    "));
        ks_clit_run_free(&r);
        json_decref(rep);
}

/**
 * @brief A fleet report (`fleet`, as `keyshift fleet` writes it) says how
 *        many producers it merges of how many, and lists every stale one
 *        with its last record and whether it is merged; live and ended
 *        ones are not listed. The expected lines are built from the
 *        `fleet` object written here.
 */
static void test_show_fleet(void)
{
        static const char *state[]  = {"live", "stale", "ended", "stale",
                                       "live"};
        static const int   merged[] = {1, 1, 1, 0, 1};
        char               path[700], line[300];
        json_t            *rep = ks_e2e_load_json(report), *ps, *fleet;
        ks_clit_run_t      r;
        long long          cnt[3] = {0, 0, 0}, nmerged = 0;
        size_t             i;

        CU_ASSERT_PTR_NOT_NULL_FATAL(rep);
        ps = json_array();
        for (i = 0; i < 5; i++) {
                json_array_append_new(
                    ps,
                    json_pack("{s:s, s:s, s:I, s:s, s:s, s:s, s:s, s:s, s:s, "
                              "s:s, s:i, s:s, s:[s], s:b}",
                              "client_id", "app", "host", "h1", "pid",
                              (json_int_t)(100 + i), "started_at",
                              "2026-01-01T00:00:00Z", "name", "app#producer-1",
                              "librdkafka_version", "2.0.2", "keyshift_version",
                              "0.1.0", "partitioner", "consistent_random",
                              "generated_at", "2026-01-01T00:00:01Z",
                              "last_record_at",
                              i == 1 ? "2026-01-01T00:00:01Z"
                                     : "2026-01-01T00:00:03Z",
                              "report_interval_ms", 1000, "state", state[i],
                              "topics", "orders", "merged", merged[i]));
                cnt[!strcmp(state[i], "stale")   ? 1
                    : !strcmp(state[i], "ended") ? 2
                                                 : 0]++;
                nmerged += merged[i];
        }
        fleet = json_pack(
            "{s:s, s:s, s:s, s:i, s:i, s:n, s:f, s:I, s:I, s:I, s:I, s:b, "
            "s:o}",
            "bootstrap", "b:9092", "report_topic", "keyshift-reports",
            "read_at", "2026-01-01T00:00:05Z", "records", 12, "records_garbage",
            0, "stale_after_s", "since_s", 86400.0, "live", (json_int_t)cnt[0],
            "stale", (json_int_t)cnt[1], "ended", (json_int_t)cnt[2], "merged",
            (json_int_t)nmerged, "live_only", 0, "producers", ps);
        CU_ASSERT_PTR_NOT_NULL_FATAL(fleet);
        json_object_set_new(rep, "fleet", fleet);
        snprintf(path, sizeof(path), "%s.fleet.json", report);
        CU_ASSERT_EQUAL_FATAL(json_dump_file(rep, path, JSON_COMPACT), 0);
        CU_ASSERT_EQUAL_FATAL(ks_clit_run(&r, "show '%s'", path), 0);
        snprintf(line, sizeof(line),
                 "  fleet: merges %lld of 5 producers (%lld live, %lld stale, "
                 "%lld ended), report topic keyshift-reports on b:9092, "
                 "read 2026-01-01T00:00:05Z\n",
                 nmerged, cnt[0], cnt[1], cnt[2]);
        CU_ASSERT(ks_clit_has(r.out, line));
        CU_ASSERT(ks_clit_has(r.out, "  stale producers (no record within "
                                     "--stale-after):\n"));
        for (i = 0; i < 5; i++) {
                snprintf(line, sizeof(line),
                         "    app@h1 pid %zu (app#producer-1), last record "
                         "%s, %s\n",
                         100 + i,
                         i == 1 ? "2026-01-01T00:00:01Z"
                                : "2026-01-01T00:00:03Z",
                         merged[i] ? "merged" : "not merged");
                CU_ASSERT_EQUAL(ks_clit_has(r.out, line),
                                !strcmp(state[i], "stale"));
        }
        ks_clit_run_free(&r);
        json_decref(rep);
}

/** @returns what `keyshift show` printed on a pseudo-terminal (owned). */
static char *show_on_tty(const char *no_color)
{
        int    fd;
        pid_t  pid = forkpty(&fd, NULL, NULL, NULL);
        char  *out = calloc(1, 1 << 20);
        size_t n   = 0;
        int    st;

        if (pid == 0) {
                if (no_color)
                        setenv("NO_COLOR", no_color, 1);
                else
                        unsetenv("NO_COLOR");
                execl(ks_clit_cli(), "keyshift", "show", report, (char *)NULL);
                _exit(127);
        }
        CU_ASSERT_FATAL(pid > 0);
        for (;;) {
                ssize_t got = read(fd, out + n, (1 << 20) - 1 - n);
                if (got <= 0) /* EIO once the child has gone */
                        break;
                n += (size_t)got;
        }
        close(fd);
        waitpid(pid, &st, 0);
        CU_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        return out;
}

static void test_show_colour_on_tty_only(void)
{
        char *tty = show_on_tty(NULL), *nc = show_on_tty("1");

        CU_ASSERT(ks_clit_has(tty, "topic orders"));
        CU_ASSERT(ks_clit_has(tty, "\033[1m"));  /* bold topic */
        CU_ASSERT(ks_clit_has(tty, "\033[31m")); /* red warnings */
        CU_ASSERT(ks_clit_has(nc, "topic orders"));
        CU_ASSERT(!ks_clit_has(nc, "\033["));
        free(tty);
        free(nc);
}

static void test_show_ais_replay(void)
{
        const char   *ais    = ks_test_shared_path("ais/risky_ais.txt.gz");
        const char   *replay = getenv("KS_REPLAY");
        char          path[700];
        struct stat   sb;
        ks_clit_run_t r;

        /* the log is committed (tests/data/ais): missing is a failure */
        if (stat(ais, &sb) || !replay)
                fprintf(stderr, "\n%s or $KS_REPLAY missing\n", ais);
        CU_ASSERT_FATAL(stat(ais, &sb) == 0 && replay != NULL);
        snprintf(path, sizeof(path), "%s/ais.json", ks_e2e_tmpdir("cli-ais"));
        CU_ASSERT_EQUAL_FATAL(
            ks_e2e_system("'%s' --plugin '%s' --report '%s' '%s' >/dev/null "
                          "2>&1",
                          replay, ks_e2e_plugin(), path, ais),
            0);
        CU_ASSERT_EQUAL(ks_clit_run(&r, "show '%s'", path), 0);
        CU_ASSERT(ks_clit_has(r.out, "topic ais: 6 -> 12 partitions"));
        CU_ASSERT(ks_clit_has(r.out, "34,013 messages"));
        CU_ASSERT(ks_clit_has(r.out, "16,828 (49.5%)"));
        CU_ASSERT(ks_clit_has(r.out, "1.22x"));
        CU_ASSERT(ks_clit_has(r.out, "5030045"));
        printf("%s", r.out);
        ks_clit_run_free(&r);
}

/* A grown topic's scan (issue 28): the history's greedy steps give
 * records both counts explain to the first step, so "consistent under 6
 * placed 29,657" when 60,000 were; show and html state the switch's
 * counts beside them, and say when some records are ambiguous. */
/** @returns @p n copies of @p v (null when @p v < 0): a per-partition
 *           column of the report. */
static json_t *column(int n, json_int_t v)
{
        json_t *c = json_array();
        int     i;

        for (i = 0; i < n; i++)
                json_array_append_new(c, v < 0 ? json_null() : json_integer(v));
        return c;
}

/** @returns a history step of @p family under @p count with @p records,
 *           over 12 partitions. */
static json_t *audit_step(const char *family, int count, json_int_t records)
{
        return json_pack("{s:s, s:i, s:I, s:I, s:{s:n, s:s, s:i, s:i, s:i},"
                         " s:{s:o, s:o, s:o, s:o}}",
                         "family", family, "count", count, "records", records,
                         "explained", records, "example", "key", "key_hex", "",
                         "key_bytes", 0, "partition", 0, "offset", 0,
                         "partitions", "records", column(12, 0), "explained",
                         column(12, 0), "first_offset", column(12, -1),
                         "last_offset", column(12, -1));
}

/** @returns the audit of a 12-partition topic grown from 6 (issue 28),
 *           @p sw its switch completed: every member the schema asks
 *           for, so that the check reads it. */
static json_t *audit_of_switch(json_t *sw)
{
        static const char *const counts[] = {
            "old_only",  "new_only", "both_old", "both_new",
            "ambiguous", "other",    "unkeyed",  NULL};
        static const char *const offsets[] = {
            "last_old_only_offset",   "first_new_only_offset",
            "ambiguous_first_offset", "ambiguous_last_offset",
            "switch_offset",          NULL};
        const char *const *k;
        json_t            *parts = json_object(), *used = json_array();
        int                i;

        for (k = counts; *k; k++)
                json_object_set_new(parts, *k, column(12, 0));
        for (k = offsets; *k; k++)
                json_object_set_new(parts, *k, column(12, -1));
        for (i = 0; i < 12; i++)
                json_array_append_new(used, json_false());
        json_object_set_new(parts, "offsets_used", used);
        json_object_set_new(sw, "old_only_last_ms", json_null());
        json_object_set_new(sw, "new_only_first_ms", json_null());
        json_object_set_new(sw, "not_kept", json_integer(0));
        json_object_set_new(sw, "other_records", json_integer(0));
        json_object_set_new(sw, "unkeyed_records", json_integer(0));
        json_object_set_new(sw, "partitions", parts);
        return json_pack(
            "{s:i, s:[s,s,s], s:i, s:i, s:i, s:{s:{s:i, s:i}}, s:i, s:o, s:n,"
            " s:{s:s, s:f, s:i, s:n, s:[o,o], s:i, s:i, s:i},"
            " s:{s:i, s:{}, s:s}, s:s, s:s, s:o}",
            "partition_count", 12, "families", "consistent", "murmur2", "fnv1a",
            "keyed_records", 120000, "unkeyed_records", 0,
            "records_out_of_range", 0, "explained", "consistent", "12", 90343,
            "6", 29657, "unexplained", 0, "unexplained_by_partition",
            column(12, 0), "unexplained_example", "history", "method",
            "greedy set cover", "min_share", 0.001, "uncovered_records", 0,
            "uncovered_example", "steps", audit_step("consistent", 12, 90343),
            audit_step("consistent", 6, 29657), "signature_groups", 2,
            "signature_groups_max", 65536, "records_not_grouped", 0, "newest",
            "per_partition", 256, "explained", "family", "consistent",
            "proposals_partitioner", "consistent_random",
            "proposals_partitioner_source", "audit", "switch", sw);
}

/** @returns a switch of 6 -> 12 at @p moment with these records. */
static json_t *switch_of(const char *moment, int old, int new_, int amb)
{
        return json_pack("{s:s, s:i, s:i, s:s, s:i, s:i, s:i, s:b}", "family",
                         "consistent", "old_count", 6, "new_count", 12,
                         "moment", moment, "old_records", old, "new_records",
                         new_, "ambiguous_records", amb, "exact", amb == 0);
}

static void test_show_audit_switch(void)
{
        ks_clit_run_t r;
        json_t       *rep;
        char          path[700];
        char         *html;

        ks_clit_make_report(report, 20000);
        rep = ks_e2e_load_json(report);
        CU_ASSERT_PTR_NOT_NULL_FATAL(rep);
        json_object_set_new(ks_e2e_get(rep, "topics/orders"), "audit",
                            audit_of_switch(switch_of("one", 60000, 60000, 0)));
        snprintf(path, sizeof(path), "%s.switch.json", report);
        CU_ASSERT_FATAL(json_dump_file(rep, path, 0) == 0);
        ks_test_report_valid(path);
        CU_ASSERT_EQUAL_FATAL(ks_clit_run(&r, "show --color never '%s'", path),
                              0);
        squeeze(r.out);
        CU_ASSERT(ks_clit_has(r.out, "consistent under 6 placed 29,657"));
        CU_ASSERT(ks_clit_has(r.out, "(consistent 6 -> 12, at one moment): "
                                     "60,000 records placed under 6, 60,000 "
                                     "under 12 (exact)"));
        ks_clit_run_free(&r);
        html = html_of(path);
        CU_ASSERT_PTR_NOT_NULL_FATAL(html);
        CU_ASSERT(ks_clit_has(html, "60,000 records placed under 6"));
        free(html);

        json_object_set_new(
            ks_e2e_get(rep, "topics/orders"), "audit",
            audit_of_switch(switch_of("interleaved", 34937, 24948, 10115)));
        CU_ASSERT_FATAL(json_dump_file(rep, path, 0) == 0);
        CU_ASSERT_EQUAL_FATAL(ks_clit_run(&r, "show --color never '%s'", path),
                              0);
        squeeze(r.out);
        CU_ASSERT(ks_clit_has(r.out, "producers switched at different "
                                     "moments): 34,937 records placed under "
                                     "6, 24,948 under 12, 10,115 ambiguous"));
        CU_ASSERT(!ks_clit_has(r.out, "under 12 (exact)"));
        ks_clit_run_free(&r);
        json_decref(rep);
}

void ks_test_register(void)
{
        CU_pSuite s = CU_add_suite("cli show", setup, NULL);
        CU_add_test(s, "figures match the report", test_show_figures);
        CU_add_test(s, "hot-key verdicts in show and html",
                    test_show_hot_verdicts);
        CU_add_test(s, "one story: the report's summary, show and html",
                    test_one_story);
        CU_add_test(s, "sizing only from real inputs",
                    test_sizing_only_from_inputs);
        CU_add_test(s, "a multi-byte hot key keeps the columns",
                    test_show_utf8_key_columns);
        CU_add_test(s, "colour on a terminal only",
                    test_show_colour_on_tty_only);
        CU_add_test(s, "producer warnings before the topics",
                    test_show_producer_warnings_first);
        CU_add_test(s, "the AIS replay's report", test_show_ais_replay);
        CU_add_test(s, "a fleet report's producers, the stale ones listed",
                    test_show_fleet);
        CU_add_test(s, "a grown topic's audit states the switch",
                    test_show_audit_switch);
}
