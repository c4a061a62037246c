/**
 * @file ks_priority.h
 * @brief keyshift's threads yield the CPU to the host's (issue 33,
 *        decision 3): each of them (the drainer and the reporter,
 *        ks_reporter.c) lowers its own scheduling priority, first thing,
 *        to the lowest the process may give it without privilege.
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
