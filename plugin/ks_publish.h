/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_publish.h
 * @brief keyshift.report.topic: the producer's reports published to a
 *        Kafka topic, one record per reported topic, for `keyshift fleet`
 *        (issue 32; docs/using.md "Many producers").
 *
 * Records (docs/report-schema.md, "Report topic records"):
 *  - key: compact JSON {"v":1, "client_id", "host", "pid",
 *    "started_at_ms", "topic"}: the producer's identity and the topic;
 *    "topic" "" for the producer's own record (its report with
 *    `topics` {}), which says it is alive, or ended (`final` true);
 *  - value: a keyshift.report.v2 report holding that one topic (its
 *    `merge` sketches included) and the producer block, as the report
 *    file holds it: `keyshift merge` and `keyshift fleet` read it as a
 *    report.
 *
 * The record producer is an rd_kafka_t of keyshift's own, made with the
 * host's librdkafka (ks_rdk, ks_host.h) by the publisher thread
 * ("ks:publish") at the first report, never on the host's threads. Its
 * configuration is a new one (rd_kafka_conf_new(): no plugin, no
 * interceptor, none of the host's callbacks), with the host's
 * bootstrap.servers, security.protocol, sasl.*, ssl.* and client.rack as
 * the host set them, then every keyshift.report.topic.X. Its records never
 * reach the host's delivery reports or statistics.
 *
 * Never harms the host: the reporter hands records to a bounded queue
 * (KS_PUBLISH_QUEUE_MAX records; the oldest record of a key is replaced by
 * its newer one) and returns; a failure (cluster down, authorization,
 * topic missing, record too large, queue full) is logged once per cause
 * as REPORT_TOPIC_FAILED with librdkafka's error, and said in the next
 * report; every report then states the publishing so far
 * (producer.report_topic: records queued, delivered, failed, the last
 * error), so a final report says whether its producer's records went. At the host's destroy, ks_publish_destroy() waits at most
 * keyshift.report.topic.flush.ms for the final records.
 */
#ifndef KS_PUBLISH_H
#define KS_PUBLISH_H

#include <stddef.h>

#include <librdkafka/rdkafka.h>

#include "ks_config.h"
#include "ks_report.h"
#include "ks_warn.h"

/** Records waiting for the publisher thread, at most. */
#define KS_PUBLISH_QUEUE_MAX 4096

typedef struct ks_publish ks_publish_t;

/**
 * @brief Checks @p value of librdkafka property @p x for the report
 *        producer (keyshift.report.topic.X) with the host's librdkafka, on
 *        a scratch configuration.
 * @returns 0, or -1 with @p errstr "Invalid value ... for
 *          keyshift.report.topic.X: expected ... (librdkafka's error)".
 * @locality application thread in rd_kafka_conf_set().
 */
int ks_publish_check_property(const char *x, const char *value, char *errstr,
                              size_t errstr_size);

/**
 * @brief The publisher of one host producer: copies what it inherits from
 *        the host's configuration @p host_conf (no I/O, no thread yet).
 * @param client_id the host's client.id, for the records' key and logs
 * @param started_at_ms the host producer's creation (wall clock, ms)
 * @returns NULL when keyshift.report.topic is off (or on ENOMEM, logged).
 * @locality application thread in rd_kafka_new() (on_new).
 */
ks_publish_t *ks_publish_new(const rd_kafka_conf_t *host_conf,
                             const ks_config_t *kconf, const char *client_id,
                             int64_t started_at_ms);

/**
 * @brief Starts gathering the topics' texts of the report about to be
 *        written (those of an earlier report that was not published are
 *        forgotten). Does nothing for @p p NULL.
 * @locality the reporter thread; the application thread for the final
 *           report (rd_kafka_destroy()).
 */
void ks_publish_report_begin(ks_publish_t *p);

/**
 * @brief A ks_report_topics_t.on_text callback (@p arg: the
 *        ks_publish_t, NULL: nothing): copies topic @p name's text as
 *        written in the report (from its name to its closing brace) and
 *        its @p messages, for ks_publish_report(). @p text NULL (not
 *        kept), or ENOMEM here: the report is read back from its file
 *        instead.
 * @locality as ks_publish_report_begin().
 */
void ks_publish_topic_text(void *arg, const char *name, const char *text,
                           size_t len, uint64_t messages);

/**
 * @brief Queues the records of the report just written at @p report_path
 *        for the publisher thread, started here the first time. Returns
 *        at once. Does nothing for @p p NULL. Each topic's record is built
 *        from the texts the reporter wrote, gathered since
 *        ks_publish_report_begin() (no parsing: the report's @p head,
 *        without its closing brace, the topic's text, its messages and the
 *        report's @p warnings array, all as written); when they are not
 *        all there (@p head NULL, or ENOMEM), the file is read back and
 *        split per topic instead (jansson), which gives the same records
 *        as JSON. The records are remembered (a copy: as much memory
 *        again as the queued records): while the report is @p unchanged,
 *        the same records are queued again without any of that, so a
 *        producer whose figures stand costs a copy per interval.
 * @param head the report's head as written (ks_report_writer_t.keep_head),
 *        NULL: read the file back
 * @param warnings the report's `warnings` array as written
 *        (ks_report_writer_t.keep_warnings)
 * @param name the host producer's name, for log lines
 * @param unchanged 1: the file is the one of the last call (the reporter
 *        found nothing new, ks_reporter.c unchanged()); 0: a new report
 * @locality the reporter thread; the application thread for the final
 *           report (rd_kafka_destroy()).
 */
void ks_publish_report(ks_publish_t *p, const char *report_path,
                       const ks_report_text_t *head,
                       const ks_report_text_t *warnings, const char *name,
                       int unchanged);

/**
 * @brief What the next report says of publishing (producer.report_topic):
 *        records queued, delivered and failed since the producer started,
 *        the last error and when. The warning REPORT_TOPIC_FAILED is said
 *        once per cause; this says, in every report while it lasts,
 *        whether records keep failing.
 * @param err where the last error's text is copied (out->last_error
 *        points to it; out->topic is @p p's, valid while @p p is)
 * @returns 1 with @p out set, 0 for @p p NULL (keyshift.report.topic off).
 * @locality the reporter thread, or the final report's. @locks takes
 *           p->lock (counters only: no I/O).
 */
int ks_publish_state(ks_publish_t *p, ks_report_publish_t *out, char *err,
                     size_t errsz);

/** @brief Moves the REPORT_TOPIC_FAILED warnings raised since the last
 *         call into @p wl (each cause once in the producer's life).
 *  @locality the reporter thread, or the final report's. */
void ks_publish_take_warnings(ks_publish_t *p, ks_warn_list_t *wl);

/**
 * @brief Waits at most keyshift.report.topic.flush.ms for the queued and
 *        in-flight records, then stops the publisher thread, destroys the
 *        record producer (what is left is purged) and frees @p p.
 * @locality application thread in rd_kafka_destroy() (on_conf_destroy).
 */
void ks_publish_destroy(ks_publish_t *p);

#endif /* KS_PUBLISH_H */
