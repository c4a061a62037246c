/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_hash.h
 * @brief The key hashes Kafka clients partition with, bit-exact.
 *
 * Every function is pure, re-entrant and thread-safe. `key` may be NULL
 * only when `len` is 0 (a NULL key hashes as the empty byte string, as
 * librdkafka's own functions do when a partitioner hashes a NULL key).
 */
#ifndef KS_HASH_H
#define KS_HASH_H

#include <stddef.h>
#include <stdint.h>

/**
 * @brief Murmur2, 32 bit, seed 0x9747b28c, exactly as Apache Kafka's
 *        `org.apache.kafka.common.utils.Utils.murmur2(byte[])` and
 *        librdkafka's `rd_murmur2()` compute it (every byte, the 1-3
 *        tail bytes included, is read unsigned: Java masks with `& 0xff`,
 *        librdkafka reads `unsigned char`).
 * @returns the raw 32-bit hash; Java's partitioner then masks the sign
 *          bit (`Utils.toPositive`, `& 0x7fffffff`).
 */
uint32_t ks_hash_murmur2(const void *key, size_t len);

/**
 * @brief CRC-32 (IEEE 802.3, reflected, as zlib's `crc32()`), which is
 *        librdkafka's `rd_crc32()` used by the `consistent` and
 *        `consistent_random` partitioners. Computed by slicing-by-8
 *        tables of our own below 16 bytes (ks_crc32.h) and by
 *        libdeflate's `libdeflate_crc32()` from 16 bytes on, the fastest
 *        of zlib, libdeflate and our tables at each length (issue 33,
 *        bench/README.md "CRC-32"); tests/unit/test_crc32.c proves it
 *        equal to zlib's `crc32()`.
 */
uint32_t ks_hash_crc32(const void *key, size_t len);

/**
 * @brief FNV-1a 32 bit (offset basis 0x811c9dc5, prime 0x01000193), as
 *        Go's `hash/fnv.New32a()` used by Sarama.
 * @returns the plain FNV-1a hash. librdkafka's `rd_fnv1a()` (partitioners
 *          `fnv1a`, `fnv1a_random`) additionally takes the absolute value
 *          of it as an int32 (Sarama's hashPartitioner); that step is in
 *          ks_partitioner_hash(), not here.
 */
uint32_t ks_hash_fnv1a(const void *key, size_t len);

/**
 * @brief 64-bit hash of the key bytes for keyshift's own sketches
 *        (distinct-key estimate, key sample, hot keys). MurmurHash64A
 *        (Austin Appleby, public domain) with a fixed seed: independent of
 *        the partitioner hashes above, so a sample chosen by this hash is
 *        not biased towards any partition.
 */
uint64_t ks_hash_key64(const void *key, size_t len);

/**
 * @brief MurmurHash64A with an explicit seed (ks_hash_key64() is this with
 *        its fixed seed). Exposed so the algorithm can be checked against
 *        SMHasher's verification value, which varies the seed.
 * @returns the 64-bit hash, identical to the reference on little-endian
 *          hosts (words are read little-endian on every host).
 */
uint64_t ks_hash_murmur64a(const void *key, size_t len, uint64_t seed);

#endif /* KS_HASH_H */
