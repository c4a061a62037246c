/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_mixed.c
 * @brief Logical keys under several encodings (see ks_mixed.h).
 */
#include "ks_mixed.h"

#include <stdlib.h>
#include <string.h>

#include "ks_hash.h"
#include "ks_keysample.h"

struct ks_mixed {
        ks_keysample_t *sample; /**< payload: ks_mixed_value_t */
};

ks_mixed_t *ks_mixed_new(size_t capacity)
{
        ks_mixed_t *m = calloc(1, sizeof(*m));

        if (!m)
                return NULL;
        m->sample =
            ks_keysample_new_payload(capacity, sizeof(ks_mixed_value_t));
        if (!m->sample) {
                free(m);
                return NULL;
        }
        return m;
}

void ks_mixed_destroy(ks_mixed_t *m)
{
        if (!m)
                return;
        ks_keysample_destroy(m->sample);
        free(m);
}

int ks_mixed_logical_hash(const void *key, size_t len, ks_keyenc_t enc,
                          uint64_t *lhash)
{
        char buf[256];

        if (!key || !len || KS_KEYENC_LOGICAL_SIZE(len) > sizeof(buf) ||
            ks_keyenc_logical(key, len, enc, buf, sizeof(buf)))
                return -1;
        *lhash = ks_hash_key64(buf, strlen(buf));
        return 0;
}

void ks_mixed_add(ks_mixed_t *m, uint64_t lhash, ks_keyenc_t enc,
                  const void *key, size_t len, uint32_t phash, uint64_t bytes)
{
        ks_mixed_add_n(m, lhash, enc, key, len, phash, 1, bytes);
}

void ks_mixed_add_n(ks_mixed_t *m, uint64_t lhash, ks_keyenc_t enc,
                    const void *key, size_t len, uint32_t phash,
                    uint64_t messages, uint64_t bytes)
{
        int               admitted;
        ks_mixed_value_t *v = ks_keysample_add_payload_n(
            m->sample, lhash, 0, messages, bytes, &admitted);
        uint16_t         bit = (uint16_t)(1u << enc);
        ks_mixed_slot_t *s;
        uint16_t         i;

        if (!v)
                return;
        if (v->enc_mask & bit) {
                for (i = 0; i < v->nslots; i++)
                        if (v->slot[i].enc == enc) {
                                v->slot[i].messages += messages;
                                return;
                        }
                v->other_messages += messages;
                return;
        }
        v->enc_mask |= bit;
        if (v->nslots == KS_MIXED_SLOTS) {
                v->other_messages += messages;
                return;
        }
        s           = &v->slot[v->nslots++];
        s->messages = messages;
        s->phash    = phash;
        s->enc      = (uint8_t)enc;
        s->keylen = (uint8_t)(len < KS_MIXED_KEY_MAX ? len : KS_MIXED_KEY_MAX);
        s->key_truncated = len > KS_MIXED_KEY_MAX;
        memcpy(s->key, key, s->keylen);
}

static int by_messages_desc(const void *a, const void *b)
{
        const ks_mixed_collision_t *x = a, *y = b;
        return x->messages < y->messages   ? 1
               : x->messages > y->messages ? -1
                                           : 0;
}

int ks_mixed_raw_alloc(const ks_mixed_t *m, ks_mixed_raw_t *raw)
{
        memset(raw, 0, sizeof(*raw));
        raw->capacity = ks_keysample_capacity(m->sample);
        raw->room     = raw->capacity;
        raw->entries  = malloc(raw->capacity * sizeof(*raw->entries));
        raw->values   = malloc(raw->capacity * sizeof(*raw->values));
        if (!raw->entries || !raw->values ||
            ks_keysample_raw_alloc(m->sample, &raw->sample)) {
                ks_mixed_raw_free(raw);
                return -1;
        }
        return 0;
}

int ks_mixed_raw_reserve(const ks_mixed_t *m, ks_mixed_raw_t *raw)
{
        if (raw->entries && raw->room >= ks_keysample_capacity(m->sample) &&
            !ks_keysample_raw_reserve(m->sample, &raw->sample))
                return 0;
        ks_mixed_raw_free(raw);
        return ks_mixed_raw_alloc(m, raw);
}

void ks_mixed_raw_free(ks_mixed_raw_t *raw)
{
        free(raw->entries);
        free(raw->values);
        ks_keysample_raw_free(&raw->sample);
        memset(raw, 0, sizeof(*raw));
}

void ks_mixed_copy(const ks_mixed_t *m, ks_mixed_raw_t *raw)
{
        raw->capacity = ks_keysample_capacity(m->sample);
        ks_keysample_raw_copy(m->sample, &raw->sample);
        raw->n            = raw->sample.n; /* unpacked by ..._collisions() */
        raw->logical_keys = ks_keysample_distinct_estimate(m->sample);
}

size_t ks_mixed_raw_collisions(const ks_mixed_raw_t *raw,
                               ks_mixed_collision_t *out, size_t max,
                               ks_mixed_summary_t *sum)
{
        size_t n =
            ks_keysample_raw_entries(&raw->sample, raw->entries, raw->values);
        ks_mixed_collision_t *all = malloc((n + 1) * sizeof(*all));
        size_t                i, c = 0;

        memset(sum, 0, sizeof(*sum));
        sum->capacity = raw->capacity;
        if (!all)
                return 0;
        for (i = 0; i < n; i++) {
                if (raw->values[i].nslots < 2)
                        continue;
                all[c].messages = raw->entries[i].messages;
                all[c].v        = raw->values[i];
                c++;
        }
        qsort(all, c, sizeof(*all), by_messages_desc);
        sum->sampled      = n;
        sum->collisions   = c;
        sum->logical_keys = raw->logical_keys;
        sum->collisions_estimate =
            n ? (double)c * sum->logical_keys / (double)n : 0.0;
        if (c > max)
                c = max;
        memcpy(out, all, c * sizeof(*out));
        free(all);
        return c;
}

size_t ks_mixed_collisions(const ks_mixed_t *m, ks_mixed_collision_t *out,
                           size_t max, ks_mixed_summary_t *sum)
{
        ks_mixed_raw_t raw;
        size_t         n;

        if (ks_mixed_raw_alloc(m, &raw)) {
                memset(sum, 0, sizeof(*sum));
                return 0;
        }
        ks_mixed_copy(m, &raw);
        n = ks_mixed_raw_collisions(&raw, out, max, sum);
        ks_mixed_raw_free(&raw);
        return n;
}
