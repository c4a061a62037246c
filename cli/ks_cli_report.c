/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli_report.c
 * @brief Reads a report file (ks_cli_report_check.c checks it) and the
 *        accessors the subcommands read checked members with.
 */
#include "ks_cli_report.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ks_report.h"

int ks_cli_report_load(const char *path, ks_cli_report_t *r, char *err,
                       size_t errsz)
{
        json_error_t jerr;
        FILE        *fp;
        int          is_stdin = !strcmp(path, "-");

        r->path = path;
        r->root = NULL;
        fp      = is_stdin ? stdin : fopen(path, "r");
        if (!fp) {
                snprintf(err, errsz, "%s: cannot open: %s", path,
                         strerror(errno));
                return -1;
        }
        r->root = json_loadf(fp, JSON_REJECT_DUPLICATES, &jerr);
        if (!is_stdin)
                fclose(fp);
        if (!r->root) {
                int eof = strstr(jerr.text, "end of file") ||
                          strstr(jerr.text, "premature end of input");
                snprintf(err, errsz,
                         "%s: not valid JSON at line %d, column %d: %s%s", path,
                         jerr.line, jerr.column, jerr.text,
                         !eof            ? ""
                         : jerr.position ? " (the file ends before the "
                                           "report does: truncated)"
                                         : " (the file is empty)");
                return -1;
        }
        if (ks_cli_report_check(r->root, path, err, errsz) ||
            ks_cli_report_rows(r->root, path, err, errsz)) {
                ks_cli_report_free(r);
                return -1;
        }
        return 0;
}

int ks_cli_report_rows(json_t *root, const char *path, char *err, size_t errsz)
{
        json_t     *t;
        const char *name;
        char        why[256];

        json_object_foreach(json_object_get(root, "topics"), name, t)
        {
                json_t *h = json_object_get(t, "hot_keys");
                json_t *rows;
                if (!json_is_object(h))
                        continue;
                if (!(rows = ks_report_hot_keys_rows(h, why, sizeof(why)))) {
                        snprintf(err, errsz, "%s: topics.%s.hot_keys: %s", path,
                                 name, *why ? why : "out of memory");
                        return -1;
                }
                json_object_set_new(t, "hot_keys", rows);
        }
        return 0;
}

void ks_cli_report_free(ks_cli_report_t *r)
{
        json_decref(r->root);
        r->root = NULL;
}

json_t *ks_cli_report_topics(const ks_cli_report_t *r)
{
        return json_object_get(r->root, "topics");
}

uint64_t ks_cli_u64(const json_t *obj, const char *key)
{
        json_t *j = json_object_get(obj, key);
        return json_is_integer(j) && json_integer_value(j) > 0
                   ? (uint64_t)json_integer_value(j)
                   : 0;
}

double ks_cli_num(const json_t *obj, const char *key)
{
        json_t *j = json_object_get(obj, key);
        return json_is_number(j) ? json_number_value(j) : 0.0;
}

const char *ks_cli_str(const json_t *obj, const char *key, const char *def)
{
        json_t *j = json_object_get(obj, key);
        return json_is_string(j) ? json_string_value(j) : def;
}

const char *ks_cli_topic_partitioner(const json_t *topic, const char *def)
{
        json_t *p = json_object_get(topic, "partitioner");

        if (json_is_object(p))
                p = json_object_get(p, "name");
        return json_is_string(p) ? json_string_value(p) : def;
}

int32_t ks_cli_topic_current(const json_t *topic)
{
        json_t *pc = json_object_get(topic, "partition_count");
        json_t *c  = json_object_get(pc, "current");
        return json_is_integer(c) ? (int32_t)json_integer_value(c) : 0;
}
