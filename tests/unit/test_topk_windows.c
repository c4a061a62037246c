/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_topk_windows.c
 * @brief The hot-key summary's windows (ks_topk.h: a flush's runs offered
 *        as one window per topic, monitored keys counted first), the merge
 *        rule worked out by hand, plain and filtered.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ks_test.h"
#include "ks_topk.h"

/** @returns the entry of key @p k (one letter) in @p tk, or NULL. */
static const ks_topk_entry_t *entry_of(const ks_topk_t *tk, char k,
                                       ks_topk_entry_t *buf)
{
        size_t n = ks_topk_entries(tk, buf), i;

        for (i = 0; i < n; i++)
                if (buf[i].keylen == 1 && buf[i].key[0] == (uint8_t)k)
                        return &buf[i];
        return NULL;
}

/** The hash of one-letter key @p k in the window tests: A..F fall in
 *  filter cells 1..6 of a 2-counter summary ((hash & 0xffffffff) x 16
 *  >> 32). */
#define WH(k) ((uint64_t)((k) - 'A' + 1) << 28)

/** One window of runs, as a flush hands them over (ks_batch.c): first
 *  every run to window_bump, then the rest offered. */
static void window(ks_topk_t *tk, const char *keys, const uint64_t *w)
{
        int    left[8] = {0};
        size_t i;

        ks_topk_window_begin(tk);
        for (i = 0; keys[i]; i++)
                left[i] = !ks_topk_window_bump(tk, WH(keys[i]), w[i], w[i]);
        for (i = 0; keys[i]; i++)
                if (left[i])
                        ks_topk_window_add(tk, &keys[i], 1, WH(keys[i]), 0,
                                           w[i], w[i]);
}

/* The merge rule by hand, in plain Space-Saving (a summary that has been
 * merged: here with an empty one): a newcomer is charged the bound of its
 * window's start, and an evicted key offered again is still counted from
 * there. */
static void test_topk_windows(void)
{
        ks_topk_t             *tk = ks_topk_new(2), *none = ks_topk_new(2);
        ks_topk_entry_t        buf[2];
        const ks_topk_entry_t *e;

        CU_ASSERT_FATAL(tk && none);
        ks_topk_merge(tk, none);
        ks_topk_destroy(none);

        window(tk, "AB", (uint64_t[]){5, 5});
        /* C (1) against a full summary whose bound is 5: 6, error 5 */
        window(tk, "C", (uint64_t[]){1});
        CU_ASSERT_PTR_NOT_NULL_FATAL(e = entry_of(tk, 'C', buf));
        CU_ASSERT_EQUAL(e->count, 6);
        CU_ASSERT_EQUAL(e->error, 5);
        /* A or B was evicted; both offered again with 1: a key whose
         * bound + 1 does not exceed the smallest counter is dropped */
        window(tk, "AB", (uint64_t[]){1, 1});
        CU_ASSERT_EQUAL(ks_topk_total(tk), 13);
        e = entry_of(tk, 'A', buf);
        if (e) { /* A was kept: 6, or evicted and re-admitted: 5 + 1 */
                CU_ASSERT(e->count >= 6);
                CU_ASSERT(e->count - e->error <= 6);
        }
        e = entry_of(tk, 'B', buf);
        if (e) {
                CU_ASSERT(e->count >= 6);
                CU_ASSERT(e->count - e->error <= 6);
        }
        /* D with 10 takes the smallest counter: count = bound + 10 */
        window(tk, "D", (uint64_t[]){10});
        CU_ASSERT_PTR_NOT_NULL_FATAL(e = entry_of(tk, 'D', buf));
        CU_ASSERT_EQUAL(e->count, 16);
        CU_ASSERT_EQUAL(e->error, 6);
        /* a single add inside a window: later offers fall back to takeover */
        ks_topk_window_begin(tk);
        ks_topk_add(tk, "E", 1, WH('E'), 0, 1);
        ks_topk_window_add(tk, "F", 1, WH('F'), 0, 1, 1);
        CU_ASSERT_PTR_NOT_NULL(entry_of(tk, 'F', buf));
        ks_topk_destroy(tk);
}

/* Windows with the filter (ks_topk.c): an offered key is charged its
 * cell, whenever it comes (cells: WH()). */
static void test_topk_windows_filtered(void)
{
        ks_topk_t             *tk = ks_topk_new(2);
        ks_topk_entry_t        buf[2];
        const ks_topk_entry_t *e;

        CU_ASSERT_PTR_NOT_NULL_FATAL(tk);
        window(tk, "AB", (uint64_t[]){5, 5});
        /* C (1): its cell 0 + 1 does not exceed 5; C (5): 1 + 5 does */
        window(tk, "C", (uint64_t[]){1});
        CU_ASSERT_PTR_NULL(entry_of(tk, 'C', buf));
        window(tk, "C", (uint64_t[]){5});
        CU_ASSERT_PTR_NOT_NULL_FATAL(e = entry_of(tk, 'C', buf));
        CU_ASSERT_EQUAL(e->count, 6);
        CU_ASSERT_EQUAL(e->error, 1);
        /* A and B with 1 each: the one still monitored is bumped to 6 first,
         * the evicted one (cell 5) is then dropped: 5 + 1 is not above 6 */
        window(tk, "AB", (uint64_t[]){1, 1});
        CU_ASSERT_EQUAL(ks_topk_total(tk), 18);
        CU_ASSERT((entry_of(tk, 'A', buf) != NULL) !=
                  (entry_of(tk, 'B', buf) != NULL));
        /* D with 10 takes the smallest counter, charged its empty cell */
        window(tk, "D", (uint64_t[]){10});
        CU_ASSERT_PTR_NOT_NULL_FATAL(e = entry_of(tk, 'D', buf));
        CU_ASSERT_EQUAL(e->count, 10);
        CU_ASSERT_EQUAL(e->error, 0);
        /* a key admitted inside a window, by a run outside it, and then
         * offered: counted on its counter, not given a second one */
        ks_topk_window_begin(tk);
        CU_ASSERT_FALSE(ks_topk_window_bump(tk, WH('F'), 7, 7));
        ks_topk_add_n(tk, "F", 1, WH('F'), 0, 7, 7);
        ks_topk_window_add(tk, "F", 1, WH('F'), 0, 7, 7);
        CU_ASSERT_EQUAL(ks_topk_entries(tk, buf), 2);
        CU_ASSERT_PTR_NOT_NULL_FATAL(e = entry_of(tk, 'F', buf));
        CU_ASSERT_EQUAL(e->count, 14);
        CU_ASSERT_EQUAL(e->error, 0);
        CU_ASSERT_EQUAL(ks_topk_total(tk), 42);
        ks_topk_destroy(tk);
}

void ks_test_register(void)
{
        KS_ADD_SUITE("hot-key windows",
                     {"the merge rule by hand", test_topk_windows},
                     {"filtered: a key's cell", test_topk_windows_filtered});
}
