/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ksb_core.c
 * @brief Target 1 (on_send cost: median, p99) and target 4 (CPU per
 *        message, on_send plus keyshift's deferred work), measured on
 *        keyshift's core directly: per message, what ks_client_on_send()
 *        does (the thread's last topic or the registry, ks_stage_push()
 *        into the thread's staging ring), timed one call at a time with
 *        the TSC, while a drainer thread analyses the rings as the
 *        plugin's does (ks_stage_collect(), then ks_stage_pause():
 *        ks_batch.h, ks_topic_record_run_locked()).
 *
 * Streams: Zipf(s) MMSI keys over 100,000 ids (1 % sent as int32, the
 * other serializer), and 10 million distinct keys each sent once (every
 * message a new key: the worst case for the key sample and the hot-key
 * summary). One topic, current count 6, proposed 12,16,24 (3 proposed
 * counts), keyshift's other properties at their defaults. Each repetition
 * starts from a fresh registry and stage.
 *
 * Pacing: on_send runs inside produce(), which costs librdkafka itself
 * ~300 ns a message on this machine (3 M msgs/s, the figure), so
 * messages are sent at --rate (default 3,000,000 msgs/s) by spinning on
 * the TSC between calls; unpaced, a 10 ns push outruns any analysis and
 * only measures the rings' overflow.
 *
 * Per-call latency: `lfence; rdtsc` before and after the call, minus the
 * median cost of an empty pair; median and p99 over every message of a
 * pass. CPU per message: the sum of the on_send calls' times (a call over
 * 20 us, preempted, counted as the median call) plus the drainer thread's
 * CPU time (its whole life: start, idle wake-ups, the last drain), divided
 * by the messages analysed (target 4). Messages the rings
 * could not take (analysed inline on the sending thread) are counted in
 * the on_send times and reported.
 *
 * Also: the same with 2 and 8 sending threads (the total rate shared),
 * on_send median per thread count (no lock on the produce path).
 *
 * --profile: no timing and no drainer: the stream is staged and collected
 * on one thread (every 2,048 messages), for perf record or
 * valgrind --tool=callgrind (bench/icount: instructions per message); the
 * stream is --distinct N keys, else --ais N messages of the risky_ais
 * replay, else Zipf.
 *
 * Usage: ksb_core [--msgs N] [--keys K] [--zipf S] [--distinct N]
 *                 [--ais N] [--reps R] [--rate MSGS_PER_S] [--threads-only]
 *                 [--no-threads] [--profile]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksb_keys.h"
#include "ksb_stats.h"
#include "ksb_topics.h"

static const char *const ksb_props[] = {"keyshift.partitions.proposed",
                                        "12,16,24", NULL};

#define KSB_VALUE_LEN 64

/** Figures of one pass. */
typedef struct pass {
        double median_ns, p99_ns, p999_ns, max_ns;
        double cpu_ns_per_msg;   /**< on_send + drainer */
        double drain_ns_per_msg; /**< the drainer's share */
        double inline_share;     /**< messages analysed on the sender */
        double unanalysed_share; /**< met a full ring: not analysed */
} pass_t;

static double ksb_rate = 3e6; /**< messages per second sent, all threads */

/** A call longer than this was preempted (see run_pass()). */
#define KSB_PREEMPTED_NS 20000.0

/** One sending thread's share of a pass. */
typedef struct sender {
        ksb_topics_t      *kt;
        const ksb_key_t   *msgs;
        size_t             n;
        uint32_t          *lat; /**< [n] ticks per call */
        double             rate;
        pthread_barrier_t *go;
} sender_t;

static void *sender_main(void *arg)
{
        sender_t *w        = arg;
        uint64_t  ovh      = ksb_tsc_overhead();
        double    interval = ksb_tsc_per_ns() * 1e9 / w->rate;
        uint64_t  start;
        size_t    i;

        if (w->go)
                pthread_barrier_wait(w->go);
        start = ksb_tsc();
        for (i = 0; i < w->n; i++) {
                const ksb_key_t *k = &w->msgs[i];
                uint64_t next      = start + (uint64_t)((double)i * interval);
                uint64_t t0, t1;
                while ((t0 = ksb_tsc()) < next)
                        ;
                ksb_topics_on_send(w->kt, "ais", k->bytes, k->len,
                                   KSB_VALUE_LEN);
                t1        = ksb_tsc();
                w->lat[i] = t1 - t0 > ovh ? (uint32_t)(t1 - t0 - ovh) : 0;
        }
        return NULL;
}

/**
 * @brief Sends the stream from @p threads threads (each a contiguous share,
 *        the rate split evenly) with a drainer running; fills @p lat.
 */
static pass_t run_pass(const ksb_stream_t *st, uint32_t *lat, int threads)
{
        ksb_topics_t      kt;
        pass_t            p;
        double            rate = ksb_tsc_per_ns(), on_send_ticks = 0;
        pthread_t         th[16];
        sender_t          w[16];
        pthread_barrier_t go;
        ks_stage_stats_t  ss;
        size_t            per = st->n / (size_t)threads, n, i;
        int               k;

        ksb_topics_init(&kt, ksb_props);
        ksb_topics_add(&kt, "ais", 6);
        ksb_topics_drainer_start(&kt);
        pthread_barrier_init(&go, NULL, (unsigned)threads);
        for (k = 0; k < threads; k++) {
                w[k] = (sender_t){&kt,
                                  st->msgs + per * (size_t)k,
                                  per,
                                  lat + per * (size_t)k,
                                  ksb_rate / threads,
                                  threads > 1 ? &go : NULL};
                if (threads > 1)
                        pthread_create(&th[k], NULL, sender_main, &w[k]);
        }
        if (threads == 1)
                sender_main(&w[0]);
        for (k = 0; threads > 1 && k < threads; k++)
                pthread_join(th[k], NULL);
        pthread_barrier_destroy(&go);
        while (!ks_stage_empty(kt.stage)) {
                struct timespec ts = {0, 1000000};
                nanosleep(&ts, NULL);
        }
        ksb_topics_drainer_stop(&kt);
        ks_stage_stats(kt.stage, &ss);
        ksb_topics_destroy(&kt);

        n = per * (size_t)threads;
        ksb_sort_u32(lat, n);
        /* on_send's CPU: the calls' times, except that a call over
         * KSB_PREEMPTED_NS (the thread was descheduled or interrupted:
         * on_send makes no system call and, past its first message, does
         * not fault) counts as the median call */
        for (i = 0; i < n; i++)
                on_send_ticks += lat[i] < KSB_PREEMPTED_NS * rate
                                     ? lat[i]
                                     : ksb_quantile_u32(lat, n, 0.5);
        p.median_ns        = ksb_quantile_u32(lat, n, 0.5) / rate;
        p.p99_ns           = ksb_quantile_u32(lat, n, 0.99) / rate;
        p.p999_ns          = ksb_quantile_u32(lat, n, 0.999) / rate;
        p.max_ns           = lat[n - 1] / rate;
        p.drain_ns_per_msg = (double)kt.drainer_cpu_ns / (double)n;
        p.cpu_ns_per_msg =
            on_send_ticks / rate / (double)n + p.drain_ns_per_msg;
        p.inline_share =
            (double)(ss.inline_long + ss.inline_noring) / (double)n;
        p.unanalysed_share = (double)ss.skipped_full / (double)n;
        if (ss.skipped_full < n) { /* per message analysed: a skipped one
                                    * costs next to nothing */
                p.cpu_ns_per_msg *= (double)n / (double)(n - ss.skipped_full);
                p.drain_ns_per_msg *= (double)n / (double)(n - ss.skipped_full);
        }
        return p;
}

static void measure_stream(const ksb_stream_t *st, int reps, const char *tag)
{
        uint32_t *lat = malloc(st->n * sizeof(*lat));
        double    med[16], p99[16], cpu[16], p999[16], mx[16], drn[16], un[16];
        char      id[64], what[160];
        int       r;

        if (!lat)
                ksb_die("out of memory");
        for (r = 0; r < reps && r < 16; r++) {
                pass_t p = run_pass(st, lat, 1);
                med[r]   = p.median_ns;
                p99[r]   = p.p99_ns;
                p999[r]  = p.p999_ns;
                mx[r]    = p.max_ns;
                cpu[r]   = p.cpu_ns_per_msg;
                drn[r]   = p.drain_ns_per_msg;
                un[r]    = 100.0 * p.unanalysed_share;
                ksb_note("%s pass %d: on_send median %.1f ns p99 %.1f ns "
                         "p99.9 %.1f ns max %.0f ns; cpu/msg %.1f ns of "
                         "which drainer %.1f ns; analysed inline %.4f%%, "
                         "not analysed (ring full) %.4f%%",
                         st->name, r, p.median_ns, p.p99_ns, p.p999_ns,
                         p.max_ns, p.cpu_ns_per_msg, p.drain_ns_per_msg,
                         100.0 * p.inline_share, un[r]);
        }
        snprintf(id, sizeof(id), "1.core.%s.median", tag);
        snprintf(what, sizeof(what),
                 "on_send median (staged), %s at %.1f M msgs/s, 3 proposed",
                 st->name, ksb_rate / 1e6);
        ksb_result(id, what, "<=", 50, "ns", med, (size_t)r);
        snprintf(id, sizeof(id), "1.core.%s.p99", tag);
        snprintf(what, sizeof(what), "on_send p99, %s", st->name);
        ksb_result(id, what, "<=", 500, "ns", p99, (size_t)r);
        snprintf(id, sizeof(id), "1.core.%s.p999", tag);
        snprintf(what, sizeof(what), "on_send p99.9, %s", st->name);
        ksb_result(id, what, "-", 0, "ns", p999, (size_t)r);
        snprintf(id, sizeof(id), "1.core.%s.max", tag);
        snprintf(what, sizeof(what), "on_send max, %s", st->name);
        ksb_result(id, what, "-", 0, "ns", mx, (size_t)r);
        snprintf(id, sizeof(id), "1.core.%s.unanalysed", tag);
        snprintf(what, sizeof(what),
                 "messages not analysed (drainer behind, ring full), %s",
                 st->name);
        ksb_result(id, what, "-", 0, "%", un, (size_t)r);
        snprintf(id, sizeof(id), "4.core.%s.cpu", tag);
        snprintf(what, sizeof(what),
                 "keyshift CPU per analysed message, on_send + drainer, %s",
                 st->name);
        ksb_result(id, what, "<=", 100, "ns", cpu, (size_t)r);
        snprintf(id, sizeof(id), "4.core.%s.drainer", tag);
        snprintf(what, sizeof(what), "of which the drainer thread, %s",
                 st->name);
        ksb_result(id, what, "-", 0, "ns", drn, (size_t)r);
        free(lat);
}

/* ---- several application threads, one topic ---- */

static void measure_threads(const ksb_stream_t *st, int reps)
{
        static const int counts[] = {1, 2, 8};
        double           med[3][16], cpu[3][16];
        uint32_t        *lat = malloc(st->n * sizeof(*lat));
        int              r, c;

        if (!lat)
                ksb_die("out of memory");
        for (r = 0; r < reps && r < 16; r++)
                for (c = 0; c < 3; c++) {
                        pass_t p  = run_pass(st, lat, counts[c]);
                        med[c][r] = p.median_ns;
                        cpu[c][r] = p.cpu_ns_per_msg;
                        ksb_note("core %d threads: on_send median %.1f ns, "
                                 "p99 %.1f ns, cpu/msg %.1f ns",
                                 counts[c], p.median_ns, p.p99_ns,
                                 p.cpu_ns_per_msg);
                }
        for (c = 1; c < 3; c++) {
                char   id[64], what[128];
                double ratio[16];
                for (r = 0; r < reps && r < 16; r++)
                        ratio[r] = med[0][r] / med[c][r];
                snprintf(id, sizeof(id), "3.core.threads%d.median", counts[c]);
                snprintf(what, sizeof(what),
                         "on_send median, %d threads one topic (%.1f M "
                         "msgs/s in all)",
                         counts[c], ksb_rate / 1e6);
                ksb_result(id, what, "-", 0, "ns", med[c], (size_t)r);
                snprintf(id, sizeof(id), "3.core.threads%d.cpu", counts[c]);
                snprintf(what, sizeof(what),
                         "CPU per message incl. drainer, %d threads",
                         counts[c]);
                ksb_result(id, what, "-", 0, "ns", cpu[c], (size_t)r);
                snprintf(id, sizeof(id), "3.core.threads%d.scaling", counts[c]);
                snprintf(what, sizeof(what),
                         "on_send median 1 thread / %d threads (1: no "
                         "serialising)",
                         counts[c]);
                ksb_result(id, what, "-", 0, "x", ratio, (size_t)r);
        }
        free(lat);
}

/** @brief The produce path over the stream, untimed (for profilers; never
 *         inlined: bench/icount counts its instructions by name). */
__attribute__((noinline)) static void profile_stream(const ksb_stream_t *st)
{
        ksb_topics_t     kt;
        ks_stage_stats_t ss;
        uint64_t         cpu0, cpu1;
        size_t           i;

        ksb_topics_init(&kt, ksb_props);
        ksb_topics_add(&kt, "ais", 6);
        cpu0 = ksb_thread_cpu_ns();
        for (i = 0; i < st->n; i++) {
                ksb_topics_on_send(&kt, "ais", st->msgs[i].bytes,
                                   st->msgs[i].len, KSB_VALUE_LEN);
                if ((i & 2047) == 2047)
                        ks_stage_collect(kt.stage);
        }
        ks_stage_drain(kt.stage);
        cpu1 = ksb_thread_cpu_ns();
        ks_stage_stats(kt.stage, &ss);
        ksb_note("profile: %.1f ns of CPU per message, on_send and analysis "
                 "on one thread",
                 (double)(cpu1 - cpu0) / (double)st->n);
        ksb_note("profile: %llu messages, %llu runs analysed (%llu set "
                 "aside before a flush, %llu of them evictions), %llu "
                 "flushes, %llu analysed alone (long key), %llu analysed "
                 "inline; %llu probes of the key table (%.1f %% found "
                 "their key), %llu messages passed it by",
                 (unsigned long long)ss.drained,
                 (unsigned long long)ss.batch.runs,
                 (unsigned long long)ss.batch.set_aside,
                 (unsigned long long)ss.batch.evicted,
                 (unsigned long long)ss.batch.flushes,
                 (unsigned long long)ss.batch.direct,
                 (unsigned long long)(ss.inline_long + ss.inline_noring),
                 (unsigned long long)ss.batch.probes,
                 ss.batch.probes
                     ? 100.0 * (double)ss.batch.found / (double)ss.batch.probes
                     : 0.0,
                 (unsigned long long)ss.batch.passed_by);
        ksb_topics_destroy(&kt);
}

int main(int argc, char **argv)
{
        size_t       msgs = 2000000, keys = 100000, distinct = 10000000;
        size_t       ais  = 0;
        double       zipf = 1.0;
        int          reps = 5, threads = 1, single = 1, profile = 0, i;
        ksb_stream_t st;

        for (i = 1; i < argc; i++) {
                if (!strcmp(argv[i], "--msgs") && i + 1 < argc)
                        msgs = strtoull(argv[++i], NULL, 10);
                else if (!strcmp(argv[i], "--keys") && i + 1 < argc)
                        keys = strtoull(argv[++i], NULL, 10);
                else if (!strcmp(argv[i], "--zipf") && i + 1 < argc)
                        zipf = atof(argv[++i]);
                else if (!strcmp(argv[i], "--distinct") && i + 1 < argc)
                        distinct = strtoull(argv[++i], NULL, 10);
                else if (!strcmp(argv[i], "--ais") && i + 1 < argc)
                        ais = strtoull(argv[++i], NULL, 10);
                else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
                        reps = atoi(argv[++i]);
                else if (!strcmp(argv[i], "--rate") && i + 1 < argc)
                        ksb_rate = atof(argv[++i]);
                else if (!strcmp(argv[i], "--threads-only"))
                        single = 0;
                else if (!strcmp(argv[i], "--no-threads"))
                        threads = 0;
                else if (!strcmp(argv[i], "--profile"))
                        profile = 1;
                else
                        ksb_die("usage: ksb_core [--msgs N] [--keys K] "
                                "[--zipf S] [--distinct N] [--ais N] "
                                "[--reps R] "
                                "[--rate MSGS_PER_S] [--threads-only] "
                                "[--no-threads] "
                                "[--profile]");
        }
        if (profile) {
                if (distinct)
                        ksb_stream_distinct(&st, distinct);
                else if (ais)
                        ksb_stream_ais(&st, ksb_ais_log_path(), ais);
                else
                        ksb_stream_zipf(&st, msgs, keys, zipf, 0.01, 42);
                profile_stream(&st);
                ksb_stream_free(&st);
                return 0;
        }
        ksb_note("TSC %.3f ticks/ns, empty timer pair %llu ticks; sending "
                 "at %.2f M msgs/s",
                 ksb_tsc_per_ns(), (unsigned long long)ksb_tsc_overhead(),
                 ksb_rate / 1e6);
        if (ksb_rate <= 0)
                ksb_die("--rate must be positive");

        ksb_stream_zipf(&st, msgs, keys, zipf, 0.01, 42);
        if (single)
                measure_stream(&st, reps, "zipf");
        if (threads)
                measure_threads(&st, reps);
        ksb_stream_free(&st);

        if (single && distinct) {
                ksb_stream_distinct(&st, distinct);
                measure_stream(&st, reps > 3 ? 3 : reps, "distinct");
                ksb_stream_free(&st);
        }
        return 0;
}
