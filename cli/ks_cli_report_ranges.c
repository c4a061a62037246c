/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli_report_ranges.c
 * @brief Partition numbers of a checked report against the counts they
 *        belong to: a hot key's, a mixed key's or another client's
 *        example's partition lies within its topic's current or proposed
 *        count (issue 30: `partition_current` 99999 on a 4-partition topic
 *        was accepted). The schema says a partition is an integer >= 0;
 *        which count bounds it, only the report does.
 *
 * Run by ks_cli_report_check() after the schema and the field-by-field
 * check (ks_cli_report_check.c): every member read here is of its type.
 */
#include <stdio.h>
#include <stdlib.h>

#include "ks_cli_report.h"
#include "ks_cli_report_fields.h"

/** @brief Fails with "FILE: PATH: p is not a partition of COUNT". */
static int out_of_range(char *err, size_t errsz, const char *file,
                        const char *path, long long p, long long count,
                        const char *which)
{
        snprintf(err, errsz,
                 "%s: %s: partition %lld is beyond the %s count %lld "
                 "(partitions 0 .. %lld)",
                 file, path, p, which, count, count - 1);
        return -1;
}

/** @returns 1 when @p j is absent, null (no partition) or an integer
 *           below @p count, or when @p count is not known (0). */
static int in_range(const json_t *j, int64_t count)
{
        return count <= 0 || json_is_null(j) || !j ||
               (json_is_integer(j) && json_integer_value(j) < count);
}

/** @brief `{"<count>": [p, ...]}`: each p within the count it is under. */
static int check_proposed_columns(const json_t *o, const char *file,
                                  const char *path, char *err, size_t errsz)
{
        const char *name;
        json_t     *col;
        size_t      i;
        char        where[1200];

        json_object_foreach((json_t *)o, name, col)
        {
                int64_t count = strtoll(name, NULL, 10);
                for (i = 0; i < json_array_size(col); i++) {
                        json_t *p = json_array_get(col, i);
                        if (in_range(p, count))
                                continue;
                        snprintf(where, sizeof(where), "%s.%s[%zu]", path, name,
                                 i);
                        return out_of_range(err, errsz, file, where,
                                            (long long)json_integer_value(p),
                                            (long long)count, "proposed");
                }
        }
        return 0;
}

/** @brief A topic's hot keys (still columns: the check runs before
 *         ks_cli_report_rows()). */
static int check_hot_keys(const json_t *h, const char *tname, int64_t current,
                          const char *file, char *err, size_t errsz)
{
        const json_t *cur = json_object_get(h, "partition_current");
        size_t        i;
        char          where[600];

        for (i = 0; i < json_array_size(cur); i++) {
                json_t *p = json_array_get(cur, i);
                if (in_range(p, current))
                        continue;
                snprintf(where, sizeof(where),
                         "topics.%s.hot_keys.partition_current[%zu]", tname, i);
                return out_of_range(err, errsz, file, where,
                                    (long long)json_integer_value(p),
                                    (long long)current, "current");
        }
        snprintf(where, sizeof(where), "topics.%s.hot_keys.partition_proposed",
                 tname);
        return check_proposed_columns(json_object_get(h, "partition_proposed"),
                                      file, where, err, errsz);
}

/** @brief mixed_keys.keys[].encodings.<enc>: partition_current and
 *         partition_proposed. */
static int check_mixed(const json_t *m, const char *tname, int64_t current,
                       const char *file, char *err, size_t errsz)
{
        const json_t *keys = json_object_get(m, "keys");
        size_t        i;
        char          where[700];

        for (i = 0; i < json_array_size(keys); i++) {
                const json_t *encs =
                    json_object_get(json_array_get(keys, i), "encodings");
                const char *enc;
                json_t     *e;
                json_object_foreach((json_t *)encs, enc, e)
                {
                        const json_t *p =
                            json_object_get(e, "partition_current");
                        const json_t *pp =
                            json_object_get(e, "partition_proposed");
                        const char *name;
                        json_t     *q;
                        snprintf(where, sizeof(where),
                                 "topics.%s.mixed_keys.keys[%zu].encodings.%s."
                                 "partition_current",
                                 tname, i, enc);
                        if (!in_range(p, current))
                                return out_of_range(
                                    err, errsz, file, where,
                                    (long long)json_integer_value(p),
                                    (long long)current, "current");
                        json_object_foreach((json_t *)pp, name, q)
                        {
                                int64_t n = strtoll(name, NULL, 10);
                                if (in_range(q, n))
                                        continue;
                                snprintf(where, sizeof(where),
                                         "topics.%s.mixed_keys.keys[%zu]."
                                         "encodings.%s.partition_proposed.%s",
                                         tname, i, enc, name);
                                return out_of_range(
                                    err, errsz, file, where,
                                    (long long)json_integer_value(q),
                                    (long long)n, "proposed");
                        }
                }
        }
        return 0;
}

/** @brief other_clients.<model>.examples[]: partition, partition_theirs
 *         (both under the current count). */
static int check_clients(const json_t *oc, const char *tname, int64_t current,
                         const char *file, char *err, size_t errsz)
{
        static const char *const members[] = {"partition", "partition_theirs"};
        const char              *model;
        json_t                  *o;
        size_t                   i, k;
        char                     where[700];

        json_object_foreach((json_t *)oc, model, o)
        {
                const json_t *ex = json_object_get(o, "examples");
                for (i = 0; i < json_array_size(ex); i++)
                        for (k = 0; k < 2; k++) {
                                const json_t *p = json_object_get(
                                    json_array_get(ex, i), members[k]);
                                if (in_range(p, current))
                                        continue;
                                snprintf(where, sizeof(where),
                                         "topics.%s.other_clients.%s."
                                         "examples[%zu].%s",
                                         tname, model, i, members[k]);
                                return out_of_range(
                                    err, errsz, file, where,
                                    (long long)json_integer_value(p),
                                    (long long)current, "current");
                        }
        }
        return 0;
}

int ks_cli_report_ranges(json_t *root, const char *file, char *err,
                         size_t errsz)
{
        const char *tname;
        json_t     *t;

        json_object_foreach(json_object_get(root, "topics"), tname, t)
        {
                int64_t current = ks_cli_topic_current(t);
                if (check_hot_keys(json_object_get(t, "hot_keys"), tname,
                                   current, file, err, errsz) ||
                    check_mixed(json_object_get(t, "mixed_keys"), tname,
                                current, file, err, errsz) ||
                    check_clients(json_object_get(t, "other_clients"), tname,
                                  current, file, err, errsz))
                        return -1;
        }
        return 0;
}
