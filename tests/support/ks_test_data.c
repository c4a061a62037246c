/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_test_data.c
 * @brief Reading the committed test fixtures (TSV files in tests/unit/data).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ks_test.h"

const char *ks_test_data_path(const char *name)
{
        static char buf[4096];
        const char *env = getenv("KS_UNIT_DATA");

        snprintf(buf, sizeof(buf), "%s/%s",
                 env && *env ? env : KS_SOURCE_DIR "/tests/unit/data", name);
        return buf;
}

int ks_test_split_tabs(char *line, char **f, int max)
{
        int n = 0;

        line[strcspn(line, "\r\n")] = '\0';
        f[n++]                      = line;
        while (n < max && (line = strchr(line, '\t'))) {
                *line++ = '\0';
                f[n++]  = line;
        }
        return n;
}

long ks_test_unhex(const char *s, unsigned char *out, size_t outsz)
{
        size_t n = strlen(s), i;

        if (n % 2 || n / 2 > outsz)
                return -1;
        for (i = 0; i < n / 2; i++) {
                unsigned v;

                if (sscanf(s + 2 * i, "%2x", &v) != 1)
                        return -1;
                out[i] = (unsigned char)v;
        }
        return (long)(n / 2);
}
