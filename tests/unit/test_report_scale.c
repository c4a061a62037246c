/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_report_scale.c
 * @brief What a report costs as topics grow: every per-report step must be
 *        linear or n log n in topics and warnings (a producer of 1,000
 *        topics took 88 s to destroy when logging the warnings compared
 *        each with every other for each one), counted in operations, not
 *        timed.
 *
 * The operations counted are calls to strcmp(), wherever they are made:
 * this program is linked with -Wl,--wrap=strcmp (tests/CMakeLists.txt),
 * so the count does not depend on how the code under test is written.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ks_hash.h"
#include "ks_report.h"
#include "ks_test.h"
#include "ks_warn.h"

/** strcmp() calls made by this thread so far. */
static _Thread_local unsigned long long strcmp_calls;

int __real_strcmp(const char *a, const char *b);
int __wrap_strcmp(const char *a, const char *b);

int __wrap_strcmp(const char *a, const char *b)
{
        strcmp_calls++;
        return __real_strcmp(a, b);
}

static const char *const codes[] = {KS_WARN_KEYS_WOULD_MOVE,
                                    KS_WARN_HOT_KEY,
                                    KS_WARN_PEAK_TO_MEAN_HIGH,
                                    KS_WARN_INSUFFICIENT_DATA,
                                    KS_WARN_PARTITIONER_NOT_JAVA_COMPATIBLE,
                                    KS_WARN_EMPTY_KEYS_HASHED};

/**
 * @brief Does with @p topics topics what a report does with its warnings
 *        (core/report/ks_report.c, ks_report_sizing.c, plugin/ks_reporter.c):
 *        per topic, 4 warnings added, one code removed again from the
 *        topic's own, its own listed as JSON; then every line logged.
 * @returns the strcmp() calls made; @p lines gets the lines logged.
 */
static unsigned long long report_warnings(int topics, char *log, size_t size,
                                          int *lines)
{
        ks_warn_list_t     wl;
        FILE              *fp = fmemopen(log, size, "w");
        unsigned long long before;
        const char        *p;
        char               name[32];
        int                t, k;

        ks_warn_list_init(&wl);
        before = strcmp_calls;
        ks_warn_add(&wl, KS_WARN_SKETCHES_REDUCED, NULL, "producer-level");
        for (t = 0; t < topics; t++) {
                size_t  first = wl.cnt;
                json_t *own;
                snprintf(name, sizeof(name), "tenant-%05d", t);
                for (k = 0; k < 4; k++)
                        ks_warn_add(&wl, codes[(t + k) % 6], name, "w%d", k);
                ks_warn_remove_since(&wl, KS_WARN_HOT_KEY, name, first);
                own = ks_warn_list_json_since(&wl, name, first);
                CU_ASSERT_EQUAL(json_array_size(own), wl.cnt - first);
                json_decref(own);
        }
        json_decref(ks_warn_list_json(&wl, NULL));
        ks_warn_list_log(&wl, fp, "p#producer-1");
        fclose(fp);
        ks_warn_list_clear(&wl);
        for (*lines = 0, p = log; (p = strchr(p, '\n')); p++)
                (*lines)++;
        return strcmp_calls - before;
}

/** @returns "KEYS_WOULD_MOVE on N topics" for report_warnings(@p topics):
 *           topic t has codes[(t + k) % 6], k = 0..3. */
static const char *moving_line(int topics, char *buf)
{
        int t, n = 0, k;

        for (t = 0; t < topics; t++)
                for (k = 0; k < 4; k++)
                        n += (t + k) % 6 == 0;
        snprintf(buf, 64, "%s on %d topics", KS_WARN_KEYS_WOULD_MOVE, n);
        return buf;
}

/** Linear or n log n, not quadratic: 10x the topics costs at most ~13x
 *  the comparisons (n log n at these sizes), a quadratic path 100x (the
 *  logging before took x1,000: it was cubic). */
static void test_warnings_n_log_n(void)
{
        static char        log[1 << 16];
        char               line[64];
        int                lines;
        unsigned long long small, large;
        double             ratio;

        small = report_warnings(100, log, sizeof(log), &lines);
        CU_ASSERT_EQUAL(lines, 1 + 5); /* one line per code left */
        CU_ASSERT_PTR_NOT_NULL(strstr(log, moving_line(100, line)));
        CU_ASSERT_PTR_NULL(strstr(log, "HOT_KEY")); /* removed by each */
        large = report_warnings(1000, log, sizeof(log), &lines);
        CU_ASSERT_EQUAL(lines, 1 + 5);
        CU_ASSERT_PTR_NOT_NULL(strstr(log, moving_line(1000, line)));
        ratio = (double)large / (double)small;
        printf("\n      strcmp() calls: %llu for 100 topics, %llu for 1,000 "
               "(x%.1f; n log n: x%.1f, quadratic: x100) ",
               small, large, ratio, 10.0 * log2(4000.0) / log2(400.0));
        CU_ASSERT(ratio < 15.0);
}

void ks_test_register(void)
{
        KS_ADD_SUITE(
            "report cost with many topics",
            {"warnings: n log n, not quadratic", test_warnings_n_log_n});
}
