/**
 * @file keyshift_replay.c
 * @brief keyshift-replay: the demo producer. Reads an AIS NMEA log (plain
 *        or .gz) or a synthetic feed, produces every keyed sentence with
 *        key = MMSI (decimal ASCII) and value = the raw log line, and
 *        prints what the keyshift plugin concluded.
 *
 * keyshift is loaded only through librdkafka's `plugin.library.paths`
 * (never linked): this program is a stand-in for any unmodified producer.
 * The plugin writes its final report when the producer is destroyed, so
 * the summary is read back from the report file after rd_kafka_destroy().
 *
 * Without -b the producer runs against librdkafka's embedded mock cluster
 * (`test.mock.num.brokers=1`, librdkafka CONFIGURATION.md), whose topic is
 * created with rd_kafka_mock_topic_create() (rdkafka_mock.h) before the
 * first message; with -b the topic is created with the Admin API if absent.
 *
 * Exit codes: 0 ok, 1 failure (messages not delivered, input unreadable,
 * no report although --plugin was given), 2 usage.
 */
#include "ais_nmea.h"
#include "ais_reader.h"
#include "ais_synth.h"
#include "replay_keys.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef KS_PLUGIN_BUILD_PATH
#define KS_PLUGIN_BUILD_PATH ""
#endif
#ifndef KS_PLUGIN_INSTALL_PATH
#define KS_PLUGIN_INSTALL_PATH "/usr/local/lib/libkeyshift.so"
#endif
#ifndef KEYSHIFT_VERSION_STR
#define KEYSHIFT_VERSION_STR "dev"
#endif

/** The plugin's default keyshift.report.path (include/keyshift/keyshift.h). */
#define REPLAY_REPORT_DEFAULT "keyshift-%c-%p.json"

typedef struct replay_opts {
        const char  *file; /**< NULL: synthetic feed */
        long long    count;
        const char  *topic;
        int          partitions;
        const char  *brokers; /**< NULL: mock cluster */
        const char **props;   /**< -X key=value, in order */
        int          props_cnt;
        const char  *plugin; /**< NULL: default search */
        int          no_plugin;
        const char  *proposed;
        const char  *report;
        double       rate;
        const char  *partitioner;
        int int32_pct; /**< MMSIs (in %) whose odd messages are int32 keys */
} replay_opts_t;

/** Delivery counters; written by dr_msg_cb, which runs inside
 *  rd_kafka_poll()/rd_kafka_flush() on the main thread: no lock. */
typedef struct replay_counts {
        long long           produced, delivered, failed, produce_errors;
        rd_kafka_resp_err_t first_err;
} replay_counts_t;

static volatile sig_atomic_t replay_stop;

/** @brief SIGINT/SIGTERM: stop reading, flush, write the report. */
static void replay_on_signal(int sig)
{
        (void)sig;
        replay_stop = 1;
}

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

/** @brief Parses argv into @p o. @returns -1 to exit 0 (help), 0 to run,
 *         2 for a usage error. */
static int replay_parse_args(int argc, char **argv, replay_opts_t *o)
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
        long long v;
        char     *end;
        int       c;

        *o = (replay_opts_t){
            .count = 100000, .topic = "ais", .partitions = 6, .proposed = "12"};
        o->props = calloc((size_t)argc, sizeof(*o->props));
        while ((c = getopt_long(argc, argv, "n:t:p:b:X:hV", longopts, NULL)) !=
               -1) {
                switch (c) {
                case 'n':
                        if (replay_parse_ll(optarg, 0, (long long)1e15,
                                            &o->count) == -1)
                                goto bad;
                        break;
                case 't':
                        o->topic = optarg;
                        break;
                case 'p':
                        if (replay_parse_ll(optarg, 1, 100000, &v) == -1)
                                goto bad;
                        o->partitions = (int)v;
                        break;
                case 'b':
                        o->brokers = optarg;
                        break;
                case 'X':
                        if (!strchr(optarg, '=') || *optarg == '=')
                                goto bad;
                        o->props[o->props_cnt++] = optarg;
                        break;
                case 'P':
                        o->plugin = optarg;
                        break;
                case 'N':
                        o->no_plugin = 1;
                        break;
                case 'R':
                        o->proposed = optarg;
                        break;
                case 'r':
                        o->report = optarg;
                        break;
                case 'a':
                        errno   = 0;
                        o->rate = strtod(optarg, &end);
                        if (errno || *end || !*optarg || !(o->rate >= 0))
                                goto bad;
                        break;
                case 'T':
                        o->partitioner = optarg;
                        break;
                case 'I':
                        if (replay_parse_ll(optarg, 0, 100, &v) == -1)
                                goto bad;
                        o->int32_pct = (int)v;
                        break;
                case 'h':
                        replay_usage(stdout);
                        return -1;
                case 'V':
                        printf("keyshift-replay %s (librdkafka %s)\n",
                               KEYSHIFT_VERSION_STR, rd_kafka_version_str());
                        return -1;
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

/** @returns the plugin path to load: --plugin, $KEYSHIFT_PLUGIN, the build
 *           tree's if it exists, the installed one if it exists, else
 *           "libkeyshift" (found by the dynamic loader's search path). */
static const char *replay_plugin_path(const replay_opts_t *o)
{
        const char *env = getenv("KEYSHIFT_PLUGIN");

        if (o->plugin)
                return o->plugin;
        if (env && *env)
                return env;
        if (*KS_PLUGIN_BUILD_PATH && access(KS_PLUGIN_BUILD_PATH, R_OK) == 0)
                return KS_PLUGIN_BUILD_PATH;
        if (access(KS_PLUGIN_INSTALL_PATH, R_OK) == 0)
                return KS_PLUGIN_INSTALL_PATH;
        return "libkeyshift";
}

/** @brief Sets @p name = @p value, printing librdkafka's error.
 *  @returns 0 or -1. */
static int replay_set(rd_kafka_conf_t *conf, const char *name,
                      const char *value)
{
        char errstr[512];

        if (rd_kafka_conf_set(conf, name, value, errstr, sizeof(errstr)) ==
            RD_KAFKA_CONF_OK)
                return 0;
        fprintf(stderr, "keyshift-replay: %s=%s: %s\n", name, value, errstr);
        return -1;
}

/** @brief Counts each delivery report. @locality librdkafka calls it from
 *         rd_kafka_poll()/rd_kafka_flush() on the main thread. */
static void replay_dr_msg_cb(rd_kafka_t *rk, const rd_kafka_message_t *m,
                             void *opaque)
{
        replay_counts_t *c = opaque;

        (void)rk;
        if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
                c->delivered++;
                return;
        }
        if (!c->failed++)
                c->first_err = m->err;
}

/**
 * @brief Builds the producer configuration: plugin first, then the
 *        replay's settings, the shorthands, and -X in order.
 * @param plugin_loaded  set to 1 if keyshift was loaded.
 * @param report_tmpl    set to the report path template in force.
 * @returns the configuration, or NULL with *exit_code set.
 */
static rd_kafka_conf_t *replay_conf(const replay_opts_t *o,
                                    replay_counts_t *counts, int *plugin_loaded,
                                    const char **report_tmpl, int *exit_code)
{
        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        char             errstr[512];
        int              i;

        *plugin_loaded = 0;
        *report_tmpl   = REPLAY_REPORT_DEFAULT;
        *exit_code     = 2; /* a bad property is a usage error */
        if (!o->no_plugin) {
                const char *path = replay_plugin_path(o);
                if (rd_kafka_conf_set(conf, "plugin.library.paths", path,
                                      errstr,
                                      sizeof(errstr)) == RD_KAFKA_CONF_OK) {
                        *plugin_loaded = 1;
                } else if (o->plugin) {
                        fprintf(stderr, "keyshift-replay: %s\n", errstr);
                        *exit_code = 1; /* the plugin asked for is not there */
                        goto fail;
                } else {
                        fprintf(stderr,
                                "keyshift-replay: keyshift plugin not "
                                "loaded (%s); producing without it\n",
                                errstr);
                }
        }
        if (replay_set(conf, "client.id", "keyshift-replay") == -1 ||
            replay_set(conf,
                       o->brokers ? "bootstrap.servers"
                                  : "test.mock.num.brokers",
                       o->brokers ? o->brokers : "1") == -1 ||
            (o->partitioner &&
             replay_set(conf, "partitioner", o->partitioner) == -1))
                goto fail;
        /* a replay reads a file as fast as librdkafka takes it: it may
         * outrun keyshift's analysis, and a rehearsal wants every message
         * analysed (-X keyshift.overload=skip measures the plugin's
         * default instead) */
        if (*plugin_loaded &&
            (replay_set(conf, "keyshift.overload", "analyse") == -1 ||
             replay_set(conf, "keyshift.partitions.proposed", o->proposed) ==
                 -1 ||
             (o->report &&
              replay_set(conf, "keyshift.report.path", o->report) == -1)))
                goto fail;
        if (o->report)
                *report_tmpl = o->report;
        for (i = 0; i < o->props_cnt; i++) {
                char *name = strdup(o->props[i]), *value;
                int   rc;
                if (!name)
                        goto fail;
                value    = strchr(name, '=');
                *value++ = '\0';
                if (!*plugin_loaded && !strncmp(name, "keyshift.", 9)) {
                        fprintf(stderr,
                                "keyshift-replay: ignoring %s: plugin not "
                                "loaded\n",
                                name);
                        free(name);
                        continue;
                }
                rc = replay_set(conf, name, value);
                if (rc == 0 && !strcmp(name, "keyshift.report.path"))
                        *report_tmpl = o->props[i] + (value - name);
                if (rc == 0 && !strcmp(name, "plugin.library.paths"))
                        *plugin_loaded = 1; /* the user's own choice */
                free(name);
                if (rc == -1)
                        goto fail;
        }
        rd_kafka_conf_set_dr_msg_cb(conf, replay_dr_msg_cb);
        rd_kafka_conf_set_opaque(conf, counts);
        *exit_code = 0;
        return conf;
fail:
        rd_kafka_conf_destroy(conf);
        return NULL;
}

/**
 * @returns the partition count of @p topic from a metadata request for all
 *          topics (one naming the topic could auto-create it: a producer's
 *          allow.auto.create.topics defaults to true), 0 if it does not
 *          exist, -1 on error (printed).
 */
static int replay_topic_partitions(rd_kafka_t *rk, const char *topic)
{
        const rd_kafka_metadata_t *md;
        rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 1, NULL, &md, 10000);
        int                 i, cnt = 0;

        if (err) {
                fprintf(stderr, "keyshift-replay: metadata: %s\n",
                        rd_kafka_err2str(err));
                return -1;
        }
        for (i = 0; i < md->topic_cnt; i++)
                if (!strcmp(md->topics[i].topic, topic) && !md->topics[i].err)
                        cnt = md->topics[i].partition_cnt;
        rd_kafka_metadata_destroy(md);
        return cnt;
}

/** @brief Creates @p o->topic with the Admin API (CreateTopics), the
 *         brokers' default replication factor. @returns 0, or an error. */
static rd_kafka_resp_err_t replay_admin_create(rd_kafka_t          *rk,
                                               const replay_opts_t *o)
{
        char                 errstr[512];
        rd_kafka_NewTopic_t *nt = rd_kafka_NewTopic_new(
            o->topic, o->partitions, -1, errstr, sizeof(errstr));
        rd_kafka_queue_t   *q = rd_kafka_queue_new(rk);
        rd_kafka_event_t   *ev;
        rd_kafka_resp_err_t err;
        size_t              cnt = 0;

        if (!nt) {
                rd_kafka_queue_destroy(q);
                return RD_KAFKA_RESP_ERR__INVALID_ARG;
        }
        rd_kafka_CreateTopics(rk, &nt, 1, NULL, q);
        ev  = rd_kafka_queue_poll(q, 30000);
        err = ev ? rd_kafka_event_error(ev) : RD_KAFKA_RESP_ERR__TIMED_OUT;
        if (!err) {
                const rd_kafka_topic_result_t **res =
                    rd_kafka_CreateTopics_result_topics(
                        rd_kafka_event_CreateTopics_result(ev), &cnt);
                err = cnt ? rd_kafka_topic_result_error(res[0])
                          : RD_KAFKA_RESP_ERR_UNKNOWN;
        }
        if (err == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS)
                err = RD_KAFKA_RESP_ERR_NO_ERROR;
        if (ev)
                rd_kafka_event_destroy(ev);
        rd_kafka_queue_destroy(q);
        rd_kafka_NewTopic_destroy(nt);
        return err;
}

/**
 * @brief Makes sure the topic exists: on the mock cluster by creating it
 *        with -p partitions; on real brokers by creating it with the Admin
 *        API if absent (an existing topic is kept as it is, and a partition
 *        count other than -p is reported).
 * @returns 0, -1 on failure (printed).
 */
static int replay_create_topic(rd_kafka_t *rk, const replay_opts_t *o)
{
        rd_kafka_mock_cluster_t *mc = rd_kafka_handle_mock_cluster(rk);
        rd_kafka_resp_err_t      err;
        int                      cnt;

        if (mc)
                err =
                    rd_kafka_mock_topic_create(mc, o->topic, o->partitions, 1);
        else if ((cnt = replay_topic_partitions(rk, o->topic)) == -1)
                return -1;
        else if (cnt == 0)
                err = replay_admin_create(rk, o);
        else {
                if (cnt != o->partitions)
                        fprintf(stderr,
                                "keyshift-replay: topic %s exists with %d "
                                "partitions (-p %d ignored)\n",
                                o->topic, cnt, o->partitions);
                return 0;
        }
        if (err) {
                fprintf(stderr, "keyshift-replay: creating topic %s: %s\n",
                        o->topic, rd_kafka_err2str(err));
                return -1;
        }
        return 0;
}

/** @returns the monotonic clock in seconds. */
static double replay_now(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/** @brief Produces one keyed line, waiting while the queue is full.
 *  @returns 0, -1 if the message was refused (counted). */
static int replay_produce(rd_kafka_t *rk, const char *topic, uint32_t mmsi,
                          int as_int32, const char *line, size_t len,
                          replay_counts_t *c)
{
        char                key[16];
        int                 klen;
        rd_kafka_resp_err_t err;

        if (as_int32) { /* Java's IntegerSerializer: 4 bytes, big-endian */
                key[0] = (char)(mmsi >> 24);
                key[1] = (char)(mmsi >> 16);
                key[2] = (char)(mmsi >> 8);
                key[3] = (char)mmsi;
                klen   = 4;
        } else {
                klen = snprintf(key, sizeof(key), "%u", mmsi);
        }

        for (;;) {
                err = rd_kafka_producev(
                    rk, RD_KAFKA_V_TOPIC(topic),
                    RD_KAFKA_V_KEY(key, (size_t)klen),
                    RD_KAFKA_V_VALUE((void *)line, len),
                    RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
                if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL)
                        break;
                rd_kafka_poll(rk, 100);
        }
        if (err) {
                if (!c->produce_errors++)
                        fprintf(stderr, "keyshift-replay: produce: %s\n",
                                rd_kafka_err2str(err));
                return -1;
        }
        c->produced++;
        rd_kafka_poll(rk, 0);
        return 0;
}

/** The input: a log file or the synthetic feed. */
typedef struct replay_input {
        ks_ais_reader_t *reader;
        ks_ais_synth_t  *synth;
        long long        lines; /**< read so far */
} replay_input_t;

/** @brief Opens the log file, or the synthetic feed when there is none.
 *  @returns 0, -1 on failure (printed). */
static int replay_input_open(replay_input_t *in, const replay_opts_t *o)
{
        char err[512];

        memset(in, 0, sizeof(*in));
        if (o->file &&
            !(in->reader = ks_ais_reader_open(o->file, err, sizeof(err)))) {
                fprintf(stderr, "keyshift-replay: %s\n", err);
                return -1;
        }
        if (!o->file && !(in->synth = ks_ais_synth_new(NULL))) {
                fprintf(stderr, "keyshift-replay: out of memory\n");
                return -1;
        }
        return 0;
}

/** @brief Closes what replay_input_open() opened. */
static void replay_input_close(replay_input_t *in)
{
        ks_ais_reader_close(in->reader);
        ks_ais_synth_destroy(in->synth);
}

/**
 * @brief Reads the input and produces every keyed sentence, at most
 *        o->rate per second, until the input ends or a signal arrives.
 * @returns 0, -1 if the input could not be read (printed).
 */
static int replay_run(rd_kafka_t *rk, const replay_opts_t *o,
                      replay_input_t *in, ks_ais_decoder_t *dec,
                      replay_counts_t *c)
{
        char   synth_line[KS_AIS_SYNTH_LINE_MAX];
        double start = replay_now();
        int    rc    = 0;

        while (!replay_stop) {
                const char  *line = synth_line;
                size_t       len;
                ks_ais_msg_t m;

                if (in->synth) {
                        if (in->lines >= o->count)
                                break;
                        len = ks_ais_synth_next(in->synth, synth_line,
                                                sizeof(synth_line), NULL);
                } else if ((rc = ks_ais_reader_next(in->reader, &line, &len)) !=
                           1) {
                        if (rc == -1)
                                fprintf(stderr, "keyshift-replay: %s: %s\n",
                                        o->file,
                                        ks_ais_reader_error(in->reader));
                        rc = rc == -1 ? -1 : 0;
                        break;
                }
                in->lines++;
                if (ks_ais_decode_line(dec, line, len, &m) != KS_AIS_KEYED)
                        continue;
                if (o->rate > 0) {
                        double wait =
                            start + c->produced / o->rate - replay_now();
                        if (wait > 0)
                                rd_kafka_poll(rk, (int)(wait * 1000) + 1);
                }
                replay_produce(
                    rk, o->topic, m.mmsi,
                    ks_replay_int32_key(o->int32_pct, m.mmsi, c->produced),
                    line, len, c);
        }
        return rc;
}

/**
 * @brief Expands the report path template the way the plugin does
 *        (core/config/ks_config.c ks_config_report_path()): %c = client.id with
 *        characters other than [A-Za-z0-9._-] as '_', %p = pid, %% = '%'.
 */
static void replay_report_path(const char *tmpl, const char *client_id,
                               long pid, char *out, size_t size)
{
        size_t o = 0;

#define REPLAY_PUT(ch)                                                         \
        do {                                                                   \
                if (o + 1 < size)                                              \
                        out[o++] = (ch);                                       \
        } while (0)
        for (; *tmpl; tmpl++) {
                if (*tmpl != '%') {
                        REPLAY_PUT(*tmpl);
                } else if (tmpl[1] == 'c') {
                        const char *c;
                        for (c = client_id, tmpl++; *c; c++)
                                REPLAY_PUT((*c >= 'a' && *c <= 'z') ||
                                                   (*c >= 'A' && *c <= 'Z') ||
                                                   (*c >= '0' && *c <= '9') ||
                                                   *c == '.' || *c == '_' ||
                                                   *c == '-'
                                               ? *c
                                               : '_');
                } else if (tmpl[1] == 'p') {
                        char num[32], *c;
                        snprintf(num, sizeof(num), "%ld", pid);
                        for (c = num, tmpl++; *c; c++)
                                REPLAY_PUT(*c);
                } else {
                        REPLAY_PUT('%');
                        if (tmpl[1])
                                tmpl++; /* "%%" and "%x" both give '%' */
                }
        }
#undef REPLAY_PUT
        out[o] = '\0';
}

/** @returns the number at @p key of object @p obj (0 if absent). */
static double replay_num(const json_t *obj, const char *key)
{
        return json_number_value(json_object_get(obj, key));
}

/** @returns the string at @p key of object @p obj ("?" if absent). */
static const char *replay_str(const json_t *obj, const char *key)
{
        const char *s = json_string_value(json_object_get(obj, key));
        return s ? s : "?";
}

/** @brief Prints a per-partition load array as messages per partition
 *         (first 24) and the busiest partition's share. */
static void replay_print_load(const char *label, json_t *parts)
{
        json_t *p;
        size_t  i, n = json_array_size(parts);
        double  total = 0, max = 0;

        json_array_foreach(parts, i, p)
        {
                double m = replay_num(p, "messages");
                total += m;
                max = m > max ? m : max;
        }
        printf("    %-14s", label);
        json_array_foreach(parts, i, p)
        {
                if (i == 24) {
                        printf(" ...");
                        break;
                }
                printf(" %.0f", replay_num(p, "messages"));
        }
        printf("  (busiest %.1f%%, fair %.1f%%)\n",
               total ? 100 * max / total : 0.0, n ? 100.0 / (double)n : 0.0);
}

/** @brief Prints one topic of the report: counts, moves, top 5 hot keys. */
static void replay_print_topic(const char *name, json_t *t)
{
        json_t     *pc      = json_object_get(t, "partition_count"), *p, *v;
        int         current = (int)replay_num(pc, "current");
        const char *cnt;
        size_t      i;

        printf("  topic %s: %d partitions (%s), %.0f messages, partitioner "
               "%s\n",
               name, current, replay_str(pc, "source"),
               replay_num(t, "messages"),
               json_is_object(json_object_get(t, "partitioner"))
                   /* {name, source, ...} since the partitioner is learned */
                   ? replay_str(json_object_get(t, "partitioner"), "name")
                   : replay_str(t, "partitioner"));
        replay_print_load(
            "load now:",
            json_object_get(json_object_get(t, "current"), "partitions"));
        json_array_foreach(json_object_get(t, "proposals"), i, p)
        {
                json_t *moved = json_object_get(p, "moved");
                char    label[32];
                printf("    %d -> %d partitions: %.0f messages (%.1f%%) and "
                       "%.0f distinct keys (%.1f%%) move\n",
                       current, (int)replay_num(p, "partition_count"),
                       replay_num(moved, "messages"),
                       100 * replay_num(moved, "messages_fraction"),
                       replay_num(moved, "distinct_keys"),
                       100 * replay_num(moved, "distinct_keys_fraction"));
                snprintf(label, sizeof(label),
                         "load at %d:", (int)replay_num(p, "partition_count"));
                replay_print_load(label, json_object_get(p, "partitions"));
        }
        json_array_foreach(json_object_get(t, "hot_keys"), i, p)
        {
                json_t *mv = json_object_get(p, "moves");
                if (i >= 5)
                        break;
                printf("    hot key %-12s %8.0f msgs %6.2f%%  p%d",
                       replay_str(p, "key"), replay_num(p, "messages"),
                       100 * replay_num(p, "share"),
                       (int)replay_num(p, "partition_current"));
                json_object_foreach(json_object_get(p, "partition_proposed"),
                                    cnt, v)
                {
                        printf(" -> %s:p%d%s", cnt, (int)json_number_value(v),
                               json_is_true(json_object_get(mv, cnt))
                                   ? " (moves)"
                                   : "");
                }
                printf("\n");
        }
        json_array_foreach(json_object_get(t, "warnings"), i, p)
        {
                printf("    warning %s: %s\n", replay_str(p, "code"),
                       replay_str(p, "message"));
        }
}

/** @brief Prints the report's summary. @param since  when this run began:
 *         an older file is a previous run's, not ours.
 *  @returns 0, -1 if it is missing, stale or unreadable (printed). */
static int replay_print_report(const char *path, time_t since)
{
        json_error_t jerr;
        json_t      *root, *t;
        const char  *name;
        struct stat  sb;
        size_t       i;

        if (stat(path, &sb) == 0 && sb.st_mtime < since) {
                printf("report: %s: stale (older than this run)\n", path);
                return -1;
        }
        if (!(root = json_load_file(path, 0, &jerr))) {
                printf("report: %s: none (%s)\n", path, jerr.text);
                return -1;
        }
        printf("report: %s (%s)\n", path, replay_str(root, "schema"));
        json_object_foreach(json_object_get(root, "topics"), name, t)
        {
                replay_print_topic(name, t);
        }
        json_array_foreach(json_object_get(root, "warnings"), i, t)
        {
                printf("  warning %s: %s\n", replay_str(t, "code"),
                       replay_str(t, "message"));
        }
        json_decref(root);
        return 0;
}

/** @brief Prints the input and delivery counts. */
static void replay_print_counts(const replay_opts_t   *o,
                                const ks_ais_stats_t  *st,
                                const replay_counts_t *c)
{
        printf(
            "input: %s: %llu lines: %llu non-AIS, %llu malformed, %llu "
            "sentences\n       (%llu bad checksum, %llu keyed, %llu "
            "unkeyed, %llu orphan fragments), %llu AIS messages (a "
            "multi-sentence message counted once; each sentence is produced)\n",
            o->file ? o->file : "synthetic feed", (unsigned long long)st->lines,
            (unsigned long long)st->non_ais, (unsigned long long)st->malformed,
            (unsigned long long)st->sentences,
            (unsigned long long)st->bad_checksum, (unsigned long long)st->keyed,
            (unsigned long long)st->unkeyed,
            (unsigned long long)st->orphan_fragments,
            (unsigned long long)st->messages);
        printf("producer: topic %s on %s: %lld produced, %lld delivered, "
               "%lld failed%s%s, %lld refused\n",
               o->topic, o->brokers ? o->brokers : "mock cluster", c->produced,
               c->delivered, c->failed, c->failed ? ": " : "",
               c->failed ? rd_kafka_err2str(c->first_err) : "",
               c->produce_errors);
}

/**
 * @brief Produces the whole input, then destroys the producer so that the
 *        plugin writes its final report.
 * @returns the exit code so far (0 or 1).
 */
static int replay_produce_all(rd_kafka_t *rk, const replay_opts_t *o,
                              replay_input_t *in, ks_ais_decoder_t *dec,
                              replay_counts_t *c)
{
        int exit_code = 0;

        signal(SIGINT, replay_on_signal);
        signal(SIGTERM, replay_on_signal);
        if (replay_create_topic(rk, o) == -1 ||
            replay_run(rk, o, in, dec, c) == -1)
                exit_code = 1;
        rd_kafka_flush(rk, 60000);
        if (rd_kafka_outq_len(rk) > 0) { /* undelivered: fail them now */
                rd_kafka_purge(rk, RD_KAFKA_PURGE_F_QUEUE |
                                       RD_KAFKA_PURGE_F_INFLIGHT);
                rd_kafka_flush(rk, 5000);
        }
        rd_kafka_destroy(rk); /* the plugin writes its report now */
        if (c->failed || c->produce_errors || c->delivered != c->produced)
                exit_code = 1;
        return exit_code;
}

int main(int argc, char **argv)
{
        replay_opts_t     o;
        replay_counts_t   counts = {0};
        rd_kafka_conf_t  *conf   = NULL;
        rd_kafka_t       *rk;
        ks_ais_decoder_t *dec     = NULL;
        replay_input_t    in      = {0};
        time_t            started = time(NULL);
        const char       *tmpl;
        char              errstr[512], client_id[256], path[4096];
        size_t            size = sizeof(client_id);
        int               plugin_loaded, exit_code;

        if ((exit_code = replay_parse_args(argc, argv, &o)) != 0) {
                free(o.props);
                return exit_code == -1 ? 0 : exit_code;
        }
        exit_code = 1;
        if (replay_input_open(&in, &o) == -1 || !(dec = ks_ais_decoder_new()) ||
            !(conf =
                  replay_conf(&o, &counts, &plugin_loaded, &tmpl, &exit_code)))
                goto done;
        if (rd_kafka_conf_get(conf, "client.id", client_id, &size) !=
            RD_KAFKA_CONF_OK)
                client_id[0] = '\0';
        if (!(rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr,
                                sizeof(errstr)))) {
                fprintf(stderr, "keyshift-replay: %s\n", errstr);
                rd_kafka_conf_destroy(conf);
                exit_code = 1;
                goto done;
        }
        exit_code = replay_produce_all(rk, &o, &in, dec, &counts);
        replay_print_counts(&o, ks_ais_decoder_stats(dec), &counts);
        if (!plugin_loaded) {
                printf("report: none (keyshift plugin not loaded)\n");
        } else {
                replay_report_path(tmpl, client_id, (long)getpid(), path,
                                   sizeof(path));
                if (replay_print_report(path, started) == -1 && o.plugin)
                        exit_code = 1;
        }
done:
        replay_input_close(&in);
        ks_ais_decoder_destroy(dec);
        free(o.props);
        return exit_code;
}
