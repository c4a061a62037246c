/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_drainer.c
 * @brief The drainer thread (see ks_drainer.h): its main loop, empties the
 *        staging rings into the key table and pauses, at the lowest
 *        priority the host gives it.
 */
#include "ks_drainer.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ks_priority.h"
#include "ks_stage.h"
#include "ks_warn.h"

/**
 * @brief Lowers the drainer's priority (ks_priority.h) into
 *        c->drainer_priority; says so on stderr, once, when SCHED_IDLE was
 *        refused (rare: it needs no privilege).
 * @locality the drainer thread, first thing.
 */
static void lower_drainer_priority(ks_client_t *c)
{
        ks_priority_t p = ks_priority_lower_self();

        atomic_store(&c->drainer_priority, (int)p);
        if (p != KS_PRIORITY_IDLE)
                ks_warn_log_line(stderr, 6, c->name,
                                 "ks:drainer: SCHED_IDLE refused, runs at %s "
                                 "priority: it may take CPU the "
                                 "application's threads want",
                                 ks_priority_name(p));
}

/**
 * @brief The drainer: empties every ring into its batch (ks_stage_collect():
 *        flushed every KS_BATCH_FLUSH_MS and when the reporter asks), then
 *        pauses (ks_stage_pause()).
 * @locality drainer thread. @locks each topic's, one at a time (in
 *           ks_batch_flush_step()).
 */
static void *drainer_main(void *arg)
{
        ks_client_t *c         = arg;
        int          period_ms = KS_STAGE_BUSY_MS;

        pthread_setname_np(pthread_self(), "ks:drainer");
        /* the host's threads first (issue 33): SCHED_IDLE, else nice 19;
         * a starved drainer costs the figures (a full ring), never the
         * host's CPU */
        lower_drainer_priority(c);
        /* for the watcher's look at the CPU (ks_cpuwatcher.c) */
        atomic_store(&c->drainer_tid, (long)syscall(SYS_gettid));

        while (!atomic_load(&c->drainer_stop))
                ks_stage_pause(c->stage, ks_stage_collect(c->stage),
                               &period_ms);
        return NULL;
}

int ks_drainer_start(ks_client_t *c)
{
        atomic_store(&c->drainer_stop, 0);
        if (pthread_create(&c->drainer, NULL, drainer_main, c))
                return -1;
        c->drainer_running = 1;
        return 0;
}

void ks_drainer_stop(ks_client_t *c)
{
        if (c->drainer_running) {
                atomic_store(&c->drainer_stop, 1);
                pthread_join(c->drainer, NULL);
                c->drainer_running = 0;
        }
}
