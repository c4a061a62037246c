/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli_pattern.h
 * @brief The report schema's `pattern`s (ks_cli_schema.h): POSIX extended
 *        regular expressions compiled once, and the few that every report
 *        repeats thousands of times matched by hand-written loops.
 *
 * Why loops: the packed sketches' base64 (`^[A-Za-z0-9+/]*={0,2}$`, tens
 * of KB a topic) and the hot keys' hex went through regexec() for every
 * string, about 14 % of `keyshift fleet`'s time over 100 producers x 100
 * topics (perf, bench/README.md, issue 32). Each loop is written for one
 * exact pattern text and gives regexec()'s verdict on it, in the C locale
 * the command runs in (it never calls setlocale()), for every
 * NUL-terminated string: tests/unit/test_cli_pattern.c compares both on
 * edge cases and on hundreds of thousands of random strings. A pattern
 * without a loop is matched by regexec(), as before.
 *
 * Thread-safety: every function may be called from any thread. Compiled
 * patterns are kept for the process's life (at most 32 texts; the schema
 * has 8) and published once compiled; glibc's regexec() locks the
 * compiled expression it reads.
 */
#ifndef KS_CLI_PATTERN_H
#define KS_CLI_PATTERN_H

/** A pattern compiled (opaque; kept for the process's life). */
typedef struct ks_cli_pattern ks_cli_pattern_t;

/** A hand-written matcher: @returns 1 if NUL-terminated @p s matches. */
typedef int (*ks_cli_pattern_loop_t)(const char *s);

/**
 * @returns pattern text @p text compiled (REG_EXTENDED | REG_NOSUB), the
 *          same object for the same text, or NULL when it does not compile
 *          or 32 texts are already kept.
 */
const ks_cli_pattern_t *ks_cli_pattern_of(const char *text);

/** @returns 1 if NUL-terminated @p s matches @p p (its loop when it has
 *           one, else regexec()), 0 if not. */
int ks_cli_pattern_match(const ks_cli_pattern_t *p, const char *s);

/** @returns the hand-written matcher of pattern text @p text, NULL when
 *           it has none (for the tests, which compare it with regexec()). */
ks_cli_pattern_loop_t ks_cli_pattern_loop(const char *text);

#endif /* KS_CLI_PATTERN_H */
