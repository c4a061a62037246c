/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_report_fmt.c
 * @brief The report's small values: times, keys, shares (ks_report_fmt.h).
 */
#include "ks_report_fmt.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ks_hex.h"

void ks_report_rfc3339(int64_t ms, char *out, size_t size)
{
        time_t    sec = (time_t)(ms / 1000);
        struct tm tm;
        char      buf[32];

        gmtime_r(&sec, &tm);
        strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
        snprintf(out, size, "%s.%03dZ", buf, (int)(ms % 1000));
}

double ks_report_rfc3339_parse(const char *s)
{
        struct tm tm = {0};
        int       ms = 0;

        if (!s ||
            sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ", &tm.tm_year, &tm.tm_mon,
                   &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms) < 6)
                return -1;
        tm.tm_year -= 1900;
        tm.tm_mon -= 1;
        return (double)timegm(&tm) + ms / 1000.0;
}

json_t *ks_report_hex(const uint8_t *b, size_t n)
{
        char   *s = malloc(n * 2 + 1);
        json_t *j;

        if (!s)
                return NULL;
        ks_hex_encode(b, n, s);
        j = json_string(s);
        free(s);
        return j;
}

json_t *ks_report_key(const uint8_t *key, size_t n)
{
        size_t  i;
        json_t *j;

        for (i = 0; i < n; i++)
                if (key[i] < 0x20 || key[i] == 0x7f)
                        return json_null();
        j = json_stringn((const char *)key, n); /* NULL if not UTF-8 */
        return j ? j : json_null();
}

double ks_report_frac(uint64_t a, uint64_t b)
{
        return b ? (double)a / (double)b : 0.0;
}
