/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file replay_report.c
 * @brief keyshift-replay's summary of keyshift's report (replay_report.h).
 */
#include "replay_report.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/**
 * @brief Expands the report path template the way the plugin does
 *        (core/config/ks_config.c ks_config_report_path()): %c = client.id with
 *        characters other than [A-Za-z0-9._-] as '_', %p = pid, %% = '%'.
 */
void replay_report_path(const char *tmpl, const char *client_id, long pid,
                        char *out, size_t size)
{
        size_t o = 0;

#define REPLAY_PUT(ch)                                                         \
        do {                                                                   \
                if (o + 1 < size)                                              \
                        out[o++] = (ch);                                       \
        } while (0)
        for (; *tmpl; tmpl++) {
                if (*tmpl != '%') {
                        REPLAY_PUT(*tmpl);
                } else if (tmpl[1] == 'c') {
                        const char *c;
                        for (c = client_id, tmpl++; *c; c++)
                                REPLAY_PUT((*c >= 'a' && *c <= 'z') ||
                                                   (*c >= 'A' && *c <= 'Z') ||
                                                   (*c >= '0' && *c <= '9') ||
                                                   *c == '.' || *c == '_' ||
                                                   *c == '-'
                                               ? *c
                                               : '_');
                } else if (tmpl[1] == 'p') {
                        char num[32], *c;
                        snprintf(num, sizeof(num), "%ld", pid);
                        for (c = num, tmpl++; *c; c++)
                                REPLAY_PUT(*c);
                } else {
                        REPLAY_PUT('%');
                        if (tmpl[1])
                                tmpl++; /* "%%" and "%x" both give '%' */
                }
        }
#undef REPLAY_PUT
        out[o] = '\0';
}

/** @returns the number at @p key of object @p obj (0 if absent). */
static double replay_num(const json_t *obj, const char *key)
{
        return json_number_value(json_object_get(obj, key));
}

/** @returns the string at @p key of object @p obj ("?" if absent). */
static const char *replay_str(const json_t *obj, const char *key)
{
        const char *s = json_string_value(json_object_get(obj, key));
        return s ? s : "?";
}

/** @brief Prints a per-partition load array as messages per partition
 *         (first 24) and the busiest partition's share. */
static void replay_print_load(const char *label, json_t *parts)
{
        json_t *msgs = json_object_get(parts, "messages"), *p;
        size_t  i, n = json_array_size(msgs);
        double  total = 0, max = 0;

        /* {messages: [...], bytes: [...]} by partition (report v2) */
        json_array_foreach(msgs, i, p)
        {
                double m = json_number_value(p);
                total += m;
                max = m > max ? m : max;
        }
        printf("    %-14s", label);
        json_array_foreach(msgs, i, p)
        {
                if (i == 24) {
                        printf(" ...");
                        break;
                }
                printf(" %.0f", json_number_value(p));
        }
        printf("  (busiest %.1f%%, fair %.1f%%)\n",
               total ? 100 * max / total : 0.0, n ? 100.0 / (double)n : 0.0);
}

/** @brief Prints one topic of the report: counts, moves, top 5 hot keys. */
static void replay_print_topic(const char *name, json_t *t)
{
        json_t     *pc = json_object_get(t, "partition_count"), *p, *v;
        json_t     *hot;
        int         current = (int)replay_num(pc, "current");
        const char *cnt;
        size_t      i;

        printf("  topic %s: %d partitions (%s), %.0f messages, partitioner "
               "%s\n",
               name, current, replay_str(pc, "source"),
               replay_num(t, "messages"),
               json_is_object(json_object_get(t, "partitioner"))
                   /* {name, source, ...} since the partitioner is learned */
                   ? replay_str(json_object_get(t, "partitioner"), "name")
                   : replay_str(t, "partitioner"));
        replay_print_load(
            "load now:",
            json_object_get(json_object_get(t, "current"), "partitions"));
        json_array_foreach(json_object_get(t, "proposals"), i, p)
        {
                json_t *moved = json_object_get(p, "moved");
                char    label[32];
                printf("    %d -> %d partitions: %.0f messages (%.1f%%) and "
                       "%.0f distinct keys (%.1f%%) move\n",
                       current, (int)replay_num(p, "partition_count"),
                       replay_num(moved, "messages"),
                       100 * replay_num(moved, "messages_fraction"),
                       replay_num(moved, "distinct_keys"),
                       100 * replay_num(moved, "distinct_keys_fraction"));
                snprintf(label, sizeof(label),
                         "load at %d:", (int)replay_num(p, "partition_count"));
                replay_print_load(label, json_object_get(p, "partitions"));
        }
        /* hot keys are columns in the file: key i is each column's [i] */
        hot = json_object_get(t, "hot_keys");
        for (i = 0; i < 5 && i < json_array_size(json_object_get(hot, "key"));
             i++) {
                json_t *mv = json_object_get(hot, "moves");
                json_t *k  = json_array_get(json_object_get(hot, "key"), i);
                printf("    hot key %-12s %8.0f msgs %6.2f%%  p%d",
                       json_is_string(k) ? json_string_value(k) : "?",
                       json_number_value(
                           json_array_get(json_object_get(hot, "messages"), i)),
                       100 * json_number_value(json_array_get(
                                 json_object_get(hot, "share"), i)),
                       (int)json_number_value(json_array_get(
                           json_object_get(hot, "partition_current"), i)));
                json_object_foreach(json_object_get(hot, "partition_proposed"),
                                    cnt, v)
                {
                        printf(" -> %s:p%d%s", cnt,
                               (int)json_number_value(json_array_get(v, i)),
                               json_is_true(
                                   json_array_get(json_object_get(mv, cnt), i))
                                   ? " (moves)"
                                   : "");
                }
                printf("\n");
        }
        json_array_foreach(json_object_get(t, "warnings"), i, p)
        {
                printf("    warning %s: %s\n", replay_str(p, "code"),
                       replay_str(p, "message"));
        }
}

/** @brief Prints the report's summary. @param since  when this run began:
 *         an older file is a previous run's, not ours.
 *  @returns 0, -1 if it is missing, stale or unreadable (printed). */
int replay_print_report(const char *path, time_t since)
{
        json_error_t jerr;
        json_t      *root, *t;
        const char  *name;
        struct stat  sb;
        size_t       i;

        if (stat(path, &sb) == 0 && sb.st_mtime < since) {
                printf("report: %s: stale (older than this run)\n", path);
                return -1;
        }
        if (!(root = json_load_file(path, 0, &jerr))) {
                printf("report: %s: none (%s)\n", path, jerr.text);
                return -1;
        }
        printf("report: %s (%s)\n", path, replay_str(root, "schema"));
        json_object_foreach(json_object_get(root, "topics"), name, t)
        {
                replay_print_topic(name, t);
        }
        json_array_foreach(json_object_get(root, "warnings"), i, t)
        {
                printf("  warning %s: %s\n", replay_str(t, "code"),
                       replay_str(t, "message"));
        }
        json_decref(root);
        return 0;
}
