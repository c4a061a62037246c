/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_broker_java_producer.c
 * @brief A real Java KafkaProducer (kafka-clients, default partitioner)
 *        writes to the real broker; every key must land where keyshift's
 *        model says a Java producer puts it: ks_partition_of(
 *        ks_partitioner_hash(KS_PARTITIONER_MURMUR2_RANDOM, bytes, len), n)
 *        of the serializer's bytes, at 6, then 12 and 13 partitions (the
 *        topic is grown with CreatePartitions between the rounds).
 *
 * The partition is RecordMetadata's (what the broker acknowledged), the
 * count is what the Java producer saw. The corpus: AIS MMSIs as strings
 * (StringSerializer, as keyshift-replay keys them) and as int32
 * (IntegerSerializer), non-ASCII UTF-8 strings, int64, UUIDs (text form),
 * raw bytes of lengths 0..100, and the empty string.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ks_broker_support.h"
#include "ks_e2e_support.h"
#include "ks_hex.h"
#include "ks_partitioner.h"
#include "ks_test.h"

#define SUMMARY "4-java-producer"
#define MMSIS 1000

static const int rounds[] = {6, 12, 13};
#define N_ROUNDS (sizeof(rounds) / sizeof(rounds[0]))

typedef struct jkey {
        uint8_t bytes[128];
        size_t  len;
        int32_t partition[N_ROUNDS]; /**< Java's, -1 until seen */
} jkey_t;

static jkey_t *corpus;
static size_t  corpus_cnt;

static void add(FILE *fp, const char *type, const char *text, const void *b,
                size_t len)
{
        jkey_t *k = &corpus[corpus_cnt++];
        memcpy(k->bytes, b, len);
        k->len = len;
        memset(k->partition, 0xff, sizeof(k->partition));
        fprintf(fp, "%s:%s\n", type, text);
}

/** @returns the corpus size. */
static size_t make_corpus(const char *path)
{
        ks_keyset_t ais;
        uint64_t    st = 0x4a617661ull;
        FILE       *fp = fopen(path, "w");
        char        text[512];
        uint8_t     b[128];
        size_t      i, j, mmsis = 0;

        CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
        corpus = calloc(8000, sizeof(*corpus));
        ks_keyset_init(&ais);
        CU_ASSERT_FATAL(ks_keyset_add_ais(&ais) > 0);
        for (i = 0; i < ais.key_cnt && mmsis < MMSIS; i++) {
                const ks_bkey_t *k = &ais.keys[i];
                uint32_t         mmsi;
                if (!k->is_ais)
                        continue;
                memcpy(text, k->bytes, k->len);
                text[k->len] = '\0';
                add(fp, "string", text, k->bytes, k->len);
                mmsi = (uint32_t)strtoul(text, NULL, 10);
                b[0] = (uint8_t)(mmsi >> 24);
                b[1] = (uint8_t)(mmsi >> 16);
                b[2] = (uint8_t)(mmsi >> 8);
                b[3] = (uint8_t)mmsi;
                add(fp, "int32", text, b, 4);
                mmsis++;
        }
        ks_keyset_free(&ais);
        add(fp, "string", "", "", 0);
        for (i = 0; i < 300; i++) { /* non-ASCII UTF-8: "fartøy-Ωλ-船-<n>" */
                int n = snprintf(text, sizeof(text),
                                 "fart\xc3\xb8y-\xce\xa9\xce\xbb-\xe8\x88\xb9-"
                                 "%" PRIu64,
                                 ks_broker_rand(&st) % 100000);
                add(fp, "string", text, text, (size_t)n);
        }
        for (i = 0; i < 300; i++) { /* int64, 8 bytes big-endian */
                uint64_t v = ks_broker_rand(&st);
                snprintf(text, sizeof(text), "%" PRId64, (int64_t)v);
                for (j = 0; j < 8; j++)
                        b[j] = (uint8_t)(v >> (56 - 8 * j));
                add(fp, "int64", text, b, 8);
        }
        for (i = 0; i < 300; i++) { /* UUIDs: the 36-character text */
                uint64_t hi = ks_broker_rand(&st), lo = ks_broker_rand(&st);
                int      n = snprintf(text, sizeof(text),
                                      "%08" PRIx32 "-%04x-%04x-%04x-%012" PRIx64,
                                      (uint32_t)(hi >> 32),
                                      (unsigned)(hi >> 16 & 0xffff),
                                      (unsigned)(hi & 0xffff), (unsigned)(lo >> 48),
                                      (uint64_t)(lo & 0xffffffffffffull));
                add(fp, "uuid", text, text, (size_t)n);
        }
        for (i = 0; i <= 100; i++) { /* raw bytes, every length 0..100 */
                for (j = 0; j < 5; j++) {
                        size_t k;
                        for (k = 0; k < i; k++)
                                b[k] = (uint8_t)ks_broker_rand(&st);
                        ks_hex_encode(b, i, text);
                        add(fp, "hex", text, b, i);
                }
        }
        fclose(fp);
        return corpus_cnt;
}

static void test_java_producer(void)
{
        const char *dir = ks_e2e_tmpdir("java-producer");
        char        in[600], out[600], args[1024], topic[256], *line = NULL;
        size_t      cap = 0, r, i, agree[N_ROUNDS] = {0}, seen[N_ROUNDS] = {0};
        size_t      bad_keys = 0, bytes_bad = 0, count_bad = 0;
        size_t      moved_obs = 0, moved_model = 0;
        double      t0 = ks_broker_now_s(), t_round[N_ROUNDS];
        FILE       *fp;

        snprintf(in, sizeof(in), "%s/corpus.txt", dir);
        make_corpus(in);
        ks_broker_topic_name("java", topic, sizeof(topic));
        CU_ASSERT_FATAL(ks_broker_create_topic(topic, rounds[0]) == 0);

        for (r = 0; r < N_ROUNDS; r++) {
                double tr = ks_broker_now_s();
                if (r)
                        CU_ASSERT_FATAL(
                            ks_broker_create_partitions(topic, rounds[r]) == 0);
                snprintf(out, sizeof(out), "%s/produce-%d.tsv", dir, rounds[r]);
                snprintf(args, sizeof(args),
                         "produce --bootstrap '%s' --topic '%s'",
                         ks_broker_bootstrap(), topic);
                CU_ASSERT_EQUAL_FATAL(ks_broker_java(args, in, out), 0);
                t_round[r] = ks_broker_now_s() - tr;

                CU_ASSERT_PTR_NOT_NULL_FATAL(fp = fopen(out, "r"));
                while (getline(&line, &cap, fp) > 0) {
                        char   *f[6], *rest = line, *hex;
                        long    ln, part, cnt, len;
                        uint8_t b[128];
                        jkey_t *k;
                        int     nf = 0;
                        if (line[0] == '#')
                                continue;
                        line[strcspn(line, "\n")] = '\0';
                        /* line, type, key_hex (empty for an empty key),
                         * partition, offset, partition_count */
                        while (nf < 6 && rest)
                                f[nf++] = strsep(&rest, "\t");
                        if (nf != 6 || rest) {
                                fprintf(stderr, "bad line: %s\n", line);
                                CU_FAIL("unparsable Java output");
                                continue;
                        }
                        ln   = atol(f[0]);
                        hex  = f[2];
                        part = atol(f[3]);
                        cnt  = atol(f[5]);
                        if (ln < 1 || (size_t)ln > corpus_cnt) {
                                CU_FAIL("line number out of range");
                                continue;
                        }
                        k   = &corpus[ln - 1];
                        len = ks_hex_decode(hex, strlen(hex), b, sizeof(b));
                        if (len != (long)k->len || memcmp(b, k->bytes, k->len))
                                bytes_bad++;
                        count_bad += cnt != rounds[r];
                        k->partition[r] = (int32_t)part;
                        seen[r]++;
                }
                fclose(fp);
                for (i = 0; i < corpus_cnt; i++) {
                        jkey_t  *k = &corpus[i];
                        uint32_t h = ks_partitioner_hash(
                            KS_PARTITIONER_MURMUR2_RANDOM, k->bytes, k->len);
                        agree[r] +=
                            k->partition[r] == ks_partition_of(h, rounds[r]);
                }
        }
        free(line);
        for (i = 0; i < corpus_cnt; i++) {
                jkey_t  *k  = &corpus[i];
                uint32_t h  = ks_partitioner_hash(KS_PARTITIONER_MURMUR2_RANDOM,
                                                  k->bytes, k->len);
                int      ok = 1;
                for (r = 0; r < N_ROUNDS; r++)
                        ok &= k->partition[r] == ks_partition_of(h, rounds[r]);
                bad_keys += !ok;
                moved_obs += k->partition[0] != k->partition[1];
                moved_model += ks_partition_of(h, rounds[0]) !=
                               ks_partition_of(h, rounds[1]);
        }
        ks_broker_delete_topic(topic);
        ks_broker_admin_close();

        CU_ASSERT_EQUAL(bytes_bad, 0);
        CU_ASSERT_EQUAL(count_bad, 0);
        CU_ASSERT_EQUAL(bad_keys, 0);
        CU_ASSERT_EQUAL(moved_obs, moved_model);
        for (r = 0; r < N_ROUNDS; r++) {
                CU_ASSERT_EQUAL(seen[r], corpus_cnt);
                CU_ASSERT_EQUAL(agree[r], corpus_cnt);
        }

        ks_broker_summary(SUMMARY, "### A Java producer on the real broker "
                                   "vs keyshift's model");
        ks_broker_summary(SUMMARY, "%s", "");
        ks_broker_summary(SUMMARY,
                          "| keys | partitions | RecordMetadata partition "
                          "== model | serializer bytes differing | "
                          "disagreeing keys | Java produce time |");
        ks_broker_summary(SUMMARY, "|---|---|---|---|---|---|");
        for (r = 0; r < N_ROUNDS; r++)
                ks_broker_summary(SUMMARY,
                                  "| %zu | %d | %zu / %zu | %zu | %zu "
                                  "| %.1f s |",
                                  corpus_cnt, rounds[r], agree[r], corpus_cnt,
                                  bytes_bad, bad_keys, t_round[r]);
        ks_broker_summary(SUMMARY,
                          "\nkeys moved 6→12: model %zu, Java producer %zu "
                          "(of %zu); total %.1f s",
                          moved_model, moved_obs, corpus_cnt,
                          ks_broker_now_s() - t0);
        ks_broker_summary(SUMMARY, "%s", "");
        free(corpus);
        ks_broker_tmpdir_done(dir);
}

void ks_test_register(void)
{
        KS_ADD_SUITE("java_producer",
                     {"Java producer lands where keyshift's model says",
                      test_java_producer});
}
