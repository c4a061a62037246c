/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_topic_impl.h
 * @brief What the files of a topic's analysis share (ks_topic.h is the
 *        interface; this is not): the topic's state and the few internal
 *        steps one file calls in another.
 *
 *  - ks_topic.c: creation, sizes, the shadows of learning, the lock;
 *  - ks_topic_facts.c: the key's facts, outside the lock;
 *  - ks_topic_count.c: partition counts and cluster facts;
 *  - ks_topic_record.c: a run of messages counted and sketched;
 *  - ks_topic_pending.c: runs kept while the partition count is unknown;
 *  - ks_topic_place.c: the analysis window, and a run placed in it;
 *  - ks_topic_sampled.c: the counters of sampling under overload;
 *  - ks_topic_ack.c: acknowledgements checked against the model, the
 *    diagnosis of disagreements, the partitioner learned from them;
 *  - ks_topic_snapshot.c: what a report reads, and whether it changed.
 *
 * Calls go one way: count and record call ack, pending, place and
 * ks_topic.c (ks_topic_stop_learning()); snapshot calls ack and sampled;
 * ack calls ks_topic.c; pending calls place; ks_topic.c calls place (a
 * window freed); facts, place and sampled call no file of the topic.
 *
 * Every function here takes the topic's lock held (@locks t->lock).
 */
#ifndef KS_TOPIC_IMPL_H
#define KS_TOPIC_IMPL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "ks_learn.h"
#include "ks_topic.h"

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

#define KS_SUSPECT_KEYS 16

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
/** One producing thread's sampled-out messages of a topic: one writer. */
typedef struct ks_sampled_slot {
        _Alignas(64) atomic_uint_fast64_t messages;
        atomic_uint_fast64_t bytes;
} ks_sampled_slot_t;

struct ks_topic {
        /* read by on_send on the producing threads (the name, to find the
         * topic again): not on the lock's line, which the drainer writes */
        char             *name;
        ks_topic_params_t params;
        _Alignas(64) pthread_mutex_t lock;
        ks_topic_counters_t c;

        int32_t partition_count; /**< the analysis's count */
        /** the newest count an answer gave (ks_topic_announce_count()):
         *  deliveries are checked against it at once, while the analysis
         *  takes it only when the drainer reaches it (ks_stage.h); 0 until
         *  the first */
        int32_t           announced_count;
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
         * partitions without a division (ks_topic_place()) */
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
        /* how many times ks_topic_note_changes() found it changed (0:
         * never asked), and what the reporter keeps with the topic: the
         * thread writing reports alone touches it, without the lock */
        uint64_t change_gen;
        void    *kept;
        void (*kept_free)(void *kept);

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
        /* sampling under overload (ks_topic_note_sampled_out(), _in()):
         * the producing threads' slots, published once by a CAS; the
         * drainer's own counters on a line of their own */
        _Atomic(ks_sampled_slot_t *) sampled_slots;
        atomic_uint_fast64_t         sampled_out_msgs, sampled_out_bytes;
        _Alignas(64) atomic_uint_fast64_t sampled_in_msgs, sampled_in_bytes,
            sampled_w_msgs, sampled_w_bytes, sampled_var, sampled_one_in_max,
            sampled_secs, sampled_last_sec;
        /* the sum of the staged sizes' squares (bytes^2), a double's bits:
         * it outgrows 64-bit integers long before the other sums */
        atomic_uint_fast64_t sampled_in_sq;
};

/** @brief Copies the sampling counters (ks_topic_note_sampled_out(),
 *         _in()) into @p c. @locks any: they are atomics. */
void ks_topic_sampled_add(ks_topic_t *t, ks_topic_counters_t *c);

/** @brief Adds @p messages and @p bytes to @p l. */
static inline void ks_load_add(ks_load_t *l, uint64_t messages, uint64_t bytes)
{
        l->messages += messages;
        l->bytes += bytes;
}

/**
 * @brief Places @p messages identical hashed (partition < 0) or explicit
 *        messages, @p bytes in all, in the current window. @p observed >= 0
 *        (a record read back from its partition, ks_topic_record_stored_locked())
 *        is the partition the messages sit in under the current count, in
 *        place of the model's; the proposals still follow the model.
 *        @locks t->lock held (ks_topic_place.c).
 */
void ks_topic_place(ks_topic_t *t, uint32_t phash, int32_t partition,
                    int32_t observed, uint64_t messages, uint64_t bytes);

/**
 * @brief Allocates the per-partition arrays of a new analysis window for
 *        count @p cur. @returns 0, or -1 on ENOMEM (window left empty).
 *        @locks t->lock held (ks_topic_place.c).
 */
int ks_topic_window_open(ks_topic_t *t, int32_t cur);

/** @brief Frees the analysis window's arrays (none left open).
 *  @locks t->lock held, or @p t unshared (ks_topic_place.c). */
void ks_topic_window_free(ks_topic_t *t);

/** @brief Keeps a run of hashed messages while no partition count is
 *         known: at most params.pending_max runs, the rest `unplaced`
 *         (ks_topic_pending.c). */
void ks_topic_pending_add(ks_topic_t *t, uint32_t phash, int32_t partition,
                          uint64_t messages, uint64_t bytes);

/** @brief Places the runs kept for the first count (@p placed 1), or
 *         counts them `unplaced` (0: its window could not be made), and
 *         frees them (ks_topic_pending.c). */
void ks_topic_pending_settle(ks_topic_t *t, int placed);

/** @brief Publishes the count lock-free acknowledgements are checked
 *         against (ks_topic_ack.c). */
void ks_topic_ack_count_publish(ks_topic_t *t);

/** @brief Adds the acknowledgements counted without the lock (matched,
 *         failed, not predictable: lock-free counters) to @p c
 *         (ks_topic_ack.c). */
void ks_topic_ack_unlocked_add(ks_topic_t *t, ks_topic_counters_t *c);

/** @brief Checks the acknowledgements kept (suspects) against the count
 *         known now; @p final: the last chance (ks_topic_ack.c). */
void ks_topic_verify_suspects(ks_topic_t *t, int final);

/** @returns the count deliveries are checked against: the newest an answer
 *           gave (ks_topic_announce_count()), else the analysis's.
 *  @locks t->lock held. */
static inline int32_t ks_topic_ack_count_of(const ks_topic_t *t)
{
        return t->announced_count ? t->announced_count : t->partition_count;
}

/** @brief The acknowledgements that came before the first count, as
 *         evidence for the partitioner being learned (ks_topic_ack.c). */
void ks_topic_learn_suspects(ks_topic_t *t);

/** @brief Frees the shadows and ends learning (ks_topic.c). */
void ks_topic_stop_learning(ks_topic_t *t);

#endif /* KS_TOPIC_IMPL_H */
