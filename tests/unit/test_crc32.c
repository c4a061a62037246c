/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_crc32.c
 * @brief ks_hash_crc32() (slicing-by-8 tables of our own below 16 bytes,
 *        libdeflate from 16 on) is zlib's `crc32()`, which is librdkafka's
 *        `rd_crc32()`, the `consistent` partitioners' hash (issue 33,
 *        decision 1: any source proven equal to zlib's).
 *
 * Oracle: zlib's `crc32(0, buf, len)` itself (librdkafka v2.0.2
 * `src/rdcrc32.h` calls it when built with zlib, as Debian's is), and
 * the published check value of CRC-32/ISO-HDLC, 0xCBF43926 for
 * "123456789" (Greg Cook's CRC catalogue).
 *
 * Inputs:
 *  - 10,000,000 random inputs (SplitMix64, fixed seed): lengths uniform in
 *    0..300, at random offsets (so random alignments) of a 1 MiB random
 *    buffer refilled every 1,000,000 inputs; ks_crc32_by8() (the table on
 *    its own, at every length) is checked on the same inputs;
 *  - every length 0..300 at every alignment 0..15 of one buffer, and NULL;
 *  - every key of the test streams: the Zipf stream's 100,000 keys
 *    (ks_test_streams.c, "key-<id>"), the keys of the Java and Sarama
 *    fixtures (tests/unit/data/java-keys.tsv, sarama-partitions.tsv), and
 *    every keyed AIS sentence's MMSI in the shared AIS logs as
 *    keyshift-replay keys it (decimal text, and 4-byte big-endian for
 *    `--key-format int32`).
 */
#include "ks_test.h"
#include "ks_test_streams.h"

#include "ais_nmea.h"
#include "ais_reader.h"
#include "ks_crc32.h"
#include "ks_hash.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define RANDOM_INPUTS 10000000
#define RANDOM_LEN_MAX 300
#define RANDOM_BUF (1u << 20)
#define RANDOM_REFILL 1000000

/** @returns zlib's CRC-32 of @p len bytes at @p p (the oracle). */
static uint32_t zlib_crc(const void *p, size_t len)
{
        return (uint32_t)crc32(0L, p, (uInt)len);
}

/** @returns the next SplitMix64 output of *@p s (Steele, Lea & Flood). */
static uint64_t next64(uint64_t *s)
{
        return kst_mix64((*s)++);
}

/** Keys checked by check_key() and the first few disagreements. */
static size_t keys_checked, keys_bad;

/** @brief Checks one key against zlib; prints the first few failures. */
static void check_key(const char *what, const void *key, size_t len)
{
        uint32_t z = zlib_crc(key, len), k = ks_hash_crc32(key, len);

        keys_checked++;
        if (k != z && keys_bad++ < 5)
                fprintf(stderr, "\n  %s key of %zu bytes: ours %08x zlib %08x",
                        what, len, k, z);
}

static void test_check_value(void)
{
        CU_ASSERT_EQUAL(ks_hash_crc32("123456789", 9), 0xcbf43926);
        CU_ASSERT_EQUAL(ks_crc32_by8("123456789", 9), 0xcbf43926);
        CU_ASSERT_EQUAL(zlib_crc("123456789", 9), 0xcbf43926);
        CU_ASSERT_EQUAL(ks_hash_crc32(NULL, 0), 0);
        CU_ASSERT_EQUAL(ks_crc32_by8(NULL, 0), 0);
        CU_ASSERT_EQUAL(ks_hash_crc32("", 0), 0);
        /* 16 bytes: the first length libdeflate computes */
        CU_ASSERT_EQUAL(ks_hash_crc32("1234567891234567", 16),
                        zlib_crc("1234567891234567", 16));
}

static void test_every_length_and_alignment(void)
{
        unsigned char buf[RANDOM_LEN_MAX + 16];
        uint64_t      s = 0x33c4c32u;
        size_t        i, len, off;
        int           bad_ = 0;

        for (i = 0; i < sizeof(buf); i++)
                buf[i] = (unsigned char)next64(&s);
        for (off = 0; off < 16; off++)
                for (len = 0; len <= RANDOM_LEN_MAX; len++) {
                        uint32_t z = zlib_crc(buf + off, len);

                        CHECK_EACH(ks_hash_crc32(buf + off, len) == z,
                                   "ks_hash_crc32 len %zu offset %zu", len,
                                   off);
                        CHECK_EACH(ks_crc32_by8(buf + off, len) == z,
                                   "ks_crc32_by8 len %zu offset %zu", len, off);
                }
        CU_ASSERT_EQUAL(bad_, 0);
}

static void test_random_inputs(void)
{
        unsigned char *buf = malloc(RANDOM_BUF + RANDOM_LEN_MAX + 8);
        uint64_t       s   = 20260533u; /* issue 33 */
        size_t         i, j, by_len[RANDOM_LEN_MAX + 1] = {0};
        int            bad_ = 0;

        CU_ASSERT_FATAL(buf != NULL);
        for (i = 0; i < RANDOM_INPUTS; i++) {
                uint64_t r;
                size_t   off, len;
                uint32_t z;

                if (i % RANDOM_REFILL == 0)
                        for (j = 0; j < RANDOM_BUF + RANDOM_LEN_MAX; j += 8) {
                                r = next64(&s);
                                memcpy(buf + j, &r, 8);
                        }
                r   = next64(&s);
                len = (size_t)(r % (RANDOM_LEN_MAX + 1));
                off = (size_t)((r >> 32) % RANDOM_BUF);
                by_len[len]++;
                z = zlib_crc(buf + off, len);
                CHECK_EACH(ks_hash_crc32(buf + off, len) == z,
                           "input %zu (len %zu): ks_hash_crc32 %08x zlib %08x",
                           i, len, ks_hash_crc32(buf + off, len), z);
                CHECK_EACH(ks_crc32_by8(buf + off, len) == z,
                           "input %zu (len %zu): ks_crc32_by8 %08x zlib %08x",
                           i, len, ks_crc32_by8(buf + off, len), z);
        }
        CU_ASSERT_EQUAL(bad_, 0);
        /* every length was drawn (~33,000 times each) */
        for (j = 0; j <= RANDOM_LEN_MAX; j++)
                CHECK_EACH(by_len[j] > 30000, "length %zu drawn %zu times", j,
                           by_len[j]);
        CU_ASSERT_EQUAL(bad_, 0);
        free(buf);
}

static void test_zipf_stream_keys(void)
{
        char     text[32];
        uint32_t id;

        keys_checked = keys_bad = 0;
        for (id = 0; id < ZIPF_KEYS; id++) {
                size_t n = kst_key_text(id, text, sizeof(text));

                check_key("zipf", text, n);
        }
        CU_ASSERT_EQUAL(keys_checked, ZIPF_KEYS);
        CU_ASSERT_EQUAL(keys_bad, 0);
}

/** @brief Checks the hex key in column @p col of every row of fixture
 *         @p name. @returns the rows read. */
static size_t check_fixture(const char *name, int col)
{
        FILE         *fp = fopen(ks_test_data_path(name), "r");
        char          line[4096];
        unsigned char key[1024];
        size_t        rows = 0;

        if (!fp) {
                fprintf(stderr, "\n  %s: cannot open", name);
                return 0;
        }
        while (fgets(line, sizeof(line), fp)) {
                char *f[64];
                long  n;

                if (line[0] == '#' || line[0] == '\n')
                        continue;
                if (ks_test_split_tabs(line, f, 64) <= col)
                        continue;
                n = ks_test_unhex(f[col], key, sizeof(key));
                if (n < 0)
                        continue;
                check_key(name, key, (size_t)n);
                rows++;
        }
        fclose(fp);
        return rows;
}

static void test_fixture_keys(void)
{
        keys_checked = keys_bad = 0;
        CU_ASSERT(check_fixture("java-keys.tsv", 5) > 0);
        CU_ASSERT(check_fixture("sarama-partitions.tsv", 0) >= 400);
        CU_ASSERT_EQUAL(keys_bad, 0);
}

static void test_ais_keys(void)
{
        static const char *const logs[] = {
            "ais/risky_ais.txt.gz",
            "ais/risky_exact-earth-augmented-3.txt",
            "ais/aislib_stream_example.txt",
            "ais/goais_aistest.nmea",
            "ais/gpsd_ais-nmea.log",
            "ais/pyais_nmea_data_sample.txt"};
        size_t i, keyed = 0;

        keys_checked = keys_bad = 0;
        for (i = 0; i < sizeof(logs) / sizeof(logs[0]); i++) {
                char             err[512];
                ks_ais_reader_t *r = ks_ais_reader_open(
                    ks_test_shared_path(logs[i]), err, sizeof(err));
                ks_ais_decoder_t *d = ks_ais_decoder_new();
                const char       *line;
                size_t            len;
                int               rc;

                CU_ASSERT(r != NULL);
                if (!r) {
                        fprintf(stderr, "\n  %s", err);
                        ks_ais_decoder_destroy(d);
                        continue;
                }
                while ((rc = ks_ais_reader_next(r, &line, &len)) == 1) {
                        ks_ais_msg_t  m;
                        char          text[16];
                        unsigned char be[4];
                        int           n;

                        if (ks_ais_decode_line(d, line, len, &m) !=
                            KS_AIS_KEYED)
                                continue;
                        keyed++;
                        /* keyshift_replay.c replay_produce(): "%u", or
                         * 4 bytes big-endian */
                        n = snprintf(text, sizeof(text), "%u",
                                     (unsigned)m.mmsi);
                        check_key(logs[i], text, (size_t)n);
                        be[0] = (unsigned char)(m.mmsi >> 24);
                        be[1] = (unsigned char)(m.mmsi >> 16);
                        be[2] = (unsigned char)(m.mmsi >> 8);
                        be[3] = (unsigned char)m.mmsi;
                        check_key(logs[i], be, 4);
                }
                CU_ASSERT_EQUAL(rc, 0);
                ks_ais_reader_close(r);
                ks_ais_decoder_destroy(d);
        }
        /* risky_ais alone has 27,941 keyed messages (bench/ksb_keys.h) */
        CU_ASSERT(keyed > 27941);
        CU_ASSERT_EQUAL(keys_checked, 2 * keyed);
        CU_ASSERT_EQUAL(keys_bad, 0);
}

void ks_test_register(void)
{
        KS_ADD_SUITE(
            "crc32",
            {"check value 0xcbf43926, NULL and empty keys", test_check_value},
            {"every length 0..300 at every alignment 0..15",
             test_every_length_and_alignment},
            {"10 M random inputs of 0..300 bytes against zlib",
             test_random_inputs},
            {"every key of the Zipf test stream", test_zipf_stream_keys},
            {"every key of the Java and Sarama fixtures", test_fixture_keys},
            {"every keyed AIS message of the shared logs", test_ais_keys});
}
