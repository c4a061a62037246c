/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_client.h
 * @brief keyshift's state for one producer (rd_kafka_t): its topics, its
 *        configuration, and its reporter thread.
 *
 * Threads of keyshift's own: the reporter (metadata, periodic reports) and
 * the drainer, which analyses what on_send staged every 1 to 5 ms (it
 * never waits for the cluster or for a report, so the rings keep draining
 * while the reporter is busy).
 *
 * Life cycle (librdkafka v2.0.2 src/rdkafka.c):
 *  - created in on_new (application thread in rd_kafka_new());
 *  - on_send / on_acknowledgement count messages from then on;
 *  - on_destroy (librdkafka's main thread, while broker threads still run)
 *    stops and joins the reporter thread, the only keyshift code that
 *    calls into librdkafka;
 *  - acknowledgements may still arrive after on_destroy (messages purged
 *    at shutdown), so the state lives on until on_conf_destroy of the
 *    producer's configuration (rd_kafka_destroy_final(), after every
 *    librdkafka thread has stopped), which writes the final report and
 *    frees it.
 */
#ifndef KS_CLIENT_H
#define KS_CLIENT_H

#include <librdkafka/rdkafka.h>

#include "ks_client_impl.h"

/**
 * @brief Creates the state of a new producer and starts its reporter
 *        thread. @returns the client, or NULL with @p errstr set.
 * @locality application thread in rd_kafka_new() (on_new).
 */
ks_client_t *ks_client_new(rd_kafka_t *rk, const rd_kafka_conf_t *conf,
                           const ks_config_t *kconf, char *errstr,
                           size_t errstr_size);

/** @brief on_send: stages one produced message for the drainer thread
 *         (ks_stage.h). Never fails, never blocks: no lock is taken unless
 *         the thread's ring is full, the key is longer than
 *         KS_STAGE_KEY_INLINE or the topic is new.
 *  @locality application threads. */
void ks_client_on_send(ks_client_t *c, const rd_kafka_message_t *m);

/** @brief on_acknowledgement. @locality broker threads or poll(). */
void ks_client_on_ack(ks_client_t *c, const rd_kafka_message_t *m);

/** @brief on_broker_state_change: counts the brokers that are UP, each
 *  named by @p name "<id>/<host>:<port>".
 *  @locality librdkafka's broker threads. */
void ks_client_on_broker_state(ks_client_t *c, const char *name,
                               const char *state);

/** @brief on_destroy: stops and joins the reporter thread; the client
 *         does not call librdkafka afterwards. @locality rdk:main. */
void ks_client_stop(ks_client_t *c);

/** @brief Writes the final report and frees the client.
 *  @locality application thread in rd_kafka_destroy() (on_conf_destroy). */
void ks_client_destroy(ks_client_t *c);

#endif /* KS_CLIENT_H */
