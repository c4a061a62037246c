/**
 * @file ks_report.h
 * @brief The JSON report (schema keyshift.report.v1, documented in
 *        docs/report-schema.md): built with jansson from topic snapshots,
 *        written atomically.
 *
 * @locality keyshift's reporter thread, or the application thread that
 *           destroys the producer (final report). Touches no topic lock:
 *           it reads snapshots only.
 */
#ifndef KS_REPORT_H
#define KS_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "ks_sizing.h"
#include "ks_topic.h"
#include "ks_warn.h"

typedef struct ks_report_producer {
        const char *client_id;
        const char *client_name; /**< rd_kafka_name() */
        long        pid;
        const char *librdkafka_version;
        const char *partitioner;
        const char *partitioner_source; /**< the property it came from */
        int         sticky_linger_ms;
        int64_t     started_at_ms; /**< wall clock */
        int64_t     report_interval_ms;
        const char *report_path;
} ks_report_producer_t;

typedef struct ks_report_opts {
        int     hot_keys; /**< hot keys listed per topic */
        int64_t now_ms;   /**< wall clock */
        int     final;    /**< 1: written at shutdown */
        /** sizing inputs (NULL: no rates/skew/sizing/migration objects) */
        const ks_sizing_params_t *sizing;
        double queue_max_messages; /**< the producer's queue limits, for */
        double queue_max_bytes;    /**< how long a switch may pause it */
} ks_report_opts_t;

/**
 * @brief Builds one topic's object and adds its warnings to @p wl.
 * @returns a new reference, or NULL on ENOMEM.
 */
json_t *ks_report_topic(const ks_topic_snapshot_t *s,
                        const ks_report_opts_t *opts, ks_warn_list_t *wl);

/**
 * @brief Builds the whole report. Steals @p topics (an object of topic
 *        objects). Producer-level warnings are taken from @p wl.
 * @returns a new reference, or NULL on ENOMEM.
 */
json_t *ks_report_build(const ks_report_producer_t *producer,
                        const ks_report_opts_t *opts, json_t *topics,
                        const ks_warn_list_t *wl);

/**
 * @brief Writes @p report to @p path atomically: a temporary file in the
 *        same directory, fsync'ed, then rename()d over @p path, so a reader
 *        sees the previous report or this one, never part of one.
 * @returns 0, or -1 with @p errstr set (the temporary file is removed).
 */
int ks_report_write_atomic(const json_t *report, const char *path, char *errstr,
                           size_t errstr_size);

/** @brief Formats @p ms since the epoch as RFC 3339 UTC with millis. */
void ks_report_rfc3339(int64_t ms, char *out, size_t size);

#endif /* KS_REPORT_H */
