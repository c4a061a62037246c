/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_registry.h
 * @brief A producer's topics, looked up by name on every message.
 *
 * Lookups are lock-free (an open-addressing table of atomic pointers that
 * only ever gains entries while the producer lives); inserting a topic
 * takes the registry's mutex. Topics that keyshift.topics excludes are
 * remembered too, so the regular expression runs once per topic, not once
 * per message. At most keyshift.topics.max topics are analysed; messages
 * to further topics are counted in `untracked_messages`.
 *
 * Sketch budget: when params->sketch_budget is set, a new topic's
 * sketches are sized (ks_topic_params_fit()) to what is left of the budget
 * divided by max(16, topics analysed including this one) (the rule:
 * ks_budget_topic_share(), ks_budget.h). Sizes are fixed
 * at creation, so the early topics keep theirs and later ones get less;
 * what all topics take stays within the budget (each takes at most 1/16
 * of what is left), except that a topic never goes below the minimum
 * sizes (~66 KiB with the HyperLogLog): many topics on a small budget can
 * exceed it by that much each.
 *
 * Memory: 8 B x table slots (the next power of two >= 2 x topics.max + 16)
 * plus one entry per topic seen (at most 3/4 of the slots are used; past
 * that, a new excluded topic is checked against the regex per message).
 */
#ifndef KS_REGISTRY_H
#define KS_REGISTRY_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "ks_config.h"
#include "ks_topic.h"

typedef struct ks_reg_entry {
        char       *name;
        uint32_t    hash;
        ks_topic_t *topic;    /**< NULL: not analysed (excluded or over max) */
        int         over_max; /**< selected, but keyshift.topics.max reached */
} ks_reg_entry_t;

typedef struct ks_registry {
        _Atomic(ks_reg_entry_t *) *slots;
        size_t                     mask;
        size_t                     used; /**< entries, under lock */
        size_t tracked; /**< entries with a topic, under lock */
        size_t topics_max;
        size_t sketch_bytes;  /**< sketches of the topics made, under lock */
        size_t full_bytes;    /**< the same at the sizes asked, under lock */
        size_t budget_needed; /**< ks_registry_budget_t.needed, under lock */
        pthread_mutex_t      lock;
        atomic_uint_fast64_t untracked_messages;
        atomic_int           topics_max_reached;
} ks_registry_t;

/** @returns 0, or -1 on ENOMEM. */
int ks_registry_init(ks_registry_t *reg, size_t topics_max);
/** @brief Frees the table, its entries and their topics. */
void ks_registry_destroy(ks_registry_t *reg);

/**
 * @brief Finds topic @p name, creating it (when selected by @p conf and
 *        under the maximum) with @p params. @p now_ms is the wall clock
 *        for a new topic's analysis_since; 0 reads it only when a topic is
 *        created (the produce path passes 0).
 * @param created set to 1 if this call created an analysed topic.
 * @returns the topic, or NULL when it is not analysed.
 * @locality any thread; lock-free when the topic is known.
 */
ks_topic_t *ks_registry_get(ks_registry_t *reg, const char *name,
                            const ks_config_t       *conf,
                            const ks_topic_params_t *params, int64_t now_ms,
                            int *created);

/** The topics' sketches against the sketch budget, in bytes
 *  (ks_registry_budget()). */
typedef struct ks_registry_budget {
        size_t topics; /**< topics made so far, which the two below count */
        /** what the sketches of the topics made take: more than
         *  params->sketch_budget when many topics sit at the minimum sizes */
        size_t taken;
        /** the least params->sketch_budget with which every topic made so
         *  far, made in the same order, would keep the sizes asked: the
         *  largest, over those topics, of the earlier topics' sketches at
         *  the sizes asked + max(16, its number) x its own (the rule
         *  above); 0 when no topic was made under a budget. N equal topics
         *  of S bytes: (N + 15) x S below 16 topics, (2N - 1) x S from 16
         *  on. */
        size_t needed;
} ks_registry_budget_t;

/** @brief Copies the topics' sketch bytes against the budget into @p out.
 *  @locks reg->lock */
void ks_registry_budget(ks_registry_t *reg, ks_registry_budget_t *out);

/** @returns the number of topics seen (analysed or not). @locks reg->lock */
size_t ks_registry_seen(ks_registry_t *reg);

/** @returns topic @p name if it is analysed, never creating it.
 *  @locality any thread; lock-free. */
ks_topic_t *ks_registry_find(ks_registry_t *reg, const char *name);

/**
 * @brief Calls @p fn for each analysed topic, in no particular order.
 *        Topics added meanwhile may or may not be visited.
 */
void ks_registry_foreach(ks_registry_t *reg,
                         void (*fn)(ks_topic_t *t, void *opaque), void *opaque);

#endif /* KS_REGISTRY_H */
