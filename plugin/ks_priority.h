/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_priority.h
 * @brief keyshift's analysis yields the CPU to the host's threads (issue
 *        33, decision 3): the drainer (ks_drainer.c), which does nearly
 *        all of keyshift's work, lowers its own scheduling priority, first
 *        thing, to the lowest the process may give it without privilege.
 *
 * The reporter stays at the priority it was created with. Its work is a
 * metadata request and a report per interval, and it is latency-bound: a
 * new partition count must reach the delivery checks before the
 * acknowledgements of a burst pile up (at most KS_SUSPECTS_MAX wait). At
 * SCHED_IDLE it waited for an idle CPU; even at nice 19, on a host whose
 * CPUs other work filled (load 5 on 2 vCPUs), it got ~0.3 % of a CPU and
 * answered too late: measured, broker.burst verified 173,534 of 200,000
 * deliveries and broker.rehearse ended with the count unknown. The
 * drainer is never waited for by it before a count (ks_stage_counts.c).
 *
 * Linux SCHED_IDLE (sched(7); since 2.6.23): the thread runs only on a CPU
 * that no SCHED_OTHER thread wants (weight 3 against nice 0's 1024), so on
 * a saturated machine the kernel runs the host's threads first, and on an
 * idle one keyshift's threads still get whole CPUs. Entering SCHED_IDLE
 * needs no privilege (leaving it does, which keyshift never asks). Where
 * it is refused (a kernel or a seccomp profile without it), nice 19 for
 * that thread alone: on Linux a thread's nice value is its own
 * (setpriority(PRIO_PROCESS, gettid(), 19); setpriority(2), BUGS: POSIX
 * says per process, Linux does it per thread). Where that is refused too,
 * the thread stays as it was: keyshift never fails for it.
 *
 * Threads a keyshift thread creates would inherit its policy; none does
 * (librdkafka's threads, the Admin API's included, are created by
 * rd_kafka_new() on the application's thread or by librdkafka's own).
 */
#ifndef KS_PRIORITY_H
#define KS_PRIORITY_H

/** The priority a keyshift thread got, lowest first. */
typedef enum ks_priority {
        KS_PRIORITY_UNKNOWN = 0, /**< the thread has not run yet */
        KS_PRIORITY_IDLE,        /**< SCHED_IDLE */
        KS_PRIORITY_NICE19,      /**< SCHED_OTHER, nice 19 */
        KS_PRIORITY_NORMAL,      /**< both refused: as created */
} ks_priority_t;

/**
 * @brief Lowers the calling thread's priority: SCHED_IDLE, else nice 19,
 *        else nothing. Never fails.
 * @returns what the thread got.
 * @locality a keyshift thread, first thing (it changes only the caller).
 */
ks_priority_t ks_priority_lower_self(void);

/** @returns the report's name for @p p: "SCHED_IDLE", "nice 19",
 *           "normal", or NULL for KS_PRIORITY_UNKNOWN. */
const char *ks_priority_name(ks_priority_t p);

#endif /* KS_PRIORITY_H */
