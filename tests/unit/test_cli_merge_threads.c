/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_cli_merge_threads.c
 * @brief Loaded reports merged with their topics shared out between
 *        threads (cli/ks_cli_merge_reports.c, `keyshift fleet`'s merge):
 *        the merged report holds, in the order first seen, exactly what
 *        ks_cli_merge_topic() gives for each topic merged alone on this
 *        thread (the oracle: the one-thread loop the merge had before),
 *        and a merge refused is refused with the first failing topic's
 *        message in that order. Run under TSan too (label tsan).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ks_cli_merge.h"
#include "ks_cli_report.h"
#include "ks_report.h"
#include "ks_sizing.h"
#include "ks_test.h"
#include "ks_topic.h"

#define KS_INPUTS 5
#define KS_TOPICS 12

/** @brief Adds topic @p name (keys from @p first) with @p count
 *         partitions to @p topics. */
static void add_topic(json_t *topics, const char *name, int first, int count,
                      ks_report_opts_t *o, ks_warn_list_t *wl)
{
        ks_topic_params_t   tp = {0};
        ks_topic_snapshot_t s;
        ks_topic_t         *t;
        int                 i;

        tp.partitioner       = KS_PARTITIONER_CONSISTENT_RANDOM;
        tp.key_sample_size   = 64;
        tp.mixed_sample_size = 64;
        tp.topk_capacity     = 32;
        tp.flow_max_cells    = 1000;
        tp.pending_max       = 10;
        tp.proposed[0]       = 12;
        tp.proposed_cnt      = 1;
        t                    = ks_topic_new(name, &tp, 1000);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        ks_topic_set_partition_count(t, count, KS_COUNT_CONFIG, 1000);
        for (i = 0; i < 2000; i++) {
                char key[32];
                snprintf(key, sizeof(key), "k%d", first + (i * 7919) % 300);
                ks_topic_record(t, key, strlen(key), -1, 10 + i % 5);
        }
        CU_ASSERT_EQUAL_FATAL(ks_topic_snapshot(t, &s), 0);
        json_object_set_new(topics, s.name, ks_report_topic(&s, o, wl));
        ks_topic_snapshot_free(&s);
        ks_topic_destroy(t);
}

/**
 * @brief Input @p i, loaded as the CLI loads a report (checked, hot keys
 *        as rows): topics t<i> .. t<KS_TOPICS-1> (so later inputs bring
 *        no new topic and earlier ones have more); topics listed in
 *        @p odd get 7 partitions instead of 6 in input 1 (refused).
 */
static json_t *input(int i, const char *const *odd)
{
        ks_report_producer_t p = {.client_id          = "c",
                                  .client_name        = "c#producer-1",
                                  .pid                = 100 + i,
                                  .librdkafka_version = "2.0.2",
                                  .partitioner        = "consistent_random",
                                  .partitioner_source = "partitioner",
                                  .sticky_linger_ms   = 10,
                                  .started_at_ms      = 1000,
                                  .report_interval_ms = 60000};
        ks_sizing_params_t   sp;
        ks_report_opts_t     o = {20, 5000, 1, &sp, 1e6, 1e9, 0, 0, NULL};
        ks_warn_list_t       wl;
        json_t              *topics = json_object(), *whole, *file;
        char                 name[16], err[1024];
        int                  k;

        ks_sizing_params_init(&sp);
        ks_warn_list_init(&wl);
        for (k = KS_TOPICS - 1; k >= i; k--) { /* an order of its own */
                const char *const *q;
                int                count = 6;
                snprintf(name, sizeof(name), "t%d", k);
                for (q = odd; i == 1 && q && *q; q++)
                        if (!strcmp(*q, name))
                                count = 7;
                add_topic(topics, name, i * 100 + k, count, &o, &wl);
        }
        whole = ks_report_build(&p, &o, topics, &wl);
        file  = ks_report_file_form(whole);
        json_decref(whole);
        ks_warn_list_clear(&wl);
        CU_ASSERT_EQUAL(ks_cli_report_check(file, "in.json", err, sizeof(err)),
                        0);
        CU_ASSERT_EQUAL(ks_cli_report_rows(file, "in.json", err, sizeof(err)),
                        0);
        return file;
}

/** @brief The oracle: the merge of each topic, in the order first seen,
 *         on this thread. @returns the topics, or NULL with @p err. */
static json_t *merged_alone(const ks_cli_report_t *r, size_t n, char *err,
                            size_t errsz)
{
        json_t            *topics = json_object(), *t, *m;
        ks_cli_merge_in_t *in     = calloc(n, sizeof(*in));
        const char        *name;
        size_t             i, j, cnt;

        for (i = 0; i < n; i++)
                json_object_foreach(ks_cli_report_topics(&r[i]), name, t)
                {
                        if (json_object_get(topics, name))
                                continue;
                        for (cnt = 0, j = i; j < n; j++)
                                if ((in[cnt].topic = json_object_get(
                                         ks_cli_report_topics(&r[j]), name)))
                                        in[cnt++].report = &r[j];
                        if (!(m = ks_cli_merge_topic(name, in, cnt, 0, n, err,
                                                     errsz))) {
                                free(in);
                                json_decref(topics);
                                return NULL;
                        }
                        json_object_set_new(topics, name, m);
                }
        free(in);
        return topics;
}

/** @returns 1 if objects @p a and @p b hold equal members in one order. */
static int same_in_order(json_t *a, json_t *b)
{
        void *ia = json_object_iter(a), *ib = json_object_iter(b);

        for (; ia && ib; ia = json_object_iter_next(a, ia),
                         ib = json_object_iter_next(b, ib))
                if (strcmp(json_object_iter_key(ia),
                           json_object_iter_key(ib)) ||
                    !json_equal(json_object_iter_value(ia),
                                json_object_iter_value(ib)))
                        return 0;
        return !ia && !ib;
}

static void run_case(const char *const *odd)
{
        ks_cli_report_t r[KS_INPUTS];
        char            paths[KS_INPUTS][16], err[2048] = "", want[2048] = "";
        json_t         *merged, *oracle;
        size_t          i;

        for (i = 0; i < KS_INPUTS; i++) {
                snprintf(paths[i], sizeof(paths[i]), "in%zu.json", i);
                r[i].path = paths[i];
                r[i].root = input((int)i, odd);
        }
        merged = ks_cli_merge_reports(r, KS_INPUTS, 0, err, sizeof(err));
        oracle = merged_alone(r, KS_INPUTS, want, sizeof(want));
        CU_ASSERT_EQUAL(!merged, !oracle);
        if (merged && oracle) {
                CU_ASSERT_EQUAL(json_object_size(oracle), KS_TOPICS);
                CU_ASSERT(
                    same_in_order(json_object_get(merged, "topics"), oracle));
        } else {
                CU_ASSERT_PTR_NOT_NULL(strstr(want, odd[0]));
                CU_ASSERT_STRING_EQUAL(err, want);
        }
        json_decref(merged);
        json_decref(oracle);
        for (i = 0; i < KS_INPUTS; i++)
                json_decref(r[i].root);
}

static void test_merged_as_alone(void)
{
        run_case(NULL);
}

/* t9 comes before t4 in the order first seen (input 0 lists t11 .. t0) */
static void test_first_failure(void)
{
        static const char *const odd[] = {"t9", "t4", NULL};

        run_case(odd);
}

void ks_test_register(void)
{
        KS_ADD_SUITE(
            "keyshift fleet's merge on several threads",
            {"each topic as merged alone, in order", test_merged_as_alone},
            {"the first failing topic's message", test_first_failure});
}
