/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file fuzz_plan.c
 * @brief libFuzzer target: `keyshift plan`'s arguments (cli/ks_cli_plan.c:
 *        the numbers, -X sizing properties, and the advice computed from
 *        them), in-process.
 *
 * Input: the arguments after `plan`, separated by NUL bytes (as main()
 * receives them), at most 32. The output goes to /dev/null; what matters
 * is that no argument crashes, hangs, overflows or leaks.
 */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "ks_cli.h"
#include "ks_fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
        (void)argc;
        (void)argv;
        if (!freopen("/dev/null", "w", stdout))
                abort();
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static char     *reset[] = {"plan", NULL};
        ks_fuzz_fields_t f;

        if (size > 2048)
                return 0;
        if (ks_fuzz_fields(&f, data, size, '\0', "plan", 32))
                return 0;
        /* glibc's getopt keeps a pointer into the last argv between
         * calls (a half-read "-hX"): optind = 0 starts it afresh */
        optind = 0;
        getopt(1, reset, "");
        ks_cli_plan_main(f.n, f.v);
        ks_fuzz_fields_free(&f);
        return 0;
}
