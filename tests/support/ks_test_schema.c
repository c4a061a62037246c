/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_test_schema.c
 * @brief Every report a test writes is checked against the published
 *        schema (issue 29): the plugin's, keyshift-replay's, keyshift
 *        merge's and keyshift scan's (ks_test.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "ks_test.h"

int ks_test_report_valid(const char *path)
{
        char cmd[4096];
        int  st;

        snprintf(cmd, sizeof(cmd),
                 "/usr/bin/python3 '%s/tests/support/validate_report.py' '%s'",
                 KS_SOURCE_DIR, path);
        fflush(stdout);
        st = system(cmd);
        st = st == -1 ? -1 : WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        if (st) {
                fprintf(stderr, "%s: off the report schema (%s)\n", path,
                        st == 1 ? "above" : "the validator did not run");
                CU_FAIL("a report off the schema docs/keyshift.report.v2."
                        "schema.json");
        }
        return st;
}
