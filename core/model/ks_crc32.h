/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_crc32.h
 * @brief CRC-32 of short keys by a table of our own (slicing-by-8): the
 *        part of ks_hash_crc32() no library computes fast.
 *
 * The CRC is zlib's `crc32()` (IEEE 802.3: reflected polynomial
 * 0xEDB88320, initial value and final xor 0xFFFFFFFF), which librdkafka's
 * `rd_crc32()` is. Callers want ks_hash_crc32() (ks_hash.h), which sends
 * keys of 16 bytes and more to libdeflate instead; this is exposed so the
 * unit test and the benchmark can check and time the table on every
 * length.
 *
 * Thread-safety: pure and re-entrant; the tables are built by a
 * constructor before main() (or before dlopen() returns, in the plugin)
 * and only read after.
 */
#ifndef KS_CRC32_H
#define KS_CRC32_H

#include <stddef.h>
#include <stdint.h>

/**
 * @brief CRC-32 of @p len bytes at @p key, slicing-by-8 (any length; the
 *        fastest way this host knows below 16 bytes, bench/README.md).
 *        @p key may be NULL only when @p len is 0.
 * @returns the CRC, equal to zlib's `crc32(0, key, len)`; 0 for no bytes.
 */
uint32_t ks_crc32_by8(const void *key, size_t len);

#endif /* KS_CRC32_H */
