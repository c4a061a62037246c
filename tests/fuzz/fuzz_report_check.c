/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file fuzz_report_check.c
 * @brief libFuzzer target: the report check (cli/ks_cli_report_check.c),
 *        what every subcommand that reads a report (show, html, merge,
 *        metrics, fleet) runs first. The input is the file's bytes.
 *
 * The input is parsed as ks_cli_report_load() parses a file (jansson,
 * rejecting duplicate keys), checked, and its hot keys turned from
 * columns into rows. Invariant: the check either accepts or names a
 * problem (a non-empty message); neither crashes nor leaks.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ks_cli_report.h"
#include "ks_fuzz.h"

/** Mutates the report as JSON, not only as bytes (ks_fuzz_json.c). */
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
                               unsigned int seed)
{
        return ks_fuzz_json_mutate(data, size, max_size, seed);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        json_error_t jerr;
        json_t      *root;
        char         err[1024];

        root =
            json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &jerr);
        if (!root)
                return 0;
        err[0] = '\0';
        if (ks_cli_report_check(root, "fuzz.json", err, sizeof(err)) == 0) {
                if (ks_cli_report_rows(root, "fuzz.json", err, sizeof(err)))
                        if (!err[0])
                                abort(); /* refused without a word */
        } else if (!err[0]) {
                abort();
        }
        json_decref(root);
        return 0;
}
