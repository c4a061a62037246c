/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_cpuwatch.c
 * @brief Is the host out of CPU (core/stage/ks_cpuwatch.h):
 *  - the judgement: a window shorter than KS_CPUWATCH_WINDOW_MS decides
 *    nothing; a wait (the run delay, or what the task neither ran nor
 *    paused) of KS_CPUWATCH_OUT_PCT % of the window or more is out of
 *    CPU, under KS_CPUWATCH_FREE_PCT % a CPU is free again, and between
 *    the two the verdict stays; the time out of CPU is the sum of the
 *    windows judged out;
 *  - the kernel's own figure: a thread at SCHED_IDLE (as the drainer)
 *    while a normal thread spins on every CPU is found out of CPU within
 *    a second (Linux's schedstat; the test says so and passes when the
 *    kernel gives no schedstat, where keyshift never samples). A watched
 *    thread starved outright, whose run delay the kernel counts only once
 *    it runs again, is found out of CPU too.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ks_cpuwatch.h"
#include "ks_test.h"

#define MS 1000000ull /* ns */

/** @brief Judges the window ending @p span ms after the last look, in
 *         which the task ran, waited (run delay) and paused so many ms. */
static int judge(ks_cpuwatch_t *w, uint64_t span, uint64_t ran, uint64_t waited,
                 uint64_t slept)
{
        ks_cpuwatch_look_t l = {
            w->since.at_ns + span * MS, w->since.ran_ns + ran * MS,
            w->since.waited_ns + waited * MS, w->since.slept_ns + slept * MS};
        return ks_cpuwatch_judge(w, &l);
}

static void test_judge(void)
{
        ks_cpuwatch_t w = {.fd = -1, .since = {1000 * MS, 7 * MS, 3 * MS, 0}};

        /* too short a window: nothing decided, nothing consumed */
        CU_ASSERT_EQUAL(judge(&w, KS_CPUWATCH_WINDOW_MS - 1, 0, 90, 0), 0);
        CU_ASSERT_EQUAL(w.since.at_ns, 1000 * MS);
        /* ran 75 ms, waited 25 of 100 (the run delay): out of CPU */
        CU_ASSERT_EQUAL(judge(&w, 100, 75, 25, 0), 1);
        CU_ASSERT_EQUAL(w.out_ms_total, 100);
        /* waited 15 %: in the band, still out */
        CU_ASSERT_EQUAL(judge(&w, 100, 85, 15, 0), 1);
        CU_ASSERT_EQUAL(w.out_ms_total, 200);
        /* waited 9 %: a CPU is free */
        CU_ASSERT_EQUAL(judge(&w, 100, 91, 9, 0), 0);
        CU_ASSERT_EQUAL(w.out_ms_total, 200);
        /* in the band from free: stays free */
        CU_ASSERT_EQUAL(judge(&w, 100, 85, 15, 0), 0);
        /* just under the threshold, then at it */
        CU_ASSERT_EQUAL(judge(&w, 100, 76, 24, 0), 0);
        CU_ASSERT_EQUAL(judge(&w, 200, 150, 50, 0), 1);
        CU_ASSERT_EQUAL(w.out_ms_total, 400);
        /* idle: ran 2 ms, paused the rest: free */
        CU_ASSERT_EQUAL(judge(&w, 100, 2, 0, 98), 0);
        /* starved outright: ran 5 ms, no run delay counted yet (it has
         * not had a CPU back), never paused: it waited 95 ms */
        CU_ASSERT_EQUAL(judge(&w, 100, 5, 0, 0), 1);
        /* busy on a free CPU: ran it all */
        CU_ASSERT_EQUAL(judge(&w, 100, 100, 0, 0), 0);
        /* paused half, ran 20, waited 30 (neither counted twice) */
        CU_ASSERT_EQUAL(judge(&w, 100, 20, 30, 50), 1);
        CU_ASSERT_EQUAL(judge(&w, 100, 45, 5, 50), 0);
}

/* A delivery thread (KS_CPUWATCH_DELIVERY): its pauses are not known; it
 * has no CPU to spare when it ran or waited KS_CPUWATCH_BOUND_PCT % of
 * the window, and has again under KS_CPUWATCH_UNBOUND_PCT %. */
static void test_judge_delivery(void)
{
        ks_cpuwatch_t w = {.fd    = -1,
                           .kind  = KS_CPUWATCH_DELIVERY,
                           .since = {1000 * MS, 7 * MS, 3 * MS, 0}};

        /* ran 60, waited 0: time to spare (a drainer's "neither ran nor
         * paused" is not a wait here) */
        CU_ASSERT_EQUAL(judge(&w, 100, 60, 0, 0), 0);
        /* ran 89, waited 1: at the threshold, bound */
        CU_ASSERT_EQUAL(judge(&w, 100, 89, 1, 0), 1);
        CU_ASSERT_EQUAL(w.out_ms_total, 100);
        /* ran 50, waited 30: in the band, still bound */
        CU_ASSERT_EQUAL(judge(&w, 100, 50, 30, 0), 1);
        /* ran 74: free again */
        CU_ASSERT_EQUAL(judge(&w, 100, 74, 0, 0), 0);
        /* in the band from free: stays free */
        CU_ASSERT_EQUAL(judge(&w, 100, 80, 0, 0), 0);
        /* just under, then a CPU it mostly waited for */
        CU_ASSERT_EQUAL(judge(&w, 100, 89, 0, 0), 0);
        CU_ASSERT_EQUAL(judge(&w, 200, 20, 170, 0), 1);
        CU_ASSERT_EQUAL(w.out_ms_total, 400);
}

static atomic_int stop;

/** A thread with work and never a pause, as a drainer with a backlog. */
static void *spin(void *arg)
{
        volatile unsigned long x = 0;

        if (arg) { /* the watched one: SCHED_IDLE, its tid said */
                struct sched_param sp = {0};
                sched_setscheduler(0, SCHED_IDLE, &sp);
                atomic_store((atomic_long *)arg, (long)syscall(SYS_gettid));
        }
        while (!atomic_load_explicit(&stop, memory_order_relaxed))
                x++;
        return NULL;
}

static uint64_t mono_ns(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void test_kernel(void)
{
        long          cpus = sysconf(_SC_NPROCESSORS_ONLN), i;
        pthread_t     spinners[64], watched;
        atomic_long   tid = 0;
        ks_cpuwatch_t w;
        uint64_t      t0;
        int           opened, out = 0;

        cpus = cpus < 1 ? 1 : cpus > 64 ? 64 : cpus;
        atomic_store(&stop, 0);
        CU_ASSERT_FATAL(!pthread_create(&watched, NULL, spin, &tid));
        for (i = 0; i < cpus; i++)
                CU_ASSERT_FATAL(
                    !pthread_create(&spinners[i], NULL, spin, NULL));
        while (!atomic_load(&tid))
                usleep(1000);
        t0     = mono_ns();
        opened = !ks_cpuwatch_open(&w, atomic_load(&tid), KS_CPUWATCH_DRAINER,
                                   t0, 0);
        while (opened && !out && mono_ns() - t0 < 3000 * MS) {
                usleep(KS_CPUWATCH_WINDOW_MS * 1000);
                out = ks_cpuwatch_step(&w, mono_ns(), 0);
        }
        atomic_store(&stop, 1);
        pthread_join(watched, NULL);
        for (i = 0; i < cpus; i++)
                pthread_join(spinners[i], NULL);
        if (!opened) {
                printf("\n    NOTE: no schedstat here: keyshift never finds "
                       "the host out of CPU ");
                return;
        }
        printf("\n    %ld spinning threads, the watched one at SCHED_IDLE: "
               "out of CPU %s after %llu ms ",
               cpus, out ? "found" : "NOT found",
               (unsigned long long)((mono_ns() - t0) / MS));
        ks_cpuwatch_close(&w);
        CU_ASSERT(out);
}

/** A normal thread that works `permille` per mille of each 10 ms and
 *  sleeps the rest, its tid said in `tid`: a broker thread with time to
 *  spare, or, at 1000 (never sleeping), the thread that bounds delivery. */
typedef struct duty {
        atomic_long tid;
        int         permille;
} duty_t;

static void *work(void *arg)
{
        duty_t *d = arg;

        atomic_store(&d->tid, (long)syscall(SYS_gettid));
        while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
                uint64_t t0 = mono_ns();
                while (mono_ns() - t0 < (uint64_t)d->permille * 10000u)
                        ; /* permille of 10 ms */
                if (d->permille < 1000)
                        usleep((useconds_t)(1000 - d->permille) * 10);
        }
        return NULL;
}

/** @returns 0 with thread @p tid's time on a CPU and run delay (ns) from
 *           its schedstat, -1. */
static int schedstat(long tid, uint64_t *ran, uint64_t *waited)
{
        char               path[96];
        FILE              *f;
        unsigned long long r, w;
        int                ok;

        snprintf(path, sizeof(path), "/proc/self/task/%ld/schedstat", tid);
        if (!(f = fopen(path, "r")))
                return -1;
        ok = fscanf(f, "%llu %llu", &r, &w) == 2;
        fclose(f);
        *ran    = r;
        *waited = w;
        return ok ? 0 : -1;
}

/** What watch_worker() saw. */
typedef struct watched {
        int opened;  /**< 0: no schedstat here */
        int bound;   /**< found bound in any window (@p any), or in the
                       *   last one */
        int windows; /**< windows judged */
        int crowded; /**< the thread waited for a CPU more than it ran:
                       *   other threads filled the CPUs */
} watched_t;

/** @brief Watches a thread working @p permille for up to @p windows
 *         windows: with @p any, until it is found bound. */
static watched_t watch_worker(int permille, int windows, int any)
{
        duty_t        d = {.permille = permille};
        pthread_t     th;
        ks_cpuwatch_t w;
        watched_t     o  = {0};
        uint64_t      r0 = 0, w0 = 0, r1 = 0, w1 = 0;
        long          tid;

        atomic_store(&stop, 0);
        CU_ASSERT_FATAL(!pthread_create(&th, NULL, work, &d));
        while (!atomic_load(&d.tid))
                usleep(1000);
        tid = atomic_load(&d.tid);
        o.opened =
            !ks_cpuwatch_open(&w, tid, KS_CPUWATCH_DELIVERY, mono_ns(), 0) &&
            !schedstat(tid, &r0, &w0);
        while (o.opened && o.windows < windows && !(any && o.bound)) {
                usleep(KS_CPUWATCH_WINDOW_MS * 1000);
                o.bound = ks_cpuwatch_step(&w, mono_ns(), 0);
                o.windows++;
        }
        if (o.opened && !schedstat(tid, &r1, &w1))
                o.crowded = w1 - w0 > r1 - r0;
        atomic_store(&stop, 1);
        pthread_join(th, NULL);
        if (o.opened)
                ks_cpuwatch_close(&w);
        return o;
}

/* The kernel's figures: a thread that never sleeps is found bound within
 * 3 s (the run delay it is waiting out at a look is counted only at the
 * next, so on a crowded machine one window can read low: the hysteresis
 * keeps the verdict once given); one working 20 % of the time has time to
 * spare over 5 windows, unless other threads crowded the CPUs so that it
 * waited more than it ran: then it had none, and the test says so. */
static void test_kernel_delivery(void)
{
        watched_t busy = watch_worker(1000, 30, 1), idle;

        if (!busy.opened) {
                printf("\n    NOTE: no schedstat here ");
                return;
        }
        idle = watch_worker(200, 5, 0);
        printf("\n    a thread that never sleeps: %s after %d windows; one "
               "working 20 %%: %s%s ",
               busy.bound ? "no CPU to spare" : "NOT found bound", busy.windows,
               idle.bound ? "bound" : "time to spare",
               idle.crowded ? " (NOTE: the CPUs were crowded: it waited more "
                              "than it ran)"
                            : "");
        CU_ASSERT(busy.bound);
        CU_ASSERT(!idle.bound || idle.crowded);
}

void ks_test_register(void)
{
        KS_ADD_SUITE(
            "is the host out of CPU (ks_cpuwatch)",
            {"the judgement: thresholds, band, time out of CPU", test_judge},
            {"a SCHED_IDLE thread behind a spinner on every CPU", test_kernel},
            {"a delivery thread: the judgement", test_judge_delivery},
            {"a delivery thread: one that never sleeps, one at 20 %",
             test_kernel_delivery});
}
