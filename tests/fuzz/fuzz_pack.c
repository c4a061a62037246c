/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file fuzz_pack.c
 * @brief libFuzzer target: the packed sketches' readers (ks_pack_read.c,
 *        ks_base64.c), what `merge` reads from `merge.*.packed`.
 *
 * Input: one control byte, then the bytes. Control bits 0-1 choose the
 * reader (HyperLogLog, key sample, hot keys) or, 3, give the bytes as
 * base64 text to all three as they stand (the base64 decoder's own
 * refusals). Otherwise the bytes are a packed string before base64; with
 * bit 2 set the harness first makes the header's version, kind and
 * length and the trailing CRC-32 right, so that the fuzzer reaches the
 * payload decoders past the checksum it could not guess.
 *
 * Invariants: a refusal names its problem; an accepted HyperLogLog has
 * registers in range; accepted lists hold what they say (ASan checks the
 * reads), and what is accepted packs again to a string the reader
 * accepts (the round trip of ks_pack.c).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ks_base64.h"
#include "ks_hash.h"
#include "ks_pack.h"

/** @brief Makes the header and checksum of packed @p b[n] right. */
static void fix_up(uint8_t *b, size_t n, ks_pack_kind_t kind)
{
        uint32_t plen, crc;
        size_t   i;

        if (n < KS_PACK_OVERHEAD)
                return;
        b[0] = KS_PACK_VERSION;
        b[1] = (uint8_t)kind;
        plen = (uint32_t)(n - KS_PACK_OVERHEAD);
        for (i = 0; i < 4; i++)
                b[8 + i] = (uint8_t)(plen >> (8 * i));
        crc = ks_hash_crc32(b, n - 4);
        for (i = 0; i < 4; i++)
                b[n - 4 + i] = (uint8_t)(crc >> (8 * i));
}

/** @brief Packs again what a reader accepted, and reads it back. */
static void round_trip_hll(const ks_hll_t *h)
{
        ks_pack_buf_t pb = {0};
        char         *s, err[256];
        ks_hll_t     *back = malloc(sizeof(*back));
        size_t        i;

        for (i = 0; i < KS_HLL_REGISTERS; i++)
                if (h->reg[i] > 64 - KS_HLL_P + 1)
                        abort(); /* accepted a register out of range */
        if (!back || ks_pack_hll(&pb, h)) {
                free(back);
                ks_pack_buf_free(&pb);
                return;
        }
        s = malloc(ks_base64_len(pb.n) + 1);
        if (s) {
                *ks_base64_encode(pb.b, pb.n, s) = '\0';
                if (ks_unpack_hll(s, strlen(s), back, NULL, err, sizeof(err)))
                        abort(); /* keyshift refuses what it wrote */
                if (memcmp(back->reg, h->reg, KS_HLL_REGISTERS))
                        abort();
        }
        free(s);
        free(back);
        ks_pack_buf_free(&pb);
}

static void read_all(const char *s, size_t len, unsigned which)
{
        char                  err[512];
        ks_keysample_entry_t *ke = NULL;
        ks_topk_entry_t      *te = NULL;
        size_t                n  = 0;
        ks_hll_t             *h;

        if (which == 0 || which == 3) {
                if ((h = malloc(sizeof(*h)))) {
                        ks_hll_init(h);
                        err[0] = '\0';
                        if (ks_unpack_hll(s, len, h, NULL, err, sizeof(err))) {
                                if (!err[0])
                                        abort();
                        } else {
                                round_trip_hll(h);
                        }
                        free(h);
                }
        }
        if (which == 1 || which == 3) {
                err[0] = '\0';
                if (ks_unpack_key_sample(s, len, &ke, &n, err, sizeof(err))) {
                        if (!err[0])
                                abort();
                } else {
                        ks_pack_buf_t pb = {0};
                        ks_pack_key_sample(&pb, ke, n);
                        ks_pack_buf_free(&pb);
                        free(ke);
                }
        }
        if (which == 2 || which == 3) {
                err[0] = '\0';
                if (ks_unpack_hot_keys(s, len, &te, &n, err, sizeof(err))) {
                        if (!err[0])
                                abort();
                } else {
                        ks_pack_buf_t pb = {0};
                        ks_pack_hot_keys(&pb, te, n);
                        ks_pack_buf_free(&pb);
                        free(te);
                }
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static const ks_pack_kind_t kinds[3] = {KS_PACK_HLL, KS_PACK_KEY_SAMPLE,
                                                KS_PACK_HOT_KEYS};
        unsigned                    which;
        uint8_t                    *b;
        char                       *s;

        if (size < 1)
                return 0;
        which = data[0] & 3;
        data++;
        size--;
        if (which == 3) {
                read_all((const char *)data, size, 3);
                return 0;
        }
        if (!(b = malloc(size + 1)))
                return 0;
        memcpy(b, data, size);
        if (data[-1] & 4)
                fix_up(b, size, kinds[which]);
        if ((s = malloc(ks_base64_len(size) + 1))) {
                *ks_base64_encode(b, size, s) = '\0';
                read_all(s, strlen(s), which);
        }
        free(s);
        free(b);
        return 0;
}
