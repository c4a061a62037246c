/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file replay_args.c
 * @brief keyshift-replay's command line: usage, options, -X properties.
 */
#include "replay_opts.h"

#include <errno.h>
#include <getopt.h>
#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef KEYSHIFT_VERSION_STR
#define KEYSHIFT_VERSION_STR "dev"
#endif

/** -n's default: synthetic sentences, enough for the sketches to settle. */
#define REPLAY_DEFAULT_COUNT 100000
/** -n's most: a bound on typing errors, far past any replay's time. */
#define REPLAY_COUNT_MAX ((long long)1e15)
/** -p's default: the topic's partitions (the demo's 6 -> 12). */
#define REPLAY_DEFAULT_PARTITIONS 6
/** -p's most: the plugin's partition ceiling (KEYSHIFT_PARTITIONS_MAX). */
#define REPLAY_PARTITIONS_MAX 100000
/** --int32-keys is a percentage. */
#define REPLAY_PCT_MAX 100

/** @brief Prints the usage to @p fp. */
static void replay_usage(FILE *fp)
{
        fputs(
            "Usage: keyshift-replay [OPTIONS] [FILE]\n"
            "Produces AIS sentences keyed by MMSI with the keyshift plugin\n"
            "loaded, then prints its partition-increase report.\n\n"
            "  FILE               AIS log, plain or .gz, - for stdin\n"
            "                     (none: a synthetic feed)\n"
            "  -n N               synthetic sentences (default 100000)\n"
            "  -t TOPIC           topic (default ais)\n"
            "  -p PARTITIONS      the topic's partitions (default 6)\n"
            "  -b BROKERS         brokers (default: the mock cluster)\n"
            "  -X key=value       librdkafka or keyshift.* property\n"
            "  --plugin PATH      plugin (default $KEYSHIFT_PLUGIN, the\n"
            "                     build tree's, the installed, libkeyshift)\n"
            "  --no-plugin        produce without keyshift\n"
            "  --proposed LIST    keyshift.partitions.proposed (12)\n"
            "  --report PATH      keyshift.report.path\n"
            "  --rate MSGS_PER_S  0 = as fast as possible (default 0)\n"
            "  --partitioner NAME librdkafka partitioner\n"
            "  --int32-keys PCT   for PCT% of MMSIs, send every odd message's\n"
            "                     key as a 4-byte big-endian int (a second\n"
            "                     serializer), the rest as decimal text\n"
            "  -h, --help / -V, --version\n",
            fp);
}

/** @returns 0 and *out, or -1 if @p s is not a number in [min, max]. */
static int replay_parse_ll(const char *s, long long min, long long max,
                           long long *out)
{
        char *end;

        errno = 0;
        *out  = strtoll(s, &end, 10);
        return errno || !*s || *end || *out < min || *out > max ? -1 : 0;
}

/** @brief Sets option @p c (value @p arg) in @p o: every option but
 *         --help, --version and getopt's errors.
 *  @returns 0, or -1 for a bad value (said by the caller). */
static int replay_option(replay_opts_t *o, int c, const char *arg)
{
        long long v;
        char     *end;

        switch (c) {
        case 'n':
                return replay_parse_ll(arg, 0, REPLAY_COUNT_MAX, &o->count);
        case 't':
                o->topic = arg;
                break;
        case 'p':
                if (replay_parse_ll(arg, 1, REPLAY_PARTITIONS_MAX, &v) == -1)
                        return -1;
                o->partitions = (int)v;
                break;
        case 'b':
                o->brokers = arg;
                break;
        case 'X':
                if (!strchr(arg, '=') || *arg == '=')
                        return -1;
                o->props[o->props_cnt++] = arg;
                break;
        case 'P':
                o->plugin = arg;
                break;
        case 'N':
                o->no_plugin = 1;
                break;
        case 'R':
                o->proposed = arg;
                break;
        case 'r':
                o->report = arg;
                break;
        case 'a':
                errno   = 0;
                o->rate = strtod(arg, &end);
                if (errno || *end || !*arg || !(o->rate >= 0))
                        return -1;
                break;
        case 'T':
                o->partitioner = arg;
                break;
        default: /* 'I' */
                if (replay_parse_ll(arg, 0, REPLAY_PCT_MAX, &v) == -1)
                        return -1;
                o->int32_pct = (int)v;
                break;
        }
        return 0;
}

/** @brief Parses argv into @p o. @returns -1 to exit 0 (help), 0 to run,
 *         2 for a usage error. */
int replay_parse_args(int argc, char **argv, replay_opts_t *o)
{
        static const struct option longopts[] = {
            {"plugin", required_argument, NULL, 'P'},
            {"no-plugin", no_argument, NULL, 'N'},
            {"proposed", required_argument, NULL, 'R'},
            {"report", required_argument, NULL, 'r'},
            {"rate", required_argument, NULL, 'a'},
            {"partitioner", required_argument, NULL, 'T'},
            {"int32-keys", required_argument, NULL, 'I'},
            {"help", no_argument, NULL, 'h'},
            {"version", no_argument, NULL, 'V'},
            {NULL, 0, NULL, 0}};
        int c;

        *o       = (replay_opts_t){.count      = REPLAY_DEFAULT_COUNT,
                                   .topic      = "ais",
                                   .partitions = REPLAY_DEFAULT_PARTITIONS,
                                   .proposed   = "12"};
        o->props = calloc((size_t)argc, sizeof(*o->props));
        while ((c = getopt_long(argc, argv, "n:t:p:b:X:hV", longopts, NULL)) !=
               -1) {
                switch (c) {
                case 'h':
                        replay_usage(stdout);
                        return -1;
                case 'V':
                        printf("keyshift-replay %s (librdkafka %s)\n",
                               KEYSHIFT_VERSION_STR, rd_kafka_version_str());
                        return -1;
                case 'n':
                case 't':
                case 'p':
                case 'b':
                case 'X':
                case 'P':
                case 'N':
                case 'R':
                case 'r':
                case 'a':
                case 'T':
                case 'I':
                        if (replay_option(o, c, optarg))
                                goto bad;
                        break;
                default:
                        replay_usage(stderr);
                        return 2;
                }
        }
        if (optind < argc)
                o->file = argv[optind++];
        if (optind < argc) {
                fprintf(stderr, "keyshift-replay: one FILE at most\n");
                return 2;
        }
        if (o->plugin && o->no_plugin) {
                fprintf(stderr, "keyshift-replay: --plugin and --no-plugin "
                                "exclude each other\n");
                return 2;
        }
        return 0;
bad:
        fprintf(stderr, "keyshift-replay: invalid %s value: %s\n",
                c == 'a'   ? "--rate"
                : c == 'n' ? "-n"
                : c == 'p' ? "-p"
                           : "-X",
                optarg);
        replay_usage(stderr);
        return 2;
}
