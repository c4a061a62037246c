/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_topic_pending.c
 * @brief Runs of hashed messages kept while a topic's partition count is
 *        unknown (a producer's first messages come before keyshift's
 *        metadata answer), placed when the first count comes.
 *
 * At most ks_topic_params_t.pending_max runs (16 B each, allocated with
 * the first); runs beyond, or when that allocation fails, count as
 * `unplaced`. The drainer's key table keeps such a topic's runs whole
 * (ks_batch.h: not passed by), so a run holds many messages.
 */
#include "ks_topic.h"

#include <stdlib.h>

#include "ks_topic_impl.h"

void ks_topic_pending_add(ks_topic_t *t, uint32_t phash, int32_t partition,
                          uint64_t messages, uint64_t bytes)
{
        if (t->pending_cnt >= t->params.pending_max) {
                t->c.unplaced += messages;
                return;
        }
        if (!t->pending)
                t->pending =
                    malloc(t->params.pending_max * sizeof(*t->pending));
        if (!t->pending) {
                t->c.unplaced += messages;
                return;
        }
        t->pending[t->pending_cnt++] = (ks_pending_t){
            phash, partition,
            messages > UINT32_MAX ? UINT32_MAX : (uint32_t)messages,
            bytes > UINT32_MAX ? UINT32_MAX : (uint32_t)bytes};
        t->pending_msgs += messages;
}

void ks_topic_pending_settle(ks_topic_t *t, int placed)
{
        size_t i;

        for (i = 0; placed && i < t->pending_cnt; i++) {
                const ks_pending_t *p = &t->pending[i];
                ks_topic_place(t, p->phash, p->partition, -1, p->messages,
                               p->bytes);
        }
        if (!placed)
                t->c.unplaced += t->pending_msgs;
        free(t->pending);
        t->pending      = NULL;
        t->pending_cnt  = 0;
        t->pending_msgs = 0;
}
