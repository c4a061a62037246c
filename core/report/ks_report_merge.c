/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_report_merge.c
 * @brief A topic's `merge` object: the sketches that combining reports
 *        needs (docs/report-schema.md, "merge"), each packed into one
 *        base64 string (ks_pack.h), beside the few counts a reader may
 *        want without decoding (capacities, the hot-key summary's total
 *        and sampling), as a JSON value: `keyshift merge` and the tree
 *        form of a report (ks_report_topic()). The plugin's report writes
 *        the same object as text straight from the packed bytes
 *        (ks_report_bulk.c's put_merge(); a unit test compares the two).
 *
 * Why packed: as JSON arrays the three sketches were ~29 MB of a 109 MB
 * report of 1,000 topics x 2,000 Zipf messages (bench/ksb_report;
 * registers as [index, value] pairs, entries as arrays and objects of
 * decimal numbers and hex strings); packed they are what their bits need,
 * times 4/3 for base64 (docs/report-schema.md gives the figures).
 */
#include "ks_report.h"

#include "ks_pack.h"

json_t *ks_report_merge_object(const ks_report_merge_in_t *in)
{
        ks_pack_buf_t pb = {0};
        json_t       *hll, *sample, *hot, *o = NULL;

        ks_pack_hll(&pb, in->hll);
        hll = pb.failed ? NULL : ks_pack_json(pb.b, pb.n);
        ks_pack_buf_reset(&pb);
        ks_pack_key_sample(&pb, in->sample, in->sample_cnt);
        sample = pb.failed ? NULL : ks_pack_json(pb.b, pb.n);
        ks_pack_buf_reset(&pb);
        ks_pack_hot_keys(&pb, in->hot, in->hot_cnt);
        hot = pb.failed ? NULL : ks_pack_json(pb.b, pb.n);
        ks_pack_buf_free(&pb);
        if (hll && sample && hot)
                o = json_pack("{s:{s:i, s:O}, s:{s:I, s:O},"
                              " s:{s:I, s:I, s:i, s:I, s:I, s:O}}",
                              "distinct_hll", "p", KS_HLL_P, "packed", hll,
                              "key_sample", "capacity",
                              (json_int_t)in->sample_capacity, "packed", sample,
                              "hot_keys", "capacity",
                              (json_int_t)in->hot_capacity, "total",
                              (json_int_t)in->hot_total, "sampled_one_in",
                              KS_HOT_SAMPLE_ONE_IN, "passed_by",
                              (json_int_t)in->hot_passed_by, "sampled",
                              (json_int_t)in->hot_sampled, "packed", hot);
        json_decref(hll);
        json_decref(sample);
        json_decref(hot);
        return o;
}

json_t *ks_report_merge_json(const ks_topic_snapshot_t *s)
{
        ks_report_merge_in_t in = {
            .hll             = &s->hll,
            .sample          = s->sample,
            .sample_cnt      = s->sample_cnt,
            .sample_capacity = s->sample_capacity,
            .hot             = s->hot,
            .hot_cnt         = s->hot_cnt,
            .hot_capacity    = s->topk_capacity,
            .hot_total       = s->topk_total,
            .hot_passed_by   = s->c.hot_passed_by,
            .hot_sampled     = s->c.hot_sampled,
        };

        return ks_report_merge_object(&in);
}
