/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_report_jout.c
 * @brief Buffered JSON output (ks_report_jout.h): the writes, the digit
 *        tables, strings and any jansson value in json_dumps()'s compact
 *        form.
 */
#include "ks_report_jout.h"

#include <errno.h>
#include <stdio.h>
#include <unistd.h>

void ks_jout_flush(ks_jout_t *o)
{
        size_t done = 0;

        if (o->keep && o->n > o->keep_at) /* ENOMEM: the copy says so */
                ks_report_text_append(o->keep, o->buf + o->keep_at,
                                      o->n - o->keep_at);
        o->keep_at = 0;

        while (!o->failed && done < o->n) {
                ssize_t r = write(o->fd, o->buf + done, o->n - done);
                if (r > 0)
                        done += (size_t)r;
                else if (r == 0 || errno != EINTR)
                        o->failed = 1;
        }
        o->n = 0;
}

void ks_jout_put_mem(ks_jout_t *o, const char *s, size_t n)
{
        while (n) {
                size_t k = n < sizeof(o->buf) ? n : sizeof(o->buf);
                memcpy(jout_room(o, k), s, k);
                o->n += k;
                s += k;
                n -= k;
        }
}

/** "00" .. "99": two decimal digits per lookup. */
const char ks_digits2[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536"
    "37383940414243444546474849505152535455565758596061626364656667686970717273"
    "7475767778798081828384858687888990919293949596979899";

void ks_jout_put_u64(ks_jout_t *o, uint64_t v)
{
        char *d = jout_room(o, 20);

        o->n += (size_t)(fmt_u64(d, v) - d);
}

/** @brief @p n bytes as lower-case hex, without quotes. */
void ks_jout_put_hex(ks_jout_t *o, const uint8_t *b, size_t n)
{
        while (n) {
                size_t k = n < sizeof(o->buf) / 4 ? n : sizeof(o->buf) / 4;
                char  *d = jout_room(o, 2 * k);
                ks_hex_put(d, b, k);
                o->n += 2 * k;
                b += k;
                n -= k;
        }
}

/** jansson's dump callback: into the buffer. */
static int put_cb(const char *buffer, size_t size, void *data)
{
        ks_jout_put_mem(data, buffer, size);
        return 0;
}

/**
 * @brief A JSON string's contents and quotes, escaped as jansson's
 *        dump_string() does without JSON_ENSURE_ASCII / JSON_ESCAPE_SLASH:
 *        '"', '\\' and control characters (< 0x20) escaped, everything
 *        else (UTF-8, validated by jansson when the string was made)
 *        copied as it is.
 */
void ks_jout_put_string(ks_jout_t *o, const char *s, size_t n)
{
        size_t i = 0;

        PUT_LIT(o, "\"");
        while (i < n) {
                size_t start = i;
                while (i < n && (unsigned char)s[i] >= 0x20 && s[i] != '"' &&
                       s[i] != '\\')
                        i++;
                ks_jout_put_mem(o, s + start, i - start);
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

/** Nesting ks_jout_put_json() follows at most (a report's is < 10 deep). */
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
                        ks_jout_put_string(o, json_object_iter_key(it),
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
                ks_jout_put_string(o, json_string_value(v),
                                   json_string_length(v));
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
void ks_jout_put_json(ks_jout_t *o, const json_t *v)
{
        if (!v)
                o->failed = 1;
        else
                put_json_depth(o, v, 0);
}

/** @brief "key": (@p key is checked as jansson checks a string: a key
 *         that is not UTF-8 fails the write). */
void ks_jout_put_key(ks_jout_t *o, const char *key, int first)
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
        ks_jout_put_string(o, key, n);
        PUT_LIT(o, ":");
}
