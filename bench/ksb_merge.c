/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ksb_merge.c
 * @brief Issue 29's goal for `keyshift merge`: 20 reports of 1,000 topics
 *        each merged in under 10 s and 2 GiB.
 *
 *   ksb_merge --cli PATH [--reports 20] [--topics 1000] [--partitions 100]
 *             [--proposed 200,300,400] [--msgs 2000] [--dir DIR] [--keep]
 *             [--limit-gib 4]
 *
 * Each report is one producer's, written as the plugin writes it
 * (ks_report_topics_add(), bench/ksb_topics.c's set-up): --topics topics
 * of --partitions partitions, each sent --msgs Zipf MMSI messages (1 %
 * int32) of a stream seeded by the report's number, so the producers
 * share most keys and differ in some (what merging sketches is for). The
 * producers differ by client_id and pid. Then `keyshift merge` (the built
 * command, --cli) merges them into one file; its wall time and maximum
 * resident set (wait4()'s ru_maxrss) are the figures, with the inputs' and
 * the output's sizes. The command runs under an address-space limit
 * (--limit-gib, RLIMIT_AS) so that a merge far over the goal fails on
 * its own instead of taking a shared machine's memory: then the figure is
 * the limit, not met.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ks_report.h"
#include "ks_report_reuse.h"
#include "ksb_keys.h"
#include "ksb_stats.h"
#include "ksb_topics.h"

#define KSB_MERGE_MAX 64

/** @returns the size of @p path in bytes, 0 when it cannot be read. */
static double size_of(const char *path)
{
        struct stat st;

        return stat(path, &st) ? 0 : (double)st.st_size;
}

static void note_changes(ks_topic_t *t, void *opaque)
{
        ks_topic_note_changes(t, *(const int64_t *)opaque);
}

/** @brief Writes producer @p r's report of @p topics topics to @p path. */
static void write_report(int r, size_t topics, int partitions,
                         const char *proposed, size_t msgs, const char *path)
{
        const char  *props[] = {"keyshift.partitions.proposed", proposed, NULL};
        char         client[32], name[48];
        ksb_topics_t kt;
        ksb_stream_t st;
        ks_report_producer_t prod = {.client_id          = client,
                                     .client_name        = name,
                                     .pid                = 100000 + r,
                                     .librdkafka_version = "2.0.2",
                                     .partitioner        = "consistent_random",
                                     .partitioner_source = "partitioner",
                                     .sticky_linger_ms   = 10,
                                     .report_interval_ms = 60000,
                                     .report_path        = path};
        ks_report_opts_t     opts;
        ks_report_topics_t   rt;
        ks_report_writer_t   w;
        ks_warn_list_t       wl;
        char                 errstr[512], topic[32];
        size_t               i, j;
        int64_t              now;

        snprintf(client, sizeof(client), "ksb-merge-%d", r);
        snprintf(name, sizeof(name), "%s#producer-1", client);
        ksb_topics_init(&kt, props);
        ksb_stream_zipf(&st, msgs, 100000, 1.0, 0.01, 1000 + (uint64_t)r);
        for (i = 0; i < topics; i++) {
                snprintf(topic, sizeof(topic), "topic-%04zu", i);
                ksb_topics_add(&kt, topic, partitions);
                for (j = 0; j < st.n; j++)
                        ksb_topics_send(&kt, topic, st.msgs[j].bytes,
                                        st.msgs[j].len, 64);
        }
        opts                = ksb_topics_report_opts(&kt, kt.conf.hot_keys);
        opts.bulk_by_writer = 1;
        opts.final          = 1;
        prod.started_at_ms  = opts.now_ms - 60000;
        now                 = opts.now_ms;
        ks_registry_foreach(&kt.reg, note_changes, &now);
        ks_warn_list_init(&wl);
        memset(&rt, 0, sizeof(rt));
        rt.w     = &w;
        rt.wl    = &wl;
        rt.opts  = &opts;
        rt.asked = &kt.params;
        if (ks_report_writer_open(&w, path) ||
            ks_report_writer_begin(&w, &prod, &opts))
                ksb_die("report not started: %s", w.errstr);
        ks_registry_foreach(&kt.reg, ks_report_topics_add, &rt);
        if (ks_report_writer_end(&w, &wl, errstr, sizeof(errstr)))
                ksb_die("report not written: %s", errstr);
        ks_warn_list_clear(&wl);
        ksb_stream_free(&st);
        ksb_topics_destroy(&kt);
}

int main(int argc, char **argv)
{
        const char   *cli = NULL, *dir = "/tmp", *proposed = "200,300,400";
        size_t        topics = 1000, msgs = 2000;
        int           reports = 20, partitions = 100, keep = 0, a, r, status;
        double        limit_gib = 4;
        char          paths[KSB_MERGE_MAX][300], out[300], what[200];
        char        **args;
        double        in_bytes = 0, wall, rss, v;
        uint64_t      t0;
        struct rusage ru;
        pid_t         pid;

        for (a = 1; a < argc; a++) {
                if (!strcmp(argv[a], "--cli") && a + 1 < argc)
                        cli = argv[++a];
                else if (!strcmp(argv[a], "--reports") && a + 1 < argc)
                        reports = atoi(argv[++a]);
                else if (!strcmp(argv[a], "--topics") && a + 1 < argc)
                        topics = strtoull(argv[++a], NULL, 10);
                else if (!strcmp(argv[a], "--partitions") && a + 1 < argc)
                        partitions = atoi(argv[++a]);
                else if (!strcmp(argv[a], "--proposed") && a + 1 < argc)
                        proposed = argv[++a];
                else if (!strcmp(argv[a], "--msgs") && a + 1 < argc)
                        msgs = strtoull(argv[++a], NULL, 10);
                else if (!strcmp(argv[a], "--dir") && a + 1 < argc)
                        dir = argv[++a];
                else if (!strcmp(argv[a], "--keep"))
                        keep = 1;
                else if (!strcmp(argv[a], "--limit-gib") && a + 1 < argc)
                        limit_gib = atof(argv[++a]);
                else
                        ksb_die("usage: ksb_merge --cli PATH [--reports N] "
                                "[--topics N] [--partitions N] [--proposed "
                                "N,N,N] [--msgs N] [--dir DIR] [--keep] "
                                "[--limit-gib G]");
        }
        if (!cli)
                ksb_die("--cli: the keyshift command to run");
        if (reports < 2 || reports > KSB_MERGE_MAX)
                ksb_die("--reports: 2..%d", KSB_MERGE_MAX);
        t0 = ksb_now_ns();
        for (r = 0; r < reports; r++) {
                snprintf(paths[r], sizeof(paths[r]),
                         "%s/ksb-merge-%ld-%02d.json", dir, (long)getpid(), r);
                write_report(r, topics, partitions, proposed, msgs, paths[r]);
                in_bytes += size_of(paths[r]);
        }
        snprintf(out, sizeof(out), "%s/ksb-merge-%ld-out.json", dir,
                 (long)getpid());
        ksb_note("%d reports of %zu topics written in %.1f s: %.1f MB in all",
                 reports, topics, (double)(ksb_now_ns() - t0) / 1e9,
                 in_bytes / 1e6);

        args    = calloc((size_t)reports + 5, sizeof(*args));
        args[0] = (char *)cli;
        args[1] = "merge";
        for (r = 0; r < reports; r++)
                args[2 + r] = paths[r];
        args[2 + reports] = "-o";
        args[3 + reports] = out;
        t0                = ksb_now_ns();
        if ((pid = fork()) == 0) {
                struct rlimit rl;
                rl.rlim_cur = rl.rlim_max =
                    (rlim_t)(limit_gib * 1024 * 1024 * 1024);
                setrlimit(RLIMIT_AS, &rl);
                execv(cli, args);
                _exit(127);
        }
        if (pid < 0 || wait4(pid, &status, 0, &ru) != pid)
                ksb_die("cannot run %s", cli);
        wall = (double)(ksb_now_ns() - t0) / 1e9;
        rss  = (double)ru.ru_maxrss / (1024.0 * 1024.0); /* KiB -> GiB */
        ksb_note("keyshift merge: %.2f s wall, %.2f s user, %.2f s system, "
                 "max RSS %.0f MiB; output %.1f MB",
                 wall, (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
                 (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6,
                 rss * 1024, size_of(out) / 1e6);
        if (!WIFEXITED(status) || WEXITSTATUS(status)) {
                ksb_note("keyshift merge failed (status %d) under a %.1f GiB "
                         "address-space limit after %.1f s: taken as over "
                         "the limit",
                         status, limit_gib, wall);
                /* not met, whatever the limit: no time, no size measured */
                rss  = limit_gib > 2 ? limit_gib : 2 + limit_gib;
                wall = NAN;
        }
        snprintf(what, sizeof(what),
                 "keyshift merge of %d reports of %zu topics x %d partitions "
                 "(%.0f MB in all): wall time",
                 reports, topics, partitions, in_bytes / 1e6);
        ksb_result("merge.wall", what, "<=", 10, "s", &wall, 1);
        snprintf(what, sizeof(what),
                 "keyshift merge of %d reports of %zu topics: maximum "
                 "resident set",
                 reports, topics);
        ksb_result("merge.max_rss", what, "<=", 2, "GiB", &rss, 1);
        v = in_bytes / reports / 1e6;
        ksb_result("merge.input_size", "one input report's size", "-", 0, "MB",
                   &v, 1);
        if (!keep) {
                for (r = 0; r < reports; r++)
                        unlink(paths[r]);
                unlink(out);
        }
        free(args);
        return 0;
}
