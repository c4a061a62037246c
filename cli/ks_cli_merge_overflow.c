/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli_merge_overflow.c
 * @brief Whether a topic's counters can be summed across the inputs of a
 *        merge without passing 2^63 - 1, the largest JSON integer a
 *        report holds (docs/report-schema.md): checked before anything is
 *        summed, so that a merge refuses such inputs naming the counter
 *        and the file ("overflow") instead of writing a wrapped,
 *        negative sum (issue 30).
 *
 * Every integer member of the topic objects is summed at its path, the
 * inputs' objects walked together (a member only some inputs have counts
 * from those), array elements by index: a superset of what the merge
 * sums (ks_cli_merge_sum() and the columns, flows and counters of
 * ks_cli_merge_topic.c), the others being small (partition counts,
 * partitions, capacities within keyshift's limits) or never near 2^62.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ks_cli_merge.h"

typedef struct sums {
        const ks_cli_merge_in_t *in;
        char                    *err;
        size_t                   errsz;
        char                     path[1024];
} sums_t;

static int walk(sums_t *s, const json_t **nodes, size_t n);

/** @brief Sums the integers of @p nodes (NULL where an input lacks the
 *         member). @returns 0, or -1 with s->err set at the first input
 *         the sum passes 2^63 - 1 with. */
static int sum_integers(sums_t *s, const json_t **nodes, size_t n)
{
        json_int_t sum = 0;
        size_t     i;

        for (i = 0; i < n; i++) {
                json_int_t x;
                if (!json_is_integer(nodes[i]))
                        continue;
                x = json_integer_value(nodes[i]);
                if (x > 0 && sum > INT64_MAX - x) {
                        snprintf(s->err, s->errsz,
                                 "%s: %s: overflow: %lld summed with the "
                                 "reports before it passes 2^63 - 1",
                                 s->in[i].report->path, s->path, (long long)x);
                        return -1;
                }
                sum += x > 0 ? x : 0;
        }
        return 0;
}

/** @brief The members of objects @p nodes, each once: a member is walked
 *         from the first input that has it, with every input's. */
static int walk_objects(sums_t *s, const json_t **nodes, size_t n,
                        const json_t **kids)
{
        size_t      i, j, len = strlen(s->path);
        const char *key;
        json_t     *val;

        for (i = 0; i < n; i++) {
                json_object_foreach((json_t *)nodes[i], key, val)
                {
                        int seen = 0;
                        for (j = 0; j < i && !seen; j++)
                                seen = json_object_get(nodes[j], key) != NULL;
                        if (seen ||
                            !(json_is_object(val) || json_is_array(val) ||
                              json_is_integer(val)))
                                continue;
                        for (j = 0; j < n; j++)
                                kids[j] = json_object_get(nodes[j], key);
                        snprintf(s->path + len, sizeof(s->path) - len, ".%s",
                                 key);
                        if (walk(s, kids, n))
                                return -1;
                        s->path[len] = '\0';
                }
        }
        return 0;
}

/** @brief The elements of arrays @p nodes, index by index. */
static int walk_arrays(sums_t *s, const json_t **nodes, size_t n,
                       const json_t **kids)
{
        size_t i, j, most = 0, len = strlen(s->path);

        for (j = 0; j < n; j++)
                if (json_array_size(nodes[j]) > most)
                        most = json_array_size(nodes[j]);
        for (i = 0; i < most; i++) {
                int any = 0;
                for (j = 0; j < n; j++) {
                        kids[j] = json_array_get(nodes[j], i);
                        any |= json_is_integer(kids[j]) ||
                               json_is_object(kids[j]) ||
                               json_is_array(kids[j]);
                }
                if (!any)
                        continue;
                snprintf(s->path + len, sizeof(s->path) - len, "[%zu]", i);
                if (walk(s, kids, n))
                        return -1;
                s->path[len] = '\0';
        }
        return 0;
}

static int walk(sums_t *s, const json_t **nodes, size_t n)
{
        const json_t **kids;
        size_t         j;
        int            obj = 0, arr = 0, rc = 0;

        for (j = 0; j < n; j++) {
                obj |= json_is_object(nodes[j]);
                arr |= json_is_array(nodes[j]);
        }
        if (!obj && !arr)
                return sum_integers(s, nodes, n);
        if (!(kids = calloc(n, sizeof(*kids)))) {
                snprintf(s->err, s->errsz, "out of memory");
                return -1;
        }
        if (obj)
                rc = walk_objects(s, nodes, n, kids);
        if (!rc && arr)
                rc = walk_arrays(s, nodes, n, kids);
        free(kids);
        return rc;
}

int ks_cli_merge_sums_fit(const char *name, const ks_cli_merge_in_t *in,
                          size_t n, char *err, size_t errsz)
{
        sums_t         s = {.in = in, .err = err, .errsz = errsz};
        const json_t **nodes;
        size_t         i;
        int            rc;

        if (n < 2)
                return 0;
        if (!(nodes = calloc(n, sizeof(*nodes)))) {
                snprintf(err, errsz, "out of memory");
                return -1;
        }
        for (i = 0; i < n; i++)
                nodes[i] = in[i].topic;
        snprintf(s.path, sizeof(s.path), "topics.%s", name);
        rc = walk(&s, nodes, n);
        free(nodes);
        return rc;
}
