/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_limits.c
 * @brief keyshift's limits on what a report may say, in one place
 *        (issue 30: inputs never decide an allocation): the sketch
 *        capacities the largest keyshift.* values give (ks_topic.h,
 *        KS_TOPIC_SAMPLE_MAX, KS_TOPIC_TOPK_MAX) are the bounds the
 *        published schema states (docs/keyshift.report.v2.schema.json),
 *        which the report readers enforce, and the property parsers
 *        accept exactly up to them. The least capacity a reader accepts
 *        is 1 (a budget never shrinks a sketch below 64, but tests build
 *        topics with fewer; 0 holds nothing).
 *
 * Oracle: the schema file itself (read with jansson) and the property
 * parser (ks_config_set()) giving the largest value and refusing one more.
 */
#include "ks_test.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "ks_config.h"
#include "ks_topic.h"

/** @returns member @p key (minimum or maximum) of the schema's
 *           $defs.@p def.properties.@p prop, or -1. */
static long long bound(const char *def, const char *prop, const char *key)
{
        static json_t *schema;
        json_error_t   e;
        json_t        *j;

        if (!schema) {
                schema = json_load_file(
                    ks_test_shared_path(
                        "../../docs/keyshift.report.v2.schema.json"),
                    0, &e);
                CU_ASSERT_PTR_NOT_NULL_FATAL(schema);
        }
        j = json_object_get(
            json_object_get(
                json_object_get(
                    json_object_get(json_object_get(schema, "$defs"), def),
                    "properties"),
                prop),
            key);
        return json_is_integer(j) ? json_integer_value(j) : -1;
}

static void test_schema_states_the_limits(void)
{
        CU_ASSERT_EQUAL(bound("sketch_key_sample", "capacity", "minimum"), 1);
        CU_ASSERT_EQUAL(bound("sketch_key_sample", "capacity", "maximum"),
                        (long long)KS_TOPIC_SAMPLE_MAX);
        CU_ASSERT_EQUAL(bound("sketch_hot_keys", "capacity", "minimum"), 1);
        CU_ASSERT_EQUAL(bound("sketch_hot_keys", "capacity", "maximum"),
                        (long long)KS_TOPIC_TOPK_MAX);
        CU_ASSERT_EQUAL(bound("mixed_keys", "sample_capacity", "minimum"), 1);
        CU_ASSERT_EQUAL(bound("mixed_keys", "sample_capacity", "maximum"),
                        (long long)KS_TOPIC_SAMPLE_MAX);
}

/** @brief The largest values of the properties give the largest
 *         capacities, and one more is refused. */
static void test_properties_reach_the_limits(void)
{
        ks_config_t       c;
        ks_topic_params_t p = {0};
        char              err[512], v[32];

        CU_ASSERT_EQUAL_FATAL(ks_config_init(&c), 0);
        snprintf(v, sizeof(v), "%d", KS_CONFIG_HOT_KEYS_MAX);
        CU_ASSERT_EQUAL(
            ks_config_set(&c, "keyshift.hot.keys", v, err, sizeof(err)),
            KS_CONFIG_OK);
        snprintf(v, sizeof(v), "%zu", KS_TOPIC_SAMPLE_MAX);
        CU_ASSERT_EQUAL(
            ks_config_set(&c, "keyshift.key.sample.size", v, err, sizeof(err)),
            KS_CONFIG_OK);
        CU_ASSERT_EQUAL(ks_config_set(&c, "keyshift.mixed.sample.size", v, err,
                                      sizeof(err)),
                        KS_CONFIG_OK);
        ks_topic_params_from_config(&p, &c);
        CU_ASSERT_EQUAL(p.topk_capacity, KS_TOPIC_TOPK_MAX);
        CU_ASSERT_EQUAL(p.key_sample_size, KS_TOPIC_SAMPLE_MAX);
        CU_ASSERT_EQUAL(p.mixed_sample_size, KS_TOPIC_SAMPLE_MAX);
        snprintf(v, sizeof(v), "%d", KS_CONFIG_HOT_KEYS_MAX + 1);
        CU_ASSERT_EQUAL(
            ks_config_set(&c, "keyshift.hot.keys", v, err, sizeof(err)),
            KS_CONFIG_INVALID);
        snprintf(v, sizeof(v), "%zu", KS_TOPIC_SAMPLE_MAX + 1);
        CU_ASSERT_EQUAL(
            ks_config_set(&c, "keyshift.key.sample.size", v, err, sizeof(err)),
            KS_CONFIG_INVALID);
        CU_ASSERT_EQUAL(ks_config_set(&c, "keyshift.mixed.sample.size", v, err,
                                      sizeof(err)),
                        KS_CONFIG_INVALID);
        ks_config_destroy(&c);
}

void ks_test_register(void)
{
        KS_ADD_SUITE("limits",
                     {"the schema states the sketch limits",
                      test_schema_states_the_limits},
                     {"the properties reach the limits",
                      test_properties_reach_the_limits});
}
