/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_broker_compacted.c
 * @brief A compacted topic on the real broker: keyshift reads its
 *        cleanup.policy with the Admin API (DescribeConfigs) and warns that
 *        an increase leaves moved keys with two latest values
 *        (COMPACTED_TOPIC); a plain topic beside it gets no such warning.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ks_broker_support.h"
#include "ks_e2e_support.h"
#include "ks_test.h"

/** @returns topics/<t>/partition_count/compacted of the report: 1, 0, -1. */
static int compacted_in(const char *report, const char *topic)
{
        char    path[300];
        json_t *r = access(report, F_OK) ? NULL : ks_e2e_load_json(report);
        json_t *c;
        int     v;

        snprintf(path, sizeof(path), "topics/%s/partition_count/compacted",
                 topic);
        c = r ? ks_e2e_get(r, path) : NULL;
        v = json_is_boolean(c) ? json_is_true(c) : -1;
        json_decref(r);
        return v;
}

static void test_compacted(void)
{
        const char          *dir = ks_e2e_tmpdir("compacted");
        char                 compact[128], plain[128], report[600];
        ks_broker_producer_t pr;
        rd_kafka_conf_t     *conf;
        json_t              *r;
        double               deadline;
        size_t               i;

        ks_broker_topic_name("compacted", compact, sizeof(compact));
        ks_broker_topic_name("plain", plain, sizeof(plain));
        CU_ASSERT_FATAL(ks_broker_create_topic_config(
                            compact, 4, "cleanup.policy", "compact") == 0);
        CU_ASSERT_FATAL(ks_broker_create_topic(plain, 4) == 0);
        snprintf(report, sizeof(report), "%s/report.json", dir);
        conf = ks_e2e_conf("keyshift.report.path", report,
                           "keyshift.report.interval.ms", "200",
                           "keyshift.metadata.refresh.ms", "300", NULL);
        CU_ASSERT_FATAL(ks_broker_producer_new(&pr, conf, 1000) == 0);
        for (i = 0; i < 200; i++) {
                char key[16];
                int  kl = snprintf(key, sizeof(key), "k%zu", i % 37);
                ks_broker_produce(&pr, compact, 2 * i, key, (size_t)kl, "v", 1);
                ks_broker_produce(&pr, plain, 2 * i + 1, key, (size_t)kl, "v",
                                  1);
        }
        ks_broker_flush(&pr);
        deadline = ks_broker_now_s() + 20;
        while (compacted_in(report, compact) != 1 &&
               ks_broker_now_s() < deadline)
                rd_kafka_poll(pr.rk, 100);
        ks_broker_producer_free(&pr);

        r = ks_e2e_load_json(report);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        CU_ASSERT_EQUAL(compacted_in(report, compact), 1);
        CU_ASSERT_EQUAL(compacted_in(report, plain), 0);
        {
                char w[300];
                snprintf(w, sizeof(w), "topics/%s/warnings", compact);
                CU_ASSERT(
                    ks_e2e_has_warning(ks_e2e_get(r, w), "COMPACTED_TOPIC"));
                snprintf(w, sizeof(w), "topics/%s/warnings", plain);
                CU_ASSERT(
                    !ks_e2e_has_warning(ks_e2e_get(r, w), "COMPACTED_TOPIC"));
                snprintf(w, sizeof(w), "topics/%s/partition_count/brokers",
                         compact);
                CU_ASSERT_EQUAL(ks_e2e_int(r, w), 1);
        }
        ks_broker_summary("compacted",
                          "### A compacted topic\n\ncleanup.policy read with "
                          "DescribeConfigs: compacted topic flagged "
                          "(COMPACTED_TOPIC), plain topic not.\n");
        json_decref(r);
        ks_broker_delete_topic(compact);
        ks_broker_delete_topic(plain);
        ks_broker_tmpdir_done(dir);
}

void ks_test_register(void)
{
        KS_ADD_SUITE("compacted topic",
                     {"cleanup.policy=compact is found and warned about",
                      test_compacted});
}
