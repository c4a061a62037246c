/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_topic_place.c
 * @brief The analysis window: per-partition loads, flows and moved
 *        traffic under the current and each proposed partition count,
 *        opened for a count and freed when it changes, and a run of
 *        messages placed in it.
 *
 * Below the files that place runs (ks_topic_record.c, ks_topic_pending.c)
 * and the ones that open and free windows (ks_topic.c, ks_topic_count.c):
 * it calls none of them.
 */
#include "ks_topic.h"

#include <stdlib.h>
#include <string.h>

#include "ks_topic_impl.h"

void ks_topic_window_free(ks_topic_t *t)
{
        size_t i;

        free(t->current);
        t->current = NULL;
        for (i = 0; i < t->proposal_cnt; i++) {
                free(t->proposals[i].partitions);
                free(t->proposals[i].flow);
        }
        memset(t->proposals, 0, sizeof(t->proposals));
        t->proposal_cnt = 0;
}

int ks_topic_window_open(ks_topic_t *t, int32_t cur)
{
        int32_t counts[KEYSHIFT_PROPOSED_MAX];
        size_t  n = 0, i;

        if (t->params.proposed_cnt) {
                for (i = 0; i < t->params.proposed_cnt; i++)
                        counts[n++] = t->params.proposed[i];
        } else {
                counts[n++] = cur * 2 > KEYSHIFT_PARTITIONS_MAX
                                  ? KEYSHIFT_PARTITIONS_MAX
                                  : cur * 2;
        }

        t->current = calloc((size_t)cur, sizeof(*t->current));
        if (!t->current)
                return -1;
        t->current_m = ks_partition_m((uint32_t)cur);
        for (i = 0; i < n; i++) {
                ks_proposal_t *p     = &t->proposals[i];
                int64_t        cells = (int64_t)cur * counts[i];
                p->partition_count   = counts[i];
                t->proposal_m[i]     = ks_partition_m((uint32_t)counts[i]);
                p->partitions =
                    calloc((size_t)counts[i], sizeof(*p->partitions));
                if (!p->partitions) {
                        t->proposal_cnt = i;
                        ks_topic_window_free(t);
                        return -1;
                }
                if (cells <= t->params.flow_max_cells)
                        p->flow = calloc((size_t)cells, sizeof(*p->flow));
                t->proposal_cnt = i + 1;
        }
        t->window_total  = (ks_load_t){0, 0};
        t->window_hashed = (ks_load_t){0, 0};
        return 0;
}

void ks_topic_place(ks_topic_t *t, uint32_t phash, int32_t partition,
                    int32_t observed, uint64_t messages, uint64_t bytes)
{
        int32_t  cur = t->partition_count;
        int32_t  pc;
        size_t   i;
        uint64_t moved;

        if (partition >= 0) {
                if (partition >= cur) {
                        /* librdkafka refuses it (unknown partition): it
                         * is produced nowhere. */
                        t->c.explicit_out_of_range += messages;
                        return;
                }
                pc = partition;
        } else {
                pc = observed >= 0 ? observed
                                   : ks_partition_of_m(phash, t->current_m,
                                                       (uint32_t)cur);
                ks_load_add(&t->window_hashed, messages, bytes);
        }
        ks_load_add(&t->window_total, messages, bytes);
        ks_load_add(&t->current[pc], messages, bytes);

        for (i = 0; i < t->proposal_cnt; i++) {
                ks_proposal_t *p = &t->proposals[i];
                /* An explicit partition is not re-mapped by an increase. */
                int32_t pp =
                    partition >= 0
                        ? partition
                        : ks_partition_of_m(phash, t->proposal_m[i],
                                            (uint32_t)p->partition_count);
                if (pp >= p->partition_count)
                        continue; /* a proposal below the current count */
                ks_load_add(&p->partitions[pp], messages, bytes);
                if (p->flow)
                        p->flow[(size_t)pc * (size_t)p->partition_count +
                                (size_t)pp] += messages;
                /* Without a branch: on a stream of new keys, whether a
                 * run moves is a coin toss per proposal (half of the keys
                 * at a doubling); the branch's mispredictions cost ~20 ns
                 * a message at 3 proposals (bench/README.md). */
                moved = (uint64_t)0 - (uint64_t)(pp != pc);
                ks_load_add(&p->moved, messages & moved, bytes & moved);
        }
}
