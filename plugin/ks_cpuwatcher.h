/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cpuwatcher.h
 * @brief The watcher thread (`ks:cpuwatch`, ks_cpuwatcher.c): whether the
 *        host is out of CPU, and so how many deliveries on_acknowledgement
 *        checks meanwhile (ks_client_t ack_shift).
 */
#ifndef KS_CPUWATCHER_H
#define KS_CPUWATCHER_H

#include "ks_client_impl.h"

/** @brief Starts it. @returns 0, or -1 (not started: every delivery is
 *         then checked). @locality application thread in rd_kafka_new(). */
int ks_cpuwatcher_start(ks_client_t *c);

/** @brief Stops and joins it (if started); every delivery is checked
 *         after. @locality rdk:main (on_destroy), or the thread destroying
 *         the client. */
void ks_cpuwatcher_stop(ks_client_t *c);

#endif /* KS_CPUWATCHER_H */
