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

/** The bar chart's plot: left margin (ticks), top (title), bottom
 *  (partition labels and the axis title), px. */
#define KS_BARS_X0 64
#define KS_BARS_Y0 40
#define KS_BARS_BOTTOM 42
/** Grid lines on the messages axis, about. */
#define KS_BARS_TICKS 5
/** A bar over the median by more than this is hot (keyshift's skew
 *  limit, keyshift.partition.skew.max's default), by more than
 *  KS_BARS_WARM warm. */
#define KS_BARS_HOT 2.5
#define KS_BARS_WARM 1.5
/** Bars this wide (px) or wider get a gap of KS_BARS_GAP of their width. */
#define KS_BARS_GAP_MIN_W 6
#define KS_BARS_GAP 0.18
/** Up to this many partitions, each is labelled; past it, about
 *  KS_BARS_LABELS are. */
#define KS_BARS_LABEL_ALL 32
#define KS_BARS_LABELS 16
/** Two reference lines' labels closer than this (px) are pushed apart. */
#define KS_BARS_LABEL_H 14

/** The bar chart's plot area and scale. */
typedef struct ks_bars {
        double x0, y0, pw, ph; /**< the plot, px */
        double ymax;           /**< messages at the top */
} ks_bars_t;

/** @brief The messages axis of @p p: a grid line and tick every @p step
 *         messages, and its title. */
static void ks_bars_axis(FILE *fp, const ks_bars_t *p, double step)
{
        char   a[32];
        double v;

        for (v = 0; v <= p->ymax + step / 2; v += step) {
                double y = p->y0 + p->ph - v / p->ymax * p->ph;
                fprintf(fp,
                        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                        "y2=\"%.1f\" class=\"ks-grid\"/>\n",
                        p->x0, y, p->x0 + p->pw, y);
                ks_cli_svg_text(fp, p->x0 - 6, y + 4, "end", "ks-tick", "%s",
                                ks_cli_fmt_si(v, a, sizeof(a)));
        }
        ks_cli_svg_text(fp, 14, p->y0 + p->ph / 2, "middle", "ks-axis-v",
                        "messages");
}

/** @brief Partition @p i's bar of loads @p l (with the messages moving in
 *         of @p moved_in when given, NULL for the current loads): shaded
 *         by how far over the median it is, labelled every @p every
 *         partitions, its count over the busiest. */
static void ks_bars_bar(FILE *fp, const ks_bars_t *p, const ks_cli_loads_t *l,
                        const uint64_t *moved_in, int32_t i, int32_t every)
{
        double      bw    = p->pw / l->count;
        double      gap   = bw >= KS_BARS_GAP_MIN_W ? bw * KS_BARS_GAP : 0;
        double      med   = l->spread.median;
        double      m     = (double)l->messages[i];
        double      bh    = m / p->ymax * p->ph;
        double      ratio = med > 0 ? m / med : 0;
        const char *cls   = moved_in               ? "ks-bar"
                            : ratio > KS_BARS_HOT  ? "ks-bar ks-hot"
                            : ratio > KS_BARS_WARM ? "ks-bar ks-warm"
                                                   : "ks-bar";
        double      bx    = p->x0 + i * bw + gap / 2;
        double      bwid  = bw - gap > 1 ? bw - gap : 1; /* never lost */
        double      in    = moved_in ? (double)moved_in[i] : 0;
        char        a[32];

        fprintf(fp,
                "<rect class=\"%s%s\" x=\"%.2f\" y=\"%.2f\" "
                "width=\"%.2f\" height=\"%.2f\"><title>partition "
                "%d: %s messages, %.2fx the median",
                cls, moved_in && ratio > KS_BARS_HOT ? " ks-over" : "", bx,
                p->y0 + p->ph - bh, bwid, bh, (int)i,
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
                        bx, p->y0 + p->ph - bh, bwid, in / p->ymax * p->ph,
                        (int)i, ks_cli_fmt_count(moved_in[i], a, sizeof(a)));
        if (i % every == 0)
                ks_cli_svg_text(fp, p->x0 + (i + 0.5) * bw, p->y0 + p->ph + 15,
                                "middle", "ks-tick", "%d", (int)i);
        if (i == l->busiest)
                ks_cli_svg_text(fp, p->x0 + (i + 0.5) * bw,
                                p->y0 + p->ph - bh - 5, "middle", "ks-value",
                                "%s", ks_cli_fmt_si(m, a, sizeof(a)));
}

/** @brief The median and fair-share (mean) lines of loads @p l, their
 *         labels at their lines, pushed apart to a line's height when the
 *         lines are closer (median and mean often are). */
static void ks_bars_refs(FILE *fp, const ks_bars_t *p, const ks_cli_loads_t *l)
{
        double med   = l->spread.median;
        double ymed  = p->y0 + p->ph - med / p->ymax * p->ph;
        double ymean = p->y0 + p->ph - l->mean / p->ymax * p->ph;
        double lm = ymed, la = ymean, mid = (ymed + ymean) / 2;
        char   a[32], b[32];

        if (fabs(lm - la) < KS_BARS_LABEL_H) {
                lm = mid + (ymed >= ymean ? KS_BARS_LABEL_H / 2
                                          : -KS_BARS_LABEL_H / 2);
                la = mid + (ymed >= ymean ? -KS_BARS_LABEL_H / 2
                                          : KS_BARS_LABEL_H / 2);
        }
        snprintf(b, sizeof(b), "median %s", ks_cli_fmt_si(med, a, sizeof(a)));
        ks_cli_svg_hline(fp, p->x0, p->x0 + p->pw, ymed, lm, "ks-median", b);
        snprintf(b, sizeof(b), "fair share %s",
                 ks_cli_fmt_si(l->mean, a, sizeof(a)));
        ks_cli_svg_hline(fp, p->x0, p->x0 + p->pw, ymean, la, "ks-mean", b);
}

void ks_cli_svg_partitions(FILE *fp, const char *title, const ks_cli_loads_t *l,
                           const uint64_t *moved_in, double ymax, int w, int h)
{
        ks_bars_t p = {KS_BARS_X0, KS_BARS_Y0,
                       w - KS_BARS_X0 - KS_SVG_REF_LABEL_W,
                       h - KS_BARS_Y0 - KS_BARS_BOTTOM, 0};
        double    step;
        int32_t   i, every;

        ks_cli_svg_open(fp, w, h, "ks-bars", title);
        ks_cli_svg_text(fp, 8, 18, "start", "ks-title", "%s", title);
        if (ymax <= 0)
                ymax = (double)l->spread.max;
        if (ymax <= 0)
                ymax = 1;
        step   = ks_cli_svg_step(ymax, KS_BARS_TICKS);
        p.ymax = ceil(ymax / step) * step;
        ks_bars_axis(fp, &p, step);
        every = l->count <= KS_BARS_LABEL_ALL
                    ? 1
                    : (l->count + KS_BARS_LABELS - 1) / KS_BARS_LABELS;
        for (i = 0; i < l->count; i++)
                ks_bars_bar(fp, &p, l, moved_in, i, every);
        ks_cli_svg_text(fp, p.x0 + p.pw / 2, p.y0 + p.ph + 34, "middle",
                        "ks-axis", "partition");
        ks_bars_refs(fp, &p, l);
        ks_cli_svg_close(fp);
}
