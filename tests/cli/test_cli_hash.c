/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_cli_hash.c
 * @brief `keyshift hash`, run as a user runs it, against oracles that owe
 *        nothing to keyshift's code:
 *  - librdkafka's own rd_kafka_msg_partitioner_*() functions, called here
 *    on the same key bytes, for every hashing partitioner and for the
 *    librdkafka_default model, at counts 1..64, 100, 1000 (agreement at
 *    every count 1..64 pins the full 32-bit hash: lcm(1..64) > 2^32);
 *  - tests/unit/data/java-keys.tsv, the bytes Apache Kafka 4.1.2's own
 *    serializers write and the partition its Java producer gives them:
 *    the `java` model and the murmur2_random partitioner must agree at
 *    every count of the fixture, and `--key-format int32/int64` must
 *    write exactly IntegerSerializer's and LongSerializer's bytes;
 *  - the command line contract: --help, exit code 2 and a message naming
 *    the option for bad partitioners, counts and keys.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <librdkafka/rdkafka.h>

#include "cli_test_support.h"
#include "ks_test.h"

typedef int32_t(rdk_fn)(const rd_kafka_topic_t *, const void *, size_t, int32_t,
                        void *, void *);

static const struct {
        const char *name;
        rdk_fn     *fn;
        int         empty_hashed; /* the empty key takes the hash path */
} partitioners[] = {
    {"consistent", rd_kafka_msg_partitioner_consistent, 1},
    {"consistent_random", rd_kafka_msg_partitioner_consistent_random, 0},
    {"murmur2", rd_kafka_msg_partitioner_murmur2, 1},
    {"murmur2_random", rd_kafka_msg_partitioner_murmur2_random, 1},
    {"fnv1a", rd_kafka_msg_partitioner_fnv1a, 1},
    {"fnv1a_random", rd_kafka_msg_partitioner_fnv1a_random, 1},
};

#define KEYS 150
#define MAXLEN 40

static int32_t counts[66];
static int     counts_cnt;
static char    counts_arg[512];

static uint64_t rng = 0x6b657973686966ULL;

static uint64_t rng_next(void)
{
        uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);
        z          = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z          = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
}

static void init_counts(void)
{
        int i, o = 0;

        if (counts_cnt)
                return;
        for (i = 1; i <= 64; i++)
                counts[counts_cnt++] = i;
        counts[counts_cnt++] = 100;
        counts[counts_cnt++] = 1000;
        for (i = 0; i < counts_cnt; i++)
                o += snprintf(counts_arg + o, sizeof(counts_arg) - (size_t)o,
                              "%s%d", i ? "," : "", (int)counts[i]);
}

static int unhex(const char *h, unsigned char *out)
{
        int      n = 0;
        unsigned v;

        while (h[0] && h[1] && sscanf(h, "%2x", &v) == 1) {
                out[n++] = (unsigned char)v;
                h += 2;
        }
        return n;
}

/** @returns the partition in obj[count] (-1 for null or absent). */
static int part_at(json_t *obj, int32_t count)
{
        char    name[16];
        json_t *p;

        snprintf(name, sizeof(name), "%d", (int)count);
        p = json_object_get(obj, name);
        return json_is_integer(p) ? (int)json_integer_value(p) : -1;
}

/** Random keys (binary, text, the empty key) against librdkafka. */
static void test_hash_vs_librdkafka(void)
{
        char          hex[KEYS][2 * MAXLEN + 1];
        unsigned char key[KEYS][MAXLEN];
        size_t        len[KEYS];
        char         *args = malloc(KEYS * (2 * MAXLEN + 4) + 1024);
        size_t        p, k, c, o;
        unsigned long checked = 0;
        ks_clit_run_t r;

        init_counts();
        for (k = 0; k < KEYS; k++) {
                len[k] = k == 0 ? 0 : 1 + rng_next() % MAXLEN;
                for (c = 0; c < len[k]; c++)
                        key[k][c] =
                            k % 2 ? (unsigned char)(0x20 + rng_next() % 95)
                                  : (unsigned char)rng_next();
                for (c = 0; c < len[k]; c++)
                        sprintf(hex[k] + 2 * c, "%02x", key[k][c]);
                hex[k][2 * len[k]] = '\0';
        }
        for (p = 0; p < sizeof(partitioners) / sizeof(partitioners[0]); p++) {
                json_t *arr;
                o = (size_t)sprintf(args, "hash --json -f hex -p %s -n %s",
                                    partitioners[p].name, counts_arg);
                for (k = 0; k < KEYS; k++)
                        o += (size_t)sprintf(args + o, " '%s'", hex[k]);
                CU_ASSERT_EQUAL_FATAL(ks_clit_run(&r, "%s", args), 0);
                arr = json_loads(r.out, 0, NULL);
                CU_ASSERT_FATAL(json_is_array(arr));
                CU_ASSERT_EQUAL(json_array_size(arr), KEYS);
                for (k = 0; k < json_array_size(arr); k++) {
                        json_t *o1    = json_array_get(arr, k);
                        json_t *parts = json_object_get(o1, "partitions");
                        json_t *m     = json_object_get(o1, "models");
                        CU_ASSERT_PTR_NOT_NULL_FATAL(
                            json_string_value(json_object_get(o1, "key_hex")));
                        CU_ASSERT_STRING_EQUAL(
                            json_string_value(json_object_get(o1, "key_hex")),
                            hex[k]);
                        if (!len[k] && !partitioners[p].empty_hashed) {
                                /* consistent_random spreads the empty key */
                                CU_ASSERT_STRING_NOT_EQUAL(
                                    json_string_value(
                                        json_object_get(o1, "placement")),
                                    "hashed");
                                CU_ASSERT_EQUAL(part_at(parts, 6), -1);
                                continue;
                        }
                        for (c = 0; c < (size_t)counts_cnt; c++) {
                                int32_t want =
                                    partitioners[p].fn(NULL, key[k], len[k],
                                                       counts[c], NULL, NULL);
                                if (part_at(parts, counts[c]) != want)
                                        printf(
                                            "\n      %s key %s at %d: cli %d, "
                                            "librdkafka %d",
                                            partitioners[p].name, hex[k],
                                            (int)counts[c],
                                            part_at(parts, counts[c]),
                                            (int)want);
                                CU_ASSERT_EQUAL(part_at(parts, counts[c]),
                                                want);
                                checked++;
                                if (!len[k])
                                        continue;
                                /* the models, on the non-empty keys */
                                CU_ASSERT_EQUAL(
                                    part_at(json_object_get(
                                                m, "librdkafka_default"),
                                            counts[c]),
                                    rd_kafka_msg_partitioner_consistent_random(
                                        NULL, key[k], len[k], counts[c], NULL,
                                        NULL));
                                CU_ASSERT_EQUAL(
                                    part_at(json_object_get(m, "java"),
                                            counts[c]),
                                    rd_kafka_msg_partitioner_murmur2(
                                        NULL, key[k], len[k], counts[c], NULL,
                                        NULL));
                                CU_ASSERT_EQUAL(
                                    part_at(json_object_get(m, "sarama"),
                                            counts[c]),
                                    rd_kafka_msg_partitioner_fnv1a(
                                        NULL, key[k], len[k], counts[c], NULL,
                                        NULL));
                        }
                }
                json_decref(arr);
                ks_clit_run_free(&r);
        }
        printf("\n      %lu partitions checked against librdkafka\n", checked);
        CU_ASSERT(checked > 50000);
        free(args);
}

/** One row of java-keys.tsv. */
typedef struct jrow {
        char enc[24];
        char type[16];
        char key_hex[600];
        char logical_hex[600];
        int  part[32];
} jrow_t;

/** @returns the rows of the fixture (malloc'ed), their count in *n, the
 *           counts of its n= columns in cnt[] / *cnt_n. */
static jrow_t *load_java(size_t *n, int32_t *cnt, int *cnt_n)
{
        char    path[4096], line[8192];
        FILE   *fp;
        jrow_t *rows     = calloc(2048, sizeof(*rows));
        int     col_type = -1, col_hex = -1, col_first_n = -1, i;

        snprintf(path, sizeof(path), "%s/tests/unit/data/java-keys.tsv",
                 getenv("KS_SOURCE_DIR") ? getenv("KS_SOURCE_DIR")
                                         : KS_SOURCE_DIR);
        *n     = 0;
        *cnt_n = 0;
        if (!(fp = fopen(path, "r"))) {
                CU_FAIL("tests/unit/data/java-keys.tsv missing");
                return rows;
        }
        while (fgets(line, sizeof(line), fp) && *n < 2048) {
                char *save                = NULL, *tok, *rest;
                line[strcspn(line, "\n")] = '\0';
                if (!strncmp(line, "#enc\t", 5)) { /* the header */
                        for (i = 0, tok = strtok_r(line + 1, "\t", &save); tok;
                             tok = strtok_r(NULL, "\t", &save), i++) {
                                if (!strcmp(tok, "type"))
                                        col_type = i;
                                else if (!strcmp(tok, "key_hex"))
                                        col_hex = i;
                                else if (!strncmp(tok, "n=", 2)) {
                                        if (col_first_n < 0)
                                                col_first_n = i;
                                        cnt[(*cnt_n)++] = atoi(tok + 2);
                                }
                        }
                        continue;
                }
                if (line[0] == '#' || !line[0] || col_hex < 0)
                        continue;
                /* strsep, not strtok: the empty key's key_hex is an
                 * empty field */
                for (i = 0, rest = line; (tok = strsep(&rest, "\t")); i++) {
                        jrow_t *r = &rows[*n];
                        if (i == 0)
                                snprintf(r->enc, sizeof(r->enc), "%s", tok);
                        if (i == 1)
                                snprintf(r->logical_hex, sizeof(r->logical_hex),
                                         "%s", tok);
                        if (i == col_type)
                                snprintf(r->type, sizeof(r->type), "%s", tok);
                        if (i == col_hex)
                                snprintf(r->key_hex, sizeof(r->key_hex), "%s",
                                         strcmp(tok, "-") ? tok : "");
                        if (i >= col_first_n && i - col_first_n < *cnt_n)
                                r->part[i - col_first_n] = atoi(tok);
                }
                (*n)++;
        }
        fclose(fp);
        return rows;
}

/** The Java fixture: every row's bytes, java model and murmur2_random. */
static void test_hash_vs_java_fixture(void)
{
        int32_t cnt[32];
        int     cnt_n, c, o;
        size_t  n, i, batch, checked = 0;
        char    cargs[512];
        jrow_t *rows = load_java(&n, cnt, &cnt_n);
        char   *args = malloc(64 * 700 + 1024);

        CU_ASSERT_FATAL(n > 100 && cnt_n > 10);
        for (o = 0, c = 0; c < cnt_n; c++)
                o += snprintf(cargs + o, sizeof(cargs) - (size_t)o, "%s%d",
                              c ? "," : "", (int)cnt[c]);
        for (i = 0; i < n; i += batch) {
                ks_clit_run_t r;
                json_t       *arr;
                size_t        k;
                batch = n - i < 64 ? n - i : 64;
                o     = sprintf(args,
                                "hash --json -f hex -p murmur2_random "
                                    "-n %s",
                                cargs);
                for (k = 0; k < batch; k++)
                        o += sprintf(args + o, " '%s'", rows[i + k].key_hex);
                CU_ASSERT_EQUAL_FATAL(ks_clit_run(&r, "%s", args), 0);
                arr = json_loads(r.out, 0, NULL);
                if (batch == 1) { /* one key: an object, not an array */
                        json_t *a = json_array();
                        json_array_append_new(a, arr);
                        arr = a;
                }
                CU_ASSERT_EQUAL_FATAL(json_array_size(arr), batch);
                for (k = 0; k < batch; k++) {
                        json_t *o1   = json_array_get(arr, k);
                        json_t *java = json_object_get(
                            json_object_get(o1, "models"), "java");
                        for (c = 0; c < cnt_n; c++) {
                                CU_ASSERT_EQUAL(part_at(java, cnt[c]),
                                                rows[i + k].part[c]);
                                CU_ASSERT_EQUAL(
                                    part_at(json_object_get(o1, "partitions"),
                                            cnt[c]),
                                    rows[i + k].part[c]);
                                checked++;
                        }
                }
                json_decref(arr);
                ks_clit_run_free(&r);
        }
        printf("\n      %zu partitions of %zu Java rows agree\n", checked, n);
        free(args);
        free(rows);
}

/** --key-format int32/int64 writes IntegerSerializer's/LongSerializer's
 *  bytes: the fixture's key_hex for its int32/int64 rows. */
static void test_hash_int_formats(void)
{
        int32_t cnt[32];
        int     cnt_n;
        size_t  n, i, tested = 0;
        jrow_t *rows = load_java(&n, cnt, &cnt_n);

        for (i = 0; i < n && tested < 40; i++) {
                unsigned char lv[300];
                char          dec[300];
                int           l;
                ks_clit_run_t r;
                json_t       *o;
                /* rows whose bytes are the serializer's int (not the few
                 * int32 values whose bytes read as text) */
                if (strcmp(rows[i].enc, "int32_be") &&
                    strcmp(rows[i].enc, "int64_be"))
                        continue;
                l = unhex(rows[i].logical_hex, lv);
                snprintf(dec, sizeof(dec), "%.*s", l, (char *)lv);
                CU_ASSERT_EQUAL(
                    ks_clit_run(&r, "hash --json -f %s -n %d -- '%s'",
                                rows[i].type, (int)cnt[cnt_n - 1], dec),
                    0);
                o = json_loads(r.out, 0, NULL);
                CU_ASSERT_PTR_NOT_NULL_FATAL(
                    json_string_value(json_object_get(o, "key_hex")));
                CU_ASSERT_STRING_EQUAL(
                    json_string_value(json_object_get(o, "key_hex")),
                    rows[i].key_hex);
                CU_ASSERT_EQUAL(
                    part_at(
                        json_object_get(json_object_get(o, "models"), "java"),
                        cnt[cnt_n - 1]),
                    rows[i].part[cnt_n - 1]);
                json_decref(o);
                ks_clit_run_free(&r);
                tested++;
        }
        CU_ASSERT(tested >= 10);
        free(rows);
}

static void test_hash_text_and_usage(void)
{
        ks_clit_run_t r;

        CU_ASSERT_EQUAL(ks_clit_run(&r, "hash 211234567"), 0);
        /* CRC-32("211234567") = 0x62c619f8: partition 2 of 6, 8 of 12 */
        CU_ASSERT(ks_clit_has(r.out, "0x62c619f8"));
        CU_ASSERT(ks_clit_has(r.out, "consistent_random"));
        CU_ASSERT(ks_clit_has(r.out, "model java"));
        ks_clit_run_free(&r);

        CU_ASSERT_EQUAL(ks_clit_run(&r, "hash --help"), 0);
        CU_ASSERT(ks_clit_has(r.out, "Usage: keyshift hash"));
        ks_clit_run_free(&r);

        CU_ASSERT_EQUAL(ks_clit_run(&r, "hash -p nosuch x"), 2);
        CU_ASSERT(ks_clit_has(r.err, "--partitioner"));
        ks_clit_run_free(&r);
        CU_ASSERT_EQUAL(ks_clit_run(&r, "hash -n 0,12 x"), 2);
        CU_ASSERT(ks_clit_has(r.err, "--partitions"));
        ks_clit_run_free(&r);
        /* empty counts, refused as keyshift.partitions.proposed refuses
         * them */
        CU_ASSERT_EQUAL(ks_clit_run(&r, "hash -n 6,,12 x"), 2);
        CU_ASSERT(ks_clit_has(r.err, "--partitions"));
        ks_clit_run_free(&r);
        CU_ASSERT_EQUAL(ks_clit_run(&r, "hash -n 6, x"), 2);
        ks_clit_run_free(&r);
        CU_ASSERT_EQUAL(ks_clit_run(&r, "hash -f hex abc"), 2);
        CU_ASSERT(ks_clit_has(r.err, "hex key"));
        ks_clit_run_free(&r);
        CU_ASSERT_EQUAL(ks_clit_run(&r, "hash -f int32 3000000000"), 2);
        CU_ASSERT(ks_clit_has(r.err, "int32"));
        ks_clit_run_free(&r);
        CU_ASSERT_EQUAL(ks_clit_run(&r, "hash -f float 1"), 2);
        ks_clit_run_free(&r);
        CU_ASSERT_EQUAL(ks_clit_run(&r, "hash"), 2);
        CU_ASSERT(ks_clit_has(r.err, "no KEY"));
        ks_clit_run_free(&r);
        CU_ASSERT_EQUAL(ks_clit_run(&r, "nosuchcommand"), 2);
        ks_clit_run_free(&r);
        CU_ASSERT_EQUAL(ks_clit_run(&r, "--help"), 0);
        CU_ASSERT(ks_clit_has(r.out, "merge"));
        ks_clit_run_free(&r);
}

void ks_test_register(void)
{
        KS_ADD_SUITE(
            "cli hash",
            {"agrees with librdkafka's partitioner functions",
             test_hash_vs_librdkafka},
            {"agrees with Java kafka-clients (fixture)",
             test_hash_vs_java_fixture},
            {"int32/int64 are Java's serializer bytes", test_hash_int_formats},
            {"text output and usage errors", test_hash_text_and_usage});
}
