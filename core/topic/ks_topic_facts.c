/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_topic_facts.c
 * @brief The key's facts on a topic (ks_key_facts_t): its serializer, its
 *        placement, its partitioner hash under the topic's partitioner,
 *        its 64-bit sketch hash and logical value; computed once per run,
 *        outside the topic's lock.
 *
 * The key is hashed once, outside the lock: the partitioner hash (whose
 * remainder by any count is the partition) and the 64-bit sketch hash.
 * Under the lock each message then costs one remainder and two counter
 * increments per count analysed, plus the sketches' updates.
 */
#include "ks_topic.h"

#include <stdatomic.h>
#include <string.h>

#include "ks_hash.h"
#include "ks_topic_impl.h"

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
