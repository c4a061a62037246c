/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_report_keys.c
 * @brief A topic's key encodings, mixed serializers and what other clients
 *        would do with the same bytes, as report objects and warnings.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ks_report_fmt.h"
#include "ks_report_parts.h"

/** @returns {"<id>": {"keys": 1 or 2, "first_key_hash64": "<hex>"}}: the
 *           distinct keys each id frames, counted up to 2, and the
 *           ks_hash_key64() of its first (what `keyshift merge` needs to
 *           count them across producers). */
static json_t *schema_id_keys(const ks_schema_ids_t *ids)
{
        json_t *o = json_object();
        size_t  i;

        for (i = 0; o && i < ids->cnt; i++) {
                char id[16], h[17];
                snprintf(id, sizeof(id), "%d", (int)ids->id[i]);
                snprintf(h, sizeof(h), "%016" PRIx64, ids->first_key[i]);
                json_object_set_new(o, id,
                                    json_pack("{s:i, s:s}", "keys",
                                              (int)ids->keys[i],
                                              "first_key_hash64", h));
        }
        return o;
}

/** @returns {"<encoding>": messages} for the encodings seen, and the
 *           Schema Registry ids that framed keys. */
json_t *ks_report_key_encodings(const ks_topic_snapshot_t *s)
{
        json_t *o = json_object(), *ids;
        size_t  i;

        for (i = 0; o && i < KS_KEYENC__CNT; i++)
                if (s->c.key_encodings[i])
                        json_object_set_new(
                            o, ks_keyenc_name((ks_keyenc_t)i),
                            json_integer((json_int_t)s->c.key_encodings[i]));
        if (o && s->schema_ids.cnt) {
                ids = json_object();
                for (i = 0; i < s->schema_ids.cnt; i++) {
                        char id[16];
                        snprintf(id, sizeof(id), "%d",
                                 (int)s->schema_ids.id[i]);
                        json_object_set_new(
                            ids, id,
                            json_integer(
                                (json_int_t)s->schema_ids.messages[i]));
                }
                if (s->schema_ids.other_messages)
                        json_object_set_new(
                            ids, "other",
                            json_integer(
                                (json_int_t)s->schema_ids.other_messages));
                json_object_set_new(o, "schema_ids", ids);
                json_object_set_new(o, "schema_id_keys",
                                    schema_id_keys(&s->schema_ids));
        }
        return o;
}

void ks_report_count_names(const ks_topic_snapshot_t *s,
                           ks_report_count_name_t    *names)
{
        size_t j;

        for (j = 0; j < s->proposal_cnt; j++)
                snprintf(names[j], sizeof(names[j]), "%d",
                         (int)s->proposals[j].partition_count);
}

int32_t ks_report_partition_now(const ks_topic_snapshot_t *s, uint32_t phash)
{
        return s->partition_count && !s->learned.unexplained
                   ? ks_partition_of(phash, s->partition_count)
                   : -1;
}

json_t *ks_report_proposed_partitions(const ks_topic_snapshot_t    *s,
                                      const ks_report_count_name_t *names,
                                      uint32_t                      phash)
{
        json_t *o = json_object();
        size_t  j;

        for (j = 0; o && !s->learned.unexplained && j < s->proposal_cnt; j++)
                json_object_set_new(
                    o, names[j],
                    json_integer(ks_partition_of(
                        phash, s->proposals[j].partition_count)));
        return o;
}

/** @returns the mixed_keys object: logical keys under several encodings,
 *           busiest first (at most @p max), with the totals. */
json_t *ks_report_mixed_keys(const ks_topic_snapshot_t *s, int max)
{
        json_t                *arr = json_array();
        size_t                 i, j;
        ks_report_count_name_t names[KEYSHIFT_PROPOSED_MAX];

        ks_report_count_names(s, names);
        for (i = 0; arr && i < s->mixed_cnt && i < (size_t)max; i++) {
                const ks_mixed_value_t *v            = &s->mixed[i].v;
                json_t                 *encs         = json_object();
                char                    logical[256] = "";

                for (j = 0; j < v->nslots; j++) {
                        const ks_mixed_slot_t *sl = &v->slot[j];
                        int32_t now = ks_report_partition_now(s, sl->phash);
                        if (!*logical && !sl->key_truncated)
                                ks_keyenc_logical(sl->key, sl->keylen,
                                                  (ks_keyenc_t)sl->enc, logical,
                                                  sizeof(logical));
                        json_object_set_new(
                            encs, ks_keyenc_name((ks_keyenc_t)sl->enc),
                            json_pack(
                                "{s:I, s:o, s:b, s:o, s:o}", "messages",
                                (json_int_t)sl->messages, "key_hex",
                                ks_report_hex(sl->key, sl->keylen),
                                "key_truncated", sl->key_truncated,
                                "partition_current",
                                now >= 0 ? json_integer(now) : json_null(),
                                "partition_proposed",
                                ks_report_proposed_partitions(s, names,
                                                              sl->phash)));
                }
                if (v->other_messages) {
                        json_t *names = json_array();
                        for (j = 0; j < KS_KEYENC__CNT; j++) {
                                size_t k;
                                int    in_slot = 0;
                                for (k = 0; k < v->nslots; k++)
                                        in_slot |= v->slot[k].enc == j;
                                if ((v->enc_mask >> j & 1) && !in_slot)
                                        json_array_append_new(
                                            names, json_string(ks_keyenc_name(
                                                       (ks_keyenc_t)j)));
                        }
                        json_object_set_new(
                            encs, "other",
                            json_pack("{s:I, s:o}", "messages",
                                      (json_int_t)v->other_messages,
                                      "encodings", names));
                }
                json_array_append_new(
                    arr, json_pack("{s:s, s:I, s:o}", "logical_key", logical,
                                   "messages", (json_int_t)s->mixed[i].messages,
                                   "encodings", encs));
        }
        return json_pack(
            "{s:I, s:I, s:f, s:I, s:I, s:o}", "total",
            (json_int_t)s->mixed_summary.collisions, "total_estimate",
            (json_int_t)llround(s->mixed_summary.collisions_estimate),
            "logical_keys", s->mixed_summary.logical_keys, "sampled",
            (json_int_t)s->mixed_summary.sampled, "sample_capacity",
            (json_int_t)s->mixed_summary.capacity, "keys", arr);
}

/** @returns the other_clients object: per client model, the fraction of
 *           sampled keyed traffic it would place in another partition than
 *           this producer does, and examples from the hot keys. */
json_t *ks_report_other_clients(const ks_topic_snapshot_t     *s,
                                const ks_report_sample_pass_t *sp,
                                double                        *java_fraction)
{
        json_t *o = json_object();
        int     m;

        *java_fraction = 0.0;
        if (!s->partition_count)
                return o;
        for (m = 0; o && m < KS_CLIENT__CNT; m++) {
                uint64_t total = sp->total, differ = sp->differ[m];
                size_t   i, keys_differ            = sp->keys_differ[m];
                json_t  *ex = json_array();
                double   f;

                for (i = 0; i < s->hot_cnt && json_array_size(ex) < 3; i++) {
                        const ks_topk_entry_t *e = &s->hot[i];
                        int32_t                theirs, ours;
                        if (e->keylen > KS_TOPK_KEY_MAX)
                                continue;
                        ours = ks_partition_of(e->phash, s->partition_count);
                        if (ks_clients_partition((ks_client_model_t)m, e->key,
                                                 e->keylen, s->partition_count,
                                                 &theirs) != 1)
                                theirs = -1; /* spread: no fixed partition */
                        if (theirs == ours)
                                continue;
                        json_array_append_new(
                            ex, json_pack(
                                    "{s:o, s:o, s:i, s:o}", "key",
                                    ks_report_key(e->key, e->keylen), "key_hex",
                                    ks_report_hex(e->key, e->keylen),
                                    "partition", (int)ours, "partition_theirs",
                                    theirs >= 0 ? json_integer(theirs)
                                                : json_null()));
                }
                f = ks_report_frac(differ, total);
                if (m == KS_CLIENT_JAVA)
                        *java_fraction = f;
                json_object_set_new(
                    o, ks_client_model_name((ks_client_model_t)m),
                    json_pack("{s:s, s:f, s:f, s:b, s:o}", "is",
                              ks_clients_describe((ks_client_model_t)m),
                              "messages_fraction_different", f,
                              "keys_fraction_different",
                              ks_report_frac(keys_differ, s->sample_cnt),
                              "exact",
                              s->sample_cnt < s->sample_capacity &&
                                  !s->c.unanalysed && !s->c.one_in_max,
                              "examples", ex));
        }
        return o;
}

/** @brief Warnings about keys that other clients, or other serializers,
 *         would place differently. */
void ks_report_client_warnings(const ks_topic_snapshot_t *s, double java_f,
                               ks_warn_list_t *wl)
{
        if (s->mixed_summary.collisions) {
                const ks_mixed_value_t *v            = &s->mixed[0].v;
                char                    logical[256] = "?";
                ks_keyenc_logical(v->slot[0].key, v->slot[0].keylen,
                                  (ks_keyenc_t)v->slot[0].enc, logical,
                                  sizeof(logical));
                ks_warn_add(
                    wl, KS_WARN_MIXED_KEY_SERIALIZERS, s->name,
                    "%zu logical keys (of %zu sampled) arrive under more than "
                    "one key encoding, e.g. %s as %s (partition %d) and %s "
                    "(partition %d): each encoding has its own partition, so "
                    "their per-key ordering is already broken",
                    s->mixed_summary.collisions, s->mixed_summary.sampled,
                    logical, ks_keyenc_name((ks_keyenc_t)v->slot[0].enc),
                    s->partition_count
                        ? (int)ks_partition_of(v->slot[0].phash,
                                               s->partition_count)
                        : -1,
                    ks_keyenc_name((ks_keyenc_t)v->slot[1].enc),
                    s->partition_count
                        ? (int)ks_partition_of(v->slot[1].phash,
                                               s->partition_count)
                        : -1);
        }
        if (s->partition_count && s->sample_cnt && java_f > 0)
                ks_warn_add(wl, KS_WARN_PARTITIONER_NOT_JAVA_COMPATIBLE,
                            s->name,
                            "%.1f%% of keyed traffic would land in another "
                            "partition from a Java producer (murmur2) than "
                            "from this producer (%s): Java and this producer "
                            "on one topic split those keys; "
                            "partitioner=murmur2_random matches Java",
                            100 * java_f, ks_partitioner_name(s->partitioner));
        if (s->c.empty_keys &&
            ks_partitioner_placement(s->partitioner, s->sticky_linger_ms, "",
                                     0) == KS_PLACE_HASHED)
                ks_warn_add(
                    wl, KS_WARN_EMPTY_KEYS_HASHED, s->name,
                    "%llu messages with an empty key all go to one partition "
                    "(%s hashes the empty key, as Java does); librdkafka's "
                    "default consistent_random spreads them",
                    (unsigned long long)s->c.empty_keys,
                    ks_partitioner_name(s->partitioner));
}
