/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_base64.c
 * @brief Base64 of RFC 4648 section 4 (ks_base64.h): three bytes to four
 *        characters by table, and back, strictly.
 */
#include "ks_base64.h"

#include <pthread.h>
#include <string.h>

static const char enc[64] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *ks_base64_encode(const uint8_t *b, size_t n, char *out)
{
        size_t i;

        for (i = 0; i + 3 <= n; i += 3) {
                uint32_t v =
                    (uint32_t)b[i] << 16 | (uint32_t)b[i + 1] << 8 | b[i + 2];
                out[0] = enc[v >> 18];
                out[1] = enc[v >> 12 & 63];
                out[2] = enc[v >> 6 & 63];
                out[3] = enc[v & 63];
                out += 4;
        }
        if (n - i == 1) {
                out[0] = enc[b[i] >> 2];
                out[1] = enc[(b[i] & 3) << 4];
                out[2] = out[3] = '=';
                out += 4;
        } else if (n - i == 2) {
                uint32_t v = (uint32_t)b[i] << 8 | b[i + 1];
                out[0]     = enc[v >> 10];
                out[1]     = enc[v >> 4 & 63];
                out[2]     = enc[(v & 15) << 2];
                out[3]     = '=';
                out += 4;
        }
        return out;
}

/** Character -> its 6 bits, -1 for any other ('=' too) (a table:
 *  the branches of a range test per character were ~6 % of reading a
 *  report, perf of keyshift show). Filled once, on first use. */
static signed char    dec_table[256];
static pthread_once_t dec_once = PTHREAD_ONCE_INIT;

static void dec_init(void)
{
        int i;

        memset(dec_table, -1, sizeof(dec_table));
        for (i = 0; i < 64; i++)
                dec_table[(unsigned char)enc[i]] = (signed char)i;
}

/** @returns the 6 bits of character @p c, or -1 when not of the alphabet
 *           ('=' included: the caller handles padding). */
static inline int dec(unsigned char c)
{
        return dec_table[c];
}

long ks_base64_decode(const char *s, size_t len, uint8_t *out, size_t *bad_at)
{
        size_t i, o = 0, bad = len;

        pthread_once(&dec_once, dec_init);
        if (len % 4)
                goto fail;
        for (i = 0; i < len; i += 4) {
                int      d[4], k, pad = 0;
                uint32_t v;

                for (k = 0; k < 4; k++) {
                        d[k] = dec((unsigned char)s[i + k]);
                        if (d[k] >= 0 && !pad)
                                continue;
                        /* '=' only as the last one or two of the last
                         * group; nothing of the alphabet after it (then
                         * the first '=' is at fault) */
                        if (s[i + k] == '=' && i + 4 == len && k >= 2) {
                                pad++;
                                continue;
                        }
                        bad = i + (size_t)(k - pad);
                        goto fail;
                }
                v = (uint32_t)d[0] << 18 | (uint32_t)d[1] << 12;
                if (pad == 2) {
                        if (d[1] & 15) { /* bits no byte holds */
                                bad = i + 1;
                                goto fail;
                        }
                        out[o++] = (uint8_t)(v >> 16);
                        break;
                }
                v |= (uint32_t)d[2] << 6;
                if (pad == 1) {
                        if (d[2] & 3) {
                                bad = i + 2;
                                goto fail;
                        }
                        out[o++] = (uint8_t)(v >> 16);
                        out[o++] = (uint8_t)(v >> 8);
                        break;
                }
                v |= (uint32_t)d[3];
                out[o++] = (uint8_t)(v >> 16);
                out[o++] = (uint8_t)(v >> 8);
                out[o++] = (uint8_t)v;
        }
        return (long)o;
fail:
        if (bad_at)
                *bad_at = bad;
        return -1;
}
