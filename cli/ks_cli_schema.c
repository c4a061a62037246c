/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli_schema.c
 * @brief A JSON Schema (2020-12) validator for the keywords the report's
 *        schema uses (ks_cli_schema.h).
 *
 * Validation walks the value and the schema together, depth first, and
 * stops at the first problem; `anyOf` and `oneOf` try each branch and,
 * when none fits, report the branch that got furthest into the value
 * (its path is the longest), which names the field a user got wrong
 * rather than "no branch matched".
 */
#include "ks_cli_schema.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "ks_cli_pattern.h"

/** The schema text, from docs/keyshift.report.v2.schema.json (generated
 *  by cli/CMakeLists.txt into ks_cli_schema_text.c). */
extern const char ks_cli_schema_text[];

typedef struct vctx {
        const json_t *root; /**< the schema document ($defs) */
        char         *path;
        size_t        pathsz, len;
        char         *err;
        size_t        errsz;
        int           bad_schema;
        /** >0: inside a first, quiet try of anyOf/oneOf branches, where
         *  a failure's message is not needed (check_branches()) */
        int quiet;
} vctx_t;

/** The embedded schema, parsed once and its objects' keywords looked up
 *  (schema_prepare()), never freed. */
static json_t        *report_schema;
static pthread_once_t report_once = PTHREAD_ONCE_INIT;

static void schema_prepare(void);

const json_t *ks_cli_schema_report(void)
{
        pthread_once(&report_once, schema_prepare);
        return report_schema;
}

/** @brief Appends @p n bytes of @p s to the path (cut at its size). */
static void path_put(vctx_t *v, const char *s, size_t n)
{
        if (v->len + n >= v->pathsz)
                n = v->pathsz - 1 - v->len;
        memcpy(v->path + v->len, s, n);
        v->len += n;
        v->path[v->len] = '\0';
}

/** @brief Appends ".key" (or "key" at the top) to the path.
 *  @returns the length to restore. */
static size_t push_key(vctx_t *v, const char *key)
{
        size_t old = v->len;

        if (v->len)
                path_put(v, ".", 1);
        path_put(v, key, strlen(key));
        return old;
}

/** @brief Appends "[i]" to the path (no printf: every entry of every
 *         array passes here). @returns the length to restore. */
static size_t push_index(vctx_t *v, size_t i)
{
        char   b[24];
        size_t old = v->len, k = sizeof(b);

        b[--k] = ']';
        do
                b[--k] = (char)('0' + i % 10);
        while (i /= 10);
        b[--k] = '[';
        path_put(v, b + k, sizeof(b) - k);
        return old;
}

static void pop(vctx_t *v, size_t len)
{
        v->len       = len;
        v->path[len] = '\0';
}

/** @brief Records a problem of the value at the current path. @returns -1. */
static int fail(vctx_t *v, const char *fmt, ...)
{
        va_list ap;

        if (v->quiet)
                return -1;
        va_start(ap, fmt);
        vsnprintf(v->err, v->errsz, fmt, ap);
        va_end(ap);
        return -1;
}

/** @brief Records a problem of the schema. @returns -2. */
static int schema_fail(vctx_t *v, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(v->err, v->errsz, fmt, ap);
        va_end(ap);
        v->bad_schema = 1;
        return -2;
}

/** @returns the JSON Schema type name of @p j ("integer" for integers). */
static const char *type_of(const json_t *j)
{
        switch (json_typeof(j)) {
        case JSON_OBJECT:
                return "object";
        case JSON_ARRAY:
                return "array";
        case JSON_STRING:
                return "string";
        case JSON_INTEGER:
                return "integer";
        case JSON_REAL:
                return "number";
        case JSON_TRUE:
        case JSON_FALSE:
                return "boolean";
        default:
                return "null";
        }
}

const char *ks_cli_json_what(const json_t *j)
{
        switch (json_typeof(j)) {
        case JSON_OBJECT:
                return "an object";
        case JSON_ARRAY:
                return "an array";
        case JSON_STRING:
                return "a string";
        case JSON_INTEGER:
                return json_integer_value(j) < 0 ? "a negative integer"
                                                 : "an integer";
        case JSON_REAL:
                return "a real number";
        case JSON_TRUE:
        case JSON_FALSE:
                return "a boolean";
        default:
                return "null";
        }
}

/** @returns 1 if @p j is of JSON Schema type @p t. */
static int is_type(const json_t *j, const char *t)
{
        if (!strcmp(t, "number"))
                return json_is_number(j);
        return !strcmp(t, type_of(j));
}

/** @returns type @p t with its article, for messages ("an integer"). */
static const char *a_type(const char *t)
{
        static const char *const names[][2] = {
            {"integer", "an integer"}, {"number", "a number"},
            {"string", "a string"},    {"object", "an object"},
            {"array", "an array"},     {"boolean", "a boolean"},
            {"null", "null"}};
        size_t i;

        for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
                if (!strcmp(names[i][0], t))
                        return names[i][1];
        return t;
}

/** @brief Checks `type`. @returns 0, -1 or -2. */
static int check_type(vctx_t *v, const json_t *t, const json_t *j)
{
        char   want[160];
        size_t i, n = 0;

        if (json_is_string(t)) {
                if (is_type(j, json_string_value(t)))
                        return 0;
                return fail(v, "expected %s, got %s",
                            a_type(json_string_value(t)), ks_cli_json_what(j));
        }
        if (!json_is_array(t))
                return schema_fail(v, "type is neither a name nor a list");
        want[0] = '\0';
        for (i = 0; i < json_array_size(t); i++) {
                const char *name = json_string_value(json_array_get(t, i));
                if (!name)
                        return schema_fail(v, "type lists a non-string");
                if (is_type(j, name))
                        return 0;
                if (n < sizeof(want))
                        n +=
                            (size_t)snprintf(want + n, sizeof(want) - n, "%s%s",
                                             i ? " or " : "", a_type(name));
        }
        return fail(v, "expected %s, got %s", want, ks_cli_json_what(j));
}

/** @returns the number of code points of UTF-8 @p s (jansson's strings
 *           are valid UTF-8). */
static size_t code_points(const char *s, size_t bytes)
{
        size_t i, n = 0;

        for (i = 0; i < bytes; i++)
                n += ((unsigned char)s[i] & 0xc0) != 0x80;
        return n;
}

/**
 * A schema object's keywords, looked up once: validation visits the same
 * few hundred schema objects for every value of a report (each entry of
 * each per-partition column), and looking each keyword up by name every
 * time was most of a report's check. Kept by the schema object's address,
 * for the embedded schema only, all of them when it is parsed
 * (schema_prepare(), under pthread_once: the table is only read after,
 * from any thread); another schema is looked up each time. A schema
 * object of unknown keywords is not kept, so it fails where it is used,
 * every time.
 */
typedef struct snode {
        const json_t *s;
        const json_t *ref, *ref_to, *type, *constv, *enumv;
        const json_t *props, *req, *addl, *names;
        const json_t *prefix, *items, *min_items, *max_items;
        const json_t *minimum, *maximum, *min_len, *max_len, *pattern;
        const json_t *all_of, *any_of, *one_of;
        /** `type` as a set of jansson types (1 << json_typeof()) that it
         *  accepts; 0 when absent or not a well-formed name or list of
         *  names: then check_type() says what is wrong */
        unsigned types;
        /** `pattern` compiled, NULL when it is not a string that
         *  compiles (check_scalar() says so) */
        const ks_cli_pattern_t *re;
} snode_t;

#define SNODE_SLOTS 4096 /* a power of 2, above the schema's objects */
static snode_t snodes[SNODE_SLOTS];

/** @returns the slot of schema object @p s in snodes (its own or the
 *           empty one where it goes), NULL when the table is full. */
static snode_t *snode_slot(const json_t *s)
{
        size_t h = ((size_t)(uintptr_t)s >> 4) * 0x9e3779b97f4a7c15ull, i;

        for (i = 0; i < SNODE_SLOTS; i++) {
                snode_t *n = &snodes[(h + i) & (SNODE_SLOTS - 1)];
                if (!n->s || n->s == s)
                        return n;
        }
        return NULL;
}

static int           check_keywords(vctx_t *v, const json_t *s);
static const json_t *resolve(vctx_t *v, const char *ref);

/** @returns the jansson types JSON Schema type name @p t accepts (as
 *           is_type() reads it; 0 for a name it does not know). */
static unsigned types_of_name(const char *t)
{
        static const struct {
                const char *name;
                unsigned    types;
        } names[] = {
            {"object", 1u << JSON_OBJECT},
            {"array", 1u << JSON_ARRAY},
            {"string", 1u << JSON_STRING},
            {"integer", 1u << JSON_INTEGER},
            {"number", 1u << JSON_INTEGER | 1u << JSON_REAL},
            {"boolean", 1u << JSON_TRUE | 1u << JSON_FALSE},
            {"null", 1u << JSON_NULL},
        };
        size_t i;

        for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
                if (!strcmp(names[i].name, t))
                        return names[i].types;
        return 0;
}

/** @returns snode_t.types of `type` @p t. */
static unsigned types_of(const json_t *t)
{
        unsigned types = 0;
        size_t   i;

        if (json_is_string(t))
                return types_of_name(json_string_value(t));
        for (i = 0; i < json_array_size(t); i++) {
                if (!json_is_string(json_array_get(t, i)))
                        return 0; /* check_type() names the fault */
                types |= types_of_name(json_string_value(json_array_get(t, i)));
        }
        return types;
}

/** @brief Fills @p n with the keywords of schema object @p s (`$ref`
 *         resolved: NULL when it does not). */
static void snode_fill(vctx_t *v, snode_t *n, const json_t *s)
{
        n->ref       = json_object_get(s, "$ref");
        n->ref_to    = json_is_string(n->ref)
                           ? resolve(v, json_string_value(n->ref))
                           : NULL;
        n->type      = json_object_get(s, "type");
        n->constv    = json_object_get(s, "const");
        n->enumv     = json_object_get(s, "enum");
        n->props     = json_object_get(s, "properties");
        n->req       = json_object_get(s, "required");
        n->addl      = json_object_get(s, "additionalProperties");
        n->names     = json_object_get(s, "propertyNames");
        n->prefix    = json_object_get(s, "prefixItems");
        n->items     = json_object_get(s, "items");
        n->min_items = json_object_get(s, "minItems");
        n->max_items = json_object_get(s, "maxItems");
        n->minimum   = json_object_get(s, "minimum");
        n->maximum   = json_object_get(s, "maximum");
        n->min_len   = json_object_get(s, "minLength");
        n->max_len   = json_object_get(s, "maxLength");
        n->pattern   = json_object_get(s, "pattern");
        n->all_of    = json_object_get(s, "allOf");
        n->any_of    = json_object_get(s, "anyOf");
        n->one_of    = json_object_get(s, "oneOf");
        n->types     = types_of(n->type);
        n->re        = json_is_string(n->pattern)
                           ? ks_cli_pattern_of(json_string_value(n->pattern))
                           : NULL;
        n->s         = s;
}

/**
 * @returns the keywords of schema object @p s: kept in snodes, or in
 *          @p tmp when not kept; NULL with the problem recorded
 *          (ks_cli_schema.h's -2) when it uses a keyword not implemented.
 */
static const snode_t *snode_of(vctx_t *v, const json_t *s, snode_t *tmp)
{
        /* only the embedded schema lives as long as the table, which
         * schema_prepare() filled (read only since) */
        const snode_t *n =
            v->root == ks_cli_schema_report() ? snode_slot(s) : NULL;

        if (n && n->s == s)
                return n;
        if (check_keywords(v, s))
                return NULL;
        snode_fill(v, tmp, s);
        return tmp;
}

/** @brief Keeps the keywords of schema object @p s and of every schema
 *         under it (`$ref`s resolve into `$defs`, walked too). */
static void prepare_walk(vctx_t *v, const json_t *s)
{
        static const char *const lists[] = {"prefixItems", "allOf", "anyOf",
                                            "oneOf", NULL};
        static const char *const ones[]  = {"additionalProperties",
                                            "propertyNames", "items", NULL};
        snode_t                 *n;
        const char              *key;
        json_t                  *m;
        size_t                   i, k;

        if (!json_is_object(s) || !(n = snode_slot(s)) || n->s == s)
                return;
        if (check_keywords(v, s)) /* not kept: fails where it is used */
                return;
        snode_fill(v, n, s);
        json_object_foreach((json_t *)json_object_get(s, "properties"), key, m)
            prepare_walk(v, m);
        json_object_foreach((json_t *)json_object_get(s, "$defs"), key, m)
            prepare_walk(v, m);
        for (k = 0; ones[k]; k++)
                prepare_walk(v, json_object_get(s, ones[k]));
        for (k = 0; lists[k]; k++)
                for (i = 0; i < json_array_size(json_object_get(s, lists[k]));
                     i++)
                        prepare_walk(
                            v, json_array_get(json_object_get(s, lists[k]), i));
}

/** @brief Parses the embedded schema and keeps its objects' keywords
 *         (once, ks_cli_schema_report()). */
static void schema_prepare(void)
{
        json_error_t e;
        char         path[8] = "", err[256];
        vctx_t       v       = {.path   = path,
                                .pathsz = sizeof(path),
                                .err    = err,
                                .errsz  = sizeof(err)};

        if (!(report_schema = json_loads(ks_cli_schema_text, 0, &e)))
                return;
        v.root = report_schema;
        prepare_walk(&v, report_schema);
}

static int validate(vctx_t *v, const json_t *s, const json_t *j);

/** @returns how many of the branches @p list @p j fits (0 to 2: more
 *           are not counted when @p one is 0 and one fits, or when two
 *           fit), or -2; failures' messages not written (quiet). */
static int count_branches(vctx_t *v, const json_t *list, const json_t *j,
                          int one)
{
        size_t i, start    = v->len;
        int    rc, matched = 0;

        v->quiet++;
        for (i = 0; i < json_array_size(list) && matched < 1 + one; i++) {
                rc = validate(v, json_array_get(list, i), j);
                pop(v, start);
                if (rc == -2)
                        break;
                matched += !rc;
        }
        v->quiet--;
        return rc == -2 ? -2 : matched;
}

/** @brief `anyOf` (@p one = 0) or `oneOf` (@p one = 1). */
static int check_branches(vctx_t *v, const json_t *list, const json_t *j,
                          int one, const char *kw)
{
        char   best_err[512] = "", best_path[512] = "";
        size_t best_len = 0, i, matched = 0, start = v->len;
        int    rc;

        if (!json_is_array(list) || !json_array_size(list))
                return schema_fail(v, "%s is not a non-empty list", kw);
        /* most values fit: tried quietly first, and again with messages
         * only when they do not (the same verdict, deterministically) */
        rc = count_branches(v, list, j, one);
        if (rc == -2 && !v->quiet)
                rc = -3; /* retried below for the schema's message */
        else if (rc == -2)
                return rc;
        else if (one ? rc == 1 : rc >= 1)
                return 0;
        if (v->quiet)
                return -1;
        for (i = 0; i < json_array_size(list); i++) {
                rc = validate(v, json_array_get(list, i), j);
                if (rc == -2)
                        return rc;
                if (!rc) {
                        matched++;
                } else if (!*best_err || v->len > best_len) {
                        best_len = v->len;
                        snprintf(best_err, sizeof(best_err), "%s", v->err);
                        snprintf(best_path, sizeof(best_path), "%s", v->path);
                }
                pop(v, start);
        }
        if (one ? matched == 1 : matched >= 1)
                return 0;
        if (matched > 1)
                return fail(v, "fits %zu of the forms allowed, not one",
                            matched);
        /* the branch that went furthest names the field at fault */
        snprintf(v->path, v->pathsz, "%s", best_path);
        v->len = strlen(v->path);
        return fail(v, "%s", best_err);
}

/** @brief The object keywords: properties, required, additionalProperties,
 *         propertyNames. */
static int check_object(vctx_t *v, const snode_t *s, const json_t *j)
{
        const json_t *props = s->props;
        const json_t *req   = s->req;
        const json_t *addl  = s->addl;
        const json_t *names = s->names;
        const char   *key;
        json_t       *m;
        size_t        i, mark;
        int           rc;

        for (i = 0; i < json_array_size(req); i++) {
                const char *k = json_string_value(json_array_get(req, i));
                if (!k)
                        return schema_fail(v, "required lists a non-string");
                if (!json_object_get(j, k)) {
                        mark = push_key(v, k);
                        return fail(v, "missing");
                }
        }
        json_object_foreach((json_t *)j, key, m)
        {
                const json_t *ps = props ? json_object_get(props, key) : NULL;
                mark             = push_key(v, key);
                if (names) {
                        json_t *kj = json_string(key);
                        rc         = validate(v, names, kj);
                        json_decref(kj);
                        if (rc)
                                return rc == -1 ? fail(v,
                                                       "not an allowed "
                                                       "name: %s",
                                                       v->err)
                                                : rc;
                }
                if (ps)
                        rc = validate(v, ps, m);
                else if (json_is_false(addl))
                        rc = fail(v, "unknown member (not in the schema)");
                else if (json_is_object(addl))
                        rc = validate(v, addl, m);
                else if (!addl || json_is_true(addl))
                        rc = 0;
                else
                        rc = schema_fail(v, "additionalProperties is "
                                            "neither a boolean nor a schema");
                if (rc)
                        return rc;
                pop(v, mark);
        }
        return 0;
}

/** @brief The array keywords: prefixItems, items, minItems, maxItems. */
static int check_array(vctx_t *v, const snode_t *s, const json_t *j)
{
        const json_t *prefix = s->prefix;
        const json_t *items  = s->items;
        const json_t *mn     = s->min_items;
        const json_t *mx     = s->max_items;
        size_t        n      = json_array_size(j), i, mark;
        int           rc;

        if (mn && n < (size_t)json_integer_value(mn))
                return fail(v, "%zu entries, at least %lld expected", n,
                            (long long)json_integer_value(mn));
        if (mx && n > (size_t)json_integer_value(mx))
                return fail(v, "%zu entries, at most %lld expected", n,
                            (long long)json_integer_value(mx));
        for (i = 0; i < n; i++) {
                const json_t *is = i < json_array_size(prefix)
                                       ? json_array_get(prefix, i)
                                       : items;
                if (!is)
                        continue;
                mark = push_index(v, i);
                if (json_is_false(is))
                        rc = fail(v, "more entries than the %zu expected",
                                  json_array_size(prefix));
                else
                        rc = validate(v, is, json_array_get(j, i));
                if (rc)
                        return rc;
                pop(v, mark);
        }
        return 0;
}

/** @brief The number and string keywords. */
static int check_scalar(vctx_t *v, const snode_t *s, const json_t *j)
{
        const json_t *mn = s->minimum;
        const json_t *mx = s->maximum;
        const json_t *ml = s->min_len;
        const json_t *xl = s->max_len;
        const json_t *pt = s->pattern;

        if (json_is_number(j) &&
            ((mn && json_number_value(j) < json_number_value(mn)) ||
             (mx && json_number_value(j) > json_number_value(mx)))) {
                double x = json_number_value(j);
                char   num[32]; /* an integer as written, not as %g: only
                                   for the message (formatting every
                                   number was 7 % of keyshift fleet) */
                if (json_is_integer(j))
                        snprintf(num, sizeof(num), "%lld",
                                 (long long)json_integer_value(j));
                else
                        snprintf(num, sizeof(num), "%g", x);
                if (mn && x < json_number_value(mn))
                        return fail(v, "%s %s, below the minimum %.17g",
                                    ks_cli_json_what(j), num,
                                    json_number_value(mn));
                return fail(v, "%s %s, above the maximum %.17g",
                            ks_cli_json_what(j), num, json_number_value(mx));
        }
        if (json_is_string(j)) {
                size_t cp = ml || xl ? code_points(json_string_value(j),
                                                   json_string_length(j))
                                     : 0;
                const ks_cli_pattern_t *re = s->re;
                if (ml && cp < (size_t)json_integer_value(ml))
                        return fail(v,
                                    "%zu characters, at least %lld "
                                    "expected",
                                    cp, (long long)json_integer_value(ml));
                if (xl && cp > (size_t)json_integer_value(xl))
                        return fail(v, "%zu characters, at most %lld expected",
                                    cp, (long long)json_integer_value(xl));
                if (pt) {
                        if (!re &&
                            (!json_is_string(pt) ||
                             !(re = ks_cli_pattern_of(json_string_value(pt)))))
                                return schema_fail(v, "pattern does not "
                                                      "compile");
                        if (!ks_cli_pattern_match(re, json_string_value(j)))
                                return fail(v,
                                            "\"%.40s\" is not of the form "
                                            "%s",
                                            json_string_value(j),
                                            json_string_value(pt));
                }
        }
        return 0;
}

/** Keywords that only annotate, and the ones the checks below read. */
static const char *const known[] = {
    "$schema",       "$id",         "$comment",    "$defs",
    "title",         "description", "default",     "examples",
    "format",        "$ref",        "type",        "enum",
    "const",         "properties",  "required",    "additionalProperties",
    "propertyNames", "items",       "prefixItems", "minItems",
    "maxItems",      "minimum",     "maximum",     "minLength",
    "maxLength",     "pattern",     "anyOf",       "oneOf",
    "allOf",         NULL};

/** @returns 0 if every keyword of @p s is known, else -2. */
static int check_keywords(vctx_t *v, const json_t *s)
{
        const char *key;
        json_t     *m;
        size_t      i;

        json_object_foreach((json_t *)s, key, m)
        {
                for (i = 0; known[i] && strcmp(known[i], key); i++)
                        ;
                if (!known[i])
                        return schema_fail(v,
                                           "the schema uses \"%s\", which "
                                           "this check does not implement",
                                           key);
        }
        (void)m;
        return 0;
}

/** @returns the schema @p ref ("#/$defs/NAME") points to, or NULL. */
static const json_t *resolve(vctx_t *v, const char *ref)
{
        if (strncmp(ref, "#/$defs/", 8))
                return NULL;
        return json_object_get(json_object_get(v->root, "$defs"), ref + 8);
}

/** @brief Validates @p j against schema @p sj. @returns 0, -1 or -2. */
static int validate(vctx_t *v, const json_t *sj, const json_t *j)
{
        const json_t  *k;
        const snode_t *s;
        snode_t        tmp;
        size_t         i;
        int            rc;

        if (json_is_true(sj))
                return 0;
        if (json_is_false(sj))
                return fail(v, "not allowed here");
        if (!json_is_object(sj))
                return schema_fail(v, "a schema that is not an object");
        if (!(s = snode_of(v, sj, &tmp)))
                return -2;
        if ((k = s->ref)) {
                const json_t *t = s->ref_to;
                if (!t)
                        return schema_fail(v, "$ref %s does not resolve",
                                           json_string_value(k));
                if ((rc = validate(v, t, j)))
                        return rc;
        }
        /* the types accepted, else check_type() for the message */
        if ((k = s->type) && !(s->types & 1u << json_typeof(j)) &&
            (rc = check_type(v, k, j)))
                return rc;
        if ((k = s->constv) && !json_equal(k, j))
                return fail(v, "expected the value %s",
                            json_is_string(k) ? json_string_value(k) : "set");
        if ((k = s->enumv)) {
                for (i = 0; i < json_array_size(k); i++)
                        if (json_equal(json_array_get(k, i), j))
                                break;
                if (i == json_array_size(k))
                        return fail(v,
                                    "%s%s%s is not one of the values "
                                    "allowed",
                                    json_is_string(j) ? "\"" : "",
                                    json_is_string(j) ? json_string_value(j)
                                                      : ks_cli_json_what(j),
                                    json_is_string(j) ? "\"" : "");
        }
        if (json_is_object(j) && (rc = check_object(v, s, j)))
                return rc;
        if (json_is_array(j) && (rc = check_array(v, s, j)))
                return rc;
        if ((rc = check_scalar(v, s, j)))
                return rc;
        if ((k = s->all_of))
                for (i = 0; i < json_array_size(k); i++)
                        if ((rc = validate(v, json_array_get(k, i), j)))
                                return rc;
        if ((k = s->any_of) && (rc = check_branches(v, k, j, 0, "anyOf")))
                return rc;
        if ((k = s->one_of) && (rc = check_branches(v, k, j, 1, "oneOf")))
                return rc;
        return 0;
}

int ks_cli_schema_validate(const json_t *schema, const json_t *value,
                           char *path, size_t pathsz, char *err, size_t errsz)
{
        vctx_t v = {.root   = schema,
                    .path   = path,
                    .pathsz = pathsz,
                    .len    = strlen(path),
                    .err    = err,
                    .errsz  = errsz};
        int    rc;

        if (!schema)
                return schema_fail(&v, "the report schema does not parse");
        rc = validate(&v, schema, value);
        return v.bad_schema ? -2 : rc;
}
