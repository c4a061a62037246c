/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli_args.c
 * @brief Command-line argument parsing and error printing shared by the
 *        subcommands.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "keyshift/keyshift.h"
#include "ks_cli.h"
#include "ks_sizing.h"

int ks_cli_usage_error(const char *cmd, const char *fmt, ...)
{
        va_list ap;

        fprintf(stderr, "keyshift %s: ", cmd);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fprintf(stderr, "\nTry 'keyshift %s --help'.\n", cmd);
        return KS_CLI_EXIT_USAGE;
}

int ks_cli_fail(const char *cmd, const char *fmt, ...)
{
        va_list ap;

        fprintf(stderr, "keyshift %s: ", cmd);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        return KS_CLI_EXIT_FAIL;
}

int ks_cli_parse_long(const char *s, long long min, long long max,
                      long long *out, char *err, size_t errsz)
{
        char     *end;
        long long v;

        errno = 0;
        v     = strtoll(s, &end, 10);
        /* decimal digits, an optional '-': no white space, no '+' */
        if (!*s || *end || errno ||
            !(isdigit((unsigned char)*s) || *s == '-')) {
                snprintf(err, errsz, "'%s' is not a whole number", s);
                return -1;
        }
        if (v < min || v > max) {
                snprintf(err, errsz, "%lld is out of range %lld..%lld", v, min,
                         max);
                return -1;
        }
        *out = v;
        return 0;
}

int ks_cli_parse_double(const char *s, double min, double max, double *out,
                        char *err, size_t errsz)
{
        double v;

        /* the properties' grammar (ks_sizing.h): "12." and "0x10" are
         * not numbers here either */
        if (ks_sizing_parse_decimal(s, 0, &v)) {
                snprintf(err, errsz,
                         "'%s' is not a decimal number (digits, '.' and "
                         "digits, an exponent)",
                         s);
                return -1;
        }
        if (v < min || v > max) {
                snprintf(err, errsz, "%s is out of range %g..%g", s, min, max);
                return -1;
        }
        *out = v;
        return 0;
}

int ks_cli_parse_counts(const char *s, int32_t *out, size_t max, size_t *n,
                        char *err, size_t errsz)
{
        char      buf[1024], *next, *tok;
        long long v;
        char      e[256];
        size_t    cnt = 0;

        if (strlen(s) >= sizeof(buf) || !*s) {
                snprintf(err, errsz, "'%s' is not a list of partition counts",
                         s);
                return -1;
        }
        snprintf(buf, sizeof(buf), "%s", s);
        /* "6,,12" and ",6" are refused, as keyshift.partitions.proposed
         * refuses them: no empty counts */
        for (tok = buf; tok; tok = next) {
                if ((next = strchr(tok, ',')))
                        *next++ = '\0';
                if (cnt == max) {
                        snprintf(err, errsz, "at most %zu partition counts",
                                 max);
                        return -1;
                }
                if (ks_cli_parse_long(tok, 1, KEYSHIFT_PARTITIONS_MAX, &v, e,
                                      sizeof(e))) {
                        snprintf(err, errsz, "partition count %s", e);
                        return -1;
                }
                out[cnt++] = (int32_t)v;
        }
        if (!cnt) {
                snprintf(err, errsz, "'%s' is not a list of partition counts",
                         s);
                return -1;
        }
        *n = cnt;
        return 0;
}

int ks_cli_color_mode(const char *mode, int fd)
{
        const char *no_color = getenv("NO_COLOR");

        if (!mode || !strcmp(mode, "auto"))
                return isatty(fd) && !(no_color && *no_color);
        if (!strcmp(mode, "always"))
                return 1;
        if (!strcmp(mode, "never"))
                return 0;
        return -1;
}
