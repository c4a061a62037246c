/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli_report_fields.h
 * @brief Members of a report's JSON objects read as counts, numbers and
 *        strings, and a topic's current partition count and partitioner:
 *        what the subcommands read a checked report with, and what the
 *        check itself (ks_cli_report_check.c, ks_cli_report_ranges.c)
 *        reads. Below the report's reading and checking, calling neither,
 *        so that calls go one way (issue 31). Each answers a default for a
 *        member that is absent or of another type: after the check, the
 *        types are right.
 *
 * Thread-safety: pure functions of the JSON they are given (jansson's
 * reads of an object no thread changes).
 */
#ifndef KS_CLI_REPORT_FIELDS_H
#define KS_CLI_REPORT_FIELDS_H

#include <stdint.h>

#include <jansson.h>

/** @returns a member as an unsigned count (0 when absent, not an integer
 *           or negative: use after ks_cli_report_check()). */
uint64_t ks_cli_u64(const json_t *obj, const char *key);

/** @returns a member as a number, integer or real (0 when absent). */
double ks_cli_num(const json_t *obj, const char *key);

/** @returns a member as a string, or @p def when absent or not a string. */
const char *ks_cli_str(const json_t *obj, const char *key, const char *def);

/** @returns the current partition count of a topic object
 *           (`partition_count.current`), 0 if unknown. */
int32_t ks_cli_topic_current(const json_t *topic);

/** @returns a topic's partitioner name: `partitioner.name` (reports since
 *           the partitioner is learned from deliveries), or the plain
 *           string `partitioner` of older reports; @p def when neither. */
const char *ks_cli_topic_partitioner(const json_t *topic, const char *def);

#endif /* KS_CLI_REPORT_FIELDS_H */
