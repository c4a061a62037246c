/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_partitioner.h
 * @brief The partition model: where librdkafka 2.0.2 puts a message, as a
 *        function of the partitioner, sticky partitioning, the key and the
 *        partition count.
 *
 * Source: librdkafka v2.0.2 `src/rdkafka_msg.c`
 * (`rd_kafka_msg_partitioner()`, `rd_kafka_msg_partitioner_*()`) and
 * `src/rdkafka_topic.c` (which partitioners use sticky partitioning).
 *
 * A message sent to RD_KAFKA_PARTITION_UA is placed in one of three ways:
 *  - KS_PLACE_HASHED: partition = ks_partitioner_hash(key) % partition_cnt
 *    (unsigned remainder). These are the messages a partition increase can
 *    move.
 *  - KS_PLACE_STICKY: the topic's current sticky partition (NULL keys on
 *    every partitioner that allows sticky partitioning, and empty keys on
 *    `consistent_random`), when `sticky.partitioning.linger.ms` > 0.
 *  - KS_PLACE_RANDOM: a random partition (the `random` partitioner, and
 *    the cases above when sticky partitioning is off).
 * Sticky partitioning is never used by `consistent`, `murmur2` and `fnv1a`:
 * they hash NULL keys as empty keys (`consistent`: CRC-32 of nothing is 0,
 * so partition 0 at every count).
 *
 * All functions are pure and thread-safe.
 */
#ifndef KS_PARTITIONER_H
#define KS_PARTITIONER_H

#include <stddef.h>
#include <stdint.h>

typedef enum ks_partitioner {
        KS_PARTITIONER_RANDOM = 0,
        KS_PARTITIONER_CONSISTENT,
        KS_PARTITIONER_CONSISTENT_RANDOM, /* librdkafka's default */
        KS_PARTITIONER_MURMUR2,
        KS_PARTITIONER_MURMUR2_RANDOM, /* Java's default partitioner */
        KS_PARTITIONER_FNV1A,
        KS_PARTITIONER_FNV1A_RANDOM,
        KS_PARTITIONER__CNT
} ks_partitioner_t;

typedef enum ks_placement {
        KS_PLACE_HASHED = 0,
        KS_PLACE_STICKY,
        KS_PLACE_RANDOM,
} ks_placement_t;

/** @returns librdkafka's name for @p p ("murmur2_random", ...). */
const char *ks_partitioner_name(ks_partitioner_t p);

/**
 * @brief Parses a librdkafka `partitioner` value.
 * @returns 0 and sets *out, or -1 for a name librdkafka does not know.
 */
int ks_partitioner_from_name(const char *name, ks_partitioner_t *out);

/**
 * @brief Whether librdkafka sets the topic's `random_partitioner` flag,
 *        which disables sticky partitioning (`rd_kafka_topic_new0()`).
 * @returns 1 when sticky partitioning is off for @p p at @p linger_ms.
 */
static inline int ks_partitioner_sticky_disabled(ks_partitioner_t p,
                                                 int              linger_ms)
{
        return linger_ms <= 0 || p == KS_PARTITIONER_CONSISTENT ||
               p == KS_PARTITIONER_MURMUR2 || p == KS_PARTITIONER_FNV1A;
}

/**
 * @brief What the partitioner function itself does with the key, once
 *        rd_kafka_msg_partitioner() has decided not to go sticky.
 * @returns KS_PLACE_HASHED or KS_PLACE_RANDOM.
 */
static inline ks_placement_t
ks_partitioner_fn_placement(ks_partitioner_t p, const void *key, size_t keylen)
{
        switch (p) {
        case KS_PARTITIONER_CONSISTENT:
        case KS_PARTITIONER_MURMUR2:
        case KS_PARTITIONER_FNV1A:
                return KS_PLACE_HASHED;
        case KS_PARTITIONER_CONSISTENT_RANDOM:
                return keylen == 0 ? KS_PLACE_RANDOM : KS_PLACE_HASHED;
        case KS_PARTITIONER_MURMUR2_RANDOM:
        case KS_PARTITIONER_FNV1A_RANDOM:
                return key == NULL ? KS_PLACE_RANDOM : KS_PLACE_HASHED;
        case KS_PARTITIONER_RANDOM:
        default:
                return KS_PLACE_RANDOM;
        }
}

/**
 * @brief How librdkafka 2.0.2 places a message with partition UA. Inline:
 *        every run the drainer records asks it (the plugin's link-time
 *        optimisation left it a call of ~35 instructions a new key).
 * @param key NULL for a NULL key; non-NULL with keylen 0 for an empty key.
 * @param sticky_linger_ms the producer's effective
 *        `sticky.partitioning.linger.ms` (0 disables sticky partitioning).
 */
static inline ks_placement_t ks_partitioner_placement(ks_partitioner_t p,
                                                      int sticky_linger_ms,
                                                      const void *key,
                                                      size_t      keylen)
{
        if (!key)
                keylen = 0; /* as rd_kafka_msg_new0() */

        if (!ks_partitioner_sticky_disabled(p, sticky_linger_ms) &&
            (!key || (keylen == 0 && p == KS_PARTITIONER_CONSISTENT_RANDOM)))
                return KS_PLACE_STICKY;

        return ks_partitioner_fn_placement(p, key, keylen);
}

/**
 * @brief The 32-bit value whose unsigned remainder by the partition count
 *        is the partition, for messages placed KS_PLACE_HASHED:
 *        CRC-32 (consistent*), murmur2 & 0x7fffffff (murmur2*),
 *        |(int32_t)FNV-1a| (fnv1a*: librdkafka's `rd_fnv1a()` takes the
 *        absolute value as Sarama does; 0x80000000 stays 0x80000000).
 *        Undefined (returns 0) for KS_PARTITIONER_RANDOM.
 */
uint32_t ks_partitioner_hash(ks_partitioner_t p, const void *key,
                             size_t keylen);

/** @returns the non-random partitioner with the same hash as @p p
 *           (consistent, murmur2 or fnv1a; random for random). */
ks_partitioner_t ks_partitioner_hash_family(ks_partitioner_t p);

/** @returns the partition of a hashed key: @p hash % @p partition_cnt. */
static inline int32_t ks_partition_of(uint32_t hash, int32_t partition_cnt)
{
        return (int32_t)(hash % (uint32_t)partition_cnt);
}

/** @returns the multiplier of ks_partition_of_m() for a count >= 1. */
static inline uint64_t ks_partition_m(uint32_t partition_cnt)
{
        return UINT64_MAX / partition_cnt + 1;
}

/**
 * @returns ks_partition_of(@p hash, @p partition_cnt) by a multiplication
 *          with @p m = ks_partition_m(partition_cnt): Lemire, Kaser & Kurz,
 *          "Faster remainder by direct computation" (2019), exact for every
 *          32-bit hash and count >= 1. For loops over many keys at one count
 *          (a division costs ~25 cycles).
 */
static inline int32_t ks_partition_of_m(uint32_t hash, uint64_t m,
                                        uint32_t partition_cnt)
{
        return (int32_t)(((unsigned __int128)(m * hash) * partition_cnt) >> 64);
}

#endif /* KS_PARTITIONER_H */
