/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_audit.c
 * @brief The audit of stored records (ks_audit.h): explained counters,
 *        signature groups, the greedy cover and the `audit` object.
 */
#include "ks_audit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ks_hash.h"
#include "ks_partitioner.h"
#include "ks_report_parts.h"
#include "ks_topic.h"

#include "ks_audit_impl.h"

const char *ks_audit_family_name(int family)
{
        return family >= 0 && family < KS_AUDIT_FAMILIES
                   ? ks_partitioner_name(ks_topic_diag_families[family])
                   : "?";
}

/** @returns the bytes one signature group takes (entry, bits, slots). */
static size_t entry_bytes(size_t words)
{
        return sizeof(sig_entry_t) + words * 8 + 2 * sizeof(uint32_t);
}

ks_audit_t *ks_audit_new(int32_t partition_count, size_t max_bytes)
{
        ks_audit_t *a;
        int32_t     n;
        size_t      c = (size_t)partition_count;

        if (partition_count < 1 || partition_count > KS_AUDIT_COUNT_MAX)
                return NULL;
        a = calloc(1, sizeof(*a));
        if (!a)
                return NULL;
        a->c                = partition_count;
        a->words            = (3 * c + 63) / 64;
        a->m                = calloc(c + 1, sizeof(*a->m));
        a->explained        = calloc(3 * c, sizeof(*a->explained));
        a->unexplained_part = calloc(c, sizeof(*a->unexplained_part));
        a->newest           = calloc(c, KS_AUDIT_NEWEST);
        a->newest_pos       = calloc(c, sizeof(*a->newest_pos));
        a->scratch          = calloc(a->words, sizeof(*a->scratch));
        if (!a->m || !a->explained || !a->unexplained_part || !a->newest ||
            !a->newest_pos || !a->scratch) {
                ks_audit_destroy(a);
                return NULL;
        }
        for (n = 1; n <= partition_count; n++)
                a->m[n] = ks_partition_m((uint32_t)n);
        a->e_max = (max_bytes ? max_bytes : KS_AUDIT_DEFAULT_BYTES) /
                   entry_bytes(a->words);
        if (a->e_max < 16)
                a->e_max = 16;
        if (a->e_max > UINT32_MAX / 4)
                a->e_max = UINT32_MAX / 4;
        return a;
}

void ks_audit_destroy(ks_audit_t *a)
{
        if (!a)
                return;
        free(a->m);
        free(a->explained);
        free(a->unexplained_part);
        free(a->newest);
        free(a->newest_pos);
        free(a->scratch);
        free(a->e);
        free(a->bits);
        free(a->slot);
        free(a);
}

static void example_set(ks_audit_example_t *ex, const void *key, size_t keylen,
                        int32_t partition, int64_t offset)
{
        size_t kept = keylen < KS_AUDIT_KEY_MAX ? keylen : KS_AUDIT_KEY_MAX;

        memcpy(ex->key, key, kept);
        ex->keylen    = keylen > UINT32_MAX ? UINT32_MAX : (uint32_t)keylen;
        ex->partition = partition;
        ex->offset    = offset;
}

/** @brief Rebuilds the slot index for @p slot_cnt slots. @returns 0 or -1.*/
static int reindex(ks_audit_t *a, size_t slot_cnt)
{
        uint32_t *slot = calloc(slot_cnt, sizeof(*slot));
        size_t    i;

        if (!slot)
                return -1;
        for (i = 0; i < a->e_cnt; i++) {
                size_t s = (size_t)a->e[i].hash & (slot_cnt - 1);
                while (slot[s])
                        s = (s + 1) & (slot_cnt - 1);
                slot[s] = (uint32_t)(i + 1);
        }
        free(a->slot);
        a->slot     = slot;
        a->slot_cnt = slot_cnt;
        return 0;
}

/** @brief Makes room for one more group. @returns 0, or -1 (full). */
static int grow(ks_audit_t *a)
{
        size_t       cap;
        sig_entry_t *e;
        uint64_t    *bits;

        if (a->e_cnt < a->e_cap)
                return 0;
        if (a->e_cap >= a->e_max)
                return -1;
        cap = a->e_cap ? a->e_cap * 2 : 256;
        if (cap > a->e_max)
                cap = a->e_max;
        e = realloc(a->e, cap * sizeof(*e));
        if (!e)
                return -1;
        a->e = e;
        bits = realloc(a->bits, cap * a->words * sizeof(*bits));
        if (!bits)
                return -1;
        a->bits  = bits;
        a->e_cap = cap;
        if (a->slot_cnt < 2 * cap) {
                size_t n = 1;
                while (n < 2 * cap)
                        n <<= 1;
                if (reindex(a, n))
                        return -1;
        }
        return 0;
}

/** @brief Counts a record explained by the pairs in a->scratch in its
 *         group (found or added). */
static void group_add(ks_audit_t *a, const void *key, size_t keylen,
                      int32_t partition, int64_t offset)
{
        size_t   bytes = a->words * sizeof(uint64_t);
        uint64_t h = ks_hash_murmur64a(a->scratch, bytes, (uint64_t)partition);
        size_t   s;

        if (a->slot_cnt) {
                for (s = (size_t)h & (a->slot_cnt - 1); a->slot[s];
                     s = (s + 1) & (a->slot_cnt - 1)) {
                        sig_entry_t *e = &a->e[a->slot[s] - 1];
                        if (e->hash == h && e->partition == partition &&
                            !memcmp(&a->bits[(a->slot[s] - 1) * a->words],
                                    a->scratch, bytes)) {
                                e->records++;
                                if (offset < e->first)
                                        e->first = offset;
                                if (offset > e->last)
                                        e->last = offset;
                                return;
                        }
                }
        }
        if (grow(a)) {
                a->not_grouped++;
                return;
        }
        {
                sig_entry_t *e = &a->e[a->e_cnt];
                e->hash        = h;
                e->records     = 1;
                e->first = e->last = offset;
                e->partition       = partition;
                example_set(&e->ex, key, keylen, partition, offset);
                memcpy(&a->bits[a->e_cnt * a->words], a->scratch, bytes);
                a->e_cnt++;
                for (s = (size_t)h & (a->slot_cnt - 1); a->slot[s];
                     s = (s + 1) & (a->slot_cnt - 1))
                        ;
                a->slot[s] = (uint32_t)a->e_cnt;
        }
}

void ks_audit_add(ks_audit_t *a, const void *key, size_t keylen,
                  int32_t partition, int64_t offset)
{
        const int32_t c    = a->c;
        int           any  = 0, f;
        uint8_t       mask = 0;

        if (partition < 0 || partition >= c) {
                a->out_of_range++;
                return;
        }
        if (!key || keylen == 0) {
                a->unkeyed++;
                return;
        }
        a->keyed++;
        memset(a->scratch, 0, a->words * sizeof(*a->scratch));
        for (f = 0; f < KS_AUDIT_FAMILIES; f++) {
                uint32_t h =
                    ks_partitioner_hash(ks_topic_diag_families[f], key, keylen);
                size_t  base = (size_t)f * (size_t)c;
                int32_t n;
                /* hash % n < n: counts up to the partition never explain */
                for (n = partition + 1; n <= c; n++) {
                        size_t b;
                        if (ks_partition_of_m(h, a->m[n], (uint32_t)n) !=
                            partition)
                                continue;
                        b = base + (size_t)n - 1;
                        a->explained[b]++;
                        a->scratch[b / 64] |= (uint64_t)1 << (b % 64);
                        any = 1;
                        if (n == c)
                                mask |= (uint8_t)(1u << f);
                }
        }
        a->newest[(size_t)partition * KS_AUDIT_NEWEST +
                  a->newest_pos[partition] % KS_AUDIT_NEWEST] = mask;
        a->newest_pos[partition]++;
        if (!any) {
                a->unexplained++;
                a->unexplained_part[partition]++;
                if (!a->has_unexplained_ex) {
                        example_set(&a->unexplained_ex, key, keylen, partition,
                                    offset);
                        a->has_unexplained_ex = 1;
                }
                return;
        }
        group_add(a, key, keylen, partition, offset);
}

int32_t ks_audit_partition_count(const ks_audit_t *a)
{
        return a->c;
}

uint64_t ks_audit_keyed(const ks_audit_t *a)
{
        return a->keyed;
}

uint64_t ks_audit_unkeyed(const ks_audit_t *a)
{
        return a->unkeyed;
}

uint64_t ks_audit_explained(const ks_audit_t *a, int family, int32_t count)
{
        if (family < 0 || family >= KS_AUDIT_FAMILIES || count < 1 ||
            count > a->c)
                return 0;
        return a->explained[(size_t)family * (size_t)a->c + (size_t)count - 1];
}

uint64_t ks_audit_unexplained(const ks_audit_t *a)
{
        return a->unexplained;
}

int ks_audit_newest_family(const ks_audit_t *a,
                           uint64_t          counts[KS_AUDIT_FAMILIES])
{
        uint64_t n[KS_AUDIT_FAMILIES] = {0}, total = 0;
        int32_t  p;
        int      f, best = -1;

        for (p = 0; p < a->c; p++) {
                uint64_t       k = a->newest_pos[p] < KS_AUDIT_NEWEST
                                       ? a->newest_pos[p]
                                       : KS_AUDIT_NEWEST;
                const uint8_t *r = &a->newest[(size_t)p * KS_AUDIT_NEWEST];
                uint64_t       i;
                for (i = 0; i < k; i++)
                        for (f = 0; f < KS_AUDIT_FAMILIES; f++)
                                n[f] += (r[i] >> f) & 1;
                total += k;
        }
        for (f = 0; f < KS_AUDIT_FAMILIES; f++) {
                if (counts)
                        counts[f] = n[f];
                if (best < 0 || n[f] > n[best])
                        best = f;
        }
        /* a tie tells nothing (one partition: every family explains every
         * record) */
        for (f = 0; f < KS_AUDIT_FAMILIES; f++)
                if (f != best && n[f] == n[best])
                        return -1;
        return total && 2 * n[best] > total ? best : -1;
}

/** @returns 1 when pair @p b beats pair @p best with gains @p g, @p bg:
 *           more records, then the larger count, then the family order. */
static int better(const ks_audit_t *a, size_t b, uint64_t g, long best,
                  uint64_t bg)
{
        int32_t cb, cbest;

        if (best < 0 || g > bg)
                return 1;
        if (g < bg)
                return 0;
        cb    = (int32_t)(b % (size_t)a->c);
        cbest = (int32_t)((size_t)best % (size_t)a->c);
        return cb > cbest;
}

/**
 * @brief gain[pair] := the records of the signature groups not yet
 *        covered (@p done) that pair (family, count) explains, for each of
 *        the @p pairs.
 */
static void pair_gains(const ks_audit_t *a, const uint8_t *done, uint64_t *gain,
                       size_t pairs)
{
        size_t i, w;

        memset(gain, 0, pairs * sizeof(*gain));
        for (i = 0; i < a->e_cnt; i++) {
                const uint64_t *bits = &a->bits[i * a->words];
                if (done[i])
                        continue;
                for (w = 0; w < a->words; w++) {
                        uint64_t x = bits[w];
                        while (x) {
                                gain[w * 64 + (size_t)__builtin_ctzll(x)] +=
                                    a->e[i].records;
                                x &= x - 1;
                        }
                }
        }
}

/**
 * @brief Takes pair @p best as history step @p st: what it explains in
 *        all, and, per partition, the records of the groups it is the
 *        first to cover (marked in @p done) and their offsets.
 * @returns 0, or -1 on ENOMEM.
 */
static int step_take(const ks_audit_t *a, long best, uint8_t *done,
                     ks_audit_step_t *st)
{
        size_t   i, bw = (size_t)best / 64;
        uint64_t bm = (uint64_t)1 << ((size_t)best % 64);

        st->family     = (int)((size_t)best / (size_t)a->c);
        st->count      = (int32_t)((size_t)best % (size_t)a->c) + 1;
        st->explained  = a->explained[best];
        st->partitions = calloc((size_t)a->c, sizeof(*st->partitions));
        if (!st->partitions)
                return -1;
        for (i = 0; i < (size_t)a->c; i++)
                st->partitions[i].first_offset = st->partitions[i].last_offset =
                    -1;
        for (i = 0; i < a->e_cnt; i++) {
                const sig_entry_t *e = &a->e[i];
                ks_audit_range_t  *r;
                if (!(a->bits[i * a->words + bw] & bm))
                        continue;
                r = &st->partitions[e->partition];
                r->explained += e->records;
                if (done[i])
                        continue;
                done[i] = 1;
                if (!st->records)
                        st->example = e->ex;
                st->records += e->records;
                r->records += e->records;
                if (r->first_offset < 0 || e->first < r->first_offset)
                        r->first_offset = e->first;
                if (e->last > r->last_offset)
                        r->last_offset = e->last;
        }
        return 0;
}

/** @brief The records of the groups no step covers, and the first one's
 *         example. */
static void uncovered_add(const ks_audit_t *a, const uint8_t *done,
                          ks_audit_history_t *h)
{
        size_t i;

        for (i = 0; i < a->e_cnt; i++) {
                if (done[i])
                        continue;
                if (!h->has_uncovered_example) {
                        h->uncovered_example     = a->e[i].ex;
                        h->has_uncovered_example = 1;
                }
                h->uncovered += a->e[i].records;
        }
}

int ks_audit_history(const ks_audit_t *a, ks_audit_history_t *h)
{
        size_t    pairs = KS_AUDIT_FAMILIES * (size_t)a->c, i;
        uint64_t *gain  = calloc(pairs, sizeof(*gain));
        uint8_t  *done  = calloc(a->e_cnt ? a->e_cnt : 1, 1);
        uint64_t  min   = (uint64_t)ceil(KS_AUDIT_MIN_SHARE * (double)a->keyed);
        int       rc    = 0;

        memset(h, 0, sizeof(*h));
        if (!gain || !done) {
                free(gain);
                free(done);
                return -1;
        }
        if (min < 1)
                min = 1;
        while (h->cnt < KS_AUDIT_HISTORY_MAX) {
                long best = -1;

                pair_gains(a, done, gain, pairs);
                for (i = 0; i < pairs; i++)
                        if (gain[i] && better(a, i, gain[i], best,
                                              best < 0 ? 0 : gain[best]))
                                best = (long)i;
                if (best < 0 || gain[best] < min)
                        break;
                if (step_take(a, best, done, &h->steps[h->cnt])) {
                        ks_audit_history_free(h);
                        rc = -1;
                        break;
                }
                h->cnt++;
        }
        if (!rc)
                uncovered_add(a, done, h);
        free(gain);
        free(done);
        return rc;
}

void ks_audit_history_free(ks_audit_history_t *h)
{
        size_t i;

        for (i = 0; i < h->cnt; i++)
                free(h->steps[i].partitions);
        memset(h, 0, sizeof(*h));
}
