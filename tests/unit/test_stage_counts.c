/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_stage_counts.c
 * @brief A partition count from metadata (ks_stage_counts.c,
 *        ks_topic_announce_count()): deliveries are checked against it at
 *        once, before the drainer reaches it; the analysis takes it only
 *        after every message staged before it, so those are placed under
 *        the count they were produced with; ks_stage_drain() takes every
 *        count waiting. Also run under TSan (label `tsan`): a drainer
 *        thread serves the counts while the test queues them.
 *
 * The oracle for where a message belongs is the partitioner's own hash
 * and the count it was produced under, fixed by the test: messages before
 * a change go to hash % old count, after it to hash % new count.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ks_config.h"
#include "ks_partitioner.h"
#include "ks_registry.h"
#include "ks_stage.h"
#include "ks_test.h"
#include "ks_test_registry.h"

static ks_registry_t     reg;
static ks_config_t       conf;
static ks_topic_params_t params;
static ks_stage_t       *stage;

static void setup(void)
{
        ks_test_registry_setup(&conf, &params, KS_TEST_KEY_SAMPLE, &reg);
        stage = ks_test_stage_new(0, 0);
}

static void teardown(void)
{
        ks_stage_destroy(stage);
        ks_test_registry_teardown(&conf, &reg);
}

static ks_topic_t *topic(const char *name)
{
        int created;
        return ks_registry_get(&reg, name, &conf, &params, 1, &created);
}

static int key_of(int i, char *key, size_t size)
{
        return snprintf(key, size, "mmsi-%d", 219000000 + i);
}

static int32_t partition_of(int i, int32_t count)
{
        char key[32];
        int  kl = key_of(i, key, sizeof(key));
        return ks_partition_of(
            ks_partitioner_hash(params.partitioner, key, (size_t)kl), count);
}

/** Stages messages @p from .. @p to - 1 (key i, 10-byte values). */
static void push(ks_topic_t *t, int from, int to)
{
        char key[32];
        int  i;

        for (i = from; i < to; i++) {
                int kl = key_of(i, key, sizeof(key));
                ks_stage_push(stage, t, key, (size_t)kl, -1, 10);
        }
}

/** The messages of @p t's current window, per partition, must be those of
 *  keys @p from .. @p to - 1 placed under @p count. */
static void check_window(ks_topic_t *t, int32_t count, int from, int to)
{
        ks_topic_snapshot_t s;
        uint64_t            want[64] = {0};
        int32_t             p;
        int                 i;

        CU_ASSERT_FATAL(count <= 64);
        for (i = from; i < to; i++)
                want[partition_of(i, count)]++;
        CU_ASSERT_EQUAL_FATAL(ks_topic_snapshot(t, &s), 0);
        CU_ASSERT_EQUAL(s.partition_count, count);
        CU_ASSERT_EQUAL(s.window_total.messages, (uint64_t)(to - from));
        CU_ASSERT_EQUAL(s.c.unplaced, 0);
        for (p = 0; s.current && p < count; p++)
                CU_ASSERT_EQUAL(s.current[p].messages, want[p]);
        ks_topic_snapshot_free(&s);
}

/* The first count: deliveries matched at once; the messages staged before
 * it wait for the drainer, then all of them are placed under it. */
static void test_first_count(void)
{
        ks_topic_t         *t;
        ks_topic_snapshot_t s;
        char                key[32];
        int                 i;

        setup();
        t = topic("ais");
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        push(t, 0, 300);
        CU_ASSERT_EQUAL(ks_topic_announce_count(t, 6), 1);
        CU_ASSERT_EQUAL(ks_topic_announce_count(t, 6), 0); /* not newer */
        CU_ASSERT_EQUAL(
            ks_stage_count_later(stage, t, 6, KS_COUNT_METADATA, 1700000000000),
            0);
        /* not taken by the analysis yet: no drainer has run */
        CU_ASSERT_EQUAL(ks_topic_partition_count(t), 0);
        CU_ASSERT_EQUAL(ks_topic_announced_count(t), 6);
        CU_ASSERT_EQUAL(ks_stage_counts_waiting(stage), 1);
        /* deliveries before the drainer took the count: matched, none
         * left pending (they were pending until the analysis had it) */
        for (i = 0; i < 300; i++) {
                int kl = key_of(i, key, sizeof(key));
                ks_topic_ack(t, key, (size_t)kl, partition_of(i, 6), 0);
        }
        CU_ASSERT_EQUAL_FATAL(ks_topic_snapshot(t, &s), 0);
        CU_ASSERT_EQUAL(s.c.ack_matched, 300);
        CU_ASSERT_EQUAL(s.c.ack_pending, 0);
        CU_ASSERT_EQUAL(s.c.ack_mismatched, 0);
        ks_topic_snapshot_free(&s);
        /* the drainer's pass serves the flush, then takes the count */
        ks_stage_collect(stage);
        CU_ASSERT_EQUAL(ks_stage_counts_waiting(stage), 0);
        check_window(t, 6, 0, 300);
        teardown();
}

/* A change: what was staged before it is placed under the old count, what
 * comes after under the new one; a delivery under either is matched. */
static void test_change_waits_for_staged(void)
{
        ks_topic_t         *t;
        ks_topic_snapshot_t s;
        char                key[32];
        int                 kl;

        setup();
        t = topic("ais");
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        CU_ASSERT_EQUAL(ks_topic_set_partition_count(t, 6, KS_COUNT_METADATA,
                                                     1700000000000),
                        0);
        push(t, 0, 500);
        CU_ASSERT_EQUAL(ks_topic_announce_count(t, 12), 1);
        CU_ASSERT_EQUAL(ks_stage_count_later(stage, t, 12, KS_COUNT_METADATA,
                                             1700000001000),
                        0);
        /* deliveries of messages produced under 12 and of ones under 6 */
        kl = key_of(7, key, sizeof(key));
        ks_topic_ack(t, key, (size_t)kl, partition_of(7, 12), 0);
        ks_topic_ack(t, key, (size_t)kl, partition_of(7, 6), 0);
        CU_ASSERT_EQUAL_FATAL(ks_topic_snapshot(t, &s), 0);
        CU_ASSERT_EQUAL(s.c.ack_matched, 2);
        CU_ASSERT_EQUAL(s.c.ack_pending, 0);
        CU_ASSERT_EQUAL(s.partition_count, 6); /* the analysis's, still */
        ks_topic_snapshot_free(&s);
        /* the 500 staged before the change: placed under 6, in the window
         * the change then closes; the new window starts empty at 12 */
        ks_stage_collect(stage);
        CU_ASSERT_EQUAL_FATAL(ks_topic_snapshot(t, &s), 0);
        CU_ASSERT_EQUAL(s.partition_count, 12);
        CU_ASSERT_EQUAL(s.previous_count, 6);
        CU_ASSERT_EQUAL(s.window_total.messages, 0);
        CU_ASSERT_EQUAL(s.c.total.messages, 500);
        ks_topic_snapshot_free(&s);
        push(t, 500, 900);
        ks_stage_collect(stage);
        ks_stage_sync(stage, 0, NULL); /* nothing to wait for: no thread */
        ks_stage_drain(stage);
        check_window(t, 12, 500, 900);
        teardown();
}

/* ks_stage_drain() (the final report's) takes every count waiting, after
 * the messages staged before them. */
static void test_drain_takes_all(void)
{
        ks_topic_t *a, *b;

        setup();
        a = topic("a");
        b = topic("b");
        CU_ASSERT_PTR_NOT_NULL_FATAL(a);
        CU_ASSERT_PTR_NOT_NULL_FATAL(b);
        push(a, 0, 100);
        push(b, 0, 100);
        ks_topic_announce_count(a, 4);
        ks_stage_count_later(stage, a, 4, KS_COUNT_METADATA, 1700000000000);
        ks_topic_announce_count(b, 8);
        ks_stage_count_later(stage, b, 8, KS_COUNT_METADATA, 1700000000000);
        CU_ASSERT_EQUAL(ks_stage_counts_waiting(stage), 2);
        ks_stage_drain(stage);
        CU_ASSERT_EQUAL(ks_stage_counts_waiting(stage), 0);
        check_window(a, 4, 0, 100);
        check_window(b, 8, 0, 100);
        teardown();
}

static atomic_int stop_drainer;

static void *drainer(void *arg)
{
        int period_ms = KS_STAGE_BUSY_MS;
        (void)arg;
        while (!atomic_load(&stop_drainer))
                ks_stage_pause(stage, ks_stage_collect(stage), &period_ms);
        return NULL;
}

/* With a drainer thread (TSan's case): counts queued while it runs are
 * all taken, each after the messages staged before it. (Messages staged
 * after a count was queued but before the drainer's flush served it may
 * still be analysed under the older count, as with the reporter's former
 * wait: where librdkafka itself switched is not known to the minute
 * either; deliveries under either count are matched.) */
static void test_drainer_thread(void)
{
        ks_topic_t *t;
        pthread_t   th;
        int         i, waited;

        setup();
        t = topic("ais");
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        atomic_store(&stop_drainer, 0);
        pthread_create(&th, NULL, drainer, NULL);
        for (i = 1; i <= 8; i++) {
                /* 100 a count: what comes before the first count waits
                 * for it in at most pending_max (1,000) runs */
                push(t, (i - 1) * 100, i * 100);
                ks_topic_announce_count(t, i * 2);
                ks_stage_count_later(stage, t, i * 2, KS_COUNT_METADATA,
                                     1700000000000 + i);
        }
        for (waited = 0; ks_stage_counts_waiting(stage) && waited < 5000;
             waited++)
                usleep(1000);
        CU_ASSERT_EQUAL(ks_stage_counts_waiting(stage), 0);
        /* staged after the last count was taken: all under it */
        push(t, 800, 1800);
        CU_ASSERT_EQUAL(ks_stage_sync(stage, 5000, NULL), 0);
        atomic_store(&stop_drainer, 1);
        pthread_join(th, NULL);
        ks_stage_drain(stage);
        /* the last window: the messages after the last count, under it */
        check_window(t, 16, 800, 1800);
        teardown();
}

typedef struct {
        ks_topic_t *t;
        int         total, change_at, keys;
} stream_t;

/** A producing thread: message i has key i % keys; at message change_at
 *  the count 6 -> 12 is queued, as the reporter does on metadata. */
static void *producer(void *arg)
{
        const stream_t *st = arg;
        char            key[32];
        int             i;

        for (i = 0; i < st->total; i++) {
                int kl = key_of(i % st->keys, key, sizeof(key));
                if (i == st->change_at) {
                        ks_topic_announce_count(st->t, 12);
                        ks_stage_count_later(stage, st->t, 12,
                                             KS_COUNT_METADATA, 1700000001000);
                }
                ks_stage_push(stage, st->t, key, (size_t)kl, -1, 10);
        }
        return NULL;
}

/* A change while a producing thread keeps staging and the drainer's table
 * holds more keys than one flush slice: the messages the analysis takes
 * under the new count are a suffix of the produced ones, whatever the
 * drainer collected while it flushed for the change (the live producer of
 * broker.live_change, where a key's later messages were analysed under
 * the old count while earlier ones of other keys waited for the new). */
static void test_change_window_is_a_suffix(void)
{
        stream_t            st = {NULL, 600000, 300000, 20000};
        ks_topic_snapshot_t s;
        uint64_t            want[12] = {0};
        pthread_t           pd, pp;
        int                 i, cut, bad = 0;

        setup();
        st.t = topic("ais");
        CU_ASSERT_PTR_NOT_NULL_FATAL(st.t);
        CU_ASSERT_EQUAL(ks_topic_set_partition_count(st.t, 6, KS_COUNT_METADATA,
                                                     1700000000000),
                        0);
        /* room for the whole stream: none skipped, none analysed inline */
        ks_stage_set_overflow(stage, (size_t)256 << 20);
        atomic_store(&stop_drainer, 0);
        pthread_create(&pd, NULL, drainer, NULL);
        pthread_create(&pp, NULL, producer, &st);
        pthread_join(pp, NULL);
        atomic_store(&stop_drainer, 1);
        pthread_join(pd, NULL);
        ks_stage_drain(stage);
        CU_ASSERT_EQUAL_FATAL(ks_topic_snapshot(st.t, &s), 0);
        CU_ASSERT_EQUAL(s.partition_count, 12);
        CU_ASSERT_EQUAL(s.c.total.messages, (uint64_t)st.total);
        cut = st.total - (int)s.window_total.messages;
        CU_ASSERT(cut >= st.change_at);
        for (i = cut; i < st.total; i++)
                want[partition_of(i % st.keys, 12)]++;
        for (i = 0; s.current && i < 12; i++)
                bad += s.current[i].messages != want[i];
        if (bad)
                fprintf(stderr,
                        "window of %llu messages: %d of 12 partitions "
                        "differ from the last ones produced\n",
                        (unsigned long long)s.window_total.messages, bad);
        CU_ASSERT_EQUAL(bad, 0);
        ks_topic_snapshot_free(&s);
        teardown();
}

void ks_test_register(void)
{
        KS_ADD_SUITE(
            "stage counts",
            {"a first count: deliveries matched at once, the staged "
             "messages placed under it by the drainer",
             test_first_count},
            {"a change: staged messages under the old count, later ones "
             "under the new",
             test_change_waits_for_staged},
            {"the final drain takes every count waiting", test_drain_takes_all},
            {"a drainer thread takes counts queued while it runs",
             test_drainer_thread},
            {"a change under a producing thread: the new count's window is "
             "a suffix of what was produced",
             test_change_window_is_a_suffix});
}
