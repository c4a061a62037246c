/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli_report_fields.c
 * @brief Members of a report's objects read as counts, numbers and strings
 *        (ks_cli_report_fields.h).
 */
#include "ks_cli_report_fields.h"

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
