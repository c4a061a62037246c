/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli_svg_flow.c
 * @brief The flow matrix as a heat map: row r = partition r now, column c
 *        = partition c at the proposed count, shade = messages that go
 *        from r to c. A key keeps its partition exactly when c == r, so
 *        the blue cells are traffic that stays and the amber ones traffic
 *        that moves (and loses its order at the switch). The column on
 *        the right says which share of each partition's traffic moves.
 *
 * Shade is the square root of the cell's share of the busiest cell, so
 * small flows stay visible next to large ones. Empty cells are not drawn
 * (a doubling fills only two cells a row), which keeps a 512-column
 * matrix small.
 */
#include <math.h>

#include "ks_cli_fmt.h"
#include "ks_cli_svg.h"

/** The plot's left margin (row labels), top (title, legend, column
 *  labels) and right (the column of what moves), px. */
#define KS_FLOW_X0 58.0
#define KS_FLOW_Y0 80.0
#define KS_FLOW_RIGHT 72.0
/** A cell's side (px): at most, so that a small matrix is not a poster;
 *  at least, so that every cell shows. */
#define KS_FLOW_CELL_MAX 44
#define KS_FLOW_CELL_MIN 2
/** The matrix's height at most (px), however many rows. */
#define KS_FLOW_HEIGHT_MAX 640
/** Room under the matrix (px). */
#define KS_FLOW_BOTTOM 16
/** Labels need this much (px): a row's height, a digit's width. */
#define KS_FLOW_ROW_LABEL_PX 12
#define KS_FLOW_DIGIT_PX 7.0
/** Cells this big (px) carry their count; cells smaller than
 *  KS_FLOW_SMALL_CELL get a higher least opacity, to stay visible. */
#define KS_FLOW_CELL_TEXT_MIN 34
#define KS_FLOW_SMALL_CELL 6

/** The heat map's geometry. */
typedef struct ks_flow_layout {
        double  cs;      /**< a cell's side, px */
        double  vmax;    /**< the busiest cell's messages */
        int32_t every_r; /**< a label every this many rows */
        int32_t every_c; /**< ... and columns */
} ks_flow_layout_t;

/** @brief Sets @p L for a @p rows x @p cols matrix @p flow within
 *         @p max_w px: the cell size, the busiest cell, the label steps
 *         (every 2^k-th row and column, far enough apart to read). */
static void ks_flow_layout(ks_flow_layout_t *L, const uint64_t *flow,
                           int32_t rows, int32_t cols, int max_w)
{
        int32_t r, c;

        L->cs = floor((max_w - KS_FLOW_X0 - KS_FLOW_RIGHT) / cols);
        if (L->cs > KS_FLOW_CELL_MAX)
                L->cs = KS_FLOW_CELL_MAX;
        if (rows * L->cs > KS_FLOW_HEIGHT_MAX)
                L->cs = floor((double)KS_FLOW_HEIGHT_MAX / rows);
        if (L->cs < KS_FLOW_CELL_MIN)
                L->cs = KS_FLOW_CELL_MIN;
        L->vmax = 0;
        for (r = 0; r < rows; r++)
                for (c = 0; c < cols; c++)
                        L->vmax =
                            fmax(L->vmax, (double)flow[(size_t)r * cols + c]);
        for (L->every_r = 1; L->every_r * L->cs < KS_FLOW_ROW_LABEL_PX;
             L->every_r *= 2)
                ;
        for (L->every_c = 1;
             L->every_c * L->cs < KS_FLOW_DIGIT_PX * (cols > 1000  ? 5
                                                      : cols > 100 ? 4
                                                      : cols > 10  ? 3
                                                                   : 2);
             L->every_c *= 2)
                ;
}

/** @brief The title, legend, axis titles, background and column labels
 *         of a @p rows x @p cols heat map laid out by @p L. */
static void ks_flow_frame(FILE *fp, const ks_flow_layout_t *L, int32_t rows,
                          int32_t cols)
{
        const double cs = L->cs;
        double       lx;
        int32_t      c;

        ks_cli_svg_text(
            fp, 8, 18, "start", "ks-title",
            "Where each partition's messages go at %d: ", (int)cols);
        lx =
            ks_cli_svg_legend(fp, 6, 38, 's', "ks-stay", "keeps its partition");
        ks_cli_svg_legend(fp, lx, 38, 's', "ks-move",
                          "moves (per-key order breaks at the "
                          "switch)");
        ks_cli_svg_text(fp, KS_FLOW_X0 + cols * cs / 2, KS_FLOW_Y0 - 20,
                        "middle", "ks-axis", "partition at %d \u2192",
                        (int)cols);
        ks_cli_svg_text(fp, 14, KS_FLOW_Y0 + rows * cs / 2, "middle",
                        "ks-axis-v", "partition now \u2193");
        ks_cli_svg_text(fp, KS_FLOW_X0 + cols * cs + KS_FLOW_RIGHT / 2,
                        KS_FLOW_Y0 - 6, "middle", "ks-tick", "moves");
        fprintf(fp,
                "<rect class=\"ks-flow-bg\" x=\"%.1f\" y=\"%.1f\" "
                "width=\"%.1f\" height=\"%.1f\"/>\n",
                KS_FLOW_X0, KS_FLOW_Y0, cols * cs, rows * cs);
        for (c = 0; c < cols; c += L->every_c)
                ks_cli_svg_text(fp, KS_FLOW_X0 + (c + 0.5) * cs, KS_FLOW_Y0 - 5,
                                "middle", "ks-tick", "%d", (int)c);
}

/** @brief Row @p r of the heat map (@p row: its @p cols cells): its
 *         label, a shaded cell per flow, and the share that moves. */
static void ks_flow_row(FILE *fp, const ks_flow_layout_t *L,
                        const uint64_t *row, int32_t r, int32_t cols)
{
        const double cs    = L->cs;
        double       total = 0, moved = 0;
        char         buf[64], b2[32];
        int32_t      c;

        if (r % L->every_r == 0)
                ks_cli_svg_text(fp, KS_FLOW_X0 - 6,
                                KS_FLOW_Y0 + (r + 0.5) * cs + 4, "end",
                                "ks-tick", "%d", (int)r);
        for (c = 0; c < cols; c++) {
                double v = (double)row[c];
                double t = L->vmax > 0 ? sqrt(v / L->vmax) : 0;
                total += v;
                moved += c != r ? v : 0;
                if (v <= 0)
                        continue;
                fprintf(fp,
                        "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" "
                        "width=\"%.1f\" height=\"%.1f\" "
                        "fill-opacity=\"%.3f\"><title>%d \u2192 %d: "
                        "%s messages%s</title></rect>\n",
                        c == r ? "ks-stay" : "ks-move", KS_FLOW_X0 + c * cs,
                        KS_FLOW_Y0 + r * cs, cs, cs,
                        cs < KS_FLOW_SMALL_CELL ? 0.4 + 0.6 * t
                                                : 0.15 + 0.85 * t,
                        (int)r, (int)c,
                        ks_cli_fmt_count((uint64_t)v, buf, sizeof(buf)),
                        c == r ? " (stay)" : " (move)");
                if (cs >= KS_FLOW_CELL_TEXT_MIN)
                        ks_cli_svg_text(
                            fp, KS_FLOW_X0 + (c + 0.5) * cs,
                            KS_FLOW_Y0 + (r + 0.5) * cs + 4, "middle",
                            t > 0.6 ? "ks-cell ks-cell-dark" : "ks-cell", "%s",
                            ks_cli_fmt_si(v, b2, sizeof(b2)));
        }
        if (r % L->every_r == 0 || cs >= KS_FLOW_ROW_LABEL_PX)
                ks_cli_svg_text(fp, KS_FLOW_X0 + cols * cs + KS_FLOW_RIGHT / 2,
                                KS_FLOW_Y0 + (r + 0.5) * cs + 4, "middle",
                                moved > 0 ? "ks-tick ks-moves" : "ks-tick",
                                "%s",
                                ks_cli_fmt_pct(total > 0 ? moved / total : 0,
                                               buf, sizeof(buf)));
}

void ks_cli_svg_flow(FILE *fp, const uint64_t *flow, int32_t rows, int32_t cols,
                     int max_w)
{
        ks_flow_layout_t L;
        char             buf[64];
        int32_t          r;
        int              w, h;

        ks_flow_layout(&L, flow, rows, cols, max_w);
        w = (int)(KS_FLOW_X0 + cols * L.cs + KS_FLOW_RIGHT);
        h = (int)(KS_FLOW_Y0 + rows * L.cs + KS_FLOW_BOTTOM);
        snprintf(buf, sizeof(buf), "flow of messages from %d to %d partitions",
                 (int)rows, (int)cols);
        ks_cli_svg_open(fp, w, h, "ks-flow", buf);
        ks_flow_frame(fp, &L, rows, cols);
        for (r = 0; r < rows; r++)
                ks_flow_row(fp, &L, flow + (size_t)r * cols, r, cols);
        ks_cli_svg_close(fp);
}
