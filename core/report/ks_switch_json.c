/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_switch_json.c
 * @brief The count switch in the report: the `audit.switch` object and
 *        RECORDS_FROM_OLD_COUNT (ks_switch.h, docs/report-schema.md).
 */
#include "ks_switch.h"

#include <stdio.h>

#include "ks_audit.h"

static json_t *offset_or_null(int64_t off)
{
        return off >= 0 ? json_integer((json_int_t)off) : json_null();
}

/** The per-partition columns of `audit.switch.partitions`, in order. */
enum {
        SW_OLD_ONLY,
        SW_NEW_ONLY,
        SW_BOTH_OLD,
        SW_BOTH_NEW,
        SW_AMBIGUOUS,
        SW_OTHER,
        SW_UNKEYED,
        SW_LAST_OLD_ONLY,
        SW_FIRST_NEW_ONLY,
        SW_AMBIGUOUS_FIRST,
        SW_AMBIGUOUS_LAST,
        SW_SWITCH_OFFSET,
        SW_OFFSETS_USED,
        SW__CNT
};

static const char *const sw_names[SW__CNT] = {"old_only",
                                              "new_only",
                                              "both_old",
                                              "both_new",
                                              "ambiguous",
                                              "other",
                                              "unkeyed",
                                              "last_old_only_offset",
                                              "first_new_only_offset",
                                              "ambiguous_first_offset",
                                              "ambiguous_last_offset",
                                              "switch_offset",
                                              "offsets_used"};

/** @returns column @p c's value for partition @p sp. */
static json_t *sw_value(const ks_switch_part_t *sp, int c)
{
        switch (c) {
        case SW_OLD_ONLY:
                return json_integer((json_int_t)sp->old_only);
        case SW_NEW_ONLY:
                return json_integer((json_int_t)sp->new_only);
        case SW_BOTH_OLD:
                return json_integer((json_int_t)sp->both_old);
        case SW_BOTH_NEW:
                return json_integer((json_int_t)sp->both_new);
        case SW_AMBIGUOUS:
                return json_integer((json_int_t)sp->ambiguous);
        case SW_OTHER:
                return json_integer((json_int_t)sp->other);
        case SW_UNKEYED:
                return json_integer((json_int_t)sp->unkeyed);
        case SW_LAST_OLD_ONLY:
                return offset_or_null(sp->last_old_only);
        case SW_FIRST_NEW_ONLY:
                return offset_or_null(sp->first_new_only);
        case SW_AMBIGUOUS_FIRST:
                return offset_or_null(sp->ambiguous_first);
        case SW_AMBIGUOUS_LAST:
                return offset_or_null(sp->ambiguous_last);
        case SW_SWITCH_OFFSET:
                return offset_or_null(sp->switch_offset);
        default:
                return json_boolean(sp->offsets_used);
        }
}

json_t *ks_switch_json(const ks_switch_result_t *r)
{
        json_t *parts = json_object();
        int32_t p;
        int     c;

        if (!parts)
                return NULL;
        /* columns indexed by partition (keyshift.report.v2) */
        for (c = 0; c < SW__CNT; c++) {
                json_t *col = json_array();
                for (p = 0; p < r->new_count; p++)
                        json_array_append_new(col, sw_value(&r->parts[p], c));
                json_object_set_new(parts, sw_names[c], col);
        }
        return json_pack(
            "{s:s, s:i, s:i, s:s, s:o, s:o, s:I, s:I, s:I, s:I, s:I, s:I,"
            " s:b, s:o}",
            "family", ks_audit_family_name(r->family), "old_count",
            r->old_count, "new_count", r->new_count, "moment",
            r->one_moment ? "one"
            : r->old_only_last_ms >= 0 && r->new_only_first_ms >= 0
                ? "interleaved"
                : "unknown",
            "old_only_last_ms", offset_or_null(r->old_only_last_ms),
            "new_only_first_ms", offset_or_null(r->new_only_first_ms),
            "old_records", (json_int_t)r->old_exact, "new_records",
            (json_int_t)r->new_exact, "ambiguous_records",
            (json_int_t)r->ambiguous, "not_kept", (json_int_t)r->not_kept,
            "other_records", (json_int_t)r->other, "unkeyed_records",
            (json_int_t)r->unkeyed, "exact", r->ambiguous == 0, "partitions",
            parts);
}

void ks_switch_warnings(const ks_switch_result_t *r, const char *topic,
                        ks_warn_list_t *wl)
{
        char    offs[300], amb[160];
        size_t  n = 0, shown = 0;
        int32_t p;

        if (!r->old_exact && !r->ambiguous)
                return;
        offs[0] = 0;
        for (p = 0; p < r->new_count && n < sizeof(offs); p++) {
                const ks_switch_part_t *sp = &r->parts[p];
                if (sp->switch_offset < 0 && !sp->old_only && !sp->both_old)
                        continue;
                if (shown++ == 6) {
                        n += (size_t)snprintf(offs + n, sizeof(offs) - n,
                                              ", ...");
                        break;
                }
                if (sp->switch_offset >= 0)
                        n += (size_t)snprintf(offs + n, sizeof(offs) - n,
                                              "%s%d: %lld",
                                              shown > 1 ? ", " : "", (int)p,
                                              (long long)sp->switch_offset);
                else
                        n += (size_t)snprintf(offs + n, sizeof(offs) - n,
                                              "%s%d: none",
                                              shown > 1 ? ", " : "", (int)p);
        }
        if (r->ambiguous)
                snprintf(amb, sizeof(amb),
                         "; %llu more are ambiguous (their keys sit where both "
                         "counts put them, between the two counts' evidence)",
                         (unsigned long long)r->ambiguous);
        else
                snprintf(amb, sizeof(amb), " (exact)");
        ks_warn_add(wl, KS_WARN_RECORDS_FROM_OLD_COUNT, topic,
                    "%llu records were placed by %s under %d partitions, "
                    "before the increase to %d%s; switch offset by partition "
                    "%s",
                    (unsigned long long)r->old_exact,
                    ks_audit_family_name(r->family), (int)r->old_count,
                    (int)r->new_count, amb, offs);
}
