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

/** Largest partition count audited. */
#define KS_AUDIT_COUNT_MAX 100000

/** Records with one partition and one set of explaining pairs. */
typedef struct sig_entry {
        uint64_t           hash; /**< of partition and bits */
        uint64_t           records;
        int64_t            first, last; /**< offsets */
        int32_t            partition;
        ks_audit_example_t ex; /**< the first record */
} sig_entry_t;

struct ks_audit {
        int32_t   c;     /**< current count */
        size_t    words; /**< 64-bit words of a pair set: ceil(3c / 64) */
        uint64_t *m;     /**< [c + 1] ks_partition_m(n) */
        uint64_t  keyed, unkeyed, out_of_range, unexplained;
        uint64_t *explained;        /**< [3c]: f * c + n - 1 */
        uint64_t *unexplained_part; /**< [c] */
        ks_audit_example_t unexplained_ex;
        int                has_unexplained_ex;
        uint8_t           *newest;     /**< [c][KS_AUDIT_NEWEST] family masks */
        uint64_t          *newest_pos; /**< [c] keyed records per partition */
        /* signature groups */
        sig_entry_t *e;
        uint64_t    *bits; /**< [e_cap][words] */
        size_t       e_cnt, e_cap, e_max;
        uint32_t    *slot; /**< [slot_cnt]: entry index + 1, 0 free */
        size_t       slot_cnt;
        uint64_t     not_grouped; /**< records of groups that did not fit */
        uint64_t    *scratch;     /**< [words] */
};

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

int ks_audit_history(const ks_audit_t *a, ks_audit_history_t *h)
{
        size_t    pairs = 3 * (size_t)a->c, i, w;
        uint64_t *gain  = calloc(pairs, sizeof(*gain));
        uint8_t  *done  = calloc(a->e_cnt ? a->e_cnt : 1, 1);
        uint64_t  min   = (uint64_t)ceil(KS_AUDIT_MIN_SHARE * (double)a->keyed);

        memset(h, 0, sizeof(*h));
        if (!gain || !done) {
                free(gain);
                free(done);
                return -1;
        }
        if (min < 1)
                min = 1;
        while (h->cnt < KS_AUDIT_HISTORY_MAX) {
                long             best = -1;
                ks_audit_step_t *st;
                size_t           bw;
                uint64_t         bm;

                memset(gain, 0, pairs * sizeof(*gain));
                for (i = 0; i < a->e_cnt; i++) {
                        const uint64_t *bits = &a->bits[i * a->words];
                        if (done[i])
                                continue;
                        for (w = 0; w < a->words; w++) {
                                uint64_t x = bits[w];
                                while (x) {
                                        gain[w * 64 +
                                             (size_t)__builtin_ctzll(x)] +=
                                            a->e[i].records;
                                        x &= x - 1;
                                }
                        }
                }
                for (i = 0; i < pairs; i++)
                        if (gain[i] && better(a, i, gain[i], best,
                                              best < 0 ? 0 : gain[best]))
                                best = (long)i;
                if (best < 0 || gain[best] < min)
                        break;
                st             = &h->steps[h->cnt];
                st->family     = (int)((size_t)best / (size_t)a->c);
                st->count      = (int32_t)((size_t)best % (size_t)a->c) + 1;
                st->explained  = a->explained[best];
                st->partitions = calloc((size_t)a->c, sizeof(*st->partitions));
                if (!st->partitions) {
                        ks_audit_history_free(h);
                        free(gain);
                        free(done);
                        return -1;
                }
                for (i = 0; i < (size_t)a->c; i++)
                        st->partitions[i].first_offset =
                            st->partitions[i].last_offset = -1;
                h->cnt++;
                bw = (size_t)best / 64;
                bm = (uint64_t)1 << ((size_t)best % 64);
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
        }
        for (i = 0; i < a->e_cnt; i++) {
                if (done[i])
                        continue;
                if (!h->has_uncovered_example) {
                        h->uncovered_example     = a->e[i].ex;
                        h->has_uncovered_example = 1;
                }
                h->uncovered += a->e[i].records;
        }
        free(gain);
        free(done);
        return 0;
}

void ks_audit_history_free(ks_audit_history_t *h)
{
        size_t i;

        for (i = 0; i < h->cnt; i++)
                free(h->steps[i].partitions);
        memset(h, 0, sizeof(*h));
}

/* ------------------------------------------------------------ report */

/** @returns {key, key_hex, key_bytes, partition, offset} of @p ex. */
static json_t *example_json(const ks_audit_example_t *ex)
{
        size_t kept =
            ex->keylen < KS_AUDIT_KEY_MAX ? ex->keylen : KS_AUDIT_KEY_MAX;

        return json_pack("{s:o, s:o, s:I, s:i, s:I}", "key",
                         ks_report_key(ex->key, kept), "key_hex",
                         ks_report_hex(ex->key, kept), "key_bytes",
                         (json_int_t)ex->keylen, "partition", ex->partition,
                         "offset", (json_int_t)ex->offset);
}

/** @brief Formats @p ex's key for a warning: "text" or 0xhex, cut. */
static void example_text(const ks_audit_example_t *ex, char *out, size_t size)
{
        size_t kept =
            ex->keylen < KS_AUDIT_KEY_MAX ? ex->keylen : KS_AUDIT_KEY_MAX;
        size_t i, n = 0, show = kept < 24 ? kept : 24;
        int    text = 1;

        for (i = 0; i < show; i++)
                if (ex->key[i] < 0x20 || ex->key[i] >= 0x7f ||
                    ex->key[i] == '"')
                        text = 0;
        n += (size_t)snprintf(out, size, text ? "\"" : "0x");
        for (i = 0; i < show && n + 3 < size; i++)
                n += (size_t)snprintf(out + n, size - n, text ? "%c" : "%02x",
                                      ex->key[i]);
        if (n + 8 < size)
                snprintf(out + n, size - n, "%s%s",
                         show < ex->keylen ? "..." : "", text ? "\"" : "");
}

static json_t *step_json(const ks_audit_t *a, const ks_audit_step_t *st)
{
        json_t *parts = json_array();
        int32_t p;

        for (p = 0; p < a->c; p++) {
                const ks_audit_range_t *r = &st->partitions[p];
                if (!r->records && !r->explained)
                        continue;
                json_array_append_new(
                    parts,
                    json_pack("{s:i, s:I, s:I, s:o, s:o}", "partition", p,
                              "records", (json_int_t)r->records, "explained",
                              (json_int_t)r->explained, "first_offset",
                              r->records ? json_integer(r->first_offset)
                                         : json_null(),
                              "last_offset",
                              r->records ? json_integer(r->last_offset)
                                         : json_null()));
        }
        return json_pack("{s:s, s:i, s:I, s:I, s:o, s:o}", "family",
                         ks_audit_family_name(st->family), "count", st->count,
                         "records", (json_int_t)st->records, "explained",
                         (json_int_t)st->explained, "example",
                         example_json(&st->example), "partitions", parts);
}

json_t *ks_audit_json(const ks_audit_t *a, const ks_audit_history_t *h,
                      const char *partitioner, const char *partitioner_source)
{
        json_t *o, *expl = json_object(), *up = json_array(),
                   *steps = json_array(), *newest = json_object();
        uint64_t nc[KS_AUDIT_FAMILIES];
        int      f, nf = ks_audit_newest_family(a, nc);
        int32_t  n;
        size_t   i;

        for (f = 0; f < KS_AUDIT_FAMILIES; f++) {
                json_t *byc = json_object();
                for (n = 1; n <= a->c; n++) {
                        char k[16];
                        snprintf(k, sizeof(k), "%d", (int)n);
                        json_object_set_new(
                            byc, k,
                            json_integer(
                                (json_int_t)ks_audit_explained(a, f, n)));
                }
                json_object_set_new(expl, ks_audit_family_name(f), byc);
                json_object_set_new(newest, ks_audit_family_name(f),
                                    json_integer((json_int_t)nc[f]));
        }
        for (n = 0; n < a->c; n++)
                json_array_append_new(
                    up, json_integer((json_int_t)a->unexplained_part[n]));
        for (i = 0; i < h->cnt; i++)
                json_array_append_new(steps, step_json(a, &h->steps[i]));
        o = json_pack(
            "{s:i, s:[s,s,s], s:I, s:I, s:I, s:o, s:I, s:o, s:o,"
            " s:{s:s, s:f, s:I, s:o, s:o, s:I, s:I, s:I},"
            " s:{s:i, s:o, s:o}, s:s, s:s}",
            "partition_count", a->c, "families", ks_audit_family_name(0),
            ks_audit_family_name(1), ks_audit_family_name(2), "keyed_records",
            (json_int_t)a->keyed, "unkeyed_records", (json_int_t)a->unkeyed,
            "records_out_of_range", (json_int_t)a->out_of_range, "explained",
            expl, "unexplained", (json_int_t)a->unexplained,
            "unexplained_by_partition", up, "unexplained_example",
            a->has_unexplained_ex ? example_json(&a->unexplained_ex)
                                  : json_null(),
            "history", "method",
            "greedy set cover: each step the (family, count) explaining most "
            "records the steps before do not",
            "min_share", KS_AUDIT_MIN_SHARE, "uncovered_records",
            (json_int_t)h->uncovered, "uncovered_example",
            h->has_uncovered_example ? example_json(&h->uncovered_example)
                                     : json_null(),
            "steps", steps, "signature_groups", (json_int_t)a->e_cnt,
            "signature_groups_max", (json_int_t)a->e_max, "records_not_grouped",
            (json_int_t)a->not_grouped, "newest", "per_partition",
            KS_AUDIT_NEWEST, "explained", newest, "family",
            nf >= 0 ? json_string(ks_audit_family_name(nf)) : json_null(),
            "proposals_partitioner", partitioner,
            "proposals_partitioner_source", partitioner_source);
        return o;
}

void ks_audit_warnings(const ks_audit_t *a, const ks_audit_history_t *h,
                       const char *topic, ks_warn_list_t *wl)
{
        uint64_t fam[KS_AUDIT_FAMILIES]      = {0};
        int      fam_step[KS_AUDIT_FAMILIES] = {-1, -1, -1};
        int      families                    = 0, f;
        size_t   i;
        char     ex[80];

        for (i = 0; i < h->cnt; i++) {
                f = h->steps[i].family;
                if (fam_step[f] < 0) {
                        fam_step[f] = (int)i;
                        families++;
                }
                fam[f] += h->steps[i].records;
        }
        if (families >= 2) {
                char   msg[400];
                size_t n = (size_t)snprintf(
                    msg, sizeof(msg),
                    "keyed records were placed by %d hash families, so "
                    "producers disagree on where a key goes:",
                    families);
                for (f = 0; f < KS_AUDIT_FAMILIES && n < sizeof(msg); f++) {
                        if (fam_step[f] < 0)
                                continue;
                        example_text(&h->steps[fam_step[f]].example, ex,
                                     sizeof(ex));
                        n += (size_t)snprintf(
                            msg + n, sizeof(msg) - n,
                            " %s %llu records (e.g. key %s, partition %d "
                            "offset %lld);",
                            ks_audit_family_name(f), (unsigned long long)fam[f],
                            ex, (int)h->steps[fam_step[f]].example.partition,
                            (long long)h->steps[fam_step[f]].example.offset);
                }
                ks_warn_add(wl, KS_WARN_MIXED_PARTITIONERS, topic, "%s", msg);
        }
        for (i = 0; i < h->cnt; i++) {
                const ks_audit_step_t *st = &h->steps[i];
                char                   offs[300];
                size_t                 n = 0, shown = 0;
                int32_t                p;
                if (st->count >= a->c)
                        continue;
                offs[0] = 0;
                for (p = 0; p < a->c && n < sizeof(offs); p++) {
                        const ks_audit_range_t *r = &st->partitions[p];
                        if (!r->records)
                                continue;
                        if (shown++ == 8) {
                                n += (size_t)snprintf(
                                    offs + n, sizeof(offs) - n, ", ...");
                                break;
                        }
                        n += (size_t)snprintf(offs + n, sizeof(offs) - n,
                                              "%s%d: %lld-%lld",
                                              shown > 1 ? ", " : "", (int)p,
                                              (long long)r->first_offset,
                                              (long long)r->last_offset);
                }
                ks_warn_add(wl, KS_WARN_RECORDS_FROM_OLD_COUNT, topic,
                            "%llu records sit where %s puts their keys under "
                            "%d partitions, not under the current %d: placed "
                            "before an increase (partition: offsets %s)",
                            (unsigned long long)st->records,
                            ks_audit_family_name(st->family), (int)st->count,
                            (int)a->c, offs);
        }
        if (a->unexplained || h->uncovered) {
                const ks_audit_example_t *e = a->has_unexplained_ex
                                                  ? &a->unexplained_ex
                                                  : &h->uncovered_example;
                example_text(e, ex, sizeof(ex));
                ks_warn_add(wl, KS_WARN_UNEXPLAINED_PLACEMENT, topic,
                            "%llu keyed records are in partitions no hash "
                            "family puts them in under any count, %llu more "
                            "only where no significant (family, count) does "
                            "(e.g. key %s, partition %d offset %lld): a "
                            "custom partitioner or explicit partitions",
                            (unsigned long long)a->unexplained,
                            (unsigned long long)h->uncovered, ex,
                            (int)e->partition, (long long)e->offset);
        }
}
