/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_base64.h
 * @brief Base64 (RFC 4648 section 4: the standard alphabet A-Z a-z 0-9 + /,
 *        '=' padding, no line breaks) of the report's packed sketches
 *        (ks_pack.h).
 *
 * Why our own: the report's writer formats its output straight into its
 * buffer (ks_report_jout.h), and neither libsodium nor OpenSSL is linked
 * into the plugin today; adding libcrypto to every producer that loads
 * keyshift for forty lines of table lookups would cost more than the
 * lines. The encoder is checked against RFC 4648's test vectors and
 * against Python's base64 module (tests/unit/test_pack.c).
 *
 * The decoder is strict, as a checksum's companion should be: only the
 * alphabet, a length that is a multiple of 4, padding only at the end and
 * only as much as the last group needs, and the unused bits of the last
 * group 0 (RFC 4648 section 3.5: a canonical encoding), so that a string
 * decodes to one byte sequence and every other string is refused.
 *
 * Thread-safety: pure and re-entrant.
 */
#ifndef KS_BASE64_H
#define KS_BASE64_H

#include <stddef.h>
#include <stdint.h>

/** @returns the characters ks_base64_encode() writes for @p n bytes:
 *           4 ceil(n / 3). */
static inline size_t ks_base64_len(size_t n)
{
        return (n + 2) / 3 * 4;
}

/**
 * @brief Writes @p n bytes at @p b as base64 at @p out (ks_base64_len(n)
 *        characters, no NUL).
 * @returns the end of what was written.
 */
char *ks_base64_encode(const uint8_t *b, size_t n, char *out);

/**
 * @brief Decodes @p len characters at @p s into @p out, which has room for
 *        at least 3 len / 4 bytes.
 * @returns the bytes decoded, or -1 when @p s is not canonical base64;
 *          then *bad_at (when not NULL) is the offset of the first
 *          character at fault (@p len when the length is wrong).
 */
long ks_base64_decode(const char *s, size_t len, uint8_t *out, size_t *bad_at);

#endif /* KS_BASE64_H */
