/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli_show.h
 * @brief `keyshift show`: the sections of a topic's summary
 *        (ks_cli_show_sections.c), printed by ks_cli_show.c. Each prints
 *        one block for a topic of a checked report, or nothing when the
 *        report lacks its figures.
 */
#ifndef KS_CLI_SHOW_H
#define KS_CLI_SHOW_H

#include <stdint.h>

#include <jansson.h>

/** SGR sequences; empty strings without colour. */
typedef struct ks_cli_show_style {
        const char *bold, *dim, *red, *yellow, *green, *cyan, *off;
} ks_cli_show_style_t;

typedef struct ks_cli_show {
        const ks_cli_show_style_t *st;
        int                        hot_max;
} ks_cli_show_t;

/** @brief Keyed messages and distinct keys that move, per proposal. */
void ks_cli_show_moves(const ks_cli_show_t *s, const json_t *t, int32_t cur);

/** @brief Busiest / median partition now and at each proposal, from the
 *         per-partition arrays. */
void ks_cli_show_skew(const ks_cli_show_t *s, const json_t *t, int32_t cur);

/** @brief The hot keys with their partition now and at each proposal. */
void ks_cli_show_hot(const ks_cli_show_t *s, const json_t *t, int32_t cur);

/** @brief Mixed key serializers and other clients' partitioners. */
void ks_cli_show_clients(const ks_cli_show_t *s, const json_t *t, int32_t cur);

/** @brief The delivery check (acknowledged); nothing for a scan report. */
void ks_cli_show_acks(const ks_cli_show_t *s, const json_t *t);

/** @brief The `sizing` object, when the report has one. */
void ks_cli_show_sizing(const ks_cli_show_t *s, const json_t *t);

/** @brief The `rates` object, when the report has one. */
void ks_cli_show_rates(const json_t *r);

#endif /* KS_CLI_SHOW_H */
