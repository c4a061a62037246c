/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli_merge.h
 * @brief `keyshift merge`: the parts of combining reports of many producer
 *        processes of the same topics into one keyshift.report.v2.
 *
 *  - ks_cli_merge_sketch.c: a topic's sketches (HyperLogLog, bottom-k key
 *    sample, Space-Saving hot keys) merged, and the figures recomputed
 *    from them (distinct keys, moved-key fractions, hot keys);
 *  - ks_cli_merge_topic.c: one topic: refuse incompatible inputs, sum the
 *    exact counters, recompute fractions and warnings;
 *  - ks_cli_merge_reports.c: reports already loaded merged, their topics
 *    on several threads (keyshift fleet's);
 *  - ks_cli_merge.c: the command, the top level and the output.
 */
#ifndef KS_CLI_MERGE_H
#define KS_CLI_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "ks_analysis.h"
#include "ks_cli_report.h"

/**
 * @brief Merges the reports @p r of @p n (>= 1) distinct producers into
 *        one report (`keyshift fleet`'s; `keyshift merge` streams its
 *        files to the same report), the topics shared out between up to
 *        4 threads (one a CPU, the caller's among them) and put together
 *        in the order first seen.
 * @param hot_max hot keys listed per topic (0: the most any input lists).
 * @returns a new report, or NULL with @p err set (two inputs of one
 *          producer, incompatible topics, a sketch that does not read:
 *          the first failing topic's in that order).
 * @locality the caller's thread, which must not change @p r meanwhile
 *           (the merge threads only read it; what the report takes of
 *           the inputs it holds by reference).
 */
json_t *ks_cli_merge_reports(const ks_cli_report_t *r, size_t n, size_t hot_max,
                             char *err, size_t errsz);

/**
 * @brief The merged report's top level from the inputs' (@p r, their
 *        `topics` not read): schema, generated_at, started_at, uptime_s,
 *        final and producer, in that order (ks_cli_merge_head.c); the
 *        inputs' producer-level warnings, prefixed with their file, in
 *        *@p warnings (a new array).
 * @returns a new object, or NULL with @p err set when two inputs hold a
 *          report of one producer (its reports are cumulative).
 */
json_t *ks_cli_merge_head(const ks_cli_report_t *r, size_t n, json_t **warnings,
                          char *err, size_t errsz);

/**
 * @brief `keyshift merge`'s merge of the report files @p paths (@p n >= 1),
 *        read one topic at a time (ks_cli_merge_src_t), written to @p out
 *        ("-": standard output, indented) as each topic is merged: the
 *        same report, byte for byte, as ks_cli_merge_reports() of the
 *        loaded files written by ks_report_write_atomic() (a file) or
 *        json_dumpf() with JSON_INDENT(1) (standard output), in memory of
 *        about one topic of each input.
 * @returns 0, or -1 with @p err set (the output file then not written,
 *          standard output left empty); *@p topics the topics merged. On
 *          a failure every input is first read and checked in order, so
 *          the error given is the first input's that does not read, as
 *          when inputs were loaded whole, else the merge's own.
 */
int ks_cli_merge_files(const char *const *paths, size_t n, size_t hot_max,
                       const char *out, size_t *topics, char *err,
                       size_t errsz);

/* ---- an input read topic by topic (ks_cli_merge_read.c) ---------- */

/** Where one topic's text sits in its file. */
typedef struct ks_cli_merge_slice {
        char  *name; /**< owned */
        size_t off, len;
} ks_cli_merge_slice_t;

/** A report file whose topics are read one at a time. */
typedef struct ks_cli_merge_src {
        const char           *path;   /**< borrowed; "-" is standard input */
        int                   fd;     /**< read again per topic; -1: text */
        char                 *text;   /**< standard input's text, else NULL */
        size_t                size;   /**< of text */
        json_t               *head;   /**< the report but its topics ({}) */
        json_t               *index;  /**< topic name -> number in topics */
        ks_cli_merge_slice_t *topics; /**< in the file's order */
        size_t                ntopics;
} ks_cli_merge_src_t;

/**
 * @brief Opens @p path: reads it once, parses and checks every member but
 *        the topics (ks_cli_report_check() of the report with no topic),
 *        and notes where each topic is.
 * @returns 0, or -1 with @p err as ks_cli_report_load() words it; close
 *          @p s either way.
 */
int ks_cli_merge_src_open(ks_cli_merge_src_t *s, const char *path, char *err,
                          size_t errsz);

/** @returns topic @p name's number in @p s, -1 when it has none. */
long ks_cli_merge_src_find(const ks_cli_merge_src_t *s, const char *name);

/**
 * @brief Reads topic @p idx of @p s into @p r: a report of @p s's head
 *        with that one topic, parsed, checked and its hot keys as rows,
 *        as ks_cli_report_load() gives a whole file.
 * @returns 0 (ks_cli_report_free() @p r), or -1 with @p err set.
 */
int ks_cli_merge_src_topic(const ks_cli_merge_src_t *s, size_t idx,
                           ks_cli_report_t *r, char *err, size_t errsz);

/** @brief Releases what @p s holds. */
void ks_cli_merge_src_close(ks_cli_merge_src_t *s);

/* ---- sketches (ks_cli_merge_sketch.c) --------------------------- */

typedef struct ks_cli_sketch ks_cli_sketch_t;

/**
 * @brief An empty merged sketch set.
 * @param sample_capacity k of the merged key sample: the smallest of the
 *        inputs' (the bottom-k of a union is known only to the smallest k).
 * @param hot_capacity counters of the merged Space-Saving summary: the
 *        largest of the inputs'.
 * @returns NULL on ENOMEM.
 */
ks_cli_sketch_t *ks_cli_sketch_new(size_t sample_capacity, size_t hot_capacity);

void ks_cli_sketch_destroy(ks_cli_sketch_t *m);

/**
 * @brief Merges one input topic's `merge` object (checked by
 *        ks_cli_report_check()): its packed sketches read (ks_pack.h).
 * @returns 0, or -1 with @p err set (a packed sketch that does not read:
 *          "merge.key_sample.packed: checksum mismatch ...").
 */
int ks_cli_sketch_add(ks_cli_sketch_t *m, const json_t *merge, char *err,
                      size_t errsz);

/** @returns distinct hashed keys: exact while the merged sample is not
 *           full, else the HyperLogLog estimate; *rel_err its relative
 *           standard error (0 when exact). */
double ks_cli_sketch_distinct(const ks_cli_sketch_t *m, double *rel_err);

/**
 * @brief Sets `distinct_keys`, `distinct_keys_fraction`,
 *        `distinct_keys_fraction_error` and `distinct_keys_error` of a
 *        proposal's `moved` object from the merged key sample (the
 *        fraction of sampled keys whose partition differs between @p cur
 *        and @p prop) and the merged @p distinct, and what the
 *        merged analysis @p a makes of its figures (`messages_exact`,
 *        `messages_fraction_error`, `traffic_fraction_error`:
 *        and the sampling errors: ks_analysis_set_moved(), its
 *        `messages_fraction` and `traffic_fraction` set before;
 *        @p window_hashed and @p window_all: the window's hashed and all
 *        messages).
 */
void ks_cli_sketch_moved(const ks_cli_sketch_t *m, int32_t cur, int32_t prop,
                         double distinct, const ks_analysis_t *a,
                         double window_hashed, double window_all,
                         json_t *moved);

/**
 * @returns the topic's `hot_keys` array from the merged summary, busiest
 *          first, at most @p max, in the report's form (key, key_hex,
 *          key_length, key_truncated, messages, messages_error,
 *          messages_sampling_error, bytes,
 *          share of @p topic_messages, partition_current,
 *          partition_proposed, moves); messages_sampling_error with the
 *          merged analysis @p a's sampling (ks_analysis_hot_error()).
 */
json_t *ks_cli_sketch_hot_keys(const ks_cli_sketch_t *m, int32_t cur,
                               const int32_t *props, size_t prop_cnt,
                               uint64_t topic_messages, size_t max,
                               const ks_analysis_t *a);

/** @returns the topic's `hot_keys_sampling` object of the merged inputs
 *           (their runs of one passed by, and those the hot-key summary got
 *           by sample, summed; ks_run_hot_t in ks_topic.h). */
json_t *ks_cli_sketch_hot_sampling(const ks_cli_sketch_t *m);

/** @returns the merged `merge` object; @p hot_total is the hot-key
 *           summary's stream total (the inputs' totals summed). */
json_t *ks_cli_sketch_json(const ks_cli_sketch_t *m, uint64_t hot_total);

/* ---- one topic (ks_cli_merge_topic.c) --------------------------- */

/** One input's view of a topic. */
typedef struct ks_cli_merge_in {
        const ks_cli_report_t *report;
        const json_t          *topic;
} ks_cli_merge_in_t;

/** The warning of a merged topic whose figures leave out inputs that
 *  had no partition count (ks_cli_merge_left_out()). */
#define KS_CLI_WARN_COUNT_UNKNOWN_LEFT_OUT "COUNT_UNKNOWN_LEFT_OUT"

/**
 * @brief The rule for an input whose producer had not learned the topic's
 *        partition count (`partition_count.current` 0 or null: a
 *        short-lived producer, or a report written before the metadata
 *        answer): its messages cannot be placed on partitions, so when
 *        another input of the topic knows the count it is left out of
 *        the merged figures (and said: COUNT_UNKNOWN_LEFT_OUT), rather
 *        than the merge refused; when none knows it, all are merged (the
 *        merged count unknown too).
 * @param topic the input's topic object
 * @param merged_current the merged topic's count (0: unknown)
 * @returns 1 if that input is left out of the merge.
 */
int ks_cli_merge_left_out(const json_t *topic, int32_t merged_current);

/**
 * @brief Merges topic @p name of @p n inputs (n >= 1) into a new topic
 *        object; inputs without a partition count are left out when
 *        another has one (ks_cli_merge_left_out()).
 * @param hot_max hot keys listed (0: the most any input lists).
 * @param total_inputs how many reports are merged in all (for warnings).
 * @returns the object, or NULL with @p err naming the file and field at
 *          fault (different partition counts, proposals or partitioners
 *          are refused).
 */
json_t *ks_cli_merge_topic(const char *name, const ks_cli_merge_in_t *in,
                           size_t n, size_t hot_max, size_t total_inputs,
                           char *err, size_t errsz);

/**
 * @brief Whether topic @p name's counters of the @p n inputs @p in can be
 *        summed: every integer member summed at its path stays within
 *        2^63 - 1 (ks_cli_merge_overflow.c).
 * @returns 0, or -1 with @p err = "FILE: topics.NAME.FIELD: overflow: ...".
 */
int ks_cli_merge_sums_fit(const char *name, const ks_cli_merge_in_t *in,
                          size_t n, char *err, size_t errsz);

/** @brief dst += src for every integer member, recursively into
 *         objects; members only in src are copied, others kept. */
void ks_cli_merge_sum(json_t *dst, const json_t *src);

/* ---- derived parts of a topic (ks_cli_merge_derived.c) ----------- */

/** @returns other_clients: each model's fractions weighted by the inputs'
 *           keyed messages (traffic) and distinct keys (keys); `exact`
 *           false once two reports are merged; examples joined. */
json_t *ks_cli_merge_clients(const ks_cli_merge_in_t *in, size_t n);

/** @returns mixed_keys: totals summed (an upper bound: a key mixed in two
 *           producers counts twice), the lists joined by logical key and
 *           sorted busiest first; NULL when no input has mixed_keys. */
json_t *ks_cli_merge_mixed(const ks_cli_merge_in_t *in, size_t n);

/**
 * @returns the warnings of merged topic @p topic: KEYS_WOULD_MOVE,
 *          PROPOSAL_NOT_AN_INCREASE and PARTITIONER_NOT_JAVA_COMPATIBLE
 *          recomputed from its merged figures, in the plugin's words;
 *          every other code once, with the first input's message and in
 *          how many of the @p total_inputs reports it was raised.
 */
json_t *ks_cli_merge_warnings(const ks_cli_merge_in_t *in, size_t n,
                              const json_t *topic, size_t total_inputs);

#endif /* KS_CLI_MERGE_H */
