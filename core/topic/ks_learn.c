/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_learn.c
 * @brief The partitioner the deliveries prove (ks_learn.h: candidates and
 *        the confirmation rule).
 */
#include "ks_learn.h"

#include <string.h>

#include "ks_hash.h"

void ks_learn_init(ks_learn_t *l, ks_partitioner_t configured,
                   int sticky_linger_ms)
{
        static const ks_partitioner_t families[] = {
            KS_PARTITIONER_CONSISTENT_RANDOM, KS_PARTITIONER_MURMUR2_RANDOM,
            KS_PARTITIONER_FNV1A_RANDOM};
        ks_partitioner_t own = ks_partitioner_hash_family(configured);
        size_t           i;

        memset(l, 0, sizeof(*l));
        l->sticky_linger_ms = sticky_linger_ms;
        l->confirmed        = -1;
        l->cand[l->cnt++]   = configured;
        for (i = 0; i < sizeof(families) / sizeof(families[0]); i++)
                if (ks_partitioner_hash_family(families[i]) != own)
                        l->cand[l->cnt++] = families[i];
}

/** @returns 1 if @p h was not among the distinct keys counted (then it is
 *           added while there is room). */
static int new_key(ks_learn_t *l, uint64_t h)
{
        size_t i;

        for (i = 0; i < l->key_cnt; i++)
                if (l->keys[i] == h)
                        return 0;
        if (l->key_cnt < KS_LEARN_CONFIRM_KEYS)
                l->keys[l->key_cnt++] = h;
        return 1;
}

/** @returns the index of @p p's hash family in ks_learn_ack_hashed()'s
 *           @p family (consistent, murmur2, fnv1a), or -1 for random. */
static int family_index(ks_partitioner_t p)
{
        switch (ks_partitioner_hash_family(p)) {
        case KS_PARTITIONER_CONSISTENT:
                return 0;
        case KS_PARTITIONER_MURMUR2:
                return 1;
        case KS_PARTITIONER_FNV1A:
                return 2;
        default:
                return -1;
        }
}

/** @brief Settles once enough distinct keys were seen. @returns the index
 *         confirmed now, or -1. */
static int decide(ks_learn_t *l)
{
        size_t i, clean = 0, which = 0;

        if (l->key_cnt < KS_LEARN_CONFIRM_KEYS)
                return -1;
        for (i = 0; i < l->cnt; i++)
                if (l->agree[i] && !l->disagree[i]) {
                        clean++;
                        which = i;
                }
        if (clean == 1) {
                l->state     = KS_LEARN_CONFIRMED;
                l->confirmed = (int)which;
                return (int)which;
        }
        if (clean == 0 && family_index(l->cand[0]) < 0) {
                /* a configured random partitioner hashes no key: every
                 * hash family ruled out is what it predicts */
                l->state     = KS_LEARN_CONFIRMED;
                l->confirmed = 0;
                return 0;
        }
        if (clean == 0)
                l->state = KS_LEARN_UNEXPLAINED;
        /* two clean candidates cannot both have agreed on a key that
         * discriminates them: each such key makes one disagree, so this
         * is a candidate that hashed none of them (random) */
        return -1;
}

int ks_learn_ack_hashed(ks_learn_t *l, const uint32_t family[3],
                        uint64_t key_id, int32_t count, int32_t actual)
{
        int32_t pred[KS_LEARN_CANDIDATES];
        size_t  i, j;
        int     differ = 0;

        if (l->state != KS_LEARN_LEARNING || count < 1)
                return -1;
        /* a non-empty key: every candidate but random hashes it */
        for (i = 0; i < l->cnt; i++) {
                int f   = family_index(l->cand[i]);
                pred[i] = f < 0 ? -1 : ks_partition_of(family[f], count);
        }
        /* discriminating: two candidates' predictions differ */
        for (i = 0; i < l->cnt && !differ; i++)
                for (j = i + 1; j < l->cnt && !differ; j++)
                        differ =
                            pred[i] >= 0 && pred[j] >= 0 && pred[i] != pred[j];
        if (!differ)
                return -1;
        l->discriminating++;
        for (i = 0; i < l->cnt; i++) {
                if (pred[i] < 0)
                        continue;
                if (pred[i] == actual)
                        l->agree[i]++;
                else
                        l->disagree[i]++;
        }
        if (!new_key(l, key_id))
                return -1;
        return decide(l);
}

int ks_learn_ack(ks_learn_t *l, const void *key, size_t keylen, int32_t count,
                 int32_t actual)
{
        uint32_t family[3];

        if (l->state != KS_LEARN_LEARNING || !key || !keylen)
                return -1;
        family[0] = ks_partitioner_hash(KS_PARTITIONER_CONSISTENT, key, keylen);
        family[1] = ks_partitioner_hash(KS_PARTITIONER_MURMUR2, key, keylen);
        family[2] = ks_partitioner_hash(KS_PARTITIONER_FNV1A, key, keylen);
        return ks_learn_ack_hashed(l, family, ks_hash_key64(key, keylen), count,
                                   actual);
}

void ks_learn_evidence(const ks_learn_t *l, size_t i, uint64_t *keys,
                       uint64_t *agreeing, uint64_t *disagreeing)
{
        *keys        = l->key_cnt;
        *agreeing    = i < l->cnt ? l->agree[i] : 0;
        *disagreeing = i < l->cnt ? l->disagree[i] : 0;
}
