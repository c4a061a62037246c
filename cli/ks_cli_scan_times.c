/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli_scan_times.c
 * @brief `keyshift scan`'s per-second series of record timestamps, in fixed
 *        memory (ks_cli_scan.h): the scan's rates and sizing.
 */
#include "ks_cli_scan.h"

#include <string.h>

/** @brief The first and last buckets holding records (-1, -1: none). */
static void times_span(const ks_scan_times_t *t, int64_t *lo, int64_t *hi)
{
        int64_t j;

        *lo = *hi = -1;
        for (j = 0; j < KS_SCAN_TIME_BUCKETS; j++)
                if (t->msgs[j]) {
                        if (*lo < 0)
                                *lo = j;
                        *hi = j;
                }
}

/** @brief Halves the series' resolution: merges bucket pairs. */
static void times_widen(ks_scan_times_t *t)
{
        size_t  i;
        int64_t odd = t->base & 1;

        for (i = 0; i < KS_SCAN_TIME_BUCKETS; i++) {
                size_t   to = (i + (size_t)odd) / 2;
                uint64_t m = t->msgs[i], b = t->bytes[i];
                t->msgs[i] = t->bytes[i] = 0;
                t->msgs[to] += m;
                t->bytes[to] += b;
        }
        t->base = (t->base - odd) / 2;
        t->width *= 2;
}

void ks_scan_times_add(ks_scan_times_t *t, int64_t ts_ms, uint64_t bytes)
{
        int64_t s, i;

        if (ts_ms < 0) {
                t->missing++;
                return;
        }
        s = ts_ms / 1000;
        if (!t->any) {
                t->any   = 1;
                t->width = 1;
                t->base  = s - KS_SCAN_TIME_BUCKETS / 2;
        }
        for (;;) {
                i = s / t->width - t->base;
                if (i >= 0 && i < KS_SCAN_TIME_BUCKETS)
                        break;
                /* move the window when what it holds still fits */
                {
                        int64_t lo, hi;
                        times_span(t, &lo, &hi);
                        if (lo < 0) {
                                t->base =
                                    s / t->width - KS_SCAN_TIME_BUCKETS / 2;
                                continue;
                        }
                        if (i < 0 && hi - i < KS_SCAN_TIME_BUCKETS) {
                                int64_t sh = -i;
                                memmove(t->msgs + sh, t->msgs,
                                        (size_t)(KS_SCAN_TIME_BUCKETS - sh) *
                                            sizeof(*t->msgs));
                                memmove(t->bytes + sh, t->bytes,
                                        (size_t)(KS_SCAN_TIME_BUCKETS - sh) *
                                            sizeof(*t->bytes));
                                memset(t->msgs, 0, (size_t)sh * 8);
                                memset(t->bytes, 0, (size_t)sh * 8);
                                t->base -= sh;
                        } else if (i >= KS_SCAN_TIME_BUCKETS &&
                                   i - lo < KS_SCAN_TIME_BUCKETS) {
                                int64_t sh = i - KS_SCAN_TIME_BUCKETS + 1;
                                memmove(t->msgs, t->msgs + sh,
                                        (size_t)(KS_SCAN_TIME_BUCKETS - sh) *
                                            sizeof(*t->msgs));
                                memmove(t->bytes, t->bytes + sh,
                                        (size_t)(KS_SCAN_TIME_BUCKETS - sh) *
                                            sizeof(*t->bytes));
                                memset(t->msgs + KS_SCAN_TIME_BUCKETS - sh, 0,
                                       (size_t)sh * 8);
                                memset(t->bytes + KS_SCAN_TIME_BUCKETS - sh, 0,
                                       (size_t)sh * 8);
                                t->base += sh;
                        } else {
                                times_widen(t);
                        }
                }
        }
        t->msgs[i]++;
        t->bytes[i] += bytes;
}

int64_t ks_scan_times_rates(const ks_scan_times_t *t, ks_rates_t *r)
{
        int64_t lo, hi, i, j;

        times_span(t, &lo, &hi);
        if (lo < 0) {
                ks_rates_init(r, 0);
                return 0;
        }
        ks_rates_init(r, (t->base + lo) * t->width * 1000);
        for (i = lo; i <= hi; i++) {
                uint64_t m = t->msgs[i], b = t->bytes[i];
                int64_t  s0 = (t->base + i) * t->width;
                for (j = 0; j < t->width; j++) {
                        uint64_t mj = m / (uint64_t)t->width +
                                      ((uint64_t)j < m % (uint64_t)t->width);
                        uint64_t bj = b / (uint64_t)t->width +
                                      ((uint64_t)j < b % (uint64_t)t->width);
                        ks_rates_add_n(r, (s0 + j) * 1000, mj, bj);
                }
        }
        return (t->base + hi + 1) * t->width * 1000;
}
