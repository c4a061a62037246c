/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ksb_publish.c
 * @brief Issue 32's goal "publishing adds no measurable drag": keyshift's
 *        CPU per message with keyshift.report.topic on is within 2 ns of
 *        it off, at a 1 s report interval (Zipf keys, 1 thread).
 *
 * On one mock cluster of librdkafka (made here, reached through its
 * bootstrap address, so that keyshift's report producer reaches it too:
 * it inherits the host's bootstrap.servers), each round runs one block
 * with the report topic off (A) and one with it on (B), in the order AB,
 * then BA, ... so that drift hits both alike. Both load keyshift with
 * keyshift.report.interval.ms=1000. A block creates its producer, warms it
 * up (10,000 messages, flushed, then 1.5 s: metadata, keyshift's count, the
 * first report and, in B, the report producer made), then times M
 * produce() calls from one thread plus flush() until all are delivered.
 * Per block, ns per message:
 *  - process CPU (every thread: the application's, librdkafka's, the mock
 *    cluster's, keyshift's and, in B, the report producer's own librdkafka
 *    threads): B - A is what the report topic costs in all, the goal's
 *    figure;
 *  - keyshift's threads (ks:*: drainer, reporter, publisher): B - A is the
 *    records' building and hand-over, plus the drainer's variation from
 *    block to block (tens of ns a message, which buries the rest);
 *  - of those, the reporter's B - A plus the publisher's B: what the
 *    report topic adds to keyshift's own threads, without the drainer.
 * Each B block also says how many records its report producer delivered
 * (its final report's REPORT_TOPIC_FAILED would say when none could go).
 *
 * Usage: ksb_publish [--msgs M] [--rounds R]   (default 2,000,000 x 8)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include "ksb_keys.h"
#include "ksb_producer.h"
#include "ksb_stats.h"

#define KSB_TOPIC "ais"
#define KSB_REPORT_TOPIC "keyshift-reports"
#define KSB_ROUNDS_MAX 64

static char ksb_boot[512];

static void set(rd_kafka_conf_t *conf, const char *name, const char *value)
{
        char err[512];

        if (rd_kafka_conf_set(conf, name, value, err, sizeof(err)) !=
            RD_KAFKA_CONF_OK)
                ksb_die("%s=%s: %s", name, value, err);
}

static void quiet_log(const rd_kafka_t *rk, int level, const char *fac,
                      const char *buf)
{
        (void)rk;
        if (level <= 3)
                fprintf(stderr, "# librdkafka %s: %s\n", fac, buf);
}

/** @returns a producer with keyshift, the report topic on if @p on. */
static rd_kafka_t *producer(int on, const char *report)
{
        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        rd_kafka_t      *rk;
        char             err[512];

        set(conf, "plugin.library.paths", ksb_plugin_path());
        set(conf, "keyshift.partitions.proposed", "12,16,24");
        set(conf, "keyshift.report.interval.ms", "1000");
        set(conf, "keyshift.report.path", report);
        if (on)
                set(conf, "keyshift.report.topic", KSB_REPORT_TOPIC);
        set(conf, "client.id", on ? "ksb-topic-on" : "ksb-topic-off");
        set(conf, "bootstrap.servers", ksb_boot);
        set(conf, "queue.buffering.max.messages", "10000000");
        set(conf, "queue.buffering.max.kbytes", "2147483647");
        set(conf, "message.timeout.ms", "0");
        rd_kafka_conf_set_log_cb(conf, quiet_log);
        if (!(rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err))))
                ksb_die("rd_kafka_new: %s", err);
        return rk;
}

typedef struct block {
        double proc_per_msg; /**< process CPU ns per message */
        double ks_per_msg;   /**< keyshift's threads' (ks:*) */
        double pub_per_msg;  /**< of which its publisher thread's */
        double rep_per_msg;  /**< of which its reporter thread's */
        double rate;         /**< messages per second */
} block_t;

static block_t run_block(int on, const ksb_stream_t *st, size_t off,
                         size_t msgs, const char *report)
{
        rd_kafka_t       *rk  = producer(on, report);
        rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, KSB_TOPIC, NULL);
        uint64_t          t0, t1, c0, c1, k0, k1, p0, p1, r0, r1;
        block_t           b;
        size_t            i;

        if (off + msgs > st->n)
                off = 0;
        for (i = 0; i < 10000; i++)
                ksb_produce_one(rk, rkt, &st->msgs[i]);
        rd_kafka_flush(rk, 30000);
        usleep(1500000);
        c0 = ksb_process_cpu_ns();
        k0 = ksb_threads_cpu_ns("ks:");
        p0 = ksb_threads_cpu_ns("ks:publish");
        r0 = ksb_threads_cpu_ns("ks:reporter");
        t0 = ksb_now_ns();
        for (i = 0; i < msgs; i++)
                ksb_produce_one(rk, rkt, &st->msgs[off + i]);
        if (rd_kafka_flush(rk, 120000))
                ksb_die("flush timed out");
        t1 = ksb_now_ns();
        c1 = ksb_process_cpu_ns();
        k1 = ksb_threads_cpu_ns("ks:");
        p1 = ksb_threads_cpu_ns("ks:publish");
        r1 = ksb_threads_cpu_ns("ks:reporter");
        rd_kafka_topic_destroy(rkt);
        rd_kafka_destroy(rk);
        b.proc_per_msg = (double)(c1 - c0) / (double)msgs;
        b.ks_per_msg   = (double)(k1 - k0) / (double)msgs;
        b.pub_per_msg  = (double)(p1 - p0) / (double)msgs;
        b.rep_per_msg  = (double)(r1 - r0) / (double)msgs;
        b.rate         = (double)msgs / ((double)(t1 - t0) / 1e9);
        return b;
}

/** @brief The REPORT_TOPIC_FAILED warning of the final report at @p path
 *         into @p out ("" when none); the report is removed. */
static void report_warning(const char *path, char *out, size_t size)
{
        json_t *r = json_load_file(path, 0, NULL), *w;
        size_t  i;

        *out = '\0';
        json_array_foreach(json_object_get(r, "warnings"), i, w)
        {
                const char *code =
                    json_string_value(json_object_get(w, "code"));
                const char *msg =
                    json_string_value(json_object_get(w, "message"));
                if (code && msg && !strcmp(code, "REPORT_TOPIC_FAILED"))
                        snprintf(out, size, "%s", msg);
        }
        json_decref(r);
        unlink(path);
}

/** @returns the records on the report topic (its high watermark: one
 *           partition), -1 when it cannot be read. */
static long long records_on_topic(void)
{
        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        rd_kafka_t      *rk;
        int64_t          lo = 0, hi = 0;
        char             err[512];

        set(conf, "bootstrap.servers", ksb_boot);
        rd_kafka_conf_set_log_cb(conf, quiet_log);
        if (!(rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof(err))))
                ksb_die("rd_kafka_new: %s", err);
        if (rd_kafka_query_watermark_offsets(rk, KSB_REPORT_TOPIC, 0, &lo, &hi,
                                             10000))
                hi = -1;
        rd_kafka_destroy(rk);
        return (long long)hi;
}

int main(int argc, char **argv)
{
        size_t                   msgs = 2000000, off = 0;
        int                      rounds = 8, r, v, i;
        double                   proc[KSB_ROUNDS_MAX], ks[KSB_ROUNDS_MAX];
        double                   own[KSB_ROUNDS_MAX];
        char                     report[256], warned[1024];
        ksb_stream_t             st;
        rd_kafka_conf_t         *conf;
        rd_kafka_t              *owner;
        rd_kafka_mock_cluster_t *mc;
        char                     err[512];
        long long                recs = 0, now;

        for (i = 1; i < argc; i++) {
                if (!strcmp(argv[i], "--msgs") && i + 1 < argc)
                        msgs = strtoull(argv[++i], NULL, 10);
                else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
                        rounds = atoi(argv[++i]);
                else
                        ksb_die("usage: ksb_publish [--msgs M] [--rounds R]");
        }
        if (rounds < 1 || rounds > KSB_ROUNDS_MAX)
                ksb_die("rounds: 1..%d", KSB_ROUNDS_MAX);
        ksb_note("plugin %s", ksb_plugin_path());
        /* the cluster outlives every block: its owner makes nothing else */
        conf = rd_kafka_conf_new();
        rd_kafka_conf_set_log_cb(conf, quiet_log);
        if (!(owner = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err))))
                ksb_die("rd_kafka_new: %s", err);
        if (!(mc = rd_kafka_mock_cluster_new(owner, 1)))
                ksb_die("cannot make a mock cluster");
        snprintf(ksb_boot, sizeof(ksb_boot), "%s",
                 rd_kafka_mock_cluster_bootstraps(mc));
        if (rd_kafka_mock_topic_create(mc, KSB_TOPIC, 6, 1) ||
            rd_kafka_mock_topic_create(mc, KSB_REPORT_TOPIC, 1, 1))
                ksb_die("cannot create the mock topics");
        ksb_stream_zipf(&st, 4000000, 100000, 1.0, 0.01, 7);
        snprintf(report, sizeof(report), "/tmp/ksb-publish-%ld.json",
                 (long)getpid());
        for (r = 0; r < rounds; r++) {
                block_t b[2];
                for (v = 0; v < 2; v++) {
                        int on = r % 2 ? 1 - v : v;
                        b[on]  = run_block(on, &st, off, msgs, report);
                        report_warning(report, warned, sizeof(warned));
                        if (on && *warned)
                                ksb_note("round %d: REPORT_TOPIC_FAILED: %s", r,
                                         warned);
                }
                off += msgs;
                now     = records_on_topic();
                proc[r] = b[1].proc_per_msg - b[0].proc_per_msg;
                ks[r]   = b[1].ks_per_msg - b[0].ks_per_msg;
                own[r] = b[1].rep_per_msg - b[0].rep_per_msg + b[1].pub_per_msg;
                ksb_note("round %d: process CPU/msg off %.1f, on %.1f ns; "
                         "keyshift threads off %.2f, on %.2f ns (reporter "
                         "%.2f / %.2f, publisher %.2f); %.0f / %.0f "
                         "msg/s; %lld records on the report topic so far",
                         r, b[0].proc_per_msg, b[1].proc_per_msg,
                         b[0].ks_per_msg, b[1].ks_per_msg, b[0].rep_per_msg,
                         b[1].rep_per_msg, b[1].pub_per_msg, b[0].rate,
                         b[1].rate, now);
                if (now <= recs)
                        ksb_die("round %d published no record", r);
                recs = now;
        }
        ksb_result("5.publish.mock.cpu",
                   "process CPU per message, report topic on - off (1 s "
                   "interval, Zipf, 1 thread, mock cluster)",
                   "<=", 2, "ns", proc, (size_t)rounds);
        ksb_result("5.publish.mock.ks_threads",
                   "keyshift threads' CPU per message, report topic on - off",
                   "<=", 2, "ns", ks, (size_t)rounds);
        ksb_result("5.publish.mock.reporter_publisher",
                   "what publishing adds to keyshift's reporter thread (on - "
                   "off) plus its publisher thread, CPU per message; not the "
                   "record producer's own librdkafka threads",
                   "<=", 2, "ns", own, (size_t)rounds);
        ksb_stream_free(&st);
        rd_kafka_mock_cluster_destroy(mc);
        rd_kafka_destroy(owner);
        return 0;
}
