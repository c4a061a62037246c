/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_metrics.h
 * @brief A report as Prometheus metrics: text exposition format 0.0.4,
 *        for node_exporter's textfile collector (docs/metrics.md).
 *
 * One implementation for both writers: the plugin feeds each topic's
 * object to ks_metrics_topic() while it writes the report topic by topic
 * (only one topic's JSON exists at a time), `keyshift metrics` feeds the
 * parsed report's topics through ks_metrics_report(). Samples are kept per
 * metric family, because the format wants each family's lines together,
 * and written with their HELP and TYPE lines at the end.
 *
 * Keys never become label values (they can be personal data): a hot key
 * is named by its rank in the topic's `hot_keys[]`.
 *
 * @locality one thread per ks_metrics_t.
 */
#ifndef KS_METRICS_H
#define KS_METRICS_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

/** Hot keys exported per topic (ranks 1..this): each adds a few series. */
#define KS_METRICS_HOT_KEYS_MAX 10

typedef struct ks_metrics ks_metrics_t;

/**
 * @brief Starts the metrics of one report from its head (`schema`,
 *        `generated_at`, `uptime_s`, `producer`, `source`: the members
 *        before `topics`; a whole report will do).
 * @returns a new builder, or NULL on ENOMEM.
 */
ks_metrics_t *ks_metrics_new(const json_t *head);

/** @brief Adds topic @p name's series from its report object @p topic
 *         (absent or null members add no series). */
void ks_metrics_topic(ks_metrics_t *m, const char *name, const json_t *topic);

/** What one topic added to each family (ks_metrics_topic_kept()): kept
 *  with the topic's report text, to be added again while the topic does
 *  not change (ks_report_reuse.c). Its series carry this builder's
 *  common labels (the producer's client_id and pid). */
typedef struct ks_metrics_kept ks_metrics_kept_t;

/** @brief ks_metrics_topic(), and @returns a copy of the lines it added
 *         (free with ks_metrics_kept_free()), NULL on ENOMEM. */
ks_metrics_kept_t *ks_metrics_topic_kept(ks_metrics_t *m, const char *name,
                                         const json_t *topic);
/** @brief Adds the lines @p k kept again, each to its family. */
void ks_metrics_topic_again(ks_metrics_t *m, const ks_metrics_kept_t *k);
void ks_metrics_kept_free(ks_metrics_kept_t *k);

/** @brief Adds the producer-level warnings (the report's top `warnings`). */
void ks_metrics_warnings(ks_metrics_t *m, const json_t *warnings);

/** @brief Writes every family (HELP, TYPE, samples) to @p fp.
 *  @returns 0, or -1 on ENOMEM while building or a write error. */
int ks_metrics_print(const ks_metrics_t *m, FILE *fp);

/**
 * @brief Writes the metrics to @p path atomically, as the report is
 *        written (a temporary file beside it, fsync'ed, renamed: the
 *        temporary name does not end in .prom, so the textfile collector
 *        never reads it). @returns 0, or -1 with @p errstr set.
 */
int ks_metrics_write_atomic(const ks_metrics_t *m, const char *path,
                            char *errstr, size_t errstr_size);

void ks_metrics_free(ks_metrics_t *m);

/** @brief The whole of a parsed report: ks_metrics_new(), every topic,
 *         the producer warnings, ks_metrics_print(). A topic's `hot_keys`
 *         may be rows (ks_report_topic()'s) or the file's columns
 *         (ks_report_hot_keys_rows() reads them). @returns 0 or -1. */
int ks_metrics_report(const json_t *report, FILE *fp);

#endif /* KS_METRICS_H */
