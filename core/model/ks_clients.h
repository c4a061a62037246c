/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_clients.h
 * @brief What other Kafka clients would do with the same key bytes: the
 *        default partitioners of the Java client, librdkafka and Sarama.
 *
 * A topic written by two kinds of producer is only ordered per key when
 * both put a key in the same partition. They rarely do: librdkafka's
 * default `consistent_random` takes CRC-32 of the key, the Java client
 * murmur2, Sarama FNV-1a. These models let keyshift say, for the keys this
 * producer really sends, how many would land elsewhere if a Java or Go
 * service produced them too.
 *
 * | model                | hash of a keyed record    | NULL key | empty  |
 * |----------------------|---------------------------|----------|--------|
 * | `java`               | murmur2(key) & 0x7fffffff | sticky   | hashed |
 * | `librdkafka_default` | CRC-32(key)               | spread   | spread |
 * | `sarama`             | abs(int32(FNV-1a(key)))   | random   | hashed |
 *
 * partition = hash % partition count (unsigned remainder) in every model.
 *
 * Sources (read, not copied):
 *  - `java`: Apache Kafka 4.1 `clients/.../producer/internals/
 *    BuiltInPartitioner.partitionForKey()`: `Utils.toPositive(
 *    Utils.murmur2(serializedKey)) % numPartitions`; a `null` key (not an
 *    empty array) goes to the sticky partition (`KafkaProducer.partition()`,
 *    `partitioner.ignore.keys` false). kafka-python 2.x
 *    `kafka/partitioner/default.py` computes the same (`murmur2(key) &
 *    0x7fffffff % len(all_partitions)`, a `None` key is random).
 *  - `librdkafka_default`: librdkafka 2.x `src/rdkafka_msg.c`
 *    `rd_kafka_msg_partitioner_consistent_random()`: a NULL or empty key
 *    is spread (sticky partition with `sticky.partitioning.linger.ms` > 0,
 *    else random), any other `rd_crc32(key) % partition_cnt`.
 *  - `sarama`: github.com/IBM/sarama v1.61 `partitioner.go`,
 *    `NewHashPartitioner`: a nil Key is random; otherwise
 *    `int32(fnv32a.Sum32()) % numPartitions`, negated when negative. For
 *    h = hash and n > 0, |int32(h) % n| == |int32(h)| % n, and
 *    |int32(h)| computed in uint32 (0 - h when the sign bit is set) is also
 *    right for h = 0x80000000 (Go's int32 -2^31 % n is -(2^31 % n)). So
 *    Sarama fits "hash % n" with hash = h < 2^31 ? h : 0 - h, which is
 *    librdkafka's `rd_fnv1a()` too (partitioners `fnv1a`, `fnv1a_random`).
 *
 * All functions are pure and thread-safe (any thread; no locks).
 */
#ifndef KS_CLIENTS_H
#define KS_CLIENTS_H

#include <stddef.h>
#include <stdint.h>

typedef enum ks_client_model {
        KS_CLIENT_JAVA = 0,
        KS_CLIENT_LIBRDKAFKA_DEFAULT,
        KS_CLIENT_SARAMA,
        KS_CLIENT__CNT
} ks_client_model_t;

/**
 * @brief The report's name of a model.
 * @returns "java", "librdkafka_default", "sarama"; "?" when out of range.
 */
const char *ks_client_model_name(ks_client_model_t m);

/** @returns which clients a model stands for and its rule, for the report
 *           ("?" when out of range). */
const char *ks_clients_describe(ks_client_model_t m);

/**
 * @brief Parses a name returned by ks_client_model_name().
 * @returns 0 and sets *out, or -1 for an unknown name.
 */
int ks_client_model_from_name(const char *name, ks_client_model_t *out);

/**
 * @brief Does model @p m place this key by its hash?
 * @param key NULL for a NULL key; non-NULL with @p len 0 for an empty key.
 * @returns 1 if hashed, 0 if the client spreads it (sticky or random: no
 *          fixed partition, a partition increase cannot move it).
 */
int ks_clients_hashes(ks_client_model_t m, const void *key, size_t len);

/**
 * @brief The 32-bit value whose unsigned remainder by the partition count
 *        is the partition model @p m gives a hashed key (see the table).
 *        Defined for any key (a NULL key hashes as the empty one), but
 *        meaningful only where ks_clients_hashes() is 1. 0 for an
 *        out-of-range model.
 */
uint32_t ks_clients_hash(ks_client_model_t m, const void *key, size_t len);

/**
 * @brief Where model @p m puts a key among @p partition_cnt partitions.
 * @param out receives the partition when the key is hashed (may be NULL).
 * @returns 1 and sets *out when the key is placed by hash; 0 when the
 *          client spreads it (*out untouched); -1 if @p partition_cnt < 1
 *          or @p m is out of range.
 */
int ks_clients_partition(ks_client_model_t m, const void *key, size_t len,
                         int32_t partition_cnt, int32_t *out);

#endif /* KS_CLIENTS_H */
