/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_broker_fleet_late.c
 * @brief keyshift.report.topic with the broker down when the host starts,
 *        then up (issue 32): every host message is delivered as without
 *        keyshift, and the reports are published once the broker is up.
 *
 * This program starts a broker of its own (tests/broker/kafka-broker.sh on
 * $KS_BROKER_LATE_PORT, the fixture's port + 2; its topics auto-created
 * with 6 partitions) only after the producers have started, sent every
 * message and written reports, and stops it at exit (atexit: also when an
 * assertion ends the test early). Two producers send the same stream,
 * both created while nothing listens on that port:
 *  - the host: keyshift loaded, keyshift.report.topic set;
 *  - its twin: no plugin at all (what "without keyshift" does), to another
 *    topic of the same partition count.
 * The oracles: the delivery reports (every message delivered, none failed,
 * each to the partition its twin's went to) and `keyshift fleet` reading
 * the report topic (the host is there, live while it runs, then ended,
 * with every message counted). While the host is idle, the records that
 * keyshift publishes again from memory are the report file's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ks_broker_support.h"
#include "ks_e2e_support.h"
#include "ks_test.h"

#define KS_LATE_MSGS 3000
#define KS_LATE_PARTS "6"
/** Seconds the broker stays down after the producers started. */
#define KS_LATE_DOWN_S 12.0

static char late_port[16];
static int  broker_started;

static const char *cli(void)
{
        const char *c = getenv("KS_CLI");
        if (!c)
                CU_FAIL_FATAL("KS_CLI is not set (ctest sets it)");
        return c;
}

/** @brief Runs kafka-broker.sh @p verb on the late port (its own
 *         broker, whatever KS_KAFKA_BOOTSTRAP says). @returns its status. */
static int late_broker(const char *verb)
{
        return ks_e2e_system("env -u KS_KAFKA_BOOTSTRAP KS_KAFKA_PORT=%s "
                             "KS_KAFKA_NUM_PARTITIONS=" KS_LATE_PARTS
                             " %s/kafka-broker.sh %s "
                             ">/dev/null",
                             late_port, getenv("KS_BROKER_DIR"), verb);
}

static void stop_late_broker(void)
{
        if (broker_started && late_broker("stop"))
                fprintf(stderr,
                        "fleet_late: stopping the broker on port %s "
                        "failed\n",
                        late_port);
        broker_started = 0;
}

/** @returns the fleet report of @p rt on the late broker (NULL: fleet
 *           failed), written to @p out. */
static json_t *fleet(const char *rt, const char *out)
{
        if (ks_e2e_system("%s fleet -b 127.0.0.1:%s -r %s --timeout-ms 5000 "
                          "-o %s 2>/dev/null",
                          cli(), late_port, rt, out))
                return NULL;
        return ks_e2e_load_json(out);
}

/**
 * @brief While the host is idle its reports do not change, and keyshift
 *        publishes the same records again from memory (ks_publish.h):
 *        each interval adds records (`fleet.records`, compaction aside),
 *        and the latest are the report file's (its `generated_at`, its
 *        topic's messages and bytes).
 */
static void check_idle_records(ks_broker_producer_t *host, const char *rt,
                               const char *topic, const char *report,
                               const char *out)
{
        json_t   *file, *f;
        long long before = -1, after = -1;
        double    until;
        char      path[300];

        until = ks_broker_now_s() + 1.5; /* acknowledged: unchanged now */
        while (ks_broker_now_s() < until)
                rd_kafka_poll(host->rk, 100);
        if ((f = fleet(rt, out)))
                before = ks_e2e_int(f, "fleet/records");
        json_decref(f);
        until = ks_broker_now_s() + 1.5; /* 5 intervals: republished */
        while (ks_broker_now_s() < until)
                rd_kafka_poll(host->rk, 100);
        f    = fleet(rt, out);
        file = ks_e2e_load_json(report);
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        CU_ASSERT_PTR_NOT_NULL_FATAL(file);
        after = ks_e2e_int(f, "fleet/records");
        printf("  idle host: %lld records on the report topic, then %lld\n",
               before, after);
        CU_ASSERT(before > 0 && after >= before + 4);
        CU_ASSERT_STRING_EQUAL(
            json_string_value(ks_e2e_get(f, "fleet/producers/0/generated_at")),
            json_string_value(json_object_get(file, "generated_at")));
        snprintf(path, sizeof(path), "topics/%s/messages", topic);
        CU_ASSERT_EQUAL(ks_e2e_int(f, path), ks_e2e_int(file, path));
        snprintf(path, sizeof(path), "topics/%s/bytes", topic);
        CU_ASSERT_EQUAL(ks_e2e_int(f, path), ks_e2e_int(file, path));
        json_decref(f);
        json_decref(file);
}

static void send_all(ks_broker_producer_t *p, const char *topic)
{
        char   key[32], val[32];
        size_t i;

        for (i = 0; i < KS_LATE_MSGS; i++) {
                int kl = snprintf(key, sizeof(key), "k%zu", (i * 7919) % 500);
                int vl = snprintf(val, sizeof(val), "v%zu", i);
                ks_broker_produce(p, topic, i, key, (size_t)kl, val,
                                  (size_t)vl);
        }
}

static void test_broker_late(void)
{
        const char          *dir      = ks_e2e_tmpdir("fleet-late");
        const char          *port_env = getenv("KS_BROKER_LATE_PORT");
        char                 boot[64], topic[128], twin_topic[128], rt[128];
        char                 report[600], out[600], path[300];
        ks_broker_producer_t host, twin;
        rd_kafka_conf_t     *conf;
        json_t              *r;
        double               deadline;
        size_t               i, same = 0;
        long long            live_msgs = -1;

        CU_ASSERT_PTR_NOT_NULL_FATAL(port_env);
        snprintf(late_port, sizeof(late_port), "%s", port_env);
        snprintf(boot, sizeof(boot), "127.0.0.1:%s", late_port);
        /* every helper (admin, producers) talks to this program's broker */
        setenv("KS_KAFKA_BOOTSTRAP", boot, 1);
        atexit(stop_late_broker);
        /* nothing may listen there yet: a leftover broker would void it */
        CU_ASSERT_FATAL(ks_e2e_system("bash -c '! (exec 3<>/dev/tcp/"
                                      "127.0.0.1/%s)' 2>/dev/null",
                                      late_port) == 0);
        ks_broker_topic_name("fleet-late", topic, sizeof(topic));
        ks_broker_topic_name("fleet-late-twin", twin_topic, sizeof(twin_topic));
        ks_broker_topic_name("fleet-late-reports", rt, sizeof(rt));
        snprintf(report, sizeof(report), "%s/host.json", dir);
        snprintf(out, sizeof(out), "%s/fleet.json", dir);

        conf = ks_e2e_conf("keyshift.report.path", report,
                           "keyshift.report.interval.ms", "300",
                           "keyshift.report.topic", rt, NULL);
        CU_ASSERT_FATAL(ks_broker_producer_new(&host, conf, KS_LATE_MSGS) == 0);
        conf = rd_kafka_conf_new(); /* the twin: no keyshift */
        CU_ASSERT_FATAL(ks_broker_producer_new(&twin, conf, KS_LATE_MSGS) == 0);
        send_all(&host, topic);
        send_all(&twin, twin_topic);
        /* reports written (and publishing failing) while the broker is
         * down, longer than keyshift's CreateTopics request may wait
         * (10 s): the host's report file counts every message */
        deadline = ks_broker_now_s() + KS_LATE_DOWN_S;
        while (ks_broker_now_s() < deadline) {
                rd_kafka_poll(host.rk, 100);
                rd_kafka_poll(twin.rk, 0);
        }
        CU_ASSERT_EQUAL(host.delivered + host.failed, 0);
        r = ks_e2e_load_json(report);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        CU_ASSERT_EQUAL(ks_e2e_int(r, "messages"), KS_LATE_MSGS);
        json_decref(r);

        printf("  starting a broker on %s after the producers\n", boot);
        CU_ASSERT_FATAL(late_broker("start") == 0);
        broker_started = 1;
        ks_broker_flush(&host);
        ks_broker_flush(&twin);
        CU_ASSERT_EQUAL(host.delivered, KS_LATE_MSGS);
        CU_ASSERT_EQUAL(host.failed, 0);
        CU_ASSERT_EQUAL(twin.delivered, KS_LATE_MSGS);
        CU_ASSERT_EQUAL(twin.failed, 0);
        for (i = 0; i < KS_LATE_MSGS; i++)
                same += host.partition[i] >= 0 &&
                        host.partition[i] == twin.partition[i];
        CU_ASSERT_EQUAL(same, KS_LATE_MSGS);

        /* the periodic reports reach the topic while the host lives */
        snprintf(path, sizeof(path), "topics/%s/messages", topic);
        deadline = ks_broker_now_s() + 60;
        while (live_msgs != KS_LATE_MSGS && ks_broker_now_s() < deadline) {
                rd_kafka_poll(host.rk, 500);
                r = fleet(rt, out);
                if (r && ks_e2e_get(r, path) &&
                    ks_e2e_int(r, "fleet/live") == 1)
                        live_msgs = ks_e2e_int(r, path);
                json_decref(r);
        }
        CU_ASSERT_EQUAL(live_msgs, KS_LATE_MSGS);
        check_idle_records(&host, rt, topic, report, out);

        ks_broker_producer_close(&host); /* the final report: ended */
        ks_broker_producer_close(&twin);
        r = fleet(rt, out);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        CU_ASSERT_EQUAL(ks_e2e_int(r, "fleet/ended"), 1);
        CU_ASSERT_EQUAL(ks_e2e_int(r, "fleet/merged"), 1);
        CU_ASSERT_EQUAL(ks_e2e_int(r, path), KS_LATE_MSGS);
        json_decref(r);
        r = ks_e2e_load_json(report);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        snprintf(path, sizeof(path), "topics/%s/partition_count/current",
                 topic);
        CU_ASSERT_EQUAL(ks_e2e_int(r, path), atoi(KS_LATE_PARTS));
        json_decref(r);
        ks_broker_summary("fleet_late",
                          "broker down at start, then up: %zu/%d host "
                          "messages delivered where the twin without "
                          "keyshift put them, %zu failed; fleet saw %lld "
                          "messages while the host lived",
                          same, KS_LATE_MSGS, host.failed, live_msgs);
        ks_broker_producer_free(&host);
        ks_broker_producer_free(&twin);
        ks_broker_admin_close();
        stop_late_broker();
        if (!CU_get_number_of_failures())
                ks_broker_tmpdir_done(dir);
}

void ks_test_register(void)
{
        KS_ADD_SUITE("keyshift.report.topic, broker late",
                     {"the broker down when the host starts, then up",
                      test_broker_late});
}
