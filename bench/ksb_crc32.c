/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ksb_crc32.c
 * @brief Issue 33, decision 1: which CRC-32 keyshift computes the
 *        `consistent` partitioner's hash with. zlib's `crc32()` (what
 *        librdkafka's `rd_crc32()` calls), libdeflate's
 *        `libdeflate_crc32()` and table-driven CRC-32s of our own
 *        (slicing-by-8, the core's ks_crc32_by8(), and a slicing-by-16
 *        prototype), and ks_hash_crc32() as built (slicing-by-8 below
 *        16 bytes, libdeflate from 16 on), measured in one run on the key
 *        shapes keyshift's users send. Informational (op "-"): bench/README.md
 *        states the choice and its rule (a library is kept when it is
 *        within 2 ns of the fastest).
 *
 * Keys (generated before any timed section, SplitMix64, fixed seeds):
 *  - mmsi9: 9-digit decimal MMSIs (ksb_mmsi() of distinct ids), as an AIS
 *    producer keys its messages;
 *  - uuid36: random version-4 UUIDs as 36-byte lowercase text;
 *  - byte1 and text100: one random byte, 100 random printable bytes (for
 *    context: the shortest key, and a long one).
 * Each shape is @c --keys different keys (default 4096: 36 KiB of MMSIs,
 * 144 KiB of UUIDs, in L2 as a key just copied through keyshift's ring
 * would be), visited in a shuffled order, so every call hashes a
 * different key than the one before.
 *
 * Two ways to call, because the drainer does some of each:
 *  - indep: the results are summed, so the CPU may overlap consecutive
 *    calls (throughput);
 *  - chain: the next key's index depends on the previous result, so each
 *    call waits for the one before (latency), as when the CRC is used at
 *    once to place the message.
 * Either way every result is consumed (a volatile sink), so no call can be
 * dropped. Each timed loop is @c --calls calls (CLOCK_MONOTONIC around the
 * loop, ns per call; the loop's own cost, an index step, is included for
 * every candidate alike). A round times every candidate on every shape
 * and way once, the candidates' order rotated from round to round; a
 * candidate's ratio to zlib is taken within each round, and the median
 * over @c --rounds rounds reported with its min and max.
 *
 * Before timing, every candidate's CRC of every key is checked against
 * zlib's (the bench dies otherwise).
 *
 * `--sweep` adds, as notes, the medians over the rounds for random
 * printable keys of lengths 1 to 64: where libdeflate's own dispatch
 * changes method (16 bytes in libdeflate 1.14: shorter keys go a byte at a
 * time) and where a table of our own stops being faster.
 *
 * Usage: ksb_crc32 [--rounds N] [--calls N] [--keys N] [--sweep]
 */
#include <libdeflate.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "ks_crc32.h"
#include "ks_hash.h"
#include "ksb_keys.h"
#include "ksb_stats.h"

static volatile uint32_t ksb_sink;

/* ---- a slicing-by-16 prototype (our slicing-by-8 is the core's,
 * ks_crc32.c) ---- */

/** crc_tab[0] is the byte-at-a-time table of the reflected polynomial
 *  0xEDB88320; crc_tab[k][b] is the CRC of byte b followed by k zero bytes,
 *  which slicing-by-N looks up for the byte k places before the end of an
 *  N-byte block (Kounavis and Berry, "Novel Table Lookup-Based Algorithms
 *  for High-Performance CRC Generation", IEEE Trans. Computers 57(11),
 *  2008; zlib's crc32.c before 1.2.12 used its by-4 form). */
static uint32_t crc_tab[16][256];

static void crc_tab_init(void)
{
        uint32_t i, j, c;
        int      k;

        for (i = 0; i < 256; i++) {
                for (c = i, j = 0; j < 8; j++)
                        c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
                crc_tab[0][i] = c;
        }
        for (i = 0; i < 256; i++)
                for (k = 1; k < 16; k++)
                        crc_tab[k][i] = (crc_tab[k - 1][i] >> 8) ^
                                        crc_tab[0][crc_tab[k - 1][i] & 0xff];
}

/** @returns the 4 bytes at @p p as a little-endian word (one load on
 *           x86-64: GCC and Clang merge the byte reads). */
static inline uint32_t le32(const uint8_t *p)
{
        return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
               ((uint32_t)p[3] << 24);
}

/** @returns the CRC-32 of @p len bytes, slicing-by-16 (blocks of 16, then
 *           one of 8, then bytes). */
static __attribute__((noinline)) uint32_t crc_by16(const uint8_t *p, size_t len)
{
        uint32_t c = 0xffffffffu;

        for (; len >= 16; p += 16, len -= 16) {
                uint32_t a = le32(p) ^ c, b = le32(p + 4), d = le32(p + 8),
                         e = le32(p + 12);

                c = crc_tab[15][a & 0xff] ^ crc_tab[14][(a >> 8) & 0xff] ^
                    crc_tab[13][(a >> 16) & 0xff] ^ crc_tab[12][a >> 24] ^
                    crc_tab[11][b & 0xff] ^ crc_tab[10][(b >> 8) & 0xff] ^
                    crc_tab[9][(b >> 16) & 0xff] ^ crc_tab[8][b >> 24] ^
                    crc_tab[7][d & 0xff] ^ crc_tab[6][(d >> 8) & 0xff] ^
                    crc_tab[5][(d >> 16) & 0xff] ^ crc_tab[4][d >> 24] ^
                    crc_tab[3][e & 0xff] ^ crc_tab[2][(e >> 8) & 0xff] ^
                    crc_tab[1][(e >> 16) & 0xff] ^ crc_tab[0][e >> 24];
        }
        if (len >= 8) {
                uint32_t a = le32(p) ^ c, b = le32(p + 4);

                c = crc_tab[7][a & 0xff] ^ crc_tab[6][(a >> 8) & 0xff] ^
                    crc_tab[5][(a >> 16) & 0xff] ^ crc_tab[4][a >> 24] ^
                    crc_tab[3][b & 0xff] ^ crc_tab[2][(b >> 8) & 0xff] ^
                    crc_tab[1][(b >> 16) & 0xff] ^ crc_tab[0][b >> 24];
                p += 8;
                len -= 8;
        }
        while (len--)
                c = crc_tab[0][(c ^ *p++) & 0xff] ^ (c >> 8);
        return ~c;
}

/* ---- the candidates ---- */

enum cand { C_ZLIB, C_LIBDEFLATE, C_BY8, C_BY16, C_KS, C__CNT };
static const char *const cand_names[C__CNT] = {"zlib", "libdeflate", "by8",
                                               "by16", "ks_hash"};
static const char *const cand_what[C__CNT]  = {
     "zlib crc32()", "libdeflate_crc32()",
     "own table, slicing-by-8 (the core's ks_crc32_by8())",
     "own table, slicing-by-16 (prototype)",
     "ks_hash_crc32() as built (by8 < 16 bytes, else libdeflate)"};

enum shape { S_BYTE1, S_MMSI9, S_UUID36, S_TEXT100, S__CNT };
static const char *const shape_names[S__CNT] = {"byte1", "mmsi9", "uuid36",
                                                "text100"};
static const size_t      shape_len[S__CNT]   = {1, 9, 36, 100};

typedef struct keyset {
        uint8_t *bytes; /**< keys packed, key i at i * len */
        size_t   len;
        uint32_t mask; /**< keys - 1 (a power of two) */
} keyset_t;

/* One timed loop per candidate and way. A macro, so each candidate is
 * called directly (as ks_hash_crc32() would call it), not through a
 * function pointer. */
#define KSB_CRC_LOOP_INDEP(CALL)                                               \
        do {                                                                   \
                for (i = 0; i < calls; i++) {                                  \
                        const uint8_t *p = ks->bytes + (size_t)idx * ks->len;  \
                        acc += CALL;                                           \
                        idx = (idx + 1) & ks->mask;                            \
                }                                                              \
        } while (0)
#define KSB_CRC_LOOP_CHAIN(CALL)                                               \
        do {                                                                   \
                for (i = 0; i < calls; i++) {                                  \
                        const uint8_t *p = ks->bytes + (size_t)idx * ks->len;  \
                        uint32_t       h = CALL;                               \
                        acc ^= h;                                              \
                        idx = (idx + 1 + (h & 1)) & ks->mask;                  \
                }                                                              \
        } while (0)
#define KSB_CRC_LOOP(CALL)                                                     \
        do {                                                                   \
                if (chain)                                                     \
                        KSB_CRC_LOOP_CHAIN(CALL);                              \
                else                                                           \
                        KSB_CRC_LOOP_INDEP(CALL);                              \
        } while (0)

/** @returns ns per call of candidate @p c over @p calls keys of @p ks. */
static double time_loop(enum cand c, const keyset_t *ks, size_t calls,
                        int chain)
{
        uint32_t acc = 0, idx = 0;
        size_t   i, len       = ks->len;
        uint64_t t0 = ksb_now_ns(), t1;

        switch (c) {
        case C_ZLIB:
                KSB_CRC_LOOP((uint32_t)crc32(0, p, (uInt)len));
                break;
        case C_LIBDEFLATE:
                KSB_CRC_LOOP(libdeflate_crc32(0, p, len));
                break;
        case C_BY8:
                KSB_CRC_LOOP(ks_crc32_by8(p, len));
                break;
        case C_BY16:
                KSB_CRC_LOOP(crc_by16(p, len));
                break;
        default:
                KSB_CRC_LOOP(ks_hash_crc32(p, len));
                break;
        }
        t1       = ksb_now_ns();
        ksb_sink = acc;
        return (double)(t1 - t0) / (double)calls;
}

/** @brief Fills @p ks with @p n keys of shape @p s. */
static void keyset_make(keyset_t *ks, enum shape s, size_t n, uint64_t seed)
{
        static const char hex[] = "0123456789abcdef";
        uint32_t         *perm  = malloc(n * sizeof(*perm));
        size_t            i, j;

        ks->len   = shape_len[s];
        ks->mask  = (uint32_t)(n - 1);
        ks->bytes = malloc(n * ks->len);
        if (!perm || !ks->bytes)
                ksb_die("out of memory");
        for (i = 0; i < n; i++) /* shuffled ids: MMSIs not in order */
                perm[i] = (uint32_t)i;
        for (i = n - 1; i > 0; i--) {
                uint32_t t;

                j       = (size_t)(ksb_splitmix64(&seed) % (i + 1));
                t       = perm[i];
                perm[i] = perm[j];
                perm[j] = t;
        }
        for (i = 0; i < n; i++) {
                uint8_t *k = ks->bytes + i * ks->len;
                char     text[16];

                switch (s) {
                case S_MMSI9:
                        snprintf(text, sizeof(text), "%09u", ksb_mmsi(perm[i]));
                        memcpy(k, text, 9);
                        break;
                case S_UUID36: {
                        uint64_t hi = ksb_splitmix64(&seed),
                                 lo = ksb_splitmix64(&seed);
                        uint8_t b[16];
                        size_t  o = 0;

                        for (j = 0; j < 8; j++) {
                                b[j]     = (uint8_t)(hi >> (8 * j));
                                b[8 + j] = (uint8_t)(lo >> (8 * j));
                        }
                        b[6] = (uint8_t)((b[6] & 0x0f) | 0x40); /* v4 */
                        b[8] = (uint8_t)((b[8] & 0x3f) | 0x80); /* RFC */
                        for (j = 0; j < 16; j++) {
                                if (j == 4 || j == 6 || j == 8 || j == 10)
                                        k[o++] = '-';
                                k[o++] = (uint8_t)hex[b[j] >> 4];
                                k[o++] = (uint8_t)hex[b[j] & 15];
                        }
                        break;
                }
                default:
                        for (j = 0; j < ks->len; j++)
                                k[j] = (uint8_t)(s == S_BYTE1
                                                     ? ksb_splitmix64(&seed)
                                                     : 0x20 + ksb_splitmix64(
                                                                  &seed) %
                                                                  95);
                        break;
                }
        }
        free(perm);
}

/** @brief Fills @p ks with @p n random printable keys of @p len bytes. */
static void keyset_text(keyset_t *ks, size_t len, size_t n, uint64_t seed)
{
        size_t i;

        ks->len   = len;
        ks->mask  = (uint32_t)(n - 1);
        ks->bytes = malloc(n * len);
        if (!ks->bytes)
                ksb_die("out of memory");
        for (i = 0; i < n * len; i++)
                ks->bytes[i] = (uint8_t)(0x20 + ksb_splitmix64(&seed) % 95);
}

/** @brief Dies unless every candidate gives zlib's CRC for every key. */
static void check(const keyset_t *ks, size_t n)
{
        size_t i;

        for (i = 0; i < n; i++) {
                const uint8_t *p = ks->bytes + i * ks->len;
                uint32_t       z = (uint32_t)crc32(0, p, (uInt)ks->len);

                if (libdeflate_crc32(0, p, ks->len) != z ||
                    ks_crc32_by8(p, ks->len) != z ||
                    crc_by16(p, ks->len) != z || ks_hash_crc32(p, ks->len) != z)
                        ksb_die("a CRC-32 differs from zlib's on key %zu of "
                                "length %zu",
                                i, ks->len);
        }
}

/** @brief The --sweep notes: candidates' medians by key length. */
static void sweep(size_t rounds, size_t calls, size_t keys)
{
        static const size_t lens[]  = {1,  4,  8,  9,  12, 15, 16, 17,
                                       20, 24, 28, 32, 36, 40, 48, 64};
        static const int    cands[] = {C_ZLIB, C_LIBDEFLATE, C_BY8, C_BY16};
        double             *v       = calloc(rounds, sizeof(*v));
        size_t              l, r;
        int                 c, w;

        if (!v)
                ksb_die("out of memory");
        ksb_note("sweep: ns per key, median of %zu rounds, independent "
                 "calls / each result waited for",
                 rounds);
        for (l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
                keyset_t ks;
                double   med[4][2];

                keyset_text(&ks, lens[l], keys, 0x5eedu + l);
                check(&ks, keys);
                for (w = 0; w < 2; w++)
                        for (c = 0; c < 4; c++) {
                                for (r = 0; r < rounds; r++)
                                        v[r] = time_loop((enum cand)cands[c],
                                                         &ks, calls, w);
                                med[c][w] = ksb_median(v, rounds);
                        }
                ksb_note("sweep len %3zu: zlib %6.1f / %6.1f  libdeflate "
                         "%6.1f / %6.1f  by8 %6.1f / %6.1f  by16 %6.1f / "
                         "%6.1f",
                         lens[l], med[0][0], med[0][1], med[1][0], med[1][1],
                         med[2][0], med[2][1], med[3][0], med[3][1]);
                free(ks.bytes);
        }
        free(v);
}

int main(int argc, char **argv)
{
        size_t   rounds = 15, calls = 1u << 20, keys = 4096;
        keyset_t ks[S__CNT];
        double  *ns, *ratio;
        size_t   r;
        int      a, s, w, c, do_sweep = 0;

        for (a = 1; a < argc; a++) {
                if (!strcmp(argv[a], "--rounds") && a + 1 < argc)
                        rounds = strtoull(argv[++a], NULL, 10);
                else if (!strcmp(argv[a], "--calls") && a + 1 < argc)
                        calls = strtoull(argv[++a], NULL, 10);
                else if (!strcmp(argv[a], "--keys") && a + 1 < argc)
                        keys = strtoull(argv[++a], NULL, 10);
                else if (!strcmp(argv[a], "--sweep"))
                        do_sweep = 1;
                else
                        ksb_die("usage: ksb_crc32 [--rounds N] [--calls N] "
                                "[--keys N (a power of two)] [--sweep]");
        }
        if (rounds < 1 || calls < 1 || keys < 2 || (keys & (keys - 1)))
                ksb_die("--rounds, --calls >= 1; --keys a power of two");
        crc_tab_init();
        for (s = 0; s < S__CNT; s++) {
                keyset_make(&ks[s], (enum shape)s, keys, 0xc4c32u + s);
                check(&ks[s], keys);
        }
        ksb_note("every candidate gives zlib's CRC-32 on all %zu keys of "
                 "each shape",
                 keys);
        ksb_note("%zu rounds, %zu calls a loop, %zu keys a shape", rounds,
                 calls, keys);

        /* ns[((c * S__CNT + s) * 2 + w) * rounds + r] */
        ns    = calloc(C__CNT * S__CNT * 2 * rounds, sizeof(*ns));
        ratio = calloc(rounds, sizeof(*ratio));
        if (!ns || !ratio)
                ksb_die("out of memory");
#define NS(c, s, w, r) ns[(((size_t)(c)*S__CNT + (s)) * 2 + (w)) * rounds + (r)]
        for (r = 0; r < rounds; r++)
                for (s = 0; s < S__CNT; s++)
                        for (w = 0; w < 2; w++)
                                for (c = 0; c < C__CNT; c++) {
                                        int cc = (int)((c + r) % C__CNT);

                                        NS(cc, s, w, r) = time_loop(
                                            (enum cand)cc, &ks[s], calls, w);
                                }

        for (w = 0; w < 2; w++)
                for (s = 0; s < S__CNT; s++)
                        for (c = 0; c < C__CNT; c++) {
                                char id[80], what[160];

                                snprintf(id, sizeof(id), "crc.%s.%s.%s",
                                         shape_names[s], w ? "chain" : "indep",
                                         cand_names[c]);
                                snprintf(what, sizeof(what),
                                         "%s, ns per %zu-byte key (%s)",
                                         cand_what[c], shape_len[s],
                                         w ? "each result waited for"
                                           : "independent calls");
                                ksb_result(id, what, "-", 0, "ns",
                                           &NS(c, s, w, 0), rounds);
                                if (c == C_ZLIB)
                                        continue;
                                for (r = 0; r < rounds; r++)
                                        ratio[r] = NS(c, s, w, r) /
                                                   NS(C_ZLIB, s, w, r);
                                snprintf(id, sizeof(id), "crc.%s.%s.%s/zlib",
                                         shape_names[s], w ? "chain" : "indep",
                                         cand_names[c]);
                                snprintf(what, sizeof(what),
                                         "%s over zlib, same round",
                                         cand_what[c]);
                                ksb_result(id, what, "-", 0, "x", ratio,
                                           rounds);
                        }
#undef NS
        if (do_sweep)
                sweep(rounds, calls, keys);
        for (s = 0; s < S__CNT; s++)
                free(ks[s].bytes);
        free(ns);
        free(ratio);
        return 0;
}
