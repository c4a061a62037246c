/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_topic_ack.c
 * @brief Acknowledgements (delivery reports) checked against the model, the
 *        diagnosis of a disagreement, and the partitioner they prove
 *        (ks_learn.h).
 */
#include "ks_topic.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <stdatomic.h>

#include "ks_learn.h"
#include "ks_phash_cache.h"
#include "ks_topic_impl.h"

const ks_partitioner_t ks_topic_diag_families[3] = {
    KS_PARTITIONER_CONSISTENT, KS_PARTITIONER_MURMUR2, KS_PARTITIONER_FNV1A};

static void example_set(ks_mismatch_example_t *ex, const void *key,
                        size_t keylen, int32_t expected, int32_t actual,
                        int32_t count)
{
        size_t n = keylen < sizeof(ex->key) ? keylen : sizeof(ex->key);

        if (n)
                memcpy(ex->key, key, n);
        ex->keylen          = (uint32_t)keylen;
        ex->expected        = expected;
        ex->actual          = actual;
        ex->partition_count = count;
}

/** @brief The key's hash under each of ks_topic_diag_families. */
static void key_families(const void *key, size_t keylen, uint32_t family[3])
{
        size_t f;

        for (f = 0; f < 3; f++)
                family[f] =
                    ks_partitioner_hash(ks_topic_diag_families[f], key, keylen);
}

/** @brief Counts one delivery to @p actual in the diagnosis: which of the
 *         key's @p family hashes place it there at @p count.
 *  @locks t->lock held. */
static void diag_count(ks_topic_t *t, const uint32_t family[3], int32_t count,
                       int32_t actual)
{
        size_t f;

        t->c.diag_checked++;
        for (f = 0; f < 3; f++)
                t->c.diag_follow[f] +=
                    ks_partition_of(family[f], count) == actual;
}

/** @brief Keeps an acknowledgement to check when the count is next known;
 *         @p family: the key's family hashes when the acknowledgement was
 *         counted in the diagnosis already (diag_count()), else NULL.
 *  @returns 1, or 0 when the buffer is full. @locks t->lock held. */
static int add_suspect(ks_topic_t *t, uint32_t phash, int32_t actual,
                       const void *key, size_t keylen, const uint32_t *family)
{
        if (t->suspect_cnt == t->suspect_cap) {
                size_t        cap = t->suspect_cap ? t->suspect_cap * 2 : 1024;
                ks_suspect_t *grown;
                if (cap > KS_SUSPECTS_MAX ||
                    !(grown = realloc(t->suspects, cap * sizeof(*grown))))
                        return 0;
                t->suspects    = grown;
                t->suspect_cap = cap;
        }
        if (t->suspect_cnt < KS_SUSPECT_KEYS)
                example_set(&t->suspect_keys[t->suspect_cnt], key, keylen, -1,
                            actual, 0);
        {
                ks_suspect_t *s = &t->suspects[t->suspect_cnt++];
                s->phash        = phash;
                s->actual       = actual;
                s->has_family   = keylen > 0;
                s->diag_counted = family != NULL;
                s->checked      = 0;
                if (family)
                        memcpy(s->family, family, sizeof(s->family));
                else if (s->has_family)
                        key_families(key, keylen, s->family);
        }
        t->c.ack_pending++;
        return 1;
}

/** @brief Publishes the count acknowledgements may be checked against
 *         without the lock: 0 while they must take it.
 *  @locks t->lock held. */
void ks_topic_ack_count_publish(ks_topic_t *t)
{
        /* learning and unexplained placements count every
         * acknowledgement under the lock (ks_topic_ack_message()) */
        atomic_store_explicit(&t->ack_count,
                              t->diagnosing || t->learning || t->unexplained
                                  ? 0
                                  : ks_topic_ack_count_of(t),
                              memory_order_release);
}

/**
 * @brief The outcomes of an acknowledgement that need no state the lock
 *        guards, counted with one atomic addition: a failure, a placement
 *        no hash decides, or the partition the count published
 *        (ks_topic_ack_count_publish()) gives. @returns 1 if counted, 0 if the
 *        acknowledgement is to be checked under the lock.
 *
 * Why: librdkafka calls on_acknowledgement for every message on its
 * broker thread, the one that also sends the next batches; with the
 * topic's lock taken there, that thread waited whenever the drainer held
 * the lock for a batch of runs (up to KS_BATCH_HOLD_RUNS, tens of us,
 * ks_batch.c) or a report took a snapshot. A count published just before
 * or after a change is no error: a partition that disagrees with it goes
 * to the locked path, which also accepts the previous count.
 */
static int ack_unlocked(ks_topic_t *t, ks_placement_t pk, uint32_t phash,
                        int32_t partition, int failed)
{
        int32_t cur = atomic_load_explicit(&t->ack_count, memory_order_acquire);
        atomic_uint_fast64_t *n;

        if (!cur)
                return 0;
        if (failed)
                n = &t->ack_failed;
        else if (pk != KS_PLACE_HASHED)
                n = &t->ack_not_predictable;
        else if (ks_partition_of(phash, cur) == partition)
                n = &t->ack_matched;
        else
                return 0;
        atomic_fetch_add_explicit(n, 1, memory_order_relaxed);
        return 1;
}

int ks_topic_ack_wants_all(const ks_topic_t *t)
{
        return !atomic_load_explicit(&t->ack_count, memory_order_relaxed);
}

/** @brief Adds the acknowledgements ack_unlocked() counted to @p c. */
void ks_topic_ack_unlocked_add(ks_topic_t *t, ks_topic_counters_t *c)
{
        uint64_t matched = atomic_load_explicit(&t->ack_matched,
                                                memory_order_relaxed),
                 failed =
                     atomic_load_explicit(&t->ack_failed, memory_order_relaxed),
                 unpred = atomic_load_explicit(&t->ack_not_predictable,
                                               memory_order_relaxed);

        c->ack_matched += matched;
        c->ack_failed += failed;
        c->ack_not_predictable += unpred;
        c->ack_messages += matched + failed + unpred;
}

/** @returns whether @p t has explicit-partition traffic (counted, or
 *           noted by on_send before the drainer counted it): deliveries
 *           then prove nothing on their own. @locks t->lock held. */
static int explicit_seen(const ks_topic_t *t)
{
        return t->c.explicit_partition.messages ||
               atomic_load_explicit(&t->explicit_seen, memory_order_relaxed);
}

/**
 * @brief Where @p t, under partitioner @p model, places an acknowledged
 *        message's @p key; for a hashed key that was delivered (not
 *        @p failed: a failure is counted as such, its hash not needed)
 *        its partitioner hash in *@p phash, else 0. @p cached: through
 *        this thread's hash cache (ks_phash_cache.h), which holds the
 *        hashes of the model in use.
 */
static ks_placement_t ack_placement(const ks_topic_t *t, ks_partitioner_t model,
                                    const void *key, size_t keylen, int failed,
                                    int cached, uint32_t *phash)
{
        ks_placement_t pk = ks_partitioner_placement(
            model, t->params.sticky_linger_ms, key, keylen);

        *phash = pk != KS_PLACE_HASHED || failed ? 0
                 : cached ? ks_phash_cached(model, key, keylen)
                          : ks_partitioner_hash(model, key, keylen);
        return pk;
}

/**
 * @brief The checks of an acknowledgement that need the lock: counted
 *        against @p t's model (@p pk, @p phash for its partitioner).
 * @returns 1 when it is a suspect (the caller asks for metadata).
 * @locks t->lock held.
 */
static int ack_locked(ks_topic_t *t, ks_placement_t pk, uint32_t phash,
                      const void *key, size_t keylen, int32_t partition,
                      int failed)
{
        int32_t         cur, expected;
        int             suspect = 0;
        uint32_t        family[3];
        const uint32_t *counted = NULL; /* family, once in the diagnosis */

        t->c.ack_messages++;
        cur = ks_topic_ack_count_of(t);
        if (t->diagnosing && !failed && keylen && cur &&
            t->c.diag_checked < KS_DIAGNOSE_MAX) {
                key_families(key, keylen, family);
                diag_count(t, family, cur, partition);
                counted = family;
        }
        if (failed) {
                t->c.ack_failed++;
        } else if (pk != KS_PLACE_HASHED) {
                t->c.ack_not_predictable++;
        } else if (cur == 0) {
                /* Delivered before keyshift's metadata arrived: checked
                 * when it does. */
                if (!add_suspect(t, phash, partition, key, keylen, counted))
                        t->c.ack_unverified++;
        } else if ((expected = ks_partition_of(phash, cur)) == partition) {
                t->c.ack_matched++;
        } else if (explicit_seen(t)) {
                /* It may have been sent to this partition explicitly. */
                t->c.ack_unverified++;
                t->c.ack_disagree_explicit++;
        } else if ((cur != t->partition_count && t->partition_count &&
                    ks_partition_of(phash, t->partition_count) == partition) ||
                   (t->previous_count &&
                    ks_partition_of(phash, t->previous_count) == partition)) {
                /* Placed under the count before the change we saw. */
                t->c.ack_matched++;
        } else if (!t->has_mismatch) {
                /* The first disagreements: perhaps the count changed and
                 * keyshift has not seen it yet; checked at the next
                 * metadata (beyond KS_SUSPECTS_MAX waiting: unverified,
                 * never a mismatch unchecked). Once a disagreement is
                 * confirmed (ks_topic_verify_suspects(): a custom or per-topic
                 * partitioner), later ones are counted at once and ask
                 * for no more metadata. */
                if (!add_suspect(t, phash, partition, key, keylen, counted))
                        t->c.ack_unverified++;
                suspect       = 1;
                t->diagnosing = 1;
                ks_topic_ack_count_publish(t);
        } else {
                t->c.ack_mismatched++;
                if (!t->has_mismatch)
                        example_set(&t->mismatch, key, keylen, expected,
                                    partition, cur);
                t->has_mismatch = 1;
        }
        return suspect;
}

/** @brief Counts a delivery of @p bytes to @p partition in the delivered
 *         loads (kept while learning or unexplained). @locks t->lock. */
static void delivered_add(ks_topic_t *t, int32_t partition, uint64_t bytes)
{
        if (partition < 0 || partition >= KEYSHIFT_PARTITIONS_MAX)
                return;
        if (partition >= t->delivered_cnt) {
                int32_t    cur = ks_topic_ack_count_of(t);
                int32_t    n   = partition + 1 > cur ? partition + 1 : cur;
                ks_load_t *grown =
                    realloc(t->delivered, (size_t)n * sizeof(*grown));
                if (!grown)
                        return;
                memset(grown + t->delivered_cnt, 0,
                       (size_t)(n - t->delivered_cnt) * sizeof(*grown));
                t->delivered     = grown;
                t->delivered_cnt = n;
        }
        ks_load_add(&t->delivered[partition], 1, bytes);
}

/** @brief Exchanges @p n bytes of @p a and @p b (arrays in structs). */
static void swap_bytes(void *a, void *b, size_t n)
{
        unsigned char *x = a, *y = b, c;

        while (n--) {
                c    = x[n];
                x[n] = y[n];
                y[n] = c;
        }
}

/**
 * @brief The candidate @p i the deliveries confirmed becomes this topic's
 *        model for every message since the start: shadow i's analysis (it
 *        placed every run with its own partitioner and checked every
 *        acknowledgement against it) trades places with this one's; the
 *        rest is the same in both (rates, schema ids, distinct keys,
 *        counts, cluster answers). @locks t->lock held.
 */
static void promote(ks_topic_t *t, int i)
{
        ks_topic_t *s = i > 0 ? t->shadow[i] : NULL;

#define KS_SWAP(a, b)                                                          \
        do {                                                                   \
                __typeof__(a) swap_ = (a);                                     \
                (a)                 = (b);                                     \
                (b)                 = swap_;                                   \
        } while (0)
        if (s) {
                KS_SWAP(t->params.partitioner, s->params.partitioner);
                KS_SWAP(t->c, s->c);
                KS_SWAP(t->window_total, s->window_total);
                KS_SWAP(t->window_hashed, s->window_hashed);
                KS_SWAP(t->waiting_spread, s->waiting_spread);
                KS_SWAP(t->current, s->current);
                KS_SWAP(t->proposal_cnt, s->proposal_cnt);
                swap_bytes(t->proposals, s->proposals, sizeof(t->proposals));
                KS_SWAP(t->pending, s->pending);
                KS_SWAP(t->pending_cnt, s->pending_cnt);
                KS_SWAP(t->pending_msgs, s->pending_msgs);
                KS_SWAP(t->suspects, s->suspects);
                KS_SWAP(t->suspect_cnt, s->suspect_cnt);
                KS_SWAP(t->suspect_cap, s->suspect_cap);
                swap_bytes(t->suspect_keys, s->suspect_keys,
                           sizeof(t->suspect_keys));
                KS_SWAP(t->mismatch, s->mismatch);
                KS_SWAP(t->has_mismatch, s->has_mismatch);
                KS_SWAP(t->diagnosing, s->diagnosing);
                KS_SWAP(t->sample, s->sample);
                KS_SWAP(t->mixed, s->mixed);
                KS_SWAP(t->topk, s->topk);
                /* learning kept every acknowledgement on the locked path:
                 * the lock-free counters are 0 in both */
                atomic_store_explicit(&t->model, (int)t->params.partitioner,
                                      memory_order_relaxed);
        }
#undef KS_SWAP
        ks_topic_stop_learning(t);
        t->psource = i > 0 ? KS_PSOURCE_DELIVERIES : KS_PSOURCE_CONFIG;
        ks_topic_ack_count_publish(t);
}

/** @brief Acts on what the rule (ks_learn.h) says after new evidence:
 *         candidate @p c (>= 0) confirmed, or none explains the deliveries.
 *         @locks t->lock held. */
static void learn_settle(ks_topic_t *t, int c)
{
        if (c >= 0) {
                promote(t, c);
        } else if (t->learn.state == KS_LEARN_UNEXPLAINED) {
                ks_topic_stop_learning(t);
                /* under keyshift.partitions.current the count itself may
                 * be what is wrong (a rehearsal of 6 partitions on a
                 * 4-partition mock topic): the configured partitioner
                 * stays, unconfirmed (COUNT_REHEARSED or
                 * PARTITIONER_MISMATCH says more) */
                t->unexplained = t->count_source != KS_COUNT_CONFIG;
                ks_topic_ack_count_publish(t);
        }
}

/** @brief Feeds an acknowledgement to the candidates and the rule
 *         (ks_learn.h). @locks t->lock held. */
static void learn_ack(ks_topic_t *t, const void *key, size_t keylen,
                      int32_t partition, int failed)
{
        int explicit = explicit_seen(t);
        uint32_t phash;
        size_t   i;
        int      c;

        for (i = 1; i < KS_LEARN_CANDIDATES; i++) {
                ks_topic_t    *s = t->shadow[i];
                ks_placement_t pk;
                if (!s)
                        continue;
                atomic_store_explicit(&s->explicit_seen, explicit,
                                      memory_order_relaxed);
                /* not through this thread's hash cache, which holds the
                 * model's hashes */
                pk = ack_placement(s, s->params.partitioner, key, keylen,
                                   failed, 0, &phash);
                ack_locked(s, pk, phash, key, keylen, partition, failed);
        }
        /* explicit partitions make a delivery prove nothing */
        if (failed || explicit || !ks_topic_ack_count_of(t))
                return;
        c = ks_learn_ack(&t->learn, key, keylen, ks_topic_ack_count_of(t),
                         partition);
        learn_settle(t, c);
}

int ks_topic_ack_message(ks_topic_t *t, const void *key, size_t keylen,
                         int32_t partition, uint64_t bytes, int failed)
{
        ks_partitioner_t model = (ks_partitioner_t)atomic_load_explicit(
            &t->model, memory_order_relaxed);
        uint32_t       phash;
        ks_placement_t pk =
            ack_placement(t, model, key, keylen, failed, 1, &phash);
        int suspect;

        if (ack_unlocked(t, pk, phash, partition, failed))
                return 0;
        pthread_mutex_lock(&t->lock);
        if (model != t->params.partitioner) /* promote() came between */
                pk = ack_placement(t, t->params.partitioner, key, keylen,
                                   failed, 1, &phash);
        suspect = ack_locked(t, pk, phash, key, keylen, partition, failed);
        if ((t->learning || t->unexplained) && !failed)
                delivered_add(t, partition, bytes);
        if (t->learning)
                learn_ack(t, key, keylen, partition, failed);
        pthread_mutex_unlock(&t->lock);
        return suspect;
}

int ks_topic_ack(ks_topic_t *t, const void *key, size_t keylen,
                 int32_t partition, int failed)
{
        return ks_topic_ack_message(t, key, keylen, partition, (uint64_t)keylen,
                                    failed);
}

/** @returns suspect @p i's key as an example: kept for the first
 *           KS_SUSPECT_KEYS, else keylen KS_MISMATCH_KEY_NOT_KEPT.
 *  @locks t->lock held. */
static ks_mismatch_example_t suspect_key(const ks_topic_t *t, size_t i)
{
        if (i < KS_SUSPECT_KEYS)
                return t->suspect_keys[i];
        return (ks_mismatch_example_t){.keylen = KS_MISMATCH_KEY_NOT_KEPT};
}

/**
 * @brief Re-checks pending acknowledgements against the count now known.
 *        One the count explains is matched. One it does not is unverified
 *        if the topic has messages sent to explicit partitions (as in
 *        ks_topic_ack()); else it is a mismatch once confirmed: by a
 *        second answer that does not explain it either (an answer can be
 *        stale: the broker asked may not have the count librdkafka placed
 *        the message under yet), by a mismatch already confirmed, or
 *        @p final (no answer will come). Until then it stays pending.
 *        Disagreements all explained (a count keyshift had not seen yet)
 *        end the diagnosis, and what it counted is dropped:
 *        acknowledgements go back to the lock-free path.
 * @locks t->lock held.
 */
void ks_topic_verify_suspects(ks_topic_t *t, int final)
{
        int32_t count   = ks_topic_ack_count_of(t);
        int explicit    = explicit_seen(t);
        int    confirm  = final || t->has_mismatch;
        int    mismatch = 0;
        size_t i, kept = 0;

        for (i = 0; i < t->suspect_cnt; i++) {
                const ks_suspect_t *s = &t->suspects[i];
                if (ks_partition_of(s->phash, count) == s->actual || explicit)
                        continue;
                confirm |= s->checked;
                mismatch = 1;
        }
        mismatch &= confirm;
        for (i = 0; i < t->suspect_cnt; i++) {
                ks_suspect_t *s        = &t->suspects[i];
                int32_t       expected = ks_partition_of(s->phash, count);
                if (expected == s->actual) {
                        t->c.ack_matched++;
                } else if (explicit) {
                        t->c.ack_unverified++;
                        t->c.ack_disagree_explicit++;
                } else if (!confirm) { /* kept for the next answer */
                        s->checked = 1;
                        if (kept < KS_SUSPECT_KEYS)
                                t->suspect_keys[kept] = suspect_key(t, i);
                        t->suspects[kept++] = *s;
                        continue;
                } else {
                        t->c.ack_mismatched++;
                        if (!t->has_mismatch) {
                                t->mismatch                 = suspect_key(t, i);
                                t->mismatch.expected        = expected;
                                t->mismatch.actual          = s->actual;
                                t->mismatch.partition_count = count;
                        }
                        t->has_mismatch = 1;
                }
                /* a mismatch confirmed: which hash do the deliveries
                 * follow? (those counted when acknowledged, while
                 * diagnosing, are not counted twice) */
                if ((mismatch || t->has_mismatch) && s->has_family &&
                    !s->diag_counted && t->c.diag_checked < KS_DIAGNOSE_MAX)
                        diag_count(t, s->family, count, s->actual);
        }
        t->c.ack_pending -= t->suspect_cnt - kept;
        t->suspect_cnt = kept;
        t->diagnosing  = t->has_mismatch || kept;
        if (!t->diagnosing) {
                t->c.diag_checked = 0;
                memset(t->c.diag_follow, 0, sizeof(t->c.diag_follow));
        }
        ks_topic_ack_count_publish(t);
        if (!kept) {
                free(t->suspects);
                t->suspects    = NULL;
                t->suspect_cap = 0;
        }
}

/** @brief The acknowledgements that came before the first count, as
 *         evidence for the rule (their family hashes were kept).
 *  @locks t->lock held. */
void ks_topic_learn_suspects(ks_topic_t *t)
{
        size_t i;
        int    c = -1;

        if (explicit_seen(t))
                return;
        for (i = 0;
             i < t->suspect_cnt && c < 0 && t->learn.state == KS_LEARN_LEARNING;
             i++) {
                const ks_suspect_t *sp = &t->suspects[i];
                if (sp->has_family)
                        c = ks_learn_ack_hashed(
                            &t->learn, sp->family,
                            ((uint64_t)sp->family[1] << 32) ^ sp->family[0] ^
                                ((uint64_t)sp->family[2] << 16),
                            ks_topic_ack_count_of(t), sp->actual);
        }
        learn_settle(t, c);
}

void ks_topic_settle_acks(ks_topic_t *t, int final)
{
        size_t i;

        pthread_mutex_lock(&t->lock);
        if (ks_topic_ack_count_of(t))
                ks_topic_verify_suspects(t, final);
        for (i = 1; t->learning && i < KS_LEARN_CANDIDATES; i++)
                if (t->shadow[i] && ks_topic_ack_count_of(t->shadow[i]))
                        ks_topic_verify_suspects(t->shadow[i], final);
        pthread_mutex_unlock(&t->lock);
}
