/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_concurrency.c
 * @brief The threaded parts, without librdkafka (whose threads
 *        ThreadSanitizer cannot follow): application threads recording
 *        messages through the topic registry, a broker thread acknowledging,
 *        and the reporter thread setting counts and taking snapshots, all at
 *        once. Run under TSan by tests/run (label `tsan`); the totals must
 *        add up exactly.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "ks_config.h"
#include "ks_registry.h"
#include "ks_report.h"
#include "ks_test.h"
#include "ks_test_registry.h"

#define THREADS 4
#define PER_THREAD 20000
#define TOPICS 3

static ks_registry_t     reg;
static ks_config_t       conf;
static ks_topic_params_t params;
static int               stop_reporter; /* atomic */

static const char *topic_names[TOPICS] = {"a", "b", "c"};

static void *app_thread(void *arg)
{
        int  id = (int)(long)arg, i, created;
        char key[32];

        for (i = 0; i < PER_THREAD; i++) {
                ks_topic_t *t = ks_registry_get(&reg, topic_names[i % TOPICS],
                                                &conf, &params, 1, &created);
                int kl = snprintf(key, sizeof(key), "k%d-%d", id, i % 500);
                CU_ASSERT_PTR_NOT_NULL(t);
                if (t) {
                        ks_topic_record(t, key, (size_t)kl, -1, 10);
                        ks_topic_ack(t, key, (size_t)kl, i % 7, 0);
                }
        }
        return NULL;
}

static void count_topic(ks_topic_t *t, void *opaque)
{
        ks_topic_snapshot_t s;
        uint64_t           *sum = opaque;
        ks_warn_list_t      wl;
        ks_report_opts_t    o = {20, 0, 0, NULL, 0, 0, 0, 0, NULL};
        json_t             *j;

        if (ks_topic_snapshot(t, &s))
                return;
        ks_warn_list_init(&wl);
        j = ks_report_topic(&s, &o, &wl);
        json_decref(j);
        ks_warn_list_clear(&wl);
        *sum += s.c.total.messages;
        ks_topic_snapshot_free(&s);
}

static void set_count(ks_topic_t *t, void *opaque)
{
        int32_t n = *(int32_t *)opaque;
        ks_topic_set_partition_count(t, n, KS_COUNT_METADATA, n);
}

static void *reporter_thread(void *arg)
{
        int32_t n = 4;
        (void)arg;
        while (!__atomic_load_n(&stop_reporter, __ATOMIC_SEQ_CST)) {
                uint64_t sum = 0;
                ks_registry_foreach(&reg, set_count, &n);
                ks_registry_foreach(&reg, count_topic, &sum);
                n = n == 4 ? 8 : 4; /* counts change underneath */
        }
        return NULL;
}

static void test_threads(void)
{
        pthread_t app[THREADS], rep;
        uint64_t  sum = 0;
        long      i;

        ks_test_registry_setup(&conf, &params, KS_TEST_KEY_SAMPLE, &reg);
        stop_reporter = 0;
        pthread_create(&rep, NULL, reporter_thread, NULL);
        for (i = 0; i < THREADS; i++)
                pthread_create(&app[i], NULL, app_thread, (void *)i);
        for (i = 0; i < THREADS; i++)
                pthread_join(app[i], NULL);
        __atomic_store_n(&stop_reporter, 1, __ATOMIC_SEQ_CST);
        pthread_join(rep, NULL);

        ks_registry_foreach(&reg, count_topic, &sum);
        CU_ASSERT_EQUAL(sum, (uint64_t)THREADS * PER_THREAD);
        CU_ASSERT_EQUAL(reg.tracked, TOPICS);
        ks_test_registry_teardown(&conf, &reg);
}

void ks_test_register(void)
{
        KS_ADD_SUITE("threads", {"record, ack, count changes and snapshots "
                                 "at once",
                                 test_threads});
}
