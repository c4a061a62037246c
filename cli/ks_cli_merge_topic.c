/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli_merge_topic.c
 * @brief One topic of `keyshift merge`: refuse inputs that describe
 *        different partitionings, sum what is exact, merge the sketches,
 *        recompute what derives from them.
 *
 * An input whose producer had not learned the topic's partition count
 * (current 0 or null) is not a different partitioning: it is left out of
 * the figures when another input knows the count, and said in the
 * topic's COUNT_UNKNOWN_LEFT_OUT warning (ks_cli_merge_left_out()).
 *
 * Exact and summed here: messages, bytes, keys.* (unanalysed too: the
 * merged `analysis` is partial when any input's is, ks_analysis.h; its
 * sampling counters summed, one_in_max the largest, sampled_seconds and
 * uptime_s summed as producer-seconds, every sampling error recomputed
 * from the sums), window.*,
 * acknowledged.*, key_encodings (schema ids too; the keys an id frames,
 * counted up to 2, compared by first key), current.partitions (columns),
 * and per proposal partitions (columns), flow (null if any input has none) and
 * moved messages and bytes; every fraction of those sums recomputed.
 * From the merged sketches (ks_cli_merge_sketch.c): keys.distinct_estimate,
 * the moved-key fractions and hot_keys. Not plain sums
 * (ks_cli_merge_derived.c): other_clients, mixed_keys, warnings. Members a
 * later report version adds (rates, skew, sizing, migration) are not
 * merged: per-second peaks of different processes do not add up.
 */
#include "ks_cli_merge.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keyshift/keyshift.h"
#include "ks_report.h"
#include "ks_story.h"

void ks_cli_merge_sum(json_t *dst, const json_t *src)
{
        const char *k;
        json_t     *v;

        json_object_foreach((json_t *)src, k, v)
        {
                json_t *d = json_object_get(dst, k);
                if (!d)
                        json_object_set_new(dst, k, json_deep_copy(v));
                else if (json_is_integer(d) && json_is_integer(v))
                        json_integer_set(d, json_integer_value(d) +
                                                json_integer_value(v));
                else if (json_is_object(d) && json_is_object(v))
                        ks_cli_merge_sum(d, v);
        }
}

/**
 * @returns key_encodings.schema_id_keys of @p n inputs merged: an id
 *          frames two keys or more if it does in one input, or if two
 *          inputs' first keys differ (first_key_hash64); else one. NULL
 *          when no input has them.
 */
static json_t *ks_merge_schema_id_keys(const ks_cli_merge_in_t *in, size_t n)
{
        json_t *out = NULL;
        size_t  i;

        for (i = 0; i < n; i++) {
                const json_t *ids = json_object_get(
                    json_object_get(in[i].topic, "key_encodings"),
                    "schema_id_keys");
                const char *id;
                json_t     *v, *m;
                json_object_foreach((json_t *)ids, id, v)
                {
                        if (!out)
                                out = json_object();
                        if (!(m = json_object_get(out, id))) {
                                json_object_set_new(out, id, json_deep_copy(v));
                                continue;
                        }
                        if (ks_cli_u64(v, "keys") > 1 ||
                            strcmp(ks_cli_str(m, "first_key_hash64", ""),
                                   ks_cli_str(v, "first_key_hash64", "")))
                                json_object_set_new(m, "keys", json_integer(2));
                }
        }
        return out;
}

/** @brief dst.messages[i], dst.bytes[i] += src's (the per-partition
 *         columns; checked, same length). */
static void ks_merge_partitions(json_t *dst, const json_t *src)
{
        static const char *const f[] = {"messages", "bytes"};
        size_t                   i, j;

        for (j = 0; j < 2; j++) {
                json_t       *d = json_object_get(dst, f[j]);
                const json_t *s = json_object_get(src, f[j]);
                for (i = 0; i < json_array_size(d); i++) {
                        json_t *c = json_array_get(d, i);
                        json_integer_set(
                            c, json_integer_value(c) +
                                   json_integer_value(json_array_get(s, i)));
                }
        }
}

/** @brief Each partition's `messages_sampling_error` from its merged
 *         `messages` under the merged analysis @p a (ks_analysis.h);
 *         none when nothing was sampled. */
static void ks_merge_partition_errors(json_t *parts, const ks_analysis_t *a)
{
        const json_t *msgs = json_object_get(parts, "messages");
        json_t       *errs, *m;
        size_t        i;

        if (!json_is_object(parts))
                return;
        if (!a->sampled) {
                json_object_del(parts, "messages_sampling_error");
                return;
        }
        errs = json_array();
        json_array_foreach(msgs, i, m)
        {
                json_array_append_new(
                    errs,
                    json_integer((json_int_t)ceil(ks_analysis_sampling_error(
                        a, (double)json_integer_value(m)))));
        }
        json_object_set_new(parts, "messages_sampling_error", errs);
}

/** @brief Writes the proposals' counts as "[12, 24]". */
static void ks_merge_counts_str(const json_t *props, char *buf, size_t size)
{
        size_t i, o = 0;

        o += (size_t)snprintf(buf, size, "[");
        for (i = 0; i < json_array_size(props) && o < size; i++)
                o += (size_t)snprintf(
                    buf + o, size - o, "%s%lld", i ? ", " : "",
                    (long long)json_integer_value(json_object_get(
                        json_array_get(props, i), "partition_count")));
        if (o < size)
                snprintf(buf + o, size - o, "]");
}

/** @returns 0 when input @p b can be merged with @p a, else -1 with @p err
 *           naming b's file and the field. */
static int ks_merge_compatible(const char *name, const ks_cli_merge_in_t *a,
                               const ks_cli_merge_in_t *b, char *err,
                               size_t errsz)
{
        int32_t     ca = ks_cli_topic_current(a->topic);
        int32_t     cb = ks_cli_topic_current(b->topic);
        const char *pa = ks_cli_topic_partitioner(a->topic, "");
        const char *pb = ks_cli_topic_partitioner(b->topic, "");
        char        sa[256], sb[256];

        if (ca != cb) {
                snprintf(err, errsz,
                         "%s: topics.%s.partition_count.current: %d, but %s "
                         "has %d: reports of different partition counts cannot "
                         "be merged (merge those written before and after "
                         "the change separately)",
                         b->report->path, name, (int)cb, a->report->path,
                         (int)ca);
                return -1;
        }
        ks_merge_counts_str(json_object_get(a->topic, "proposals"), sa,
                            sizeof(sa));
        ks_merge_counts_str(json_object_get(b->topic, "proposals"), sb,
                            sizeof(sb));
        if (strcmp(sa, sb)) {
                snprintf(err, errsz,
                         "%s: topics.%s.proposals: partition counts %s, but "
                         "%s has %s: give every producer the same "
                         "keyshift.partitions.proposed",
                         b->report->path, name, sb, a->report->path, sa);
                return -1;
        }
        if (strcmp(pa, pb)) {
                snprintf(err, errsz,
                         "%s: topics.%s.partitioner: %s, but %s has %s: keys "
                         "hashed by different partitioners cannot be merged",
                         b->report->path, name, pb, a->report->path, pa);
                return -1;
        }
        return 0;
}

/** @brief The partition_count object: the first input's, analysis_since
 *         the earliest, changed_at the latest seen. */
static json_t *ks_merge_partition_count(const ks_cli_merge_in_t *in, size_t n)
{
        json_t *pc =
            json_deep_copy(json_object_get(in[0].topic, "partition_count"));
        size_t i;

        for (i = 1; i < n; i++) {
                const json_t *o =
                    json_object_get(in[i].topic, "partition_count");
                const char *as = ks_cli_str(o, "analysis_since", NULL);
                const char *ca = ks_cli_str(o, "changed_at", NULL);
                if (as && strcmp(as, ks_cli_str(pc, "analysis_since", "~")) < 0)
                        json_object_set_new(pc, "analysis_since",
                                            json_string(as));
                if (ca && strcmp(ca, ks_cli_str(pc, "changed_at", "")) > 0) {
                        json_object_set_new(pc, "changed_at", json_string(ca));
                        json_object_set(pc, "previous",
                                        json_object_get(o, "previous"));
                }
        }
        return pc;
}

/** @returns the latest `last_changed_at` of the inputs (RFC 3339 in UTC
 *  sorts as text), or null when none has one (reports before 0.2). */
static json_t *last_changed(const ks_cli_merge_in_t *in, size_t n)
{
        const char *latest = NULL;
        size_t      i;

        for (i = 0; i < n; i++) {
                const char *s = json_string_value(
                    json_object_get(in[i].topic, "last_changed_at"));
                if (s && (!latest || strcmp(s, latest) > 0))
                        latest = s;
        }
        return latest ? json_string(latest) : json_null();
}

/** @brief Adds input proposal @p q's flow to the @p rows x @p cols
 *         matrix @p *sum; without one (null: over its producer's
 *         keyshift.flow.max.cells), the merged flow is null too (*sum
 *         freed). */
static void ks_merge_flow_add(uint64_t **sum, const json_t *q, int32_t rows,
                              int32_t cols)
{
        char why[160];

        if (!*sum)
                return;
        /* added in place (no matrix per input); checked: no flow here, or
         * none readable: the merged flow is null */
        if (ks_report_flow_add(q, rows, cols, *sum, why, sizeof(why))) {
                free(*sum);
                *sum = NULL;
        }
}

/** @returns a copy of proposal @p src, its flow left out (null in its
 *           place): flows are summed as C matrices, not JSON. */
static json_t *ks_merge_proposal_copy(const json_t *src)
{
        json_t     *p = json_object(), *v;
        const char *key;

        json_object_foreach((json_t *)src, key, v)
        {
                if (!strcmp(key, "flow"))
                        json_object_set_new(p, key, json_null());
                else if (strcmp(key, "flow_nonzero"))
                        json_object_set_new(p, key, json_deep_copy(v));
        }
        return p;
}

/** @brief One proposal merged: partitions, flow and moved summed, the
 *         fractions and distinct keys recomputed. */
static json_t *ks_merge_proposal(const ks_cli_merge_in_t *in, size_t n,
                                 size_t idx, const ks_cli_sketch_t *sk,
                                 const json_t *window, double distinct,
                                 const ks_analysis_t *a)
{
        const json_t *p0 =
            json_array_get(json_object_get(in[0].topic, "proposals"), idx);
        json_t   *p   = ks_merge_proposal_copy(p0);
        json_t   *mv  = json_object_get(p, "moved");
        int32_t   cur = ks_cli_topic_current(in[0].topic);
        int32_t   pc  = (int32_t)ks_cli_u64(p, "partition_count");
        double    all = (double)ks_cli_u64(window, "messages");
        double    hm  = (double)ks_cli_u64(window, "hashed_messages");
        char      why[160];
        uint64_t *flow =
            cur ? ks_report_flow_read(p0, cur, pc, why, sizeof(why)) : NULL;
        size_t i;

        for (i = 1; i < n; i++) {
                const json_t *q = json_array_get(
                    json_object_get(in[i].topic, "proposals"), idx);
                if (cur)
                        ks_merge_partitions(json_object_get(p, "partitions"),
                                            json_object_get(q, "partitions"));
                ks_merge_flow_add(&flow, q, cur, pc);
                ks_cli_merge_sum(mv, json_object_get(q, "moved"));
        }
        json_object_set_new(
            mv, "messages_fraction",
            json_real(hm > 0 ? (double)ks_cli_u64(mv, "messages") / hm : 0));
        json_object_set_new(
            mv, "traffic_fraction",
            json_real(all > 0 ? (double)ks_cli_u64(mv, "messages") / all : 0));
        ks_cli_sketch_moved(sk, cur, pc, distinct, a, hm, all, mv);
        if (cur)
                ks_merge_partition_errors(json_object_get(p, "partitions"), a);
        if (flow) /* dense, or null and flow_nonzero: as a report writes */
                ks_report_flow_set(p, flow, cur, pc);
        free(flow);
        return p;
}

int ks_cli_merge_left_out(const json_t *topic, int32_t merged_current)
{
        return merged_current > 0 && ks_cli_topic_current(topic) == 0;
}

/** @returns the merged count of @p n inputs: the first known one (> 0),
 *           0 when no input knows it. */
static int32_t ks_merge_known_current(const ks_cli_merge_in_t *in, size_t n)
{
        size_t i;

        for (i = 0; i < n; i++)
                if (ks_cli_topic_current(in[i].topic) > 0)
                        return ks_cli_topic_current(in[i].topic);
        return 0;
}

/**
 * @brief Adds COUNT_UNKNOWN_LEFT_OUT to merged topic @p t: the @p nout
 *        inputs @p out left out of its figures (ks_cli_merge_left_out()),
 *        named, with their messages.
 */
static void ks_merge_warn_left_out(json_t *t, const char *name,
                                   const ks_cli_merge_in_t *out, size_t nout)
{
        char       msg[1024];
        size_t     i, o;
        json_int_t messages = 0;

        for (i = 0; i < nout; i++)
                messages += (json_int_t)ks_cli_u64(out[i].topic, "messages");
        o = (size_t)snprintf(
            msg, sizeof(msg),
            "%zu report%s of topic %s left out of its figures (%lld "
            "messages): %s not learned the topic's partition count yet "
            "(partition_count.current unknown), so %s messages cannot be "
            "placed on partitions:",
            nout, nout == 1 ? "" : "s", name, (long long)messages,
            nout == 1 ? "its producer had" : "their producers had",
            nout == 1 ? "its" : "their");
        for (i = 0; i < nout && o < sizeof(msg); i++)
                o += (size_t)snprintf(msg + o, sizeof(msg) - o, "%s %s",
                                      i ? "," : "", out[i].report->path);
        json_array_append_new(json_object_get(t, "warnings"),
                              json_pack("{s:s, s:s}", "code",
                                        KS_CLI_WARN_COUNT_UNKNOWN_LEFT_OUT,
                                        "message", msg));
}

/** @brief ks_cli_merge_topic() of the inputs that can be placed: those
 *         left out (ks_cli_merge_left_out()) said in a warning. */
static json_t *ks_merge_topic_placed(const char              *name,
                                     const ks_cli_merge_in_t *in, size_t n,
                                     size_t hot_max, size_t total_inputs,
                                     char *err, size_t errsz);

json_t *ks_cli_merge_topic(const char *name, const ks_cli_merge_in_t *in,
                           size_t n, size_t hot_max, size_t total_inputs,
                           char *err, size_t errsz)
{
        int32_t            known = ks_merge_known_current(in, n);
        ks_cli_merge_in_t *kept, *out;
        size_t             nk = 0, no = 0, i;
        json_t            *t;

        for (i = 0; i < n; i++)
                no += (size_t)ks_cli_merge_left_out(in[i].topic, known);
        if (!no)
                return ks_merge_topic_placed(name, in, n, hot_max, total_inputs,
                                             err, errsz);
        if (!(kept = calloc(n, sizeof(*kept)))) {
                snprintf(err, errsz, "out of memory");
                return NULL;
        }
        out = kept + (n - no); /* the left out at the end */
        for (i = 0, no = 0; i < n; i++) {
                if (ks_cli_merge_left_out(in[i].topic, known))
                        out[no++] = in[i];
                else
                        kept[nk++] = in[i];
        }
        t = ks_merge_topic_placed(name, kept, nk, hot_max, total_inputs, err,
                                  errsz);
        if (t)
                ks_merge_warn_left_out(t, name, out, no);
        free(kept);
        return t;
}

/** The exact figures of a merged topic, summed over its inputs. */
typedef struct ks_merge_sums {
        json_t *keys;   /**< `keys` */
        json_t *window; /**< `window` */
        json_t *ack;    /**< `acknowledged` */
        json_t *enc;    /**< `key_encodings`, or NULL when the first has none */
        json_t *curp;   /**< `current.partitions`, or NULL: count unknown */
} ks_merge_sums_t;

/**
 * @brief Merges the sketches of the @p n inputs of topic @p name: the key
 *        sample at the smallest capacity, the hot keys at the largest.
 *        Sets @p hot_max (when 0: the most hot keys an input lists) and
 *        @p hot_total (the hot-key sketches' totals added).
 * @returns the merged sketches, or NULL with @p err set.
 */
static ks_cli_sketch_t *ks_merge_sketches(const char              *name,
                                          const ks_cli_merge_in_t *in, size_t n,
                                          size_t *hot_max, size_t *hot_total,
                                          char *err, size_t errsz)
{
        size_t           scap = SIZE_MAX, hcap = 0, i, listed, most_listed = 0;
        ks_cli_sketch_t *sk;
        char             e2[512];

        for (i = 0; i < n; i++) {
                const json_t *m = json_object_get(in[i].topic, "merge");
                size_t sc = (size_t)ks_cli_u64(json_object_get(m, "key_sample"),
                                               "capacity");
                size_t hc = (size_t)ks_cli_u64(json_object_get(m, "hot_keys"),
                                               "capacity");
                scap      = sc < scap ? sc : scap;
                hcap      = hc > hcap ? hc : hcap;
                *hot_total +=
                    ks_cli_u64(json_object_get(m, "hot_keys"), "total");
                listed =
                    json_array_size(json_object_get(in[i].topic, "hot_keys"));
                most_listed = listed > most_listed ? listed : most_listed;
        }
        if (!*hot_max)
                *hot_max = most_listed;
        if (!(sk = ks_cli_sketch_new(scap, hcap))) {
                snprintf(err, errsz, "out of memory");
                return NULL;
        }
        for (i = 0; i < n; i++)
                if (ks_cli_sketch_add(sk, json_object_get(in[i].topic, "merge"),
                                      e2, sizeof(e2))) {
                        snprintf(err, errsz, "%s: topics.%s.%s",
                                 in[i].report->path, name, e2);
                        ks_cli_sketch_destroy(sk);
                        return NULL;
                }
        return sk;
}

/**
 * @brief Sums the exact figures of the @p n inputs into @p sums (copies
 *        of the first input's, the others added) and the messages and
 *        bytes into @p t.
 */
static void ks_merge_sum_inputs(const ks_cli_merge_in_t *in, size_t n,
                                json_t *t, ks_merge_sums_t *sums)
{
        const json_t *first = in[0].topic;
        size_t        i, j;

        sums->keys   = json_deep_copy(json_object_get(first, "keys"));
        sums->window = json_deep_copy(json_object_get(first, "window"));
        sums->ack    = json_deep_copy(json_object_get(first, "acknowledged"));
        sums->enc    = json_deep_copy(json_object_get(first, "key_encodings"));
        sums->curp   = NULL;
        if (ks_cli_topic_current(first))
                sums->curp = json_deep_copy(json_object_get(
                    json_object_get(first, "current"), "partitions"));
        for (i = 0; i < n; i++) {
                const json_t *o = in[i].topic;
                for (j = 0; j < 2; j++) {
                        const char *f = j ? "bytes" : "messages";
                        json_object_set_new(
                            t, f,
                            json_integer((json_int_t)(ks_cli_u64(t, f) +
                                                      ks_cli_u64(o, f))));
                }
                if (!i)
                        continue;
                ks_cli_merge_sum(sums->keys, json_object_get(o, "keys"));
                ks_cli_merge_sum(sums->window, json_object_get(o, "window"));
                ks_cli_merge_sum(sums->ack, json_object_get(o, "acknowledged"));
                if (sums->enc)
                        ks_cli_merge_sum(sums->enc,
                                         json_object_get(o, "key_encodings"));
                if (sums->curp)
                        ks_merge_partitions(
                            sums->curp,
                            json_object_get(json_object_get(o, "current"),
                                            "partitions"));
        }
}

/**
 * @brief Adds the analyses of the @p n inputs into @p an: partial when
 *        any input skipped messages, sampled when any sampled
 *        (ks_analysis.h); an input without `analysis.uptime_s` counts its
 *        report's.
 */
static void ks_merge_analyses(const ks_cli_merge_in_t *in, size_t n,
                              ks_analysis_t *an)
{
        size_t i;

        for (i = 0; i < n; i++) {
                ks_analysis_t one;
                ks_analysis_of_topic(in[i].topic, &one);
                if (one.uptime_s < 0 && json_is_number(json_object_get(
                                            in[i].report->root, "uptime_s")))
                        one.uptime_s = json_number_value(
                            json_object_get(in[i].report->root, "uptime_s"));
                if (i)
                        ks_analysis_add(an, &one);
                else
                        *an = one;
        }
}

/**
 * @brief Sets in @p t the sums of @p sums (taken), with the estimates the
 *        merged analysis @p an and sketches @p sk give them.
 * @returns the distinct keys estimated from the merged sketch.
 */
static double ks_merge_set_sums(const ks_cli_merge_in_t *in, size_t n,
                                json_t *t, ks_merge_sums_t *sums,
                                const ks_cli_sketch_t *sk,
                                const ks_analysis_t   *an)
{
        double distinct, derr;

        json_object_set_new(t, "analysis", ks_analysis_json(an));
        ks_analysis_set_window(sums->window, an);
        if (sums->curp)
                ks_merge_partition_errors(sums->curp, an);
        distinct = ks_cli_sketch_distinct(sk, &derr);
        ks_analysis_set_distinct(sums->keys, distinct, derr, an);
        json_object_set_new(t, "keys", sums->keys);
        json_object_set_new(t, "window", sums->window);
        json_object_set_new(t, "acknowledged", sums->ack);
        json_object_set_new(t, "last_changed_at", last_changed(in, n));
        json_object_set_new(t, "current",
                            sums->curp
                                ? json_pack("{s:o}", "partitions", sums->curp)
                                : json_null());
        if (sums->enc) {
                json_t *ik = ks_merge_schema_id_keys(in, n);
                if (ik) /* not summed: merged above */
                        json_object_set_new(sums->enc, "schema_id_keys", ik);
                json_object_set_new(t, "key_encodings", sums->enc);
        }
        return distinct;
}

/**
 * @brief Sets in @p t the proposals (each merged by ks_merge_proposal())
 *        and the hot keys of the merged sketches @p sk, @p hot_max listed.
 */
static void ks_merge_set_proposals(const ks_cli_merge_in_t *in, size_t n,
                                   json_t *t, ks_cli_sketch_t *sk,
                                   const json_t *window, double distinct,
                                   size_t hot_max, const ks_analysis_t *an)
{
        const json_t *props = json_object_get(in[0].topic, "proposals");
        int32_t       pcounts[KEYSHIFT_PROPOSED_MAX];
        json_t       *ps = json_array();
        size_t        i;

        for (i = 0; i < json_array_size(props) && i < KEYSHIFT_PROPOSED_MAX;
             i++) {
                pcounts[i] = (int32_t)ks_cli_u64(json_array_get(props, i),
                                                 "partition_count");
                json_array_append_new(
                    ps, ks_merge_proposal(in, n, i, sk, window, distinct, an));
        }
        json_object_set_new(t, "proposals", ps);
        json_object_set_new(
            t, "hot_keys",
            ks_cli_sketch_hot_keys(sk, ks_cli_topic_current(in[0].topic),
                                   pcounts, json_array_size(ps),
                                   ks_cli_u64(t, "messages"), hot_max, an));
        json_object_set_new(t, "hot_keys_sampling",
                            ks_cli_sketch_hot_sampling(sk));
}

static json_t *ks_merge_topic_placed(const char              *name,
                                     const ks_cli_merge_in_t *in, size_t n,
                                     size_t hot_max, size_t total_inputs,
                                     char *err, size_t errsz)
{
        const json_t    *first     = in[0].topic;
        size_t           hot_total = 0, i;
        ks_cli_sketch_t *sk;
        ks_merge_sums_t  sums;
        json_t          *t, *ps;
        double           distinct;
        ks_analysis_t    an;

        for (i = 1; i < n; i++)
                if (ks_merge_compatible(name, &in[0], &in[i], err, errsz))
                        return NULL;
        if (ks_cli_merge_sums_fit(name, in, n, err, errsz))
                return NULL;
        if (!(sk = ks_merge_sketches(name, in, n, &hot_max, &hot_total, err,
                                     errsz)))
                return NULL;
        /* the inputs agree on the partitioner's name
         * (ks_merge_compatible()): the first one's object (or string) */
        t = json_pack("{s:o, s:O, s:O, s:I, s:I}", "partition_count",
                      ks_merge_partition_count(in, n), "partitioner",
                      json_object_get(first, "partitioner")
                          ? json_object_get(first, "partitioner")
                          : json_null(),
                      "proposals_default",
                      json_object_get(first, "proposals_default")
                          ? json_object_get(first, "proposals_default")
                          : json_false(),
                      "messages", (json_int_t)0, "bytes", (json_int_t)0);
        ks_merge_sum_inputs(in, n, t, &sums);
        ks_merge_analyses(in, n, &an);
        distinct = ks_merge_set_sums(in, n, t, &sums, sk, &an);
        if ((ps = ks_cli_merge_mixed(in, n)))
                json_object_set_new(t, "mixed_keys", ps);
        if (json_object_get(first, "other_clients"))
                json_object_set_new(t, "other_clients",
                                    ks_cli_merge_clients(in, n));
        ks_merge_set_proposals(in, n, t, sk, sums.window, distinct, hot_max,
                               &an);
        json_object_set_new(t, "merge", ks_cli_sketch_json(sk, hot_total));
        json_object_set_new(t, "warnings",
                            ks_cli_merge_warnings(in, n, t, total_inputs));
        { /* the story of the merged figures (ks_story.h), as the plugin's */
                char story[KS_STORY_MAX];
                json_object_set_new(
                    t, "summary",
                    json_string(ks_story_headline(t, story, sizeof(story))));
        }
        ks_cli_sketch_destroy(sk);
        return t;
}
