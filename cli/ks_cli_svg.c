/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli_svg.c
 * @brief SVG primitives, and the per-partition load chart.
 *
 * Coordinates are pixels, origin top left. Every chart leaves a margin
 * for its title (top), the y-axis labels (left) and the x-axis labels
 * (bottom), and draws into the plot area inside.
 */
#include "ks_cli_svg.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "ks_cli_fmt.h"

void ks_cli_svg_open(FILE *fp, int w, int h, const char *cls, const char *label)
{
        fprintf(fp,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"ks-chart "
                "%s\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                "role=\"img\" aria-label=\"",
                cls, w, h, w, h);
        ks_cli_fmt_xml(fp, label);
        fprintf(fp, "\">\n");
}

void ks_cli_svg_close(FILE *fp)
{
        fprintf(fp, "</svg>\n");
}

void ks_cli_svg_text(FILE *fp, double x, double y, const char *anchor,
                     const char *cls, const char *fmt, ...)
{
        char    buf[1024];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\"", x, y,
                anchor);
        if (cls && *cls)
                fprintf(fp, " class=\"%s\"", cls);
        fputc('>', fp);
        ks_cli_fmt_xml(fp, buf);
        fprintf(fp, "</text>\n");
}

double ks_cli_svg_legend(FILE *fp, double x, double y, char shape,
                         const char *cls, const char *label)
{
        if (shape == 'l')
                fprintf(fp,
                        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                        "y2=\"%.1f\" class=\"%s\"/>\n",
                        x, y - 4, x + 18, y - 4, cls);
        else if (shape == 'd')
                fprintf(fp,
                        "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" "
                        "class=\"%s\"/>\n",
                        x + 9, y - 4, cls);
        else
                fprintf(fp,
                        "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" "
                        "height=\"12\" class=\"%s\"/>\n",
                        x + 3, y - 10, cls);
        ks_cli_svg_text(fp, x + 22, y, "start", "ks-legend", "%s", label);
        /* about 6.6 px per character at 12 px */
        return x + 22 + 6.6 * (double)strlen(label) + 16;
}

double ks_cli_svg_step(double max, int ticks)
{
        double raw, mag, f;

        if (max <= 0 || ticks < 1)
                return 1;
        raw = max / ticks;
        mag = pow(10, floor(log10(raw)));
        f   = raw / mag;
        return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
}

/** Right margin of the load chart: the reference lines' labels. */
#define KS_SVG_REF_LABEL_W 112

/**
 * @brief A horizontal reference line across the plot, its label in the
 *        right margin (inside the plot it would cross the bars) at
 *        @p label_y.
 */
static void ks_cli_svg_hline(FILE *fp, double x0, double x1, double y,
                             double label_y, const char *cls, const char *label)
{
        fprintf(fp,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                "class=\"%s\"/>\n",
                x0, y, x1 + 4, y, cls);
        ks_cli_svg_text(fp, x1 + 7, label_y + 4, "start", cls, "%s", label);
}

void ks_cli_svg_partitions(FILE *fp, const char *title, const ks_cli_loads_t *l,
                           const uint64_t *moved_in, double ymax, int w, int h)
{
        const double x0 = 64, y0 = 40, pw = w - 64 - KS_SVG_REF_LABEL_W,
                     ph = h - 40 - 42;
        double  ymed, ymean;
        double  step, v, bw, gap, med = l->spread.median;
        int32_t i, every;
        char    a[32], b[32];

        ks_cli_svg_open(fp, w, h, "ks-bars", title);
        ks_cli_svg_text(fp, 8, 18, "start", "ks-title", "%s", title);
        if (ymax <= 0)
                ymax = (double)l->spread.max;
        if (ymax <= 0)
                ymax = 1;
        step = ks_cli_svg_step(ymax, 5);
        ymax = ceil(ymax / step) * step;
        for (v = 0; v <= ymax + step / 2; v += step) {
                double y = y0 + ph - v / ymax * ph;
                fprintf(fp,
                        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                        "y2=\"%.1f\" class=\"ks-grid\"/>\n",
                        x0, y, x0 + pw, y);
                ks_cli_svg_text(fp, x0 - 6, y + 4, "end", "ks-tick", "%s",
                                ks_cli_fmt_si(v, a, sizeof(a)));
        }
        ks_cli_svg_text(fp, 14, y0 + ph / 2, "middle", "ks-axis-v", "messages");
        bw    = pw / l->count;
        gap   = bw >= 6 ? bw * 0.18 : 0;
        every = l->count <= 32 ? 1 : (l->count + 15) / 16;
        for (i = 0; i < l->count; i++) {
                double      m     = (double)l->messages[i];
                double      bh    = m / ymax * ph;
                double      ratio = med > 0 ? m / med : 0;
                const char *cls   = moved_in      ? "ks-bar"
                                    : ratio > 2.5 ? "ks-bar ks-hot"
                                    : ratio > 1.5 ? "ks-bar ks-warm"
                                                  : "ks-bar";
                double      bx    = x0 + i * bw + gap / 2;
                double      bwid = bw - gap > 1 ? bw - gap : 1; /* never lost */
                double      in   = moved_in ? (double)moved_in[i] : 0;

                fprintf(fp,
                        "<rect class=\"%s%s\" x=\"%.2f\" y=\"%.2f\" "
                        "width=\"%.2f\" height=\"%.2f\"><title>partition "
                        "%d: %s messages, %.2fx the median",
                        cls, moved_in && ratio > 2.5 ? " ks-over" : "", bx,
                        y0 + ph - bh, bwid, bh, (int)i,
                        ks_cli_fmt_count(l->messages[i], a, sizeof(a)), ratio);
                if (moved_in)
                        fprintf(fp, "; %s moved in from other partitions",
                                ks_cli_fmt_count(moved_in[i], a, sizeof(a)));
                fprintf(fp, "</title></rect>\n");
                if (in > 0)
                        fprintf(fp,
                                "<rect class=\"ks-bar-in\" x=\"%.2f\" "
                                "y=\"%.2f\" width=\"%.2f\" "
                                "height=\"%.2f\"><title>partition %d: %s "
                                "messages move in</title></rect>\n",
                                bx, y0 + ph - bh, bwid, in / ymax * ph, (int)i,
                                ks_cli_fmt_count(moved_in[i], a, sizeof(a)));
                if (i % every == 0)
                        ks_cli_svg_text(fp, x0 + (i + 0.5) * bw, y0 + ph + 15,
                                        "middle", "ks-tick", "%d", (int)i);
                if (i == l->busiest)
                        ks_cli_svg_text(fp, x0 + (i + 0.5) * bw,
                                        y0 + ph - bh - 5, "middle", "ks-value",
                                        "%s", ks_cli_fmt_si(m, a, sizeof(a)));
        }
        ks_cli_svg_text(fp, x0 + pw / 2, y0 + ph + 34, "middle", "ks-axis",
                        "partition");
        /* the two labels at their lines, pushed apart to a line's height
         * when the lines are closer (median and mean often are) */
        ymed  = y0 + ph - med / ymax * ph;
        ymean = y0 + ph - l->mean / ymax * ph;
        {
                double lm = ymed, la = ymean, mid = (ymed + ymean) / 2;
                if (fabs(lm - la) < 14) {
                        lm = mid + (ymed >= ymean ? 7 : -7);
                        la = mid + (ymed >= ymean ? -7 : 7);
                }
                snprintf(b, sizeof(b), "median %s",
                         ks_cli_fmt_si(med, a, sizeof(a)));
                ks_cli_svg_hline(fp, x0, x0 + pw, ymed, lm, "ks-median", b);
                snprintf(b, sizeof(b), "fair share %s",
                         ks_cli_fmt_si(l->mean, a, sizeof(a)));
                ks_cli_svg_hline(fp, x0, x0 + pw, ymean, la, "ks-mean", b);
        }
        ks_cli_svg_close(fp);
}
