/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli_pattern.c
 * @brief The schema's patterns compiled once, the hot ones matched by
 *        hand-written loops (ks_cli_pattern.h).
 *
 * Each loop reads an anchored pattern (`^...$`) as what it is: a sequence
 * of character classes with counts, over the string up to its NUL (where
 * regexec() stops too). In the C locale a bracket expression's range is
 * a range of byte values, so `[A-Za-z0-9+/]` is exactly the 64 bytes
 * below, and no byte of 0x80 or above is in any class here.
 */
#include "ks_cli_pattern.h"

#include <pthread.h>
#include <regex.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct ks_cli_pattern {
        char                 *text;
        regex_t               re;
        ks_cli_pattern_loop_t loop;
};

#define KS_PATTERNS_MAX 32

/** Kept patterns: entries below kept_cnt are complete and never change
 *  (published with release, read with acquire); added under kept_lock. */
static struct ks_cli_pattern kept[KS_PATTERNS_MAX];
static atomic_size_t         kept_cnt;
static pthread_mutex_t       kept_lock = PTHREAD_MUTEX_INITIALIZER;

static int is_digit(unsigned char c)
{
        return c >= '0' && c <= '9';
}

static int is_hex_lower(unsigned char c)
{
        return is_digit(c) || (c >= 'a' && c <= 'f');
}

static int is_upper(unsigned char c)
{
        return c >= 'A' && c <= 'Z';
}

/** @returns 1 for the 64 characters of RFC 4648's base64 alphabet: a
 *           bit set of the 256 bytes, 4 words of 64 ('+' 43, '/' 47, '0'
 *           to '9' 48-57; 'A' to 'Z' 65-90, 'a' to 'z' 97-122): a branch
 *           per class was 4 % of keyshift fleet. */
static int is_base64(unsigned char c)
{
        static const uint64_t set[4] = {0x03ff880000000000ull,
                                        0x07fffffe07fffffeull, 0, 0};

        return (int)(set[c >> 6] >> (c & 63) & 1);
}

/** `^[A-Za-z0-9+/]*={0,2}$`: alphabet characters, then at most two '='
 *  ('=' is not of the alphabet, so the split is the first non-alphabet
 *  character), then the end. */
static int loop_base64(const char *s)
{
        const unsigned char *p = (const unsigned char *)s;

        while (is_base64(*p))
                p++;
        if (*p == '=')
                p++;
        if (*p == '=')
                p++;
        return !*p;
}

/** `^([0-9a-f][0-9a-f])*$`: lower-case hex digits, an even number. */
static int loop_hex_pairs(const char *s)
{
        const unsigned char *p = (const unsigned char *)s;

        while (is_hex_lower(*p))
                p++;
        return !*p && (p - (const unsigned char *)s) % 2 == 0;
}

/** `^[0-9a-f]{16}$`: exactly 16 lower-case hex digits. */
static int loop_hash64(const char *s)
{
        const unsigned char *p = (const unsigned char *)s;

        while (is_hex_lower(*p))
                p++;
        return !*p && p - (const unsigned char *)s == 16;
}

/** `^[0-9]+$`: one decimal digit or more. */
static int loop_digits(const char *s)
{
        const unsigned char *p = (const unsigned char *)s;

        while (is_digit(*p))
                p++;
        return !*p && p != (const unsigned char *)s;
}

/** `^[1-9][0-9]*$`: a decimal number without leading zero. */
static int loop_count_name(const char *s)
{
        return *s >= '1' && *s <= '9' && (!s[1] || loop_digits(s + 1));
}

/** `^([0-9]+|other)$`: digits, or the word "other". */
static int loop_digits_or_other(const char *s)
{
        return loop_digits(s) || !strcmp(s, "other");
}

/** `^[A-Z][A-Z_0-9]*$`: a warning code. */
static int loop_code(const char *s)
{
        const unsigned char *p = (const unsigned char *)s;

        if (!is_upper(*p))
                return 0;
        for (p++; is_upper(*p) || *p == '_' || is_digit(*p); p++)
                ;
        return !*p;
}

/** The patterns with a loop, by their exact text. */
static const struct {
        const char           *text;
        ks_cli_pattern_loop_t loop;
} loops[] = {
    {"^[A-Za-z0-9+/]*={0,2}$", loop_base64},
    {"^([0-9a-f][0-9a-f])*$", loop_hex_pairs},
    {"^[0-9a-f]{16}$", loop_hash64},
    {"^[0-9]+$", loop_digits},
    {"^[1-9][0-9]*$", loop_count_name},
    {"^([0-9]+|other)$", loop_digits_or_other},
    {"^[A-Z][A-Z_0-9]*$", loop_code},
};

ks_cli_pattern_loop_t ks_cli_pattern_loop(const char *text)
{
        size_t i;

        for (i = 0; i < sizeof(loops) / sizeof(loops[0]); i++)
                if (!strcmp(loops[i].text, text))
                        return loops[i].loop;
        return NULL;
}

/** @returns the kept pattern of @p text among the first @p n, or NULL. */
static const ks_cli_pattern_t *find(const char *text, size_t n)
{
        size_t i;

        for (i = 0; i < n; i++)
                if (!strcmp(kept[i].text, text))
                        return &kept[i];
        return NULL;
}

const ks_cli_pattern_t *ks_cli_pattern_of(const char *text)
{
        const ks_cli_pattern_t *p;
        size_t                  n;

        if ((p = find(text,
                      atomic_load_explicit(&kept_cnt, memory_order_acquire))))
                return p;
        pthread_mutex_lock(&kept_lock);
        n = atomic_load_explicit(&kept_cnt, memory_order_relaxed);
        if (!(p = find(text, n)) && n < KS_PATTERNS_MAX &&
            (kept[n].text = strdup(text))) {
                if (regcomp(&kept[n].re, text, REG_EXTENDED | REG_NOSUB)) {
                        free(kept[n].text);
                        kept[n].text = NULL;
                } else {
                        kept[n].loop = ks_cli_pattern_loop(text);
                        p            = &kept[n];
                        atomic_store_explicit(&kept_cnt, n + 1,
                                              memory_order_release);
                }
        }
        pthread_mutex_unlock(&kept_lock);
        return p;
}

int ks_cli_pattern_match(const ks_cli_pattern_t *p, const char *s)
{
        if (p->loop)
                return p->loop(s);
        return !regexec(&p->re, s, 0, NULL, 0);
}
