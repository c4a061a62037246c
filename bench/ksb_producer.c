/**
 * @file ksb_producer.c
 * @brief A/B producers (see ksb_producer.h).
 */
#include "ksb_producer.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <librdkafka/rdkafka_mock.h>

#include "ksb_stats.h"

const char *ksb_plugin_path(void)
{
        const char *p = getenv("KS_PLUGIN");

        if (p && *p)
                return p;
#ifdef KSB_PLUGIN
        return KSB_PLUGIN;
#else
        ksb_die("set KS_PLUGIN to the full path of libkeyshift.so");
#endif
}

/** Drops librdkafka's logs: "connection refused" to 127.0.0.1:1 is the
 *  point of the queue-only set-up. */
static void quiet_log(const rd_kafka_t *rk, int level, const char *fac,
                      const char *buf)
{
        (void)rk, (void)level, (void)fac, (void)buf;
}

static void set(rd_kafka_conf_t *conf, const char *name, const char *value)
{
        char errstr[512];

        if (rd_kafka_conf_set(conf, name, value, errstr, sizeof(errstr)) !=
            RD_KAFKA_CONF_OK)
                ksb_die("%s=%s: %s", name, value, errstr);
}

const char *ksb_keyshift_partitioner;

rd_kafka_t *ksb_producer_new(ksb_setup_t setup, const char *plugin,
                             const char *topic, const char *report_path)
{
        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        rd_kafka_t      *rk;
        char             errstr[512], path[512];

        if (plugin) { /* before any keyshift.* property */
                set(conf, "plugin.library.paths", plugin);
                set(conf, "keyshift.partitions.proposed", "12,16,24");
                set(conf, "keyshift.report.interval.ms", "0");
                if (!report_path) {
                        snprintf(path, sizeof(path), "/tmp/ksb-report-%ld.json",
                                 (long)getpid());
                        report_path = path;
                }
                set(conf, "keyshift.report.path", report_path);
                if (ksb_keyshift_partitioner)
                        set(conf, "keyshift.partitioner",
                            ksb_keyshift_partitioner);
                if (setup == KSB_QUEUE_ONLY)
                        set(conf, "keyshift.partitions.current", "6");
        }
        set(conf, "client.id", plugin ? "ksb-with" : "ksb-without");
        set(conf, "queue.buffering.max.messages", "10000000");
        set(conf, "queue.buffering.max.kbytes", "2147483647");
        set(conf, "message.timeout.ms", "0");
        if (setup == KSB_QUEUE_ONLY) {
                set(conf, "bootstrap.servers", "127.0.0.1:1");
                set(conf, "reconnect.backoff.ms", "1000");
                set(conf, "reconnect.backoff.max.ms", "10000");
        } else {
                set(conf, "test.mock.num.brokers", "1");
        }
        rd_kafka_conf_set_log_cb(conf, quiet_log);
        rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
        if (!rk)
                ksb_die("rd_kafka_new: %s", errstr);
        if (setup == KSB_MOCK_CLUSTER &&
            rd_kafka_mock_topic_create(rd_kafka_handle_mock_cluster(rk), topic,
                                       6, 1))
                ksb_die("cannot create mock topic %s", topic);
        return rk;
}

void ksb_producer_drain(rd_kafka_t *rk)
{
        rd_kafka_purge(rk, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
        while (rd_kafka_outq_len(rk) > 0)
                rd_kafka_poll(rk, 10);
}
