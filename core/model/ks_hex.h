/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_hex.h
 * @brief A key's bytes as hex and back: the one encoder and parser the
 *        report (`key_hex`), the `keyshift` command (`hash -f hex`,
 *        `merge`) and the tests share.
 *
 * Written in lower case, as the report schema's `key_hex` demands
 * (`^([0-9a-f][0-9a-f])*$`); read in either case, as a user types a key.
 *
 * Thread-safety: pure and re-entrant.
 */
#ifndef KS_HEX_H
#define KS_HEX_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/** Byte b -> its two lower-case hex digits at 2 * b (and a NUL). */
extern const char ks_hex_pairs[513];

/**
 * @brief Writes @p n bytes at @p b as lower-case hex at @p d, 2 * @p n
 *        bytes, no NUL: the report writer's fast path (ks_report_jout.h)
 *        and ks_hex_encode(). @returns the end.
 */
static inline char *ks_hex_put(char *d, const uint8_t *b, size_t n)
{
        size_t i;

        for (i = 0; i < n; i++, d += 2)
                memcpy(d, ks_hex_pairs + 2 * b[i], 2);
        return d;
}

/**
 * @brief Writes @p n bytes at @p b as lower-case hex into @p out, with a
 *        terminating NUL: 2 * @p n + 1 bytes. @p b may be NULL only when
 *        @p n is 0.
 */
void ks_hex_encode(const uint8_t *b, size_t n, char *out);

/**
 * @brief Decodes the @p slen hex digits at @p s (upper or lower case, no
 *        prefix, no white space) into @p out, at most @p cap bytes.
 * @returns the number of bytes (@p slen / 2), or -1 when @p slen is odd,
 *          a character is not a hex digit (@p out then holds the bytes
 *          before it), or they would be more than @p cap bytes.
 */
long ks_hex_decode(const char *s, size_t slen, uint8_t *out, size_t cap);

#endif /* KS_HEX_H */
