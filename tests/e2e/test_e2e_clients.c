/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_e2e_clients.c
 * @brief Key encodings, one logical key under several serializers, and
 *        what other clients would do with the same bytes, through a real
 *        producer on the mock cluster. Oracles: the encodings the test
 *        writes itself (as Java's serializers lay them out), and
 *        librdkafka's own partitioner functions: murmur2 is Java's (proven
 *        against kafka-clients by the broker tests), FNV-1a is Sarama's
 *        (proven against Sarama by test_clients), CRC-32 is librdkafka's
 *        default.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ks_e2e_support.h"
#include "ks_test.h"

#define CUR 6

typedef struct sent {
        uint8_t key[40];
        size_t  len;
        int     null;
} sent_t;

static sent_t *sent;
static size_t  sent_cnt;

static void send_key(ks_e2e_producer_t *p, const void *key, size_t len)
{
        sent_t *s = &sent[sent_cnt++];
        s->null   = key == NULL;
        s->len    = len;
        if (len)
                memcpy(s->key, key, len);
        ks_e2e_produce(p, "t", key, len, -1, "v", 1);
}

static void put_be(uint8_t *b, uint64_t v, int n)
{
        int i;
        for (i = n - 1; i >= 0; i--, v >>= 8)
                b[i] = (uint8_t)v;
}

static void test_encodings_and_clients(void)
{
        const char       *dir = ks_e2e_tmpdir("clients");
        char              path[600], buf[64];
        uint8_t           b[40];
        ks_e2e_producer_t p;
        json_t           *r, *t;
        int               i, n;
        uint64_t total = 0, java_diff = 0, sarama_diff = 0, crc_diff = 0;
        unsigned seed = 7;

        sent     = calloc(4000, sizeof(*sent));
        sent_cnt = 0;
        snprintf(path, sizeof(path), "%s/r.json", dir);
        CU_ASSERT_FATAL(
            ks_e2e_producer_new(&p,
                                ks_e2e_conf("keyshift.report.path", path,
                                            "keyshift.hot.keys", "200", NULL),
                                "t", CUR) == 0);
        for (i = 0; i < 400; i++) { /* decimal text: 1000..1399, 1-2 msgs */
                n = snprintf(buf, sizeof(buf), "%d", 1000 + i);
                send_key(&p, buf, (size_t)n);
                if (i % 2)
                        send_key(&p, buf, (size_t)n);
        }
        for (i = 0; i < 30; i++) { /* 1000..1029 also as LongSerializer */
                put_be(b, (uint64_t)(1000 + i), 8);
                send_key(&p, b, 8);
        }
        for (i = 0; i < 10; i++) { /* "ship-i" as text and as JSON */
                n = snprintf(buf, sizeof(buf), "ship-%d", i);
                send_key(&p, buf, (size_t)n);
                n = snprintf(buf, sizeof(buf), "\"ship-%d\"", i);
                send_key(&p, buf, (size_t)n);
        }
        /* one UUID as UUIDSerializer text and as 16 raw bytes */
        send_key(&p, "0f8fad5b-d9cb-469f-a165-70867728950e", 36);
        memcpy(b,
               "\x0f\x8f\xad\x5b\xd9\xcb\x46\x9f\xa1\x65\x70\x86\x77\x28\x95"
               "\x0e",
               16);
        send_key(&p, b, 16);
        /* Schema Registry framing: ids 7 and 9 each frame the Avro longs
         * 5..8 (zigzag 0x0a..0x10), 4 keys an id (an id framing a single
         * key may be random bytes: no warning for it) */
        for (i = 0; i < 4; i++) {
                uint8_t k7[6] = {0, 0, 0, 0, 7, (uint8_t)(2 * (5 + i))};
                uint8_t k9[6] = {0, 0, 0, 0, 9, (uint8_t)(2 * (5 + i))};
                send_key(&p, k7, 6);
                send_key(&p, k9, 6);
        }
        for (i = 0; i < 50; i++) { /* binary noise, 20 bytes */
                int k;
                b[0] = 0xff; /* not text, not a framing */
                for (k = 1; k < 20; k++)
                        b[k] = (uint8_t)rand_r(&seed);
                send_key(&p, b, 20);
        }
        for (i = 0; i < 10; i++) {
                send_key(&p, NULL, 0);
                send_key(&p, "", 0);
        }
        ks_e2e_producer_close(&p);

        r = ks_e2e_load_json(path);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        t = ks_e2e_get(r, "topics/t");
        CU_ASSERT_EQUAL(ks_e2e_int(t, "key_encodings/decimal"), 600);
        CU_ASSERT_EQUAL(ks_e2e_int(t, "key_encodings/int64_be"), 30);
        CU_ASSERT_EQUAL(ks_e2e_int(t, "key_encodings/text"), 11);
        CU_ASSERT_EQUAL(ks_e2e_int(t, "key_encodings/json_string"), 10);
        CU_ASSERT_EQUAL(ks_e2e_int(t, "key_encodings/uuid_binary"), 1);
        CU_ASSERT_EQUAL(ks_e2e_int(t, "key_encodings/schema_registry"), 8);
        CU_ASSERT_EQUAL(ks_e2e_int(t, "key_encodings/binary"), 50);
        CU_ASSERT_EQUAL(ks_e2e_int(t, "key_encodings/null"), 10);
        CU_ASSERT_EQUAL(ks_e2e_int(t, "key_encodings/empty"), 10);
        CU_ASSERT_EQUAL(ks_e2e_int(t, "key_encodings/schema_ids/7"), 4);
        CU_ASSERT_EQUAL(ks_e2e_int(t, "key_encodings/schema_ids/9"), 4);
        CU_ASSERT(ks_e2e_has_warning(json_object_get(t, "warnings"),
                                     "MULTIPLE_SCHEMA_IDS"));

        /* Mixed: 30 numbers (decimal + int64), 10 ships (text + JSON), the
         * UUID (text + binary), and 5..8 (two schema ids frame the same
         * Avro long: one encoding, schema_registry, so not a collision). */
        CU_ASSERT_EQUAL(ks_e2e_int(t, "mixed_keys/total"), 41);
        CU_ASSERT(ks_e2e_has_warning(json_object_get(t, "warnings"),
                                     "MIXED_KEY_SERIALIZERS"));
        {
                json_t *keys = ks_e2e_get(t, "mixed_keys/keys");
                size_t  k;
                int     uuid = 0, ship3 = 0, n1007 = 0;
                CU_ASSERT_EQUAL(json_array_size(keys), 41);
                for (k = 0; k < json_array_size(keys); k++) {
                        json_t     *e = json_array_get(keys, k);
                        const char *l = json_string_value(
                            json_object_get(e, "logical_key"));
                        uuid |=
                            !strcmp(l,
                                    "0f8fad5b-d9cb-469f-a165-70867728950e") &&
                            ks_e2e_get(e, "encodings/uuid_binary") &&
                            ks_e2e_get(e, "encodings/text");
                        ship3 |= !strcmp(l, "ship-3") &&
                                 ks_e2e_get(e, "encodings/json_string") &&
                                 ks_e2e_get(e, "encodings/text");
                        if (!strcmp(l, "1007")) { /* odd: sent twice */
                                n1007 = 1;
                                CU_ASSERT_EQUAL(
                                    ks_e2e_int(e, "encodings/decimal/messages"),
                                    2);
                                CU_ASSERT_EQUAL(
                                    ks_e2e_int(e,
                                               "encodings/int64_be/messages"),
                                    1);
                                put_be(b, 1007, 8);
                                CU_ASSERT_EQUAL(
                                    ks_e2e_int(e, "encodings/int64_be/"
                                                  "partition_current"),
                                    rd_kafka_msg_partitioner_consistent(
                                        NULL, b, 8, CUR, NULL, NULL));
                                CU_ASSERT_EQUAL(
                                    ks_e2e_int(e, "encodings/decimal/"
                                                  "partition_current"),
                                    rd_kafka_msg_partitioner_consistent(
                                        NULL, "1007", 4, CUR, NULL, NULL));
                        }
                }
                CU_ASSERT(uuid && ship3 && n1007);
        }

        /* Other clients, over every hashed (non-empty-key) message. */
        for (size_t k = 0; k < sent_cnt; k++) {
                const sent_t *s = &sent[k];
                int32_t       ours;
                if (s->null || !s->len)
                        continue; /* consistent_random spreads these */
                ours = rd_kafka_msg_partitioner_consistent(NULL, s->key, s->len,
                                                           CUR, NULL, NULL);
                total++;
                java_diff += rd_kafka_msg_partitioner_murmur2(
                                 NULL, s->key, s->len, CUR, NULL, NULL) != ours;
                sarama_diff +=
                    rd_kafka_msg_partitioner_fnv1a(NULL, s->key, s->len, CUR,
                                                   NULL, NULL) != ours;
                crc_diff += rd_kafka_msg_partitioner_consistent_random(
                                NULL, s->key, s->len, CUR, NULL, NULL) != ours;
        }
        CU_ASSERT_EQUAL(ks_e2e_int(t, "keys/hashed"), (long long)total);
        CU_ASSERT_DOUBLE_EQUAL(
            json_real_value(ks_e2e_get(
                t, "other_clients/java/messages_fraction_different")),
            (double)java_diff / (double)total, 1e-12);
        CU_ASSERT_DOUBLE_EQUAL(
            json_real_value(ks_e2e_get(
                t, "other_clients/sarama/messages_fraction_different")),
            (double)sarama_diff / (double)total, 1e-12);
        CU_ASSERT_DOUBLE_EQUAL(
            json_real_value(ks_e2e_get(t, "other_clients/librdkafka_default/"
                                          "messages_fraction_different")),
            (double)crc_diff / (double)total, 1e-12);
        CU_ASSERT_EQUAL(crc_diff, 0);
        CU_ASSERT(java_diff > total / 2);
        CU_ASSERT(ks_e2e_has_warning(json_object_get(t, "warnings"),
                                     "PARTITIONER_NOT_JAVA_COMPATIBLE"));
        CU_ASSERT(!ks_e2e_has_warning(json_object_get(t, "warnings"),
                                      "EMPTY_KEYS_HASHED"));
        CU_ASSERT_EQUAL(ks_e2e_int(t, "acknowledged/mismatched"), 0);
        json_decref(r);
        ks_e2e_producer_free(&p);
        free(sent);
        ks_e2e_system("rm -rf '%s'", dir);
}

/** A murmur2_random producer: Java-compatible, and empty keys hashed. */
static void test_java_compatible_empty_keys(void)
{
        const char       *dir = ks_e2e_tmpdir("clients2");
        char              path[600], buf[32];
        ks_e2e_producer_t p;
        json_t           *r, *t;
        int               i;

        sent     = calloc(1000, sizeof(*sent));
        sent_cnt = 0;
        snprintf(path, sizeof(path), "%s/r.json", dir);
        CU_ASSERT_FATAL(ks_e2e_producer_new(&p,
                                            ks_e2e_conf("keyshift.report.path",
                                                        path, "partitioner",
                                                        "murmur2_random", NULL),
                                            "t", CUR) == 0);
        for (i = 0; i < 300; i++) {
                int n = snprintf(buf, sizeof(buf), "k%d", i % 77);
                send_key(&p, i % 10 ? buf : "", i % 10 ? (size_t)n : 0);
        }
        ks_e2e_producer_free(&p);
        r = ks_e2e_load_json(path);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        t = ks_e2e_get(r, "topics/t");
        CU_ASSERT_DOUBLE_EQUAL(
            json_real_value(ks_e2e_get(
                t, "other_clients/java/messages_fraction_different")),
            0.0, 1e-12);
        CU_ASSERT(!ks_e2e_has_warning(json_object_get(t, "warnings"),
                                      "PARTITIONER_NOT_JAVA_COMPATIBLE"));
        CU_ASSERT(ks_e2e_has_warning(json_object_get(t, "warnings"),
                                     "EMPTY_KEYS_HASHED"));
        CU_ASSERT(!ks_e2e_has_warning(json_object_get(t, "warnings"),
                                      "MIXED_KEY_SERIALIZERS"));
        CU_ASSERT_EQUAL(ks_e2e_int(t, "keys/empty"), 30);
        json_decref(r);
        free(sent);
        ks_e2e_system("rm -rf '%s'", dir);
}

void ks_test_register(void)
{
        KS_ADD_SUITE("key encodings and other clients",
                     {"encodings, mixed keys, other clients (librdkafka "
                      "default partitioner)",
                      test_encodings_and_clients},
                     {"murmur2_random: Java-compatible, empty keys hashed",
                      test_java_compatible_empty_keys});
}
