/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_sampling.c
 * @brief Sampling under overload, the report's side (ks_analysis.h, issue
 *        33): a topic whose producing threads staged each message with
 *        probability 1/N and counted the others is built here as the
 *        engine builds it (ks_topic_note_sampled_in() and a run weighted N
 *        for a staged message, ks_topic_note_sampled_out() for the
 *        others), next to its twin that analysed every message (the
 *        oracle). Checked:
 *  - labels: `analysis` (sampled, one_in_max, the exact produced and
 *    analysed counts, complete false), distinct and moved keys the staged
 *    messages' with their sketch's error, more possible among those not
 *    staged (the twin's exact counts within the range stated), moved
 *    figures not exact, and every error field equal to its formula
 *    (3 sqrt(min((N - 1) x, V)), the fractions', the hot keys'); a topic
 *    never sampled says nothing new (zeros, no per-partition errors);
 *  - the story's first lines: "estimated: ..." alone, and after
 *    "partial: ..." when messages were skipped too; the metrics;
 *  - the bulk writer writes the per-partition errors as the jansson tree;
 *  - accuracy: at N = 4, 16, 64 over 8 seeds each, the total, window,
 *    the per-second rates (mean, peak, busiest second), every
 *    current and proposed partition's load, the moved messages, bytes and
 *    fractions, and the hot keys' counts lie within their
 *    stated 3-sigma error of the oracle's exact value in >= 99 % of the
 *    cases pooled (and the errors are not loose: on average under twice
 *    the oracle's own 3 sigma); the oracle's partition floor lies within
 *    the floors stated at the peak minus and plus its error.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ks_analysis.h"
#include "ks_hll.h"
#include "ks_metrics.h"
#include "ks_report.h"
#include "ks_sizing.h"
#include "ks_test.h"
#include "ks_topic.h"

static uint64_t next(uint64_t *x)
{ /* splitmix64 */
        uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
        z          = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z          = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
}

static double uniform(uint64_t *x)
{
        return (double)(next(x) >> 11) / 9007199254740992.0;
}

/** A stream and how it is analysed. */
typedef struct stream {
        int      messages;
        int      keys;
        uint64_t seed;
        unsigned shift;         /**< N = 2^shift while sampling; 0: never */
        int      from, until;   /**< messages [from, until) are sampled */
        int      skip_in_7;     /**< i % 7 < skip_in_7 are skipped instead */
        size_t   topk;          /**< hot-key counters */
        size_t   sample;        /**< key sample capacity; 0: 4096 */
        double   consumer_rate; /**< keyshift.consumer.msgs.per.s; 0: none */
        int      big_one_in;    /**< 1 message in this many (at random) has
                                 *   a 20,000-byte value; 0: none */
} stream_t;

/** Where the stream's messages went, counted here. */
typedef struct tally {
        long long staged, out, skipped, seconds;
} tally_t;

/**
 * @brief Builds a 6-partition topic (12 and 16 proposed) from @p st:
 *        keys skewed (key index keys u^2), 100-byte values (1 in
 *        big_one_in of 20,000 bytes), message i at
 *        monotonic ms 1000 + i. @p sampled: messages in [from, until) are
 *        staged with probability 1/N and recorded as a run of weight N
 *        (the engine's drainer), the others counted sampled out; else
 *        each is recorded. Skipped ones (skip_in_7) are noted unanalysed
 *        in both twins.
 * @returns the topic's report object (uptime 1 s per 1,000 messages).
 */
static json_t *topic_of(const char *name, const stream_t *st, int sampled,
                        tally_t *tl, ks_warn_list_t *wl)
{
        ks_sizing_params_t sp;
        ks_report_opts_t   o = {
              20, 1000 + st->messages, 1, &sp, 1e6, 1e9, 0, 1000, NULL};
        ks_topic_params_t   tp = {0};
        ks_topic_snapshot_t s;
        ks_topic_t         *t;
        json_t             *j;
        uint64_t            x = st->seed, coin = st->seed ^ 0x5eed;
        uint64_t            sz       = st->seed ^ 0xb16;
        uint64_t            n        = (uint64_t)1 << st->shift;
        long long           last_sec = -1;
        int                 i;

        memset(tl, 0, sizeof(*tl));
        ks_sizing_params_init(&sp);
        sp.consumer_msgs_per_s = st->consumer_rate;
        tp.partitioner         = KS_PARTITIONER_MURMUR2_RANDOM;
        tp.key_sample_size     = st->sample ? st->sample : 4096;
        tp.mixed_sample_size   = 64;
        tp.topk_capacity       = st->topk;
        tp.flow_max_cells      = 1000;
        tp.pending_max         = 10;
        tp.proposed[0]         = 12;
        tp.proposed[1]         = 16;
        tp.proposed_cnt        = 2;
        t                      = ks_topic_new(name, &tp, 1000);
        ks_topic_set_partition_count(t, 6, KS_COUNT_CONFIG, 1000);
        for (i = 0; i < st->messages; i++) {
                double   u = uniform(&x);
                char     key[32];
                size_t   kl;
                uint64_t vl =
                    st->big_one_in && next(&sz) % (uint64_t)st->big_one_in == 0
                        ? 20000
                        : 100;
                int64_t        mono = 1000 + i;
                ks_key_facts_t f;

                kl = (size_t)snprintf(key, sizeof(key), "account-%d",
                                      (int)(st->keys * u * u));
                if (i % 7 < st->skip_in_7) {
                        ks_topic_note_unanalysed(t);
                        tl->skipped++;
                        continue;
                }
                if (!sampled || !st->shift || i < st->from || i >= st->until) {
                        ks_topic_record_at(t, key, kl, -1, vl, mono);
                        tl->staged++;
                        continue;
                }
                if (next(&coin) & (n - 1)) { /* not staged: 1 - 1/N */
                        ks_topic_note_sampled_out(t, 0, kl + vl);
                        tl->out++;
                        continue;
                }
                ks_topic_note_sampled_in(t, st->shift, kl + vl, mono);
                ks_topic_key_facts(t, key, kl, -1, &f);
                ks_topic_lock(t);
                ks_topic_record_run_locked(t, key, kl, -1, &f, n, n * (kl + vl),
                                           KS_RUN_HOT_NOW);
                ks_topic_rate_locked(t, mono, n, n * (kl + vl));
                ks_topic_unlock(t);
                tl->staged++;
                if (mono / 1000 != last_sec) {
                        last_sec = mono / 1000;
                        tl->seconds++;
                }
        }
        CU_ASSERT_EQUAL_FATAL(ks_topic_snapshot(t, &s), 0);
        j = ks_report_topic(&s, &o, wl);
        ks_topic_snapshot_free(&s);
        ks_topic_destroy(t);
        return j;
}

static json_t *at(json_t *o, const char *path)
{
        char    buf[256], *tok, *save = NULL;
        json_t *j = o;

        snprintf(buf, sizeof(buf), "%s", path);
        for (tok = strtok_r(buf, "/", &save); tok && j;
             tok = strtok_r(NULL, "/", &save))
                j = json_is_array(j) ? json_array_get(j, (size_t)atoi(tok))
                                     : json_object_get(j, tok);
        return j;
}

static double num(json_t *o, const char *path)
{
        return json_number_value(at(o, path));
}

/** @returns 3 sqrt(min((N - 1) x, V)), the error the report must state. */
static double want_error(double x, double n, double v)
{
        double var = (n - 1) * x;
        return 3 * sqrt(var < v ? var : v);
}

/** @returns the metric @p name of topic "t" in @p text, NAN if absent. */
static double metric(const char *text, const char *name)
{
        char        pat[256];
        const char *p;

        snprintf(pat, sizeof(pat), "%s{client_id=\"c\",pid=\"1\",topic=\"t\"} ",
                 name);
        p = strstr(text, pat);
        return p ? strtod(p + strlen(pat), NULL) : NAN;
}

static char *metrics_of(json_t *t)
{
        ks_report_producer_t p = {.client_id          = "c",
                                  .client_name        = "c#producer-1",
                                  .pid                = 1,
                                  .librdkafka_version = "2.0.2",
                                  .partitioner        = "murmur2_random",
                                  .partitioner_source = "partitioner",
                                  .started_at_ms      = 1000};
        ks_report_opts_t     o = {20, 5000, 1, NULL, 0, 0, 0, 0, NULL};
        ks_warn_list_t       wl;
        json_t              *topics = json_object(), *r;
        char                *text   = NULL;
        size_t               len    = 0;
        FILE                *fp     = open_memstream(&text, &len);

        ks_warn_list_init(&wl);
        json_object_set(topics, "t", t);
        r = ks_report_build(&p, &o, topics, &wl);
        CU_ASSERT_EQUAL(ks_metrics_report(r, fp), 0);
        fclose(fp);
        json_decref(r);
        ks_warn_list_clear(&wl);
        return text;
}

/** @brief "12,000". */
static const char *commas(long long v, char *buf)
{
        char   d[32];
        size_t n = (size_t)snprintf(d, sizeof(d), "%lld", v), i, o = 0;

        for (i = 0; i < n; i++) {
                if (i && (n - i) % 3 == 0)
                        buf[o++] = ',';
                buf[o++] = d[i];
        }
        buf[o] = '\0';
        return buf;
}

/**
 * @brief The distinct and moved keys of sampled topic @p smp: the sketch's
 *        error (the HyperLogLog's when its key sample is full, else 0),
 *        never a lower bound, of the staged messages' keys; the exact
 *        counts of @p oracle (a twin that analysed every message with a
 *        key sample that holds every key) lie in [E - 3 e, E + 3 e +
 *        @p more], @p more the messages not staged; and the story says so.
 */
static void check_keys(json_t *smp, json_t *oracle, double more)
{
        double      e   = num(smp, "keys/distinct_error");
        double      est = num(smp, "keys/distinct_estimate");
        double      tru = num(oracle, "keys/distinct_estimate");
        const char *sum = json_string_value(at(smp, "summary"));
        char        want[200], n[32];
        size_t      j;

        CU_ASSERT(json_is_true(at(smp, "keys/distinct_lower_bound")));
        CU_ASSERT(json_is_number(at(smp, "keys/distinct_error")));
        CU_ASSERT(e == 0 || e == ks_hll_std_error());
        CU_ASSERT_EQUAL(num(oracle, "keys/distinct_error"), 0);
        printf("\n    distinct keys %.0f +/- %.1f, oracle %.0f, %.0f not "
               "staged",
               est, est * e, tru, more);
        CU_ASSERT(tru >= est - 3 * est * e - 0.5);
        CU_ASSERT(tru <= est + 3 * est * e + more + 0.5);
        for (j = 0; j < 2; j++) {
                char   path[64];
                double mk, me, mt;
                snprintf(path, sizeof(path), "proposals/%zu/moved/", j);
                strcat(path, "distinct_keys");
                mk = num(smp, path);
                mt = num(oracle, path);
                strcat(path, "_error");
                CU_ASSERT(json_is_number(at(smp, path)));
                CU_ASSERT_EQUAL(num(oracle, path), 0);
                me = num(smp, path);
                printf("; moved %.0f +/- %.1f, oracle %.0f", mk, me, mt);
                CU_ASSERT(mt >= mk - 3 * me - 0.5);
                CU_ASSERT(mt <= mk + 3 * me + more + 0.5);
        }
        CU_ASSERT_PTR_NOT_NULL_FATAL(sum);
        if (e > 0)
                snprintf(want, sizeof(want),
                         "Distinct keys: %s in the analysed messages (+/- "
                         "%.2f%%, the sketch's standard error); ",
                         commas((long long)est, n), 100 * e);
        else
                snprintf(want, sizeof(want),
                         "Distinct keys: %s in the analysed messages (all "
                         "counted); ",
                         commas((long long)est, n));
        CU_ASSERT_PTR_NOT_NULL(strstr(sum, want));
        snprintf(want, sizeof(want),
                 "more may be among the %s messages not analysed. ",
                 commas((long long)more, n));
        CU_ASSERT_PTR_NOT_NULL(strstr(sum, want));
        CU_ASSERT_PTR_NULL(strstr(sum, "keys are lower bounds"));
}

/** Every label and error of a topic sampled at 16 in its middle third,
 *  against its formula; the twin never sampled says nothing new. */
static void test_labels(void)
{
        stream_t       st = {30000, 900, 11, 4, 10000, 20000, 0, 64, 0, 0, 0};
        ks_warn_list_t wl;
        tally_t        ts, tf;
        json_t        *smp, *full, *a, *p;
        double         v, n = 16;
        const char    *sum;
        char           want[256], *mt;
        size_t         i, j;

        ks_warn_list_init(&wl);
        smp  = topic_of("t", &st, 1, &ts, &wl);
        full = topic_of("t", &st, 0, &tf, &wl);
        CU_ASSERT_PTR_NOT_NULL_FATAL(smp);
        CU_ASSERT_PTR_NOT_NULL_FATAL(full);

        /* analysis: exact counts, sampled, not complete */
        a = at(smp, "analysis");
        CU_ASSERT(json_is_true(at(a, "sampled")));
        CU_ASSERT(json_is_false(at(a, "complete")));
        CU_ASSERT_EQUAL(num(a, "one_in_max"), 16);
        CU_ASSERT_EQUAL(num(a, "messages_produced"), st.messages);
        CU_ASSERT_EQUAL(num(a, "messages_analysed"), ts.staged);
        CU_ASSERT_EQUAL(num(a, "messages_sampled_out"), ts.out);
        CU_ASSERT_EQUAL(num(a, "messages_sampled_in"),
                        ts.staged - (st.messages - (st.until - st.from)));
        CU_ASSERT_EQUAL(num(a, "messages_unanalysed"), 0);
        CU_ASSERT_EQUAL(num(a, "sampled_seconds"), ts.seconds);
        CU_ASSERT_EQUAL(num(a, "sampled_seconds"), 10);
        CU_ASSERT_EQUAL(num(a, "uptime_s"), 30);
        CU_ASSERT_DOUBLE_EQUAL(num(a, "analysed_fraction"),
                               (double)ts.staged / st.messages, 1e-12);
        v = num(a, "sampled_variance");
        CU_ASSERT_EQUAL(v, num(a, "messages_sampled_in") * 16 * 15);
        CU_ASSERT_DOUBLE_EQUAL(num(a, "messages_sampling_error"), 3 * sqrt(v),
                               1e-9);
        CU_ASSERT(num(a, "bytes_sampling_error") > 0);
        CU_ASSERT_EQUAL(num(smp, "messages"),
                        num(a, "messages_produced") -
                            num(a, "messages_sampled_in") -
                            num(a, "messages_sampled_out") +
                            num(a, "messages_sampled_weighted"));
        /* the exact bytes: the twin's */
        CU_ASSERT_EQUAL(num(a, "bytes_produced"), num(full, "bytes"));

        /* other clients' fractions: estimates (the twin's exact) */
        CU_ASSERT(json_is_false(at(smp, "other_clients/java/exact")));
        CU_ASSERT(json_is_true(at(full, "other_clients/java/exact")));

        /* distinct and moved keys: the staged messages', all counted
         * (the key sample holds them); more may be among those sampled
         * out: the twin's exact counts within the range stated */
        CU_ASSERT_EQUAL(num(full, "keys/distinct_error"), 0);
        check_keys(smp, full, (double)ts.out);

        /* window and partitions: errors by the formula */
        CU_ASSERT_DOUBLE_EQUAL(num(smp, "window/messages_sampling_error"),
                               want_error(num(smp, "window/messages"), n, v),
                               1e-9);
        CU_ASSERT_DOUBLE_EQUAL(
            num(smp, "window/hashed_messages_sampling_error"),
            want_error(num(smp, "window/hashed_messages"), n, v), 1e-9);
        json_array_foreach(at(smp, "current/partitions/messages"), i, p)
        {
                double e = json_number_value(json_array_get(
                    at(smp, "current/partitions/messages_sampling_error"), i));
                CU_ASSERT_EQUAL(e,
                                ceil(want_error(json_number_value(p), n, v)));
                CU_ASSERT(e > 0);
        }
        json_array_foreach(at(smp, "proposals"), j, p)
        {
                json_t *mv = at(p, "moved"), *q;
                double  f  = num(mv, "messages_fraction");
                double  y  = num(smp, "window/hashed_messages");
                double  ne = y / (n - 1), pp = (f * ne + 0.5) / (ne + 1);
                size_t  k;

                CU_ASSERT(json_is_false(at(mv, "messages_exact")));
                CU_ASSERT_DOUBLE_EQUAL(num(mv, "messages_sampling_error"),
                                       want_error(num(mv, "messages"), n, v),
                                       1e-9);
                CU_ASSERT(num(mv, "bytes_sampling_error") >
                          num(mv, "messages_sampling_error"));
                CU_ASSERT_DOUBLE_EQUAL(
                    num(mv, "messages_fraction_sampling_error"),
                    3 * sqrt(pp * (1 - pp) / ne), 1e-12);
                CU_ASSERT(num(mv, "traffic_fraction_sampling_error") > 0);
                /* the standard error folds the sampling's in (no skip) */
                CU_ASSERT_DOUBLE_EQUAL(
                    num(mv, "messages_fraction_error"),
                    num(mv, "messages_fraction_sampling_error") / 3, 1e-12);
                json_array_foreach(at(p, "partitions/messages"), k, q)
                    CU_ASSERT_EQUAL(
                        json_number_value(json_array_get(
                            at(p, "partitions/messages_sampling_error"), k)),
                        ceil(want_error(json_number_value(q), n, v)));
        }
        /* hot keys: the count's sampling error (no pass-by sampling here) */
        json_array_foreach(at(smp, "hot_keys"), i, p)
            CU_ASSERT_EQUAL(num(p, "messages_sampling_error"),
                            ceil(want_error(num(p, "messages"), n, v)));
        CU_ASSERT(json_array_size(at(smp, "hot_keys")) > 0);

        /* the story: the sampled line first */
        sum = json_string_value(at(smp, "summary"));
        snprintf(want, sizeof(want),
                 "estimated: the producer was out of CPU for 10 s of 30 "
                 "(keyshift analysed 1 message in up to 16 then); figures "
                 "below are estimates (+/- 3 sigma): ");
        CU_ASSERT_PTR_NOT_NULL_FATAL(sum);
        if (strncmp(sum, want, strlen(want)))
                printf("\n    summary: %s", sum);
        CU_ASSERT_EQUAL(strncmp(sum, want, strlen(want)), 0);

        /* metrics */
        mt = metrics_of(smp);
        CU_ASSERT_EQUAL(metric(mt, "keyshift_sampling_one_in_max"), 16);
        CU_ASSERT_EQUAL(metric(mt, "keyshift_sampled_messages_total"),
                        num(a, "messages_sampled_in"));
        CU_ASSERT_EQUAL(metric(mt, "keyshift_sampled_out_messages_total"),
                        (double)ts.out);
        CU_ASSERT_EQUAL(metric(mt, "keyshift_sampled_seconds_total"), 10);
        CU_ASSERT_DOUBLE_EQUAL(metric(mt, "keyshift_analysed_messages_ratio"),
                               num(a, "analysed_fraction"), 1e-9);
        free(mt);

        /* never sampled: nothing new but zeros */
        a = at(full, "analysis");
        CU_ASSERT(json_is_false(at(a, "sampled")));
        CU_ASSERT(json_is_true(at(a, "complete")));
        CU_ASSERT_EQUAL(num(a, "one_in_max"), 0);
        CU_ASSERT_EQUAL(num(a, "messages_sampling_error"), 0);
        CU_ASSERT_EQUAL(num(full, "window/messages_sampling_error"), 0);
        CU_ASSERT_PTR_NULL(
            at(full, "current/partitions/messages_sampling_error/0"));
        CU_ASSERT_PTR_NULL(
            at(full, "proposals/0/partitions/messages_sampling_error/0"));
        CU_ASSERT_PTR_NULL(at(full, "rates/sampling_error"));
        CU_ASSERT_PTR_NULL(at(full, "sizing/sampling"));
        CU_ASSERT_PTR_NOT_NULL(at(smp, "rates/sampling_error/msgs_per_s"));
        CU_ASSERT_EQUAL(num(full, "proposals/0/moved/messages_sampling_error"),
                        0);
        CU_ASSERT_EQUAL(num(full, "proposals/0/moved/messages_fraction_error"),
                        0);
        CU_ASSERT(json_is_true(at(full, "proposals/0/moved/messages_exact")));
        CU_ASSERT_EQUAL(num(full, "hot_keys/0/messages_sampling_error"), 0);
        CU_ASSERT_PTR_NULL(
            strstr(json_string_value(at(full, "summary")), "estimated"));
        mt = metrics_of(full);
        CU_ASSERT_EQUAL(metric(mt, "keyshift_sampling_one_in_max"), 0);
        CU_ASSERT_EQUAL(metric(mt, "keyshift_analysed_messages_ratio"), 1);
        free(mt);

        json_decref(smp);
        json_decref(full);
        ks_warn_list_clear(&wl);
}

/** More keys than the key sample holds, sampled at 16 in the middle
 *  third: distinct and moved keys are the HyperLogLog's and the key
 *  sample's estimates of the staged messages' keys, with their error; the
 *  twin's exact counts (a key sample that holds every key) in range. */
static void test_sample_full(void)
{
        stream_t st = {60000, 20000, 3, 4, 20000, 40000, 0, 64, 256, 0, 0};
        stream_t ot = st;
        ks_warn_list_t wl;
        tally_t        ts, tf;
        json_t        *smp, *oracle;

        ot.sample = 65536;
        ks_warn_list_init(&wl);
        smp    = topic_of("t", &st, 1, &ts, &wl);
        oracle = topic_of("t", &ot, 0, &tf, &wl);
        CU_ASSERT_PTR_NOT_NULL_FATAL(smp);
        CU_ASSERT_PTR_NOT_NULL_FATAL(oracle);
        CU_ASSERT(num(oracle, "keys/distinct_estimate") < 65536);
        CU_ASSERT_EQUAL(num(smp, "keys/distinct_error"), ks_hll_std_error());
        check_keys(smp, oracle, (double)ts.out);
        json_decref(smp);
        json_decref(oracle);
        ks_warn_list_clear(&wl);
}

/** Skipped and sampled: the partial line first, the sampled line after
 *  it; the analysed count excludes both. */
static void test_skipped_and_sampled(void)
{
        stream_t       st = {14000, 500, 5, 6, 0, 14000, 2, 64, 0, 0, 0};
        ks_warn_list_t wl;
        tally_t        ts;
        json_t        *smp, *a;
        const char    *sum, *est;
        ks_analysis_t  an;
        char           line[KS_ANALYSIS_LINE_MAX];

        ks_warn_list_init(&wl);
        smp = topic_of("t", &st, 1, &ts, &wl);
        a   = at(smp, "analysis");
        CU_ASSERT_EQUAL(num(a, "messages_unanalysed"), ts.skipped);
        CU_ASSERT_EQUAL(num(a, "messages_analysed"), ts.staged);
        CU_ASSERT_EQUAL(num(a, "messages_produced"), st.messages);
        CU_ASSERT_EQUAL(num(a, "one_in_max"), 64);
        ks_analysis_of_topic(smp, &an);
        ks_analysis_partial_line(&an, line, sizeof(line));
        sum = json_string_value(at(smp, "summary"));
        CU_ASSERT_PTR_NOT_NULL_FATAL(sum);
        CU_ASSERT_EQUAL(strncmp(sum, "partial: keyshift analysed ", 27), 0);
        CU_ASSERT_EQUAL(strncmp(sum, line, strlen(line)), 0);
        est = strstr(sum, "estimated: the producer was out of CPU for 14 s of "
                          "14 (keyshift analysed 1 message in up to 64 then)");
        CU_ASSERT_PTR_NOT_NULL(est);
        CU_ASSERT(est > sum);
        /* the Kish error and the sampling's, in quadrature */
        CU_ASSERT(num(smp, "proposals/0/moved/messages_fraction_error") >
                  num(smp, "proposals/0/moved/messages_fraction_sampling_"
                           "error") /
                      3);
        json_decref(smp);
        ks_warn_list_clear(&wl);
}

/** The sampled line's wording: seconds never 0, "of U" when known. */
static void test_sampled_line(void)
{
        ks_analysis_sampling_t smp = {10,    1000,  640, 64000, 630,
                                      63000, 40320, 64,  34,    0};
        ks_analysis_t          a;
        char                   buf[KS_ANALYSIS_SAMPLED_LINE_MAX];

        ks_analysis_init_sampled(&a, 1640, 164000, 0, &smp, 600.4);
        CU_ASSERT_STRING_EQUAL(
            ks_analysis_sampled_line(&a, buf, sizeof(buf)),
            "estimated: the producer was out of CPU for 34 s of 600 "
            "(keyshift analysed 1 message in up to 64 then); figures below "
            "are estimates (+/- 3 sigma)");
        CU_ASSERT_EQUAL(a.analysed, 1010);
        CU_ASSERT_EQUAL(a.produced, 1640);
        CU_ASSERT(!a.complete && a.sampled && !a.skipped);
        smp.seconds = 0;
        ks_analysis_init_sampled(&a, 1640, 164000, 0, &smp, -1);
        CU_ASSERT_STRING_EQUAL(
            ks_analysis_sampled_line(&a, buf, sizeof(buf)),
            "estimated: the producer was out of CPU for 1 s (keyshift "
            "analysed 1 message in up to 64 then); figures below are "
            "estimates (+/- 3 sigma)");
        /* sampling began, nothing staged analysed yet: only counted out */
        {
                ks_analysis_sampling_t begun = {0};
                begun.out_messages           = 70;
                begun.out_bytes              = 7000;
                ks_analysis_init_sampled(&a, 500, 50000, 0, &begun, 12);
                CU_ASSERT(a.sampled && !a.complete);
                CU_ASSERT_EQUAL(a.produced, 570);
                CU_ASSERT_STRING_EQUAL(
                    ks_analysis_sampled_line(&a, buf, sizeof(buf)),
                    "estimated: the producer was out of CPU for 1 s of 12 "
                    "(keyshift began sampling; its first sampled messages "
                    "are not analysed yet); figures below miss them");
                CU_ASSERT_EQUAL(ks_analysis_sampling_error(&a, 500), 0);
                CU_ASSERT_EQUAL(ks_analysis_hot_error(&a, 100, 10), 10);
        }
        ks_analysis_init(&a, 5, 0);
        CU_ASSERT_STRING_EQUAL(ks_analysis_sampled_line(&a, buf, sizeof(buf)),
                               "");
        CU_ASSERT_EQUAL(ks_analysis_sampling_error(&a, 1e6), 0);
        /* hot keys: sqrt(s^2 + N h^2) */
        ks_analysis_init_sampled(&a, 1640, 164000, 0, &smp, -1);
        CU_ASSERT_DOUBLE_EQUAL(ks_analysis_hot_error(&a, 100, 10),
                               sqrt(9 * 100 * 63 + 64 * 100), 1e-9);
        CU_ASSERT_DOUBLE_EQUAL(ks_analysis_sampling_error(&a, 1e6),
                               3 * sqrt(40320.0), 1e-9);
}

/** The bulk writer writes per-partition errors as the jansson tree. */
static void test_bulk_writer(void)
{
        ks_report_producer_t p = {.client_id          = "c",
                                  .client_name        = "c#producer-1",
                                  .pid                = 1,
                                  .librdkafka_version = "2.0.2",
                                  .partitioner        = "murmur2_random",
                                  .partitioner_source = "partitioner",
                                  .started_at_ms      = 1000,
                                  .report_interval_ms = 60000};
        ks_sizing_params_t   sp;
        /* with sizing, as the plugin: the story reads `skew`, not the
         * per-partition arrays the writer fills in */
        ks_report_opts_t    o  = {20, 7000, 1, &sp, 1e6, 1e9, 0, 1000, NULL};
        ks_topic_params_t   tp = {0};
        ks_topic_snapshot_t s;
        ks_topic_t         *t;
        ks_warn_list_t      wl1, wl2;
        ks_report_writer_t  w;
        json_t             *topics = json_object(), *whole, *back, *j;
        char                file[300], err[512];
        uint64_t            coin = 99;
        int                 i;

        ks_sizing_params_init(&sp);
        tp.partitioner       = KS_PARTITIONER_MURMUR2_RANDOM;
        tp.key_sample_size   = 256;
        tp.mixed_sample_size = 64;
        tp.topk_capacity     = 64;
        tp.flow_max_cells    = 1000;
        tp.pending_max       = 10;
        tp.proposed[0]       = 12;
        tp.proposed_cnt      = 1;
        t                    = ks_topic_new("t", &tp, 1000);
        ks_topic_set_partition_count(t, 6, KS_COUNT_CONFIG, 1000);
        for (i = 0; i < 6000; i++) {
                char           key[16];
                size_t         kl = (size_t)snprintf(key, sizeof(key), "k%d",
                                                     (int)(next(&coin) % 300));
                ks_key_facts_t f;
                if (next(&coin) & 7) {
                        ks_topic_note_sampled_out(t, 1, kl + 10);
                        continue;
                }
                ks_topic_note_sampled_in(t, 3, kl + 10, 1000 + i);
                ks_topic_key_facts(t, key, kl, -1, &f);
                ks_topic_lock(t);
                ks_topic_record_run_locked(t, key, kl, -1, &f, 8, 8 * (kl + 10),
                                           KS_RUN_HOT_NOW);
                ks_topic_unlock(t);
        }
        snprintf(file, sizeof(file), "/tmp/keyshift-sampled-bulk-%ld.json",
                 (long)getpid());
        ks_warn_list_init(&wl1);
        ks_warn_list_init(&wl2);
        CU_ASSERT_EQUAL_FATAL(ks_report_writer_open(&w, file), 0);
        CU_ASSERT_EQUAL(ks_report_writer_begin(&w, &p, &o), 0);
        CU_ASSERT_EQUAL_FATAL(ks_topic_snapshot(t, &s), 0);
        o.bulk_by_writer = 0;
        json_object_set_new(topics, "t", ks_report_topic(&s, &o, &wl1));
        o.bulk_by_writer = 1;
        j                = ks_report_topic(&s, &o, &wl2);
        CU_ASSERT_EQUAL(ks_report_writer_topic_snapshot(&w, &s, j), 0);
        json_decref(j);
        ks_topic_snapshot_free(&s);
        ks_topic_destroy(t);
        CU_ASSERT_EQUAL(ks_report_writer_end(&w, &wl2, err, sizeof(err)), 0);
        whole = ks_report_build(&p, &o, topics, &wl1);
        ks_test_report_valid(file); /* the published schema (ks_test.h) */
        back = json_load_file(file, 0, NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(back);
        CU_ASSERT(json_is_integer(
            at(back, "topics/t/current/partitions/messages_sampling_error/5")));
        CU_ASSERT(json_is_integer(
            at(back,
               "topics/t/proposals/0/partitions/messages_sampling_error/11")));
        { /* as the file holds it: hot keys as columns */
                json_t *wf = ks_report_file_form(whole);
                CU_ASSERT(json_equal(wf, back));
                json_decref(wf);
        }
        if (getenv("KS_TEST_VERBOSE")) {
                json_dump_file(whole, "/tmp/ks-whole.json", JSON_INDENT(1));
                json_dump_file(back, "/tmp/ks-back.json", JSON_INDENT(1));
        }
        json_decref(whole);
        json_decref(back);
        ks_warn_list_clear(&wl1);
        ks_warn_list_clear(&wl2);
        unlink(file);
}

/** A snapshot taken between the engine's adds: messages counted out
 *  before any staged one was analysed, and a staged message noted before
 *  its weighted run was recorded. The report states counters that agree
 *  (what the report check demands). */
static void test_snapshot_between(void)
{
        ks_sizing_params_t  sp;
        ks_report_opts_t    o  = {20, 5000, 1, &sp, 1e6, 1e9, 0, 1000, NULL};
        ks_topic_params_t   tp = {0};
        ks_topic_snapshot_t s;
        ks_warn_list_t      wl;
        ks_topic_t         *t;
        json_t             *j, *a;
        int                 i;

        ks_sizing_params_init(&sp);
        ks_warn_list_init(&wl);
        tp.partitioner       = KS_PARTITIONER_MURMUR2_RANDOM;
        tp.key_sample_size   = 64;
        tp.mixed_sample_size = 64;
        tp.topk_capacity     = 64;
        tp.flow_max_cells    = 100;
        tp.pending_max       = 10;
        t                    = ks_topic_new("t", &tp, 1000);
        ks_topic_set_partition_count(t, 3, KS_COUNT_CONFIG, 1000);
        for (i = 0; i < 10; i++)
                ks_topic_record_at(t, "k", 1, -1, 9, 1000 + i);
        for (i = 0; i < 7; i++)
                ks_topic_note_sampled_out(t, 2, 10);
        CU_ASSERT_EQUAL_FATAL(ks_topic_snapshot(t, &s), 0);
        j = ks_report_topic(&s, &o, &wl);
        ks_topic_snapshot_free(&s);
        a = at(j, "analysis");
        CU_ASSERT(json_is_true(at(a, "sampled")));
        CU_ASSERT(json_is_false(at(a, "complete")));
        CU_ASSERT_EQUAL(num(a, "one_in_max"), 0);
        CU_ASSERT_EQUAL(num(a, "messages_sampled_out"), 7);
        CU_ASSERT_EQUAL(num(a, "messages_produced"), 17);
        CU_ASSERT_EQUAL(num(a, "messages_analysed"), 10);
        CU_ASSERT_EQUAL(
            strncmp(json_string_value(at(j, "summary")),
                    "estimated: the producer was out of CPU for 1 s of 4 "
                    "(keyshift began sampling",
                    40),
            0);
        json_decref(j);

        /* a staged message of weight 64 noted, its run not recorded yet */
        ks_topic_note_sampled_in(t, 6, 10, 2000);
        CU_ASSERT_EQUAL_FATAL(ks_topic_snapshot(t, &s), 0);
        j = ks_report_topic(&s, &o, &wl);
        ks_topic_snapshot_free(&s);
        a = at(j, "analysis");
        CU_ASSERT(num(a, "messages_sampled_weighted") <= num(j, "messages"));
        CU_ASSERT(num(a, "messages_sampled_in") <=
                  num(a, "messages_sampled_weighted"));
        CU_ASSERT(num(a, "messages_analysed") <= num(j, "messages"));
        json_decref(j);
        ks_topic_destroy(t);
        ks_warn_list_clear(&wl);
}

/** Coverage over the pooled figures. */
typedef struct cover {
        long   figures, inside;
        double err_ratio; /**< sum of stated error / oracle's 3 sigma */
        long   ratios;
} cover_t;

/** @brief Counts whether |estimate - exact| <= error (+ @p slack). */
static void covered(cover_t *c, const char *what, double est, double exact,
                    double err, double slack)
{
        c->figures++;
        if (fabs(est - exact) <= err + slack + 1e-9)
                c->inside++;
        else if (getenv("KS_TEST_VERBOSE"))
                printf("\n    outside: %s %.1f vs exact %.1f, error %.1f", what,
                       est, exact, err);
}

/** @brief One seed at N = 2^@p shift: every per-message figure of the
 *         sampled topic against the oracle's. */
static void accuracy_one(cover_t *c, unsigned shift, uint64_t seed)
{
        stream_t st = {20000, 400, seed, shift, 0, 20000, 0, 1024, 0, 50, 0};
        ks_warn_list_t wl;
        tally_t        ts, tf;
        json_t        *smp, *full, *p, *q;
        /* the per-second figures: this stream's clock is the messages'
         * own (1 ms apart), not the snapshot's, so the rates since start
         * and over the interval, whose span is the snapshot's, are not
         * compared here (their error is the count's over the span) */
        static const char *const rates[] = {
            "mean_msgs_per_s", "peak_msgs_per_s", "peak_bytes_per_s",
            "max_msgs_per_s"};
        char   path[96];
        double n = (double)(1u << shift);
        size_t i, j;

        ks_warn_list_init(&wl);
        smp  = topic_of("t", &st, 1, &ts, &wl);
        full = topic_of("t", &st, 0, &tf, &wl);
        covered(c, "messages", num(smp, "messages"), num(full, "messages"),
                num(smp, "analysis/messages_sampling_error"), 0);
        covered(c, "bytes", num(smp, "bytes"), num(full, "bytes"),
                num(smp, "analysis/bytes_sampling_error"), 0);
        covered(c, "window", num(smp, "window/hashed_messages"),
                num(full, "window/hashed_messages"),
                num(smp, "window/hashed_messages_sampling_error"), 0);
        /* rates, and the partition floor sized on the peak */
        for (i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
                double x = num(full, strcat(strcpy(path, "rates/"), rates[i]));
                double e;
                snprintf(path, sizeof(path), "rates/sampling_error/%s",
                         rates[i]);
                e = num(smp, path);
                snprintf(path, sizeof(path), "rates/%s", rates[i]);
                /* the peak is a histogram's, at most 3.1 % over */
                covered(c, rates[i], num(smp, path), x, e,
                        strstr(rates[i], "peak") ? 0.031 * x : 0);
        }
        c->figures++;
        if (num(smp, "sizing/sampling/partition_floor_low") <=
                num(full, "sizing/partition_floor") &&
            num(full, "sizing/partition_floor") <=
                num(smp, "sizing/sampling/partition_floor_high"))
                c->inside++;
        else if (getenv("KS_TEST_VERBOSE"))
                printf("\n    outside: floor %.0f not in [%.0f, %.0f]",
                       num(full, "sizing/partition_floor"),
                       num(smp, "sizing/sampling/partition_floor_low"),
                       num(smp, "sizing/sampling/partition_floor_high"));
        json_array_foreach(at(smp, "current/partitions/messages"), i, p)
        {
                double x = json_number_value(
                    json_array_get(at(full, "current/partitions/messages"), i));
                double e = json_number_value(json_array_get(
                    at(smp, "current/partitions/messages_sampling_error"), i));
                covered(c, "current partition", json_number_value(p), x, e, 0);
                c->err_ratio += e / (3 * sqrt((n - 1) * x));
                c->ratios++;
        }
        json_array_foreach(at(smp, "proposals"), j, p)
        {
                json_t *pf = json_array_get(at(full, "proposals"), j);
                json_t *mv = at(p, "moved"), *mf = at(pf, "moved");

                covered(c, "moved", num(mv, "messages"), num(mf, "messages"),
                        num(mv, "messages_sampling_error"), 0);
                covered(c, "moved bytes", num(mv, "bytes"), num(mf, "bytes"),
                        num(mv, "bytes_sampling_error"), 0);
                covered(c, "moved fraction", num(mv, "messages_fraction"),
                        num(mf, "messages_fraction"),
                        num(mv, "messages_fraction_sampling_error"), 0);
                covered(c, "traffic fraction", num(mv, "traffic_fraction"),
                        num(mf, "traffic_fraction"),
                        num(mv, "traffic_fraction_sampling_error"), 0);
                json_array_foreach(at(p, "partitions/messages"), i, q)
                {
                        double x = json_number_value(
                            json_array_get(at(pf, "partitions/messages"), i));
                        covered(c, "proposed partition", json_number_value(q),
                                x,
                                json_number_value(json_array_get(
                                    at(p, "partitions/messages_sampling_error"),
                                    i)),
                                0);
                }
        }
        /* hot keys: the oracle's count of the same key (exact: the
         * counters hold every key), within Space-Saving's and the
         * sampling's errors */
        json_array_foreach(at(smp, "hot_keys"), i, p)
        {
                json_t *q2;
                size_t  k;
                json_array_foreach(at(full, "hot_keys"), k, q2)
                {
                        if (!json_equal(at(p, "key_hex"), at(q2, "key_hex")))
                                continue;
                        covered(c, "hot key", num(p, "messages"),
                                num(q2, "messages"),
                                num(p, "messages_sampling_error"),
                                num(p, "messages_error"));
                }
        }
        json_decref(smp);
        json_decref(full);
        ks_warn_list_clear(&wl);
}

/** Each per-message figure within its stated 3-sigma error of the exact
 *  value, at N = 4, 16 and 64, pooled over 8 seeds each. */
static void test_accuracy(void)
{
        static const unsigned shifts[] = {2, 4, 6};
        size_t                k;
        uint64_t              seed;
        cover_t               all = {0};

        for (k = 0; k < 3; k++) {
                cover_t c = {0};
                for (seed = 1; seed <= 8; seed++)
                        accuracy_one(&c, shifts[k], seed * 7919 + k);
                printf("\n    N = %u: %ld of %ld figures within 3 sigma "
                       "(%.2f %%), partitions' error / oracle's 3 sigma "
                       "%.2f",
                       1u << shifts[k], c.inside, c.figures,
                       100.0 * c.inside / c.figures,
                       c.err_ratio / (double)c.ratios);
                CU_ASSERT(c.inside >= 0.99 * c.figures);
                /* not loose: the bound is the oracle's 3 sigma, plugged in */
                CU_ASSERT(c.err_ratio / (double)c.ratios < 2);
                all.figures += c.figures;
                all.inside += c.inside;
        }
        CU_ASSERT(all.figures > 1000);
        CU_ASSERT(all.inside >= 0.99 * all.figures);
}

/** Bytes when sizes vary: 1 message in 50 has a 20,000-byte value among
 *  100-byte ones. The bytes' error rests on the staged sizes' squares
 *  (the size-weighted mean size, ks_analysis_bytes_sampling_error()):
 *  total and moved bytes within it of the oracle's in >= 95 % of the
 *  figures at N = 16 over 16 seeds. With the mean size instead, the error
 *  would be ~5.7 times too small here (sqrt(E[s^2]) / E[s]) and cover
 *  about 40 %. */
static void test_accuracy_sizes(void)
{
        cover_t  c = {0};
        uint64_t seed;

        for (seed = 1; seed <= 16; seed++) {
                stream_t st = {
                    20000, 400, seed * 104729, 4, 0, 20000, 0, 1024, 0, 50, 50};
                ks_warn_list_t wl;
                tally_t        ts, tf;
                json_t        *smp, *full, *p;
                size_t         j;

                ks_warn_list_init(&wl);
                smp  = topic_of("t", &st, 1, &ts, &wl);
                full = topic_of("t", &st, 0, &tf, &wl);
                covered(&c, "bytes", num(smp, "bytes"), num(full, "bytes"),
                        num(smp, "analysis/bytes_sampling_error"), 0);
                json_array_foreach(at(smp, "proposals"), j, p)
                {
                        json_t *mf = at(
                            json_array_get(at(full, "proposals"), j), "moved");
                        covered(&c, "moved bytes", num(p, "moved/bytes"),
                                num(mf, "bytes"),
                                num(p, "moved/bytes_sampling_error"), 0);
                }
                json_decref(smp);
                json_decref(full);
                ks_warn_list_clear(&wl);
        }
        printf("\n    sizes 100 and 20,000 bytes (1 in 50), N = 16: %ld of %ld "
               "byte figures within 3 sigma ",
               c.inside, c.figures);
        CU_ASSERT_EQUAL(c.figures, 48);
        CU_ASSERT(c.inside >= 0.95 * c.figures);
}

void ks_test_register(void)
{
        KS_ADD_SUITE(
            "sampling under overload", {"the sampled line", test_sampled_line},
            {"labels and errors by their formulas", test_labels},
            {"skipped and sampled: both lines", test_skipped_and_sampled},
            {"key sample full: distinct keys with their error",
             test_sample_full},
            {"bulk writer: per-partition errors", test_bulk_writer},
            {"a snapshot between the engine's adds", test_snapshot_between},
            {"accuracy at N = 4, 16, 64", test_accuracy},
            {"bytes' accuracy when sizes vary", test_accuracy_sizes});
}
