/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_report_parts.h
 * @brief The parts of a topic's report object, built in files of their
 *        own (internal to the core): keys and other clients
 *        (ks_report_keys.c), sizing (ks_report_sizing.c), warnings
 *        (ks_report_warnings.c). The small values they all write (times,
 *        keys, shares) are ks_report_fmt.h's.
 *
 * @locality whatever thread builds the report; snapshots only.
 */
#ifndef KS_REPORT_PARTS_H
#define KS_REPORT_PARTS_H

#include <stdint.h>

#include <jansson.h>

#include "ks_analysis.h"
#include "ks_clients.h"
#include "ks_report.h"

/** What one walk of a topic's key sample yields for the report: each
 *  sampled key's partition computed once under the current count and once
 *  under each proposed count and other client's hash, and reused. */
typedef struct ks_report_sample_pass {
        /** sampled distinct keys whose partition differs between the
         *  current count and proposal i's */
        size_t moved[KEYSHIFT_PROPOSED_MAX];
        /** the sampled keys' messages, and the sum of their squares per
         *  key (Kish's effective number of keys, ks_analysis.h) */
        uint64_t total;
        double   total_sq;
        /** of them, those client model m places in another partition (or
         *  does not place by hash), and how many keys */
        uint64_t differ[KS_CLIENT__CNT];
        size_t   keys_differ[KS_CLIENT__CNT];
} ks_report_sample_pass_t;

/** @brief *out := one walk of @p s's key sample (all zero while the
 *         current count is unknown: no remainder by 0). */
void ks_report_sample_pass(const ks_topic_snapshot_t *s,
                           ks_report_sample_pass_t   *out);
/** @brief fraction[i] := the fraction of sampled distinct keys whose
 *         partition differs between the current count and proposal i's
 *         (for each of s->proposal_cnt), from @p sp when not NULL, else
 *         from a walk of its own. */
void ks_report_moved_key_fractions(const ks_topic_snapshot_t     *s,
                                   const ks_report_sample_pass_t *sp,
                                   double                        *fraction);

/** A proposed count as an object key: "%d". */
typedef char ks_report_count_name_t[16];
/** @brief names[j] := proposal j's count as an object key (for each of
 *         s->proposal_cnt): formatted once per topic, not once per key. */
void ks_report_count_names(const ks_topic_snapshot_t *s,
                           ks_report_count_name_t    *names);
/** @returns the partition of @p phash under the current count, or -1
 *           when it is not known: no count yet, or no modelled
 *           partitioner explains the deliveries (learned.unexplained). */
int32_t ks_report_partition_now(const ks_topic_snapshot_t *s, uint32_t phash);
/** @returns {"<count>": partition} of @p phash at each proposed count,
 *           @p names from ks_report_count_names() ({} when no modelled
 *           partitioner explains the deliveries). */
json_t *ks_report_proposed_partitions(const ks_topic_snapshot_t    *s,
                                      const ks_report_count_name_t *names,
                                      uint32_t                      phash);

/** @brief *a := what @p s's analysis covered, its sampling included
 *         (ks_analysis.h), reported after @p uptime_s (< 0: unknown). */
void ks_report_analysis(const ks_topic_snapshot_t *s, double uptime_s,
                        ks_analysis_t *a);

/* ks_report_keys.c */
json_t *ks_report_key_encodings(const ks_topic_snapshot_t *s);
json_t *ks_report_mixed_keys(const ks_topic_snapshot_t *s, int max);
/** @param sp from ks_report_sample_pass() */
json_t *ks_report_other_clients(const ks_topic_snapshot_t     *s,
                                const ks_report_sample_pass_t *sp,
                                double                        *java_fraction);
void    ks_report_client_warnings(const ks_topic_snapshot_t *s, double java_f,
                                  ks_warn_list_t *wl);

/* ks_report_sizing.c */
/** @param moved_key_fraction per proposal, from
 *         ks_report_moved_key_fractions()
 *  @param first_warning wl->cnt when the topic's report began: its own
 *         warnings are from there on */
void ks_report_add_sizing(json_t *o, const ks_topic_snapshot_t *s,
                          const ks_report_opts_t *opts, double distinct,
                          const double *moved_key_fraction, ks_warn_list_t *wl,
                          size_t first_warning);

/* ks_report_warnings.c */
/** @returns whether topic @p s rehearses another count than its own:
 *           keyshift.partitions.current differs from the cluster's. */
int ks_report_rehearsal(const ks_topic_snapshot_t *s);
/** @brief Adds topic @p s's warnings to @p wl; @p why (or NULL) says why
 *         its partition count may still be unknown (CURRENT_COUNT_UNKNOWN). */
void ks_report_topic_warnings(const ks_topic_snapshot_t *s, const char *why,
                              ks_warn_list_t *wl);

#endif /* KS_REPORT_PARTS_H */
