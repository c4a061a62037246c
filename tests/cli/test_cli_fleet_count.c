/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_cli_fleet_count.c
 * @brief `keyshift fleet` and `keyshift merge` when one producer had not
 *        learned a topic's partition count (its report's
 *        `partition_count.current` null): that producer's record is left
 *        out of the topic's figures, counted and said, not a refused merge
 *        ("different partition counts", as broker.fleet once failed).
 *
 * No broker: librdkafka's mock cluster, kept by this process, is the
 * report topic's cluster, and `keyshift fleet` reads it over TCP. Producer
 * A (the plugin loaded, its data on the mock cluster) learns the count and
 * publishes its reports; producer B sends its data to a closed port, so
 * it never learns the count, and publishes its final report to the mock
 * cluster (keyshift.report.topic.bootstrap.servers). The oracle for the
 * fleet's figures is A's own report file, and A's delivery reports.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include "cli_test_support.h"
#include "ks_e2e_support.h"
#include "ks_test.h"

#define N_A 400
#define N_B 50

static int delivered;

static void dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
        (void)rk, (void)opaque;
        delivered += !m->err;
}

/** @returns 1 once the report at @p path knows topic "fleet"'s count. */
static int count_known(const char *path)
{
        json_t *r     = json_load_file(path, 0, NULL);
        json_t *t     = json_object_get(json_object_get(r, "topics"), "fleet");
        int     known = json_is_integer(
                json_object_get(json_object_get(t, "partition_count"), "current"));

        json_decref(r);
        return known;
}

/** @brief One producer with the plugin: @p n keyed messages to topic
 *         "fleet", flushed for at most @p flush_ms; with @p known_path,
 *         waits (at most 20 s) for its report there to know the topic's
 *         count (keyshift's metadata answer, on a loaded machine later
 *         than the deliveries); then destroyed (its final report written
 *         and published). */
static void produce(rd_kafka_conf_t *conf, int n, int flush_ms,
                    const char *known_path)
{
        char        errstr[512];
        rd_kafka_t *rk;
        int         i;

        rd_kafka_conf_set_dr_msg_cb(conf, dr_cb);
        rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
        CU_ASSERT_PTR_NOT_NULL_FATAL(rk);
        for (i = 0; i < n; i++) {
                char key[32];
                int  kl = snprintf(key, sizeof(key), "vessel-%d", i % 37);
                CU_ASSERT_EQUAL(
                    rd_kafka_producev(rk, RD_KAFKA_V_TOPIC("fleet"),
                                      RD_KAFKA_V_KEY(key, (size_t)kl),
                                      RD_KAFKA_V_VALUE("v", 1),
                                      RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                                      RD_KAFKA_V_END),
                    0);
        }
        rd_kafka_flush(rk, flush_ms);
        for (i = 0; known_path && i < 200 && !count_known(known_path); i++)
                usleep(100 * 1000);
        rd_kafka_destroy(rk);
}

static void test_count_unknown_left_out(void)
{
        const char              *dir = ks_e2e_tmpdir("cli-fleet-count");
        char                     errstr[512], pa[600], pb[600], pf[600];
        char                     pm[600], bs[256];
        rd_kafka_conf_t         *mconf = rd_kafka_conf_new();
        rd_kafka_t              *mrk;
        rd_kafka_mock_cluster_t *mc;
        ks_clit_run_t            r;
        json_t                  *a, *b, *f, *m, *ps, *bp = NULL;
        const char              *wm;
        size_t                   i;

        snprintf(pa, sizeof(pa), "%s/a.json", dir);
        snprintf(pb, sizeof(pb), "%s/b.json", dir);
        snprintf(pf, sizeof(pf), "%s/fleet.json", dir);
        snprintf(pm, sizeof(pm), "%s/merged.json", dir);
        mrk = rd_kafka_new(RD_KAFKA_PRODUCER, mconf, errstr, sizeof(errstr));
        CU_ASSERT_PTR_NOT_NULL_FATAL(mrk);
        mc = rd_kafka_mock_cluster_new(mrk, 1);
        CU_ASSERT_PTR_NOT_NULL_FATAL(mc);
        snprintf(bs, sizeof(bs), "%s", rd_kafka_mock_cluster_bootstraps(mc));
        CU_ASSERT_FATAL(rd_kafka_mock_topic_create(mc, "fleet", 6, 1) == 0);
        CU_ASSERT_FATAL(rd_kafka_mock_topic_create(mc, "ks-reports", 1, 1) ==
                        0);

        /* A: knows the count (6), publishes */
        produce(ks_e2e_conf("bootstrap.servers", bs, "keyshift.report.path", pa,
                            "keyshift.report.interval.ms", "100",
                            "keyshift.report.topic", "ks-reports",
                            "keyshift.report.topic.flush.ms", "5000", NULL),
                N_A, 10000, pa);
        CU_ASSERT_EQUAL(delivered, N_A);
        /* B: its data cluster never answers; its reports go to the mock */
        produce(ks_e2e_conf("bootstrap.servers", "127.0.0.1:1",
                            "message.timeout.ms", "500", "keyshift.report.path",
                            pb, "keyshift.report.interval.ms", "0",
                            "keyshift.report.topic", "ks-reports",
                            "keyshift.report.topic.bootstrap.servers", bs,
                            "keyshift.report.topic.flush.ms", "5000", NULL),
                N_B, 2000, NULL);
        a = ks_e2e_load_json(pa);
        b = ks_e2e_load_json(pb);
        CU_ASSERT_PTR_NOT_NULL_FATAL(a);
        CU_ASSERT_PTR_NOT_NULL_FATAL(b);
        CU_ASSERT_EQUAL(ks_e2e_int(a, "topics/fleet/partition_count/current"),
                        6);
        /* the premise: B's report has no count */
        CU_ASSERT(json_is_null(
            ks_e2e_get(b, "topics/fleet/partition_count/current")));
        CU_ASSERT_EQUAL(ks_e2e_int(a, "topics/fleet/messages"), N_A);

        /* the fleet: A's figures, B's record left out and said */
        CU_ASSERT_EQUAL(ks_clit_run(&r,
                                    "fleet --bootstrap '%s' --report-topic "
                                    "ks-reports -o '%s'",
                                    bs, pf),
                        0);
        CU_ASSERT(ks_clit_has(r.err, "1 left out"));
        ks_clit_run_free(&r);
        f = ks_e2e_load_json(pf);
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        CU_ASSERT_EQUAL(ks_e2e_int(f, "fleet/merged"), 2);
        CU_ASSERT_EQUAL(ks_e2e_int(f, "fleet/records_left_out"), 1);
        CU_ASSERT_EQUAL(ks_e2e_int(f, "topics/fleet/messages"),
                        ks_e2e_int(a, "topics/fleet/messages"));
        CU_ASSERT(json_equal(ks_e2e_get(f, "topics/fleet/current/partitions"),
                             ks_e2e_get(a, "topics/fleet/current/partitions")));
        CU_ASSERT_EQUAL(ks_e2e_int(f, "topics/fleet/partition_count/current"),
                        6);
        CU_ASSERT(ks_e2e_has_warning(ks_e2e_get(f, "warnings"),
                                     "FLEET_RECORDS_LEFT_OUT"));
        CU_ASSERT(ks_e2e_has_warning(ks_e2e_get(f, "topics/fleet/warnings"),
                                     "COUNT_UNKNOWN_LEFT_OUT"));
        ps = ks_e2e_get(f, "fleet/producers");
        CU_ASSERT_EQUAL(json_array_size(ps), 2);
        for (i = 0; i < json_array_size(ps); i++) {
                json_t *lo = json_object_get(json_array_get(ps, i), "left_out");
                if (lo) {
                        CU_ASSERT_PTR_NULL(bp);
                        bp = json_array_get(ps, i);
                        CU_ASSERT_STRING_EQUAL(
                            json_string_value(json_object_get(lo, "fleet")),
                            "partition count unknown");
                }
        }
        CU_ASSERT_PTR_NOT_NULL(bp);
        CU_ASSERT_EQUAL(ks_clit_run(&r, "show '%s'", pf), 0);
        CU_ASSERT(ks_clit_has(r.out, "1 records left out"));
        ks_clit_run_free(&r);

        /* keyshift merge of the two files: the same rule */
        CU_ASSERT_EQUAL(ks_clit_run(&r, "merge '%s' '%s' -o '%s'", pa, pb, pm),
                        0);
        ks_clit_run_free(&r);
        m = ks_e2e_load_json(pm);
        CU_ASSERT_PTR_NOT_NULL_FATAL(m);
        CU_ASSERT_EQUAL(ks_e2e_int(m, "topics/fleet/messages"),
                        ks_e2e_int(a, "topics/fleet/messages"));
        CU_ASSERT(json_equal(ks_e2e_get(m, "topics/fleet/current/partitions"),
                             ks_e2e_get(a, "topics/fleet/current/partitions")));
        wm = ks_e2e_warning_message(ks_e2e_get(m, "topics/fleet/warnings"),
                                    "COUNT_UNKNOWN_LEFT_OUT");
        CU_ASSERT(wm && strstr(wm, pb)); /* names the file left out */
        /* B alone: nothing known, merged as it is (count unknown) */
        CU_ASSERT_EQUAL(ks_clit_run(&r, "merge '%s' '%s' -o '%s'", pb, pb, pm),
                        1); /* one producer twice: still refused */
        ks_clit_run_free(&r);

        json_decref(a);
        json_decref(b);
        json_decref(f);
        json_decref(m);
        rd_kafka_mock_cluster_destroy(mc);
        rd_kafka_destroy(mrk);
        if (!CU_get_number_of_failures())
                ks_e2e_system("rm -rf %s", dir);
}

void ks_test_register(void)
{
        KS_ADD_SUITE("keyshift fleet, a producer without a partition count",
                     {"its record left out, counted and said; merge agrees",
                      test_count_unknown_left_out});
}
