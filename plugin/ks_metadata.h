/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_metadata.h
 * @brief The reporter's questions to the cluster: each topic's partition
 *        count from broker metadata (a timeout adapted to the cluster),
 *        and its cleanup.policy through the Admin API, never waited for;
 *        and the client's name, from its handle.
 * @locality the reporter thread (ks_reporter.c).
 */
#ifndef KS_METADATA_H
#define KS_METADATA_H

#include <stdint.h>

#include "ks_client_impl.h"

/**
 * How long one metadata request may take, adapted to what the cluster
 * answers in: twice the last answer's latency, between these bounds,
 * doubled after a timeout. librdkafka handles metadata answers on its main
 * thread, which is the thread that calls on_destroy; so a request still
 * outstanding when the producer is destroyed waits out its timeout, and
 * this bound is the most on_destroy can be delayed (and only then).
 */
#define KS_METADATA_TIMEOUT_MIN_MS 250
#define KS_METADATA_TIMEOUT_MAX_MS 1000

/** Timeout of the Admin API's DescribeConfigs (asynchronous: no wait). */
#define KS_ADMIN_TIMEOUT_MS 10000

/** How long the reporter waits for the drainer's flush (ks_stage_sync())
 *  before a report or a new partition count: a flush takes ~10-40 ms, up
 *  to about a second when many threads flood a starved drainer (the rings
 *  are emptied between its slices). Past it, the report goes on with what
 *  was analysed and says so (ANALYSIS_BEHIND). */
#define KS_SYNC_TIMEOUT_MS 5000

/** One refresh's state and outcome. */
typedef struct ks_refresh_ctx {
        ks_client_t *c;
        int64_t      now_ms;
        int          unknown;  /**< topics whose count is still unknown */
        int          answered; /**< a metadata request was answered */
        char         last_error[256];
} ks_refresh_ctx_t;

/**
 * @brief Asks the cluster for the partition counts of every topic
 *        @p ctx->c knows, in one metadata request (librdkafka's locally
 *        known topics) with the adaptive timeout above; the drainer
 *        flushes before a count changes, so that messages are analysed
 *        under the count they were produced with. Outcome in @p ctx.
 */
void ks_metadata_refresh(ks_refresh_ctx_t *ctx);

/** @brief After a refresh, per topic (ks_registry_foreach(), @p opaque the
 *         ks_refresh_ctx_t): counts the topics whose count is still
 *         unknown; with keyshift.partitions.current, settles the
 *         acknowledgements kept (no metadata answer does); else asks once
 *         for the topic's cleanup.policy while brokers are up. */
void ks_metadata_after_refresh(ks_topic_t *t, void *opaque);

/** @brief Sets c->name from rd_kafka_name() once (the name keyshift's
 *         stderr lines and reports carry): what the handle says of
 *         itself, known once rd_kafka_new() has returned.
 *  @locality the reporter thread once rd_kafka_new() has returned, or
 *            rdk:main in on_destroy after the reporter stopped. */
void ks_metadata_learn_name(ks_client_t *c);

/** @brief Reads the Admin API answers that came (c->admin_q), if any. */
void ks_metadata_take_admin_results(ks_client_t *c);

#endif /* KS_METADATA_H */
