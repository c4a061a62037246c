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
 *        for the records that cannot go. The records themselves are tested
 *        on a real broker (tests/broker/test_broker_fleet.c).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

void ks_test_register(void)
{
        KS_ADD_SUITE("keyshift.report.topic",
                     {"report cluster unreachable: host unharmed, warned "
                      "once per cause, destroy bounded",
                      test_unreachable},
                     {"off by default", test_off});
}
