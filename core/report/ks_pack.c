/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_pack.c
 * @brief Writes the packed sketches of a report's `merge` object
 *        (ks_pack.h has the layout, docs/report-schema.md the same byte by
 *        byte).
 */
#include "ks_pack.h"

#include <stdlib.h>
#include <string.h>

#include "ks_base64.h"
#include "ks_hash.h"

void ks_pack_buf_free(ks_pack_buf_t *pb)
{
        free(pb->b);
        memset(pb, 0, sizeof(*pb));
}

/** @returns room for @p n more bytes at the end of @p pb, or NULL (then
 *           pb->failed is set). */
static uint8_t *room(ks_pack_buf_t *pb, size_t n)
{
        if (pb->failed)
                return NULL;
        if (pb->n + n > pb->cap) {
                size_t   cap = pb->cap ? pb->cap : 4096;
                uint8_t *b;
                while (cap < pb->n + n)
                        cap *= 2;
                if (!(b = realloc(pb->b, cap))) {
                        pb->failed = 1;
                        return NULL;
                }
                pb->b   = b;
                pb->cap = cap;
        }
        return pb->b + pb->n;
}

static void put_u8(ks_pack_buf_t *pb, uint8_t v)
{
        uint8_t *d = room(pb, 1);

        if (d) {
                *d = v;
                pb->n++;
        }
}

/** @brief @p v as @p size bytes, least significant first. */
static void put_le(ks_pack_buf_t *pb, uint64_t v, size_t size)
{
        uint8_t *d = room(pb, size);
        size_t   i;

        if (!d)
                return;
        for (i = 0; i < size; i++, v >>= 8)
                d[i] = (uint8_t)v;
        pb->n += size;
}

/** @brief Stores @p v as 4 little-endian bytes at @p d. */
static void store_le32(uint8_t *d, uint32_t v)
{
        d[0] = (uint8_t)v;
        d[1] = (uint8_t)(v >> 8);
        d[2] = (uint8_t)(v >> 16);
        d[3] = (uint8_t)(v >> 24);
}

/** @brief @p v as an unsigned LEB128 varint (1 .. 10 bytes). */
static void put_varint(ks_pack_buf_t *pb, uint64_t v)
{
        uint8_t *d = room(pb, 10);
        size_t   i = 0;

        if (!d)
                return;
        while (v >= 0x80) {
                d[i++] = (uint8_t)(v | 0x80);
                v >>= 7;
        }
        d[i++] = (uint8_t)v;
        pb->n += i;
}

/** @brief Starts a packed string: its header, the entry count and payload
 *         length left for end_packed(). @returns where it starts. */
static size_t begin_packed(ks_pack_buf_t *pb, ks_pack_kind_t kind,
                           ks_pack_form_t form, uint8_t param)
{
        size_t at = pb->n;

        put_u8(pb, KS_PACK_VERSION);
        put_u8(pb, (uint8_t)kind);
        put_u8(pb, (uint8_t)form);
        put_u8(pb, param);
        put_le(pb, 0, 8); /* entries and payload length: end_packed() */
        return at;
}

/** @brief Completes the packed string begun at @p at: its counts and the
 *         CRC-32 of everything before it. @returns 0 or -1 (ENOMEM). */
static int end_packed(ks_pack_buf_t *pb, size_t at, size_t entries)
{
        uint8_t *d;

        if (pb->failed)
                return -1;
        d = pb->b + at;
        store_le32(d + 4, (uint32_t)entries);
        store_le32(d + 8, (uint32_t)(pb->n - at - KS_PACK_HEAD));
        put_le(pb, ks_hash_crc32(pb->b + at, pb->n - at), 4);
        return pb->failed ? -1 : 0;
}

/** @brief The sparse payload: (gap, value) of each non-zero register.
 *  @returns the registers written. */
static size_t put_hll_sparse(ks_pack_buf_t *pb, const ks_hll_t *hll)
{
        size_t i, n = 0, prev = (size_t)-1; /* the first gap counts from 0 */

        for (i = 0; i < KS_HLL_REGISTERS; i++) {
                size_t  gap;
                uint8_t v = hll->reg[i];
                if (!v)
                        continue;
                gap  = i - prev - 1;
                prev = i;
                n++;
                put_u8(pb, (uint8_t)((gap < 15 ? gap : 15) << 4 |
                                     (v < 16 ? v : 0)));
                if (gap >= 15)
                        put_varint(pb, gap - 15);
                if (v >= 16)
                        put_u8(pb, v);
        }
        return n;
}

/** @brief The dense payload: 6 bits a register, little-endian bit
 *         order. */
static void put_hll_dense(ks_pack_buf_t *pb, const ks_hll_t *hll)
{
        uint8_t *d = room(pb, KS_PACK_HLL_DENSE_BYTES);
        size_t   i;

        if (!d)
                return;
        /* four registers (24 bits) make three bytes */
        for (i = 0; i < KS_HLL_REGISTERS; i += 4, d += 3) {
                uint32_t v = (uint32_t)(hll->reg[i] & 63) |
                             (uint32_t)(hll->reg[i + 1] & 63) << 6 |
                             (uint32_t)(hll->reg[i + 2] & 63) << 12 |
                             (uint32_t)(hll->reg[i + 3] & 63) << 18;
                d[0] = (uint8_t)v;
                d[1] = (uint8_t)(v >> 8);
                d[2] = (uint8_t)(v >> 16);
        }
        pb->n += KS_PACK_HLL_DENSE_BYTES;
}

int ks_pack_hll_form(ks_pack_buf_t *pb, const ks_hll_t *hll,
                     ks_pack_form_t form)
{
        size_t at = begin_packed(pb, KS_PACK_HLL, form, KS_HLL_P);
        size_t n  = KS_HLL_REGISTERS;

        if (form == KS_PACK_SPARSE)
                n = put_hll_sparse(pb, hll);
        else
                put_hll_dense(pb, hll);
        return end_packed(pb, at, n);
}

int ks_pack_hll(ks_pack_buf_t *pb, const ks_hll_t *hll)
{
        size_t at = pb->n;

        if (ks_pack_hll_form(pb, hll, KS_PACK_SPARSE))
                return -1;
        if (pb->n - at - KS_PACK_OVERHEAD <= KS_PACK_HLL_DENSE_BYTES)
                return 0;
        pb->n = at; /* many keys: the dense form is shorter */
        return ks_pack_hll_form(pb, hll, KS_PACK_DENSE);
}

int ks_pack_key_sample(ks_pack_buf_t *pb, const ks_keysample_entry_t *e,
                       size_t n)
{
        size_t at = begin_packed(pb, KS_PACK_KEY_SAMPLE, KS_PACK_DENSE, 0);
        size_t i;

        for (i = 0; i < n; i++) {
                put_le(pb, e[i].hash64, 8);
                put_le(pb, e[i].phash, 4);
                put_varint(pb, e[i].messages);
                put_varint(pb, e[i].bytes);
        }
        return end_packed(pb, at, n);
}

int ks_pack_hot_keys(ks_pack_buf_t *pb, const ks_topk_entry_t *e, size_t n)
{
        size_t at = begin_packed(pb, KS_PACK_HOT_KEYS, KS_PACK_DENSE, 0);
        size_t i;

        for (i = 0; i < n; i++) {
                size_t   kl = e[i].keylen < KS_TOPK_KEY_MAX ? e[i].keylen
                                                            : KS_TOPK_KEY_MAX;
                uint8_t *d;
                put_varint(pb, e[i].keylen);
                if ((d = room(pb, kl))) {
                        memcpy(d, e[i].key, kl);
                        pb->n += kl;
                }
                put_le(pb, e[i].hash64, 8);
                put_le(pb, e[i].phash, 4);
                put_varint(pb, e[i].count);
                put_varint(pb, e[i].error);
                put_varint(pb, e[i].bytes);
        }
        return end_packed(pb, at, n);
}

json_t *ks_pack_json(const uint8_t *b, size_t n)
{
        size_t  len = ks_base64_len(n);
        char   *s   = malloc(len + 1);
        json_t *j;

        if (!s)
                return NULL;
        ks_base64_encode(b, n, s);
        j = json_stringn_nocheck(s, len);
        free(s);
        return j;
}
