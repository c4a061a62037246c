/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli_main.c
 * @brief `keyshift`: dispatches to a subcommand (git-style: the first
 *        argument names it) and prints the overview help.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "keyshift/keyshift.h"
#include "ks_cli.h"

static const struct {
        const char *name;
        int (*main)(int argc, char **argv);
        const char *what;
} ks_cli_commands[] = {
    {"hash", ks_cli_hash_main,
     "where keys go: bytes, hash and partition under each partitioner "
     "and count"},
    {"show", ks_cli_show_main, "a report in the terminal"},
    {"html", ks_cli_html_main, "a report as one self-contained HTML page"},
    {"merge", ks_cli_merge_main,
     "combine reports of several producer processes into one"},
    {"fleet", ks_cli_fleet_main,
     "merge the reports producers publish to keyshift.report.topic"},
    {"plan", ks_cli_plan_main,
     "partition count advice from planned rates, without a producer"},
    {"scan", ks_cli_scan_main,
     "read a topic's stored records: the same report, and which "
     "partitioner placed them"},
    {"metrics", ks_cli_metrics_main,
     "a report as Prometheus metrics (text exposition format)"},
    {"config", ks_cli_config_main,
     "list the keyshift.* properties, or check NAME=VALUE as the plugin "
     "would"},
};

#define KS_CLI_COMMAND_CNT                                                     \
        (sizeof(ks_cli_commands) / sizeof(ks_cli_commands[0]))

/** @brief Prints the commands and what they do to @p fp. */
static void ks_cli_overview(FILE *fp)
{
        size_t i;

        fprintf(fp,
                "Usage: keyshift COMMAND [OPTIONS] [ARGS]\n"
                "Rehearse a Kafka partition increase: read and combine the "
                "reports of the\n"
                "keyshift librdkafka plugin (%s), and compute partitions "
                "offline.\n\n"
                "Commands:\n",
                KEYSHIFT_REPORT_SCHEMA);
        for (i = 0; i < KS_CLI_COMMAND_CNT; i++)
                fprintf(fp, "  %-8s %s\n", ks_cli_commands[i].name,
                        ks_cli_commands[i].what);
        fprintf(fp, "\n'keyshift COMMAND --help' describes a command. Exit "
                    "codes: 0 ok, 1 failure, 2 usage.\n"
                    "Manual: docs/keyshift-cli.md\n");
}

/**
 * @brief Flushes and closes standard output after subcommand @p cmd
 *        returned @p rc: what it printed may still be buffered, and a
 *        write error (a full disk, /dev/full, a closed pipe's EPIPE with
 *        SIGPIPE ignored) is known only now.
 * @returns @p rc, or 1 after one line naming the error when the output
 *          was not all written (and @p rc said it was).
 */
static int ks_cli_stdout_closed(const char *cmd, int rc)
{
        int failed = ferror(stdout);

        errno = 0;
        if (fclose(stdout) != 0 || failed) {
                if (rc == KS_CLI_EXIT_OK)
                        fprintf(stderr,
                                "keyshift %s: writing standard output: %s\n",
                                cmd, errno ? strerror(errno) : "write error");
                return rc == KS_CLI_EXIT_OK ? KS_CLI_EXIT_FAIL : rc;
        }
        return rc;
}

/** @returns the subcommand's exit code; 2 for no or an unknown one. */
int main(int argc, char **argv)
{
        size_t i;

        if (argc < 2) {
                ks_cli_overview(stderr);
                return KS_CLI_EXIT_USAGE;
        }
        if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
            !strcmp(argv[1], "help")) {
                ks_cli_overview(stdout);
                return KS_CLI_EXIT_OK;
        }
        if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")) {
                printf("keyshift %s (reads and writes %s)\n",
                       KEYSHIFT_VERSION_STR, KEYSHIFT_REPORT_SCHEMA);
                return KS_CLI_EXIT_OK;
        }
        for (i = 0; i < KS_CLI_COMMAND_CNT; i++)
                if (!strcmp(argv[1], ks_cli_commands[i].name))
                        return ks_cli_stdout_closed(
                            argv[1],
                            ks_cli_commands[i].main(argc - 1, argv + 1));
        fprintf(stderr, "keyshift: unknown command '%s'\n\n", argv[1]);
        ks_cli_overview(stderr);
        return KS_CLI_EXIT_USAGE;
}
