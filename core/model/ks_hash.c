/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_hash.c
 * @brief The key hashes Kafka clients partition with, bit-exact, and
 *        keyshift's own 64-bit sketch hash.
 *
 * Sources (read, not copied):
 *  - Murmur2: Apache Kafka `clients/.../common/utils/Utils.java`
 *    `murmur2(byte[])` and librdkafka v2.0.2 `src/rdmurmur2.c`
 *    `rd_murmur2()`. Both read the body as little-endian 32-bit words and
 *    the 1–3 tail bytes *unsigned* (Java masks every byte with `& 0xff`;
 *    librdkafka reads them through `const unsigned char *`), so there is no
 *    sign extension anywhere.
 *  - CRC-32: librdkafka v2.0.2 `src/rdcrc32.h` `rd_crc32()`, which with
 *    zlib is `crc32(crc32(0, NULL, 0), data, len)` and without zlib a
 *    pycrc table (poly 0x04c11db7 reflected, init/xorout 0xffffffff): the
 *    same function. The CRC of zero bytes is 0. Computed (issue 33: any
 *    source proven equal to zlib's, the fastest kept, bench/README.md
 *    "CRC-32") by libdeflate's `libdeflate_crc32()` for keys of 16 bytes
 *    and more (its PCLMULQDQ folding: 4.3 ns a 36-byte UUID against zlib's
 *    40), and below 16 bytes, where libdeflate 1.14 and zlib 1.2.13
 *    both go a byte at a time, by slicing-by-8 tables of our own
 *    (ks_crc32.c: 3.1 ns a 9-byte MMSI against zlib's 6.6).
 *    tests/unit/test_crc32.c compares it with zlib's `crc32()` on 10 M
 *    random inputs and on every key of the test streams.
 *  - FNV-1a: http://www.isthe.com/chongo/tech/comp/fnv/ (32-bit offset
 *    basis 0x811c9dc5, prime 16777619). librdkafka's `rd_fnv1a()` is this
 *    hash followed by Sarama's absolute value; that step belongs to the
 *    partitioner and lives in ks_partitioner.c.
 *  - MurmurHash64A: Austin Appleby, SMHasher `src/MurmurHash2.cpp`
 *    (public domain). Words are read little-endian here so the result does
 *    not depend on the host's byte order (the reference reads native order,
 *    which is the same on every little-endian host).
 *
 * Words are assembled from single bytes (never loaded through a cast
 * pointer), so unaligned keys are well defined on every host.
 */
#include "ks_hash.h"

#include <libdeflate.h>

#include "ks_crc32.h"

/** Fixed seed of ks_hash_key64(): the seed Redis `src/hyperloglog.c` gives
 *  MurmurHash64A, so our distinct-key estimate hashes like Redis's. */
#define KS_HASH_KEY64_SEED 0xadc83b19ULL

/**
 * @brief Reads 4 bytes at @p p as a little-endian unsigned integer.
 * @returns the 32-bit word.
 */
static uint32_t ks_hash_load_le32(const unsigned char *p)
{
        return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
               ((uint32_t)p[3] << 24);
}

/**
 * @brief Reads 8 bytes at @p p as a little-endian unsigned integer.
 * @returns the 64-bit word.
 */
static uint64_t ks_hash_load_le64(const unsigned char *p)
{
        return (uint64_t)ks_hash_load_le32(p) |
               ((uint64_t)ks_hash_load_le32(p + 4) << 32);
}

uint32_t ks_hash_murmur2(const void *key, size_t len)
{
        const uint32_t       m = 0x5bd1e995;
        const int            r = 24;
        const unsigned char *p = key;
        uint32_t             h;

        if (!p)
                len = 0;
        /* Java's length is an int; only its low 32 bits enter the seed. */
        h = 0x9747b28cU ^ (uint32_t)len;

        for (; len >= 4; len -= 4, p += 4) {
                uint32_t k = ks_hash_load_le32(p);

                k *= m;
                k ^= k >> r;
                k *= m;
                h *= m;
                h ^= k;
        }

        /* Tail: bytes are unsigned in both Java (`& 0xff`) and librdkafka. */
        switch (len) {
        case 3:
                h ^= (uint32_t)p[2] << 16;
                /* fall through */
        case 2:
                h ^= (uint32_t)p[1] << 8;
                /* fall through */
        case 1:
                h ^= (uint32_t)p[0];
                h *= m;
                break;
        default:
                break;
        }

        h ^= h >> 13;
        h *= m;
        h ^= h >> 15;
        return h;
}

/** Keys this long and longer go to libdeflate, whose x86-64 PCLMULQDQ
 *  path starts at 16 bytes (libdeflate 1.14 `crc32_x86_pclmul*`: shorter
 *  buffers go through its byte table); below it slicing-by-8 is faster
 *  (`ksb_crc32 --sweep`, bench/README.md). */
#define KS_HASH_CRC32_LIBDEFLATE_MIN 16

uint32_t ks_hash_crc32(const void *key, size_t len)
{
        if (!key)
                return 0; /* CRC of no bytes, as rd_crc32() */
        if (len < KS_HASH_CRC32_LIBDEFLATE_MIN)
                return ks_crc32_by8(key, len);
        return libdeflate_crc32(0, key, len); /* size_t: any length */
}

uint32_t ks_hash_fnv1a(const void *key, size_t len)
{
        const unsigned char *p = key;
        uint32_t             h = 0x811c9dc5U;
        size_t               i;

        if (!p)
                return h;

        for (i = 0; i < len; i++) {
                h ^= p[i];
                h *= 0x01000193U;
        }
        return h;
}

uint64_t ks_hash_murmur64a(const void *key, size_t len, uint64_t seed)
{
        const uint64_t       m = 0xc6a4a7935bd1e995ULL;
        const int            r = 47;
        const unsigned char *p = key;
        uint64_t             h;

        if (!p)
                len = 0;
        h = seed ^ ((uint64_t)len * m);

        for (; len >= 8; len -= 8, p += 8) {
                uint64_t k = ks_hash_load_le64(p);

                k *= m;
                k ^= k >> r;
                k *= m;
                h ^= k;
                h *= m;
        }

        switch (len) {
        case 7:
                h ^= (uint64_t)p[6] << 48;
                /* fall through */
        case 6:
                h ^= (uint64_t)p[5] << 40;
                /* fall through */
        case 5:
                h ^= (uint64_t)p[4] << 32;
                /* fall through */
        case 4:
                h ^= (uint64_t)p[3] << 24;
                /* fall through */
        case 3:
                h ^= (uint64_t)p[2] << 16;
                /* fall through */
        case 2:
                h ^= (uint64_t)p[1] << 8;
                /* fall through */
        case 1:
                h ^= (uint64_t)p[0];
                h *= m;
                break;
        default:
                break;
        }

        h ^= h >> r;
        h *= m;
        h ^= h >> r;
        return h;
}

uint64_t ks_hash_key64(const void *key, size_t len)
{
        return ks_hash_murmur64a(key, len, KS_HASH_KEY64_SEED);
}
