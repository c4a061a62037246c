/**
 * @file ksb_core.c
 * @brief Target 1 (on_send cost: median, p99) and target 4 (CPU per
 *        message), measured on keyshift's core directly: per message, what
 *        ks_client_on_send() does (registry lookup with the wall clock it
 *        reads, ks_topic_record()), timed one call at a time with the TSC.
 *
 * Streams: Zipf(s) MMSI keys over 100,000 ids (1 % sent as int32, the
 * other serializer), and 10 million distinct keys each sent once (every
 * message a new key: the worst case for the key sample and the hot-key
 * summary). One topic, current count 6, proposed 12,16,24 (3 proposed
 * counts), keyshift's other properties at their defaults. Each repetition
 * starts from a fresh registry.
 *
 * Per-call latency: `lfence; rdtsc` before and after the call, minus the
 * median cost of an empty pair; median and p99 over every message of a
 * pass. CPU per message: the thread's CPU time over the pass, minus the
 * timer reads, divided by the messages; keyshift has no deferred work, so
 * this is its whole CPU cost per message (target 4).
 *
 * Also, informational: the same stream sent by T threads to one topic
 * (throughput relative to one thread; 2 cores here), which shows what the
 * per-topic mutex costs without librdkafka around it.
 *
 * --profile: no timing at all, just the produce path over the stream
 * (Zipf, or the distinct keys with --distinct N), for perf record or
 * valgrind --tool=callgrind.
 *
 * Usage: ksb_core [--msgs N] [--keys K] [--zipf S] [--distinct N]
 *                 [--reps R] [--threads-only] [--no-threads] [--profile]
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
        double median_ns, p99_ns, p999_ns, max_ns, cpu_ns_per_msg;
} pass_t;

static pass_t run_pass(const ksb_stream_t *st, uint32_t *lat)
{
        ksb_topics_t kt;
        pass_t       p;
        double       rate = ksb_tsc_per_ns();
        uint64_t     ovh  = ksb_tsc_overhead(), cpu0, cpu1;
        size_t       i;

        ksb_topics_init(&kt, ksb_props);
        ksb_topics_add(&kt, "ais", 6);
        cpu0 = ksb_thread_cpu_ns();
        for (i = 0; i < st->n; i++) {
                const ksb_key_t *k  = &st->msgs[i];
                uint64_t         t0 = ksb_tsc(), t1;
                ksb_topics_send(&kt, "ais", k->bytes, k->len, KSB_VALUE_LEN);
                t1     = ksb_tsc();
                lat[i] = t1 - t0 > ovh ? (uint32_t)(t1 - t0 - ovh) : 0;
        }
        cpu1 = ksb_thread_cpu_ns();
        ksb_topics_destroy(&kt);
        ksb_sort_u32(lat, st->n);
        p.median_ns = ksb_quantile_u32(lat, st->n, 0.5) / rate;
        p.p99_ns    = ksb_quantile_u32(lat, st->n, 0.99) / rate;
        p.p999_ns   = ksb_quantile_u32(lat, st->n, 0.999) / rate;
        p.max_ns    = lat[st->n - 1] / rate;
        /* the timer pair is not keyshift's */
        p.cpu_ns_per_msg =
            ((double)(cpu1 - cpu0) - (double)st->n * (double)ovh / rate) /
            (double)st->n;
        return p;
}

static void measure_stream(const ksb_stream_t *st, int reps, const char *tag)
{
        uint32_t *lat = malloc(st->n * sizeof(*lat));
        double    med[16], p99[16], cpu[16], p999[16], mx[16];
        char      id[64], what[160];
        int       r;

        if (!lat)
                ksb_die("out of memory");
        for (r = 0; r < reps && r < 16; r++) {
                pass_t p = run_pass(st, lat);
                med[r]   = p.median_ns;
                p99[r]   = p.p99_ns;
                p999[r]  = p.p999_ns;
                mx[r]    = p.max_ns;
                cpu[r]   = p.cpu_ns_per_msg;
                ksb_note("%s pass %d: median %.1f ns p99 %.1f ns p99.9 %.1f "
                         "ns max %.0f ns cpu/msg %.1f ns",
                         st->name, r, p.median_ns, p.p99_ns, p.p999_ns,
                         p.max_ns, p.cpu_ns_per_msg);
        }
        snprintf(id, sizeof(id), "1.core.%s.median", tag);
        snprintf(what, sizeof(what), "on_send core path median, %s, 3 proposed",
                 st->name);
        ksb_result(id, what, "<=", 50, "ns", med, (size_t)r);
        snprintf(id, sizeof(id), "1.core.%s.p99", tag);
        snprintf(what, sizeof(what), "on_send core path p99, %s", st->name);
        ksb_result(id, what, "<=", 500, "ns", p99, (size_t)r);
        snprintf(id, sizeof(id), "1.core.%s.p999", tag);
        snprintf(what, sizeof(what), "on_send core path p99.9, %s", st->name);
        ksb_result(id, what, "-", 0, "ns", p999, (size_t)r);
        snprintf(id, sizeof(id), "1.core.%s.max", tag);
        snprintf(what, sizeof(what), "on_send core path max, %s", st->name);
        ksb_result(id, what, "-", 0, "ns", mx, (size_t)r);
        snprintf(id, sizeof(id), "4.core.%s.cpu", tag);
        snprintf(what, sizeof(what),
                 "keyshift CPU per message (no deferred work), %s", st->name);
        ksb_result(id, what, "<=", 100, "ns", cpu, (size_t)r);
        free(lat);
}

/* ---- several application threads, one topic ---- */

typedef struct worker {
        ksb_topics_t      *kt;
        const ksb_key_t   *msgs;
        size_t             n;
        pthread_barrier_t *go;
} worker_t;

static void *worker_main(void *arg)
{
        worker_t *w = arg;
        size_t    i;

        pthread_barrier_wait(w->go);
        for (i = 0; i < w->n; i++)
                ksb_topics_send(w->kt, "ais", w->msgs[i].bytes, w->msgs[i].len,
                                KSB_VALUE_LEN);
        return NULL;
}

/** @returns messages per second with @p threads threads on one topic. */
static double threaded_rate(const ksb_stream_t *st, int threads)
{
        ksb_topics_t      kt;
        pthread_t         th[64];
        worker_t          w[64];
        pthread_barrier_t go;
        uint64_t          t0, t1;
        size_t            per = st->n / (size_t)threads;
        int               i;

        ksb_topics_init(&kt, ksb_props);
        ksb_topics_add(&kt, "ais", 6);
        pthread_barrier_init(&go, NULL, (unsigned)threads + 1);
        for (i = 0; i < threads; i++) {
                w[i] = (worker_t){&kt, st->msgs + per * (size_t)i, per, &go};
                pthread_create(&th[i], NULL, worker_main, &w[i]);
        }
        pthread_barrier_wait(&go);
        t0 = ksb_now_ns();
        for (i = 0; i < threads; i++)
                pthread_join(th[i], NULL);
        t1 = ksb_now_ns();
        pthread_barrier_destroy(&go);
        ksb_topics_destroy(&kt);
        return (double)(per * (size_t)threads) / ((double)(t1 - t0) / 1e9);
}

static void measure_threads(const ksb_stream_t *st, int reps)
{
        static const int counts[] = {2, 8};
        double           ratio[2][16];
        int              r, c;

        for (r = 0; r < reps && r < 16; r++) {
                double one = threaded_rate(st, 1);
                for (c = 0; c < 2; c++) {
                        double many = threaded_rate(st, counts[c]);
                        ratio[c][r] = many / one;
                        ksb_note("core %d threads: %.2f M msg/s (1 thread "
                                 "%.2f M msg/s)",
                                 counts[c], many / 1e6, one / 1e6);
                }
        }
        for (c = 0; c < 2; c++) {
                char id[64], what[128];
                snprintf(id, sizeof(id), "3.core.threads%d.scaling", counts[c]);
                snprintf(what, sizeof(what),
                         "core path throughput, %d threads one topic / 1 "
                         "thread",
                         counts[c]);
                ksb_result(id, what, "-", 0, "x", ratio[c], (size_t)r);
        }
}

/** @brief The produce path over the stream, untimed (for profilers). */
static void profile_stream(const ksb_stream_t *st)
{
        ksb_topics_t kt;
        size_t       i;

        ksb_topics_init(&kt, ksb_props);
        ksb_topics_add(&kt, "ais", 6);
        for (i = 0; i < st->n; i++)
                ksb_topics_send(&kt, "ais", st->msgs[i].bytes, st->msgs[i].len,
                                KSB_VALUE_LEN);
        ksb_topics_destroy(&kt);
}

int main(int argc, char **argv)
{
        size_t       msgs = 2000000, keys = 100000, distinct = 10000000;
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
                else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
                        reps = atoi(argv[++i]);
                else if (!strcmp(argv[i], "--threads-only"))
                        single = 0;
                else if (!strcmp(argv[i], "--no-threads"))
                        threads = 0;
                else if (!strcmp(argv[i], "--profile"))
                        profile = 1;
                else
                        ksb_die("usage: ksb_core [--msgs N] [--keys K] "
                                "[--zipf S] [--distinct N] [--reps R] "
                                "[--threads-only] [--no-threads] "
                                "[--profile]");
        }
        if (profile) {
                if (distinct)
                        ksb_stream_distinct(&st, distinct);
                else
                        ksb_stream_zipf(&st, msgs, keys, zipf, 0.01, 42);
                profile_stream(&st);
                ksb_stream_free(&st);
                return 0;
        }
        ksb_note("TSC %.3f ticks/ns, empty timer pair %llu ticks",
                 ksb_tsc_per_ns(), (unsigned long long)ksb_tsc_overhead());

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
