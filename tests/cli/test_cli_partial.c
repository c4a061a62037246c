/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_cli_partial.c
 * @brief Honest labels in every command: reports of topics whose messages
 *        were skipped on a full staging ring (ks_topic_note_unanalysed(),
 *        as on_send does when the analysis falls behind) are read by
 *        `keyshift show`, `html`, `metrics` and `merge`, and each says
 *        "partial: keyshift analysed X of Y messages (P %)" first, with
 *        X, Y and P computed here from the stream, never calls a count
 *        exact, and a merge keeps the sums; distinct and moved keys are
 *        stated with their sketch's error, of the analysed messages' keys,
 *        more possible among the skipped (never a lower bound: the
 *        estimate can be above the keys produced), and the keys counted
 *        here from the stream lie in the range stated; complete reports
 *        say nothing of the kind; the report check refuses an `analysis`
 *        that does not restate the topic's counts.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <librdkafka/rdkafka.h>

#include "cli_test_support.h"
#include "ks_e2e_support.h"
#include "ks_hll.h"
#include "ks_report.h"
#include "ks_sizing.h"
#include "ks_test.h"

static char dir[512], partial[700], other[700], complete[700], estimated[700];

/** @brief "34,013". */
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

/** @brief The line every command must print first for @p analysed of
 *         @p produced messages (whole percentages only: the streams here
 *         are chosen so). */
static const char *partial_line(long long analysed, long long produced,
                                char *buf, size_t size)
{
        char a[32], p[32];

        snprintf(buf, size,
                 "partial: keyshift analysed %s of %s messages (%.0f %%)",
                 commas(analysed, a), commas(produced, p),
                 100.0 * (double)analysed / (double)produced);
        return buf;
}

/** The keys of a stream of @p n messages, key i the (i x 7919 mod
 *  @p keys)-th, counted here (the oracle). */
typedef struct truth {
        long long all;      /**< of every message */
        long long analysed; /**< of the messages not skipped */
        long long moved[2], moved_analysed[2]; /**< of those, the keys
                                                *   whose partition at 6
                                                *   differs at 12, 16 */
} truth_t;

/** @brief *tr += the distinct keys of write_report()'s stream, @p seen
 *         (by key index, @p keys of them) marked 1 for a key seen, 2 for
 *         a key analysed: several streams of one set count once. */
static void truth_mark(int n, int skip_in_5, int keys, unsigned char *seen)
{
        int i;

        for (i = 0; i < n; i++)
                seen[(i * 7919) % keys] |= i % 5 < skip_in_5 ? 1 : 3;
}

/** @brief *tr := the keys @p seen marks, moved ones by librdkafka's own
 *         murmur2 partitioner (what murmur2_random does with a key). */
static void truth_count(const unsigned char *seen, int keys, truth_t *tr)
{
        static const int counts[2] = {12, 16};
        int              i, j;

        memset(tr, 0, sizeof(*tr));
        for (i = 0; i < keys; i++) {
                char    key[32];
                size_t  kl;
                int32_t now;
                if (!seen[i])
                        continue;
                kl  = (size_t)snprintf(key, sizeof(key), "order-%d", i);
                now = rd_kafka_msg_partitioner_murmur2(NULL, key, kl, 6, NULL,
                                                       NULL);
                tr->all++;
                tr->analysed += seen[i] >> 1;
                for (j = 0; j < 2; j++) {
                        int mv =
                            now != rd_kafka_msg_partitioner_murmur2(
                                       NULL, key, kl, counts[j], NULL, NULL);
                        tr->moved[j] += mv;
                        tr->moved_analysed[j] += mv && (seen[i] >> 1);
                }
        }
}

/** @brief *tr := the keys of write_report()'s stream. */
static void truth_of(int n, int skip_in_5, int keys, truth_t *tr)
{
        unsigned char *seen = calloc((size_t)keys, 1);

        CU_ASSERT_PTR_NOT_NULL_FATAL(seen);
        truth_mark(n, skip_in_5, keys, seen);
        truth_count(seen, keys, tr);
        free(seen);
}

/**
 * @brief The range a distinct-key figure states holds the oracle: the
 *        estimate @p est with its standard error @p err (keys), at 3
 *        standard errors, covers the analysed messages' keys
 *        @p analysed, and, with the @p more messages not analysed added
 *        upward (each can add one key), the keys produced @p all.
 */
static void check_range(const char *what, double est, double err,
                        long long analysed, long long all, long long more)
{
        printf("\n    %s: %.0f +/- %.1f (analysed %lld, produced %lld, "
               "%lld messages not analysed)",
               what, est, err, analysed, all, more);
        CU_ASSERT(err >= 0);
        CU_ASSERT(fabs(est - (double)analysed) <= 3 * err + 0.5);
        CU_ASSERT((double)all >= est - 3 * err - 0.5);
        CU_ASSERT((double)all <= est + 3 * err + (double)more + 0.5);
}

/** @brief The JSON's distinct and moved keys of @p t against @p tr. */
static void check_json_keys(const char *what, json_t *t, const truth_t *tr,
                            long long more)
{
        double est = (double)ks_e2e_int(t, "keys/distinct_estimate");
        char   label[96];
        size_t i;

        CU_ASSERT(json_is_number(ks_e2e_get(t, "keys/distinct_error")));
        CU_ASSERT(json_is_true(ks_e2e_get(t, "keys/distinct_lower_bound")));
        snprintf(label, sizeof(label), "%s: distinct keys", what);
        check_range(label, est,
                    est *
                        json_number_value(ks_e2e_get(t, "keys/distinct_error")),
                    tr->analysed, tr->all, more);
        for (i = 0; i < 2; i++) {
                json_t *mv = json_object_get(
                    json_array_get(json_object_get(t, "proposals"), i),
                    "moved");
                CU_ASSERT(
                    json_is_number(json_object_get(mv, "distinct_keys_error")));
                snprintf(label, sizeof(label), "%s: moved keys at %d", what,
                         i ? 16 : 12);
                check_range(label, (double)ks_e2e_int(mv, "distinct_keys"),
                            json_number_value(
                                json_object_get(mv, "distinct_keys_error")),
                            tr->moved_analysed[i], tr->moved[i], more);
        }
}

/**
 * @brief Writes a producer's report to @p path: topic "orders", 6
 *        partitions, 12 and 16 proposed, @p n messages of @p keys keys
 *        (truth_of()), a key sample of @p sample keys, every message i
 *        with i % 5 < @p skip_in_5 skipped instead of analysed.
 */
static void write_report(const char *path, int pid, int n, int skip_in_5,
                         int keys, size_t sample)
{
        ks_sizing_params_t   sp;
        ks_report_opts_t     o  = {20, 5000, 1, &sp, 1e6, 1e9, 0, 0, NULL};
        ks_report_producer_t p  = {.client_id          = "orders-app",
                                   .client_name        = "orders-app#producer-1",
                                   .pid                = pid,
                                   .librdkafka_version = "2.0.2",
                                   .partitioner        = "murmur2_random",
                                   .partitioner_source = "partitioner",
                                   .started_at_ms      = 1000,
                                   .report_interval_ms = 60000};
        ks_topic_params_t    tp = {0};
        ks_topic_snapshot_t  s;
        ks_warn_list_t       wl;
        ks_topic_t          *t;
        json_t              *topics = json_object(), *r;
        char                 err[256];
        int                  i;

        ks_sizing_params_init(&sp);
        ks_warn_list_init(&wl);
        tp.partitioner       = KS_PARTITIONER_MURMUR2_RANDOM;
        tp.key_sample_size   = sample;
        tp.mixed_sample_size = 64;
        tp.topk_capacity     = 32;
        tp.flow_max_cells    = 1000;
        tp.pending_max       = 10;
        tp.proposed[0]       = 12;
        tp.proposed[1]       = 16;
        tp.proposed_cnt      = 2;
        t                    = ks_topic_new("orders", &tp, 1000);
        ks_topic_set_partition_count(t, 6, KS_COUNT_CONFIG, 1000);
        for (i = 0; i < n; i++) {
                char key[32];
                snprintf(key, sizeof(key), "order-%d", (i * 7919) % keys);
                if (i % 5 < skip_in_5)
                        ks_topic_note_unanalysed(t);
                else
                        ks_topic_record(t, key, strlen(key), -1, 100);
        }
        CU_ASSERT_EQUAL_FATAL(ks_topic_snapshot(t, &s), 0);
        json_object_set_new(topics, "orders", ks_report_topic(&s, &o, &wl));
        r = ks_report_build(&p, &o, topics, &wl);
        CU_ASSERT_EQUAL(ks_report_write_atomic(r, path, err, sizeof(err)), 0);
        json_decref(r);
        ks_topic_snapshot_free(&s);
        ks_topic_destroy(t);
        ks_warn_list_clear(&wl);
}

static int setup(void)
{
        snprintf(dir, sizeof(dir), "%s", ks_e2e_tmpdir("cli-labels"));
        snprintf(partial, sizeof(partial), "%s/partial.json", dir);
        snprintf(other, sizeof(other), "%s/other.json", dir);
        snprintf(complete, sizeof(complete), "%s/complete.json", dir);
        snprintf(estimated, sizeof(estimated), "%s/estimated.json", dir);
        return 0;
}

/** The reports the tests read, built by the core as the plugin's are. */
static void test_write(void)
{
        /* 3,600 of 6,000 (60 %), a key sample that holds every key: the
         * analysed messages' keys all counted ("exact" before) */
        write_report(partial, 101, 6000, 2, 900, 4096);
        write_report(other, 102, 3000, 0, 900, 4096); /* complete */
        write_report(complete, 103, 2000, 0, 900, 4096);
        /* 18,000 of 30,000 (60 %), more keys than the sample holds: the
         * HyperLogLog's estimate */
        write_report(estimated, 104, 30000, 2, 6000, 64);
}

/** @returns the line of @p out that begins with @p prefix (a copy in
 *           @p buf), or NULL. */
static const char *line_of(const char *out, const char *prefix, char *buf,
                           size_t size)
{
        const char *p = strstr(out, prefix), *e;

        if (!p)
                return NULL;
        e = strchr(p, '\n');
        snprintf(buf, size, "%.*s", (int)(e ? e - p : (long)strlen(p)), p);
        return buf;
}

/** `show`: the partial line first, the topic's headline begins with it,
 *  moved message counts say ">="; distinct keys and moved keys are the
 *  analysed messages' (all counted: the keys counted here), more possible
 *  among the skipped, never a lower bound. */
static void test_show(void)
{
        ks_clit_run_t r;
        char          line[160], want[256], n[32], m[32], row[512];
        truth_t       tr;

        truth_of(6000, 2, 900, &tr);
        partial_line(3600, 6000, line, sizeof(line));
        CU_ASSERT_EQUAL_FATAL(ks_clit_run(&r, "show '%s'", partial), 0);
        CU_ASSERT_EQUAL(strncmp(r.out, line, strlen(line)), 0);
        CU_ASSERT_EQUAL(r.out[strlen(line)], '\n');
        snprintf(want, sizeof(want), "\n  %s:", line); /* the headline */
        CU_ASSERT(ks_clit_has(r.out, want));
        snprintf(want, sizeof(want),
                 "  keys     %s distinct in the analysed messages (all "
                 "counted); more may be among the %s messages not analysed",
                 commas(tr.analysed, n), commas(2400, m));
        if (!ks_clit_has(r.out, want))
                printf("\n    wanted \"%s\"", want);
        CU_ASSERT(ks_clit_has(r.out, want));
        CU_ASSERT(tr.analysed < tr.all && tr.all <= tr.analysed + 2400);
        CU_ASSERT(!ks_clit_has(r.out, "  keys     >="));
        CU_ASSERT(!ks_clit_has(r.out, "a lower bound"));
        CU_ASSERT(!ks_clit_has(r.out, "(exact)"));
        /* moved: messages a lower bound, keys not */
        CU_ASSERT_PTR_NOT_NULL_FATAL(
            line_of(r.out, "  6 -> 12", row, sizeof(row)));
        CU_ASSERT(ks_clit_has(row, ">="));
        CU_ASSERT(!ks_clit_has(strstr(row, ">=") + 2, ">="));
        snprintf(want, sizeof(want),
                 "  distinct keys that move: of the analysed messages' keys; "
                 "more may be among the %s messages not analysed\n",
                 commas(2400, m));
        CU_ASSERT(ks_clit_has(r.out, want));
        CU_ASSERT(ks_clit_has(r.out, "ANALYSIS_BEHIND"));
        ks_clit_run_free(&r);

        CU_ASSERT_EQUAL_FATAL(ks_clit_run(&r, "show '%s'", complete), 0);
        CU_ASSERT_EQUAL(strncmp(r.out, "keyshift report ", 16), 0);
        CU_ASSERT(!ks_clit_has(r.out, "partial: "));
        CU_ASSERT(!ks_clit_has(r.out, ">="));
        CU_ASSERT(!ks_clit_has(r.out, "analysed messages"));
        CU_ASSERT(!ks_clit_has(r.out, "more may be"));
        CU_ASSERT(ks_clit_has(r.out, " distinct (exact)"));
        ks_clit_run_free(&r);
}

/** @returns the number "12,345" at @p s, commas skipped; -1 if none. */
static long long uncomma(const char *s)
{
        long long v = -1;

        for (; s && (*s == ',' || (*s >= '0' && *s <= '9')); s++)
                if (*s != ',')
                        v = (v < 0 ? 0 : v * 10) + (*s - '0');
        return v;
}

/** More keys than the key sample holds, 40 % skipped: the report, and
 *  `show`, state the HyperLogLog's estimate with its error (as when
 *  complete), of the analysed messages' keys, more possible among the
 *  skipped; the keys counted here lie in the range `show` prints, and in
 *  the report's for distinct and moved keys. */
static void test_show_estimated(void)
{
        ks_clit_run_t r;
        char          row[512], want[128], m[32];
        const char   *p;
        truth_t       tr;
        json_t       *j, *t;
        double        est, pct;
        long long     more;

        truth_of(30000, 2, 6000, &tr);
        j = ks_e2e_load_json(estimated);
        CU_ASSERT_PTR_NOT_NULL_FATAL(j);
        t = ks_e2e_get(j, "topics/orders");
        CU_ASSERT_EQUAL(json_number_value(ks_e2e_get(t, "keys/distinct_error")),
                        ks_hll_std_error());
        check_json_keys("report", t, &tr, 12000);
        json_decref(j);

        CU_ASSERT_EQUAL_FATAL(ks_clit_run(&r, "show '%s'", estimated), 0);
        CU_ASSERT_PTR_NOT_NULL_FATAL(
            line_of(r.out, "  keys     ", row, sizeof(row)));
        printf("\n    %s", row);
        est = (double)uncomma(row + 11);
        p   = strstr(row, " distinct in the analysed messages (estimate +-");
        CU_ASSERT_PTR_NOT_NULL_FATAL(p);
        pct = strtod(p + strlen(" distinct in the analysed messages "
                                "(estimate +-"),
                     NULL);
        snprintf(want, sizeof(want),
                 "%%); more may be among the %s messages not analysed",
                 commas(12000, m));
        p = strstr(row, want);
        CU_ASSERT_PTR_NOT_NULL_FATAL(p);
        more = uncomma(strstr(row, "among the ") + 10);
        CU_ASSERT_EQUAL(more, 12000);
        CU_ASSERT(pct > 0);
        check_range("show: distinct keys", est, est * pct / 100, tr.analysed,
                    tr.all, more);
        ks_clit_run_free(&r);
}

/** `html`: the partial line first in the page's header, and the topic's
 *  verdict begins with it; distinct and moved keys are the analysed
 *  messages', more possible among the skipped. */
static void test_html(void)
{
        ks_clit_run_t r;
        char          line[160], want[256], n[32];
        truth_t       tr;

        truth_of(6000, 2, 900, &tr);
        partial_line(3600, 6000, line, sizeof(line));
        CU_ASSERT_EQUAL_FATAL(ks_clit_run(&r, "html '%s' -o -", partial), 0);
        snprintf(want, sizeof(want),
                 "<header><p class=\"ks-partial\">%s</p><h1>", line);
        CU_ASSERT(ks_clit_has(r.out, want));
        snprintf(want, sizeof(want), "<p class=\"verdict\">%s:", line);
        CU_ASSERT(ks_clit_has(r.out, want));
        CU_ASSERT(ks_clit_has(r.out, "(at least ")); /* moved messages */
        /* keys: the analysed messages', more possible among the others */
        CU_ASSERT(!ks_clit_has(r.out, "of at least "));
        CU_ASSERT(ks_clit_has(r.out, " in the analysed messages: more may be "
                                     "among the 2,400 messages not "
                                     "analysed)"));
        snprintf(want, sizeof(want),
                 "of %s distinct keys in the analysed messages (more may be "
                 "among the 2,400 messages not analysed)",
                 commas(tr.analysed, n));
        CU_ASSERT(ks_clit_has(r.out, want));
        ks_clit_run_free(&r);

        CU_ASSERT_EQUAL_FATAL(ks_clit_run(&r, "html '%s' -o -", complete), 0);
        CU_ASSERT(ks_clit_has(r.out, "<header><h1>"));
        CU_ASSERT(!ks_clit_has(r.out, "partial: "));
        ks_clit_run_free(&r);
}

/** `metrics`: the analysed fraction and the skipped messages. */
static void test_metrics(void)
{
        ks_clit_run_t r;

        CU_ASSERT_EQUAL_FATAL(ks_clit_run(&r, "metrics '%s'", partial), 0);
        CU_ASSERT(ks_clit_has(r.out, "# TYPE keyshift_analysed_messages_ratio "
                                     "gauge\n"));
        CU_ASSERT(ks_clit_has(r.out, "keyshift_analysed_messages_ratio{"
                                     "client_id=\"orders-app\",pid=\"101\","
                                     "topic=\"orders\"} 0.6\n"));
        CU_ASSERT(ks_clit_has(r.out, "keyshift_unanalysed_messages_total{"
                                     "client_id=\"orders-app\",pid=\"101\","
                                     "topic=\"orders\"} 2400\n"));
        ks_clit_run_free(&r);
        CU_ASSERT_EQUAL_FATAL(ks_clit_run(&r, "metrics '%s'", complete), 0);
        CU_ASSERT(ks_clit_has(r.out, "keyshift_analysed_messages_ratio{"
                                     "client_id=\"orders-app\",pid=\"103\","
                                     "topic=\"orders\"} 1\n"));
        ks_clit_run_free(&r);
}

/** `merge`: a partial input makes the merged topic partial, with the
 *  sums; two complete inputs merge complete. */
static void test_merge(void)
{
        ks_clit_run_t  r;
        char           merged[800], line[160], want[256];
        json_t        *m, *t, *mv;
        size_t         i;
        unsigned char *seen;
        truth_t        tr;

        snprintf(merged, sizeof(merged), "%s/merged.json", dir);
        CU_ASSERT_EQUAL_FATAL(
            ks_clit_run(&r, "merge '%s' '%s' -o '%s'", partial, other, merged),
            0);
        ks_clit_run_free(&r);
        m = ks_e2e_load_json(merged);
        CU_ASSERT_PTR_NOT_NULL_FATAL(m);
        t = ks_e2e_get(m, "topics/orders");
        CU_ASSERT_EQUAL(ks_e2e_int(t, "messages"), 6600);
        CU_ASSERT_EQUAL(ks_e2e_int(t, "keys/unanalysed"), 2400);
        CU_ASSERT_EQUAL(ks_e2e_int(t, "analysis/messages_produced"), 9000);
        CU_ASSERT_EQUAL(ks_e2e_int(t, "analysis/messages_analysed"), 6600);
        CU_ASSERT_EQUAL(ks_e2e_int(t, "analysis/messages_unanalysed"), 2400);
        CU_ASSERT(json_is_false(ks_e2e_get(t, "analysis/complete")));
        CU_ASSERT_DOUBLE_EQUAL(
            json_number_value(ks_e2e_get(t, "analysis/analysed_fraction")),
            6600.0 / 9000.0, 1e-12);
        /* the merged key sample holds every key: all counted, the
         * analysed messages' */
        CU_ASSERT_EQUAL(json_number_value(ks_e2e_get(t, "keys/distinct_error")),
                        0.0);
        CU_ASSERT(json_is_true(ks_e2e_get(t, "keys/distinct_lower_bound")));
        seen = calloc(6000, 1);
        CU_ASSERT_PTR_NOT_NULL_FATAL(seen);
        truth_mark(6000, 2, 900, seen);
        truth_mark(3000, 0, 900, seen);
        truth_count(seen, 900, &tr);
        check_json_keys("merge", t, &tr, 2400);
        for (i = 0; i < 2; i++) {
                mv = json_object_get(
                    json_array_get(json_object_get(t, "proposals"), i),
                    "moved");
                CU_ASSERT(json_is_false(json_object_get(mv, "messages_exact")));
                CU_ASSERT(json_number_value(json_object_get(
                              mv, "messages_fraction_error")) > 0);
                CU_ASSERT(json_number_value(json_object_get(
                              mv, "distinct_keys_fraction_error")) > 0);
        }
        /* 6,600 of 9,000 is 73.3 %: the line says 73 */
        snprintf(line, sizeof(line),
                 "partial: keyshift analysed 6,600 of 9,000 messages (73 %%)");
        CU_ASSERT_EQUAL(
            strncmp(json_string_value(json_object_get(t, "summary")), line,
                    strlen(line)),
            0);
        json_decref(m);
        CU_ASSERT_EQUAL_FATAL(ks_clit_run(&r, "show '%s'", merged), 0);
        snprintf(want, sizeof(want), "%s\n", line);
        CU_ASSERT_EQUAL(strncmp(r.out, want, strlen(want)), 0);
        ks_clit_run_free(&r);

        CU_ASSERT_EQUAL_FATAL(
            ks_clit_run(&r, "merge '%s' '%s' -o '%s'", other, complete, merged),
            0);
        ks_clit_run_free(&r);
        m = ks_e2e_load_json(merged);
        CU_ASSERT_PTR_NOT_NULL_FATAL(m);
        t = ks_e2e_get(m, "topics/orders");
        CU_ASSERT(json_is_true(ks_e2e_get(t, "analysis/complete")));
        CU_ASSERT_EQUAL(ks_e2e_int(t, "analysis/messages_produced"), 5000);
        CU_ASSERT_EQUAL(json_number_value(ks_e2e_get(t, "keys/distinct_error")),
                        0.0);
        CU_ASSERT(json_is_false(ks_e2e_get(t, "keys/distinct_lower_bound")));
        CU_ASSERT(!strstr(json_string_value(json_object_get(t, "summary")),
                          "partial"));
        json_decref(m);

        /* the estimated report and a complete one: the merged sketches'
         * estimate with its error, of the union's analysed keys */
        CU_ASSERT_EQUAL_FATAL(ks_clit_run(&r, "merge '%s' '%s' -o '%s'",
                                          estimated, other, merged),
                              0);
        ks_clit_run_free(&r);
        m = ks_e2e_load_json(merged);
        CU_ASSERT_PTR_NOT_NULL_FATAL(m);
        t = ks_e2e_get(m, "topics/orders");
        CU_ASSERT_EQUAL(json_number_value(ks_e2e_get(t, "keys/distinct_error")),
                        ks_hll_std_error());
        memset(seen, 0, 6000);
        truth_mark(30000, 2, 6000, seen);
        truth_mark(3000, 0, 900, seen);
        truth_count(seen, 6000, &tr);
        check_json_keys("merge, estimated", t, &tr, 12000);
        json_decref(m);
        free(seen);
}

/** The report check: an `analysis` that does not restate the topic's
 *  counts, distinct keys that say more may be among messages not analysed
 *  when none was, or not when some were (or, as earlier versions wrote, a
 *  null distinct_error without it), or a moved-keys error that is not a
 *  number, is refused with its path. */
static void test_check(void)
{
        ks_clit_run_t r;
        char          bad[800];
        json_t       *j = ks_e2e_load_json(partial), *t;

        CU_ASSERT_PTR_NOT_NULL_FATAL(j);
        t = ks_e2e_get(j, "topics/orders");
        json_object_set_new(json_object_get(t, "analysis"),
                            "messages_unanalysed", json_integer(0));
        snprintf(bad, sizeof(bad), "%s/bad-analysis.json", dir);
        CU_ASSERT_EQUAL(json_dump_file(j, bad, 0), 0);
        CU_ASSERT_EQUAL(ks_clit_run(&r, "show '%s'", bad), 1);
        CU_ASSERT(ks_clit_has(r.err, "topics.orders.analysis: does not "
                                     "restate messages, keys.unanalysed"));
        ks_clit_run_free(&r);
        json_decref(j);

        j = ks_e2e_load_json(partial);
        t = ks_e2e_get(j, "topics/orders");
        json_object_set_new(json_object_get(t, "keys"), "distinct_lower_bound",
                            json_false());
        snprintf(bad, sizeof(bad), "%s/bad-distinct.json", dir);
        CU_ASSERT_EQUAL(json_dump_file(j, bad, 0), 0);
        CU_ASSERT_EQUAL(ks_clit_run(&r, "metrics '%s'", bad), 1);
        CU_ASSERT(ks_clit_has(r.err,
                              "topics.orders.keys.distinct_lower_bound: must "
                              "be true exactly when analysis.complete is "
                              "false"));
        ks_clit_run_free(&r);
        /* earlier versions: a null error, which said a lower bound */
        json_object_set_new(json_object_get(t, "keys"), "distinct_error",
                            json_null());
        CU_ASSERT_EQUAL(json_dump_file(j, bad, 0), 0);
        CU_ASSERT_EQUAL(ks_clit_run(&r, "metrics '%s'", bad), 1);
        CU_ASSERT(ks_clit_has(r.err, "topics.orders.keys.distinct_error"));
        ks_clit_run_free(&r);
        json_decref(j);

        /* a complete analysis whose keys say more may be elsewhere */
        j = ks_e2e_load_json(complete);
        t = ks_e2e_get(j, "topics/orders");
        json_object_set_new(json_object_get(t, "keys"), "distinct_lower_bound",
                            json_true());
        CU_ASSERT_EQUAL(json_dump_file(j, bad, 0), 0);
        CU_ASSERT_EQUAL(ks_clit_run(&r, "show '%s'", bad), 1);
        CU_ASSERT(
            ks_clit_has(r.err, "topics.orders.keys.distinct_lower_bound"));
        ks_clit_run_free(&r);
        /* a moved-keys error that is not a number */
        json_object_set_new(json_object_get(t, "keys"), "distinct_lower_bound",
                            json_false());
        json_object_set_new(
            json_object_get(json_array_get(json_object_get(t, "proposals"), 0),
                            "moved"),
            "distinct_keys_error", json_string("12"));
        CU_ASSERT_EQUAL(json_dump_file(j, bad, 0), 0);
        CU_ASSERT_EQUAL(ks_clit_run(&r, "show '%s'", bad), 1);
        CU_ASSERT(ks_clit_has(
            r.err, "topics.orders.proposals[0].moved.distinct_keys_error"));
        ks_clit_run_free(&r);
        json_decref(j);
}

/** A report without `analysis` (keyshift 0.1.0 before it existed wrote
 *  v1 reports, which this keyshift refuses): refused by every command,
 *  which names the member, rather than read as an old report. */
static void test_no_analysis(void)
{
        static const char *const cmds[] = {"show '%s'", "metrics '%s'",
                                           "html '%s' -o -", NULL};
        const char *const       *cmd;
        ks_clit_run_t            r;
        char                     old[800];
        json_t                  *j = ks_e2e_load_json(partial);

        CU_ASSERT_PTR_NOT_NULL_FATAL(j);
        json_object_del(ks_e2e_get(j, "topics/orders"), "analysis");
        snprintf(old, sizeof(old), "%s/no-analysis.json", dir);
        CU_ASSERT_EQUAL(json_dump_file(j, old, 0), 0);
        json_decref(j);
        for (cmd = cmds; *cmd; cmd++) {
                CU_ASSERT_EQUAL(ks_clit_run(&r, *cmd, old), 1);
                CU_ASSERT(
                    ks_clit_has(r.err, "topics.orders.analysis: missing"));
                ks_clit_run_free(&r);
        }
}

void ks_test_register(void)
{
        CU_pSuite s = CU_add_suite("partial reports", setup, NULL);
        CU_add_test(s, "reports: one partial, two complete", test_write);
        CU_add_test(s, "show: partial first, lower bounds", test_show);
        CU_add_test(s, "show: distinct keys estimated, with their error",
                    test_show_estimated);
        CU_add_test(s, "html: partial first", test_html);
        CU_add_test(s, "metrics: analysed fraction", test_metrics);
        CU_add_test(s, "merge: sums, stays partial", test_merge);
        CU_add_test(s, "report check: analysis restates the counts",
                    test_check);
        CU_add_test(s, "a report without analysis: refused", test_no_analysis);
}
