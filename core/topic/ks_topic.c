/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_topic.c
 * @brief A topic's analysis: creation, sizes, partition counts and the
 *        key's facts (the rest: ks_topic_impl.h lists the files).
 *
 * The key is hashed once, outside the lock: the partitioner hash (whose
 * remainder by any count is the partition) and the 64-bit sketch hash.
 * Under the lock each message then costs one remainder and two counter
 * increments per count analysed, plus the sketches' updates.
 */
#include "ks_topic.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <stdatomic.h>

#include "ks_budget.h"
#include "ks_clock.h"
#include "ks_config.h"
#include "ks_hash.h"
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

static void free_window(ks_topic_t *t)
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
        free_window(t);
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

/**
 * @brief Allocates the per-partition arrays of a new analysis window for
 *        count @p cur. @returns 0, or -1 on ENOMEM (window left empty).
 *        @locks t->lock held.
 */
static int open_window(ks_topic_t *t, int32_t cur)
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
                        free_window(t);
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

void ks_topic_key_facts(const ks_topic_t *t, const void *key, size_t keylen,
                        int32_t partition, ks_key_facts_t *f)
{
        ks_keyenc_t enc = ks_keyenc_classify(key, keylen);

        memset(f, 0, sizeof(*f));
        f->enc       = (uint8_t)enc;
        f->schema_id = enc == KS_KEYENC_SCHEMA_REGISTRY
                           ? ks_keyenc_schema_id(key, keylen)
                           : -1;
        f->place     = KS_PLACE_HASHED;
        /* the partitioner may change under the drainer (promote()): the
         * facts say which one they were made for */
        f->partitioner =
            (uint8_t)atomic_load_explicit(&t->model, memory_order_relaxed);
        if (partition >= 0)
                return;
        f->place = (uint8_t)ks_partitioner_placement(
            (ks_partitioner_t)f->partitioner, t->params.sticky_linger_ms, key,
            keylen);
        if (f->place != KS_PLACE_HASHED)
                return;
        f->phash =
            ks_partitioner_hash((ks_partitioner_t)f->partitioner, key, keylen);
        f->h64 = ks_hash_key64(key, keylen);
        if ((enc == KS_KEYENC_DECIMAL || enc == KS_KEYENC_TEXT) &&
            keylen != 36) {
                /* The logical value of canonical decimal text and of
                 * plain text (not a UUID's form) is the key itself: same
                 * hash. */
                f->lhash       = f->h64;
                f->has_logical = 1;
        } else {
                f->has_logical =
                    ks_mixed_logical_hash(key, keylen, enc, &f->lhash) == 0;
        }
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

void ks_topic_note_sampled_out(ks_topic_t *t, unsigned ring, uint64_t bytes)
{
        ks_sampled_slot_t *slots =
            atomic_load_explicit(&t->sampled_slots, memory_order_acquire);

        if (!slots) {
                ks_sampled_slot_t *mine =
                    aligned_alloc(64, KS_TOPIC_SAMPLE_RINGS * sizeof(*mine));
                size_t i;
                if (!mine) { /* counted all the same, on a shared line */
                        atomic_fetch_add_explicit(&t->sampled_out_msgs, 1,
                                                  memory_order_relaxed);
                        atomic_fetch_add_explicit(&t->sampled_out_bytes, bytes,
                                                  memory_order_relaxed);
                        return;
                }
                for (i = 0; i < KS_TOPIC_SAMPLE_RINGS; i++) {
                        atomic_init(&mine[i].messages, 0);
                        atomic_init(&mine[i].bytes, 0);
                }
                if (atomic_compare_exchange_strong_explicit(
                        &t->sampled_slots, &slots, mine, memory_order_acq_rel,
                        memory_order_acquire))
                        slots = mine;
                else /* another thread's came first: slots is it */
                        free(mine);
        }
        /* one writer per slot: a load and a store, no locked instruction */
        atomic_store_explicit(
            &slots[ring].messages,
            atomic_load_explicit(&slots[ring].messages, memory_order_relaxed) +
                1,
            memory_order_relaxed);
        atomic_store_explicit(
            &slots[ring].bytes,
            atomic_load_explicit(&slots[ring].bytes, memory_order_relaxed) +
                bytes,
            memory_order_relaxed);
}

/** @brief Adds @p v to @p a, which only the calling thread writes. */
static inline void own_add(atomic_uint_fast64_t *a, uint64_t v)
{
        atomic_store_explicit(a,
                              atomic_load_explicit(a, memory_order_relaxed) + v,
                              memory_order_relaxed);
}

/** @brief own_add() of a double kept as its bits in @p a. */
static inline void own_add_double(atomic_uint_fast64_t *a, double v)
{
        uint64_t bits = atomic_load_explicit(a, memory_order_relaxed);
        double   d;

        memcpy(&d, &bits, sizeof(d));
        d += v;
        memcpy(&bits, &d, sizeof(bits));
        atomic_store_explicit(a, bits, memory_order_relaxed);
}

/** @returns the double kept as its bits in @p a (own_add_double()). */
static inline double load_double(const atomic_uint_fast64_t *a)
{
        uint64_t bits = atomic_load_explicit(a, memory_order_relaxed);
        double   d;

        memcpy(&d, &bits, sizeof(d));
        return d;
}

void ks_topic_note_sampled_in(ks_topic_t *t, unsigned shift, uint64_t bytes,
                              int64_t mono_ms)
{
        uint64_t n   = (uint64_t)1 << shift;
        uint64_t sec = (uint64_t)(mono_ms / 1000);

        own_add(&t->sampled_in_msgs, 1);
        own_add(&t->sampled_in_bytes, bytes);
        own_add(&t->sampled_w_msgs, n);
        own_add(&t->sampled_w_bytes, n * bytes);
        own_add(&t->sampled_var, n * (n - 1));
        own_add_double(&t->sampled_in_sq, (double)bytes * (double)bytes);
        if (n >
            atomic_load_explicit(&t->sampled_one_in_max, memory_order_relaxed))
                atomic_store_explicit(&t->sampled_one_in_max, n,
                                      memory_order_relaxed);
        if (sec !=
            atomic_load_explicit(&t->sampled_last_sec, memory_order_relaxed)) {
                atomic_store_explicit(&t->sampled_last_sec, sec,
                                      memory_order_relaxed);
                own_add(&t->sampled_secs, 1);
        }
}

void ks_topic_sampled_add(ks_topic_t *t, ks_topic_counters_t *c)
{
        const ks_sampled_slot_t *slots =
            atomic_load_explicit(&t->sampled_slots, memory_order_acquire);
        size_t i;

        c->sampled_out.messages =
            atomic_load_explicit(&t->sampled_out_msgs, memory_order_relaxed);
        c->sampled_out.bytes =
            atomic_load_explicit(&t->sampled_out_bytes, memory_order_relaxed);
        for (i = 0; slots && i < KS_TOPIC_SAMPLE_RINGS; i++) {
                c->sampled_out.messages += atomic_load_explicit(
                    &slots[i].messages, memory_order_relaxed);
                c->sampled_out.bytes +=
                    atomic_load_explicit(&slots[i].bytes, memory_order_relaxed);
        }
        c->sampled_in.messages =
            atomic_load_explicit(&t->sampled_in_msgs, memory_order_relaxed);
        c->sampled_in.bytes =
            atomic_load_explicit(&t->sampled_in_bytes, memory_order_relaxed);
        c->sampled_weighted.messages =
            atomic_load_explicit(&t->sampled_w_msgs, memory_order_relaxed);
        c->sampled_weighted.bytes =
            atomic_load_explicit(&t->sampled_w_bytes, memory_order_relaxed);
        c->sampled_variance =
            atomic_load_explicit(&t->sampled_var, memory_order_relaxed);
        c->sampled_in_sq = load_double(&t->sampled_in_sq);
        c->one_in_max =
            atomic_load_explicit(&t->sampled_one_in_max, memory_order_relaxed);
        c->sampled_seconds =
            atomic_load_explicit(&t->sampled_secs, memory_order_relaxed);
}

void ks_topic_note_explicit(ks_topic_t *t)
{
        /* a load first: the cache line stays shared once the flag is set */
        if (!atomic_load_explicit(&t->explicit_seen, memory_order_relaxed))
                atomic_store_explicit(&t->explicit_seen, 1,
                                      memory_order_relaxed);
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
                free_window(t);
                t->partition_count = count;
                ks_topic_ack_count_publish(t);
                atomic_store_explicit(&t->count_known, 1, memory_order_relaxed);
                placed = open_window(t, count) == 0;
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
