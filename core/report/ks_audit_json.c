/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_audit_json.c
 * @brief The audit of a topic's stored records in the report: its JSON
 *        object and its warnings (ks_audit.h, docs/report-schema.md).
 */
#include "ks_audit.h"

#include <stdio.h>
#include <string.h>

#include "ks_audit_impl.h"
#include "ks_report_fmt.h"

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

/** @returns a step's per-partition figures as columns indexed by
 *           partition (keyshift.report.v2): records assigned, explained,
 *           and the first and last offsets of the records assigned (null
 *           where none was). */
static json_t *step_partitions_json(const ks_audit_t      *a,
                                    const ks_audit_step_t *st)
{
        json_t *rec = json_array(), *expl = json_array(), *first = json_array(),
               *last = json_array();
        int32_t p;

        for (p = 0; p < a->c; p++) {
                const ks_audit_range_t *r = &st->partitions[p];
                json_array_append_new(rec,
                                      json_integer((json_int_t)r->records));
                json_array_append_new(expl,
                                      json_integer((json_int_t)r->explained));
                json_array_append_new(first, r->records
                                                 ? json_integer(r->first_offset)
                                                 : json_null());
                json_array_append_new(last, r->records
                                                ? json_integer(r->last_offset)
                                                : json_null());
        }
        return json_pack("{s:o, s:o, s:o, s:o}", "records", rec, "explained",
                         expl, "first_offset", first, "last_offset", last);
}

static json_t *step_json(const ks_audit_t *a, const ks_audit_step_t *st)
{
        return json_pack("{s:s, s:i, s:I, s:I, s:o, s:o}", "family",
                         ks_audit_family_name(st->family), "count", st->count,
                         "records", (json_int_t)st->records, "explained",
                         (json_int_t)st->explained, "example",
                         example_json(&st->example), "partitions",
                         step_partitions_json(a, st));
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

/** Partitions whose offsets a RECORDS_FROM_OLD_COUNT warning lists; the
 *  others are "...". */
#define KS_AUDIT_WARN_PARTITIONS_SHOWN 8

/**
 * @brief MIXED_PARTITIONERS when the history's steps are of two hash
 *        families or more: each family's records, with an example.
 */
static void mixed_warning(const ks_audit_history_t *h, const char *topic,
                          ks_warn_list_t *wl)
{
        uint64_t fam[KS_AUDIT_FAMILIES]      = {0};
        int      fam_step[KS_AUDIT_FAMILIES] = {-1, -1, -1};
        int      families                    = 0, f;
        size_t   i, n;
        char     ex[80], msg[400];

        for (i = 0; i < h->cnt; i++) {
                f = h->steps[i].family;
                if (fam_step[f] < 0) {
                        fam_step[f] = (int)i;
                        families++;
                }
                fam[f] += h->steps[i].records;
        }
        if (families < 2)
                return;
        n = (size_t)snprintf(msg, sizeof(msg),
                             "keyed records were placed by %d hash families, "
                             "so producers disagree on where a key goes:",
                             families);
        for (f = 0; f < KS_AUDIT_FAMILIES && n < sizeof(msg); f++) {
                if (fam_step[f] < 0)
                        continue;
                example_text(&h->steps[fam_step[f]].example, ex, sizeof(ex));
                n += (size_t)snprintf(
                    msg + n, sizeof(msg) - n,
                    " %s %llu records (e.g. key %s, partition %d "
                    "offset %lld);",
                    ks_audit_family_name(f), (unsigned long long)fam[f], ex,
                    (int)h->steps[fam_step[f]].example.partition,
                    (long long)h->steps[fam_step[f]].example.offset);
        }
        ks_warn_add(wl, KS_WARN_MIXED_PARTITIONERS, topic, "%s", msg);
}

/** @brief offs := "partition: first-last" of the partitions where step
 *         @p st took records, the first KS_AUDIT_WARN_PARTITIONS_SHOWN. */
static void step_offsets_text(const ks_audit_t *a, const ks_audit_step_t *st,
                              char *offs, size_t size)
{
        size_t  n = 0, shown = 0;
        int32_t p;

        offs[0] = 0;
        for (p = 0; p < a->c && n < size; p++) {
                const ks_audit_range_t *r = &st->partitions[p];
                if (!r->records)
                        continue;
                if (shown++ == KS_AUDIT_WARN_PARTITIONS_SHOWN) {
                        n += (size_t)snprintf(offs + n, size - n, ", ...");
                        break;
                }
                n += (size_t)snprintf(offs + n, size - n, "%s%d: %lld-%lld",
                                      shown > 1 ? ", " : "", (int)p,
                                      (long long)r->first_offset,
                                      (long long)r->last_offset);
        }
}

/**
 * @brief RECORDS_FROM_OLD_COUNT for each step under a count below the
 *        current one, except (@p switch_family, @p switch_old).
 */
static void old_count_warnings(const ks_audit_t *a, const ks_audit_history_t *h,
                               const char *topic, int switch_family,
                               int32_t switch_old, ks_warn_list_t *wl)
{
        size_t i;

        for (i = 0; i < h->cnt; i++) {
                const ks_audit_step_t *st = &h->steps[i];
                char                   offs[300];
                if (st->count >= a->c ||
                    (st->family == switch_family && st->count == switch_old))
                        continue;
                step_offsets_text(a, st, offs, sizeof(offs));
                ks_warn_add(wl, KS_WARN_RECORDS_FROM_OLD_COUNT, topic,
                            "%llu records sit where %s puts their keys under "
                            "%d partitions, not under the current %d: placed "
                            "before an increase (greedy history: records "
                            "both counts explain may count under either; "
                            "partition: offsets %s)",
                            (unsigned long long)st->records,
                            ks_audit_family_name(st->family), (int)st->count,
                            (int)a->c, offs);
        }
}

void ks_audit_warnings(const ks_audit_t *a, const ks_audit_history_t *h,
                       const char *topic, int switch_family, int32_t switch_old,
                       ks_warn_list_t *wl)
{
        char ex[80];

        mixed_warning(h, topic, wl);
        old_count_warnings(a, h, topic, switch_family, switch_old, wl);
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
