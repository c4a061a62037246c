/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli_fmt.h
 * @brief How the CLI writes numbers, shares, keys and markup-safe text,
 *        the same way in the terminal and in the HTML page.
 *
 * The ks_cli_fmt_* functions that return a string write it into the
 * caller's buffer and return it, so several can be used in one printf();
 * ks_cli_fmt_xml() and ks_cli_fmt_print_wrapped() write to a stream.
 */
#ifndef KS_CLI_FMT_H
#define KS_CLI_FMT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

/** @returns @p v with thousands separators: "34,013". */
const char *ks_cli_fmt_count(uint64_t v, char *buf, size_t size);

/** @returns @p v in three significant digits with a k/M/G/T suffix:
 *           "950", "34.0k", "1.99M". */
const char *ks_cli_fmt_si(double v, char *buf, size_t size);

/** @returns @p bytes in decimal units: "512 B", "1.99 MB". */
const char *ks_cli_fmt_bytes(double bytes, char *buf, size_t size);

/** @returns fraction @p f (0..1) as a percentage: "49.5%", "1.34%"
 *           (two decimals below 10%), "<0.01%" for a tiny non-zero one,
 *           "0%" for zero. */
const char *ks_cli_fmt_pct(double f, char *buf, size_t size);

/**
 * @brief A key for display: the text when the report has it (`key` not
 *        null), else 0x and its hex; shortened to @p width characters
 *        with "..." when longer.
 * @param obj an object with `key` and `key_hex` (a report's hot key).
 */
const char *ks_cli_fmt_key(const json_t *obj, size_t width, char *buf,
                           size_t size);

/**
 * @brief Pads @p s with spaces on the right to @p width terminal columns,
 *        counting UTF-8 characters rather than bytes (printf's %-Ns counts
 *        bytes: a key with multi-byte characters misaligned the columns
 *        after it). Characters are taken as one column wide. @returns @p s
 *        padded in @p buf (@p size bytes).
 */
const char *ks_cli_fmt_pad(const char *s, size_t width, char *buf, size_t size);

/** @brief Writes @p s with &, <, >, " and ' escaped for HTML and SVG. */
void ks_cli_fmt_xml(FILE *fp, const char *s);

/** The terminal width `keyshift show` wraps its sentences at (columns,
 *  one a byte). */
#define KS_CLI_FMT_WRAP_COLUMNS 100

/**
 * @brief Prints @p text and a newline on standard output, wrapped at
 *        spaces to KS_CLI_FMT_WRAP_COLUMNS columns: the first line starts
 *        at column @p col (already printed up to there), the next ones
 *        are indented by @p indent. A word longer than a line is cut
 *        where the line ends.
 */
void ks_cli_fmt_print_wrapped(const char *text, int col, int indent);

#endif /* KS_CLI_FMT_H */
