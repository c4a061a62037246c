/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_report_reuse.c
 * @brief Incremental reports (core/report/ks_report_reuse.h): a topic
 *        that did not change since the previous report is written from
 *        its kept text, byte for byte the same; a topic that changed (a
 *        message, an acknowledgement, a partition count) is rebuilt; the
 *        report stays one valid file whose totals, warnings, sketch tally
 *        and metrics are what rebuilding every topic gives.
 *
 * Oracles: the previous report's bytes (each topic's text cut out of the
 * file by a JSON scanner of this test, not by the code under test); the
 * messages the test sent; the same report written with reuse off; and
 * `keyshift metrics`' path (ks_metrics_report() of the parsed file) for
 * the metrics lines kept with the topics. Every report is built at a
 * later time than the one before (its uptime_s differs), so a topic
 * rebuilt where it should have been reused has other bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ks_metrics.h"
#include "ks_report.h"
#include "ks_report_reuse.h"
#include "ks_sizing.h"
#include "ks_test.h"

#define TOPICS 3

static const char *const names[TOPICS] = {"alpha", "b\"eta", "gamma"};

static ks_topic_params_t params(void)
{
        ks_topic_params_t tp = {0};

        tp.partitioner       = KS_PARTITIONER_CONSISTENT_RANDOM;
        tp.key_sample_size   = 64;
        tp.mixed_sample_size = 64;
        tp.topk_capacity     = 32;
        tp.flow_max_cells    = 1000;
        tp.pending_max       = 10;
        tp.proposed[0]       = 12;
        tp.proposed[1]       = 16;
        tp.proposed_cnt      = 2;
        return tp;
}

/** @brief Sends @p n keyed messages to @p t, keys from @p seed on. */
static void send(ks_topic_t *t, int n, int seed)
{
        int i;

        for (i = 0; i < n; i++) {
                char key[32];
                snprintf(key, sizeof(key), "k%d", (seed + i * 7919) % 300);
                ks_topic_record(t, key, strlen(key), -1, 10);
        }
}

typedef struct fixture {
        ks_topic_t          *t[TOPICS];
        uint64_t             sent[TOPICS];
        ks_sizing_params_t   sp;
        ks_topic_params_t    asked;
        ks_report_producer_t p;
        char                 file[TOPICS][300];
        int64_t              now_ms;
} fixture_t;

static void fixture_init(fixture_t *f)
{
        size_t i;

        memset(f, 0, sizeof(*f));
        ks_sizing_params_init(&f->sp);
        f->asked  = params();
        f->p      = (ks_report_producer_t){.client_id          = "c1",
                                           .client_name        = "c1#producer-1",
                                           .pid                = 42,
                                           .librdkafka_version = "2.0.2",
                                           .partitioner        = "consistent_random",
                                           .partitioner_source = "partitioner",
                                           .sticky_linger_ms   = 10,
                                           .started_at_ms      = 1000,
                                           .report_interval_ms = 60000};
        f->now_ms = 5000;
        for (i = 0; i < TOPICS; i++) {
                f->t[i] = ks_topic_new(names[i], &f->asked, 1000);
                CU_ASSERT_PTR_NOT_NULL_FATAL(f->t[i]);
                ks_topic_set_partition_count(f->t[i], 6, KS_COUNT_CONFIG, 1000);
                send(f->t[i], 2000 + 100 * (int)i, (int)i);
                f->sent[i] = 2000 + 100 * i;
        }
}

static void fixture_free(fixture_t *f)
{
        size_t i;

        for (i = 0; i < TOPICS; i++)
                ks_topic_destroy(f->t[i]);
}

/**
 * @brief One report as the plugin writes it (ks_reporter_write()): every
 *        topic's changes noted, then each written through
 *        ks_report_topics_add(), into @p path, a second later than the
 *        last. @returns the counts in *out; the metrics text (malloc()ed)
 *        when @p metrics.
 */
static char *report(fixture_t *f, const char *path, int reuse, int metrics,
                    ks_report_topics_t *out)
{
        ks_report_opts_t   o = {20,  f->now_ms, 0,    &f->sp, 1e6,
                                1e9, 1,         1000, NULL};
        ks_warn_list_t     wl;
        ks_report_writer_t w;
        char               err[512], *text = NULL;
        size_t             i, len;
        FILE              *mem;

        f->now_ms += 1000;
        o.now_ms = f->now_ms;
        for (i = 0; i < TOPICS; i++)
                ks_topic_note_changes(f->t[i], o.now_ms);
        ks_warn_list_init(&wl);
        memset(out, 0, sizeof(*out));
        out->w     = &w;
        out->wl    = &wl;
        out->opts  = &o;
        out->asked = &f->asked;
        out->reuse = reuse;
        if (metrics) {
                json_t *head = ks_report_head(&f->p, &o);
                out->metrics = ks_metrics_new(head);
                json_decref(head);
        }
        CU_ASSERT_EQUAL_FATAL(ks_report_writer_open(&w, path), 0);
        CU_ASSERT_EQUAL_FATAL(ks_report_writer_begin(&w, &f->p, &o), 0);
        for (i = 0; i < TOPICS; i++)
                ks_report_topics_add(f->t[i], out);
        CU_ASSERT_EQUAL(ks_report_writer_end(&w, &wl, err, sizeof(err)), 0);
        if (metrics) {
                json_t *warnings = ks_warn_list_json(&wl, NULL);
                ks_metrics_warnings(out->metrics, warnings);
                json_decref(warnings);
                mem = open_memstream(&text, &len);
                CU_ASSERT_EQUAL(ks_metrics_print(out->metrics, mem), 0);
                fclose(mem);
                ks_metrics_free(out->metrics);
                out->metrics = NULL;
        }
        ks_warn_list_clear(&wl);
        return text;
}

/** @returns the contents of @p path (free it), its length in *len. */
static char *slurp(const char *path, size_t *len)
{
        FILE *fp = fopen(path, "rb");
        char *b;
        long  n;

        CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
        fseek(fp, 0, SEEK_END);
        n = ftell(fp);
        rewind(fp);
        b = malloc((size_t)n + 1);
        CU_ASSERT_FATAL(b && fread(b, 1, (size_t)n, fp) == (size_t)n);
        b[n] = 0;
        fclose(fp);
        *len = (size_t)n;
        return b;
}

/** @returns the end of the JSON value that starts at @p s (a scanner of
 *           this test: strings with escapes, nested objects and
 *           arrays), or NULL. */
static const char *value_end(const char *s)
{
        int depth = 0, in_str = 0;

        for (; *s; s++) {
                if (in_str) {
                        if (*s == '\\')
                                s++;
                        else if (*s == '"')
                                in_str = 0;
                        continue;
                }
                if (*s == '"')
                        in_str = 1;
                else if (*s == '{' || *s == '[')
                        depth++;
                else if ((*s == '}' || *s == ']') && --depth == 0)
                        return s + 1;
        }
        return NULL;
}

/** @returns topic @p i's text in report @p r (from its quoted name to its
 *           closing brace: a new string), found after `"topics":{`. */
static char *topic_text(const char *r, size_t i)
{
        char        key[64];
        const char *topics = strstr(r, "\"topics\":{"), *at, *end;
        json_t     *k      = json_string(names[i]);
        char       *q      = json_dumps(k, JSON_ENCODE_ANY);

        snprintf(key, sizeof(key), "%s:{", q);
        free(q);
        json_decref(k);
        CU_ASSERT_PTR_NOT_NULL_FATAL(topics);
        at = strstr(topics, key);
        CU_ASSERT_PTR_NOT_NULL_FATAL(at);
        end = value_end(at + strlen(key) - 1);
        CU_ASSERT_PTR_NOT_NULL_FATAL(end);
        return strndup(at, (size_t)(end - at));
}

/** @returns topic @p i's `messages` in parsed report @p j. */
static long long messages_of(json_t *j, size_t i)
{
        return json_integer_value(json_object_get(
            json_object_get(json_object_get(j, "topics"), names[i]),
            "messages"));
}

static void test_unchanged_topics_same_bytes(void)
{
        fixture_t          f;
        ks_report_topics_t rt;
        char               a[TOPICS][300], *r1, *r2, *r3, *x, *y;
        size_t             len, i;
        json_t            *j;

        fixture_init(&f);
        for (i = 0; i < TOPICS; i++)
                snprintf(a[i], sizeof(a[i]), "/tmp/keyshift-reuse-%ld-%zu.json",
                         (long)getpid(), i);
        free(report(&f, a[0], 1, 0, &rt));
        CU_ASSERT_EQUAL(rt.rebuilt, TOPICS);
        CU_ASSERT_EQUAL(rt.reused, 0);

        /* only the second topic gets messages */
        send(f.t[1], 500, 99);
        f.sent[1] += 500;
        free(report(&f, a[1], 1, 0, &rt));
        CU_ASSERT_EQUAL(rt.rebuilt, 1);
        CU_ASSERT_EQUAL(rt.reused, TOPICS - 1);
        r1 = slurp(a[0], &len);
        r2 = slurp(a[1], &len);
        for (i = 0; i < TOPICS; i++) {
                x = topic_text(r1, i);
                y = topic_text(r2, i);
                if (i == 1) {
                        CU_ASSERT_STRING_NOT_EQUAL(x, y);
                } else {
                        CU_ASSERT_STRING_EQUAL(x, y);
                }
                free(x);
                free(y);
        }
        /* one valid report, its totals the messages sent */
        j = json_loadb(r2, len, 0, NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(j);
        for (i = 0; i < TOPICS; i++)
                CU_ASSERT_EQUAL(messages_of(j, i), (long long)f.sent[i]);
        CU_ASSERT_EQUAL(json_integer_value(json_object_get(j, "messages")),
                        (long long)(f.sent[0] + f.sent[1] + f.sent[2]));
        json_decref(j);

        /* an acknowledgement alone changes the third topic */
        ks_topic_ack(f.t[2], "k1", 2, 3, 0);
        free(report(&f, a[2], 1, 0, &rt));
        CU_ASSERT_EQUAL(rt.rebuilt, 1);
        r3 = slurp(a[2], &len);
        x  = topic_text(r2, 2);
        y  = topic_text(r3, 2);
        CU_ASSERT_STRING_NOT_EQUAL(x, y);
        CU_ASSERT_PTR_NOT_NULL(strstr(y, "\"acknowledged\":{\"messages\":1"));
        free(x);
        free(y);
        for (i = 0; i < 2; i++) { /* the others as in the report before */
                x = topic_text(r2, i);
                y = topic_text(r3, i);
                CU_ASSERT_STRING_EQUAL(x, y);
                free(x);
                free(y);
        }
        /* a partition count changes the first: rebuilt, new proposals */
        ks_topic_set_partition_count(f.t[0], 8, KS_COUNT_METADATA, f.now_ms);
        free(report(&f, a[2], 1, 0, &rt));
        CU_ASSERT_EQUAL(rt.rebuilt, 1);
        free(r1);
        r1 = slurp(a[2], &len);
        x  = topic_text(r1, 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(x, "\"current\":8"));
        free(x);
        free(r1);
        free(r2);
        free(r3);
        for (i = 0; i < TOPICS; i++)
                unlink(a[i]);
        fixture_free(&f);
}

/** Reuse off rebuilds every topic: and then the unchanged topics' bytes
 *  differ (their time-driven figures are of the later report), so the
 *  test above would see a reuse that does not happen. */
static void test_rebuilt_differs(void)
{
        fixture_t          f;
        ks_report_topics_t rt;
        char               a[2][300], *r1, *r2, *x, *y;
        size_t             len, i;

        fixture_init(&f);
        for (i = 0; i < 2; i++)
                snprintf(a[i], sizeof(a[i]),
                         "/tmp/keyshift-rebuild-%ld-%zu.json", (long)getpid(),
                         i);
        free(report(&f, a[0], 0, 0, &rt));
        free(report(&f, a[1], 0, 0, &rt));
        CU_ASSERT_EQUAL(rt.rebuilt, TOPICS);
        CU_ASSERT_EQUAL(rt.reused, 0);
        r1 = slurp(a[0], &len);
        r2 = slurp(a[1], &len);
        x  = topic_text(r1, 0);
        y  = topic_text(r2, 0);
        CU_ASSERT_STRING_NOT_EQUAL(x, y);
        free(x);
        free(y);
        free(r1);
        free(r2);
        for (i = 0; i < 2; i++)
                unlink(a[i]);
        fixture_free(&f);
}

/** What is kept with a topic besides its text: its warnings (logged and
 *  in the producer's metrics), sketch sizes (SKETCHES_REDUCED) and
 *  metrics lines are those a full rebuild gives. */
static void test_kept_warnings_tally_metrics(void)
{
        fixture_t          f;
        ks_report_topics_t rt, full;
        char               a[300], *m_reused, *m_file, *body;
        size_t             len;
        json_t            *j;
        FILE              *mem;

        fixture_init(&f);
        snprintf(a, sizeof(a), "/tmp/keyshift-reuse-m-%ld.json",
                 (long)getpid());
        free(report(&f, a, 1, 1, &rt));
        send(f.t[1], 50, 7);
        m_reused = report(&f, a, 1, 1, &rt);
        CU_ASSERT_EQUAL(rt.reused, TOPICS - 1);
        /* the metrics of the kept lines = keyshift metrics of the file */
        body = slurp(a, &len);
        j    = json_loadb(body, len, 0, NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(j);
        mem = open_memstream(&m_file, &len);
        CU_ASSERT_EQUAL(ks_metrics_report(j, mem), 0);
        fclose(mem);
        CU_ASSERT_STRING_EQUAL(m_reused, m_file);
        CU_ASSERT_PTR_NOT_NULL(strstr(m_reused, "topic=\"alpha\""));
        /* the tally counts every topic, reused or not */
        CU_ASSERT_EQUAL(rt.tally.topics, TOPICS);
        free(report(&f, a, 0, 0, &full));
        CU_ASSERT_EQUAL(memcmp(&rt.tally, &full.tally, sizeof(rt.tally)), 0);
        json_decref(j);
        free(body);
        free(m_reused);
        free(m_file);
        unlink(a);
        fixture_free(&f);
}

/** The kept warnings go to the list again: logged and counted as if
 *  rebuilt (the codes of reused topics in the log). */
static void test_kept_warnings_listed(void)
{
        fixture_t          f;
        ks_report_topics_t rt;
        ks_report_opts_t   o = {20, 0, 0, &f.sp, 1e6, 1e9, 1, 1000, NULL};
        ks_warn_list_t     wl1, wl2;
        ks_report_writer_t w;
        char               a[300], err[512];
        size_t             i, round;

        fixture_init(&f);
        snprintf(a, sizeof(a), "/tmp/keyshift-reuse-w-%ld.json",
                 (long)getpid());
        ks_warn_list_init(&wl1);
        ks_warn_list_init(&wl2);
        for (round = 0; round < 2; round++) {
                ks_warn_list_t *wl = round ? &wl2 : &wl1;
                o.now_ms           = 10000 + 1000 * (int64_t)round;
                for (i = 0; i < TOPICS; i++)
                        ks_topic_note_changes(f.t[i], o.now_ms);
                memset(&rt, 0, sizeof(rt));
                rt.w     = &w;
                rt.wl    = wl;
                rt.opts  = &o;
                rt.asked = &f.asked;
                rt.reuse = 1;
                CU_ASSERT_EQUAL_FATAL(ks_report_writer_open(&w, a), 0);
                CU_ASSERT_EQUAL(ks_report_writer_begin(&w, &f.p, &o), 0);
                for (i = 0; i < TOPICS; i++)
                        ks_report_topics_add(f.t[i], &rt);
                CU_ASSERT_EQUAL(ks_report_writer_end(&w, wl, err, sizeof(err)),
                                0);
        }
        CU_ASSERT_EQUAL(rt.reused, TOPICS);
        CU_ASSERT(wl1.cnt > 0);
        CU_ASSERT_EQUAL(wl1.cnt, wl2.cnt);
        for (i = 0; i < wl1.cnt && i < wl2.cnt; i++) {
                CU_ASSERT_STRING_EQUAL(wl1.items[i].code, wl2.items[i].code);
                CU_ASSERT_STRING_EQUAL(wl1.items[i].topic, wl2.items[i].topic);
                CU_ASSERT_STRING_EQUAL(wl1.items[i].message,
                                       wl2.items[i].message);
        }
        ks_warn_list_clear(&wl1);
        ks_warn_list_clear(&wl2);
        unlink(a);
        fixture_free(&f);
}

void ks_test_register(void)
{
        KS_ADD_SUITE("incremental reports",
                     {"unchanged topics: the same bytes; changed: rebuilt",
                      test_unchanged_topics_same_bytes},
                     {"without reuse the bytes differ", test_rebuilt_differs},
                     {"kept metrics and tally as rebuilt",
                      test_kept_warnings_tally_metrics},
                     {"kept warnings listed again", test_kept_warnings_listed});
}
