/* SPDX-License-Identifier: Apache-2.0 */
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
#include "replay_opts.h"
#include "replay_report.h"

#include <errno.h>
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

/** The plugin's default keyshift.report.path (include/keyshift/keyshift.h). */
#define REPLAY_REPORT_DEFAULT "keyshift-%c-%p.json"

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
