/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ksb_topics.h
 * @brief keyshift's core set up as the plugin sets it up for one producer
 *        (plugin/ks_client.c ks_client_new()), so a benchmark can call the
 *        produce path (ks_client_on_send(): registry lookup, then
 *        ks_topic_record()) without librdkafka around it.
 */
#ifndef KSB_TOPICS_H
#define KSB_TOPICS_H

#include <stddef.h>
#include <stdint.h>

#include "ks_config.h"
#include "ks_registry.h"
#include "ks_report.h"
#include "ks_stage.h"
#include "ks_topic.h"

#include <pthread.h>
#include <stdatomic.h>

typedef struct ksb_topics {
        ks_config_t       conf;
        ks_topic_params_t params;
        ks_registry_t     reg;
        ks_stage_t       *stage; /**< as the plugin's producer has one */
        pthread_t         drainer;
        atomic_int        drainer_stop;
        uint64_t          drainer_cpu_ns; /**< the drainer thread's CPU */
} ksb_topics_t;

/**
 * @brief Sets keyshift.* properties (NULL-terminated name, value pairs;
 *        dies on a refused one) and derives the topic parameters exactly
 *        as ks_client_new() does for the default partitioner
 *        (consistent_random, sticky.partitioning.linger.ms 10).
 */
void ksb_topics_init(ksb_topics_t *kt, const char *const *props);
void ksb_topics_destroy(ksb_topics_t *kt);

/** @brief Creates (or finds) topic @p name with current count @p current
 *         as keyshift.partitions.current would. @returns the topic. */
ks_topic_t *ksb_topics_add(ksb_topics_t *kt, const char *name, int32_t current);

/** @brief The analysis of one message with partition UA on the calling
 *         thread: the registry lookup, then ks_topic_record() (what
 *         on_send falls back to when a ring is full; fills topics fast). */
void ksb_topics_send(ksb_topics_t *kt, const char *topic, const void *key,
                     size_t keylen, size_t value_len);

/** @brief What ks_client_on_send() does for one message with partition
 *         UA: the thread's last topic (else the registry), then
 *         ks_stage_push() into the calling thread's ring. */
void ksb_topics_on_send(ksb_topics_t *kt, const char *topic, const void *key,
                        size_t keylen, size_t value_len);

/** @brief Starts a drainer thread as plugin/ks_drainer.c runs it:
 *         ks_stage_drain(), then 1 ms of sleep (up to 5 ms when idle). */
void ksb_topics_drainer_start(ksb_topics_t *kt);

/** @brief Stops the drainer, drains what is left on the calling thread
 *         (as ks_client's shutdown does), and returns the CPU time in ns
 *         of the drainer thread and of that last drain (also in
 *         kt->drainer_cpu_ns). */
uint64_t ksb_topics_drainer_stop(ksb_topics_t *kt);

/** @returns report options as plugin/ks_reporter.c sets them (sizing
 *           from the configuration, the producer's queue limits as
 *           ksb_producer.c sets them), listing @p hot_keys hot keys. */
ks_report_opts_t ksb_topics_report_opts(const ksb_topics_t *kt, int hot_keys);

#endif /* KSB_TOPICS_H */
