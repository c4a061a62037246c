/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_topic_sampled.c
 * @brief A topic's counters of sampling under overload (ks_stage.h): the
 *        messages producing threads counted without staging them, each
 *        thread in a slot of its own, and the drainer's sums of what the
 *        staged ones stand for; atomics, read without the lock.
 */
#include "ks_topic.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "ks_topic_impl.h"

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
