/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_stage_order.c
 * @brief The drainer reads a ring's messages in the order they were
 *        staged, its overflow's after the ring's (ks_stage_drain.c): a
 *        long key sits in the ring's key arena, whose bytes the drainer
 *        frees in that order, so a message read out of order would read a
 *        key whose bytes the producing thread had already written again.
 *
 * A producing thread stages long keys (in the arena, and longer than the
 * key table's KS_BATCH_KEY_MAX: each is analysed at once) faster than a
 * drainer thread analyses them, so its ring fills while the drainer is
 * still reading it and the thread goes on in its overflow. Every message
 * must then count in the partition its own key hashes to (the oracle: the
 * partitioner's hash of the key the test staged, under the topic's
 * count), and the topic must have exactly the distinct keys staged. Also
 * run under TSan (label `tsan`).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "ks_config.h"
#include "ks_partitioner.h"
#include "ks_registry.h"
#include "ks_stage.h"
#include "ks_test.h"
#include "ks_test_registry.h"

#define MESSAGES 400000
#define KEYS 5000
#define COUNT 6
/** Keys in the topic's sample: more than the KEYS staged */
#define KEY_SAMPLE 8192
/** The stage's overflow, where the producing thread goes on: 64 MiB */
#define OVERFLOW_BYTES ((size_t)64 << 20)

static ks_registry_t     reg;
static ks_config_t       conf;
static ks_topic_params_t params;
static ks_stage_t       *stage;
static ks_topic_t       *topic;
static atomic_int        stop_drainer;

/** Key @p i: every other one a 44-byte key naming its index (in the
 *  ring's 64 KiB arena, so a key read from bytes written again for another
 *  message is another key), the others 9-byte MMSIs (in the entry). Without
 *  the order, 1 run in 2 of 20 rounds put messages in other partitions
 *  (measured). */
static size_t key_of(int i, char *key)
{
        int k = i % KEYS;
        if (i % 2)
                return (size_t)snprintf(key, 64, "%09d", 219000000 + k);
        return (size_t)snprintf(key, 64, "vessel-%06d-%06d-%06d-%06d-xxxxxx", k,
                                k * 7, k * 13, k * 17);
}

static void *producer(void *arg)
{
        char key[64];
        int  i;

        (void)arg;
        for (i = 0; i < MESSAGES; i++) {
                size_t kl = key_of(i, key);
                ks_stage_push(stage, topic, key, kl, -1, 20);
        }
        return NULL;
}

static void *drainer(void *arg)
{
        (void)arg;
        while (!atomic_load(&stop_drainer))
                ks_stage_collect(stage);
        return NULL;
}

static void test_long_keys_in_order(void)
{
        ks_topic_snapshot_t s;
        ks_stage_stats_t    st;
        uint64_t            want[COUNT] = {0};
        pthread_t           p, d;
        char                key[64];
        int                 created, i, round, bad = 0;

        for (i = 0; i < MESSAGES; i++) {
                size_t kl = key_of(i, key);
                want[ks_partition_of(
                    ks_partitioner_hash(KS_PARTITIONER_MURMUR2_RANDOM, key, kl),
                    COUNT)]++;
        }
        for (round = 0; round < 20; round++) {
                ks_test_registry_setup(&conf, &params, KEY_SAMPLE, &reg);
                stage = ks_test_stage_new(OVERFLOW_BYTES, 0);
                topic =
                    ks_registry_get(&reg, "ais", &conf, &params, 1, &created);
                CU_ASSERT_PTR_NOT_NULL_FATAL(topic);
                ks_topic_set_partition_count(topic, COUNT, KS_COUNT_METADATA,
                                             1700000000000);
                atomic_store(&stop_drainer, 0);
                pthread_create(&d, NULL, drainer, NULL);
                pthread_create(&p, NULL, producer, NULL);
                pthread_join(p, NULL);
                atomic_store(&stop_drainer, 1);
                pthread_join(d, NULL);
                ks_stage_drain(stage);
                ks_stage_stats(stage, &st);
                CU_ASSERT_EQUAL_FATAL(ks_topic_snapshot(topic, &s), 0);
                CU_ASSERT_EQUAL(s.c.total.messages, MESSAGES);
                for (i = 0; i < COUNT; i++)
                        bad += s.current[i].messages != want[i];
                CU_ASSERT_EQUAL(bad, 0);
                if (bad)
                        printf("\n    round %d: %d partitions off (%llu "
                               "messages waited in the overflow)",
                               round, bad, (unsigned long long)st.overflowed);
                ks_topic_snapshot_free(&s);
                ks_stage_destroy(stage);
                ks_test_registry_teardown(&conf, &reg);
                if (bad)
                        break;
        }
}

void ks_test_register(void)
{
        KS_ADD_SUITE("stage order",
                     {"long keys read in the order they were staged, ring "
                      "before overflow",
                      test_long_keys_in_order});
}
