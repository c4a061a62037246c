/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli_scan_read.c
 * @brief The reading half of `keyshift scan` (ks_cli_scan.h): metadata,
 *        watermarks, start offsets, assign() and the consume loop with
 *        progress on stderr.
 */
#include "ks_cli_scan.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

volatile sig_atomic_t ks_scan_interrupted;

/** @returns CLOCK_MONOTONIC in milliseconds. */
static int64_t mono_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/** @returns 1 for an error that a moment may cure: a new topic's or
 *           partition's leader not elected yet, a leader moving. */
static int transient(rd_kafka_resp_err_t e)
{
        return e == RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION ||
               e == RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE ||
               e == RD_KAFKA_RESP_ERR_NOT_COORDINATOR ||
               e == RD_KAFKA_RESP_ERR__TRANSPORT ||
               e == RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT;
}

/** @brief Finds the topic's partitions. @returns 0 or 1 with @p err. */
static int find_topic(ks_scan_reader_t *r, char *err, size_t errsz)
{
        const struct rd_kafka_metadata *md = NULL;
        rd_kafka_topic_t   *rkt = rd_kafka_topic_new(r->rk, r->topic, NULL);
        rd_kafka_resp_err_t e;
        int                 ret      = 1;
        int64_t             deadline = mono_ms() + r->timeout_ms;

        if (!rkt) {
                snprintf(err, errsz, "--topic %s: %s", r->topic,
                         rd_kafka_err2str(rd_kafka_last_error()));
                return 1;
        }
        e = rd_kafka_metadata(r->rk, 0, rkt, &md, r->timeout_ms);
        while (!e && md->topic_cnt == 1 && transient(md->topics[0].err) &&
               mono_ms() < deadline) {
                /* a topic just created: its leaders are being elected */
                rd_kafka_metadata_destroy(md);
                md = NULL;
                usleep(100 * 1000);
                e = rd_kafka_metadata(r->rk, 0, rkt, &md, r->timeout_ms);
        }
        if (e) {
                snprintf(err, errsz,
                         "no metadata from the broker within %d ms "
                         "(--timeout-ms): %s; is the bootstrap address right "
                         "and the broker reachable?",
                         r->timeout_ms, rd_kafka_err2str(e));
        } else if (md->topic_cnt != 1 || md->topics[0].err ||
                   md->topics[0].partition_cnt < 1) {
                snprintf(err, errsz, "--topic %s: %s", r->topic,
                         md->topic_cnt != 1 ? "not in the broker's metadata"
                         : md->topics[0].err
                             ? rd_kafka_err2str(md->topics[0].err)
                             : "has no partitions");
        } else {
                r->partition_count    = md->topics[0].partition_cnt;
                r->brokers            = md->broker_cnt;
                r->replication_factor = md->topics[0].partitions[0].replica_cnt;
                ret                   = 0;
        }
        if (md)
                rd_kafka_metadata_destroy(md);
        rd_kafka_topic_destroy(rkt);
        return ret;
}

/** @brief Sets each partition's start for @p from. @returns 0 or 1. */
static int start_offsets(ks_scan_reader_t *r, ks_scan_from_t from,
                         int64_t from_arg, char *err, size_t errsz)
{
        rd_kafka_topic_partition_list_t *tl;
        rd_kafka_resp_err_t              e;
        int32_t                          p;

        for (p = 0; p < r->partition_count; p++) {
                ks_scan_part_t *s = &r->parts[p];
                switch (from) {
                case KS_SCAN_FROM_EARLIEST:
                        s->start = s->low;
                        break;
                case KS_SCAN_FROM_LATEST:
                        s->start = s->high;
                        break;
                case KS_SCAN_FROM_LAST:
                        s->start = s->high - from_arg > s->low
                                       ? s->high - from_arg
                                       : s->low;
                        break;
                case KS_SCAN_FROM_TIME:
                        s->start = s->high;
                        break;
                }
        }
        if (from != KS_SCAN_FROM_TIME)
                return 0;
        tl = rd_kafka_topic_partition_list_new(r->partition_count);
        for (p = 0; p < r->partition_count; p++)
                rd_kafka_topic_partition_list_add(tl, r->topic, p)->offset =
                    from_arg;
        e = rd_kafka_offsets_for_times(r->rk, tl, r->timeout_ms);
        if (e) {
                snprintf(err, errsz,
                         "--from @%" PRId64
                         ": offsets_for_times failed within %d ms: %s",
                         from_arg, r->timeout_ms, rd_kafka_err2str(e));
                rd_kafka_topic_partition_list_destroy(tl);
                return 1;
        }
        for (p = 0; p < tl->cnt; p++) {
                const rd_kafka_topic_partition_t *tp = &tl->elems[p];
                ks_scan_part_t                   *s  = &r->parts[tp->partition];
                /* -1: no record at or after the time: nothing to read */
                if (!tp->err && tp->offset >= 0)
                        s->start = tp->offset < s->low ? s->low : tp->offset;
        }
        rd_kafka_topic_partition_list_destroy(tl);
        return 0;
}

/** @brief Lowers each partition's end to --until's offset (OFFSET: N;
 *         TIME: the first record at or after the time, offsets_for_times;
 *         none there: the end stays). @returns 0 or 1 with @p err. */
static int end_offsets(ks_scan_reader_t *r, char *err, size_t errsz)
{
        rd_kafka_topic_partition_list_t *tl;
        rd_kafka_resp_err_t              e;
        int32_t                          p;

        if (r->until == KS_SCAN_UNTIL_OFFSET) {
                for (p = 0; p < r->partition_count; p++)
                        if (r->until_arg < r->parts[p].end)
                                r->parts[p].end = r->until_arg;
                return 0;
        }
        if (r->until != KS_SCAN_UNTIL_TIME)
                return 0;
        tl = rd_kafka_topic_partition_list_new(r->partition_count);
        for (p = 0; p < r->partition_count; p++)
                rd_kafka_topic_partition_list_add(tl, r->topic, p)->offset =
                    r->until_arg;
        e = rd_kafka_offsets_for_times(r->rk, tl, r->timeout_ms);
        if (e) {
                snprintf(err, errsz,
                         "--until @%" PRId64
                         ": offsets_for_times failed within %d ms: %s",
                         r->until_arg, r->timeout_ms, rd_kafka_err2str(e));
                rd_kafka_topic_partition_list_destroy(tl);
                return 1;
        }
        for (p = 0; p < tl->cnt; p++) {
                const rd_kafka_topic_partition_t *tp = &tl->elems[p];
                ks_scan_part_t                   *s  = &r->parts[tp->partition];
                if (!tp->err && tp->offset >= 0 && tp->offset < s->end)
                        s->end = tp->offset;
        }
        rd_kafka_topic_partition_list_destroy(tl);
        return 0;
}

/** @brief Asks the cluster (Admin API DescribeConfigs) whether @p r's
 *         topic is compacted, waiting up to r->timeout_ms; r->compacted
 *         stays -1 without an answer (a scan goes on without it). */
static void ask_cleanup_policy(ks_scan_reader_t *r)
{
        rd_kafka_ConfigResource_t *res =
            rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, r->topic);
        rd_kafka_AdminOptions_t *opt =
            rd_kafka_AdminOptions_new(r->rk, RD_KAFKA_ADMIN_OP_DESCRIBECONFIGS);
        rd_kafka_queue_t *q = rd_kafka_queue_new(r->rk);
        rd_kafka_event_t *ev;
        char              errstr[256];

        r->compacted = -1;
        rd_kafka_AdminOptions_set_request_timeout(opt, r->timeout_ms, errstr,
                                                  sizeof(errstr));
        rd_kafka_DescribeConfigs(r->rk, &res, 1, opt, q);
        ev = rd_kafka_queue_poll(q, r->timeout_ms + 1000);
        if (ev &&
            rd_kafka_event_type(ev) == RD_KAFKA_EVENT_DESCRIBECONFIGS_RESULT &&
            !rd_kafka_event_error(ev)) {
                size_t                            n = 0, cnt = 0, i;
                const rd_kafka_ConfigResource_t **rs =
                    rd_kafka_DescribeConfigs_result_resources(
                        rd_kafka_event_DescribeConfigs_result(ev), &n);
                const rd_kafka_ConfigEntry_t **e =
                    rs && n == 1 && !rd_kafka_ConfigResource_error(rs[0])
                        ? rd_kafka_ConfigResource_configs(rs[0], &cnt)
                        : NULL;
                for (i = 0; e && i < cnt; i++) {
                        const char *v = rd_kafka_ConfigEntry_value(e[i]);
                        if (!strcmp(rd_kafka_ConfigEntry_name(e[i]),
                                    "cleanup.policy"))
                                r->compacted =
                                    v && strstr(v, "compact") ? 1 : 0;
                }
        }
        if (ev)
                rd_kafka_event_destroy(ev);
        rd_kafka_queue_destroy(q);
        rd_kafka_AdminOptions_destroy(opt);
        rd_kafka_ConfigResource_destroy(res);
}

int ks_scan_open(ks_scan_reader_t *r, rd_kafka_conf_t *conf, const char *topic,
                 ks_scan_from_t from, int64_t from_arg, char *err, size_t errsz)
{
        char                             errstr[512];
        rd_kafka_topic_partition_list_t *tl;
        rd_kafka_resp_err_t              e;
        int32_t                          p;
        uint64_t                         stored = 0;

        r->topic      = topic;
        r->stopped_by = "error";
        r->rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, errstr, sizeof(errstr));
        if (!r->rk) {
                rd_kafka_conf_destroy(conf);
                snprintf(err, errsz, "cannot create the consumer: %s", errstr);
                return 1;
        }
        if (find_topic(r, err, errsz))
                return 1;
        ask_cleanup_policy(r);
        r->parts = calloc((size_t)r->partition_count, sizeof(*r->parts));
        if (!r->parts) {
                snprintf(err, errsz, "out of memory");
                return 1;
        }
        for (p = 0; p < r->partition_count; p++) {
                ks_scan_part_t *s        = &r->parts[p];
                int64_t         deadline = mono_ms() + r->timeout_ms;
                while ((e = rd_kafka_query_watermark_offsets(r->rk, topic, p,
                                                             &s->low, &s->high,
                                                             r->timeout_ms)) &&
                       transient(e) && mono_ms() + 100 < deadline)
                        usleep(100 * 1000);
                if (e) {
                        snprintf(err, errsz,
                                 "partition %d: no watermarks within %d ms "
                                 "(--timeout-ms): %s",
                                 (int)p, r->timeout_ms, rd_kafka_err2str(e));
                        return 1;
                }
                s->end  = s->high;
                s->last = -1;
                stored += (uint64_t)(s->high - s->low);
        }
        if (!stored) {
                snprintf(err, errsz,
                         "--topic %s is empty: its %d partitions hold no "
                         "record (low watermark = high watermark)",
                         topic, (int)r->partition_count);
                return 1;
        }
        if (start_offsets(r, from, from_arg, err, errsz) ||
            end_offsets(r, err, errsz))
                return 1;
        tl = rd_kafka_topic_partition_list_new(r->partition_count);
        for (p = 0; p < r->partition_count; p++) {
                ks_scan_part_t *s = &r->parts[p];
                if (s->start >= s->end) {
                        s->done = 1;
                        continue;
                }
                r->to_read += (uint64_t)(s->end - s->start);
                rd_kafka_topic_partition_list_add(tl, topic, p)->offset =
                    s->start;
        }
        if (!r->to_read) {
                rd_kafka_topic_partition_list_destroy(tl);
                snprintf(err, errsz,
                         "--from starts at or past the end%s of every "
                         "partition of %s (%" PRIu64
                         " records stored): nothing to read",
                         r->until ? " (--until)" : "", topic, stored);
                return 1;
        }
        e = rd_kafka_assign(r->rk, tl);
        rd_kafka_topic_partition_list_destroy(tl);
        if (e) {
                snprintf(err, errsz, "assign() failed: %s",
                         rd_kafka_err2str(e));
                return 1;
        }
        return 0;
}

/** @brief Prints one progress line (\r, no newline) on stderr. */
static void progress(const ks_scan_reader_t *r, int64_t started, int final)
{
        double  s    = (double)(mono_ms() - started) / 1000.0;
        double  rate = s > 0 ? (double)r->records / s : 0;
        int32_t p, done = 0;
        double  left =
            r->to_read > r->records ? (double)(r->to_read - r->records) : 0;

        for (p = 0; p < r->partition_count; p++)
                done += r->parts[p].done;
        fprintf(stderr,
                "\rscan: %" PRIu64 " records, %.0f records/s, %d/%d "
                "partitions done, ETA %.0f s   %s",
                r->records, rate, (int)done, (int)r->partition_count,
                rate > 0 ? left / rate : 0.0, final ? "\n" : "");
}

/** @returns 1 when every partition is done. */
static int all_done(const ks_scan_reader_t *r)
{
        int32_t p;

        for (p = 0; p < r->partition_count; p++)
                if (!r->parts[p].done)
                        return 0;
        return 1;
}

int ks_scan_read(ks_scan_reader_t *r, ks_scan_record_cb *cb, void *opaque,
                 char *err, size_t errsz)
{
        int64_t started = mono_ms(), last_seen = started, next_progress;
        int64_t now = started; /* read once a poll */

        next_progress = started + 1000;
        r->stopped_by = "end";
        while (!all_done(r)) {
                rd_kafka_message_t *m;
                ks_scan_part_t     *s;

                if (ks_scan_interrupted) {
                        r->stopped_by = "interrupt";
                        break;
                }
                if (r->max_messages && r->records >= r->max_messages) {
                        r->stopped_by = "max-messages";
                        break;
                }
                if (r->progress && now >= next_progress) {
                        progress(r, started, 0);
                        next_progress = now + 1000;
                }
                if (now - last_seen > r->timeout_ms) {
                        r->stopped_by = "idle-timeout";
                        snprintf(err, errsz,
                                 "no record and no partition end for %d ms "
                                 "(--timeout-ms): stopped",
                                 r->timeout_ms);
                        break;
                }
                m   = rd_kafka_consumer_poll(r->rk, 100);
                now = mono_ms();
                if (!m)
                        continue;
                if (!m->rkt || m->partition < 0 ||
                    m->partition >= r->partition_count) {
                        if (m->err) {
                                /* a client-level error (e.g. transport):
                                 * librdkafka retries; the idle timeout
                                 * ends a scan that does not recover */
                                snprintf(err, errsz, "%s",
                                         rd_kafka_message_errstr(m));
                        }
                        rd_kafka_message_destroy(m);
                        continue;
                }
                s = &r->parts[m->partition];
                if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
                        /* everything readable is read (read_committed
                         * stops at the last stable offset, and aborted
                         * records and transaction markers leave gaps) */
                        s->done   = 1;
                        last_seen = now;
                } else if (m->err) {
                        snprintf(err, errsz, "partition %d: %s",
                                 (int)m->partition, rd_kafka_message_errstr(m));
                        rd_kafka_message_destroy(m);
                        r->stopped_by = "error";
                        return 1;
                } else if (!s->done && m->offset < s->end) {
                        cb(opaque, m);
                        s->records++;
                        s->last = m->offset;
                        r->records++;
                        last_seen = now;
                        if (m->offset + 1 >= s->end)
                                s->done = 1;
                } else {
                        s->done = 1; /* past the end taken at the start */
                }
                rd_kafka_message_destroy(m);
        }
        if (r->progress)
                progress(r, started, 1);
        return strcmp(r->stopped_by, "end") != 0;
}

int ks_scan_rewind(ks_scan_reader_t *r, const int64_t *ends, char *err,
                   size_t errsz)
{
        rd_kafka_topic_partition_list_t *tl;
        rd_kafka_resp_err_t              e;
        int32_t                          p;

        rd_kafka_message_t *m;

        /* the previous pass's assignment and whatever it fetched go first
         * (a stale end-of-partition event would end a partition early) */
        rd_kafka_assign(r->rk, NULL);
        while ((m = rd_kafka_consumer_poll(r->rk, 0)))
                rd_kafka_message_destroy(m);
        r->records = r->to_read = 0;
        tl = rd_kafka_topic_partition_list_new(r->partition_count);
        for (p = 0; p < r->partition_count; p++) {
                ks_scan_part_t *s = &r->parts[p];
                if (ends && ends[p] >= 0 && ends[p] < s->end)
                        s->end = ends[p] < s->start ? s->start : ends[p];
                s->records = 0;
                s->last    = -1;
                s->done    = s->start >= s->end;
                if (s->done)
                        continue;
                r->to_read += (uint64_t)(s->end - s->start);
                rd_kafka_topic_partition_list_add(tl, r->topic, p)->offset =
                    s->start;
        }
        if (!r->to_read) {
                rd_kafka_topic_partition_list_destroy(tl);
                snprintf(err, errsz, "nothing to read in the range");
                return 1;
        }
        e = rd_kafka_assign(r->rk, tl);
        rd_kafka_topic_partition_list_destroy(tl);
        if (e) {
                snprintf(err, errsz, "assign() failed: %s",
                         rd_kafka_err2str(e));
                return 1;
        }
        return 0;
}

void ks_scan_close(ks_scan_reader_t *r)
{
        if (r->rk) {
                rd_kafka_consumer_close(r->rk);
                rd_kafka_destroy(r->rk);
        }
        free(r->parts);
        r->rk    = NULL;
        r->parts = NULL;
}
