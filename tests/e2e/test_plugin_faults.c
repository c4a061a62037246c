/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_plugin_faults.c
 * @brief Faults around the report file in a live producer (issue 30):
 *  - a report path no report can be written at is refused by
 *    rd_kafka_conf_set() with an errstr naming the property and the
 *    limit (NAME_MAX);
 *  - a client.id that makes the expanded path too long: the report goes
 *    to keyshift-<pid>.json in the working directory, and says why
 *    (REPORT_WRITE_FAILED);
 *  - a full disk (RLIMIT_FSIZE below the report's size: writes fail with
 *    EFBIG as on ENOSPC): the previous report stays whole at the path,
 *    and the first report written once there is room says how many
 *    reports were lost and from when to when.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ks_e2e_support.h"
#include "ks_test.h"

static void test_conf_refuses_long_name(void)
{
        const char      *dir = ks_e2e_tmpdir("faults-conf");
        rd_kafka_conf_t *conf;
        char             path[1024], errstr[512] = "";
        size_t           o;

        o = (size_t)snprintf(path, sizeof(path), "%s/", dir);
        memset(path + o, 'r', 300);
        snprintf(path + o + 300, sizeof(path) - o - 300, ".json");
        conf = ks_e2e_conf(NULL);
        CU_ASSERT_EQUAL(rd_kafka_conf_set(conf, "keyshift.report.path", path,
                                          errstr, sizeof(errstr)),
                        RD_KAFKA_CONF_INVALID);
        printf("\n    %s\n", errstr);
        CU_ASSERT_PTR_NOT_NULL(strstr(errstr, "keyshift.report.path"));
        CU_ASSERT_PTR_NOT_NULL(strstr(errstr, "NAME_MAX"));
        rd_kafka_conf_destroy(conf);
        ks_e2e_system("rm -rf '%s'", dir);
}

static void test_long_client_id(void)
{
        const char       *dir = ks_e2e_tmpdir("faults-client-id");
        char              cwd[4096], id[251], tmpl[600], fallback[600];
        ks_e2e_producer_t p;
        json_t           *r;
        const char       *msg;

        CU_ASSERT_PTR_NOT_NULL_FATAL(getcwd(cwd, sizeof(cwd)));
        CU_ASSERT_EQUAL_FATAL(chdir(dir), 0);
        memset(id, 'c', 250);
        id[250] = '\0';
        snprintf(tmpl, sizeof(tmpl), "%s/keyshift-%%c.json", dir);
        CU_ASSERT_FATAL(
            ks_e2e_producer_new(&p,
                                ks_e2e_conf("client.id", id,
                                            "keyshift.report.path", tmpl, NULL),
                                "t", 3) == 0);
        ks_e2e_produce(&p, "t", "k", 1, -1, "v", 1);
        ks_e2e_producer_free(&p);
        snprintf(fallback, sizeof(fallback), "%s/keyshift-%ld.json", dir,
                 (long)getpid());
        r = ks_e2e_load_json(fallback);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        msg = ks_e2e_warning_message(json_object_get(r, "warnings"),
                                     "REPORT_WRITE_FAILED");
        CU_ASSERT_PTR_NOT_NULL(msg);
        if (msg) {
                printf("\n    %s\n", msg);
                CU_ASSERT_PTR_NOT_NULL(strstr(msg, "client.id (250 bytes)"));
                CU_ASSERT_PTR_NOT_NULL(strstr(msg, "NAME_MAX"));
        }
        CU_ASSERT_EQUAL(ks_e2e_int(r, "topics/t/messages"), 1);
        json_decref(r);
        CU_ASSERT_EQUAL(chdir(cwd), 0);
        ks_e2e_system("rm -rf '%s'", dir);
}

/** @returns the report at @p path's top-level `messages`, -1 if it does
 *           not read. */
static long long messages_of(const char *path)
{
        json_t   *r = ks_e2e_load_json(path);
        long long n = r ? ks_e2e_int(r, "messages") : -1;

        json_decref(r);
        return n;
}

static void test_full_disk(void)
{
        const char       *dir = ks_e2e_tmpdir("faults-full");
        char              path[600];
        ks_e2e_producer_t p;
        struct rlimit     was, small;
        struct stat       st;
        json_t           *r;
        const char       *msg;
        int               i;

        snprintf(path, sizeof(path), "%s/r.json", dir);
        CU_ASSERT_FATAL(
            ks_e2e_producer_new(&p,
                                ks_e2e_conf("keyshift.report.path", path,
                                            "keyshift.report.interval.ms",
                                            "100", NULL),
                                "t", 3) == 0);
        ks_e2e_produce(&p, "t", "k1", 2, -1, "v", 1);
        for (i = 0; i < 100 && messages_of(path) != 1; i++)
                rd_kafka_poll(p.rk, 50);
        CU_ASSERT_EQUAL_FATAL(messages_of(path), 1);
        CU_ASSERT_EQUAL_FATAL(stat(path, &st), 0);
        /* the disk "fills": no file of this process may grow past half
         * the report (EFBIG, as ENOSPC would fail the write) */
        signal(SIGXFSZ, SIG_IGN);
        CU_ASSERT_EQUAL_FATAL(getrlimit(RLIMIT_FSIZE, &was), 0);
        small          = was;
        small.rlim_cur = (rlim_t)st.st_size / 2;
        CU_ASSERT_EQUAL_FATAL(setrlimit(RLIMIT_FSIZE, &small), 0);
        /* 1 s: each 100 ms a changed report is due, and fails; then
         * 0.5 s more with nothing new, so that every message is analysed
         * and the first report written with room again is the last to
         * change (the warning is in that one report only) */
        for (i = 0; i < 10; i++) {
                ks_e2e_produce(&p, "t", "k2", 2, -1, "v", 1);
                rd_kafka_poll(p.rk, 0);
                usleep(100 * 1000);
        }
        rd_kafka_flush(p.rk, 5000);
        usleep(500 * 1000);
        CU_ASSERT_EQUAL(setrlimit(RLIMIT_FSIZE, &was), 0);
        /* the previous report stayed whole */
        CU_ASSERT_EQUAL(messages_of(path), 1);
        /* room again: the next report says what was lost */
        for (i = 0; i < 100 && messages_of(path) != 11; i++)
                rd_kafka_poll(p.rk, 50);
        CU_ASSERT_EQUAL(messages_of(path), 11);
        r = ks_e2e_load_json(path);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        msg = ks_e2e_warning_message(json_object_get(r, "warnings"),
                                     "REPORT_WRITE_FAILED");
        CU_ASSERT_PTR_NOT_NULL(msg);
        if (msg) {
                printf("\n    %s\n", msg);
                CU_ASSERT_PTR_NOT_NULL(strstr(msg, "reports were not written, "
                                                   "from 20"));
                CU_ASSERT_PTR_NOT_NULL(
                    strstr(msg, "(the previous report stayed in place)"));
                CU_ASSERT_PTR_NOT_NULL(strstr(msg, "File too large"));
        }
        json_decref(r);
        ks_e2e_producer_free(&p);
        /* and the final report, written after it, no longer says so */
        r = ks_e2e_load_json(path);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        CU_ASSERT(!ks_e2e_has_warning(json_object_get(r, "warnings"),
                                      "REPORT_WRITE_FAILED"));
        json_decref(r);
        signal(SIGXFSZ, SIG_DFL);
        ks_e2e_system("rm -rf '%s'", dir);
}

/**
 * @brief The "Small" faults: a blank report path is refused; a metrics
 *        path that is the report's own file is said so (it used to be
 *        named "another producer") and no metrics written over the report;
 *        repeated proposed counts are said (PROPOSALS_REPEATED).
 */
static void test_small_faults(void)
{
        const char       *dir = ks_e2e_tmpdir("faults-small");
        rd_kafka_conf_t  *conf;
        char              path[600], errstr[512] = "";
        ks_e2e_producer_t p;
        json_t           *r, *w;
        const char       *msg;

        conf = ks_e2e_conf(NULL);
        CU_ASSERT_EQUAL(rd_kafka_conf_set(conf, "keyshift.report.path", " ",
                                          errstr, sizeof(errstr)),
                        RD_KAFKA_CONF_INVALID);
        CU_ASSERT_PTR_NOT_NULL(strstr(errstr, "keyshift.report.path"));
        rd_kafka_conf_destroy(conf);

        snprintf(path, sizeof(path), "%s/r.prom", dir);
        CU_ASSERT_FATAL(
            ks_e2e_producer_new(&p,
                                ks_e2e_conf("keyshift.report.path", path,
                                            "keyshift.metrics.path", path,
                                            "keyshift.partitions.proposed",
                                            "8,8,12,8", NULL),
                                "t", 4) == 0);
        ks_e2e_produce(&p, "t", "k", 1, -1, "v", 1);
        ks_e2e_producer_free(&p);
        r = ks_e2e_load_json(path); /* the report, not metrics over it */
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        w   = json_object_get(r, "warnings");
        msg = ks_e2e_warning_message(w, "METRICS_WRITE_FAILED");
        CU_ASSERT_PTR_NOT_NULL(msg);
        CU_ASSERT(msg && strstr(msg, "the report's own file"));
        msg = ks_e2e_warning_message(w, "PROPOSALS_REPEATED");
        CU_ASSERT_PTR_NOT_NULL(msg);
        CU_ASSERT(msg && strstr(msg, "gave 2 counts again"));
        CU_ASSERT_EQUAL(json_array_size(ks_e2e_get(r, "topics/t/proposals")),
                        2);
        json_decref(r);
        ks_e2e_system("rm -rf '%s'", dir);
}

void ks_test_register(void)
{
        KS_ADD_SUITE("report faults in a live producer",
                     {"an unwritable path refused at conf_set",
                      test_conf_refuses_long_name},
                     {"a client.id too long for the path", test_long_client_id},
                     {"a full disk keeps the previous report, and says so",
                      test_full_disk},
                     {"blank path, metrics on the report, repeated counts",
                      test_small_faults});
}
