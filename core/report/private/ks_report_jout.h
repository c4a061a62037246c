/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_report_jout.h
 * @brief Buffered JSON output for the bulk of a report (ks_report_bulk.c):
 *        numbers, hex and strings formatted straight into a 64 KiB
 *        buffer written in large write()s. Private to core/report/.
 */
#ifndef KS_REPORT_JOUT_H
#define KS_REPORT_JOUT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <jansson.h>

#include "ks_hex.h"
#include "ks_report.h"

/** Output buffered here, then written to the report file's descriptor
 *  in large write()s: no stdio call per number, and no second copy
 *  through stdio's buffer (28 MB per report of 50 topics x 1,000
 *  partitions: ~4 % of its time, bench/ksb_report). The stream is
 *  flushed before a topic starts, and left empty after it. */
typedef struct ks_jout {
        int    fd;
        int    failed;
        size_t n;
        /** when keep is not NULL, what is written from buf[keep_at] on is
         *  also copied there (ks_report_text_t, ks_report.h) */
        ks_report_text_t *keep;
        size_t            keep_at;
        char              buf[65536];
} ks_jout_t;

/** Room every put_*() below may take without asking: the longest element
 *  written with one jout_room() (a hot-key counter with a 128-byte key,
 *  in hex, is < 400 bytes). */
#define KS_JOUT_ELEM_MAX 512

/** @brief Writes what is buffered to the descriptor (ks_report_jout.c). */
void ks_jout_flush(ks_jout_t *o);

/** "00" .. "99": two digits per lookup (ks_report_jout.c); hex pairs are
 *  ks_hex.h's ks_hex_pairs. */
extern const char ks_digits2[201];

/** @brief Makes room for @p n bytes (n <= sizeof(buf)). @returns where
 *         they go: the caller advances o->n by what it wrote. */
static inline char *jout_room(ks_jout_t *o, size_t n)
{
        if (o->n + n > sizeof(o->buf))
                ks_jout_flush(o);
        return o->buf + o->n;
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

/** @brief Writes a 64-bit hash as 16 hex digits at @p d, as "%016llx".
 *  @returns the end. */
static inline char *fmt_hash64(char *d, uint64_t h)
{
        int i;

        for (i = 7; i >= 0; i--, h >>= 8)
                memcpy(d + 2 * i, ks_hex_pairs + 2 * (h & 0xff), 2);
        return d + 16;
}

/** @brief Appends @p n bytes. */
void ks_jout_put_mem(ks_jout_t *o, const char *s, size_t n);
/** @brief Appends @p v in decimal. */
void ks_jout_put_u64(ks_jout_t *o, uint64_t v);
/** @brief Appends @p n bytes in lower-case hex. */
void ks_jout_put_hex(ks_jout_t *o, const uint8_t *b, size_t n);
/** @brief Appends @p n bytes of UTF-8 as a JSON string, escaped. */
void ks_jout_put_string(ks_jout_t *o, const char *s, size_t n);
/** @brief Appends @p v as JSON, as json_dumps() writes it compactly. */
void ks_jout_put_json(ks_jout_t *o, const json_t *v);
/** @brief Appends an object member's key (after a comma unless
 *         @p first). */
void ks_jout_put_key(ks_jout_t *o, const char *key, int first);

#endif /* KS_REPORT_JOUT_H */
