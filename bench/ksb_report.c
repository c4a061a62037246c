/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ksb_report.c
 * @brief Target 6: building and writing a report for 50 topics x 1,000
 *        partitions x 3 proposed counts (1200, 1500, 2000), as keyshift's
 *        reporter thread does it (plugin/ks_reporter.c ks_reporter_write():
 *        snapshot each topic, build its JSON, build the report, write it
 *        atomically with fsync), and how long on_send waits meanwhile.
 *
 * Each topic first receives --msgs messages (Zipf MMSI keys, 1 % int32)
 * so that every sketch is full. Then, as in the plugin (plugin/ks_client.c
 * ks_client_on_send(), plugin/ks_drainer.c drainer_main()), a producer
 * thread runs on_send's work (ks_stage_last_topic() or the registry
 * lookup, then ks_stage_push() into a ks_stage_t) round-robin over the
 * topics at --rate messages/s, timing each call with the TSC, while a
 * drainer thread runs as the plugin's (ks_stage_collect(), then
 * ks_stage_pause(); it takes each topic's lock when it analyses runs,
 * ks_batch.h), and each report first asks it for a flush and waits
 * (ks_stage_sync(), as ks_reporter_write() does):
 *  1. baseline: about a second with no report;
 *  2. the same while the main thread builds and writes --reps reports
 *     back to back (every topic changed between two: rebuilt);
 *  3. the producer stopped, one report, then --reps reports in which no
 *     topic changed (each topic's kept text written again,
 *     core/report/ks_report_reuse.h): issue 29's incremental report.
 * Reports are written as ks_reporter_write() writes them: every topic's
 * changes noted (ks_topic_note_changes()), then ks_report_topics_add().
 * Figures: report time (median/min/max over the reps), the same with no
 * topic changed, the report's size (and with --parts the size of each of
 * its parts, from the file), the longest
 * ks_topic_snapshot() (it holds the topic's lock for nearly all of its
 * run: how long the drainer, not on_send, can wait for that lock), and
 * on_send's latency percentiles and maximum with and without reports.
 * on_send takes no topic lock unless the key is longer than
 * KS_STAGE_KEY_LONG_MAX or meets a full key arena: then it analyses inline
 * under the lock; those calls are counted (ks_stage_stats()), and so are
 * messages a full ring skipped.
 *
 * Usage: ksb_report [--topics N] [--partitions N] [--proposed N,N,N]
 *                   [--msgs N] [--reps R] [--rate MSGS_PER_S] [--path FILE]
 *                   [--keep] [--target-ms MS] [--size-target-mb MB]
 *                   [--unchanged-target-ms MS] [--parts]
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ks_report.h"
#include "ks_report_reuse.h"
#include "ks_stage.h"
#include "ksb_keys.h"
#include "ksb_stats.h"
#include "ksb_topics.h"

#define KSB_LAT_MAX 50000000u

/** Largest burst the paced producer sends to catch up after it was
 *  descheduled: half a ring, so pacing alone never fills one. */
#define KSB_CATCH_UP_MAX (KS_STAGE_RING_ENTRIES / 2)

typedef struct producer {
        ksb_topics_t       *kt;
        ks_stage_t         *stage;
        const ksb_stream_t *st;
        char (*names)[32];
        size_t     topics;
        double     rate; /**< messages per second, 0: as fast as it can */
        atomic_int stop;
        uint32_t  *lat; /**< ticks per call */
        size_t     n;
} producer_t;

/** @brief What ks_client_on_send() does for one message with partition UA:
 *         find the topic (the thread's last one, else the registry), then
 *         stage the message. */
static inline void on_send(producer_t *p, const char *name, const void *key,
                           size_t keylen)
{
        ks_topic_t *t = ks_stage_last_topic(p->stage, name);
        int         created;

        if (!t)
                t = ks_registry_get(&p->kt->reg, name, &p->kt->conf,
                                    &p->kt->params, 0, &created);
        if (t)
                ks_stage_push(p->stage, t, key, keylen, -1, 64);
}

static void *producer_main(void *arg)
{
        producer_t *p       = arg;
        uint64_t    ovh     = ksb_tsc_overhead();
        uint64_t    t_start = ksb_now_ns();
        size_t      i       = 0;

        p->n = 0;
        while (!atomic_load_explicit(&p->stop, memory_order_relaxed) &&
               p->n < KSB_LAT_MAX) {
                size_t due = (size_t)-1;
                if (p->rate > 0) {
                        struct timespec ts = {0, 100000};
                        due = (size_t)((double)(ksb_now_ns() - t_start) *
                                       p->rate / 1e9);
                        if (due > i + KSB_CATCH_UP_MAX)
                                i = due - KSB_CATCH_UP_MAX;
                        if (i >= due) {
                                nanosleep(&ts, NULL);
                                continue;
                        }
                }
                while (i < due && p->n < KSB_LAT_MAX &&
                       !atomic_load_explicit(&p->stop, memory_order_relaxed)) {
                        const ksb_key_t *k  = &p->st->msgs[i % p->st->n];
                        uint64_t         t0 = ksb_tsc(), t1;
                        on_send(p, p->names[i % p->topics], k->bytes, k->len);
                        t1 = ksb_tsc();
                        p->lat[p->n++] =
                            t1 - t0 > ovh ? (uint32_t)(t1 - t0 - ovh) : 0;
                        i++;
                        if (p->rate <= 0 && (i & 1023) == 0)
                                break; /* look at stop now and then */
                }
        }
        return NULL;
}

typedef struct drainer {
        ks_stage_t    *stage;
        atomic_int     stop;
        size_t         passes;
        _Atomic double max_ns; /**< longest ks_stage_collect(); reset by main */
} drainer_t;

/** @brief As plugin/ks_drainer.c drainer_main(): collect every ring,
 *         pause (ks_stage_pause()). */
static void *drainer_main(void *arg)
{
        drainer_t *d         = arg;
        int        period_ms = KS_STAGE_BUSY_MS;

        while (!atomic_load(&d->stop)) {
                uint64_t t0 = ksb_now_ns();
                size_t   n  = ks_stage_collect(d->stage);
                double   ns = (double)(ksb_now_ns() - t0);
                if (ns > atomic_load(&d->max_ns))
                        atomic_store(&d->max_ns, ns);
                d->passes++;
                ks_stage_pause(d->stage, n, &period_ms);
        }
        ks_stage_drain(d->stage);
        return NULL;
}

/** Latency figures of one phase, in ns. */
typedef struct phase {
        double p50, p99, p9999, max;
        size_t over_5us;
        size_t n; /**< calls timed */
} phase_t;

/** @returns the messages on_send analysed itself, under the topic lock. */
static unsigned long long inline_of(const ks_stage_stats_t *s)
{
        return (unsigned long long)(s->inline_long + s->inline_noring);
}

/** @returns the size of file @p path, -1 if it cannot be read. */
static long file_size(const char *path)
{
        FILE *f  = fopen(path, "r");
        long  sz = -1;

        if (f && fseek(f, 0, SEEK_END) == 0)
                sz = ftell(f);
        if (f)
                fclose(f);
        return sz;
}

static phase_t summarise(producer_t *p)
{
        double  r = ksb_tsc_per_ns();
        phase_t f;
        size_t  i;

        ksb_sort_u32(p->lat, p->n);
        f.p50      = ksb_quantile_u32(p->lat, p->n, 0.5) / r;
        f.p99      = ksb_quantile_u32(p->lat, p->n, 0.99) / r;
        f.p9999    = ksb_quantile_u32(p->lat, p->n, 0.9999) / r;
        f.max      = p->n ? p->lat[p->n - 1] / r : 0;
        f.over_5us = 0;
        f.n        = p->n;
        for (i = p->n; i > 0 && p->lat[i - 1] / r > 5000; i--)
                f.over_5us++;
        return f;
}

/** @brief ks_topic_note_changes() of one topic, as plugin/ks_reporter.c
 *         unchanged() runs it on every topic before a report. */
static void note_changes(ks_topic_t *t, void *opaque)
{
        ks_topic_note_changes(t, *(const int64_t *)opaque);
}

/** What one report took, for the figures. */
typedef struct report_figs {
        double ms;              /**< build + write, the flush wait excluded */
        double sync_ms;         /**< the wait for the drainer's flush */
        double collect_ms;      /**< the topics: snapshots, JSON, write */
        double max_snapshot_us; /**< longest ks_topic_snapshot() */
        double max_lock_us;     /**< longest lock hold inside one */
        size_t rebuilt, reused; /**< topics */
} report_figs_t;

/** @brief One report as ks_reporter_write() builds it, after the flush
 *         it asks the drainer of @p stage for: every topic's changes
 *         noted, then each topic written through ks_report_topics_add()
 *         (rebuilt when it changed, else its kept text), the report closed
 *         (fsync, rename). */
static void one_report(ksb_topics_t *kt, ks_stage_t *stage, const char *path,
                       report_figs_t *f)
{
        ks_report_producer_t prod = {.client_id          = "ksb",
                                     .client_name        = "ksb#producer-1",
                                     .pid                = (long)getpid(),
                                     .librdkafka_version = "2.0.2",
                                     .partitioner        = "consistent_random",
                                     .partitioner_source = "partitioner",
                                     .sticky_linger_ms   = 10,
                                     .report_interval_ms = 60000,
                                     .report_path        = path};
        ks_warn_list_t       wl;
        ks_report_topics_t   rt;
        ks_report_opts_t     opts;
        ks_report_writer_t   w;
        char                 errstr[512];
        uint64_t             t0 = ksb_now_ns(), t1, t2, t3;
        int64_t              now;

        if (ks_stage_sync(stage, 10000, NULL))
                ksb_die("the drainer did not flush in 10 s");
        f->sync_ms = (double)(ksb_now_ns() - t0) / 1e6;
        t0         = ksb_now_ns();
        ks_warn_list_init(&wl);
        opts                = ksb_topics_report_opts(kt, kt->conf.hot_keys);
        opts.bulk_by_writer = 1;
        now                 = opts.now_ms;
        ks_registry_foreach(&kt->reg, note_changes, &now);
        memset(&rt, 0, sizeof(rt));
        rt.w     = &w;
        rt.wl    = &wl;
        rt.opts  = &opts;
        rt.asked = &kt->params;
        rt.reuse = 1;
        if (ks_report_writer_open(&w, path) ||
            ks_report_writer_begin(&w, &prod, &opts))
                ksb_die("report not started: %s", w.errstr);
        ks_registry_foreach(&kt->reg, ks_report_topics_add, &rt);
        t1 = ksb_now_ns();
        if (ks_report_writer_end(&w, &wl, errstr, sizeof(errstr)))
                ksb_die("report not written: %s", errstr);
        t2 = ksb_now_ns();
        ks_warn_list_clear(&wl);
        t3                 = ksb_now_ns();
        f->max_snapshot_us = rt.max_snapshot_ns / 1000.0;
        f->max_lock_us     = rt.max_lock_ns / 1000.0;
        f->collect_ms      = (double)(t1 - t0) / 1e6;
        f->rebuilt         = rt.rebuilt;
        f->reused          = rt.reused;
        f->ms              = (double)(t3 - t0) / 1e6;
        ksb_note("report: %zu topics rebuilt, %zu reused; snapshots %.1f "
                 "ms, topic JSON %.1f ms, write %.1f ms (topic JSON + write: "
                 "thread CPU %.1f ms), warnings + fsync + rename %.1f ms, "
                 "free %.1f ms",
                 rt.rebuilt, rt.reused, rt.snapshot_ns / 1e6, rt.build_ns / 1e6,
                 rt.write_ns / 1e6, rt.cpu_ns / 1e6, (double)(t2 - t1) / 1e6,
                 (double)(t3 - t2) / 1e6);
}

/** Parts of a report, in bytes of compact JSON (report_parts()). */
enum {
        PART_COLUMNS,   /**< current and proposed per-partition loads */
        PART_FLOWS,     /**< proposals' flow / flow_nonzero */
        PART_PROPOSALS, /**< the rest of proposals[] */
        PART_HOT_KEYS,  /**< the topic's hot_keys[] */
        PART_HLL,       /**< merge.distinct_hll */
        PART_SAMPLE,    /**< merge.key_sample */
        PART_MERGE_HOT, /**< merge.hot_keys */
        PART_REST,      /**< everything else */
        PART_CNT
};

static const char *const part_names[PART_CNT] = {
    "columns",   "flows",        "proposals", "hot_keys",
    "merge_hll", "merge_sample", "merge_hot", "rest"};

/** @returns the compact JSON size of @p v (0 for NULL). */
static double json_size(const json_t *v)
{
        return v ? (double)json_dumpb(v, NULL, 0,
                                      JSON_COMPACT | JSON_ENCODE_ANY)
                 : 0;
}

/**
 * @brief Splits the report at @p path into its parts (compact JSON sizes
 *        of each member, summed over topics; "rest" what is left of the
 *        file) and prints them: the figures of issue 29's closing note.
 */
static void report_parts(const char *path, double file_bytes)
{
        json_error_t err;
        json_t      *r = json_load_file(path, 0, &err), *t, *p;
        const char  *name;
        double       part[PART_CNT] = {0}, sum = 0;
        size_t       i, k;
        char         id[64], what[160];

        if (!r)
                ksb_die("%s: %s", path, err.text);
        json_object_foreach(json_object_get(r, "topics"), name, t)
        {
                const json_t *m = json_object_get(t, "merge");
                part[PART_COLUMNS] += json_size(json_object_get(
                    json_object_get(t, "current"), "partitions"));
                json_array_foreach(json_object_get(t, "proposals"), k, p)
                {
                        double c = json_size(json_object_get(p, "partitions"));
                        double f =
                            json_size(json_object_get(p, "flow")) +
                            json_size(json_object_get(p, "flow_nonzero"));
                        part[PART_COLUMNS] += c;
                        part[PART_FLOWS] += f;
                        part[PART_PROPOSALS] += json_size(p) - c - f;
                }
                part[PART_HOT_KEYS] +=
                    json_size(json_object_get(t, "hot_keys"));
                part[PART_HLL] += json_size(json_object_get(m, "distinct_hll"));
                part[PART_SAMPLE] +=
                    json_size(json_object_get(m, "key_sample"));
                part[PART_MERGE_HOT] +=
                    json_size(json_object_get(m, "hot_keys"));
        }
        for (i = 0; i < PART_REST; i++)
                sum += part[i];
        part[PART_REST] = file_bytes - sum;
        for (i = 0; i < PART_CNT; i++) {
                double mb = part[i] / 1e6;
                snprintf(id, sizeof(id), "6.report.part.%s", part_names[i]);
                snprintf(what, sizeof(what),
                         "the report's %s (%.1f %% of the file)", part_names[i],
                         100 * part[i] / file_bytes);
                ksb_result(id, what, "-", 0, "MB", &mb, 1);
        }
        json_decref(r);
}

int main(int argc, char **argv)
{
        size_t      topics = 50, msgs = 100000, i;
        int         partitions = 1000, reps = 5, r, a, keep = 0;
        double      rate    = 200000;
        const char *path    = "/tmp/ksb-report-bench.json";
        const char *props[] = {"keyshift.partitions.proposed", "1200,1500,2000",
                               NULL};
        const char *proposed = props[1];
        ksb_topics_t     kt;
        ksb_stream_t     st;
        producer_t       p;
        drainer_t        d;
        pthread_t        th, dth;
        ks_stage_stats_t st0, st1, st2;
        char(*names)[32];
        double ms[32], snap[32], lock[32], sync[32], still[32], v, drain_base,
            drain_during, target_ms = 100, size_mb = 0, still_ms = 0;
        int           parts = 0;
        report_figs_t fig;
        long          bytes;
        char          what[160];
        phase_t       base, during;
        uint64_t      t0;

        for (a = 1; a < argc; a++) {
                if (!strcmp(argv[a], "--topics") && a + 1 < argc)
                        topics = strtoull(argv[++a], NULL, 10);
                else if (!strcmp(argv[a], "--partitions") && a + 1 < argc)
                        partitions = atoi(argv[++a]);
                else if (!strcmp(argv[a], "--msgs") && a + 1 < argc)
                        msgs = strtoull(argv[++a], NULL, 10);
                else if (!strcmp(argv[a], "--reps") && a + 1 < argc)
                        reps = atoi(argv[++a]);
                else if (!strcmp(argv[a], "--path") && a + 1 < argc)
                        path = argv[++a];
                else if (!strcmp(argv[a], "--rate") && a + 1 < argc)
                        rate = atof(argv[++a]);
                else if (!strcmp(argv[a], "--proposed") && a + 1 < argc)
                        props[1] = proposed = argv[++a];
                else if (!strcmp(argv[a], "--keep"))
                        keep = 1;
                else if (!strcmp(argv[a], "--target-ms") && a + 1 < argc)
                        target_ms = atof(argv[++a]);
                else if (!strcmp(argv[a], "--size-target-mb") && a + 1 < argc)
                        size_mb = atof(argv[++a]);
                else if (!strcmp(argv[a], "--unchanged-target-ms") &&
                         a + 1 < argc)
                        still_ms = atof(argv[++a]);
                else if (!strcmp(argv[a], "--parts"))
                        parts = 1;
                else if (!strcmp(argv[a], "--no-proto"))
                        ; /* accepted: the prototype writer is gone */
                else
                        ksb_die("usage: ksb_report [--topics N] [--partitions "
                                "N] [--proposed N,N,N] [--msgs N] [--reps R] "
                                "[--rate MSGS_PER_S] [--path FILE] [--keep] "
                                "[--target-ms MS] [--size-target-mb MB] "
                                "[--unchanged-target-ms MS] [--parts]");
        }
        if (reps < 1 || reps > 32)
                ksb_die("reps: 1..32");
        names = calloc(topics, sizeof(*names));
        ksb_topics_init(&kt, props);
        ksb_stream_zipf(&st, msgs, 100000, 1.0, 0.01, 11);
        for (i = 0; i < topics; i++) {
                size_t j;
                snprintf(names[i], sizeof(names[i]), "topic-%03zu", i);
                ksb_topics_add(&kt, names[i], partitions);
                for (j = 0; j < st.n; j++)
                        ksb_topics_send(&kt, names[i], st.msgs[j].bytes,
                                        st.msgs[j].len, 64);
        }

        memset(&p, 0, sizeof(p));
        p.kt     = &kt;
        p.st     = &st;
        p.names  = names;
        p.topics = topics;
        p.rate   = rate;
        p.lat    = malloc(KSB_LAT_MAX * sizeof(uint32_t));
        memset(&d, 0, sizeof(d));
        d.stage = p.stage = ks_stage_new((size_t)8 << 20);
        if (!p.lat || !p.stage)
                ksb_die("out of memory");
        pthread_create(&dth, NULL, drainer_main, &d);
        ks_stage_stats(p.stage, &st0);
        pthread_create(&th, NULL, producer_main, &p);
        usleep(1000000);
        atomic_store(&p.stop, 1);
        pthread_join(th, NULL);
        base = summarise(&p);
        ks_stage_stats(p.stage, &st1);
        drain_base = atomic_exchange(&d.max_ns, 0.0);

        atomic_store(&p.stop, 0);
        pthread_create(&th, NULL, producer_main, &p);
        usleep(100000);
        t0 = ksb_now_ns();
        for (r = 0; r < reps; r++) {
                one_report(&kt, p.stage, path, &fig);
                ms[r]   = fig.ms;
                snap[r] = fig.max_snapshot_us;
                lock[r] = fig.max_lock_us;
                sync[r] = fig.sync_ms;
                ksb_note("report %d: %.1f ms (snapshots + topic JSON %.1f ms), "
                         "%zu topics rebuilt, longest snapshot %.1f us, "
                         "longest lock hold %.1f us",
                         r, ms[r], fig.collect_ms, fig.rebuilt, snap[r],
                         lock[r]);
        }
        atomic_store(&p.stop, 1);
        pthread_join(th, NULL);
        during = summarise(&p);
        ks_stage_stats(p.stage, &st2);
        drain_during = atomic_exchange(&d.max_ns, 0.0);
        ksb_note("report file %s: %ld bytes; %d reports in %.1f s", path,
                 file_size(path), reps, (double)(ksb_now_ns() - t0) / 1e9);
        /* the producer stopped: one report takes what it sent last, then
         * no topic changes (the plugin's report after an idle interval) */
        one_report(&kt, p.stage, path, &fig);
        for (r = 0; r < reps; r++) {
                one_report(&kt, p.stage, path, &fig);
                still[r] = fig.ms;
                if (fig.rebuilt)
                        ksb_die("%zu topics rebuilt with none changed",
                                fig.rebuilt);
        }
        atomic_store(&d.stop, 1);
        pthread_join(dth, NULL);
        bytes = file_size(path);
        ksb_note("on_send without reports: p50 %.0f p99 %.0f p99.99 %.0f "
                 "max %.0f ns, %zu calls over 5 us; %zu calls, %llu analysed "
                 "inline, %llu not analysed (ring full)",
                 base.p50, base.p99, base.p9999, base.max, base.over_5us,
                 base.n, inline_of(&st1) - inline_of(&st0),
                 (unsigned long long)(st1.skipped_full - st0.skipped_full));
        ksb_note("on_send during reports:  p50 %.0f p99 %.0f p99.99 %.0f "
                 "max %.0f ns, %zu calls over 5 us; %zu calls, %llu analysed "
                 "inline, %llu not analysed (ring full); drainer passes %zu",
                 during.p50, during.p99, during.p9999, during.max,
                 during.over_5us, during.n, inline_of(&st2) - inline_of(&st1),
                 (unsigned long long)(st2.skipped_full - st1.skipped_full),
                 d.passes);
        snprintf(what, sizeof(what),
                 "report build + write, %zu topics x %d partitions x "
                 "proposed %s",
                 topics, partitions, proposed);
        ksb_result("6.report.build_write", what, "<=", target_ms, "ms", ms,
                   (size_t)reps);
        snprintf(what, sizeof(what),
                 "report build + write with no topic changed since the last "
                 "(%zu topics, their kept text written again)",
                 topics);
        ksb_result("6.report.unchanged_build_write", what,
                   still_ms > 0 ? "<=" : "-", still_ms, "ms", still,
                   (size_t)reps);
        v = (double)bytes / 1e6;
        snprintf(what, sizeof(what),
                 "report size, %zu topics x %d partitions x proposed %s",
                 topics, partitions, proposed);
        ksb_result("6.report.size", what, size_mb > 0 ? "<=" : "-", size_mb,
                   "MB", &v, 1);
        if (parts)
                report_parts(path, (double)bytes);
        ksb_result("6.report.sync_wait",
                   "the reporter's wait for the drainer's flush before a "
                   "report (ks_stage_sync(); the flush is the drainer's "
                   "work, counted in target 4)",
                   "-", 0, "ms", sync, (size_t)reps);
        ksb_result("6.report.snapshot_max",
                   "longest ks_topic_snapshot() call (allocation, copies "
                   "under the topic lock, unpacking and sorting after it)",
                   "-", 0, "us", snap, (size_t)reps);
        ksb_result("6.report.lock_held_max",
                   "longest hold of a topic lock inside ks_topic_snapshot() "
                   "(measured inside): how long the drainer (not on_send) "
                   "can wait for it",
                   "-", 0, "us", lock, (size_t)reps);
        /* what reports add to on_send's tail: on_send takes no lock a
         * report holds, so the tail of a 2-vCPU guest (timer interrupts,
         * preemption) is the same with and without reports */
        v = (during.p9999 - base.p9999) / 1000.0;
        ksb_result("6.report.on_send_p9999_added",
                   "on_send p99.99 while reports are built - without", "<=", 5,
                   "us", &v, 1);
        v = (during.max - base.max) / 1000.0;
        ksb_result("6.report.on_send_max_added",
                   "longest on_send while reports are built - without", "<=", 5,
                   "us", &v, 1);
        v = during.max / 1000.0;
        ksb_result("6.report.on_send_max_during",
                   "longest on_send (lookup + ks_stage_push) while reports "
                   "are built",
                   "-", 0, "us", &v, 1);
        v = during.p9999 / 1000.0;
        ksb_result("6.report.on_send_p9999_during",
                   "on_send p99.99 while reports are built", "-", 0, "us", &v,
                   1);
        v = drain_during / 1000.0;
        ksb_result("6.report.drain_max_during",
                   "longest drainer pass (ks_stage_collect()) while reports "
                   "are built",
                   "-", 0, "us", &v, 1);
        v = drain_base / 1000.0;
        ksb_result("6.report.drain_max_baseline",
                   "longest drainer pass with no report (1 s)", "-", 0, "us",
                   &v, 1);
        v = base.max / 1000.0;
        ksb_result("6.report.on_send_max_baseline",
                   "longest on_send with no report (same threads, 1 s)", "-", 0,
                   "us", &v, 1);
        v = base.p9999 / 1000.0;
        ksb_result("6.report.on_send_p9999_baseline",
                   "on_send p99.99 with no report (same threads, 1 s)", "-", 0,
                   "us", &v, 1);
        free(p.lat);
        free(names);
        ksb_stream_free(&st);
        ks_stage_destroy(p.stage);
        ksb_topics_destroy(&kt);
        if (!keep)
                unlink(path);
        return 0;
}
