/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_report_sizing.c
 * @brief Fills the sizing input (ks_sizing_json.h) from a topic snapshot and
 *        sets rates, skew, sizing and migration into the topic's report.
 */
#include <stdlib.h>
#include <string.h>

#include "ks_report_parts.h"
#include "ks_sizing_json.h"

/** Complete seconds of traffic below which sizing is flagged as rough. */
#define KS_SIZING_MIN_SECONDS 10

/** @returns a new array of the messages of each of @p n loads. */
static uint64_t *load_messages(const ks_load_t *loads, int32_t n)
{
        uint64_t *m = loads ? malloc(((size_t)n + 1) * sizeof(*m)) : NULL;
        int32_t   i;

        for (i = 0; m && i < n; i++)
                m[i] = loads[i].messages;
        return m;
}

/**
 * @brief Sets @p in's current count and proposals: each count's loads
 *        (new arrays, kept in @p loads for the caller to free: [0] the
 *        current, [i + 1] proposal i's), the messages and estimated
 *        distinct keys each proposal moves. Nothing while the count is
 *        not known.
 */
static void counts_in(const ks_topic_snapshot_t *s,
                      const double *moved_key_fraction, double distinct,
                      ks_sizing_input_t *in, uint64_t **loads)
{
        size_t i;

        if (!s->current)
                return;
        in->current.count = s->partition_count;
        in->current.loads = loads[0] =
            load_messages(s->current, s->partition_count);
        for (i = 0; i < s->proposal_cnt; i++) {
                const ks_proposal_t  *p = &s->proposals[i];
                ks_sizing_count_in_t *c = &in->proposals[i];
                c->count                = p->partition_count;
                c->loads                = loads[i + 1] =
                    load_messages(p->partitions, p->partition_count);
                c->moved_messages      = p->moved.messages;
                c->moved_distinct_keys = moved_key_fraction[i] * distinct;
        }
        in->proposal_cnt = s->proposal_cnt;
}

/**
 * @brief Sets the sizing's results into topic object @p o (rates, skew,
 *        sizing, migration; the hot keys' rate fields, the proposals'
 *        split windows), marked as rough, and its HOT_KEY and
 *        PEAK_TO_MEAN_HIGH warnings held back for INSUFFICIENT_DATA, when
 *        they rest on fewer than KS_SIZING_MIN_SECONDS seconds.
 */
static void sizing_set(json_t *o, const ks_topic_snapshot_t *s,
                       const ks_sizing_input_t *in, ks_sizing_json_t *out,
                       ks_warn_list_t *wl, size_t first_warning)
{
        json_t *hk = json_object_get(o, "hot_keys");
        json_t *pr = json_object_get(o, "proposals");
        /* Rates from a few seconds say little: the advice stays in the
         * report, marked, and its warnings are held back. */
        int    enough = in->rates.seconds >= KS_SIZING_MIN_SECONDS;
        size_t i;

        json_object_set_new(out->sizing, "enough_data", json_boolean(enough));
        if (!enough) {
                ks_warn_remove_since(wl, KS_WARN_HOT_KEY, s->name,
                                     first_warning);
                ks_warn_remove_since(wl, KS_WARN_PEAK_TO_MEAN_HIGH, s->name,
                                     first_warning);
                ks_warn_add(wl, KS_WARN_INSUFFICIENT_DATA, s->name,
                            "rates, hot-key verdicts and sizing rest "
                            "on %llu complete seconds of traffic "
                            "(%d needed): read them as rough",
                            (unsigned long long)in->rates.seconds,
                            KS_SIZING_MIN_SECONDS);
        }
        json_object_set(o, "rates", out->rates);
        json_object_set(o, "skew", out->skew);
        json_object_set(o, "sizing", out->sizing);
        json_object_set(o, "migration", out->migration);
        for (i = 0; i < json_array_size(hk); i++)
                json_object_update(json_array_get(hk, i),
                                   json_array_get(out->hot_keys, i));
        for (i = 0; i < json_array_size(pr); i++)
                json_object_set(json_array_get(pr, i), "split_window",
                                json_array_get(out->split_windows, i));
}

/** Milliseconds in a second. */
#define KS_MS_PER_S 1000.0

/**
 * @brief Adds rates, skew, sizing and migration to topic object @p o, the
 *        rate fields to its hot keys and the split window to its proposals
 *        (ks_sizing_json.h), with their warnings.
 */
void ks_report_add_sizing(json_t *o, const ks_topic_snapshot_t *s,
                          const ks_report_opts_t *opts, double distinct,
                          const double *moved_key_fraction, ks_warn_list_t *wl,
                          size_t first_warning)
{
        ks_sizing_input_t   in;
        ks_sizing_json_t    out;
        ks_sizing_hot_in_t *hot;
        uint32_t           *ph;
        uint64_t           *pm;
        uint64_t           *loads[KEYSHIFT_PROPOSED_MAX + 1] = {NULL};
        json_t             *hk = json_object_get(o, "hot_keys");
        size_t              i;

        /* no count yet and no consumer input (a short producer, explicit
         * partitions only): no count to evaluate constraints at and no
         * input to advise from */
        if (!s->partition_count && !(opts->sizing->consumer_msgs_per_s > 0) &&
            !(opts->sizing->consumers_max > 0)) {
                json_object_set_new(o, "sizing", json_null());
                return;
        }
        hot = calloc(s->hot_cnt + 1, sizeof(*hot));
        ph  = malloc((s->sample_cnt + 1) * sizeof(*ph));
        pm  = malloc((s->sample_cnt + 1) * sizeof(*pm));
        memset(&in, 0, sizeof(in));
        in.topic  = s->name;
        in.params = opts->sizing;
        ks_rates_summarize(&s->rates, s->mono_ms, &in.rates);
        /* on the rates' clock, so that a key's rate and its partition's rate
         * over the same span divide out exactly */
        in.window_s =
            (double)(s->mono_ms - s->analysis_since_mono) / KS_MS_PER_S;
        counts_in(s, moved_key_fraction, distinct, &in, loads);
        for (i = 0; ph && pm && i < s->sample_cnt; i++) {
                ph[i] = s->sample[i].phash;
                pm[i] = s->sample[i].messages;
        }
        in.sample_phash    = ph;
        in.sample_messages = pm;
        in.sample_cnt      = ph && pm ? s->sample_cnt : 0;
        for (i = 0; hot && i < json_array_size(hk); i++)
                hot[i] = (ks_sizing_hot_in_t){s->hot[i].phash, s->hot[i].count,
                                              s->hot[i].error};
        in.hot                = hot;
        in.hot_cnt            = hot ? json_array_size(hk) : 0;
        in.brokers            = s->brokers;
        in.replication_factor = s->replication_factor;
        in.compacted          = s->compacted;
        in.queue_max_messages = opts->queue_max_messages;
        in.queue_max_bytes    = opts->queue_max_bytes;
        if (ks_sizing_json_build(&in, &out, wl) == 0) {
                sizing_set(o, s, &in, &out, wl, first_warning);
                ks_sizing_json_clear(&out);
        }
        for (i = 0; i <= KEYSHIFT_PROPOSED_MAX; i++)
                free(loads[i]);
        free(hot);
        free(ph);
        free(pm);
}
