/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli.h
 * @brief The `keyshift` command: one entry point per subcommand, the exit
 *        codes they share, and argument helpers.
 *
 * Every subcommand is `int ks_cli_<name>_main(int argc, char **argv)` with
 * argv[0] the subcommand's name, parses its options with getopt_long(),
 * prints `--help` to stdout, and returns one of the exit codes below.
 * Errors go to stderr as `keyshift <cmd>: <file>: <field>: <problem>`.
 *
 * The CLI is a plain single-threaded program: nothing here is shared
 * between threads.
 */
#ifndef KS_CLI_H
#define KS_CLI_H

#include <stddef.h>
#include <stdint.h>

/** Exit codes, the same for every subcommand. */
#define KS_CLI_EXIT_OK 0    /**< done */
#define KS_CLI_EXIT_FAIL 1  /**< bad input file, I/O error, refused merge */
#define KS_CLI_EXIT_USAGE 2 /**< bad command line */

int ks_cli_hash_main(int argc, char **argv);
int ks_cli_show_main(int argc, char **argv);
int ks_cli_html_main(int argc, char **argv);
int ks_cli_merge_main(int argc, char **argv);
int ks_cli_fleet_main(int argc, char **argv);
int ks_cli_plan_main(int argc, char **argv);
int ks_cli_scan_main(int argc, char **argv);
int ks_cli_metrics_main(int argc, char **argv);
int ks_cli_config_main(int argc, char **argv);

/**
 * @brief Prints `keyshift <cmd>: <message>` and a pointer to --help to
 *        stderr.
 * @returns KS_CLI_EXIT_USAGE, for `return ks_cli_usage_error(...)`.
 */
int ks_cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/**
 * @brief Prints `keyshift <cmd>: <message>` to stderr.
 * @returns KS_CLI_EXIT_FAIL.
 */
int ks_cli_fail(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/**
 * @brief Parses a comma-separated list of partition counts ("6,12,24"),
 *        each 1..KEYSHIFT_PARTITIONS_MAX, at most @p max of them.
 * @returns 0 and sets *n, or -1 with @p err saying what is wrong.
 */
int ks_cli_parse_counts(const char *s, int32_t *out, size_t max, size_t *n,
                        char *err, size_t errsz);

/**
 * @brief Parses a finite number in [@p min, @p max] (the whole string).
 * @returns 0, or -1 with @p err set.
 */
int ks_cli_parse_double(const char *s, double min, double max, double *out,
                        char *err, size_t errsz);

/**
 * @brief Parses a whole number in [@p min, @p max] (the whole string).
 * @returns 0, or -1 with @p err set.
 */
int ks_cli_parse_long(const char *s, long long min, long long max,
                      long long *out, char *err, size_t errsz);

/**
 * @brief Resolves `--color auto|always|never` for @p fd: auto is on only
 *        when @p fd is a terminal (isatty) and NO_COLOR is unset.
 * @returns 1 for colour, 0 without, -1 for an unknown @p mode.
 */
int ks_cli_color_mode(const char *mode, int fd);

#endif /* KS_CLI_H */
