/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_budget.c
 * @brief keyshift.memory.max.mb split between the key table, the staging
 *        overflow and the topics' sketches (see ks_budget.h).
 */
#include "ks_budget.h"

#include "ks_topk.h"

/* Heap per entry and per topic, as bench/ksb_memory measures them with
 * glibc malloc (ksb_memory --keys 0 with each size changed in turn): a
 * key-sample key 69 B (node, index slots, free list, other clients'
 * hashes), a mixed-sample logical key 182 B (the same plus two encodings'
 * first 40 bytes); the hot-key counters what ks_topk_bytes() says (232 B
 * a counter at 1024, up to 248 B between powers of two: 128 key bytes,
 * counts, heap and index slots, filter cells); the rest of a topic 36 KiB
 * (HyperLogLog 16 KiB, struct, rates, small per-partition arrays). */
#define KS_BUDGET_BYTES_SAMPLE_KEY 69
#define KS_BUDGET_BYTES_MIXED_KEY 182
#define KS_BUDGET_BYTES_FIXED (36 * 1024)

size_t ks_budget_table(size_t memory_bytes)
{
        return memory_bytes / KS_BUDGET_TABLE_SHARE;
}

size_t ks_budget_table_slots(size_t bytes)
{
        size_t n = KS_BUDGET_TABLE_SLOTS_MIN;

        while (n < KS_BUDGET_TABLE_SLOTS_MAX &&
               2 * n * KS_BUDGET_TABLE_SLOT_BYTES <= bytes)
                n *= 2;
        return n;
}

size_t ks_budget_table_bytes_of(size_t slots)
{
        return slots *
                   (KS_BUDGET_TABLE_SLOT_BYTES + KS_BUDGET_TABLE_TAG_BYTES) +
               KS_BUDGET_TABLE_FIXED_BYTES;
}

size_t ks_budget_table_bytes(size_t bytes)
{
        return ks_budget_table_bytes_of(ks_budget_table_slots(bytes));
}

size_t ks_budget_sketches(size_t memory_bytes)
{
        size_t table = ks_budget_table_bytes(ks_budget_table(memory_bytes));

        return memory_bytes > table ? memory_bytes - table : 0;
}

int ks_budget_memory_mb_for(size_t sketch_bytes, int from_mb, int max_mb)
{
        int mb;

        /* one by one: the budget is not monotonic in mb */
        for (mb = from_mb > 0 ? from_mb + 1 : 1; mb <= max_mb; mb++)
                if (ks_budget_sketches((size_t)mb << 20) >= sketch_bytes)
                        return mb;
        return 0;
}

size_t ks_budget_overflow(size_t memory_bytes)
{
        return memory_bytes / KS_BUDGET_OVERFLOW_SHARE;
}

size_t ks_budget_sketch_bytes(const ks_budget_sizes_t *s)
{
        return KS_BUDGET_BYTES_FIXED +
               s->key_sample * KS_BUDGET_BYTES_SAMPLE_KEY +
               s->mixed_sample * KS_BUDGET_BYTES_MIXED_KEY +
               ks_topk_bytes(s->topk);
}

/** @returns @p n scaled by @p f, at least @p min (and never above n). */
static size_t scaled(size_t n, double f, size_t min)
{
        size_t s = (size_t)((double)n * f);

        if (s < min)
                s = min;
        return s < n ? s : n;
}

void ks_budget_fit(ks_budget_sizes_t *s, size_t bytes)
{
        size_t var = ks_budget_sketch_bytes(s) - KS_BUDGET_BYTES_FIXED;
        double f;

        if (ks_budget_sketch_bytes(s) <= bytes)
                return;
        f = bytes > KS_BUDGET_BYTES_FIXED
                ? (double)(bytes - KS_BUDGET_BYTES_FIXED) / (double)var
                : 0.0;
        /* the hot-key index is a power of two: a share of f may still
         * be a little over, so shrink on by 1/16 until it fits (or all
         * three are at their minimum) */
        for (;;) {
                s->key_sample = scaled(s->key_sample, f, KS_BUDGET_SAMPLE_MIN);
                s->mixed_sample =
                    scaled(s->mixed_sample, f, KS_BUDGET_SAMPLE_MIN);
                s->topk = scaled(s->topk, f, KS_BUDGET_TOPK_MIN);
                if (ks_budget_sketch_bytes(s) <= bytes ||
                    (s->key_sample == KS_BUDGET_SAMPLE_MIN &&
                     s->mixed_sample == KS_BUDGET_SAMPLE_MIN &&
                     s->topk == KS_BUDGET_TOPK_MIN))
                        break;
                f = 15.0 / 16.0;
        }
}

/** @returns the parts of what is left of the sketch budget that topic
 *           number @p n (from 1) gets one of: max(16, n). */
static size_t topic_parts(size_t n)
{
        return n > 16 ? n : 16;
}

size_t ks_budget_topic_share(size_t taken, size_t budget, size_t n)
{
        size_t left = taken < budget ? budget - taken : 0;

        return left / topic_parts(n);
}

size_t ks_budget_topics_need(size_t asked_before, size_t n, size_t want)
{
        return asked_before + topic_parts(n) * want;
}
