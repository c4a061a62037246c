/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ksb_stats.c
 * @brief Clocks, percentiles and result lines (see ksb_stats.h).
 */
#include "ksb_stats.h"

#include <dirent.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t clock_ns(clockid_t id)
{
        struct timespec ts;

        clock_gettime(id, &ts);
        return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t ksb_now_ns(void)
{
        return clock_ns(CLOCK_MONOTONIC);
}

uint64_t ksb_process_cpu_ns(void)
{
        return clock_ns(CLOCK_PROCESS_CPUTIME_ID);
}

uint64_t ksb_thread_cpu_ns(void)
{
        return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

/** @returns the tid of task @p name (a /proc/self/task entry) when its
 *           name begins with @p prefix, else -1. */
static long task_of(const char *name, const char *prefix)
{
        char  path[300], comm[64] = "";
        FILE *fp;

        if (name[0] == '.')
                return -1;
        snprintf(path, sizeof(path), "/proc/self/task/%s/comm", name);
        if (!(fp = fopen(path, "r")))
                return -1;
        if (!fgets(comm, sizeof(comm), fp))
                comm[0] = '\0';
        fclose(fp);
        return strncmp(comm, prefix, strlen(prefix)) ? -1
                                                     : strtol(name, NULL, 10);
}

uint64_t ksb_threads_cpu_ns(const char *prefix)
{
        DIR           *d = opendir("/proc/self/task");
        struct dirent *e;
        uint64_t       sum = 0;

        while (d && (e = readdir(d))) {
                struct timespec ts;
                long            tid = task_of(e->d_name, prefix);

                if (tid >= 0 &&
                    !clock_gettime((clockid_t)((~(unsigned long)tid) << 3 | 6),
                                   &ts))
                        sum += (uint64_t)ts.tv_sec * 1000000000u +
                               (uint64_t)ts.tv_nsec;
        }
        if (d)
                closedir(d);
        return sum;
}

int ksb_threads_runnable(const char *prefix)
{
        DIR           *d = opendir("/proc/self/task");
        struct dirent *e;
        int            n = 0;

        while (d && (e = readdir(d))) {
                char  path[300], buf[512], *p;
                FILE *fp;
                long  tid = task_of(e->d_name, prefix);

                if (tid < 0)
                        continue;
                snprintf(path, sizeof(path), "/proc/self/task/%ld/stat", tid);
                if (!(fp = fopen(path, "r")))
                        continue;
                /* "tid (comm) S ...": the state after the last ')' */
                if (fgets(buf, sizeof(buf), fp) && (p = strrchr(buf, ')')) &&
                    p[1] == ' ' && p[2] == 'R')
                        n++;
                fclose(fp);
        }
        if (d)
                closedir(d);
        return n;
}

uint64_t ksb_threads_quiet_cpu_ns(const char *prefix, uint64_t quiet_ns,
                                  int step_ms, int max_ms)
{
        uint64_t prev = ksb_threads_cpu_ns(prefix), cur = prev;
        int      waited;

        for (waited = 0; waited < max_ms; waited += step_ms) {
                struct timespec ts = {step_ms / 1000,
                                      (long)(step_ms % 1000) * 1000000};
                nanosleep(&ts, NULL);
                cur = ksb_threads_cpu_ns(prefix);
                /* and none runnable: a thread starved of CPU (keyshift's
                 * drainer at SCHED_IDLE on a busy host) uses little CPU
                 * but is not done */
                if (cur - prev < quiet_ns && !ksb_threads_runnable(prefix))
                        break;
                prev = cur;
        }
        return cur;
}

double ksb_tsc_per_ns(void)
{
        static double rate;
        uint64_t      t0, c0, t1, c1;

        if (rate > 0)
                return rate;
#if defined(__x86_64__)
        t0 = ksb_now_ns();
        c0 = ksb_tsc();
        do
                t1 = ksb_now_ns();
        while (t1 - t0 < 200000000u);
        c1   = ksb_tsc();
        rate = (double)(c1 - c0) / (double)(t1 - t0);
#else
        (void)t0, (void)c0, (void)t1, (void)c1;
        rate = 1.0;
#endif
        return rate;
}

static int cmp_u32(const void *a, const void *b)
{
        uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
        return x < y ? -1 : x > y;
}

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return x < y ? -1 : x > y;
}

void ksb_sort_u32(uint32_t *v, size_t n)
{
        qsort(v, n, sizeof(*v), cmp_u32);
}

void ksb_sort_double(double *v, size_t n)
{
        qsort(v, n, sizeof(*v), cmp_double);
}

/** @returns the index of the @p q quantile among @p n sorted values. */
static size_t rank_of(size_t n, double q)
{
        double r = q * (double)n;
        size_t i = r <= 1.0 ? 0 : (size_t)(r + 0.999999) - 1;

        return i >= n ? n - 1 : i;
}

uint32_t ksb_quantile_u32(const uint32_t *v, size_t n, double q)
{
        return n ? v[rank_of(n, q)] : 0;
}

double ksb_quantile_double(const double *v, size_t n, double q)
{
        return n ? v[rank_of(n, q)] : 0.0;
}

uint64_t ksb_tsc_overhead(void)
{
        static uint64_t overhead = UINT64_MAX;
        uint32_t        d[10001];
        size_t          i;

        if (overhead != UINT64_MAX)
                return overhead;
        for (i = 0; i < 10001; i++) {
                uint64_t t0 = ksb_tsc();
                uint64_t t1 = ksb_tsc();
                d[i]        = (uint32_t)(t1 - t0);
        }
        ksb_sort_u32(d, 10001);
        overhead = d[5000];
        return overhead;
}

double ksb_median(const double *v, size_t n)
{
        double *c;
        double  m;

        if (!n)
                return 0.0;
        c = malloc(n * sizeof(*c));
        if (!c)
                ksb_die("out of memory");
        memcpy(c, v, n * sizeof(*c));
        ksb_sort_double(c, n);
        m = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2.0;
        free(c);
        return m;
}

int ksb_result(const char *id, const char *what, const char *op, double bound,
               const char *unit, const double *values, size_t n)
{
        double med = ksb_median(values, n), lo = n ? values[0] : 0,
               hi = n ? values[0] : 0;
        size_t i;
        int    met;

        for (i = 1; i < n; i++) {
                lo = values[i] < lo ? values[i] : lo;
                hi = values[i] > hi ? values[i] : hi;
        }
        if (!strcmp(op, "<="))
                met = med <= bound;
        else if (!strcmp(op, ">="))
                met = med >= bound;
        else
                met = -1;
        printf("RESULT|%s|%s|%s|%.6g|%s|%.6g|%.6g|%.6g|%zu|%s\n", id, what, op,
               bound, unit, med, lo, hi, n,
               met < 0 ? "n/a"
               : met   ? "yes"
                       : "no");
        fflush(stdout);
        return met != 0;
}

void ksb_note(const char *fmt, ...)
{
        va_list ap;

        fputs("# ", stdout);
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        fputc('\n', stdout);
        fflush(stdout);
}

void ksb_die(const char *fmt, ...)
{
        va_list ap;

        fputs("bench: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        exit(2);
}

size_t ksb_heap_bytes(void)
{
        struct mallinfo2 mi = mallinfo2();

        return mi.uordblks + mi.hblkhd;
}
