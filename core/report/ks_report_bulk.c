/**
 * @file ks_report_bulk.c
 * @brief Writes the bulk of a topic's report straight from its snapshot:
 *        the per-partition arrays and the mergeable sketches, in the
 *        keyshift.report.v1 schema, without a JSON value per number.
 *
 * Why: for 50 topics x 1,000 partitions x 3 proposed counts, these parts
 * are ~2 million JSON values (5,700 {partition, messages, bytes} objects
 * per topic, 4,096 key-sample entries, 1,024 hot-key counters and the
 * HyperLogLog registers). Building them with jansson, dumping and freeing
 * them took ~1 s on keyshift's thread (bench/ksb_report); formatted here
 * into a buffer they take a few percent of that. Everything else of a
 * topic (counters, hot keys, sizing, warnings...) is small and still
 * built with jansson by ks_report_topic(), which leaves null placeholders
 * where the bulk goes; this file writes the topic's members in their
 * order, putting the bulk in place of the placeholders. The result parses
 * to the same JSON as ks_report_topic() without placeholders (a unit test
 * compares them).
 *
 * @locality the thread writing the report; snapshots only.
 */
#include "ks_report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ks_report_parts.h"

/** Output buffered here, then written to the report file's descriptor
 *  in large write()s: no stdio call per number, and no second copy
 *  through stdio's buffer (28 MB per report of 50 topics x 1,000
 *  partitions: ~4 % of its time, bench/ksb_report). The stream is
 *  flushed before a topic starts, and left empty after it. */
typedef struct ks_jout {
        int    fd;
        int    failed;
        size_t n;
        char   buf[65536];
} ks_jout_t;

/** Room every put_*() below may take without asking: the longest element
 *  written with one jout_room() (a hot-key counter with a 128-byte key,
 *  in hex, is < 400 bytes). */
#define KS_JOUT_ELEM_MAX 512

static void jout_flush(ks_jout_t *o)
{
        size_t done = 0;

        while (!o->failed && done < o->n) {
                ssize_t r = write(o->fd, o->buf + done, o->n - done);
                if (r > 0)
                        done += (size_t)r;
                else if (r == 0 || errno != EINTR)
                        o->failed = 1;
        }
        o->n = 0;
}

/** @brief Makes room for @p n bytes (n <= sizeof(buf)). @returns where
 *         they go: the caller advances o->n by what it wrote. */
static inline char *jout_room(ks_jout_t *o, size_t n)
{
        if (o->n + n > sizeof(o->buf))
                jout_flush(o);
        return o->buf + o->n;
}

static void put_mem(ks_jout_t *o, const char *s, size_t n)
{
        while (n) {
                size_t k = n < sizeof(o->buf) ? n : sizeof(o->buf);
                memcpy(jout_room(o, k), s, k);
                o->n += k;
                s += k;
                n -= k;
        }
}

/** @brief Copies string literal @p lit to @p d (no NUL); @returns the end.
 *  The length is known at compile time: a few moves, no strlen. */
static inline char *lit_at(char *d, const char *lit, size_t n)
{
        memcpy(d, lit, n);
        return d + n;
}
#define KS_LIT(d, lit) lit_at((d), (lit), sizeof(lit) - 1)

/** @brief Appends string literal @p lit. */
#define PUT_LIT(o, lit)                                                        \
        do {                                                                   \
                char *d_ = jout_room((o), sizeof(lit) - 1);                    \
                memcpy(d_, (lit), sizeof(lit) - 1);                            \
                (o)->n += sizeof(lit) - 1;                                     \
        } while (0)

/** "00" .. "99": two decimal digits per lookup. */
static const char ks_digits2[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536"
    "37383940414243444546474849505152535455565758596061626364656667686970717273"
    "7475767778798081828384858687888990919293949596979899";

/** @returns the decimal digits of @p v (1..20). */
static inline size_t digits10(uint64_t v)
{
        size_t n = 1;

        while (v >= 10000) {
                v /= 10000;
                n += 4;
        }
        return n + (v >= 10) + (v >= 100) + (v >= 1000);
}

/** @brief Writes @p v in decimal at @p d (at most 20 bytes), as "%llu",
 *         straight into place from the last digit back. @returns the end. */
static inline char *fmt_u64(char *d, uint64_t v)
{
        char *e = d + digits10(v), *p = e;

        while (v >= 100) {
                unsigned r = (unsigned)(v % 100);
                v /= 100;
                p -= 2;
                p[0] = ks_digits2[2 * r];
                p[1] = ks_digits2[2 * r + 1];
        }
        if (v >= 10) {
                p[-2] = ks_digits2[2 * v];
                p[-1] = ks_digits2[2 * v + 1];
        } else {
                p[-1] = (char)('0' + v);
        }
        return e;
}

/** @brief Writes @p v as "%lld" at @p d (at most 20 bytes). @returns the end. */
static inline char *fmt_i64(char *d, int64_t v)
{
        if (v < 0) {
                *d++ = '-';
                return fmt_u64(d, (uint64_t)0 - (uint64_t)v);
        }
        return fmt_u64(d, (uint64_t)v);
}

static void put_u64(ks_jout_t *o, uint64_t v)
{
        char *d = jout_room(o, 20);

        o->n += (size_t)(fmt_u64(d, v) - d);
}

/** Byte b -> its two lower-case hex digits at 2 * b. */
static const char ks_hex2[513] =
    "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20212223"
    "2425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f4041424344454647"
    "48494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f606162636465666768696a6b"
    "6c6d6e6f707172737475767778797a7b7c7d7e7f808182838485868788898a8b8c8d8e8f"
    "909192939495969798999a9b9c9d9e9fa0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3"
    "b4b5b6b7b8b9babbbcbdbebfc0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7"
    "d8d9dadbdcdddedfe0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafb"
    "fcfdfeff";

/** @brief Writes @p n bytes as lower-case hex at @p d. @returns the end. */
static inline char *fmt_hex(char *d, const uint8_t *b, size_t n)
{
        size_t i;

        for (i = 0; i < n; i++, d += 2)
                memcpy(d, ks_hex2 + 2 * b[i], 2);
        return d;
}

/** @brief @p n bytes as lower-case hex, without quotes. */
static void put_hex(ks_jout_t *o, const uint8_t *b, size_t n)
{
        while (n) {
                size_t k = n < sizeof(o->buf) / 4 ? n : sizeof(o->buf) / 4;
                char  *d = jout_room(o, 2 * k);
                fmt_hex(d, b, k);
                o->n += 2 * k;
                b += k;
                n -= k;
        }
}

/** @brief Writes a 64-bit hash as 16 hex digits at @p d, as "%016llx".
 *  @returns the end. */
static inline char *fmt_hash64(char *d, uint64_t h)
{
        int i;

        for (i = 7; i >= 0; i--, h >>= 8)
                memcpy(d + 2 * i, ks_hex2 + 2 * (h & 0xff), 2);
        return d + 16;
}

/** @brief [{partition, messages, bytes}, ...] as partitions_json(). */
static void put_partitions(ks_jout_t *o, const ks_load_t *l, int32_t n)
{
        int32_t i;

        PUT_LIT(o, "[");
        for (i = 0; i < n; i++) {
                char *d = jout_room(o, KS_JOUT_ELEM_MAX), *b = d;
                if (i)
                        *d++ = ',';
                d    = KS_LIT(d, "{\"partition\":");
                d    = fmt_u64(d, (uint64_t)i);
                d    = KS_LIT(d, ",\"messages\":");
                d    = fmt_u64(d, l[i].messages);
                d    = KS_LIT(d, ",\"bytes\":");
                d    = fmt_u64(d, l[i].bytes);
                *d++ = '}';
                o->n += (size_t)(d - b);
        }
        PUT_LIT(o, "]");
}

/** @brief `,"registers_hex":"..."` or `,"registers_nonzero":[[i,v],...]`,
 *         whichever ks_report_hll_json() writes (ks_report_hll.c). */
static void put_hll_registers(ks_jout_t *o, const ks_hll_t *hll)
{
        size_t i, n = 0;

        if (!ks_report_hll_sparse(ks_report_hll_nonzero(hll))) {
                PUT_LIT(o, ",\"registers_hex\":\"");
                put_hex(o, hll->reg, sizeof(hll->reg));
                PUT_LIT(o, "\"");
                return;
        }
        PUT_LIT(o, ",\"registers_nonzero\":[");
        for (i = 0; i < KS_HLL_REGISTERS; i++) {
                char *d, *b;
                if (!hll->reg[i])
                        continue;
                d = b = jout_room(o, KS_JOUT_ELEM_MAX);
                if (n++)
                        *d++ = ',';
                *d++ = '[';
                d    = fmt_u64(d, i);
                *d++ = ',';
                d    = fmt_u64(d, hll->reg[i]);
                *d++ = ']';
                o->n += (size_t)(d - b);
        }
        PUT_LIT(o, "]");
}

/** @brief The `merge` object as merge_json() (docs/report-schema.md). */
static void put_merge(ks_jout_t *o, const ks_topic_snapshot_t *s)
{
        size_t i;

        PUT_LIT(o, "{\"distinct_hll\":{\"p\":");
        put_u64(o, KS_HLL_P);
        put_hll_registers(o, &s->hll);
        PUT_LIT(o, "},\"key_sample\":{\"capacity\":");
        put_u64(o, s->sample_capacity);
        PUT_LIT(o, ",\"entries\":[");
        for (i = 0; i < s->sample_cnt; i++) {
                const ks_keysample_entry_t *e = &s->sample[i];
                char *d = jout_room(o, KS_JOUT_ELEM_MAX), *b = d;
                if (i)
                        *d++ = ',';
                d    = KS_LIT(d, "[\"");
                d    = fmt_hash64(d, e->hash64);
                d    = KS_LIT(d, "\",");
                d    = fmt_u64(d, e->phash);
                *d++ = ',';
                d    = fmt_u64(d, e->messages);
                *d++ = ',';
                d    = fmt_u64(d, e->bytes);
                *d++ = ']';
                o->n += (size_t)(d - b);
        }
        PUT_LIT(o, "]},\"hot_keys\":{\"capacity\":");
        put_u64(o, s->topk_capacity);
        PUT_LIT(o, ",\"total\":");
        put_u64(o, s->topk_total);
        PUT_LIT(o, ",\"sampled_one_in\":");
        put_u64(o, KS_HOT_SAMPLE_ONE_IN);
        PUT_LIT(o, ",\"passed_by\":");
        put_u64(o, s->c.hot_passed_by);
        PUT_LIT(o, ",\"sampled\":");
        put_u64(o, s->c.hot_sampled);
        PUT_LIT(o, ",\"entries\":[");
        for (i = 0; i < s->hot_cnt; i++) {
                const ks_topk_entry_t *e = &s->hot[i];
                size_t                 kl =
                    e->keylen < KS_TOPK_KEY_MAX ? e->keylen : KS_TOPK_KEY_MAX;
                char *d = jout_room(o, KS_JOUT_ELEM_MAX), *b = d;
                if (i)
                        *d++ = ',';
                d    = KS_LIT(d, "{\"key_hex\":\"");
                d    = fmt_hex(d, e->key, kl);
                d    = KS_LIT(d, "\",\"key_length\":");
                d    = fmt_u64(d, e->keylen);
                d    = KS_LIT(d, ",\"hash64\":\"");
                d    = fmt_hash64(d, e->hash64);
                d    = KS_LIT(d, "\",\"phash\":");
                d    = fmt_u64(d, e->phash);
                d    = KS_LIT(d, ",\"count\":");
                d    = fmt_u64(d, e->count);
                d    = KS_LIT(d, ",\"error\":");
                d    = fmt_u64(d, e->error);
                d    = KS_LIT(d, ",\"bytes\":");
                d    = fmt_u64(d, e->bytes);
                *d++ = '}';
                o->n += (size_t)(d - b);
        }
        PUT_LIT(o, "]}}");
}

/** jansson's dump callback: into the buffer. */
static int put_cb(const char *buffer, size_t size, void *data)
{
        put_mem(data, buffer, size);
        return 0;
}

/**
 * @brief A JSON string's contents and quotes, escaped as jansson's
 *        dump_string() does without JSON_ENSURE_ASCII / JSON_ESCAPE_SLASH:
 *        '"', '\\' and control characters (< 0x20) escaped, everything
 *        else (UTF-8, validated by jansson when the string was made)
 *        copied as it is.
 */
static void put_string(ks_jout_t *o, const char *s, size_t n)
{
        size_t i = 0;

        PUT_LIT(o, "\"");
        while (i < n) {
                size_t start = i;
                while (i < n && (unsigned char)s[i] >= 0x20 && s[i] != '"' &&
                       s[i] != '\\')
                        i++;
                put_mem(o, s + start, i - start);
                if (i < n) {
                        unsigned char c = (unsigned char)s[i++];
                        char         *d = jout_room(o, 6);
                        switch (c) {
                        case '"':
                                KS_LIT(d, "\\\"");
                                o->n += 2;
                                break;
                        case '\\':
                                KS_LIT(d, "\\\\");
                                o->n += 2;
                                break;
                        case '\b':
                                KS_LIT(d, "\\b");
                                o->n += 2;
                                break;
                        case '\f':
                                KS_LIT(d, "\\f");
                                o->n += 2;
                                break;
                        case '\n':
                                KS_LIT(d, "\\n");
                                o->n += 2;
                                break;
                        case '\r':
                                KS_LIT(d, "\\r");
                                o->n += 2;
                                break;
                        case '\t':
                                KS_LIT(d, "\\t");
                                o->n += 2;
                                break;
                        default: /* as jansson: "\\u%04X" */
                                d    = KS_LIT(d, "\\u00");
                                d[0] = "0123456789ABCDEF"[c >> 4];
                                d[1] = "0123456789ABCDEF"[c & 15];
                                o->n += 6;
                                break;
                        }
                }
        }
        PUT_LIT(o, "\"");
}

/** Nesting put_json() follows at most (a report's is < 10 deep). */
#define KS_JOUT_DEPTH_MAX 64

/**
 * @brief A value built by jansson, compact, in the members' order: the
 *        bytes json_dump_callback(JSON_COMPACT | JSON_PRESERVE_ORDER |
 *        JSON_ENCODE_ANY) gives, formatted here (jansson's dumper makes a
 *        callback per token and formats integers with snprintf: ~40 % of
 *        a topic's writing time, bench/ksb_report). Reals are still
 *        formatted by jansson itself, so that their digits are its own
 *        whatever its version.
 */
static void put_json_depth(ks_jout_t *o, const json_t *v, int depth)
{
        if (depth > KS_JOUT_DEPTH_MAX) {
                o->failed = 1;
                return;
        }
        switch (json_typeof(v)) {
        case JSON_OBJECT: {
                void *it    = json_object_iter((json_t *)v);
                int   first = 1;
                PUT_LIT(o, "{");
                for (; it; it = json_object_iter_next((json_t *)v, it)) {
                        if (!first)
                                PUT_LIT(o, ",");
                        first = 0;
                        put_string(o, json_object_iter_key(it),
                                   json_object_iter_key_len(it));
                        PUT_LIT(o, ":");
                        put_json_depth(o, json_object_iter_value(it),
                                       depth + 1);
                }
                PUT_LIT(o, "}");
                break;
        }
        case JSON_ARRAY: {
                size_t i, n = json_array_size(v);
                PUT_LIT(o, "[");
                for (i = 0; i < n; i++) {
                        if (i)
                                PUT_LIT(o, ",");
                        put_json_depth(o, json_array_get(v, i), depth + 1);
                }
                PUT_LIT(o, "]");
                break;
        }
        case JSON_STRING:
                put_string(o, json_string_value(v), json_string_length(v));
                break;
        case JSON_INTEGER: {
                char *d = jout_room(o, 24);
                o->n +=
                    (size_t)(fmt_i64(d, (int64_t)json_integer_value(v)) - d);
                break;
        }
        case JSON_TRUE:
                PUT_LIT(o, "true");
                break;
        case JSON_FALSE:
                PUT_LIT(o, "false");
                break;
        case JSON_NULL:
                PUT_LIT(o, "null");
                break;
        default: /* JSON_REAL */
                if (json_dump_callback(v, put_cb, o,
                                       JSON_COMPACT | JSON_ENCODE_ANY))
                        o->failed = 1;
                break;
        }
}

/** @brief A value built by jansson, compact (see put_json_depth()). */
static void put_json(ks_jout_t *o, const json_t *v)
{
        if (!v)
                o->failed = 1;
        else
                put_json_depth(o, v, 0);
}

/** @brief "key": (@p key is checked as jansson checks a string: a key
 *         that is not UTF-8 fails the write). */
static void put_key(ks_jout_t *o, const char *key, int first)
{
        size_t i, n = strlen(key);

        if (!first)
                PUT_LIT(o, ",");
        for (i = 0; i < n && (unsigned char)key[i] < 0x80; i++)
                ;
        if (i < n) { /* not ASCII: let jansson validate it */
                json_t *k = json_stringn(key, n);
                o->failed |= !k;
                json_decref(k);
        }
        put_string(o, key, n);
        PUT_LIT(o, ":");
}

/** @brief A kept flow matrix as ks_report_flow_set() writes it: the value
 *         of `flow` (the dense rows, or null followed by
 *         `,"flow_nonzero":[[from,to,messages],...]`). */
static void put_flow(ks_jout_t *o, const uint64_t *flow, int32_t rows,
                     int32_t cols)
{
        int sparse = ks_report_flow_sparse(
            ks_report_flow_nonzero(flow, rows, cols), rows, cols);
        int32_t i, j;
        size_t  n = 0;

        if (sparse)
                PUT_LIT(o, "null,\"flow_nonzero\":[");
        else
                PUT_LIT(o, "[");
        for (i = 0; i < rows; i++) {
                const uint64_t *row = flow + (size_t)i * cols;
                if (!sparse && i)
                        PUT_LIT(o, ",[");
                else if (!sparse)
                        PUT_LIT(o, "[");
                for (j = 0; j < cols; j++) {
                        char *d, *b;
                        if (sparse && !row[j])
                                continue;
                        d = b = jout_room(o, 64);
                        if (sparse) {
                                if (n++)
                                        *d++ = ',';
                                *d++ = '[';
                                d    = fmt_u64(d, (uint64_t)i);
                                *d++ = ',';
                                d    = fmt_u64(d, (uint64_t)j);
                                *d++ = ',';
                                d    = fmt_u64(d, row[j]);
                                *d++ = ']';
                        } else {
                                if (j)
                                        *d++ = ',';
                                d = fmt_u64(d, row[j]);
                        }
                        o->n += (size_t)(d - b);
                }
                if (!sparse)
                        PUT_LIT(o, "]");
        }
        PUT_LIT(o, "]");
}

/** @brief An object of @p v's members, the null "partitions" member
 *         replaced by @p l's per-partition array. */
static void put_with_partitions(ks_jout_t *o, const json_t *v,
                                const ks_load_t *l, int32_t n,
                                const uint64_t *flow, int32_t flow_rows)
{
        const char *key;
        json_t     *m;
        int         first = 1;

        PUT_LIT(o, "{");
        json_object_foreach((json_t *)v, key, m)
        {
                put_key(o, key, first);
                first = 0;
                if (!strcmp(key, "partitions") && json_is_null(m) && l)
                        put_partitions(o, l, n);
                else if (!strcmp(key, "flow") && json_is_null(m) && flow)
                        put_flow(o, flow, flow_rows, n);
                else
                        put_json(o, m);
        }
        PUT_LIT(o, "}");
}

/** @returns the snapshot's proposal that @p o (a proposals[] element)
 *           describes, by its partition count (unique per topic), or
 *           NULL: its placeholder then stays null. */
static const ks_proposal_t *proposal_of(const ks_topic_snapshot_t *s,
                                        const json_t              *o)
{
        json_int_t n =
            json_integer_value(json_object_get(o, "partition_count"));
        size_t i;

        /* an unpredictable proposal has no figures (ks_report.c) */
        if (json_is_false(json_object_get(o, "predictable")))
                return NULL;
        for (i = 0; i < s->proposal_cnt; i++)
                if (s->proposals[i].partition_count == n)
                        return &s->proposals[i];
        return NULL;
}

int ks_report_writer_topic_snapshot(ks_report_writer_t        *w,
                                    const ks_topic_snapshot_t *s,
                                    const json_t              *topic)
{
        ks_jout_t   o;
        const char *key;
        json_t     *m;
        int         first = 1;

        if (w->failed)
                return -1;
        errno    = 0;
        o.fd     = fileno(w->fp);
        o.failed = fflush(w->fp) != 0; /* the head, before this topic */
        o.n      = 0;
        put_key(&o, s->name, !w->topics);
        PUT_LIT(&o, "{");
        json_object_foreach((json_t *)topic, key, m)
        {
                put_key(&o, key, first);
                first = 0;
                if (!strcmp(key, "current") && json_is_object(m)) {
                        put_with_partitions(&o, m, s->current,
                                            s->partition_count, NULL, 0);
                } else if (!strcmp(key, "proposals") && json_is_array(m)) {
                        size_t i;
                        PUT_LIT(&o, "[");
                        for (i = 0; i < json_array_size(m); i++) {
                                const ks_proposal_t *p =
                                    proposal_of(s, json_array_get(m, i));
                                if (i)
                                        PUT_LIT(&o, ",");
                                put_with_partitions(&o, json_array_get(m, i),
                                                    p ? p->partitions : NULL,
                                                    p ? p->partition_count : 0,
                                                    p ? p->flow : NULL,
                                                    s->partition_count);
                        }
                        PUT_LIT(&o, "]");
                } else if (!strcmp(key, "merge") && json_is_null(m)) {
                        put_merge(&o, s);
                } else {
                        put_json(&o, m);
                }
        }
        PUT_LIT(&o, "}");
        jout_flush(&o);
        if (o.failed) {
                if (!w->failed)
                        snprintf(w->errstr, sizeof(w->errstr),
                                 "cannot write %s: %s", w->tmp,
                                 strerror(errno ? errno : EIO));
                w->failed = 1;
                return -1;
        }
        w->messages += s->c.total.messages;
        w->topics++;
        ks_report_writer_kick(w);
        return 0;
}
