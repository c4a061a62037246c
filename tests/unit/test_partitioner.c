/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_partitioner.c
 * @brief Proves core/model/ks_hash.c and core/model/ks_partitioner.c against
 *        independent oracles.
 *
 * Oracles, none of them derived from the code under test:
 *  1. Published vectors: Apache Kafka `UtilsTest.testMurmur2`
 *     (clients/src/test/java/org/apache/kafka/common/utils/UtilsTest.java);
 *     librdkafka v2.0.2 `unittest_murmur2()` (src/rdmurmur2.c) and
 *     `unittest_fnv1a()` (src/rdfnv1a.c); librdkafka v2.0.2
 *     tests/0048-partitioner.c (per-partitioner hash constants; librdkafka
 *     has no unit test for rd_crc32(), only for CRC-32C); the CRC-32 check
 *     value of "123456789" (CRC catalogue, CRC-32/ISO-HDLC); the FNV-1a 32
 *     test vectors of http://www.isthe.com/chongo/src/fnv/test_fnv.c; the
 *     SMHasher verification value of MurmurHash64A (0x1F0D3804).
 *  2. librdkafka's exported partitioner functions,
 *     rd_kafka_msg_partitioner_{consistent,murmur2,fnv1a}{,_random}(), on
 *     a seeded random corpus of keys × partition counts. Agreement at every
 *     count 1..64 pins the full 32-bit hash: lcm(1..64) > 2^32.
 *  3. A real librdkafka producer on librdkafka's in-process mock cluster,
 *     whose delivery reports show where each partitioner actually places
 *     NULL, empty and non-empty keys with sticky partitioning on and off.
 *
 * The random corpus is reproducible: KS_TEST_SEED (env) overrides the
 * default seed.
 */
#include "ks_hash.h"
#include "ks_partitioner.h"
#include "ks_test.h"

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------------ */
/* Published vectors                                                   */
/* ------------------------------------------------------------------ */

/** Apache Kafka UtilsTest.testMurmur2: Utils.murmur2(bytes) as Java int. */
static void test_murmur2_kafka_vectors(void)
{
        static const struct {
                const char *key;
                int32_t     java;
        } v[] = {
            {"21", -973932308},
            {"foobar", -790332482},
            {"a-little-bit-long-string", -985981536},
            {"a-little-bit-longer-string", -1486304829},
            {"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971},
            {"abc", 479470107},
        };
        size_t i;

        for (i = 0; i < sizeof(v) / sizeof(v[0]); i++)
                CU_ASSERT_EQUAL(
                    (int32_t)ks_hash_murmur2(v[i].key, strlen(v[i].key)),
                    v[i].java);
}

/** Keys of librdkafka's unittest_murmur2() and unittest_fnv1a(): the same
 *  strings at offsets 0..3, so both aligned and unaligned pointers. */
#define RDK_UT_KEYS                                                             \
        const char *short_unaligned = "1234";                                   \
        const char *unaligned       = "PreAmbleWillBeRemoved,ThePrePartThatIs"; \
        const char *keys[]          = {"kafka",                                 \
                                       "giberish123456789",                     \
                                       short_unaligned,                         \
                                       short_unaligned + 1,                     \
                                       short_unaligned + 2,                     \
                                       short_unaligned + 3,                     \
                                       unaligned,                               \
                                       unaligned + 1,                           \
                                       unaligned + 2,                           \
                                       unaligned + 3,                           \
                                       "",                                      \
                                       NULL}

/** librdkafka src/rdmurmur2.c unittest_murmur2(): raw rd_murmur2(). */
static void test_murmur2_librdkafka_vectors(void)
{
        RDK_UT_KEYS;
        static const uint32_t exp[] = {
            0xd067cf64, 0x8f552b0c, 0x9fc97b14, 0xe7c009ca,
            0x873930da, 0x5a4b5ca1, 0x78424f1c, 0x4a62b377,
            0xe0e4e09e, 0x62b8b43f, 0x106e08d9, 0x106e08d9,
        };
        size_t i;

        for (i = 0; i < sizeof(exp) / sizeof(exp[0]); i++)
                CU_ASSERT_EQUAL(
                    ks_hash_murmur2(keys[i], keys[i] ? strlen(keys[i]) : 0),
                    exp[i]);
}

/** librdkafka src/rdfnv1a.c unittest_fnv1a(): rd_fnv1a(), which is the
 *  absolute value, i.e. our fnv1a partitioner hash. */
static void test_fnv1a_librdkafka_vectors(void)
{
        RDK_UT_KEYS;
        static const uint32_t exp[] = {
            0x0d33c4e1, 0x77a58295, 0x023bdd03, 0x2dea3cd2,
            0x740fa83e, 0x310ca263, 0x65cbd69c, 0x6e49c79a,
            0x69eed356, 0x6abcc023, 0x7ee3623b, 0x7ee3623b,
        };
        size_t i;

        for (i = 0; i < sizeof(exp) / sizeof(exp[0]); i++) {
                size_t len = keys[i] ? strlen(keys[i]) : 0;

                CU_ASSERT_EQUAL(
                    ks_partitioner_hash(KS_PARTITIONER_FNV1A, keys[i], len),
                    exp[i]);
                CU_ASSERT_EQUAL(ks_partitioner_hash(KS_PARTITIONER_FNV1A_RANDOM,
                                                    keys[i], len),
                                exp[i]);
        }
}

/** Plain FNV-1a 32 (test_fnv.c vectors) and CRC-32 check value. */
static void test_fnv1a_crc32_reference_vectors(void)
{
        CU_ASSERT_EQUAL(ks_hash_fnv1a("", 0), 0x811c9dc5);
        CU_ASSERT_EQUAL(ks_hash_fnv1a(NULL, 0), 0x811c9dc5);
        CU_ASSERT_EQUAL(ks_hash_fnv1a("a", 1), 0xe40c292c);
        CU_ASSERT_EQUAL(ks_hash_fnv1a("foobar", 6), 0xbf9cf968);
        CU_ASSERT_EQUAL(ks_hash_crc32("123456789", 9), 0xcbf43926);
        CU_ASSERT_EQUAL(ks_hash_crc32("", 0), 0);
        CU_ASSERT_EQUAL(ks_hash_crc32(NULL, 0), 0);
}

/** librdkafka tests/0048-partitioner.c: the hash whose remainder is the
 *  partition, per partitioner, for keys NULL, "", "23456", a long string
 *  and "hejsan" (from `crc32` on OSX, Java Murmur2Cli, Go hash/fnv). */
static void test_librdkafka_0048_vectors(void)
{
        const char *keys[] = {
            NULL, "", "23456",
            "this is another string with more length to it perhaps", "hejsan"};
        static const struct {
                ks_partitioner_t p;
                uint32_t         exp[5];
        } v[] = {
            {KS_PARTITIONER_CONSISTENT,
             {0x0, 0x0, 0xb1b451d7, 0xb0150df7, 0xd077037e}},
            {KS_PARTITIONER_MURMUR2,
             {0x106e08d9, 0x106e08d9, 0x058d780f, 0x4f7703da, 0x5ec19395}},
            {KS_PARTITIONER_FNV1A,
             {0x7ee3623b, 0x7ee3623b, 0x27e6f469, 0x155e3e5f, 0x17b1e27a}},
        };
        size_t i, k;

        for (i = 0; i < sizeof(v) / sizeof(v[0]); i++)
                for (k = 0; k < 5; k++)
                        CU_ASSERT_EQUAL(
                            ks_partitioner_hash(v[i].p, keys[k],
                                                keys[k] ? strlen(keys[k]) : 0),
                            v[i].exp[k]);
}

/** SMHasher VerificationTest for MurmurHash64A: hash {}, {0}, {0,1}, ...
 *  {0..254} with seed 256-i, then the 2048 output bytes (little-endian)
 *  with seed 0; the low 32 bits must be 0x1F0D3804. */
static void test_murmur64a_smhasher(void)
{
        uint8_t  key[256], hashes[256 * 8];
        uint64_t h;
        int      i, b;

        for (i = 0; i < 256; i++) {
                key[i] = (uint8_t)i;
                h      = ks_hash_murmur64a(key, (size_t)i, (uint64_t)(256 - i));
                for (b = 0; b < 8; b++)
                        hashes[i * 8 + b] = (uint8_t)(h >> (8 * b));
        }
        h = ks_hash_murmur64a(hashes, sizeof(hashes), 0);
        CU_ASSERT_EQUAL((uint32_t)h, 0x1F0D3804);
        /* NULL hashes as empty; the fixed seed is not 0. */
        CU_ASSERT_EQUAL(ks_hash_key64(NULL, 0), ks_hash_key64("", 0));
        CU_ASSERT_NOT_EQUAL(ks_hash_key64("k", 1),
                            ks_hash_murmur64a("k", 1, 0));
}

/* ------------------------------------------------------------------ */
/* librdkafka's partitioner functions as oracle                         */
/* ------------------------------------------------------------------ */

typedef int32_t(rdk_partitioner_fn)(const rd_kafka_topic_t *, const void *,
                                    size_t, int32_t, void *, void *);

/** The hashing partitioners, and (from librdkafka v2.0.2 rdkafka_msg.c)
 *  which keys send them down the random path, which needs a real rkt. */
static const struct {
        ks_partitioner_t    p;
        rdk_partitioner_fn *fn;
        int                 random_if_null;  /* *_random */
        int                 random_if_empty; /* consistent_random */
} oracle[] = {
    {KS_PARTITIONER_CONSISTENT, rd_kafka_msg_partitioner_consistent, 0, 0},
    {KS_PARTITIONER_CONSISTENT_RANDOM,
     rd_kafka_msg_partitioner_consistent_random, 1, 1},
    {KS_PARTITIONER_MURMUR2, rd_kafka_msg_partitioner_murmur2, 0, 0},
    {KS_PARTITIONER_MURMUR2_RANDOM, rd_kafka_msg_partitioner_murmur2_random, 1,
     0},
    {KS_PARTITIONER_FNV1A, rd_kafka_msg_partitioner_fnv1a, 0, 0},
    {KS_PARTITIONER_FNV1A_RANDOM, rd_kafka_msg_partitioner_fnv1a_random, 1, 0},
};
#define ORACLE_CNT ((int)(sizeof(oracle) / sizeof(oracle[0])))

#define CORPUS_KEYS 120000
#define CORPUS_MAXLEN 100

/** Partition counts: 1..64, 100, 1000, 4096. */
static int32_t counts[67];
static int     counts_cnt;

static uint64_t      rng_state;
static unsigned long corpus_utf8; /* UTF-8 keys generated */

/** @returns the next splitmix64 value (Steele, Lea, Flood 2014). */
static uint64_t rng_next(void)
{
        uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
}

/** @returns a uniform value in [0, n). */
static uint32_t rng_below(uint32_t n)
{
        return (uint32_t)(rng_next() % n);
}

/** Appends the UTF-8 encoding of a random non-ASCII code point (2, 3 or
 *  4 bytes, surrogates excluded) if it fits. @returns bytes written. */
static size_t utf8_put(unsigned char *p, size_t room)
{
        uint32_t cp;
        size_t   n;

        switch (rng_below(3)) {
        case 0:
                cp = 0x80 + rng_below(0x800 - 0x80), n = 2;
                break;
        case 1:
                do
                        cp = 0x800 + rng_below(0x10000 - 0x800);
                while (cp >= 0xd800 && cp <= 0xdfff);
                n = 3;
                break;
        default:
                cp = 0x10000 + rng_below(0x110000 - 0x10000), n = 4;
                break;
        }
        if (n > room)
                return 0;
        if (n == 2) {
                p[0] = (unsigned char)(0xc0 | (cp >> 6));
        } else if (n == 3) {
                p[0] = (unsigned char)(0xe0 | (cp >> 12));
                p[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
        } else {
                p[0] = (unsigned char)(0xf0 | (cp >> 18));
                p[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
                p[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
        }
        p[n - 1] = (unsigned char)(0x80 | (cp & 0x3f));
        return n;
}

/**
 * @brief Generates the next corpus key into @p buf at a random offset 0..7
 *        (so librdkafka's aligned and unaligned murmur2 paths both run).
 * @returns the key pointer (NULL for a NULL key); sets *lenp.
 */
static const unsigned char *corpus_key(unsigned char *buf, size_t *lenp)
{
        unsigned char *k    = buf + rng_below(8);
        uint32_t       kind = rng_below(100);
        size_t         len  = 0, want, n;

        if (kind < 2) { /* NULL */
                *lenp = 0;
                return NULL;
        } else if (kind < 4) {  /* empty, non-NULL */
        } else if (kind < 40) { /* binary, 0..100 bytes */
                len = rng_below(CORPUS_MAXLEN + 1);
                for (n = 0; n < len; n++)
                        k[n] = (unsigned char)rng_next();
        } else if (kind < 65) { /* printable ASCII */
                len = 1 + rng_below(CORPUS_MAXLEN);
                for (n = 0; n < len; n++)
                        k[n] = (unsigned char)(0x20 + rng_below(95));
        } else { /* UTF-8, mostly non-ASCII, ending anywhere */
                corpus_utf8++;
                want = 1 + rng_below(CORPUS_MAXLEN);
                while (len < want) {
                        if (rng_below(4) == 0) {
                                k[len++] = (unsigned char)('a' + rng_below(26));
                        } else {
                                n = utf8_put(k + len, want - len);
                                if (!n)
                                        break;
                                len += n;
                        }
                }
        }
        *lenp = len;
        return k;
}

static void corpus_init(void)
{
        const char *env = getenv("KS_TEST_SEED");
        int         i;

        rng_state = env && *env ? strtoull(env, NULL, 0) : 0x6b657973686966ULL;
        corpus_utf8 = 0;
        counts_cnt  = 0;
        for (i = 1; i <= 64; i++)
                counts[counts_cnt++] = i;
        counts[counts_cnt++] = 100;
        counts[counts_cnt++] = 1000;
        counts[counts_cnt++] = 4096;
}

/** murmur2 with the tail bytes sign-extended (the bug Java never had):
 *  the corpus must tell it apart from librdkafka. */
static uint32_t mutant_murmur2_signed_tail(const unsigned char *p, size_t len)
{
        const uint32_t m = 0x5bd1e995;
        uint32_t       h = 0x9747b28cU ^ (uint32_t)len, k;

        for (; len >= 4; len -= 4, p += 4) {
                k = (uint32_t)p[0] | (uint32_t)p[1] << 8 |
                    (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
                k *= m;
                k ^= k >> 24;
                k *= m;
                h = h * m ^ k;
        }
        switch (len) {
        case 3:
                h ^= (uint32_t)(int32_t)(signed char)p[2] << 16;
                /* fall through */
        case 2:
                h ^= (uint32_t)(int32_t)(signed char)p[1] << 8;
                /* fall through */
        case 1:
                h ^= (uint32_t)(int32_t)(signed char)p[0];
                h *= m;
        }
        h ^= h >> 13;
        h *= m;
        return h ^ (h >> 15);
}

/** @returns 1 if h % n differs from librdkafka's @p fn at some count. */
static int differs(rdk_partitioner_fn *fn, const void *key, size_t len,
                   uint32_t h)
{
        int c;

        for (c = 0; c < counts_cnt; c++)
                if (ks_partition_of(h, counts[c]) !=
                    fn(NULL, key, len, counts[c], NULL, NULL))
                        return 1;
        return 0;
}

/** 100% agreement with librdkafka for every hashing partitioner, key and
 *  count; plus proof that the corpus would catch the plausible bugs. */
static void test_oracle_random_corpus(void)
{
        _Alignas(16) unsigned char buf[CORPUS_MAXLEN + 16];
        unsigned long compared[ORACLE_CNT] = {0}, mismatch[ORACLE_CNT] = {0};
        unsigned long signed_tail = 0, unmasked = 0, no_abs = 0;
        int           i, o, c;

        corpus_init();
        for (i = 0; i < CORPUS_KEYS; i++) {
                size_t               len;
                const unsigned char *key = corpus_key(buf, &len);

                for (o = 0; o < ORACLE_CNT; o++) {
                        uint32_t h;

                        if ((!key && oracle[o].random_if_null) ||
                            (len == 0 && oracle[o].random_if_empty))
                                continue;
                        h = ks_partitioner_hash(oracle[o].p, key, len);
                        for (c = 0; c < counts_cnt; c++) {
                                int32_t theirs = oracle[o].fn(
                                    NULL, key, len, counts[c], NULL, NULL);
                                int32_t ours = ks_partition_of(h, counts[c]);

                                compared[o]++;
                                if (ours != theirs && mismatch[o]++ < 5)
                                        fprintf(
                                            stderr,
                                            "\n  %s len %zu n %" PRId32
                                            ": ours %" PRId32
                                            " librdkafka %" PRId32,
                                            ks_partitioner_name(oracle[o].p),
                                            len, counts[c], ours, theirs);
                        }
                }
                if (!key)
                        continue;
                signed_tail +=
                    differs(rd_kafka_msg_partitioner_murmur2, key, len,
                            mutant_murmur2_signed_tail(key, len) & 0x7fffffff);
                unmasked += differs(rd_kafka_msg_partitioner_murmur2, key, len,
                                    ks_hash_murmur2(key, len));
                no_abs += differs(rd_kafka_msg_partitioner_fnv1a, key, len,
                                  ks_hash_fnv1a(key, len));
        }

        printf("\n    %d keys (%lu UTF-8) x %d counts:", CORPUS_KEYS,
               corpus_utf8, counts_cnt);
        for (o = 0; o < ORACLE_CNT; o++) {
                printf(" %s %lu/%lu", ks_partitioner_name(oracle[o].p),
                       compared[o] - mismatch[o], compared[o]);
                CU_ASSERT_EQUAL(mismatch[o], 0);
                /* every key but the randomised ones was compared */
                CU_ASSERT(compared[o] >=
                          (unsigned long)CORPUS_KEYS * 9 / 10 * counts_cnt);
        }
        printf("\n    corpus catches: signed-tail murmur2 on %lu keys, "
               "unmasked murmur2 on %lu, fnv1a without abs on %lu\n    ",
               signed_tail, unmasked, no_abs);
        CU_ASSERT(corpus_utf8 > CORPUS_KEYS / 4);
        CU_ASSERT(signed_tail > 1000);
        CU_ASSERT(unmasked > 1000);
        CU_ASSERT(no_abs > 1000);
}

/** A key whose plain FNV-1a is 0x80000000 (found by inverting the FNV
 *  prime): rd_fnv1a()'s `h = -h` leaves INT32_MIN negative. */
static void test_fnv1a_int32_min(void)
{
        const char *key = "BBZNRq";
        size_t      len = strlen(key);
        int         c;

        corpus_init();
        CU_ASSERT_EQUAL_FATAL(ks_hash_fnv1a(key, len), 0x80000000U);
        CU_ASSERT_EQUAL(ks_partitioner_hash(KS_PARTITIONER_FNV1A, key, len),
                        0x80000000U);
        for (c = 0; c < counts_cnt; c++)
                CU_ASSERT_EQUAL(
                    ks_partition_of(
                        ks_partitioner_hash(KS_PARTITIONER_FNV1A, key, len),
                        counts[c]),
                    rd_kafka_msg_partitioner_fnv1a(NULL, key, len, counts[c],
                                                   NULL, NULL));
}

/* ------------------------------------------------------------------ */
/* Placement, observed on a real producer (mock cluster)               */
/* ------------------------------------------------------------------ */

#define PL_PARTS 16
#define PL_BURSTS 8
#define PL_MSGS 32
enum { PL_KEY_NULL, PL_KEY_EMPTY, PL_KEY_NORMAL, PL_KEY__CNT };
static const char *const pl_key_desc[PL_KEY__CNT] = {"NULL", "empty",
                                                     "\"keyshift\""};
static int32_t pl_part[KS_PARTITIONER__CNT][PL_KEY__CNT][PL_BURSTS][PL_MSGS];
static int32_t pl_warmup[KS_PARTITIONER__CNT];

/** @returns the test key of kind @p k; sets *lenp. */
static const void *pl_key(int k, size_t *lenp)
{
        *lenp = k == PL_KEY_NORMAL ? 8 : 0;
        return k == PL_KEY_NULL ? NULL : k == PL_KEY_EMPTY ? "" : "keyshift";
}

/** Delivery report: stores the partition in the message's slot.
 *  @locality application thread (rd_kafka_flush()). */
static void pl_dr(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
        (void)rk, (void)opaque;
        *(int32_t *)m->_private = m->err ? -2 : m->partition;
}

static void pl_sleep_ms(int ms)
{
        struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

        nanosleep(&ts, NULL);
}

/**
 * @brief Classifies where the producer put one (partitioner, key) group:
 *        the same partition in all bursts (> linger apart): HASHED;
 *        one or two partitions per burst but not always the same: STICKY;
 *        at least 5 of 16 partitions in every burst of 32: RANDOM.
 * @returns the placement, or -1 if the group fits none (or failed).
 */
static int pl_classify(int32_t g[PL_BURSTS][PL_MSGS])
{
        int min_distinct = PL_PARTS, max_distinct = 0, all_same = 1, b, i;

        for (b = 0; b < PL_BURSTS; b++) {
                int seen[PL_PARTS] = {0}, d = 0;

                for (i = 0; i < PL_MSGS; i++) {
                        if (g[b][i] < 0 || g[b][i] >= PL_PARTS)
                                return -1;
                        d += !seen[g[b][i]]++;
                        all_same &= g[b][i] == g[0][0];
                }
                min_distinct = d < min_distinct ? d : min_distinct;
                max_distinct = d > max_distinct ? d : max_distinct;
        }
        if (all_same)
                return KS_PLACE_HASHED;
        if (max_distinct <= 2)
                return KS_PLACE_STICKY;
        if (min_distinct >= 5)
                return KS_PLACE_RANDOM;
        return -1;
}

/** Produces PL_BURSTS bursts per partitioner and key kind with
 *  sticky.partitioning.linger.ms = @p linger, and classifies them. */
static void pl_observe(int linger, int obs[KS_PARTITIONER__CNT][PL_KEY__CNT])
{
        char                     errstr[512], val[32], topic[64];
        rd_kafka_conf_t         *conf = rd_kafka_conf_new();
        rd_kafka_t              *rk;
        rd_kafka_mock_cluster_t *mc;
        rd_kafka_topic_t        *rkt[KS_PARTITIONER__CNT];
        int                      p, k, b, i;

        memset(pl_part, 0xff, sizeof(pl_part));
        snprintf(val, sizeof(val), "%d", linger);
        CU_ASSERT_FATAL(
            rd_kafka_conf_set(conf, "test.mock.num.brokers", "1", errstr,
                              sizeof(errstr)) == RD_KAFKA_CONF_OK &&
            rd_kafka_conf_set(conf, "sticky.partitioning.linger.ms", val,
                              errstr, sizeof(errstr)) == RD_KAFKA_CONF_OK &&
            rd_kafka_conf_set(conf, "linger.ms", "1", errstr, sizeof(errstr)) ==
                RD_KAFKA_CONF_OK &&
            rd_kafka_conf_set(conf, "log_level", "3", errstr, sizeof(errstr)) ==
                RD_KAFKA_CONF_OK);
        rd_kafka_conf_set_dr_msg_cb(conf, pl_dr);
        rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
        CU_ASSERT_PTR_NOT_NULL_FATAL(rk);
        mc = rd_kafka_handle_mock_cluster(rk);
        CU_ASSERT_PTR_NOT_NULL_FATAL(mc);

        for (p = 0; p < KS_PARTITIONER__CNT; p++) {
                rd_kafka_topic_conf_t *tconf = rd_kafka_topic_conf_new();

                snprintf(topic, sizeof(topic), "ks-placement-%s",
                         ks_partitioner_name((ks_partitioner_t)p));
                CU_ASSERT_FATAL(
                    rd_kafka_mock_topic_create(mc, topic, PL_PARTS, 1) == 0);
                CU_ASSERT_FATAL(rd_kafka_topic_conf_set(
                                    tconf, "partitioner",
                                    ks_partitioner_name((ks_partitioner_t)p),
                                    errstr,
                                    sizeof(errstr)) == RD_KAFKA_CONF_OK);
                rkt[p] = rd_kafka_topic_new(rk, topic, tconf);
                CU_ASSERT_PTR_NOT_NULL_FATAL(rkt[p]);
                /* An explicit-partition message: once it is delivered the
                 * topic's metadata (16 partitions) is known, so the bursts
                 * are partitioned at produce time, not in one batch. */
                pl_warmup[p] = -1;
                rd_kafka_produce(rkt[p], 0, RD_KAFKA_MSG_F_COPY, "w", 1, NULL,
                                 0, &pl_warmup[p]);
        }
        rd_kafka_flush(rk, 30000);
        for (p = 0; p < KS_PARTITIONER__CNT; p++)
                CU_ASSERT_EQUAL_FATAL(pl_warmup[p], 0);

        for (b = 0; b < PL_BURSTS; b++) {
                for (p = 0; p < KS_PARTITIONER__CNT; p++)
                        for (k = 0; k < PL_KEY__CNT; k++) {
                                size_t      len;
                                const void *key = pl_key(k, &len);

                                for (i = 0; i < PL_MSGS; i++)
                                        CU_ASSERT_EQUAL(
                                            rd_kafka_produce(
                                                rkt[p], RD_KAFKA_PARTITION_UA,
                                                RD_KAFKA_MSG_F_COPY, "v", 1,
                                                key, len, &pl_part[p][k][b][i]),
                                            0);
                        }
                rd_kafka_flush(rk, 30000);
                pl_sleep_ms(3 * linger + 5); /* let sticky partitions expire */
        }

        for (p = 0; p < KS_PARTITIONER__CNT; p++) {
                rd_kafka_topic_destroy(rkt[p]);
                for (k = 0; k < PL_KEY__CNT; k++)
                        obs[p][k] = pl_classify(pl_part[p][k]);
        }
        rd_kafka_destroy(rk);
}

/** ks_partitioner_placement() for every partitioner x {NULL, empty, key} x
 *  {linger 0, linger 10} equals what librdkafka 2.0.2 does. */
static void test_placement_observed(void)
{
        static const char *const desc[]    = {"hashed", "sticky", "random"};
        static const int         lingers[] = {0, 10};
        int                      obs[KS_PARTITIONER__CNT][PL_KEY__CNT];
        int                      l, p, k;

        for (l = 0; l < 2; l++) {
                pl_observe(lingers[l], obs);
                printf("\n    sticky.partitioning.linger.ms=%d:", lingers[l]);
                for (p = 0; p < KS_PARTITIONER__CNT; p++) {
                        printf("\n      %-17s",
                               ks_partitioner_name((ks_partitioner_t)p));
                        for (k = 0; k < PL_KEY__CNT; k++) {
                                size_t         len;
                                const void    *key  = pl_key(k, &len);
                                ks_placement_t ours = ks_partitioner_placement(
                                    (ks_partitioner_t)p, lingers[l], key, len);

                                printf(" %s:%s", pl_key_desc[k],
                                       obs[p][k] < 0 ? "UNCLASSIFIED"
                                                     : desc[obs[p][k]]);
                                if ((int)ours != obs[p][k])
                                        printf("(model says %s!)", desc[ours]);
                                CU_ASSERT_EQUAL((int)ours, obs[p][k]);
                                /* hashed groups sit where the model says */
                                if (obs[p][k] == KS_PLACE_HASHED)
                                        CU_ASSERT_EQUAL(
                                            pl_part[p][k][0][0],
                                            ks_partition_of(
                                                ks_partitioner_hash(
                                                    (ks_partitioner_t)p, key,
                                                    len),
                                                PL_PARTS));
                        }
                }
        }
        printf("\n    ");
}

/* ------------------------------------------------------------------ */
/* Names                                                               */
/* ------------------------------------------------------------------ */

/** Round trip; and on valid names and near misses, we accept exactly
 *  what librdkafka's `partitioner` property accepts, meaning the same
 *  partitioner (librdkafka left-trims string properties). */
/* The remainder by a multiplication (ks_partition_of_m()) equals the
 * hardware's % for the edge hashes and counts and 10^6 random pairs. */
static void test_partition_of_m(void)
{
        static const uint32_t hashes[] = {
            0, 1, 2, 0x7fffffffu, 0x80000000u, 0xfffffffeu, 0xffffffffu};
        static const uint32_t counts[] = {
            1,    2,     3,     6,      7,           12,
            1000, 65536, 99999, 100000, 0x7fffffffu, 0xffffffffu};
        size_t i, j, bad = 0;

        for (i = 0; i < sizeof(hashes) / sizeof(hashes[0]); i++)
                for (j = 0; j < sizeof(counts) / sizeof(counts[0]); j++)
                        bad += (uint32_t)ks_partition_of_m(
                                   hashes[i], ks_partition_m(counts[j]),
                                   counts[j]) != hashes[i] % counts[j];
        for (i = 0; i < 1000000; i++) {
                uint32_t h = (uint32_t)rng_next();
                uint32_t d = (uint32_t)(rng_next() % 100000) + 1;
                bad += ks_partition_of_m(h, ks_partition_m(d), d) !=
                       ks_partition_of(h, (int32_t)d);
        }
        CU_ASSERT_EQUAL(bad, 0);
}

static void test_names(void)
{
        static const char *const probes[] = {
            "random",
            "consistent",
            "consistent_random",
            "murmur2",
            "murmur2_random",
            "fnv1a",
            "fnv1a_random",
            "",
            " ",
            "Murmur2",
            " murmur2",
            "\tfnv1a_random",
            "murmur2 ",
            "murmur",
            "murmur2-random",
            "default",
            "sticky",
            "crc32",
            "\nrandom",
            "fnv1a_random\n",
            "RANDOM",
            "consistent_random2",
        };
        rd_kafka_topic_conf_t *tconf = rd_kafka_topic_conf_new();
        char                   errstr[256], stored[64];
        ks_partitioner_t       out;
        size_t                 i, sz;
        int                    p, q, accepted = 0;

        for (p = 0; p < KS_PARTITIONER__CNT; p++) {
                const char *name = ks_partitioner_name((ks_partitioner_t)p);

                CU_ASSERT_PTR_NOT_NULL_FATAL(name);
                out = KS_PARTITIONER__CNT;
                CU_ASSERT_EQUAL(ks_partitioner_from_name(name, &out), 0);
                CU_ASSERT_EQUAL(out, (ks_partitioner_t)p);
                for (q = 0; q < p; q++)
                        CU_ASSERT_STRING_NOT_EQUAL(
                            name, ks_partitioner_name((ks_partitioner_t)q));
        }
        for (i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
                int ours, theirs;

                out    = KS_PARTITIONER__CNT;
                ours   = ks_partitioner_from_name(probes[i], &out);
                theirs = rd_kafka_topic_conf_set(
                    tconf, "partitioner", probes[i], errstr, sizeof(errstr));
                CU_ASSERT_EQUAL(ours == 0, theirs == RD_KAFKA_CONF_OK);
                if (ours != 0) {
                        CU_ASSERT_EQUAL(out, KS_PARTITIONER__CNT);
                        continue;
                }
                accepted++;
                sz = sizeof(stored);
                CU_ASSERT_EQUAL_FATAL(
                    rd_kafka_topic_conf_get(tconf, "partitioner", stored, &sz),
                    RD_KAFKA_CONF_OK);
                CU_ASSERT_STRING_EQUAL(stored, ks_partitioner_name(out));
        }
        CU_ASSERT_EQUAL(accepted, KS_PARTITIONER__CNT + 3); /* 3 trimmed */
        CU_ASSERT_EQUAL(ks_partitioner_from_name(NULL, &out), -1);
        CU_ASSERT_PTR_NULL(ks_partitioner_name(KS_PARTITIONER__CNT));
        CU_ASSERT_PTR_NULL(ks_partitioner_name((ks_partitioner_t)-1));
        rd_kafka_topic_conf_destroy(tconf);
}

void ks_test_register(void)
{
        KS_ADD_SUITE(
            "hash vectors",
            {"murmur2: Apache Kafka UtilsTest", test_murmur2_kafka_vectors},
            {"murmur2: librdkafka unittest_murmur2",
             test_murmur2_librdkafka_vectors},
            {"fnv1a: librdkafka unittest_fnv1a", test_fnv1a_librdkafka_vectors},
            {"fnv1a, crc32: reference check values",
             test_fnv1a_crc32_reference_vectors},
            {"all: librdkafka tests/0048-partitioner",
             test_librdkafka_0048_vectors},
            {"murmur64a: SMHasher verification", test_murmur64a_smhasher});
        KS_ADD_SUITE("librdkafka partitioner functions",
                     {"random corpus x counts x partitioners",
                      test_oracle_random_corpus},
                     {"fnv1a INT32_MIN edge", test_fnv1a_int32_min},
                     {"remainder by multiplication = %", test_partition_of_m});
        KS_ADD_SUITE(
            "placement on a mock-cluster producer",
            {"partitioner x key x sticky linger", test_placement_observed});
        KS_ADD_SUITE("partitioner names",
                     {"round trip and rejection", test_names});
}
