/**
 * @file ks_base64.c
 * @brief Base64 of RFC 4648 section 4 (ks_base64.h): three bytes to four
 *        characters by table, and back, strictly.
 */
#include "ks_base64.h"

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

/** @returns the 6 bits of character @p c, or -1 when not of the alphabet
 *           ('=' included: the caller handles padding). */
static int dec(unsigned char c)
{
        if (c >= 'A' && c <= 'Z')
                return c - 'A';
        if (c >= 'a' && c <= 'z')
                return c - 'a' + 26;
        if (c >= '0' && c <= '9')
                return c - '0' + 52;
        if (c == '+')
                return 62;
        if (c == '/')
                return 63;
        return -1;
}

long ks_base64_decode(const char *s, size_t len, uint8_t *out, size_t *bad_at)
{
        size_t i, o = 0, bad = len;

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
