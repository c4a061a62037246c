/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_stage_counts.c
 * @brief Partition counts the analysis takes where the drainer reaches
 *        them: a new count applies to what was produced after it, so the
 *        messages staged before it must be analysed first.
 *
 * The reporter learns a count from metadata. It used to ask the drainer for
 * a flush and wait for it (ks_stage_sync()) before the analysis took the
 * count. With the drainer at idle priority (issue 33: keyshift yields the
 * CPU to the host) that wait could last seconds on a saturated machine,
 * and deliveries arriving meanwhile could not be verified. Now the
 * reporter announces the count to the delivery checks at once
 * (ks_topic_announce_count()) and queues it here with a flush ticket; the
 * drainer serves the flush (every message staged before the ticket
 * analysed) and then has the analysis take the count
 * (ks_topic_apply_count()), in its own time. The order is the one the old
 * wait gave: the flush, then the count.
 *
 * Memory: one 32-byte entry per count change queued, freed when applied;
 * the reporter queues a count only when it differs from the newest one
 * announced, so the queue holds at most one entry per topic and change.
 */
#include "ks_stage.h"

#include <pthread.h>
#include <semaphore.h>
#include <stdlib.h>

#include "ks_stage_impl.h"

/** A count waiting for its flush. */
typedef struct ks_stage_count {
        ks_topic_t       *t;
        int32_t           count;
        ks_count_source_t source;
        int64_t           now_ms; /**< wall clock of the answer */
        uint64_t          ticket; /**< the flush_asked it waits for */
} ks_stage_count_t;

int ks_stage_count_later(ks_stage_t *s, ks_topic_t *t, int32_t count,
                         ks_count_source_t source, int64_t now_ms)
{
        ks_stage_count_t *q;
        int               rc = 0;

        pthread_mutex_lock(&s->counts_lock);
        if (s->counts_cnt == s->counts_cap) {
                size_t cap = s->counts_cap ? s->counts_cap * 2 : 16;
                if ((q = realloc(s->counts, cap * sizeof(*q)))) {
                        s->counts     = q;
                        s->counts_cap = cap;
                }
        }
        if (s->counts_cnt < s->counts_cap) {
                /* asked under the queue's lock: tickets queue in order */
                uint64_t ticket =
                    atomic_fetch_add_explicit(&s->flush_asked, 1,
                                              memory_order_acq_rel) +
                    1;
                s->counts[s->counts_cnt++] =
                    (ks_stage_count_t){t, count, source, now_ms, ticket};
        } else {
                rc = -1;
        }
        pthread_mutex_unlock(&s->counts_lock);
        if (!rc) /* the drainer may be in an idle pause: serve it soon */
                sem_post(&s->wake);
        return rc;
}

void ks_stage_counts_apply(ks_stage_t *s, uint64_t done)
{
        size_t i, n;

        pthread_mutex_lock(&s->counts_lock);
        for (n = 0; n < s->counts_cnt && s->counts[n].ticket <= done; n++) {
                const ks_stage_count_t *q = &s->counts[n];
                /* topic locks are taken under the queue's: the reporter
                 * never holds a topic's lock while it queues */
                ks_topic_apply_count(q->t, q->count, q->source, q->now_ms);
        }
        for (i = n; i < s->counts_cnt; i++)
                s->counts[i - n] = s->counts[i];
        s->counts_cnt -= n;
        pthread_mutex_unlock(&s->counts_lock);
}

size_t ks_stage_counts_waiting(ks_stage_t *s)
{
        size_t n;

        pthread_mutex_lock(&s->counts_lock);
        n = s->counts_cnt;
        pthread_mutex_unlock(&s->counts_lock);
        return n;
}

void ks_stage_counts_free(ks_stage_t *s)
{
        free(s->counts);
        s->counts     = NULL;
        s->counts_cnt = s->counts_cap = 0;
}
