/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_report_hll.c
 * @brief The distinct-key HyperLogLog in a report's `merge` object, in one
 *        of two forms (docs/report-schema.md):
 *  - `registers_hex`: all 16,384 registers, two hex digits each (32 KiB of
 *    text);
 *  - `registers_nonzero`: `[[index, value], ...]` of the registers that
 *    are not 0, ascending, when that is shorter: a topic with few keys
 *    (a report of 1,000 such topics was 42 MB, 32 of them zeros in hex).
 * Both carry the same registers; keyshift merge reads either.
 */
#include "ks_report.h"

#include <stdio.h>
#include <stdlib.h>

/** Text of one `[index,value]` entry at most ("[16383,51]" and a comma). */
#define KS_HLL_NONZERO_ENTRY_CHARS 11

size_t ks_report_hll_nonzero(const ks_hll_t *hll)
{
        size_t i, n = 0;

        for (i = 0; i < KS_HLL_REGISTERS; i++)
                n += hll->reg[i] != 0;
        return n;
}

int ks_report_hll_sparse(size_t nonzero)
{
        return nonzero * KS_HLL_NONZERO_ENTRY_CHARS < 2 * KS_HLL_REGISTERS;
}

json_t *ks_report_hll_json(const ks_hll_t *hll)
{
        json_t *o = json_pack("{s:i}", "p", KS_HLL_P), *nz;
        char   *hex;
        size_t  i;

        if (!o)
                return NULL;
        if (ks_report_hll_sparse(ks_report_hll_nonzero(hll))) {
                nz = json_array();
                for (i = 0; nz && i < KS_HLL_REGISTERS; i++)
                        if (hll->reg[i])
                                json_array_append_new(
                                    nz, json_pack("[i, i]", (int)i,
                                                  (int)hll->reg[i]));
                json_object_set_new(o, "registers_nonzero", nz);
                return o;
        }
        if ((hex = malloc(2 * KS_HLL_REGISTERS + 1))) {
                for (i = 0; i < KS_HLL_REGISTERS; i++)
                        snprintf(hex + 2 * i, 3, "%02x", hll->reg[i]);
                json_object_set_new(o, "registers_hex", json_string(hex));
                free(hex);
        }
        return o;
}

/** @returns the value of hex digit @p c, or -1. */
static int hex_digit(char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

int ks_report_hll_from_json(const json_t *o, ks_hll_t *hll, char *err,
                            size_t errsz)
{
        const json_t *hex = json_object_get(o, "registers_hex");
        const json_t *nz  = json_object_get(o, "registers_nonzero");
        const char   *s;
        size_t        i;

        ks_hll_init(hll);
        if (!hex == !nz) {
                snprintf(err, errsz,
                         "needs exactly one of registers_hex and "
                         "registers_nonzero");
                return -1;
        }
        if (hex) {
                s = json_string_value(hex);
                for (i = 0; s && i < KS_HLL_REGISTERS; i++) {
                        int hi = hex_digit(s[2 * i]), lo;
                        if (hi < 0 || (lo = hex_digit(s[2 * i + 1])) < 0)
                                break;
                        hll->reg[i] = (uint8_t)(hi << 4 | lo);
                }
                if (!s || i < KS_HLL_REGISTERS || s[2 * i]) {
                        snprintf(err, errsz,
                                 "registers_hex: not %u registers in hex",
                                 KS_HLL_REGISTERS);
                        return -1;
                }
                return 0;
        }
        for (i = 0; i < json_array_size(nz); i++) {
                const json_t *e = json_array_get(nz, i);
                json_int_t    at, v;
                if (json_array_size(e) != 2 ||
                    !json_is_integer(json_array_get(e, 0)) ||
                    !json_is_integer(json_array_get(e, 1)) ||
                    (at = json_integer_value(json_array_get(e, 0))) < 0 ||
                    at >= KS_HLL_REGISTERS ||
                    (v = json_integer_value(json_array_get(e, 1))) < 1 ||
                    v > 64 - KS_HLL_P + 1) {
                        snprintf(err, errsz,
                                 "registers_nonzero[%zu]: not [index 0..%u, "
                                 "value 1..%d]",
                                 i, KS_HLL_REGISTERS - 1, 64 - KS_HLL_P + 1);
                        return -1;
                }
                hll->reg[at] = (uint8_t)v;
        }
        if (!json_is_array(nz)) {
                snprintf(err, errsz, "registers_nonzero: not an array");
                return -1;
        }
        return 0;
}
