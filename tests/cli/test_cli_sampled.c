/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_cli_sampled.c
 * @brief Sampled reports (issue 33) in every command: reports of topics
 *        whose producing threads sampled under overload (built here as the
 *        engine does: a staged message recorded as a run of weight N,
 *        ks_topic_note_sampled_in(); the others ks_topic_note_sampled_out())
 *        are read by `keyshift show`, `html`, `metrics` and `merge`, and
 *        each says "estimated: the producer was out of CPU for S s of U
 *        (keyshift analysed 1 message in up to N then); figures below are
 *        estimates (+/- 3 sigma)" first (after the partial line when
 *        messages were skipped too); a merge sums the counters, keeps the
 *        largest N, sums the seconds and uptimes (producer-seconds) and
 *        recomputes the errors; the report check refuses inconsistent
 *        sampling counters, naming the field.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_test_support.h"
#include "ks_e2e_support.h"
#include "ks_report.h"
#include "ks_sizing.h"
#include "ks_test.h"

static char dir[512], sampled[700], both[700], complete[700], complete2[700],
    merged[800];

static uint64_t next(uint64_t *x)
{ /* splitmix64 */
        uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
        z          = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z          = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
}

/**
 * @brief Writes a producer's report to @p path: topic "orders", 6
 *        partitions, 12 and 16 proposed, @p n messages of 900 keys at 1 ms
 *        each from monotonic 1,000 ms (uptime @p n / 1,000 s): messages
 *        in [n / 4, 3 n / 4) sampled one in 2^@p shift (0: none), and
 *        every i % 5 < @p skip_in_5 skipped.
 */
static void write_report(const char *path, int pid, int n, unsigned shift,
                         int skip_in_5)
{
        ks_sizing_params_t sp;
        ks_report_opts_t   o = {20, 1000 + n, 1, &sp, 1e6, 1e9, 0, 1000, NULL};
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
        uint64_t             coin = (uint64_t)pid, w = (uint64_t)1 << shift;
        int                  i;

        ks_sizing_params_init(&sp);
        ks_warn_list_init(&wl);
        tp.partitioner       = KS_PARTITIONER_MURMUR2_RANDOM;
        tp.key_sample_size   = 4096;
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
                char           key[32];
                size_t         kl;
                ks_key_facts_t f;

                kl = (size_t)snprintf(key, sizeof(key), "order-%d",
                                      (i * 7919) % 900);
                if (i % 5 < skip_in_5) {
                        ks_topic_note_unanalysed(t);
                        continue;
                }
                if (!shift || i < n / 4 || i >= 3 * n / 4) {
                        ks_topic_record_at(t, key, kl, -1, 100, 1000 + i);
                        continue;
                }
                if (next(&coin) & (w - 1)) {
                        ks_topic_note_sampled_out(t, 0, kl + 100);
                        continue;
                }
                ks_topic_note_sampled_in(t, shift, kl + 100, 1000 + i);
                ks_topic_key_facts(t, key, kl, -1, &f);
                ks_topic_lock(t);
                ks_topic_record_run_locked(t, key, kl, -1, &f, w,
                                           w * (kl + 100), KS_RUN_HOT_NOW);
                ks_topic_rate_locked(t, 1000 + i, w, w * (kl + 100));
                ks_topic_unlock(t);
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
        snprintf(dir, sizeof(dir), "%s", ks_e2e_tmpdir("cli-sampled"));
        snprintf(sampled, sizeof(sampled), "%s/sampled.json", dir);
        snprintf(both, sizeof(both), "%s/both.json", dir);
        snprintf(complete, sizeof(complete), "%s/complete.json", dir);
        snprintf(complete2, sizeof(complete2), "%s/complete2.json", dir);
        snprintf(merged, sizeof(merged), "%s/merged.json", dir);
        return 0;
}

static const char SAMPLED_LINE[] =
    "estimated: the producer was out of CPU for 20 s of 40 (keyshift "
    "analysed 1 message in up to 16 then); figures below are estimates "
    "(+/- 3 sigma)";

/** The reports the tests read, built by the core as the plugin's are. */
static void test_write(void)
{
        json_t *j;

        /* 40,000 messages, [10,000, 30,000) sampled at 16: 20 s of 40 */
        write_report(sampled, 201, 40000, 4, 0);
        /* 20,000 messages, 2 in 5 skipped, [5,000, 15,000) at 64 */
        write_report(both, 202, 20000, 6, 2);
        write_report(complete, 203, 10000, 0, 0);
        write_report(complete2, 204, 10000, 0, 0);
        j = ks_e2e_load_json(sampled);
        CU_ASSERT_PTR_NOT_NULL_FATAL(j);
        CU_ASSERT_EQUAL(
            ks_e2e_int(j, "topics/orders/analysis/messages_produced"), 40000);
        CU_ASSERT_EQUAL(ks_e2e_int(j, "topics/orders/analysis/one_in_max"), 16);
        CU_ASSERT_EQUAL(ks_e2e_int(j, "topics/orders/analysis/sampled_seconds"),
                        20);
        json_decref(j);
}

/** `show`: the sampled line first; with skipped messages the partial line
 *  first and the sampled line second; complete: neither. The rates of a
 *  sampled topic with their errors, of a complete one without. */
static void test_show(void)
{
        ks_clit_run_t r;
        char          want[400];

        CU_ASSERT_EQUAL_FATAL(ks_clit_run(&r, "show '%s'", sampled), 0);
        snprintf(want, sizeof(want), "%s\n", SAMPLED_LINE);
        if (strncmp(r.out, want, strlen(want)))
                printf("\n    got: %.300s", r.out);
        CU_ASSERT_EQUAL(strncmp(r.out, want, strlen(want)), 0);
        /* the headline (wrapped) */
        CU_ASSERT(ks_clit_has(r.out, "\n  estimated: the producer was out of "
                                     "CPU for 20 s of 40 (keyshift"));
        CU_ASSERT(!ks_clit_has(r.out, "partial: "));
        /* the rates with their errors (rates.sampling_error) */
        CU_ASSERT(ks_clit_has(r.out, "  rate     "));
        {
                const char *rate = strstr(r.out, "  rate     ");
                const char *eol  = rate ? strchr(rate, '\n') : NULL;
                const char *pm   = rate ? strstr(rate, "+/- ") : NULL;
                CU_ASSERT(pm && eol && pm < eol);
        }
        ks_clit_run_free(&r);

        CU_ASSERT_EQUAL_FATAL(ks_clit_run(&r, "show '%s'", both), 0);
        CU_ASSERT_EQUAL(strncmp(r.out, "partial: keyshift analysed ", 27), 0);
        CU_ASSERT(ks_clit_has(r.out,
                              " %)\nestimated: the producer was out of CPU "
                              "for 10 s of 20 (keyshift analysed 1 message in "
                              "up to 64 then); figures below are estimates "
                              "(+/- 3 sigma)\n"));
        ks_clit_run_free(&r);

        CU_ASSERT_EQUAL_FATAL(ks_clit_run(&r, "show '%s'", complete), 0);
        CU_ASSERT_EQUAL(strncmp(r.out, "keyshift report ", 16), 0);
        CU_ASSERT(!ks_clit_has(r.out, "estimated: "));
        CU_ASSERT(!ks_clit_has(r.out, "+/- "));
        ks_clit_run_free(&r);
}

/** `html`: the sampled line first in the page's header, the verdict
 *  begins with it. */
static void test_html(void)
{
        ks_clit_run_t r;
        char          want[500];

        CU_ASSERT_EQUAL_FATAL(ks_clit_run(&r, "html '%s' -o -", sampled), 0);
        snprintf(want, sizeof(want),
                 "<header><p class=\"ks-partial ks-sampled\">%s</p><h1>",
                 SAMPLED_LINE);
        CU_ASSERT(ks_clit_has(r.out, want));
        snprintf(want, sizeof(want), "<p class=\"verdict\">%s:", SAMPLED_LINE);
        CU_ASSERT(ks_clit_has(r.out, want));
        ks_clit_run_free(&r);

        CU_ASSERT_EQUAL_FATAL(ks_clit_run(&r, "html '%s' -o -", both), 0);
        CU_ASSERT(ks_clit_has(r.out, "<header><p class=\"ks-partial\">partial: "
                                     "keyshift analysed "));
        CU_ASSERT(ks_clit_has(r.out, "</p><p class=\"ks-partial ks-sampled\">"
                                     "estimated: the producer was out of CPU "
                                     "for 10 s of 20 "));
        ks_clit_run_free(&r);

        CU_ASSERT_EQUAL_FATAL(ks_clit_run(&r, "html '%s' -o -", complete), 0);
        CU_ASSERT(ks_clit_has(r.out, "<header><h1>"));
        CU_ASSERT(!ks_clit_has(r.out, "estimated: "));
        ks_clit_run_free(&r);
}

/** `metrics`: the sampled share. */
static void test_metrics(void)
{
        ks_clit_run_t r;
        json_t       *j = ks_e2e_load_json(sampled);
        char          want[300];

        CU_ASSERT_PTR_NOT_NULL_FATAL(j);
        CU_ASSERT_EQUAL_FATAL(ks_clit_run(&r, "metrics '%s'", sampled), 0);
        CU_ASSERT(ks_clit_has(r.out, "# TYPE keyshift_sampling_one_in_max "
                                     "gauge\n"));
        CU_ASSERT(ks_clit_has(r.out, "keyshift_sampling_one_in_max{"
                                     "client_id=\"orders-app\",pid=\"201\","
                                     "topic=\"orders\"} 16\n"));
        CU_ASSERT(ks_clit_has(r.out, "keyshift_sampled_seconds_total{"
                                     "client_id=\"orders-app\",pid=\"201\","
                                     "topic=\"orders\"} 20\n"));
        snprintf(want, sizeof(want),
                 "keyshift_sampled_out_messages_total{client_id=\"orders-app\","
                 "pid=\"201\",topic=\"orders\"} %lld\n",
                 (long long)ks_e2e_int(
                     j, "topics/orders/analysis/messages_sampled_out"));
        CU_ASSERT(ks_clit_has(r.out, want));
        snprintf(want, sizeof(want),
                 "keyshift_sampled_messages_total{client_id=\"orders-app\","
                 "pid=\"201\",topic=\"orders\"} %lld\n",
                 (long long)ks_e2e_int(
                     j, "topics/orders/analysis/messages_sampled_in"));
        CU_ASSERT(ks_clit_has(r.out, want));
        ks_clit_run_free(&r);
        json_decref(j);

        CU_ASSERT_EQUAL_FATAL(ks_clit_run(&r, "metrics '%s'", complete), 0);
        CU_ASSERT(ks_clit_has(r.out, "keyshift_sampling_one_in_max{"
                                     "client_id=\"orders-app\",pid=\"203\","
                                     "topic=\"orders\"} 0\n"));
        ks_clit_run_free(&r);
}

static double num(json_t *o, const char *path)
{
        return json_number_value(ks_e2e_get(o, path));
}

/** `merge`: counters summed, the largest N, seconds and uptimes summed,
 *  errors recomputed from the sums; the merged report reads back. */
static void test_merge(void)
{
        static const char *const sums[] = {
            "messages_sampled_in",    "messages_sampled_weighted",
            "messages_sampled_out",   "bytes_sampled_in",
            "bytes_sampled_weighted", "bytes_sampled_out",
            "sampled_variance",       "sampled_seconds",
            "messages_produced",      "messages_analysed",
            "messages_unanalysed",    NULL};
        const char *const *k;
        ks_clit_run_t      r;
        json_t            *a = ks_e2e_load_json(sampled);
        json_t            *b = ks_e2e_load_json(both);
        json_t            *c = ks_e2e_load_json(complete), *m, *t, *p;
        char               path[128];
        double             v, x;
        size_t             i;

        CU_ASSERT_EQUAL_FATAL(ks_clit_run(&r, "merge '%s' '%s' '%s' -o '%s'",
                                          sampled, both, complete, merged),
                              0);
        ks_clit_run_free(&r);
        m = ks_e2e_load_json(merged);
        CU_ASSERT_PTR_NOT_NULL_FATAL(m);
        t = ks_e2e_get(m, "topics/orders");
        for (k = sums; *k; k++) {
                snprintf(path, sizeof(path), "topics/orders/analysis/%s", *k);
                CU_ASSERT_EQUAL(num(m, path),
                                num(a, path) + num(b, path) + num(c, path));
        }
        CU_ASSERT_EQUAL(num(t, "analysis/messages_produced"), 70000);
        CU_ASSERT_EQUAL(num(t, "analysis/one_in_max"), 64);
        CU_ASSERT_EQUAL(num(t, "analysis/sampled_seconds"), 30);
        CU_ASSERT_DOUBLE_EQUAL(num(t, "analysis/uptime_s"), 70, 1e-9);
        CU_ASSERT(json_is_true(ks_e2e_get(t, "analysis/sampled")));
        CU_ASSERT(json_is_false(ks_e2e_get(t, "analysis/complete")));
        v = num(t, "analysis/sampled_variance");
        CU_ASSERT_DOUBLE_EQUAL(num(t, "analysis/messages_sampling_error"),
                               3 * sqrt(v), 1e-6);
        /* per partition, from the merged loads at N = 64 */
        CU_ASSERT_EQUAL(
            json_array_size(ks_e2e_get(t, "current/partitions/messages")), 6);
        json_array_foreach(ks_e2e_get(t, "current/partitions/messages"), i, p)
        {
                double want;
                x    = json_number_value(p);
                want = 63 * x < v ? 63 * x : v;
                CU_ASSERT_EQUAL(
                    json_number_value(json_array_get(
                        ks_e2e_get(
                            t, "current/partitions/messages_sampling_error"),
                        i)),
                    ceil(3 * sqrt(want)));
        }
        x = num(t, "proposals/0/moved/messages");
        CU_ASSERT_DOUBLE_EQUAL(
            num(t, "proposals/0/moved/messages_sampling_error"),
            3 * sqrt(63 * x < v ? 63 * x : v), 1e-6);
        CU_ASSERT(num(t, "window/messages_sampling_error") > 0);
        CU_ASSERT(num(t, "hot_keys/messages_sampling_error/0") > 0);
        /* the merged story: partial (one input skipped), then sampled,
         * in producer-seconds */
        CU_ASSERT(ks_clit_has(json_string_value(json_object_get(t, "summary")),
                              "estimated: the producer was out of CPU for 30 "
                              "s of 70 (keyshift analysed 1 message in up to "
                              "64 then)"));
        json_decref(m);
        CU_ASSERT_EQUAL_FATAL(ks_clit_run(&r, "show '%s'", merged), 0);
        CU_ASSERT(ks_clit_has(r.out, "\nestimated: the producer was out of CPU "
                                     "for 30 s of "));
        ks_clit_run_free(&r);

        /* two complete inputs: nothing sampled, no per-partition error */
        CU_ASSERT_EQUAL_FATAL(ks_clit_run(&r, "merge '%s' '%s' -o '%s'",
                                          complete, complete2, merged),
                              0);
        ks_clit_run_free(&r);
        m = ks_e2e_load_json(merged);
        CU_ASSERT_PTR_NOT_NULL_FATAL(m);
        CU_ASSERT(
            json_is_false(ks_e2e_get(m, "topics/orders/analysis/sampled")));
        CU_ASSERT_PTR_NULL(ks_e2e_get(
            m, "topics/orders/current/partitions/messages_sampling_error/0"));
        json_decref(m);
        json_decref(a);
        json_decref(b);
        json_decref(c);
}

/** @brief Sets analysis.@p field of the sampled report to @p v (a new
 *         reference), writes it as @p name and expects every command to
 *         refuse it with @p why. */
static void refused(const char *name, const char *field, json_t *v,
                    const char *why)
{
        static const char *const cmds[] = {"show '%s'", "metrics '%s'",
                                           "html '%s' -o -", NULL};
        const char *const       *cmd;
        char                     bad[800];
        json_t                  *j = ks_e2e_load_json(sampled);
        ks_clit_run_t            r;

        CU_ASSERT_PTR_NOT_NULL_FATAL(j);
        json_object_set_new(ks_e2e_get(j, "topics/orders/analysis"), field, v);
        snprintf(bad, sizeof(bad), "%s/%s.json", dir, name);
        CU_ASSERT_EQUAL(json_dump_file(j, bad, 0), 0);
        for (cmd = cmds; *cmd; cmd++) {
                CU_ASSERT_EQUAL(ks_clit_run(&r, *cmd, bad), 1);
                if (!ks_clit_has(r.err, why))
                        printf("\n    %s: %s", name, r.err);
                CU_ASSERT(ks_clit_has(r.err, why));
                ks_clit_run_free(&r);
        }
        CU_ASSERT_EQUAL(
            ks_clit_run(&r, "merge '%s' '%s' -o '%s'", bad, complete, merged),
            1);
        CU_ASSERT(ks_clit_has(r.err, why));
        ks_clit_run_free(&r);
        json_decref(j);
}

/** The report check refuses inconsistent sampling counters. */
static void test_check(void)
{
        json_t *j = ks_e2e_load_json(sampled);
        double  in, w;

        CU_ASSERT_PTR_NOT_NULL_FATAL(j);
        in = num(j, "topics/orders/analysis/messages_sampled_in");
        w  = num(j, "topics/orders/analysis/messages_sampled_weighted");
        json_decref(j);
        refused("negative", "messages_sampled_out", json_integer(-3),
                "topics.orders.analysis.messages_sampled_out: a negative "
                "integer -3");
        refused("not-power", "one_in_max", json_integer(12),
                "topics.orders.analysis: one_in_max 12 is not a power of "
                "two");
        refused("in-above-weighted", "messages_sampled_in",
                json_integer((json_int_t)w + 1),
                "topics.orders.analysis: more sampled in than they stand for");
        refused("weighted-above", "messages_sampled_weighted",
                json_integer((json_int_t)(in * 16 + 16)),
                "topics.orders.analysis: sampled_weighted above one_in_max");
        refused("variance", "sampled_variance", json_integer(1),
                "topics.orders.analysis: sampled_variance 1 is not between");
        refused("flag", "sampled", json_false(),
                "topics.orders.analysis: sampled is false but one_in_max is "
                "16");
        refused("no-n", "one_in_max", json_integer(0),
                "topics.orders.analysis: sampling counters without "
                "one_in_max");
        refused("restate", "messages_produced", json_integer(39999),
                "topics.orders.analysis: does not restate messages, "
                "keys.unanalysed and the sampling counters");
        refused("analysed", "messages_analysed", json_integer(1),
                "topics.orders.analysis: does not restate");
}

void ks_test_register(void)
{
        CU_pSuite s = CU_add_suite("sampled reports", setup, NULL);
        CU_add_test(s, "reports: sampled, skipped and sampled, complete",
                    test_write);
        CU_add_test(s, "show: the sampled line first", test_show);
        CU_add_test(s, "html: the sampled line first", test_html);
        CU_add_test(s, "metrics: the sampled share", test_metrics);
        CU_add_test(s, "merge: sums, largest N, errors recomputed", test_merge);
        CU_add_test(s, "report check: inconsistent sampling refused",
                    test_check);
}
