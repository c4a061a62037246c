/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli_scan_args.c
 * @brief `keyshift scan`'s command line: usage, --from, -X properties
 *        (librdkafka's and keyshift.*), and the consumer's defaults.
 */
#include "ks_cli_scan.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ks_cli.h"
#include "ks_partitioner.h"

#define CMD "scan"

/** --timeout-ms's default and bounds (ms): metadata, watermarks and no
 *  progress; an hour at most. */
#define KS_SCAN_TIMEOUT_MS_DEFAULT 10000
#define KS_SCAN_TIMEOUT_MS_MIN 100
#define KS_SCAN_TIMEOUT_MS_MAX 3600000
/** scan_option(): the option is taken, go on. */
#define KS_SCAN_ARG_NEXT (-2)
/** The long options without a letter. */
enum { O_MEM = 1000, O_TIMEOUT };

static void usage(FILE *fp)
{
        fprintf(
            fp,
            "Usage: keyshift scan --bootstrap HOST:PORT --topic NAME "
            "[OPTIONS]\n"
            "Reads a topic's stored records (every partition, from --from to "
            "the end\n"
            "offset each had when the scan began) and writes a "
            "keyshift.report.v2\n"
            "report with source \"scan\": the plugin's analysis of the "
            "records and an\n"
            "audit of which partitioner (consistent = CRC-32, murmur2, fnv1a) "
            "and\n"
            "partition count placed them. A consumer with assign(): no group "
            "membership,\n"
            "no commit.\n\n"
            "  -b, --bootstrap HOST:PORT  bootstrap.servers\n"
            "  -t, --topic NAME           the topic\n"
            "  -p, --proposed N,...       proposed counts (default: twice the "
            "current)\n"
            "  -f, --from WHERE           earliest (default) | latest | -N "
            "(last N records\n"
            "                             of each partition) | @UNIX_MS "
            "(first record at or\n"
            "                             after that time)\n"
            "  -u, --until WHERE          OFFSET (records below offset N in "
            "each partition) |\n"
            "                             @UNIX_MS (records before that time) "
            "| increase (each\n"
            "                             partition up to where the current "
            "count took over)\n"
            "  -m, --max-messages N       stop after N records (report "
            "complete: false)\n"
            "  -P, --partitioner NAME     the partitioner the proposals use "
            "(librdkafka's\n"
            "                             names); default: the family the "
            "audit finds for\n"
            "                             the newest records\n"
            "  -X PROP=VALUE              a librdkafka consumer property "
            "(security.protocol,\n"
            "                             sasl.*, ssl.*, isolation.level, "
            "...) or a keyshift.*\n"
            "                             property (hot.keys, "
            "key.sample.size, memory.max.mb,\n"
            "                             sizing.*); repeatable\n"
            "      --memory-max-mb N      memory for the sketches and the "
            "audit's groups,\n"
            "                             MiB (keyshift.memory.max.mb)\n"
            "      --timeout-ms N         metadata, watermarks and no-progress "
            "timeout\n"
            "                             (default 10000)\n"
            "  -o, --output FILE          the report (default "
            "keyshift-scan-TOPIC.json)\n"
            "  -h, --help                 this help\n\n"
            "Exit: 0 read to the end, 1 failure (unknown topic, unreachable "
            "broker, empty\n"
            "range, consumer error), 2 usage, 130 interrupted, 143 terminated "
            "(partial report "
            "written).\n");
}

/** @brief Parses --from. @returns 0 or -1. */
static int parse_from(scan_opts_t *o, const char *v, char *err, size_t errsz)
{
        long long n;

        o->from_text = v;
        if (!strcmp(v, "earliest") || !strcmp(v, "beginning")) {
                o->from = KS_SCAN_FROM_EARLIEST;
        } else if (!strcmp(v, "latest") || !strcmp(v, "end")) {
                o->from = KS_SCAN_FROM_LATEST;
        } else if (v[0] == '-' &&
                   !ks_cli_parse_long(v + 1, 1, INT64_MAX, &n, err, errsz)) {
                o->from     = KS_SCAN_FROM_LAST;
                o->from_arg = n;
        } else if (v[0] == '@' &&
                   !ks_cli_parse_long(v + 1, 0, INT64_MAX, &n, err, errsz)) {
                o->from     = KS_SCAN_FROM_TIME;
                o->from_arg = n;
        } else {
                snprintf(err, errsz,
                         "--from '%s': expected earliest, latest, -N (N >= 1 "
                         "records from each partition's end) or @UNIX_MS "
                         "(milliseconds since the epoch)",
                         v);
                return -1;
        }
        return 0;
}

/** @brief Parses --until. @returns 0 or -1. */
static int parse_until(scan_opts_t *o, const char *v, char *err, size_t errsz)
{
        long long n;

        o->until_text = v;
        if (!strcmp(v, "increase")) {
                o->until = KS_SCAN_UNTIL_INCREASE;
        } else if (v[0] == '@' &&
                   !ks_cli_parse_long(v + 1, 0, INT64_MAX, &n, err, errsz)) {
                o->until     = KS_SCAN_UNTIL_TIME;
                o->until_arg = n;
        } else if (v[0] >= '0' && v[0] <= '9' &&
                   !ks_cli_parse_long(v, 1, INT64_MAX, &n, err, errsz)) {
                o->until     = KS_SCAN_UNTIL_OFFSET;
                o->until_arg = n;
        } else {
                snprintf(err, errsz,
                         "--until '%s': expected OFFSET (N >= 1: each "
                         "partition's records below offset N), @UNIX_MS "
                         "(records before that time) or increase (each "
                         "partition up to its switch to the current count)",
                         v);
                return -1;
        }
        return 0;
}

/** @brief Applies -X @p kv to the consumer or keyshift configuration.
 *  @returns 0 or -1 with @p err. */
static int set_property(scan_opts_t *o, const char *kv, char *err, size_t errsz)
{
        const char *eq = strchr(kv, '=');
        char        name[256], errstr[400];

        if (!eq || eq == kv || (size_t)(eq - kv) >= sizeof(name)) {
                snprintf(err, errsz,
                         "-X '%s': expected PROPERTY=VALUE (a librdkafka "
                         "consumer property or a keyshift.* property)",
                         kv);
                return -1;
        }
        memcpy(name, kv, (size_t)(eq - kv));
        name[eq - kv] = 0;
        switch (
            ks_config_set(&o->kconf, name, eq + 1, errstr, sizeof(errstr))) {
        case KS_CONFIG_OK:
                return 0;
        case KS_CONFIG_INVALID:
                snprintf(err, errsz, "-X %s: %s", name, errstr);
                return -1;
        case KS_CONFIG_UNKNOWN:
                break;
        }
        if (rd_kafka_conf_set(o->rk_conf, name, eq + 1, errstr,
                              sizeof(errstr)) != RD_KAFKA_CONF_OK) {
                snprintf(err, errsz, "-X %s: %s", name, errstr);
                return -1;
        }
        return 0;
}

/** @brief The consumer's own settings, before -X (which may change them).*/
void ks_cli_scan_consumer_defaults(rd_kafka_conf_t *conf)
{
        char errstr[256], group[64];

        /* assign() needs a group.id; the scan never subscribes, so it
         * never joins it, and never commits */
        snprintf(group, sizeof(group), "keyshift-scan-%ld", (long)getpid());
        rd_kafka_conf_set(conf, "group.id", group, errstr, sizeof(errstr));
        rd_kafka_conf_set(conf, "client.id", "keyshift-scan", errstr,
                          sizeof(errstr));
        rd_kafka_conf_set(conf, "enable.auto.commit", "false", errstr,
                          sizeof(errstr));
        rd_kafka_conf_set(conf, "enable.auto.offset.store", "false", errstr,
                          sizeof(errstr));
        rd_kafka_conf_set(conf, "enable.partition.eof", "true", errstr,
                          sizeof(errstr));
        rd_kafka_conf_set(conf, "allow.auto.create.topics", "false", errstr,
                          sizeof(errstr));
        rd_kafka_conf_set(conf, "isolation.level", "read_committed", errstr,
                          sizeof(errstr));
        /* librdkafka stops fetching a partition while its local queue
         * holds queued.min.messages (100,000 by default) and backs off
         * before it fetches again: the scan drains 100,000 records faster
         * than the back-off and sat idle 3/4 of the time (1 M records of
         * 73 bytes, 6 partitions: 4.2-5.2 s, 1.3 s with these). The queue
         * is bounded by queued.max.messages.kbytes instead: 32 MiB of
         * records (with librdkafka's per-message overhead the scan's
         * resident memory was ~230 MB in all there, 65 MB before; 64 MiB,
         * librdkafka's default, made it ~330 MB for no speed). -X
         * overrides both. */
        rd_kafka_conf_set(conf, "queued.min.messages", "1000000", errstr,
                          sizeof(errstr));
        rd_kafka_conf_set(conf, "queued.max.messages.kbytes", "32768", errstr,
                          sizeof(errstr));
}

/** @brief Sets --partitioner @p arg in @p o: one of librdkafka's
 *         partitioners that hash keys.
 *  @returns KS_SCAN_ARG_NEXT, or KS_CLI_EXIT_USAGE after printing the
 *           error. */
static int scan_partitioner(scan_opts_t *o, const char *arg)
{
        ks_partitioner_t pt;

        if (ks_partitioner_from_name(arg, &pt) || pt == KS_PARTITIONER_RANDOM)
                return ks_cli_usage_error(
                    CMD,
                    "--partitioner '%s': expected one of "
                    "consistent, consistent_random, murmur2, "
                    "murmur2_random, fnv1a, fnv1a_random",
                    arg);
        o->partitioner = (int)pt;
        return KS_SCAN_ARG_NEXT;
}

/**
 * @brief Sets option @p c (value @p arg) in @p o: every option but
 *        --help and getopt's errors.
 * @returns KS_SCAN_ARG_NEXT, or KS_CLI_EXIT_USAGE after printing the
 *          error.
 */
static int scan_option(scan_opts_t *o, int c, const char *arg)
{
        char      err[700], num[32];
        long long n;

        switch (c) {
        case 'b':
                o->bootstrap = arg;
                break;
        case 't':
                o->topic = arg;
                break;
        case 'p':
                if (ks_cli_parse_counts(arg, o->proposed, KEYSHIFT_PROPOSED_MAX,
                                        &o->proposed_cnt, err, sizeof(err)))
                        return ks_cli_usage_error(CMD, "--proposed: %s", err);
                break;
        case 'f':
                if (parse_from(o, arg, err, sizeof(err)))
                        return ks_cli_usage_error(CMD, "%s", err);
                break;
        case 'u':
                if (parse_until(o, arg, err, sizeof(err)))
                        return ks_cli_usage_error(CMD, "%s", err);
                break;
        case 'm':
                if (ks_cli_parse_long(arg, 1, INT64_MAX, &n, err, sizeof(err)))
                        return ks_cli_usage_error(CMD, "--max-messages: %s",
                                                  err);
                o->max_messages = (uint64_t)n;
                break;
        case 'P':
                return scan_partitioner(o, arg);
        case 'o':
                o->output = arg;
                break;
        case 'X':
                if (set_property(o, arg, err, sizeof(err)))
                        return ks_cli_usage_error(CMD, "%s", err);
                break;
        case O_MEM:
                snprintf(num, sizeof(num), "%.20s", arg);
                if (ks_config_set(&o->kconf, "keyshift.memory.max.mb", num, err,
                                  sizeof(err)) != KS_CONFIG_OK)
                        return ks_cli_usage_error(CMD, "--memory-max-mb: %s",
                                                  err);
                break;
        default: /* O_TIMEOUT */
                if (ks_cli_parse_long(arg, KS_SCAN_TIMEOUT_MS_MIN,
                                      KS_SCAN_TIMEOUT_MS_MAX, &n, err,
                                      sizeof(err)))
                        return ks_cli_usage_error(CMD, "--timeout-ms: %s", err);
                o->timeout_ms = (int)n;
                break;
        }
        return KS_SCAN_ARG_NEXT;
}

/** @brief Checks that the options make a scan (bootstrap and topic given)
 *         and completes the configurations with them.
 *  @returns 0, or KS_CLI_EXIT_USAGE after printing the error. */
static int scan_check_args(scan_opts_t *o)
{
        char err[700];

        if (!o->bootstrap)
                return ks_cli_usage_error(CMD,
                                          "--bootstrap HOST:PORT is required");
        if (!o->topic || !*o->topic)
                return ks_cli_usage_error(CMD, "--topic NAME is required");
        if (rd_kafka_conf_set(o->rk_conf, "bootstrap.servers", o->bootstrap,
                              err, sizeof(err)) != RD_KAFKA_CONF_OK)
                return ks_cli_usage_error(CMD, "--bootstrap: %s", err);
        if (o->proposed_cnt) {
                memcpy(o->kconf.proposed, o->proposed, sizeof(o->proposed));
                o->kconf.proposed_cnt = o->proposed_cnt;
        }
        return 0;
}

/** @returns 0, -1 after --help, or KS_CLI_EXIT_USAGE after printing the
 *           error. */
int ks_cli_scan_parse_args(scan_opts_t *o, int argc, char **argv)
{
        static const struct option longopts[] = {
            {"bootstrap", required_argument, NULL, 'b'},
            {"topic", required_argument, NULL, 't'},
            {"proposed", required_argument, NULL, 'p'},
            {"from", required_argument, NULL, 'f'},
            {"until", required_argument, NULL, 'u'},
            {"max-messages", required_argument, NULL, 'm'},
            {"partitioner", required_argument, NULL, 'P'},
            {"output", required_argument, NULL, 'o'},
            {"memory-max-mb", required_argument, NULL, O_MEM},
            {"timeout-ms", required_argument, NULL, O_TIMEOUT},
            {"help", no_argument, NULL, 'h'},
            {NULL, 0, NULL, 0}};
        int c, r;

        o->timeout_ms  = KS_SCAN_TIMEOUT_MS_DEFAULT;
        o->partitioner = -1;
        o->from_text   = "earliest";
        opterr         = 0;
        optind         = 1;
        while ((c = getopt_long(argc, argv, ":b:t:p:f:u:m:P:o:X:h", longopts,
                                NULL)) != -1) {
                switch (c) {
                case 'h':
                        usage(stdout);
                        return -1;
                case ':':
                        return ks_cli_usage_error(
                            CMD, "option %s needs a value", argv[optind - 1]);
                case 'b':
                case 't':
                case 'p':
                case 'f':
                case 'u':
                case 'm':
                case 'P':
                case 'o':
                case 'X':
                case O_MEM:
                case O_TIMEOUT:
                        if ((r = scan_option(o, c, optarg)) != KS_SCAN_ARG_NEXT)
                                return r;
                        break;
                default:
                        return ks_cli_usage_error(CMD, "unknown option '%s'",
                                                  argv[optind - 1]);
                }
        }
        if (optind < argc)
                return ks_cli_usage_error(CMD, "unexpected argument '%s'",
                                          argv[optind]);
        return scan_check_args(o);
}
