/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_report_hot_cols.c
 * @brief A topic's `hot_keys` in the report file as columns, and back.
 *
 * Why: written as an array of objects, a topic's 20 hot keys repeated
 * their 17 member names 20 times, their per-count objects
 * (`partition_proposed`, `moves`, `share_of_partition_proposed`) the
 * counts 20 times, and the same sentence (`ordering_given_up`, what
 * salting costs) once per key that needs salt: 13.3 MB of the 51.5 MB
 * report of 1,000 topics x 100 partitions x proposals 200, 300, 400
 * (bench/ksb_report --parts). As columns, each name is written once
 * (4.3 MB there). The content is the same: key i's figures are each
 * column's value i (docs/report-schema.md, "hot_keys").
 *
 * The report is built (ks_report_topic()) and read (the CLI's
 * ks_cli_report_load()) as rows, the form every reader in C takes; only
 * the file holds columns. So the writers call ks_report_hot_keys_columns()
 * and the CLI's loader ks_report_hot_keys_rows().
 *
 * The columns object: each member of the rows is an array of one value
 * per key, in the rows' order; a member whose values are objects of the
 * same names (the per-count objects) is an object of such arrays, one per
 * name; `ordering_given_up`, one sentence, is written once, for the keys
 * whose `fixable_by_partitions` is false (null when there is none).
 *
 * @locality any thread; pure functions of their arguments.
 */
#include "ks_report.h"

#include <stdio.h>
#include <string.h>

/** The member written once: the same text for every key it is set on. */
#define KS_HOT_ONCE "ordering_given_up"

/** @returns the column @p name of @p cols, created empty when absent. */
static json_t *column(json_t *cols, const char *name, int nested)
{
        json_t *c = json_object_get(cols, name);

        if (!c) {
                c = nested ? json_object() : json_array();
                json_object_set_new(cols, name, c);
        }
        return c;
}

json_t *ks_report_hot_keys_columns(const json_t *rows)
{
        json_t       *cols = json_object(), *once = NULL;
        const json_t *row, *m, *v;
        const char   *name, *count;
        size_t        i;

        if (!cols || !json_is_array(rows)) {
                json_decref(cols);
                return rows ? json_incref((json_t *)rows) : NULL;
        }
        json_array_foreach(rows, i, row)
        {
                json_object_foreach((json_t *)row, name, m)
                {
                        if (!strcmp(name, KS_HOT_ONCE)) {
                                once = (json_t *)m;
                                continue;
                        }
                        if (json_is_object(m)) {
                                json_t *n = column(cols, name, 1);
                                json_object_foreach((json_t *)m, count, v)
                                    json_array_append(column(n, count, 0),
                                                      (json_t *)v);
                        } else {
                                json_array_append(column(cols, name, 0),
                                                  (json_t *)m);
                        }
                }
        }
        if (json_array_size(rows))
                json_object_set(cols, KS_HOT_ONCE, once ? once : json_null());
        return cols;
}

/** @returns the number of keys @p cols holds: its columns' length (the
 *           first column's; the check compares them). */
static size_t key_count(const json_t *cols)
{
        const char   *name;
        const json_t *c;

        json_object_foreach((json_t *)cols, name,
                            c) if (json_is_array(c)) return json_array_size(c);
        return 0;
}

json_t *ks_report_hot_keys_rows(const json_t *cols, char *err, size_t errsz)
{
        json_t       *rows = json_array();
        const json_t *c, *v;
        const char   *name, *count = NULL;
        size_t        n = key_count(cols), i;

        *err = '\0';
        if (!json_is_object(cols)) {
                snprintf(err, errsz, "not an object");
                json_decref(rows);
                return NULL;
        }
        for (i = 0; rows && i < n; i++) {
                json_t *row = json_object();
                json_object_foreach((json_t *)cols, name, c)
                {
                        if (json_is_array(c) && json_array_size(c) == n) {
                                json_object_set(row, name,
                                                json_array_get(c, i));
                        } else if (json_is_object(c)) {
                                json_t *o = json_object();
                                json_object_foreach((json_t *)c, count, v)
                                {
                                        if (json_array_size(v) != n)
                                                break;
                                        json_object_set(o, count,
                                                        json_array_get(v, i));
                                }
                                json_object_set_new(row, name, o);
                                if (count) {
                                        snprintf(err, errsz,
                                                 "%s.%s: expected %zu values "
                                                 "(the hot keys)",
                                                 name, count, n);
                                        break;
                                }
                        } else if (!strcmp(name, KS_HOT_ONCE)) {
                                if (json_is_string(c) &&
                                    json_is_false(json_object_get(
                                        row, "fixable_by_partitions")))
                                        json_object_set(row, name, (json_t *)c);
                        } else {
                                snprintf(err, errsz,
                                         "%s: expected %zu values (the hot "
                                         "keys)",
                                         name, n);
                                break;
                        }
                }
                json_array_append_new(rows, row);
                if (*err)
                        break;
        }
        if (*err) {
                json_decref(rows);
                return NULL;
        }
        return rows;
}

json_t *ks_report_file_form(const json_t *report)
{
        json_t       *r = json_copy((json_t *)report), *topics, *t2;
        const json_t *t;
        const char   *name;

        topics = json_object_get(report, "topics");
        if (!r || !json_is_object(topics))
                return r;
        t2 = json_object();
        json_object_foreach((json_t *)topics, name, t)
        {
                json_t *c = json_copy((json_t *)t);
                json_t *h = json_object_get(t, "hot_keys");
                if (c && json_is_array(h))
                        json_object_set_new(c, "hot_keys",
                                            ks_report_hot_keys_columns(h));
                json_object_set_new(t2, name, c ? c : json_incref((json_t *)t));
        }
        json_object_set_new(r, "topics", t2);
        return r;
}
