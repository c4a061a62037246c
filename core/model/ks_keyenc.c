/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_keyenc.c
 * @brief Key encoding classifier and logical values (see ks_keyenc.h for
 *        the encodings, the precedence rules and why).
 *
 * Sources (read, not copied):
 *  - UTF-8: RFC 3629 §4 and The Unicode Standard 15.0 §3.9 Table 3-7
 *    (well-formed byte sequences: no overlong forms, no surrogates, nothing
 *    above U+10FFFF). Control characters: Unicode general category Cc.
 *  - JSON strings: RFC 8259 §7 (escapes, \u surrogate pairs).
 *  - Java serializers: Apache Kafka 4.1
 *    `clients/.../common/serialization/{String,Integer,Long,UUID}Serializer`
 *    (UTF-8; 4 and 8 bytes big-endian; `UUID.toString()` as UTF-8).
 *  - Confluent wire format: Confluent Schema Registry docs, "Wire format"
 *    (magic byte 0, 4-byte big-endian schema id, then the payload).
 *  - Avro: Apache Avro 1.11 specification, "Binary Encoding" (int and long
 *    are zigzag varints, little-endian base-128; a string is a long length
 *    followed by that many UTF-8 bytes).
 *  - UUID layout: RFC 9562 §4.1 (variant bits 10x in octet 8) and §4.2
 *    (version in the high nibble of octet 6).
 */
#include "ks_keyenc.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/** Length of the 8-4-4-4-12 UUID text form. */
#define KS_KEYENC_UUID_TEXT_LEN 36

/** Length of the Confluent header: magic byte and 4-byte schema id. */
#define KS_KEYENC_SR_HEADER 5

static const char *const ks_keyenc_names[KS_KEYENC__CNT] = {
    [KS_KEYENC_NULL]            = "null",
    [KS_KEYENC_EMPTY]           = "empty",
    [KS_KEYENC_DECIMAL]         = "decimal",
    [KS_KEYENC_TEXT]            = "text",
    [KS_KEYENC_JSON_STRING]     = "json_string",
    [KS_KEYENC_INT32_BE]        = "int32_be",
    [KS_KEYENC_INT64_BE]        = "int64_be",
    [KS_KEYENC_UUID_BINARY]     = "uuid_binary",
    [KS_KEYENC_SCHEMA_REGISTRY] = "schema_registry",
    [KS_KEYENC_BINARY]          = "binary",
};

const char *ks_keyenc_name(ks_keyenc_t enc)
{
        if ((unsigned)enc >= KS_KEYENC__CNT)
                return "?";
        return ks_keyenc_names[enc];
}

int ks_keyenc_from_name(const char *name, ks_keyenc_t *out)
{
        int i;

        for (i = 0; name && i < KS_KEYENC__CNT; i++) {
                if (!strcmp(name, ks_keyenc_names[i])) {
                        *out = (ks_keyenc_t)i;
                        return 0;
                }
        }
        return -1;
}

/**
 * @brief Scans @p len bytes as UTF-8 (Unicode Table 3-7).
 * @returns -1 if not well-formed, 1 if well-formed but holding a control
 *          character (U+0000–U+001F, U+007F–U+009F), 0 for clean text.
 */
static int ks_keyenc_utf8_scan(const unsigned char *p, size_t len)
{
        size_t i  = 0;
        int    cc = 0;

        while (i < len) {
                unsigned char c  = p[i];
                unsigned char lo = 0x80, hi = 0xbf; /* 2nd byte range */
                size_t        n, k;

                if (c < 0x80) {
                        cc |= c < 0x20 || c == 0x7f;
                        i++;
                        continue;
                }
                if (c >= 0xc2 && c <= 0xdf) {
                        n = 1;
                } else if (c >= 0xe0 && c <= 0xef) {
                        n  = 2;
                        lo = c == 0xe0 ? 0xa0 : 0x80; /* no overlong */
                        hi = c == 0xed ? 0x9f : 0xbf; /* no surrogates */
                } else if (c >= 0xf0 && c <= 0xf4) {
                        n  = 3;
                        lo = c == 0xf0 ? 0x90 : 0x80; /* no overlong */
                        hi = c == 0xf4 ? 0x8f : 0xbf; /* <= U+10FFFF */
                } else {
                        return -1; /* 0x80-0xc1, 0xf5-0xff */
                }
                if (len - i <= n || p[i + 1] < lo || p[i + 1] > hi)
                        return -1;
                for (k = 2; k <= n; k++)
                        if (p[i + k] < 0x80 || p[i + k] > 0xbf)
                                return -1;
                cc |= c == 0xc2 && p[i + 1] <= 0x9f; /* C1 controls */
                i += n + 1;
        }
        return cc;
}

/**
 * @brief Is @p p exactly what Java's `Long.toString()` writes: optional
 *        '-', "0" or digits without a leading zero, within int64 range?
 * @returns 1 or 0.
 */
static int ks_keyenc_is_decimal(const unsigned char *p, size_t len)
{
        int    neg = len > 0 && p[0] == '-';
        size_t i, digits = len - (size_t)neg;

        if (digits == 0 || digits > 19)
                return 0;
        for (i = (size_t)neg; i < len; i++)
                if (p[i] < '0' || p[i] > '9')
                        return 0;
        if (p[neg] == '0')
                return digits == 1 && !neg; /* "0", never "-0" or "007" */
        if (digits == 19)
                return memcmp(p + neg,
                              neg ? "9223372036854775808"
                                  : "9223372036854775807",
                              19) <= 0;
        return 1;
}

/**
 * @brief Reads 4 hex digits.
 * @returns the value 0..0xffff, or -1 if any is not a hex digit.
 */
static long ks_keyenc_hex4(const unsigned char *p)
{
        long v = 0;
        int  i;

        for (i = 0; i < 4; i++) {
                unsigned char c = p[i];

                v <<= 4;
                if (c >= '0' && c <= '9')
                        v |= c - '0';
                else if (c >= 'a' && c <= 'f')
                        v |= c - 'a' + 10;
                else if (c >= 'A' && c <= 'F')
                        v |= c - 'A' + 10;
                else
                        return -1;
        }
        return v;
}

/**
 * @brief Reads a JSON \u escape at @p p (which points at the 'u'),
 *        joining a surrogate pair into one code point.
 * @param avail bytes from @p p up to the closing quote.
 * @returns the code point, or -1 (bad hex digits, lone surrogate); sets
 *          *used to the bytes read after the backslash (5 or 11).
 */
static long ks_keyenc_json_u(const unsigned char *p, size_t avail, size_t *used)
{
        long hi, lo;

        if (avail < 5 || (hi = ks_keyenc_hex4(p + 1)) < 0)
                return -1;
        *used = 5;
        if (hi >= 0xdc00 && hi <= 0xdfff)
                return -1; /* low surrogate first */
        if (hi < 0xd800 || hi > 0xdbff)
                return hi;
        if (avail < 11 || p[5] != '\\' || p[6] != 'u')
                return -1;
        lo = ks_keyenc_hex4(p + 7);
        if (lo < 0xdc00 || lo > 0xdfff)
                return -1;
        *used = 11;
        return 0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00);
}

/**
 * @brief Encodes code point @p cp (<= 0x10FFFF, not a surrogate) as UTF-8
 *        (RFC 3629 §3) into @p buf.
 * @returns the bytes written, 1 to 4.
 */
static size_t ks_keyenc_utf8_put(long cp, unsigned char *buf)
{
        if (cp < 0x80) {
                buf[0] = (unsigned char)cp;
                return 1;
        }
        if (cp < 0x800) {
                buf[0] = (unsigned char)(0xc0 | cp >> 6);
                buf[1] = (unsigned char)(0x80 | (cp & 0x3f));
                return 2;
        }
        if (cp < 0x10000) {
                buf[0] = (unsigned char)(0xe0 | cp >> 12);
                buf[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
                buf[2] = (unsigned char)(0x80 | (cp & 0x3f));
                return 3;
        }
        buf[0] = (unsigned char)(0xf0 | cp >> 18);
        buf[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
        buf[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
        buf[3] = (unsigned char)(0x80 | (cp & 0x3f));
        return 4;
}

/**
 * @brief Validates an RFC 8259 string literal and decodes it to UTF-8.
 *        Raw (unescaped) bytes are copied as they are: the caller checks
 *        that they are UTF-8.
 * @param out receives the decoded bytes (not NUL-terminated) when non-NULL;
 *        it must hold @p len bytes: decoding never grows the text (an
 *        escape of 2, 6 or 12 bytes becomes 1 to 4 bytes).
 * @returns the decoded length, or -1 if @p p is not a string literal or
 *          holds a lone surrogate.
 */
static long ks_keyenc_json_decode(const unsigned char *p, size_t len,
                                  unsigned char *out)
{
        static const char esc_in[]  = "\"\\/bfnrt";
        static const char esc_out[] = "\"\\/\b\f\n\r\t";
        size_t            i, end, n = 0;

        if (len < 2 || p[0] != '"' || p[len - 1] != '"')
                return -1;
        end = len - 1; /* the closing quote */
        for (i = 1; i < end; i++) {
                unsigned char buf[4];
                size_t        bn = 1, used;
                const char   *e;
                long          cp;

                if (p[i] == '"' || p[i] < 0x20)
                        return -1; /* must be escaped */
                buf[0] = p[i];
                if (p[i] == '\\') {
                        if (++i >= end)
                                return -1;
                        if (p[i] == 'u') {
                                cp = ks_keyenc_json_u(p + i, end - i, &used);
                                if (cp < 0)
                                        return -1;
                                bn = ks_keyenc_utf8_put(cp, buf);
                                i += used - 1;
                        } else {
                                e = memchr(esc_in, p[i], sizeof(esc_in) - 1);
                                if (!e)
                                        return -1;
                                buf[0] = (unsigned char)esc_out[e - esc_in];
                        }
                }
                if (out)
                        memcpy(out + n, buf, bn);
                n += bn;
        }
        return (long)n;
}

/**
 * @brief Reads one Avro zigzag varint (at most 10 bytes, no overlong
 *        encoding: an encoder never ends a varint with a 0x00 byte).
 * @returns the bytes read, 0 if @p p does not start with one; sets *neg
 *          and *mag (the value is -mag when *neg, so INT64_MIN fits).
 */
static size_t ks_keyenc_avro_varint(const unsigned char *p, size_t len,
                                    int *neg, uint64_t *mag)
{
        uint64_t u = 0;
        size_t   i;

        for (i = 0; i < len && i < 10; i++) {
                if (i == 9 && p[i] > 1)
                        return 0; /* more than 64 bits */
                u |= (uint64_t)(p[i] & 0x7f) << (7 * i);
                if (!(p[i] & 0x80)) {
                        if (i > 0 && p[i] == 0)
                                return 0;
                        *neg = (int)(u & 1);
                        *mag = *neg ? (u >> 1) + 1 : u >> 1;
                        return i + 1;
                }
        }
        return 0;
}

/**
 * @brief Writes a signed integer given as sign and magnitude.
 * @returns 0, or -1 if @p outsz is too small.
 */
static int ks_keyenc_put_int(int neg, uint64_t mag, char *out, size_t outsz)
{
        int r = snprintf(out, outsz, "%s%" PRIu64, neg ? "-" : "", mag);

        return r < 0 || (size_t)r >= outsz ? -1 : 0;
}

/**
 * @brief Copies @p n bytes of text as a C string, lower-casing it if it
 *        has the 8-4-4-4-12 UUID shape (as `UUID.toString()` writes it).
 * @returns 0, or -1 if the text is empty, holds a NUL or does not fit.
 */
static int ks_keyenc_put_text(const unsigned char *p, size_t n, char *out,
                              size_t outsz)
{
        size_t i;
        int    uuid = n == KS_KEYENC_UUID_TEXT_LEN;

        if (n == 0 || n >= outsz || memchr(p, 0, n))
                return -1;
        for (i = 0; uuid && i < n; i++) {
                int dash = i == 8 || i == 13 || i == 18 || i == 23;

                if (dash ? p[i] != '-'
                         : !((p[i] >= '0' && p[i] <= '9') ||
                             ((p[i] | 0x20) >= 'a' && (p[i] | 0x20) <= 'f')))
                        uuid = 0;
        }
        for (i = 0; i < n; i++)
                out[i] = (char)(uuid && p[i] >= 'A' && p[i] <= 'F' ? p[i] | 0x20
                                                                   : p[i]);
        out[n] = '\0';
        return 0;
}

/**
 * @brief Decodes an Avro payload as one long, or else one string, that
 *        uses exactly @p len bytes (see ks_keyenc.h).
 * @param out receives the value; NULL only checks that there is one.
 * @returns 0, or -1 if there is no such value (or it does not fit).
 */
static int ks_keyenc_avro_value(const unsigned char *p, size_t len, char *out,
                                size_t outsz)
{
        int      neg;
        uint64_t mag;
        size_t   n = ks_keyenc_avro_varint(p, len, &neg, &mag);

        if (n == 0)
                return -1;
        if (n == len) /* a single int or long */
                return out ? ks_keyenc_put_int(neg, mag, out, outsz) : 0;
        if (neg || mag != len - n || ks_keyenc_utf8_scan(p + n, len - n) != 0)
                return -1; /* not a string filling the payload */
        /* Clean UTF-8 holds no NUL and the length is >= 1: a value. */
        return out ? ks_keyenc_put_text(p + n, len - n, out, outsz) : 0;
}

/**
 * @brief The schema id of a key framed as Confluent's wire format.
 * @returns 1..2^31-1, or -1 if @p p cannot be such a key (rule 7).
 */
static int32_t ks_keyenc_sr_id(const unsigned char *p, size_t len)
{
        uint32_t id;

        if (len < KS_KEYENC_SR_HEADER + 1 || p[0] != 0)
                return -1;
        id = (uint32_t)p[1] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 8 |
             (uint32_t)p[4];
        return id == 0 || id > INT32_MAX ? -1 : (int32_t)id;
}

/** @returns 1 if 16 bytes carry RFC 9562's version and variant bits. */
static int ks_keyenc_rfc_uuid(const unsigned char *p)
{
        unsigned version = p[6] >> 4;

        return version >= 1 && version <= 8 && (p[8] & 0xc0) == 0x80;
}

/** @returns whether word @p w's 8 bytes are all ASCII digits: a digit
 *           has the high nibble 3, and so has it plus 6 ('9' + 6 is '?',
 *           ':' + 6 is '@'). A byte's carry reaches the next byte only from
 *           0xfa and up, a byte that fails itself. */
static inline int ks_keyenc_digits8(uint64_t w)
{
        const uint64_t hi = 0xf0f0f0f0f0f0f0f0ULL;

        return ((w & hi) | ((w + 0x0606060606060606ULL) & hi) >> 4) ==
               0x3333333333333333ULL;
}

/** @returns ks_keyenc_digits8() for 4 bytes. */
static inline int ks_keyenc_digits4(uint32_t w)
{
        const uint32_t hi = 0xf0f0f0f0u;

        return ((w & hi) | ((w + 0x06060606u) & hi) >> 4) == 0x33333333u;
}

/** @returns whether the @p len (1..24) bytes at @p p are all ASCII digits,
 *           read as words that stay within them: a 9-byte MMSI is two
 *           overlapping 8-byte loads, not nine compared bytes (a tenth of
 *           a new key's instructions on the drainer, bench/icount). */
static inline int ks_keyenc_all_digits(const unsigned char *p, size_t len)
{
        uint64_t a, b, c;
        uint32_t x, y;

        if (len >= 8) {
                memcpy(&a, p, 8);
                memcpy(&b, p + len - 8, 8);
                if (len > 16) {
                        memcpy(&c, p + 8, 8);
                        if (!ks_keyenc_digits8(c))
                                return 0;
                }
                return ks_keyenc_digits8(a) && ks_keyenc_digits8(b);
        }
        if (len >= 4) {
                memcpy(&x, p, 4);
                memcpy(&y, p + len - 4, 4);
                return ks_keyenc_digits4(x) && ks_keyenc_digits4(y);
        }
        for (; len; len--, p++)
                if (*p < '0' || *p > '9')
                        return 0;
        return 1;
}

ks_keyenc_t ks_keyenc_classify(const void *key, size_t len)
{
        const unsigned char *p = key;
        int                  sr;

        if (!p)
                return KS_KEYENC_NULL;
        if (len == 0)
                return KS_KEYENC_EMPTY;
        if (len <= 18 && (p[0] != '0' || len == 1)) {
                /* the common case first: up to 18 ASCII digits without a
                 * leading zero are canonical decimal text (rule 2, below,
                 * says the same after a UTF-8 scan) */
                if (ks_keyenc_all_digits(p, len))
                        return KS_KEYENC_DECIMAL;
        }
        if (ks_keyenc_utf8_scan(p, len) == 0) { /* rule 2 */
                if (ks_keyenc_is_decimal(p, len))
                        return KS_KEYENC_DECIMAL;
                if (ks_keyenc_json_decode(p, len, NULL) >= 0)
                        return KS_KEYENC_JSON_STRING;
                return KS_KEYENC_TEXT;
        }
        if (len == 4)
                return KS_KEYENC_INT32_BE;
        if (len == 8)
                return KS_KEYENC_INT64_BE;
        sr = ks_keyenc_sr_id(p, len) > 0;
        if (len == 16)
                return sr && (!ks_keyenc_rfc_uuid(p) ||
                              ks_keyenc_avro_value(p + KS_KEYENC_SR_HEADER,
                                                   len - KS_KEYENC_SR_HEADER,
                                                   NULL, 0) == 0)
                           ? KS_KEYENC_SCHEMA_REGISTRY
                           : KS_KEYENC_UUID_BINARY;
        return sr ? KS_KEYENC_SCHEMA_REGISTRY : KS_KEYENC_BINARY;
}

int32_t ks_keyenc_schema_id(const void *key, size_t len)
{
        if (ks_keyenc_classify(key, len) != KS_KEYENC_SCHEMA_REGISTRY)
                return -1;
        return ks_keyenc_sr_id(key, len);
}

/**
 * @brief Reads @p n (4 or 8) big-endian bytes as a two's complement int.
 * @returns 0 after writing its decimal form, or -1 if it does not fit.
 */
static int ks_keyenc_put_be(const unsigned char *p, size_t n, char *out,
                            size_t outsz)
{
        uint64_t u = 0, sign = (uint64_t)1 << (8 * n - 1);
        size_t   i;

        for (i = 0; i < n; i++)
                u = u << 8 | p[i];
        if (u & sign) /* magnitude of the negative value: 2^bits - u */
                return ks_keyenc_put_int(1, (sign << 1) - u, out, outsz);
        return ks_keyenc_put_int(0, u, out, outsz);
}

int ks_keyenc_logical(const void *key, size_t len, ks_keyenc_t enc, char *out,
                      size_t outsz)
{
        const unsigned char *p = key;
        unsigned char        json[256], *buf;
        long                 n;
        int                  r = -1;

        if (!out || outsz == 0)
                return -1;
        out[0] = '\0';
        if (!p || len == 0)
                return -1;

        switch (enc) {
        case KS_KEYENC_DECIMAL:
        case KS_KEYENC_TEXT:
                if (ks_keyenc_utf8_scan(p, len) == 0)
                        r = ks_keyenc_put_text(p, len, out, outsz);
                break;
        case KS_KEYENC_JSON_STRING:
                /* Decoded text is never longer than the literal; use the
                 * caller's buffer when it is big enough, else a local one. */
                if (ks_keyenc_utf8_scan(p, len) < 0)
                        break;
                buf = len <= outsz          ? (unsigned char *)out
                      : len <= sizeof(json) ? json
                                            : NULL;
                if (!buf)
                        break;
                n = ks_keyenc_json_decode(p, len, buf);
                if (n >= 0) /* in place when buf == out: same offsets */
                        r = ks_keyenc_put_text(buf, (size_t)n, out, outsz);
                break;
        case KS_KEYENC_INT32_BE:
                if (len == 4)
                        r = ks_keyenc_put_be(p, 4, out, outsz);
                break;
        case KS_KEYENC_INT64_BE:
                if (len == 8)
                        r = ks_keyenc_put_be(p, 8, out, outsz);
                break;
        case KS_KEYENC_UUID_BINARY:
                if (len == 16 && outsz > KS_KEYENC_UUID_TEXT_LEN) {
                        static const char hex[] = "0123456789abcdef";
                        size_t            i, o = 0;

                        for (i = 0; i < 16; i++) {
                                if (i == 4 || i == 6 || i == 8 || i == 10)
                                        out[o++] = '-';
                                out[o++] = hex[p[i] >> 4];
                                out[o++] = hex[p[i] & 0x0f];
                        }
                        out[o] = '\0';
                        r      = 0;
                }
                break;
        case KS_KEYENC_SCHEMA_REGISTRY:
                if (len > KS_KEYENC_SR_HEADER && p[0] == 0)
                        r = ks_keyenc_avro_value(p + KS_KEYENC_SR_HEADER,
                                                 len - KS_KEYENC_SR_HEADER, out,
                                                 outsz);
                break;
        default: /* null, empty, binary: no logical value */
                break;
        }
        if (r != 0)
                out[0] = '\0';
        return r;
}
