/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_reporter.h
 * @brief The reporter thread (`ks:reporter`): each topic's partition count
 *        refreshed from broker metadata (ks_metadata.h), and the periodic
 *        report written; and the report itself, periodic or final.
 */
#ifndef KS_REPORTER_H
#define KS_REPORTER_H

#include "ks_client_impl.h"

/** @brief Starts the reporter thread. @returns 0, or -1 (not started).
 *  @locality application thread in rd_kafka_new() (on_new). */
int ks_reporter_start(ks_client_t *c);

/** @brief Stops and joins the reporter thread (if started), cutting short
 *         a flush it waits for (c->sync_cancel): the final report drains
 *         everything after. @locality rdk:main (on_destroy), or the
 *         thread destroying the client. */
void ks_reporter_stop(ks_client_t *c);

/** @brief Builds and writes a report. @param final 1 at shutdown.
 *  @locality the reporter thread; the final one the thread destroying
 *            the client, after the reporter and the drainer stopped. */
void ks_reporter_write(ks_client_t *c, int final);

#endif /* KS_REPORTER_H */
