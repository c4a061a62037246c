/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cpuwatch.c
 * @brief Is the host out of CPU (ks_cpuwatch.h).
 */
#include "ks_cpuwatch.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/** @returns 0 with the task's time on a CPU and run delay in @p l, -1. */
static int look(int fd, ks_cpuwatch_look_t *l)
{
        char    buf[128], *end;
        ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

        if (n <= 0)
                return -1;
        buf[n] = '\0';
        /* "<on-CPU ns> <run delay ns> <timeslices>" */
        l->ran_ns = strtoull(buf, &end, 10);
        if (end == buf)
                return -1;
        l->waited_ns = strtoull(end, &end, 10);
        return 0;
}

int ks_cpuwatch_open(ks_cpuwatch_t *w, long tid, ks_cpuwatch_kind_t kind,
                     uint64_t now_ns, uint64_t slept_ns)
{
        char path[96];

        memset(w, 0, sizeof(*w));
        w->kind           = kind;
        w->since.at_ns    = now_ns;
        w->since.slept_ns = slept_ns;
        snprintf(path, sizeof(path), "/proc/self/task/%ld/schedstat", tid);
        w->fd = open(path, O_RDONLY | O_CLOEXEC);
        if (w->fd < 0 || look(w->fd, &w->since)) {
                ks_cpuwatch_close(w);
                return -1;
        }
        return 0;
}

void ks_cpuwatch_close(ks_cpuwatch_t *w)
{
        if (w->fd >= 0)
                close(w->fd);
        w->fd = -1;
}

/** @returns @p b - @p a, 0 when a counter went back (never). */
static uint64_t since(uint64_t a, uint64_t b)
{
        return b > a ? b - a : 0;
}

int ks_cpuwatch_judge(ks_cpuwatch_t *w, const ks_cpuwatch_look_t *l)
{
        uint64_t span   = since(w->since.at_ns, l->at_ns);
        uint64_t waited = since(w->since.waited_ns, l->waited_ns);
        uint64_t busy   = since(w->since.ran_ns, l->ran_ns) +
                        since(w->since.slept_ns, l->slept_ns);

        uint64_t out_pct = KS_CPUWATCH_OUT_PCT, free_pct = KS_CPUWATCH_FREE_PCT;

        if (span < (uint64_t)KS_CPUWATCH_WINDOW_MS * 1000000)
                return w->out;
        if (w->kind == KS_CPUWATCH_DELIVERY) {
                /* no CPU to spare: it ran or waited for one; its pauses
                 * are not known, so only its run delay is a wait */
                waited += since(w->since.ran_ns, l->ran_ns);
                out_pct  = KS_CPUWATCH_BOUND_PCT;
                free_pct = KS_CPUWATCH_UNBOUND_PCT;
        } else if (span > busy && span - busy > waited) {
                /* what it neither ran nor paused, it waited: a drainer
                 * starved outright has no run delay counted until it
                 * runs again */
                waited = span - busy;
        }
        if (waited > span)
                waited = span;
        if (waited * 100 >= span * out_pct)
                w->out = 1;
        else if (waited * 100 < span * free_pct)
                w->out = 0;
        if (w->out)
                w->out_ms_total += (int64_t)(span / 1000000);
        w->since = *l;
        return w->out;
}

int ks_cpuwatch_step(ks_cpuwatch_t *w, uint64_t now_ns, uint64_t slept_ns)
{
        ks_cpuwatch_look_t l = {.at_ns = now_ns, .slept_ns = slept_ns};

        if (w->fd < 0 || since(w->since.at_ns, now_ns) <
                             (uint64_t)KS_CPUWATCH_WINDOW_MS * 1000000)
                return w->out;
        if (look(w->fd, &l)) { /* the task is gone: as if never watched */
                ks_cpuwatch_close(w);
                return w->out = 0;
        }
        return ks_cpuwatch_judge(w, &l);
}
