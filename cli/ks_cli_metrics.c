/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli_metrics.c
 * @brief `keyshift metrics REPORT.json`: the report as Prometheus metrics
 *        on standard output, the text the plugin writes to
 *        keyshift.metrics.path (both made by core/report/ks_metrics.c).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "ks_cli.h"
#include "ks_cli_report.h"
#include "ks_metrics.h"

/** @brief Prints the usage of `keyshift metrics` to @p fp. */
static void ks_metrics_help(FILE *fp)
{
        fprintf(fp,
                "Usage: keyshift metrics REPORT.json\n"
                "Prints a keyshift report (a producer's, a merged one or a "
                "scan's) as\n"
                "Prometheus metrics in the text exposition format, the same "
                "text the plugin\n"
                "writes to keyshift.metrics.path for node_exporter's textfile "
                "collector\n"
                "(docs/metrics.md lists the metrics). Keys are never "
                "labels: hot keys are\n"
                "named by their rank.\n\n"
                "  -h, --help         this help\n\n"
                "REPORT.json may be - for standard input.\n"
                "Exit: 0 ok, 1 unreadable or invalid report or write error, "
                "2 usage.\n");
}

int ks_cli_metrics_main(int argc, char **argv)
{
        static const struct option longopts[] = {
            {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
        ks_cli_report_t r;
        char            err[1024];
        int             c, rc;

        optind = 1;
        while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
                switch (c) {
                case 'h':
                        ks_metrics_help(stdout);
                        return KS_CLI_EXIT_OK;
                default:
                        return ks_cli_usage_error("metrics", "bad option");
                }
        }
        if (argc - optind != 1)
                return ks_cli_usage_error("metrics",
                                          "expected one REPORT.json");
        if (ks_cli_report_load(argv[optind], &r, err, sizeof(err)))
                return ks_cli_fail("metrics", "%s", err);
        rc = ks_metrics_report(r.root, stdout);
        ks_cli_report_free(&r);
        if (rc || fflush(stdout) || ferror(stdout))
                return ks_cli_fail("metrics", "cannot write the metrics: %s",
                                   errno ? strerror(errno) : "write error");
        return KS_CLI_EXIT_OK;
}
