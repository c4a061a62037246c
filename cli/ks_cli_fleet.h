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
 *  - ks_cli_fleet_group.c: each record checked (garbage counted and
 *    skipped) and grouped by producer;
 *  - ks_cli_fleet.c: one round: the producers' states, the merge and the
 *    output;
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

/** One producer: its records' reports grouped (ks_cli_fleet_group.c). */
typedef struct ks_fleet_producer {
        json_t     *key;     /**< the identity (a record's key without topic) */
        json_t     *own;     /**< its own record's report (no topic), or NULL */
        json_t     *topics;  /**< topic -> that topic's report */
        int64_t     last_ms; /**< its latest record's time */
        const char *state;
        int         merged;
        char        label[400]; /**< "client_id@host pid N": merged_from */
} ks_fleet_producer_t;

/** The producers' states, as counted in `fleet`: index of each. */
enum { KS_FLEET_LIVE, KS_FLEET_STALE, KS_FLEET_ENDED, KS_FLEET_STATES };

/** One round's records grouped by producer, with what was skipped. */
typedef struct ks_fleet_round {
        ks_fleet_producer_t  *ps;  /**< the producers, in first-record order */
        size_t                np;  /**< ... their count */
        struct ks_cli_report *in;  /**< the merged producers' reports */
        size_t                nin; /**< ... their count */
        size_t                garbage;              /**< records skipped */
        char                  first_bad[600];       /**< where the first was */
        char                  first_out[700];       /**< the first left out */
        json_int_t            cnt[KS_FLEET_STATES]; /**< producers by state */
        int64_t               now; /**< when the topic was read */
} ks_fleet_round_t;

/**
 * @brief Groups the records of @p recs by producer into @p rd (zeroed by
 *        the caller): a topic's record as that topic's report, the
 *        producer's own as its head. Each record is parsed and checked as
 *        any report is, on the parser's threads when they start
 *        (ks_fleet_parser_start()); garbage is counted in rd->garbage,
 *        the first named in rd->first_bad, the first few on stderr.
 *        Stops at the first producer that cannot be added (out of
 *        memory).
 * @locality the command's thread.
 */
void ks_fleet_group_records(const ks_fleet_opts_t *o, ks_fleet_read_t *recs,
                            ks_fleet_round_t *rd);

/**
 * @brief One round: reads the report topic (ks_fleet_read()), checks the
 *        records, gives each producer its state, merges the selected ones
 *        and writes the report (and its metrics with --metrics).
 * @param conf the consumer's configuration (taken).
 * @returns KS_CLI_EXIT_OK, or KS_CLI_EXIT_FAIL (said on stderr).
 */
int ks_fleet_run(const ks_fleet_opts_t *o, rd_kafka_conf_t *conf);

#endif /* KS_CLI_FLEET_H */
