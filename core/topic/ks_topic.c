/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_topic.c
 * @brief A topic's analysis: creation and destruction, sizes, the shadow
 *        topics of learning, the lock (the rest: ks_topic_impl.h lists the
 *        files, and the order they call each other in).
 */
#include "ks_topic.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <stdatomic.h>

#include "ks_budget.h"
#include "ks_clock.h"
#include "ks_config.h"
#include "ks_learn.h"
#include "ks_topic_impl.h"

/** @returns @p p's sketch sizes, the ones a budget shrinks. */
static ks_budget_sizes_t sizes_of(const ks_topic_params_t *p)
{
        return (ks_budget_sizes_t){.key_sample   = p->key_sample_size,
                                   .mixed_sample = p->mixed_sample_size,
                                   .topk         = p->topk_capacity};
}

size_t ks_topic_sketch_bytes(const ks_topic_params_t *p)
{
        ks_budget_sizes_t s = sizes_of(p);

        return ks_budget_sketch_bytes(&s);
}

void ks_topic_params_from_config(ks_topic_params_t *p, const ks_config_t *k)
{
        memcpy(p->proposed, k->proposed, sizeof(k->proposed));
        p->proposed_cnt      = k->proposed_cnt;
        p->key_sample_size   = (size_t)k->key_sample_size;
        p->mixed_sample_size = (size_t)k->mixed_sample_size;
        p->topk_capacity =
            (size_t)k->hot_keys * KS_TOPIC_TOPK_PER_HOT > KS_TOPIC_TOPK_FLOOR
                ? (size_t)k->hot_keys * KS_TOPIC_TOPK_PER_HOT
                : KS_TOPIC_TOPK_FLOOR;
        p->flow_max_cells = k->flow_max_cells;
        p->pending_max    = KS_PENDING_MAX;
        /* keyshift.memory.max.mb covers the sketches and the drainer's
         * key table (ks_budget.h) */
        p->sketch_budget = ks_budget_sketches((size_t)k->memory_max_mb << 20);
}

void ks_topic_params_fit(ks_topic_params_t *p, size_t bytes)
{
        ks_budget_sizes_t s = sizes_of(p);

        ks_budget_fit(&s, bytes);
        p->key_sample_size   = s.key_sample;
        p->mixed_sample_size = s.mixed_sample;
        p->topk_capacity     = s.topk;
}

const char *ks_partitioner_source_name(ks_partitioner_source_t s)
{
        switch (s) {
        case KS_PSOURCE_DELIVERIES:
                return "deliveries";
        case KS_PSOURCE_OVERRIDE:
                return "keyshift.partitioner";
        case KS_PSOURCE_CONFIG:
        default:
                return "config";
        }
}

/**
 * @brief Starts learning the partitioner (ks_learn.h): one shadow topic
 *        per candidate besides the configured one, with the same sizes.
 *        While learning a topic costs up to three times its memory and
 *        its analysis runs once per candidate.
 * @returns 0, or -1 on ENOMEM.
 */
static int start_learning(ks_topic_t *t, int64_t now_ms)
{
        ks_topic_params_t sp = t->params;
        size_t            i;

        ks_learn_init(&t->learn, t->params.partitioner,
                      t->params.sticky_linger_ms);
        sp.learn = 0;
        for (i = 1; i < t->learn.cnt; i++) {
                sp.partitioner = t->learn.cand[i];
                if (!(t->shadow[i] = ks_topic_new(t->name, &sp, now_ms)))
                        return -1;
        }
        t->learning = t->learn.cnt > 1;
        return 0;
}

/** @brief Frees the shadows and ends learning. @locks t->lock held. */
void ks_topic_stop_learning(ks_topic_t *t)
{
        size_t i;

        for (i = 0; i < KS_LEARN_CANDIDATES; i++) {
                ks_topic_destroy(t->shadow[i]);
                t->shadow[i] = NULL;
        }
        t->learning = 0;
}

ks_topic_t *ks_topic_new(const char *name, const ks_topic_params_t *params,
                         int64_t now_ms)
{
        ks_topic_t *t = calloc(1, sizeof(*t));

        if (!t)
                return NULL;
        t->params = *params;
        t->name   = strdup(name);
        t->sample = ks_keysample_new_payload(params->key_sample_size,
                                             sizeof(ks_model_hashes_t));
        t->mixed  = ks_mixed_new(params->mixed_sample_size);
        t->topk   = ks_topk_new(params->topk_capacity);
        if (!t->name || !t->sample || !t->topk || !t->mixed) {
                ks_topic_destroy(t);
                return NULL;
        }
        ks_hll_init(&t->hll);
        ks_rates_init(&t->rates, ks_clock_mono_ms());
        t->compacted = -1;
        atomic_init(&t->explicit_seen, 0);
        atomic_init(&t->count_known, 0);
        atomic_init(&t->unanalysed, 0);
        atomic_init(&t->sampled_slots, NULL);
        atomic_init(&t->sampled_out_msgs, 0);
        atomic_init(&t->sampled_out_bytes, 0);
        atomic_init(&t->sampled_in_msgs, 0);
        atomic_init(&t->sampled_in_bytes, 0);
        atomic_init(&t->sampled_w_msgs, 0);
        atomic_init(&t->sampled_w_bytes, 0);
        atomic_init(&t->sampled_var, 0);
        atomic_init(&t->sampled_in_sq, 0);
        atomic_init(&t->sampled_one_in_max, 0);
        atomic_init(&t->sampled_secs, 0);
        atomic_init(&t->sampled_last_sec, UINT64_MAX);
        pthread_mutex_init(&t->lock, NULL);
        t->analysis_since_ms   = now_ms;
        t->analysis_since_mono = ks_clock_mono_ms();
        atomic_init(&t->model, (int)params->partitioner);
        t->psource = params->learn ? KS_PSOURCE_CONFIG : KS_PSOURCE_OVERRIDE;
        if (params->learn && start_learning(t, now_ms)) {
                ks_topic_destroy(t);
                return NULL;
        }
        return t;
}

void ks_topic_destroy(ks_topic_t *t)
{
        if (!t)
                return;
        if (t->kept && t->kept_free)
                t->kept_free(t->kept);
        if (t->sample && t->topk && t->name && t->mixed)
                pthread_mutex_destroy(&t->lock);
        ks_topic_stop_learning(t);
        free(t->delivered);
        ks_topic_window_free(t);
        free(t->pending);
        free(t->suspects);
        ks_keysample_destroy(t->sample);
        ks_mixed_destroy(t->mixed);
        ks_topk_destroy(t->topk);
        free(atomic_load(&t->sampled_slots));
        free(t->name);
        free(t);
}

const char *ks_topic_name(const ks_topic_t *t)
{
        return t->name;
}

void ks_topic_lock(ks_topic_t *t)
{
        pthread_mutex_lock(&t->lock);
}

void ks_topic_unlock(ks_topic_t *t)
{
        pthread_mutex_unlock(&t->lock);
}

void ks_topic_note_unanalysed(ks_topic_t *t)
{
        atomic_fetch_add_explicit(&t->unanalysed, 1, memory_order_relaxed);
}

void ks_topic_note_explicit(ks_topic_t *t)
{
        /* a load first: the cache line stays shared once the flag is set */
        if (!atomic_load_explicit(&t->explicit_seen, memory_order_relaxed))
                atomic_store_explicit(&t->explicit_seen, 1,
                                      memory_order_relaxed);
}
