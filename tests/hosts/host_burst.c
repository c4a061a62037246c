/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file host_burst.c
 * @brief A C producer that bursts keyed messages right after it is created,
 *        with keyshift loaded by full path and its default settings
 *        (keyshift.overload=skip): nothing may be lost to keyshift's
 *        start-up (the C half of python_burst.py; test_burst.sh runs both).
 *
 *     host_burst PLUGIN REPORT_DIR BOOTSTRAP RUNS MESSAGES
 *
 * BOOTSTRAP is "mock" (librdkafka's mock cluster: topics of 4 partitions)
 * or host:port of a real cluster, where a topic of 6 partitions is created
 * for the runs and deleted after them. Each run creates a producer and, with
 * no pause, produces MESSAGES messages keyed by 20,011 MMSI-like decimal
 * keys (rd_kafka_producev() in a loop, polling only when librdkafka's queue
 * is full), then checks the final report with no tolerance: keys.unanalysed
 * and keys.unplaced are 0 and every message is hashed; every delivery
 * landed where librdkafka's own rd_kafka_msg_partitioner_consistent() says
 * (the oracle, of the librdkafka this program runs on) and the report
 * matched every acknowledgement it checked, the others counted as not
 * checked while the host was out of CPU (producer.out_of_cpu); current.partitions and each proposal's
 * partitions and moved messages equal a recomputation with that function.
 * Prints one line per run; exits 1 on the first failure.
 */
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BURST_KEYS 20011
#define BURST_MAXP 64

static const int32_t burst_proposed[] = {12, 24};
#define BURST_NPROP (sizeof(burst_proposed) / sizeof(burst_proposed[0]))

static int64_t burst_delivered[BURST_MAXP];
static int64_t burst_failed;

static void burst_fail(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));
static void burst_fail(const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        fputs("FAIL: ", stdout);
        vprintf(fmt, ap);
        fputc('\n', stdout);
        va_end(ap);
        exit(1);
}

static double burst_now(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static size_t burst_key(size_t i, char *buf, size_t size)
{
        return (size_t)snprintf(
            buf, size, "%u", 200000000u + (unsigned)((i * 7919) % BURST_KEYS));
}

static size_t burst_value(size_t i, char *buf, size_t size)
{
        return (size_t)snprintf(buf, size, "v%06zu", i);
}

static int32_t burst_place(const char *key, size_t len, int32_t count)
{
        return rd_kafka_msg_partitioner_consistent(NULL, key, len, count, NULL,
                                                   NULL);
}

static void burst_dr(rd_kafka_t *rk, const rd_kafka_message_t *m, void *op)
{
        (void)rk, (void)op;
        if (m->err || m->partition < 0 || m->partition >= BURST_MAXP)
                burst_failed++;
        else
                burst_delivered[m->partition]++;
}

static void burst_set(rd_kafka_conf_t *conf, const char *name, const char *v)
{
        char errstr[512];

        if (rd_kafka_conf_set(conf, name, v, errstr, sizeof(errstr)) !=
            RD_KAFKA_CONF_OK)
                burst_fail("%s=%s: %s", name, v, errstr);
}

static rd_kafka_conf_t *burst_conf(const char *bootstrap)
{
        rd_kafka_conf_t *conf = rd_kafka_conf_new();

        if (!strcmp(bootstrap, "mock"))
                burst_set(conf, "test.mock.num.brokers", "1");
        else
                burst_set(conf, "bootstrap.servers", bootstrap);
        return conf;
}

/** @brief Creates (@p create) or deletes @p topic (6 partitions). */
static void burst_admin(const char *bootstrap, const char *topic, int create)
{
        char                errstr[512];
        rd_kafka_t         *rk;
        rd_kafka_queue_t   *q;
        rd_kafka_event_t   *ev;
        rd_kafka_conf_t    *conf = burst_conf(bootstrap);
        rd_kafka_resp_err_t err  = RD_KAFKA_RESP_ERR_NO_ERROR;

        if (!(rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr,
                                sizeof(errstr))))
                burst_fail("admin client: %s", errstr);
        q = rd_kafka_queue_new(rk);
        if (create) {
                rd_kafka_NewTopic_t *nt =
                    rd_kafka_NewTopic_new(topic, 6, 1, errstr, sizeof(errstr));
                rd_kafka_CreateTopics(rk, &nt, 1, NULL, q);
                rd_kafka_NewTopic_destroy(nt);
        } else {
                rd_kafka_DeleteTopic_t *dt = rd_kafka_DeleteTopic_new(topic);
                rd_kafka_DeleteTopics(rk, &dt, 1, NULL, q);
                rd_kafka_DeleteTopic_destroy(dt);
        }
        if (!(ev = rd_kafka_queue_poll(q, 30000)))
                burst_fail("%s %s: no answer in 30 s",
                           create ? "CreateTopics" : "DeleteTopics", topic);
        err = rd_kafka_event_error(ev);
        if (!err && create) {
                size_t                          n;
                const rd_kafka_topic_result_t **r =
                    rd_kafka_CreateTopics_result_topics(
                        rd_kafka_event_CreateTopics_result(ev), &n);
                err = n == 1 ? rd_kafka_topic_result_error(r[0])
                             : RD_KAFKA_RESP_ERR__FAIL;
        }
        if (err)
                burst_fail("%s %s: %s",
                           create ? "CreateTopics" : "DeleteTopics", topic,
                           rd_kafka_err2str(err));
        rd_kafka_event_destroy(ev);
        rd_kafka_queue_destroy(q);
        rd_kafka_destroy(rk);
        if (create) /* the leader may take a moment to be known */
                sleep(1);
}

static json_t *burst_path(json_t *j, const char *a, const char *b,
                          const char *c)
{
        j = json_object_get(j, a);
        if (b)
                j = json_object_get(j, b);
        if (c)
                j = json_object_get(j, c);
        return j;
}

static long long burst_int(json_t *j, const char *a, const char *b,
                           const char *c)
{
        json_t *v = burst_path(j, a, b, c);

        if (!json_is_integer(v))
                burst_fail("report: %s.%s.%s is not an integer", a, b ? b : "",
                           c ? c : "");
        return json_integer_value(v);
}

/** @brief Waits for a periodic report that knows @p topic's count (as
 *         python_host.py does: a producer that lives longer than keyshift's
 *         first metadata answer). */
static void burst_wait_count(rd_kafka_t *rk, const char *report,
                             const char *topic)
{
        double deadline = burst_now() + 30;

        while (burst_now() < deadline) {
                json_t *r     = json_load_file(report, 0, NULL);
                json_t *c     = burst_path(json_object_get(r, "topics"), topic,
                                           "partition_count", "current");
                int     known = json_is_integer(c);
                json_decref(r);
                if (known)
                        return;
                rd_kafka_poll(rk, 100);
        }
        burst_fail("no report with the partition count within 30 s");
}

/** @brief Checks that @p parts (report partitions objects) hold @p want. */
static void burst_check_loads(json_t *parts, const int64_t (*want)[2],
                              int32_t n, const char *what)
{
        int32_t i;

        json_t *pm = json_object_get(parts, "messages");
        json_t *pb = json_object_get(parts, "bytes");

        if ((int32_t)json_array_size(pm) != n ||
            (int32_t)json_array_size(pb) != n)
                burst_fail("%s: %zu partitions, expected %d", what,
                           json_array_size(pm), n);
        for (i = 0; i < n; i++) {
                long long m = json_integer_value(json_array_get(pm, (size_t)i));
                long long b = json_integer_value(json_array_get(pb, (size_t)i));
                if (m != want[i][0] || b != want[i][1])
                        burst_fail("%s: partition %d has %lld messages, %lld "
                                   "bytes; librdkafka's function says "
                                   "%" PRId64 ", %" PRId64,
                                   what, i, m, b, want[i][0], want[i][1]);
        }
}

static void burst_run(const char *plugin, const char *report,
                      const char *bootstrap, const char *topic, size_t n,
                      int run)
{
        rd_kafka_conf_t *conf = burst_conf(bootstrap);
        char             errstr[512], key[16], value[16], proposed[32];
        rd_kafka_t      *rk;
        json_t          *r, *t;
        int64_t          cur[BURST_MAXP][2], prop[BURST_NPROP][BURST_MAXP][2];
        int64_t          moved[BURST_NPROP];
        int32_t          count;
        size_t           i, j;
        double           t0, rate;
        long long        unanalysed, unchecked;

        memset(burst_delivered, 0, sizeof(burst_delivered));
        burst_failed = 0;
        snprintf(proposed, sizeof(proposed), "%d,%d", (int)burst_proposed[0],
                 (int)burst_proposed[1]);
        burst_set(conf, "plugin.library.paths", plugin);
        burst_set(conf, "keyshift.partitions.proposed", proposed);
        burst_set(conf, "keyshift.report.path", report);
        burst_set(conf, "keyshift.report.interval.ms", "200");
        burst_set(conf, "linger.ms", "5");
        burst_set(conf, "queue.buffering.max.messages", "1000000");
        rd_kafka_conf_set_dr_msg_cb(conf, burst_dr);
        if (!(rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr,
                                sizeof(errstr))))
                burst_fail("rd_kafka_new: %s", errstr);
        t0 = burst_now();
        for (i = 0; i < n; i++) {
                size_t              kl = burst_key(i, key, sizeof(key));
                size_t              vl = burst_value(i, value, sizeof(value));
                rd_kafka_resp_err_t err;
                while (
                    (err = rd_kafka_producev(
                         rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_KEY(key, kl),
                         RD_KAFKA_V_VALUE(value, vl),
                         RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                         RD_KAFKA_V_END)) == RD_KAFKA_RESP_ERR__QUEUE_FULL)
                        rd_kafka_poll(rk, 10);
                if (err)
                        burst_fail("produce: %s", rd_kafka_err2str(err));
        }
        rate = (double)n / (burst_now() - t0);
        if (rd_kafka_flush(rk, 60000))
                burst_fail("flush left messages");
        burst_wait_count(rk, report, topic);
        rd_kafka_destroy(rk); /* the final report */

        if (!(r = json_load_file(report, 0, NULL)))
                burst_fail("%s: not JSON", report);
        t          = burst_path(r, "topics", topic, NULL);
        unanalysed = burst_int(t, "keys", "unanalysed", NULL);
        if (unanalysed || burst_int(t, "keys", "unplaced", NULL) ||
            burst_int(t, "keys", "hashed", NULL) != (long long)n)
                burst_fail("keys: %lld unanalysed, %lld unplaced, %lld hashed "
                           "of %zu (produced at %.0f msgs/s)",
                           unanalysed, burst_int(t, "keys", "unplaced", NULL),
                           burst_int(t, "keys", "hashed", NULL), n, rate);
        count = (int32_t)burst_int(t, "partition_count", "current", NULL);
        if (count < 1 || count > BURST_MAXP)
                burst_fail("partition count %d", (int)count);
        memset(cur, 0, sizeof(cur));
        memset(prop, 0, sizeof(prop));
        memset(moved, 0, sizeof(moved));
        for (i = 0; i < n; i++) {
                size_t  kl = burst_key(i, key, sizeof(key));
                int64_t size =
                    (int64_t)(kl + burst_value(i, value, sizeof(value)));
                int32_t pc = burst_place(key, kl, count);
                cur[pc][0]++;
                cur[pc][1] += size;
                for (j = 0; j < BURST_NPROP; j++) {
                        int32_t pn = burst_place(key, kl, burst_proposed[j]);
                        prop[j][pn][0]++;
                        prop[j][pn][1] += size;
                        moved[j] += pn != pc;
                }
        }
        if (burst_failed)
                burst_fail("%" PRId64 " deliveries failed", burst_failed);
        for (i = 0; i < (size_t)count; i++)
                if (burst_delivered[i] != cur[i][0])
                        burst_fail("partition %zu got %" PRId64 " deliveries, "
                                   "librdkafka's function says %" PRId64,
                                   i, burst_delivered[i], cur[i][0]);
        /* checked, or not while the host was out of CPU (counted, unread:
         * core/stage/ks_cpuwatch.h): every delivery, none wrong */
        unchecked =
            burst_int(r, "producer", "out_of_cpu", "deliveries_unchecked");
        if (burst_int(t, "acknowledged", "mismatched", NULL) ||
            burst_int(t, "acknowledged", "matched", NULL) + unchecked !=
                (long long)n)
                burst_fail(
                    "acknowledged: %lld matched, %lld mismatched, "
                    "%lld unverified, %lld pending, %lld unchecked of %zu",
                    burst_int(t, "acknowledged", "matched", NULL),
                    burst_int(t, "acknowledged", "mismatched", NULL),
                    burst_int(t, "acknowledged", "unverified", NULL),
                    burst_int(t, "acknowledged", "pending_verification", NULL),
                    unchecked, n);
        burst_check_loads(burst_path(t, "current", "partitions", NULL),
                          (const int64_t(*)[2])cur, count, "current");
        for (j = 0; j < BURST_NPROP; j++) {
                json_t *p = json_array_get(json_object_get(t, "proposals"), j);
                char    what[32];
                snprintf(what, sizeof(what), "proposal %d",
                         (int)burst_proposed[j]);
                if (burst_int(p, "partition_count", NULL, NULL) !=
                    burst_proposed[j])
                        burst_fail("%s is not the report's proposal %zu", what,
                                   j);
                burst_check_loads(json_object_get(p, "partitions"),
                                  (const int64_t(*)[2])prop[j],
                                  burst_proposed[j], what);
                if (burst_int(p, "moved", "messages", NULL) != moved[j])
                        burst_fail("%s: moved %lld, librdkafka's function "
                                   "says %" PRId64,
                                   what,
                                   burst_int(p, "moved", "messages", NULL),
                                   moved[j]);
        }
        json_decref(r);
        printf("ok librdkafka %s (C), %s, run %d: %zu messages at %.0f msgs/s "
               "from the producer's creation, 0 unanalysed; %d -> 12, 24 moved "
               "%" PRId64 ", %" PRId64 " messages, as librdkafka's function "
               "says\n",
               rd_kafka_version_str(), bootstrap, run, n, rate, (int)count,
               moved[0], moved[1]);
        fflush(stdout);
}

int main(int argc, char **argv)
{
        char   topic[64], report[4096];
        int    runs, i;
        size_t n;

        if (argc != 6) {
                fprintf(stderr, "usage: host_burst PLUGIN REPORT_DIR "
                                "BOOTSTRAP|mock RUNS MESSAGES\n");
                return 2;
        }
        runs = atoi(argv[4]);
        n    = (size_t)atol(argv[5]);
        if (!strcmp(argv[3], "mock")) {
                snprintf(topic, sizeof(topic), "ais");
        } else {
                snprintf(topic, sizeof(topic), "keyshift-burst-c-%ld",
                         (long)getpid());
                burst_admin(argv[3], topic, 1);
        }
        for (i = 1; i <= runs; i++) {
                snprintf(report, sizeof(report), "%s/burst-c-%d.json", argv[2],
                         i);
                burst_run(argv[1], report, argv[3], topic, n, i);
        }
        if (strcmp(argv[3], "mock"))
                burst_admin(argv[3], topic, 0);
        return 0;
}
