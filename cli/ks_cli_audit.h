/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli_audit.h
 * @brief The `audit` of a scan report (core/report/ks_audit.h, docs/report-schema.md)
 *        in words, for `keyshift show` and `keyshift html`: which (hash
 *        family, partition count) pairs placed the stored records.
 *
 * Thread-safety: none needed (pure functions of a checked report).
 */
#ifndef KS_CLI_AUDIT_H
#define KS_CLI_AUDIT_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

/**
 * @brief One paragraph on @p audit: keyed records, the history's steps
 *        (family, count, records and share), unexplained records, the
 *        family of the newest records and the partitioner the proposals
 *        use. @returns @p buf ("" when @p audit is not an object).
 */
const char *ks_cli_audit_summary(const json_t *audit, char *buf, size_t size);

/**
 * @brief Where history step @p step's records sit: "p0 12-340, p3 0-99, ..."
 *        (partition: first-last offset), at most @p max partitions, then
 *        "... (N partitions)". @returns @p buf.
 */
const char *ks_cli_audit_ranges(const json_t *step, int max, char *buf,
                                size_t size);

/** @brief `keyshift show`'s audit block: the summary and a table of the
 *         history's steps. Nothing when the topic has no audit. */
void ks_cli_show_audit(const json_t *topic);

/** @brief `keyshift html`'s audit block: the summary and a table of the
 *         history's steps. Nothing when the topic has no audit. */
void ks_cli_html_audit(FILE *fp, const json_t *topic);

#endif /* KS_CLI_AUDIT_H */
