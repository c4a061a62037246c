/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_report_topic.c
 * @brief keyshift.report.topic when the report cluster is unreachable
 *        (issue 32): the host producer (on librdkafka's mock cluster) is
 *        unharmed, its report file is still written, each cause of failure
 *        is warned once (REPORT_TOPIC_FAILED, on stderr and in a report),
 *        every report, the final one too, says records fail
 *        (producer.report_topic: state failing, none delivered),
 *        and its destroy waits no longer than keyshift.report.topic.flush.ms
 *        for the records that cannot go; and, on a mock cluster that
 *        outlives the producer, that the records are the report as
 *        written, one topic each. The rest of what records carry is
 *        tested on a real broker (tests/broker/test_broker_fleet.c).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include "ks_e2e_support.h"
#include "ks_test.h"

static double mono_s(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/** @returns how many REPORT_TOPIC_FAILED lines @p text holds; 1 in
 *           @p dup when two of them say the same (after the time). */
static int failed_lines(char *text, int *dup)
{
        char *lines[64], *save = NULL, *l;
        int   n = 0, i;

        *dup = 0;
        for (l = strtok_r(text, "\n", &save); l;
             l = strtok_r(NULL, "\n", &save)) {
                char *body = strstr(l, "REPORT_TOPIC_FAILED");
                if (!body || n == 64)
                        continue;
                for (i = 0; i < n; i++)
                        *dup |= !strcmp(lines[i], body);
                lines[n++] = body;
        }
        return n;
}

static void test_unreachable(void)
{
        const char       *dir = ks_e2e_tmpdir("report-topic");
        char              report[600], errlog[600], *text;
        ks_e2e_producer_t p;
        rd_kafka_conf_t  *conf;
        json_t           *r, *ws, *rt;
        int               saved, fd, i, dups, in_reports = 0;
        double            t0, destroy_s;
        FILE             *fp;
        long              size;

        snprintf(report, sizeof(report), "%s/r.json", dir);
        snprintf(errlog, sizeof(errlog), "%s/stderr.txt", dir);
        conf = ks_e2e_conf(
            "keyshift.report.path", report, "keyshift.report.interval.ms",
            "100", "keyshift.report.topic", "keyshift-reports",
            "keyshift.report.topic.bootstrap.servers", "127.0.0.1:1",
            "keyshift.report.topic.flush.ms", "500", NULL);
        /* keyshift's lines go to stderr: kept to count them */
        fflush(stderr);
        saved = dup(2);
        fd    = open(errlog, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        CU_ASSERT_FATAL(fd >= 0 && saved >= 0);
        dup2(fd, 2);
        close(fd);

        CU_ASSERT_FATAL(ks_e2e_producer_new(&p, conf, "t", 3) == 0);
        for (i = 0; i < 500; i++) {
                char key[16];
                int  kl = snprintf(key, sizeof(key), "k%d", i % 31);
                ks_e2e_produce(&p, "t", key, (size_t)kl, -1, "v", 1);
                if (i % 50 == 0)
                        usleep(100 * 1000); /* reports, failures */
        }
        t0 = mono_s();
        ks_e2e_producer_close(&p);
        destroy_s = mono_s() - t0;

        fflush(stderr);
        dup2(saved, 2);
        close(saved);

        /* the host unharmed: every message delivered */
        CU_ASSERT_EQUAL(p.dr_cnt, 500);
        for (i = 0; i < (int)p.dr_cnt; i++)
                CU_ASSERT_EQUAL(p.drs[i].err, 0);
        ks_e2e_producer_free(&p);
        /* flush.ms 500: the destroy does not wait for the unreachable
         * cluster (the mock cluster's own destroy takes some) */
        printf("  destroy took %.3f s\n", destroy_s);
        CU_ASSERT(destroy_s < 2.5);
        /* the report is written, with its 500 messages */
        r = ks_e2e_load_json(report);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        CU_ASSERT_EQUAL(ks_e2e_int(r, "messages"), 500);
        /* the final report says publishing fails, though the warning was
         * in an earlier one: queued, none delivered, the last error */
        rt = ks_e2e_get(r, "producer/report_topic");
        CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
        CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(rt, "state")),
                               "failing");
        CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(rt, "topic")),
                               "keyshift-reports");
        CU_ASSERT(ks_e2e_int(r, "producer/report_topic/records_queued") > 0);
        CU_ASSERT_EQUAL(
            ks_e2e_int(r, "producer/report_topic/records_delivered"), 0);
        CU_ASSERT(json_is_string(json_object_get(rt, "last_error")));
        CU_ASSERT(json_is_string(json_object_get(rt, "last_error_at")));
        ws = ks_e2e_get(r, "warnings");
        for (i = 0; i < (int)json_array_size(ws); i++)
                in_reports += !strcmp(json_string_value(json_object_get(
                                          json_array_get(ws, i), "code")),
                                      "REPORT_TOPIC_FAILED");
        json_decref(r);
        /* each cause once on stderr: the connection refused, at most a few
         * more (all brokers down, the final records not delivered) */
        fp = fopen(errlog, "r");
        CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
        fseek(fp, 0, SEEK_END);
        size = ftell(fp);
        rewind(fp);
        text = calloc(1, (size_t)size + 1);
        CU_ASSERT_EQUAL(fread(text, 1, (size_t)size, fp), (size_t)size);
        fclose(fp);
        i = failed_lines(text, &dups);
        printf("  %d REPORT_TOPIC_FAILED lines, %d in the final report\n", i,
               in_reports);
        CU_ASSERT(i >= 1 && i <= 5);
        CU_ASSERT(!dups);
        free(text);
        if (!CU_get_number_of_failures())
                ks_e2e_system("rm -rf %s", dir);
}

/* keyshift.report.topic unset: no report producer, no warning. */
static void test_off(void)
{
        const char       *dir = ks_e2e_tmpdir("report-topic-off");
        char              report[600];
        ks_e2e_producer_t p;
        json_t           *r;
        rd_kafka_conf_t  *conf;
        int               i;

        snprintf(report, sizeof(report), "%s/r.json", dir);
        conf = ks_e2e_conf("keyshift.report.path", report, NULL);
        CU_ASSERT_FATAL(ks_e2e_producer_new(&p, conf, "t", 3) == 0);
        for (i = 0; i < 100; i++)
                ks_e2e_produce(&p, "t", "k", 1, -1, "v", 1);
        ks_e2e_producer_close(&p);
        CU_ASSERT_EQUAL(p.dr_cnt, 100);
        ks_e2e_producer_free(&p);
        r = ks_e2e_load_json(report);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        CU_ASSERT(!ks_e2e_has_warning(ks_e2e_get(r, "warnings"),
                                      "REPORT_TOPIC_FAILED"));
        CU_ASSERT_PTR_NULL(
            json_object_get(json_object_get(r, "producer"), "report_topic"));
        json_decref(r);
        if (!CU_get_number_of_failures())
                ks_e2e_system("rm -rf %s", dir);
}

/** @brief Fails the test on a refused property. */
static void conf_set(rd_kafka_conf_t *conf, const char *name, const char *value)
{
        char err[512];

        if (rd_kafka_conf_set(conf, name, value, err, sizeof(err)) !=
            RD_KAFKA_CONF_OK) {
                fprintf(stderr, "%s=%s: %s\n", name, value, err);
                CU_FAIL_FATAL("property refused");
        }
}

/**
 * @returns the last record of each key of topic @p topic (partition 0) of
 *          the cluster at @p boot: an object {key's "topic": value}, each
 *          value parsed; NULL when the topic cannot be read. @p records:
 *          how many records were read.
 */
static json_t *last_records(const char *boot, const char *topic, int *records)
{
        rd_kafka_conf_t                 *conf = rd_kafka_conf_new();
        rd_kafka_topic_partition_list_t *tp;
        rd_kafka_t                      *rk;
        json_t                          *last = json_object();
        char                             err[512];
        int                              eof = 0, idle = 0;

        *records = 0;
        conf_set(conf, "bootstrap.servers", boot);
        conf_set(conf, "group.id", "ks-test-records");
        conf_set(conf, "enable.partition.eof", "true");
        if (!(rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof(err)))) {
                fprintf(stderr, "consumer: %s\n", err);
                json_decref(last);
                return NULL;
        }
        tp = rd_kafka_topic_partition_list_new(1);
        rd_kafka_topic_partition_list_add(tp, topic, 0)->offset =
            RD_KAFKA_OFFSET_BEGINNING;
        rd_kafka_assign(rk, tp);
        rd_kafka_topic_partition_list_destroy(tp);
        while (!eof && idle < 100) {
                rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 100);
                json_t             *k, *v;
                if (!m) {
                        idle++;
                        continue;
                }
                if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
                        eof = 1;
                } else if (!m->err) {
                        (*records)++;
                        k = json_loadb(m->key, m->key_len, 0, NULL);
                        v = json_loadb(m->payload, m->len, 0, NULL);
                        CU_ASSERT_PTR_NOT_NULL(k);
                        CU_ASSERT_PTR_NOT_NULL(v);
                        if (k && v)
                                json_object_set(
                                    last,
                                    json_string_value(
                                        json_object_get(k, "topic")),
                                    v);
                        json_decref(k);
                        json_decref(v);
                }
                rd_kafka_message_destroy(m);
        }
        CU_ASSERT(eof);
        rd_kafka_consumer_close(rk);
        rd_kafka_destroy(rk);
        return last;
}

/**
 * @brief The records are the report file as written, one topic each: a
 *        producer to three topics reports every 200 ms, then only one
 *        topic changes (the others' kept texts are written again), then
 *        nothing changes (the same records queued again), then the final
 *        report; the last record of each key must equal the final report
 *        with `topics` that one topic and `messages` its messages, and the
 *        producer's own record `topics` {} and `messages` 0.
 */
static void test_records_are_the_report(void)
{
        const char              *dir = ks_e2e_tmpdir("report-topic-records");
        static const char *const topics[] = {"a", "b", "c"};
        char                     report[600], boot[512], key[32], err[512];
        rd_kafka_conf_t         *conf;
        rd_kafka_t              *owner, *rk;
        rd_kafka_mock_cluster_t *mc;
        json_t                  *r, *last, *t, *want;
        const char              *name;
        int                      i, records, compared = 0;

        snprintf(report, sizeof(report), "%s/r.json", dir);
        /* the cluster outlives the producer: its owner makes nothing else */
        owner = rd_kafka_new(RD_KAFKA_PRODUCER, rd_kafka_conf_new(), err,
                             sizeof(err));
        CU_ASSERT_PTR_NOT_NULL_FATAL(owner);
        mc = rd_kafka_mock_cluster_new(owner, 1);
        CU_ASSERT_PTR_NOT_NULL_FATAL(mc);
        snprintf(boot, sizeof(boot), "%s",
                 rd_kafka_mock_cluster_bootstraps(mc));
        for (i = 0; i < 3; i++)
                CU_ASSERT_FATAL(
                    !rd_kafka_mock_topic_create(mc, topics[i], 3, 1));
        CU_ASSERT_FATAL(!rd_kafka_mock_topic_create(mc, "ks-reports", 1, 1));

        conf = ks_e2e_conf("keyshift.report.path", report,
                           "keyshift.report.interval.ms", "200",
                           "keyshift.report.topic", "ks-reports",
                           "keyshift.partitions.proposed", "6,12",
                           "bootstrap.servers", boot, NULL);
        rk   = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
        CU_ASSERT_PTR_NOT_NULL_FATAL(rk);
        for (i = 0; i < 3000; i++) {
                snprintf(key, sizeof(key), "key-%d", i % 257);
                CU_ASSERT(!rd_kafka_producev(
                    rk, RD_KAFKA_V_TOPIC(topics[i % 3]),
                    RD_KAFKA_V_KEY(key, strlen(key)), RD_KAFKA_V_VALUE("v", 1),
                    RD_KAFKA_V_END));
        }
        rd_kafka_flush(rk, 10000);
        usleep(700 * 1000);         /* reports, then unchanged ones */
        for (i = 0; i < 500; i++) { /* only "a" changes */
                snprintf(key, sizeof(key), "key-%d", i % 31);
                CU_ASSERT(!rd_kafka_producev(
                    rk, RD_KAFKA_V_TOPIC("a"), RD_KAFKA_V_KEY(key, strlen(key)),
                    RD_KAFKA_V_VALUE("v", 1), RD_KAFKA_V_END));
        }
        rd_kafka_flush(rk, 10000);
        usleep(700 * 1000);
        rd_kafka_destroy(rk); /* the final report and its records */

        r    = ks_e2e_load_json(report);
        last = last_records(boot, "ks-reports", &records);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        CU_ASSERT_PTR_NOT_NULL_FATAL(last);
        CU_ASSERT(records >= 8); /* several reports of 4 records */
        CU_ASSERT_EQUAL(json_object_size(last), 4);
        CU_ASSERT_EQUAL(json_object_size(json_object_get(r, "topics")), 3);
        json_object_foreach(json_object_get(r, "topics"), name, t)
        {
                want = json_deep_copy(r);
                json_object_set_new(want, "topics",
                                    json_pack("{s:O}", name, t));
                json_object_set(want, "messages",
                                json_object_get(t, "messages"));
                CU_ASSERT(json_equal(want, json_object_get(last, name)));
                compared++;
                json_decref(want);
        }
        want = json_deep_copy(r);
        json_object_set_new(want, "topics", json_object());
        json_object_set_new(want, "messages", json_integer(0));
        CU_ASSERT(json_equal(want, json_object_get(last, "")));
        CU_ASSERT(json_is_true(ks_e2e_get(json_object_get(last, ""), "final")));
        json_decref(want);
        CU_ASSERT_EQUAL(compared, 3);
        json_decref(last);
        json_decref(r);
        rd_kafka_mock_cluster_destroy(mc);
        rd_kafka_destroy(owner);
        if (!CU_get_number_of_failures())
                ks_e2e_system("rm -rf %s", dir);
}

void ks_test_register(void)
{
        KS_ADD_SUITE("keyshift.report.topic",
                     {"report cluster unreachable: host unharmed, warned "
                      "once per cause, destroy bounded",
                      test_unreachable},
                     {"off by default", test_off},
                     {"the records are the report as written, a topic each",
                      test_records_are_the_report});
}
