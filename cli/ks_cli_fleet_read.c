/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli_fleet_read.c
 * @brief The report topic read to its end, the latest record of each key
 *        kept (ks_cli_fleet.h).
 */
#include "ks_cli_fleet.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/** How long one wait for a record lasts (ms): the timeout is checked
 *  between waits. */
#define KS_FLEET_POLL_MS 100
/** The progress line is redrawn every this many records. */
#define KS_FLEET_PROGRESS_EVERY 1000
/** The records' table starts this big, and doubles. */
#define KS_FLEET_RECS_FIRST_CAP 64

static int64_t mono_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/** @brief Keeps @p m as its key's latest (a later offset of the same
 *         partition: keys are partitioned, so this is the key's order).
 *  @returns 0, -1 on ENOMEM. */
static int keep(ks_fleet_read_t *r, const rd_kafka_message_t *m)
{
        ks_fleet_rec_t           *rec = NULL;
        const json_t             *at;
        rd_kafka_timestamp_type_t tt;

        if (!r->index && !(r->index = json_object()))
                return -1;
        if ((at = json_object_getn(r->index, m->key, m->key_len)))
                rec = &r->recs[json_integer_value(at)];
        if (!rec) {
                if (r->cnt == r->cap) {
                        size_t cap =
                            r->cap ? 2 * r->cap : KS_FLEET_RECS_FIRST_CAP;
                        ks_fleet_rec_t *n = realloc(r->recs, cap * sizeof(*n));
                        if (!n)
                                return -1;
                        r->recs = n;
                        r->cap  = cap;
                }
                rec = &r->recs[r->cnt];
                memset(rec, 0, sizeof(*rec));
                if (!(rec->key = strndup(m->key, m->key_len)) ||
                    json_object_setn_new_nocheck(
                        r->index, m->key, m->key_len,
                        json_integer((json_int_t)r->cnt))) {
                        free(rec->key);
                        return -1;
                }
                r->cnt++;
        }
        free(rec->value);
        rec->value     = NULL;
        rec->value_len = 0;
        if (m->payload) {
                if (!(rec->value = malloc(m->len + 1)))
                        return -1;
                memcpy(rec->value, m->payload, m->len);
                rec->value[m->len] = '\0';
                rec->value_len     = m->len;
        }
        rec->partition    = m->partition;
        rec->offset       = m->offset;
        rec->timestamp_ms = rd_kafka_message_timestamp(m, &tt);
        return 0;
}

/** @returns the partition count of @p topic, or -1 with @p err set. */
static int partitions_of(rd_kafka_t *rk, const char *topic, int timeout_ms,
                         char *err, size_t errsz)
{
        rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, topic, NULL);
        const struct rd_kafka_metadata *md = NULL;
        rd_kafka_resp_err_t             e;
        int                             n = -1;

        e = rd_kafka_metadata(rk, 0, rkt, &md, timeout_ms);
        if (e)
                snprintf(err, errsz, "no metadata for %s within %d ms: %s",
                         topic, timeout_ms, rd_kafka_err2str(e));
        else if (md->topic_cnt != 1 || md->topics[0].err)
                snprintf(err, errsz,
                         "report topic %s: %s (do producers set "
                         "keyshift.report.topic=%s?)",
                         topic,
                         md->topic_cnt ? rd_kafka_err2str(md->topics[0].err)
                                       : "not in the metadata",
                         topic);
        else
                n = md->topics[0].partition_cnt;
        if (md)
                rd_kafka_metadata_destroy(md);
        rd_kafka_topic_destroy(rkt);
        return n;
}

/** One read of the report topic: the consumer and each partition's
 *  progress. */
typedef struct ks_fleet_consumer {
        rd_kafka_t       *rk;
        rd_kafka_topic_t *rkt;
        rd_kafka_queue_t *q;
        const char       *topic;
        int               timeout_ms;
        int32_t           n;       /**< the topic's partitions */
        int64_t          *high;    /**< each one's high watermark */
        char             *done;    /**< 1: read to its high watermark */
        char             *started; /**< 1: consume started */
        int32_t           left;    /**< partitions started, not done */
} ks_fleet_consumer_t;

/**
 * @brief Starts reading each partition of @p c's topic from its low
 *        watermark, up to the high watermark it has now (an empty one is
 *        done already).
 * @returns 0, or -1 with @p err set.
 */
static int start_partitions(ks_fleet_consumer_t *c, char *err, size_t errsz)
{
        int32_t p;

        for (p = 0; p < c->n; p++) {
                int64_t             low;
                rd_kafka_resp_err_t e = rd_kafka_query_watermark_offsets(
                    c->rk, c->topic, p, &low, &c->high[p], c->timeout_ms);
                if (e) {
                        snprintf(err, errsz,
                                 "%s [%d]: no watermarks within %d ms: %s",
                                 c->topic, (int)p, c->timeout_ms,
                                 rd_kafka_err2str(e));
                        return -1;
                }
                if (c->high[p] <= low) {
                        c->done[p] = 1;
                        continue;
                }
                if (rd_kafka_consume_start_queue(c->rkt, p, low, c->q) == -1) {
                        snprintf(err, errsz, "cannot read %s [%d]: %s",
                                 c->topic, (int)p,
                                 rd_kafka_err2str(rd_kafka_last_error()));
                        return -1;
                }
                c->started[p] = 1;
                c->left++;
        }
        return 0;
}

/** @brief Marks partition @p p of @p c done (once). */
static void partition_done(ks_fleet_consumer_t *c, int32_t p)
{
        if (!c->done[p]) {
                c->done[p] = 1;
                c->left--;
        }
}

/**
 * @brief Takes message @p m: a record below its partition's high
 *        watermark is counted and kept (keep()), an end of partition at
 *        the high watermark marks it done (compaction may leave gaps
 *        before the end).
 * @returns 0, or -1 with @p err set.
 */
static int take_message(ks_fleet_consumer_t *c, const rd_kafka_message_t *m,
                        int progress, ks_fleet_read_t *out, char *err,
                        size_t errsz)
{
        int in = m->partition >= 0 && m->partition < c->n;

        if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
                if (in && m->offset >= c->high[m->partition])
                        partition_done(c, m->partition);
                return 0;
        }
        if (m->err) {
                snprintf(err, errsz, "%s: %s", c->topic,
                         rd_kafka_message_errstr(m));
                return -1;
        }
        if (!in || m->offset >= c->high[m->partition])
                return 0;
        out->records++;
        if (m->key && keep(out, m)) {
                snprintf(err, errsz, "out of memory");
                return -1;
        }
        if (m->offset + 1 >= c->high[m->partition])
                partition_done(c, m->partition);
        if (progress && out->records % KS_FLEET_PROGRESS_EVERY == 0)
                fprintf(stderr, "\rfleet: %" PRIu64 " records read",
                        out->records);
        return 0;
}

/**
 * @brief Reads @p c's started partitions to their high watermarks into
 *        @p out, a progress line on stderr when @p progress.
 * @returns 0, or -1 with @p err set (an error, or no record for the
 *          timeout before the end).
 */
static int read_to_end(ks_fleet_consumer_t *c, int progress,
                       ks_fleet_read_t *out, char *err, size_t errsz)
{
        int64_t last = mono_ms();

        while (c->left > 0) {
                rd_kafka_message_t *m =
                    rd_kafka_consume_queue(c->q, KS_FLEET_POLL_MS);
                int r;
                if (!m) {
                        if (mono_ms() - last > c->timeout_ms) {
                                snprintf(err, errsz,
                                         "%s: no record for %d ms before "
                                         "its end (%d partitions left)",
                                         c->topic, c->timeout_ms, (int)c->left);
                                return -1;
                        }
                        continue;
                }
                last = mono_ms();
                r    = take_message(c, m, progress, out, err, errsz);
                rd_kafka_message_destroy(m);
                if (r)
                        return -1;
        }
        if (progress)
                fprintf(stderr, "\rfleet: %" PRIu64 " records read\n",
                        out->records);
        return 0;
}

/** @brief Stops and frees what @p c started and holds. */
static void consumer_close(ks_fleet_consumer_t *c)
{
        int32_t p;

        for (p = 0; c->started && p < c->n; p++)
                if (c->started[p])
                        rd_kafka_consume_stop(c->rkt, p);
        if (c->q)
                rd_kafka_queue_destroy(c->q);
        if (c->rkt)
                rd_kafka_topic_destroy(c->rkt);
        free(c->high);
        free(c->done);
        free(c->started);
        rd_kafka_destroy(c->rk);
}

/**
 * The records are read with librdkafka's queue-based consumer
 * (rd_kafka_consume_start_queue(), "simple consumer" in librdkafka's
 * INTRODUCTION.md), not assign(): assign() needs a group.id, and a
 * consumer with a group.id asks for its coordinator (FindCoordinator),
 * which needs Describe on the group. So `keyshift fleet` needs only
 * Describe and Read on the report topic (docs/using.md, "Many producers";
 * test broker.fleet_sasl), and no group at all.
 */
int ks_fleet_read(rd_kafka_conf_t *conf, const char *topic, int timeout_ms,
                  int progress, ks_fleet_read_t *out, char *err, size_t errsz)
{
        ks_fleet_consumer_t c = {.topic = topic, .timeout_ms = timeout_ms};
        char                errstr[512];
        int                 rc = -1;

        memset(out, 0, sizeof(*out));
        rd_kafka_conf_set(conf, "enable.partition.eof", "true", NULL, 0);
        if (!(c.rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, errstr,
                                  sizeof(errstr)))) {
                rd_kafka_conf_destroy(conf);
                snprintf(err, errsz, "cannot create the consumer: %s", errstr);
                return -1;
        }
        if ((c.n = partitions_of(c.rk, topic, timeout_ms, err, errsz)) < 0) {
                c.n = 0;
                goto done;
        }
        c.high    = calloc((size_t)c.n, sizeof(*c.high));
        c.done    = calloc((size_t)c.n, 1);
        c.started = calloc((size_t)c.n, 1);
        c.rkt     = rd_kafka_topic_new(c.rk, topic, NULL);
        c.q       = rd_kafka_queue_new(c.rk);
        if (!c.high || !c.done || !c.started || !c.rkt || !c.q) {
                snprintf(err, errsz, "out of memory");
                goto done;
        }
        if (!start_partitions(&c, err, errsz) &&
            !read_to_end(&c, progress, out, err, errsz))
                rc = 0;
done:
        consumer_close(&c);
        if (rc)
                ks_fleet_read_free(out);
        return rc;
}

void ks_fleet_read_free(ks_fleet_read_t *r)
{
        size_t i;

        for (i = 0; i < r->cnt; i++) {
                free(r->recs[i].key);
                free(r->recs[i].value);
        }
        free(r->recs);
        json_decref(r->index);
        memset(r, 0, sizeof(*r));
}
