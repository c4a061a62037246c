/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ksb_produce.c
 * @brief Targets 1-4 through a real producer: produce() throughput with
 *        keyshift divided by without, measured A/B alternately in one run.
 *
 *  --queue: no broker reachable, messages only enqueued (the application
 *           thread's own cost). Producers A (without) and B (with keyshift)
 *           live side by side; each round runs one block on each, in the
 *           order AB, then BA, ... so drift (turbo, other tenants, the
 *           queue's memory) hits both alike. A block is T threads producing
 *           M messages in all (64-byte values, Zipf MMSI keys) to one topic
 *           with rd_kafka_produce() on a topic handle, timed from a barrier
 *           to the last join; the queue is purged between blocks (untimed).
 *           Ratio per round = B's messages/s / A's. Target 2 (T = 1,
 *           >= 0.90) and 3 (T = 2, 8, >= 0.90). Process CPU per message
 *           B - A is keyshift's whole CPU cost (target 4).
 *           Then single-thread latency rounds time each produce() call with
 *           the TSC: B's median - A's median estimates on_send (target 1).
 *  --mock:  librdkafka's mock cluster; each block creates a producer (A or
 *           B alternately), warms it up (metadata, keyshift's count), then
 *           times M produce() calls plus flush() until all are delivered
 *           and acknowledged (keyshift's on_acknowledgement runs on the
 *           broker thread). Target 2 (>= 0.95).
 *  --broker HOST:PORT: the same on a real cluster (a topic of 6
 *           partitions created for the run).
 *  --mock and --broker also read keyshift's final report of the run:
 *           every message counted (analysis.messages_produced equal to
 *           what was produced), and how much was analysed or sampled, with
 *           the stated error.
 *
 * Usage: ksb_produce --queue [--threads 1,2,8] [--msgs M] [--rounds R]
 *        [--keyshift-partitioner NAME] (B's keyshift.partitioner: no
 *        learning from deliveries)
 *        ksb_produce --mock [--msgs M] [--rounds R]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "ksb_keys.h"
#include "ksb_producer.h"
#include "ksb_stats.h"

#define KSB_TOPIC "ais"
#define KSB_ROUNDS_MAX 64

typedef struct worker {
        rd_kafka_t        *rk;
        rd_kafka_topic_t  *rkt;
        const ksb_key_t   *msgs;
        size_t             n;
        pthread_barrier_t *go;
        uint64_t           cpu_ns;  /**< out: this thread's CPU producing */
        uint64_t           bracket; /**< out: its TSC ticks in the bracket */
        uint64_t           spin; /**< out: its ticks spinning (--calibrate) */
} worker_t;

static void *worker_main(void *arg)
{
        worker_t *w = arg;
        uint64_t  c0;
        size_t    i;

        pthread_barrier_wait(w->go);
        ksb_bracket_take();
        ksb_spin_take();
        c0 = ksb_thread_cpu_ns();
        for (i = 0; i < w->n; i++)
                ksb_produce_one(w->rk, w->rkt, &w->msgs[i]);
        w->cpu_ns  = ksb_thread_cpu_ns() - c0;
        w->bracket = ksb_bracket_take();
        w->spin    = ksb_spin_take();
        return NULL;
}

/** keyshift's threads are idle when they use under this much CPU in
 *  KSB_QUIET_STEP_MS (1 % of a core). */
#define KSB_QUIET_NS 200000
#define KSB_QUIET_STEP_MS 20

typedef struct block {
        double rate; /**< messages per second */
        /** CPU ns per message: the producing threads' own CPU (their
         *  thread clocks) plus, with keyshift, its threads' (ks:*) from
         *  the block's start until they are idle again, so that the
         *  drainer's deferred work is the block's own */
        double cpu_per_msg;
        /** the former figure: process CPU ns per message over the
         *  producing threads' wall time (librdkafka's and the other
         *  producer's threads included, the drainer's tail excluded) */
        double proc_cpu_per_msg;
        /** ns per message inside the bracket (ksb_producer.h) plus, with
         *  keyshift, its threads' CPU as in cpu_per_msg: with keyshift
         *  minus without is keyshift's own CPU per message */
        double direct_per_msg;
        double spin_per_msg;       /**< ns per message spun (--calibrate) */
        double ks_threads_per_msg; /**< of direct_per_msg, keyshift's
                                    *   threads' CPU (ns per message) */
        /** --mock/--broker: librdkafka's broker threads' CPU (rdk:broker*)
         *  ns per message: the thread that calls on_acknowledgement and
         *  bounds delivery */
        double broker_per_msg;
} block_t;

/** @brief One timed block: @p threads threads, @p n messages in all,
 *         starting at message @p off of the stream. */
static block_t run_block(rd_kafka_t *rk, rd_kafka_topic_t *rkt,
                         const ksb_stream_t *st, size_t off, size_t n,
                         int threads, int keyshift)
{
        pthread_t         th[64];
        worker_t          w[64];
        pthread_barrier_t go;
        size_t            per = n / (size_t)threads;
        uint64_t          t0, t1, c0, c1, k0 = 0, k1 = 0, own = 0, br = 0;
        uint64_t          sp = 0;
        block_t           b;
        int               i;

        if (off + n > st->n)
                off = 0;
        pthread_barrier_init(&go, NULL, (unsigned)threads + 1);
        for (i = 0; i < threads; i++) {
                w[i] = (worker_t){rk,  rkt, st->msgs + off + per * (size_t)i,
                                  per, &go, 0,
                                  0,   0};
                pthread_create(&th[i], NULL, worker_main, &w[i]);
        }
        if (keyshift) /* idle before: nothing of an earlier block counts */
                k0 = ksb_threads_quiet_cpu_ns("ks:", KSB_QUIET_NS,
                                              KSB_QUIET_STEP_MS, 2000);
        c0 = ksb_process_cpu_ns();
        pthread_barrier_wait(&go);
        t0 = ksb_now_ns();
        for (i = 0; i < threads; i++)
                pthread_join(th[i], NULL);
        t1 = ksb_now_ns();
        c1 = ksb_process_cpu_ns();
        if (keyshift) /* the drainer's tail is this block's */
                k1 = ksb_threads_quiet_cpu_ns("ks:", KSB_QUIET_NS,
                                              KSB_QUIET_STEP_MS, 10000);
        pthread_barrier_destroy(&go);
        for (i = 0; i < threads; i++) {
                own += w[i].cpu_ns;
                br += w[i].bracket;
                sp += w[i].spin;
        }
        ksb_producer_drain(rk);
        if (keyshift) /* the purge's delivery reports: no block's */
                ksb_threads_quiet_cpu_ns("ks:", KSB_QUIET_NS, KSB_QUIET_STEP_MS,
                                         2000);
        n                  = per * (size_t)threads;
        b.rate             = (double)n / ((double)(t1 - t0) / 1e9);
        b.cpu_per_msg      = (double)(own + (k1 - k0)) / (double)n;
        b.proc_cpu_per_msg = (double)(c1 - c0) / (double)n;
        b.direct_per_msg =
            ((double)br / ksb_tsc_per_ns() + (double)(k1 - k0)) / (double)n;
        b.spin_per_msg       = (double)sp / ksb_tsc_per_ns() / (double)n;
        b.ks_threads_per_msg = (double)(k1 - k0) / (double)n;
        return b;
}

/** @brief Times each produce() call of @p n messages; @returns via @p med,
 *         @p p99 (ns). */
static void run_latency(rd_kafka_t *rk, rd_kafka_topic_t *rkt,
                        const ksb_stream_t *st, size_t off, size_t n,
                        uint32_t *lat, double *med, double *p99)
{
        uint64_t ovh = ksb_tsc_overhead();
        size_t   i;

        if (off + n > st->n)
                off = 0;
        for (i = 0; i < n; i++) {
                uint64_t t0 = ksb_tsc(), t1;
                ksb_produce_one(rk, rkt, &st->msgs[off + i]);
                t1     = ksb_tsc();
                lat[i] = t1 - t0 > ovh ? (uint32_t)(t1 - t0 - ovh) : 0;
        }
        ksb_producer_drain(rk);
        ksb_sort_u32(lat, n);
        *med = ksb_quantile_u32(lat, n, 0.5) / ksb_tsc_per_ns();
        *p99 = ksb_quantile_u32(lat, n, 0.99) / ksb_tsc_per_ns();
}

/** @brief Prints what keyshift's final report says it analysed.
 *  @returns 1 if the report says keyshift sampled (issue 33: under
 *           overload), 0 if not, -1 without a report. */
static int check_report(const char *path)
{
        json_error_t err;
        json_t      *r = json_load_file(path, 0, &err), *t, *a;
        int          sampled;

        if (!r) {
                ksb_note("no keyshift report at %s: %s", path, err.text);
                return -1;
        }
        t = json_object_get(json_object_get(r, "topics"), KSB_TOPIC);
        a = json_object_get(t, "analysis");
        ksb_note(
            "keyshift report: %s: %lld messages, %lld hashed, %lld "
            "unplaced, %lld acknowledged (%lld matched), count %lld; "
            "analysed %.4f, sampled 1 in up to %lld",
            KSB_TOPIC,
            (long long)json_integer_value(json_object_get(t, "messages")),
            (long long)json_integer_value(
                json_object_get(json_object_get(t, "keys"), "hashed")),
            (long long)json_integer_value(
                json_object_get(json_object_get(t, "keys"), "unplaced")),
            (long long)json_integer_value(json_object_get(
                json_object_get(t, "acknowledged"), "messages")),
            (long long)json_integer_value(
                json_object_get(json_object_get(t, "acknowledged"), "matched")),
            (long long)json_integer_value(json_object_get(
                json_object_get(t, "partition_count"), "current")),
            json_number_value(json_object_get(a, "analysed_fraction")),
            (long long)json_integer_value(json_object_get(a, "one_in_max")));
        sampled = json_is_true(json_object_get(a, "sampled"));
        json_decref(r);
        unlink(path);
        return sampled;
}

/** Messages a warm-up sends at least: a producer without deliveries
 *  (queue-only) learns its partitioner for its first 100,000 messages
 *  (core/topic: KS_LEARN_NO_ACK_MESSAGES), analysing each under three
 *  candidates, ~2.7x the instructions; a shorter warm-up (bench/run
 *  --quick's 50,000) left half of that in the first round. */
#define KSB_WARMUP_MIN 100000

/** @brief A pair of producers, A without keyshift and B with it (or, with
 *         ksb_spin_ns, with the calibration spin), topic handles, warmed
 *         up; bracketed (ksb_producer.h) if @p bracket. */
static void pair_new(rd_kafka_t *rk[2], rd_kafka_topic_t *rkt[2],
                     const ksb_stream_t *st, size_t msgs, const char *report,
                     int bracket)
{
        size_t warm = msgs / 4 > KSB_WARMUP_MIN ? msgs / 4 : KSB_WARMUP_MIN;
        int    v;

        if (warm > st->n)
                warm = st->n;

        ksb_bracket = bracket;
        rk[0]       = ksb_producer_new(KSB_QUEUE_ONLY, NULL, KSB_TOPIC, NULL);
        rk[1] = ksb_producer_new(KSB_QUEUE_ONLY, ksb_plugin_path(), KSB_TOPIC,
                                 report);
        ksb_bracket = 0;
        for (v = 0; v < 2; v++) {
                rkt[v] = rd_kafka_topic_new(rk[v], KSB_TOPIC, NULL);
                run_block(rk[v], rkt[v], st, 0, warm, 1, v); /* warm-up */
        }
}

static void pair_destroy(rd_kafka_t *rk[2], rd_kafka_topic_t *rkt[2])
{
        int v;

        for (v = 0; v < 2; v++) {
                rd_kafka_topic_destroy(rkt[v]);
                ksb_producer_drain(rk[v]);
                rd_kafka_destroy(rk[v]);
        }
}

/**
 * @brief Queue-only rounds on stream @p st, figure ids tagged @p tag
 *        ("queue", "queue.distinct", ...). Each round runs an A/B pair of
 *        plain producers (the throughput ratio: nothing but keyshift
 *        differs) and an A/B pair of bracketed ones (keyshift's CPU per
 *        message: its on_send timed inside produce(), plus its threads'
 *        CPU until they are idle, minus the bracket's own cost measured on
 *        A). The former with - without CPU of the producing threads is
 *        printed beside it: it also holds librdkafka's own cost, which
 *        moves with keyshift's (at 2 threads, produce() contends less for
 *        librdkafka's locks when each call takes a little longer), so it
 *        can go negative. With @p latency, then single-thread rounds time
 *        each produce() call.
 */
static void queue_mode(const ksb_stream_t *st, const char *tag,
                       const int *tcounts, int tcnt, size_t msgs, int rounds,
                       int latency)
{
        char              report[2][256];
        rd_kafka_t       *rk[2], *rkb[2];
        rd_kafka_topic_t *rkt[2], *rktb[2];
        double            ratio[KSB_ROUNDS_MAX], cpu[KSB_ROUNDS_MAX];
        double            ww[KSB_ROUNDS_MAX], spun[KSB_ROUNDS_MAX];
        double            dmed[KSB_ROUNDS_MAX], dp99[KSB_ROUNDS_MAX];
        uint32_t         *lat;
        size_t            off = 0;
        int               v, r, c;

        for (v = 0; v < 2; v++)
                snprintf(report[v], sizeof(report[v]),
                         "/tmp/ksb-produce-%ld-%d.json", (long)getpid(), v);
        pair_new(rk, rkt, st, msgs, report[0], 0);
        pair_new(rkb, rktb, st, msgs, report[1], 1);

        for (c = 0; c < tcnt; c++) {
                int  t = tcounts[c];
                char id[96], what[192];

                for (r = 0; r < rounds; r++) {
                        block_t b[2], bb[2];
                        for (v = 0; v < 2; v++) {
                                int which = r % 2 ? 1 - v : v; /* AB, BA */
                                b[which]  = run_block(rk[which], rkt[which], st,
                                                      off, msgs, t, which);
                        }
                        for (v = 0; v < 2; v++) {
                                int which = r % 2 ? v : 1 - v; /* BA, AB */
                                bb[which] = run_block(rkb[which], rktb[which],
                                                      st, off, msgs, t, which);
                        }
                        off += msgs;
                        ratio[r] = b[1].rate / b[0].rate;
                        cpu[r]   = bb[1].direct_per_msg - bb[0].direct_per_msg;
                        ww[r]    = bb[1].cpu_per_msg - bb[0].cpu_per_msg;
                        spun[r]  = bb[1].spin_per_msg;
                        ksb_note("%s %d thread(s) round %d: without %.0f "
                                 "msg/s, with %.0f msg/s, ratio %.3f; "
                                 "bracket %.1f / %.1f ns/msg (keyshift %.1f: "
                                 "on_send %.1f, its threads %.1f); "
                                 "producing threads + keyshift's %.0f / %.0f "
                                 "ns/msg (with - without %.0f)",
                                 tag, t, r, b[0].rate, b[1].rate, ratio[r],
                                 bb[0].direct_per_msg, bb[1].direct_per_msg,
                                 cpu[r], cpu[r] - bb[1].ks_threads_per_msg,
                                 bb[1].ks_threads_per_msg, bb[0].cpu_per_msg,
                                 bb[1].cpu_per_msg, ww[r]);
                }
                snprintf(id, sizeof(id), "%d.produce.%s.threads%d.ratio",
                         t == 1 ? 2 : 3, tag, t);
                snprintf(what, sizeof(what),
                         "produce() throughput with/without, %s, %d "
                         "thread(s), %s",
                         ksb_floor         ? "the floor (hash + 4 counters)"
                         : ksb_spin_ns > 0 ? "calibration spin"
                                           : "queue only",
                         t, st->name);
                ksb_result(id, what, ">=", 0.95, "x", ratio, (size_t)rounds);
                snprintf(id, sizeof(id), "4.produce.%s.threads%d.cpu", tag, t);
                snprintf(what, sizeof(what),
                         "keyshift's CPU per message: on_send in produce() "
                         "(bracketed) + its threads, %d thread(s), %s",
                         t, st->name);
                ksb_result(id, what,
                           ksb_spin_ns > 0 || ksb_floor ? "-" : "<=", 100, "ns",
                           cpu, (size_t)rounds);
                snprintf(id, sizeof(id),
                         "4.produce.%s.threads%d.cpu_with_without", tag, t);
                snprintf(what, sizeof(what),
                         "producing threads' CPU + keyshift's, with - without "
                         "(holds librdkafka's own changes), %d thread(s)",
                         t);
                ksb_result(id, what, "-", 0, "ns", ww, (size_t)rounds);
                if (ksb_spin_ns <= 0)
                        continue;
                snprintf(id, sizeof(id), "4.produce.%s.threads%d.spun", tag, t);
                snprintf(what, sizeof(what),
                         "what the calibration spin took by its own clock "
                         "(the bracket finds this + one interceptor call), "
                         "%d thread(s)",
                         t);
                ksb_result(id, what, "-", 0, "ns", spun, (size_t)rounds);
        }

        if (latency) {
                lat = malloc(msgs * sizeof(*lat));
                if (!lat)
                        ksb_die("out of memory");
                for (r = 0; r < rounds; r++) {
                        double med[2], p99[2];
                        for (v = 0; v < 2; v++) {
                                int which = r % 2 ? 1 - v : v;
                                run_latency(rk[which], rkt[which], st, off,
                                            msgs, lat, &med[which],
                                            &p99[which]);
                        }
                        off += msgs;
                        dmed[r] = med[1] - med[0];
                        dp99[r] = p99[1] - p99[0];
                        ksb_note("produce() latency round %d: without median "
                                 "%.0f p99 %.0f ns; with median %.0f p99 "
                                 "%.0f ns",
                                 r, med[0], p99[0], med[1], p99[1]);
                }
                ksb_result("1.produce.queue.median_delta",
                           "produce() median with - without (on_send), 1 "
                           "thread",
                           "<=", 50, "ns", dmed, (size_t)rounds);
                ksb_result("1.produce.queue.p99_delta",
                           "produce() p99 with - without, 1 thread", "<=", 500,
                           "ns", dp99, (size_t)rounds);
                free(lat);
        }
        pair_destroy(rk, rkt);
        pair_destroy(rkb, rktb);
        {
                double unsampled = 1;
                char   id[96], what[192], tl[32] = "";
                for (v = 0; v < 2; v++)
                        unsampled *= check_report(report[v]) == 0;
                for (c = 0; c < tcnt; c++)
                        snprintf(tl + strlen(tl), sizeof(tl) - strlen(tl),
                                 "%s%d", c ? "_" : "", tcounts[c]);
                snprintf(id, sizeof(id), "2.produce.%s.threads%s.unsampled",
                         tag, tl);
                snprintf(what, sizeof(what),
                         "keyshift analysed every message, never sampled "
                         "(1 = yes), %s thread(s), %s",
                         tl, st->name);
                /* a single producing thread on this machine leaves a core
                 * to the drainer: exact figures are the goal there */
                if (ksb_spin_ns <= 0 && !ksb_floor)
                        ksb_result(id, what,
                                   tcnt == 1 && tcounts[0] == 1 ? ">=" : "-", 1,
                                   "", &unsampled, 1);
        }
}

/** The topic mock_block() produces to: KSB_TOPIC, or on a real cluster
 *  one created for this run. */
static char ksb_run_topic[64] = KSB_TOPIC;

/** @returns messages/s of one delivery block (produce + flush), on the
 *          mock cluster or, with ksb_bootstrap, a real one. */
static block_t mock_block(int with, const ksb_stream_t *st, size_t off,
                          size_t msgs, const char *report)
{
        rd_kafka_t *rk = ksb_producer_new(
            ksb_bootstrap ? KSB_BROKER : KSB_MOCK_CLUSTER,
            with ? ksb_plugin_path() : NULL, ksb_run_topic, report);
        rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, ksb_run_topic, NULL);
        uint64_t          t0, t1, c0, c1, k0, k1;
        block_t           b;
        size_t            i;

        if (off + msgs > st->n)
                off = 0;
        for (i = 0; i < 10000; i++) /* warm-up: metadata, keyshift's count */
                ksb_produce_one(rk, rkt, &st->msgs[i]);
        rd_kafka_flush(rk, 30000);
        usleep(500000);
        c0 = ksb_process_cpu_ns();
        k0 = ksb_threads_cpu_ns("rdk:broker");
        t0 = ksb_now_ns();
        for (i = 0; i < msgs; i++)
                ksb_produce_one(rk, rkt, &st->msgs[off + i]);
        if (rd_kafka_flush(rk, 120000))
                ksb_die("flush timed out");
        t1 = ksb_now_ns();
        c1 = ksb_process_cpu_ns();
        k1 = ksb_threads_cpu_ns("rdk:broker");
        rd_kafka_topic_destroy(rkt);
        rd_kafka_destroy(rk);
        b.rate           = (double)msgs / ((double)(t1 - t0) / 1e9);
        b.cpu_per_msg    = (double)(c1 - c0) / (double)msgs;
        b.broker_per_msg = (double)(k1 - k0) / (double)msgs;
        return b;
}

/** What keyshift's final report of a delivery block says it analysed. */
typedef struct analysed {
        double produced;       /**< analysis.messages_produced */
        double fraction;       /**< analysis.analysed_fraction */
        double one_in_max;     /**< 0: never sampled */
        double sampling_error; /**< messages_sampling_error (3 sigma) */
        double sampled_s;      /**< sampled_seconds */
        double out_of_cpu_s;   /**< producer.out_of_cpu.seconds */
        double unchecked;      /**< producer.out_of_cpu.deliveries_unchecked */
} analysed_t;

/** @brief Reads @p path's analysis of the run's topic, then removes it. */
static analysed_t read_analysis(const char *path)
{
        json_error_t err;
        json_t      *r = json_load_file(path, 0, &err), *a;
        analysed_t   x = {-1, 0, 0, 0, 0, 0, 0};
        json_t      *o;

        if (!r) {
                ksb_note("no keyshift report at %s: %s", path, err.text);
                return x;
        }
        a = json_object_get(
            json_object_get(json_object_get(r, "topics"), ksb_run_topic),
            "analysis");
        x.produced = json_number_value(json_object_get(a, "messages_produced"));
        x.fraction = json_number_value(json_object_get(a, "analysed_fraction"));
        x.one_in_max = json_number_value(json_object_get(a, "one_in_max"));
        x.sampling_error =
            json_number_value(json_object_get(a, "messages_sampling_error"));
        x.sampled_s = json_number_value(json_object_get(a, "sampled_seconds"));
        o = json_object_get(json_object_get(r, "producer"), "out_of_cpu");
        x.out_of_cpu_s = json_number_value(json_object_get(o, "seconds"));
        x.unchecked =
            json_number_value(json_object_get(o, "deliveries_unchecked"));
        json_decref(r);
        unlink(path);
        return x;
}

static void mock_mode(const ksb_stream_t *st, size_t msgs, int rounds)
{
        double      ratio[KSB_ROUNDS_MAX], cpu[KSB_ROUNDS_MAX];
        double      exact[KSB_ROUNDS_MAX], frac[KSB_ROUNDS_MAX];
        double      brk[KSB_ROUNDS_MAX];
        const char *mode = ksb_bootstrap ? "broker" : "mock";
        char        report[256], id[96], what[192];
        size_t      off = 0;
        int         r, v;

        snprintf(report, sizeof(report), "/tmp/ksb-mock-%ld.json",
                 (long)getpid());
        if (ksb_bootstrap) {
                snprintf(ksb_run_topic, sizeof(ksb_run_topic), "ksb-%ld-%ld",
                         (long)getpid(), (long)time(NULL));
                ksb_topic_create(ksb_run_topic, 6);
        }
        for (r = 0; r < rounds; r++) {
                block_t    b[2];
                analysed_t x;
                for (v = 0; v < 2; v++) {
                        int which = r % 2 ? 1 - v : v;
                        b[which]  = mock_block(which, st, off, msgs, report);
                }
                off += msgs;
                x        = read_analysis(report);
                ratio[r] = b[1].rate / b[0].rate;
                cpu[r]   = b[1].cpu_per_msg - b[0].cpu_per_msg;
                brk[r]   = b[1].broker_per_msg - b[0].broker_per_msg;
                /* the block's messages and its 10,000 warm-up ones */
                exact[r] = x.produced == (double)(msgs + 10000);
                frac[r]  = x.fraction;
                ksb_note("%s round %d: without %.0f msg/s, with %.0f msg/s, "
                         "ratio %.3f; CPU/msg %.0f / %.0f ns (broker threads "
                         "%.0f / %.0f ns); keyshift counted "
                         "%.0f of %zu messages, analysed %.4f of them%s; out "
                         "of CPU %.1f s, %.0f deliveries unchecked",
                         mode, r, b[0].rate, b[1].rate, ratio[r],
                         b[0].cpu_per_msg, b[1].cpu_per_msg,
                         b[0].broker_per_msg, b[1].broker_per_msg, x.produced,
                         msgs + 10000, x.fraction,
                         x.one_in_max > 0 ? " (sampled)" : "", x.out_of_cpu_s,
                         x.unchecked);
                if (x.one_in_max > 0)
                        ksb_note(
                            "%s round %d: sampled 1 in up to %.0f for %.0f "
                            "s; messages +- %.0f (3 sigma), stated",
                            mode, r, x.one_in_max, x.sampled_s,
                            x.sampling_error);
        }
        snprintf(id, sizeof(id), "2.produce.%s.ratio", mode);
        snprintf(what, sizeof(what),
                 "delivery throughput with/without, %s, %zu messages a block",
                 ksb_bootstrap ? "real broker" : "mock cluster", msgs);
        ksb_result(id, what, ">=", 0.95, "x", ratio, (size_t)rounds);
        snprintf(id, sizeof(id), "2.produce.%s.counted_exact", mode);
        snprintf(what, sizeof(what),
                 "every message counted by keyshift (1 = yes), %s", mode);
        ksb_result(id, what, ">=", 1, "", exact, (size_t)rounds);
        snprintf(id, sizeof(id), "2.produce.%s.analysed_fraction", mode);
        snprintf(what, sizeof(what),
                 "share keyshift analysed (the rest sampled, with the error "
                 "stated), %s",
                 mode);
        ksb_result(id, what, "-", 0, "", frac, (size_t)rounds);
        snprintf(id, sizeof(id), "4.produce.%s.cpu", mode);
        ksb_result(id,
                   "process CPU per delivered message with - without "
                   "(on_send + on_acknowledgement)",
                   "-", 0, "ns", cpu, (size_t)rounds);
        snprintf(id, sizeof(id), "4.produce.%s.broker_thread", mode);
        ksb_result(id,
                   "librdkafka broker threads' CPU per delivered message, "
                   "with - without (on_acknowledgement runs there)",
                   "-", 0, "ns", brk, (size_t)rounds);
}

int main(int argc, char **argv)
{
        int          tcounts[8] = {1, 2, 8}, tcnt = 3, rounds = 15, mock = -1;
        size_t       msgs   = 0;
        const char  *stream = "zipf";
        char         tag[64];
        ksb_stream_t st;
        int          i;

        for (i = 1; i < argc; i++) {
                if (!strcmp(argv[i], "--queue"))
                        mock = 0;
                else if (!strcmp(argv[i], "--mock"))
                        mock = 1;
                else if (!strcmp(argv[i], "--broker") && i + 1 < argc) {
                        mock          = 1;
                        ksb_bootstrap = argv[++i];
                } else if (!strcmp(argv[i], "--msgs") && i + 1 < argc)
                        msgs = strtoull(argv[++i], NULL, 10);
                else if (!strcmp(argv[i], "--keyshift-partitioner") &&
                         i + 1 < argc)
                        ksb_keyshift_partitioner = argv[++i];
                else if (!strcmp(argv[i], "--stream") && i + 1 < argc)
                        stream = argv[++i];
                else if (!strcmp(argv[i], "--floor"))
                        ksb_floor = 1;
                else if (!strcmp(argv[i], "--calibrate") && i + 1 < argc)
                        ksb_spin_ns = atof(argv[++i]);
                else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
                        rounds = atoi(argv[++i]);
                else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
                        char *s = argv[++i], *end;
                        for (tcnt = 0; *s && tcnt < 8; s = end) {
                                tcounts[tcnt++] = (int)strtol(s, &end, 10);
                                if (*end == ',')
                                        end++;
                                if (tcounts[tcnt - 1] < 1 ||
                                    tcounts[tcnt - 1] > 64)
                                        ksb_die("threads: 1..64");
                        }
                } else
                        ksb_die("usage: ksb_produce --queue|--mock|--broker "
                                "HOST:PORT [--msgs M] "
                                "[--rounds R] [--threads 1,2,8] "
                                "[--stream zipf|distinct|ais] [--calibrate NS] "
                                "[--floor] "
                                "[--keyshift-partitioner NAME]");
        }
        if (mock < 0)
                ksb_die("say --queue, --mock or --broker HOST:PORT");
        if (rounds < 1 || rounds > KSB_ROUNDS_MAX)
                ksb_die("rounds: 1..%d", KSB_ROUNDS_MAX);
        if (!msgs)
                msgs = mock ? 300000 : 400000;
        ksb_note("plugin %s", ksb_plugin_path());
        ksb_tsc_per_ns(); /* measured once, before any thread reads it */
        if (!strcmp(stream, "distinct"))
                /* every message a key never seen: one stream, no repeats */
                ksb_stream_distinct(&st, msgs * (size_t)(rounds * tcnt + 1));
        else if (!strcmp(stream, "ais"))
                ksb_stream_ais(&st, ksb_ais_log_path(), 4000000);
        else if (!strcmp(stream, "zipf"))
                ksb_stream_zipf(&st, 4000000, 100000, 1.0, 0.01, 7);
        else
                ksb_die("stream: zipf, distinct or ais");
        if (ksb_floor)
                snprintf(tag, sizeof(tag), "floor");
        else if (ksb_spin_ns > 0)
                snprintf(tag, sizeof(tag), "cal%.0f", ksb_spin_ns);
        else
                snprintf(tag, sizeof(tag), "queue%s%s",
                         strcmp(stream, "zipf") ? "." : "",
                         strcmp(stream, "zipf") ? stream : "");
        if (mock)
                mock_mode(&st, msgs, rounds);
        else
                queue_mode(&st, tag, tcounts, tcnt, msgs, rounds,
                           !strcmp(stream, "zipf") && ksb_spin_ns <= 0 &&
                               !ksb_floor);
        ksb_stream_free(&st);
        return 0;
}
