/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_topic_snapshot.c
 * @brief What a report reads of a topic (a copy taken under its lock), and
 *        whether anything changed since the last report.
 */
#include "ks_topic.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <stdatomic.h>

#include "ks_clock.h"
#include "ks_hash.h"
#include "ks_learn.h"
#include "ks_topic_impl.h"

/** What ks_topic_note_changes() fingerprints: everything a message, an
 *  acknowledgement or a metadata answer changes. Zeroed before it is
 *  filled, so that padding hashes the same every time. */
typedef struct change_state {
        ks_topic_counters_t c;
        uint64_t            pending_msgs, suspect_cnt;
        int64_t             count_changed_at_ms;
        int32_t             partition_count, previous_count;
        int32_t             count_source, brokers, replication_factor;
        int32_t             metadata_count;
        int32_t             compacted, has_mismatch, diagnosing;
} change_state_t;

int ks_topic_note_changes(ks_topic_t *t, int64_t now_ms)
{
        change_state_t st;
        uint64_t       fp;
        int            changed;

        memset(&st, 0, sizeof(st));
        pthread_mutex_lock(&t->lock);
        st.c = t->c;
        st.c.unanalysed =
            atomic_load_explicit(&t->unanalysed, memory_order_relaxed);
        ks_topic_sampled_add(t, &st.c);
        ks_topic_ack_unlocked_add(t, &st.c);
        st.pending_msgs        = t->pending_msgs;
        st.suspect_cnt         = t->suspect_cnt;
        st.count_changed_at_ms = t->count_changed_at_ms;
        st.partition_count     = t->partition_count;
        st.previous_count      = t->previous_count;
        st.count_source        = (int32_t)t->count_source;
        st.brokers             = t->brokers;
        st.metadata_count      = t->metadata_count;
        st.replication_factor  = t->replication_factor;
        st.compacted           = t->compacted;
        st.has_mismatch        = t->has_mismatch;
        st.diagnosing          = t->diagnosing;
        fp      = ks_hash_murmur64a(&st, sizeof(st), 0x6b657973686966ULL);
        changed = !t->last_changed_ms || fp != t->change_fp;
        if (changed) {
                t->change_fp       = fp;
                t->last_changed_ms = now_ms;
                t->change_gen++;
        }
        pthread_mutex_unlock(&t->lock);
        return changed;
}

uint64_t ks_topic_change_gen(ks_topic_t *t)
{
        uint64_t gen;

        pthread_mutex_lock(&t->lock);
        gen = t->change_gen;
        pthread_mutex_unlock(&t->lock);
        return gen;
}

void *ks_topic_kept(const ks_topic_t *t)
{
        return t->kept;
}

void ks_topic_keep(ks_topic_t *t, void *kept, void (*free_fn)(void *kept))
{
        if (t->kept && t->kept != kept && t->kept_free)
                t->kept_free(t->kept);
        t->kept      = kept;
        t->kept_free = free_fn;
}

static void *dup_mem(const void *src, size_t size)
{
        void *p;

        if (!src || !size)
                return NULL;
        if ((p = malloc(size)))
                memcpy(p, src, size);
        return p;
}

/** A hot-key counter's place in busiest-first order (ks_topk_sort()'s:
 *  more messages, then less error, then the smaller hash64). */
typedef struct hot_order {
        uint64_t count, error, hash64;
        size_t   at; /**< index in the unsorted entries */
} hot_order_t;

static inline int hot_before(const hot_order_t *a, const hot_order_t *b)
{
        /* without branches: the merge below compares entries in an order
         * no predictor follows */
        int gt = a->count > b->count, ceq = a->count == b->count;
        int lt = a->error < b->error, eeq = a->error == b->error;

        return gt | (ceq & (lt | (eeq & (a->hash64 < b->hash64))));
}

/**
 * @brief Sorts @p e[n] busiest first, as ks_topk_sort() does: the order is
 *        total (hash64 breaks ties), so any sort gives the same array.
 *        qsort() of the 170-byte entries through a comparison callback
 *        was ~8 % of a report's time (1,024 counters per topic,
 *        bench/ksb_report); here a merge sort of 32-byte keys with the
 *        comparison inlined and without branches (with them, ~5 % of a
 *        report's time, mispredicted one merge step in two), then one
 *        pass moving entries along the permutation's cycles. Falls
 *        back to ks_topk_sort() on ENOMEM.
 * @locality the reporting thread, outside the topic's lock.
 */
static void sort_hot(ks_topk_entry_t *e, size_t n)
{
        hot_order_t    *k = malloc(2 * n * sizeof(*k)), *a, *b;
        size_t          i, w, lo;
        ks_topk_entry_t tmp;

        if (n < 2 || !k) {
                if (n >= 2)
                        ks_topk_sort(e, n);
                free(k);
                return;
        }
        a = k;
        b = k + n;
        for (i = 0; i < n; i++)
                a[i] = (hot_order_t){e[i].count, e[i].error, e[i].hash64, i};
        for (w = 1; w < n; w *= 2) { /* bottom-up: runs of w into 2w */
                for (lo = 0; lo < n; lo += 2 * w) {
                        size_t m  = lo + w < n ? lo + w : n;
                        size_t hi = lo + 2 * w < n ? lo + 2 * w : n;
                        size_t x = lo, y = m, o = lo;
                        while (x < m && y < hi) { /* branch-free step */
                                int t  = hot_before(&a[y], &a[x]);
                                b[o++] = *(t ? &a[y] : &a[x]);
                                y += (size_t)t;
                                x += (size_t)!t;
                        }
                        while (x < m)
                                b[o++] = a[x++];
                        while (y < hi)
                                b[o++] = a[y++];
                }
                hot_order_t *t = a;
                a              = b;
                b              = t;
        }
        /* a[i].at: the entry that belongs at i. Follow each cycle once. */
        for (i = 0; i < n; i++) {
                size_t j = i, from;
                if (a[i].at == i || a[i].at == SIZE_MAX)
                        continue;
                tmp = e[i];
                while ((from = a[j].at) != i) {
                        e[j]    = e[from];
                        a[j].at = SIZE_MAX;
                        j       = from;
                }
                e[j]    = tmp;
                a[j].at = SIZE_MAX;
        }
        free(k);
}

/*
 * The buffers the sketches are copied into under the lock, kept per thread
 * from one snapshot to the next: allocated afresh each time (~0.6 MB for
 * the default sizes), their pages were faulted in again by every snapshot,
 * which doubled its time (bench/ksb_report). Freed when the thread exits.
 */
typedef struct snapshot_scratch {
        ks_mixed_raw_t     mixed;
        ks_keysample_raw_t sample;
        ks_topk_raw_t      hot;
} snapshot_scratch_t;

static pthread_key_t  scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;
static int            scratch_key_ok;

static void scratch_free(void *p)
{
        snapshot_scratch_t *sc = p;

        ks_mixed_raw_free(&sc->mixed);
        ks_keysample_raw_free(&sc->sample);
        ks_topk_raw_free(&sc->hot);
        free(sc);
}

static void scratch_key_init(void)
{
        scratch_key_ok = pthread_key_create(&scratch_key, scratch_free) == 0;
}

/** @returns this thread's scratch with room for @p t's sketches, NULL on
 *           ENOMEM. */
static snapshot_scratch_t *scratch_get(const ks_topic_t *t)
{
        snapshot_scratch_t *sc;

        pthread_once(&scratch_once, scratch_key_init);
        if (!scratch_key_ok)
                return NULL;
        if (!(sc = pthread_getspecific(scratch_key))) {
                if (!(sc = calloc(1, sizeof(*sc))))
                        return NULL;
                if (pthread_setspecific(scratch_key, sc)) {
                        free(sc);
                        return NULL;
                }
        }
        if (ks_mixed_raw_reserve(t->mixed, &sc->mixed) ||
            ks_keysample_raw_reserve(t->sample, &sc->sample) ||
            ks_topk_raw_reserve(t->topk, &sc->hot))
                return NULL;
        return sc;
}

/** @brief @p cur partitions' loads from the acknowledgements (an
 *         unexplained placement: no model's are right). @locks t->lock. */
static void delivered_loads(const ks_topic_t *t, ks_load_t *out, size_t cur)
{
        size_t n = t->delivered_cnt < 0 ? 0 : (size_t)t->delivered_cnt;

        memset(out, 0, cur * sizeof(*out));
        if (t->delivered)
                memcpy(out, t->delivered, (n < cur ? n : cur) * sizeof(*out));
}

/** @brief What the acknowledgements said of the partitioner, for a
 *         snapshot. @locks t->lock held. */
static void learned_copy(const ks_topic_t *t, ks_topic_learned_t *l)
{
        size_t i = t->learn.confirmed > 0 ? (size_t)t->learn.confirmed : 0;

        memset(l, 0, sizeof(*l));
        l->source      = t->psource;
        l->confirmed   = t->learn.state == KS_LEARN_CONFIRMED;
        l->unexplained = t->unexplained;
        l->learning    = t->learning;
        l->configured = t->learn.cnt ? t->learn.cand[0] : t->params.partitioner;
        if (t->learn.cnt)
                ks_learn_evidence(&t->learn, i, &l->discriminating_keys,
                                  &l->agreeing, &l->disagreeing);
}

/** @brief Copies @p t's counters, counts, times, cluster facts and what
 *         the deliveries said of the partitioner into @p s.
 *         @locks t->lock held. */
static void counters_copy(ks_topic_t *t, ks_topic_snapshot_t *s)
{
        s->partitioner      = t->params.partitioner;
        s->sticky_linger_ms = t->params.sticky_linger_ms;
        learned_copy(t, &s->learned);
        s->c = t->c;
        s->c.unanalysed =
            atomic_load_explicit(&t->unanalysed, memory_order_relaxed);
        ks_topic_sampled_add(t, &s->c);
        ks_topic_ack_unlocked_add(t, &s->c);
        s->partition_count     = t->partition_count;
        s->count_source        = t->count_source;
        s->previous_count      = t->previous_count;
        s->count_changed_at_ms = t->count_changed_at_ms;
        s->last_changed_at_ms  = t->last_changed_ms;
        s->analysis_since_ms   = t->analysis_since_ms;
        s->analysis_since_mono = t->analysis_since_mono;
        s->window_total        = t->window_total;
        s->window_hashed       = t->window_hashed;
        s->proposals_default   = t->params.proposed_cnt == 0;
        s->pending             = t->pending_msgs;
        s->hll                 = t->hll;
        s->mismatch            = t->mismatch;
        s->has_mismatch        = t->has_mismatch;
        s->schema_ids          = t->schema_ids;
        s->brokers             = t->brokers;
        s->metadata_count      = t->metadata_count;
        s->replication_factor  = t->replication_factor;
        s->compacted           = t->compacted;
}

/** @brief Copies the rates (and starts their next interval) and the
 *         sketches' arrays as they lie, into @p s and this thread's
 *         scratch @p sc. @locks t->lock held. */
static void sketches_copy(ks_topic_t *t, ks_topic_snapshot_t *s,
                          snapshot_scratch_t *sc, size_t hot_cap)
{
        s->mono_ms = ks_clock_mono_ms();
        s->rates   = t->rates;
        ks_rates_mark(&t->rates, s->mono_ms); /* next interval */
        ks_keysample_raw_copy(t->sample, &sc->sample);
        ks_mixed_copy(t->mixed, &sc->mixed);
        s->sample_distinct_estimate = ks_keysample_distinct_estimate(t->sample);
        ks_topk_raw_copy(t->topk, &sc->hot);
        s->topk_total    = ks_topk_total(t->topk);
        s->topk_capacity = hot_cap;
}

/** @brief Copies the per-partition loads under the current count (the
 *         delivered ones when no model explains the deliveries) and each
 *         proposal's loads and flow, once the count is known.
 *  @returns 0, or 1 on ENOMEM. @locks t->lock held. */
static int loads_copy(const ks_topic_t *t, ks_topic_snapshot_t *s)
{
        size_t cur = (size_t)t->partition_count, i;
        int    oom;

        if (!t->current)
                return 0;
        s->current = dup_mem(t->current, cur * sizeof(*t->current));
        oom        = !s->current;
        if (t->unexplained && s->current)
                delivered_loads(t, s->current, cur);
        s->proposal_cnt = t->proposal_cnt;
        for (i = 0; i < t->proposal_cnt; i++) {
                const ks_proposal_t *p = &t->proposals[i];
                ks_proposal_t       *d = &s->proposals[i];
                size_t               n = (size_t)p->partition_count;
                d->partition_count     = p->partition_count;
                d->moved               = p->moved;
                d->partitions = dup_mem(p->partitions, n * sizeof(ks_load_t));
                d->flow       = dup_mem(p->flow, cur * n * sizeof(uint64_t));
                oom |= !d->partitions || (p->flow && !d->flow);
        }
        return oom;
}

/** @brief Unpacks the sketches copied under the lock into @p s's entries:
 *         the key sample, the hot keys (sorted), the mixed keys. */
static void sketches_unpack(ks_topic_snapshot_t *s, snapshot_scratch_t *sc)
{
        s->sample_cnt =
            ks_keysample_raw_entries(&sc->sample, s->sample, s->sample_models);
        s->hot_cnt = ks_topk_raw_entries(&sc->hot, s->hot);
        sort_hot(s->hot, s->hot_cnt);
        s->mixed_cnt = ks_mixed_raw_collisions(
            &sc->mixed, s->mixed, KS_TOPIC_MIXED_MAX, &s->mixed_summary);
}

/** Nanoseconds in a second. */
#define KS_NS_PER_S 1000000000

int ks_topic_snapshot(ks_topic_t *t, ks_topic_snapshot_t *s)
{
        size_t              hot_cap = ks_topk_capacity(t->topk);
        size_t              k       = ks_keysample_capacity(t->sample);
        snapshot_scratch_t *sc      = scratch_get(t);
        int                 oom     = !sc;
        struct timespec     l0, l1;

        /* Everything that allocates, sorts or searches happens outside the
         * topic's lock, which the drainer takes: under it, only copies, of
         * the sketches' arrays as they lie (memcpy), unpacked after. */
        memset(s, 0, sizeof(*s));
        s->name            = strdup(t->name);
        s->hot             = malloc(hot_cap * sizeof(*s->hot));
        s->sample_capacity = k;
        s->sample          = malloc((k + 1) * sizeof(*s->sample));
        s->sample_models   = malloc((k + 1) * sizeof(*s->sample_models));
        s->mixed           = malloc(KS_TOPIC_MIXED_MAX * sizeof(*s->mixed));
        pthread_mutex_lock(&t->lock);
        clock_gettime(CLOCK_MONOTONIC, &l0);
        if (!oom && s->name && s->hot && s->sample && s->sample_models &&
            s->mixed) {
                counters_copy(t, s);
                sketches_copy(t, s, sc, hot_cap);
                oom |= loads_copy(t, s);
        } else {
                oom = 1;
        }
        clock_gettime(CLOCK_MONOTONIC, &l1);
        pthread_mutex_unlock(&t->lock);
        s->lock_held_ns = (int64_t)(l1.tv_sec - l0.tv_sec) * KS_NS_PER_S +
                          (l1.tv_nsec - l0.tv_nsec);
        if (oom) {
                ks_topic_snapshot_free(s);
                return -1;
        }
        sketches_unpack(s, sc);
        return 0;
}

/** @brief Counts a sketch of @p size where @p asked was asked. @returns 1
 *         when it is smaller. */
static int tally_one(size_t *reduced, size_t *min, size_t size, size_t asked)
{
        if (size >= asked)
                return 0;
        if (!(*reduced)++ || size < *min)
                *min = size;
        return 1;
}

void ks_sketch_tally_add_sizes(ks_sketch_tally_t *tl, size_t sample_capacity,
                               size_t mixed_capacity, size_t topk_capacity,
                               const ks_topic_params_t *asked)
{
        int r = 0;

        r |= tally_one(&tl->key_sample_reduced, &tl->key_sample_min,
                       sample_capacity, asked->key_sample_size);
        r |= tally_one(&tl->mixed_sample_reduced, &tl->mixed_sample_min,
                       mixed_capacity, asked->mixed_sample_size);
        r |= tally_one(&tl->topk_reduced, &tl->topk_min, topk_capacity,
                       asked->topk_capacity);
        tl->topics++;
        tl->reduced += (size_t)r;
}

void ks_sketch_tally_add(ks_sketch_tally_t *tl, const ks_topic_snapshot_t *s,
                         const ks_topic_params_t *asked)
{
        ks_sketch_tally_add_sizes(tl, s->sample_capacity,
                                  s->mixed_summary.capacity, s->topk_capacity,
                                  asked);
}

void ks_topic_snapshot_free(ks_topic_snapshot_t *s)
{
        size_t i;

        free(s->name);
        free(s->current);
        for (i = 0; i < s->proposal_cnt; i++) {
                free(s->proposals[i].partitions);
                free(s->proposals[i].flow);
        }
        free(s->sample);
        free(s->sample_models);
        free(s->mixed);
        free(s->hot);
        memset(s, 0, sizeof(*s));
}
