/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_java_murmur2.c
 * @brief keyshift's murmur2 model against Java's kafka-clients, key by key,
 *        on a large random corpus. No broker: the oracle is
 *        KeyshiftJavaOracle's `keys` mode (Kafka's own serializers,
 *        Utils.murmur2, Utils.toPositive and
 *        BuiltInPartitioner.partitionForKey, the method KafkaProducer calls
 *        for a keyed record).
 *
 * For every key the test checks three things:
 *  - the serializer's bytes (StringSerializer, IntegerSerializer,
 *    LongSerializer, UUIDSerializer, ByteArraySerializer) are the bytes
 *    this file expects for the value, so a C producer that wants to land
 *    where a Java producer does knows what to send;
 *  - ks_hash_murmur2() of those bytes is Java's Utils.murmur2() (signed),
 *    and ks_partitioner_hash(KS_PARTITIONER_MURMUR2, ...) is toPositive();
 *  - ks_partition_of(ks_partitioner_hash(KS_PARTITIONER_MURMUR2, bytes,
 *    len), n) is Java's partition for every count n of KS_COUNTS.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ks_broker_support.h"
#include "ks_e2e_support.h"
#include "ks_hash.h"
#include "ks_hex.h"
#include "ks_partitioner.h"
#include "ks_test.h"

#define SUMMARY "1-java-murmur2"

/** Binary keys per length 0..100 (plus three patterned ones each). */
#define HEX_PER_LEN 250
#define N_STRINGS 6000
#define N_INT32 3000
#define N_INT64 3000
#define N_UUID 2000

static const int counts[] = {
    1,  2,  3,  4,  5,  6,  7,  8,  9,   10,   11,   12,   13,    14,
    15, 16, 17, 18, 19, 20, 21, 22, 23,  24,   25,   26,   27,    28,
    29, 30, 31, 32, 33, 34, 35, 36, 37,  38,   39,   40,   41,    42,
    43, 44, 45, 46, 47, 48, 49, 50, 51,  52,   53,   54,   55,    56,
    57, 58, 59, 60, 61, 62, 63, 64, 100, 1000, 1024, 9973, 100000};
#define N_COUNTS (sizeof(counts) / sizeof(counts[0]))

/** A corpus line and the bytes its serializer must produce. */
typedef struct expect {
        char     type[8];
        uint8_t *bytes;
        size_t   len;
} expect_t;

typedef struct corpus {
        expect_t *e;
        size_t    cnt, cap;
        FILE     *fp;
        size_t    by_type[5];
} corpus_t;

static const char *const types[5] = {"hex", "string", "int32", "int64", "uuid"};

/** @brief Writes "<type>:<text>" and records the expected bytes. */
static void add(corpus_t *c, int type, const char *text, const uint8_t *b,
                size_t len)
{
        expect_t *e;

        if (c->cnt == c->cap) {
                c->cap = c->cap ? c->cap * 2 : 4096;
                c->e   = realloc(c->e, c->cap * sizeof(*e));
        }
        e = &c->e[c->cnt++];
        snprintf(e->type, sizeof(e->type), "%s", types[type]);
        e->bytes = malloc(len ? len : 1);
        memcpy(e->bytes, b, len);
        e->len = len;
        c->by_type[type]++;
        fprintf(c->fp, "%s:%s\n", types[type], text);
}

static void add_hex(corpus_t *c, const uint8_t *b, size_t len)
{
        char text[512];
        ks_hex_encode(b, len, text);
        add(c, 0, text, b, len);
}

/** A random UTF-8 string of @p want bytes (1- to 4-byte sequences, no
 *  surrogates; never '\n' or '\r', which end a corpus line, nor NUL; other
 *  control characters are fine). */
static size_t random_utf8(uint64_t *st, uint8_t *out, size_t want)
{
        static const uint32_t ranges[][2] = {
            {0x01, 0x7f},     {0x80, 0x7ff},       {0x800, 0xd7ff},
            {0xe000, 0xffff}, {0x10000, 0x10ffff}, {0x20, 0x7e},
            {0xc0, 0x17f},
        };
        size_t n = 0, sz;

        while (n < want) {
                uint64_t        r  = ks_broker_rand(st);
                const uint32_t *rg = ranges[r % 7];
                uint32_t        cp =
                    rg[0] + (uint32_t)((r >> 8) % (rg[1] - rg[0] + 1));
                if (want - n < 4) /* finish with shorter sequences */
                        cp = want - n == 1 ? 0x41 + (uint32_t)(r >> 40) % 26
                                           : 0x80 + (uint32_t)(r >> 40) % 0x780;
                if (cp == '\n' || cp == '\r')
                        continue;
                sz = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
                if (n + sz > want)
                        continue;
                if (sz == 1) {
                        out[n++] = (uint8_t)cp;
                } else if (sz == 2) {
                        out[n++] = (uint8_t)(0xc0 | cp >> 6);
                        out[n++] = (uint8_t)(0x80 | (cp & 0x3f));
                } else if (sz == 3) {
                        out[n++] = (uint8_t)(0xe0 | cp >> 12);
                        out[n++] = (uint8_t)(0x80 | (cp >> 6 & 0x3f));
                        out[n++] = (uint8_t)(0x80 | (cp & 0x3f));
                } else {
                        out[n++] = (uint8_t)(0xf0 | cp >> 18);
                        out[n++] = (uint8_t)(0x80 | (cp >> 12 & 0x3f));
                        out[n++] = (uint8_t)(0x80 | (cp >> 6 & 0x3f));
                        out[n++] = (uint8_t)(0x80 | (cp & 0x3f));
                }
        }
        return n;
}

static void be_bytes(uint64_t v, int n, uint8_t *out)
{
        int i;
        for (i = 0; i < n; i++)
                out[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
}

static void make_corpus(corpus_t *c)
{
        uint64_t             st = 0x6b657973686966ull; /* "keyshif" */
        uint8_t              b[512];
        char                 text[600];
        size_t               len, i, j;
        static const int32_t i32_edges[] = {
            INT32_MIN, INT32_MIN + 1, -1,       0, 1, 127, 128, 255, 256, 65535,
            INT32_MAX, 211234567,     503642000};
        static const int64_t i64_edges[] = {
            INT64_MIN, INT64_MIN + 1, -1,           0,
            1,         INT64_MAX,     4294967295LL, 4294967296LL};

        /* Binary keys of every length 0..100: all-zero, all-0xff, 0x80
         * runs (sign bits: Java bytes are signed), then random. */
        for (len = 0; len <= 100; len++) {
                memset(b, 0x00, len);
                add_hex(c, b, len);
                if (!len)
                        continue;
                memset(b, 0xff, len);
                add_hex(c, b, len);
                memset(b, 0x80, len);
                add_hex(c, b, len);
                for (i = 0; i < HEX_PER_LEN; i++) {
                        for (j = 0; j < len; j++)
                                b[j] = (uint8_t)ks_broker_rand(&st);
                        add_hex(c, b, len);
                }
        }
        /* Strings: empty, ASCII, non-ASCII UTF-8 of 1-4 byte sequences. */
        add(c, 1, "", (const uint8_t *)"", 0);
        add(c, 1, "\xc3\xa6\xc3\xb8\xc3\xa5 \xe2\x9c\x93 \xf0\x9f\x9a\xa2",
            (const uint8_t *)"\xc3\xa6\xc3\xb8\xc3\xa5 \xe2\x9c\x93 "
                             "\xf0\x9f\x9a\xa2",
            15);
        for (i = 0; i < N_STRINGS; i++) {
                len = random_utf8(&st, b, i % 101); /* 0..100 bytes */
                memcpy(text, b, len);
                text[len] = '\0';
                add(c, 1, text, b, len);
        }
        /* int32 / int64: edges, then random; 4 / 8 bytes big-endian. */
        for (i = 0; i < N_INT32; i++) {
                int32_t v = i < sizeof(i32_edges) / sizeof(i32_edges[0])
                                ? i32_edges[i]
                                : (int32_t)(uint32_t)ks_broker_rand(&st);
                snprintf(text, sizeof(text), "%" PRId32, v);
                be_bytes((uint32_t)v, 4, b);
                add(c, 2, text, b, 4);
        }
        for (i = 0; i < N_INT64; i++) {
                int64_t v = i < sizeof(i64_edges) / sizeof(i64_edges[0])
                                ? i64_edges[i]
                                : (int64_t)ks_broker_rand(&st);
                snprintf(text, sizeof(text), "%" PRId64, v);
                be_bytes((uint64_t)v, 8, b);
                add(c, 3, text, b, 8);
        }
        /* UUIDs: the serializer writes the 36-character lower-case text,
         * whatever case the value was written in. */
        for (i = 0; i < N_UUID; i++) {
                uint64_t hi = ks_broker_rand(&st), lo = ks_broker_rand(&st);
                char     lower[40];
                snprintf(lower, sizeof(lower),
                         "%08" PRIx32 "-%04x-%04x-%04x-%012" PRIx64,
                         (uint32_t)(hi >> 32), (unsigned)(hi >> 16 & 0xffff),
                         (unsigned)(hi & 0xffff), (unsigned)(lo >> 48),
                         (uint64_t)(lo & 0xffffffffffffull));
                snprintf(text, sizeof(text), "%s", lower);
                if (i % 4 == 0)
                        for (j = 0; text[j]; j++)
                                if (text[j] >= 'a' && text[j] <= 'f')
                                        text[j] = (char)(text[j] - 32);
                add(c, 4, text, (const uint8_t *)lower, 36);
        }
}

static void test_java_agrees(void)
{
        const char *dir = ks_e2e_tmpdir("java-murmur2");
        char        in[600], out[600], args[1024], *line = NULL, *rest;
        char       *f[6 + N_COUNTS];
        size_t      nf;
        size_t      cap = 0, i, k = 0, n_lines = 0;
        corpus_t    c = {0};
        uint8_t     bytes[512];
        uint64_t    bytes_ok = 0, hash_ok = 0, pos_ok = 0, part_ok = 0,
                 part_cmp = 0, bad_keys = 0, shown = 0;
        double t0, t_java;
        int    n;
        FILE  *fp;

        snprintf(in, sizeof(in), "%s/corpus.txt", dir);
        snprintf(out, sizeof(out), "%s/java.tsv", dir);
        CU_ASSERT_PTR_NOT_NULL_FATAL(c.fp = fopen(in, "w"));
        make_corpus(&c);
        fclose(c.fp);

        n = snprintf(args, sizeof(args), "keys --counts ");
        for (i = 0; i < N_COUNTS; i++)
                n += snprintf(args + n, sizeof(args) - (size_t)n, "%s%d",
                              i ? "," : "", counts[i]);
        t0 = ks_broker_now_s();
        CU_ASSERT_EQUAL_FATAL(ks_broker_java(args, in, out), 0);
        t_java = ks_broker_now_s() - t0;

        CU_ASSERT_PTR_NOT_NULL_FATAL(fp = fopen(out, "r"));
        while (getline(&line, &cap, fp) > 0) {
                int32_t         jm, jpos;
                uint32_t        h;
                long            len;
                int             ok = 1;
                const expect_t *e;

                if (line[0] == '#')
                        continue;
                line[strcspn(line, "\n")] = '\0';
                n_lines++;
                if (k >= c.cnt) {
                        CU_FAIL("Java printed more keys than the corpus has");
                        break;
                }
                e = &c.e[k++];
                /* line, type, serializer, key_hex (empty for an empty
                 * key), murmur2, positive, then one partition per count */
                rest = line;
                for (nf = 0; nf < 6 + N_COUNTS && rest; nf++)
                        f[nf] = strsep(&rest, "\t");
                if (nf != 6 + N_COUNTS || rest || strcmp(f[1], e->type)) {
                        fprintf(stderr, "key %zu: unexpected line: %.200s\n", k,
                                line);
                        CU_FAIL("Java's output is out of step");
                        break;
                }
                len = ks_hex_decode(f[3], strlen(f[3]), bytes, sizeof(bytes));
                if (len < 0) {
                        CU_FAIL("bad key_hex from Java");
                        break;
                }
                if ((size_t)len == e->len && !memcmp(bytes, e->bytes, e->len))
                        bytes_ok++;
                else
                        ok = 0;
                jm   = (int32_t)strtol(f[4], NULL, 10);
                jpos = (int32_t)strtol(f[5], NULL, 10);
                hash_ok += (int32_t)ks_hash_murmur2(bytes, (size_t)len) == jm;
                ok &= (int32_t)ks_hash_murmur2(bytes, (size_t)len) == jm;
                h = ks_partitioner_hash(KS_PARTITIONER_MURMUR2, bytes,
                                        (size_t)len);
                pos_ok += (int32_t)h == jpos;
                ok &= (int32_t)h == jpos;
                for (i = 0; i < N_COUNTS; i++) {
                        part_cmp++;
                        if (atoi(f[6 + i]) == ks_partition_of(h, counts[i]))
                                part_ok++;
                        else
                                ok = 0;
                }
                if (!ok) {
                        bad_keys++;
                        if (shown++ < 5)
                                fprintf(stderr,
                                        "disagreement on corpus key %zu "
                                        "(%s, %ld bytes)\n",
                                        k, e->type, len);
                }
        }
        free(line);
        fclose(fp);

        CU_ASSERT_EQUAL(n_lines, c.cnt);
        CU_ASSERT_EQUAL(bytes_ok, c.cnt);
        CU_ASSERT_EQUAL(hash_ok, c.cnt);
        CU_ASSERT_EQUAL(pos_ok, c.cnt);
        CU_ASSERT_EQUAL(part_ok, part_cmp);
        CU_ASSERT_EQUAL(part_cmp, (uint64_t)c.cnt * N_COUNTS);
        CU_ASSERT_EQUAL(bad_keys, 0);

        ks_broker_summary(SUMMARY, "### Java kafka-clients vs keyshift's "
                                   "murmur2 model (no broker)");
        ks_broker_summary(SUMMARY, "%s", "");
        ks_broker_summary(SUMMARY,
                          "| keys | hex (len 0-100) / string / int32 / int64 / "
                          "uuid | counts | serializer bytes equal | murmur2 "
                          "equal | toPositive equal | partitions equal | "
                          "disagreeing keys | Java time |");
        ks_broker_summary(SUMMARY, "|---|---|---|---|---|---|---|---|---|");
        ks_broker_summary(
            SUMMARY,
            "| %zu | %zu / %zu / %zu / %zu / %zu | %zu (1..64, 100, 1000, "
            "1024, 9973, 100000) | %" PRIu64 " / %zu | %" PRIu64
            " / %zu | %" PRIu64 " / %zu | %" PRIu64 " / %" PRIu64 " | %" PRIu64
            " | %.1f s |",
            c.cnt, c.by_type[0], c.by_type[1], c.by_type[2], c.by_type[3],
            c.by_type[4], N_COUNTS, bytes_ok, c.cnt, hash_ok, c.cnt, pos_ok,
            c.cnt, part_ok, part_cmp, bad_keys, t_java);
        ks_broker_summary(SUMMARY, "%s", "");

        for (i = 0; i < c.cnt; i++)
                free(c.e[i].bytes);
        free(c.e);
        ks_broker_tmpdir_done(dir);
}

void ks_test_register(void)
{
        KS_ADD_SUITE(
            "java_murmur2",
            {"keyshift murmur2 == Java on a random corpus", test_java_agrees});
}
