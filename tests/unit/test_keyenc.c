/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_keyenc.c
 * @brief Proves core/model/ks_keyenc.c: the key encoding classifier and the
 *        logical values.
 *
 * Oracles, none of them derived from the code under test:
 *  1. tests/unit/data/java-keys.tsv: key bytes written by Apache Kafka's
 *     own serializers (kafka-clients 4.1.2 `StringSerializer`,
 *     `IntegerSerializer`, `LongSerializer`, `UUIDSerializer`), JSON
 *     strings from Python's `json.dumps()` (raw and \u-escaped), and
 *     Schema Registry framed Avro int/long/string keys encoded by
 *     github.com/hamba/avro. Each row states the encoding and logical value
 *     the rules of ks_keyenc.h give, by construction of the corpus and
 *     cross-checked there by an independent Python reading of the rules
 *     (tests/unit/data/make-java-fixture.sh regenerates it).
 *  2. Published vectors: the zigzag table and the string example of the
 *     Apache Avro 1.11 specification ("Binary Encoding"); UTF-8 boundary
 *     cases of The Unicode Standard §3.9 Table 3-7 and RFC 3629 §10.
 *  3. printf("%d") for every sampled int32/int64 value.
 *
 * The data folder is found next to this source file (__FILE__ is absolute
 * under CMake); KS_UNIT_DATA (env) overrides it.
 */
#include "ks_keyenc.h"
#include "ks_test.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FIELDS 96
#define MAX_KEY 512

/** @returns the path of tests/unit/data/@p name in a static buffer. */
/** A row of java-keys.tsv. */
typedef struct jrow {
        ks_keyenc_t   enc;
        char          logical[MAX_KEY]; /* "" when none */
        int           has_logical;
        char          type[16], serializer[32];
        unsigned char key[MAX_KEY];
        size_t        len;
} jrow_t;

#define MAX_ROWS 1024
static jrow_t jrows[MAX_ROWS];
static int    jrows_cnt, jrows_loaded;

/** Loads java-keys.tsv once. @returns 0, or -1 (with a CUnit failure). */
static int load_java(void)
{
        char  line[8192], *f[MAX_FIELDS];
        FILE *fp;

        if (jrows_loaded)
                return jrows_cnt ? 0 : -1;
        jrows_loaded = 1;
        fp           = fopen(ks_test_data_path("java-keys.tsv"), "r");
        if (!fp) {
                fprintf(stderr, "\n  cannot open %s\n",
                        ks_test_data_path("java-keys.tsv"));
                CU_FAIL_FATAL("java-keys.tsv missing");
                return -1;
        }
        while (fgets(line, sizeof(line), fp) && jrows_cnt < MAX_ROWS) {
                jrow_t *r = &jrows[jrows_cnt];
                long    n;

                if (line[0] == '#')
                        continue;
                if (ks_test_split_tabs(line, f, MAX_FIELDS) < 8) {
                        CU_FAIL("short fixture row");
                        continue;
                }
                CU_ASSERT_EQUAL_FATAL(ks_keyenc_from_name(f[0], &r->enc), 0);
                r->has_logical = strcmp(f[1], "-") != 0;
                if (r->has_logical) {
                        n = ks_test_unhex(f[1], (unsigned char *)r->logical,
                                          sizeof(r->logical) - 1);
                        CU_ASSERT_FATAL(n >= 0);
                        r->logical[n] = '\0';
                }
                snprintf(r->type, sizeof(r->type), "%s", f[3]);
                snprintf(r->serializer, sizeof(r->serializer), "%s", f[4]);
                n = ks_test_unhex(f[5], r->key, sizeof(r->key));
                CU_ASSERT_FATAL(n >= 0);
                r->len = (size_t)n;
                jrows_cnt++;
        }
        fclose(fp);
        CU_ASSERT_FATAL(jrows_cnt >= 500);
        return 0;
}

/* ------------------------------------------------------------------ */
/* Names                                                               */
/* ------------------------------------------------------------------ */

static void test_names(void)
{
        static const char *want[KS_KEYENC__CNT] = {
            "null",     "empty",       "decimal",
            "text",     "json_string", "int32_be",
            "int64_be", "uuid_binary", "schema_registry",
            "binary"};
        ks_keyenc_t e;
        int         i;

        for (i = 0; i < KS_KEYENC__CNT; i++) {
                CU_ASSERT_STRING_EQUAL(ks_keyenc_name((ks_keyenc_t)i), want[i]);
                CU_ASSERT_EQUAL(ks_keyenc_from_name(want[i], &e), 0);
                CU_ASSERT_EQUAL(e, (ks_keyenc_t)i);
        }
        CU_ASSERT_STRING_EQUAL(ks_keyenc_name(KS_KEYENC__CNT), "?");
        CU_ASSERT_STRING_EQUAL(ks_keyenc_name((ks_keyenc_t)-1), "?");
        CU_ASSERT_EQUAL(ks_keyenc_from_name("int32", &e), -1);
        CU_ASSERT_EQUAL(ks_keyenc_from_name(NULL, &e), -1);
}

/* ------------------------------------------------------------------ */
/* The Java fixture                                                    */
/* ------------------------------------------------------------------ */

/** Every row: classify, logical value (in a buffer of exactly
 *  KS_KEYENC_LOGICAL_SIZE, and one byte too small). */
static void test_java_fixture(void)
{
        int i, bad = 0;

        if (load_java())
                return;
        for (i = 0; i < jrows_cnt; i++) {
                const jrow_t *r   = &jrows[i];
                size_t        sz  = KS_KEYENC_LOGICAL_SIZE(r->len);
                char         *out = malloc(sz), small[MAX_KEY];
                ks_keyenc_t   e   = ks_keyenc_classify(r->key, r->len);
                int rc = ks_keyenc_logical(r->key, r->len, e, out, sz);
                int ok = e == r->enc && rc == (r->has_logical ? 0 : -1) &&
                         (!r->has_logical || !strcmp(out, r->logical));

                if (!ok && bad++ < 10)
                        fprintf(stderr,
                                "\n  row %d %s: got %s \"%s\" (rc %d), "
                                "want %s \"%s\"",
                                i + 1, r->type, ks_keyenc_name(e), out, rc,
                                ks_keyenc_name(r->enc), r->logical);
                CU_ASSERT(ok);
                if (r->has_logical) {
                        size_t n = strlen(r->logical);

                        CU_ASSERT(n < sz);
                        CU_ASSERT_EQUAL(
                            ks_keyenc_logical(r->key, r->len, e, small, n + 1),
                            0);
                        CU_ASSERT_EQUAL(
                            ks_keyenc_logical(r->key, r->len, e, small, n), -1);
                        CU_ASSERT_STRING_EQUAL(small, "");
                }
                free(out);
        }
}

/** @returns 1 if no text starts with byte @p b: a C0 control, a UTF-8
 *           continuation byte, or a byte UTF-8 never uses. */
static int never_text(unsigned char b)
{
        return b < 0x20 || (b >= 0x80 && b <= 0xc1) || b >= 0xf5;
}

/** What each Kafka serializer's output classifies as. */
static void test_java_serializers(void)
{
        int i, ints = 0, longs = 0, uuids = 0, json = 0, mmsi = 0;

        if (load_java())
                return;
        for (i = 0; i < jrows_cnt; i++) {
                const jrow_t *r = &jrows[i];
                ks_keyenc_t   e = ks_keyenc_classify(r->key, r->len);

                if (!strcmp(r->serializer, "UUIDSerializer")) {
                        /* The 36-char text form, not 16 raw bytes. */
                        CU_ASSERT_EQUAL(r->len, 36);
                        CU_ASSERT_EQUAL(e, KS_KEYENC_TEXT);
                        uuids++;
                } else if (!strcmp(r->serializer, "IntegerSerializer") &&
                           never_text(r->key[0])) {
                        CU_ASSERT_EQUAL(e, KS_KEYENC_INT32_BE);
                        ints++;
                } else if (!strcmp(r->serializer, "LongSerializer") &&
                           never_text(r->key[0])) {
                        CU_ASSERT_EQUAL(e, KS_KEYENC_INT64_BE);
                        longs++;
                } else if (!strcmp(r->type, "string") && r->len > 2 &&
                           r->key[0] == '"' && r->key[r->len - 1] == '"' &&
                           r->enc == KS_KEYENC_JSON_STRING) {
                        CU_ASSERT_EQUAL(e, KS_KEYENC_JSON_STRING);
                        json++;
                }
                if (!strcmp(r->serializer, "StringSerializer") && r->len == 9 &&
                    !memcmp(r->key, "211234567", 9)) {
                        CU_ASSERT_EQUAL(e, KS_KEYENC_DECIMAL);
                        mmsi++;
                }
        }
        CU_ASSERT(ints >= 30);
        CU_ASSERT(longs >= 60);
        CU_ASSERT(uuids >= 20);
        CU_ASSERT(json >= 100);
        CU_ASSERT_EQUAL(mmsi, 1);
}

/** @returns 1 if some row has logical value @p v and encoding @p e. */
static int group_has(const char *v, ks_keyenc_t e)
{
        int i;

        for (i = 0; i < jrows_cnt; i++)
                if (jrows[i].has_logical && jrows[i].enc == e &&
                    !strcmp(jrows[i].logical, v))
                        return 1;
        return 0;
}

/** The motivating cases: one entity, many byte forms, one logical key. */
static void test_java_groups(void)
{
        static const ks_keyenc_t number[] = {
            KS_KEYENC_DECIMAL, KS_KEYENC_JSON_STRING, KS_KEYENC_INT32_BE,
            KS_KEYENC_INT64_BE, KS_KEYENC_SCHEMA_REGISTRY};
        static const ks_keyenc_t uuid[] = {
            KS_KEYENC_TEXT, KS_KEYENC_JSON_STRING, KS_KEYENC_UUID_BINARY,
            KS_KEYENC_SCHEMA_REGISTRY};
        static const ks_keyenc_t str[] = {KS_KEYENC_TEXT, KS_KEYENC_JSON_STRING,
                                          KS_KEYENC_SCHEMA_REGISTRY};
        size_t                   i;
        int                      r, multi = 0;

        if (load_java())
                return;
        for (i = 0; i < sizeof(number) / sizeof(number[0]); i++) {
                CU_ASSERT(group_has("211234567", number[i]));
                CU_ASSERT(group_has("-2147483648", number[i]));
        }
        for (i = 0; i < sizeof(uuid) / sizeof(uuid[0]); i++)
                CU_ASSERT(
                    group_has("c232ab00-9414-11ec-b3c8-9f6bdeced846", uuid[i]));
        for (i = 0; i < sizeof(str) / sizeof(str[0]); i++) {
                CU_ASSERT(group_has("München", str[i]));
                CU_ASSERT(group_has("abc", str[i]));
        }
        /* Rows whose logical value has another row in another encoding. */
        for (r = 0; r < jrows_cnt; r++) {
                int j;

                for (j = 0; jrows[r].has_logical && j < jrows_cnt; j++) {
                        if (jrows[j].has_logical &&
                            jrows[j].enc != jrows[r].enc &&
                            !strcmp(jrows[j].logical, jrows[r].logical)) {
                                multi++;
                                break;
                        }
                }
        }
        CU_ASSERT(multi >= 500);
}

/* ------------------------------------------------------------------ */
/* Precedence rules, case by case                                      */
/* ------------------------------------------------------------------ */

/** Classifies @p n bytes of @p s. */
#define CLS(s, n) ks_keyenc_classify((s), (n))
#define CLSZ(s) ks_keyenc_classify((s), strlen(s))

static void test_rules_text(void)
{
        CU_ASSERT_EQUAL(CLS(NULL, 0), KS_KEYENC_NULL);
        CU_ASSERT_EQUAL(CLS(NULL, 5), KS_KEYENC_NULL);
        CU_ASSERT_EQUAL(CLS("", 0), KS_KEYENC_EMPTY);
        /* Rule 3: exactly Long.toString()'s output. */
        CU_ASSERT_EQUAL(CLSZ("0"), KS_KEYENC_DECIMAL);
        CU_ASSERT_EQUAL(CLSZ("-1"), KS_KEYENC_DECIMAL);
        CU_ASSERT_EQUAL(CLSZ("1234"), KS_KEYENC_DECIMAL);     /* not int32 */
        CU_ASSERT_EQUAL(CLSZ("12345678"), KS_KEYENC_DECIMAL); /* not int64 */
        CU_ASSERT_EQUAL(CLSZ("9223372036854775807"), KS_KEYENC_DECIMAL);
        CU_ASSERT_EQUAL(CLSZ("-9223372036854775808"), KS_KEYENC_DECIMAL);
        CU_ASSERT_EQUAL(CLSZ("9223372036854775808"), KS_KEYENC_TEXT);
        CU_ASSERT_EQUAL(CLSZ("-9223372036854775809"), KS_KEYENC_TEXT);
        CU_ASSERT_EQUAL(CLSZ("9999999999999999999"), KS_KEYENC_TEXT);
        CU_ASSERT_EQUAL(CLSZ("1000000000000000000"), KS_KEYENC_DECIMAL);
        CU_ASSERT_EQUAL(CLSZ("007"), KS_KEYENC_TEXT);
        CU_ASSERT_EQUAL(CLSZ("-0"), KS_KEYENC_TEXT);
        CU_ASSERT_EQUAL(CLSZ("+7"), KS_KEYENC_TEXT);
        CU_ASSERT_EQUAL(CLSZ("-"), KS_KEYENC_TEXT);
        CU_ASSERT_EQUAL(CLSZ("1 "), KS_KEYENC_TEXT);
        CU_ASSERT_EQUAL(CLSZ("ABCD"), KS_KEYENC_TEXT);     /* not int32 */
        CU_ASSERT_EQUAL(CLSZ("abcdefgh"), KS_KEYENC_TEXT); /* not int64 */
        CU_ASSERT_EQUAL(CLSZ("0123456789abcdef"), KS_KEYENC_TEXT); /* 16 */
        /* UTF-8 boundaries (Unicode Table 3-7, RFC 3629 §10). */
        CU_ASSERT_EQUAL(CLSZ("\xc2\xa0"), KS_KEYENC_TEXT);     /* NBSP */
        CU_ASSERT_EQUAL(CLSZ("\xef\xbf\xbf"), KS_KEYENC_TEXT); /* U+FFFF */
        CU_ASSERT_EQUAL(CLSZ("\xf4\x8f\xbf\xbf"), KS_KEYENC_TEXT);
        CU_ASSERT_EQUAL(CLSZ("\xed\x9f\xbf"), KS_KEYENC_TEXT); /* U+D7FF */
        CU_ASSERT_EQUAL(CLSZ("\xf0\x90\x80\x80"), KS_KEYENC_TEXT);
        CU_ASSERT_EQUAL(CLSZ("\xe0\xa0\x80"), KS_KEYENC_TEXT); /* U+0800 */
        CU_ASSERT_EQUAL(CLSZ("\xc2\x80"), KS_KEYENC_BINARY);   /* C1 */
        CU_ASSERT_EQUAL(CLSZ("\xc2\x9f"), KS_KEYENC_BINARY);
        CU_ASSERT_EQUAL(CLSZ("\xc0\x80"), KS_KEYENC_BINARY); /* overlong */
        CU_ASSERT_EQUAL(CLSZ("\xe0\x9f\xbf"), KS_KEYENC_BINARY);
        CU_ASSERT_EQUAL(CLSZ("\xed\xa0\x80"), KS_KEYENC_BINARY); /* D800 */
        CU_ASSERT_EQUAL(CLSZ("\xc3"), KS_KEYENC_BINARY);         /* truncated */
        CU_ASSERT_EQUAL(CLSZ("ab\xe2\x82"), KS_KEYENC_INT32_BE); /* 4 bytes */
        CU_ASSERT_EQUAL(CLSZ("abc\xe2\x82"), KS_KEYENC_BINARY);
        CU_ASSERT_EQUAL(CLSZ("\xf4\x90\x80\x80"), KS_KEYENC_INT32_BE);
        CU_ASSERT_EQUAL(CLSZ("\xf5\x80\x80\x80"), KS_KEYENC_INT32_BE);
        CU_ASSERT_EQUAL(CLSZ("a\x7f"), KS_KEYENC_BINARY); /* DEL */
        CU_ASSERT_EQUAL(CLSZ("a\tb"), KS_KEYENC_BINARY);
        CU_ASSERT_EQUAL(CLS("ab\0d", 4), KS_KEYENC_INT32_BE);
        CU_ASSERT_EQUAL(CLS("a\0", 2), KS_KEYENC_BINARY);
}

static void test_rules_json(void)
{
        CU_ASSERT_EQUAL(CLSZ("\"\""), KS_KEYENC_JSON_STRING);
        CU_ASSERT_EQUAL(CLSZ("\"abc\""), KS_KEYENC_JSON_STRING);
        CU_ASSERT_EQUAL(CLSZ("\"a\\\"b\""), KS_KEYENC_JSON_STRING);
        CU_ASSERT_EQUAL(CLSZ("\"\\\\\""), KS_KEYENC_JSON_STRING);
        CU_ASSERT_EQUAL(CLSZ("\"\\/\\b\\f\\n\\r\\t\""), KS_KEYENC_JSON_STRING);
        CU_ASSERT_EQUAL(CLSZ("\"\\u00e9\\u00E9\""), KS_KEYENC_JSON_STRING);
        CU_ASSERT_EQUAL(CLSZ("\"\\ud83d\\ude00\""), KS_KEYENC_JSON_STRING);
        CU_ASSERT_EQUAL(CLSZ("\"\\u0000\""), KS_KEYENC_JSON_STRING);
        CU_ASSERT_EQUAL(CLSZ("\""), KS_KEYENC_TEXT);
        CU_ASSERT_EQUAL(CLSZ("\"\\\""), KS_KEYENC_TEXT); /* "\" */
        CU_ASSERT_EQUAL(CLSZ("\"a\"b\""), KS_KEYENC_TEXT);
        CU_ASSERT_EQUAL(CLSZ("\"\\x\""), KS_KEYENC_TEXT);
        CU_ASSERT_EQUAL(CLSZ("\"\\u12\""), KS_KEYENC_TEXT);
        CU_ASSERT_EQUAL(CLSZ("\"\\u12g4\""), KS_KEYENC_TEXT);
        CU_ASSERT_EQUAL(CLSZ("\"\\ud83d\""), KS_KEYENC_TEXT);
        CU_ASSERT_EQUAL(CLSZ("\"\\ud83dx\""), KS_KEYENC_TEXT);
        CU_ASSERT_EQUAL(CLSZ("\"\\ud83d\\u0041\""), KS_KEYENC_TEXT);
        CU_ASSERT_EQUAL(CLSZ("\"\\ude00\""), KS_KEYENC_TEXT);
        CU_ASSERT_EQUAL(CLSZ("'abc'"), KS_KEYENC_TEXT);
        CU_ASSERT_EQUAL(CLSZ(" \"abc\""), KS_KEYENC_TEXT);
        CU_ASSERT_EQUAL(CLSZ("\"a\tb\""), KS_KEYENC_BINARY); /* raw tab */
}

static void test_rules_binary(void)
{
        static const unsigned char i32[]    = {0, 0, 0, 42};
        static const unsigned char i64[]    = {0, 0, 0, 0, 1, 0x0a, 0x0b, 0x0c};
        static const unsigned char sr6[]    = {0, 0, 0, 0, 1, 0x02};
        static const unsigned char sr5[]    = {0, 0, 0, 0, 1};
        static const unsigned char id0[]    = {0, 0, 0, 0, 0, 0x02};
        static const unsigned char idbig[]  = {0, 0x80, 0, 0, 0, 0x02};
        static const unsigned char idmax[]  = {0, 0x7f, 0xff, 0xff, 0xff, 2};
        static const unsigned char magic1[] = {1, 0, 0, 0, 1, 0x02};
        /* 16 bytes: an RFC 9562 v4 UUID that starts like id 1 ... */
        static const unsigned char u_rfc[] = {0,    0,    0,    0,    1, 0x4d,
                                              0x4a, 0xbc, 0x8d, 0xef, 1, 0x23,
                                              0x45, 0x67, 0x89, 0xab};
        /* ... the same without the variant bits ... */
        static const unsigned char u_norfc[] = {0,    0,    0,    0,    1, 0x4d,
                                                0x4a, 0xbc, 0x0d, 0xef, 1, 0x23,
                                                0x45, 0x67, 0x89, 0xab};
        /* ... and Avro "a\u00e9bcdefgh" (10 bytes): UUID bits and a value. */
        static const unsigned char u_avro[] = {0,   0,    0,    0,   7,   0x14,
                                               'a', 0xc3, 0xa9, 'b', 'c', 'd',
                                               'e', 'f',  'g',  'h'};
        static const unsigned char nil[17]  = {0};

        CU_ASSERT_EQUAL(CLS(i32, 4), KS_KEYENC_INT32_BE);
        CU_ASSERT_EQUAL(CLS(i64, 8), KS_KEYENC_INT64_BE); /* rule 5 */
        CU_ASSERT_EQUAL(ks_keyenc_schema_id(i64, 8), -1);
        CU_ASSERT_EQUAL(CLS(sr6, 6), KS_KEYENC_SCHEMA_REGISTRY);
        CU_ASSERT_EQUAL(ks_keyenc_schema_id(sr6, 6), 1);
        CU_ASSERT_EQUAL(CLS(sr5, 5), KS_KEYENC_BINARY);
        CU_ASSERT_EQUAL(CLS(id0, 6), KS_KEYENC_BINARY);
        CU_ASSERT_EQUAL(CLS(idbig, 6), KS_KEYENC_BINARY);
        CU_ASSERT_EQUAL(ks_keyenc_schema_id(idbig, 6), -1);
        CU_ASSERT_EQUAL(CLS(idmax, 6), KS_KEYENC_SCHEMA_REGISTRY);
        CU_ASSERT_EQUAL(ks_keyenc_schema_id(idmax, 6), INT32_MAX);
        CU_ASSERT_EQUAL(CLS(magic1, 6), KS_KEYENC_BINARY);
        CU_ASSERT_EQUAL(CLS(u_rfc, 16), KS_KEYENC_UUID_BINARY);
        CU_ASSERT_EQUAL(ks_keyenc_schema_id(u_rfc, 16), -1);
        CU_ASSERT_EQUAL(CLS(u_norfc, 16), KS_KEYENC_SCHEMA_REGISTRY);
        CU_ASSERT_EQUAL(CLS(u_avro, 16), KS_KEYENC_SCHEMA_REGISTRY);
        CU_ASSERT_EQUAL(ks_keyenc_schema_id(u_avro, 16), 7);
        CU_ASSERT_EQUAL(CLS(nil, 16), KS_KEYENC_UUID_BINARY);
        CU_ASSERT_EQUAL(CLS(nil, 15), KS_KEYENC_BINARY);
        CU_ASSERT_EQUAL(CLS(nil, 17), KS_KEYENC_BINARY);
        CU_ASSERT_EQUAL(CLS(nil, 1), KS_KEYENC_BINARY);
        CU_ASSERT_EQUAL(ks_keyenc_schema_id(NULL, 0), -1);
        CU_ASSERT_EQUAL(ks_keyenc_schema_id("abcdef", 6), -1);
}

/* ------------------------------------------------------------------ */
/* Logical values                                                      */
/* ------------------------------------------------------------------ */

/** @returns the logical value of @p n bytes (classified) or "<none>". */
static const char *lv(const void *k, size_t n)
{
        static char buf[256];

        if (ks_keyenc_logical(k, n, ks_keyenc_classify(k, n), buf,
                              sizeof(buf)) != 0)
                return "<none>";
        return buf;
}
#define LVZ(s) lv((s), strlen(s))

static void test_logical_text_json(void)
{
        CU_ASSERT_STRING_EQUAL(LVZ("211234567"), "211234567");
        CU_ASSERT_STRING_EQUAL(LVZ("\"211234567\""), "211234567");
        CU_ASSERT_STRING_EQUAL(LVZ("\"abc\""), "abc");
        CU_ASSERT_STRING_EQUAL(LVZ("abc"), "abc");
        CU_ASSERT_STRING_EQUAL(LVZ("\"\\u00e9\""), "\xc3\xa9");
        CU_ASSERT_STRING_EQUAL(LVZ("\"\\u0041\\u07ff\\u0800\\uffff\""),
                               "A\xdf\xbf\xe0\xa0\x80\xef\xbf\xbf");
        CU_ASSERT_STRING_EQUAL(LVZ("\"\\ud83d\\ude00\""), "\xf0\x9f\x98\x80");
        CU_ASSERT_STRING_EQUAL(LVZ("\"\\uDBFF\\uDFFF\""), "\xf4\x8f\xbf\xbf");
        CU_ASSERT_STRING_EQUAL(LVZ("\"a\\\"b\\\\c\\/\""), "a\"b\\c/");
        CU_ASSERT_STRING_EQUAL(LVZ("\"\\n\""), "\n");
        CU_ASSERT_STRING_EQUAL(LVZ("\"\""), "<none>");         /* empty */
        CU_ASSERT_STRING_EQUAL(LVZ("\"a\\u0000\""), "<none>"); /* NUL */
        CU_ASSERT_STRING_EQUAL(LVZ("007"), "007");
        CU_ASSERT_STRING_EQUAL(LVZ("a\tb"), "<none>");
        CU_ASSERT_STRING_EQUAL(lv(NULL, 0), "<none>");
        CU_ASSERT_STRING_EQUAL(lv("", 0), "<none>");
        /* UUID-shaped text is lower-cased; other text keeps its case. */
        CU_ASSERT_STRING_EQUAL(LVZ("123E4567-E89B-12D3-A456-426614174000"),
                               "123e4567-e89b-12d3-a456-426614174000");
        CU_ASSERT_STRING_EQUAL(LVZ("\"123E4567-E89B-12D3-A456-426614174000\""),
                               "123e4567-e89b-12d3-a456-426614174000");
        CU_ASSERT_STRING_EQUAL(LVZ("123E4567-E89B-12D3-A456-42661417400G"),
                               "123E4567-E89B-12D3-A456-42661417400G");
        CU_ASSERT_STRING_EQUAL(LVZ("123E4567E89B-12D3-A456-4266141740000"),
                               "123E4567E89B-12D3-A456-4266141740000");
        CU_ASSERT_STRING_EQUAL(LVZ("ABC"), "ABC");
}

static void test_logical_binary(void)
{
        static const unsigned char uuid[16] = {
            0x12, 0x3e, 0x45, 0x67, 0xe8, 0x9b, 0x12, 0xd3,
            0xa4, 0x56, 0x42, 0x66, 0x14, 0x17, 0x40, 0x00};
        static const unsigned char mmsi32[] = {0x0c, 0x97, 0x2f, 0x07};
        static const unsigned char mmsi64[] = {0, 0, 0, 0, 0x0c, 0x97, 0x2f, 7};
        static const unsigned char min32[]  = {0x80, 0, 0, 0};
        static const unsigned char m1_32[]  = {0xff, 0xff, 0xff, 0xff};
        static const unsigned char min64[]  = {0x80, 0, 0, 0, 0, 0, 0, 0};
        static const unsigned char max64[]  = {0x7f, 0xff, 0xff, 0xff,
                                               0xff, 0xff, 0xff, 0xff};
        static const unsigned char noise[]  = {0xff, 1, 2};
        char                       buf[64];

        CU_ASSERT_STRING_EQUAL(lv(uuid, 16),
                               "123e4567-e89b-12d3-a456-426614174000");
        CU_ASSERT_STRING_EQUAL(lv(mmsi32, 4), "211234567");
        CU_ASSERT_STRING_EQUAL(lv(mmsi64, 8), "211234567");
        CU_ASSERT_STRING_EQUAL(lv(min32, 4), "-2147483648");
        CU_ASSERT_STRING_EQUAL(lv(m1_32, 4), "-1");
        CU_ASSERT_STRING_EQUAL(lv(min64, 8), "-9223372036854775808");
        CU_ASSERT_STRING_EQUAL(lv(max64, 8), "9223372036854775807");
        CU_ASSERT_STRING_EQUAL(lv(noise, 3), "<none>");

        /* Reinterpretation: the int32 a 4-byte text key would be. */
        CU_ASSERT_EQUAL(
            ks_keyenc_logical("1234", 4, KS_KEYENC_INT32_BE, buf, sizeof(buf)),
            0);
        CU_ASSERT_STRING_EQUAL(buf, "825373492");
        CU_ASSERT_EQUAL(
            ks_keyenc_logical("123", 3, KS_KEYENC_INT32_BE, buf, sizeof(buf)),
            -1);
        CU_ASSERT_EQUAL(
            ks_keyenc_logical(mmsi32, 4, KS_KEYENC_INT64_BE, buf, sizeof(buf)),
            -1);
        CU_ASSERT_EQUAL(ks_keyenc_logical(uuid, 15, KS_KEYENC_UUID_BINARY, buf,
                                          sizeof(buf)),
                        -1);
        CU_ASSERT_EQUAL(
            ks_keyenc_logical(uuid, 16, KS_KEYENC_UUID_BINARY, buf, 36), -1);
        CU_ASSERT_EQUAL(
            ks_keyenc_logical(uuid, 16, KS_KEYENC_UUID_BINARY, buf, 37), 0);
        /* Text encodings re-check the bytes: a NUL or a control char is
         * never part of a logical text value. */
        CU_ASSERT_EQUAL(
            ks_keyenc_logical("a\0b", 3, KS_KEYENC_TEXT, buf, sizeof(buf)), -1);
        CU_ASSERT_EQUAL(
            ks_keyenc_logical(min32, 4, KS_KEYENC_TEXT, buf, sizeof(buf)), -1);
        CU_ASSERT_EQUAL(ks_keyenc_logical("abc", 3, KS_KEYENC_JSON_STRING, buf,
                                          sizeof(buf)),
                        -1);
        CU_ASSERT_EQUAL(
            ks_keyenc_logical("abc", 3, KS_KEYENC_BINARY, buf, sizeof(buf)),
            -1);
        CU_ASSERT_EQUAL(
            ks_keyenc_logical("abc", 3, KS_KEYENC__CNT, buf, sizeof(buf)), -1);
        CU_ASSERT_EQUAL(ks_keyenc_logical("abc", 3, KS_KEYENC_TEXT, NULL, 9),
                        -1);
        CU_ASSERT_EQUAL(ks_keyenc_logical("abc", 3, KS_KEYENC_TEXT, buf, 0),
                        -1);
        CU_ASSERT_EQUAL(ks_keyenc_logical("abc", 3, KS_KEYENC_TEXT, buf, 3),
                        -1);
        CU_ASSERT_STRING_EQUAL(buf, "");
}

/** Frames an Avro payload as a Schema Registry key (id 1) and returns its
 *  logical value. */
static const char *sr_lv(const char *payload, size_t n)
{
        unsigned char key[64] = {0, 0, 0, 0, 1};

        CU_ASSERT_FATAL(n + 5 != 8 && n + 5 <= sizeof(key)); /* rule 5 */
        memcpy(key + 5, payload, n);
        CU_ASSERT_EQUAL(ks_keyenc_classify(key, n + 5),
                        KS_KEYENC_SCHEMA_REGISTRY);
        return lv(key, n + 5);
}

/** Avro 1.11 spec, "Binary Encoding": the zigzag table and "foo". */
static void test_logical_avro(void)
{
        CU_ASSERT_STRING_EQUAL(sr_lv("\x00", 1), "0");
        CU_ASSERT_STRING_EQUAL(sr_lv("\x01", 1), "-1");
        CU_ASSERT_STRING_EQUAL(sr_lv("\x02", 1), "1");
        CU_ASSERT_STRING_EQUAL(sr_lv("\x03", 1), "-2");
        CU_ASSERT_STRING_EQUAL(sr_lv("\x04", 1), "2");
        CU_ASSERT_STRING_EQUAL(sr_lv("\x7f", 1), "-64");
        CU_ASSERT_STRING_EQUAL(sr_lv("\x80\x01", 2), "64");
        CU_ASSERT_STRING_EQUAL(sr_lv("\x06"
                                     "foo",
                                     4),
                               "foo");
        /* int64 extremes: 10-byte varints. */
        CU_ASSERT_STRING_EQUAL(
            sr_lv("\xfe\xff\xff\xff\xff\xff\xff\xff\xff\x01", 10),
            "9223372036854775807");
        CU_ASSERT_STRING_EQUAL(
            sr_lv("\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 10),
            "-9223372036854775808");
        /* Not one Avro value: > 64 bits, overlong, unterminated, short or
         * long string, string with a control char, negative length. */
        CU_ASSERT_STRING_EQUAL(
            sr_lv("\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 10), "<none>");
        CU_ASSERT_STRING_EQUAL(
            sr_lv("\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01", 12),
            "<none>");
        CU_ASSERT_STRING_EQUAL(sr_lv("\x80\x00", 2), "<none>");
        CU_ASSERT_STRING_EQUAL(sr_lv("\x80", 1), "<none>");
        CU_ASSERT_STRING_EQUAL(sr_lv("\x08"
                                     "foo",
                                     4),
                               "<none>");
        CU_ASSERT_STRING_EQUAL(sr_lv("\x06"
                                     "fooo",
                                     5),
                               "<none>");
        CU_ASSERT_STRING_EQUAL(sr_lv("\x06"
                                     "f\to",
                                     4),
                               "<none>");
        CU_ASSERT_STRING_EQUAL(sr_lv("\x05"
                                     "foo",
                                     4),
                               "<none>");
        CU_ASSERT_STRING_EQUAL(sr_lv("\x00\x08\x96\x01", 4), "<none>");
        /* An Avro uuid (a string) is lower-cased like the other forms. */
        CU_ASSERT_STRING_EQUAL(sr_lv("\x48"
                                     "123E4567-E89B-12D3-A456-426614174000",
                                     37),
                               "123e4567-e89b-12d3-a456-426614174000");
}

/* ------------------------------------------------------------------ */
/* Properties on random keys                                           */
/* ------------------------------------------------------------------ */

static uint64_t rng = 0x6b65796e63ULL;

/** @returns the next xorshift64* value. */
static uint64_t rnd(void)
{
        rng ^= rng >> 12;
        rng ^= rng << 25;
        rng ^= rng >> 27;
        return rng * 0x2545f4914f6cdd1dULL;
}

/** printf is the oracle for every int32/int64 logical value; no random
 *  key overflows KS_KEYENC_LOGICAL_SIZE or gets a value twice differently. */
static void test_random_properties(void)
{
        unsigned char key[128];
        char          out[KS_KEYENC_LOGICAL_SIZE(128)], want[32], again[200];
        int           i, ints = 0;

        for (i = 0; i < 200000; i++) {
                size_t      len = (size_t)(rnd() % 41), j;
                ks_keyenc_t e;
                int         rc;

                if (i % 4 == 0)
                        len = i % 8 ? 4 : 8;
                for (j = 0; j < len; j++) /* mostly low bytes: more text */
                        key[j] = (unsigned char)(rnd() % (i % 3 ? 256 : 128));
                e  = ks_keyenc_classify(key, len);
                rc = ks_keyenc_logical(key, len, e, out, sizeof(out));
                CU_ASSERT(e != KS_KEYENC_NULL);
                CU_ASSERT(rc == -1 ||
                          strlen(out) < KS_KEYENC_LOGICAL_SIZE(len));
                if (rc == 0) {
                        CU_ASSERT_EQUAL(ks_keyenc_logical(key, len, e, again,
                                                          sizeof(again)),
                                        0);
                        CU_ASSERT_STRING_EQUAL(out, again);
                }
                if (e == KS_KEYENC_INT32_BE || e == KS_KEYENC_INT64_BE) {
                        uint64_t u = 0;

                        for (j = 0; j < len; j++)
                                u = u << 8 | key[j];
                        if (len == 4)
                                snprintf(want, sizeof(want), "%" PRId32,
                                         (int32_t)(uint32_t)u);
                        else
                                snprintf(want, sizeof(want), "%" PRId64,
                                         (int64_t)u);
                        CU_ASSERT_EQUAL(rc, 0);
                        CU_ASSERT_STRING_EQUAL(out, want);
                        ints++;
                }
        }
        CU_ASSERT(ints > 10000);
}

/** @returns 1 if @p key (@p len bytes) is canonical decimal text of an
 *  int64 as rule 2 says (ks_keyenc.h): an optional '-', 1..19 ASCII digits,
 *  no leading zero but "0" itself, within int64's range; strtoll and
 *  snprintf are the oracle, byte by byte, not keyshift's code. */
static int oracle_decimal(const unsigned char *key, size_t len)
{
        char      text[32], back[32];
        long long v;
        size_t    i;

        if (len == 0 || len >= sizeof(text))
                return 0;
        for (i = 0; i < len; i++)
                if (!(key[i] >= '0' && key[i] <= '9') &&
                    !(i == 0 && key[i] == '-'))
                        return 0;
        memcpy(text, key, len);
        text[len] = '\0';
        errno     = 0;
        v         = strtoll(text, NULL, 10);
        if (errno)
                return 0;
        snprintf(back, sizeof(back), "%lld", v);
        return !strcmp(back, text) && strcmp(text, "-0");
}

/** Decimal keys are recognised a word at a time (ks_keyenc.c): every
 *  byte value at every position of digit strings of 1..24 bytes, and two
 *  bytes at once (a byte of 0xfa and up carries into the next one when
 *  the word is added to), against the rule's oracle. */
static void test_decimal_words(void)
{
        unsigned char key[24];
        size_t        len, pos, pos2;
        int           v, v2, decimal = 0;

        for (len = 1; len <= sizeof(key); len++) {
                for (pos = 0; pos < len; pos++)
                        key[pos] = (unsigned char)('1' + pos % 9);
                CU_ASSERT_EQUAL(ks_keyenc_classify(key, len) ==
                                    KS_KEYENC_DECIMAL,
                                oracle_decimal(key, len));
                for (pos = 0; pos < len; pos++) {
                        for (v = 0; v < 256; v++) {
                                unsigned char was = key[pos];
                                int           want;

                                key[pos] = (unsigned char)v;
                                want     = oracle_decimal(key, len);
                                decimal += want;
                                CU_ASSERT_EQUAL(ks_keyenc_classify(key, len) ==
                                                    KS_KEYENC_DECIMAL,
                                                want);
                                for (pos2 = pos + 1; v >= 0xf0 && pos2 < len;
                                     pos2++) {
                                        unsigned char was2 = key[pos2];
                                        for (v2 = 0; v2 < 256; v2++) {
                                                key[pos2] = (unsigned char)v2;
                                                CU_ASSERT_EQUAL(
                                                    ks_keyenc_classify(key,
                                                                       len) ==
                                                        KS_KEYENC_DECIMAL,
                                                    0);
                                        }
                                        key[pos2] = was2;
                                }
                                key[pos] = was;
                        }
                }
        }
        CU_ASSERT(decimal > 1000);
}

void ks_test_register(void)
{
        KS_ADD_SUITE(
            "keyenc", {"names", test_names},
            {"java fixture: class and logical value per row",
             test_java_fixture},
            {"java fixture: what each serializer writes",
             test_java_serializers},
            {"java fixture: one logical key per entity", test_java_groups},
            {"rules: null, empty, decimal, text, UTF-8", test_rules_text},
            {"rules: json_string", test_rules_json},
            {"rules: int32, int64, uuid, schema registry", test_rules_binary},
            {"logical: text and json", test_logical_text_json},
            {"logical: fixed-width and reinterpretation", test_logical_binary},
            {"logical: avro spec vectors", test_logical_avro},
            {"random keys: bounds and printf oracle", test_random_properties},
            {"decimal keys a word at a time: every byte, every position",
             test_decimal_words});
}
