/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli_fleet_args.c
 * @brief `keyshift fleet`'s command line, help and --follow loop
 *        (ks_cli_fleet.h; the work is ks_fleet_run(), ks_cli_fleet.c).
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "keyshift/keyshift.h"
#include "ks_cli.h"
#include "ks_cli_fleet.h"

#define KS_FLEET_DEFAULT_TOPIC "keyshift-reports"
/** --since's default: a day of producers, whatever their state. */
#define KS_FLEET_DEFAULT_SINCE_S 86400
/** --every's default: a round each half minute, a Prometheus scrape's
 *  order. */
#define KS_FLEET_DEFAULT_EVERY_S 30
/** --timeout-ms's default, and its bounds: the cluster's answers. */
#define KS_FLEET_DEFAULT_TIMEOUT_MS 10000
#define KS_FLEET_TIMEOUT_MS_MIN 100
#define KS_FLEET_TIMEOUT_MS_MAX 600000
/** The most hot keys --hot lists per topic. */
#define KS_FLEET_HOT_MAX 1000
/** --follow sleeps in slices this long, to see a stop signal soon. */
#define KS_FLEET_SLEEP_SLICE_MS 100
/** ks_fleet_option() and ks_fleet_parse_args(): go on. */
#define KS_FLEET_GO_ON (-1)

/** Set by SIGINT/SIGTERM: --follow ends after the current round. */
static volatile sig_atomic_t ks_fleet_stop;

static void on_stop_signal(int sig)
{
        (void)sig;
        ks_fleet_stop = 1;
}

static void ks_fleet_help(FILE *fp)
{
        fprintf(
            fp,
            "Usage: keyshift fleet --bootstrap HOST:PORT [OPTIONS]\n"
            "Reads the reports that producers publish with "
            "keyshift.report.topic, keeps\n"
            "the latest of each producer and topic, and merges them as "
            "`keyshift merge`\n"
            "does into one %s report (source \"fleet\").\n\n"
            "  -b, --bootstrap B      the cluster (bootstrap.servers)\n"
            "  -r, --report-topic T   the report topic (default %s)\n"
            "  -X, --property P=V     a librdkafka consumer property "
            "(security, ...)\n"
            "  -t, --topic T          merge only topic T (repeatable)\n"
            "      --stale-after D    a producer without a record for D is "
            "stale (default:\n"
            "                         3 of its report intervals); D: 90s, "
            "5m, 2h, 1d\n"
            "      --since D          merge the producers whose last record "
            "is within D\n"
            "                         (default 24h), whatever their state\n"
            "      --live             merge only the live producers\n"
            "  -k, --hot N            hot keys listed per topic\n"
            "      --timeout-ms MS    for the cluster's answers (default "
            "10000)\n"
            "  -o, --output FILE      the report (default - : standard "
            "output)\n"
            "      --metrics PATH     also its Prometheus metrics, written "
            "atomically to PATH\n"
            "                         (a .prom file for node_exporter's "
            "textfile collector)\n"
            "      --follow           again and again, every --every D "
            "(default 30s), until\n"
            "                         SIGINT or SIGTERM\n"
            "  -h, --help             this help\n\n"
            "Exit: 0 ok, 1 cluster unreachable, no report topic or no "
            "producer, 2 usage.\n",
            KEYSHIFT_REPORT_SCHEMA, KS_FLEET_DEFAULT_TOPIC);
}

/** @brief Parses a duration "90", "90s", "500ms", "5m", "2h", "1d".
 *  @returns 0 with @p s seconds, or -1. */
static int parse_duration(const char *v, double *s)
{
        char  *end;
        double n = strtod(v, &end);

        if (end == v || n < 0)
                return -1;
        if (!*end || !strcmp(end, "s"))
                *s = n;
        else if (!strcmp(end, "ms"))
                *s = n / 1000;
        else if (!strcmp(end, "m"))
                *s = n * 60;
        else if (!strcmp(end, "h"))
                *s = n * 3600;
        else if (!strcmp(end, "d"))
                *s = n * 86400;
        else
                return -1;
        return 0;
}

/** The long options of `keyshift fleet` past the ASCII letters. */
enum {
        OPT_STALE = 256,
        OPT_SINCE,
        OPT_LIVE,
        OPT_TIMEOUT,
        OPT_METRICS,
        OPT_FOLLOW,
        OPT_EVERY
};

/**
 * @brief Sets duration option @p c (--stale-after, --since, --every) to
 *        @p arg in @p o.
 * @returns KS_FLEET_GO_ON, or KS_CLI_EXIT_USAGE (said on stderr).
 */
static int ks_fleet_duration(ks_fleet_opts_t *o, int c, const char *arg)
{
        switch (c) {
        case OPT_STALE:
                if (parse_duration(arg, &o->stale_after_s))
                        return ks_cli_usage_error(
                            "fleet",
                            "--stale-after %s: expected a "
                            "duration (90s, 5m, 2h, 1d)",
                            arg);
                break;
        case OPT_SINCE:
                if (parse_duration(arg, &o->since_s))
                        return ks_cli_usage_error("fleet",
                                                  "--since %s: expected a "
                                                  "duration (90s, 5m, 2h, 1d)",
                                                  arg);
                break;
        case OPT_EVERY:
                if (parse_duration(arg, &o->every_s) || o->every_s < 1)
                        return ks_cli_usage_error("fleet",
                                                  "--every %s: expected a "
                                                  "duration of 1s or more",
                                                  arg);
                break;
        }
        return KS_FLEET_GO_ON;
}

/**
 * @brief Sets option @p c (value @p arg) in @p o, or its -X property in
 *        @p conf.
 * @returns KS_FLEET_GO_ON, or the exit code (--help, or a usage error
 *          said on stderr).
 */
static int ks_fleet_option(ks_fleet_opts_t *o, rd_kafka_conf_t *conf, int c,
                           char *arg)
{
        char      err[512], *eq;
        long long v;

        switch (c) {
        case 'b':
                o->bootstrap = arg;
                break;
        case 'r':
                o->report_topic = arg;
                break;
        case 'X':
                if (!(eq = strchr(arg, '=')))
                        return ks_cli_usage_error(
                            "fleet", "-X %s: expected PROP=VALUE", arg);
                *eq = '\0';
                if (rd_kafka_conf_set(conf, arg, eq + 1, err, sizeof(err)) !=
                    RD_KAFKA_CONF_OK)
                        return ks_cli_usage_error("fleet", "-X %s: %s", arg,
                                                  err);
                break;
        case 't':
                if (o->only_cnt == sizeof(o->only) / sizeof(o->only[0]))
                        return ks_cli_usage_error("fleet",
                                                  "--topic: at most 64");
                o->only[o->only_cnt++] = arg;
                break;
        case OPT_STALE:
        case OPT_SINCE:
        case OPT_EVERY:
                return ks_fleet_duration(o, c, arg);
        case OPT_LIVE:
                o->live_only = 1;
                break;
        case 'k':
                if (ks_cli_parse_long(arg, 1, KS_FLEET_HOT_MAX, &v, err,
                                      sizeof(err)))
                        return ks_cli_usage_error("fleet", "--hot: %s", err);
                o->hot_max = (size_t)v;
                break;
        case OPT_TIMEOUT:
                if (ks_cli_parse_long(arg, KS_FLEET_TIMEOUT_MS_MIN,
                                      KS_FLEET_TIMEOUT_MS_MAX, &v, err,
                                      sizeof(err)))
                        return ks_cli_usage_error("fleet", "--timeout-ms: %s",
                                                  err);
                o->timeout_ms = (int)v;
                break;
        case 'o':
                o->out = arg;
                break;
        case OPT_METRICS:
                o->metrics = arg;
                break;
        case OPT_FOLLOW:
                o->follow = 1;
                break;
        case 'h':
                ks_fleet_help(stdout);
                return KS_CLI_EXIT_OK;
        default:
                return ks_cli_usage_error("fleet", "bad option");
        }
        return KS_FLEET_GO_ON;
}

/**
 * @brief Parses `keyshift fleet`'s arguments into @p o and @p conf
 *        (bootstrap.servers and -X properties), and checks that they
 *        make a command.
 * @returns KS_FLEET_GO_ON, or the exit code (--help, or a usage error
 *          said on stderr).
 */
static int ks_fleet_parse_args(int argc, char **argv, ks_fleet_opts_t *o,
                               rd_kafka_conf_t *conf)
{
        static const struct option longopts[] = {
            {"bootstrap", required_argument, NULL, 'b'},
            {"report-topic", required_argument, NULL, 'r'},
            {"property", required_argument, NULL, 'X'},
            {"topic", required_argument, NULL, 't'},
            {"stale-after", required_argument, NULL, OPT_STALE},
            {"since", required_argument, NULL, OPT_SINCE},
            {"live", no_argument, NULL, OPT_LIVE},
            {"hot", required_argument, NULL, 'k'},
            {"timeout-ms", required_argument, NULL, OPT_TIMEOUT},
            {"metrics", required_argument, NULL, OPT_METRICS},
            {"follow", no_argument, NULL, OPT_FOLLOW},
            {"every", required_argument, NULL, OPT_EVERY},
            {"output", required_argument, NULL, 'o'},
            {"help", no_argument, NULL, 'h'},
            {NULL, 0, NULL, 0}};
        char err[512];
        int  c, r;

        optind = 1;
        while ((c = getopt_long(argc, argv, "b:r:X:t:k:o:h", longopts, NULL)) !=
               -1)
                if ((r = ks_fleet_option(o, conf, c, optarg)) != KS_FLEET_GO_ON)
                        return r;
        if (optind < argc)
                return ks_cli_usage_error("fleet", "unexpected argument '%s'",
                                          argv[optind]);
        if (!o->bootstrap)
                return ks_cli_usage_error("fleet", "--bootstrap is required");
        if (rd_kafka_conf_set(conf, "bootstrap.servers", o->bootstrap, err,
                              sizeof(err)) != RD_KAFKA_CONF_OK)
                return ks_cli_usage_error("fleet", "--bootstrap: %s", err);
        if (o->follow && !o->metrics && !strcmp(o->out, "-"))
                return ks_cli_usage_error(
                    "fleet", "--follow needs --metrics PATH or -o FILE");
        return KS_FLEET_GO_ON;
}

/**
 * @brief --follow: a round (ks_fleet_run()) every --every until SIGINT or
 *        SIGTERM; a failed round (the cluster away) is said and retried.
 * @returns KS_CLI_EXIT_OK.
 */
static int ks_fleet_follow(const ks_fleet_opts_t *o, rd_kafka_conf_t *conf)
{
        signal(SIGINT, on_stop_signal);
        signal(SIGTERM, on_stop_signal);
        while (!ks_fleet_stop) {
                double slept;
                ks_fleet_run(o, rd_kafka_conf_dup(conf));
                for (slept = 0; slept < o->every_s && !ks_fleet_stop;
                     slept += KS_FLEET_SLEEP_SLICE_MS / 1000.0)
                        usleep(KS_FLEET_SLEEP_SLICE_MS * 1000);
        }
        rd_kafka_conf_destroy(conf);
        return KS_CLI_EXIT_OK;
}

int ks_cli_fleet_main(int argc, char **argv)
{
        ks_fleet_opts_t  o    = {.report_topic  = KS_FLEET_DEFAULT_TOPIC,
                                 .out           = "-",
                                 .stale_after_s = -1,
                                 .since_s       = KS_FLEET_DEFAULT_SINCE_S,
                                 .every_s       = KS_FLEET_DEFAULT_EVERY_S,
                                 .timeout_ms    = KS_FLEET_DEFAULT_TIMEOUT_MS};
        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        int              r;

        if ((r = ks_fleet_parse_args(argc, argv, &o, conf)) != KS_FLEET_GO_ON) {
                rd_kafka_conf_destroy(conf);
                return r;
        }
        if (!o.follow)
                return ks_fleet_run(&o, conf);
        return ks_fleet_follow(&o, conf);
}
