/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli_svg_rank.c
 * @brief The rank-size chart: messages per key, busiest key at rank 1 on
 *        the left, the long tail to the right, both axes logarithmic (a
 *        Zipf plot: a power law is a straight line), and the cumulative
 *        share of keyed messages on the right axis, so "the top 20 keys
 *        carry 17%" and "half the traffic comes from the top 300 keys"
 *        can be read off.
 */
#include <math.h>
#include <string.h>

#include "ks_cli_fmt.h"
#include "ks_cli_svg.h"

/** The band between the legend and the plot starts this far down (px). */
#define KS_RANK_BAND 52.0
/** A row of that band (px): the busiest keys' names, then a marker each. */
#define KS_RANK_ROW 15.0
/** The plot's margins (px): the left axis's ticks, the right axis's
 *  percentages, the bottom axis's ticks and title. */
#define KS_RANK_MARGIN_LEFT 64
#define KS_RANK_MARGIN_RIGHT 48
#define KS_RANK_MARGIN_BOTTOM 44
/** Room past the last rank and the busiest key's count, so that neither
 *  sits on the plot's edge. */
#define KS_RANK_X_HEADROOM 1.2
#define KS_RANK_Y_HEADROOM 1.05
/** The busiest keys named on the band's first row. */
#define KS_RANK_NAMED 3
/** A key's characters in a dot's tooltip, and in the band's names. */
#define KS_RANK_TIP_KEY_CHARS 48
#define KS_RANK_NAME_KEY_CHARS 20
/** The half-traffic marker is drawn only this far right of the top-N
 *  marker, where their labels do not say the same thing twice. */
#define KS_RANK_HALF_APART 1.5

typedef struct ks_rank_axes {
        double x0, y0, pw, ph;
        double lx_max;         /**< log10 of the largest rank shown */
        double ly_min, ly_max; /**< log10 of the y range */
} ks_rank_axes_t;

/** @returns the x pixel of @p rank (log scale). */
static double ks_rank_x(const ks_rank_axes_t *a, double rank)
{
        return a->x0 + log10(rank) / a->lx_max * a->pw;
}

/** @returns the y pixel of @p msgs (log scale). */
static double ks_rank_y(const ks_rank_axes_t *a, double msgs)
{
        double l = log10(msgs > 0 ? msgs : pow(10, a->ly_min));
        return a->y0 + a->ph -
               (l - a->ly_min) / (a->ly_max - a->ly_min) * a->ph;
}

/** @returns what the chart plots for a point: messages, or messages/s
 *           when the counts' time span is known. */
static double ks_rank_v(const ks_cli_keyrank_t *k, size_t i)
{
        return k->seconds > 0 ? k->points[i].messages / k->seconds
                              : k->points[i].messages;
}

/** @returns the y pixel of a cumulative @p share 0..1 (right axis). */
static double ks_rank_cy(const ks_rank_axes_t *a, double share)
{
        return a->y0 + a->ph - share * a->ph;
}

/** @brief Grid, ticks and axis titles (decades on both axes). */
static void ks_rank_axes(FILE *fp, const ks_rank_axes_t *a, int rate)
{
        char   buf[32];
        double d;
        int    i;

        for (d = ceil(a->ly_min); d <= a->ly_max + 1e-9; d++) {
                double y = ks_rank_y(a, pow(10, d));
                fprintf(fp,
                        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                        "y2=\"%.1f\" class=\"ks-grid\"/>\n",
                        a->x0, y, a->x0 + a->pw, y);
                ks_cli_svg_text(fp, a->x0 - 6, y + 4, "end", "ks-tick", "%s",
                                ks_cli_fmt_si(pow(10, d), buf, sizeof(buf)));
        }
        for (d = 0; d <= a->lx_max + 1e-9; d++) {
                double x = ks_rank_x(a, pow(10, d));
                fprintf(fp,
                        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                        "y2=\"%.1f\" class=\"ks-grid\"/>\n",
                        x, a->y0, x, a->y0 + a->ph);
                ks_cli_svg_text(fp, x, a->y0 + a->ph + 15, "middle", "ks-tick",
                                "%s",
                                ks_cli_fmt_si(pow(10, d), buf, sizeof(buf)));
        }
        for (i = 0; i <= 4; i++)
                ks_cli_svg_text(fp, a->x0 + a->pw + 6,
                                ks_rank_cy(a, i / 4.0) + 4, "start",
                                "ks-tick ks-cum-tick", "%d%%", i * 25);
        ks_cli_svg_text(fp, a->x0 + a->pw / 2, a->y0 + a->ph + 34, "middle",
                        "ks-axis", "key rank (1 = busiest key), log scale");
        ks_cli_svg_text(fp, 14, a->y0 + a->ph / 2, "middle", "ks-axis-v",
                        "%s per key (log)", rate ? "messages/s" : "messages");
}

/**
 * @brief A vertical marker at @p rank, its dot on the cumulative curve, and
 *        its label on row @p ly of the band above the plot (never inside
 *        the plot, where it would cross the curves), beside the marker;
 *        the line starts at the plot, so no label of another row crosses
 *        it.
 */
static void ks_rank_marker(FILE *fp, const ks_rank_axes_t *a, double rank,
                           double share, double ly, const char *label)
{
        double x = ks_rank_x(a, rank), y = ks_rank_cy(a, share);
        int    right = x > a->x0 + a->pw * 0.5;

        fprintf(fp,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                "class=\"ks-marker\"/>\n<circle cx=\"%.1f\" cy=\"%.1f\" "
                "r=\"3\" class=\"ks-cum-dot\"/>\n",
                x, a->y0, x, a->y0 + a->ph, x, y);
        ks_cli_svg_text(fp, right ? x - 5 : x + 5, ly, right ? "end" : "start",
                        "ks-note", "%s", label);
}

/** @brief The chart's title and legend. */
static void ks_rank_title(FILE *fp, const ks_cli_keyrank_t *k)
{
        char   buf[160];
        double lx = 10;

        ks_cli_svg_text(
            fp, 8, 18, "start", "ks-title",
            "%s per key, busiest first: %s distinct keys%s",
            k->seconds > 0 ? "Message rate" : "Messages",
            ks_cli_fmt_count((uint64_t)llround(k->distinct), buf, sizeof(buf)),
            k->exact ? "" : " (estimated)");
        lx = ks_cli_svg_legend(fp, lx, 36, 'd', "ks-hot-dot", "hot keys");
        lx = ks_cli_svg_legend(fp, lx, 36, 'l', "ks-rank-line",
                               k->seconds > 0 ? "messages/s per key (left)"
                                              : "messages per key (left)");
        ks_cli_svg_legend(fp, lx, 36, 'l', "ks-cum",
                          "cumulative share of keyed messages "
                          "(right)");
}

/**
 * @brief Sets the log ranges of @p a from the points of @p k (at least
 *        one): ranks to the last, messages from the quietest key's decade
 *        to the busiest's.
 * @returns the rank from which half of all messages are carried.
 */
static double ks_rank_scale(const ks_cli_keyrank_t *k, ks_rank_axes_t *a)
{
        double max_msgs = 0, min_msgs = INFINITY, half_rank = 0;
        size_t i;

        for (i = 0; i < k->cnt; i++) {
                max_msgs = fmax(max_msgs, ks_rank_v(k, i));
                if (ks_rank_v(k, i) > 0)
                        min_msgs = fmin(min_msgs, ks_rank_v(k, i));
                if (!half_rank && k->points[i].cumulative >= 0.5)
                        half_rank = k->points[i].rank;
        }
        a->lx_max =
            fmax(1, log10(k->points[k->cnt - 1].rank * KS_RANK_X_HEADROOM));
        a->ly_min = floor(log10(isfinite(min_msgs) ? min_msgs : 1));
        a->ly_max = ceil(log10(fmax(max_msgs, 1e-9) * KS_RANK_Y_HEADROOM));
        if (a->ly_max <= a->ly_min)
                a->ly_max = a->ly_min + 1;
        return half_rank;
}

/** @brief The messages per key (a line, the area under it filled) and
 *         their cumulative share. */
static void ks_rank_curves(FILE *fp, const ks_rank_axes_t *a,
                           const ks_cli_keyrank_t *k)
{
        size_t i;

        fprintf(fp, "<path class=\"ks-rank-area\" d=\"M%.1f %.1f",
                ks_rank_x(a, k->points[0].rank), a->y0 + a->ph);
        for (i = 0; i < k->cnt; i++)
                fprintf(fp, " L%.1f %.1f", ks_rank_x(a, k->points[i].rank),
                        ks_rank_y(a, ks_rank_v(k, i)));
        fprintf(fp, " L%.1f %.1f Z\"/>\n",
                ks_rank_x(a, k->points[k->cnt - 1].rank), a->y0 + a->ph);
        fprintf(fp, "<polyline class=\"ks-rank-line\" points=\"");
        for (i = 0; i < k->cnt; i++)
                fprintf(fp, "%.1f,%.1f ", ks_rank_x(a, k->points[i].rank),
                        ks_rank_y(a, ks_rank_v(k, i)));
        fprintf(fp, "\"/>\n<polyline class=\"ks-cum\" points=\"");
        for (i = 0; i < k->cnt; i++)
                fprintf(fp, "%.1f,%.1f ", ks_rank_x(a, k->points[i].rank),
                        ks_rank_cy(a, k->points[i].cumulative));
        fprintf(fp, "\"/>\n");
}

/**
 * @brief The markers: the share of the top-N (hot) keys, and the rank
 *        @p half_rank from which half of all messages are carried. Drawn
 *        before the hot keys' dots: the top-N marker's line passes through
 *        the N-th hot key, whose dot must lie over it.
 */
static void ks_rank_markers(FILE *fp, const ks_rank_axes_t *a,
                            const ks_cli_keyrank_t *k, double half_rank)
{
        char buf[160], b2[32], b3[32], b4[32];

        if (k->hot_cnt && k->hot_cnt < k->points[k->cnt - 1].rank) {
                double r = (double)k->hot_cnt;
                snprintf(buf, sizeof(buf), "top %zu keys: %s of messages",
                         k->hot_cnt,
                         ks_cli_fmt_pct(ks_cli_keyrank_share_of_top(k, r), b2,
                                        sizeof(b2)));
                ks_rank_marker(fp, a, r, ks_cli_keyrank_share_of_top(k, r),
                               KS_RANK_BAND + 2 * KS_RANK_ROW - 3, buf);
        }
        if (half_rank > KS_RANK_HALF_APART * (double)k->hot_cnt) {
                snprintf(b3, sizeof(b3), "%s",
                         ks_cli_fmt_si(half_rank, b2, sizeof(b2)));
                snprintf(
                    buf, sizeof(buf), "half of all messages: top %s keys (%s)",
                    b3,
                    ks_cli_fmt_pct(half_rank / k->distinct, b4, sizeof(b4)));
                ks_rank_marker(fp, a, half_rank, 0.5,
                               KS_RANK_BAND + 3 * KS_RANK_ROW - 3, buf);
        }
}

/**
 * @brief The hot keys of @p hot_keys: a dot each, with a tooltip; the
 *        busiest KS_RANK_NAMED named on the band's first row (their ranks
 *        are the dots at the left).
 */
static void ks_rank_hot_dots(FILE *fp, const ks_rank_axes_t *a,
                             const ks_cli_keyrank_t *k, const json_t *hot_keys)
{
        char   names[256] = "", buf[160], b2[32];
        size_t off = 0, i, labelled = 0;

        for (i = 0; i < k->cnt && k->points[i].hot; i++) {
                const json_t *hk = json_array_get(hot_keys, i);
                double        x  = ks_rank_x(a, k->points[i].rank);
                double        y  = ks_rank_y(a, ks_rank_v(k, i));
                fprintf(fp,
                        "<circle class=\"ks-hot-dot\" cx=\"%.1f\" "
                        "cy=\"%.1f\" r=\"4\"><title>rank %.0f: ",
                        x, y, k->points[i].rank);
                if (hk)
                        ks_cli_fmt_xml(fp,
                                       ks_cli_fmt_key(hk, KS_RANK_TIP_KEY_CHARS,
                                                      buf, sizeof(buf)));
                fprintf(fp, " (%s messages)</title></circle>\n",
                        ks_cli_fmt_count((uint64_t)k->points[i].messages, b2,
                                         sizeof(b2)));
                if (hk && labelled < KS_RANK_NAMED && off < sizeof(names)) {
                        off += (size_t)snprintf(
                            names + off, sizeof(names) - off,
                            "%s#%zu %s (%s%s)", labelled ? ",  " : "", i + 1,
                            ks_cli_fmt_key(hk, KS_RANK_NAME_KEY_CHARS, buf,
                                           sizeof(buf)),
                            ks_cli_fmt_si(ks_rank_v(k, i), b2, sizeof(b2)),
                            k->seconds > 0 ? "/s" : "");
                        labelled++;
                }
        }
        if (labelled)
                ks_cli_svg_text(fp, a->x0, KS_RANK_BAND + KS_RANK_ROW - 3,
                                "start", "ks-keylabel", "busiest: %s", names);
}

void ks_cli_svg_rank(FILE *fp, const ks_cli_keyrank_t *k,
                     const json_t *hot_keys, int w, int h)
{
        /* the plot starts below the band's rows: the busiest keys' names,
         * then one per marker */
        ks_rank_axes_t a = {KS_RANK_MARGIN_LEFT,
                            KS_RANK_BAND + 3 * KS_RANK_ROW,
                            w - KS_RANK_MARGIN_LEFT - KS_RANK_MARGIN_RIGHT,
                            h - (KS_RANK_BAND + 3 * KS_RANK_ROW) -
                                KS_RANK_MARGIN_BOTTOM,
                            1,
                            0,
                            1};
        double         half_rank;

        ks_cli_svg_open(fp, w, h, "ks-rank",
                        "messages per key, busiest first, log-log");
        ks_rank_title(fp, k);
        if (!k->cnt) {
                ks_cli_svg_text(fp, w / 2.0, h / 2.0, "middle", "ks-note",
                                "no keyed messages");
                ks_cli_svg_close(fp);
                return;
        }
        half_rank = ks_rank_scale(k, &a);
        ks_rank_axes(fp, &a, k->seconds > 0);
        ks_rank_curves(fp, &a, k);
        ks_rank_markers(fp, &a, k, half_rank);
        ks_rank_hot_dots(fp, &a, k, hot_keys);
        ks_cli_svg_close(fp);
}
