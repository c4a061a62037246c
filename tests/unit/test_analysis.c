/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_analysis.c
 * @brief Honest labels (ks_analysis.h): a topic whose messages were
 *        skipped on a full staging ring (ks_topic_note_unanalysed(), as
 *        on_send does) never calls a figure exact. Each topic is built
 *        twice from the same traffic: once with every message analysed
 *        (the oracle), once with some of them skipped instead, and every
 *        label of the partial report is checked: `analysis`, the
 *        distinct keys and moved keys (the sketch's estimate with its
 *        error, of the analysed messages' keys, more possible among the
 *        skipped: the keys counted here from the stream, with librdkafka's
 *        own murmur2 partitioner for the moved ones, lie in the range
 *        stated), each proposal's moved figures (lower bounds, fractions
 *        with an error that covers the oracle's exact fraction),
 *        other_clients, the story's first words and the metrics.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <librdkafka/rdkafka.h>

#include "ks_analysis.h"
#include "ks_hll.h"
#include "ks_metrics.h"
#include "ks_report.h"
#include "ks_sizing.h"
#include "ks_test.h"

/** A stream of keyed messages and which of them are skipped. */
typedef struct stream {
        int      messages; /**< produced */
        int      keys;     /**< distinct keys drawn from */
        size_t   sample;   /**< the topic's key sample capacity */
        uint64_t seed;
} stream_t;

static uint64_t next(uint64_t *x)
{ /* splitmix64 */
        uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
        z          = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z          = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
}

/** @returns whether message @p i is skipped: bursts of 400 messages, as
 *           a full ring skips them, in 3 of every 5 bursts (60 %),
 *           whatever their keys. */
static int skipped(int i)
{
        return (i / 400) % 5 < 3;
}

/**
 * @brief Builds a 6-partition topic (12 and 16 proposed) from stream
 *        @p st: keys skewed (key index n u^2, u uniform: low indices are
 *        hot); with @p partial, skipped() messages are noted unanalysed
 *        instead of recorded.
 * @returns the topic's report object (wl gets its warnings).
 */
static json_t *topic_of(const char *name, const stream_t *st, int partial,
                        ks_warn_list_t *wl)
{
        ks_sizing_params_t  sp;
        ks_report_opts_t    o  = {20, 5000, 1, &sp, 1e6, 1e9, 0, 0, NULL};
        ks_topic_params_t   tp = {0};
        ks_topic_snapshot_t s;
        ks_topic_t         *t;
        json_t             *j;
        uint64_t            x = st->seed;
        int                 i;

        ks_sizing_params_init(&sp);
        tp.partitioner       = KS_PARTITIONER_MURMUR2_RANDOM;
        tp.key_sample_size   = st->sample;
        tp.mixed_sample_size = 64;
        tp.topk_capacity     = 32;
        tp.flow_max_cells    = 1000;
        tp.pending_max       = 10;
        tp.proposed[0]       = 12;
        tp.proposed[1]       = 16;
        tp.proposed_cnt      = 2;
        t                    = ks_topic_new(name, &tp, 1000);
        ks_topic_set_partition_count(t, 6, KS_COUNT_CONFIG, 1000);
        for (i = 0; i < st->messages; i++) {
                double u = (double)(next(&x) >> 11) / 9007199254740992.0;
                char   key[32];
                snprintf(key, sizeof(key), "account-%d",
                         (int)(st->keys * u * u));
                if (partial && skipped(i))
                        ks_topic_note_unanalysed(t);
                else
                        ks_topic_record(t, key, strlen(key), -1, 100);
        }
        CU_ASSERT_EQUAL_FATAL(ks_topic_snapshot(t, &s), 0);
        j = ks_report_topic(&s, &o, wl);
        ks_topic_snapshot_free(&s);
        ks_topic_destroy(t);
        return j;
}

static json_t *at(json_t *o, const char *a, const char *b)
{
        return json_object_get(b ? json_object_get(o, a) : o, b ? b : a);
}

static long long integer(json_t *o, const char *a, const char *b)
{
        return (long long)json_integer_value(at(o, a, b));
}

static double number(json_t *o, const char *a, const char *b)
{
        return json_number_value(at(o, a, b));
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

/** The distinct keys of a stream, counted here (the oracle). */
typedef struct truth {
        long long keys;          /**< of every message produced */
        long long keys_analysed; /**< of the messages not skipped */
        long long moved[2];      /**< of `keys`, those whose partition at 6
                                  *   differs at counts[j] */
        long long moved_analysed[2];
        long long not_analysed; /**< messages skipped */
} truth_t;

/**
 * @brief *tr := the keys of stream @p st, drawn as topic_of() draws them,
 *        with skipped() messages left out of the analysed ones when
 *        @p partial; moved keys by librdkafka's own murmur2 partitioner
 *        (what murmur2_random does with a key) at 6 and @p counts.
 */
static void truth_of(const stream_t *st, int partial, const int counts[2],
                     truth_t *tr)
{
        unsigned char *seen = calloc((size_t)st->keys + 1, 1);
        uint64_t       x    = st->seed;
        int            i, j;

        memset(tr, 0, sizeof(*tr));
        CU_ASSERT_PTR_NOT_NULL_FATAL(seen);
        for (i = 0; i < st->messages; i++) {
                double u   = (double)(next(&x) >> 11) / 9007199254740992.0;
                int    idx = (int)(st->keys * u * u);
                if (partial && skipped(i)) {
                        seen[idx] |= 1;
                        tr->not_analysed++;
                } else
                        seen[idx] |= 3;
        }
        for (i = 0; i <= st->keys; i++) {
                char    key[32];
                size_t  kl;
                int32_t now;
                if (!seen[i])
                        continue;
                kl  = (size_t)snprintf(key, sizeof(key), "account-%d", i);
                now = rd_kafka_msg_partitioner_murmur2(NULL, key, kl, 6, NULL,
                                                       NULL);
                tr->keys++;
                tr->keys_analysed += seen[i] >> 1;
                for (j = 0; j < 2; j++) {
                        int mv =
                            now != rd_kafka_msg_partitioner_murmur2(
                                       NULL, key, kl, counts[j], NULL, NULL);
                        tr->moved[j] += mv;
                        tr->moved_analysed[j] += mv && (seen[i] >> 1);
                }
        }
        free(seen);
}

/**
 * @brief The range a distinct-key figure states holds the oracle: the
 *        estimate @p est with its standard error @p err (keys), at 3
 *        standard errors, covers the keys of the analysed messages
 *        @p analysed, and, with the messages not analysed @p more added
 *        upward (each can add one key), the keys produced @p all. An
 *        error of 0 claims the exact count of the analysed messages'.
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

/** @brief The partial line's wording and percentages. */
static void test_partial_line(void)
{
        static const struct {
                uint64_t    analysed, unanalysed;
                const char *line;
        } cases[] = {
            /* the run */
            {15582, 44418,
             "partial: keyshift analysed 15,582 of 60,000 messages (26 %)"},
            {1, 1, "partial: keyshift analysed 1 of 2 messages (50 %)"},
            /* never 100 % while one was skipped, nor 0 % while one was
             * analysed */
            {995, 5,
             "partial: keyshift analysed 995 of 1,000 messages "
             "(99.5 %)"},
            {999999, 1,
             "partial: keyshift analysed 999,999 of 1,000,000 "
             "messages (99.999 %)"},
            {1, 999, "partial: keyshift analysed 1 of 1,000 messages (0.1 %)"},
            {1, 9999999,
             "partial: keyshift analysed 1 of 10,000,000 "
             "messages (<0.001 %)"},
            {0, 7, "partial: keyshift analysed 0 of 7 messages (0 %)"},
            {60000, 0, ""},
            {0, 0, ""},
        };
        char   buf[KS_ANALYSIS_LINE_MAX];
        size_t i;

        for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                ks_analysis_t a;
                ks_analysis_init(&a, cases[i].analysed, cases[i].unanalysed);
                ks_analysis_partial_line(&a, buf, sizeof(buf));
                if (strcmp(buf, cases[i].line))
                        printf("\n    got \"%s\", expected \"%s\"", buf,
                               cases[i].line);
                CU_ASSERT_STRING_EQUAL(buf, cases[i].line);
                CU_ASSERT_EQUAL(a.complete, !cases[i].unanalysed);
        }
}

/** @returns the value of metric @p name of topic @p topic in @p text, or
 *           NAN when absent. */
static double metric(const char *text, const char *name, const char *topic)
{
        char        pat[256];
        const char *p;

        snprintf(pat, sizeof(pat),
                 "%s{client_id=\"c\",pid=\"1\",topic=\"%s\"} ", name, topic);
        p = strstr(text, pat);
        return p ? strtod(p + strlen(pat), NULL) : NAN;
}

/** @returns the metrics of a report holding topic @p t as @p name. */
static char *metrics_of(const char *name, json_t *t)
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
        json_object_set(topics, name, t);
        r = ks_report_build(&p, &o, topics, &wl);
        CU_ASSERT_EQUAL(ks_metrics_report(r, fp), 0);
        fclose(fp);
        json_decref(r);
        ks_warn_list_clear(&wl);
        return text;
}

/**
 * @brief Every label of one partial topic against its complete twin.
 * @param sample_holds_all the key sample holds every key: the complete
 *        twin's distinct keys and key fractions are exact (error 0), the
 *        case the partial report used to call exact too.
 */
static void check_twins(const stream_t *st, int sample_holds_all)
{
        ks_warn_list_t wl;
        json_t        *full, *part;
        long long      produced = st->messages, skip = 0;
        char          *mtext;
        const char    *summary;
        size_t         i;
        int            k, counts[2];
        truth_t        tf, tp;
        double         est;

        for (k = 0; k < st->messages; k++)
                skip += skipped(k);
        ks_warn_list_init(&wl);
        full = topic_of("full", st, 0, &wl);
        part = topic_of("part", st, 1, &wl);
        CU_ASSERT_PTR_NOT_NULL_FATAL(full);
        CU_ASSERT_PTR_NOT_NULL_FATAL(part);
        for (k = 0; k < 2; k++)
                counts[k] = (int)integer(
                    json_array_get(json_object_get(part, "proposals"),
                                   (size_t)k),
                    "partition_count", NULL);

        /* analysis: produced = analysed + unanalysed */
        CU_ASSERT(json_is_true(at(full, "analysis", "complete")));
        CU_ASSERT_EQUAL(number(full, "analysis", "analysed_fraction"), 1.0);
        CU_ASSERT(json_is_false(at(part, "analysis", "complete")));
        CU_ASSERT_EQUAL(integer(part, "analysis", "messages_produced"),
                        produced);
        CU_ASSERT_EQUAL(integer(part, "analysis", "messages_unanalysed"), skip);
        CU_ASSERT_EQUAL(integer(part, "analysis", "messages_analysed"),
                        produced - skip);
        CU_ASSERT_EQUAL(integer(part, "messages", NULL), produced - skip);
        CU_ASSERT_EQUAL(integer(part, "keys", "unanalysed"), skip);
        CU_ASSERT_DOUBLE_EQUAL(number(part, "analysis", "analysed_fraction"),
                               (double)(produced - skip) / (double)produced,
                               1e-12);

        /* distinct keys: the sketch's figure and error in both (0 when
         * the key sample holds every key seen), the analysed messages'
         * keys in the partial one, which says more may be among the
         * skipped (distinct_lower_bound); the oracle within the range */
        truth_of(st, 0, counts, &tf);
        truth_of(st, 1, counts, &tp);
        CU_ASSERT_EQUAL(tp.not_analysed, skip);
        CU_ASSERT(json_is_false(at(full, "keys", "distinct_lower_bound")));
        CU_ASSERT(json_is_true(at(part, "keys", "distinct_lower_bound")));
        CU_ASSERT(json_is_number(at(full, "keys", "distinct_error")));
        CU_ASSERT(json_is_number(at(part, "keys", "distinct_error")));
        CU_ASSERT_EQUAL(number(full, "keys", "distinct_error"),
                        tf.keys < (long long)st->sample ? 0.0
                                                        : ks_hll_std_error());
        CU_ASSERT_EQUAL(number(part, "keys", "distinct_error"),
                        tp.keys_analysed < (long long)st->sample
                            ? 0.0
                            : ks_hll_std_error());
        if (sample_holds_all) {
                CU_ASSERT_EQUAL(number(full, "keys", "distinct_error"), 0.0);
                CU_ASSERT_EQUAL(integer(full, "keys", "distinct_estimate"),
                                tf.keys);
        }
        est = (double)integer(full, "keys", "distinct_estimate");
        check_range("complete: distinct keys", est,
                    est * number(full, "keys", "distinct_error"), tf.keys,
                    tf.keys, 0);
        est = (double)integer(part, "keys", "distinct_estimate");
        if (est > (double)tp.keys)
                printf("\n    the partial estimate is above the keys "
                       "produced: a lower bound would be wrong");
        check_range("partial: distinct keys", est,
                    est * number(part, "keys", "distinct_error"),
                    tp.keys_analysed, tp.keys, tp.not_analysed);

        /* proposals: counts lower bounds, fractions estimates whose
         * error covers the exact fraction of all the traffic */
        for (i = 0; i < 2; i++) {
                json_t *mf =
                    at(json_array_get(json_object_get(full, "proposals"), i),
                       "moved", NULL);
                json_t *mp =
                    at(json_array_get(json_object_get(part, "proposals"), i),
                       "moved", NULL);
                double ef = number(mp, "messages_fraction_error", NULL);
                double ek = number(mp, "distinct_keys_fraction_error", NULL);
                double df = fabs(number(mp, "messages_fraction", NULL) -
                                 number(mf, "messages_fraction", NULL));
                double dk = fabs(number(mp, "distinct_keys_fraction", NULL) -
                                 number(mf, "distinct_keys_fraction", NULL));

                CU_ASSERT(json_is_true(at(mf, "messages_exact", NULL)));
                CU_ASSERT_EQUAL(number(mf, "messages_fraction_error", NULL), 0);
                CU_ASSERT_EQUAL(number(mf, "traffic_fraction_error", NULL), 0);
                if (sample_holds_all)
                        CU_ASSERT_EQUAL(
                            number(mf, "distinct_keys_fraction_error", NULL),
                            0);
                CU_ASSERT(json_is_false(at(mp, "messages_exact", NULL)));
                CU_ASSERT(ef > 0 && ef < 0.5);
                CU_ASSERT(ek > 0 && ek < 0.5);
                CU_ASSERT(number(mp, "traffic_fraction_error", NULL) > 0);
                CU_ASSERT(integer(mp, "messages", NULL) <=
                          integer(mf, "messages", NULL));
                printf("\n    %s, %d: messages %.4f (exact %.4f, error %.4f), "
                       "keys %.4f (twin %.4f, error %.4f)",
                       sample_holds_all ? "every key sampled" : "sample full",
                       (int)integer(json_array_get(
                                        json_object_get(part, "proposals"), i),
                                    "partition_count", NULL),
                       number(mp, "messages_fraction", NULL),
                       number(mf, "messages_fraction", NULL), ef,
                       number(mp, "distinct_keys_fraction", NULL),
                       number(mf, "distinct_keys_fraction", NULL), ek);
                CU_ASSERT(df <= 3 * ef);
                if (sample_holds_all)
                        CU_ASSERT(dk <= 3 * ek);
                /* moved keys: an estimate with its error, as the
                 * distinct keys; exact in a twin that sampled every key */
                CU_ASSERT(json_is_number(at(mp, "distinct_keys_error", NULL)));
                CU_ASSERT(json_is_number(at(mf, "distinct_keys_error", NULL)));
                if (sample_holds_all) {
                        CU_ASSERT_EQUAL(number(mf, "distinct_keys_error", NULL),
                                        0);
                        CU_ASSERT_EQUAL(integer(mf, "distinct_keys", NULL),
                                        tf.moved[i]);
                }
                check_range("complete: moved keys",
                            (double)integer(mf, "distinct_keys", NULL),
                            number(mf, "distinct_keys_error", NULL),
                            tf.moved[i], tf.moved[i], 0);
                check_range("partial: moved keys",
                            (double)integer(mp, "distinct_keys", NULL),
                            number(mp, "distinct_keys_error", NULL),
                            tp.moved_analysed[i], tp.moved[i], tp.not_analysed);
        }
        /* other clients' figures are estimates too */
        CU_ASSERT(json_is_false(
            at(at(part, "other_clients", "java"), "exact", NULL)));
        if (sample_holds_all)
                CU_ASSERT(json_is_true(
                    at(at(full, "other_clients", "java"), "exact", NULL)));

        /* the story begins with the partial line */
        summary = json_string_value(json_object_get(part, "summary"));
        CU_ASSERT_PTR_NOT_NULL_FATAL(summary);
        {
                ks_analysis_t a;
                char          line[KS_ANALYSIS_LINE_MAX];
                ks_analysis_init(&a, (uint64_t)(produced - skip),
                                 (uint64_t)skip);
                ks_analysis_partial_line(&a, line, sizeof(line));
                CU_ASSERT_EQUAL(strncmp(summary, line, strlen(line)), 0);
                CU_ASSERT_PTR_NOT_NULL(strstr(line, " messages ("));
        }
        CU_ASSERT_EQUAL(strncmp(summary, "partial: keyshift analysed ", 27), 0);
        /* and what it makes of the distinct keys: the analysed messages',
         * with the sketch's error, more possible among the skipped */
        {
                char want[160], n[32];
                if (number(part, "keys", "distinct_error") > 0)
                        snprintf(
                            want, sizeof(want),
                            "Distinct keys: %s in the analysed messages (+/- "
                            "%.2f%%, the sketch's standard error); ",
                            commas(integer(part, "keys", "distinct_estimate"),
                                   n),
                            100 * ks_hll_std_error());
                else
                        snprintf(
                            want, sizeof(want),
                            "Distinct keys: %s in the analysed messages (all "
                            "counted); ",
                            commas(integer(part, "keys", "distinct_estimate"),
                                   n));
                CU_ASSERT_PTR_NOT_NULL(strstr(summary, want));
                snprintf(want, sizeof(want),
                         "more may be among the %s messages not analysed. ",
                         commas(skip, n));
                CU_ASSERT_PTR_NOT_NULL(strstr(summary, want));
                CU_ASSERT_PTR_NULL(strstr(summary, "keys are lower bounds"));
                CU_ASSERT_PTR_NULL(
                    strstr(json_string_value(json_object_get(full, "summary")),
                           "Distinct keys: "));
        }
        CU_ASSERT_PTR_NULL(strstr(
            json_string_value(json_object_get(full, "summary")), "partial"));

        /* metrics: the analysed fraction and the skipped messages */
        mtext = metrics_of("part", part);
        CU_ASSERT_DOUBLE_EQUAL(
            metric(mtext, "keyshift_analysed_messages_ratio", "part"),
            number(part, "analysis", "analysed_fraction"), 1e-12);
        CU_ASSERT_EQUAL(
            metric(mtext, "keyshift_unanalysed_messages_total", "part"),
            (double)skip);
        free(mtext);
        mtext = metrics_of("full", full);
        CU_ASSERT_EQUAL(
            metric(mtext, "keyshift_analysed_messages_ratio", "full"), 1.0);
        CU_ASSERT_EQUAL(
            metric(mtext, "keyshift_unanalysed_messages_total", "full"), 0.0);
        free(mtext);

        json_decref(full);
        json_decref(part);
        ks_warn_list_clear(&wl);
}

/** The case: the key sample holds every key the analysis saw, so
 *  the report used to say the distinct keys and key fractions are exact. */
static void test_every_key_sampled(void)
{
        stream_t st = {20000, 3000, 4096, 42};
        check_twins(&st, 1);
}

/** More keys than the key sample holds: estimates already, now with the
 *  skipped messages' share in their error. */
static void test_sample_full(void)
{
        stream_t st = {20000, 5000, 256, 7};
        check_twins(&st, 0);
}

/** The review's case: 4,352 keys, each in the analysed messages too (the
 *  skipped ones hold no other key), so the HyperLogLog's estimate of the
 *  analysed messages' keys can be above the keys produced (here 4,369, as
 *  the review's ">=4,386" was): a lower bound was a wrong statement; the
 *  estimate with its error is not. */
static void test_estimate_above(void)
{
        stream_t st = {200000, 4352, 256, 7};
        check_twins(&st, 0);
}

/** The distinct-keys line's wording: the analysed messages' keys with
 *  the sketch's error, more possible among the others; nothing when
 *  complete. */
static void test_distinct_line(void)
{
        ks_analysis_sampling_t smp = {10,    1000,  640, 64000, 630,
                                      63000, 40320, 64,  34,    0};
        ks_analysis_t          a;
        char                   buf[KS_ANALYSIS_DISTINCT_LINE_MAX];

        ks_analysis_init(&a, 15582, 44418);
        CU_ASSERT_STRING_EQUAL(
            ks_analysis_distinct_line(&a, 4386.2, 1.04 / 128, buf, sizeof(buf)),
            "Distinct keys: 4,386 in the analysed messages (+/- 0.81%, the "
            "sketch's standard error); more may be among the 44,418 "
            "messages not analysed");
        CU_ASSERT_STRING_EQUAL(
            ks_analysis_distinct_line(&a, 2572, 0, buf, sizeof(buf)),
            "Distinct keys: 2,572 in the analysed messages (all counted); "
            "more may be among the 44,418 messages not analysed");
        CU_ASSERT_STRING_EQUAL(
            ks_analysis_distinct_line(&a, 2572, NAN, buf, sizeof(buf)),
            "Distinct keys: 2,572 in the analysed messages; more may be "
            "among the 44,418 messages not analysed");
        /* sampled: the messages not staged (630 sampled out) */
        ks_analysis_init_sampled(&a, 1640, 164000, 0, &smp, 600);
        CU_ASSERT_STRING_EQUAL(
            ks_analysis_distinct_line(&a, 310, 0, buf, sizeof(buf)),
            "Distinct keys: 310 in the analysed messages (all counted); "
            "more may be among the 630 messages not analysed");
        /* cut, never overflowed */
        CU_ASSERT_EQUAL(strlen(ks_analysis_distinct_line(&a, 310, 0, buf, 12)),
                        11);
        ks_analysis_init(&a, 60000, 0);
        CU_ASSERT_STRING_EQUAL(
            ks_analysis_distinct_line(&a, 4386, 0.0081, buf, sizeof(buf)), "");
}

/** The errors stated for a partial analysis: a proportion over Kish's
 *  effective number of keys, never 0, 0 when complete. */
static void test_errors(void)
{
        ks_analysis_t part, full;
        double        e;

        ks_analysis_init(&part, 100, 1);
        ks_analysis_init(&full, 101, 0);
        /* 100 keys of one message each: n_eff 100 */
        e = ks_analysis_messages_fraction_error(0.5, 100, 100, &part);
        CU_ASSERT_DOUBLE_EQUAL(e, sqrt(0.5 * 0.5 / 100), 1e-12);
        /* one key of 100 messages carries them all: n_eff 1 */
        e = ks_analysis_messages_fraction_error(1.0, 100, 100 * 100, &part);
        CU_ASSERT_DOUBLE_EQUAL(e, sqrt(0.75 * 0.25), 1e-12);
        /* no key moved in the sample: still not exact */
        CU_ASSERT(ks_analysis_keys_fraction_error(0.0, 50, 0, &part) > 0);
        CU_ASSERT(ks_analysis_messages_fraction_error(0.0, 0, 0, &part) > 0);
        CU_ASSERT_EQUAL(ks_analysis_messages_fraction_error(0.3, 9, 9, &full),
                        0);
        CU_ASSERT_EQUAL(ks_analysis_keys_fraction_error(0.3, 9, 0, &full), 0);
        CU_ASSERT_DOUBLE_EQUAL(
            ks_analysis_keys_fraction_error(0.3, 9, 1, &full),
            sqrt(0.3 * 0.7 / 9), 1e-12);
}

void ks_test_register(void)
{
        KS_ADD_SUITE("honest labels", {"the partial line", test_partial_line},
                     {"the distinct-keys line", test_distinct_line},
                     {"errors of a partial analysis", test_errors},
                     {"skipped, every key sampled: nothing exact",
                      test_every_key_sampled},
                     {"skipped, key sample full", test_sample_full},
                     {"skipped, every key seen: estimate with its error",
                      test_estimate_above});
}
