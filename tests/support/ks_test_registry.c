/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_test_registry.c
 * @brief The registry tests' fixture: see ks_test_registry.h.
 */
#include "ks_test_registry.h"

#include <string.h>

#include "ks_partitioner.h"
#include "ks_test.h"

/** Logical keys in a topic's mixed-key sample. */
#define KS_TEST_MIXED_SAMPLE 256
/** Space-Saving counters of a topic's hot keys. */
#define KS_TEST_TOPK_CAPACITY 128
/** Cells of the largest current x proposed flow matrix kept. */
#define KS_TEST_FLOW_MAX_CELLS 1024
/** Runs kept while a topic's partition count is not known. */
#define KS_TEST_PENDING_MAX 1000
/** Topics a registry holds at the most. */
#define KS_TEST_TOPICS_MAX 16
/** The stage's rings, in all: 2 MiB. */
#define KS_TEST_STAGE_BYTES ((size_t)2 << 20)

void ks_test_registry_setup(ks_config_t *conf, ks_topic_params_t *params,
                            size_t key_sample_size, ks_registry_t *reg)
{
        ks_config_init(conf);
        memset(params, 0, sizeof(*params));
        params->partitioner       = KS_PARTITIONER_MURMUR2_RANDOM;
        params->key_sample_size   = key_sample_size;
        params->mixed_sample_size = KS_TEST_MIXED_SAMPLE;
        params->topk_capacity     = KS_TEST_TOPK_CAPACITY;
        params->flow_max_cells    = KS_TEST_FLOW_MAX_CELLS;
        params->pending_max       = KS_TEST_PENDING_MAX;
        CU_ASSERT_EQUAL_FATAL(ks_registry_init(reg, KS_TEST_TOPICS_MAX), 0);
}

void ks_test_registry_teardown(ks_config_t *conf, ks_registry_t *reg)
{
        ks_registry_destroy(reg);
        ks_config_destroy(conf);
}

ks_stage_t *ks_test_stage_new(size_t overflow_bytes, int sampling)
{
        ks_stage_t *stage = ks_stage_new(KS_TEST_STAGE_BYTES);

        CU_ASSERT_PTR_NOT_NULL_FATAL(stage);
        ks_stage_set_overflow(stage, overflow_bytes);
        ks_stage_force_sampling(stage, sampling);
        return stage;
}
