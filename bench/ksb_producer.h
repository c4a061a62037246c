/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ksb_producer.h
 * @brief Real librdkafka producers for the A/B benchmarks: A without
 *        keyshift, B with libkeyshift.so loaded through
 *        `plugin.library.paths=<full path>`, otherwise configured alike.
 *
 * Two set-ups:
 *  - queue only: `bootstrap.servers=127.0.0.1:1` (nothing listens),
 *    `queue.buffering.max.messages` 10 million, `message.timeout.ms` 0
 *    (never): produce() only enqueues, so what is timed is the application
 *    thread's own cost. keyshift is told the count
 *    (`keyshift.partitions.current=6`), as metadata would, so each message
 *    takes the full analysis path rather than the cheaper "waiting for the
 *    count" one;
 *  - mock cluster: librdkafka's embedded mock cluster
 *    (`test.mock.num.brokers=1`, topic created with 6 partitions): messages
 *    are really delivered and acknowledged, and keyshift learns the count
 *    from metadata as in production.
 * B also gets `keyshift.partitions.proposed=12,16,24` (3 proposed counts)
 * and `keyshift.report.interval.ms=0` (a report only at shutdown).
 */
#ifndef KSB_PRODUCER_H
#define KSB_PRODUCER_H

#include <librdkafka/rdkafka.h>

#include "ksb_keys.h"

typedef enum ksb_setup {
        KSB_QUEUE_ONLY,
        KSB_MOCK_CLUSTER,
        KSB_BROKER, /**< a real cluster at ksb_bootstrap: as the mock
                     *   cluster, the topic created (6 partitions) by
                     *   ksb_topic_create() */
} ksb_setup_t;

/** bootstrap.servers of KSB_BROKER. */
extern const char *ksb_bootstrap;

/** @brief Creates @p topic with @p partitions partitions (replication 1) on
 *         ksb_bootstrap through the Admin API; dies on failure. */
void ksb_topic_create(const char *topic, int partitions);

/** keyshift.partitioner for B, or NULL (the default: keyshift learns the
 *  partitioner from the deliveries, ks_learn.h; queue-only, it analyses
 *  each message under every candidate until 1 M messages a topic). */
extern const char *ksb_keyshift_partitioner;

/**
 * The bracket: producers made while ksb_bracket is set get two on_send
 * interceptors of the bench's own, "ksb-open" registered before
 * `plugin.library.paths` is set and "ksb-close" after it, so librdkafka
 * calls them in that order around keyshift's on_send (interceptors run in
 * the order they were added). Each reads the TSC; the ticks between them
 * add up per thread (ksb_bracket_take()). A producer without keyshift gets
 * the same pair with nothing between: its ticks are the bracket's own
 * cost, which the difference removes. So keyshift's on_send is timed on
 * the producing thread inside the real produce(), and nothing else that
 * thread does (librdkafka's own work, its lock waits) enters the figure.
 */
extern int ksb_bracket;

/** > 0: a producer asked for with a plugin gets, instead of keyshift, an
 *  on_send between the bracket's two that spins this many nanoseconds on
 *  the TSC: a known cost the measurement must find (calibration). */
extern double ksb_spin_ns;

/** Set: a producer asked for with a plugin gets, instead of keyshift, the
 *  floor (ksb_producer.c): an on_send that hashes the key with zlib's
 *  CRC-32 and counts it per partition under 4 counts, inline. What exact
 *  per-message figures cost at least, in the same measurement. */
extern int ksb_floor;

/** @returns the calling thread's TSC ticks spent spinning (ksb_spin_ns)
 *           by the spin's own clock since its last call, and starts again:
 *           the calibration's known part (the rest of what the bracket
 *           finds is librdkafka calling one more interceptor). */
uint64_t ksb_spin_take(void);

/** @returns the calling thread's TSC ticks inside brackets since its last
 *           call (0 at its first), and starts counting again. A bracket
 *           over 20 us held a preemption and counts as the mean of the
 *           others. */
uint64_t ksb_bracket_take(void);

/** @returns the plugin's full path: $KS_PLUGIN, else the path compiled
 *           in (KSB_PLUGIN), else dies. */
const char *ksb_plugin_path(void);

/**
 * @brief Creates a producer.
 * @param plugin the plugin's path for B, NULL for A.
 * @param report_path where B writes its report (NULL: /tmp).
 * @returns the producer; dies on any refusal.
 */
rd_kafka_t *ksb_producer_new(ksb_setup_t setup, const char *plugin,
                             const char *topic, const char *report_path);

/** @brief Drops every queued message (purge, then serve the purge's
 *         delivery reports) so memory stays flat between blocks. */
void ksb_producer_drain(rd_kafka_t *rk);

/** Bytes of every message's value ('v's). */
#define KSB_VALUE_LEN 64

/** @brief Produces @p k's key with a KSB_VALUE_LEN-byte value to @p rkt
 *         (the partitioner's choice), serving the queue while it is full;
 *         dies on any other error. */
void ksb_produce_one(rd_kafka_t *rk, rd_kafka_topic_t *rkt, const ksb_key_t *k);

#endif /* KSB_PRODUCER_H */
