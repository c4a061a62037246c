/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_e2e_topics_writer.c
 * @brief A producer that never stops: keyshift loaded by full path, on the
 *        mock cluster, one keyed message to each of TOPICS topics round
 *        after round, so that every report keyshift writes (every
 *        INTERVAL_MS) has every topic changed and is built in full. The
 *        lifecycle test kills it with SIGKILL at random moments, most of
 *        them in the middle of a report's write, and looks for what it
 *        left beside the report (test_plugin_lifecycle.c).
 *
 *   ks_e2e_topics_writer PLUGIN REPORT_PATH TOPICS INTERVAL_MS
 *
 * Prints "ready" on stdout once the first report exists.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <librdkafka/rdkafka.h>

static void set(rd_kafka_conf_t *conf, const char *name, const char *value)
{
        char errstr[512];

        if (rd_kafka_conf_set(conf, name, value, errstr, sizeof(errstr)) !=
            RD_KAFKA_CONF_OK) {
                fprintf(stderr, "%s=%s: %s\n", name, value, errstr);
                exit(2);
        }
}

static void quiet(const rd_kafka_t *rk, int level, const char *fac,
                  const char *buf)
{
        (void)rk, (void)level, (void)fac, (void)buf;
}

int main(int argc, char **argv)
{
        rd_kafka_conf_t *conf;
        rd_kafka_t      *rk;
        char             errstr[512], name[32], key[32];
        long             topics, i, round;
        int              ready = 0;
        struct stat      st;

        if (argc != 5) {
                fprintf(stderr, "usage: ks_e2e_topics_writer PLUGIN "
                                "REPORT_PATH TOPICS INTERVAL_MS\n");
                return 2;
        }
        topics = atol(argv[3]);
        conf   = rd_kafka_conf_new();
        set(conf, "plugin.library.paths", argv[1]);
        set(conf, "keyshift.report.path", argv[2]);
        set(conf, "keyshift.report.interval.ms", argv[4]);
        set(conf, "keyshift.topics.max", argv[3]);
        set(conf, "test.mock.num.brokers", "1");
        set(conf, "linger.ms", "5");
        rd_kafka_conf_set_log_cb(conf, quiet);
        if (!(rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr,
                                sizeof(errstr)))) {
                fprintf(stderr, "rd_kafka_new: %s\n", errstr);
                return 1;
        }
        for (round = 0;; round++) {
                for (i = 0; i < topics; i++) {
                        snprintf(name, sizeof(name), "tenant-%04ld", i);
                        snprintf(key, sizeof(key), "%ld", 200000000 + round);
                        while (rd_kafka_producev(
                                   rk, RD_KAFKA_V_TOPIC(name),
                                   RD_KAFKA_V_KEY(key, strlen(key)),
                                   RD_KAFKA_V_VALUE("position", 8),
                                   RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                                   RD_KAFKA_V_END) ==
                               RD_KAFKA_RESP_ERR__QUEUE_FULL)
                                rd_kafka_poll(rk, 10);
                }
                rd_kafka_poll(rk, 10);
                if (!ready && !stat(argv[2], &st)) {
                        ready = 1;
                        printf("ready\n");
                        fflush(stdout);
                }
        }
}
