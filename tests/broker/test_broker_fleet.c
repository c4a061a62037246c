/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_broker_fleet.c
 * @brief keyshift.report.topic and `keyshift fleet` on the real broker
 *        (issue 32).
 *
 * Three producers in three hosts send overlapping key sets of one topic,
 * with one hot key split across all three: the C producer of this
 * program (destroyed cleanly: ended), kcat (exits cleanly: ended) and
 * confluent-kafka-python from a PyPI wheel, which carries its own
 * librdkafka, killed with SIGKILL once its last report is published
 * (stale). `keyshift fleet`'s report is compared with two oracles:
 *  - one producer that sent the union of the three streams (to a topic
 *    of the same partition count): exact figures equal (messages, bytes,
 *    per-partition loads now and proposed, moved messages and bytes);
 *  - librdkafka's own partitioner function
 *    (rd_kafka_msg_partitioner_murmur2_random()) over the union stream:
 *    per-partition messages at 6 and 12, and the exact number of distinct
 *    keys that move, against which the estimates (distinct keys, moved
 *    keys) must lie within 3 of their stated standard errors; the hot key
 *    comes first with the summed count, within its stated error.
 * Then garbage records written by hand to the report topic are counted,
 * skipped, and the figures stay the same; --live leaves out the ended and
 * the stale producers (none left: exit 1).
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ks_broker_support.h"
#include "ks_e2e_support.h"
#include "ks_test.h"

#define KS_STREAMS 3
#define KS_STREAM_LEN 900 /**< messages per producer */
#define KS_KEYS_PER 300   /**< distinct keys per producer, overlapping */
#define KS_PARTS 6
#define KS_PROPOSED 12
#define KS_SAMPLE "64" /**< key.sample.size: estimates, not exact */

static const char *cli(void)
{
        const char *c = getenv("KS_CLI");
        if (!c)
                CU_FAIL_FATAL("KS_CLI is not set (ctest sets it)");
        return c;
}

/** @brief Message @p j of stream @p s: every third the hot key, else one
 *         of the stream's 300 keys (streams overlap by 200 keys). */
static void message(int s, int j, char *key, size_t ksz, char *val, size_t vsz)
{
        if (j % 3 == 0)
                snprintf(key, ksz, "HOT");
        else
                snprintf(key, ksz, "k%d", s * 100 + (j % KS_KEYS_PER));
        snprintf(val, vsz, "v%d-%d", s, j % 7);
}

/**
 * @returns the pid of a producer process reading "key:value" lines on its
 *          stdin (@p fd_out): kcat (@p python 0), or confluent-kafka-python
 *          from a PyPI wheel, with its own librdkafka (tests/hosts/wheels.sh
 *          unpacks it; KS_FLEET_WHEEL, default 2.13.2), which keyshift binds
 *          to (plugin/ks_host.h).
 */
static pid_t host_start(int python, const char *topic, const char *rt,
                        const char *report, int *fd_out)
{
        int         fds[2];
        pid_t       pid;
        char        a[3][600], script[600], wheel[700];
        const char *ver = getenv("KS_FLEET_WHEEL");

        CU_ASSERT_FATAL(pipe(fds) == 0);
        snprintf(a[0], sizeof(a[0]), "plugin.library.paths=%s",
                 ks_e2e_plugin());
        snprintf(a[1], sizeof(a[1]), "keyshift.report.topic=%s", rt);
        snprintf(a[2], sizeof(a[2]), "keyshift.report.path=%s", report);
        snprintf(script, sizeof(script), "%s/fleet_python_host.py",
                 getenv("KS_BROKER_DIR"));
        snprintf(wheel, sizeof(wheel),
                 "set -e; . %s/../hosts/wheels.sh; wheel_dir %s",
                 getenv("KS_BROKER_DIR"), ver ? ver : "2.13.2");
        if (python) { /* the wheel's path, read before forking */
                FILE  *fp = popen(wheel, "r");
                size_t n;
                CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
                n        = fread(wheel, 1, sizeof(wheel) - 1, fp);
                wheel[n] = '\0';
                wheel[strcspn(wheel, "\n")] = '\0';
                CU_ASSERT_FATAL(pclose(fp) == 0 && n > 0);
        }
        pid = fork();
        CU_ASSERT_FATAL(pid >= 0);
        if (!pid) {
                dup2(fds[0], 0);
                close(fds[0]);
                close(fds[1]);
                if (python) {
                        setenv("PYTHONPATH", wheel, 1);
                        execl("/usr/bin/python3", "python3", "-s", script,
                              ks_broker_bootstrap(), topic, a[0], a[1], a[2],
                              "partitioner=murmur2_random",
                              "keyshift.partitions.proposed=12",
                              "keyshift.key.sample.size=" KS_SAMPLE,
                              "keyshift.overload=analyse",
                              "keyshift.report.interval.ms=300", (char *)NULL);
                        _exit(127);
                }
                execlp("kcat", "kcat", "-P", "-b", ks_broker_bootstrap(), "-t",
                       topic, "-K:", "-X", a[0], "-X", a[1], "-X", a[2], "-X",
                       "partitioner=murmur2_random", "-X",
                       "keyshift.partitions.proposed=12", "-X",
                       "keyshift.key.sample.size=" KS_SAMPLE, "-X",
                       "keyshift.overload=analyse", "-X",
                       "keyshift.report.interval.ms=300", (char *)NULL);
                _exit(127);
        }
        close(fds[0]);
        *fd_out = fds[1];
        return pid;
}

static void kcat_send(int fd, int s)
{
        char key[32], val[32], line[80];
        int  j, n;

        for (j = 0; j < KS_STREAM_LEN; j++) {
                message(s, j, key, sizeof(key), val, sizeof(val));
                n = snprintf(line, sizeof(line), "%s:%s\n", key, val);
                CU_ASSERT_EQUAL(write(fd, line, (size_t)n), n);
        }
}

/** @returns a new C producer with the plugin; @p rt NULL: no report
 *           topic. */
static void c_producer(ks_broker_producer_t *p, const char *rt,
                       const char *report)
{
        rd_kafka_conf_t *conf = ks_e2e_conf(
            "keyshift.report.path", report, "partitioner", "murmur2_random",
            "keyshift.partitions.proposed", "12", "keyshift.key.sample.size",
            KS_SAMPLE, "keyshift.report.interval.ms", "300", NULL);
        char err[256];

        if (rt)
                CU_ASSERT_EQUAL(rd_kafka_conf_set(conf, "keyshift.report.topic",
                                                  rt, err, sizeof(err)),
                                RD_KAFKA_CONF_OK);
        CU_ASSERT_FATAL(ks_broker_producer_new(p, conf, 4 * KS_STREAM_LEN) ==
                        0);
}

/** @brief Waits (at most 30 s) until the report at @p report has
 *         @p topic's partition count: a producer destroyed before keyshift
 *         had it would leave its messages unplaced. */
static void wait_count(ks_broker_producer_t *p, const char *report,
                       const char *topic)
{
        char    path[300];
        double  deadline = ks_broker_now_s() + 30;
        json_t *r;
        int     have = 0;

        snprintf(path, sizeof(path), "topics/%s/partition_count/current",
                 topic);
        while (!have && ks_broker_now_s() < deadline) {
                rd_kafka_poll(p->rk, 100);
                r    = access(report, F_OK) ? NULL : ks_e2e_load_json(report);
                have = r && json_integer_value(ks_e2e_get(r, path)) == KS_PARTS;
                json_decref(r);
        }
        CU_ASSERT(have);
}

static void c_send(ks_broker_producer_t *p, const char *topic, int s,
                   size_t *idx)
{
        char key[32], val[32];
        int  j;

        for (j = 0; j < KS_STREAM_LEN; j++) {
                message(s, j, key, sizeof(key), val, sizeof(val));
                ks_broker_produce(p, topic, (*idx)++, key, strlen(key), val,
                                  strlen(val));
        }
}

/** @returns the fleet report's topic @p t messages (-1: none). */
static long long fleet_messages(const char *rt, const char *out, const char *t)
{
        char      path[300];
        json_t   *r;
        long long n = -1;

        if (ks_e2e_system("%s fleet -b %s -r %s -o %s 2>/dev/null", cli(),
                          ks_broker_bootstrap(), rt, out))
                return -1;
        snprintf(path, sizeof(path), "topics/%s/messages", t);
        if ((r = ks_e2e_load_json(out)) && ks_e2e_get(r, path))
                n = ks_e2e_int(r, path);
        json_decref(r);
        return n;
}

/** @brief Asserts that arrays @p a (fleet) and @p b (union) are equal. */
static void same_array(json_t *a, json_t *b, const char *what)
{
        int eq = a && b && json_equal(a, b);
        if (!eq) {
                char *x = a ? json_dumps(a, JSON_COMPACT) : NULL;
                char *y = b ? json_dumps(b, JSON_COMPACT) : NULL;
                fprintf(stderr, "%s: fleet %s, union %s\n", what,
                        x ? x : "none", y ? y : "none");
                free(x);
                free(y);
        }
        CU_ASSERT(eq);
}

/** The union oracle from librdkafka's partitioner. */
typedef struct ks_oracle {
        long long now[KS_PARTS], prop[KS_PROPOSED];
        long long moved_msgs, distinct, moved_keys;
} ks_oracle_t;

static void oracle(ks_oracle_t *o)
{
        char key[32], val[32];
        int  s, j, k;

        memset(o, 0, sizeof(*o));
        for (s = 0; s < KS_STREAMS; s++)
                for (j = 0; j < KS_STREAM_LEN; j++) {
                        int32_t a, b;
                        message(s, j, key, sizeof(key), val, sizeof(val));
                        a = rd_kafka_msg_partitioner_murmur2_random(
                            NULL, key, strlen(key), KS_PARTS, NULL, NULL);
                        b = rd_kafka_msg_partitioner_murmur2_random(
                            NULL, key, strlen(key), KS_PROPOSED, NULL, NULL);
                        o->now[a]++;
                        o->prop[b]++;
                        o->moved_msgs += a != b;
                }
        /* distinct keys: those the streams hold (HOT, and k<n> for the
         * n that message() gives), each once */
        {
                static char seen[(KS_STREAMS - 1) * 100 + KS_KEYS_PER + 1];
                memset(seen, 0, sizeof(seen));
                for (s = 0; s < KS_STREAMS; s++)
                        for (j = 0; j < KS_STREAM_LEN; j++) {
                                int32_t a, b;
                                message(s, j, key, sizeof(key), val,
                                        sizeof(val));
                                k = key[0] == 'H' ? 0 : 1 + atoi(key + 1);
                                if (seen[k]++)
                                        continue;
                                a = rd_kafka_msg_partitioner_murmur2_random(
                                    NULL, key, strlen(key), KS_PARTS, NULL,
                                    NULL);
                                b = rd_kafka_msg_partitioner_murmur2_random(
                                    NULL, key, strlen(key), KS_PROPOSED, NULL,
                                    NULL);
                                o->distinct++;
                                o->moved_keys += a != b;
                        }
        }
}

static void check_against_oracles(json_t *f, json_t *u, const char *ft,
                                  const char *ut)
{
        char        fp[300], up[300];
        ks_oracle_t o;
        json_t     *arr;
        long long   i;
        double      est, err;

        oracle(&o);
#define KS_BOTH(p)                                                             \
        (snprintf(fp, sizeof(fp), "topics/%s/%s", ft, p),                      \
         snprintf(up, sizeof(up), "topics/%s/%s", ut, p))
        KS_BOTH("messages");
        CU_ASSERT_EQUAL(ks_e2e_int(f, fp), KS_STREAMS * KS_STREAM_LEN);
        CU_ASSERT_EQUAL(ks_e2e_int(f, fp), ks_e2e_int(u, up));
        KS_BOTH("bytes");
        CU_ASSERT_EQUAL(ks_e2e_int(f, fp), ks_e2e_int(u, up));
        KS_BOTH("current/partitions/messages");
        same_array(ks_e2e_get(f, fp), ks_e2e_get(u, up), fp);
        arr = ks_e2e_get(f, fp);
        for (i = 0; i < KS_PARTS; i++)
                CU_ASSERT_EQUAL(json_integer_value(json_array_get(arr, i)),
                                o.now[i]);
        KS_BOTH("current/partitions/bytes");
        same_array(ks_e2e_get(f, fp), ks_e2e_get(u, up), fp);
        KS_BOTH("proposals/0/partitions/messages");
        same_array(ks_e2e_get(f, fp), ks_e2e_get(u, up), fp);
        arr = ks_e2e_get(f, fp);
        for (i = 0; i < KS_PROPOSED; i++)
                CU_ASSERT_EQUAL(json_integer_value(json_array_get(arr, i)),
                                o.prop[i]);
        KS_BOTH("proposals/0/partitions/bytes");
        same_array(ks_e2e_get(f, fp), ks_e2e_get(u, up), fp);
        KS_BOTH("proposals/0/moved/messages");
        CU_ASSERT_EQUAL(ks_e2e_int(f, fp), ks_e2e_int(u, up));
        CU_ASSERT_EQUAL(ks_e2e_int(f, fp), o.moved_msgs);
        KS_BOTH("proposals/0/moved/bytes");
        CU_ASSERT_EQUAL(ks_e2e_int(f, fp), ks_e2e_int(u, up));

        /* estimates within 3 stated standard errors of the exact values */
        KS_BOTH("keys/distinct_estimate");
        est = json_number_value(ks_e2e_get(f, fp));
        KS_BOTH("keys/distinct_error");
        err = json_number_value(ks_e2e_get(f, fp)); /* relative */
        printf("  distinct keys: fleet %.0f +- %.1f%%, exact %lld\n", est,
               100 * err, o.distinct);
        CU_ASSERT(fabs(est - (double)o.distinct) <=
                  3 * err * (double)o.distinct + 1);
        CU_ASSERT(err > 0); /* an estimate indeed: the sample is full */
        KS_BOTH("proposals/0/moved/distinct_keys");
        est = json_number_value(ks_e2e_get(f, fp));
        KS_BOTH("proposals/0/moved/distinct_keys_error");
        err = json_number_value(ks_e2e_get(f, fp));
        printf("  moved keys: fleet %.0f +- %.1f, exact %lld\n", est, err,
               o.moved_keys);
        CU_ASSERT(fabs(est - (double)o.moved_keys) <= 3 * err + 1);

        /* the hot key first, with the three producers' count summed */
        KS_BOTH("hot_keys/key/0");
        CU_ASSERT_STRING_EQUAL(json_string_value(ks_e2e_get(f, fp)), "HOT");
        KS_BOTH("hot_keys/messages/0");
        est = (double)ks_e2e_int(f, fp);
        KS_BOTH("hot_keys/messages_error/0");
        err = json_number_value(ks_e2e_get(f, fp));
        printf("  hot key: fleet %.0f +- %.0f, exact %d\n", est, err,
               KS_STREAMS * KS_STREAM_LEN / 3);
        CU_ASSERT(fabs(est - KS_STREAMS * KS_STREAM_LEN / 3) <= err);
#undef KS_BOTH
}

/** @brief The figures, fleet vs the union's producer vs librdkafka, in the
 *         broker suite's summary. */
static void summary(json_t *f, json_t *u, const char *ft, const char *ut)
{
        static const char *const rows[][2] = {
            {"messages", "messages"},
            {"bytes", "bytes"},
            {"moved messages 6 -> 12", "proposals/0/moved/messages"},
            {"moved bytes 6 -> 12", "proposals/0/moved/bytes"},
            {"distinct keys (estimate)", "keys/distinct_estimate"},
            {"moved keys (estimate)", "proposals/0/moved/distinct_keys"},
            {"hot key HOT's messages", "hot_keys/messages/0"},
        };
        ks_oracle_t o;
        long long   exact[7];
        char        fp[300], up[300], table[2048];
        size_t      i, n;

        oracle(&o);
        exact[0] = KS_STREAMS * KS_STREAM_LEN;
        exact[1] = -1;
        exact[2] = o.moved_msgs;
        exact[3] = -1;
        exact[4] = o.distinct;
        exact[5] = o.moved_keys;
        exact[6] = KS_STREAMS * KS_STREAM_LEN / 3;
        n        = (size_t)snprintf(table, sizeof(table),
                                    "### keyshift fleet: 3 producers vs the union\n\n"
                                           "| figure | fleet | union's producer | exact "
                                           "(librdkafka) |\n|---|---|---|---|\n");
        for (i = 0; i < sizeof(rows) / sizeof(rows[0]) && n < sizeof(table);
             i++) {
                snprintf(fp, sizeof(fp), "topics/%s/%s", ft, rows[i][1]);
                snprintf(up, sizeof(up), "topics/%s/%s", ut, rows[i][1]);
                char ex[32] = "-";
                if (exact[i] >= 0)
                        snprintf(ex, sizeof(ex), "%lld", exact[i]);
                n += (size_t)snprintf(table + n, sizeof(table) - n,
                                      "| %s | %.0f | %.0f | %s |\n", rows[i][0],
                                      json_number_value(ks_e2e_get(f, fp)),
                                      json_number_value(ks_e2e_get(u, up)), ex);
        }
        ks_broker_summary("fleet", "%s", table);
}

/** @returns the state of the producer @p pid in fleet report @p f. */
static const char *state_of(json_t *f, long long pid)
{
        json_t *ps = ks_e2e_get(f, "fleet/producers");
        size_t  i;

        for (i = 0; i < json_array_size(ps); i++)
                if (json_integer_value(
                        json_object_get(json_array_get(ps, i), "pid")) == pid)
                        return json_string_value(
                            json_object_get(json_array_get(ps, i), "state"));
        return "";
}

static void test_fleet(void)
{
        const char          *dir = ks_e2e_tmpdir("fleet");
        char                 topic[128], utopic[128], rt[128];
        char                 rep[4][600], out[600], out2[600];
        ks_broker_producer_t a, un, raw;
        int                  fd_b, fd_c, st;
        pid_t                pb, pc;
        size_t               idx = 0, uidx = 0;
        double               deadline;
        json_t              *f, *u, *f2;
        int                  s;

        ks_broker_topic_name("fleet", topic, sizeof(topic));
        ks_broker_topic_name("fleet-union", utopic, sizeof(utopic));
        ks_broker_topic_name("fleet-reports", rt, sizeof(rt));
        CU_ASSERT_FATAL(ks_broker_create_topic(topic, KS_PARTS) == 0);
        CU_ASSERT_FATAL(ks_broker_create_topic(utopic, KS_PARTS) == 0);
        for (s = 0; s < 4; s++)
                snprintf(rep[s], sizeof(rep[s]), "%s/p%d.json", dir, s);
        snprintf(out, sizeof(out), "%s/fleet.json", dir);
        snprintf(out2, sizeof(out2), "%s/fleet2.json", dir);

        /* host 1, the C producer: stream 0, destroyed cleanly */
        c_producer(&a, rt, rep[0]);
        c_send(&a, topic, 0, &idx);
        ks_broker_flush(&a);
        wait_count(&a, rep[0], topic);
        ks_broker_producer_free(&a);
        /* host 2, kcat: stream 1, exits cleanly */
        pb = host_start(0, topic, rt, rep[1], &fd_b);
        kcat_send(fd_b, 1);
        close(fd_b);
        CU_ASSERT(waitpid(pb, &st, 0) == pb && WIFEXITED(st) &&
                  WEXITSTATUS(st) == 0);
        /* host 3, confluent-kafka-python (a PyPI wheel), killed once its
         * last report is out */
        pc = host_start(1, topic, rt, rep[2], &fd_c);
        kcat_send(fd_c, 2);
        {
                /* kcat reads stdin in 4 KiB blocks and produces the last
                 * lines of a block only once the next comes (or EOF): empty
                 * lines, which the hosts skip, push them out */
                static const char nl[8192] = {[0 ... 8191] = '\n'};
                CU_ASSERT_EQUAL(write(fd_c, nl, sizeof(nl)),
                                (ssize_t)sizeof(nl));
        }
        deadline = ks_broker_now_s() + 60;
        while (fleet_messages(rt, out, topic) != KS_STREAMS * KS_STREAM_LEN &&
               ks_broker_now_s() < deadline)
                usleep(300 * 1000);
        kill(pc, SIGKILL);
        close(fd_c);
        waitpid(pc, &st, 0);

        /* the union oracle: one producer, the three streams */
        c_producer(&un, NULL, rep[3]);
        for (s = 0; s < KS_STREAMS; s++)
                c_send(&un, utopic, s, &uidx);
        ks_broker_flush(&un);
        wait_count(&un, rep[3], utopic);
        ks_broker_producer_free(&un);

        sleep(2); /* the killed one: stale after 1 s */
        CU_ASSERT_EQUAL(ks_e2e_system("%s fleet -b %s -r %s --stale-after 1s "
                                      "-o %s",
                                      cli(), ks_broker_bootstrap(), rt, out),
                        0);
        f = ks_e2e_load_json(out);
        u = ks_e2e_load_json(rep[3]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        CU_ASSERT_PTR_NOT_NULL_FATAL(u);
        CU_ASSERT_STRING_EQUAL(json_string_value(ks_e2e_get(f, "source")),
                               "fleet");
        CU_ASSERT_EQUAL(ks_e2e_int(f, "fleet/merged"), 3);
        CU_ASSERT_EQUAL(ks_e2e_int(f, "fleet/ended"), 2);
        CU_ASSERT_EQUAL(ks_e2e_int(f, "fleet/stale"), 1);
        CU_ASSERT_EQUAL(ks_e2e_int(f, "fleet/live"), 0);
        CU_ASSERT_EQUAL(ks_e2e_int(f, "fleet/records_garbage"), 0);
        CU_ASSERT_STRING_EQUAL(state_of(f, getpid()), "ended");
        CU_ASSERT_STRING_EQUAL(state_of(f, pb), "ended");
        CU_ASSERT_STRING_EQUAL(state_of(f, pc), "stale");
        CU_ASSERT(ks_e2e_has_warning(ks_e2e_get(f, "warnings"),
                                     "FLEET_PRODUCERS_STALE"));
        check_against_oracles(f, u, topic, utopic);
        summary(f, u, topic, utopic);
        CU_ASSERT_EQUAL(
            ks_e2e_system("%s show %s > %s/show.txt", cli(), out, dir), 0);

        /* --live: the ended and the stale left out, none left */
        CU_ASSERT_EQUAL(ks_e2e_system("%s fleet -b %s -r %s --stale-after 1s "
                                      "--live -o %s 2>/dev/null",
                                      cli(), ks_broker_bootstrap(), rt, out2),
                        1);

        /* garbage by hand: not JSON, not a keyshift key, another schema,
         * a corrupted sketch */
        CU_ASSERT_FATAL(ks_broker_producer_new(&raw, rd_kafka_conf_new(), 8) ==
                        0);
        {
                static const char *k1 =
                    "{\"v\":1,\"client_id\":\"x\",\"host\":\"h\",\"pid\":1,"
                    "\"started_at_ms\":1,\"topic\":\"t\"}";
                static const char *k2 =
                    "{\"v\":1,\"client_id\":\"y\",\"host\":\"h\",\"pid\":2,"
                    "\"started_at_ms\":1,\"topic\":\"\"}";
                static const char *v2 = "{\"schema\":\"keyshift.report.v99\"}";
                ks_broker_produce(&raw, rt, 0, k1, strlen(k1), "not json", 8);
                ks_broker_produce(&raw, rt, 1, "plain key", 9, "{}", 2);
                ks_broker_produce(&raw, rt, 2, k2, strlen(k2), v2, strlen(v2));
        }
        {
                /* a report whose key sample does not read: the C
                 * producer's topic, one base64 character changed */
                static const char *k3 =
                    "{\"v\":1,\"client_id\":\"z\",\"host\":\"h\",\"pid\":3,"
                    "\"started_at_ms\":1,\"topic\":\"%s\"}";
                char    k[300], path[300], *v, *b64;
                json_t *r = ks_e2e_load_json(rep[0]), *ks;

                CU_ASSERT_PTR_NOT_NULL_FATAL(r);
                snprintf(k, sizeof(k), k3, topic);
                snprintf(path, sizeof(path), "topics/%s/merge/key_sample",
                         topic);
                ks  = ks_e2e_get(r, path);
                b64 = strdup(json_string_value(json_object_get(ks, "packed")));
                CU_ASSERT_FATAL(b64 && strlen(b64) > 40);
                b64[30] = b64[30] == 'A' ? 'B' : 'A';
                json_object_set_new(ks, "packed", json_string(b64));
                v = json_dumps(r, JSON_COMPACT);
                ks_broker_produce(&raw, rt, 3, k, strlen(k), v, strlen(v));
                free(v);
                free(b64);
                json_decref(r);
        }
        ks_broker_flush(&raw);
        ks_broker_producer_free(&raw);
        CU_ASSERT_EQUAL(ks_e2e_system("%s fleet -b %s -r %s -o %s 2> "
                                      "%s/garbage.txt",
                                      cli(), ks_broker_bootstrap(), rt, out2,
                                      dir),
                        0);
        /* --follow --metrics: the Prometheus textfile kept up to date,
         * ended by SIGTERM */
        CU_ASSERT_EQUAL(
            ks_e2e_system("%s fleet -b %s -r %s --follow --every 1s --metrics "
                          "%s/fleet.prom 2>/dev/null & pid=$!; i=0; while [ "
                          "$i -lt 100 ] && ! [ -s %s/fleet.prom ]; do sleep "
                          "0.1; i=$((i+1)); done; kill -TERM $pid; wait $pid",
                          cli(), ks_broker_bootstrap(), rt, dir, dir),
            0);
        {
                /* its bytes are the union's */
                char up[300];
                snprintf(up, sizeof(up), "topics/%s/bytes", utopic);
                CU_ASSERT_EQUAL(
                    ks_e2e_system(
                        "grep -Eq '^keyshift_bytes_total\\{[^}]*topic=\"%s\""
                        "\\} %lld$' %s/fleet.prom",
                        topic, ks_e2e_int(u, up), dir),
                    0);
        }
        CU_ASSERT_EQUAL(
            ks_e2e_system("grep -c 'skipped the record at .* "
                          "offset [0-9]' %s/garbage.txt | grep -qx 4",
                          dir),
            0);
        /* each names its record once */
        CU_ASSERT_NOT_EQUAL(
            ks_e2e_system("grep -Eq 'at ([^:]+): \\1: ' %s/garbage.txt", dir),
            0);
        f2 = ks_e2e_load_json(out2);
        CU_ASSERT_PTR_NOT_NULL_FATAL(f2);
        CU_ASSERT_EQUAL(ks_e2e_int(f2, "fleet/records_garbage"), 4);
        CU_ASSERT_EQUAL(ks_e2e_int(f2, "fleet/merged"), 3);
        CU_ASSERT(ks_e2e_has_warning(ks_e2e_get(f2, "warnings"),
                                     "FLEET_RECORDS_SKIPPED"));
        check_against_oracles(f2, u, topic, utopic);
        if (getenv("KS_KEEP")) /* for a closing note: fleet vs union */
                ks_e2e_system("cp %s %s/show.txt /tmp/ && cp %s "
                              "/tmp/fleet-union.json",
                              out, dir, rep[3]);
        json_decref(f);
        json_decref(f2);
        json_decref(u);
        ks_broker_delete_topic(topic);
        ks_broker_delete_topic(utopic);
        ks_broker_delete_topic(rt);
        if (!CU_get_number_of_failures())
                ks_broker_tmpdir_done(dir);
}

/**
 * @brief The report producer inherits the host's security settings: a
 *        host configured for SASL/PLAIN, against the test broker's
 *        plaintext listener, fails to connect, and so does keyshift's
 *        report producer (REPORT_TOPIC_FAILED saying so, the host's report
 *        file written); with keyshift.report.topic.security.protocol=
 *        plaintext the report producer's own setting wins and its records
 *        arrive, while the host still cannot connect.
 */
static void run_sasl_host(const char *topic, const char *rt, const char *report,
                          int override, char *warned, size_t warned_size)
{
        rd_kafka_conf_t *conf = ks_e2e_conf(
            "keyshift.report.path", report, "keyshift.report.interval.ms",
            "200", "keyshift.partitions.current", "6", "keyshift.report.topic",
            rt, "keyshift.report.topic.flush.ms", "3000", "security.protocol",
            "sasl_plaintext", "sasl.mechanism", "PLAIN", "sasl.username",
            "keyshift", "sasl.password", "secret", "bootstrap.servers",
            ks_broker_bootstrap(), NULL);
        char        err[256];
        rd_kafka_t *rk;
        int         i;

        if (override)
                CU_ASSERT_EQUAL(
                    rd_kafka_conf_set(conf,
                                      "keyshift.report.topic.security.protocol",
                                      "plaintext", err, sizeof(err)),
                    RD_KAFKA_CONF_OK);
        rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
        CU_ASSERT_PTR_NOT_NULL_FATAL(rk);
        for (i = 0; i < 10; i++) {
                char key[8];
                int  kl = snprintf(key, sizeof(key), "s%d", i);
                rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic),
                                  RD_KAFKA_V_KEY(key, (size_t)kl),
                                  RD_KAFKA_V_VALUE("v", 1), RD_KAFKA_V_END);
        }
        /* the warning is in the report that follows its cause */
        for (i = 0; i < 30; i++) {
                json_t     *r;
                const char *m;
                rd_kafka_poll(rk, 100);
                r = access(report, F_OK) ? NULL : ks_e2e_load_json(report);
                if (r && !*warned &&
                    (m = ks_e2e_warning_message(ks_e2e_get(r, "warnings"),
                                                "REPORT_TOPIC_FAILED")))
                        snprintf(warned, warned_size, "%s", m);
                json_decref(r);
        }
        rd_kafka_purge(rk, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
        rd_kafka_destroy(rk);
}

static void test_inherits_security(void)
{
        const char *dir = ks_e2e_tmpdir("fleet-sasl");
        char        topic[128], rt[128], rt2[128], report[600], out[600];
        json_t     *r;
        char        msg[1024] = "";

        ks_broker_topic_name("fleet-sasl", topic, sizeof(topic));
        ks_broker_topic_name("fleet-sasl-reports", rt, sizeof(rt));
        ks_broker_topic_name("fleet-sasl-reports2", rt2, sizeof(rt2));
        CU_ASSERT_FATAL(ks_broker_create_topic(topic, KS_PARTS) == 0);
        snprintf(report, sizeof(report), "%s/sasl.json", dir);
        snprintf(out, sizeof(out), "%s/fleet.json", dir);

        run_sasl_host(topic, rt, report, 0, msg, sizeof(msg));
        r = ks_e2e_load_json(report);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        CU_ASSERT_EQUAL(ks_e2e_int(r, "messages"), 10);
        printf("  inherited SASL: %s\n", *msg ? msg : "(no warning)");
        CU_ASSERT_PTR_NOT_NULL(strstr(msg, "SASL"));
        json_decref(r);
        /* nothing published: the topic was not even created */
        CU_ASSERT_NOT_EQUAL(ks_e2e_system("%s fleet -b %s -r %s --timeout-ms "
                                          "3000 -o %s 2>/dev/null",
                                          cli(), ks_broker_bootstrap(), rt,
                                          out),
                            0);

        msg[0] = '\0';
        run_sasl_host(topic, rt2, report, 1, msg, sizeof(msg));
        CU_ASSERT_PTR_NULL(strstr(msg, "SASL"));
        CU_ASSERT_EQUAL(ks_e2e_system("%s fleet -b %s -r %s -o %s", cli(),
                                      ks_broker_bootstrap(), rt2, out),
                        0);
        r = ks_e2e_load_json(out);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        CU_ASSERT_EQUAL(ks_e2e_int(r, "fleet/merged"), 1);
        CU_ASSERT_EQUAL(ks_e2e_int(r, "fleet/ended"), 1);
        CU_ASSERT_EQUAL(ks_e2e_int(r, "messages"), 10);
        json_decref(r);
        ks_broker_delete_topic(topic);
        ks_broker_delete_topic(rt);
        ks_broker_delete_topic(rt2);
        if (!CU_get_number_of_failures())
                ks_broker_tmpdir_done(dir);
}

void ks_test_register(void)
{
        KS_ADD_SUITE(
            "keyshift fleet",
            {"three producers, three hosts: the union's figures", test_fleet},
            {"the report producer inherits the host's security settings; "
             "keyshift.report.topic.X wins",
             test_inherits_security});
}
