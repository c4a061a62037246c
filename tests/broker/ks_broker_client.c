/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_broker_client.c
 * @brief The broker tests' Kafka clients: the broker's address, topic
 *        administration through librdkafka's Admin API, and a producer that
 *        records every message's partition from its delivery report (see
 *        ks_broker_support.h).
 */
#include "ks_broker_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

/** How long an admin request or a metadata wait may take. */
#define KS_BROKER_ADMIN_TIMEOUT_MS 60000

static rd_kafka_t *admin;

const char *ks_broker_bootstrap(void)
{
        static char buf[512];
        const char *env   = getenv("KS_KAFKA_BOOTSTRAP");
        const char *state = getenv("KS_BROKER_STATE");
        char        path[1024];
        FILE       *fp;

        if (env && *env)
                return env;
        if (*buf)
                return buf;
        snprintf(path, sizeof(path), "%s/bootstrap",
                 state && *state ? state : ".");
        if ((fp = fopen(path, "r"))) {
                if (fgets(buf, sizeof(buf), fp))
                        buf[strcspn(buf, "\r\n")] = '\0';
                fclose(fp);
        }
        if (!*buf) {
                fprintf(stderr,
                        "no Kafka broker: %s is missing or empty. The "
                        "broker.setup fixture writes it when the broker is "
                        "up; it did not run or it failed (see its output). "
                        "Run through ctest -L broker, or set "
                        "KS_KAFKA_BOOTSTRAP=host:port.\n",
                        path);
                CU_FAIL_FATAL("no Kafka broker (see stderr)");
        }
        return buf;
}

const char *ks_broker_topic_name(const char *tag, char *buf, size_t size)
{
        static unsigned n;
        snprintf(buf, size, "keyshift-%s-%ld-%lld-%u", tag, (long)getpid(),
                 (long long)(ks_broker_wall_ms() % 100000000), n++);
        return buf;
}

/* ------------------------------------------------------------ admin */

static rd_kafka_t *admin_client(void)
{
        char             errstr[512];
        rd_kafka_conf_t *conf;

        if (admin)
                return admin;
        conf = rd_kafka_conf_new();
        if (rd_kafka_conf_set(conf, "bootstrap.servers", ks_broker_bootstrap(),
                              errstr, sizeof(errstr)) != RD_KAFKA_CONF_OK ||
            rd_kafka_conf_set(conf, "client.id", "keyshift-broker-test-admin",
                              errstr, sizeof(errstr)) != RD_KAFKA_CONF_OK ||
            !(admin = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr,
                                   sizeof(errstr)))) {
                fprintf(stderr, "admin client: %s\n", errstr);
                CU_FAIL_FATAL("cannot create the admin client");
        }
        return admin;
}

rd_kafka_t *ks_broker_admin(void)
{
        return admin_client();
}

void ks_broker_admin_close(void)
{
        if (admin)
                rd_kafka_destroy(admin);
        admin = NULL;
}

static rd_kafka_AdminOptions_t *admin_options(rd_kafka_admin_op_t op)
{
        char                     errstr[256];
        rd_kafka_AdminOptions_t *o =
            rd_kafka_AdminOptions_new(admin_client(), op);
        rd_kafka_AdminOptions_set_request_timeout(o, KS_BROKER_ADMIN_TIMEOUT_MS,
                                                  errstr, sizeof(errstr));
        rd_kafka_AdminOptions_set_operation_timeout(
            o, KS_BROKER_ADMIN_TIMEOUT_MS - 5000, errstr, sizeof(errstr));
        return o;
}

/** @returns the topic results of an admin result event, or NULL. */
static const rd_kafka_topic_result_t **topic_results(rd_kafka_event_t *ev,
                                                     size_t           *cnt)
{
        *cnt = 0;
        switch (rd_kafka_event_type(ev)) {
        case RD_KAFKA_EVENT_CREATETOPICS_RESULT:
                return rd_kafka_CreateTopics_result_topics(
                    rd_kafka_event_CreateTopics_result(ev), cnt);
        case RD_KAFKA_EVENT_CREATEPARTITIONS_RESULT:
                return rd_kafka_CreatePartitions_result_topics(
                    rd_kafka_event_CreatePartitions_result(ev), cnt);
        case RD_KAFKA_EVENT_DELETETOPICS_RESULT:
                return rd_kafka_DeleteTopics_result_topics(
                    rd_kafka_event_DeleteTopics_result(ev), cnt);
        default:
                return NULL;
        }
}

int ks_broker_admin_result(rd_kafka_queue_t *q, int timeout_ms)
{
        rd_kafka_event_t               *ev = rd_kafka_queue_poll(q, timeout_ms);
        const rd_kafka_topic_result_t **tr;
        size_t                          cnt, i;
        int                             rc = 1;

        if (!ev)
                return 0;
        if (rd_kafka_event_error(ev)) {
                fprintf(stderr, "admin request failed: %s\n",
                        rd_kafka_event_error_string(ev));
                rc = -1;
        } else {
                tr = topic_results(ev, &cnt);
                for (i = 0; tr && i < cnt; i++) {
                        if (!rd_kafka_topic_result_error(tr[i]))
                                continue;
                        fprintf(stderr, "admin request on %s failed: %s\n",
                                rd_kafka_topic_result_name(tr[i]),
                                rd_kafka_topic_result_error_string(tr[i]));
                        rc = -1;
                }
        }
        rd_kafka_event_destroy(ev);
        rd_kafka_queue_destroy(q);
        return rc;
}

/** @returns 1 when @p topic has exactly @p n partitions, all led; 0 when
 *           not (yet); *have is set to the count seen (0: none). */
static int partitions_ready(const char *topic, int n, int *have)
{
        const struct rd_kafka_metadata *md = NULL;
        rd_kafka_topic_t *rkt = rd_kafka_topic_new(admin_client(), topic, NULL);
        int               ok  = 0, i, j;

        *have = 0;
        if (rkt && !rd_kafka_metadata(admin_client(), 0, rkt, &md, 5000)) {
                for (i = 0; i < md->topic_cnt; i++) {
                        const struct rd_kafka_metadata_topic *t =
                            &md->topics[i];
                        if (strcmp(t->topic, topic) || t->err)
                                continue;
                        *have = t->partition_cnt;
                        ok    = t->partition_cnt == n;
                        for (j = 0; ok && j < t->partition_cnt; j++)
                                ok = !t->partitions[j].err &&
                                     t->partitions[j].leader >= 0;
                }
        }
        if (md)
                rd_kafka_metadata_destroy(md);
        if (rkt)
                rd_kafka_topic_destroy(rkt);
        return ok;
}

int ks_broker_wait_partitions(const char *topic, int partitions, int timeout_ms)
{
        double end  = ks_broker_now_s() + timeout_ms / 1000.0;
        int    have = 0;

        while (!partitions_ready(topic, partitions, &have)) {
                if (ks_broker_now_s() > end) {
                        fprintf(stderr,
                                "topic %s: still %d partitions after %d ms, "
                                "expected %d\n",
                                topic, have, timeout_ms, partitions);
                        return -1;
                }
                usleep(50 * 1000);
        }
        return 0;
}

int ks_broker_create_topic(const char *topic, int partitions)
{
        return ks_broker_create_topic_config(topic, partitions, NULL, NULL);
}

int ks_broker_create_topic_config(const char *topic, int partitions,
                                  const char *name, const char *value)
{
        char                 errstr[256];
        rd_kafka_NewTopic_t *nt = rd_kafka_NewTopic_new(topic, partitions, -1,
                                                        errstr, sizeof(errstr));
        rd_kafka_queue_t    *q;
        rd_kafka_AdminOptions_t *o;

        if (!nt) {
                fprintf(stderr, "NewTopic %s: %s\n", topic, errstr);
                return -1;
        }
        if (name)
                rd_kafka_NewTopic_set_config(nt, name, value);
        q = rd_kafka_queue_new(admin_client());
        o = admin_options(RD_KAFKA_ADMIN_OP_CREATETOPICS);
        rd_kafka_CreateTopics(admin_client(), &nt, 1, o, q);
        rd_kafka_AdminOptions_destroy(o);
        rd_kafka_NewTopic_destroy(nt);
        if (ks_broker_admin_result(q, KS_BROKER_ADMIN_TIMEOUT_MS) != 1)
                return -1;
        return ks_broker_wait_partitions(topic, partitions,
                                         KS_BROKER_ADMIN_TIMEOUT_MS);
}

rd_kafka_queue_t *ks_broker_create_partitions_send(const char *topic, int total)
{
        char                      errstr[256];
        rd_kafka_NewPartitions_t *np = rd_kafka_NewPartitions_new(
            topic, (size_t)total, errstr, sizeof(errstr));
        rd_kafka_queue_t        *q;
        rd_kafka_AdminOptions_t *o;

        if (!np) {
                fprintf(stderr, "NewPartitions %s: %s\n", topic, errstr);
                return NULL;
        }
        q = rd_kafka_queue_new(admin_client());
        o = admin_options(RD_KAFKA_ADMIN_OP_CREATEPARTITIONS);
        rd_kafka_CreatePartitions(admin_client(), &np, 1, o, q);
        rd_kafka_AdminOptions_destroy(o);
        rd_kafka_NewPartitions_destroy(np);
        return q;
}

int ks_broker_create_partitions(const char *topic, int total)
{
        rd_kafka_queue_t *q = ks_broker_create_partitions_send(topic, total);

        if (!q || ks_broker_admin_result(q, KS_BROKER_ADMIN_TIMEOUT_MS) != 1)
                return -1;
        return ks_broker_wait_partitions(topic, total,
                                         KS_BROKER_ADMIN_TIMEOUT_MS);
}

void ks_broker_delete_topic(const char *topic)
{
        rd_kafka_DeleteTopic_t  *dt = rd_kafka_DeleteTopic_new(topic);
        rd_kafka_queue_t        *q  = rd_kafka_queue_new(admin_client());
        rd_kafka_AdminOptions_t *o =
            admin_options(RD_KAFKA_ADMIN_OP_DELETETOPICS);

        rd_kafka_DeleteTopics(admin_client(), &dt, 1, o, q);
        rd_kafka_AdminOptions_destroy(o);
        rd_kafka_DeleteTopic_destroy(dt);
        if (ks_broker_admin_result(q, 30000) == 0)
                rd_kafka_queue_destroy(q);
}

/* --------------------------------------------------------- producer */

static void dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
        ks_broker_producer_t *p   = opaque;
        size_t                idx = (size_t)(uintptr_t)m->_private;
        (void)rk;

        if (idx >= p->msg_cap)
                return;
        if (m->err) {
                if (!p->failed++)
                        p->first_err = m->err;
                return;
        }
        p->partition[idx] = m->partition;
        p->delivered++;
}

int ks_broker_producer_new(ks_broker_producer_t *p, rd_kafka_conf_t *conf,
                           size_t msg_cap)
{
        const char *debug = getenv("KS_BROKER_RDKAFKA_DEBUG");
        char        errstr[512], boot[512] = "";
        size_t      i, boot_size           = sizeof(boot);

        memset(p, 0, sizeof(*p));
        p->msg_cap   = msg_cap;
        p->partition = malloc((msg_cap ? msg_cap : 1) * sizeof(int32_t));
        for (i = 0; i < msg_cap; i++)
                p->partition[i] = -1;
        rd_kafka_conf_set_dr_msg_cb(conf, dr_cb);
        rd_kafka_conf_set_opaque(conf, p);
        /* KS_BROKER_RDKAFKA_DEBUG=metadata,protocol,... traces a run. */
        if (debug && *debug &&
            rd_kafka_conf_set(conf, "debug", debug, errstr, sizeof(errstr)))
                fprintf(stderr, "debug=%s: %s\n", debug, errstr);
        /* a bootstrap.servers of the caller's (the SASL listener's) stays */
        if (rd_kafka_conf_get(conf, "bootstrap.servers", boot, &boot_size) !=
                RD_KAFKA_CONF_OK ||
            !*boot)
                snprintf(boot, sizeof(boot), "%s", ks_broker_bootstrap());
        if (rd_kafka_conf_set(conf, "bootstrap.servers", boot, errstr,
                              sizeof(errstr)) != RD_KAFKA_CONF_OK ||
            !(p->rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr,
                                   sizeof(errstr)))) {
                fprintf(stderr, "producer: %s\n", errstr);
                rd_kafka_conf_destroy(conf);
                return -1;
        }
        return 0;
}

void ks_broker_produce(ks_broker_producer_t *p, const char *topic, size_t idx,
                       const void *key, size_t keylen, const void *value,
                       size_t len)
{
        rd_kafka_resp_err_t err;

        for (;;) {
                err = rd_kafka_producev(
                    p->rk, RD_KAFKA_V_TOPIC(topic),
                    RD_KAFKA_V_KEY((void *)key, key ? keylen : 0),
                    RD_KAFKA_V_VALUE((void *)value, len),
                    RD_KAFKA_V_OPAQUE((void *)(uintptr_t)idx),
                    RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
                if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL)
                        break;
                rd_kafka_poll(p->rk, 10);
        }
        if (err)
                fprintf(stderr, "produce: %s\n", rd_kafka_err2str(err));
        CU_ASSERT_EQUAL(err, RD_KAFKA_RESP_ERR_NO_ERROR);
        rd_kafka_poll(p->rk, 0);
}

void ks_broker_flush(ks_broker_producer_t *p)
{
        rd_kafka_resp_err_t err = rd_kafka_flush(p->rk, 60000);
        if (err)
                fprintf(stderr, "flush: %s (%d messages left)\n",
                        rd_kafka_err2str(err), rd_kafka_outq_len(p->rk));
        CU_ASSERT_EQUAL(err, RD_KAFKA_RESP_ERR_NO_ERROR);
        if (p->failed)
                fprintf(stderr, "%zu deliveries failed, first: %s\n", p->failed,
                        rd_kafka_err2str(p->first_err));
}

void ks_broker_producer_close(ks_broker_producer_t *p)
{
        if (!p->rk)
                return;
        ks_broker_flush(p);
        rd_kafka_destroy(p->rk);
        p->rk = NULL;
}

void ks_broker_producer_free(ks_broker_producer_t *p)
{
        ks_broker_producer_close(p);
        free(p->partition);
        memset(p, 0, sizeof(*p));
}
