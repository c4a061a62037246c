/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_pack_read.c
 * @brief Reads the packed sketches of a report's `merge` object
 *        (ks_pack.h), refusing anything the writer would not have written:
 *        a string that is not canonical base64, another layout version or
 *        kind, a length that disagrees with the header, a checksum that
 *        disagrees with the bytes, a payload with more or fewer entries
 *        than the header says, values out of range. Each refusal says what
 *        was found and what was expected, in one line.
 */
#include "ks_pack.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ks_base64.h"
#include "ks_hash.h"

/** A packed string decoded and checked down to its payload. */
typedef struct packed {
        uint8_t       *bytes;   /**< malloc()ed: the whole string decoded */
        const uint8_t *p, *end; /**< the payload not read yet */
        uint32_t       entries;
        uint8_t        form, param;
} packed_t;

static int fail(char *err, size_t errsz, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/** @brief Sets @p err. @returns -1. */
static int fail(char *err, size_t errsz, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(err, errsz, fmt, ap);
        va_end(ap);
        return -1;
}

static uint32_t load_le32(const uint8_t *d)
{
        return (uint32_t)d[0] | (uint32_t)d[1] << 8 | (uint32_t)d[2] << 16 |
               (uint32_t)d[3] << 24;
}

static uint64_t load_le(const uint8_t *d, size_t size)
{
        uint64_t v = 0;

        while (size--)
                v = v << 8 | d[size];
        return v;
}

static const char *kind_name(unsigned kind)
{
        switch (kind) {
        case KS_PACK_HLL:
                return "a HyperLogLog";
        case KS_PACK_KEY_SAMPLE:
                return "a key sample";
        case KS_PACK_HOT_KEYS:
                return "hot-key counters";
        default:
                return "an unknown kind";
        }
}

/**
 * @brief Decodes base64 @p s[len] and checks the header and the checksum
 *        of a string of @p kind. @returns 0 with *pk set (free pk->bytes),
 *        or -1 with @p err set.
 */
static int open_packed(const char *s, size_t len, ks_pack_kind_t kind,
                       packed_t *pk, char *err, size_t errsz)
{
        size_t   bad;
        long     n;
        uint32_t plen, crc, want;

        memset(pk, 0, sizeof(*pk));
        if (!(pk->bytes = malloc(len / 4 * 3 + 1)))
                return fail(err, errsz, "out of memory");
        if ((n = ks_base64_decode(s, len, pk->bytes, &bad)) < 0) {
                if (bad == len)
                        fail(err, errsz,
                             "not base64: %zu characters, not a multiple "
                             "of 4",
                             len);
                else
                        fail(err, errsz,
                             "not base64: character %zu ('%c') is not of "
                             "the alphabet, or padding where none belongs",
                             bad,
                             s[bad] >= 0x20 && s[bad] < 0x7f ? s[bad] : '?');
                goto out;
        }
        if ((size_t)n < KS_PACK_OVERHEAD) {
                fail(err, errsz,
                     "wrong length: %ld bytes, shorter than the %d of a "
                     "header and checksum",
                     n, KS_PACK_OVERHEAD);
                goto out;
        }
        if (pk->bytes[0] != KS_PACK_VERSION) {
                fail(err, errsz,
                     "layout version %u, but this keyshift reads version "
                     "%d (written by another keyshift: read it with the "
                     "keyshift that wrote it)",
                     pk->bytes[0], KS_PACK_VERSION);
                goto out;
        }
        plen = load_le32(pk->bytes + 8);
        if ((uint64_t)n != (uint64_t)plen + KS_PACK_OVERHEAD) {
                fail(err, errsz,
                     "wrong length: %ld bytes, but the header says %" PRIu32
                     " of payload + %d (truncated or joined?)",
                     n, plen, KS_PACK_OVERHEAD);
                goto out;
        }
        crc  = load_le32(pk->bytes + n - 4);
        want = ks_hash_crc32(pk->bytes, (size_t)n - 4);
        if (crc != want) {
                fail(err, errsz,
                     "checksum mismatch: the string says CRC-32 %08" PRIx32
                     ", its bytes give %08" PRIx32 " (corrupted)",
                     crc, want);
                goto out;
        }
        if (pk->bytes[1] != (uint8_t)kind) {
                fail(err, errsz, "holds %s (kind %u), not %s",
                     kind_name(pk->bytes[1]), pk->bytes[1], kind_name(kind));
                goto out;
        }
        pk->form    = pk->bytes[2];
        pk->param   = pk->bytes[3];
        pk->entries = load_le32(pk->bytes + 4);
        pk->p       = pk->bytes + KS_PACK_HEAD;
        pk->end     = pk->p + plen;
        return 0;
out:
        free(pk->bytes);
        pk->bytes = NULL;
        return -1;
}

/** @brief Reads a varint. @returns 0, or -1 when the payload ends in it,
 *         it is longer than 10 bytes, or past 2^63 - 1. */
static int get_varint(packed_t *pk, uint64_t *v)
{
        uint64_t r = 0;
        unsigned shift;

        for (shift = 0; pk->p < pk->end && shift < 70; shift += 7) {
                uint8_t b = *pk->p++;
                if (shift == 63 && b > 0) /* bit 63 and beyond */
                        return -1;
                r |= (uint64_t)(b & 0x7f) << shift;
                if (!(b & 0x80)) {
                        *v = r;
                        return 0;
                }
        }
        return -1;
}

/** @brief Reads @p size little-endian bytes. @returns 0 or -1 (the end). */
static int get_le(packed_t *pk, size_t size, uint64_t *v)
{
        if ((size_t)(pk->end - pk->p) < size)
                return -1;
        *v = load_le(pk->p, size);
        pk->p += size;
        return 0;
}

/** @brief Says why entry @p i could not be read: the payload ended in it
 *         (more entries in the header than in the payload), or a number
 *         in it is not one the writer writes. @returns -1. */
static int entry_unreadable(const packed_t *pk, uint64_t i, char *err,
                            size_t errsz)
{
        if (pk->p >= pk->end)
                return fail(err, errsz,
                            "the payload ends in entry %" PRIu64
                            " of the %" PRIu32
                            " the header says (wrong entry count)",
                            i, pk->entries);
        return fail(err, errsz,
                    "entry %" PRIu64 ": a number past 2^63 - 1, or a varint "
                    "longer than 10 bytes",
                    i);
}

/** @returns 0 when the whole payload was read, else -1 with @p err. */
static int payload_done(const packed_t *pk, char *err, size_t errsz)
{
        if (pk->p == pk->end)
                return 0;
        return fail(err, errsz,
                    "%zu bytes after the %" PRIu32
                    " entries the header says (wrong entry count)",
                    (size_t)(pk->end - pk->p), pk->entries);
}

/** The largest register value of a p = KS_HLL_P HyperLogLog: the leading
 *  zeros of the 64 - p other bits, plus one. */
#define KS_PACK_HLL_MAX (64 - KS_HLL_P + 1)

static int read_hll_dense(packed_t *pk, ks_hll_t *hll, char *err, size_t errsz)
{
        size_t i;

        if (pk->entries != KS_HLL_REGISTERS ||
            (size_t)(pk->end - pk->p) != KS_PACK_HLL_DENSE_BYTES)
                return fail(err, errsz,
                            "dense form: %" PRIu32
                            " registers in %zu bytes, expected %u in %d",
                            pk->entries, (size_t)(pk->end - pk->p),
                            KS_HLL_REGISTERS, KS_PACK_HLL_DENSE_BYTES);
        for (i = 0; i < KS_HLL_REGISTERS; i += 4, pk->p += 3) {
                uint32_t v = (uint32_t)pk->p[0] | (uint32_t)pk->p[1] << 8 |
                             (uint32_t)pk->p[2] << 16;
                int k;
                for (k = 0; k < 4; k++, v >>= 6) {
                        if ((v & 63) > KS_PACK_HLL_MAX)
                                return fail(err, errsz,
                                            "register %zu is %u, above "
                                            "%d",
                                            i + (size_t)k, v & 63,
                                            KS_PACK_HLL_MAX);
                        hll->reg[i + (size_t)k] = (uint8_t)(v & 63);
                }
        }
        return 0;
}

static int read_hll_sparse(packed_t *pk, ks_hll_t *hll, char *err, size_t errsz)
{
        uint64_t at = 0, i, gap, v;

        for (i = 0; i < pk->entries; i++) {
                uint8_t b;
                if (pk->p >= pk->end)
                        return fail(err, errsz,
                                    "sparse form: the payload ends at "
                                    "register entry %" PRIu64 " of %" PRIu32,
                                    i, pk->entries);
                b   = *pk->p++;
                gap = b >> 4;
                v   = b & 15;
                if (gap == 15) { /* a longer gap: 15 + a varint */
                        if (get_varint(pk, &gap) || gap >= KS_HLL_REGISTERS)
                                return fail(err, errsz,
                                            "sparse form: entry %" PRIu64
                                            ": unreadable gap",
                                            i);
                        gap += 15;
                }
                if (!v && get_le(pk, 1, &v))
                        return fail(err, errsz,
                                    "sparse form: entry %" PRIu64
                                    ": the payload ends in its value",
                                    i);
                if (gap >= KS_HLL_REGISTERS || (at += gap) >= KS_HLL_REGISTERS)
                        return fail(err, errsz,
                                    "sparse form: entry %" PRIu64
                                    " is past register %u",
                                    i, KS_HLL_REGISTERS - 1);
                if (v < 1 || v > KS_PACK_HLL_MAX)
                        return fail(err, errsz,
                                    "sparse form: register %" PRIu64
                                    " is %" PRIu64 ", not 1 .. %d",
                                    at, v, KS_PACK_HLL_MAX);
                hll->reg[at++] = (uint8_t)v;
        }
        return payload_done(pk, err, errsz);
}

int ks_unpack_hll(const char *s, size_t len, ks_hll_t *hll,
                  ks_pack_form_t *form, char *err, size_t errsz)
{
        packed_t pk;
        int      r;

        ks_hll_init(hll);
        if (open_packed(s, len, KS_PACK_HLL, &pk, err, errsz))
                return -1;
        if (pk.param != KS_HLL_P)
                r = fail(err, errsz,
                         "HyperLogLog of p = %u, but this keyshift's has "
                         "p = %d",
                         pk.param, KS_HLL_P);
        else if (pk.form == KS_PACK_DENSE)
                r = read_hll_dense(&pk, hll, err, errsz);
        else if (pk.form == KS_PACK_SPARSE)
                r = read_hll_sparse(&pk, hll, err, errsz);
        else
                r = fail(err, errsz,
                         "HyperLogLog form %u: neither 0 (dense) nor 1 "
                         "(sparse)",
                         pk.form);
        if (!r && form)
                *form = (ks_pack_form_t)pk.form;
        if (r)
                ks_hll_init(hll);
        free(pk.bytes);
        return r;
}

/** @returns 0 when @p pk's form and parameter are 0 and its payload can
 *           hold its entries at @p min_bytes each, else -1 with @p err. */
static int list_header(const packed_t *pk, size_t min_bytes, char *err,
                       size_t errsz)
{
        if (pk->form || pk->param)
                return fail(err, errsz,
                            "form %u and parameter %u, expected 0 and 0",
                            pk->form, pk->param);
        if ((uint64_t)pk->entries * min_bytes > (uint64_t)(pk->end - pk->p))
                return fail(err, errsz,
                            "%" PRIu32 " entries cannot fit in %zu bytes "
                            "(wrong entry count)",
                            pk->entries, (size_t)(pk->end - pk->p));
        return 0;
}

int ks_unpack_key_sample(const char *s, size_t len, ks_keysample_entry_t **e,
                         size_t *n, char *err, size_t errsz)
{
        packed_t              pk;
        ks_keysample_entry_t *out = NULL;
        uint64_t              i, v;
        int                   r = -1;

        *e = NULL;
        *n = 0;
        if (open_packed(s, len, KS_PACK_KEY_SAMPLE, &pk, err, errsz))
                return -1;
        /* 8 + 4 + two varints of at least a byte each */
        if (list_header(&pk, 14, err, errsz))
                goto out;
        if (pk.entries && !(out = calloc(pk.entries, sizeof(*out)))) {
                fail(err, errsz, "out of memory");
                goto out;
        }
        for (i = 0; i < pk.entries; i++) {
                if (get_le(&pk, 8, &out[i].hash64) || get_le(&pk, 4, &v) ||
                    get_varint(&pk, &out[i].messages) ||
                    get_varint(&pk, &out[i].bytes)) {
                        entry_unreadable(&pk, i, err, errsz);
                        goto out;
                }
                out[i].phash = (uint32_t)v;
        }
        if (payload_done(&pk, err, errsz))
                goto out;
        *e  = out;
        *n  = pk.entries;
        out = NULL;
        r   = 0;
out:
        free(out);
        free(pk.bytes);
        return r;
}

int ks_unpack_hot_keys(const char *s, size_t len, ks_topk_entry_t **e,
                       size_t *n, char *err, size_t errsz)
{
        packed_t         pk;
        ks_topk_entry_t *out = NULL;
        uint64_t         i, v;
        int              r = -1;

        *e = NULL;
        *n = 0;
        if (open_packed(s, len, KS_PACK_HOT_KEYS, &pk, err, errsz))
                return -1;
        /* a key length, 8 + 4, three varints */
        if (list_header(&pk, 16, err, errsz))
                goto out;
        if (pk.entries && !(out = calloc(pk.entries, sizeof(*out)))) {
                fail(err, errsz, "out of memory");
                goto out;
        }
        for (i = 0; i < pk.entries; i++) {
                ks_topk_entry_t *x = &out[i];
                uint64_t         kl, ph;
                if (get_varint(&pk, &kl) || kl > UINT32_MAX ||
                    (uint64_t)(pk.end - pk.p) <
                        (kl < KS_TOPK_KEY_MAX ? kl : KS_TOPK_KEY_MAX)) {
                        entry_unreadable(&pk, i, err, errsz);
                        goto out;
                }
                x->keylen = (uint32_t)kl;
                kl        = kl < KS_TOPK_KEY_MAX ? kl : KS_TOPK_KEY_MAX;
                memcpy(x->key, pk.p, (size_t)kl);
                pk.p += kl;
                if (get_le(&pk, 8, &x->hash64) || get_le(&pk, 4, &ph) ||
                    get_varint(&pk, &x->count) || get_varint(&pk, &x->error) ||
                    get_varint(&pk, &v)) {
                        entry_unreadable(&pk, i, err, errsz);
                        goto out;
                }
                x->phash = (uint32_t)ph;
                x->bytes = v;
        }
        if (payload_done(&pk, err, errsz))
                goto out;
        *e  = out;
        *n  = pk.entries;
        out = NULL;
        r   = 0;
out:
        free(out);
        free(pk.bytes);
        return r;
}
