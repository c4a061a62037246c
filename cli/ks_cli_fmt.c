/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli_fmt.c
 * @brief Number, share, key and markup formatting for show and html.
 */
#include "ks_cli_fmt.h"

#include <math.h>
#include <string.h>

const char *ks_cli_fmt_count(uint64_t v, char *buf, size_t size)
{
        char   digits[32];
        size_t n, i, o = 0;

        n = (size_t)snprintf(digits, sizeof(digits), "%llu",
                             (unsigned long long)v);
        for (i = 0; i < n && o + 2 < size; i++) {
                if (i && (n - i) % 3 == 0)
                        buf[o++] = ',';
                buf[o++] = digits[i];
        }
        buf[o] = '\0';
        return buf;
}

const char *ks_cli_fmt_si(double v, char *buf, size_t size)
{
        static const char units[] = " kMGTP";
        size_t            u       = 0;
        double            a       = fabs(v);

        while (a >= 999.5 && u + 1 < sizeof(units) - 1) {
                a /= 1000;
                v /= 1000;
                u++;
        }
        if (!u)
                snprintf(buf, size, a >= 100 || v == floor(v) ? "%.0f" : "%.3g",
                         v);
        else
                snprintf(buf, size, a >= 100 ? "%.0f%c" : "%.3g%c", v,
                         units[u]);
        return buf;
}

const char *ks_cli_fmt_bytes(double bytes, char *buf, size_t size)
{
        char num[32];

        if (bytes < 1000) {
                snprintf(buf, size, "%.0f B", bytes);
                return buf;
        }
        ks_cli_fmt_si(bytes, num, sizeof(num));
        snprintf(buf, size, "%.*s %cB", (int)strlen(num) - 1, num,
                 num[strlen(num) - 1]);
        return buf;
}

const char *ks_cli_fmt_pct(double f, char *buf, size_t size)
{
        double p = 100 * f;

        if (p == 0)
                snprintf(buf, size, "0%%");
        else if (p < 0.01)
                snprintf(buf, size, "<0.01%%");
        else if (p < 10)
                snprintf(buf, size, "%.2f%%", p);
        else if (p > 99.9 && p < 100)
                snprintf(buf, size, ">99.9%%");
        else
                snprintf(buf, size, "%.1f%%", p);
        return buf;
}

const char *ks_cli_fmt_key(const json_t *obj, size_t width, char *buf,
                           size_t size)
{
        const json_t *k   = json_object_get(obj, "key");
        const char   *hex = json_string_value(json_object_get(obj, "key_hex"));
        size_t        n;

        if (json_is_string(k))
                snprintf(buf, size, "%s", json_string_value(k));
        else
                snprintf(buf, size, "0x%s", hex ? hex : "");
        n = strlen(buf);
        if (width >= 4 && n > width && width < size) {
                /* do not cut a UTF-8 sequence in two */
                size_t cut = width - 3;
                while (cut && ((unsigned char)buf[cut] & 0xc0) == 0x80)
                        cut--;
                memcpy(buf + cut, "...", 4);
        }
        return buf;
}

const char *ks_cli_fmt_pad(const char *s, size_t width, char *buf, size_t size)
{
        size_t               cols = 0, n = 0;
        const unsigned char *p;

        for (p = (const unsigned char *)s; *p; p++)
                cols += (*p & 0xc0) != 0x80; /* not a continuation byte */
        n = (size_t)snprintf(buf, size, "%s", s);
        while (cols < width && n + 1 < size) {
                buf[n++] = ' ';
                cols++;
        }
        if (n < size)
                buf[n] = '\0';
        return buf;
}

void ks_cli_fmt_xml(FILE *fp, const char *s)
{
        for (; s && *s; s++) {
                switch (*s) {
                case '&':
                        fputs("&amp;", fp);
                        break;
                case '<':
                        fputs("&lt;", fp);
                        break;
                case '>':
                        fputs("&gt;", fp);
                        break;
                case '"':
                        fputs("&quot;", fp);
                        break;
                case '\'':
                        fputs("&#39;", fp);
                        break;
                default:
                        fputc(*s, fp);
                }
        }
}

void ks_cli_fmt_print_wrapped(const char *text, int col, int indent)
{
        const char *p = text;

        while (*p) {
                const char *sp = p, *brk = NULL;
                while (*sp && sp - p + col <= KS_CLI_FMT_WRAP_COLUMNS) {
                        if (*sp == ' ')
                                brk = sp;
                        sp++;
                }
                if (!*sp || !brk) /* the end, or a word longer than a line */
                        brk = sp;
                printf("%.*s\n", (int)(brk - p), p);
                p = brk;
                while (*p == ' ')
                        p++;
                if (*p)
                        printf("%*s", indent, "");
                col = indent;
        }
}
