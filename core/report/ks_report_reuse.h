/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_report_reuse.h
 * @brief A report's topics written one by one, each rebuilt only when it
 *        changed since the report that wrote its text last (issue 29,
 *        "Incremental"): a topic unchanged since is not snapshotted nor
 *        built again; the text kept with it (ks_topic_keep()) is written
 *        again, with its warnings, sketch sizes and metrics lines.
 *
 * What "changed" means: ks_topic_note_changes(), which the caller runs on
 * every topic before the report (plugin/ks_reporter.c does), found a new
 * fingerprint of everything a message, an acknowledgement or a metadata
 * answer changes, and counted a new generation (ks_topic_change_gen()).
 * A topic's text holds nothing else: its time-driven figures (rates, the
 * peak, seconds measured, sizing and migration built on them,
 * INSUFFICIENT_DATA, `analysis.uptime_s`) are as of the report that found
 * it changed, its `last_changed_at`, and stay so while it does not change
 * (docs/report-schema.md). The text is kept exactly as written, so a
 * reused topic is byte-identical to its previous report.
 *
 * Cost: a reused topic is one lock to read its generation and one copy
 * of its text; the kept texts take what the topics take in the report
 * (a few KiB each in report v2), freed with the topics.
 *
 * @locality the thread writing reports (keyshift's reporter thread, then
 *           the thread writing the final report after it stopped): the
 *           kept text is read and replaced without a lock.
 */
#ifndef KS_REPORT_REUSE_H
#define KS_REPORT_REUSE_H

#include <stddef.h>
#include <stdint.h>

#include "ks_metrics.h"
#include "ks_report.h"

/** One report's topics: what ks_report_topics_add() needs and counts. */
typedef struct ks_report_topics {
        /* in */
        ks_report_writer_t     *w;
        ks_warn_list_t         *wl;
        const ks_report_opts_t *opts; /**< bulk_by_writer set */
        /** the sketch sizes asked (SKETCHES_REDUCED's tally) */
        const ks_topic_params_t *asked;
        ks_metrics_t            *metrics; /**< NULL: no metrics */
        /** 1: reuse the kept text of unchanged topics, and keep each
         *  rebuilt topic's; 0: rebuild every topic, keep nothing */
        int reuse;
        /** called with each topic's text as written (from its name to
         *  its closing brace, ks_report_text_t) and its messages, once the
         *  topic is in the report; @p text NULL when the topic was
         *  written but its text could not be kept (ENOMEM). NULL: not
         *  called. */
        void (*on_text)(void *arg, const char *name, const char *text,
                        size_t len, uint64_t messages);
        void *on_text_arg;

        /* out */
        ks_sketch_tally_t tally;   /**< the topics written */
        int               oom;     /**< a topic could not be built */
        size_t            rebuilt; /**< topics snapshotted and built */
        size_t            reused;  /**< topics whose kept text was written */
        /** of the rebuilt topics, ns (CLOCK_MONOTONIC): snapshots, the
         *  longest, the longest lock hold inside one, building their JSON,
         *  writing it (bench/ksb_report prints them) */
        double snapshot_ns, max_snapshot_ns, max_lock_ns, build_ns, write_ns;
        /** the thread's CPU time building and writing them, ns */
        double cpu_ns;
} ks_report_topics_t;

/**
 * @brief Writes topic @p t into rt->w: its kept text when it did not
 *        change since that text was written (and rt->reuse), else from a
 *        snapshot, keeping the new text when rt->reuse. Its warnings go to
 *        rt->wl, its series to rt->metrics, its sketch sizes to
 *        rt->tally, either way. A ks_registry_foreach() callback:
 *        @p opaque is the ks_report_topics_t.
 * @locks the topic's, to read its generation and for its snapshot.
 */
void ks_report_topics_add(ks_topic_t *t, void *opaque);

#endif /* KS_REPORT_REUSE_H */
