/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_clients.c
 * @brief Default partitioners of other Kafka clients (sources and the
 *        Sarama absolute-value argument are in ks_clients.h).
 */
#include "ks_clients.h"

#include "ks_hash.h"

#include <string.h>

static const char *const ks_client_model_names[KS_CLIENT__CNT] = {
    [KS_CLIENT_JAVA]               = "java",
    [KS_CLIENT_LIBRDKAFKA_DEFAULT] = "librdkafka_default",
    [KS_CLIENT_SARAMA]             = "sarama",
};

static const char *const ks_client_model_descriptions[KS_CLIENT__CNT] = {
    [KS_CLIENT_JAVA] = "Java clients' default partitioner and kafka-python: "
                       "murmur2(key) & 0x7fffffff % partitions",
    [KS_CLIENT_LIBRDKAFKA_DEFAULT] =
        "librdkafka and its bindings by default (consistent_random): "
        "CRC-32(key) % partitions; NULL and empty keys spread",
    [KS_CLIENT_SARAMA] = "Sarama's default hash partitioner: "
                         "|int32(FNV-1a(key)) % partitions|",
};

const char *ks_clients_describe(ks_client_model_t m)
{
        if ((unsigned)m >= KS_CLIENT__CNT)
                return "?";
        return ks_client_model_descriptions[m];
}

const char *ks_client_model_name(ks_client_model_t m)
{
        if ((unsigned)m >= KS_CLIENT__CNT)
                return "?";
        return ks_client_model_names[m];
}

int ks_client_model_from_name(const char *name, ks_client_model_t *out)
{
        int i;

        for (i = 0; name && i < KS_CLIENT__CNT; i++) {
                if (!strcmp(name, ks_client_model_names[i])) {
                        *out = (ks_client_model_t)i;
                        return 0;
                }
        }
        return -1;
}

int ks_clients_hashes(ks_client_model_t m, const void *key, size_t len)
{
        switch (m) {
        case KS_CLIENT_JAVA:   /* a null key is sticky, byte[0] is hashed */
        case KS_CLIENT_SARAMA: /* a nil Key is random, ByteEncoder{} hashed */
                return key != NULL;
        case KS_CLIENT_LIBRDKAFKA_DEFAULT: /* consistent_random */
                return key != NULL && len > 0;
        default:
                return 0;
        }
}

uint32_t ks_clients_hash(ks_client_model_t m, const void *key, size_t len)
{
        uint32_t h;

        if (!key)
                len = 0;
        switch (m) {
        case KS_CLIENT_JAVA: /* Utils.toPositive(Utils.murmur2(key)) */
                return ks_hash_murmur2(key, len) & 0x7fffffffU;
        case KS_CLIENT_LIBRDKAFKA_DEFAULT: /* rd_crc32(key) */
                return ks_hash_crc32(key, len);
        case KS_CLIENT_SARAMA: /* |int32(fnv32a)|, in uint32: see header */
                h = ks_hash_fnv1a(key, len);
                return (h & 0x80000000U) ? 0U - h : h;
        default:
                return 0;
        }
}

int ks_clients_partition(ks_client_model_t m, const void *key, size_t len,
                         int32_t partition_cnt, int32_t *out)
{
        if (partition_cnt < 1 || (unsigned)m >= KS_CLIENT__CNT)
                return -1;
        if (!ks_clients_hashes(m, key, len))
                return 0;
        if (out)
                *out = (int32_t)(ks_clients_hash(m, key, len) %
                                 (uint32_t)partition_cnt);
        return 1;
}
