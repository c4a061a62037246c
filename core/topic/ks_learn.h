/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_learn.h
 * @brief Which partitioner really places a topic's messages, learned from
 *        the partitions librdkafka acknowledges.
 *
 * Why: a producer's partitioner may be set where a plugin cannot read it
 * (kcat's `-X partitioner=...` and any `rd_kafka_topic_new(rk, name,
 * tconf)` set it on a topic configuration of their own), and a model of
 * the wrong one gets every figure wrong. Every acknowledgement names the
 * partition the message really went to: the proof.
 *
 * Candidates: the partitioner read from the configuration (index 0), and
 * the `_random` variant of each other hash family (consistent = CRC-32,
 * murmur2, fnv1a; librdkafka rd_kafka_msg_partitioner_*): two or three
 * partitioners, each with its own NULL- and empty-key rule. A family
 * decides a non-empty key's partition, so only non-empty keys are
 * evidence: their NULL/empty rule stays the candidate's.
 *
 * The rule (ks_learn_ack()): an acknowledged message with a non-empty key
 * under a known count is **discriminating** when the candidates that hash
 * it do not all give the same partition. Each discriminating
 * acknowledgement counts for every candidate as agreeing (its partition is
 * the delivered one) or disagreeing. A candidate is **confirmed** once
 * KS_LEARN_CONFIRM_KEYS distinct discriminating keys (64-bit key hashes)
 * were acknowledged, it agreed with every one of them and every other
 * candidate disagreed at least once. When that many keys leave no
 * candidate without a disagreement, the placement is **unexplained** (an
 * application partitioner_cb, or explicit partitions): no candidate's
 * figures are right. Keys on which all candidates agree prove nothing and
 * are not counted. A configured `random` partitioner hashes no key: it is
 * confirmed when the deliveries rule out every hash family.
 *
 * Memory: fixed, a few hundred bytes a topic. Not thread-safe: the
 * caller (ks_topic_ack.c, ks_topic_record.c) holds the topic's lock.
 */
#ifndef KS_LEARN_H
#define KS_LEARN_H

#include <stddef.h>
#include <stdint.h>

#include "ks_partitioner.h"

/** Candidates at most: the configured one and three hash families. */
#define KS_LEARN_CANDIDATES 4

/** Distinct discriminating keys needed to confirm (or to give up). */
#define KS_LEARN_CONFIRM_KEYS 32

typedef enum ks_learn_state {
        KS_LEARN_LEARNING,    /**< not yet enough evidence */
        KS_LEARN_CONFIRMED,   /**< one candidate explains every key */
        KS_LEARN_UNEXPLAINED, /**< none does */
} ks_learn_state_t;

typedef struct ks_learn {
        size_t           cnt;
        ks_partitioner_t cand[KS_LEARN_CANDIDATES]; /**< [0]: configured */
        int              sticky_linger_ms;
        uint64_t         agree[KS_LEARN_CANDIDATES];
        uint64_t         disagree[KS_LEARN_CANDIDATES];
        uint64_t         discriminating; /**< acknowledgements counted */
        uint64_t         keys[KS_LEARN_CONFIRM_KEYS]; /**< distinct ones */
        size_t           key_cnt;
        ks_learn_state_t state;
        int              confirmed; /**< index in cand, or -1 */
} ks_learn_t;

/** @brief Starts learning for a topic whose configuration names
 *         @p configured (with @p sticky_linger_ms, ks_partitioner.h). */
void ks_learn_init(ks_learn_t *l, ks_partitioner_t configured,
                   int sticky_linger_ms);

/**
 * @brief Counts one acknowledgement: @p key (@p keylen bytes; NULL or
 *        empty prove nothing) delivered to @p actual under @p count
 *        partitions.
 * @returns the index of the candidate this acknowledgement confirmed, or
 *          -1 (nothing new; also once settled, confirmed or unexplained).
 */
int ks_learn_ack(ks_learn_t *l, const void *key, size_t keylen, int32_t count,
                 int32_t actual);

/**
 * @brief ks_learn_ack() of a non-empty key given by its hashes under the
 *        families consistent, murmur2 and fnv1a (ks_partitioner_hash() of
 *        KS_PARTITIONER_CONSISTENT, _MURMUR2, _FNV1A) and a 64-bit
 *        identity (distinct keys are counted by it).
 */
int ks_learn_ack_hashed(ks_learn_t *l, const uint32_t family[3],
                        uint64_t key_id, int32_t count, int32_t actual);

/** @returns the evidence of candidate @p i as `{discriminating_keys,
 *           agreeing, disagreeing}` figures into the out-parameters. */
void ks_learn_evidence(const ks_learn_t *l, size_t i, uint64_t *keys,
                       uint64_t *agreeing, uint64_t *disagreeing);

#endif
