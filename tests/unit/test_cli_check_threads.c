/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_cli_check_threads.c
 * @brief The CLI's report check (cli/ks_cli_report_check.c, with the
 *        schema validator and its patterns) run on several threads at
 *        once, as `keyshift fleet`'s workers run it: the first checks of
 *        the process race to build the schema's caches, and every verdict
 *        and message is the one a later check on one thread gives (the
 *        oracle), for a report the core writes and broken copies of it.
 *        Run under TSan too (label tsan).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ks_cli_report.h"
#include "ks_report.h"
#include "ks_sizing.h"
#include "ks_test.h"
#include "ks_topic.h"

#define KS_THREADS 4
#define KS_ROUNDS 6
#define KS_CASES 6

/** A topic with hot keys, a key sample and proposed counts. */
static ks_topic_t *busy_topic(const char *name)
{
        ks_topic_params_t tp = {0};
        ks_topic_t       *t;
        int               i;

        tp.partitioner       = KS_PARTITIONER_CONSISTENT_RANDOM;
        tp.key_sample_size   = 64;
        tp.mixed_sample_size = 64;
        tp.topk_capacity     = 32;
        tp.flow_max_cells    = 1000;
        tp.pending_max       = 10;
        tp.proposed[0]       = 12;
        tp.proposed[1]       = 16;
        tp.proposed_cnt      = 2;
        t                    = ks_topic_new(name, &tp, 1000);
        ks_topic_set_partition_count(t, 6, KS_COUNT_CONFIG, 1000);
        for (i = 0; i < 3000; i++) {
                char key[32];
                snprintf(key, sizeof(key), "k%d", (i * 7919) % 500);
                ks_topic_record(t, key, strlen(key), -1, 10);
        }
        return t;
}

/** @returns a report of one topic "a", as its file holds it. */
static json_t *file_report(void)
{
        ks_report_producer_t p = {.client_id          = "c1",
                                  .client_name        = "c#producer-1",
                                  .pid                = 42,
                                  .librdkafka_version = "2.0.2",
                                  .partitioner        = "consistent_random",
                                  .partitioner_source = "partitioner",
                                  .sticky_linger_ms   = 10,
                                  .started_at_ms      = 1000,
                                  .report_interval_ms = 60000};
        ks_sizing_params_t   sp;
        ks_report_opts_t     o = {20, 5000, 1, &sp, 1e6, 1e9, 0, 0, NULL};
        ks_warn_list_t       wl;
        ks_topic_snapshot_t  s;
        ks_topic_t          *t;
        json_t              *topics = json_object(), *whole, *file;

        ks_sizing_params_init(&sp);
        ks_warn_list_init(&wl);
        t = busy_topic("a");
        CU_ASSERT_EQUAL_FATAL(ks_topic_snapshot(t, &s), 0);
        json_object_set_new(topics, s.name, ks_report_topic(&s, &o, &wl));
        ks_topic_snapshot_free(&s);
        ks_topic_destroy(t);
        whole = ks_report_build(&p, &o, topics, &wl);
        file  = ks_report_file_form(whole);
        json_decref(whole);
        ks_warn_list_clear(&wl);
        return file;
}

/** The cases: [0] the report, then broken copies, each with the path its
 *  message must name. */
static json_t     *cases[KS_CASES];
static const char *names[KS_CASES] = {NULL,
                                      "topics.a.merge.distinct_hll.packed",
                                      "topics.a.merge.key_sample.packed",
                                      "topics.a.hot_keys.key_hex[1]",
                                      "generated_at",
                                      "topics.a.proposals[0].partition_count"};

static void make_cases(void)
{
        json_t *t, *s;
        char   *b64;
        size_t  i;

        cases[0] = file_report();
        CU_ASSERT_PTR_NOT_NULL_FATAL(cases[0]);
        for (i = 1; i < KS_CASES; i++)
                cases[i] = json_deep_copy(cases[0]);
        /* '=' inside the base64, not at its end: the schema's pattern */
        t = json_object_get(json_object_get(cases[1], "topics"), "a");
        s = json_object_get(
            json_object_get(json_object_get(t, "merge"), "distinct_hll"),
            "packed");
        b64 = strdup(json_string_value(s));
        CU_ASSERT_PTR_NOT_NULL_FATAL(b64);
        b64[strlen(b64) / 2] = '=';
        json_string_set(s, b64);
        free(b64);
        /* shorter than a packed sketch's header */
        t = json_object_get(json_object_get(cases[2], "topics"), "a");
        json_string_set(
            json_object_get(
                json_object_get(json_object_get(t, "merge"), "key_sample"),
                "packed"),
            "QUJD");
        /* not lower-case hex */
        t = json_object_get(json_object_get(cases[3], "topics"), "a");
        CU_ASSERT_FATAL(json_array_size(json_object_get(
                            json_object_get(t, "hot_keys"), "key_hex")) > 1);
        json_array_set_new(
            json_object_get(json_object_get(t, "hot_keys"), "key_hex"), 1,
            json_string("6B3g"));
        json_object_del(cases[4], "generated_at");
        t = json_object_get(json_object_get(cases[5], "topics"), "a");
        json_object_set_new(json_array_get(json_object_get(t, "proposals"), 0),
                            "partition_count", json_integer(0));
}

typedef struct {
        json_t *copies[KS_ROUNDS][KS_CASES]; /**< made before the threads */
        int     rc[KS_ROUNDS][KS_CASES];
        char    err[KS_ROUNDS][KS_CASES][1024];
} worker_t;

static void *worker_main(void *arg)
{
        worker_t *w = arg;
        size_t    r, c;

        for (r = 0; r < KS_ROUNDS; r++)
                for (c = 0; c < KS_CASES; c++)
                        w->rc[r][c] = ks_cli_report_check(
                            w->copies[r][c], "r.json", w->err[r][c],
                            sizeof(w->err[r][c]));
        return NULL;
}

static void test_threads_same_verdicts(void)
{
        static worker_t w[KS_THREADS];
        pthread_t       th[KS_THREADS];
        size_t          i, r, c;

        make_cases();
        for (i = 0; i < KS_THREADS; i++)
                for (r = 0; r < KS_ROUNDS; r++)
                        for (c = 0; c < KS_CASES; c++) {
                                w[i].copies[r][c] = json_deep_copy(cases[c]);
                                w[i].err[r][c][0] = '\0';
                        }
        /* the process's first checks, all at once */
        for (i = 0; i < KS_THREADS; i++)
                CU_ASSERT_EQUAL_FATAL(
                    pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
        for (i = 0; i < KS_THREADS; i++)
                pthread_join(th[i], NULL);
        /* the oracle: one thread, after */
        for (c = 0; c < KS_CASES; c++) {
                char err[1024] = "";
                int  rc =
                    ks_cli_report_check(cases[c], "r.json", err, sizeof(err));
                CU_ASSERT_EQUAL(rc, c ? -1 : 0);
                if (c && !strstr(err, names[c]))
                        fprintf(stderr, "case %zu: %s\n", c, err);
                CU_ASSERT(!c || strstr(err, names[c]) != NULL);
                for (i = 0; i < KS_THREADS; i++)
                        for (r = 0; r < KS_ROUNDS; r++) {
                                CU_ASSERT_EQUAL(w[i].rc[r][c], rc);
                                if (rc)
                                        CU_ASSERT_STRING_EQUAL(w[i].err[r][c],
                                                               err);
                        }
        }
        for (i = 0; i < KS_THREADS; i++)
                for (r = 0; r < KS_ROUNDS; r++)
                        for (c = 0; c < KS_CASES; c++)
                                json_decref(w[i].copies[r][c]);
        for (c = 0; c < KS_CASES; c++)
                json_decref(cases[c]);
}

void ks_test_register(void)
{
        KS_ADD_SUITE("the report check on several threads",
                     {"the same verdicts and messages as on one",
                      test_threads_same_verdicts});
}
