/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli_fleet.h
 * @brief `keyshift fleet`: the reports that producers publish to
 *        keyshift.report.topic (plugin/ks_publish.h), read back and merged.
 *
 *  - ks_cli_fleet_read.c: reads the report topic from its start to its
 *    end (the high watermarks when it began) with a librdkafka consumer,
 *    keeping the latest record of each key (producer and topic), as the
 *    topic's compaction would;
 *  - ks_cli_fleet_parse.c: the records' JSON parsed and checked ahead on
 *    worker threads while the command takes those before;
 *  - ks_cli_fleet.c: one round: each record checked (garbage counted
 *    and skipped), the producers' states, the merge and the output;
 *  - ks_cli_fleet_args.c: the command line, the help, --follow.
 */
#ifndef KS_CLI_FLEET_H
#define KS_CLI_FLEET_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <librdkafka/rdkafka.h>

/** One record kept: the latest of its key. */
typedef struct ks_fleet_rec {
        char   *key;   /**< as written (compact JSON) */
        char   *value; /**< NULL: a tombstone (the key deleted) */
        size_t  value_len;
        int32_t partition;
        int64_t offset;
        int64_t timestamp_ms; /**< the record's time (-1: none) */
} ks_fleet_rec_t;

/** What was read. */
typedef struct ks_fleet_read {
        ks_fleet_rec_t *recs; /**< latest per key, in the order first seen */
        size_t          cnt, cap;
        uint64_t        records; /**< records read in all */
        json_t         *index;   /**< key -> its index in recs */
} ks_fleet_read_t;

/**
 * @brief Reads @p topic from its start to the high watermarks it had when
 *        asked, with consumer configuration @p conf (taken; the command
 *        set bootstrap.servers and -X properties).
 * @param timeout_ms how long to wait for metadata, watermarks and records
 *        that do not come
 * @param progress 1: a progress line on stderr (a TTY)
 * @returns 0, or -1 with @p err set (no such topic, the cluster did not
 *          answer, a record not read within the timeout).
 * @locality the CLI's only thread.
 */
int ks_fleet_read(rd_kafka_conf_t *conf, const char *topic, int timeout_ms,
                  int progress, ks_fleet_read_t *out, char *err, size_t errsz);

/** @brief Frees what ks_fleet_read() kept. */
void ks_fleet_read_free(ks_fleet_read_t *r);

/**
 * @brief Parses record @p rec: its key, which must be a keyshift record
 *        key {v:1, client_id, host, pid, started_at_ms, topic}, and its
 *        value, JSON (checked as a report by the caller).
 * @returns 0 with @p key and @p val (new references), or -1 with @p err
 *          set and both NULL.
 * @locality any thread (jansson only).
 */
int ks_fleet_parse_record(ks_fleet_rec_t *rec, json_t **key, json_t **val,
                          char *err, size_t errsz);

/** Records parsed ahead on worker threads (ks_cli_fleet_parse.c). */
typedef struct ks_fleet_parser ks_fleet_parser_t;

/**
 * A record's check, run by the worker that parsed it: @p key and @p val
 * its parse (ks_fleet_parse_record()), which the check may change (not
 * free), @p rec its partition, offset and time (not its value).
 * @returns 0, or -1 with @p err set: the record is then given as one that
 *          does not parse, with that message.
 * @locality any worker thread, several at once (with distinct records).
 */
typedef int (*ks_fleet_check_t)(void *arg, const ks_fleet_rec_t *rec,
                                json_t *key, json_t *val, char *err,
                                size_t errsz);

/**
 * @brief Starts parsing the records of @p rd ahead, and checking each one
 *        that parses with @p check (NULL: none) and @p arg, on up to 4
 *        threads (one a CPU), each record's text freed once parsed.
 *        @p rd's records are the parser's until ks_fleet_parser_stop()
 *        (their partition, offset and time may be read meanwhile; not
 *        their value).
 * @returns the parser, or NULL (out of memory, no thread): then parse with
 *          ks_fleet_parse_record() and check on the caller's thread.
 * @locality the command's thread.
 */
ks_fleet_parser_t *ks_fleet_parser_start(ks_fleet_read_t *rd,
                                         ks_fleet_check_t check, void *arg);

/**
 * @brief Takes record @p i's parse, waiting for it; take them in order
 *        0, 1, 2, ... (the parse runs at most 256 records ahead of the
 *        last taken).
 * @returns 0 with @p key and @p val (new references, checked), 1 for a
 *          deleted record (a tombstone: both NULL), or -1 with @p err set
 *          (as ks_fleet_parse_record(), or the check's message).
 */
int ks_fleet_parser_take(ks_fleet_parser_t *ps, size_t i, json_t **key,
                         json_t **val, char *err, size_t errsz);

/** @brief Stops the threads (after the record they are parsing), frees
 *         what was parsed and not taken, and @p ps. NULL: nothing. */
void ks_fleet_parser_stop(ks_fleet_parser_t *ps);

/** What `keyshift fleet` was asked (ks_cli_fleet_args.c). */
typedef struct ks_fleet_opts {
        const char *bootstrap, *report_topic, *out;
        const char *only[64];
        size_t      only_cnt;
        double      stale_after_s; /**< < 0: 3 report intervals */
        double      since_s;
        int         live_only;
        size_t      hot_max;
        int         timeout_ms;
        const char *metrics; /**< --metrics PATH, or NULL */
        int         follow;  /**< --follow: again every `every_s` */
        double      every_s;
} ks_fleet_opts_t;

/**
 * @brief One round: reads the report topic (ks_fleet_read()), checks the
 *        records, gives each producer its state, merges the selected ones
 *        and writes the report (and its metrics with --metrics).
 * @param conf the consumer's configuration (taken).
 * @returns KS_CLI_EXIT_OK, or KS_CLI_EXIT_FAIL (said on stderr).
 */
int ks_fleet_run(const ks_fleet_opts_t *o, rd_kafka_conf_t *conf);

#endif /* KS_CLI_FLEET_H */
