/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_pack.h
 * @brief The packed form of a report's mergeable sketches (`merge.*.packed`,
 *        docs/report-schema.md "Packed sketches", byte by byte): the
 *        HyperLogLog's registers, the key sample's entries and the hot-key
 *        summary's counters, each one byte string of a versioned layout,
 *        written into the JSON as base64 (ks_base64.h).
 *
 * Layout (all integers little-endian):
 *
 *     offset  size  field
 *     0       1     layout version (KS_PACK_VERSION)
 *     1       1     kind: 1 HyperLogLog, 2 key sample, 3 hot keys
 *     2       1     form: HyperLogLog 0 dense, 1 sparse; 0 otherwise
 *     3       1     HyperLogLog: p (14); 0 otherwise
 *     4       4     entries: registers (dense: 2^p), non-zero registers
 *                   (sparse), key-sample entries, hot-key counters
 *     8       4     L: bytes of the payload
 *     12      L     payload (below)
 *     12 + L  4     CRC-32 (IEEE, zlib's crc32()) of bytes 0 .. 12 + L - 1
 *
 * Payloads ("varint": unsigned LEB128, 7 bits a byte, low bits first, the
 * high bit set on every byte but the last, at most 10 bytes, at most
 * 2^63 - 1 as the JSON integers it replaces):
 *  - HyperLogLog, dense: the 2^p registers of 6 bits each, register i in
 *    bits 6i .. 6i + 5 of the payload read as one little-endian bit
 *    string (bit j is bit j mod 8 of byte j / 8): 12,288 bytes.
 *  - HyperLogLog, sparse: one entry per non-zero register, ascending: a
 *    byte G << 4 | V, then a varint when G = 15, then a byte when V = 0.
 *    The register is the previous entry's + 1 + gap (the first: 0 + gap),
 *    gap = G when G < 15, else 15 + the varint; its value is V when V > 0,
 *    else the byte (1 .. 64 - p + 1). Written when shorter than the dense
 *    form: a topic with few keys (Redis's HyperLogLog, src/hyperloglog.c,
 *    has the same two forms; its sparse opcodes are runs of zeros and of
 *    equal values up to 32, ours gap-and-value pairs, one byte for a
 *    register within 15 of the previous one: 1.35 bytes a key at 1,000
 *    keys where Redis's opcodes take 1.86, 0.87 at 5,000 against 1.40,
 *    simulated on the same registers).
 *  - Key sample: per entry hash64 (8 bytes), phash (4 bytes), messages
 *    (varint), bytes (varint).
 *  - Hot keys: per counter key_length (varint: the key's full length),
 *    the first min(key_length, 128) bytes of the key, hash64 (8), phash
 *    (4), count, error, bytes (varints).
 *
 * The readers refuse a string that is not canonical base64, of another
 * version or kind, whose length is not 16 + L, whose checksum differs, or
 * whose payload does not hold exactly its entries with values in range,
 * each with a message naming what is wrong.
 *
 * Thread-safety: pure and re-entrant; a ks_pack_buf_t belongs to one
 * thread.
 */
#ifndef KS_PACK_H
#define KS_PACK_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "ks_hll.h"
#include "ks_keysample.h"
#include "ks_topk.h"

/** The layout version this keyshift writes and reads. */
#define KS_PACK_VERSION 1

/** Header and checksum: the bytes around the payload. */
#define KS_PACK_HEAD 12
#define KS_PACK_OVERHEAD (KS_PACK_HEAD + 4)

/** What a packed string holds (byte 1). */
typedef enum ks_pack_kind {
        KS_PACK_HLL        = 1,
        KS_PACK_KEY_SAMPLE = 2,
        KS_PACK_HOT_KEYS   = 3,
} ks_pack_kind_t;

/** A HyperLogLog's form (byte 2). */
typedef enum ks_pack_form {
        KS_PACK_DENSE  = 0,
        KS_PACK_SPARSE = 1,
} ks_pack_form_t;

/** Bytes of the dense HyperLogLog payload: 6 bits a register. */
#define KS_PACK_HLL_DENSE_BYTES (KS_HLL_REGISTERS * 6 / 8)

/** A growing byte buffer. On ENOMEM it stops growing and says so
 *  (failed); what it holds is then not to be used. */
typedef struct ks_pack_buf {
        uint8_t *b;
        size_t   n, cap;
        int      failed;
} ks_pack_buf_t;

/** @brief Empties @p pb, keeping its memory. */
static inline void ks_pack_buf_reset(ks_pack_buf_t *pb)
{
        pb->n      = 0;
        pb->failed = 0;
}

/** @brief Frees what @p pb holds (it is then empty). */
void ks_pack_buf_free(ks_pack_buf_t *pb);

/* ---- writing (ks_pack.c) ---------------------------------------- */

/** @brief Appends to @p pb the packed HyperLogLog: sparse when shorter,
 *         else dense. @returns 0, or -1 on ENOMEM. */
int ks_pack_hll(ks_pack_buf_t *pb, const ks_hll_t *hll);

/** @brief Appends to @p pb the HyperLogLog in @p form (for tests and for
 *         a writer that wants one form). @returns 0, or -1 on ENOMEM. */
int ks_pack_hll_form(ks_pack_buf_t *pb, const ks_hll_t *hll,
                     ks_pack_form_t form);

/** @brief Appends to @p pb the packed key sample of entries @p e[n], in
 *         their order. @returns 0, or -1 on ENOMEM. */
int ks_pack_key_sample(ks_pack_buf_t *pb, const ks_keysample_entry_t *e,
                       size_t n);

/** @brief Appends to @p pb the packed hot-key counters @p e[n], in their
 *         order (a key longer than KS_TOPK_KEY_MAX keeps its first bytes).
 *         @returns 0, or -1 on ENOMEM. */
int ks_pack_hot_keys(ks_pack_buf_t *pb, const ks_topk_entry_t *e, size_t n);

/** @returns bytes @p b[n] as a base64 JSON string (a new reference), NULL
 *           on ENOMEM. */
json_t *ks_pack_json(const uint8_t *b, size_t n);

/* ---- reading (ks_pack_read.c) ----------------------------------- */

/**
 * @brief Reads a packed HyperLogLog from base64 @p s[len] into @p hll.
 * @param form when not NULL, set to the form it was written in.
 * @returns 0, or -1 with @p err saying what is wrong ("checksum ...",
 *          "layout version 2, this keyshift reads 1", ...).
 */
int ks_unpack_hll(const char *s, size_t len, ks_hll_t *hll,
                  ks_pack_form_t *form, char *err, size_t errsz);

/**
 * @brief Reads a packed key sample from base64 @p s[len].
 * @returns 0 with *e (malloc()ed, the caller frees it; NULL when empty)
 *          and *n, or -1 with @p err set.
 */
int ks_unpack_key_sample(const char *s, size_t len, ks_keysample_entry_t **e,
                         size_t *n, char *err, size_t errsz);

/**
 * @brief Reads packed hot-key counters from base64 @p s[len].
 * @returns 0 with *e (malloc()ed; NULL when empty) and *n, or -1 with
 *          @p err set.
 */
int ks_unpack_hot_keys(const char *s, size_t len, ks_topk_entry_t **e,
                       size_t *n, char *err, size_t errsz);

#endif /* KS_PACK_H */
