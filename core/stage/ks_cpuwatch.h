/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cpuwatch.h
 * @brief Is the host out of CPU? The drainer's own run delay says so: the
 *        time it was runnable but waited for a CPU.
 *
 * Why: the drainer runs at SCHED_IDLE (plugin/ks_priority.h), so it waits
 * for a CPU exactly when every CPU runs a thread the host wants. Then the
 * work keyshift does on the host's own threads is taken from the host: the
 * delivery check in on_acknowledgement runs on librdkafka's broker thread,
 * the thread that bounds delivery, and costs it ~85 ns a delivery on the
 * mock cluster (an MMSI key: the message's first touch is a cache miss;
 * bench/README.md, `4.produce.mock.broker_thread`). While the host is out
 * of CPU the delivery checks are sampled (plugin/ks_client.c); as soon as
 * a CPU is free again they are all checked (issue 33: exact whenever a
 * core is free; when the host is out of CPU keyshift samples, and says
 * so).
 *
 * The figures are Linux's, of the drainer's task, read by the watcher
 * (plugin/ks_cpuwatcher.c: a thread at normal priority, so that the look
 * itself is not starved):
 * /proc/self/task/<tid>/schedstat (proc(5): time on a CPU and "time spent
 * waiting on a runqueue", ns; kernel CONFIG_SCHED_INFO, which Debian,
 * Ubuntu and RHEL kernels have). The run delay grows only when the task
 * gets a CPU again, so a drainer starved outright would show none: the
 * wait is also the window less the time the drainer ran and the time it
 * paused (ks_stage_slept_ns()), the larger of the two counting.
 * Where the files cannot be read the host is never found out of CPU, and
 * every delivery is checked, as before.
 *
 * The verdict, over windows of at least KS_CPUWATCH_WINDOW_MS: out of CPU
 * when the drainer waited for a CPU KS_CPUWATCH_OUT_PCT % of the window or
 * more; a CPU is free again when it waited less than KS_CPUWATCH_FREE_PCT %
 * (a band between, so that a host at the edge does not flap).
 *
 * The delivery thread (KS_CPUWATCH_DELIVERY): a thread of librdkafka's
 * that calls on_acknowledgement, watched the same way. It has no CPU to
 * spare when it ran or waited for a CPU KS_CPUWATCH_BOUND_PCT % of the
 * window or more (free again under KS_CPUWATCH_UNBOUND_PCT %): a thread
 * runs on one CPU at a time, so however many CPUs are idle, the check's
 * nanoseconds on it are then taken from the host's delivery rate. It is
 * what the mock cluster shows while a producer flushes: one thread
 * delivers, and bounds the host (bench/README.md). Its pauses are not
 * known, so only its run delay counts as a wait.
 *
 * Thread-safety: a watch belongs to one thread (the watcher).
 */
#ifndef KS_CPUWATCH_H
#define KS_CPUWATCH_H

#include <stdint.h>

#define KS_CPUWATCH_WINDOW_MS 100
#define KS_CPUWATCH_OUT_PCT 25
#define KS_CPUWATCH_FREE_PCT 10
#define KS_CPUWATCH_BOUND_PCT 90
#define KS_CPUWATCH_UNBOUND_PCT 75

/** What the watched task is, which says what its figures mean. */
typedef enum ks_cpuwatch_kind {
        /** keyshift's drainer, at SCHED_IDLE: out of CPU when it waits */
        KS_CPUWATCH_DRAINER,
        /** a librdkafka thread that delivers: out of CPU when it is busy */
        KS_CPUWATCH_DELIVERY,
} ks_cpuwatch_kind_t;

/** One look at the watched task: ns since it started. */
typedef struct ks_cpuwatch_look {
        uint64_t at_ns;     /**< when (CLOCK_MONOTONIC) */
        uint64_t ran_ns;    /**< on a CPU */
        uint64_t waited_ns; /**< run delay */
        uint64_t slept_ns;  /**< paused: it wanted no CPU */
} ks_cpuwatch_look_t;

typedef struct ks_cpuwatch {
        int                fd; /**< the task's schedstat; -1: none */
        ks_cpuwatch_kind_t kind;
        ks_cpuwatch_look_t since;        /**< the look at the window's start */
        int                out;          /**< the verdict: 1 out of CPU */
        int64_t            out_ms_total; /**< ms found out, windows summed */
} ks_cpuwatch_t;

/**
 * @brief Opens task @p tid's schedstat (a thread of this process, of
 *        @p kind); starts the first window at @p now_ns, the task having
 *        paused @p slept_ns (0 for KS_CPUWATCH_DELIVERY: not known).
 * @returns 0, or -1 when it cannot be read (the watch then never says out
 *          of CPU). Never fails otherwise.
 */
int ks_cpuwatch_open(ks_cpuwatch_t *w, long tid, ks_cpuwatch_kind_t kind,
                     uint64_t now_ns, uint64_t slept_ns);

/** @brief Closes what ks_cpuwatch_open() opened. */
void ks_cpuwatch_close(ks_cpuwatch_t *w);

/**
 * @brief Looks at the task and judges the window ending at @p now_ns when
 *        it is KS_CPUWATCH_WINDOW_MS long or more; @p slept_ns: the task's
 *        pauses so far (ks_stage_slept_ns()).
 * @returns the verdict: 1 out of CPU, 0 not.
 */
int ks_cpuwatch_step(ks_cpuwatch_t *w, uint64_t now_ns, uint64_t slept_ns);

/**
 * @brief ks_cpuwatch_step()'s judgement, given the look @p l (tests feed
 *        it). @returns the verdict.
 */
int ks_cpuwatch_judge(ks_cpuwatch_t *w, const ks_cpuwatch_look_t *l);

#endif /* KS_CPUWATCH_H */
