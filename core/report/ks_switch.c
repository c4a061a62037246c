/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_switch.c
 * @brief The switch from an old to a new partition count in a topic's
 *        stored records (ks_switch.h): records sorted by the count that
 *        explains them, "both" records kept as runs, then decided by
 *        time and offset evidence.
 */
#include "ks_switch.h"

#include <stdlib.h>
#include <string.h>

#include "ks_partitioner.h"
#include "ks_topic.h"

#define KS_SWITCH_COUNT_MAX 100000
#define KS_SWITCH_DEFAULT_BYTES ((size_t)64 << 20)

/** Consecutive "both" records of one partition with one timestamp. */
typedef struct both_run {
        int64_t  first, last; /**< offsets */
        int64_t  ts;          /**< ms, -1: none */
        uint32_t records;
        int32_t  partition;
} both_run_t;

struct ks_switch {
        int               family;
        int32_t           old_n, new_n;
        uint64_t          m_old, m_new;
        ks_switch_part_t *parts; /**< [new_n]: counts by placement */
        long             *open;  /**< [new_n]: index of the open run, -1 */
        both_run_t       *runs;
        size_t            run_cnt, run_cap, run_max;
        uint64_t          not_kept;
        int64_t           t_old, t_new; /**< -1: none */
};

ks_switch_t *ks_switch_new(int family, int32_t old_count, int32_t new_count,
                           size_t max_bytes)
{
        ks_switch_t *s;
        int32_t      p;

        if (family < 0 || family > 2 || old_count < 1 ||
            new_count <= old_count || new_count > KS_SWITCH_COUNT_MAX)
                return NULL;
        if (!(s = calloc(1, sizeof(*s))))
                return NULL;
        s->family = family;
        s->old_n  = old_count;
        s->new_n  = new_count;
        s->m_old  = ks_partition_m((uint32_t)old_count);
        s->m_new  = ks_partition_m((uint32_t)new_count);
        s->parts  = calloc((size_t)new_count, sizeof(*s->parts));
        s->open   = calloc((size_t)new_count, sizeof(*s->open));
        if (!s->parts || !s->open) {
                ks_switch_destroy(s);
                return NULL;
        }
        for (p = 0; p < new_count; p++) {
                s->open[p]                  = -1;
                s->parts[p].last_old_only   = -1;
                s->parts[p].first_new_only  = -1;
                s->parts[p].ambiguous_first = -1;
                s->parts[p].ambiguous_last  = -1;
                s->parts[p].switch_offset   = -1;
        }
        s->run_max = (max_bytes ? max_bytes : KS_SWITCH_DEFAULT_BYTES) /
                     sizeof(both_run_t);
        if (s->run_max < 16)
                s->run_max = 16;
        s->t_old = s->t_new = -1;
        return s;
}

void ks_switch_destroy(ks_switch_t *s)
{
        if (!s)
                return;
        free(s->parts);
        free(s->open);
        free(s->runs);
        free(s);
}

/** @brief Keeps a "both" record: extends its partition's open run when
 *         the timestamp is the same, else opens a run (or, over the
 *         budget, counts it not kept). */
static void keep_both(ks_switch_t *s, int32_t p, int64_t offset, int64_t ts)
{
        both_run_t *r;

        if (s->open[p] >= 0) {
                r = &s->runs[s->open[p]];
                if (r->ts == ts && r->records < UINT32_MAX) {
                        r->last = offset;
                        r->records++;
                        return;
                }
        }
        if (s->run_cnt == s->run_cap) {
                size_t      cap = s->run_cap ? s->run_cap * 2 : 1024;
                both_run_t *n;
                if (cap > s->run_max)
                        cap = s->run_max;
                if (cap <= s->run_cnt ||
                    !(n = realloc(s->runs, cap * sizeof(*n)))) {
                        s->not_kept++;
                        s->open[p] = -1;
                        return;
                }
                s->runs    = n;
                s->run_cap = cap;
        }
        r        = &s->runs[s->run_cnt];
        r->first = r->last = offset;
        r->ts              = ts;
        r->records         = 1;
        r->partition       = p;
        s->open[p]         = (long)s->run_cnt++;
}

void ks_switch_add(ks_switch_t *s, const void *key, size_t keylen,
                   int32_t partition, int64_t offset, int64_t ts_ms)
{
        ks_switch_part_t *sp;
        uint32_t          h;
        int               o, n;

        if (partition < 0 || partition >= s->new_n)
                return;
        sp = &s->parts[partition];
        if (!key || !keylen) {
                sp->unkeyed++;
                return;
        }
        h = ks_partitioner_hash(ks_topic_diag_families[s->family], key, keylen);
        o = partition < s->old_n &&
            ks_partition_of_m(h, s->m_old, (uint32_t)s->old_n) == partition;
        n = ks_partition_of_m(h, s->m_new, (uint32_t)s->new_n) == partition;
        if (o && n) {
                keep_both(s, partition, offset, ts_ms < 0 ? -1 : ts_ms);
                return;
        }
        if (!o && !n) {
                sp->other++;
                return;
        }
        s->open[partition] = -1; /* evidence ends a run of "both" */
        if (o) {
                sp->old_only++;
                sp->last_old_only = offset;
                if (ts_ms >= 0 && ts_ms > s->t_old)
                        s->t_old = ts_ms;
        } else {
                sp->new_only++;
                if (sp->first_new_only < 0)
                        sp->first_new_only = offset;
                if (ts_ms >= 0 && (s->t_new < 0 || ts_ms < s->t_new))
                        s->t_new = ts_ms;
        }
}

enum { V_NONE = 0, V_OLD = 1, V_NEW = 2 };

/** @returns what the time says of a record at @p ts (ks_switch.h). */
static int by_time(const ks_switch_t *s, int64_t ts)
{
        if (ts < 0)
                return V_NONE;
        if (s->t_old >= 0 && s->t_new >= 0 && s->t_new <= s->t_old) {
                /* switched at different moments: an interleaved stretch */
                return ts < s->t_new ? V_OLD : ts > s->t_old ? V_NEW : V_NONE;
        }
        /* one moment T, T_old < T <= T_new (either may be unknown) */
        if (s->t_old >= 0 && ts <= s->t_old)
                return V_OLD;
        if (s->t_new >= 0 && ts >= s->t_new)
                return V_NEW;
        return V_NONE;
}

/** @returns 1 when partition @p p can hold both old-only and new-only
 *           records: not when old divides new and p < old (h % new == p
 *           then implies h % old == p). */
static int both_kinds(const ks_switch_t *s, int32_t p)
{
        if (p >= s->old_n)
                return 0;
        return s->new_n % s->old_n != 0;
}

/** @returns what partition @p sp's offsets say of a run [first, last]
 *           (no old-only or new-only offset falls inside a run). */
static int by_offset(const ks_switch_part_t *sp, const both_run_t *r)
{
        int after_old  = sp->last_old_only < 0 || r->first > sp->last_old_only;
        int before_new = sp->first_new_only < 0 || r->last < sp->first_new_only;

        if (!after_old && before_new)
                return V_OLD; /* an old-only after it, no new-only before */
        if (after_old && !before_new)
                return V_NEW;
        return V_NONE;
}

static void lower(int64_t *at, int64_t off)
{
        if (*at < 0 || off < *at)
                *at = off;
}

int ks_switch_result(const ks_switch_t *s, ks_switch_result_t *r)
{
        size_t  i;
        int32_t p;

        memset(r, 0, sizeof(*r));
        r->parts = malloc((size_t)s->new_n * sizeof(*r->parts));
        if (!r->parts)
                return -1;
        memcpy(r->parts, s->parts, (size_t)s->new_n * sizeof(*r->parts));
        r->family            = s->family;
        r->old_count         = s->old_n;
        r->new_count         = s->new_n;
        r->old_only_last_ms  = s->t_old;
        r->new_only_first_ms = s->t_new;
        r->one_moment = s->t_old >= 0 && s->t_new >= 0 && s->t_old < s->t_new;
        for (p = 0; p < s->new_n; p++) {
                ks_switch_part_t *sp = &r->parts[p];
                sp->offsets_used     = both_kinds(s, p);
                if (sp->first_new_only >= 0)
                        sp->switch_offset = sp->first_new_only;
        }
        for (i = 0; i < s->run_cnt; i++) {
                const both_run_t *run = &s->runs[i];
                ks_switch_part_t *sp  = &r->parts[run->partition];
                int               t = by_time(s, run->ts), o = V_NONE, v;
                if (sp->offsets_used)
                        o = by_offset(&s->parts[run->partition], run);
                v = (t | o) == V_OLD   ? V_OLD
                    : (t | o) == V_NEW ? V_NEW
                                       : V_NONE;
                if (v == V_OLD) {
                        sp->both_old += run->records;
                        continue;
                }
                if (v == V_NEW) {
                        sp->both_new += run->records;
                } else {
                        sp->ambiguous += run->records;
                        lower(&sp->ambiguous_first, run->first);
                        if (run->last > sp->ambiguous_last)
                                sp->ambiguous_last = run->last;
                }
                lower(&sp->switch_offset, run->first);
        }
        for (p = 0; p < s->new_n; p++) {
                ks_switch_part_t *sp = &r->parts[p];
                r->old_exact += sp->old_only + sp->both_old;
                r->new_exact += sp->new_only + sp->both_new;
                r->ambiguous += sp->ambiguous;
                r->other += sp->other;
                r->unkeyed += sp->unkeyed;
        }
        r->not_kept = s->not_kept;
        r->ambiguous += s->not_kept;
        return 0;
}

void ks_switch_result_free(ks_switch_result_t *r)
{
        free(r->parts);
        memset(r, 0, sizeof(*r));
}
