/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_metadata.c
 * @brief Partition counts from broker metadata and cleanup.policy from the
 *        Admin API, for the reporter thread (ks_metadata.h).
 */
#include "ks_metadata.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ks_clock.h"
#include "ks_report.h"

void ks_metadata_learn_name(ks_client_t *c)
{
        if (!c->name_known && c->rk) {
                snprintf(c->name, sizeof(c->name), "%s",
                         ks_rdk.rd_kafka_name(c->rk));
                c->name_known = 1;
        }
}

/**
 * @brief Asks the cluster (Admin API DescribeConfigs) for @p t's
 *        cleanup.policy, without waiting: the answer is read from
 *        c->admin_q by ks_metadata_take_admin_results() at a later wake-up.
 * @locality reporter thread.
 */
static void ask_cleanup_policy(ks_client_t *c, ks_topic_t *t)
{
        rd_kafka_ConfigResource_t *res = ks_rdk.rd_kafka_ConfigResource_new(
            RD_KAFKA_RESOURCE_TOPIC, ks_topic_name(t));
        rd_kafka_AdminOptions_t *opt = ks_rdk.rd_kafka_AdminOptions_new(
            c->rk, RD_KAFKA_ADMIN_OP_DESCRIBECONFIGS);
        char errstr[256];

        if (!c->admin_q) /* here rd_kafka_new() has returned */
                c->admin_q = ks_rdk.rd_kafka_queue_new(c->rk);
        ks_rdk.rd_kafka_AdminOptions_set_request_timeout(
            opt, KS_ADMIN_TIMEOUT_MS, errstr, sizeof(errstr));
        ks_rdk.rd_kafka_AdminOptions_set_opaque(opt, t);
        ks_rdk.rd_kafka_DescribeConfigs(c->rk, &res, 1, opt, c->admin_q);
        ks_rdk.rd_kafka_AdminOptions_destroy(opt);
        ks_rdk.rd_kafka_ConfigResource_destroy(res);
        ks_topic_set_cluster_info(t, 0, 0, -1); /* asked */
}

/**
 * @brief Reads the DescribeConfigs answers that have arrived: a topic is
 *        compacted when its cleanup.policy contains "compact". A cluster
 *        that does not answer (librdkafka's mock cluster) leaves it
 *        unknown. @locality reporter thread.
 */
void ks_metadata_take_admin_results(ks_client_t *c)
{
        rd_kafka_event_t *ev;

        while (c->admin_q && (ev = ks_rdk.rd_kafka_queue_poll(c->admin_q, 0))) {
                ks_topic_t *t = ks_rdk.rd_kafka_event_opaque(ev);
                size_t      n = 0, cnt = 0, i;
                const rd_kafka_ConfigResource_t **rs = NULL;
                const rd_kafka_ConfigEntry_t    **e  = NULL;

                if (ks_rdk.rd_kafka_event_type(ev) ==
                        RD_KAFKA_EVENT_DESCRIBECONFIGS_RESULT &&
                    !ks_rdk.rd_kafka_event_error(ev))
                        rs = ks_rdk.rd_kafka_DescribeConfigs_result_resources(
                            ks_rdk.rd_kafka_event_DescribeConfigs_result(ev),
                            &n);
                if (rs && n == 1 &&
                    !ks_rdk.rd_kafka_ConfigResource_error(rs[0]))
                        e = ks_rdk.rd_kafka_ConfigResource_configs(rs[0], &cnt);
                for (i = 0; t && e && i < cnt; i++) {
                        const char *v = ks_rdk.rd_kafka_ConfigEntry_value(e[i]);
                        if (!strcmp(ks_rdk.rd_kafka_ConfigEntry_name(e[i]),
                                    "cleanup.policy"))
                                ks_topic_set_cluster_info(
                                    t, 0, 0, v && strstr(v, "compact") ? 1 : 0);
                }
                ks_rdk.rd_kafka_event_destroy(ev);
        }
}

/**
 * @brief Applies one topic of a metadata answer. @locality reporter thread.
 */
static void apply_metadata(ks_client_t *c, const struct rd_kafka_metadata *md,
                           const struct rd_kafka_metadata_topic *mt,
                           int64_t                               now_ms)
{
        ks_topic_t *t = ks_registry_find(&c->reg, mt->topic);
        int32_t     before;

        if (!t || mt->err || mt->partition_cnt < 1)
                return;
        ks_topic_set_cluster_info(t, md->broker_cnt,
                                  mt->partitions[0].replica_cnt, -1);
        if (c->conf.current_override) { /* the model's count stays */
                ks_topic_set_metadata_count(t, mt->partition_cnt);
                return;
        }
        /* Deliveries are checked against the count at once; the analysis
         * takes it once the drainer has analysed what was produced before
         * it (under the count it was produced with), never waited for
         * here: the drainer may be at idle priority (ks_stage_counts.c). */
        before = ks_topic_announced_count(t);
        if (!ks_topic_announce_count(t, mt->partition_cnt))
                return;
        if (before)
                ks_warn_log_line(stderr, 5, c->name,
                                 "%s: partition count is now %d", mt->topic,
                                 mt->partition_cnt);
        if (ks_stage_count_later(c->stage, t, mt->partition_cnt,
                                 KS_COUNT_METADATA, now_ms))
                ks_topic_apply_count(t, mt->partition_cnt, KS_COUNT_METADATA,
                                     now_ms);
}

/** @brief After a refresh: counts the topics still without a count, and
 *         asks once per topic whether it is compacted. */
void ks_metadata_after_refresh(ks_topic_t *t, void *opaque)
{
        ks_refresh_ctx_t *ctx = opaque;

        if (!ks_topic_announced_count(t)) {
                ctx->unknown++;
                return;
        }
        /* With keyshift.partitions.current no metadata comes to check the
         * acknowledgements that disagreed against: each refresh does. */
        if (ctx->c->conf.current_override)
                ks_topic_settle_acks(t, 0);
        if (!ctx->c->conf.current_override &&
            atomic_load(&ctx->c->brokers_up) &&
            !ks_topic_cleanup_policy_asked(t))
                ask_cleanup_policy(ctx->c, t);
}

/**
 * @brief Asks the cluster for the partition counts of every topic this
 *        producer knows, in one metadata request (librdkafka's "locally
 *        known topics"), with the adaptive timeout described above.
 * @locality reporter thread. @locks none held.
 */
void ks_metadata_refresh(ks_refresh_ctx_t *ctx)
{
        ks_client_t                    *c  = ctx->c;
        const struct rd_kafka_metadata *md = NULL;
        rd_kafka_resp_err_t             err;
        int64_t                         t0;
        int                             i, stopping, latency;

        pthread_mutex_lock(&c->lock);
        stopping = c->stop;
        pthread_mutex_unlock(&c->lock);
        if (stopping)
                return;
        /* No broker up: rd_kafka_metadata() would wait out its timeout.
         * Not asked, but no answer either: a failure in a row. */
        if (!atomic_load(&c->brokers_up)) {
                snprintf(ctx->last_error, sizeof(ctx->last_error),
                         "no broker is up");
                return;
        }
        ks_metadata_learn_name(c); /* rd_kafka_new() has returned by now */
        t0      = ks_clock_mono_ms();
        err     = ks_rdk.rd_kafka_metadata(c->rk, 0, NULL, &md,
                                           c->metadata_timeout_ms);
        latency = (int)(ks_clock_mono_ms() - t0);
        if (err == RD_KAFKA_RESP_ERR__TIMED_OUT)
                c->metadata_timeout_ms *= 2;
        else if (!err)
                c->metadata_timeout_ms = 2 * latency;
        if (c->metadata_timeout_ms < KS_METADATA_TIMEOUT_MIN_MS)
                c->metadata_timeout_ms = KS_METADATA_TIMEOUT_MIN_MS;
        if (c->metadata_timeout_ms > KS_METADATA_TIMEOUT_MAX_MS)
                c->metadata_timeout_ms = KS_METADATA_TIMEOUT_MAX_MS;
        pthread_mutex_lock(&c->lock);
        stopping =
            c->stop; /* a request cut short by on_destroy is no failure */
        pthread_mutex_unlock(&c->lock);
        if (err && !stopping)
                snprintf(ctx->last_error, sizeof(ctx->last_error),
                         "metadata request failed: %s",
                         ks_rdk.rd_kafka_err2str(err));
        ctx->answered = !err;
        for (i = 0; !err && md && i < md->topic_cnt; i++)
                apply_metadata(c, md, &md->topics[i], ctx->now_ms);
        if (md)
                ks_rdk.rd_kafka_metadata_destroy(md);
}
