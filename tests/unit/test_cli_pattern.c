/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_cli_pattern.c
 * @brief The schema patterns' hand-written loops (cli/ks_cli_pattern.c)
 *        give regexec()'s verdict, the oracle (glibc's POSIX extended
 *        regular expressions, compiled as the schema check compiles them,
 *        in the C locale the command runs in): on chosen edge cases (empty,
 *        '=' before, among and after the alphabet, one and two too many,
 *        non-ASCII bytes, a newline), on every string of up to 4
 *        characters over an alphabet of each pattern's boundary
 *        characters, and on random strings of up to 64 bytes.
 */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ks_cli_pattern.h"
#include "ks_test.h"

/** Every pattern of docs/keyshift.report.v2.schema.json with a loop. */
static const char *const with_loop[] = {
    "^[A-Za-z0-9+/]*={0,2}$", "^([0-9a-f][0-9a-f])*$",
    "^[0-9a-f]{16}$",         "^[0-9]+$",
    "^[1-9][0-9]*$",          "^([0-9]+|other)$",
    "^[A-Z][A-Z_0-9]*$",      NULL};

/** Characters at the classes' edges, and some outside every class. */
static const char alphabet[] = "AZaz09+/=_fgF1o\xc3\xa9\x80\xff\n -.th";

/** Mismatches seen (the first few printed). */
static size_t mismatches;

/** @brief Compares @p loop with regexec(@p re) on @p s. */
static void same(const char *text, const regex_t *re,
                 ks_cli_pattern_loop_t loop, const char *s)
{
        int want = !regexec(re, s, 0, NULL, 0);

        if (loop(s) == want)
                return;
        if (mismatches++ < 10)
                fprintf(stderr, "%s on \"%s\": loop %d, regexec %d\n", text, s,
                        !want, want);
}

/** @brief Every string of up to @p left more characters of alphabet[]
 *         after the @p len of @p buf. */
static void all_short(const char *text, const regex_t *re,
                      ks_cli_pattern_loop_t loop, char *buf, size_t len,
                      int left)
{
        size_t i;

        buf[len] = '\0';
        same(text, re, loop, buf);
        if (!left)
                return;
        for (i = 0; i < sizeof(alphabet) - 1; i++) {
                buf[len] = alphabet[i];
                all_short(text, re, loop, buf, len + 1, left - 1);
        }
}

/** @brief A pattern's loop against regexec() on every case. */
static void check_pattern(const char *text)
{
        static const char *const edges[] = {"",
                                            "=",
                                            "==",
                                            "===",
                                            "A",
                                            "A=",
                                            "A==",
                                            "A===",
                                            "=A",
                                            "A=A",
                                            "AB=C=",
                                            "QUJD",
                                            "QUJDRA==",
                                            "QUJDRA==\n",
                                            "\nQUJD",
                                            "QU JD",
                                            "QUJD\xc3\xa9",
                                            "\x80",
                                            "\xff==",
                                            "0",
                                            "00",
                                            "01",
                                            "10",
                                            "9",
                                            "0123456789abcdef",
                                            "0123456789abcde",
                                            "0123456789abcdef0",
                                            "0123456789abcdeF",
                                            "0123456789abcdeg",
                                            "deadbeef",
                                            "deadbee",
                                            "other",
                                            "othe",
                                            "others",
                                            "0other",
                                            "OTHER",
                                            "A_B9",
                                            "_A",
                                            "a",
                                            "REPORT_TOPIC_FAILED",
                                            "Report",
                                            NULL};
        regex_t                  re;
        ks_cli_pattern_loop_t    loop = ks_cli_pattern_loop(text);
        char                     buf[80];
        size_t                   i, j;
        unsigned                 seed = 42;

        CU_ASSERT_PTR_NOT_NULL_FATAL(loop);
        CU_ASSERT_EQUAL_FATAL(regcomp(&re, text, REG_EXTENDED | REG_NOSUB), 0);
        for (i = 0; edges[i]; i++)
                same(text, &re, loop, edges[i]);
        all_short(text, &re, loop, buf, 0, 4);
        for (i = 0; i < 200000; i++) {
                size_t n = (size_t)(rand_r(&seed) % 65);
                for (j = 0; j < n; j++) {
                        int r = rand_r(&seed);
                        /* mostly the pattern's own characters */
                        buf[j] = r % 8 ? alphabet[(unsigned)(r >> 4) %
                                                  (sizeof(alphabet) - 1)]
                                       : (char)(1 + (unsigned)(r >> 4) % 255);
                }
                buf[n] = '\0';
                same(text, &re, loop, buf);
        }
        regfree(&re);
}

static void test_loops_equal_regexec(void)
{
        size_t i;

        mismatches = 0;
        for (i = 0; with_loop[i]; i++)
                check_pattern(with_loop[i]);
        CU_ASSERT_EQUAL(mismatches, 0);
}

/* The base64 pattern on real packed text: long strings, all padding
 * forms. */
static void test_base64_long(void)
{
        const ks_cli_pattern_t *p = ks_cli_pattern_of("^[A-Za-z0-9+/]*={0,2}$");
        static char             s[70000];
        size_t                  n = sizeof(s) - 4, i;

        CU_ASSERT_PTR_NOT_NULL_FATAL(p);
        for (i = 0; i < n; i++)
                s[i] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                       "0123456789+/"[i % 64];
        s[n] = '\0';
        CU_ASSERT(ks_cli_pattern_match(p, s));
        strcpy(s + n, "==");
        CU_ASSERT(ks_cli_pattern_match(p, s));
        strcpy(s + n, "===");
        CU_ASSERT(!ks_cli_pattern_match(p, s));
        s[n]     = '\0';
        s[n / 2] = '=';
        CU_ASSERT(!ks_cli_pattern_match(p, s));
        s[n / 2] = '-'; /* base64url's, not RFC 4648 section 4's */
        CU_ASSERT(!ks_cli_pattern_match(p, s));
}

/* Compiled once per text; a pattern without a loop is regexec()'s; one
 * that does not compile is refused. */
static void test_kept(void)
{
        const char *ts =
            "^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T("
            "[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]([.][0-9]+)?Z$";
        char                    copy[200];
        const ks_cli_pattern_t *p = ks_cli_pattern_of(ts);

        snprintf(copy, sizeof(copy), "%s", ts);
        CU_ASSERT_PTR_NOT_NULL_FATAL(p);
        CU_ASSERT_PTR_EQUAL(ks_cli_pattern_of(copy), p);
        CU_ASSERT_PTR_NULL(ks_cli_pattern_loop(ts));
        CU_ASSERT(ks_cli_pattern_match(p, "2026-12-03T16:10:00.123Z"));
        CU_ASSERT(!ks_cli_pattern_match(p, "2026-13-03T16:10:00.123Z"));
        CU_ASSERT_PTR_NULL(ks_cli_pattern_of("(["));
}

void ks_test_register(void)
{
        KS_ADD_SUITE(
            "schema patterns: hand-written loops",
            {"each loop gives regexec()'s verdict", test_loops_equal_regexec},
            {"base64 over long packed text", test_base64_long},
            {"compiled once, regexec() without a loop", test_kept});
}
