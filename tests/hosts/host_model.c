/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file host_model.c
 * @brief keyshift's partition model against one librdkafka's own
 *        partitioner functions, whatever its version or file name:
 *
 *   host_model LIBRDKAFKA.so [KEYS]
 *
 * dlopen()s the given librdkafka (RTLD_LOCAL: a wheel's renamed copy, or
 * Debian's) and, for KEYS random binary keys of 0..64 bytes (default
 * 300,000; seed fixed), the NULL key and the empty key, compares at 14
 * partition counts:
 *   rd_kafka_msg_partitioner_{consistent,murmur2,fnv1a}(NULL, key, len, n)
 *   == ks_partition_of(ks_partitioner_hash(family, key, len), n)
 * (the `_random` variants reach the same functions for every key they
 * hash, src/rdkafka_msg.c). Prints the calls compared and the disagreements;
 * exits 1 on any disagreement or when a function is missing.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ks_partitioner.h"

typedef int32_t(partitioner_fn)(const void *rkt, const void *key, size_t keylen,
                                int32_t partition_cnt, void *rkt_opaque,
                                void *msg_opaque);

static const int32_t counts[] = {1, 2,  3,  4,  5,   6,    7,
                                 8, 12, 16, 24, 100, 1000, 100000};

static const struct {
        const char      *symbol;
        ks_partitioner_t family;
} families[] = {
    {"rd_kafka_msg_partitioner_consistent", KS_PARTITIONER_CONSISTENT},
    {"rd_kafka_msg_partitioner_murmur2", KS_PARTITIONER_MURMUR2},
    {"rd_kafka_msg_partitioner_fnv1a", KS_PARTITIONER_FNV1A},
};

/** xorshift64*: the keys (any fixed stream will do). */
static uint64_t next_random(uint64_t *s)
{
        *s ^= *s >> 12;
        *s ^= *s << 25;
        *s ^= *s >> 27;
        return *s * 2685821657736338717ULL;
}

int main(int argc, char **argv)
{
        void           *h;
        partitioner_fn *fn[3];
        const char *(*version_str)(void);
        long     keys = argc > 2 ? atol(argv[2]) : 300000, k;
        uint64_t seed = 0x9e3779b97f4a7c15ULL, calls = 0, bad = 0;
        size_t   f, c;
        uint8_t  key[64];

        if (argc < 2) {
                fprintf(stderr, "usage: host_model LIBRDKAFKA.so [KEYS]\n");
                return 2;
        }
        if (!(h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL))) {
                fprintf(stderr, "host_model: %s\n", dlerror());
                return 1;
        }
        *(void **)&version_str = dlsym(h, "rd_kafka_version_str");
        for (f = 0; f < 3; f++)
                if (!(*(void **)&fn[f] = dlsym(h, families[f].symbol))) {
                        fprintf(stderr, "host_model: %s has no %s\n", argv[1],
                                families[f].symbol);
                        return 1;
                }
        /* k = -2: the NULL key; -1: the empty key; then random keys */
        for (k = -2; k < keys; k++) {
                size_t      len = 0, i;
                const void *p   = k == -2 ? NULL : key;

                if (k >= 0) {
                        uint64_t r = next_random(&seed);
                        len        = (size_t)(r % 65);
                        for (i = 0; i < len; i++)
                                key[i] = (uint8_t)next_random(&seed);
                }
                for (f = 0; f < 3; f++) {
                        uint32_t hash =
                            ks_partitioner_hash(families[f].family, p, len);
                        for (c = 0; c < sizeof(counts) / sizeof(*counts); c++) {
                                int32_t theirs =
                                    fn[f](NULL, p, len, counts[c], NULL, NULL);
                                int32_t ours = ks_partition_of(hash, counts[c]);
                                calls++;
                                if (theirs != ours && bad++ < 10)
                                        fprintf(stderr,
                                                "host_model: %s key #%ld (%zu "
                                                "bytes) at %d: librdkafka %d, "
                                                "keyshift %d\n",
                                                families[f].symbol, k, len,
                                                counts[c], theirs, ours);
                        }
                }
        }
        printf("librdkafka %s (%s): %llu partitioner calls compared with "
               "keyshift's model (%ld random keys, NULL, empty; 3 hashes; "
               "%zu counts): %llu differ\n",
               version_str ? version_str() : "?", argv[1],
               (unsigned long long)calls, keys,
               sizeof(counts) / sizeof(*counts), (unsigned long long)bad);
        return bad ? 1 : 0;
}
