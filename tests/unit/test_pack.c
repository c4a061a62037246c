/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_pack.c
 * @brief The packed sketches of a report's `merge` object (ks_pack.h) and
 *        their base64 (ks_base64.h): what is written reads back the same,
 *        in both HyperLogLog forms, and every malformed string (wrong
 *        length, version, kind, checksum, entry count, values out of
 *        range, not base64) is refused with a message saying which.
 *
 * Oracles: RFC 4648 section 10's test vectors for base64; zlib's crc32()
 * for the checksum (tests rewrite a header field and recompute the
 * checksum with zlib, so that only the field is wrong); the sketches'
 * own structures for round trips (registers, entries compared field by
 * field, the HyperLogLog's estimate equal to the unpacked registers').
 */
#include "ks_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "ks_base64.h"
#include "ks_hash.h"
#include "ks_pack.h"

/** @returns a NUL-terminated base64 of @p pb's bytes (free it). */
static char *b64_of(const uint8_t *b, size_t n)
{
        char *s = malloc(ks_base64_len(n) + 1);

        CU_ASSERT_PTR_NOT_NULL_FATAL(s);
        *ks_base64_encode(b, n, s) = '\0';
        return s;
}

static void test_base64_rfc4648(void)
{
        /* RFC 4648 section 10 */
        static const char *const in[]  = {"",     "f",     "fo",    "foo",
                                          "foob", "fooba", "foobar"};
        static const char *const out[] = {
            "", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
        size_t  i;
        uint8_t back[16];

        for (i = 0; i < 7; i++) {
                char *s = b64_of((const uint8_t *)in[i], strlen(in[i]));
                CU_ASSERT_STRING_EQUAL(s, out[i]);
                CU_ASSERT_EQUAL(ks_base64_len(strlen(in[i])), strlen(out[i]));
                CU_ASSERT_EQUAL(
                    ks_base64_decode(out[i], strlen(out[i]), back, NULL),
                    (long)strlen(in[i]));
                CU_ASSERT_EQUAL(memcmp(back, in[i], strlen(in[i])), 0);
                free(s);
        }
}

/** Every byte value, every length mod 3, and the two non-letters. */
static void test_base64_round_trip(void)
{
        uint8_t b[770], back[770];
        size_t  n, i;

        for (i = 0; i < sizeof(b); i++)
                b[i] = (uint8_t)(i * 151 + (i >> 8));
        for (n = 0; n < sizeof(b); n += 7) {
                char *s = b64_of(b, n);
                CU_ASSERT_EQUAL(ks_base64_decode(s, strlen(s), back, NULL),
                                (long)n);
                CU_ASSERT_EQUAL(memcmp(back, b, n), 0);
                free(s);
        }
        b[0] = 0xfb;
        b[1] = 0xff;
        b[2] = 0xbf;
        {
                char *s = b64_of(b, 3);
                CU_ASSERT_STRING_EQUAL(s, "+/+/");
                free(s);
        }
}

static void test_base64_strict(void)
{
        static const struct {
                const char *s;
                size_t      bad_at;
        } bad[] = {
            {"Zg=", 3},       /* not a multiple of 4 */
            {"Zm9v Zg==", 9}, /* length 9 */
            {"Zm9vZ g=", 5},  /* a space */
            {"Zm=v", 2},      /* padding in the middle of a group */
            {"Zg==Zm9v", 2},  /* padding before the end */
            {"Z===", 1},      /* three pads */
            {"Zh==", 1},      /* bits no byte holds: 'h' = 33, low 4 set */
            {"Zm9=", 2},      /* '9' = 61: low 2 bits set */
            {"Zm9v\n", 5},    /* a line end: length 5 */
            {"Zm-v", 2},      /* the URL alphabet's '-' */
        };
        uint8_t back[16];
        size_t  i, at;

        for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                at = 999;
                CU_ASSERT_EQUAL(
                    ks_base64_decode(bad[i].s, strlen(bad[i].s), back, &at),
                    -1);
                CU_ASSERT_EQUAL(at, bad[i].bad_at);
        }
}

/** @brief A HyperLogLog of keys 0 .. n - 1 (as 8-byte keys). */
static void hll_of(ks_hll_t *hll, uint64_t n, uint64_t seed)
{
        uint64_t k;

        ks_hll_init(hll);
        for (k = 0; k < n; k++) {
                uint64_t key = k ^ seed;
                ks_hll_add(hll, ks_hash_key64(&key, sizeof(key)));
        }
}

/** @returns the packed bytes of @p hll in @p form as base64 (free it). */
static char *hll_b64(const ks_hll_t *hll, int form)
{
        ks_pack_buf_t pb = {0};
        char         *s;

        CU_ASSERT_EQUAL_FATAL(
            form < 0 ? ks_pack_hll(&pb, hll)
                     : ks_pack_hll_form(&pb, hll, (ks_pack_form_t)form),
            0);
        /* the checksum is zlib's CRC-32 of everything before it */
        CU_ASSERT_EQUAL(pb.b[pb.n - 4] | pb.b[pb.n - 3] << 8 |
                            pb.b[pb.n - 2] << 16 |
                            (uint32_t)pb.b[pb.n - 1] << 24,
                        (uint32_t)crc32(0L, pb.b, (uInt)(pb.n - 4)));
        s = b64_of(pb.b, pb.n);
        ks_pack_buf_free(&pb);
        return s;
}

/** Both forms read back the same registers and estimate, at every size;
 *  the shorter form is the one written. */
static void test_hll_forms(void)
{
        static const uint64_t sizes[] = {0, 1, 25, 1000, 5000, 20000, 200000};
        size_t                i;

        for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
                ks_hll_t       hll, back;
                ks_pack_form_t form;
                char           err[256], *sp, *de, *au;
                hll_of(&hll, sizes[i], 7);
                sp = hll_b64(&hll, KS_PACK_SPARSE);
                de = hll_b64(&hll, KS_PACK_DENSE);
                au = hll_b64(&hll, -1);
                CU_ASSERT_EQUAL(ks_unpack_hll(sp, strlen(sp), &back, &form, err,
                                              sizeof(err)),
                                0);
                CU_ASSERT_EQUAL(form, KS_PACK_SPARSE);
                CU_ASSERT_EQUAL(memcmp(back.reg, hll.reg, sizeof(hll.reg)), 0);
                CU_ASSERT_EQUAL(ks_hll_estimate(&back), ks_hll_estimate(&hll));
                CU_ASSERT_EQUAL(ks_unpack_hll(de, strlen(de), &back, &form, err,
                                              sizeof(err)),
                                0);
                CU_ASSERT_EQUAL(form, KS_PACK_DENSE);
                CU_ASSERT_EQUAL(memcmp(back.reg, hll.reg, sizeof(hll.reg)), 0);
                CU_ASSERT_EQUAL(ks_hll_estimate(&back), ks_hll_estimate(&hll));
                /* dense: 16 + 12,288 bytes, 16,416 characters */
                CU_ASSERT_EQUAL(
                    strlen(de),
                    ks_base64_len(KS_PACK_OVERHEAD + KS_PACK_HLL_DENSE_BYTES));
                CU_ASSERT_EQUAL(strlen(au), strlen(sp) <= strlen(de)
                                                ? strlen(sp)
                                                : strlen(de));
                CU_ASSERT_STRING_EQUAL(au, strlen(sp) <= strlen(de) ? sp : de);
                printf("\n      %6llu keys: sparse %zu, dense %zu characters",
                       (unsigned long long)sizes[i], strlen(sp), strlen(de));
                free(sp);
                free(de);
                free(au);
        }
}

/** The sparse form's escapes: gaps of 14, 15, 16 and the longest, values
 *  15, 16 and the largest, the first and last registers. */
static void test_hll_sparse_edges(void)
{
        static const struct {
                uint32_t at;
                uint8_t  v;
        } regs[] = {{0, 51},   {15, 15},   {31, 16},   {32, 1},    {48, 2},
                    {8000, 1}, {8001, 50}, {16382, 3}, {16383, 51}};
        ks_hll_t hll, back;
        char     err[256], *s;
        size_t   i;
        int      form;

        for (form = 0; form < 2; form++) {
                ks_hll_init(&hll);
                for (i = 0; i < sizeof(regs) / sizeof(regs[0]); i++)
                        hll.reg[regs[i].at] = regs[i].v;
                s = hll_b64(&hll, form);
                CU_ASSERT_EQUAL(
                    ks_unpack_hll(s, strlen(s), &back, NULL, err, sizeof(err)),
                    0);
                CU_ASSERT_EQUAL(memcmp(back.reg, hll.reg, sizeof(hll.reg)), 0);
                free(s);
        }
        /* one register at the far end: a gap of 16,383 */
        ks_hll_init(&hll);
        hll.reg[KS_HLL_REGISTERS - 1] = 7;
        s                             = hll_b64(&hll, KS_PACK_SPARSE);
        CU_ASSERT_EQUAL(
            ks_unpack_hll(s, strlen(s), &back, NULL, err, sizeof(err)), 0);
        CU_ASSERT_EQUAL(memcmp(back.reg, hll.reg, sizeof(hll.reg)), 0);
        free(s);
}

static void test_key_sample_round_trip(void)
{
        ks_keysample_entry_t e[5] = {
            {0, 0, 0, 0},
            {UINT64_MAX, UINT32_MAX, INT64_MAX, INT64_MAX},
            {0x0123456789abcdefULL, 0x89abcdef, 1, 73},
            {42, 7, 127, 128},
            {43, 8, 16383, 16384},
        };
        ks_keysample_entry_t *back;
        ks_pack_buf_t         pb = {0};
        size_t                n, i;
        char                  err[256], *s;

        CU_ASSERT_EQUAL_FATAL(ks_pack_key_sample(&pb, e, 5), 0);
        s = b64_of(pb.b, pb.n);
        CU_ASSERT_EQUAL(
            ks_unpack_key_sample(s, strlen(s), &back, &n, err, sizeof(err)), 0);
        CU_ASSERT_EQUAL_FATAL(n, 5);
        for (i = 0; i < n; i++) {
                CU_ASSERT_EQUAL(back[i].hash64, e[i].hash64);
                CU_ASSERT_EQUAL(back[i].phash, e[i].phash);
                CU_ASSERT_EQUAL(back[i].messages, e[i].messages);
                CU_ASSERT_EQUAL(back[i].bytes, e[i].bytes);
        }
        free(back);
        free(s);
        /* empty */
        ks_pack_buf_reset(&pb);
        CU_ASSERT_EQUAL(ks_pack_key_sample(&pb, e, 0), 0);
        CU_ASSERT_EQUAL(pb.n, KS_PACK_OVERHEAD);
        s = b64_of(pb.b, pb.n);
        CU_ASSERT_EQUAL(
            ks_unpack_key_sample(s, strlen(s), &back, &n, err, sizeof(err)), 0);
        CU_ASSERT_EQUAL(n, 0);
        CU_ASSERT_PTR_NULL(back);
        free(s);
        ks_pack_buf_free(&pb);
}

static void test_hot_keys_round_trip(void)
{
        static const uint32_t lens[] = {0, 1, 9, 127, 128, 129, 300};
        ks_topk_entry_t       e[7], *back;
        ks_pack_buf_t         pb = {0};
        size_t                n, i, j;
        char                  err[256], *s;

        memset(e, 0, sizeof(e));
        for (i = 0; i < 7; i++) {
                e[i].keylen = lens[i];
                for (j = 0; j < KS_TOPK_KEY_MAX && j < lens[i]; j++)
                        e[i].key[j] = (uint8_t)(i * 31 + j);
                e[i].hash64 = ks_hash_key64(e[i].key, j);
                e[i].phash  = (uint32_t)(i * 0x9e3779b9u);
                e[i].count  = (uint64_t)1 << (9 * i);
                e[i].error  = i;
                e[i].bytes  = i == 6 ? INT64_MAX : 64 * e[i].count;
        }
        CU_ASSERT_EQUAL_FATAL(ks_pack_hot_keys(&pb, e, 7), 0);
        s = b64_of(pb.b, pb.n);
        CU_ASSERT_EQUAL(
            ks_unpack_hot_keys(s, strlen(s), &back, &n, err, sizeof(err)), 0);
        CU_ASSERT_EQUAL_FATAL(n, 7);
        for (i = 0; i < n; i++) {
                size_t kl =
                    lens[i] < KS_TOPK_KEY_MAX ? lens[i] : KS_TOPK_KEY_MAX;
                CU_ASSERT_EQUAL(back[i].keylen, e[i].keylen);
                CU_ASSERT_EQUAL(memcmp(back[i].key, e[i].key, kl), 0);
                CU_ASSERT_EQUAL(back[i].hash64, e[i].hash64);
                CU_ASSERT_EQUAL(back[i].phash, e[i].phash);
                CU_ASSERT_EQUAL(back[i].count, e[i].count);
                CU_ASSERT_EQUAL(back[i].error, e[i].error);
                CU_ASSERT_EQUAL(back[i].bytes, e[i].bytes);
        }
        free(back);
        free(s);
        ks_pack_buf_free(&pb);
}

/* ---- malformed strings ------------------------------------------- */

/** The packed bytes of a small hot-key sketch, to corrupt. */
static size_t sample_bytes(uint8_t *out, size_t cap)
{
        ks_keysample_entry_t e[3] = {
            {1, 2, 3, 4}, {5, 6, 7, 8}, {9, 10, 11, 12}};
        ks_pack_buf_t pb = {0};
        size_t        n;

        CU_ASSERT_EQUAL_FATAL(ks_pack_key_sample(&pb, e, 3), 0);
        CU_ASSERT_FATAL(pb.n <= cap);
        memcpy(out, pb.b, pb.n);
        n = pb.n;
        ks_pack_buf_free(&pb);
        return n;
}

/** @brief Recomputes the checksum of @p b[n] with zlib (so that only what
 *         a test changed is wrong). */
static void reseal(uint8_t *b, size_t n)
{
        uint32_t c = (uint32_t)crc32(0L, b, (uInt)(n - 4));

        b[n - 4] = (uint8_t)c;
        b[n - 3] = (uint8_t)(c >> 8);
        b[n - 2] = (uint8_t)(c >> 16);
        b[n - 1] = (uint8_t)(c >> 24);
}

/** @returns whether reading @p b[n] as a key sample fails with a message
 *           containing @p what. */
static int refused_with(const uint8_t *b, size_t n, const char *what)
{
        ks_keysample_entry_t *e;
        size_t                cnt;
        char                  err[256] = "", *s = b64_of(b, n);
        int r = ks_unpack_key_sample(s, strlen(s), &e, &cnt, err, sizeof(err));

        free(s);
        if (r == 0) {
                free(e);
                printf("\n      accepted, expected \"%s\"", what);
                return 0;
        }
        if (!strstr(err, what)) {
                printf("\n      \"%s\", expected \"%s\"", err, what);
                return 0;
        }
        return 1;
}

/** Every single-bit error, and every truncation, is refused. */
static void test_refuse_corruption(void)
{
        uint8_t b[256], c[256];
        size_t  n = sample_bytes(b, sizeof(b)), i, bit, refused = 0;

        for (i = 0; i < n; i++)
                for (bit = 0; bit < 8; bit++) {
                        memcpy(c, b, n);
                        c[i] ^= (uint8_t)(1u << bit);
                        refused += refused_with(c, n, "") ? 1 : 0;
                }
        CU_ASSERT_EQUAL(refused, 8 * n);
        /* a flipped payload bit is the checksum's to catch */
        memcpy(c, b, n);
        c[KS_PACK_HEAD + 3] ^= 1;
        CU_ASSERT(refused_with(c, n, "checksum mismatch"));
        for (i = 0; i < n; i++)
                CU_ASSERT(refused_with(b, i,
                                       i < KS_PACK_OVERHEAD ? "shorter than"
                                                            : "wrong length"));
        /* two strings joined */
        memcpy(c, b, n);
        memcpy(c + n, b, n);
        CU_ASSERT(refused_with(c, 2 * n, "wrong length"));
}

/** Each header field wrong with a right checksum: named. */
static void test_refuse_fields(void)
{
        uint8_t b[256], c[256];
        size_t  n = sample_bytes(b, sizeof(b));

        memcpy(c, b, n);
        c[0] = 2;
        reseal(c, n);
        CU_ASSERT(refused_with(c, n, "layout version 2"));
        memcpy(c, b, n);
        c[1] = KS_PACK_HOT_KEYS;
        reseal(c, n);
        CU_ASSERT(refused_with(c, n, "holds hot-key counters"));
        memcpy(c, b, n);
        c[8]++; /* payload length */
        reseal(c, n);
        CU_ASSERT(refused_with(c, n, "wrong length"));
        memcpy(c, b, n);
        c[4] = 2; /* entries: one fewer */
        reseal(c, n);
        CU_ASSERT(refused_with(c, n, "wrong entry count"));
        memcpy(c, b, n);
        c[4] = 4; /* one more */
        reseal(c, n);
        CU_ASSERT(refused_with(c, n, "entries cannot fit"));
        memcpy(c, b, n);
        c[4] = 0xff;
        c[7] = 0xff; /* 2^32 - 1 entries: refused before any allocation */
        reseal(c, n);
        CU_ASSERT(refused_with(c, n, "entries cannot fit"));
        memcpy(c, b, n);
        c[2] = 1; /* form */
        reseal(c, n);
        CU_ASSERT(refused_with(c, n, "form 1"));
}

/** HyperLogLog payloads with values out of range, right checksums. */
static void test_refuse_hll_values(void)
{
        ks_hll_t      hll, back;
        ks_pack_buf_t pb = {0};
        char          err[256], *s;

        /* sparse, by hand: one entry, gap 3, value nibble 0, then a value
         * byte of 52 */
        {
                uint8_t b[KS_PACK_OVERHEAD + 2] = {KS_PACK_VERSION,
                                                   KS_PACK_HLL,
                                                   KS_PACK_SPARSE,
                                                   KS_HLL_P,
                                                   1,
                                                   0,
                                                   0,
                                                   0,
                                                   2,
                                                   0,
                                                   0,
                                                   0,
                                                   3 << 4,
                                                   52};
                reseal(b, sizeof(b));
                s = b64_of(b, sizeof(b));
                CU_ASSERT_EQUAL(
                    ks_unpack_hll(s, strlen(s), &back, NULL, err, sizeof(err)),
                    -1);
                CU_ASSERT_PTR_NOT_NULL(strstr(err, "register 3 is 52"));
                free(s);
                b[KS_PACK_HEAD + 1] = 51; /* the largest there is */
                reseal(b, sizeof(b));
                s = b64_of(b, sizeof(b));
                CU_ASSERT_EQUAL(
                    ks_unpack_hll(s, strlen(s), &back, NULL, err, sizeof(err)),
                    0);
                CU_ASSERT_EQUAL(back.reg[3], 51);
                free(s);
        }
        ks_hll_init(&hll);
        hll.reg[3] = 5;
        /* dense: register 1 set to 63 */
        ks_pack_buf_reset(&pb);
        CU_ASSERT_EQUAL_FATAL(ks_pack_hll_form(&pb, &hll, KS_PACK_DENSE), 0);
        pb.b[KS_PACK_HEAD] |= 0xc0;     /* bits 6, 7: register 1's low */
        pb.b[KS_PACK_HEAD + 1] |= 0x0f; /* and its high four */
        reseal(pb.b, pb.n);
        s = b64_of(pb.b, pb.n);
        CU_ASSERT_EQUAL(
            ks_unpack_hll(s, strlen(s), &back, NULL, err, sizeof(err)), -1);
        CU_ASSERT_PTR_NOT_NULL(strstr(err, "register 1 is 63"));
        free(s);
        /* sparse: past the last register */
        ks_pack_buf_reset(&pb);
        ks_hll_init(&hll);
        hll.reg[KS_HLL_REGISTERS - 1] = 1;
        CU_ASSERT_EQUAL_FATAL(ks_pack_hll_form(&pb, &hll, KS_PACK_SPARSE), 0);
        pb.b[KS_PACK_HEAD + 1]++; /* the gap's varint, one more */
        reseal(pb.b, pb.n);
        s = b64_of(pb.b, pb.n);
        CU_ASSERT_EQUAL(
            ks_unpack_hll(s, strlen(s), &back, NULL, err, sizeof(err)), -1);
        CU_ASSERT_PTR_NOT_NULL(strstr(err, "past register 16383"));
        free(s);
        /* p other than 14 */
        ks_pack_buf_reset(&pb);
        CU_ASSERT_EQUAL_FATAL(ks_pack_hll_form(&pb, &hll, KS_PACK_SPARSE), 0);
        pb.b[3] = 12;
        reseal(pb.b, pb.n);
        s = b64_of(pb.b, pb.n);
        CU_ASSERT_EQUAL(
            ks_unpack_hll(s, strlen(s), &back, NULL, err, sizeof(err)), -1);
        CU_ASSERT_PTR_NOT_NULL(strstr(err, "p = 12"));
        free(s);
        ks_pack_buf_free(&pb);
}

/** Not base64: the character is named. */
static void test_refuse_not_base64(void)
{
        ks_hll_t hll;
        char     err[256];

        CU_ASSERT_EQUAL(
            ks_unpack_hll("AQEB!AAA", 8, &hll, NULL, err, sizeof(err)), -1);
        CU_ASSERT_PTR_NOT_NULL(strstr(err, "character 4 ('!')"));
        CU_ASSERT_EQUAL(ks_unpack_hll("AQE", 3, &hll, NULL, err, sizeof(err)),
                        -1);
        CU_ASSERT_PTR_NOT_NULL(strstr(err, "not a multiple of 4"));
        CU_ASSERT_EQUAL(ks_unpack_hll("", 0, &hll, NULL, err, sizeof(err)), -1);
        CU_ASSERT_PTR_NOT_NULL(strstr(err, "shorter than"));
}

void ks_test_register(void)
{
        KS_ADD_SUITE(
            "packed sketches",
            {"base64: RFC 4648 vectors", test_base64_rfc4648},
            {"base64: round trips", test_base64_round_trip},
            {"base64: strict decoding", test_base64_strict},
            {"HyperLogLog: sparse and dense forms", test_hll_forms},
            {"HyperLogLog: sparse escapes and edges", test_hll_sparse_edges},
            {"key sample: round trip", test_key_sample_round_trip},
            {"hot keys: round trip", test_hot_keys_round_trip},
            {"refused: every bit flip and truncation", test_refuse_corruption},
            {"refused: each header field", test_refuse_fields},
            {"refused: HyperLogLog values", test_refuse_hll_values},
            {"refused: not base64", test_refuse_not_base64});
}
