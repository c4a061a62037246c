/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ksb_memory.c
 * @brief Target 5: keyshift's heap after 10 million distinct keys across
 *        100 topics, with its properties at their defaults, measured
 *        in-process with mallinfo2() (bytes in use in malloc's arenas plus
 *        its mmapped chunks) as deltas around keyshift's own calls.
 *
 * Figures:
 *  - per topic: heap after creating the topics (count known: 6 current,
 *    12,16,24 proposed), divided by the topics;
 *  - per key: heap growth while the 10 million distinct keys are
 *    recorded (key i to topic i mod 100), divided by the keys (0 means
 *    bounded: the sketches are fixed-size);
 *  - total after the keys (the target: <= 64 MiB);
 *  - peak while a report is built: the reporter holds one topic's JSON
 *    at a time (written before the next is built); the largest heap seen
 *    while one is held.
 * Optionally with other properties (name=value arguments), e.g.
 * keyshift.key.sample.size=1024, to show what lowers it.
 *
 * Usage: ksb_memory [--topics N] [--keys N] [keyshift.x=y ...]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ks_budget.h"
#include "ks_report.h"
#include "ksb_keys.h"
#include "ksb_stats.h"
#include "ksb_topics.h"

#define KSB_MIB (1024.0 * 1024.0)
#define KSB_PROPS_MAX 32

typedef struct collect {
        ks_report_writer_t      *w;
        ks_warn_list_t          *wl;
        ks_report_opts_t         opts;
        size_t                   peak; /**< heap while a topic's JSON is held */
        const ks_topic_params_t *asked; /**< the sketch sizes asked */
        ks_sketch_tally_t        tally; /**< SKETCHES_REDUCED's figures */
} collect_t;

/** As plugin/ks_reporter.c collect_topic(): one topic's JSON at a time,
 *  written before the next is built; notes the heap while it is held. */
static void collect_topic(ks_topic_t *t, void *opaque)
{
        collect_t          *c = opaque;
        ks_topic_snapshot_t snap;
        json_t             *o;
        size_t              h;

        if (ks_topic_snapshot(t, &snap))
                return;
        if ((o = ks_report_topic(&snap, &c->opts, c->wl)))
                ks_report_writer_topic_snapshot(c->w, &snap, o);
        ks_sketch_tally_add(&c->tally, &snap, c->asked);
        if ((h = ksb_heap_bytes()) > c->peak)
                c->peak = h;
        json_decref(o);
        ks_topic_snapshot_free(&snap);
}

int main(int argc, char **argv)
{
        const char *props[KSB_PROPS_MAX * 2 + 3] = {
            "keyshift.partitions.proposed", "12,16,24"};
        char  *own[KSB_PROPS_MAX];
        size_t nprops = 2, topics = 100, keys = 10000000, i, nown = 0;
        size_t h0, h1, h2, h3, fixed;
        ks_registry_budget_t budget;
        ksb_topics_t         kt;
        ks_topic_t         **tp;
        char               **names;
        collect_t            c;
        ks_warn_list_t       wl;
        ks_report_writer_t   w;
        ks_report_producer_t prod = {.client_id          = "ksb",
                                     .client_name        = "ksb#producer-1",
                                     .librdkafka_version = "2.0.2",
                                     .partitioner        = "consistent_random",
                                     .partitioner_source = "partitioner",
                                     .sticky_linger_ms   = 10};
        char                 errstr[512];
        double               v;
        char                 what[128];
        int                  a;

        for (a = 1; a < argc; a++) {
                char *eq;
                if (!strcmp(argv[a], "--topics") && a + 1 < argc)
                        topics = strtoull(argv[++a], NULL, 10);
                else if (!strcmp(argv[a], "--keys") && a + 1 < argc)
                        keys = strtoull(argv[++a], NULL, 10);
                else if ((eq = strchr(argv[a], '=')) && nown < KSB_PROPS_MAX) {
                        own[nown]               = strdup(argv[a]);
                        own[nown][eq - argv[a]] = '\0';
                        props[nprops++]         = own[nown];
                        props[nprops++] = own[nown] + (eq - argv[a]) + 1;
                        nown++;
                } else
                        ksb_die("usage: ksb_memory [--topics N] [--keys N] "
                                "[keyshift.x=y ...]");
        }
        props[nprops] = NULL;
        tp            = calloc(topics, sizeof(*tp));

        names = calloc(topics, sizeof(*names));
        for (i = 0; i < topics; i++) {
                names[i] = malloc(32);
                snprintf(names[i], 32, "topic-%03zu", i);
        }
        h0 = ksb_heap_bytes();
        ksb_topics_init(&kt, props);
        for (i = 0; i < topics; i++)
                tp[i] = ksb_topics_add(&kt, names[i], 6);
        /* this thread's staging ring (512 KiB, a fixed cost per producing
         * thread) is allocated with its first message */
        ksb_topics_on_send(&kt, names[0], "warm-up", 7, 64);
        ks_stage_drain(kt.stage);
        h1 = ksb_heap_bytes();
        /* the produce path: staged by on_send (the thread's ring), counted
         * and analysed by the drainer's work (its key table) */
        for (i = 0; i < keys; i++) {
                ksb_key_t k;
                ksb_key_make(&k, (uint32_t)i, 0);
                ksb_topics_on_send(&kt, names[i % topics], k.bytes, k.len, 64);
                if ((i & 4095) == 4095)
                        ks_stage_collect(kt.stage);
        }
        ks_stage_drain(kt.stage);
        h2 = ksb_heap_bytes();

        ks_warn_list_init(&wl);
        c.w     = &w;
        c.wl    = &wl;
        c.opts  = ksb_topics_report_opts(&kt, kt.conf.hot_keys);
        c.peak  = 0;
        c.asked = &kt.params;
        memset(&c.tally, 0, sizeof(c.tally));
        c.opts.bulk_by_writer = 1;
        if (ks_report_writer_open(&w, "/tmp/ksb-memory-report.json") ||
            ks_report_writer_begin(&w, &prod, &c.opts))
                ksb_die("report not started: %s", w.errstr);
        ks_registry_foreach(&kt.reg, collect_topic, &c);
        if (ks_report_writer_end(&w, &wl, errstr, sizeof(errstr)))
                ksb_die("report not written: %s", errstr);
        unlink("/tmp/ksb-memory-report.json");
        h3 = c.peak;
        ks_warn_list_clear(&wl);

        ksb_note("properties:%s", nprops > 2 ? "" : " defaults (+ 3 proposed)");
        for (i = 2; i < nprops; i += 2)
                ksb_note("  %s=%s", props[i], props[i + 1]);
        ksb_note("heap: registry + %zu topics %.1f MiB, after %zu keys %.1f "
                 "MiB, while a report is built %.1f MiB",
                 topics, (double)(h1 - h0) / KSB_MIB, keys,
                 (double)(h2 - h0) / KSB_MIB, (double)(h3 - h0) / KSB_MIB);
        ks_registry_budget(&kt.reg, &budget);
        ksb_note("sketch budget: %zu of %zu topics given smaller sketches "
                 "(key sample: %zu, down to %zu of %zu; hot-key counters: "
                 "%zu, down to %zu of %zu; mixed-key sample: %zu, down to %zu "
                 "of %zu); keyshift.memory.max.mb=%d would keep the sizes "
                 "asked (SKETCHES_REDUCED)",
                 c.tally.reduced, c.tally.topics, c.tally.key_sample_reduced,
                 c.tally.key_sample_min, kt.params.key_sample_size,
                 c.tally.topk_reduced, c.tally.topk_min,
                 kt.params.topk_capacity, c.tally.mixed_sample_reduced,
                 c.tally.mixed_sample_min, kt.params.mixed_sample_size,
                 c.tally.reduced ? ks_budget_memory_mb_for(
                                       budget.needed, kt.conf.memory_max_mb,
                                       KS_MEMORY_MAX_MB_MAX)
                                 : kt.conf.memory_max_mb);
        fixed = ks_stage_batch_bytes(kt.stage) +
                (size_t)KS_STAGE_RING_ENTRIES * 64; /* one thread's ring */
        v = (double)fixed / KSB_MIB;
        ksb_result("5.memory.per_producer",
                   "drainer's key table + one producing thread's ring", "-", 0,
                   "MiB", &v, 1);
        v = ((double)(h1 - h0) - (double)fixed) / (double)topics / 1024.0;
        ksb_result("5.memory.per_topic",
                   "heap per topic (defaults, 3 proposed)", "-", 0, "KiB", &v,
                   1);
        v = ((double)h2 - (double)h1) / (double)keys;
        ksb_result("5.memory.per_key", "heap growth per distinct key", "<=", 0,
                   "B", &v, 1);
        v = (double)(h2 - h0) / KSB_MIB;
        snprintf(what, sizeof(what),
                 "heap after %zu distinct keys across %zu topics", keys,
                 topics);
        ksb_result("5.memory.total", what, "<=", 64, "MiB", &v, 1);
        v = (double)(h3 - h0) / KSB_MIB;
        snprintf(what, sizeof(what),
                 "peak heap while a report of %zu topics is written", topics);
        ksb_result("5.memory.report_peak", what, "<=", 64, "MiB", &v, 1);
        ksb_topics_destroy(&kt);
        for (i = 0; i < nown; i++)
                free(own[i]);
        for (i = 0; i < topics; i++)
                free(names[i]);
        free(names);
        free(tp);
        return 0;
}
