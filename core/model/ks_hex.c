/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_hex.c
 * @brief Bytes as hex and back (ks_hex.h).
 */
#include "ks_hex.h"

const char ks_hex_pairs[513] =
    "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20212223"
    "2425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f4041424344454647"
    "48494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f606162636465666768696a6b"
    "6c6d6e6f707172737475767778797a7b7c7d7e7f808182838485868788898a8b8c8d8e8f"
    "909192939495969798999a9b9c9d9e9fa0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3"
    "b4b5b6b7b8b9babbbcbdbebfc0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7"
    "d8d9dadbdcdddedfe0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafb"
    "fcfdfeff";

void ks_hex_encode(const uint8_t *b, size_t n, char *out)
{
        *ks_hex_put(out, b, n) = '\0';
}

/** @returns the value of hex digit @p c (0..15), or -1 if it is not one. */
static int ks_hex_digit(char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

long ks_hex_decode(const char *s, size_t slen, uint8_t *out, size_t cap)
{
        size_t i;

        if (slen % 2 || slen / 2 > cap)
                return -1;
        for (i = 0; i < slen / 2; i++) {
                int hi = ks_hex_digit(s[2 * i]);
                int lo = ks_hex_digit(s[2 * i + 1]);

                if (hi < 0 || lo < 0)
                        return -1;
                out[i] = (uint8_t)(hi << 4 | lo);
        }
        return (long)(slen / 2);
}
