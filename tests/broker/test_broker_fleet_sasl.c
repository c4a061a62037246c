/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_broker_fleet_sasl.c
 * @brief keyshift.report.topic through the test broker's SASL/PLAIN
 *        listener, with ACLs enforced (issue 32).
 *
 * The broker's SASL_PLAINTEXT listener (server-sasl.properties, users in
 * kafka_server_jaas.conf, StandardAuthorizer) allows a SASL user only what
 * an ACL grants it. The ACLs, made here through the plaintext listener
 * (a super user):
 *  - User:ks_host: Describe and Write on the data topic; Describe, Write
 *    and Create on the report topic (docs/using.md, "Many producers");
 *  - User:ks_nowrite: Describe and Write on the data topic; Describe only
 *    on the report topic (no Write, no Create);
 *  - User:ks_fleet: Describe and Read on the report topic.
 *
 * 1. A host producer set for SASL as ks_host (security.protocol,
 *    sasl.mechanism, sasl.username/password, the SASL listener as its
 *    bootstrap.servers) with keyshift.report.topic: keyshift's report
 *    producer inherits these, creates the report topic and its records
 *    arrive; `keyshift fleet` as ks_fleet (-X sasl...) reads them back,
 *    and its figures equal the broker's placement of the host's messages
 *    (delivery reports). ks_nowrite, which may not Read, cannot.
 * 2. The same host as ks_nowrite, and a twin without keyshift (same user,
 *    same messages): every host message is delivered, each to its twin's
 *    partition; the report file is written; exactly one
 *    REPORT_TOPIC_FAILED line on stderr (the cause, authorization, said
 *    once though every report's records fail); nothing of it reaches the
 *    report topic.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ks_broker_support.h"
#include "ks_e2e_support.h"
#include "ks_test.h"

#define KS_MSGS 600
#define KS_PARTS 6

/* a topic name per run; set by test_host_credentials() */
static char data_topic[128], report_topic[128];

static const char *cli(void)
{
        const char *c = getenv("KS_CLI");
        if (!c)
                CU_FAIL_FATAL("KS_CLI is not set (ctest sets it)");
        return c;
}

/** @brief Sets @p conf for SASL/PLAIN as @p user on the SASL listener. */
static void sasl(rd_kafka_conf_t *conf, const char *user, const char *pass)
{
        const char *kv[] = {"security.protocol", "sasl_plaintext",
                            "sasl.mechanism",    "PLAIN",
                            "sasl.username",     user,
                            "sasl.password",     pass,
                            "bootstrap.servers", ks_broker_sasl_bootstrap()};
        char        err[256];
        size_t      i;

        for (i = 0; i < sizeof(kv) / sizeof(kv[0]); i += 2)
                CU_ASSERT_EQUAL_FATAL(
                    rd_kafka_conf_set(conf, kv[i], kv[i + 1], err, sizeof(err)),
                    RD_KAFKA_CONF_OK);
}

/** @returns a host producer as @p user, with keyshift and the report
 *           topic (@p keyshift 1) or without (its twin). */
static void host_new(ks_broker_producer_t *p, int keyshift, const char *user,
                     const char *pass, const char *report)
{
        rd_kafka_conf_t *conf =
            keyshift ? ks_e2e_conf("keyshift.report.path", report,
                                   "keyshift.report.topic", report_topic,
                                   "keyshift.report.interval.ms", "300",
                                   "partitioner", "murmur2_random", NULL)
                     : rd_kafka_conf_new();
        char err[256];

        if (!keyshift)
                CU_ASSERT_EQUAL(rd_kafka_conf_set(conf, "partitioner",
                                                  "murmur2_random", err,
                                                  sizeof(err)),
                                RD_KAFKA_CONF_OK);
        sasl(conf, user, pass);
        CU_ASSERT_FATAL(ks_broker_producer_new(p, conf, KS_MSGS) == 0);
}

static void send_all(ks_broker_producer_t *p)
{
        char key[16], val[16];
        int  i, kl, vl;

        for (i = 0; i < KS_MSGS; i++) {
                kl = snprintf(key, sizeof(key), "k%d", i % 97);
                vl = snprintf(val, sizeof(val), "v%d", i);
                ks_broker_produce(p, data_topic, (size_t)i, key, (size_t)kl,
                                  val, (size_t)vl);
        }
}

/** @brief Polls @p p until the report at @p report has the data topic's
 *         partition count and, when @p code is set, a warning @p code (at
 *         most 30 s). @returns the report (NULL: none). */
static json_t *wait_report(ks_broker_producer_t *p, const char *report,
                           const char *code)
{
        char    path[300];
        double  end = ks_broker_now_s() + 30;
        json_t *r   = NULL;

        snprintf(path, sizeof(path), "topics/%s/partition_count/current",
                 data_topic);
        while (ks_broker_now_s() < end) {
                rd_kafka_poll(p->rk, 100);
                json_decref(r);
                r = access(report, F_OK) ? NULL : ks_e2e_load_json(report);
                if (r && json_integer_value(ks_e2e_get(r, path)) == KS_PARTS &&
                    (!code ||
                     ks_e2e_has_warning(ks_e2e_get(r, "warnings"), code)))
                        break;
        }
        return r;
}

/** @returns `keyshift fleet`'s exit status, reading the report topic on
 *           the SASL listener as @p user, its report in @p out. */
static int fleet_as(const char *user, const char *pass, const char *out)
{
        return ks_e2e_system(
            "%s fleet -b %s -r %s --timeout-ms 10000 -X "
            "security.protocol=sasl_plaintext -X sasl.mechanism=PLAIN -X "
            "sasl.username=%s -X sasl.password=%s -o %s",
            cli(), ks_broker_sasl_bootstrap(), report_topic, user, pass, out);
}

static void test_host_credentials(void)
{
        static const rd_kafka_AclOperation_t dw[] = {
            RD_KAFKA_ACL_OPERATION_DESCRIBE, RD_KAFKA_ACL_OPERATION_WRITE};
        static const rd_kafka_AclOperation_t dwc[] = {
            RD_KAFKA_ACL_OPERATION_DESCRIBE, RD_KAFKA_ACL_OPERATION_WRITE,
            RD_KAFKA_ACL_OPERATION_CREATE};
        static const rd_kafka_AclOperation_t d[] = {
            RD_KAFKA_ACL_OPERATION_DESCRIBE};
        static const rd_kafka_AclOperation_t dr[] = {
            RD_KAFKA_ACL_OPERATION_DESCRIBE, RD_KAFKA_ACL_OPERATION_READ};
        const char          *dir = ks_e2e_tmpdir("fleet-sasl-acl");
        char                 report[600], out[600], path[300];
        ks_broker_producer_t h;
        json_t              *r, *f, *arr;
        long long            parts[KS_PARTS] = {0};
        size_t               i;

        ks_broker_topic_name("fleet-acl", data_topic, sizeof(data_topic));
        ks_broker_topic_name("fleet-acl-reports", report_topic,
                             sizeof(report_topic));
        CU_ASSERT_FATAL(ks_broker_create_topic(data_topic, KS_PARTS) == 0);
        /* the report topic is not made here: ks_host's report producer
         * creates it (Create on the topic) */
        CU_ASSERT_FATAL(ks_broker_acl_allow("User:ks_host",
                                            RD_KAFKA_RESOURCE_TOPIC, data_topic,
                                            dw, 2) == 0);
        CU_ASSERT_FATAL(ks_broker_acl_allow("User:ks_host",
                                            RD_KAFKA_RESOURCE_TOPIC,
                                            report_topic, dwc, 3) == 0);
        CU_ASSERT_FATAL(ks_broker_acl_allow("User:ks_nowrite",
                                            RD_KAFKA_RESOURCE_TOPIC, data_topic,
                                            dw, 2) == 0);
        CU_ASSERT_FATAL(ks_broker_acl_allow("User:ks_nowrite",
                                            RD_KAFKA_RESOURCE_TOPIC,
                                            report_topic, d, 1) == 0);
        CU_ASSERT_FATAL(ks_broker_acl_allow("User:ks_fleet",
                                            RD_KAFKA_RESOURCE_TOPIC,
                                            report_topic, dr, 2) == 0);

        snprintf(report, sizeof(report), "%s/host.json", dir);
        snprintf(out, sizeof(out), "%s/fleet.json", dir);
        host_new(&h, 1, "ks_host", "host-secret", report);
        send_all(&h);
        ks_broker_flush(&h);
        json_decref(wait_report(&h, report, NULL));
        ks_broker_producer_close(&h); /* its final record: ended */
        CU_ASSERT_EQUAL(h.delivered, KS_MSGS);
        CU_ASSERT_EQUAL(h.failed, 0);
        for (i = 0; i < KS_MSGS; i++)
                if (h.partition[i] >= 0 && h.partition[i] < KS_PARTS)
                        parts[h.partition[i]]++;
        ks_broker_producer_free(&h);

        r = ks_e2e_load_json(report);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        CU_ASSERT_EQUAL(ks_e2e_int(r, "messages"), KS_MSGS);
        CU_ASSERT(!ks_e2e_has_warning(ks_e2e_get(r, "warnings"),
                                      "REPORT_TOPIC_FAILED"));

        /* read back as ks_fleet (Describe, Read) */
        CU_ASSERT_EQUAL_FATAL(fleet_as("ks_fleet", "fleet-secret", out), 0);
        f = ks_e2e_load_json(out);
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        CU_ASSERT_EQUAL(ks_e2e_int(f, "fleet/merged"), 1);
        CU_ASSERT_EQUAL(ks_e2e_int(f, "fleet/ended"), 1);
        CU_ASSERT_EQUAL(json_array_size(ks_e2e_get(f, "fleet/producers")), 1);
        snprintf(path, sizeof(path), "topics/%s/messages", data_topic);
        CU_ASSERT_EQUAL(ks_e2e_int(f, path), KS_MSGS);
        snprintf(path, sizeof(path), "topics/%s/bytes", data_topic);
        CU_ASSERT_EQUAL(ks_e2e_int(f, path), ks_e2e_int(r, path));
        /* per partition: the broker's placement (the delivery reports) */
        snprintf(path, sizeof(path), "topics/%s/current/partitions/messages",
                 data_topic);
        arr = ks_e2e_get(f, path);
        CU_ASSERT_EQUAL(json_array_size(arr), KS_PARTS);
        for (i = 0; i < KS_PARTS; i++)
                CU_ASSERT_EQUAL(json_integer_value(json_array_get(arr, i)),
                                parts[i]);
        json_decref(f);
        json_decref(r);

        /* ks_nowrite may not Read it */
        CU_ASSERT_NOT_EQUAL(fleet_as("ks_nowrite", "nowrite-secret", out), 0);
        if (!CU_get_number_of_failures())
                ks_broker_tmpdir_done(dir);
}

/** @returns the lines of file @p path that hold @p what. */
static int lines_with(const char *path, const char *what)
{
        FILE *fp = fopen(path, "r");
        char  line[4096];
        int   n = 0;

        if (!fp)
                return -1;
        while (fgets(line, sizeof(line), fp))
                if (strstr(line, what)) {
                        n++;
                        printf("  stderr: %s", line);
                }
        fclose(fp);
        return n;
}

static void test_no_write(void)
{
        const char          *dir = ks_e2e_tmpdir("fleet-sasl-nowrite");
        char                 report[600], out[600], errlog[600];
        const char          *m;
        ks_broker_producer_t h, twin;
        json_t              *r, *f;
        int                  saved, fd, same = 1;
        size_t               i;

        CU_ASSERT_FATAL(*report_topic != '\0'); /* test_host_credentials */
        snprintf(report, sizeof(report), "%s/host.json", dir);
        snprintf(out, sizeof(out), "%s/fleet.json", dir);
        snprintf(errlog, sizeof(errlog), "%s/stderr.txt", dir);
        host_new(&twin, 0, "ks_nowrite", "nowrite-secret", NULL);
        /* keyshift's lines go to stderr: kept to count them */
        fflush(stderr);
        saved = dup(2);
        fd    = open(errlog, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        CU_ASSERT_FATAL(fd >= 0 && saved >= 0);
        dup2(fd, 2);
        close(fd);

        host_new(&h, 1, "ks_nowrite", "nowrite-secret", report);
        send_all(&h);
        send_all(&twin);
        ks_broker_flush(&h);
        ks_broker_flush(&twin);
        /* the warning in the report that follows its cause */
        r = wait_report(&h, report, "REPORT_TOPIC_FAILED");
        m = r ? ks_e2e_warning_message(ks_e2e_get(r, "warnings"),
                                       "REPORT_TOPIC_FAILED")
              : NULL;
        printf("  ks_nowrite: %s\n", m ? m : "(no warning)");
        CU_ASSERT_PTR_NOT_NULL(m ? strstr(m, "uthorization") : NULL);
        json_decref(r);
        /* more reports, each of whose records fails the same way */
        for (i = 0; i < 15; i++)
                rd_kafka_poll(h.rk, 100);
        ks_broker_producer_close(&h);
        ks_broker_producer_close(&twin);

        fflush(stderr);
        dup2(saved, 2);
        close(saved);

        /* the host unharmed: as without keyshift */
        CU_ASSERT_EQUAL(h.delivered, KS_MSGS);
        CU_ASSERT_EQUAL(h.failed, 0);
        CU_ASSERT_EQUAL(twin.delivered, KS_MSGS);
        CU_ASSERT_EQUAL(twin.failed, 0);
        for (i = 0; i < KS_MSGS; i++)
                same &= h.partition[i] == twin.partition[i];
        CU_ASSERT(same);
        ks_broker_producer_free(&h);
        ks_broker_producer_free(&twin);

        /* the final report written, every message in it */
        r = ks_e2e_load_json(report);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        CU_ASSERT_EQUAL(ks_e2e_int(r, "messages"), KS_MSGS);
        json_decref(r);
        /* one line for the cause, however many records failed */
        CU_ASSERT_EQUAL(lines_with(errlog, "REPORT_TOPIC_FAILED"), 1);

        /* nothing of ks_nowrite's on the report topic */
        CU_ASSERT_EQUAL_FATAL(fleet_as("ks_fleet", "fleet-secret", out), 0);
        f = ks_e2e_load_json(out);
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        CU_ASSERT_EQUAL(ks_e2e_int(f, "fleet/merged"), 1);
        CU_ASSERT_EQUAL(json_array_size(ks_e2e_get(f, "fleet/producers")), 1);
        json_decref(f);

        ks_broker_delete_topic(data_topic);
        ks_broker_delete_topic(report_topic);
        ks_broker_acl_delete("User:ks_host");
        ks_broker_acl_delete("User:ks_nowrite");
        ks_broker_acl_delete("User:ks_fleet");
        if (!CU_get_number_of_failures())
                ks_broker_tmpdir_done(dir);
}

void ks_test_register(void)
{
        KS_ADD_SUITE(
            "keyshift.report.topic over SASL/PLAIN with ACLs",
            {"the host's credentials: records arrive, fleet reads them",
             test_host_credentials},
            {"a user without Write on the report topic: one "
             "REPORT_TOPIC_FAILED, the host unharmed",
             test_no_write});
}
