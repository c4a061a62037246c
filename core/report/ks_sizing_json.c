/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_sizing_json.c
 * @brief The `rates`, `skew`, `sizing` and `migration` report objects of
 *        one topic (docs/report-schema.md), built from ks_sizing_input_t
 *        with the formulas of ks_sizing.c.
 *
 * Conventions: an unknown figure is JSON null, never 0; counts as object
 * keys are decimal strings ("12"), as elsewhere in the report; rates are
 * per second. Which time window each figure covers:
 *  - rates, hot-key rates and shares of the topic: since the topic was
 *    first seen (ks_rates elapsed_s), with a hot key's guaranteed count
 *    (count - error: Space-Saving never undercounts), so a verdict never
 *    rests on an overestimate;
 *  - partition loads and moved messages: since analysis_since (window_s).
 */
#include "ks_sizing_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KS_ORDER_RAISE                                                         \
        "per-key order breaks for keys that move: at the switch, and during "  \
        "the split window while producers disagree on the count"
#define KS_ORDER_DRAIN                                                         \
        "kept: producers pause until consumers have drained the old topic, "   \
        "then all switch to the new one"
#define KS_ORDER_SHARD                                                         \
        "kept for keys that stay; a routed key's order holds only within "     \
        "each salted sub-key key#0..key#n-1, and its history stays in the "    \
        "old topic"
#define KS_ORDER_SALT                                                          \
        "per-key order holds only within each sub-key key#0..key#n-1; a "      \
        "consumer needing the key's order merges them by a sequence number"

/** @returns v as JSON, or null when it is not finite or is negative (the
 *           ks_sizing convention for "unknown"). */
static json_t *known(double v)
{
        return isfinite(v) && v >= 0 ? json_real(v) : json_null();
}

static void key_of(int64_t count, char *buf, size_t size)
{
        snprintf(buf, size, "%lld", (long long)count);
}

static json_t *rates_json(const ks_rates_summary_t *r)
{
        return json_pack(
            "{s:f, s:f, s:{s:f, s:f, s:f}, s:I, s:f, s:f, s:I, s:I, s:I, s:o}",
            "msgs_per_s", r->msgs_per_s, "bytes_per_s", r->bytes_per_s,
            "interval", "seconds", r->interval_s, "msgs_per_s",
            r->interval_msgs_per_s, "bytes_per_s", r->interval_bytes_per_s,
            "peak_msgs_per_s", (json_int_t)r->peak_msgs_per_s, "peak_quantile",
            KS_RATES_PEAK_PPM / 1e6, "mean_msgs_per_s", r->mean_msgs_per_s,
            "peak_bytes_per_s", (json_int_t)r->peak_bytes_per_s,
            "max_msgs_per_s", (json_int_t)r->max_msgs_per_s, "seconds",
            (json_int_t)r->seconds, "peak_to_mean",
            r->seconds && r->mean_msgs_per_s > 0 ? json_real(r->peak_to_mean)
                                                 : json_null());
}

/** @returns the messages a hot key certainly had: count - error. */
static uint64_t guaranteed(const ks_sizing_hot_in_t *h)
{
        return h->count > h->error ? h->count - h->error : 0;
}

/* ------------------------------------------------------------------ */
/* skew                                                                 */
/* ------------------------------------------------------------------ */

/**
 * Spreads computed while one topic's `skew` is built. The key sample's
 * spread at a count is asked for up to three times per proposed count
 * (the count, and as a neighbouring power of two of each other count:
 * 1024 and 2048 for 1200, 1500 and 2000), and each costs a pass over the
 * key sample and a selection: computed once per count here. The scratch
 * buffer is reused from one spread to the next.
 */
typedef struct spread_memo {
        struct {
                int64_t            count;
                ks_sizing_spread_t s;
        } e[3 * (KEYSHIFT_PROPOSED_MAX + 1)];
        size_t    n;
        uint64_t *buf; /**< scratch, [cap] */
        size_t    cap;
} spread_memo_t;

/** @returns scratch room for @p n values, or NULL on ENOMEM. */
static uint64_t *memo_room(spread_memo_t *m, size_t n)
{
        if (n > m->cap) {
                uint64_t *b = realloc(m->buf, n * sizeof(*b));
                if (!b)
                        return NULL;
                m->buf = b;
                m->cap = n;
        }
        return m->buf;
}

/** @returns a spread as JSON. */
static json_t *spread_to_json(const ks_sizing_spread_t *s, int64_t count,
                              double limit, const char *source)
{
        return json_pack("{s:o, s:b, s:f, s:I, s:f, s:I, s:b, s:s}",
                         "max_over_median", known(s->max_over_median),
                         "within_2_5x_median", s->within_limit, "limit", limit,
                         "max", (json_int_t)s->max, "median", s->median, "min",
                         (json_int_t)s->min, "power_of_two",
                         ks_sizing_is_pow2(count), "source", source);
}

/** @returns the spread of @p loads[count] as JSON (loads are copied). */
static json_t *spread_json(spread_memo_t *m, const uint64_t *loads,
                           int64_t count, double limit, const char *source)
{
        uint64_t          *v = memo_room(m, (size_t)count);
        ks_sizing_spread_t s;

        if (!v)
                return NULL;
        memcpy(v, loads, (size_t)count * sizeof(*v));
        ks_sizing_spread(v, (size_t)count, limit, &s);
        return spread_to_json(&s, count, limit, source);
}

/** @returns the spread at @p count estimated from the key sample. */
static json_t *sample_spread_json(spread_memo_t *m, const ks_sizing_input_t *in,
                                  int64_t count)
{
        double    limit = in->params->partition_skew_max;
        uint64_t *loads;
        size_t    i;

        if (!in->sample_cnt || count < 1 || count > KEYSHIFT_PARTITIONS_MAX * 2)
                return json_null();
        for (i = 0; i < m->n; i++)
                if (m->e[i].count == count)
                        return spread_to_json(&m->e[i].s, count, limit,
                                              "key_sample");
        if (!(loads = memo_room(m, (size_t)count)))
                return NULL;
        ks_sizing_sample_loads(in->sample_phash, in->sample_messages,
                               in->sample_cnt, (int32_t)count, loads);
        if (m->n == sizeof(m->e) / sizeof(m->e[0])) /* cannot happen */
                m->n--;
        m->e[m->n].count = count;
        ks_sizing_spread(loads, (size_t)count, limit, &m->e[m->n].s);
        return spread_to_json(&m->e[m->n++].s, count, limit, "key_sample");
}

/** @brief Adds skew.partitions["<count>"]: the exact spread when loads
 *         are known, else the key sample's; for a count that is not a
 *         power of two, the key sample's spread at it and at the powers of
 *         two around it, side by side. */
static void partition_spread(spread_memo_t *m, json_t *parts,
                             const ks_sizing_input_t    *in,
                             const ks_sizing_count_in_t *c)
{
        char    k[24];
        json_t *o;

        if (c->count < 1)
                return;
        key_of(c->count, k, sizeof(k));
        if (json_object_get(parts, k))
                return;
        o = c->loads ? spread_json(m, c->loads, c->count,
                                   in->params->partition_skew_max, "exact")
                     : sample_spread_json(m, in, c->count);
        if (!o)
                return;
        if (json_is_object(o) && !ks_sizing_is_pow2(c->count) &&
            in->sample_cnt) {
                int64_t hi = ks_sizing_next_pow2(c->count);
                json_t *cmp =
                    json_pack("{s:o}", k, sample_spread_json(m, in, c->count));
                char kl[24], kh[24];
                key_of(hi / 2, kl, sizeof(kl));
                key_of(hi, kh, sizeof(kh));
                json_object_set_new(cmp, kl, sample_spread_json(m, in, hi / 2));
                json_object_set_new(cmp, kh, sample_spread_json(m, in, hi));
                json_object_set_new(o, "compare_power_of_two", cmp);
        }
        json_object_set_new(parts, k, o);
}

static json_t *skew_json(const ks_sizing_input_t *in, double *key_skew)
{
        uint64_t     *counts  = NULL;
        uint64_t      busiest = 0;
        json_t       *parts   = json_object();
        size_t        i;
        spread_memo_t memo;

        memo.n    = 0;
        memo.buf  = NULL;
        memo.cap  = 0;
        *key_skew = 0;
        if (in->hot_cnt)
                busiest = guaranteed(&in->hot[0]);
        if (in->sample_cnt) {
                counts = malloc(in->sample_cnt * sizeof(*counts));
                if (!counts) {
                        json_decref(parts);
                        return NULL;
                }
                memcpy(counts, in->sample_messages,
                       in->sample_cnt * sizeof(*counts));
                *key_skew = ks_sizing_key_skew(busiest, counts, in->sample_cnt);
                free(counts);
        }
        partition_spread(&memo, parts, in, &in->current);
        for (i = 0; i < in->proposal_cnt; i++)
                partition_spread(&memo, parts, in, &in->proposals[i]);
        free(memo.buf);
        return json_pack("{s:o, s:I, s:o}", "key_skew",
                         in->sample_cnt ? known(*key_skew) : json_null(),
                         "key_sample_size", (json_int_t)in->sample_cnt,
                         "partitions", parts);
}

/* ------------------------------------------------------------------ */
/* hot keys                                                             */
/* ------------------------------------------------------------------ */

/** @returns the rate of the partition @p phash falls in under @p c, or -1
 *           when its loads are unknown. */
static double partition_rate(const ks_sizing_input_t    *in,
                             const ks_sizing_count_in_t *c, uint32_t phash)
{
        if (c->count < 1 || !c->loads || !(in->window_s > 0))
                return -1;
        return (double)c->loads[phash % (uint32_t)c->count] / in->window_s;
}

/** @returns the largest partition count under consideration. */
static int64_t largest_count(const ks_sizing_input_t *in)
{
        int64_t n = in->current.count;
        size_t  i;

        for (i = 0; i < in->proposal_cnt; i++)
                if (in->proposals[i].count > n)
                        n = in->proposals[i].count;
        return n;
}

static json_t *hot_keys_json(const ks_sizing_input_t *in, double target,
                             ks_sizing_shard_t *shard, ks_warn_list_t *wl)
{
        json_t                 *arr     = json_array();
        double                  elapsed = in->rates.elapsed_s;
        double                  topic   = in->rates.msgs_per_s;
        size_t                  i, j, unfixable = 0;
        ks_sizing_hot_verdict_t worst      = {0, 0, 0, 0};
        double                  worst_rate = 0;

        for (i = 0; arr && i < in->hot_cnt; i++) {
                const ks_sizing_hot_in_t *h = &in->hot[i];
                ks_sizing_hot_verdict_t   v;
                double                    rate =
                    elapsed > 0 ? (double)guaranteed(h) / elapsed : 0.0;
                double  pr   = partition_rate(in, &in->current, h->phash);
                json_t *prop = json_object(), *o;

                ks_sizing_hot_key(rate, topic, pr, target, &v);
                for (j = 0; prop && j < in->proposal_cnt; j++) {
                        const ks_sizing_count_in_t *c = &in->proposals[j];
                        double pp = partition_rate(in, c, h->phash);
                        char   k[24];
                        ks_sizing_hot_verdict_t vp;
                        key_of(c->count, k, sizeof(k));
                        ks_sizing_hot_key(rate, topic, pp, target, &vp);
                        json_object_set_new(
                            prop, k,
                            pp > 0 ? json_real(vp.share_of_partition)
                                   : json_null());
                }
                o = json_pack("{s:f, s:o, s:o, s:b, s:I}", "msgs_per_s", rate,
                              "share_of_partition",
                              pr > 0 ? json_real(v.share_of_partition)
                                     : json_null(),
                              "share_of_partition_proposed", prop,
                              "fixable_by_partitions", v.fixable_by_partitions,
                              "salt_buckets", (json_int_t)v.salt_buckets);
                if (o && !v.fixable_by_partitions)
                        json_object_set_new(o, "ordering_given_up",
                                            json_string(KS_ORDER_SALT));
                json_array_append_new(arr, o ? o : json_null());
                ks_sizing_shard_add(shard, &v, rate, topic, h->count);
                if (!v.fixable_by_partitions && unfixable++ == 0) {
                        worst      = v;
                        worst_rate = rate;
                }
        }
        if (wl && unfixable)
                ks_warn_add(wl, KS_WARN_HOT_KEY, in->topic,
                            "%zu hot key(s) each carry more than one "
                            "partition's target rate (%.1f msgs/s): more "
                            "partitions cannot spread them; the busiest, %.1f "
                            "msgs/s (%.1f%% of the topic), needs %llu salt "
                            "buckets (key#0..key#%llu), and per-key order then "
                            "holds only within each",
                            unfixable, target, worst_rate,
                            100.0 * worst.share_of_topic,
                            (unsigned long long)worst.salt_buckets,
                            (unsigned long long)worst.salt_buckets - 1);
        return arr;
}

/* ------------------------------------------------------------------ */
/* sizing                                                               */
/* ------------------------------------------------------------------ */

static json_t *constraints_json(const ks_sizing_constraints_t *cs)
{
        json_t *o        = json_object();
        json_t *violated = json_array();
        int     i;

        for (i = 0; o && i < KS_CONSTRAINT__CNT; i++) {
                const ks_sizing_constraint_t *c = &cs->c[i];
                const char *name                = ks_sizing_constraint_name(i);
                if (!c->known) {
                        json_object_set_new(o, name, json_null());
                        continue;
                }
                json_object_set_new(
                    o, name,
                    json_pack("{s:f, s:f, s:s, s:o, s:b}", "value", c->value,
                              "limit", c->limit, "bound",
                              c->lower_bound ? "at_least" : "at_most",
                              "utilisation", known(c->utilisation), "ok",
                              c->ok));
                if (!c->ok)
                        json_array_append_new(violated, json_string(name));
        }
        json_object_set_new(o, "satisfied", json_boolean(cs->satisfied));
        json_object_set_new(
            o, "binding",
            cs->binding >= 0
                ? json_string(ks_sizing_constraint_name(cs->binding))
                : json_null());
        json_object_set_new(o, "violated", violated);
        json_object_set_new(o, "fewest_brokers",
                            cs->fewest_brokers
                                ? json_integer(cs->fewest_brokers)
                                : json_null());
        json_object_set_new(o, "brokers_suffice",
                            json_boolean(cs->brokers_suffice));
        return o;
}

/** @brief Adds constraints and rebalance figures at @p count (once). */
static void at_count(const ks_sizing_input_t *in, int64_t count, double T,
                     json_t *constraints, json_t *rebalance,
                     int64_t *stall_count, double *stall_s)
{
        const ks_sizing_params_t *p = in->params;
        ks_sizing_constraints_t   cs;
        ks_sizing_rebalance_t     rb;
        char                      k[24];

        if (count < 1)
                return;
        key_of(count, k, sizeof(k));
        if (json_object_get(constraints, k))
                return;
        ks_sizing_constraints(p, count, in->brokers, in->replication_factor, T,
                              &cs);
        json_object_set_new(constraints, k, constraints_json(&cs));
        ks_sizing_rebalance(p, count, &rb);
        json_object_set_new(rebalance, k,
                            json_pack("{s:f, s:f}", "per_rebalance_s",
                                      rb.per_rebalance_s, "per_day_s",
                                      rb.per_day_s));
        if (rb.high && (!*stall_count || count < *stall_count)) {
                *stall_count = count;
                *stall_s     = rb.per_rebalance_s;
        }
}

/**
 * @returns the floors at KS_SIZING_ILLUSTRATION_RATES per consumer, each
 *          an assumption (issue 28): the report's `sizing.illustration`
 *          when neither consumer input is given (no floor before a
 *          complete second of traffic gives a peak).
 */
static json_t *illustration_json(const ks_sizing_input_t *in, double key_skew)
{
        static const double rates[KS_SIZING_ILLUSTRATION_CNT] =
            KS_SIZING_ILLUSTRATION_RATES;
        ks_sizing_params_t assumed = *in->params;
        json_t            *floors  = json_array();
        size_t             i;

        assumed.consumers_max = 0;
        /* no complete second measured: no peak to illustrate from */
        for (i = 0;
             floors && in->rates.seconds && i < KS_SIZING_ILLUSTRATION_CNT;
             i++) {
                ks_sizing_floor_t fl;
                assumed.consumer_msgs_per_s = rates[i];
                ks_sizing_partition_floor(
                    &assumed, (double)in->rates.peak_msgs_per_s, key_skew, &fl);
                json_array_append_new(
                    floors,
                    json_pack("{s:f, s:I, s:I}", "assumed_per_consumer_msgs_s",
                              rates[i], "throughput_partitions",
                              (json_int_t)fl.throughput_partitions,
                              "partition_floor",
                              (json_int_t)fl.partition_floor));
        }
        return json_pack("{s:s, s:o}", "assumption",
                         "per-consumer rates assumed, not measured nor "
                         "given: nothing is recommended from them",
                         "floors", floors);
}

/** @returns @p v as JSON, or null when @p has is 0. */
static json_t *int_if(int has, int64_t v)
{
        return has ? json_integer((json_int_t)v) : json_null();
}

/**
 * @returns the sizing's `basis`: the measured rates and skew, the inputs
 *          given or defaulted, and the floor's parts (@p fl; @p has: a
 *          recommendation rests on a given input). A new reference.
 */
static json_t *basis_json(const ks_sizing_input_t *in, double key_skew,
                          double target, const ks_sizing_floor_t *fl, int has)
{
        const ks_sizing_params_t *p = in->params;
        const ks_rates_summary_t *r = &in->rates;

        return json_pack(
            "{s:I, s:I, s:f, s:I, s:o, s:o, s:o, s:f, s:o, s:o, s:o, s:f,"
            " s:f, s:f, s:o, s:o, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}",
            "peak_msgs_s", (json_int_t)r->peak_msgs_per_s, "peak_bytes_s",
            (json_int_t)r->peak_bytes_per_s, "peak_quantile",
            KS_RATES_PEAK_PPM / 1e6, "seconds_measured", (json_int_t)r->seconds,
            "per_consumer_msgs_s",
            p->consumer_msgs_per_s > 0 ? json_real(p->consumer_msgs_per_s)
                                       : json_null(),
            "max_consumers_planned",
            p->consumers_max > 0 ? json_integer((json_int_t)p->consumers_max)
                                 : json_null(),
            "measured_key_skew", in->sample_cnt ? known(key_skew) : json_null(),
            "skew_factor", fl->skew_factor, "throughput_partitions",
            int_if(p->consumer_msgs_per_s > 0, fl->throughput_partitions),
            "base_partitions", int_if(has, fl->base), "base_source",
            has ? json_string(ks_sizing_base_name(fl->base_source))
                : json_null(),
            "rebalance_s", p->rebalance_ms_per_partition / 1000.0,
            "rebalances_per_day", p->rebalances_per_day,
            "partition_target_msgs_s", target, "brokers",
            in->brokers > 0 ? json_integer(in->brokers) : json_null(),
            "replication_factor",
            in->replication_factor > 0 ? json_integer(in->replication_factor)
                                       : json_null(),
            "throughput_bytes_s", (double)r->peak_bytes_per_s,
            "producer_throughput_mb_s", p->producer_throughput_mb_per_s,
            "consumer_throughput_mb_s", p->consumer_throughput_mb_per_s,
            "file_handles_max", p->broker_file_handles_max,
            "replication_latency_ms_per_partition",
            p->replication_latency_ms_per_partition,
            "replication_latency_max_ms", p->replication_latency_max_ms,
            "unavailability_ms_per_partition",
            p->unavailability_ms_per_partition, "unavailability_max_ms",
            p->unavailability_max_ms);
}

/** @returns the sizing's `needs`: the names of the consumer inputs not
 *           given, without which no count is recommended. */
static json_t *needs_json(const ks_sizing_params_t *p)
{
        json_t     *needs = json_array();
        const char *missing[2];
        size_t      i, n_missing = ks_sizing_inputs_missing(p, missing);

        for (i = 0; needs && i < n_missing; i++)
                json_array_append_new(needs, json_string(missing[i]));
        return needs;
}

static json_t *sizing_json(const ks_sizing_input_t *in, double key_skew,
                           double target, ks_warn_list_t *wl)
{
        const ks_sizing_params_t *p = in->params;
        const ks_rates_summary_t *r = &in->rates;
        double                    T = (double)r->peak_bytes_per_s;
        ks_sizing_floor_t         fl;
        ks_sizing_rebalance_t     rb;
        json_t *constraints = json_object(), *by_count = json_object(), *basis;
        json_t *needs;
        int64_t stall_count = 0, fewest = 0;
        double  stall_s = 0;
        size_t  i;
        int     has; /* a recommendation: it rests on a given input */

        ks_sizing_partition_floor(p, (double)r->peak_msgs_per_s, key_skew, &fl);
        has   = fl.recommended > 0;
        needs = needs_json(p);
        ks_sizing_rebalance(p, fl.recommended, &rb);
        at_count(in, in->current.count, T, constraints, by_count, &stall_count,
                 &stall_s);
        for (i = 0; i < in->proposal_cnt; i++)
                at_count(in, in->proposals[i].count, T, constraints, by_count,
                         &stall_count, &stall_s);
        at_count(in, fl.recommended, T, constraints, by_count, &stall_count,
                 &stall_s); /* nothing when there is no advice (count 0) */
        if (has)
                fewest = ks_sizing_fewest_brokers(p, fl.recommended,
                                                  in->replication_factor);
        basis = basis_json(in, key_skew, target, &fl, has);
        if (wl && stall_count)
                ks_warn_add(wl, KS_WARN_REBALANCE_STALL_HIGH, in->topic,
                            "at %lld partitions each consumer-group rebalance "
                            "stalls consumption about %.1f s (%.1f ms per "
                            "partition), above %.0f s",
                            (long long)stall_count, stall_s,
                            p->rebalance_ms_per_partition,
                            p->rebalance_stall_warn_s);
        return json_pack(
            "{s:o, s:o, s:o, s:o, s:o, s:o, s:{s:o, s:o, s:o, s:o}, s:o, s:o}",
            "partition_floor", int_if(has, fl.partition_floor), "recommended",
            int_if(has, fl.recommended), "needs", needs, "illustration",
            has ? json_null() : illustration_json(in, key_skew),
            "already_sufficient",
            has && in->current.count > 0
                ? json_boolean(in->current.count >= fl.partition_floor)
                : json_null(),
            "basis", basis, "rebalance", "partition_count",
            int_if(has, fl.recommended), "per_rebalance_s",
            has ? json_real(rb.per_rebalance_s) : json_null(), "per_day_s",
            has ? json_real(rb.per_day_s) : json_null(), "by_count", by_count,
            "constraints", constraints, "fewest_brokers",
            fewest ? json_integer(fewest) : json_null());
}

/* ------------------------------------------------------------------ */
/* migration and split windows                                          */
/* ------------------------------------------------------------------ */

static void split_window(const ks_sizing_input_t    *in,
                         const ks_sizing_count_in_t *c,
                         ks_sizing_split_window_t *sw, double *moving_rate)
{
        *moving_rate =
            in->window_s > 0 ? (double)c->moved_messages / in->window_s : 0.0;
        ks_sizing_split_window(in->params, *moving_rate, sw);
}

static json_t *split_windows_json(const ks_sizing_input_t *in)
{
        json_t *arr = json_array();
        size_t  i;

        for (i = 0; arr && i < in->proposal_cnt; i++) {
                ks_sizing_split_window_t sw;
                double                   rate;
                split_window(in, &in->proposals[i], &sw, &rate);
                json_array_append_new(
                    arr, json_pack("{s:f, s:f, s:f}", "seconds", sw.seconds,
                                   "messages_of_moving_keys",
                                   sw.messages_of_moving_keys,
                                   "moving_msgs_per_s", rate));
        }
        return arr;
}

static json_t *migration_json(const ks_sizing_input_t *in,
                              const ks_sizing_shard_t *shard)
{
        const ks_sizing_params_t    *p = in->params;
        const ks_sizing_count_in_t  *t;
        ks_sizing_split_window_t     sw;
        ks_sizing_drain_and_switch_t ds;
        double                       rate, capacity = 0;

        if (!in->proposal_cnt)
                return json_null();
        t = &in->proposals[in->migration_target < in->proposal_cnt
                               ? in->migration_target
                               : 0];
        split_window(in, t, &sw, &rate);
        if (p->consumers_max > 0 && p->consumer_msgs_per_s > 0)
                capacity = p->consumers_max * p->consumer_msgs_per_s;
        ks_sizing_drain_and_switch(
            p, t->count, (double)in->rates.peak_msgs_per_s,
            (double)in->rates.peak_bytes_per_s, capacity,
            in->queue_max_messages, in->queue_max_bytes, &ds);
        return json_pack(
            "{s:i,"
            " s:{s:i, s:b, s:I, s:f, s:f, s:f, s:i, s:s, s:o},"
            " s:{s:i, s:b, s:i, s:o, s:o, s:f, s:f, s:o, s:o, s:o, s:s},"
            " s:{s:b, s:i, s:b, s:I, s:f, s:f, s:I, s:I, s:s}}",
            "target_partition_count", (int)t->count, "raise_in_place",
            "partition_count", (int)t->count, "new_topic", 0, "messages_split",
            (json_int_t)t->moved_messages, "distinct_keys_split",
            t->moved_distinct_keys, "split_window_s", sw.seconds,
            "messages_in_split_window", sw.messages_of_moving_keys, "pause_s",
            0, "ordering", KS_ORDER_RAISE, "compacted_stale_values",
            in->compacted < 0 ? json_null() : json_boolean(in->compacted),
            "drain_and_switch", "partition_count", (int)t->count, "new_topic",
            1, "messages_split", 0, "pause_s", known(ds.pause_s), "drain_s",
            known(ds.drain_s), "held_msgs_per_s", ds.held_msgs_per_s,
            "held_bytes_per_s", ds.held_bytes_per_s, "messages_held",
            known(ds.messages_held), "bytes_held", known(ds.bytes_held),
            "producer_queue_s", known(ds.producer_queue_s), "ordering",
            KS_ORDER_DRAIN, "shard", "applicable", shard->keys_routed > 0,
            "partition_count", (int)in->current.count, "new_topic", 1,
            "keys_routed", (json_int_t)shard->keys_routed, "msgs_per_s_routed",
            shard->msgs_per_s_routed, "share_of_topic", shard->share_of_topic,
            "shard_partitions", (json_int_t)shard->shard_partitions,
            "messages_split", (json_int_t)shard->messages_split, "ordering",
            KS_ORDER_SHARD);
}

/* ------------------------------------------------------------------ */

int ks_sizing_json_advises(const json_t *sizing)
{
        const json_t *src =
            json_object_get(json_object_get(sizing, "basis"), "base_source");

        if (!json_is_integer(json_object_get(sizing, "recommended")) ||
            json_integer_value(json_object_get(sizing, "recommended")) < 1)
                return 0;
        return !(json_is_string(src) &&
                 !strcmp(json_string_value(src), "current_count"));
}

void ks_sizing_json_clear(ks_sizing_json_t *out)
{
        json_decref(out->rates);
        json_decref(out->skew);
        json_decref(out->sizing);
        json_decref(out->migration);
        json_decref(out->hot_keys);
        json_decref(out->split_windows);
        memset(out, 0, sizeof(*out));
}

int ks_sizing_json_build(const ks_sizing_input_t *in, ks_sizing_json_t *out,
                         ks_warn_list_t *wl)
{
        const ks_rates_summary_t *r = &in->rates;
        ks_sizing_shard_t         shard;
        double                    key_skew, target;
        size_t                    i;
        int                       moves = 0;

        memset(out, 0, sizeof(*out));
        memset(&shard, 0, sizeof(shard));
        target =
            ks_sizing_target_rate(in->params, r->msgs_per_s, largest_count(in));
        out->rates         = rates_json(r);
        out->skew          = skew_json(in, &key_skew);
        out->hot_keys      = hot_keys_json(in, target, &shard, wl);
        out->sizing        = sizing_json(in, key_skew, target, wl);
        out->migration     = migration_json(in, &shard);
        out->split_windows = split_windows_json(in);
        if (!out->rates || !out->skew || !out->hot_keys || !out->sizing ||
            !out->migration || !out->split_windows) {
                ks_sizing_json_clear(out);
                return -1;
        }
        if (wl && r->seconds && r->peak_to_mean > in->params->peak_to_mean_warn)
                ks_warn_add(wl, KS_WARN_PEAK_TO_MEAN_HIGH, in->topic,
                            "the peak, %llu msgs/s (0.999 quantile of %llu "
                            "seconds), is %.1fx the mean of %.1f msgs/s: size "
                            "partitions and consumers on the peak",
                            (unsigned long long)r->peak_msgs_per_s,
                            (unsigned long long)r->seconds, r->peak_to_mean,
                            r->mean_msgs_per_s);
        for (i = 0; i < in->proposal_cnt; i++)
                moves |= in->proposals[i].moved_messages > 0 ||
                         in->proposals[i].moved_distinct_keys > 0;
        if (wl && in->compacted == 1 && moves)
                ks_warn_add(wl, KS_WARN_COMPACTED_TOPIC, in->topic,
                            "the topic is compacted: compaction works per "
                            "partition, so a key that moves keeps its last "
                            "value in the old partition forever next to the "
                            "new partition's, and a reader rebuilding state "
                            "sees two latest values; a new topic with the new "
                            "count is the clean path");
        return 0;
}
