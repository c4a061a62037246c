/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_report.h
 * @brief The JSON report (schema keyshift.report.v2, documented in
 *        docs/report-schema.md): built with jansson from topic snapshots,
 *        written atomically.
 *
 * @locality keyshift's reporter thread, or the application thread that
 *           destroys the producer (final report). Touches no topic lock:
 *           it reads snapshots only.
 */
#ifndef KS_REPORT_H
#define KS_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "ks_report_fmt.h" /* the report's times: ks_report_rfc3339() */
#include "ks_sizing.h"
#include "ks_topic.h"
#include "ks_warn.h"

/** keyshift.report.topic's publishing so far (plugin/ks_publish.h): the
 *  report's `producer.report_topic`, so that every report, the final one
 *  too, says whether its records reach the topic. */
typedef struct ks_report_publish {
        const char *topic;
        uint64_t    queued;            /**< records handed to the publisher */
        uint64_t    delivered;         /**< acknowledged by the cluster */
        uint64_t    failed;            /**< refused, not queued or dropped */
        const char *last_error;        /**< librdkafka's words, "" none */
        int64_t     last_error_ms;     /**< wall clock, 0: none */
        int64_t     last_delivered_ms; /**< wall clock, 0: none */
} ks_report_publish_t;

typedef struct ks_report_producer {
        const char *client_id;
        const char *client_name; /**< rd_kafka_name() */
        long        pid;
        const char *librdkafka_version;
        /** the file of the librdkafka keyshift runs in (plugin/ks_host.h),
         *  or NULL (not written) */
        const char *librdkafka_library;
        const char *partitioner;
        const char *partitioner_source; /**< the property it came from */
        int         sticky_linger_ms;
        int64_t     started_at_ms; /**< wall clock */
        int64_t     report_interval_ms;
        const char *report_path;
        /** the scheduling priority each of keyshift's threads runs at
         *  ("SCHED_IDLE", "nice 19", "normal"; plugin/ks_priority.h), or
         *  NULL (not written: not a plugin report, or the thread has not
         *  run yet) */
        const char *drainer_priority, *reporter_priority;
        /** 1: the out_of_cpu figures below are written (plugin reports) */
        int     cpu_watched;
        int64_t out_of_cpu_ms; /**< ms keyshift found the host out of CPU
                                  *   (core/stage/ks_cpuwatch.h) */
        /** of out_of_cpu_ms, the ms a delivery thread had no CPU to
         *  spare (KS_CPUWATCH_DELIVERY), whatever the other CPUs did */
        int64_t  delivery_thread_ms;
        int      out_of_cpu_now;       /**< out of CPU at this report */
        uint64_t deliveries_unchecked; /**< deliveries (of every topic) not
                                        *   checked while sampled */
        /** while out of CPU, 1 delivery in N is checked (1: every one,
         *  keyshift.overload=analyse or no run delay to watch) */
        unsigned delivery_check_one_in;
        /** NULL: no `report_topic` written (keyshift.report.topic off, or
         *  not a plugin report) */
        const ks_report_publish_t *publish;
} ks_report_producer_t;

/** @returns the `state` of @p pub: "failing" when its latest outcome is
 *           an error, "ok" when it is a delivery, "waiting" before
 *           either. */
const char *ks_report_publish_state(const ks_report_publish_t *pub);

typedef struct ks_report_opts {
        int     hot_keys; /**< hot keys listed per topic */
        int64_t now_ms;   /**< wall clock */
        int     final;    /**< 1: written at shutdown */
        /** sizing inputs (NULL: no rates/skew/sizing/migration objects) */
        const ks_sizing_params_t *sizing;
        double queue_max_messages; /**< the producer's queue limits, for */
        double queue_max_bytes;    /**< how long a switch may pause it */
        /** 1: ks_report_topic() leaves the bulk of a topic (per-partition
         *  arrays, `merge`) as null placeholders, for
         *  ks_report_writer_topic_snapshot() to write from the snapshot */
        int bulk_by_writer;
        /** when the producer was created (wall clock, ms; 0: unknown):
         *  each topic's `analysis.uptime_s`, for the sampled line
         *  (ks_analysis.h) */
        int64_t started_at_ms;
        /** why a topic's partition count may still be unknown, appended to
         *  its CURRENT_COUNT_UNKNOWN warning (the final report of a
         *  producer destroyed before metadata named its topics: issue
         *  30), or NULL */
        const char *count_unknown_why;
} ks_report_opts_t;

/**
 * @brief Builds one topic's object and adds its warnings to @p wl.
 * @returns a new reference, or NULL on ENOMEM.
 */
json_t *ks_report_topic(const ks_topic_snapshot_t *s,
                        const ks_report_opts_t *opts, ks_warn_list_t *wl);

/**
 * @brief Builds the whole report. Steals @p topics (an object of topic
 *        objects). Producer-level warnings are taken from @p wl.
 * @returns a new reference, or NULL on ENOMEM.
 */
json_t *ks_report_build(const ks_report_producer_t *producer,
                        const ks_report_opts_t *opts, json_t *topics,
                        const ks_warn_list_t *wl);

/** @returns the report's head: the members before "topics", as
 *           ks_report_build() begins. NULL on ENOMEM. */
json_t *ks_report_head(const ks_report_producer_t *producer,
                       const ks_report_opts_t     *opts);

/**
 * @brief Writes @p report to @p path atomically: a temporary file in the
 *        same directory, fsync'ed, then rename()d over @p path, so a reader
 *        sees the previous report or this one, never part of one. Compact
 *        JSON, members in the order they were set, in the file's form
 *        (ks_report_file_form(): each topic's hot keys as columns).
 * @returns 0, or -1 with @p errstr set (the temporary file is removed).
 */
int ks_report_write_atomic(const json_t *report, const char *path, char *errstr,
                           size_t errstr_size);

/** The longest suffix a report's temporary file adds to its name,
 *  ".tmp.<pid>.<n>": 5 + 7 (a pid, at most PID_MAX_LIMIT = 2^22 on Linux)
 *  + 1 + 10 (an unsigned). */
#define KS_REPORT_TMP_SUFFIX_MAX 23

/** The longest path a report can be written at, with the terminating NUL
 *  (Linux PATH_MAX; ks_report_writer_t.tmp's size). */
#define KS_REPORT_PATH_MAX 4096

/**
 * @brief Whether a report can ever be written at @p path for its length:
 *        every component within NAME_MAX, the file name within NAME_MAX
 *        with the temporary file's suffix, the whole within PATH_MAX.
 * @returns 0, or -1 with @p why = what is too long.
 */
int ks_report_path_fits(const char *path, char *why, size_t whysz);

/**
 * @brief ks_report_path_fits(), and the folder exists and is writable,
 *        and @p path is a regular file or absent: checked before work
 *        whose end is the report (`keyshift scan -o`).
 * @returns 0, or -1 with @p why set.
 */
int ks_report_path_check(const char *path, char *why, size_t whysz);

/**
 * A report written topic by topic (ks_report_write.c), so that only one
 * topic's JSON is held at a time, with the same atomicity as
 * ks_report_write_atomic(): open, begin, topic_snapshot..., end (or
 * abort).
 * After a failure the later calls do nothing and end() returns it.
 */
typedef struct ks_report_writer {
        const char *path;
        char        tmp[KS_REPORT_PATH_MAX]; /**< the temporary file */
        FILE       *fp;
        int         created; /**< tmp exists and is ours to remove */
        int         unnamed; /**< fp is an O_TMPFILE file, named at the end */
        int         failed;
        size_t      topics;       /**< topics written */
        uint64_t    messages;     /**< their messages (the report's total) */
        long        kicked;       /**< writeback started up to here */
        char        errstr[8320]; /**< room for both paths */
        /** set by the caller after open (NULL: not kept): the head as
         *  written, without its closing brace, and the report-level
         *  `warnings` array's text, copied for whoever rebuilds the
         *  report's text per topic (plugin/ks_publish.c); emptied first,
         *  and freed by the caller */
        struct ks_report_text *keep_head, *keep_warnings;
} ks_report_writer_t;

/** @brief Creates the temporary file beside @p path (kept by reference).
 *  @returns 0, or -1 with w->errstr set. */
int ks_report_writer_open(ks_report_writer_t *w, const char *path);
/** @brief Writes the head (ks_report_head()) and opens "topics".
 *  @returns 0 or -1. */
int ks_report_writer_begin(ks_report_writer_t         *w,
                           const ks_report_producer_t *producer,
                           const ks_report_opts_t     *opts);
/**
 * @brief Writes one topic: the members of @p topic (built by
 *        ks_report_topic() with opts->bulk_by_writer set) in order, with
 *        the bulk that it left null (`current.partitions`,
 *        `proposals[].partitions`, `merge`) written straight from @p s,
 *        in the same schema, without building JSON values for it
 *        (ks_report_bulk.c). @returns 0 or -1.
 */
int ks_report_writer_topic_snapshot(ks_report_writer_t        *w,
                                    const ks_topic_snapshot_t *s,
                                    const json_t              *topic);
/** A topic's text as written in a report (from its name to its closing
 *  brace), kept to be written again while the topic does not change
 *  (ks_report_reuse.c). */
typedef struct ks_report_text {
        char  *b;
        size_t len, cap;
        int    failed; /**< ENOMEM while copying: incomplete, not to reuse */
} ks_report_text_t;

/** @brief Appends @p n bytes to @p t (on ENOMEM sets t->failed).
 *  @returns 0 or -1. */
int ks_report_text_append(ks_report_text_t *t, const char *s, size_t n);
/** @brief Frees what @p t holds (it is then empty). */
void ks_report_text_free(ks_report_text_t *t);

/**
 * @brief ks_report_writer_topic_snapshot(), and the topic's text as
 *        written copied into @p keep (emptied first; NULL: not copied).
 * @returns 0 or -1.
 */
int ks_report_writer_topic_keep(ks_report_writer_t        *w,
                                const ks_topic_snapshot_t *s,
                                const json_t *topic, ks_report_text_t *keep);
/**
 * @brief Writes a topic's text kept by ks_report_writer_topic_keep() (a
 *        comma before it unless it is the first), counting its
 *        @p messages in the report's total. @returns 0 or -1.
 */
int ks_report_writer_topic_text(ks_report_writer_t *w, const char *text,
                                size_t len, uint64_t messages);

/** @brief Closes "topics", writes the producer-level warnings of @p wl,
 *         fsyncs and renames over the path.
 *  @returns 0, or -1 with @p errstr set (the temporary file is removed). */
int ks_report_writer_end(ks_report_writer_t *w, const ks_warn_list_t *wl,
                         char *errstr, size_t errstr_size);
/** @brief Flushes, fsyncs and renames what was written (for a caller that
 *         wrote a whole document to w->fp). @returns 0 or -1 + errstr. */
int ks_report_writer_finish(ks_report_writer_t *w, char *errstr,
                            size_t errstr_size);
/** @brief Closes and removes the temporary file. */
void ks_report_writer_abort(ks_report_writer_t *w);

/**
 * @brief Removes temporary files that a killed writer left beside
 *        @p path: named `<basename>.tmp.<pid>.<n>` (keyshift's pattern,
 *        digits only), regular files of this user, of a process that no
 *        longer exists (kill(pid, 0) gives ESRCH) and older than
 *        @p older_than_s seconds (a writer in another PID namespace that
 *        shares the directory is still writing its file).
 * @returns how many were removed. Failures are ignored (a file that
 *          stays is harmless).
 * @locality keyshift's reporter thread at start (it reads a directory).
 */
size_t ks_report_remove_stale(const char *path, int64_t older_than_s);
/** @brief Starts the kernel's writeback of what was written so far, when
 *         enough has accumulated since the last call did (no waiting): the
 *         final fsync then waits only for the tail. */
void ks_report_writer_kick(ks_report_writer_t *w);

/** @returns a topic's `hot_keys_sampling` object, `{one_in,
 *           messages_passed_by, messages_sampled}` (ks_run_hot_t in
 *           ks_topic.h): what the report and a merge of reports write; a
 *           new reference, NULL on ENOMEM. */
json_t *ks_report_hot_sampling_json(uint64_t passed_by, uint64_t sampled);

/** What a topic's `merge` object is made of (ks_report_merge.c): its
 *  sketches' contents, borrowed. */
typedef struct ks_report_merge_in {
        const ks_hll_t             *hll;
        const ks_keysample_entry_t *sample; /**< sample_cnt entries */
        size_t                      sample_cnt, sample_capacity;
        const ks_topk_entry_t      *hot; /**< hot_cnt counters */
        size_t                      hot_cnt, hot_capacity;
        /** the hot-key summary's stream total, its runs of one passed by
         *  and those it got by sample (ks_run_hot_t) */
        uint64_t hot_total, hot_passed_by, hot_sampled;
} ks_report_merge_in_t;

/** @returns the `merge` object of @p in (docs/report-schema.md): each
 *           sketch packed into one base64 string (ks_pack.h), with its
 *           capacity and counts; a new reference, NULL on ENOMEM. */
json_t *ks_report_merge_object(const ks_report_merge_in_t *in);

/** @returns ks_report_merge_object() of snapshot @p s's sketches. */
json_t *ks_report_merge_json(const ks_topic_snapshot_t *s);

/* A proposal's flow matrix (ks_report_flow.c), rows x cols messages. */
/** @returns the cells of @p flow that are not 0. */
size_t ks_report_flow_nonzero(const uint64_t *flow, int32_t rows, int32_t cols);
/** @returns 1 when @p nonzero cells are written shorter as `flow_nonzero`
 *           than as the dense `flow`. */
int ks_report_flow_sparse(size_t nonzero, int32_t rows, int32_t cols);
/** @brief Sets @p proposal's `flow` (dense, or null) and, when shorter,
 *         `flow_nonzero` (sparse columns `{from, to, messages}` of the
 *         cells not 0, row by row), from @p flow (NULL: `flow` null: not
 *         kept). */
void ks_report_flow_set(json_t *proposal, const uint64_t *flow, int32_t rows,
                        int32_t cols);
/**
 * @brief Reads @p proposal's flow, whichever form it was written in
 *        (`flow` dense, or `flow_nonzero`, whose three columns must be of
 *        one length and list each cell once, row by row), into a new @p rows x @p cols matrix of messages
 *        (row-major). What readers of many reports use: a C matrix of the
 *        kept cells, not a JSON value per cell (90,000 a topic at 100 ->
 *        200, 300, 400 partitions).
 * @returns the matrix (free() it), or NULL: with @p err "" when the
 *          proposal has no flow (null, as over keyshift.flow.max.cells),
 *          else with @p err saying what is wrong ("cell 3: not from
 *          0..5, ...").
 */
uint64_t *ks_report_flow_read(const json_t *proposal, int32_t rows,
                              int32_t cols, char *err, size_t errsz);
/**
 * @brief Adds @p proposal's flow, whichever form it was written in (as
 *        ks_report_flow_read() reads it), to the @p rows x @p cols matrix
 *        @p m (row-major): what a merge of many reports sums, without a
 *        matrix per input.
 * @returns 0; 1 when the proposal has no flow (@p m untouched); -1 with
 *          @p err saying what is wrong (@p m then partly added to).
 */
int ks_report_flow_add(const json_t *proposal, int32_t rows, int32_t cols,
                       uint64_t *m, char *err, size_t errsz);
/** @returns the dense matrix that `flow_nonzero` @p nonzero describes (a
 *           new reference), or NULL with @p err saying what is wrong. */
json_t *ks_report_flow_dense(const json_t *nonzero, int32_t rows, int32_t cols,
                             char *err, size_t errsz);

/* A topic's hot keys in the file (ks_report_hot_cols.c): columns. */
/** @returns @p rows (the `hot_keys` array ks_report_topic() builds) as
 *           the file's columns object: each member an array of one value
 *           per key, per-count objects objects of such arrays,
 *           `ordering_given_up` once; a new reference (NULL on ENOMEM). */
json_t *ks_report_hot_keys_columns(const json_t *rows);
/** @returns the rows of columns object @p cols (the inverse of
 *           ks_report_hot_keys_columns()): a new reference, or NULL with
 *           @p err naming the column that is not one value per key. */
json_t *ks_report_hot_keys_rows(const json_t *cols, char *err, size_t errsz);
/** @returns @p report as its file holds it (each topic's `hot_keys` as
 *           columns): a new reference sharing @p report's values but the
 *           topics' objects, NULL on ENOMEM. What ks_report_write_atomic()
 *           writes. */
json_t *ks_report_file_form(const json_t *report);

#endif /* KS_REPORT_H */
