/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cpuwatcher.c
 * @brief The watcher thread (`ks:cpuwatch`): every KS_CPUWATCH_WINDOW_MS
 *        it looks whether the host is out of CPU (core/stage/ks_cpuwatch.h:
 *        the drainer waiting for a CPU, or a thread that calls
 *        on_acknowledgement with none to spare) and sets how many
 *        deliveries on_acknowledgement checks meanwhile (ks_client_t
 *        ack_shift).
 *
 * Why a thread of its own: the reporter blocks in rd_kafka_metadata() for
 * up to its timeout, and a metadata request waits behind the very backlog
 * that keeps a delivery thread busy, so a look from the reporter stalled
 * exactly when it was needed. The watcher reads a few /proc files ten
 * times a second and otherwise sleeps; it runs as created (not lowered,
 * as the drainer is), so that the look is not starved with the host.
 * It is not started with keyshift.overload=analyse (every delivery
 * checked), and ends by itself when there is nothing to watch (no
 * schedstat).
 */
#include "ks_cpuwatcher.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "ks_cpuwatch.h"
#include "ks_stage.h"

#define WINDOW_NS ((uint64_t)KS_CPUWATCH_WINDOW_MS * 1000000u)

/** What the watcher watches (ks_cpuwatch.h): the drainer, and each
 *  thread that has called on_acknowledgement (ks_client_t ack_tids). */
typedef struct cpu_watches {
        ks_cpuwatch_t drainer;
        int           drainer_tried; /**< 1: opened, or found unreadable */
        ks_cpuwatch_t ack[KS_ACK_THREADS_WATCHED];
        long          ack_tid[KS_ACK_THREADS_WATCHED]; /**< what ack[i]
                                                        *   watches */
        uint64_t      last_ns;                         /**< the last look */
} cpu_watches_t;

/** @brief @p ws with nothing watched yet. */
static void cpu_watches_init(cpu_watches_t *ws)
{
        int i;

        memset(ws, 0, sizeof(*ws));
        ws->drainer.fd = -1;
        for (i = 0; i < KS_ACK_THREADS_WATCHED; i++)
                ws->ack[i].fd = -1;
}

/** @brief Closes every watch of @p ws. */
static void cpu_watches_close(cpu_watches_t *ws)
{
        int i;

        ks_cpuwatch_close(&ws->drainer);
        for (i = 0; i < KS_ACK_THREADS_WATCHED; i++)
                ks_cpuwatch_close(&ws->ack[i]);
}

/**
 * @brief Judges the delivery threads @p c has met (opening the watch of a
 *        new one) at @p now.
 * @returns 1 when one had no CPU to spare (KS_CPUWATCH_DELIVERY), else 0.
 */
static int watch_delivery_threads(ks_client_t *c, cpu_watches_t *ws,
                                  uint64_t now)
{
        int i, bound = 0;

        for (i = 0; i < KS_ACK_THREADS_WATCHED; i++) {
                long tid = atomic_load(&c->ack_tids[i]);

                if (!tid)
                        break; /* the slots fill in order */
                if (tid != ws->ack_tid[i]) {
                        ws->ack_tid[i] = tid;
                        ks_cpuwatch_close(&ws->ack[i]);
                        ks_cpuwatch_open(&ws->ack[i], tid, KS_CPUWATCH_DELIVERY,
                                         now, 0);
                        continue;
                }
                bound |= ks_cpuwatch_step(&ws->ack[i], now, 0);
        }
        return bound;
}

/**
 * @brief One look at the host's CPU (ks_cpuwatch.h), once per
 *        KS_CPUWATCH_WINDOW_MS: opens the drainer's schedstat once the
 *        drainer has said its tid, and each delivery thread's once it has
 *        called on_acknowledgement. While the drainer waits for a CPU, or
 *        a delivery thread has none to spare, deliveries are checked 1 in
 *        1 << KS_ACK_SAMPLE_SHIFT.
 * @returns when to look next (ks_stage_mono_ns()), 0: never (exact
 *          figures asked for, keyshift.overload=analyse, or nothing to
 *          watch).
 * @locality watcher thread.
 */
static uint64_t watch_cpu(ks_client_t *c, cpu_watches_t *ws, uint64_t now)
{
        long    tid;
        int     starved, bound;
        int64_t ms;

        if (c->conf.overload_analyse)
                return 0;
        if (!ws->drainer_tried) {
                if (!(tid = atomic_load(&c->drainer_tid)))
                        return now + WINDOW_NS;
                ws->drainer_tried = 1;
                /* no schedstat to read: never sampled, as documented */
                if (ks_cpuwatch_open(&ws->drainer, tid, KS_CPUWATCH_DRAINER,
                                     now, ks_stage_slept_ns(c->stage, now)))
                        return 0;
                atomic_store(&c->cpu_watched, 1);
                ws->last_ns = now;
                return now + WINDOW_NS;
        }
        if (ws->drainer.fd < 0)
                return 0;
        starved = ks_cpuwatch_step(&ws->drainer, now,
                                   ks_stage_slept_ns(c->stage, now));
        bound   = watch_delivery_threads(c, ws, now);
        atomic_store_explicit(&c->ack_shift,
                              starved || bound ? KS_ACK_SAMPLE_SHIFT : 0,
                              memory_order_relaxed);
        ms          = (int64_t)((now - ws->last_ns) / 1000000);
        ws->last_ns = now;
        if (starved || bound)
                atomic_fetch_add(&c->out_of_cpu_ms, ms);
        if (bound)
                atomic_fetch_add(&c->delivery_bound_ms, ms);
        return now + WINDOW_NS;
}

/** @brief Waits on @p c's watcher condition until @p at_ns (monotonic)
 *         or a stop. @locks watcher_lock, held. */
static void wait_until(ks_client_t *c, uint64_t at_ns)
{
        struct timespec ts = {(time_t)(at_ns / 1000000000u),
                              (long)(at_ns % 1000000000u)};

        pthread_cond_timedwait(&c->watcher_cond, &c->watcher_lock, &ts);
}

static void *watcher_main(void *arg)
{
        ks_client_t  *c = arg;
        cpu_watches_t ws;
        uint64_t      next;

        pthread_setname_np(pthread_self(), "ks:cpuwatch");
        cpu_watches_init(&ws);
        pthread_mutex_lock(&c->watcher_lock);
        while (!c->watcher_stop) {
                pthread_mutex_unlock(&c->watcher_lock);
                next = watch_cpu(c, &ws, ks_stage_mono_ns());
                pthread_mutex_lock(&c->watcher_lock);
                if (!next)
                        break;
                while (!c->watcher_stop && ks_stage_mono_ns() < next)
                        wait_until(c, next);
        }
        pthread_mutex_unlock(&c->watcher_lock);
        cpu_watches_close(&ws);
        return NULL;
}

int ks_cpuwatcher_start(ks_client_t *c)
{
        pthread_condattr_t ca;

        c->watcher_stop = 0;
        if (pthread_mutex_init(&c->watcher_lock, NULL))
                return -1;
        if (pthread_condattr_init(&ca) ||
            pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) ||
            pthread_cond_init(&c->watcher_cond, &ca)) {
                pthread_mutex_destroy(&c->watcher_lock);
                return -1;
        }
        pthread_condattr_destroy(&ca);
        if (pthread_create(&c->watcher, NULL, watcher_main, c)) {
                pthread_cond_destroy(&c->watcher_cond);
                pthread_mutex_destroy(&c->watcher_lock);
                return -1;
        }
        c->watcher_running = 1;
        return 0;
}

void ks_cpuwatcher_stop(ks_client_t *c)
{
        if (!c->watcher_running)
                return;
        pthread_mutex_lock(&c->watcher_lock);
        c->watcher_stop = 1;
        pthread_cond_signal(&c->watcher_cond);
        pthread_mutex_unlock(&c->watcher_lock);
        pthread_join(c->watcher, NULL);
        pthread_cond_destroy(&c->watcher_cond);
        pthread_mutex_destroy(&c->watcher_lock);
        c->watcher_running = 0;
        atomic_store(&c->ack_shift, 0); /* the final report's acks: all */
}
