/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_partitioner.c
 * @brief The partition model: librdkafka 2.0.2's built-in partitioners as
 *        pure functions.
 *
 * Source: librdkafka v2.0.2
 *  - `src/rdkafka_msg.c` `rd_kafka_msg_partitioner()`: a message with
 *    partition UA goes to the topic's sticky partition when
 *    `!random_partitioner && (key == NULL || (keylen == 0 &&
 *    partitioner == consistent_random))`, otherwise to the configured
 *    partitioner function.
 *  - `src/rdkafka_topic.c` `rd_kafka_topic_new0()`: `random_partitioner` is
 *    true when `sticky.partitioning.linger.ms` is 0 or the partitioner is
 *    `consistent`, `murmur2` or `fnv1a`; the part_map there is the list of
 *    names (matched with strcmp, as the validator in `src/rdkafka_conf.c`).
 *  - `src/rdkafka_msg.c` `rd_kafka_msg_partitioner_*()`: `consistent` is
 *    `rd_crc32(key) % cnt`; `murmur2` is `(rd_murmur2(key) & 0x7fffffff) %
 *    cnt`; `fnv1a` is `rd_fnv1a(key) % cnt` where `src/rdfnv1a.c` negates
 *    a negative int32 hash; the `*_random` variants call the random
 *    partitioner for `keylen == 0` (consistent_random) or `key == NULL`
 *    (murmur2_random, fnv1a_random), so an empty non-NULL key is hashed by
 *    the latter two.
 *  - `src/rdkafka_msg.c` `rd_kafka_msg_new0()`: a NULL key always has
 *    keylen 0, so a NULL key hashes as the empty string.
 */
#include "ks_partitioner.h"

#include "ks_hash.h"

#include <ctype.h>
#include <string.h>

/** librdkafka's `partitioner` values, indexed by ks_partitioner_t. */
static const char *const ks_partitioner_names[KS_PARTITIONER__CNT] = {
    [KS_PARTITIONER_RANDOM]            = "random",
    [KS_PARTITIONER_CONSISTENT]        = "consistent",
    [KS_PARTITIONER_CONSISTENT_RANDOM] = "consistent_random",
    [KS_PARTITIONER_MURMUR2]           = "murmur2",
    [KS_PARTITIONER_MURMUR2_RANDOM]    = "murmur2_random",
    [KS_PARTITIONER_FNV1A]             = "fnv1a",
    [KS_PARTITIONER_FNV1A_RANDOM]      = "fnv1a_random",
};

/* NULL for a value outside the enum. */
const char *ks_partitioner_name(ks_partitioner_t p)
{
        if ((unsigned)p >= KS_PARTITIONER__CNT)
                return NULL;
        return ks_partitioner_names[p];
}

/*
 * librdkafka's rd_kafka_anyconf_set() left-trims every string property
 * (isspace) before the `partitioner` validator's strcmp()s, so " murmur2"
 * is accepted (and stored as "murmur2") while "murmur2 " is rejected.
 */
int ks_partitioner_from_name(const char *name, ks_partitioner_t *out)
{
        int i;

        if (!name)
                return -1;
        while (isspace((unsigned char)*name))
                name++;
        for (i = 0; i < KS_PARTITIONER__CNT; i++) {
                if (!strcmp(name, ks_partitioner_names[i])) {
                        *out = (ks_partitioner_t)i;
                        return 0;
                }
        }
        return -1;
}

/**
 * @brief librdkafka's `rd_fnv1a()`: FNV-1a, then the absolute value of the
 *        hash read as an int32 (Sarama's NewHashPartitioner). Negated in
 *        unsigned arithmetic, so 0x80000000 maps to itself as it does in
 *        librdkafka's two's-complement build, without signed overflow.
 * @returns the value librdkafka reduces modulo the partition count.
 */
static uint32_t ks_partitioner_fnv1a_abs(const void *key, size_t keylen)
{
        uint32_t h = ks_hash_fnv1a(key, keylen);

        return (h & 0x80000000U) ? 0U - h : h;
}

uint32_t ks_partitioner_hash(ks_partitioner_t p, const void *key, size_t keylen)
{
        if (!key)
                keylen = 0;

        switch (p) {
        case KS_PARTITIONER_CONSISTENT:
        case KS_PARTITIONER_CONSISTENT_RANDOM:
                return ks_hash_crc32(key, keylen);
        case KS_PARTITIONER_MURMUR2:
        case KS_PARTITIONER_MURMUR2_RANDOM:
                /* Java's Utils.toPositive(), librdkafka's & 0x7fffffff */
                return ks_hash_murmur2(key, keylen) & 0x7fffffffU;
        case KS_PARTITIONER_FNV1A:
        case KS_PARTITIONER_FNV1A_RANDOM:
                return ks_partitioner_fnv1a_abs(key, keylen);
        case KS_PARTITIONER_RANDOM:
        default:
                return 0;
        }
}

ks_partitioner_t ks_partitioner_hash_family(ks_partitioner_t p)
{
        switch (p) {
        case KS_PARTITIONER_CONSISTENT:
        case KS_PARTITIONER_CONSISTENT_RANDOM:
                return KS_PARTITIONER_CONSISTENT;
        case KS_PARTITIONER_MURMUR2:
        case KS_PARTITIONER_MURMUR2_RANDOM:
                return KS_PARTITIONER_MURMUR2;
        case KS_PARTITIONER_FNV1A:
        case KS_PARTITIONER_FNV1A_RANDOM:
                return KS_PARTITIONER_FNV1A;
        default:
                return KS_PARTITIONER_RANDOM;
        }
}
