/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli_svg.h
 * @brief The charts of `keyshift html`, written as inline SVG: plain
 *        markup, no script, no font or file fetched, so the page works
 *        offline and in any browser. Styling comes from the page's CSS
 *        classes (ks_cli_html.c); hover text from SVG <title> elements.
 */
#ifndef KS_CLI_SVG_H
#define KS_CLI_SVG_H

#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "ks_cli_stats.h"

/* ---- primitives (ks_cli_svg.c) ---------------------------------- */

/** @brief Opens an <svg> of @p w x @p h pixels with class "ks-chart
 *         @p cls" and an accessible label. */
void ks_cli_svg_open(FILE *fp, int w, int h, const char *cls,
                     const char *label);

void ks_cli_svg_close(FILE *fp);

/** @brief Writes a <text> element; the text is escaped. */
void ks_cli_svg_text(FILE *fp, double x, double y, const char *anchor,
                     const char *cls, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/**
 * @brief One legend entry at (@p x, @p y): a swatch drawn with class
 *        @p cls (@p shape 'l' a line, 'd' a dot, 's' a square) and its
 *        label. @returns the x where the next entry may start.
 */
double ks_cli_svg_legend(FILE *fp, double x, double y, char shape,
                         const char *cls, const char *label);

/** @returns a 1, 2 or 5 x 10^n step that cuts [0, max] into about
 *           @p ticks intervals. */
double ks_cli_svg_step(double max, int ticks);

/* ---- charts ------------------------------------------------------- */

/**
 * @brief Messages per partition at one count, as bars, with the median
 *        and the fair share (mean) as lines.
 *
 * Without @p moved_in (the current count) bars above 1.5 x the median
 * are amber, above 2.5 x (keyshift's skew limit) red. With it (a
 * proposed count) each bar is split into the traffic that stays in its
 * partition (blue) and the traffic that moves in from another (amber),
 * as in the flow heat map, and a bar above 2.5 x the median is outlined
 * red.
 * @param moved_in [l->count] messages arriving from another partition,
 *        or NULL.
 * @param ymax the y-axis top (shared by the charts of one topic so that
 *        the counts compare), 0: this chart's own busiest partition.
 */
void ks_cli_svg_partitions(FILE *fp, const char *title, const ks_cli_loads_t *l,
                           const uint64_t *moved_in, double ymax, int w, int h);

/**
 * @brief Messages per key by rank, log-log, busiest left, long tail
 *        right, with the cumulative share of keyed messages on the right
 *        axis; the busiest keys of @p hot_keys are marked and named.
 */
void ks_cli_svg_rank(FILE *fp, const ks_cli_keyrank_t *k,
                     const json_t *hot_keys, int w, int h);

/**
 * @brief The flow matrix current -> proposed as a heat map: rows are the
 *        partitions now, columns the partitions at the proposed count,
 *        a cell's shade its messages; cells where a key keeps its
 *        partition number are blue, cells where it moves amber.
 * @param flow @p rows x @p cols message counts, row-major (a proposal's
 *        flow as ks_report_flow_read() reads it).
 * @param max_w the widest the chart may be, in pixels.
 */
void ks_cli_svg_flow(FILE *fp, const uint64_t *flow, int32_t rows, int32_t cols,
                     int max_w);

#endif /* KS_CLI_SVG_H */
