/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ksb_idle.c
 * @brief keyshift never takes CPU the host's threads want (issue 33,
 *        decision 3): a host thread spinning on every CPU keeps its CPU
 *        while keyshift's drainer has a backlog to analyse.
 *
 *   ksb_idle [--pairs 15] [--window-ms 1000] [--msgs 5000000]
 *            [--threads 32] [--memory-mb 2048]
 *
 * Each pair runs two blocks, A (a producer without keyshift) and B (with
 * it: plugin by full path, $KS_PLUGIN or the build's), in alternating
 * order (AB, BA, ...). A block:
 *  1. makes a queue-only producer (`bootstrap.servers=127.0.0.1:1`:
 *     produce() only enqueues, librdkafka's threads stay idle; B is told
 *     the count, `keyshift.partitions.current=6`, and gets
 *     `keyshift.overload=skip`, `keyshift.memory.max.mb=--memory-mb`: its
 *     staging overflow, an eighth of that, holds 4 M messages at 2048);
 *  2. one spinning host thread per CPU the process may use
 *     (sched_getaffinity()) starts, and the burst: --threads host threads
 *     produce --msgs messages in all, each to a topic of its own and each
 *     message with a key of its own (9-digit decimal: the drainer's
 *     costliest stream, every key new), as fast as they can. Host threads outnumber the CPUs, so keyshift's drainer
 *     (at either priority) falls behind and a backlog is staged (up to the
 *     overflow; beyond it, messages are skipped and counted,
 *     `keys.unanalysed`);
 *  3. the window, 50 ms after the burst's end: each spinner reads its own
 *     CPU clock (CLOCK_THREAD_CPUTIME_ID) when the window opens and
 *     closes, --window-ms apart (wall, CLOCK_MONOTONIC). The host's share
 *     = the spinners' CPU / (CPUs x window). Meanwhile B's drainer
 *     analyses its backlog with whatever CPU the kernel gives it;
 *  4. after the window: B's drainer left to finish (until its CPU stops
 *     growing), the queue purged, the producer destroyed (B writes its
 *     final report: messages analysed and unanalysed).
 *
 * Figures: `idle.ratio` (target >= 0.95, the "not slowed by more
 * than 5 %") = the host's share with keyshift / without, per pair; on a
 * machine other work shares, that ratio spreads more than 5 % by itself,
 * so `idle.ks_share` (<= 0.05) states the same claim from the other side:
 * keyshift's threads' CPU inside the window / (CPUs x window), the most
 * their presence can take from the spinners (cache effects aside);
 * `idle.drainer_window` the drainer's CPU inside the window, and
 * `idle.backlog_done` the share of the backlog it analysed there (its CPU
 * in the window / its CPU from the window's start until it went quiet):
 * how much the drainer got done while the host wanted every CPU;
 * `idle.unanalysed`, the share of B's burst skipped at a spent overflow.
 * The priority keyshift's threads got is the report's
 * `producer.threads_priority`, printed as a note.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <librdkafka/rdkafka.h>
#include <pthread.h>

#include "ksb_producer.h"
#include "ksb_stats.h"

#define KSB_IDLE_PAIRS_MAX 64
#define KSB_IDLE_SPINNERS_MAX 256
#define KSB_IDLE_TOPIC "ksb-idle-%d" /* one a burst thread */

typedef struct idle_opts {
        int  pairs;
        int  window_ms;
        long msgs;
        int  threads;
        int  memory_mb;
} idle_opts_t;

/** One block's figures. */
typedef struct idle_block {
        double host_share;     /**< spinners' CPU / (CPUs x window) */
        double burst_s;        /**< the burst's wall time */
        double drainer_window; /**< B: the drainer's CPU in the window, s */
        double drainer_after;  /**< B: its CPU after the window, s */
        double ks_share;       /**< B: keyshift's threads' CPU in the window
                                *   / (CPUs x window) */
        double analysed;       /**< B: the final report's analysed */
        double unanalysed;     /**< B: ... and unanalysed messages */
        char   priority[32];   /**< B: producer.threads_priority */
} idle_block_t;

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

static void sleep_ms(long ms)
{
        struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
}

static rd_kafka_t *producer_new(const idle_opts_t *o, const char *report)
{
        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        rd_kafka_t      *rk;
        char             errstr[512], buf[32];

        if (report) { /* plugin.library.paths before any keyshift.* */
                set(conf, "plugin.library.paths", ksb_plugin_path());
                set(conf, "keyshift.partitions.current", "6");
                set(conf, "keyshift.partitions.proposed", "12,16,24");
                set(conf, "keyshift.partitioner", "consistent_random");
                set(conf, "keyshift.overload", "skip");
                snprintf(buf, sizeof(buf), "%d", o->memory_mb);
                set(conf, "keyshift.memory.max.mb", buf);
                set(conf, "keyshift.report.interval.ms", "0");
                set(conf, "keyshift.report.path", report);
                unlink(report);
        }
        set(conf, "client.id", report ? "ksb-idle-with" : "ksb-idle-without");
        set(conf, "bootstrap.servers", "127.0.0.1:1");
        set(conf, "reconnect.backoff.ms", "1000");
        set(conf, "reconnect.backoff.max.ms", "10000");
        set(conf, "queue.buffering.max.messages", "10000000");
        set(conf, "queue.buffering.max.kbytes", "2147483647");
        set(conf, "message.timeout.ms", "0");
        rd_kafka_conf_set_log_cb(conf, quiet_log);
        if (!(rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr,
                                sizeof(errstr))))
                ksb_die("rd_kafka_new: %s", errstr);
        return rk;
}

typedef struct burst_arg {
        rd_kafka_topic_t *rkt;
        long              first, n;
} burst_arg_t;

/** @brief A host thread of the burst: keys first .. first + n - 1. */
static void *burst_main(void *opaque)
{
        burst_arg_t *a = opaque;
        char         key[16];
        long         i;

        for (i = a->first; i < a->first + a->n; i++) {
                /* distinct 9-digit keys, MMSI-like */
                int len = snprintf(key, sizeof(key), "%09ld",
                                   100000000 + i % 900000000);
                while (rd_kafka_produce(a->rkt, RD_KAFKA_PARTITION_UA,
                                        RD_KAFKA_MSG_F_COPY, "0123456789abcdef",
                                        16, key, (size_t)len, NULL) == -1)
                        sleep_ms(1);
        }
        return NULL;
}

/** The window's spinners: each reads its own CPU clock at each phase. */
typedef struct spin_ctx {
        atomic_int phase; /**< 0 starting, 1 window open, 2 closed */
        atomic_int ready; /**< spinners running */
} spin_ctx_t;

typedef struct spin_arg {
        spin_ctx_t *ctx;
        uint64_t    cpu_open, cpu_close;
} spin_arg_t;

static void *spin_main(void *opaque)
{
        spin_arg_t       *a    = opaque;
        volatile uint64_t sink = 0;
        int               seen = 0;

        atomic_fetch_add(&a->ctx->ready, 1);
        while (seen < 2) {
                int p, i;

                for (i = 0; i < 4096; i++) /* ~ a few us of work */
                        sink = sink * 6364136223846793005ull + 1;
                p = atomic_load_explicit(&a->ctx->phase, memory_order_relaxed);
                if (p != seen) {
                        if (p == 1)
                                a->cpu_open = ksb_thread_cpu_ns();
                        else
                                a->cpu_close = ksb_thread_cpu_ns();
                        seen = p;
                }
        }
        return NULL;
}

/** @returns the number of CPUs this process may run on. */
static int cpus_allowed(void)
{
        cpu_set_t set;

        if (sched_getaffinity(0, sizeof(set), &set))
                return (int)sysconf(_SC_NPROCESSORS_ONLN);
        return CPU_COUNT(&set);
}

/** @brief Reads B's final report into @p b. */
static void read_report(const char *path, idle_block_t *b)
{
        json_error_t je;
        json_t      *r = json_load_file(path, 0, &je), *t, *a;
        const char  *prio;

        if (!r)
                ksb_die("%s: %s", path, je.text);
        prio = json_string_value(json_object_get(
            json_object_get(json_object_get(r, "producer"), "threads_priority"),
            "drainer"));
        snprintf(b->priority, sizeof(b->priority), "%s",
                 prio ? prio : "(not said)");
        {
                const char *name;
                json_object_foreach(json_object_get(r, "topics"), name, t)
                {
                        a = json_object_get(t, "analysis");
                        b->analysed += (double)json_integer_value(
                            json_object_get(a, "messages_analysed"));
                        b->unanalysed +=
                            (double)json_integer_value(json_object_get(
                                json_object_get(t, "keys"), "unanalysed"));
                }
        }
        json_decref(r);
}

/** @brief One block: burst, window, aftermath; keyshift when @p report. */
static void one_block(const idle_opts_t *o, const char *report, int ncpu,
                      long round, idle_block_t *b)
{
        rd_kafka_t       *rk = producer_new(o, report);
        rd_kafka_topic_t *rkt[64];
        char              topic[32];
        pthread_t         th[64], sp[KSB_IDLE_SPINNERS_MAX];
        burst_arg_t       ba[64];
        spin_arg_t        sa[KSB_IDLE_SPINNERS_MAX];
        spin_ctx_t        ctx;
        uint64_t t0, t1, d0 = 0, d1 = 0, d2 = 0, cpu = 0, k0 = 0, k1 = 0;
        int      i;

        memset(b, 0, sizeof(*b));
        /* a topic a burst thread: no queue lock shared between them, so
         * none of them sleeps and leaves a CPU to the drainer */
        for (i = 0; i < o->threads; i++) {
                snprintf(topic, sizeof(topic), KSB_IDLE_TOPIC, i);
                rkt[i] = rd_kafka_topic_new(rk, topic, NULL);
        }
        /* the spinners first: they compete with the burst (outside the
         * window) as with the drainer, so a backlog is left at the
         * window's start whatever the drainer's priority */
        atomic_init(&ctx.phase, 0);
        atomic_init(&ctx.ready, 0);
        for (i = 0; i < ncpu; i++) {
                sa[i].ctx = &ctx;
                if (pthread_create(&sp[i], NULL, spin_main, &sa[i]))
                        ksb_die("pthread_create");
        }
        /* 2. the burst */
        t0 = ksb_now_ns();
        for (i = 0; i < o->threads; i++) {
                ba[i].rkt   = rkt[i];
                ba[i].n     = o->msgs / o->threads;
                ba[i].first = round * o->msgs + i * ba[i].n;
                if (pthread_create(&th[i], NULL, burst_main, &ba[i]))
                        ksb_die("pthread_create");
        }
        for (i = 0; i < o->threads; i++)
                pthread_join(th[i], NULL);
        b->burst_s = (double)(ksb_now_ns() - t0) / 1e9;

        /* 3. the window */
        while (atomic_load(&ctx.ready) < ncpu)
                sleep_ms(1);
        sleep_ms(50);
        if (report) {
                d0 = ksb_threads_cpu_ns("ks:drainer");
                k0 = ksb_threads_cpu_ns("ks:");
        }
        t0 = ksb_now_ns();
        atomic_store(&ctx.phase, 1);
        sleep_ms(o->window_ms);
        atomic_store(&ctx.phase, 2);
        t1 = ksb_now_ns();
        if (report) {
                d1 = ksb_threads_cpu_ns("ks:drainer");
                k1 = ksb_threads_cpu_ns("ks:");
        }
        for (i = 0; i < ncpu; i++) {
                pthread_join(sp[i], NULL);
                cpu += sa[i].cpu_close - sa[i].cpu_open;
        }
        b->host_share = (double)cpu / ((double)ncpu * (double)(t1 - t0));
        b->ks_share   = (double)(k1 - k0) / ((double)ncpu * (double)(t1 - t0));

        /* 4. the drainer left to finish, the queue purged */
        if (report) {
                d2 =
                    ksb_threads_quiet_cpu_ns("ks:drainer", 2000000, 100, 60000);
                b->drainer_window = (double)(d1 - d0) / 1e9;
                b->drainer_after  = (double)(d2 - d1) / 1e9;
        }
        rd_kafka_purge(rk, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
        while (rd_kafka_outq_len(rk) > 0)
                rd_kafka_poll(rk, 10);
        for (i = 0; i < o->threads; i++)
                rd_kafka_topic_destroy(rkt[i]);
        rd_kafka_destroy(rk);
        if (report)
                read_report(report, b);
}

static void usage(void)
{
        fprintf(stderr, "usage: ksb_idle [--pairs N] [--window-ms MS] "
                        "[--msgs N] [--threads N] [--memory-mb MB]\n");
        exit(2);
}

int main(int argc, char **argv)
{
        idle_opts_t  o = {15, 1000, 5000000, 32, 2048};
        idle_block_t a, b;
        double       ratio[KSB_IDLE_PAIRS_MAX], with[KSB_IDLE_PAIRS_MAX],
            without[KSB_IDLE_PAIRS_MAX], dwin[KSB_IDLE_PAIRS_MAX],
            done[KSB_IDLE_PAIRS_MAX], skipped[KSB_IDLE_PAIRS_MAX],
            ks[KSB_IDLE_PAIRS_MAX];
        char report[256];
        int  i, ncpu = cpus_allowed();

        for (i = 1; i < argc; i++) {
                if (i + 1 >= argc)
                        usage();
                if (!strcmp(argv[i], "--pairs"))
                        o.pairs = atoi(argv[++i]);
                else if (!strcmp(argv[i], "--window-ms"))
                        o.window_ms = atoi(argv[++i]);
                else if (!strcmp(argv[i], "--msgs"))
                        o.msgs = atol(argv[++i]);
                else if (!strcmp(argv[i], "--threads"))
                        o.threads = atoi(argv[++i]);
                else if (!strcmp(argv[i], "--memory-mb"))
                        o.memory_mb = atoi(argv[++i]);
                else
                        usage();
        }
        if (o.pairs < 1 || o.pairs > KSB_IDLE_PAIRS_MAX || o.threads < 1 ||
            o.threads > 64 || o.window_ms < 100 || o.msgs < o.threads ||
            ncpu < 1 || ncpu > KSB_IDLE_SPINNERS_MAX)
                usage();
        snprintf(report, sizeof(report), "/tmp/ksb-idle-%ld.json",
                 (long)getpid());
        ksb_note("%d spinning host threads (the CPUs allowed), window %d ms; "
                 "burst of %ld distinct keys from %d threads, queue only; "
                 "plugin %s",
                 ncpu, o.window_ms, o.msgs, o.threads, ksb_plugin_path());
        for (i = 0; i < o.pairs; i++) {
                if (i % 2 == 0) {
                        one_block(&o, NULL, ncpu, 2 * i, &a);
                        one_block(&o, report, ncpu, 2 * i + 1, &b);
                } else {
                        one_block(&o, report, ncpu, 2 * i + 1, &b);
                        one_block(&o, NULL, ncpu, 2 * i, &a);
                }
                without[i] = a.host_share;
                with[i]    = b.host_share;
                ratio[i]   = b.host_share / a.host_share;
                dwin[i]    = b.drainer_window * 1e3;
                done[i]    = b.drainer_window /
                          (b.drainer_window + b.drainer_after + 1e-12) * 100;
                skipped[i] = b.unanalysed / (double)o.msgs * 100;
                ks[i]      = b.ks_share;
                ksb_note("pair %d %s: host share without %.4f with %.4f "
                         "(ratio %.4f); bursts %.2f / %.2f s; drainer %.0f ms "
                         "in the window, %.0f ms after; analysed %.0f, "
                         "unanalysed %.0f; threads_priority %s",
                         i, i % 2 ? "BA" : "AB", a.host_share, b.host_share,
                         ratio[i], a.burst_s, b.burst_s, b.drainer_window * 1e3,
                         b.drainer_after * 1e3, b.analysed, b.unanalysed,
                         b.priority);
        }
        unlink(report);
        ksb_result("idle.ratio",
                   "host threads' CPU with / without keyshift analysing a "
                   "backlog, one spinner per CPU",
                   ">=", 0.95, "x", ratio, (size_t)o.pairs);
        ksb_result("idle.ks_share",
                   "keyshift's threads' CPU inside the window / (CPUs x "
                   "window): what they took while the host wanted every CPU",
                   "<=", 0.05, "x", ks, (size_t)o.pairs);
        ksb_result("idle.host_share_without",
                   "spinners' CPU / (CPUs x window), no keyshift", "-", 0, "x",
                   without, (size_t)o.pairs);
        ksb_result("idle.host_share_with",
                   "spinners' CPU / (CPUs x window), keyshift's drainer "
                   "behind",
                   "-", 0, "x", with, (size_t)o.pairs);
        ksb_result("idle.drainer_window",
                   "keyshift drainer's CPU inside the window", "-", 0, "ms",
                   dwin, (size_t)o.pairs);
        ksb_result("idle.backlog_done",
                   "share of the drainer's backlog work done inside the "
                   "window (its CPU there / until quiet)",
                   "-", 0, "%", done, (size_t)o.pairs);
        ksb_result("idle.unanalysed",
                   "burst messages skipped at a spent overflow "
                   "(keys.unanalysed / burst)",
                   "-", 0, "%", skipped, (size_t)o.pairs);
        return 0;
}
