/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_test_registry.h
 * @brief The fixture of the unit tests that produce into a registry of
 *        topics, through the staging rings or straight from threads
 *        (test_stage.c, test_stage_counts.c, test_stage_order.c,
 *        test_concurrency.c): a configuration, the parameters every topic
 *        gets, the registry and a stage. In ks_test_core, the part of the
 *        tests' support that links the core (ks_test_support does not).
 */
#ifndef KS_TEST_REGISTRY_H
#define KS_TEST_REGISTRY_H

#include <stddef.h>

#include "ks_config.h"
#include "ks_registry.h"
#include "ks_stage.h"
#include "ks_topic.h"

/** Keys in a topic's distinct-key sample, unless a test needs more. */
#define KS_TEST_KEY_SAMPLE 256

/**
 * @brief *conf := the default configuration; *params := what every topic
 *        of the test gets: murmur2_random, @p key_sample_size sampled
 *        keys, 256 mixed keys, 128 hot-key counters, flows of up to 1024
 *        cells, 1000 runs kept before the count; *reg := an empty
 *        registry (16 topics at the most). Fails the test, fatally, when
 *        the registry cannot be made.
 * @locality the test's thread, before it starts any other.
 */
void ks_test_registry_setup(ks_config_t *conf, ks_topic_params_t *params,
                            size_t key_sample_size, ks_registry_t *reg);

/** @brief Frees what ks_test_registry_setup() made (its topics with it). */
void ks_test_registry_teardown(ks_config_t *conf, ks_registry_t *reg);

/**
 * @returns a stage of 2 MiB of rings with an overflow of @p overflow_bytes
 *          (0: none; ks_stage_set_overflow()) and sampling forced at
 *          @p sampling (ks_stage_force_sampling(): 0 never samples, -1
 *          samples under overload as the plugin does). Fails the test,
 *          fatally, when it cannot be made. ks_stage_destroy() frees it.
 */
ks_stage_t *ks_test_stage_new(size_t overflow_bytes, int sampling);

#endif /* KS_TEST_REGISTRY_H */
