/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_topic_record.c
 * @brief A run of messages counted, sketched and placed under the current
 *        and each proposed partition count.
 */
#include "ks_topic.h"

#include <math.h>

#include "ks_clock.h"
#include "ks_hash.h"
#include "ks_learn.h"
#include "ks_topic_impl.h"

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

        ks_load_add(&t->c.total, messages, bytes);
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
                ks_load_add(&t->c.explicit_partition, messages, bytes);
        } else if (place_kind == KS_PLACE_STICKY) {
                ks_load_add(&t->c.sticky, messages, bytes);
        } else if (place_kind == KS_PLACE_RANDOM) {
                ks_load_add(&t->c.random, messages, bytes);
        } else {
                ks_load_add(&t->c.hashed, messages, bytes);
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
                        ks_topic_place(t, f->phash, partition, observed,
                                       messages, bytes);
                } else if (t->partition_count == 0) {
                        ks_topic_pending_add(t, f->phash, partition, messages,
                                             bytes);
                } else {
                        t->c.unplaced += messages;
                }
        } else if (t->current) {
                ks_load_add(&t->window_total, messages, bytes);
                if (observed >= 0) /* where it is stored: a real load */
                        ks_load_add(&t->current[observed], messages, bytes);
        } else if (t->partition_count == 0) {
                ks_load_add(&t->waiting_spread, messages, bytes);
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
                ks_topic_stop_learning(t);
                ks_topic_ack_count_publish(t);
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
                           ks_clock_mono_ms());
}

void ks_topic_record_at(ks_topic_t *t, const void *key, size_t keylen,
                        int32_t partition, size_t value_len, int64_t mono_ms)
{
        ks_topic_record_n_at(t, key, keylen, partition, 1,
                             (uint64_t)keylen + (uint64_t)value_len, mono_ms);
}

void ks_topic_record_n_at(ks_topic_t *t, const void *key, size_t keylen,
                          int32_t partition, uint64_t messages, uint64_t bytes,
                          int64_t mono_ms)
{
        ks_key_facts_t f;

        ks_topic_key_facts(t, key, keylen, partition, &f);
        pthread_mutex_lock(&t->lock);
        ks_rates_add_n(&t->rates, mono_ms, messages, bytes);
        ks_topic_record_run_locked(t, key, keylen, partition, &f, messages,
                                   bytes, 0);
        pthread_mutex_unlock(&t->lock);
}
