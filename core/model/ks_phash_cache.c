/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_phash_cache.c
 * @brief The delivery check's per-thread cache of partitioner hashes
 *        (ks_phash_cache.h).
 */
#include "ks_phash_cache.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct ks_phash_slot {
        uint64_t w[KS_PHASH_CACHE_KEY_MAX / 8]; /**< key bytes, zero-padded */
        uint32_t phash;
        uint8_t  keylen; /**< 0: empty */
        uint8_t  partitioner;
        uint8_t  pad[2];
} ks_phash_slot_t;

typedef struct ks_phash_cache {
        ks_phash_slot_t        slot[KS_PHASH_CACHE_SLOTS];
        ks_phash_cache_stats_t stats;
} ks_phash_cache_t;

_Static_assert(sizeof(ks_phash_slot_t) == 32, "a slot is 32 bytes");
_Static_assert((KS_PHASH_CACHE_SLOTS & (KS_PHASH_CACHE_SLOTS - 1)) == 0,
               "slots: a power of two");
_Static_assert(KS_PHASH_CACHE_KEY_MAX == 24, "three words, as hashed below");

/* initial-exec, as ks_stage.c's: one pointer in the static TLS block */
static _Thread_local ks_phash_cache_t *ks_phash_tls
    __attribute__((tls_model("initial-exec")));
/* set when allocation failed: hash every time, do not retry per message */
static _Thread_local int ks_phash_tls_failed
    __attribute__((tls_model("initial-exec")));
static pthread_key_t  ks_phash_key;
static pthread_once_t ks_phash_once = PTHREAD_ONCE_INIT;
static int            ks_phash_key_ok;

/** @brief pthread key destructor: the exiting thread's slots. */
static void cache_free(void *p)
{
        free(p);
        ks_phash_tls = NULL;
}

static void key_create(void)
{
        ks_phash_key_ok = pthread_key_create(&ks_phash_key, cache_free) == 0;
}

/** @returns this thread's slots, allocated at the first call; NULL if
 *           they cannot be. */
static ks_phash_cache_t *cache_get(void)
{
        ks_phash_cache_t *c = ks_phash_tls;

        if (c || ks_phash_tls_failed)
                return c;
        pthread_once(&ks_phash_once, key_create);
        if (!ks_phash_key_ok || !(c = calloc(1, sizeof(*c))) ||
            pthread_setspecific(ks_phash_key, c)) {
                free(c);
                ks_phash_tls_failed = 1;
                return NULL;
        }
        ks_phash_tls = c;
        return c;
}

uint32_t ks_phash_cached(ks_partitioner_t p, const void *key, size_t keylen)
{
        uint64_t          w[KS_PHASH_CACHE_KEY_MAX / 8] = {0}, h;
        ks_phash_cache_t *c;
        ks_phash_slot_t  *s;

        c = cache_get();
        if (!c || !key || keylen == 0 || keylen > KS_PHASH_CACHE_KEY_MAX) {
                if (c)
                        c->stats.bypass++;
                return ks_partitioner_hash(p, key, keylen);
        }
        memcpy(w, key, keylen);
        /* the slot: a multiply-xorshift of the padded words, length and
         * partitioner (the cache's own business, not a sketch's hash) */
        h = (w[0] * 0x9E3779B97F4A7C15ull) ^ (w[1] * 0xC2B2AE3D27D4EB4Full) ^
            (w[2] * 0x165667B19E3779F9ull) ^ ((uint64_t)keylen << 8 | p);
        h ^= h >> 29;
        h *= 0xBF58476D1CE4E5B9ull;
        s = &c->slot[(h >> 40) & (KS_PHASH_CACHE_SLOTS - 1)];
        if (s->keylen == keylen && s->partitioner == p && s->w[0] == w[0] &&
            s->w[1] == w[1] && s->w[2] == w[2]) {
                c->stats.hits++;
                return s->phash;
        }
        c->stats.misses++;
        memcpy(s->w, w, sizeof(w));
        s->keylen      = (uint8_t)keylen;
        s->partitioner = (uint8_t)p;
        s->phash       = ks_partitioner_hash(p, key, keylen);
        return s->phash;
}

void ks_phash_cache_stats(ks_phash_cache_stats_t *out)
{
        if (ks_phash_tls)
                *out = ks_phash_tls->stats;
        else
                memset(out, 0, sizeof(*out));
}
