/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_plugin_lifecycle.c
 * @brief A producer's life with keyshift beyond the produce path, on the
 *        mock cluster (issue "Hundreds of topics, silent producers, and the
 *        end of a producer"):
 *  - a producer that never produces says keyshift is loaded (one info line
 *    in librdkafka's format) and gets a report at the first interval
 *    (`topics: {}`, `messages: 0`) and at shutdown;
 *  - a report whose topics did not change is left as is (same file, its
 *    mtime advanced), and each topic says when it last changed;
 *  - temporary files a killed writer left beside the report are removed at
 *    start, and only those (keyshift's pattern, a dead process, old);
 *  - a writer killed at random moments (mostly inside a report's write)
 *    leaves no temporary file, and the report is always whole JSON;
 *  - 1,000 topics: every topic's figures are those recomputed from its own
 *    delivery reports.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ks_e2e_support.h"
#include "ks_test.h"

static void sleep_ms(long ms)
{
        struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) && errno == EINTR)
                ;
}

/** @brief Waits up to @p ms for @p path to exist. @returns 0 if it does. */
static int wait_file(const char *path, long ms)
{
        struct stat st;
        for (; ms > 0; ms -= 50) {
                if (!stat(path, &st))
                        return 0;
                sleep_ms(50);
        }
        return stat(path, &st);
}

/** stderr redirected to a file while a producer is created. */
typedef struct stderr_capture {
        int  saved;
        char path[512];
} stderr_capture_t;

static void capture_begin(stderr_capture_t *c, const char *dir)
{
        int fd;
        snprintf(c->path, sizeof(c->path), "%s/stderr.log", dir);
        fflush(stderr);
        c->saved = dup(2);
        fd       = open(c->path, O_WRONLY | O_CREAT | O_APPEND, 0644);
        CU_ASSERT_FATAL(fd >= 0 && c->saved >= 0);
        dup2(fd, 2);
        close(fd);
}

/** @returns the captured text (malloc'ed), stderr restored. */
static char *capture_end(stderr_capture_t *c)
{
        FILE *fp;
        char *buf = calloc(1, 1 << 16);

        fflush(stderr);
        dup2(c->saved, 2);
        close(c->saved);
        if ((fp = fopen(c->path, "r"))) {
                size_t n = fread(buf, 1, (1 << 16) - 1, fp);
                buf[n]   = '\0';
                fclose(fp);
        }
        fputs(buf, stderr); /* still shown in the test's log */
        return buf;
}

static void test_silent_producer(void)
{
        const char       *dir = ks_e2e_tmpdir("life-silent");
        char              path[512], *log;
        stderr_capture_t  cap;
        ks_e2e_producer_t p;
        json_t           *r;

        snprintf(path, sizeof(path), "%s/report.json", dir);
        capture_begin(&cap, dir);
        CU_ASSERT_FATAL(!ks_e2e_producer_new(
            &p,
            ks_e2e_conf("keyshift.report.path", path,
                        "keyshift.report.interval.ms", "300",
                        "keyshift.partitions.proposed", "12,24", NULL),
            NULL, 0));
        log = capture_end(&cap);
        /* librdkafka's format: %<level>|<seconds.ms>|<facility>|<name>| */
        CU_ASSERT_PTR_NOT_NULL(strstr(log, "%6|"));
        CU_ASSERT_PTR_NOT_NULL(strstr(log, "|KEYSHIFT|rdkafka| keyshift "));
        CU_ASSERT_PTR_NOT_NULL(strstr(log, path));
        CU_ASSERT_PTR_NOT_NULL(strstr(log, "proposed partition counts 12,24"));
        CU_ASSERT_PTR_NOT_NULL(strstr(log, "every 300 ms"));
        free(log);

        /* the first interval, no traffic: a report all the same */
        CU_ASSERT_EQUAL_FATAL(wait_file(path, 3000), 0);
        r = ks_e2e_load_json(path);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        CU_ASSERT(json_is_object(json_object_get(r, "topics")));
        CU_ASSERT_EQUAL(json_object_size(json_object_get(r, "topics")), 0);
        CU_ASSERT_EQUAL(ks_e2e_int(r, "messages"), 0);
        CU_ASSERT(json_is_false(json_object_get(r, "final")));
        json_decref(r);

        ks_e2e_producer_close(&p);
        r = ks_e2e_load_json(path);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        CU_ASSERT(json_is_true(json_object_get(r, "final")));
        CU_ASSERT_EQUAL(ks_e2e_int(r, "messages"), 0);
        json_decref(r);
        ks_e2e_producer_free(&p);
        ks_e2e_system("rm -rf '%s'", dir);
}

static const char *str_at(json_t *r, const char *at)
{
        return json_string_value(ks_e2e_get(r, at));
}

static void produce_n(ks_e2e_producer_t *p, const char *topic, int n, int k0)
{
        char key[32];
        int  i;
        for (i = 0; i < n; i++) {
                snprintf(key, sizeof(key), "%d", 200000000 + k0 + i);
                ks_e2e_produce(p, topic, key, strlen(key), -1, "v", 1);
        }
        CU_ASSERT_EQUAL(rd_kafka_flush(p->rk, 10000), 0);
}

static void test_unchanged_left_as_is(void)
{
        const char       *dir = ks_e2e_tmpdir("life-unchanged");
        char              path[512], gen_a[64], a_changed[64], b_changed[64];
        ks_e2e_producer_t p;
        json_t           *r;
        struct stat       sa, sb;

        snprintf(path, sizeof(path), "%s/report.json", dir);
        CU_ASSERT_FATAL(!ks_e2e_producer_new(
            &p,
            ks_e2e_conf("keyshift.report.path", path,
                        "keyshift.report.interval.ms", "250", NULL),
            "a", 4));
        produce_n(&p, "a", 3, 0);
        produce_n(&p, "b", 3, 10);
        /* the reports of the next intervals show the last messages, their
         * deliveries and the topics' metadata; then nothing changes */
        sleep_ms(2000);
        CU_ASSERT_FATAL(!stat(path, &sa));
        r = ks_e2e_load_json(path);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        CU_ASSERT_EQUAL(ks_e2e_int(r, "topics/a/acknowledged/matched"), 3);
        snprintf(gen_a, sizeof(gen_a), "%s", str_at(r, "generated_at"));
        snprintf(a_changed, sizeof(a_changed), "%s",
                 str_at(r, "topics/a/last_changed_at"));
        snprintf(b_changed, sizeof(b_changed), "%s",
                 str_at(r, "topics/b/last_changed_at"));
        CU_ASSERT(strcmp(a_changed, gen_a) <= 0);
        json_decref(r);

        /* three intervals later: the same file, only touched */
        sleep_ms(800);
        CU_ASSERT_FATAL(!stat(path, &sb));
        CU_ASSERT_EQUAL(sa.st_ino, sb.st_ino);
        CU_ASSERT(sb.st_mtim.tv_sec > sa.st_mtim.tv_sec ||
                  (sb.st_mtim.tv_sec == sa.st_mtim.tv_sec &&
                   sb.st_mtim.tv_nsec > sa.st_mtim.tv_nsec));
        r = ks_e2e_load_json(path);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        CU_ASSERT_STRING_EQUAL(str_at(r, "generated_at"), gen_a);
        json_decref(r);

        /* one topic changes: a new report, a new date for that topic only */
        produce_n(&p, "a", 1, 20);
        sleep_ms(800);
        r = ks_e2e_load_json(path);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        CU_ASSERT(strcmp(str_at(r, "generated_at"), gen_a) > 0);
        CU_ASSERT_EQUAL(ks_e2e_int(r, "topics/a/messages"), 4);
        CU_ASSERT_EQUAL(ks_e2e_int(r, "messages"), 7);
        CU_ASSERT(strcmp(str_at(r, "topics/a/last_changed_at"), a_changed) > 0);
        CU_ASSERT_STRING_EQUAL(str_at(r, "topics/b/last_changed_at"),
                               b_changed);
        json_decref(r);
        ks_e2e_producer_close(&p);
        ks_e2e_producer_free(&p);
        ks_e2e_system("rm -rf '%s'", dir);
}

/** @returns a pid that no process has (a child that has exited). */
static pid_t dead_pid(void)
{
        pid_t pid = fork();
        if (pid == 0)
                _exit(0);
        waitpid(pid, NULL, 0);
        return pid;
}

static void make_file(const char *dir, const char *name, int hours_old)
{
        char            path[1024];
        FILE           *fp;
        struct timespec t[2];

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        fp = fopen(path, "w");
        CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
        fputs("{\"schema\":", fp); /* a partial report */
        fclose(fp);
        clock_gettime(CLOCK_REALTIME, &t[0]);
        t[0].tv_sec -= hours_old * 3600;
        t[1] = t[0];
        CU_ASSERT_EQUAL(utimensat(AT_FDCWD, path, t, 0), 0);
}

static int exists(const char *dir, const char *name)
{
        char        path[1024];
        struct stat st;
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        return !lstat(path, &st);
}

static void test_stale_temporaries_removed(void)
{
        const char       *dir = ks_e2e_tmpdir("life-stale");
        char              path[512], n[8][128], *log;
        pid_t             dead = dead_pid();
        ks_e2e_producer_t p;
        stderr_capture_t  cap;
        int               i;

        snprintf(path, sizeof(path), "%s/report.json", dir);
        snprintf(n[0], sizeof(n[0]), "report.json.tmp.%d.0", (int)dead);
        snprintf(n[1], sizeof(n[1]), "report.json.tmp.%d.7", (int)dead);
        snprintf(n[2], sizeof(n[2]), "report.json.tmp.%d.1", (int)dead);
        snprintf(n[3], sizeof(n[3]), "report.json.tmp.1.0");
        snprintf(n[4], sizeof(n[4]), "report.json.tmp.%d.0.bak", (int)dead);
        snprintf(n[5], sizeof(n[5]), "other.json.tmp.%d.0", (int)dead);
        snprintf(n[6], sizeof(n[6]), "report.json.tmp.x%d.0", (int)dead);
        snprintf(n[7], sizeof(n[7]), "report.json.tmp.%d.2", (int)dead);
        make_file(dir, n[0], 2); /* removed: keyshift's, dead, old */
        make_file(dir, n[1], 2); /* removed */
        make_file(dir, n[2], 0); /* kept: young (maybe another namespace) */
        make_file(dir, n[3], 2); /* kept: pid 1 lives */
        make_file(dir, n[4], 2); /* kept: not the pattern */
        make_file(dir, n[5], 2); /* kept: another report's */
        make_file(dir, n[6], 2); /* kept: not the pattern */
        {                        /* kept: not a regular file */
                char sub[1024];
                snprintf(sub, sizeof(sub), "%s/%s", dir, n[7]);
                CU_ASSERT_EQUAL(mkdir(sub, 0755), 0);
        }

        capture_begin(&cap, dir);
        CU_ASSERT_FATAL(!ks_e2e_producer_new(
            &p,
            ks_e2e_conf("keyshift.report.path", path,
                        "keyshift.report.interval.ms", "200", NULL),
            NULL, 0));
        CU_ASSERT_EQUAL(wait_file(path, 3000), 0);
        log = capture_end(&cap);
        CU_ASSERT_PTR_NOT_NULL(
            strstr(log, "removed 2 temporary report files that killed "
                        "processes left beside"));
        free(log);
        CU_ASSERT(!exists(dir, n[0]));
        CU_ASSERT(!exists(dir, n[1]));
        for (i = 2; i < 8; i++)
                CU_ASSERT(exists(dir, n[i]));
        ks_e2e_producer_close(&p);
        ks_e2e_producer_free(&p);
        ks_e2e_system("rm -rf '%s'", dir);
}

/** @returns how many names in @p dir contain ".tmp.". */
static int temporaries(const char *dir)
{
        DIR           *d = opendir(dir);
        struct dirent *e;
        int            n = 0;

        CU_ASSERT_PTR_NOT_NULL_FATAL(d);
        while ((e = readdir(d)))
                n += strstr(e->d_name, ".tmp.") != NULL;
        closedir(d);
        return n;
}

static void test_killed_writer_leaves_nothing(void)
{
        const char *dir    = ks_e2e_tmpdir("life-kill");
        const char *writer = getenv("KS_TOPICS_WRITER");
        char        path[512], line[64];
        int         k, kills = 8, left = 0, whole = 0;
        unsigned    seed = (unsigned)time(NULL);

        CU_ASSERT_PTR_NOT_NULL_FATAL(writer);
        snprintf(path, sizeof(path), "%s/report.json", dir);
        printf("\n    seed %u\n", seed);
        for (k = 0; k < kills; k++) {
                int     fds[2];
                pid_t   pid;
                FILE   *out;
                json_t *r;

                CU_ASSERT_FATAL(!pipe(fds));
                if (!(pid = fork())) {
                        dup2(fds[1], 1);
                        close(fds[0]);
                        execl(writer, writer, ks_e2e_plugin(), path, "600",
                              "100", (char *)NULL);
                        _exit(127);
                }
                close(fds[1]);
                out = fdopen(fds[0], "r");
                CU_ASSERT_PTR_NOT_NULL_FATAL(
                    fgets(line, sizeof(line), out)); /* "ready" */
                /* reports of 600 changed topics every 100 ms: nearly
                 * always one is being written when the kill comes */
                sleep_ms(200 + (long)(rand_r(&seed) % 700));
                kill(pid, SIGKILL);
                waitpid(pid, NULL, 0);
                fclose(out);
                left += temporaries(dir);
                if ((r = ks_e2e_load_json(path))) {
                        whole++;
                        json_decref(r);
                }
        }
        printf("    %d kills: %d temporary files left, report whole JSON "
               "after %d\n",
               kills, left, whole);
        CU_ASSERT_EQUAL(left, 0);
        CU_ASSERT_EQUAL(whole, kills);
        ks_e2e_system("rm -rf '%s'", dir);
}

#define MANY_TOPICS 1000

static void test_thousand_topics_each_recomputed(void)
{
        const char       *dir = ks_e2e_tmpdir("life-1000");
        char              path[512], topic[32], key[32];
        ks_e2e_producer_t p;
        json_t           *r, *topics;
        static uint64_t   load[MANY_TOPICS][8];
        size_t            k;
        int               i, m, bad = 0;

        memset(load, 0, sizeof(load));
        snprintf(path, sizeof(path), "%s/report.json", dir);
        CU_ASSERT_FATAL(!ks_e2e_producer_new(
            &p,
            ks_e2e_conf("keyshift.report.path", path,
                        "keyshift.report.interval.ms", "1000",
                        "keyshift.topics.max", "1000", NULL),
            NULL, 0));
        for (i = 0; i < MANY_TOPICS; i++) {
                snprintf(topic, sizeof(topic), "tenant-%04d", i);
                for (m = 0; m < 3; m++) {
                        /* the key names its topic: "<topic index>-<m>" */
                        snprintf(key, sizeof(key), "%d-%d", i, m * 7919);
                        ks_e2e_produce(&p, topic, key, strlen(key), -1, "v", 1);
                }
        }
        /* keyshift learns the counts from its own metadata requests; on a
         * slow machine (ASan) the last topics' may not have come when the
         * producer is destroyed. The final report is the one checked, so
         * wait, as a producer that lives on would, for a periodic report
         * with every count (the figures of a topic whose count came late
         * are not in question here: test_e2e_producer checks them) */
        rd_kafka_flush(p.rk, 60000);
        for (m = 0; m < 300; m++) {
                json_t     *rep = ks_e2e_load_json(path);
                const char *name;
                json_t     *t;
                int         unknown = !rep;

                json_object_foreach(json_object_get(rep, "topics"), name, t)
                    unknown +=
                    json_is_null(ks_e2e_get(t, "partition_count/current"));
                if (rep &&
                    json_object_size(json_object_get(rep, "topics")) ==
                        MANY_TOPICS &&
                    !unknown) {
                        json_decref(rep);
                        break;
                }
                json_decref(rep);
                rd_kafka_poll(p.rk, 200);
        }
        ks_e2e_producer_close(&p);
        for (k = 0; k < p.dr_cnt; k++) {
                const ks_e2e_dr_t *d  = &p.drs[k];
                int                ti = atoi((const char *)d->key);
                CU_ASSERT_EQUAL(d->err, 0);
                if (d->partition >= 0 && d->partition < 8 && ti >= 0 &&
                    ti < MANY_TOPICS)
                        load[ti][d->partition]++;
        }
        CU_ASSERT_EQUAL(p.dr_cnt, 3 * MANY_TOPICS);
        r = ks_e2e_load_json(path);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        topics = json_object_get(r, "topics");
        CU_ASSERT_EQUAL(json_object_size(topics), MANY_TOPICS);
        CU_ASSERT_EQUAL(ks_e2e_int(r, "messages"), 3 * MANY_TOPICS);
        for (i = 0; i < MANY_TOPICS; i++) {
                json_t *t, *parts;
                int     j, n;

                snprintf(topic, sizeof(topic), "tenant-%04d", i);
                t     = json_object_get(topics, topic);
                parts = t ? ks_e2e_get(t, "current/partitions") : NULL;
                if (!parts) {
                        bad++;
                        continue;
                }
                n = (int)json_array_size(json_object_get(parts, "messages"));
                if (ks_e2e_int(t, "messages") != 3 ||
                    ks_e2e_int(t, "acknowledged/matched") != 3 ||
                    ks_e2e_int(t, "acknowledged/mismatched") != 0 || n < 1 ||
                    n > 8) {
                        if (!bad)
                                printf("\n    %s: messages %lld, matched "
                                       "%lld, mismatched %lld, %d "
                                       "partitions\n",
                                       topic, ks_e2e_int(t, "messages"),
                                       ks_e2e_int(t, "acknowledged/matched"),
                                       ks_e2e_int(t, "acknowledged/mismatched"),
                                       n);
                        bad++;
                }
                for (j = 0; j < n && j < 8; j++)
                        bad += json_integer_value(json_array_get(
                                   json_object_get(parts, "messages"),
                                   (size_t)j)) != (long long)load[i][j];
        }
        CU_ASSERT_EQUAL(bad, 0);
        json_decref(r);
        ks_e2e_producer_free(&p);
        ks_e2e_system("rm -rf '%s'", dir);
}

/** @returns the message of @p t's warning @p code, or NULL. */
static const char *warning_message(json_t *t, const char *code)
{
        json_t *w = json_object_get(t, "warnings");
        size_t  i;

        for (i = 0; i < json_array_size(w); i++) {
                json_t     *x = json_array_get(w, i);
                const char *c = json_string_value(json_object_get(x, "code"));
                if (c && !strcmp(c, code))
                        return json_string_value(json_object_get(x, "message"));
        }
        return NULL;
}

/** Produces @p n keyed messages to "ais" with a producer whose broker
 *  address is @p bootstrap (NULL: the mock cluster, which creates "ais"
 *  when asked) and destroys it at once. @returns its final report. */
static json_t *live_briefly(const char *path, const char *bootstrap, int n)
{
        char             errstr[512], key[16];
        rd_kafka_conf_t *conf;
        rd_kafka_t      *rk;
        int              i;

        conf = ks_e2e_conf("keyshift.report.path", path, NULL);
        CU_ASSERT_FATAL(rd_kafka_conf_set(conf,
                                          bootstrap ? "bootstrap.servers"
                                                    : "test.mock.num.brokers",
                                          bootstrap ? bootstrap : "1", errstr,
                                          sizeof(errstr)) == RD_KAFKA_CONF_OK);
        rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
        CU_ASSERT_PTR_NOT_NULL_FATAL(rk);
        for (i = 0; i < n; i++) {
                snprintf(key, sizeof(key), "%d", 219000000 + i);
                rd_kafka_producev(
                    rk, RD_KAFKA_V_TOPIC("ais"),
                    RD_KAFKA_V_KEY(key, strlen(key)), RD_KAFKA_V_VALUE("v", 1),
                    RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
        }
        rd_kafka_destroy(rk);
        return ks_e2e_load_json(path);
}

/* A producer destroyed before a metadata answer named its topic (issue
 * 30: "a producer that lives 10 ms"): keyshift does not ask at destroy,
 * where librdkafka 2.0.2 would hold rd_kafka_destroy() for the request's
 * timeout; its final report says why the count is unknown instead. */
static void test_short_lived_says_why(void)
{
        const char *dir = ks_e2e_tmpdir("life-short");
        char        path[512];
        json_t     *r, *t;
        const char *m;
        int         run, unknown = 0;

        snprintf(path, sizeof(path), "%s/report.json", dir);
        /* no broker at all: the count cannot be known, and the report
         * says so, with the reason */
        r = live_briefly(path, "127.0.0.1:1", 10);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        t = json_object_get(json_object_get(r, "topics"), "ais");
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        CU_ASSERT(json_is_null(ks_e2e_get(t, "partition_count/current")));
        m = warning_message(t, "CURRENT_COUNT_UNKNOWN");
        CU_ASSERT_PTR_NOT_NULL_FATAL(m);
        CU_ASSERT_PTR_NOT_NULL(strstr(m, "the producer was destroyed"));
        CU_ASSERT_PTR_NOT_NULL(strstr(m, "before any metadata answer"));
        CU_ASSERT_PTR_NOT_NULL(strstr(m, "no broker"));
        json_decref(r);
        /* the mock cluster, destroyed at once: the count is known, or the
         * report says why not */
        for (run = 0; run < 5; run++) {
                r = live_briefly(path, NULL, 10);
                CU_ASSERT_PTR_NOT_NULL_FATAL(r);
                t = json_object_get(json_object_get(r, "topics"), "ais");
                CU_ASSERT_PTR_NOT_NULL_FATAL(t);
                if (json_is_null(ks_e2e_get(t, "partition_count/current"))) {
                        unknown++;
                        m = warning_message(t, "CURRENT_COUNT_UNKNOWN");
                        CU_ASSERT(m && strstr(m, "the producer was destroyed"));
                }
                json_decref(r);
        }
        fprintf(stderr,
                "\n  mock cluster: the count unknown in %d of 5 "
                "final reports, each saying why\n",
                unknown);
        ks_e2e_system("rm -rf '%s'", dir);
}

void ks_test_register(void)
{
        KS_ADD_SUITE(
            "plugin lifecycle",
            {"a silent producer: an info line, a report at the first "
             "interval and at shutdown",
             test_silent_producer},
            {"unchanged topics: the report is left as is, each topic dated",
             test_unchanged_left_as_is},
            {"stale temporary files of dead writers removed, only those",
             test_stale_temporaries_removed},
            {"a writer killed mid-report leaves no temporary file",
             test_killed_writer_leaves_nothing},
            {"1,000 topics: each equals its own delivery reports",
             test_thousand_topics_each_recomputed},
            {"a producer destroyed before metadata: the final report says "
             "why the count is unknown",
             test_short_lived_says_why});
}
