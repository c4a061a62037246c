/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_topic_count.c
 * @brief A topic's partition counts and cluster facts, from metadata or
 *        configuration: a new count announced checks the deliveries at
 *        once (ks_topic_ack.c), and taken by the analysis opens a new
 *        window (ks_topic_place.c) where the runs kept for it are placed
 *        (ks_topic_pending.c).
 */
#include "ks_topic.h"

#include <pthread.h>
#include <stdatomic.h>

#include "ks_clock.h"
#include "ks_learn.h"
#include "ks_topic_impl.h"

const char *ks_count_source_name(ks_count_source_t s)
{
        switch (s) {
        case KS_COUNT_METADATA:
                return "metadata";
        case KS_COUNT_CONFIG:
                return "config";
        default:
                return "unknown";
        }
}

int ks_topic_count_known(const ks_topic_t *t)
{
        return atomic_load_explicit(&t->count_known, memory_order_relaxed);
}

/** @brief ks_topic_set_partition_count() under the lock.
 *  @locks t->lock held. */
static int set_count_locked(ks_topic_t *t, int32_t count,
                            ks_count_source_t source, int64_t now_ms)
{
        int changed = 0, placed;

        t->count_source = source;
        if (count != t->partition_count) {
                if (t->partition_count) {
                        changed                = 1;
                        t->previous_count      = t->partition_count;
                        t->count_changed_at_ms = now_ms;
                        t->analysis_since_ms   = now_ms;
                        t->analysis_since_mono = ks_clock_mono_ms();
                }
                ks_topic_window_free(t);
                t->partition_count = count;
                ks_topic_ack_count_publish(t);
                atomic_store_explicit(&t->count_known, 1, memory_order_relaxed);
                placed = ks_topic_window_open(t, count) == 0;
                if (placed) /* the first count: what waited for it joins */
                        t->window_total = t->waiting_spread;
                ks_topic_pending_settle(t, placed);
                t->waiting_spread = (ks_load_t){0, 0};
        }
        if (!t->announced_count) /* a count no answer gave (a test's) */
                t->announced_count = count;
        ks_topic_ack_count_publish(t);
        return changed;
}

/** @brief ks_topic_announce_count() under the lock, for @p t alone.
 *  @locks t->lock held. */
static void announce_locked(ks_topic_t *t, int32_t count)
{
        t->announced_count = count;
        ks_topic_verify_suspects(t, 0);
}

int ks_topic_announce_count(ks_topic_t *t, int32_t count)
{
        int    newer;
        size_t i;

        if (count < 1 || count > KEYSHIFT_PARTITIONS_MAX)
                return 0;
        pthread_mutex_lock(&t->lock);
        newer = count != ks_topic_ack_count_of(t);
        for (i = 1; t->learning && i < KS_LEARN_CANDIDATES; i++)
                if (t->shadow[i])
                        announce_locked(t->shadow[i], count);
        /* the deliveries before the first count are evidence for the
         * partitioner (ks_learn.h), before ks_topic_verify_suspects()
         * settles them */
        if (t->learning && !ks_topic_ack_count_of(t) && t->suspect_cnt) {
                t->announced_count = count;
                ks_topic_learn_suspects(t);
        }
        announce_locked(t, count);
        pthread_mutex_unlock(&t->lock);
        return newer;
}

int ks_topic_apply_count(ks_topic_t *t, int32_t count, ks_count_source_t source,
                         int64_t now_ms)
{
        int    changed;
        size_t i;

        if (count < 1 || count > KEYSHIFT_PARTITIONS_MAX)
                return 0;
        pthread_mutex_lock(&t->lock);
        changed = set_count_locked(t, count, source, now_ms);
        for (i = 1; t->learning && i < KS_LEARN_CANDIDATES; i++)
                if (t->shadow[i])
                        set_count_locked(t->shadow[i], count, source, now_ms);
        pthread_mutex_unlock(&t->lock);
        return changed;
}

int ks_topic_set_partition_count(ks_topic_t *t, int32_t count,
                                 ks_count_source_t source, int64_t now_ms)
{
        ks_topic_announce_count(t, count);
        return ks_topic_apply_count(t, count, source, now_ms);
}

void ks_topic_set_cluster_info(ks_topic_t *t, int brokers,
                               int replication_factor, int compacted)
{
        pthread_mutex_lock(&t->lock);
        if (brokers > 0)
                t->brokers = brokers;
        if (replication_factor > 0)
                t->replication_factor = replication_factor;
        if (compacted >= 0)
                t->compacted = compacted;
        if (!brokers && !replication_factor) /* the DescribeConfigs answer */
                t->cleanup_policy_asked = 1;
        pthread_mutex_unlock(&t->lock);
}

void ks_topic_set_metadata_count(ks_topic_t *t, int32_t count)
{
        pthread_mutex_lock(&t->lock);
        t->metadata_count = count;
        /* a rehearsal of another count: deliveries to the topic's own
         * partitions prove nothing of a partitioner under this one */
        if (t->learning && t->count_source == KS_COUNT_CONFIG && count &&
            count != t->partition_count) {
                ks_topic_stop_learning(t);
                ks_topic_ack_count_publish(t);
        }
        pthread_mutex_unlock(&t->lock);
}

int ks_topic_cleanup_policy_asked(ks_topic_t *t)
{
        int asked;

        pthread_mutex_lock(&t->lock);
        asked = t->cleanup_policy_asked;
        pthread_mutex_unlock(&t->lock);
        return asked;
}

int32_t ks_topic_announced_count(ks_topic_t *t)
{
        int32_t n;

        pthread_mutex_lock(&t->lock);
        n = ks_topic_ack_count_of(t);
        pthread_mutex_unlock(&t->lock);
        return n;
}

int32_t ks_topic_partition_count(ks_topic_t *t)
{
        int32_t n;

        pthread_mutex_lock(&t->lock);
        n = t->partition_count;
        pthread_mutex_unlock(&t->lock);
        return n;
}
