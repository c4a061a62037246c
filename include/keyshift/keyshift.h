/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file keyshift.h
 * @brief keyshift: rehearse a Kafka partition increase on live producer
 *        traffic. Public declarations.
 *
 * keyshift is a librdkafka plugin. It has no API to call: a producer loads
 * it by configuration, before any keyshift.* property:
 *
 *     plugin.library.paths=libkeyshift          (or a full path)
 *     keyshift.partitions.proposed=12,24        (optional, see below)
 *
 * The shared object exports exactly one symbol, librdkafka's plugin entry
 * point `conf_init` (rd_kafka_plugin_f_conf_init_t). Everything else here is
 * the contract between the plugin, its report and its users: the property
 * names with their accepted values and defaults, and the report schema id.
 *
 * Properties (all refused at rd_kafka_conf_set() time with
 * RD_KAFKA_CONF_INVALID and an errstr naming the property and the accepted
 * values; an unknown keyshift.* name is refused too):
 *
 * | property                      | accepted                    | default |
 * |-------------------------------|-----------------------------|---------|
 * | keyshift.enable               | true, false                 | true    |
 * | keyshift.partitions.proposed  | counts 1..100000, comma-separated, at most 8 | 2 x current |
 * | keyshift.partitions.current   | 1..100000; overrides metadata | (metadata) |
 * | keyshift.report.path          | file path template: %c client.id, %p pid, %% | keyshift-%c-%p.json |
 * | keyshift.metrics.path         | "" (none), or a template ending in .prom: Prometheus metrics beside each report (docs/metrics.md) | "" |
 * | keyshift.report.interval.ms   | 0 (only at shutdown), or 100 .. 86400000 | 60000 |
 * | keyshift.topics               | POSIX extended regex of topics to analyse | (all) |
 * | keyshift.hot.keys             | 0..1000 hot keys reported per topic | 20 |
 * | keyshift.key.sample.size      | 64..1048576 keys in the distinct-key sample | 4096 |
  * | keyshift.mixed.sample.size    | 64..1048576 logical keys sampled for mixed serializers | 2048 |
 * | keyshift.topics.max           | 1..100000 topics analysed per producer | 1000 |
 * | keyshift.memory.max.mb        | 1..65536 MiB for all topics' sketches; a new topic's sample sizes shrink to its share (README "Memory") | 64 |
 * | keyshift.metadata.refresh.ms  | 100..3600000 ms between metadata refreshes | 10000 |
 * | keyshift.flow.max.cells       | 0..1048576 cells of a current x proposed flow matrix (8 B each) | 65536 |
 * | keyshift.* sizing inputs     | see ks_sizing.c / README "Sizing inputs" | |
 * | keyshift.partitioner          | a librdkafka partitioner name; for a producer that sets `partitioner` per topic (e.g. kcat -X partitioner=...) | the producer's `partitioner` |
 */
#ifndef KEYSHIFT_KEYSHIFT_H
#define KEYSHIFT_KEYSHIFT_H

/** The report's `schema` field. */
#define KEYSHIFT_REPORT_SCHEMA "keyshift.report.v2"

/** Largest partition count accepted anywhere (Kafka has no hard limit;
 *  this bounds keyshift's memory per topic). */
#define KEYSHIFT_PARTITIONS_MAX 100000

/** Most proposed counts analysed per topic. */
#define KEYSHIFT_PROPOSED_MAX 8

#endif /* KEYSHIFT_KEYSHIFT_H */
