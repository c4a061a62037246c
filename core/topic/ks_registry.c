/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_registry.c
 * @brief The producer's topic table (see ks_registry.h).
 */
#include "ks_registry.h"

#include <stdlib.h>
#include <string.h>

#include "ks_budget.h"
#include "ks_clock.h"
#include "ks_hash.h"

int ks_registry_init(ks_registry_t *reg, size_t topics_max)
{
        size_t n = 16;

        memset(reg, 0, sizeof(*reg));
        while (n < topics_max * 2 + 16)
                n <<= 1;
        reg->slots = calloc(n, sizeof(*reg->slots));
        if (!reg->slots)
                return -1;
        reg->mask       = n - 1;
        reg->topics_max = topics_max;
        pthread_mutex_init(&reg->lock, NULL);
        atomic_init(&reg->untracked_messages, 0);
        atomic_init(&reg->topics_max_reached, 0);
        return 0;
}

void ks_registry_destroy(ks_registry_t *reg)
{
        size_t i;

        if (!reg->slots)
                return;
        for (i = 0; i <= reg->mask; i++) {
                ks_reg_entry_t *e = atomic_load(&reg->slots[i]);
                if (!e)
                        continue;
                ks_topic_destroy(e->topic);
                free(e->name);
                free(e);
        }
        free(reg->slots);
        pthread_mutex_destroy(&reg->lock);
        memset(reg, 0, sizeof(*reg));
}

/** @returns the entry for @p name, or NULL; *slot_out is where the probe
 *           stopped (an empty slot) when not found. */
static ks_reg_entry_t *lookup(ks_registry_t *reg, const char *name, uint32_t h,
                              size_t *slot_out)
{
        size_t i, probes;

        for (i = h & reg->mask, probes = 0; probes <= reg->mask;
             i = (i + 1) & reg->mask, probes++) {
                ks_reg_entry_t *e =
                    atomic_load_explicit(&reg->slots[i], memory_order_acquire);
                if (!e) {
                        *slot_out = i;
                        return NULL;
                }
                if (e->hash == h && !strcmp(e->name, name))
                        return e;
        }
        *slot_out = (size_t)-1;
        return NULL;
}

/**
 * @brief Sizes a new topic's sketches to its share of what is left of the
 *        sketch budget (ks_budget_topic_share()). @locks reg->lock held.
 */
static void budget_share(const ks_registry_t *reg, ks_topic_params_t *p)
{
        ks_topic_params_fit(p, ks_budget_topic_share(reg->sketch_bytes,
                                                     p->sketch_budget,
                                                     reg->tracked + 1));
}

/**
 * @brief Adds topic number @p n, asking for @p asked, to what a budget
 *        keeping every topic's sizes needs (ks_budget_topics_need(),
 *        ks_registry_budget()). @locks reg->lock held.
 */
static void budget_note(ks_registry_t *reg, const ks_topic_params_t *asked,
                        size_t n)
{
        size_t want = ks_topic_sketch_bytes(asked);
        size_t need = ks_budget_topics_need(reg->full_bytes, n, want);

        if (need > reg->budget_needed)
                reg->budget_needed = need;
        reg->full_bytes += want;
}

void ks_registry_budget(ks_registry_t *reg, ks_registry_budget_t *out)
{
        pthread_mutex_lock(&reg->lock);
        out->topics = reg->tracked;
        out->taken  = reg->sketch_bytes;
        out->needed = reg->budget_needed;
        pthread_mutex_unlock(&reg->lock);
}

ks_topic_t *ks_registry_get(ks_registry_t *reg, const char *name,
                            const ks_config_t       *conf,
                            const ks_topic_params_t *params, int64_t now_ms,
                            int *created)
{
        uint32_t        h = ks_hash_fnv1a(name, strlen(name));
        ks_reg_entry_t *e;
        size_t          slot;
        int             selected;

        *created = 0;
        if ((e = lookup(reg, name, h, &slot)))
                goto found;

        selected = ks_config_topic_selected(conf, name);
        pthread_mutex_lock(&reg->lock);
        if ((e = lookup(reg, name, h, &slot))) { /* raced with an insert */
                pthread_mutex_unlock(&reg->lock);
                goto found;
        }
        if (slot == (size_t)-1 || reg->used + 1 > (reg->mask + 1) * 3 / 4) {
                if (selected)
                        atomic_fetch_add(&reg->untracked_messages, 1);
                pthread_mutex_unlock(&reg->lock);
                return NULL;
        }
        e = calloc(1, sizeof(*e));
        if (e && !(e->name = strdup(name))) {
                free(e);
                e = NULL;
        }
        if (e && selected && reg->tracked >= reg->topics_max) {
                e->over_max = 1;
                atomic_store(&reg->topics_max_reached, 1);
                atomic_fetch_add(&reg->untracked_messages, 1);
        } else if (e && selected) {
                ks_topic_params_t fit = *params;
                if (params->sketch_budget)
                        budget_share(reg, &fit);
                if (!(e->topic = ks_topic_new(
                          name, &fit, now_ms ? now_ms : ks_clock_wall_ms()))) {
                        free(e->name);
                        free(e);
                        e = NULL;
                } else {
                        reg->sketch_bytes += ks_topic_sketch_bytes(&fit);
                        if (params->sketch_budget)
                                budget_note(reg, params, reg->tracked + 1);
                }
        }
        if (!e) { /* out of memory: this message goes unanalysed */
                pthread_mutex_unlock(&reg->lock);
                return NULL;
        }
        e->hash = h;
        reg->used++;
        reg->tracked += e->topic != NULL;
        *created = e->topic != NULL;
        atomic_store_explicit(&reg->slots[slot], e, memory_order_release);
        pthread_mutex_unlock(&reg->lock);
        return e->topic;

found:
        if (e->over_max)
                atomic_fetch_add_explicit(&reg->untracked_messages, 1,
                                          memory_order_relaxed);
        return e->topic;
}

size_t ks_registry_seen(ks_registry_t *reg)
{
        size_t n;

        pthread_mutex_lock(&reg->lock);
        n = reg->used;
        pthread_mutex_unlock(&reg->lock);
        return n;
}

ks_topic_t *ks_registry_find(ks_registry_t *reg, const char *name)
{
        size_t          slot;
        ks_reg_entry_t *e =
            lookup(reg, name, ks_hash_fnv1a(name, strlen(name)), &slot);

        return e ? e->topic : NULL;
}

void ks_registry_foreach(ks_registry_t *reg,
                         void (*fn)(ks_topic_t *t, void *opaque), void *opaque)
{
        size_t i;

        for (i = 0; i <= reg->mask; i++) {
                ks_reg_entry_t *e =
                    atomic_load_explicit(&reg->slots[i], memory_order_acquire);
                if (e && e->topic)
                        fn(e->topic, opaque);
        }
}
