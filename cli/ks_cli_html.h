/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli_html.h
 * @brief The tables (ks_cli_html_tables.c) and the style sheet
 *        (ks_cli_html_css.c) of `keyshift html`, used by the page builder
 *        (ks_cli_html.c). Each table function writes one HTML fragment
 *        for one topic of a checked report, or nothing when the report
 *        has no such figures.
 */
#ifndef KS_CLI_HTML_H
#define KS_CLI_HTML_H

#include <stdio.h>

#include <jansson.h>

/** The page's CSS (ks_cli_html_css.c). */
extern const char ks_cli_html_css[];

/** @brief The busiest keys: rank, key, messages, share, partition now and
 *         at each proposed count (moves highlighted). At most @p max. */
void ks_cli_html_hot_keys(FILE *fp, const json_t *topic, int max);

/** @brief The warnings (@p arr: [{code, message}]) as a table. */
void ks_cli_html_warnings(FILE *fp, const json_t *arr, const char *caption);

/** @brief Other clients' partitioners, mixed key serializers and the
 *         delivery check, as small tables. */
void ks_cli_html_clients(FILE *fp, const json_t *topic);

/** @brief The sizing basis and advice, when the report has `sizing` (a
 *         later report version adds it); nothing otherwise. */
void ks_cli_html_sizing(FILE *fp, const json_t *topic);

#endif /* KS_CLI_HTML_H */
