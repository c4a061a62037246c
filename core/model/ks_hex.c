/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_hex.c
 * @brief Bytes as hex and back (ks_hex.h).
 */
#include "ks_hex.h"

void ks_hex_encode(const uint8_t *b, size_t n, char *out)
{
        static const char digits[] = "0123456789abcdef";
        size_t            i;

        for (i = 0; i < n; i++) {
                out[2 * i]     = digits[b[i] >> 4];
                out[2 * i + 1] = digits[b[i] & 15];
        }
        out[2 * n] = '\0';
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
