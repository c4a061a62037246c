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

void ks_cli_svg_flow(FILE *fp, const uint64_t *flow, int32_t rows, int32_t cols,
                     int max_w)
{
        const double x0 = 58, y0 = 80, right = 72;
        double       cs, vmax = 0;
        int32_t      r, c, every_r, every_c;
        char         buf[64], b2[32];
        int          w, h;

        cs = floor((max_w - x0 - right) / cols);
        if (cs > 44)
                cs = 44;
        if (rows * cs > 640)
                cs = floor(640.0 / rows);
        if (cs < 2)
                cs = 2;
        w = (int)(x0 + cols * cs + right);
        h = (int)(y0 + rows * cs + 16);
        for (r = 0; r < rows; r++)
                for (c = 0; c < cols; c++)
                        vmax = fmax(vmax, (double)flow[(size_t)r * cols + c]);
        snprintf(buf, sizeof(buf), "flow of messages from %d to %d partitions",
                 (int)rows, (int)cols);
        ks_cli_svg_open(fp, w, h, "ks-flow", buf);
        ks_cli_svg_text(
            fp, 8, 18, "start", "ks-title",
            "Where each partition's messages go at %d: ", (int)cols);
        {
                double lx = ks_cli_svg_legend(fp, 6, 38, 's', "ks-stay",
                                              "keeps its partition");
                ks_cli_svg_legend(fp, lx, 38, 's', "ks-move",
                                  "moves (per-key order breaks at the "
                                  "switch)");
        }
        ks_cli_svg_text(fp, x0 + cols * cs / 2, y0 - 20, "middle", "ks-axis",
                        "partition at %d \u2192", (int)cols);
        ks_cli_svg_text(fp, 14, y0 + rows * cs / 2, "middle", "ks-axis-v",
                        "partition now \u2193");
        ks_cli_svg_text(fp, x0 + cols * cs + right / 2, y0 - 6, "middle",
                        "ks-tick", "moves");
        fprintf(fp,
                "<rect class=\"ks-flow-bg\" x=\"%.1f\" y=\"%.1f\" "
                "width=\"%.1f\" height=\"%.1f\"/>\n",
                x0, y0, cols * cs, rows * cs);
        /* label every 2^k-th row and column, far enough apart to read:
         * 12 px a row, 7 px a digit a column */
        for (every_r = 1; every_r * cs < 12; every_r *= 2)
                ;
        for (every_c = 1; every_c * cs < 7.0 * (cols > 1000  ? 5
                                                : cols > 100 ? 4
                                                : cols > 10  ? 3
                                                             : 2);
             every_c *= 2)
                ;
        for (c = 0; c < cols; c += every_c)
                ks_cli_svg_text(fp, x0 + (c + 0.5) * cs, y0 - 5, "middle",
                                "ks-tick", "%d", (int)c);
        for (r = 0; r < rows; r++) {
                const uint64_t *row   = flow + (size_t)r * cols;
                double          total = 0, moved = 0;
                if (r % every_r == 0)
                        ks_cli_svg_text(fp, x0 - 6, y0 + (r + 0.5) * cs + 4,
                                        "end", "ks-tick", "%d", (int)r);
                for (c = 0; c < cols; c++) {
                        double v = (double)row[c];
                        double t = vmax > 0 ? sqrt(v / vmax) : 0;
                        total += v;
                        moved += c != r ? v : 0;
                        if (v <= 0)
                                continue;
                        fprintf(fp,
                                "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" "
                                "width=\"%.1f\" height=\"%.1f\" "
                                "fill-opacity=\"%.3f\"><title>%d \u2192 %d: "
                                "%s messages%s</title></rect>\n",
                                c == r ? "ks-stay" : "ks-move", x0 + c * cs,
                                y0 + r * cs, cs, cs,
                                cs < 6 ? 0.4 + 0.6 * t : 0.15 + 0.85 * t,
                                (int)r, (int)c,
                                ks_cli_fmt_count((uint64_t)v, buf, sizeof(buf)),
                                c == r ? " (stay)" : " (move)");
                        if (cs >= 34)
                                ks_cli_svg_text(
                                    fp, x0 + (c + 0.5) * cs,
                                    y0 + (r + 0.5) * cs + 4, "middle",
                                    t > 0.6 ? "ks-cell ks-cell-dark"
                                            : "ks-cell",
                                    "%s", ks_cli_fmt_si(v, b2, sizeof(b2)));
                }
                if (r % every_r == 0 || cs >= 12)
                        ks_cli_svg_text(
                            fp, x0 + cols * cs + right / 2,
                            y0 + (r + 0.5) * cs + 4, "middle",
                            moved > 0 ? "ks-tick ks-moves" : "ks-tick", "%s",
                            ks_cli_fmt_pct(total > 0 ? moved / total : 0, buf,
                                           sizeof(buf)));
        }
        ks_cli_svg_close(fp);
}
