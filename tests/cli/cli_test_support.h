/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file cli_test_support.h
 * @brief Runs the built `keyshift` command ($KS_CLI) the way a user
 *        does, through the shell, and captures its exit status, standard
 *        output and standard error.
 */
#ifndef CLI_TEST_SUPPORT_H
#define CLI_TEST_SUPPORT_H

#include <stddef.h>

#include <jansson.h>

/** What one run of the command gave. */
typedef struct ks_clit_run {
        int    status; /**< exit status; -1 killed by a signal */
        int    signal; /**< the signal when killed (a crash), else 0 */
        char  *out;    /**< standard output (owned, NUL-terminated) */
        char  *err;    /**< standard error (owned) */
        size_t out_len;
} ks_clit_run_t;

/** @returns the command's path ($KS_CLI, else build/cli/keyshift). */
const char *ks_clit_cli(void);

/**
 * @brief Runs `"$KS_CLI" ARGS` through /bin/sh, @p fmt giving ARGS
 *        (already shell-quoted by the caller), standard input from
 *        /dev/null unless ARGS redirects it.
 * @returns r->status. Prints the command, status and stderr.
 */
int ks_clit_run(ks_clit_run_t *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

void ks_clit_run_free(ks_clit_run_t *r);

/** @brief Writes @p len bytes of @p data to @p path (fails the test on
 *         error). */
void ks_clit_write(const char *path, const void *data, size_t len);

/** @returns the content of @p path (owned, NUL-terminated), *len set if
 *           not NULL; NULL if unreadable. */
char *ks_clit_read(const char *path, size_t *len);

/** @returns 1 if @p hay contains @p needle. */
int ks_clit_has(const char *hay, const char *needle);

/**
 * @brief Writes a report to @p path from a real producer with the plugin
 *        (mock cluster): topic "orders", 6 partitions, proposals 8 and 12,
 *        @p n messages with skewed decimal text keys (1000000 + id, id
 *        0..1999), every seventh id's odd messages sent as a 4-byte int
 *        instead (a second serializer: mixed keys), one message in 50
 *        with a NULL key.
 */
void ks_clit_make_report(const char *path, int n);

#endif /* CLI_TEST_SUPPORT_H */
