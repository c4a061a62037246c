/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_stage.c
 * @brief The staging rings (ks_stage.h): several application threads
 *        staging at once (some exiting, their rings adopted by new
 *        threads), a drainer thread analysing meanwhile and reports taking
 *        snapshots, then a final drain: every message is counted exactly
 *        once. Also the fallbacks (long keys, full ring), a thread that
 *        outlives its stage, and acknowledgements checked before their
 *        explicit-partition message is drained. Run under TSan by tests/run
 *        (label `tsan`) and under ASan.
 */
#include <math.h>
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

#define WAVES 3
#define THREADS 4
#define PER_THREAD 30000
#define TOPICS 3

static ks_registry_t     reg;
static ks_config_t       conf;
static ks_topic_params_t params;
static ks_stage_t       *stage;
static atomic_int        stop_drainer;
/** ks_stage_set_overflow() of the stages setup() makes (0: none). */
static size_t overflow_bytes;
/** ks_stage_force_sampling() of the stages setup() makes: 0 (never sample:
 *  the tests of the rings' and the overflow's exact mechanics), or -1
 *  (sample under overload, as the plugin does). */
static int sampling;
/** The drainer thread's pause between its drains, in microseconds. */
static unsigned drainer_pause_us;
/** What test_threads() found in the overflows, and sampled out. */
static uint64_t threads_overflowed, threads_sampled_out;

static const char *topic_names[TOPICS] = {"a", "b", "c"};

static void setup(void)
{
        ks_test_registry_setup(&conf, &params, KS_TEST_KEY_SAMPLE, &reg);
        stage = ks_test_stage_new(overflow_bytes, sampling);
}

static void teardown(void)
{
        ks_stage_destroy(stage);
        ks_test_registry_teardown(&conf, &reg);
}

/** Key length of message @p i of a thread whose key would be @p kl: a
 *  60-byte key (through the ring's key arena) every 7th, an 1,100-byte
 *  key (longer than KS_STAGE_KEY_LONG_MAX: analysed inline) every 17th. */
static int key_len_of(int i, int kl)
{
        return i % 7 == 0 ? 60 : i % 17 == 0 ? 1100 : kl;
}

/* Message i of a thread: a NULL key every 10th, long keys (key_len_of()),
 * an explicit partition every 13th. */
static void *app_thread(void *arg)
{
        int  id = (int)(long)arg, i, created;
        char key[1200];

        for (i = 0; i < PER_THREAD; i++) {
                ks_topic_t *t = ks_registry_get(&reg, topic_names[i % TOPICS],
                                                &conf, &params, 1, &created);
                int     kl = snprintf(key, sizeof(key), "k%d-%d", id, i % 500);
                int32_t partition = i % 13 == 0 ? 1 : -1;
                int     long_kl   = key_len_of(i, kl);
                memset(key + kl, 'x', (size_t)(long_kl - kl));
                kl = long_kl;
                CU_ASSERT_PTR_NOT_NULL(t);
                if (!t)
                        continue;
                if (partition >= 0)
                        ks_topic_note_explicit(t);
                ks_stage_push(stage, t, i % 10 == 0 ? NULL : key,
                              i % 10 == 0 ? 0 : (size_t)kl, partition, 10);
                ks_topic_ack(t, key, (size_t)kl, i % 7, 0);
        }
        return NULL;
}

static void count_topic(ks_topic_t *t, void *opaque)
{
        ks_topic_snapshot_t s;
        uint64_t           *sum = opaque;

        if (ks_topic_snapshot(t, &s))
                return;
        /* exact, sampled or not: what the staged messages stand for taken
         * out, what they are and what was sampled out put in
         * (ks_topic_counters_t) */
        sum[0] += s.c.total.messages - s.c.sampled_weighted.messages +
                  s.c.sampled_in.messages + s.c.sampled_out.messages;
        sum[4] += s.c.unanalysed;
        sum[1] += s.c.null_keys;
        sum[2] += s.c.explicit_partition.messages;
        sum[3] += s.c.total.bytes - s.c.sampled_weighted.bytes +
                  s.c.sampled_in.bytes + s.c.sampled_out.bytes;
        sum[5] += s.c.sampled_in.messages + s.c.sampled_out.messages;
        ks_topic_snapshot_free(&s);
}

static void set_count(ks_topic_t *t, void *opaque)
{
        (void)opaque;
        ks_topic_set_partition_count(t, 4, KS_COUNT_METADATA, 1);
}

static void *drainer_thread(void *arg)
{
        unsigned n = 0;
        (void)arg;
        while (!atomic_load(&stop_drainer)) {
                uint64_t sum[6] = {0};
                ks_stage_drain(stage);
                if (++n % 64 == 0) /* a report now and then */
                        ks_registry_foreach(&reg, count_topic, sum);
                if (n == 8)
                        ks_registry_foreach(&reg, set_count, NULL);
                if (drainer_pause_us)
                        usleep(drainer_pause_us);
        }
        return NULL;
}

static void *one_message_thread(void *arg)
{
        int created;
        (void)arg;
        ks_stage_push(stage,
                      ks_registry_get(&reg, "a", &conf, &params, 1, &created),
                      "k", 1, -1, 1);
        return NULL;
}

static void test_threads(void)
{
        pthread_t        app[THREADS], drn;
        uint64_t         sum[6] = {0}, n, expect_null = 0, expect_explicit = 0;
        uint64_t         expect_bytes = 0;
        ks_stage_stats_t st, n_after;
        long             i, w;

        setup();
        atomic_store(&stop_drainer, 0);
        pthread_create(&drn, NULL, drainer_thread, NULL);
        /* waves of threads: later ones adopt the rings of exited ones */
        for (w = 0; w < WAVES; w++) {
                for (i = 0; i < THREADS; i++)
                        pthread_create(&app[i], NULL, app_thread,
                                       (void *)(w * THREADS + i));
                for (i = 0; i < THREADS; i++)
                        pthread_join(app[i], NULL);
        }
        atomic_store(&stop_drainer, 1);
        pthread_join(drn, NULL);
        ks_stage_drain(stage); /* as ks_client_destroy() does */
        CU_ASSERT(ks_stage_empty(stage));

        for (w = 0; w < WAVES * THREADS; w++)
                for (i = 0; i < PER_THREAD; i++) {
                        char key[64];
                        int  kl =
                            snprintf(key, sizeof(key), "k%ld-%ld", w, i % 500);
                        expect_null += i % 10 == 0;
                        expect_explicit += i % 13 == 0;
                        expect_bytes +=
                            10 + (i % 10 == 0
                                      ? 0
                                      : (uint64_t)key_len_of((int)i, kl));
                }
        n = (uint64_t)WAVES * THREADS * PER_THREAD;
        ks_registry_foreach(&reg, count_topic, sum);
        ks_stage_stats(stage, &st);
        /* every message analysed, or counted as not analysed when its
         * ring was full (the drainer starved, e.g. under TSan) */
        CU_ASSERT_EQUAL(sum[0] + sum[4], n);
        CU_ASSERT_EQUAL(sum[4], st.skipped_full);
        CU_ASSERT_EQUAL(sum[5] == 0, st.sampled_out == 0);
        if (!st.skipped_full && !sum[5]) {
                CU_ASSERT_EQUAL(sum[1], expect_null);
                CU_ASSERT_EQUAL(sum[2], expect_explicit);
                CU_ASSERT_EQUAL(sum[3], expect_bytes);
        } else if (!st.skipped_full) { /* sampled: estimates; bytes exact */
                CU_ASSERT_EQUAL(sum[3], expect_bytes);
        } else {
                CU_ASSERT(sum[3] <= expect_bytes);
        }
        threads_sampled_out = st.sampled_out;
        CU_ASSERT(sampling || !st.sampled_out);

        CU_ASSERT_EQUAL(st.staged + st.sampled_out + st.skipped_full +
                            st.inline_long + st.inline_noring,
                        n);
        CU_ASSERT_EQUAL(st.drained, st.staged);
        CU_ASSERT(st.inline_long > 0);
        CU_ASSERT(st.rings >= THREADS && st.rings <= WAVES * THREADS);
        CU_ASSERT(st.overflowed <= st.staged);
        threads_overflowed = st.overflowed;
        CU_ASSERT(overflow_bytes || !st.overflowed);
        /* the drainer freed every chunk but the last it read, per ring */
        CU_ASSERT(st.overflow_chunks <= (size_t)st.rings);

        /* every ring is drained and its thread gone: a new thread adopts
         * one instead of allocating */
        pthread_create(&app[0], NULL, one_message_thread, NULL);
        pthread_join(app[0], NULL);
        CU_ASSERT_EQUAL(ks_stage_drain(stage), 1);
        ks_stage_stats(stage, &n_after);
        CU_ASSERT_EQUAL(n_after.rings, st.rings);
        teardown();
}

/* The same with a drainer that pauses 2 ms between its drains and an
 * overflow of 3 chunks for all rings: threads switch to their overflow
 * and back while it drains, rings whose overflow is in use are not
 * adopted, and every message is still counted once. */
static void test_threads_overflow(void)
{
        overflow_bytes   = 3 * ((size_t)KS_STAGE_CHUNK_ENTRIES * 64 + 128);
        drainer_pause_us = 2000;
        test_threads();
        overflow_bytes   = 0;
        drainer_pause_us = 0;
        /* 4 threads stage 30,000 messages each in far less than 2 ms */
        CU_ASSERT(threads_overflowed > 0);
}

/* The same with threads sampling under overload (the plugin's setting):
 * a drainer pausing 2 ms, an overflow of 3 chunks; every message is
 * still counted exactly once, staged or sampled out, and the bytes are
 * exact (test_threads()'s checks). */
static void test_threads_sampling(void)
{
        sampling         = -1;
        overflow_bytes   = 3 * ((size_t)KS_STAGE_CHUNK_ENTRIES * 64 + 128);
        drainer_pause_us = 2000;
        test_threads();
        sampling         = 0;
        overflow_bytes   = 0;
        drainer_pause_us = 0;
        CU_ASSERT(threads_sampled_out > 0);
}

/** Exact messages of @p t's snapshot @p s: staged + sampled out. */
static uint64_t exact_messages(const ks_topic_snapshot_t *s)
{
        return s->c.total.messages - s->c.sampled_weighted.messages +
               s->c.sampled_in.messages + s->c.sampled_out.messages;
}

/* No drainer and no overflow, sampling under overload: once the ring is
 * three quarters full the thread stages fewer and fewer messages (its
 * backlog does not shrink), up to 1 in 2^KS_STAGE_SAMPLE_SHIFT_MAX, and
 * counts the others in the topic; once the drainer has emptied the ring
 * it stages every message again within KS_STAGE_SAMPLE_SHIFT_MAX looks,
 * and the figures of what follows are exact. */
static void test_sampling_adapts(void)
{
        ks_topic_t         *t;
        ks_stage_stats_t    st;
        ks_topic_snapshot_t s;
        int                 created, i;
        const int           n = 200000;
        uint64_t            before;

        sampling = -1;
        setup();
        sampling = 0;
        t        = ks_registry_get(&reg, "a", &conf, &params, 1, &created);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        for (i = 0; i < n; i++)
                ks_stage_push(stage, t, "key", 3, -1, 5);
        ks_stage_stats(stage, &st);
        CU_ASSERT_EQUAL(st.shift_max, KS_STAGE_SAMPLE_SHIFT_MAX);
        CU_ASSERT(st.sampled_out > (uint64_t)n / 2);
        CU_ASSERT_EQUAL(st.staged + st.sampled_out + st.skipped_full,
                        (uint64_t)n);
        /* before the ring filled, every message was staged */
        CU_ASSERT(st.staged >= KS_STAGE_RING_ENTRIES / 4 * 3);
        ks_stage_drain(stage);
        CU_ASSERT_EQUAL_FATAL(ks_topic_snapshot(t, &s), 0);
        CU_ASSERT_EQUAL(exact_messages(&s) + s.c.unanalysed, (uint64_t)n);
        CU_ASSERT_EQUAL(s.c.sampled_out.messages, st.sampled_out);
        CU_ASSERT_EQUAL(s.c.sampled_out.bytes, st.sampled_out * 8);
        CU_ASSERT_EQUAL(s.c.one_in_max, 1u << KS_STAGE_SAMPLE_SHIFT_MAX);
        CU_ASSERT(s.c.sampled_in.messages > 0);
        CU_ASSERT(s.c.sampled_weighted.messages > s.c.sampled_in.messages);
        CU_ASSERT(s.c.sampled_seconds >= 1);
        ks_topic_snapshot_free(&s);

        /* a drainer that keeps up: back to every message within
         * SHIFT_MAX looks */
        for (i = 0; i < (KS_STAGE_SAMPLE_SHIFT_MAX + 1) * KS_STAGE_SAMPLE_EVERY;
             i++) {
                ks_stage_push(stage, t, "key", 3, -1, 5);
                if (!((i + 1) % 512))
                        ks_stage_drain(stage);
        }
        ks_stage_stats(stage, &st);
        CU_ASSERT_EQUAL(st.shift_max, 0);
        before = st.sampled_out;
        for (i = 0; i < 1000; i++)
                ks_stage_push(stage, t, "key", 3, -1, 5);
        ks_stage_stats(stage, &st);
        CU_ASSERT_EQUAL(st.sampled_out, before);
        teardown();
}

/* Sampling forced at 1 in 16 (ks_stage_force_sampling()), a stream of
 * 20,000 keys: the counts are exact where they must be (messages and
 * bytes produced, per topic) and each estimate lies within three of its
 * standard errors: the messages, sqrt(sum N (N - 1)) (sampled_variance),
 * and each partition's load under the current and a proposed count,
 * sqrt(load x (N - 1)). */
static void test_sampling_forced(void)
{
        ks_topic_t         *t;
        ks_topic_snapshot_t s;
        int                 created, i, p, misses = 0, loads = 0;
        const int           n = 400000, keys = 20000;
        uint64_t cur[4] = {0}, prop[8] = {0}, x = 88172645463325252ULL;
        char     key[16];

        setup();
        ks_stage_force_sampling(stage, 4);
        t = ks_registry_get(&reg, "a", &conf, &params, 1, &created);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        ks_topic_set_partition_count(t, 4, KS_COUNT_METADATA, 1);
        for (i = 0; i < n; i++) {
                int kl;
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                /* skewed: half the messages on 1 % of the keys */
                kl = snprintf(key, sizeof(key), "%llu",
                              (unsigned long long)((x & 1)
                                                       ? (x >> 8) % (keys / 100)
                                                       : (x >> 8) % keys));
                ks_stage_push(stage, t, key, (size_t)kl, -1, 10);
                cur[ks_partition_of(
                    ks_partitioner_hash(params.partitioner, key, (size_t)kl),
                    4)]++;
                prop[ks_partition_of(
                    ks_partitioner_hash(params.partitioner, key, (size_t)kl),
                    8)]++;
                if (!((i + 1) % (KS_STAGE_RING_ENTRIES / 2)))
                        ks_stage_drain(stage);
        }
        ks_stage_drain(stage);
        CU_ASSERT_EQUAL_FATAL(ks_topic_snapshot(t, &s), 0);
        CU_ASSERT_EQUAL(exact_messages(&s), (uint64_t)n);
        CU_ASSERT_EQUAL(s.c.unanalysed, 0);
        CU_ASSERT_EQUAL(s.c.one_in_max, 16);
        CU_ASSERT(fabs((double)s.c.total.messages - n) <=
                  3 * sqrt((double)s.c.sampled_variance));
        for (p = 0; p < 4 && s.current; p++, loads++)
                misses += fabs((double)s.current[p].messages - (double)cur[p]) >
                          3 * sqrt((double)cur[p] * 15);
        for (p = 0; p < 8 && s.proposal_cnt && s.proposals[0].partitions;
             p++, loads++)
                misses +=
                    fabs((double)s.proposals[0].partitions[p].messages -
                         (double)prop[p]) > 3 * sqrt((double)prop[p] * 15);
        CU_ASSERT_EQUAL(loads, 12);
        /* 12 loads within 3 sigma: each misses with probability 0.3 % */
        CU_ASSERT(misses <= 1);
        ks_topic_snapshot_free(&s);
        teardown();
}

/* No drainer, an overflow of 2 chunks: a full ring's messages wait in the
 * overflow, in order after the ring's (long keys in the ring's key arena
 * too), until it is spent; then they are counted as not analysed. Once
 * the drainer has taken everything, the producing thread is back on its
 * ring, and the chunks are freed but the one last read. */
static void test_overflow(void)
{
        ks_topic_t         *t;
        ks_stage_stats_t    st;
        ks_topic_snapshot_t s;
        int                 created, i, extra = 100;
        const uint64_t      ovf   = 2 * KS_STAGE_CHUNK_ENTRIES;
        uint64_t            bytes = 0;
        char                key[64];

        overflow_bytes = 2 * ((size_t)KS_STAGE_CHUNK_ENTRIES * 64 + 128);
        setup();
        overflow_bytes = 0;
        t = ks_registry_get(&reg, "a", &conf, &params, 1, &created);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        for (i = 0; i < (int)(KS_STAGE_RING_ENTRIES + ovf) + extra; i++) {
                /* every 4th key of the overflow is a long one (60 bytes) */
                size_t kl = (size_t)snprintf(key, sizeof(key), "k%d", i % 97);
                if (i >= KS_STAGE_RING_ENTRIES && i % 4 == 0) {
                        memset(key + kl, 'x', 60 - kl);
                        kl = 60;
                }
                ks_stage_push(stage, t, key, kl, -1, 5);
                if (i < (int)(KS_STAGE_RING_ENTRIES + ovf))
                        bytes += kl + 5;
        }
        ks_stage_stats(stage, &st);
        CU_ASSERT_EQUAL(st.staged, KS_STAGE_RING_ENTRIES + ovf);
        CU_ASSERT_EQUAL(st.overflowed, ovf);
        CU_ASSERT_EQUAL(st.overflow_chunks, 2);
        CU_ASSERT_EQUAL(st.skipped_full, (uint64_t)extra);
        CU_ASSERT_EQUAL(st.inline_long, 0);
        CU_ASSERT_FALSE(ks_stage_empty(stage));
        CU_ASSERT_EQUAL(ks_stage_drain(stage), KS_STAGE_RING_ENTRIES + ovf);
        CU_ASSERT(ks_stage_empty(stage));
        ks_stage_stats(stage, &st);
        CU_ASSERT_EQUAL(st.overflow_chunks, 1);
        CU_ASSERT_EQUAL_FATAL(ks_topic_snapshot(t, &s), 0);
        CU_ASSERT_EQUAL(s.c.total.messages, KS_STAGE_RING_ENTRIES + ovf);
        CU_ASSERT_EQUAL(s.c.total.bytes, bytes);
        CU_ASSERT_EQUAL(s.c.unanalysed, (uint64_t)extra);
        ks_topic_snapshot_free(&s);

        /* drained: the ring again */
        ks_stage_push(stage, t, "k", 1, -1, 5);
        ks_stage_stats(stage, &st);
        CU_ASSERT_EQUAL(st.overflowed, ovf);
        CU_ASSERT_EQUAL(st.staged, KS_STAGE_RING_ENTRIES + ovf + 1);
        /* and the overflow again, within its budget: the chunk kept and
         * one more */
        for (i = 0; i < KS_STAGE_RING_ENTRIES + KS_STAGE_CHUNK_ENTRIES; i++)
                ks_stage_push(stage, t, "k", 1, -1, 5);
        ks_stage_stats(stage, &st);
        CU_ASSERT_EQUAL(st.skipped_full, (uint64_t)extra + 1);
        CU_ASSERT_EQUAL(st.overflow_chunks, 2);
        CU_ASSERT_EQUAL(ks_stage_drain(stage),
                        KS_STAGE_RING_ENTRIES + KS_STAGE_CHUNK_ENTRIES);
        CU_ASSERT(ks_stage_empty(stage));
        teardown();
}

/* No drainer: the ring fills, then on_send counts each further message as
 * not analysed (it never analyses on the producer's thread for that). */
static void test_full_ring(void)
{
        ks_topic_t         *t;
        ks_stage_stats_t    st;
        ks_topic_snapshot_t s;
        int                 created, i, extra = 100;

        setup();
        t = ks_registry_get(&reg, "a", &conf, &params, 1, &created);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        for (i = 0; i < KS_STAGE_RING_ENTRIES + extra; i++)
                ks_stage_push(stage, t, "key", 3, -1, 5);
        CU_ASSERT_PTR_EQUAL(ks_stage_last_topic(stage, "a"), t);
        CU_ASSERT_PTR_NULL(ks_stage_last_topic(stage, "b"));
        ks_stage_stats(stage, &st);
        CU_ASSERT_EQUAL(st.staged, KS_STAGE_RING_ENTRIES);
        CU_ASSERT_EQUAL(st.skipped_full, (uint64_t)extra);
        CU_ASSERT_FALSE(ks_stage_empty(stage));
        CU_ASSERT_EQUAL(ks_stage_drain(stage), KS_STAGE_RING_ENTRIES);
        CU_ASSERT(ks_stage_empty(stage));
        /* space again: staged, not inline */
        ks_stage_push(stage, t, "", 0, -1, 5);
        ks_stage_push(stage, t, NULL, 0, -1, 5);
        CU_ASSERT_EQUAL(ks_stage_drain(stage), 2);
        CU_ASSERT_EQUAL_FATAL(ks_topic_snapshot(t, &s), 0);
        CU_ASSERT_EQUAL(s.c.total.messages,
                        (uint64_t)KS_STAGE_RING_ENTRIES + 2);
        CU_ASSERT_EQUAL(s.c.unanalysed, (uint64_t)extra);
        CU_ASSERT_EQUAL(s.c.empty_keys, 1);
        CU_ASSERT_EQUAL(s.c.null_keys, 1);
        ks_topic_snapshot_free(&s);
        teardown();
}

/* A thread that produces to a stage destroyed before it exits, then to a
 * new stage (its slot is released), then exits (ASan: nothing leaks). */
static void *outliving_thread(void *arg)
{
        ks_topic_t *t;
        int         created, round;
        (void)arg;

        for (round = 0; round < 6; round++) {
                setup();
                t = ks_registry_get(&reg, "a", &conf, &params, 1, &created);
                ks_stage_push(stage, t, "k", 1, -1, 1);
                CU_ASSERT_EQUAL(ks_stage_drain(stage), 1);
                teardown();
        }
        return NULL;
}

static void test_outliving_thread(void)
{
        pthread_t th;

        pthread_create(&th, NULL, outliving_thread, NULL);
        pthread_join(th, NULL);
}

/* An acknowledgement checked while its explicit-partition message still
 * waits in a ring: ambiguous (unverified), not a mismatch. */
static void test_ack_before_drain(void)
{
        ks_topic_t         *t;
        ks_topic_snapshot_t s;
        int                 created, p;
        uint32_t            h;

        setup();
        t = ks_registry_get(&reg, "a", &conf, &params, 1, &created);
        ks_topic_set_partition_count(t, 4, KS_COUNT_METADATA, 1);
        h = ks_partitioner_hash(params.partitioner, "key", 3);
        p = (int)((ks_partition_of(h, 4) + 1) % 4); /* not the model's */
        ks_topic_note_explicit(t);
        ks_stage_push(stage, t, "key", 3, p, 5);
        ks_topic_ack(t, "key", 3, p, 0);
        CU_ASSERT_EQUAL_FATAL(ks_topic_snapshot(t, &s), 0);
        CU_ASSERT_EQUAL(s.c.ack_unverified, 1);
        CU_ASSERT_EQUAL(s.c.ack_mismatched, 0);
        CU_ASSERT_EQUAL(s.c.ack_pending, 0);
        CU_ASSERT_EQUAL(s.c.total.messages, 0); /* not drained yet */
        ks_topic_snapshot_free(&s);
        ks_stage_drain(stage);
        teardown();
}

static pthread_barrier_t staged_bar, release_bar;

/** Takes a ring of the stage, then holds it until released. */
static void *ring_holder(void *arg)
{
        ks_stage_push(stage, arg, "k", 1, -1, 1);
        pthread_barrier_wait(&staged_bar);
        pthread_barrier_wait(&release_bar);
        return NULL;
}

/* A thread that met KS_STAGE_TLS_SLOTS producers with no ring left to give
 * it (their rings all held by other threads), all destroyed since, still
 * gets a ring from the next producer: slots holding no ring are reused. */
static void test_ringless_slots(void)
{
        pthread_t        th[KS_STAGE_RINGS_MAX];
        ks_stage_stats_t st;
        ks_topic_t      *t;
        int              round, i, created;

        for (round = 0; round < KS_STAGE_TLS_SLOTS; round++) {
                setup();
                t = ks_registry_get(&reg, "a", &conf, &params, 1, &created);
                pthread_barrier_init(&staged_bar, NULL, KS_STAGE_RINGS_MAX + 1);
                pthread_barrier_init(&release_bar, NULL,
                                     KS_STAGE_RINGS_MAX + 1);
                for (i = 0; i < KS_STAGE_RINGS_MAX; i++)
                        pthread_create(&th[i], NULL, ring_holder, t);
                pthread_barrier_wait(&staged_bar);
                ks_stage_push(stage, t, "k", 1, -1, 1); /* no ring left */
                ks_stage_stats(stage, &st);
                CU_ASSERT_EQUAL(st.inline_noring, 1);
                pthread_barrier_wait(&release_bar);
                for (i = 0; i < KS_STAGE_RINGS_MAX; i++)
                        pthread_join(th[i], NULL);
                pthread_barrier_destroy(&staged_bar);
                pthread_barrier_destroy(&release_bar);
                ks_stage_drain(stage);
                teardown();
        }
        setup();
        t = ks_registry_get(&reg, "a", &conf, &params, 1, &created);
        ks_stage_push(stage, t, "k", 1, -1, 1);
        ks_stage_stats(stage, &st);
        CU_ASSERT_EQUAL(st.inline_noring, 0);
        CU_ASSERT_EQUAL(st.staged, 1);
        ks_stage_drain(stage);
        teardown();
}

/** As the plugin's drainer: ks_stage_collect(), then its pause. */
static void *collecting_thread(void *arg)
{
        int period_ms = KS_STAGE_BUSY_MS;
        (void)arg;
        while (!atomic_load(&stop_drainer))
                ks_stage_pause(stage, ks_stage_collect(stage), &period_ms);
        return NULL;
}

/** A drainer that stays in its idle pause (it collects nothing, so its
 *  period stays KS_STAGE_IDLE_MS) until stopped. */
static void *idle_pausing_thread(void *arg)
{
        int period_ms = KS_STAGE_IDLE_MS;
        (void)arg;
        while (!atomic_load(&stop_drainer))
                ks_stage_pause(stage, 0, &period_ms);
        return NULL;
}

/* A burst after an idle spell: the drainer, in a pause of up to
 * KS_STAGE_IDLE_MS, is woken by the producing thread once it has staged a
 * quarter of a ring, instead of sleeping while the ring fills. (A drainer
 * that keeps its idle period, so that the check does not depend on how
 * fast this build runs: under TSan a real drainer collects mid-burst and
 * its busy pause is not cut short, by design.) */
static void test_burst_wakes_drainer(void)
{
        ks_topic_t      *t;
        ks_stage_stats_t st;
        pthread_t        drainer;
        int              created, group, i;
        char             key[16];

        setup();
        t = ks_registry_get(&reg, "a", &conf, &params, 1, &created);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        atomic_store(&stop_drainer, 0);
        pthread_create(&drainer, NULL, idle_pausing_thread, NULL);
        for (group = 0; group < 4; group++) {
                usleep(2 * 1000);
                for (i = 0; i < KS_STAGE_RING_ENTRIES / 4; i++) {
                        int kl = snprintf(key, sizeof(key), "k%d", i);
                        ks_stage_push(stage, t, key, (size_t)kl, -1, 10);
                }
        }
        atomic_store(&stop_drainer, 1);
        pthread_join(drainer, NULL);
        ks_stage_stats(stage, &st);
        CU_ASSERT(st.wakes >= 1);
        CU_ASSERT_EQUAL(st.staged, KS_STAGE_RING_ENTRIES);
        CU_ASSERT_EQUAL(ks_stage_drain(stage), KS_STAGE_RING_ENTRIES);
        teardown();
}

/** Keys of 41 to KS_STAGE_KEY_LONG_MAX bytes go through the ring's key
 *  arena, which wraps as the drainer frees it, with the same figures as
 *  inline analysis; a full arena falls back to inline analysis, nothing
 *  lost. */
static void test_long_keys_arena(void)
{
        ks_topic_t         *t, *ref;
        ks_topic_snapshot_t s, sr;
        ks_stage_stats_t    st;
        char                key[256];
        int                 created, round, i, p, n = 0;

        setup();
        t   = ks_registry_get(&reg, "a", &conf, &params, 1, &created);
        ref = ks_registry_get(&reg, "ref", &conf, &params, 1, &created);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        CU_ASSERT_PTR_NOT_NULL_FATAL(ref);
        ks_topic_set_partition_count(t, 4, KS_COUNT_METADATA, 1);
        ks_topic_set_partition_count(ref, 4, KS_COUNT_METADATA, 1);
        /* 10 rounds of 400 keys of 41-200 bytes (~48 KiB a round, 8 times
         * the arena in all), drained between rounds */
        for (round = 0; round < 10; round++) {
                for (i = 0; i < 400; i++, n++) {
                        int kl = 41 + (n * 37) % 160;
                        memset(key, 'a' + n % 26, (size_t)kl);
                        snprintf(key, 12, "%011d", n % 997);
                        key[11] = '-';
                        ks_stage_push(stage, t, key, (size_t)kl, -1, 10);
                        ks_topic_record(ref, key, (size_t)kl, -1, 10);
                }
                ks_stage_drain(stage);
        }
        ks_stage_stats(stage, &st);
        CU_ASSERT_EQUAL(st.inline_long, 0);
        CU_ASSERT_EQUAL(st.staged, (uint64_t)n);
        CU_ASSERT_EQUAL_FATAL(ks_topic_snapshot(t, &s), 0);
        CU_ASSERT_EQUAL_FATAL(ks_topic_snapshot(ref, &sr), 0);
        CU_ASSERT_EQUAL(s.c.total.messages, (uint64_t)n);
        CU_ASSERT_EQUAL(s.c.total.bytes, sr.c.total.bytes);
        for (p = 0; p < 4; p++)
                CU_ASSERT_EQUAL(s.current[p].messages, sr.current[p].messages);
        CU_ASSERT_EQUAL(s.hot_cnt, sr.hot_cnt);
        if (s.hot_cnt && sr.hot_cnt)
                CU_ASSERT_EQUAL(s.hot[0].count, sr.hot[0].count);
        ks_topic_snapshot_free(&s);
        ks_topic_snapshot_free(&sr);

        /* no drainer: the arena fills, the rest is analysed inline */
        for (i = 0; i < 1000; i++) {
                memset(key, 'z', 100);
                snprintf(key, 12, "%011d", i);
                ks_stage_push(stage, t, key, 100, -1, 10);
        }
        ks_stage_stats(stage, &st);
        CU_ASSERT(st.inline_long > 0);
        CU_ASSERT(st.inline_long < 1000);
        CU_ASSERT_EQUAL(st.staged + st.inline_long, (uint64_t)n + 1000);
        ks_stage_drain(stage);
        CU_ASSERT_EQUAL_FATAL(ks_topic_snapshot(t, &s), 0);
        CU_ASSERT_EQUAL(s.c.total.messages, (uint64_t)n + 1000);
        ks_topic_snapshot_free(&s);
        teardown();
}

/* A flush asked of the drainer (as the reporter asks before a report):
 * every message staged before counts in its topic when ks_stage_sync()
 * returns, although its key's run would otherwise wait in the key table
 * for the next flush (KS_BATCH_FLUSH_MS). */
static void test_sync(void)
{
        ks_topic_t         *t;
        ks_topic_snapshot_t s;
        pthread_t           drainer;
        int                 created, round, i;
        char                key[16];

        setup();
        t = ks_registry_get(&reg, "a", &conf, &params, 1, &created);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        /* no consumer: nobody serves it */
        CU_ASSERT_EQUAL(ks_stage_sync(stage, 20, NULL), -1);
        ks_stage_drain(stage); /* a consumer serves it */
        atomic_store(&stop_drainer, 0);
        pthread_create(&drainer, NULL, collecting_thread, NULL);
        for (round = 1; round <= 5; round++) {
                for (i = 0; i < 1000; i++) {
                        int kl = snprintf(key, sizeof(key), "k%d", i % 50);
                        ks_stage_push(stage, t, key, (size_t)kl, -1, 5);
                }
                CU_ASSERT_EQUAL(ks_stage_sync(stage, 10000, NULL), 0);
                CU_ASSERT_EQUAL_FATAL(ks_topic_snapshot(t, &s), 0);
                CU_ASSERT_EQUAL(s.c.total.messages, (uint64_t)round * 1000);
                ks_topic_snapshot_free(&s);
        }
        atomic_store(&stop_drainer, 1);
        pthread_join(drainer, NULL);
        teardown();
}

void ks_test_register(void)
{
        KS_ADD_SUITE(
            "stage",
            {"threads stage, exit and adopt rings while a drainer "
             "analyses; every message counted once",
             test_threads},
            {"the same while threads switch to their overflow and back",
             test_threads_overflow},
            {"the same while threads sample under overload",
             test_threads_sampling},
            {"a thread's sampling follows its backlog, up and back",
             test_sampling_adapts},
            {"forced sampling: exact counts, estimates within 3 sigma",
             test_sampling_forced},
            {"a full ring falls back to inline analysis", test_full_ring},
            {"a full ring's messages wait in its overflow until it is "
             "spent",
             test_overflow},
            {"a thread outliving its stages", test_outliving_thread},
            {"an ack before its explicit message is drained",
             test_ack_before_drain},
            {"a flush asked of the drainer counts what was staged before",
             test_sync},
            {"slots holding no ring are reused", test_ringless_slots},
            {"a burst after an idle spell wakes the drainer",
             test_burst_wakes_drainer},
            {"long keys go through the ring's key arena",
             test_long_keys_arena});
}
