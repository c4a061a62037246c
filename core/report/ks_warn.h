/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_warn.h
 * @brief keyshift's warnings: a code, a message, and optionally the topic.
 *
 * Warnings are collected while a report is built (never on the produce
 * path), written into the report, and logged to stderr in librdkafka's own
 * log-line format, `%LEVEL|seconds.millis|KEYSHIFT|client-name| text`, at
 * most one line per code per report (a code raised by several topics is
 * logged once, naming how many and the first).
 *
 * Not thread-safe: one list is filled by one thread.
 */
#ifndef KS_WARN_H
#define KS_WARN_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

/* Codes. */
#define KS_WARN_KEYS_WOULD_MOVE "KEYS_WOULD_MOVE"
#define KS_WARN_PARTITIONER_MISMATCH "PARTITIONER_MISMATCH"
/* information, not a problem: logged at level 6 */
#define KS_WARN_PARTITIONER_LEARNED "PARTITIONER_LEARNED"
#define KS_WARN_COUNT_REHEARSED "COUNT_REHEARSED"
#define KS_WARN_TOPIC_COMPACTED "TOPIC_COMPACTED"
#define KS_WARN_CURRENT_COUNT_UNKNOWN "CURRENT_COUNT_UNKNOWN"
#define KS_WARN_PARTITION_COUNT_CHANGED "PARTITION_COUNT_CHANGED"
#define KS_WARN_PROPOSAL_NOT_AN_INCREASE "PROPOSAL_NOT_AN_INCREASE"
#define KS_WARN_PROPOSALS_REPEATED "PROPOSALS_REPEATED"
#define KS_WARN_MESSAGES_UNPLACED "MESSAGES_UNPLACED"
#define KS_WARN_ANALYSIS_BEHIND "ANALYSIS_BEHIND"
#define KS_WARN_REPORT_WRITE_FAILED "REPORT_WRITE_FAILED"
#define KS_WARN_REPORT_TOPIC_FAILED "REPORT_TOPIC_FAILED"
#define KS_WARN_METRICS_WRITE_FAILED "METRICS_WRITE_FAILED"
#define KS_WARN_TOPICS_MAX "TOPICS_MAX_REACHED"
#define KS_WARN_SKETCHES_REDUCED "SKETCHES_REDUCED"
#define KS_WARN_METADATA_FAILED "METADATA_FAILED"
#define KS_WARN_MIXED_KEY_SERIALIZERS "MIXED_KEY_SERIALIZERS"
#define KS_WARN_PARTITIONER_NOT_JAVA_COMPATIBLE                                \
        "PARTITIONER_NOT_JAVA_COMPATIBLE"
#define KS_WARN_EMPTY_KEYS_HASHED "EMPTY_KEYS_HASHED"
#define KS_WARN_MULTIPLE_SCHEMA_IDS "MULTIPLE_SCHEMA_IDS"
#define KS_WARN_HOT_KEY "HOT_KEY"
#define KS_WARN_PEAK_TO_MEAN_HIGH "PEAK_TO_MEAN_HIGH"
#define KS_WARN_REBALANCE_STALL_HIGH "REBALANCE_STALL_HIGH"
#define KS_WARN_COMPACTED_TOPIC "COMPACTED_TOPIC"
#define KS_WARN_INSUFFICIENT_DATA "INSUFFICIENT_DATA"
/* `keyshift scan`'s audit of stored records (ks_audit.h) */
#define KS_WARN_MIXED_PARTITIONERS "MIXED_PARTITIONERS"
#define KS_WARN_RECORDS_FROM_OLD_COUNT "RECORDS_FROM_OLD_COUNT"
#define KS_WARN_UNEXPLAINED_PLACEMENT "UNEXPLAINED_PLACEMENT"

typedef struct ks_warn {
        char code[40];
        char topic[256]; /**< "" for producer-level warnings */
        char message[512];
} ks_warn_t;

typedef struct ks_warn_list {
        ks_warn_t *items;
        size_t     cnt;
        size_t     cap;
} ks_warn_list_t;

void ks_warn_list_init(ks_warn_list_t *wl);
void ks_warn_list_clear(ks_warn_list_t *wl);

/** @brief Adds a warning (dropped silently on ENOMEM). @p topic may be
 *         NULL. */
void ks_warn_add(ks_warn_list_t *wl, const char *code, const char *topic,
                 const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/** @brief Removes the warnings with @p code of @p topic (NULL: the
 *         producer-level ones). O(warnings). */
void ks_warn_remove(ks_warn_list_t *wl, const char *code, const char *topic);

/** @brief ks_warn_remove() among the warnings from index @p from on: a
 *         topic's own, added since wl->cnt was @p from (so a report's cost
 *         stays linear in its topics). */
void ks_warn_remove_since(ks_warn_list_t *wl, const char *code,
                          const char *topic, size_t from);

/** @returns a new JSON array [{code, message}] of the warnings of
 *           @p topic (NULL: the producer-level ones). O(warnings). */
json_t *ks_warn_list_json(const ks_warn_list_t *wl, const char *topic);

/** @returns ks_warn_list_json() of the warnings from index @p from on
 *           (see ks_warn_remove_since()). */
json_t *ks_warn_list_json_since(const ks_warn_list_t *wl, const char *topic,
                                size_t from);

/**
 * @brief Logs the list to @p fp, one line per code (in the order codes
 *        first appear: the code's first warning, and how many distinct
 *        topics raised it), in librdkafka's log format with facility
 *        KEYSHIFT and level 4 (warning). O(n log n) for n warnings.
 * @param client_name rd_kafka_name() of the producer.
 */
void ks_warn_list_log(const ks_warn_list_t *wl, FILE *fp,
                      const char *client_name);

/** @brief Logs one line in librdkafka's format (level 3 error .. 7 debug). */
void ks_warn_log_line(FILE *fp, int level, const char *client_name,
                      const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif /* KS_WARN_H */
