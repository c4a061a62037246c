/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_report_reuse.c
 * @brief A report's topics, each rebuilt only when it changed
 *        (ks_report_reuse.h).
 */
#include "ks_report_reuse.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/** What is kept with a topic between two reports. */
typedef struct kept {
        uint64_t         gen;      /**< ks_topic_change_gen() it was built at */
        ks_report_text_t text;     /**< as written, from the name on */
        uint64_t         messages; /**< the topic's, for the report's sum */
        /** its sketch sizes, for SKETCHES_REDUCED's tally */
        size_t             sample_capacity, mixed_capacity, topk_capacity;
        ks_warn_t         *warnings; /**< its own, as added to the list */
        size_t             warning_cnt;
        ks_metrics_kept_t *metrics; /**< its series, or NULL */
        int                valid;   /**< complete: may be written again */
} kept_t;

static void kept_free(void *p)
{
        kept_t *k = p;

        if (!k)
                return;
        ks_report_text_free(&k->text);
        free(k->warnings);
        ks_metrics_kept_free(k->metrics);
        free(k);
}

static double clock_ns(clockid_t id)
{
        struct timespec ts;

        clock_gettime(id, &ts);
        return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double now_ns(void)
{
        return clock_ns(CLOCK_MONOTONIC);
}

/** @returns 1 when @p k holds topic text of generation @p gen that
 *           rt can write again (with metrics lines when it wants them). */
static int reusable(const ks_report_topics_t *rt, const kept_t *k, uint64_t gen)
{
        return rt->reuse && k && k->valid && gen && k->gen == gen &&
               (!rt->metrics || k->metrics);
}

/** @brief Writes @p k again: text, warnings, sketch sizes, series. */
static void write_kept(ks_report_topics_t *rt, ks_topic_t *t, const kept_t *k)
{
        size_t i;

        if (ks_report_writer_topic_text(rt->w, k->text.b, k->text.len,
                                        k->messages))
                return;
        if (rt->on_text)
                rt->on_text(rt->on_text_arg, ks_topic_name(t), k->text.b,
                            k->text.len, k->messages);
        for (i = 0; i < k->warning_cnt; i++)
                ks_warn_add(rt->wl, k->warnings[i].code, ks_topic_name(t), "%s",
                            k->warnings[i].message);
        ks_sketch_tally_add_sizes(&rt->tally, k->sample_capacity,
                                  k->mixed_capacity, k->topk_capacity,
                                  rt->asked);
        ks_metrics_topic_again(rt->metrics, k->metrics);
        rt->reused++;
}

/**
 * @brief Fills @p k from what was just written of snapshot @p s: the
 *        warnings the topic added to rt->wl from @p first_warning on, its
 *        sizes and messages, generation @p gen. Its text is already in
 *        k->text. @returns 0, or -1 on ENOMEM (then it is not valid).
 */
static int fill_kept(const ks_report_topics_t *rt, kept_t *k,
                     const ks_topic_snapshot_t *s, size_t first_warning,
                     uint64_t gen)
{
        size_t n = rt->wl->cnt - first_warning;

        free(k->warnings);
        k->warnings    = NULL;
        k->warning_cnt = 0;
        if (n && !(k->warnings = malloc(n * sizeof(*k->warnings))))
                return -1;
        if (n)
                memcpy(k->warnings, rt->wl->items + first_warning,
                       n * sizeof(*k->warnings));
        k->warning_cnt     = n;
        k->messages        = s->c.total.messages;
        k->sample_capacity = s->sample_capacity;
        k->mixed_capacity  = s->mixed_summary.capacity;
        k->topk_capacity   = s->topk_capacity;
        k->gen             = gen;
        return k->text.failed || (rt->metrics && !k->metrics) ? -1 : 0;
}

void ks_report_topics_add(ks_topic_t *t, void *opaque)
{
        ks_report_topics_t *rt = opaque;
        kept_t             *k  = ks_topic_kept(t);
        uint64_t            gen;
        ks_topic_snapshot_t snap;
        ks_report_text_t    scratch = {0}, *keep;
        json_t             *o;
        size_t              first_warning;
        double              t0, t1, t2, c0;

        if (rt->w->failed)
                return;
        gen = ks_topic_change_gen(t);
        if (reusable(rt, k, gen)) {
                write_kept(rt, t, k);
                return;
        }
        t0 = now_ns();
        if (ks_topic_snapshot(t, &snap)) {
                rt->oom = 1;
                return;
        }
        t1 = now_ns();
        rt->snapshot_ns += t1 - t0;
        if (t1 - t0 > rt->max_snapshot_ns)
                rt->max_snapshot_ns = t1 - t0;
        if ((double)snap.lock_held_ns > rt->max_lock_ns)
                rt->max_lock_ns = (double)snap.lock_held_ns;
        if (rt->reuse && gen && !k) {
                if ((k = calloc(1, sizeof(*k))))
                        ks_topic_keep(t, k, kept_free);
        }
        if (k)
                k->valid = 0; /* until it holds this report's text */
        first_warning = rt->wl->cnt;
        c0            = clock_ns(CLOCK_THREAD_CPUTIME_ID);
        if (!(o = ks_report_topic(&snap, rt->opts, rt->wl))) {
                rt->oom = 1;
                ks_topic_snapshot_free(&snap);
                return;
        }
        t2 = now_ns();
        rt->build_ns += t2 - t1;
        /* the text kept for the next report, else (when someone wants
         * it now) a copy for this report only */
        keep = rt->reuse && gen && k ? &k->text : rt->on_text ? &scratch : NULL;
        if (!ks_report_writer_topic_keep(rt->w, &snap, o, keep)) {
                if (rt->on_text)
                        rt->on_text(rt->on_text_arg, ks_topic_name(t),
                                    keep->failed ? NULL : keep->b, keep->len,
                                    snap.c.total.messages);
                ks_sketch_tally_add(&rt->tally, &snap, rt->asked);
                rt->rebuilt++;
                if (rt->reuse && gen && k) {
                        ks_metrics_kept_free(k->metrics);
                        /* the bulk left null in o is none of the metrics' */
                        k->metrics = rt->metrics
                                         ? ks_metrics_topic_kept(
                                               rt->metrics, ks_topic_name(t), o)
                                         : NULL;
                        k->valid = !fill_kept(rt, k, &snap, first_warning, gen);
                } else {
                        ks_metrics_topic(rt->metrics, ks_topic_name(t), o);
                }
        }
        rt->write_ns += now_ns() - t2;
        rt->cpu_ns += clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
        ks_report_text_free(&scratch);
        json_decref(o);
        ks_topic_snapshot_free(&snap);
}
