/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file replay_report.h
 * @brief What keyshift-replay prints of keyshift's report once it has
 *        produced (replay_report.c).
 */
#ifndef KS_REPLAY_REPORT_H
#define KS_REPLAY_REPORT_H

#include <stddef.h>
#include <time.h>

/** @brief Expands the report path template @p tmpl the way the plugin
 *         does: %c = @p client_id (characters other than [A-Za-z0-9._-]
 *         as '_'), %p = @p pid, %% = '%'. */
void replay_report_path(const char *tmpl, const char *client_id, long pid,
                        char *out, size_t size);

/** @brief Prints the report at @p path, if written since @p since: per
 *         topic the loads now and under each proposed count, the moves.
 *  @returns 0, or -1 when there is none (printed). */
int replay_print_report(const char *path, time_t since);

#endif /* KS_REPLAY_REPORT_H */
