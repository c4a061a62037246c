/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_drainer.h
 * @brief The drainer thread (`ks:drainer`): analyses the messages on_send
 *        staged (ks_stage.h), every 1 to 5 ms, at the lowest priority
 *        (ks_priority.h). It never waits for the cluster or for a report,
 *        so the rings keep draining while the reporter is busy.
 */
#ifndef KS_DRAINER_H
#define KS_DRAINER_H

#include "ks_client_impl.h"

/** @brief Starts the drainer thread. @returns 0, or -1 (not started).
 *  @locality application thread in rd_kafka_new() (on_new). */
int ks_drainer_start(ks_client_t *c);

/** @brief Stops and joins the drainer thread (if started); messages still
 *         staged are left for the caller to drain (ks_stage_drain()).
 *  @locality rdk:main (on_destroy), or the thread destroying the client. */
void ks_drainer_stop(ks_client_t *c);

#endif /* KS_DRAINER_H */
