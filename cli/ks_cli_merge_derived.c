/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli_merge_derived.c
 * @brief The parts of a merged topic that are not plain sums: other
 *        clients (weighted), mixed key serializers (joined lists) and the
 *        warnings (recomputed or carried over).
 */
#include "ks_cli_merge.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/** @brief dst.messages += src.messages. */
static void ks_merge_messages(json_t *dst, const json_t *src)
{
        json_object_set_new(
            dst, "messages",
            json_integer((json_int_t)(ks_cli_u64(dst, "messages") +
                                      ks_cli_u64(src, "messages"))));
}

/** @brief One mixed key into another of the same logical key: messages
 *         summed, per encoding too; partitions are the same by definition. */
static void ks_merge_mixed_key(json_t *dst, const json_t *src)
{
        json_t     *de = json_object_get(dst, "encodings");
        const char *enc;
        json_t     *e;
        size_t      i;

        ks_merge_messages(dst, src);
        json_object_foreach(json_object_get(src, "encodings"), enc, e)
        {
                json_t *d = json_object_get(de, enc);
                if (!d) {
                        json_object_set_new(de, enc, json_deep_copy(e));
                        continue;
                }
                ks_merge_messages(d, e);
                for (i = 0;
                     i < json_array_size(json_object_get(e, "encodings"));
                     i++) {
                        json_t *name =
                            json_array_get(json_object_get(e, "encodings"), i);
                        json_t *have = json_object_get(d, "encodings");
                        size_t  k;
                        for (k = 0; k < json_array_size(have); k++)
                                if (json_equal(json_array_get(have, k), name))
                                        break;
                        if (json_is_array(have) && k == json_array_size(have))
                                json_array_append(have, name);
                }
        }
}

/** @brief other_clients: fractions weighted by each input's keyed messages
 *         (traffic) and distinct keys (keys); examples joined. */
json_t *ks_cli_merge_clients(const ks_cli_merge_in_t *in, size_t n)
{
        json_t     *out = json_object();
        const char *model;
        json_t     *m;
        size_t      i, j;

        json_object_foreach(json_object_get(in[0].topic, "other_clients"),
                            model, m)
        {
                double  wm = 0, wk = 0, fm = 0, fk = 0;
                int     exact = n == 1;
                json_t *ex    = json_array();
                for (i = 0; i < n; i++) {
                        const json_t *keys =
                            json_object_get(in[i].topic, "keys");
                        const json_t *o = json_object_get(
                            json_object_get(in[i].topic, "other_clients"),
                            model);
                        double hm = (double)ks_cli_u64(keys, "hashed");
                        double hk = ks_cli_num(keys, "distinct_estimate");
                        if (!o)
                                continue;
                        exact &= json_is_true(json_object_get(o, "exact"));
                        fm += hm * ks_cli_num(o, "messages_fraction_different");
                        fk += hk * ks_cli_num(o, "keys_fraction_different");
                        wm += hm;
                        wk += hk;
                        for (j = 0; j < json_array_size(
                                            json_object_get(o, "examples")) &&
                                    json_array_size(ex) < 3;
                             j++)
                                json_array_append(
                                    ex, json_array_get(
                                            json_object_get(o, "examples"), j));
                }
                json_object_set_new(out, model,
                                    json_pack("{s:s, s:f, s:f, s:b, s:o}", "is",
                                              ks_cli_str(m, "is", ""),
                                              "messages_fraction_different",
                                              wm > 0 ? fm / wm : 0.0,
                                              "keys_fraction_different",
                                              wk > 0 ? fk / wk : 0.0, "exact",
                                              exact, "examples", ex));
        }
        return out;
}

/** @brief qsort() order of JSON objects: most `messages` first. */
static int ks_merge_cmp_messages(const void *a, const void *b)
{
        json_int_t x = json_integer_value(
            json_object_get(*(json_t *const *)a, "messages"));
        json_int_t y = json_integer_value(
            json_object_get(*(json_t *const *)b, "messages"));
        return x < y ? 1 : x > y ? -1 : 0;
}

/** @brief mixed_keys: totals summed, lists joined by logical key. */
json_t *ks_cli_merge_mixed(const ks_cli_merge_in_t *in, size_t n)
{
        json_t     *out = NULL, *byname = json_object(), *v, *arr;
        size_t      i, j, max = 0, cnt;
        const char *k;
        json_t    **sorted;

        for (i = 0; i < n; i++) {
                const json_t *mk   = json_object_get(in[i].topic, "mixed_keys");
                const json_t *keys = json_object_get(mk, "keys");
                if (!json_is_object(mk))
                        continue;
                if (!out) {
                        out = json_deep_copy(mk);
                        json_object_del(out, "keys");
                } else {
                        static const char *const sum[] = {"total", "sampled"};
                        for (j = 0; j < 2; j++)
                                json_object_set_new(
                                    out, sum[j],
                                    json_integer(
                                        (json_int_t)(ks_cli_u64(out, sum[j]) +
                                                     ks_cli_u64(mk, sum[j]))));
                        json_object_set_new(
                            out, "total_estimate",
                            json_integer((json_int_t)llround(
                                ks_cli_num(out, "total_estimate") +
                                ks_cli_num(mk, "total_estimate"))));
                        json_object_set_new(
                            out, "logical_keys",
                            json_real(ks_cli_num(out, "logical_keys") +
                                      ks_cli_num(mk, "logical_keys")));
                        if (ks_cli_u64(mk, "sample_capacity") >
                            ks_cli_u64(out, "sample_capacity"))
                                json_object_set(
                                    out, "sample_capacity",
                                    json_object_get(mk, "sample_capacity"));
                }
                if (json_array_size(keys) > max)
                        max = json_array_size(keys);
                for (j = 0; j < json_array_size(keys); j++) {
                        const json_t *key = json_array_get(keys, j);
                        const char   *lk  = ks_cli_str(key, "logical_key", "");
                        json_t       *d   = json_object_get(byname, lk);
                        if (!d)
                                json_object_set_new(byname, lk,
                                                    json_deep_copy(key));
                        else
                                ks_merge_mixed_key(d, key);
                }
        }
        if (!out) {
                json_decref(byname);
                return NULL;
        }
        cnt    = json_object_size(byname);
        sorted = calloc(cnt ? cnt : 1, sizeof(*sorted));
        i      = 0;
        json_object_foreach(byname, k, v) sorted[i++] = v;
        qsort(sorted, cnt, sizeof(*sorted), ks_merge_cmp_messages);
        arr = json_array();
        for (i = 0; i < cnt && i < max; i++)
                json_array_append(arr, sorted[i]);
        free(sorted);
        json_decref(byname);
        json_object_set_new(out, "keys", arr);
        return out;
}

/**
 * @brief MULTIPLE_SCHEMA_IDS from merged key_encodings @p enc, as the
 *        plugin words it (core/report/ks_report.c): ids framing two keys or more
 *        (schema_id_keys), the two with the most messages (schema_ids).
 * @returns 1 with the message in @p msg, 0 when there is nothing to say.
 */
static int schema_ids_warning(const json_t *enc, char *msg, size_t size)
{
        const json_t *keys = json_object_get(enc, "schema_id_keys");
        const json_t *msgs = json_object_get(enc, "schema_ids");
        const char   *id, *top[2] = {NULL, NULL};
        uint64_t      m[2] = {0, 0};
        json_t       *v;
        size_t        n = 0;

        json_object_foreach((json_t *)keys, id, v)
        {
                uint64_t c = ks_cli_u64(msgs, id);
                if (ks_cli_u64(v, "keys") < 2)
                        continue;
                n++;
                if (!top[0] || c > m[0]) {
                        top[1] = top[0];
                        m[1]   = m[0];
                        top[0] = id;
                        m[0]   = c;
                } else if (!top[1] || c > m[1]) {
                        top[1] = id;
                        m[1]   = c;
                }
        }
        if (n < 2)
                return 0;
        snprintf(msg, size,
                 "keys are framed with %zu Schema Registry ids that each "
                 "frame several keys (%s and %s the busiest): the same "
                 "logical key under two schemas has two byte forms: two "
                 "partitions when it is hashed, two keys to compaction",
                 n, top[0], top[1]);
        return 1;
}

/** The warnings recomputed from the summed figures, as the plugin words
 *  them (core/report/ks_report.c), by index. */
enum {
        KS_REDO_KEYS_WOULD_MOVE,
        KS_REDO_NOT_AN_INCREASE,
        KS_REDO_NOT_JAVA_COMPATIBLE,
        KS_REDO_MULTIPLE_SCHEMA_IDS,
        KS_REDO__CNT
};
static const char *const ks_redo[KS_REDO__CNT] = {
    "KEYS_WOULD_MOVE", "PROPOSAL_NOT_AN_INCREASE",
    "PARTITIONER_NOT_JAVA_COMPATIBLE", "MULTIPLE_SCHEMA_IDS"};

/** @returns 1 if warning @p code is recomputed (ks_redo[]), else 0. */
static int recomputed(const char *code)
{
        size_t r;

        for (r = 0; r < KS_REDO__CNT; r++)
                if (!strcmp(code, ks_redo[r]))
                        return 1;
        return 0;
}

/**
 * @returns the warnings of the @p n inputs that are not recomputed, as
 *          {code: {message (the first input's), n (the inputs that raise
 *          it), last (the last input counted)}}, in the order first met.
 *          A new reference.
 */
static json_t *kept_warnings(const ks_cli_merge_in_t *in, size_t n)
{
        json_t *seen = json_object();
        size_t  i, j;

        for (i = 0; i < n; i++) {
                const json_t *ws = json_object_get(in[i].topic, "warnings");
                for (j = 0; j < json_array_size(ws); j++) {
                        const char *c =
                            ks_cli_str(json_array_get(ws, j), "code", "?");
                        json_t *s = json_object_get(seen, c);
                        if (recomputed(c))
                                continue;
                        if (!s) {
                                s = json_pack("{s:s, s:i, s:i}", "message",
                                              ks_cli_str(json_array_get(ws, j),
                                                         "message", ""),
                                              "n", 0, "last", -1);
                                json_object_set_new(seen, c, s);
                        }
                        if (json_integer_value(json_object_get(s, "last")) !=
                            (json_int_t)i) {
                                json_object_set_new(
                                    s, "n",
                                    json_integer(1 +
                                                 json_integer_value(
                                                     json_object_get(s, "n"))));
                                json_object_set_new(
                                    s, "last", json_integer((json_int_t)i));
                        }
                }
        }
        return seen;
}

/** @brief Appends warning {code, message} to @p out. */
static void add_warning(json_t *out, const char *code, const char *msg)
{
        json_array_append_new(
            out, json_pack("{s:s, s:s}", "code", code, "message", msg));
}

/** @brief Appends the kept warnings @p seen (kept_warnings()) to @p out,
 *         each with how many of the @p total_inputs reports raised it. */
static void add_kept(json_t *out, json_t *seen, size_t total_inputs)
{
        const char *code;
        json_t     *v;
        char        msg[512];

        json_object_foreach(seen, code, v)
        {
                if (total_inputs > 1)
                        snprintf(msg, sizeof(msg),
                                 "%s [in %lld of %zu merged reports]",
                                 ks_cli_str(v, "message", ""),
                                 (long long)json_integer_value(
                                     json_object_get(v, "n")),
                                 total_inputs);
                else
                        snprintf(msg, sizeof(msg), "%s",
                                 ks_cli_str(v, "message", ""));
                add_warning(out, code, msg);
        }
}

/** @brief Appends to @p out the merged @p topic's warning of each
 *         proposal: not an increase, or the keyed messages it moves. */
static void add_proposal_warnings(json_t *out, const json_t *topic)
{
        const json_t *props = json_object_get(topic, "proposals");
        int32_t       cur   = ks_cli_topic_current(topic);
        double hashed = (double)ks_cli_u64(json_object_get(topic, "window"),
                                           "hashed_messages");
        char   msg[512];
        size_t i;

        for (i = 0; i < json_array_size(props); i++) {
                const json_t *p  = json_array_get(props, i);
                const json_t *mv = json_object_get(p, "moved");
                int32_t       pc = (int32_t)ks_cli_u64(p, "partition_count");
                if (pc <= cur)
                        snprintf(msg, sizeof(msg),
                                 "proposed count %d is not above the current "
                                 "%d: Kafka cannot lower a partition count",
                                 (int)pc, (int)cur);
                else if (ks_cli_u64(mv, "messages"))
                        snprintf(
                            msg, sizeof(msg),
                            "raising %d -> %d partitions would move "
                            "%.1f%% of keyed messages (%llu) to another "
                            "partition; per-key ordering breaks for them "
                            "at the switch",
                            (int)cur, (int)pc,
                            hashed > 0
                                ? 100.0 * (double)ks_cli_u64(mv, "messages") /
                                      hashed
                                : 0.0,
                            (unsigned long long)ks_cli_u64(mv, "messages"));
                else
                        continue;
                add_warning(out,
                            ks_redo[pc <= cur ? KS_REDO_NOT_AN_INCREASE
                                              : KS_REDO_KEYS_WOULD_MOVE],
                            msg);
        }
}

/** @brief Warnings: the ones that depend on summed figures recomputed as
 *         the plugin words them (core/report/ks_report.c); every other code kept
 *         once, with how many of the merged reports raised it. */
json_t *ks_cli_merge_warnings(const ks_cli_merge_in_t *in, size_t n,
                              const json_t *topic, size_t total_inputs)
{
        json_t       *out = json_array(), *seen;
        const json_t *java =
            json_object_get(json_object_get(topic, "other_clients"), "java");
        char msg[512];

        /* the codes not recomputed: first message, and in how many inputs */
        seen = kept_warnings(in, n);
        if (java && ks_cli_topic_current(topic) &&
            ks_cli_num(java, "messages_fraction_different") > 0) {
                snprintf(msg, sizeof(msg),
                         "%.1f%% of keyed traffic would land in another "
                         "partition from a Java producer (murmur2) than from "
                         "these producers (%s): Java and these producers on "
                         "one topic split those keys; "
                         "partitioner=murmur2_random matches Java",
                         100 * ks_cli_num(java, "messages_fraction_different"),
                         ks_cli_topic_partitioner(topic, "?"));
                add_warning(out, ks_redo[KS_REDO_NOT_JAVA_COMPATIBLE], msg);
        }
        if (schema_ids_warning(json_object_get(topic, "key_encodings"), msg,
                               sizeof(msg)))
                add_warning(out, ks_redo[KS_REDO_MULTIPLE_SCHEMA_IDS], msg);
        add_kept(out, seen, total_inputs);
        add_proposal_warnings(out, topic);
        json_decref(seen);
        return out;
}
