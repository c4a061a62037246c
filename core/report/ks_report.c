/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_report.c
 * @brief Builds the keyshift.report.v2 JSON from topic snapshots.
 *
 * Every figure comes from a snapshot; nothing here touches live state. The
 * estimates from sketches carry their error next to them, and every figure
 * a skipped message would have changed says so (ks_analysis.h).
 */
#include "ks_report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keyshift/keyshift.h"
#include "ks_analysis.h"
#include "ks_report_fmt.h"
#include "ks_report_parts.h"
#include "ks_story.h"

/**
 * @brief Makes a snapshot's sampling counters agree with each other and
 *        with the topic's totals, as the report check demands
 *        (cli/ks_cli_report_check.c). They are read without a lock while
 *        the drainer adds to them one after the other
 *        (ks_topic_note_sampled_in(): staged, weighted, variance, N, then
 *        the weighted run in total), so a snapshot can fall between two
 *        adds of the last message: it is then left out of the part not
 *        yet consistent (a message's worth; the next report has it). The
 *        messages counted out come first (on_send), so they can stand
 *        alone while their staged companions wait in the rings.
 */
static void ks_report_sampling_settle(ks_analysis_sampling_t *m,
                                      uint64_t messages, uint64_t bytes)
{
        uint64_t extra;

        if (!m->one_in_max) { /* no staged message analysed yet: only
                               * the messages counted out stand */
                uint64_t out = m->out_messages, out_bytes = m->out_bytes;
                memset(m, 0, sizeof(*m));
                m->out_messages = out;
                m->out_bytes    = out_bytes;
                return;
        }
        if (m->in_messages > m->weighted_messages)
                m->in_messages = m->weighted_messages;
        if (m->in_bytes > m->weighted_bytes)
                m->in_bytes = m->weighted_bytes;
        if (m->weighted_messages > messages) /* its run not yet in total */
                m->weighted_messages = messages;
        if (m->weighted_bytes > bytes)
                m->weighted_bytes = bytes;
        if (!m->in_messages) {
                uint64_t out = m->out_messages, out_bytes = m->out_bytes;
                memset(m, 0, sizeof(*m));
                m->out_messages = out;
                m->out_bytes    = out_bytes;
                return;
        }
        if (m->weighted_messages > m->one_in_max * m->in_messages)
                m->weighted_messages = m->one_in_max * m->in_messages;
        if (m->weighted_bytes > m->one_in_max * m->in_bytes)
                m->weighted_bytes = m->one_in_max * m->in_bytes;
        extra = m->weighted_messages - m->in_messages;
        if (m->variance < extra)
                m->variance = extra;
        if (m->variance > m->one_in_max * extra)
                m->variance = m->one_in_max * extra;
        if (!m->seconds)
                m->seconds = 1;
}

void ks_report_analysis(const ks_topic_snapshot_t *s, double uptime_s,
                        ks_analysis_t *a)
{
        const ks_topic_counters_t *c   = &s->c;
        ks_analysis_sampling_t     smp = {
                c->sampled_in.messages,       c->sampled_in.bytes,
                c->sampled_weighted.messages, c->sampled_weighted.bytes,
                c->sampled_out.messages,      c->sampled_out.bytes,
                c->sampled_variance,          c->one_in_max,
                c->sampled_seconds,           c->sampled_in_sq};

        ks_report_sampling_settle(&smp, c->total.messages, c->total.bytes);
        ks_analysis_init_sampled(a, c->total.messages, c->total.bytes,
                                 c->unanalysed, &smp, uptime_s);
}

/** @brief {messages: [...], bytes: [...]} of @p n loads, indexed by
 *         partition (keyshift.report.v2's columns), with a third column
 *         `messages_sampling_error` when @p a was sampled (absent
 *         otherwise: 0, and the columns of large topics keep their size). */
static json_t *partitions_json(const ks_load_t *loads, int32_t n,
                               const ks_analysis_t *a)
{
        json_t *msgs = json_array(), *bytes = json_array();
        json_t *errs = a->sampled ? json_array() : NULL;
        json_t *o = json_pack("{s:o, s:o}", "messages", msgs, "bytes", bytes);
        int32_t i;

        if (!o) {
                json_decref(errs);
                return NULL;
        }
        for (i = 0; i < n; i++) {
                json_array_append_new(
                    msgs, json_integer((json_int_t)loads[i].messages));
                json_array_append_new(bytes,
                                      json_integer((json_int_t)loads[i].bytes));
                if (errs)
                        json_array_append_new(
                            errs, json_integer((json_int_t)ceil(
                                      ks_analysis_sampling_error(
                                          a, (double)loads[i].messages))));
        }
        if (errs)
                json_object_set_new(o, "messages_sampling_error", errs);
        return o;
}

/** @returns the distinct-key count: exact while the key sample is not
 *           full, else the HyperLogLog estimate; *err its relative
 *           standard error. */
static double distinct_keys(const ks_topic_snapshot_t *s, double *err)
{
        if (s->sample_cnt < s->sample_capacity) {
                *err = 0.0;
                return (double)s->sample_cnt;
        }
        *err = ks_hll_std_error();
        return ks_hll_estimate(&s->hll);
}

void ks_report_sample_pass(const ks_topic_snapshot_t *s,
                           ks_report_sample_pass_t   *out)
{
        uint32_t d = (uint32_t)s->partition_count, pd[KEYSHIFT_PROPOSED_MAX];
        uint64_t m, pm[KEYSHIFT_PROPOSED_MAX];
        size_t   n = s->partition_count > 0 ? s->proposal_cnt : 0, i, j;
        int      c;

        memset(out, 0, sizeof(*out));
        if (!s->partition_count)
                return;
        m = ks_partition_m(d);
        for (j = 0; j < n; j++) {
                pd[j] = (uint32_t)s->proposals[j].partition_count;
                pm[j] = ks_partition_m(pd[j]);
        }
        /* One walk for all counts and client models, the current
         * partition computed once per key */
        for (i = 0; i < s->sample_cnt; i++) {
                const ks_model_hashes_t *mh   = &s->sample_models[i];
                uint32_t                 h    = s->sample[i].phash;
                int32_t                  ours = ks_partition_of_m(h, m, d);
                uint64_t                 msgs = s->sample[i].messages;
                out->total += msgs;
                out->total_sq += (double)msgs * (double)msgs;
                for (j = 0; j < n; j++)
                        out->moved[j] +=
                            ours != ks_partition_of_m(h, pm[j], pd[j]);
                for (c = 0; c < KS_CLIENT__CNT; c++) {
                        int same = (mh->hashes_mask >> c & 1) &&
                                   ks_partition_of_m(mh->hash[c], m, d) == ours;
                        if (!same) {
                                out->differ[c] += msgs;
                                out->keys_differ[c]++;
                        }
                }
        }
}

void ks_report_moved_key_fractions(const ks_topic_snapshot_t     *s,
                                   const ks_report_sample_pass_t *sp,
                                   double                        *fraction)
{
        ks_report_sample_pass_t own;
        size_t                  j;

        if (!sp) {
                ks_report_sample_pass(s, &own);
                sp = &own;
        }
        for (j = 0; j < s->proposal_cnt; j++)
                fraction[j] = ks_report_frac(sp->moved[j], s->sample_cnt);
}

static json_t *proposal_json(const ks_topic_snapshot_t     *s,
                             const ks_proposal_t           *p,
                             const ks_report_sample_pass_t *sp,
                             const ks_analysis_t *a, double f, double distinct,
                             double distinct_err, int bulk)
{
        double f_err = ks_analysis_keys_fraction_error(
            f, s->sample_cnt, s->sample_cnt >= s->sample_capacity, a);
        json_t *o;

        o = json_pack(
            "{s:i, s:o, s:{s:I, s:I, s:f, s:f, s:I, s:f, s:f}}",
            "partition_count", (int)p->partition_count, "partitions",
            bulk ? partitions_json(p->partitions, p->partition_count, a)
                 : json_null(),
            "moved", "messages", (json_int_t)p->moved.messages, "bytes",
            (json_int_t)p->moved.bytes, "messages_fraction",
            ks_report_frac(p->moved.messages, s->window_hashed.messages),
            "traffic_fraction",
            ks_report_frac(p->moved.messages, s->window_total.messages),
            "distinct_keys", (json_int_t)llround(f * distinct),
            "distinct_keys_fraction", f, "distinct_keys_fraction_error", f_err);
        if (o) {
                ks_analysis_set_moved(json_object_get(o, "moved"),
                                      (double)sp->total, sp->total_sq,
                                      (double)s->window_hashed.messages,
                                      (double)s->window_total.messages, a);
                ks_analysis_set_moved_keys_error(json_object_get(o, "moved"),
                                                 distinct, distinct_err);
        }
        /* the writer writes a kept flow from the snapshot (ks_report_bulk.c) */
        if (o && bulk)
                ks_report_flow_set(o, p->flow, s->partition_count,
                                   p->partition_count);
        else if (o)
                json_object_set_new(o, "flow", json_null());
        return o;
}

static json_t *hot_keys_json(const ks_topic_snapshot_t *s, int n,
                             const ks_analysis_t *a)
{
        json_t                *arr = json_array();
        size_t                 i, j;
        ks_report_count_name_t names[KEYSHIFT_PROPOSED_MAX];

        ks_report_count_names(s, names);
        for (i = 0; arr && i < s->hot_cnt && i < (size_t)n; i++) {
                const ks_topk_entry_t *e = &s->hot[i];
                size_t                 kl =
                    e->keylen < KS_TOPK_KEY_MAX ? e->keylen : KS_TOPK_KEY_MAX;
                json_t *prop  = json_object();
                json_t *moves = json_object();
                json_t *o;
                int32_t pc = ks_report_partition_now(s, e->phash);

                for (j = 0; pc >= 0 && j < s->proposal_cnt; j++) {
                        int32_t pp = ks_partition_of(
                            e->phash, s->proposals[j].partition_count);
                        json_object_set_new(prop, names[j], json_integer(pp));
                        json_object_set_new(moves, names[j],
                                            json_boolean(pp != pc));
                }
                o = json_pack(
                    "{s:o, s:o, s:i, s:b, s:I, s:I, s:I, s:I, s:f, s:o, s:o, "
                    "s:o}",
                    "key", ks_report_key(e->key, kl), "key_hex",
                    ks_report_hex(e->key, kl), "key_length", (int)e->keylen,
                    "key_truncated", e->keylen > KS_TOPK_KEY_MAX, "messages",
                    (json_int_t)e->count, "messages_error",
                    (json_int_t)e->error, "messages_sampling_error",
                    (json_int_t)ceil(ks_analysis_hot_error(
                        a, (double)e->count,
                        (double)ks_topic_hot_sampling_error(s->c.hot_sampled,
                                                            e->count))),
                    "bytes", (json_int_t)e->bytes, "share",
                    ks_report_frac(e->count, s->c.total.messages),
                    "partition_current",
                    pc >= 0 ? json_integer(pc) : json_null(),
                    "partition_proposed", prop, "moves", moves);
                json_array_append_new(arr, o);
        }
        return arr;
}

json_t *ks_report_hot_sampling_json(uint64_t passed_by, uint64_t sampled)
{
        return json_pack("{s:i, s:I, s:I}", "one_in", KS_HOT_SAMPLE_ONE_IN,
                         "messages_passed_by", (json_int_t)passed_by,
                         "messages_sampled", (json_int_t)sampled);
}

/** Why a topic's proposals have no figures (unexplained placement). */
#define KS_UNPREDICTABLE_REASON                                                \
        "no partitioner keyshift models (consistent, murmur2, fnv1a) "         \
        "explains the partitions the deliveries went to (an application "      \
        "partitioner_cb?)"

/**
 * @brief The topic's `partitioner`: the one modelled, where it comes from
 *        (config, deliveries, keyshift.partitioner), whether deliveries
 *        confirmed it, and their evidence (ks_learn.h); and the
 *        PARTITIONER_LEARNED warning when it is not the configured one.
 */
static json_t *partitioner_json(const ks_topic_snapshot_t *s,
                                ks_warn_list_t            *wl)
{
        const ks_topic_learned_t *l = &s->learned;
        json_t                   *o = json_pack(
                              "{s:s, s:s, s:b, s:{s:I, s:I, s:I}}", "name",
                              ks_partitioner_name(s->partitioner), "source",
                              ks_partitioner_source_name(l->source), "confirmed",
                              l->confirmed || l->source == KS_PSOURCE_OVERRIDE, "evidence",
                              "discriminating_keys", (json_int_t)l->discriminating_keys,
                              "agreeing", (json_int_t)l->agreeing, "disagreeing",
                              (json_int_t)l->disagreeing);

        if (o && l->source == KS_PSOURCE_DELIVERIES) {
                json_object_set_new(
                    o, "configured",
                    json_string(ks_partitioner_name(l->configured)));
                ks_warn_add(
                    wl, KS_WARN_PARTITIONER_LEARNED, s->name,
                    "the deliveries follow %s, not %s as the producer's "
                    "configuration says (a topic configuration of its own, as "
                    "kcat -X partitioner=... or rd_kafka_topic_new() with a "
                    "topic configuration make): all %llu discriminating keys "
                    "agree with it; every figure of this topic is %s's, for "
                    "every message since the start",
                    ks_partitioner_name(s->partitioner),
                    ks_partitioner_name(l->configured),
                    (unsigned long long)l->discriminating_keys,
                    ks_partitioner_name(s->partitioner));
        }
        if (o && l->unexplained)
                json_object_set_new(o, "unexplained", json_true());
        if (o)
                json_object_set_new(o, "learning", json_boolean(l->learning));
        return o;
}

/**
 * @brief The topic's `partition_count`: the current count and where it
 *        comes from, since when it is analysed, the cluster's facts
 *        (brokers, replication, compaction, the metadata's count when the
 *        configuration set it) and its last change.
 * @returns a new reference, or NULL on ENOMEM.
 */
static json_t *partition_count_json(const ks_topic_snapshot_t *s)
{
        json_t *pc;
        char    ts[40];

        pc = json_pack("{s:o, s:s}", "current",
                       s->partition_count ? json_integer(s->partition_count)
                                          : json_null(),
                       "source", ks_count_source_name(s->count_source));
        ks_report_rfc3339(s->analysis_since_ms, ts, sizeof(ts));
        json_object_set_new(pc, "analysis_since", json_string(ts));
        json_object_set_new(
            pc, "brokers", s->brokers ? json_integer(s->brokers) : json_null());
        json_object_set_new(pc, "replication_factor",
                            s->replication_factor
                                ? json_integer(s->replication_factor)
                                : json_null());
        json_object_set_new(pc, "compacted",
                            s->compacted < 0 ? json_null()
                                             : json_boolean(s->compacted));
        if (s->count_source == KS_COUNT_CONFIG)
                json_object_set_new(pc, "cluster",
                                    s->metadata_count
                                        ? json_integer(s->metadata_count)
                                        : json_null());
        if (s->count_changed_at_ms) {
                ks_report_rfc3339(s->count_changed_at_ms, ts, sizeof(ts));
                json_object_set_new(pc, "changed_at", json_string(ts));
                json_object_set_new(pc, "previous",
                                    json_integer(s->previous_count));
        }
        return pc;
}

/**
 * @brief The topic's `proposals`: one object per proposed count, or, when
 *        no modelled partitioner explains the deliveries, the count alone
 *        marked unpredictable.
 * @param sp the key sample's walk, @p moved_f its moved-key fractions
 * @param with_bulk 0: the per-partition arrays are left to the writer
 * @returns a new reference, or NULL on ENOMEM.
 */
static json_t *proposals_json(const ks_topic_snapshot_t     *s,
                              const ks_report_sample_pass_t *sp,
                              const ks_analysis_t *an, const double *moved_f,
                              double distinct, double distinct_err,
                              int with_bulk)
{
        json_t *props = json_array();
        size_t  i;

        for (i = 0; props && i < s->proposal_cnt; i++)
                json_array_append_new(
                    props,
                    s->learned.unexplained
                        ? json_pack("{s:i, s:b, s:s, s:n, s:n, s:n}",
                                    "partition_count",
                                    (int)s->proposals[i].partition_count,
                                    "predictable", 0, "reason",
                                    KS_UNPREDICTABLE_REASON, "partitions",
                                    "moved", "flow")
                        : proposal_json(s, &s->proposals[i], sp, an, moved_f[i],
                                        distinct, distinct_err, with_bulk));
        return props;
}

/**
 * @brief The topic's object with its counters: @p pc (stolen) as its
 *        `partition_count`, its `partitioner` (which may add
 *        PARTITIONER_LEARNED to @p wl), the messages and bytes, the keys
 *        by kind, the window's and the acknowledgements' counts.
 * @returns a new reference, or NULL on ENOMEM.
 */
static json_t *counters_json(const ks_topic_snapshot_t *s, json_t *pc,
                             double distinct, double distinct_err,
                             ks_warn_list_t *wl)
{
        const ks_topic_counters_t *c = &s->c;

        return json_pack(
            "{s:o, s:o, s:b, s:I, s:I,"
            " s:{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f},"
            " s:{s:I, s:I, s:I, s:I},"
            " s:{s:I, s:I, s:I, s:I, s:I, s:I, s:I}}",
            "partition_count", pc, "partitioner", partitioner_json(s, wl),
            "proposals_default", s->proposals_default, "messages",
            (json_int_t)c->total.messages, "bytes", (json_int_t)c->total.bytes,
            "keys", "null", (json_int_t)c->null_keys, "empty",
            (json_int_t)c->empty_keys, "explicit_partition",
            (json_int_t)c->explicit_partition.messages, "explicit_out_of_range",
            (json_int_t)c->explicit_out_of_range, "hashed",
            (json_int_t)c->hashed.messages, "sticky",
            (json_int_t)c->sticky.messages, "random",
            (json_int_t)c->random.messages, "unplaced", (json_int_t)c->unplaced,
            "unanalysed", (json_int_t)c->unanalysed, "distinct_estimate",
            (json_int_t)llround(distinct), "distinct_error", distinct_err,
            "window", "messages", (json_int_t)s->window_total.messages, "bytes",
            (json_int_t)s->window_total.bytes, "hashed_messages",
            (json_int_t)s->window_hashed.messages, "hashed_bytes",
            (json_int_t)s->window_hashed.bytes, "acknowledged", "messages",
            (json_int_t)c->ack_messages, "matched", (json_int_t)c->ack_matched,
            "mismatched", (json_int_t)c->ack_mismatched, "failed",
            (json_int_t)c->ack_failed, "not_predictable",
            (json_int_t)c->ack_not_predictable, "unverified",
            (json_int_t)c->ack_unverified, "pending_verification",
            (json_int_t)c->ack_pending);
}

/**
 * @brief Rewrites @p ack (the topic's `acknowledged`) for a rehearsal:
 *        with another count than the topic's, no delivery can be checked,
 *        so every one is unverified, and why is said.
 */
static void rehearsal_acknowledged(json_t *ack, const ks_topic_counters_t *c)
{
        json_object_set_new(ack, "matched", json_integer(0));
        json_object_set_new(ack, "mismatched", json_integer(0));
        json_object_set_new(
            ack, "unverified",
            json_integer((json_int_t)(c->ack_unverified + c->ack_matched +
                                      c->ack_mismatched)));
        json_object_set_new(ack, "checked", json_false());
        json_object_set_new(
            ack, "not_checked_reason",
            json_string("a rehearsal: keyshift.partitions.current "
                        "differs from the topic's partition count"));
}

/**
 * @returns `acknowledged.delivered_partitions_follow`: of the deliveries
 *          diagnosed, how many each hash family explains (a new
 *          reference, or NULL on ENOMEM).
 */
static json_t *delivered_follow_json(const ks_topic_counters_t *c)
{
        json_t *d = json_pack("{s:I}", "checked", (json_int_t)c->diag_checked);
        size_t  i;

        for (i = 0; d && i < sizeof(c->diag_follow) / sizeof(c->diag_follow[0]);
             i++)
                json_object_set_new(
                    d, ks_partitioner_name(ks_topic_diag_families[i]),
                    json_integer((json_int_t)c->diag_follow[i]));
        return d;
}

/**
 * @brief Sets the topic's `other_clients` (null when no modelled
 *        partitioner explains the deliveries: nothing to compare them
 *        with), and adds the warnings of the clients that would place
 *        keys elsewhere.
 */
static void other_clients_set(json_t *o, const ks_topic_snapshot_t *s,
                              const ks_report_sample_pass_t *sp,
                              ks_warn_list_t                *wl)
{
        double java_f;

        if (s->learned.unexplained) {
                json_object_set_new(o, "other_clients", json_null());
                return;
        }
        json_object_set_new(o, "other_clients",
                            ks_report_other_clients(s, sp, &java_f));
        ks_report_client_warnings(s, java_f, wl);
}

/**
 * @returns the topic's `current`: its partitions' loads under the current
 *          count (null until it is known; its array null when the writer
 *          writes it from the snapshot). A new reference.
 */
static json_t *current_json(const ks_topic_snapshot_t *s,
                            const ks_report_opts_t    *opts,
                            const ks_analysis_t       *an)
{
        if (!s->current)
                return json_null();
        return json_pack(
            "{s:o}", "partitions",
            opts->bulk_by_writer
                ? json_null()
                : partitions_json(s->current, s->partition_count, an));
}

json_t *ks_report_topic(const ks_topic_snapshot_t *s,
                        const ks_report_opts_t *opts, ks_warn_list_t *wl)
{
        const ks_topic_counters_t *c = &s->c;
        double                     distinct_err;
        double                     distinct = distinct_keys(s, &distinct_err);
        json_t                    *o, *pc, *props;
        char                       last_changed[40] = "";
        double                     moved_f[KEYSHIFT_PROPOSED_MAX];
        ks_report_sample_pass_t    sp;
        ks_analysis_t              an;
        size_t first_warning = wl->cnt; /* this topic's own come next */

        ks_report_analysis(s,
                           opts->started_at_ms
                               ? (double)(opts->now_ms - opts->started_at_ms) /
                                     1000.0
                               : -1,
                           &an);
        ks_report_sample_pass(s, &sp);
        ks_report_moved_key_fractions(s, &sp, moved_f);

        pc = partition_count_json(s);
        if (s->last_changed_at_ms)
                ks_report_rfc3339(s->last_changed_at_ms, last_changed,
                                  sizeof(last_changed));
        props = proposals_json(s, &sp, &an, moved_f, distinct, distinct_err,
                               !opts->bulk_by_writer);
        o     = counters_json(s, pc, distinct, distinct_err, wl);
        if (!o)
                return NULL;
        /* what a skipped message would have changed (ks_analysis.h) */
        json_object_set_new(o, "analysis", ks_analysis_json(&an));
        ks_analysis_set_window(json_object_get(o, "window"), &an);
        ks_analysis_set_distinct(json_object_get(o, "keys"), distinct,
                                 distinct_err, &an);
        if (ks_report_rehearsal(s)) /* nothing to check them against */
                rehearsal_acknowledged(json_object_get(o, "acknowledged"), c);
        json_object_set_new(o, "last_changed_at",
                            *last_changed ? json_string(last_changed)
                                          : json_null());
        json_object_set_new(o, "current", current_json(s, opts, &an));
        if (c->diag_checked)
                json_object_set_new(json_object_get(o, "acknowledged"),
                                    "delivered_partitions_follow",
                                    delivered_follow_json(c));
        json_object_set_new(o, "key_encodings", ks_report_key_encodings(s));
        json_object_set_new(o, "mixed_keys",
                            ks_report_mixed_keys(s, opts->hot_keys));
        other_clients_set(o, s, &sp, wl);
        json_object_set_new(o, "proposals", props);
        json_object_set_new(o, "hot_keys",
                            hot_keys_json(s, opts->hot_keys, &an));
        json_object_set_new(
            o, "hot_keys_sampling",
            ks_report_hot_sampling_json(c->hot_passed_by, c->hot_sampled));
        json_object_set_new(o, "merge",
                            opts->bulk_by_writer ? json_null()
                                                 : ks_report_merge_json(s));
        if (opts->sizing) {
                ks_report_add_sizing(o, s, opts, distinct, moved_f, wl,
                                     first_warning);
                ks_analysis_set_rates(o, &an, opts->sizing);
        }
        ks_report_topic_warnings(s, opts->count_unknown_why, wl);
        json_object_set_new(
            o, "warnings", ks_warn_list_json_since(wl, s->name, first_warning));
        if (o) { /* last: the story reads the figures above (ks_story.h) */
                char story[KS_STORY_MAX];
                json_object_set_new(
                    o, "summary",
                    json_string(ks_story_headline(o, story, sizeof(story))));
        }
        return o;
}

/** @returns the report's head: every member before "topics". */
const char *ks_report_publish_state(const ks_report_publish_t *pub)
{
        if (pub->last_error_ms && pub->last_error_ms >= pub->last_delivered_ms)
                return "failing";
        return pub->last_delivered_ms ? "ok" : "waiting";
}

/** @returns producer.report_topic of @p pub (docs/report-schema.md). */
static json_t *publish_json(const ks_report_publish_t *pub)
{
        char at[40];

        if (pub->last_error_ms)
                ks_report_rfc3339(pub->last_error_ms, at, sizeof(at));
        return json_pack(
            "{s:s, s:s, s:I, s:I, s:I, s:o, s:o}", "topic", pub->topic, "state",
            ks_report_publish_state(pub), "records_queued",
            (json_int_t)pub->queued, "records_delivered",
            (json_int_t)pub->delivered, "records_failed",
            (json_int_t)pub->failed, "last_error",
            pub->last_error_ms ? json_string(pub->last_error) : json_null(),
            "last_error_at",
            pub->last_error_ms ? json_string(at) : json_null());
}

json_t *ks_report_head(const ks_report_producer_t *p,
                       const ks_report_opts_t     *opts)
{
        char    now[40], started[40];
        json_t *o;

        ks_report_rfc3339(opts->now_ms, now, sizeof(now));
        ks_report_rfc3339(p->started_at_ms, started, sizeof(started));
        o = json_pack("{s:s, s:s, s:s, s:f, s:b,"
                      " s:{s:s, s:s, s:I, s:s, s:s, s:s, s:s, s:i, s:I}}",
                      "schema", KEYSHIFT_REPORT_SCHEMA, "generated_at", now,
                      "started_at", started, "uptime_s",
                      (double)(opts->now_ms - p->started_at_ms) / 1000.0,
                      "final", opts->final, "producer", "client_id",
                      p->client_id ? p->client_id : "", "name",
                      p->client_name ? p->client_name : "", "pid",
                      (json_int_t)p->pid, "librdkafka_version",
                      p->librdkafka_version, "keyshift_version",
                      KEYSHIFT_VERSION_STR, "partitioner", p->partitioner,
                      "partitioner_source", p->partitioner_source,
                      "sticky_partitioning_linger_ms", p->sticky_linger_ms,
                      "report_interval_ms", (json_int_t)p->report_interval_ms);

        if (o && p->librdkafka_library)
                json_object_set_new(json_object_get(o, "producer"),
                                    "librdkafka_library",
                                    json_string(p->librdkafka_library));
        if (o && (p->drainer_priority || p->reporter_priority)) {
                json_t *tp = json_object();
                if (p->drainer_priority)
                        json_object_set_new(tp, "drainer",
                                            json_string(p->drainer_priority));
                if (p->reporter_priority)
                        json_object_set_new(tp, "reporter",
                                            json_string(p->reporter_priority));
                json_object_set_new(json_object_get(o, "producer"),
                                    "threads_priority", tp);
        }
        if (o && p->cpu_watched)
                json_object_set_new(
                    json_object_get(o, "producer"), "out_of_cpu",
                    json_pack("{s:f, s:f, s:b, s:I, s:i}", "seconds",
                              (double)p->out_of_cpu_ms / 1000.0,
                              "delivery_thread_seconds",
                              (double)p->delivery_thread_ms / 1000.0, "now",
                              p->out_of_cpu_now, "deliveries_unchecked",
                              (json_int_t)p->deliveries_unchecked,
                              "delivery_check_one_in",
                              (int)p->delivery_check_one_in));
        if (o && p->publish)
                json_object_set_new(json_object_get(o, "producer"),
                                    "report_topic", publish_json(p->publish));
        return o;
}

json_t *ks_report_build(const ks_report_producer_t *p,
                        const ks_report_opts_t *opts, json_t *topics,
                        const ks_warn_list_t *wl)
{
        json_t     *o = ks_report_head(p, opts), *t;
        const char *name;
        json_int_t  messages = 0;

        if (!o) {
                json_decref(topics);
                return NULL;
        }
        json_object_foreach(topics, name, t) messages +=
            json_integer_value(json_object_get(t, "messages"));
        if (json_object_set_new(o, "topics", topics) ||
            json_object_set_new(o, "messages", json_integer(messages)) ||
            json_object_set_new(o, "warnings", ks_warn_list_json(wl, NULL))) {
                json_decref(o);
                return NULL;
        }
        return o;
}
