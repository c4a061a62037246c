/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_report_fmt.h
 * @brief How the report writes its small values: times (RFC 3339 UTC with
 *        milliseconds, and back), a key's bytes (as text when printable,
 *        as hex), and shares. Below every file that builds a report
 *        (ks_report.c, ks_report_keys.c, ks_report_warnings.c,
 *        ks_audit_json.c) and calls nothing of theirs, so that calls go
 *        one way (issue 31).
 *
 * @locality any thread: no state.
 */
#ifndef KS_REPORT_FMT_H
#define KS_REPORT_FMT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/**
 * @brief Formats @p ms since the epoch as RFC 3339 UTC with millis
 *        ("2026-11-29T20:41:48.743Z") into @p out (@p size bytes).
 */
void ks_report_rfc3339(int64_t ms, char *out, size_t size);

/**
 * @brief Reads a time ks_report_rfc3339() wrote.
 * @returns seconds since the epoch of an RFC 3339 UTC time with
 *          milliseconds ("2026-11-29T20:41:48.743Z"), or -1.
 */
double ks_report_rfc3339_parse(const char *s);

/**
 * @brief A key's bytes for the report's `key_hex`.
 * @returns @p n bytes as a lower-case hex JSON string (a new reference),
 *          NULL on ENOMEM.
 */
json_t *ks_report_hex(const uint8_t *b, size_t n);

/**
 * @brief A key for the report's `key`.
 * @returns the key as a JSON string when it is printable UTF-8 (no
 *          control characters), else JSON null (a new reference).
 */
json_t *ks_report_key(const uint8_t *key, size_t n);

/** @returns a / b, 0 when b is 0. */
double ks_report_frac(uint64_t a, uint64_t b);

#endif /* KS_REPORT_FMT_H */
