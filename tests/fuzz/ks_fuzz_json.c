/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_fuzz_json.c
 * @brief A structure-aware mutation of JSON inputs (ks_fuzz.h): byte
 *        mutations of a report mostly break its JSON, and those that
 *        parse mostly fail the schema at once; this one changes one
 *        value of the parsed tree (a number to an edge, an array's
 *        length, a member removed or retyped), so that the fuzzer also
 *        tries reports the check accepts with values at their limits.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ks_fuzz.h"

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

/** A value of the tree and where it hangs (to replace or remove it). */
typedef struct node {
        json_t     *v;
        json_t     *parent; /**< NULL: the root */
        const char *key;    /**< member name, parent an object */
        size_t      index;  /**< parent an array */
} node_t;

typedef struct walk {
        node_t *n;
        size_t  cnt, cap;
} walk_t;

static void collect(walk_t *w, json_t *v, json_t *parent, const char *key,
                    size_t index)
{
        const char *k;
        json_t     *c;
        size_t      i;

        if (w->cnt == w->cap) {
                size_t  cap = w->cap ? w->cap * 2 : 256;
                node_t *n   = realloc(w->n, cap * sizeof(*n));
                if (!n)
                        return;
                w->n   = n;
                w->cap = cap;
        }
        w->n[w->cnt++] = (node_t){v, parent, key, index};
        if (json_is_object(v))
                json_object_foreach(v, k, c) collect(w, c, v, k, 0);
        else if (json_is_array(v))
                json_array_foreach(v, i, c) collect(w, c, v, NULL, i);
}

static uint64_t rnd(uint64_t *s)
{ /* splitmix64 */
        uint64_t z = (*s += 0x9e3779b97f4a7c15u);

        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
        return z ^ (z >> 31);
}

/** @returns a new value to put in place of @p v. */
static json_t *other_value(json_t *v, uint64_t *s)
{
        static const double     reals[] = {0.0,  -0.0,  0.5,    -0.5,   1.5,
                                           -3.0, 1e308, -1e308, 1e-300, 2.0};
        static const json_int_t ints[]  = {0,
                                           -1,
                                           1,
                                           2,
                                           255,
                                           256,
                                           65536,
                                           100000,
                                           100001,
                                           2147483647,
                                           2147483648LL,
                                           4294967296LL,
                                           9007199254740993LL,
                                           INT64_MAX,
                                           INT64_MIN,
                                           INT64_MAX - 1};
        uint64_t                r       = rnd(s) % 16;

        if (json_is_integer(v) && r < 10) {
                json_int_t x = json_integer_value(v);
                switch (r) {
                case 0:
                        return json_integer(x == INT64_MAX ? x : x + 1);
                case 1:
                        return json_integer(x == INT64_MIN ? x : x - 1);
                case 2:
                        return json_integer(
                            x > INT64_MAX / 2 || x < INT64_MIN / 2 ? x : x * 2);
                case 3:
                        return json_integer(x / 2);
                case 4:
                        return json_integer(x == INT64_MIN ? INT64_MAX : -x);
                default:
                        return json_integer(
                            ints[rnd(s) % (sizeof(ints) / sizeof(ints[0]))]);
                }
        }
        if (json_is_real(v) && r < 10) {
                double x = json_real_value(v);
                if (r < 3 && isfinite(x * 2))
                        return json_real(r == 0 ? x * 2 : r == 1 ? -x : x / 3);
                return json_real(
                    reals[rnd(s) % (sizeof(reals) / sizeof(reals[0]))]);
        }
        if (json_is_string(v) && r < 10) {
                static const char *strs[] = {"",
                                             "not a time",
                                             "1970-01-01T00:00:00Z",
                                             "9999-12-31T23:59:59.999Z",
                                             "-1",
                                             "murmur2_random",
                                             "random",
                                             "keyshift.report.v1",
                                             "\xc3\xa9",
                                             "a\nb",
                                             "AAAA",
                                             "AQ==",
                                             "%s%n"};
                if (r < 2) { /* a long one */
                        size_t  n = rnd(s) % 5000 + 1;
                        char   *b = malloc(n + 1);
                        json_t *j;
                        if (!b)
                                return json_null();
                        memset(b, 'A' + (int)(rnd(s) % 26), n);
                        b[n] = '\0';
                        j    = json_string(b);
                        free(b);
                        return j ? j : json_null();
                }
                return json_string(
                    strs[rnd(s) % (sizeof(strs) / sizeof(strs[0]))]);
        }
        switch (rnd(s) % 7) {
        case 0:
                return json_null();
        case 1:
                return json_true();
        case 2:
                return json_integer((json_int_t)(rnd(s) % 1000));
        case 3:
                return json_real(-1.5);
        case 4:
                return json_string("x");
        case 5:
                return json_array();
        default:
                return json_object();
        }
}

/** @brief One mutation of the tree @p root. */
static void mutate_tree(json_t *root, uint64_t *s)
{
        walk_t  w = {0};
        node_t *n;

        collect(&w, root, NULL, NULL, 0);
        if (w.cnt < 2) {
                free(w.n);
                return;
        }
        n = &w.n[1 + rnd(s) % (w.cnt - 1)];
        switch (rnd(s) % 8) {
        case 0: /* remove it */
                if (json_is_object(n->parent))
                        json_object_del(n->parent, n->key);
                else
                        json_array_remove(n->parent, n->index);
                break;
        case 1: /* an array grows or shrinks at its end */
                if (json_is_array(n->v) && json_array_size(n->v)) {
                        if (rnd(s) & 1)
                                json_array_append(
                                    n->v, json_array_get(
                                              n->v, json_array_size(n->v) - 1));
                        else
                                json_array_remove(n->v,
                                                  json_array_size(n->v) - 1);
                        break;
                }
                /* fall through */
        default: /* another value */
                if (json_is_object(n->parent))
                        json_object_set_new(n->parent, n->key,
                                            other_value(n->v, s));
                else
                        json_array_set_new(n->parent, n->index,
                                           other_value(n->v, s));
                break;
        }
        free(w.n);
}

size_t ks_fuzz_json_mutate(uint8_t *data, size_t size, size_t max_size,
                           unsigned int seed)
{
        uint64_t s = seed;
        json_t  *root;
        char    *text;
        size_t   n, k;

        if (rnd(&s) % 4 == 0 ||
            !(root = json_loadb((const char *)data, size, 0, NULL)))
                return LLVMFuzzerMutate(data, size, max_size);
        for (k = 1 + rnd(&s) % 3; k > 0; k--)
                mutate_tree(root, &s);
        text = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
        json_decref(root);
        if (!text || (n = strlen(text)) > max_size) {
                free(text);
                return LLVMFuzzerMutate(data, size, max_size);
        }
        memcpy(data, text, n);
        free(text);
        return n;
}
