/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_hex.c
 * @brief A key's bytes as hex and back (ks_hex.h), as the report's
 *        `key_hex`, `keyshift hash -f hex` and the broker tests use them:
 *        every byte value against snprintf("%02x"), and what the parser
 *        refuses (odd length, a non-hex character, more than the room).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ks_hex.h"
#include "ks_test.h"

/** Every byte value, written and read back; snprintf() is the oracle. */
static void test_every_byte(void)
{
        uint8_t b[256], back[256];
        char    hex[513], want[513];
        int     i;

        for (i = 0; i < 256; i++) {
                b[i] = (uint8_t)i;
                snprintf(want + 2 * i, 3, "%02x", i);
        }
        ks_hex_encode(b, sizeof(b), hex);
        CU_ASSERT_STRING_EQUAL(hex, want);
        CU_ASSERT_EQUAL(ks_hex_decode(hex, 512, back, sizeof(back)), 256);
        CU_ASSERT_EQUAL(memcmp(back, b, sizeof(b)), 0);
}

/** No bytes: an empty string, and an empty string reads as no bytes. */
static void test_empty(void)
{
        char    hex[1] = {'x'};
        uint8_t out[1] = {0xaa};

        ks_hex_encode(NULL, 0, hex);
        CU_ASSERT_EQUAL(hex[0], '\0');
        CU_ASSERT_EQUAL(ks_hex_decode("", 0, out, 0), 0);
        CU_ASSERT_EQUAL(out[0], 0xaa);
}

/** Upper and lower case read alike: a user types "DEADbeef". */
static void test_either_case(void)
{
        uint8_t out[4];

        CU_ASSERT_EQUAL(ks_hex_decode("DEADbeef", 8, out, sizeof(out)), 4);
        CU_ASSERT_EQUAL(out[0], 0xde);
        CU_ASSERT_EQUAL(out[1], 0xad);
        CU_ASSERT_EQUAL(out[2], 0xbe);
        CU_ASSERT_EQUAL(out[3], 0xef);
}

/** Refused: an odd length, a character that is no hex digit (a prefix,
 *  a space, a sign, NUL within @p slen), more bytes than the room. */
static void test_refused(void)
{
        uint8_t out[4];

        CU_ASSERT_EQUAL(ks_hex_decode("abc", 3, out, sizeof(out)), -1);
        CU_ASSERT_EQUAL(ks_hex_decode("0x00", 4, out, sizeof(out)), -1);
        CU_ASSERT_EQUAL(ks_hex_decode("zz", 2, out, sizeof(out)), -1);
        CU_ASSERT_EQUAL(ks_hex_decode("0 ", 2, out, sizeof(out)), -1);
        CU_ASSERT_EQUAL(ks_hex_decode("+1", 2, out, sizeof(out)), -1);
        CU_ASSERT_EQUAL(ks_hex_decode("0g", 2, out, sizeof(out)), -1);
        CU_ASSERT_EQUAL(ks_hex_decode("00\0", 4, out, sizeof(out)), -1);
        CU_ASSERT_EQUAL(ks_hex_decode("0011223344", 10, out, 4), -1);
        CU_ASSERT_EQUAL(ks_hex_decode("00112233", 8, out, 4), 4);
        /* only @p slen characters are read: the rest of the string is not
         * the key's */
        CU_ASSERT_EQUAL(ks_hex_decode("00zz", 2, out, sizeof(out)), 1);
}

void ks_test_register(void)
{
        KS_ADD_SUITE("hex", {"every byte, there and back", test_every_byte},
                     {"no bytes", test_empty},
                     {"upper and lower case", test_either_case},
                     {"what the parser refuses", test_refused});
}
