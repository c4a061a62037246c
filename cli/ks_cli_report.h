/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli_report.h
 * @brief Reads a keyshift.report.v2 file and checks every field the CLI
 *        uses, so that the subcommands can read them without checks and
 *        a bad file is refused with the file and the field at fault.
 *
 * A topic's `hot_keys`, columns in the file, are given to the subcommands
 * as an array of objects, one per key (ks_cli_report_rows()).
 *
 * Checked: the whole report against docs/keyshift.report.v2.schema.json
 * (compiled in, ks_cli_schema.h: every member present, of its type, no
 * member the schema lacks), then what a schema cannot say: every
 * per-partition column as long as its partition count, flows of the
 * counts' shape, analysis and sampling counters that restate each other,
 * the `merge` sketches' contents. A report of another schema version is
 * refused (a v1 report: write it again with this keyshift). Error
 * messages are one line, `FILE: topics.orders.proposals[0].partitions
 * .messages: expected 12 values (the partition count), got 11`.
 */
#ifndef KS_CLI_REPORT_H
#define KS_CLI_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "ks_cli_report_fields.h" /* the subcommands' readers */

typedef struct ks_cli_report {
        const char *path; /**< as given (borrowed); "-" is stdin */
        json_t     *root; /**< owned */
} ks_cli_report_t;

/**
 * @brief Opens @p path ("-": standard input, as is) for reading a report,
 *        refusing what is not a regular file (a directory, a FIFO, a
 *        device such as /dev/zero, a socket) without blocking: the file
 *        is opened with O_NONBLOCK (a FIFO with no writer would block
 *        open() without it) and fstat()ed first.
 * @returns the descriptor (blocking again), or -1 with @p err = "PATH:
 *          problem".
 */
int ks_cli_report_open_fd(const char *path, char *err, size_t errsz);

/**
 * @brief Refuses a report's first @p len bytes @p head (at most 4 KiB
 *        are looked at) when they are no JSON text: empty or white space
 *        only (when @p whole: nothing follows), or binary data (a control
 *        byte JSON never holds raw), named with its offset.
 * @returns 0, or -1 with @p err = "PATH: not a keyshift report: ...".
 */
int ks_cli_report_head_refused(const char *path, const char *head, size_t len,
                               int whole, char *err, size_t errsz);

/**
 * @brief Reads, parses and checks @p path ("-": standard input).
 * @returns 0, or -1 with @p err = "PATH: [FIELD: ]problem" (missing file,
 *          invalid or truncated JSON, another schema, a field missing or
 *          of the wrong type, arrays of the wrong length).
 */
int ks_cli_report_load(const char *path, ks_cli_report_t *r, char *err,
                       size_t errsz);

/**
 * @brief Checks an already parsed report (what ks_cli_report_load() does
 *        after parsing). @p path only names it in @p err.
 * @returns 0, or -1 with @p err set.
 */
int ks_cli_report_check(json_t *root, const char *path, char *err,
                        size_t errsz);

/**
 * @brief Checks the partition numbers of checked report @p root against
 *        the counts they are under (hot keys', mixed keys', other
 *        clients' examples'): ks_cli_report_check() calls it last
 *        (ks_cli_report_ranges.c).
 * @returns 0, or -1 with @p err = "PATH: FIELD: partition P is beyond the
 *          current count N (partitions 0 .. N-1)".
 */
int ks_cli_report_ranges(json_t *root, const char *path, char *err,
                         size_t errsz);

/**
 * @brief Turns each topic's `hot_keys` of checked report @p root from the
 *        file's columns into the array of objects, one per key, that the
 *        subcommands read (ks_report_hot_keys_rows(); ks_cli_report_load()
 *        does it after the check).
 * @returns 0, or -1 with @p err = "PATH: FIELD: problem".
 */
int ks_cli_report_rows(json_t *root, const char *path, char *err, size_t errsz);

/** @brief Releases what @p r holds. */
void ks_cli_report_free(ks_cli_report_t *r);

/** @returns the topics object (borrowed). */
json_t *ks_cli_report_topics(const ks_cli_report_t *r);

#endif /* KS_CLI_REPORT_H */
