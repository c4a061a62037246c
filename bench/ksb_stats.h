/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ksb_stats.h
 * @brief Clocks, percentiles and the one result line every benchmark
 *        prints, which bench/run gathers into its table.
 *
 * Clocks: CLOCK_MONOTONIC for wall time, CLOCK_PROCESS_CPUTIME_ID and
 * CLOCK_THREAD_CPUTIME_ID for CPU time, and the time-stamp counter (TSC)
 * for per-call latencies. The TSC is read as `lfence; rdtsc` on x86-64
 * (Intel SDM vol. 2B, RDTSC: lfence keeps earlier instructions from
 * finishing after the read) and converted to nanoseconds with a rate
 * calibrated against CLOCK_MONOTONIC over 200 ms; it needs an invariant
 * TSC (`constant_tsc`, `nonstop_tsc` in /proc/cpuinfo). Elsewhere the TSC
 * functions fall back to CLOCK_MONOTONIC (1 "tick" = 1 ns).
 *
 * Result lines (parsed by bench/run; one per measured figure):
 *
 *     RESULT|<id>|<what>|<op>|<bound>|<unit>|<median>|<min>|<max>|<n>|<met>
 *
 * `op` is `<=` or `>=`; median, min and max are over `n` repetitions
 * (rounds of an A/B pair, passes over a stream); `met` compares the median
 * with the bound. A figure that is reported but has no target uses op `-`.
 */
#ifndef KSB_STATS_H
#define KSB_STATS_H

#include <stddef.h>
#include <stdint.h>

/** @returns CLOCK_MONOTONIC in nanoseconds. */
uint64_t ksb_now_ns(void);

/** @returns this process's CPU time (all threads) in nanoseconds. */
uint64_t ksb_process_cpu_ns(void);

/** @returns the calling thread's CPU time in nanoseconds. */
uint64_t ksb_thread_cpu_ns(void);

/**
 * @brief The CPU time, in nanoseconds, of this process's threads whose
 *        name (comm, as pthread_setname_np() set it) starts with
 *        @p prefix: keyshift's are "ks:reporter" and "ks:drainer". Each
 *        thread is read through its own CPU clock (Linux: the clock id
 *        of thread id tid is ((~tid) << 3) | 6, CPUCLOCK_SCHED of a
 *        thread), so the figure has nanosecond resolution, not /proc's
 *        clock ticks.
 */
uint64_t ksb_threads_cpu_ns(const char *prefix);

/** @returns how many threads of this process whose name begins with
 *           @p prefix are running or runnable (state R) now. */
int ksb_threads_runnable(const char *prefix);

/**
 * @brief Waits until the threads named @p prefix... are idle: their CPU
 *        grows by under @p quiet_ns in @p step_ms and none is runnable
 *        (one starved of CPU uses little but is not done), at most
 *        @p max_ms in all. @returns their CPU time then (ksb_threads_cpu_ns()).
 *        Deferred work (keyshift's drainer emptying its rings after the
 *        producing threads stopped) is then counted with the block that
 *        caused it, not with the next one.
 */
uint64_t ksb_threads_quiet_cpu_ns(const char *prefix, uint64_t quiet_ns,
                                  int step_ms, int max_ms);

/** @returns the time-stamp counter (ordered after earlier loads). */
static inline uint64_t ksb_tsc(void)
{
#if defined(__x86_64__)
        uint32_t lo, hi;
        __asm__ __volatile__("lfence\n\trdtsc" : "=a"(lo), "=d"(hi)::"memory");
        return ((uint64_t)hi << 32) | lo;
#else
        return ksb_now_ns();
#endif
}

/** @brief Measures the TSC rate once (200 ms); later calls return it.
 *  @returns TSC ticks per nanosecond. */
double ksb_tsc_per_ns(void);

/** @returns the median cost, in ticks, of an empty ksb_tsc() pair: what
 *           per-call timings subtract. */
uint64_t ksb_tsc_overhead(void);

/** @brief Sorts @p v ascending (in place). */
void ksb_sort_u32(uint32_t *v, size_t n);
void ksb_sort_double(double *v, size_t n);

/** @returns the @p q quantile (0..1) of sorted @p v (nearest rank). */
uint32_t ksb_quantile_u32(const uint32_t *v, size_t n, double q);
double   ksb_quantile_double(const double *v, size_t n, double q);

/** @returns the median of @p v (sorts a copy; @p v is left as it is). */
double ksb_median(const double *v, size_t n);

/**
 * @brief Prints one RESULT line (see the file comment) for the values of
 *        @p n repetitions.
 * @param op "<=", ">=" or "-" (no target: met is "n/a").
 * @returns 1 if the median meets the bound (or there is none), else 0.
 */
int ksb_result(const char *id, const char *what, const char *op, double bound,
               const char *unit, const double *values, size_t n);

/** @brief Prints a `#`-prefixed information line (ignored by the table). */
void ksb_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/** @brief Exits with a message on a failed precondition. */
void ksb_die(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));

/** @returns the heap in use (mallinfo2: arena + mmapped chunks), bytes. */
size_t ksb_heap_bytes(void);

#endif /* KSB_STATS_H */
