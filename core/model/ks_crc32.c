/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_crc32.c
 * @brief CRC-32 by slicing-by-8, for keys shorter than libdeflate's fast
 *        path (ks_hash_crc32(), ks_hash.c).
 *
 * The CRC: IEEE 802.3 CRC-32 as zlib's `crc32()` and librdkafka's
 * `rd_crc32()` compute it: polynomial 0x04C11DB7 processed reflected
 * (least significant bit first, so the table is built from 0xEDB88320),
 * register preset to 0xFFFFFFFF, result inverted. The CRC of no bytes is
 * 0.
 *
 * The method: slicing-by-8 (M. E. Kounavis and F. L. Berry, "A Systematic
 * Approach to Building High Performance Software-based CRC Generators",
 * ISCC 2005; "Novel Table Lookup-Based Algorithms for High-Performance
 * CRC Generation", IEEE Trans. Computers 57(11), 2008). Table 0 is the
 * classic byte-at-a-time table (the CRC register after shifting byte b
 * through it); table k holds the register after byte b and then k zero
 * bytes, T[k][b] = (T[k-1][b] >> 8) ^ T[0][T[k-1][b] & 0xff]. An 8-byte
 * block is then eight independent lookups, one per byte, xor-ed: byte j
 * of the block (the register folded into the first four) still has 7 - j
 * bytes to travel, so it is looked up in table 7 - j. A 4-byte step uses
 * tables 3..0 the same way, and the last 0-3 bytes go one at a time
 * through table 0. Words are assembled from single bytes in little-endian
 * order (the register's reflected order), so the result does not depend
 * on the host's byte order or on the key's alignment.
 *
 * Why a table of our own: for keys under 16 bytes (the 9-byte decimal
 * MMSIs keyshift is built for) both zlib 1.2.13 and libdeflate 1.14 go a
 * byte at a time; this takes 3.1 ns a 9-byte key against their 6.6-6.8
 * (independent calls; 9.5 ns against 23 when each result is waited for):
 * bench/README.md, issue 33, `ksb_crc32`. Memory: 8 tables of 256 words,
 * 8 KiB, filled before main() (or before the plugin's dlopen() returns).
 */
#include "ks_crc32.h"

/** The reflected polynomial 0x04C11DB7 (zlib's and IEEE 802.3's). */
#define KS_CRC32_POLY_REFLECTED 0xedb88320U

/** ks_crc32_tab[k][b]: the register after byte b then k zero bytes. */
static uint32_t ks_crc32_tab[8][256];

/**
 * @brief Fills ks_crc32_tab (file comment). Runs once, as a constructor,
 *        before any thread can call ks_crc32_by8().
 */
__attribute__((constructor)) static void ks_crc32_tab_init(void)
{
        uint32_t b, c;
        int      bit, k;

        for (b = 0; b < 256; b++) {
                c = b;
                for (bit = 0; bit < 8; bit++)
                        c = (c & 1) ? KS_CRC32_POLY_REFLECTED ^ (c >> 1)
                                    : c >> 1;
                ks_crc32_tab[0][b] = c;
        }
        for (k = 1; k < 8; k++)
                for (b = 0; b < 256; b++) {
                        c = ks_crc32_tab[k - 1][b];
                        ks_crc32_tab[k][b] =
                            (c >> 8) ^ ks_crc32_tab[0][c & 0xff];
                }
}

/**
 * @brief Reads 4 bytes at @p p as a little-endian word (one load on
 *        x86-64 and arm64: compilers merge the byte reads).
 * @returns the 32-bit word.
 */
static inline uint32_t ks_crc32_load_le32(const unsigned char *p)
{
        return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
               ((uint32_t)p[3] << 24);
}

uint32_t ks_crc32_by8(const void *key, size_t len)
{
        const unsigned char *p = key;
        uint32_t             c = 0xffffffffU;

        if (!p)
                return 0;
        for (; len >= 8; p += 8, len -= 8) {
                uint32_t a = ks_crc32_load_le32(p) ^ c;
                uint32_t b = ks_crc32_load_le32(p + 4);

                c = ks_crc32_tab[7][a & 0xff] ^
                    ks_crc32_tab[6][(a >> 8) & 0xff] ^
                    ks_crc32_tab[5][(a >> 16) & 0xff] ^
                    ks_crc32_tab[4][a >> 24] ^ ks_crc32_tab[3][b & 0xff] ^
                    ks_crc32_tab[2][(b >> 8) & 0xff] ^
                    ks_crc32_tab[1][(b >> 16) & 0xff] ^
                    ks_crc32_tab[0][b >> 24];
        }
        if (len >= 4) {
                uint32_t a = ks_crc32_load_le32(p) ^ c;

                c = ks_crc32_tab[3][a & 0xff] ^
                    ks_crc32_tab[2][(a >> 8) & 0xff] ^
                    ks_crc32_tab[1][(a >> 16) & 0xff] ^
                    ks_crc32_tab[0][a >> 24];
                p += 4;
                len -= 4;
        }
        while (len-- > 0)
                c = ks_crc32_tab[0][(c ^ *p++) & 0xff] ^ (c >> 8);
        return ~c;
}
