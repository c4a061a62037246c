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
                        size_t          cap = r->cap ? 2 * r->cap : 64;
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
        char              errstr[512];
        rd_kafka_t       *rk;
        rd_kafka_topic_t *rkt  = NULL;
        rd_kafka_queue_t *q    = NULL;
        int64_t          *high = NULL, last = mono_ms();
        char             *done = NULL, *started = NULL;
        int32_t           p, n = 0, left = 0;
        int               rc = -1;

        memset(out, 0, sizeof(*out));
        rd_kafka_conf_set(conf, "enable.partition.eof", "true", NULL, 0);
        if (!(rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, errstr,
                                sizeof(errstr)))) {
                rd_kafka_conf_destroy(conf);
                snprintf(err, errsz, "cannot create the consumer: %s", errstr);
                return -1;
        }
        if ((n = partitions_of(rk, topic, timeout_ms, err, errsz)) < 0)
                goto done;
        high    = calloc((size_t)n, sizeof(*high));
        done    = calloc((size_t)n, 1);
        started = calloc((size_t)n, 1);
        rkt     = rd_kafka_topic_new(rk, topic, NULL);
        q       = rd_kafka_queue_new(rk);
        if (!high || !done || !started || !rkt || !q) {
                snprintf(err, errsz, "out of memory");
                goto done;
        }
        for (p = 0; p < n; p++) {
                int64_t             low;
                rd_kafka_resp_err_t e = rd_kafka_query_watermark_offsets(
                    rk, topic, p, &low, &high[p], timeout_ms);
                if (e) {
                        snprintf(err, errsz,
                                 "%s [%d]: no watermarks within %d ms: %s",
                                 topic, (int)p, timeout_ms,
                                 rd_kafka_err2str(e));
                        goto done;
                }
                if (high[p] <= low) {
                        done[p] = 1;
                        continue;
                }
                if (rd_kafka_consume_start_queue(rkt, p, low, q) == -1) {
                        snprintf(err, errsz, "cannot read %s [%d]: %s", topic,
                                 (int)p,
                                 rd_kafka_err2str(rd_kafka_last_error()));
                        goto done;
                }
                started[p] = 1;
                left++;
        }
        while (left > 0) {
                rd_kafka_message_t *m = rd_kafka_consume_queue(q, 100);
                if (!m) {
                        if (mono_ms() - last > timeout_ms) {
                                snprintf(err, errsz,
                                         "%s: no record for %d ms before "
                                         "its end (%d partitions left)",
                                         topic, timeout_ms, (int)left);
                                goto done;
                        }
                        continue;
                }
                last = mono_ms();
                if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
                        /* compaction may leave gaps before the end */
                        if (m->partition >= 0 && m->partition < n &&
                            !done[m->partition] &&
                            m->offset >= high[m->partition]) {
                                done[m->partition] = 1;
                                left--;
                        }
                } else if (m->err) {
                        snprintf(err, errsz, "%s: %s", topic,
                                 rd_kafka_message_errstr(m));
                        rd_kafka_message_destroy(m);
                        goto done;
                } else if (m->partition >= 0 && m->partition < n &&
                           m->offset < high[m->partition]) {
                        out->records++;
                        if (m->key && keep(out, m)) {
                                snprintf(err, errsz, "out of memory");
                                rd_kafka_message_destroy(m);
                                goto done;
                        }
                        if (m->offset + 1 >= high[m->partition] &&
                            !done[m->partition]) {
                                done[m->partition] = 1;
                                left--;
                        }
                        if (progress && out->records % 1000 == 0)
                                fprintf(stderr,
                                        "\rfleet: %" PRIu64 " records read",
                                        out->records);
                }
                rd_kafka_message_destroy(m);
        }
        if (progress)
                fprintf(stderr, "\rfleet: %" PRIu64 " records read\n",
                        out->records);
        rc = 0;
done:
        for (p = 0; started && p < n; p++)
                if (started[p])
                        rd_kafka_consume_stop(rkt, p);
        if (q)
                rd_kafka_queue_destroy(q);
        if (rkt)
                rd_kafka_topic_destroy(rkt);
        free(high);
        free(done);
        free(started);
        rd_kafka_destroy(rk);
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
