/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli_scan.h
 * @brief `keyshift scan`: reads a topic's stored records with a librdkafka
 *        consumer and writes a keyshift.report.v2 report (`source:
 *        "scan"`) with the plugin's analysis (core/topic/ks_topic.h, fed with
 *        ks_topic_record_stored_locked()) and the partitioner audit
 *        (core/report/ks_audit.h).
 *
 * The reading half (ks_cli_scan_read.c): a consumer that assign()s every
 * partition from the start offset to the end offset each partition had
 * when the scan began (rd_kafka_query_watermark_offsets()); it never
 * subscribes, so it never joins its group.id, and never commits.
 *
 * Single-threaded (the CLI's thread; librdkafka's own threads are not
 * touched), except the SIGINT flag.
 */
#ifndef KS_CLI_SCAN_H
#define KS_CLI_SCAN_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include <librdkafka/rdkafka.h>

#include "keyshift/keyshift.h"
#include "ks_config.h"
#include "ks_rates.h"

/** Where the scan starts in each partition (--from). */
typedef enum ks_scan_from {
        KS_SCAN_FROM_EARLIEST = 0, /**< the low watermark */
        KS_SCAN_FROM_LATEST,       /**< the end offset: reads nothing */
        KS_SCAN_FROM_LAST,         /**< -N: the last N records of each */
        KS_SCAN_FROM_TIME,         /**< @UNIX_MS: offsets_for_times() */
} ks_scan_from_t;

/** Where the scan stops in each partition (--until), exclusive. */
typedef enum ks_scan_until {
        KS_SCAN_UNTIL_END = 0,  /**< the high watermark at the start */
        KS_SCAN_UNTIL_OFFSET,   /**< N: records at offsets below N */
        KS_SCAN_UNTIL_TIME,     /**< @UNIX_MS: records before that time */
        KS_SCAN_UNTIL_INCREASE, /**< each partition's switch offset
                                 *   (core/report/ks_switch.h) */
} ks_scan_until_t;

/** One partition's range. */
typedef struct ks_scan_part {
        int64_t  low, high; /**< watermarks at the scan's start */
        int64_t  start;     /**< first offset read */
        int64_t  end;       /**< the high watermark, or --until's offset:
                             *   read up to end - 1 */
        int64_t  last;      /**< last offset read, -1: none */
        uint64_t records;   /**< records read */
        int      done;      /**< reached end (or EOF) */
} ks_scan_part_t;

/** Called for every record read, in the order they arrive. */
typedef void(ks_scan_record_cb)(void *opaque, const rd_kafka_message_t *m);

/** What one scan reads and how. */
typedef struct ks_scan_reader {
        rd_kafka_t *rk;
        const char *topic;
        int32_t     partition_count;
        int         brokers;            /**< in metadata */
        int         replication_factor; /**< replicas of partition 0 */
        /** cleanup.policy contains compact (Admin API DescribeConfigs): 1,
         *  0, or -1 unknown (no answer within timeout_ms) */
        int             compacted;
        ks_scan_part_t *parts;        /**< [partition_count] */
        int             timeout_ms;   /**< metadata, watermarks, idle */
        uint64_t        max_messages; /**< 0: no limit */
        ks_scan_until_t until;        /**< OFFSET and TIME: applied by
                                       *   ks_scan_open() */
        int64_t         until_arg;    /**< the offset, or ms */
        uint64_t        records;      /**< read */
        uint64_t        to_read;      /**< sum of end - start */
        const char     *stopped_by;   /**< "end", "max-messages", "interrupt",
                                     *   "idle-timeout", "error" */
        int             progress;     /**< print progress on stderr */
} ks_scan_reader_t;

/** Set by the SIGINT handler: the scan stops and writes what it read. */
extern volatile sig_atomic_t ks_scan_interrupted;

/**
 * @brief Creates the consumer from @p conf (consumed), finds @p topic's
 *        partitions and their watermarks and the start offsets for
 *        @p from (@p from_arg: N for -N, milliseconds for @), all within
 *        r->timeout_ms each.
 * @returns 0; 1 (failure: unknown topic, unreachable broker, empty range)
 *          with @p err saying what and why.
 */
int ks_scan_open(ks_scan_reader_t *r, rd_kafka_conf_t *conf, const char *topic,
                 ks_scan_from_t from, int64_t from_arg, char *err,
                 size_t errsz);

/**
 * @brief Reads every partition from its start to its end offset, calling
 *        @p cb for each record, until done, --max-messages, SIGINT, no
 *        record nor end for r->timeout_ms, or a consumer error.
 * @returns 0 when every partition was read to its end, 1 otherwise (then
 *          r->stopped_by says why and @p err the error, if any).
 */
int ks_scan_read(ks_scan_reader_t *r, ks_scan_record_cb *cb, void *opaque,
                 char *err, size_t errsz);

/**
 * @brief Reads the same partitions again from their start offsets: every
 *        partition's counters are reset, its end lowered to @p ends[p]
 *        when @p ends is not NULL and ends[p] >= 0, and the consumer
 *        assign()ed again.
 * @returns 0, or 1 with @p err (assign() failed, or nothing left to read).
 */
int ks_scan_rewind(ks_scan_reader_t *r, const int64_t *ends, char *err,
                   size_t errsz);

/** @brief Destroys the consumer (closes it: no commit). */
void ks_scan_close(ks_scan_reader_t *r);

/* ---- the command line (ks_cli_scan_args.c) ---------------------- */

/** Parsed command line. */
typedef struct scan_opts {
        const char      *bootstrap, *topic, *output;
        int32_t          proposed[KEYSHIFT_PROPOSED_MAX];
        size_t           proposed_cnt;
        ks_scan_from_t   from;
        int64_t          from_arg;
        const char      *from_text;
        ks_scan_until_t  until;
        int64_t          until_arg;
        const char      *until_text; /**< NULL: no --until */
        uint64_t         max_messages;
        int              partitioner; /**< ks_partitioner_t, -1: audit */
        int              timeout_ms;
        rd_kafka_conf_t *rk_conf;
        ks_config_t      kconf;
} scan_opts_t;

/** @brief Sets the consumer properties the scan needs and reads fastest
 *         with (before the user's -X, which may override them). */
void ks_cli_scan_consumer_defaults(rd_kafka_conf_t *conf);

/** @returns 0, or the exit code for a usage error (message printed), or
 *           -1 after --help. */
int ks_cli_scan_parse_args(scan_opts_t *o, int argc, char **argv);

/* ---- record timestamps (ks_cli_scan_times.c) -------------------- */

/** Buckets of the timestamp series; a longer span widens each bucket. */
#define KS_SCAN_TIME_BUCKETS 65536

/** Per-second records and bytes by record timestamp, in fixed memory:
 *  buckets of `width` seconds (a power of two), doubled when the span
 *  does not fit. */
typedef struct ks_scan_times {
        int64_t   base; /**< first bucket, in units of width seconds */
        int64_t   width;
        uint64_t *msgs, *bytes; /**< [KS_SCAN_TIME_BUCKETS] */
        int       any;
        uint64_t  missing; /**< records without a timestamp */
} ks_scan_times_t;

/** @brief Counts one record of @p bytes at @p ts_ms (< 0: none). */
void ks_scan_times_add(ks_scan_times_t *t, int64_t ts_ms, uint64_t bytes);

/**
 * @brief Replays the series into @p r in time order, each bucket spread
 *        evenly over its seconds. @returns the end of the series (ms, on
 *        the same clock: the snapshot's time for the rates).
 */
int64_t ks_scan_times_rates(const ks_scan_times_t *t, ks_rates_t *r);

/* ---- the count switch (ks_cli_scan_switch.c) ------------------- */

struct ks_switch_result;

/**
 * @brief Reads @p r's ranges again (ks_scan_rewind()) into a switch
 *        detector of (@p family, @p old_count) -> r->partition_count
 *        (core/report/ks_switch.h) with @p max_bytes for its kept records.
 * @returns 0 with @p out filled (free with ks_switch_result_free()), or 1
 *          with @p err (out of memory, a read that did not reach the end).
 */
int ks_cli_scan_switch(ks_scan_reader_t *r, int family, int32_t old_count,
                       size_t max_bytes, struct ks_switch_result *out,
                       char *err, size_t errsz);

#endif /* KS_CLI_SCAN_H */
