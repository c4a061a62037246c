/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ksb_lifecycle.c
 * @brief Many topics, a silent producer, and the end of a producer: what
 *        keyshift adds to a producer's life beyond the produce path.
 *
 *   ksb_lifecycle [--topics 100,1000,10000] [--idle-s 10] [--interval-ms 2000]
 *                 [--rounds 1] [--queue-only 1]
 *
 * --queue-only 1: no broker (bootstrap 127.0.0.1:1), the messages queued
 * and purged before the idle wait, keyshift told the count
 * (keyshift.partitions.current=6): the mock cluster takes over 20 minutes
 * to create and deliver to 10,000 topics, with or without keyshift, so
 * the 10,000-topic destroy is measured this way.
 *
 * For each topic count N, a producer on librdkafka's mock cluster sends 3
 * keyed messages to each of N topics, flushes, lets two report intervals
 * and a second pass (the reports that show the last messages are built),
 * sits idle for --idle-s seconds and is destroyed; once without keyshift (A) and once with it
 * (B: plugin by full path, keyshift.report.interval.ms = --interval-ms,
 * keyshift.topics.max raised to N), alternating. Measured, each in the
 * same run for A and B:
 *  - destroy: the wall time of rd_kafka_destroy() (B writes its final
 *    report there), B - A in seconds;
 *  - idle CPU: the process's CPU time during the idle seconds, (B - A) /
 *    idle wall time, as a fraction of one core (keyshift's reporter checks
 *    every interval whether any topic changed, and leaves the report file
 *    as is when none did; it rebuilds it at least once a minute, 60 s,
 *    KS_UNCHANGED_REWRITE_MS, which a 10 s window may or may not hold: at
 *    1,000 topics a rebuild is ~0.3 s, 0.5 % of a core averaged);
 *  - first report: B's periodic report must exist after the idle wait (it
 *    is written at the first interval), which is checked, not timed.
 * Targets (issue "Hundreds of topics"): destroy within +1 s at 1,000
 * topics and +3 s at 10,000; idle CPU under 5 % of a core at 1,000 topics
 * with a 2 s interval.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>

#include "ksb_producer.h"
#include "ksb_stats.h"

#define KSB_LIFE_MAX_COUNTS 8
#define KSB_LIFE_ROUNDS_MAX 16

typedef struct life_opts {
        long counts[KSB_LIFE_MAX_COUNTS];
        int  count_cnt;
        int  idle_s;
        int  interval_ms;
        int  rounds;
        int  queue_only; /**< no broker: messages queued, then purged */
} life_opts_t;

typedef struct life_result {
        double destroy_s;
        double idle_cpu_s;
        double idle_ks_cpu_s; /**< of it, keyshift's threads (ks:*) */
        double idle_wall_s;
        double produce_s;
        int    report_seen; /**< B: the periodic report existed */
} life_result_t;

static void set(rd_kafka_conf_t *conf, const char *name, const char *value)
{
        char errstr[512];

        if (rd_kafka_conf_set(conf, name, value, errstr, sizeof(errstr)) !=
            RD_KAFKA_CONF_OK)
                ksb_die("%s=%s: %s", name, value, errstr);
}

static void quiet_log(const rd_kafka_t *rk, int level, const char *fac,
                      const char *buf)
{
        (void)rk, (void)level, (void)fac, (void)buf;
}

/** @brief One producer's life with @p topics topics; keyshift when
 *         @p report is not NULL. */
static void one_life(long topics, const life_opts_t *o, const char *report,
                     life_result_t *r)
{
        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        rd_kafka_t      *rk;
        char             errstr[512], buf[64], name[64], key[32];
        long             i;
        int              m;
        uint64_t         t0, c0;
        double           k0;
        struct stat      st;

        if (report) {
                set(conf, "plugin.library.paths", ksb_plugin_path());
                snprintf(buf, sizeof(buf), "%d", o->interval_ms);
                set(conf, "keyshift.report.interval.ms", buf);
                set(conf, "keyshift.report.path", report);
                snprintf(buf, sizeof(buf), "%ld", topics);
                set(conf, "keyshift.topics.max", buf);
                unlink(report);
        }
        if (o->queue_only) {
                /* nothing listens: no metadata, messages only queued;
                 * keyshift is told the count, so every topic is analysed */
                set(conf, "bootstrap.servers", "127.0.0.1:1");
                set(conf, "queue.buffering.max.messages", "10000000");
                if (report)
                        set(conf, "keyshift.partitions.current", "6");
        } else {
                set(conf, "test.mock.num.brokers", "1");
        }
        set(conf, "client.id", report ? "ksb-life-with" : "ksb-life-without");
        rd_kafka_conf_set_log_cb(conf, quiet_log);
        if (!(rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr,
                                sizeof(errstr))))
                ksb_die("rd_kafka_new: %s", errstr);
        t0 = ksb_now_ns();
        for (i = 0; i < topics; i++) {
                snprintf(name, sizeof(name), "tenant-%05ld", i);
                for (m = 0; m < 3; m++) {
                        snprintf(key, sizeof(key), "%ld",
                                 200000000 + i * 3 + m);
                        while (rd_kafka_producev(
                                   rk, RD_KAFKA_V_TOPIC(name),
                                   RD_KAFKA_V_KEY(key, strlen(key)),
                                   RD_KAFKA_V_VALUE("position", 8),
                                   RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                                   RD_KAFKA_V_END) ==
                               RD_KAFKA_RESP_ERR__QUEUE_FULL)
                                rd_kafka_poll(rk, 10);
                }
                rd_kafka_poll(rk, 0);
        }
        if (o->queue_only) {
                rd_kafka_purge(rk, RD_KAFKA_PURGE_F_QUEUE |
                                       RD_KAFKA_PURGE_F_INFLIGHT);
                rd_kafka_flush(rk, 60000); /* the purged messages' reports */
        } else if (rd_kafka_flush(rk, 900000)) {
                ksb_die("flush timed out with %ld topics", topics);
        }
        r->produce_s = (double)(ksb_now_ns() - t0) / 1e9;

        /* settle: the reports of the first intervals after the traffic
         * stops are built (they show its last messages and deliveries);
         * the idle figure is the steady state after them */
        usleep((useconds_t)(2 * o->interval_ms + 1000) * 1000);
        t0 = ksb_now_ns();
        c0 = ksb_process_cpu_ns();
        k0 = (double)ksb_threads_cpu_ns("ks:") / 1e9;
        sleep((unsigned)o->idle_s);
        r->idle_cpu_s    = (double)(ksb_process_cpu_ns() - c0) / 1e9;
        r->idle_ks_cpu_s = (double)ksb_threads_cpu_ns("ks:") / 1e9 - k0;
        r->idle_wall_s   = (double)(ksb_now_ns() - t0) / 1e9;
        r->report_seen   = report && !stat(report, &st);

        t0 = ksb_now_ns();
        rd_kafka_destroy(rk);
        r->destroy_s = (double)(ksb_now_ns() - t0) / 1e9;
}

static void parse(int argc, char **argv, life_opts_t *o)
{
        int i;

        o->counts[0]   = 100;
        o->counts[1]   = 1000;
        o->counts[2]   = 10000;
        o->count_cnt   = 3;
        o->idle_s      = 10;
        o->interval_ms = 2000;
        o->rounds      = 1;
        for (i = 1; i + 1 < argc; i += 2) {
                if (!strcmp(argv[i], "--topics")) {
                        char *s      = argv[i + 1], *e;
                        o->count_cnt = 0;
                        while (*s && o->count_cnt < KSB_LIFE_MAX_COUNTS) {
                                o->counts[o->count_cnt++] = strtol(s, &e, 10);
                                s                         = *e ? e + 1 : e;
                        }
                } else if (!strcmp(argv[i], "--idle-s")) {
                        o->idle_s = atoi(argv[i + 1]);
                } else if (!strcmp(argv[i], "--interval-ms")) {
                        o->interval_ms = atoi(argv[i + 1]);
                } else if (!strcmp(argv[i], "--queue-only")) {
                        o->queue_only = atoi(argv[i + 1]);
                } else if (!strcmp(argv[i], "--rounds")) {
                        o->rounds = atoi(argv[i + 1]);
                } else {
                        ksb_die("unknown option %s", argv[i]);
                }
        }
        if (o->rounds < 1 || o->rounds > KSB_LIFE_ROUNDS_MAX || o->idle_s < 1)
                ksb_die("--rounds 1..%d, --idle-s >= 1", KSB_LIFE_ROUNDS_MAX);
}

int main(int argc, char **argv)
{
        life_opts_t o;
        char        report[256], id[64], what[160];
        int         c, k;

        parse(argc, argv, &o);
        snprintf(report, sizeof(report), "/tmp/ksb-life-%ld.json",
                 (long)getpid());
        for (c = 0; c < o.count_cnt; c++) {
                long   n = o.counts[c];
                double destroy[KSB_LIFE_ROUNDS_MAX], idle[KSB_LIFE_ROUNDS_MAX];
                for (k = 0; k < o.rounds; k++) {
                        life_result_t a, b;
                        one_life(n, &o, NULL, &a);
                        one_life(n, &o, report, &b);
                        if (!b.report_seen)
                                ksb_die("%ld topics: no periodic report after "
                                        "%d s idle",
                                        n, o.idle_s);
                        destroy[k] = b.destroy_s - a.destroy_s;
                        idle[k] = (b.idle_cpu_s - a.idle_cpu_s) / b.idle_wall_s;
                        ksb_note("%ld topics round %d: produce %.2f / %.2f s, "
                                 "idle CPU %.3f / %.3f s over %.1f s (of it "
                                 "keyshift's threads %.3f s), destroy %.3f / "
                                 "%.3f s (without / with keyshift)",
                                 n, k, a.produce_s, b.produce_s, a.idle_cpu_s,
                                 b.idle_cpu_s, b.idle_wall_s, b.idle_ks_cpu_s,
                                 a.destroy_s, b.destroy_s);
                }
                snprintf(id, sizeof(id), "life.destroy.%ld%s", n,
                         o.queue_only ? ".queue" : "");
                snprintf(what, sizeof(what),
                         "rd_kafka_destroy(), %ld topics%s: with - without "
                         "keyshift",
                         n, o.queue_only ? " (queue-only)" : "");
                ksb_result(id, what,
                           n >= 10000  ? "<="
                           : n >= 1000 ? "<="
                                       : "-",
                           n >= 10000 ? 3.0 : 1.0, "s", destroy,
                           (size_t)o.rounds);
                snprintf(id, sizeof(id), "life.idle_cpu.%ld%s", n,
                         o.queue_only ? ".queue" : "");
                snprintf(what, sizeof(what),
                         "idle producer, %ld topics%s, %d ms reports: "
                         "keyshift's CPU (with - without)",
                         n, o.queue_only ? " (queue-only)" : "", o.interval_ms);
                ksb_result(id, what, n == 1000 ? "<=" : "-", 0.05, "core", idle,
                           (size_t)o.rounds);
        }
        unlink(report);
        return 0;
}
