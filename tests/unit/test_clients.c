/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_clients.c
 * @brief Proves core/model/ks_clients.c: where the Java client, librdkafka's
 *        default partitioner and Sarama put the same key bytes.
 *
 * Oracles, none of them derived from the code under test:
 *  - `java`: tests/unit/data/java-keys.tsv, Kafka 4.1.2's own
 *    `Utils.murmur2()`, `Utils.toPositive()` and
 *    `BuiltInPartitioner.partitionForKey()` (the method `KafkaProducer`
 *    calls for a keyed record) on the bytes of Kafka's serializers
 *    (tests/unit/data/make-java-fixture.sh regenerates it).
 *  - `sarama`: tests/unit/data/sarama-partitions.tsv,
 *    `sarama.NewHashPartitioner().Partition()` of github.com/IBM/sarama
 *    v1.61.1 and Go's hash/fnv on a seeded corpus (binary, printable,
 *    UTF-8, empty; 0..100 bytes; counts 1..64, 100, 1000), including
 *    "BBZNRq", whose FNV-1a is 0x80000000 (tests/oracles/sarama/main.go
 *    regenerates it).
 *  - `librdkafka_default`: librdkafka's exported
 *    rd_kafka_msg_partitioner_consistent_random(), at test time, on a
 *    seeded random corpus and on both fixtures' keys. Agreement at every
 *    count 1..64 pins the full 32-bit hash: lcm(1..64) > 2^32.
 */
#include "ks_clients.h"
#include "ks_hash.h"
#include "ks_test.h"

#include <librdkafka/rdkafka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FIELDS 96
#define MAX_KEY 512
#define MAX_ROWS 1024
#define MAX_COUNTS 80

/** @returns the path of tests/unit/data/@p name in a static buffer
 *           (next to this source; KS_UNIT_DATA overrides). */
/** One fixture: key bytes, the oracle's hash, its partition per count. */
typedef struct fixture {
        int32_t counts[MAX_COUNTS];
        int     counts_cnt;
        struct frow {
                unsigned char key[MAX_KEY];
                size_t        len;
                uint32_t      hash;  /* murmur2 (java) / FNV-1a (sarama) */
                uint32_t      hash2; /* toPositive(murmur2) (java) */
                int32_t       part[MAX_COUNTS];
        } rows[MAX_ROWS];
        int rows_cnt;
} fixture_t;

static fixture_t java, sarama;

/**
 * @brief Loads a fixture: columns key_col (hex), hash_col (decimal int32
 *        for java, hex for sarama), hash2_col (or -1), then "n=<count>".
 * @returns 0, or -1 after a CUnit failure.
 */
static int load(fixture_t *fx, const char *name, int key_col, int hash_col,
                int hash2_col, int hash_hex)
{
        char  line[8192], *f[MAX_FIELDS];
        FILE *fp;
        int   nf, i, first = -1;

        if (fx->rows_cnt)
                return 0;
        fp = fopen(ks_test_data_path(name), "r");
        if (!fp) {
                fprintf(stderr, "\n  cannot open %s\n",
                        ks_test_data_path(name));
                CU_FAIL_FATAL("fixture missing");
                return -1;
        }
        while (fgets(line, sizeof(line), fp) && fx->rows_cnt < MAX_ROWS) {
                struct frow *r = &fx->rows[fx->rows_cnt];
                long         n;

                nf = ks_test_split_tabs(line, f, MAX_FIELDS);
                if (line[0] == '#') { /* the header names the counts */
                        for (i = 0; i < nf && fx->counts_cnt < MAX_COUNTS; i++)
                                if (!strncmp(f[i], "n=", 2)) {
                                        if (first < 0)
                                                first = i;
                                        fx->counts[fx->counts_cnt++] =
                                            (int32_t)atoi(f[i] + 2);
                                }
                        continue;
                }
                CU_ASSERT_FATAL(first > 0 && nf == first + fx->counts_cnt);
                n = ks_test_unhex(f[key_col], r->key, sizeof(r->key));
                CU_ASSERT_FATAL(n >= 0);
                r->len  = (size_t)n;
                r->hash = hash_hex ? (uint32_t)strtoul(f[hash_col], NULL, 16)
                                   : (uint32_t)strtol(f[hash_col], NULL, 10);
                if (hash2_col >= 0)
                        r->hash2 = (uint32_t)strtol(f[hash2_col], NULL, 10);
                for (i = 0; i < fx->counts_cnt; i++)
                        r->part[i] = (int32_t)atoi(f[first + i]);
                fx->rows_cnt++;
        }
        fclose(fp);
        CU_ASSERT_FATAL(fx->rows_cnt >= 300 && fx->counts_cnt >= 10);
        return 0;
}

static int load_java(void)
{
        return load(&java, "java-keys.tsv", 5, 6, 7, 0);
}

static int load_sarama(void)
{
        return load(&sarama, "sarama-partitions.tsv", 0, 1, -1, 1);
}

/* ------------------------------------------------------------------ */

static void test_names(void)
{
        static const char *want[KS_CLIENT__CNT] = {"java", "librdkafka_default",
                                                   "sarama"};
        ks_client_model_t  m;
        int                i;

        for (i = 0; i < KS_CLIENT__CNT; i++) {
                CU_ASSERT_STRING_EQUAL(
                    ks_client_model_name((ks_client_model_t)i), want[i]);
                CU_ASSERT_EQUAL(ks_client_model_from_name(want[i], &m), 0);
                CU_ASSERT_EQUAL(m, (ks_client_model_t)i);
        }
        CU_ASSERT_STRING_EQUAL(ks_client_model_name(KS_CLIENT__CNT), "?");
        CU_ASSERT_EQUAL(ks_client_model_from_name("murmur2", &m), -1);
        CU_ASSERT_EQUAL(ks_client_model_from_name(NULL, &m), -1);
}

/** NULL and empty keys, bad counts, bad models. */
static void test_placement_rules(void)
{
        int32_t p = -7;

        /* Java: a null key is sticky; byte[0] is hashed (murmur2 of
         * nothing, 275646681 per the fixture's empty-string row). */
        CU_ASSERT_EQUAL(ks_clients_partition(KS_CLIENT_JAVA, NULL, 0, 6, &p),
                        0);
        CU_ASSERT_EQUAL(p, -7);
        CU_ASSERT_EQUAL(ks_clients_partition(KS_CLIENT_JAVA, "", 0, 6, &p), 1);
        CU_ASSERT_EQUAL(p, 275646681 % 6);
        /* librdkafka consistent_random: NULL and empty are spread. */
        CU_ASSERT_EQUAL(
            ks_clients_partition(KS_CLIENT_LIBRDKAFKA_DEFAULT, NULL, 0, 6, &p),
            0);
        CU_ASSERT_EQUAL(
            ks_clients_partition(KS_CLIENT_LIBRDKAFKA_DEFAULT, "", 0, 6, &p),
            0);
        CU_ASSERT_EQUAL(ks_clients_hashes(KS_CLIENT_LIBRDKAFKA_DEFAULT, "a", 1),
                        1);
        /* Sarama: a nil Key is random; an empty one is hashed. */
        CU_ASSERT_EQUAL(ks_clients_partition(KS_CLIENT_SARAMA, NULL, 0, 6, &p),
                        0);
        CU_ASSERT_EQUAL(ks_clients_partition(KS_CLIENT_SARAMA, "", 0, 6, &p),
                        1);
        /* The hash of a NULL key is the hash of the empty key. */
        CU_ASSERT_EQUAL(ks_clients_hash(KS_CLIENT_JAVA, NULL, 5),
                        ks_clients_hash(KS_CLIENT_JAVA, "", 0));
        CU_ASSERT_EQUAL(ks_clients_hash(KS_CLIENT_SARAMA, NULL, 3),
                        ks_clients_hash(KS_CLIENT_SARAMA, "", 0));
        CU_ASSERT_EQUAL(ks_clients_hash(KS_CLIENT_LIBRDKAFKA_DEFAULT, NULL, 3),
                        0); /* CRC-32 of nothing */
        /* Bad arguments. */
        CU_ASSERT_EQUAL(ks_clients_partition(KS_CLIENT_JAVA, "a", 1, 0, &p),
                        -1);
        CU_ASSERT_EQUAL(ks_clients_partition(KS_CLIENT_JAVA, "a", 1, -3, &p),
                        -1);
        CU_ASSERT_EQUAL(ks_clients_partition(KS_CLIENT__CNT, "a", 1, 3, &p),
                        -1);
        CU_ASSERT_EQUAL(ks_clients_hashes(KS_CLIENT__CNT, "a", 1), 0);
        CU_ASSERT_EQUAL(ks_clients_hash(KS_CLIENT__CNT, "a", 1), 0);
        CU_ASSERT_EQUAL(ks_clients_partition(KS_CLIENT_JAVA, "a", 1, 3, NULL),
                        1);
}

/** Kafka 4.1.2's murmur2, toPositive and partitionForKey, every row and
 *  count of the Java fixture. */
static void test_java_fixture(void)
{
        long cmp = 0, bad = 0;
        int  i, c;

        if (load_java())
                return;
        for (i = 0; i < java.rows_cnt; i++) {
                const struct frow *r = &java.rows[i];

                CU_ASSERT_EQUAL(ks_hash_murmur2(r->key, r->len), r->hash);
                CU_ASSERT_EQUAL(ks_clients_hash(KS_CLIENT_JAVA, r->key, r->len),
                                r->hash2);
                for (c = 0; c < java.counts_cnt; c++) {
                        int32_t n = java.counts[c], p = -1;
                        int rc = ks_clients_partition(KS_CLIENT_JAVA, r->key,
                                                      r->len, n, &p);

                        cmp++;
                        if ((rc != 1 || p != r->part[c]) && bad++ < 5)
                                fprintf(stderr,
                                        "\n  java row %d n=%" PRId32
                                        ": ours %" PRId32 " java %" PRId32,
                                        i + 1, java.counts[c], p, r->part[c]);
                }
        }
        CU_ASSERT_EQUAL(bad, 0);
        CU_ASSERT(cmp >= 10000);
}

/** Sarama's NewHashPartitioner and Go's FNV-1a, every row and count. */
static void test_sarama_fixture(void)
{
        long cmp = 0, bad = 0, neg = 0, empty = 0, min = 0;
        int  i, c;

        if (load_sarama())
                return;
        for (i = 0; i < sarama.rows_cnt; i++) {
                const struct frow *r = &sarama.rows[i];

                CU_ASSERT_EQUAL(ks_hash_fnv1a(r->key, r->len), r->hash);
                neg += (r->hash & 0x80000000U) != 0;
                empty += r->len == 0;
                if (r->hash == 0x80000000U) {
                        min++;
                        CU_ASSERT_EQUAL(r->len, 6);
                        CU_ASSERT_EQUAL(memcmp(r->key, "BBZNRq", 6), 0);
                        CU_ASSERT_EQUAL(
                            ks_clients_hash(KS_CLIENT_SARAMA, r->key, r->len),
                            0x80000000U);
                }
                for (c = 0; c < sarama.counts_cnt; c++) {
                        int32_t p = -1;
                        int     rc =
                            ks_clients_partition(KS_CLIENT_SARAMA, r->key,
                                                 r->len, sarama.counts[c], &p);

                        cmp++;
                        if ((rc != 1 || p != r->part[c]) && bad++ < 5)
                                fprintf(stderr,
                                        "\n  sarama row %d n=%" PRId32
                                        ": ours %" PRId32 " sarama %" PRId32,
                                        i + 1, sarama.counts[c], p, r->part[c]);
                }
        }
        CU_ASSERT_EQUAL(bad, 0);
        CU_ASSERT(cmp >= 20000);
        CU_ASSERT(neg >= 100); /* the absolute-value path is exercised */
        CU_ASSERT(empty >= 1);
        CU_ASSERT_EQUAL(min, 1);
}

/** Sarama's `int32(h) % n`, negated when negative, is `abs % n` for every
 *  h, INT32_MIN included: C99's % truncates like Go's. */
static void test_sarama_abs_identity(void)
{
        static const uint32_t edge[] = {0,          1,          0x7fffffff,
                                        0x80000000, 0x80000001, 0xfffffffe,
                                        0xffffffff, 0xc0000000};
        uint64_t              x      = 0x9e3779b97f4a7c15ULL;
        int32_t               n;
        int                   i;

        for (i = 0; i < 20008; i++) {
                uint32_t h, a;

                if (i < 8) {
                        h = edge[i];
                } else { /* Knuth's MMIX LCG, high half */
                        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
                        h = (uint32_t)(x >> 32);
                }
                a = (h & 0x80000000U) ? 0U - h : h;
                for (n = 1; n <= 1000; n += i < 8 ? 1 : 37) {
                        int32_t go = (int32_t)h % n;

                        if (go < 0)
                                go = -go;
                        CU_ASSERT_EQUAL_FATAL(go, (int32_t)(a % (uint32_t)n));
                }
        }
}

/* ------------------------------------------------------------------ */

static uint64_t rng = 0x636c69656e7473ULL;

/** @returns the next xorshift64* value. */
static uint64_t rnd(void)
{
        rng ^= rng >> 12;
        rng ^= rng << 25;
        rng ^= rng >> 27;
        return rng * 0x2545f4914f6cdd1dULL;
}

/** @returns the number of counts at which the model and librdkafka's
 *           consistent_random disagree for a non-empty key. */
static int rdk_disagree(const unsigned char *key, size_t len)
{
        int32_t n, p;
        int     bad = 0;

        for (n = 1; n <= 1000; n = n < 64 ? n + 1 : n == 64 ? 100 : 1001) {
                CU_ASSERT_EQUAL(
                    ks_clients_partition(KS_CLIENT_LIBRDKAFKA_DEFAULT, key, len,
                                         n, &p),
                    1);
                bad += p != rd_kafka_msg_partitioner_consistent_random(
                                NULL, key, len, n, NULL, NULL);
        }
        return bad;
}

/** librdkafka's own consistent_random on random keys and on the keys of
 *  both fixtures (empty keys excluded: librdkafka spreads them, and its
 *  random partitioner needs a topic handle). */
static void test_librdkafka_default(void)
{
        unsigned char key[128];
        long          keys = 0, bad = 0;
        int           i;

        for (i = 0; i < 20000; i++) {
                size_t len = 1 + (size_t)(rnd() % 100), j;

                for (j = 0; j < len; j++)
                        key[j] = (unsigned char)rnd();
                bad += rdk_disagree(key, len);
                keys++;
        }
        if (!load_java() && !load_sarama()) {
                for (i = 0; i < java.rows_cnt; i++)
                        if (java.rows[i].len) {
                                bad += rdk_disagree(java.rows[i].key,
                                                    java.rows[i].len);
                                keys++;
                        }
                for (i = 0; i < sarama.rows_cnt; i++)
                        if (sarama.rows[i].len) {
                                bad += rdk_disagree(sarama.rows[i].key,
                                                    sarama.rows[i].len);
                                keys++;
                        }
        }
        CU_ASSERT_EQUAL(bad, 0);
        CU_ASSERT(keys >= 21000);
}

/** The point of the models: on real keys the three clients disagree about
 *  most keys (agreement near 1/n by chance). */
static void test_clients_disagree(void)
{
        int i, same_jl = 0, same_js = 0, keyed = 0;

        if (load_java())
                return;
        for (i = 0; i < java.rows_cnt; i++) {
                const struct frow *r = &java.rows[i];
                int32_t            pj, pl, ps;

                if (ks_clients_partition(KS_CLIENT_LIBRDKAFKA_DEFAULT, r->key,
                                         r->len, 12, &pl) != 1)
                        continue;
                ks_clients_partition(KS_CLIENT_JAVA, r->key, r->len, 12, &pj);
                ks_clients_partition(KS_CLIENT_SARAMA, r->key, r->len, 12, &ps);
                keyed++;
                same_jl += pj == pl;
                same_js += pj == ps;
        }
        CU_ASSERT(keyed > 500);
        CU_ASSERT(same_jl * 5 < keyed); /* about 1/12 */
        CU_ASSERT(same_js * 5 < keyed);
}

void ks_test_register(void)
{
        KS_ADD_SUITE(
            "clients", {"names", test_names},
            {"NULL, empty and bad arguments", test_placement_rules},
            {"java: kafka-clients 4.1.2 fixture", test_java_fixture},
            {"sarama: IBM/sarama fixture", test_sarama_fixture},
            {"sarama: int32 % n negated == abs % n", test_sarama_abs_identity},
            {"librdkafka_default: consistent_random oracle",
             test_librdkafka_default},
            {"the clients disagree on most keys", test_clients_disagree});
}
