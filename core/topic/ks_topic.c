/**
 * @file ks_topic.c
 * @brief Per-topic analysis state and its update on every message.
 *
 * The key is hashed once, outside the lock: the partitioner hash (whose
 * remainder by any count is the partition) and the 64-bit sketch hash.
 * Under the lock each message then costs one remainder and two counter
 * increments per count analysed, plus the sketches' updates.
 */
#include "ks_topic.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <stdatomic.h>

#include "ks_batch.h"
#include "ks_config.h"
#include "ks_hash.h"
#include "ks_learn.h"
#include "ks_phash_cache.h"

/** A message kept while the partition count is unknown. */
typedef struct ks_pending {
        uint32_t phash;
        int32_t  partition; /**< explicit partition, or -1: hashed */
        uint32_t messages;  /**< identical messages (ks_topic_record_run) */
        uint32_t bytes;     /**< their key + value bytes, clamped */
} ks_pending_t;

/** An acknowledgement keyshift could not check yet (no count known) or
 *  that disagreed with the model under the count keyshift knew; checked
 *  again when metadata next gives the count. */
typedef struct ks_suspect {
        uint32_t phash;
        int32_t  actual;
        uint32_t family[3];    /**< the key's hash under each hash family
                                *   of ks_topic_diag_families, for the
                                *   diagnosis */
        uint8_t  has_family;   /**< 0 for an empty key */
        uint8_t  diag_counted; /**< already counted in the diagnosis when
                                *   acknowledged (ks_topic_ack()) */
        uint8_t  checked;      /**< an answer did not explain it yet */
} ks_suspect_t;

/** Unchecked acknowledgements kept per topic (24 B each, grown as they
 *  arrive, freed when checked): as many as messages may wait for the count
 *  (a producer's start-up burst is acknowledged before keyshift's metadata
 *  request, queued behind it, is answered). The first KS_SUSPECT_KEYS keep
 *  their key for the mismatch example. */
#define KS_SUSPECTS_MAX 65536

/** Acknowledgements checked against every hash family once the model was
 *  seen to disagree (3 hashes each, on librdkafka's broker threads). */
#define KS_DIAGNOSE_MAX 100000

const ks_partitioner_t ks_topic_diag_families[3] = {
    KS_PARTITIONER_CONSISTENT, KS_PARTITIONER_MURMUR2, KS_PARTITIONER_FNV1A};
#define KS_SUSPECT_KEYS 16

struct ks_topic {
        /* read by on_send on the producing threads (the name, to find the
         * topic again): not on the lock's line, which the drainer writes */
        char             *name;
        ks_topic_params_t params;
        _Alignas(64) pthread_mutex_t lock;
        ks_topic_counters_t c;

        int32_t           partition_count;
        ks_count_source_t count_source;
        int32_t           previous_count;
        int64_t           count_changed_at_ms;
        int64_t           analysis_since_ms;
        int64_t           analysis_since_mono;
        ks_load_t         window_total;
        ks_load_t         window_hashed;
        ks_load_t     waiting_spread; /**< not hashed, before the first count */
        ks_load_t    *current;
        size_t        proposal_cnt;
        ks_proposal_t proposals[KEYSHIFT_PROPOSED_MAX];
        /* ks_partition_m() of the current and proposed counts: a run's
         * partitions without a division (place()) */
        uint64_t current_m;
        uint64_t proposal_m[KEYSHIFT_PROPOSED_MAX];

        ks_pending_t *pending;
        size_t        pending_cnt;  /**< entries */
        uint64_t      pending_msgs; /**< messages in them */

        ks_suspect_t         *suspects;
        size_t                suspect_cnt;
        size_t                suspect_cap;
        ks_mismatch_example_t suspect_keys[KS_SUSPECT_KEYS];
        ks_mismatch_example_t mismatch;
        int                   has_mismatch;
        int             diagnosing; /**< a delivered partition disagreed */
        ks_schema_ids_t schema_ids;
        int             brokers, replication_factor, compacted;
        /** the cluster's count while the model's comes from
         *  keyshift.partitions.current (0: unknown) */
        int32_t    metadata_count;
        int        cleanup_policy_asked;
        ks_rates_t rates;
        /* ks_topic_note_changes(): the reporter's last fingerprint of the
         * counters, and when it last saw them change (wall clock ms) */
        uint64_t change_fp;
        int64_t  last_changed_ms;

        /* The partitioner, learned from the acknowledgements (ks_learn.h).
         * While learning, shadow[i] (i >= 1) is a topic of its own for
         * candidate i, fed every run, count and acknowledgement this one
         * gets, always under this topic's lock (never its own); the one
         * the deliveries confirm trades its analysis with this one
         * (promote()). model is params.partitioner for the readers that
         * take no lock (ks_topic_key_facts(), ks_topic_ack()). */
        int                     learning;
        ks_learn_t              learn;
        ks_topic_t             *shadow[KS_LEARN_CANDIDATES];
        ks_partitioner_source_t psource;
        int                     unexplained;
        ks_load_t              *delivered; /**< [delivered_cnt] from acks */
        int32_t                 delivered_cnt;
        atomic_int              model;

        ks_hll_t        hll;
        ks_keysample_t *sample; /**< payload: ks_model_hashes_t */
        ks_mixed_t     *mixed;
        /* 4-byte keys seen as int32_be and as text: a text-looking 4-byte
         * key on a topic of int32 keys is an int32 (ks_keyenc.h, rule 2) */
        uint64_t   int32_keys;
        uint64_t   text4_keys;
        ks_topk_t *topk;
        uint64_t   window_id; /**< ks_topic_window_begin_locked()'s last */
        /* set on the produce path when a message names its partition, so
         * that an acknowledgement checked before that message was analysed
         * (staging, ks_stage.h) knows the topic has explicit partitions */
        atomic_int explicit_seen;
        /* set once, under the lock, when a partition count is first known:
         * read by the drainer without it (ks_topic_count_known()) */
        atomic_int count_known;
        /* acknowledgements whose outcome needs nothing the lock guards
         * (ks_topic_ack()), counted on a line of their own: librdkafka's
         * broker thread writes it, the drainer never does. ack_count is
         * the count they are checked against: partition_count, or 0 while
         * every acknowledgement takes the lock (count unknown, or a
         * disagreement being diagnosed); set under the lock. */
        _Alignas(64) atomic_int ack_count;
        atomic_uint_fast64_t ack_matched, ack_failed, ack_not_predictable;
        /* messages on_send could not stage (ring full), not analysed: a
         * line of its own, written by producing threads only (the lines
         * around it are the drainer's) */
        _Alignas(64) atomic_uint_fast64_t unanalysed;
        char unanalysed_pad[64 - sizeof(atomic_uint_fast64_t)];
};

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

static void load_add(ks_load_t *l, uint64_t messages, uint64_t bytes)
{
        l->messages += messages;
        l->bytes += bytes;
}

/* Heap per entry and per topic, as bench/ksb_memory measures them with
 * glibc malloc (ksb_memory --keys 0 with each size changed in turn): a
 * key-sample key 69 B (node, index slots, free list, other clients'
 * hashes), a mixed-sample logical key 182 B (the same plus two encodings'
 * first 40 bytes); the hot-key counters what ks_topk_bytes() says (232 B
 * a counter at 1024, up to 248 B between powers of two: 128 key bytes,
 * counts, heap and index slots, filter cells); the rest of a topic 36 KiB
 * (HyperLogLog 16 KiB, struct, rates, small per-partition arrays). */
#define KS_TOPIC_BYTES_SAMPLE_KEY 69
#define KS_TOPIC_BYTES_MIXED_KEY 182
#define KS_TOPIC_BYTES_FIXED (36 * 1024)

size_t ks_topic_sketch_bytes(const ks_topic_params_t *p)
{
        return KS_TOPIC_BYTES_FIXED +
               p->key_sample_size * KS_TOPIC_BYTES_SAMPLE_KEY +
               p->mixed_sample_size * KS_TOPIC_BYTES_MIXED_KEY +
               ks_topk_bytes(p->topk_capacity);
}

/** @returns @p n scaled by @p f, at least @p min (and never above n). */
static size_t scaled(size_t n, double f, size_t min)
{
        size_t s = (size_t)((double)n * f);

        if (s < min)
                s = min;
        return s < n ? s : n;
}

void ks_topic_params_from_config(ks_topic_params_t *p, const ks_config_t *k)
{
        memcpy(p->proposed, k->proposed, sizeof(k->proposed));
        p->proposed_cnt      = k->proposed_cnt;
        p->key_sample_size   = (size_t)k->key_sample_size;
        p->mixed_sample_size = (size_t)k->mixed_sample_size;
        p->topk_capacity =
            k->hot_keys * 16 > 1024 ? (size_t)k->hot_keys * 16 : 1024;
        p->flow_max_cells = k->flow_max_cells;
        p->pending_max    = KS_PENDING_MAX;
        /* keyshift.memory.max.mb covers the sketches and the drainer's
         * key table (an eighth, at most 8 MiB, and its tags: 4 B a
         * slot, 512 KiB at most) */
        p->sketch_budget =
            ks_batch_sketch_budget((size_t)k->memory_max_mb << 20);
}

void ks_topic_params_fit(ks_topic_params_t *p, size_t bytes)
{
        size_t var = ks_topic_sketch_bytes(p) - KS_TOPIC_BYTES_FIXED;
        double f;

        if (ks_topic_sketch_bytes(p) <= bytes)
                return;
        f = bytes > KS_TOPIC_BYTES_FIXED
                ? (double)(bytes - KS_TOPIC_BYTES_FIXED) / (double)var
                : 0.0;
        /* the hot-key index is a power of two: a share of f may still
         * be a little over, so shrink on by 1/16 until it fits (or all
         * three are at their minimum) */
        for (;;) {
                p->key_sample_size =
                    scaled(p->key_sample_size, f, KS_TOPIC_SAMPLE_MIN);
                p->mixed_sample_size =
                    scaled(p->mixed_sample_size, f, KS_TOPIC_SAMPLE_MIN);
                p->topk_capacity =
                    scaled(p->topk_capacity, f, KS_TOPIC_TOPK_MIN);
                if (ks_topic_sketch_bytes(p) <= bytes ||
                    (p->key_sample_size == KS_TOPIC_SAMPLE_MIN &&
                     p->mixed_sample_size == KS_TOPIC_SAMPLE_MIN &&
                     p->topk_capacity == KS_TOPIC_TOPK_MIN))
                        break;
                f = 15.0 / 16.0;
        }
}

static void ack_count_publish(ks_topic_t *t);

/** Messages after which a topic still learning (no acknowledgements, or
 *  too few discriminating keys) stops: the configured partitioner,
 *  unconfirmed, and the shadows' memory freed. */
#define KS_LEARN_MAX_MESSAGES 1000000

/** Messages after which a topic still learning without a single
 *  successful acknowledgement (a queue-only producer, brokers down,
 *  purged or timed-out messages) stops the same
 *  way: the candidates' analyses cost up to three times the topic's, and
 *  a producer that is acknowledged gets its first acknowledgements long
 *  before (unless it sends 100,000 messages within its first linger). */
#define KS_LEARN_NO_ACK_MESSAGES 100000

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
static void stop_learning(ks_topic_t *t)
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
        ks_rates_init(&t->rates, ks_topic_mono_ms());
        t->compacted = -1;
        atomic_init(&t->explicit_seen, 0);
        atomic_init(&t->count_known, 0);
        atomic_init(&t->unanalysed, 0);
        pthread_mutex_init(&t->lock, NULL);
        t->analysis_since_ms   = now_ms;
        t->analysis_since_mono = ks_topic_mono_ms();
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
        if (t->sample && t->topk && t->name && t->mixed)
                pthread_mutex_destroy(&t->lock);
        stop_learning(t);
        free(t->delivered);
        free_window(t);
        free(t->pending);
        free(t->suspects);
        ks_keysample_destroy(t->sample);
        ks_mixed_destroy(t->mixed);
        ks_topk_destroy(t->topk);
        free(t->name);
        free(t);
}

const char *ks_topic_name(const ks_topic_t *t)
{
        return t->name;
}

/**
 * @brief Places @p messages identical hashed (partition < 0) or explicit
 *        messages, @p bytes in all, in the current window. @p observed >= 0
 *        (a record read back from its partition, ks_topic_record_stored_locked())
 *        is the partition the messages sit in under the current count, in
 *        place of the model's; the proposals still follow the model.
 *        @locks t->lock held.
 */
static void place(ks_topic_t *t, uint32_t phash, int32_t partition,
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
                load_add(&t->window_hashed, messages, bytes);
        }
        load_add(&t->window_total, messages, bytes);
        load_add(&t->current[pc], messages, bytes);

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
                load_add(&p->partitions[pp], messages, bytes);
                if (p->flow)
                        p->flow[(size_t)pc * (size_t)p->partition_count +
                                (size_t)pp] += messages;
                /* Without a branch: on a stream of new keys, whether a
                 * run moves is a coin toss per proposal (half of the keys
                 * at a doubling); the branch's mispredictions cost ~20 ns
                 * a message at 3 proposals (bench/README.md). */
                moved = (uint64_t)0 - (uint64_t)(pp != pc);
                load_add(&p->moved, messages & moved, bytes & moved);
        }
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

/** @brief Counts @p messages of a key framed with Schema Registry id @p id
 *         (@p key_hash: its ks_hash_key64()); see ks_schema_ids_t. */
static void count_schema_id(ks_schema_ids_t *s, int32_t id, uint64_t key_hash,
                            uint64_t messages)
{
        size_t i, single = KS_TOPIC_SCHEMA_IDS;

        s->clock++;
        for (i = 0; i < s->cnt; i++) {
                if (s->id[i] == id) {
                        s->messages[i] += messages;
                        s->seen[i] = s->clock;
                        if (s->first_key[i] != key_hash)
                                s->keys[i] = 2;
                        return;
                }
                if (s->keys[i] == 1 && (single == KS_TOPIC_SCHEMA_IDS ||
                                        s->seen[i] < s->seen[single]))
                        single = i;
        }
        if (s->cnt < KS_TOPIC_SCHEMA_IDS) {
                i = s->cnt++;
        } else if (single < KS_TOPIC_SCHEMA_IDS) {
                /* the place of the single-key id seen least recently */
                i = single;
                s->other_messages += s->messages[i];
        } else {
                s->other_messages += messages;
                return;
        }
        s->id[i]        = id;
        s->messages[i]  = messages;
        s->first_key[i] = key_hash;
        s->keys[i]      = 1;
        s->seen[i]      = s->clock;
}

/**
 * @brief Counts @p messages of a hashed key in the key sample; a key it
 *        admits gets the other clients' partitioner hashes (computed once
 *        per sampled key, not per message). @locks t->lock held.
 */
static void sample_key(ks_topic_t *t, const void *key, size_t keylen,
                       uint64_t h64, uint32_t phash, uint64_t messages,
                       uint64_t bytes)
{
        int                admitted;
        ks_model_hashes_t *mh = ks_keysample_add_payload_n(
            t->sample, h64, phash, messages, bytes, &admitted);
        int m;

        if (!admitted || !mh)
                return;
        for (m = 0; m < KS_CLIENT__CNT; m++) {
                if (!ks_clients_hashes((ks_client_model_t)m, key, keylen))
                        continue;
                mh->hashes_mask |= (uint8_t)(1u << m);
                mh->hash[m] =
                    ks_clients_hash((ks_client_model_t)m, key, keylen);
        }
}

int64_t ks_topic_mono_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t ks_topic_wall_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
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

void ks_topic_rate_locked(ks_topic_t *t, int64_t mono_ms, uint64_t messages,
                          uint64_t bytes)
{
        ks_rates_add_n(&t->rates, mono_ms, messages, bytes);
}

void ks_topic_window_begin_locked(ks_topic_t *t, uint64_t window)
{
        size_t i;

        if (t->window_id == window)
                return;
        t->window_id = window;
        ks_topk_window_begin(t->topk);
        for (i = 1; t->learning && i < KS_LEARN_CANDIDATES; i++)
                if (t->shadow[i])
                        ks_topic_window_begin_locked(t->shadow[i], window);
}

/** @returns @p f, or @p own made again for @p t when @p f was made for
 *           another partitioner (promote() came in between). */
static const ks_key_facts_t *facts_for(ks_topic_t *t, const void *key,
                                       size_t keylen, int32_t partition,
                                       const ks_key_facts_t *f,
                                       ks_key_facts_t       *own)
{
        if (f->partitioner == (uint8_t)t->params.partitioner)
                return f;
        ks_topic_key_facts(t, key, keylen, partition, own);
        return own;
}

void ks_topic_offer_run_locked(ks_topic_t *t, const void *key, size_t keylen,
                               const ks_key_facts_t *f, uint64_t messages,
                               uint64_t bytes, int windowed)
{
        ks_key_facts_t own;
        size_t         i;

        for (i = 1; t->learning && i < KS_LEARN_CANDIDATES; i++)
                if (t->shadow[i]) {
                        /* offers are of hashed keys (the hot-key summary's):
                         * a key the candidate does not hash is not its */
                        ks_key_facts_t sf;
                        ks_topic_key_facts(t->shadow[i], key, keylen, -1, &sf);
                        if (sf.place == KS_PLACE_HASHED)
                                ks_topic_offer_run_locked(t->shadow[i], key,
                                                          keylen, &sf, messages,
                                                          bytes, windowed);
                }
        f = facts_for(t, key, keylen, -1, f, &own);
        if (windowed)
                ks_topk_window_add(t->topk, key, keylen, f->h64, f->phash,
                                   messages, bytes);
        else
                ks_topk_add_n(t->topk, key, keylen, f->h64, f->phash, messages,
                              bytes);
}

/**
 * @brief ks_topic_record_run_locked(), with @p observed the partition the
 *        messages are stored in (-1: not known, the model places them).
 */
static int record_run(ks_topic_t *t, const void *key, size_t keylen,
                      int32_t partition, int32_t observed,
                      const ks_key_facts_t *f, uint64_t messages,
                      uint64_t bytes, int windowed)
{
        int offer = 0;

        ks_keyenc_t    enc        = (ks_keyenc_t)f->enc;
        ks_placement_t place_kind = (ks_placement_t)f->place;

        if (keylen == 4 && enc == KS_KEYENC_TEXT) {
                /* ks_keyenc.h, rule 2: on a topic that also carries int32
                 * keys, a text-looking 4-byte key is an int32 */
                if (t->text4_keys < t->int32_keys)
                        enc = KS_KEYENC_INT32_BE;
                t->text4_keys += messages;
        } else if (enc == KS_KEYENC_INT32_BE) {
                t->int32_keys += messages;
        }

        load_add(&t->c.total, messages, bytes);
        if (!key)
                t->c.null_keys += messages;
        else if (keylen == 0)
                t->c.empty_keys += messages;
        t->c.key_encodings[enc] += messages;
        if (f->schema_id >= 0) /* h64 is there for hashed keys only */
                count_schema_id(&t->schema_ids, f->schema_id,
                                partition < 0 && place_kind == KS_PLACE_HASHED
                                    ? f->h64
                                    : ks_hash_key64(key, keylen),
                                messages);

        if (partition >= 0) {
                load_add(&t->c.explicit_partition, messages, bytes);
        } else if (place_kind == KS_PLACE_STICKY) {
                load_add(&t->c.sticky, messages, bytes);
        } else if (place_kind == KS_PLACE_RANDOM) {
                load_add(&t->c.random, messages, bytes);
        } else {
                load_add(&t->c.hashed, messages, bytes);
                ks_hll_add(&t->hll, f->h64);
                sample_key(t, key, keylen, f->h64, f->phash, messages, bytes);
                if (windowed == KS_RUN_HOT_NOW) {
                        ks_topk_add_n(t->topk, key, keylen, f->h64, f->phash,
                                      messages, bytes);
                } else if (windowed == KS_RUN_HOT_WINDOW) {
                        offer = !ks_topk_window_bump(t->topk, f->h64, messages,
                                                     bytes);
                } else {
                        t->c.hot_passed_by += messages;
                        if (windowed == KS_RUN_HOT_SAMPLED) {
                                t->c.hot_sampled += messages;
                                ks_topk_add_n(t->topk, key, keylen, f->h64,
                                              f->phash,
                                              messages * KS_HOT_SAMPLE_ONE_IN,
                                              bytes * KS_HOT_SAMPLE_ONE_IN);
                        }
                }
                if (f->has_logical)
                        ks_mixed_add_n(t->mixed, f->lhash, enc, key, keylen,
                                       f->phash, messages, bytes);
        }

        if (observed >= 0 && (!t->current || observed >= t->partition_count)) {
                /* a stored record needs the count it is stored under */
                t->c.unplaced += messages;
        } else if (place_kind == KS_PLACE_HASHED) {
                if (t->current) {
                        place(t, f->phash, partition, observed, messages,
                              bytes);
                } else if (t->partition_count == 0 &&
                           t->pending_cnt < t->params.pending_max) {
                        if (!t->pending)
                                t->pending = malloc(t->params.pending_max *
                                                    sizeof(*t->pending));
                        if (t->pending) {
                                t->pending[t->pending_cnt++] = (ks_pending_t){
                                    f->phash, partition,
                                    messages > UINT32_MAX ? UINT32_MAX
                                                          : (uint32_t)messages,
                                    bytes > UINT32_MAX ? UINT32_MAX
                                                       : (uint32_t)bytes};
                                t->pending_msgs += messages;
                        } else {
                                t->c.unplaced += messages;
                        }
                } else {
                        t->c.unplaced += messages;
                }
        } else if (t->current) {
                load_add(&t->window_total, messages, bytes);
                if (observed >= 0) /* where it is stored: a real load */
                        load_add(&t->current[observed], messages, bytes);
        } else if (t->partition_count == 0) {
                load_add(&t->waiting_spread, messages, bytes);
        }
        return offer;
}

int ks_topic_record_run_locked(ks_topic_t *t, const void *key, size_t keylen,
                               int32_t partition, const ks_key_facts_t *f,
                               uint64_t messages, uint64_t bytes, int windowed)
{
        ks_key_facts_t own;
        size_t         i;
        int            offer;

        f     = facts_for(t, key, keylen, partition, f, &own);
        offer = record_run(t, key, keylen, partition, -1, f, messages, bytes,
                           windowed);
        if (!t->learning)
                return offer;
        /* each candidate places the same run its own way; the hot-key
         * summaries see the same keys in the same order, so they decide
         * the same offers as this one's */
        for (i = 1; i < KS_LEARN_CANDIDATES; i++)
                if (t->shadow[i]) {
                        ks_key_facts_t sf;
                        ks_topic_key_facts(t->shadow[i], key, keylen, partition,
                                           &sf);
                        record_run(t->shadow[i], key, keylen, partition, -1,
                                   &sf, messages, bytes, windowed);
                }
        if (t->c.total.messages >= KS_LEARN_MAX_MESSAGES ||
            (t->c.total.messages >= KS_LEARN_NO_ACK_MESSAGES &&
             t->c.ack_messages == t->c.ack_failed)) {
                /* never settled (no acknowledgements, or no key that
                 * tells the candidates apart): the configured one stays,
                 * unconfirmed */
                stop_learning(t);
                ack_count_publish(t);
        }
        return offer;
}

int ks_topic_record_stored_locked(ks_topic_t *t, const void *key, size_t keylen,
                                  int32_t stored, const ks_key_facts_t *f,
                                  uint64_t messages, uint64_t bytes)
{
        return record_run(t, key, keylen, -1, stored < 0 ? INT32_MAX : stored,
                          f, messages, bytes, 0);
}

uint64_t ks_topic_hot_sampling_error(uint64_t sampled, uint64_t count)
{
        if (!sampled)
                return 0;
        return (uint64_t)ceil(3.0 *
                              sqrt((double)count * (KS_HOT_SAMPLE_ONE_IN - 1)));
}

void ks_topic_record(ks_topic_t *t, const void *key, size_t keylen,
                     int32_t partition, size_t value_len)
{
        ks_topic_record_at(t, key, keylen, partition, value_len,
                           ks_topic_mono_ms());
}

void ks_topic_record_at(ks_topic_t *t, const void *key, size_t keylen,
                        int32_t partition, size_t value_len, int64_t mono_ms)
{
        uint64_t       bytes = (uint64_t)keylen + (uint64_t)value_len;
        ks_key_facts_t f;

        ks_topic_key_facts(t, key, keylen, partition, &f);
        pthread_mutex_lock(&t->lock);
        ks_rates_add_n(&t->rates, mono_ms, 1, bytes);
        ks_topic_record_run_locked(t, key, keylen, partition, &f, 1, bytes, 0);
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

int ks_topic_count_known(const ks_topic_t *t)
{
        return atomic_load_explicit(&t->count_known, memory_order_relaxed);
}

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
static void ack_count_publish(ks_topic_t *t)
{
        /* learning and unexplained placements count every
         * acknowledgement under the lock (ks_topic_ack_message()) */
        atomic_store_explicit(&t->ack_count,
                              t->diagnosing || t->learning || t->unexplained
                                  ? 0
                                  : t->partition_count,
                              memory_order_release);
}

/**
 * @brief The outcomes of an acknowledgement that need no state the lock
 *        guards, counted with one atomic addition: a failure, a placement
 *        no hash decides, or the partition the count published
 *        (ack_count_publish()) gives. @returns 1 if counted, 0 if the
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

/** @brief Adds the acknowledgements ack_unlocked() counted to @p c. */
static void ack_unlocked_add(ks_topic_t *t, ks_topic_counters_t *c)
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
        ack_unlocked_add(t, &st.c);
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
        }
        pthread_mutex_unlock(&t->lock);
        return changed;
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
        cur = t->partition_count;
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
        } else if (t->previous_count &&
                   ks_partition_of(phash, t->previous_count) == partition) {
                /* Placed under the count before the change we saw. */
                t->c.ack_matched++;
        } else if (!t->has_mismatch) {
                /* The first disagreements: perhaps the count changed and
                 * keyshift has not seen it yet; checked at the next
                 * metadata (beyond KS_SUSPECTS_MAX waiting: unverified,
                 * never a mismatch unchecked). Once a disagreement is
                 * confirmed (verify_suspects(): a custom or per-topic
                 * partitioner), later ones are counted at once and ask
                 * for no more metadata. */
                if (!add_suspect(t, phash, partition, key, keylen, counted))
                        t->c.ack_unverified++;
                suspect       = 1;
                t->diagnosing = 1;
                ack_count_publish(t);
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
                int32_t    n = partition + 1 > t->partition_count
                                   ? partition + 1
                                   : t->partition_count;
                ks_load_t *grown =
                    realloc(t->delivered, (size_t)n * sizeof(*grown));
                if (!grown)
                        return;
                memset(grown + t->delivered_cnt, 0,
                       (size_t)(n - t->delivered_cnt) * sizeof(*grown));
                t->delivered     = grown;
                t->delivered_cnt = n;
        }
        load_add(&t->delivered[partition], 1, bytes);
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
        stop_learning(t);
        t->psource = i > 0 ? KS_PSOURCE_DELIVERIES : KS_PSOURCE_CONFIG;
        ack_count_publish(t);
}

/** @brief Acts on what the rule (ks_learn.h) says after new evidence:
 *         candidate @p c (>= 0) confirmed, or none explains the deliveries.
 *         @locks t->lock held. */
static void learn_settle(ks_topic_t *t, int c)
{
        if (c >= 0) {
                promote(t, c);
        } else if (t->learn.state == KS_LEARN_UNEXPLAINED) {
                stop_learning(t);
                /* under keyshift.partitions.current the count itself may
                 * be what is wrong (a rehearsal of 6 partitions on a
                 * 4-partition mock topic): the configured partitioner
                 * stays, unconfirmed (COUNT_REHEARSED or
                 * PARTITIONER_MISMATCH says more) */
                t->unexplained = t->count_source != KS_COUNT_CONFIG;
                ack_count_publish(t);
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
        if (failed || explicit || !t->partition_count)
                return;
        c = ks_learn_ack(&t->learn, key, keylen, t->partition_count, partition);
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
static void verify_suspects(ks_topic_t *t, int final)
{
        int explicit    = explicit_seen(t);
        int    confirm  = final || t->has_mismatch;
        int    mismatch = 0;
        size_t i, kept = 0;

        for (i = 0; i < t->suspect_cnt; i++) {
                const ks_suspect_t *s = &t->suspects[i];
                if (ks_partition_of(s->phash, t->partition_count) ==
                        s->actual ||
                    explicit)
                        continue;
                confirm |= s->checked;
                mismatch = 1;
        }
        mismatch &= confirm;
        for (i = 0; i < t->suspect_cnt; i++) {
                ks_suspect_t *s = &t->suspects[i];
                int32_t       expected =
                    ks_partition_of(s->phash, t->partition_count);
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
                                t->mismatch          = suspect_key(t, i);
                                t->mismatch.expected = expected;
                                t->mismatch.actual   = s->actual;
                                t->mismatch.partition_count =
                                    t->partition_count;
                        }
                        t->has_mismatch = 1;
                }
                /* a mismatch confirmed: which hash do the deliveries
                 * follow? (those counted when acknowledged, while
                 * diagnosing, are not counted twice) */
                if ((mismatch || t->has_mismatch) && s->has_family &&
                    !s->diag_counted && t->c.diag_checked < KS_DIAGNOSE_MAX)
                        diag_count(t, s->family, t->partition_count, s->actual);
        }
        t->c.ack_pending -= t->suspect_cnt - kept;
        t->suspect_cnt = kept;
        t->diagnosing  = t->has_mismatch || kept;
        if (!t->diagnosing) {
                t->c.diag_checked = 0;
                memset(t->c.diag_follow, 0, sizeof(t->c.diag_follow));
        }
        ack_count_publish(t);
        if (!kept) {
                free(t->suspects);
                t->suspects    = NULL;
                t->suspect_cap = 0;
        }
}

/** @brief ks_topic_set_partition_count() under the lock.
 *  @locks t->lock held. */
static int set_count_locked(ks_topic_t *t, int32_t count,
                            ks_count_source_t source, int64_t now_ms)
{
        int    changed = 0;
        size_t i;

        t->count_source = source;
        if (count != t->partition_count) {
                if (t->partition_count) {
                        changed                = 1;
                        t->previous_count      = t->partition_count;
                        t->count_changed_at_ms = now_ms;
                        t->analysis_since_ms   = now_ms;
                        t->analysis_since_mono = ks_topic_mono_ms();
                }
                free_window(t);
                t->partition_count = count;
                ack_count_publish(t);
                atomic_store_explicit(&t->count_known, 1, memory_order_relaxed);
                if (open_window(t, count) == 0) {
                        /* The first count: what waited for it joins. */
                        t->window_total = t->waiting_spread;
                        for (i = 0; i < t->pending_cnt; i++) {
                                ks_pending_t *p = &t->pending[i];
                                place(t, p->phash, p->partition, -1,
                                      p->messages, p->bytes);
                        }
                } else {
                        t->c.unplaced += t->pending_msgs;
                }
                t->waiting_spread = (ks_load_t){0, 0};
                free(t->pending);
                t->pending      = NULL;
                t->pending_cnt  = 0;
                t->pending_msgs = 0;
        }
        verify_suspects(t, 0);
        return changed;
}

/** @brief The acknowledgements that came before the first count, as
 *         evidence for the rule (their family hashes were kept).
 *  @locks t->lock held. */
static void learn_suspects(ks_topic_t *t)
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
                            t->partition_count, sp->actual);
        }
        learn_settle(t, c);
}

int ks_topic_set_partition_count(ks_topic_t *t, int32_t count,
                                 ks_count_source_t source, int64_t now_ms)
{
        int    changed, first;
        size_t i;

        if (count < 1 || count > KEYSHIFT_PARTITIONS_MAX)
                return 0;
        pthread_mutex_lock(&t->lock);
        first = t->partition_count == 0;
        /* the suspects before verify_suspects() settles them */
        if (t->learning && first && t->suspect_cnt) {
                t->partition_count = count;
                learn_suspects(t);
                t->partition_count = 0;
        }
        changed = set_count_locked(t, count, source, now_ms);
        for (i = 1; t->learning && i < KS_LEARN_CANDIDATES; i++)
                if (t->shadow[i])
                        set_count_locked(t->shadow[i], count, source, now_ms);
        pthread_mutex_unlock(&t->lock);
        return changed;
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
                stop_learning(t);
                ack_count_publish(t);
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

void ks_topic_settle_acks(ks_topic_t *t, int final)
{
        size_t i;

        pthread_mutex_lock(&t->lock);
        if (t->partition_count)
                verify_suspects(t, final);
        for (i = 1; t->learning && i < KS_LEARN_CANDIDATES; i++)
                if (t->shadow[i] && t->shadow[i]->partition_count)
                        verify_suspects(t->shadow[i], final);
        pthread_mutex_unlock(&t->lock);
}

int32_t ks_topic_partition_count(ks_topic_t *t)
{
        int32_t n;

        pthread_mutex_lock(&t->lock);
        n = t->partition_count;
        pthread_mutex_unlock(&t->lock);
        return n;
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

int ks_topic_snapshot(ks_topic_t *t, ks_topic_snapshot_t *s)
{
        size_t              i, hot_cap = ks_topk_capacity(t->topk);
        size_t              k   = ks_keysample_capacity(t->sample);
        snapshot_scratch_t *sc  = scratch_get(t);
        int                 oom = !sc;
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
                s->partitioner      = t->params.partitioner;
                s->sticky_linger_ms = t->params.sticky_linger_ms;
                learned_copy(t, &s->learned);
                s->c = t->c;
                s->c.unanalysed =
                    atomic_load_explicit(&t->unanalysed, memory_order_relaxed);
                ack_unlocked_add(t, &s->c);
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
                s->mono_ms             = ks_topic_mono_ms();
                s->rates               = t->rates;
                ks_rates_mark(&t->rates, s->mono_ms); /* next interval */
                ks_keysample_raw_copy(t->sample, &sc->sample);
                ks_mixed_copy(t->mixed, &sc->mixed);
                s->sample_distinct_estimate =
                    ks_keysample_distinct_estimate(t->sample);
                ks_topk_raw_copy(t->topk, &sc->hot);
                s->topk_total    = ks_topk_total(t->topk);
                s->topk_capacity = hot_cap;
                if (t->current) {
                        size_t cur = (size_t)t->partition_count;
                        s->current =
                            dup_mem(t->current, cur * sizeof(*t->current));
                        oom |= !s->current;
                        if (t->unexplained && s->current)
                                delivered_loads(t, s->current, cur);
                        s->proposal_cnt = t->proposal_cnt;
                        for (i = 0; i < t->proposal_cnt; i++) {
                                const ks_proposal_t *p = &t->proposals[i];
                                ks_proposal_t       *d = &s->proposals[i];
                                size_t n           = (size_t)p->partition_count;
                                d->partition_count = p->partition_count;
                                d->moved           = p->moved;
                                d->partitions      = dup_mem(p->partitions,
                                                             n * sizeof(ks_load_t));
                                d->flow            = dup_mem(p->flow,
                                                             cur * n * sizeof(uint64_t));
                                oom |= !d->partitions || (p->flow && !d->flow);
                        }
                }
        } else {
                oom = 1;
        }
        clock_gettime(CLOCK_MONOTONIC, &l1);
        pthread_mutex_unlock(&t->lock);
        s->lock_held_ns = (int64_t)(l1.tv_sec - l0.tv_sec) * 1000000000 +
                          (l1.tv_nsec - l0.tv_nsec);
        if (!oom) {
                s->sample_cnt = ks_keysample_raw_entries(&sc->sample, s->sample,
                                                         s->sample_models);
                s->hot_cnt    = ks_topk_raw_entries(&sc->hot, s->hot);
                sort_hot(s->hot, s->hot_cnt);
                s->mixed_cnt = ks_mixed_raw_collisions(&sc->mixed, s->mixed,
                                                       KS_TOPIC_MIXED_MAX,
                                                       &s->mixed_summary);
        }
        if (oom) {
                ks_topic_snapshot_free(s);
                return -1;
        }
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

void ks_sketch_tally_add(ks_sketch_tally_t *tl, const ks_topic_snapshot_t *s,
                         const ks_topic_params_t *asked)
{
        int r = 0;

        r |= tally_one(&tl->key_sample_reduced, &tl->key_sample_min,
                       s->sample_capacity, asked->key_sample_size);
        r |= tally_one(&tl->mixed_sample_reduced, &tl->mixed_sample_min,
                       s->mixed_summary.capacity, asked->mixed_sample_size);
        r |= tally_one(&tl->topk_reduced, &tl->topk_min, s->topk_capacity,
                       asked->topk_capacity);
        tl->topics++;
        tl->reduced += (size_t)r;
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
