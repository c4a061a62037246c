/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_bytes.h
 * @brief Copying a short key without a call: GCC turns a memcpy() of a
 *        variable but bounded length into a call or `rep movs`, whose
 *        start-up cost is most of copying a 9-byte MMSI key (it was a third
 *        of a hot-key takeover, ks_topk.c, and showed on on_send's path,
 *        ks_stage.c).
 */
#ifndef KS_BYTES_H
#define KS_BYTES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/**
 * @brief Copies @p n bytes from @p src to @p dst (not overlapping) with
 *        fixed-size moves that stay within both: 16-byte blocks, then two
 *        overlapping 8- or 4-byte moves, or single bytes below 4.
 * @locality any thread. Reads exactly src[0..n), writes dst[0..n).
 */
static inline void ks_bytes_copy_small(uint8_t *dst, const uint8_t *src,
                                       size_t n)
{
        for (; n >= 16; n -= 16, dst += 16, src += 16)
                memcpy(dst, src, 16);
        if (n >= 8) { /* two overlapping 8-byte moves */
                memcpy(dst, src, 8);
                memcpy(dst + n - 8, src + n - 8, 8);
        } else if (n >= 4) {
                memcpy(dst, src, 4);
                memcpy(dst + n - 4, src + n - 4, 4);
        } else {
                for (; n > 0; n--)
                        *dst++ = *src++;
        }
}

#endif /* KS_BYTES_H */
