/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ksb_producer.c
 * @brief A/B producers (see ksb_producer.h).
 */
#include "ksb_producer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <librdkafka/rdkafka_mock.h>

#include "ks_hash.h"
#include "ks_partitioner.h"
#include "ksb_stats.h"

const char *ksb_bootstrap;

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
int         ksb_bracket;
double      ksb_spin_ns;
int         ksb_floor;

static __thread uint64_t bracket_t0, bracket_ticks, spin_ticks;
/** brackets timed, and those longer than KSB_BRACKET_PREEMPTED_NS */
static __thread uint64_t bracket_n, bracket_long;

/** A bracket longer than this held a preemption (the thread descheduled
 *  between its two reads: with 8 threads on 2 CPUs, one call in a few
 *  hundred): its wall time is another thread's; it counts as the mean of
 *  the others. */
#define KSB_BRACKET_PREEMPTED_NS 20000.0

uint64_t ksb_spin_take(void)
{
        uint64_t t = spin_ticks;
        spin_ticks = 0;
        return t;
}

uint64_t ksb_bracket_take(void)
{
        uint64_t t = bracket_ticks;

        if (bracket_long && bracket_n > bracket_long)
                t = (uint64_t)((double)t * (double)bracket_n /
                               (double)(bracket_n - bracket_long));
        bracket_ticks = bracket_n = bracket_long = 0;
        return t;
}

static rd_kafka_resp_err_t bracket_open(rd_kafka_t *rk, rd_kafka_message_t *m,
                                        void *opaque)
{
        (void)rk, (void)m, (void)opaque;
        bracket_t0 = ksb_tsc();
        return RD_KAFKA_RESP_ERR_NO_ERROR;
}

static rd_kafka_resp_err_t bracket_close(rd_kafka_t *rk, rd_kafka_message_t *m,
                                         void *opaque)
{
        uint64_t d = ksb_tsc() - bracket_t0;

        (void)rk, (void)m, (void)opaque;
        bracket_n++;
        if ((double)d > KSB_BRACKET_PREEMPTED_NS * ksb_tsc_per_ns())
                bracket_long++;
        else
                bracket_ticks += d;
        return RD_KAFKA_RESP_ERR_NO_ERROR;
}

static rd_kafka_resp_err_t spin(rd_kafka_t *rk, rd_kafka_message_t *m,
                                void *opaque)
{
        uint64_t t0  = ksb_tsc(), t;
        uint64_t end = t0 + (uint64_t)(ksb_spin_ns * ksb_tsc_per_ns());

        (void)rk, (void)m, (void)opaque;
        while ((t = ksb_tsc()) < end)
                ;
        spin_ticks += t - t0; /* what it spun, by its own clock */
        return RD_KAFKA_RESP_ERR_NO_ERROR;
}

/** The floor's counters: messages and bytes per partition under the
 *  current count (6) and three proposed (12, 16, 24), per thread. */
static const uint32_t floor_counts[4] = {6, 12, 16, 24};
/** ks_partition_m() of each count, as keyshift keeps them per topic
 *  (t->current_m, t->proposal_m): a remainder without a division. */
static const uint64_t    floor_m[4] = {UINT64_MAX / 6 + 1, UINT64_MAX / 12 + 1,
                                       UINT64_MAX / 16 + 1, UINT64_MAX / 24 + 1};
static __thread uint64_t floor_load[4][24][2];

/** The floor (--floor): what exact per-message figures cost at least, an
 *  on_send that hashes the key as the consistent partitioner does (zlib's
 *  CRC-32, as keyshift) and counts the message and its bytes in its
 *  partition under 4 counts, on the producing thread (no ring, no
 *  drainer, no lock, no read-modify-write shared with another thread). */
static rd_kafka_resp_err_t floor_on_send(rd_kafka_t *rk, rd_kafka_message_t *m,
                                         void *opaque)
{
        uint32_t h;
        int      i;

        (void)rk, (void)opaque;
        if (!m->key)
                return RD_KAFKA_RESP_ERR_NO_ERROR;
        h = ks_hash_crc32(m->key, m->key_len);
        for (i = 0; i < 4; i++) {
                uint64_t *l = floor_load[i][ks_partition_of_m(h, floor_m[i],
                                                              floor_counts[i])];
                l[0]++;
                l[1] += m->key_len + m->len;
        }
        return RD_KAFKA_RESP_ERR_NO_ERROR;
}

/** on_new: registers the on_send named by @p opaque ("ksb-open", ...). */
static rd_kafka_resp_err_t add_on_send(rd_kafka_t            *rk,
                                       const rd_kafka_conf_t *conf,
                                       void *opaque, char *errstr,
                                       size_t errstr_size)
{
        const char *name = opaque;

        (void)conf, (void)errstr, (void)errstr_size;
        return rd_kafka_interceptor_add_on_send(
            rk, name,
            !strcmp(name, "ksb-open")    ? bracket_open
            : !strcmp(name, "ksb-close") ? bracket_close
            : !strcmp(name, "ksb-floor") ? floor_on_send
                                         : spin,
            NULL);
}

static void add_on_new(rd_kafka_conf_t *conf, const char *name)
{
        if (rd_kafka_conf_interceptor_add_on_new(conf, name, add_on_send,
                                                 (void *)name))
                ksb_die("cannot add interceptor %s", name);
}

rd_kafka_t *ksb_producer_new(ksb_setup_t setup, const char *plugin,
                             const char *topic, const char *report_path)
{
        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        rd_kafka_t      *rk;
        char             errstr[512], path[512];

        if (ksb_bracket)
                add_on_new(conf, "ksb-open");
        if (plugin && (ksb_spin_ns > 0 || ksb_floor)) {
                add_on_new(conf, ksb_floor ? "ksb-floor" : "ksb-spin");
                plugin = NULL;
        }
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
        if (ksb_bracket)
                add_on_new(conf, "ksb-close");
        set(conf, "client.id", plugin ? "ksb-with" : "ksb-without");
        set(conf, "queue.buffering.max.messages", "10000000");
        set(conf, "queue.buffering.max.kbytes", "2147483647");
        set(conf, "message.timeout.ms", "0");
        if (setup == KSB_QUEUE_ONLY) {
                set(conf, "bootstrap.servers", "127.0.0.1:1");
                set(conf, "reconnect.backoff.ms", "1000");
                set(conf, "reconnect.backoff.max.ms", "10000");
        } else if (setup == KSB_BROKER) {
                set(conf, "bootstrap.servers", ksb_bootstrap);
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

void ksb_topic_create(const char *topic, int partitions)
{
        rd_kafka_conf_t                      *conf = rd_kafka_conf_new();
        rd_kafka_t                           *rk;
        rd_kafka_NewTopic_t                  *nt;
        rd_kafka_queue_t                     *q;
        rd_kafka_event_t                     *ev;
        const rd_kafka_CreateTopics_result_t *res;
        const rd_kafka_topic_result_t       **tr;
        size_t                                n;
        char                                  errstr[512];

        set(conf, "bootstrap.servers", ksb_bootstrap);
        rd_kafka_conf_set_log_cb(conf, quiet_log);
        if (!(rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr,
                                sizeof(errstr))))
                ksb_die("rd_kafka_new: %s", errstr);
        nt =
            rd_kafka_NewTopic_new(topic, partitions, 1, errstr, sizeof(errstr));
        if (!nt)
                ksb_die("NewTopic: %s", errstr);
        q = rd_kafka_queue_new(rk);
        rd_kafka_CreateTopics(rk, &nt, 1, NULL, q);
        ev = rd_kafka_queue_poll(q, 30000);
        if (!ev || !(res = rd_kafka_event_CreateTopics_result(ev)))
                ksb_die("CreateTopics %s: no answer", topic);
        tr = rd_kafka_CreateTopics_result_topics(res, &n);
        if (n != 1 || rd_kafka_topic_result_error(tr[0]))
                ksb_die("CreateTopics %s: %s", topic,
                        n ? rd_kafka_topic_result_error_string(tr[0]) : "?");
        rd_kafka_event_destroy(ev);
        rd_kafka_NewTopic_destroy(nt);
        rd_kafka_queue_destroy(q);
        rd_kafka_destroy(rk);
}

void ksb_producer_drain(rd_kafka_t *rk)
{
        rd_kafka_purge(rk, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
        while (rd_kafka_outq_len(rk) > 0)
                rd_kafka_poll(rk, 10);
}

void ksb_produce_one(rd_kafka_t *rk, rd_kafka_topic_t *rkt, const ksb_key_t *k)
{
        /* copied by librdkafka (F_COPY), never written */
        static const char value[KSB_VALUE_LEN + 1] =
            "vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv";

        while (rd_kafka_produce(rkt, RD_KAFKA_PARTITION_UA, RD_KAFKA_MSG_F_COPY,
                                (void *)value, KSB_VALUE_LEN, k->bytes, k->len,
                                NULL) == -1) {
                if (rd_kafka_last_error() != RD_KAFKA_RESP_ERR__QUEUE_FULL)
                        ksb_die("produce: %s",
                                rd_kafka_err2str(rd_kafka_last_error()));
                rd_kafka_poll(rk, 1);
        }
}
