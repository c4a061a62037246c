/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_config.h
 * @brief keyshift.* properties: parsing, validation and defaults.
 *
 * The accepted values and defaults are listed in include/keyshift/keyshift.h.
 * A ks_config_t belongs to one librdkafka configuration object; it is
 * written on the application thread calling rd_kafka_conf_set() and read
 * after rd_kafka_new(), so it needs no lock.
 */
#ifndef KS_CONFIG_H
#define KS_CONFIG_H

#include <regex.h>
#include <stddef.h>
#include <stdint.h>

#include "keyshift/keyshift.h"
#include "ks_sizing.h"

typedef enum ks_config_res {
        KS_CONFIG_OK = 0,
        KS_CONFIG_INVALID, /**< a keyshift.* property with a bad value, or
                             *   an unknown keyshift.* name */
        KS_CONFIG_UNKNOWN, /**< not a keyshift.* property */
} ks_config_res_t;

/** keyshift.memory.max.mb's largest value (MiB). */
#define KS_MEMORY_MAX_MB_MAX 65536

/** keyshift.hot.keys' largest value (hot keys listed per topic). */
#define KS_CONFIG_HOT_KEYS_MAX 1000

/** keyshift.key.sample.size's and keyshift.mixed.sample.size's largest
 *  value (keys). A report's sketch capacities never exceed what these
 *  allow (ks_topic.h, KS_TOPIC_SAMPLE_MAX), and readers refuse larger
 *  ones rather than allocate what a file says. */
#define KS_CONFIG_SAMPLE_MAX 1048576

/** keyshift.flow.max.cells' largest value (cells of one flow matrix). */
#define KS_CONFIG_FLOW_CELLS_MAX 1048576

/** keyshift.key.sample.size's and keyshift.mixed.sample.size's smallest
 *  value (keys); a memory budget never shrinks a sketch below it either
 *  (ks_budget.h). */
#define KS_CONFIG_SAMPLE_MIN 64

/** keyshift.report.interval.ms: 0 (only at shutdown), else within these
 *  (ms). A report is a whole snapshot written to disk: more often than
 *  ten times a second costs the producer's machine more than it tells. */
#define KS_CONFIG_INTERVAL_MIN_MS 100
#define KS_CONFIG_INTERVAL_MAX_MS 86400000

/** keyshift.topics.max's largest value (topics analysed). */
#define KS_CONFIG_TOPICS_MAX_MAX 100000

/** keyshift.metadata.refresh.ms' bounds (ms). */
#define KS_CONFIG_REFRESH_MIN_MS 100
#define KS_CONFIG_REFRESH_MAX_MS 3600000

/** The defaults (docs/properties.md): a report a minute, 20 hot keys,
 *  4,096 sampled keys, 2,048 sampled logical keys, 1,000 topics, 64 MiB,
 *  metadata every 10 s, flows up to 65,536 cells, 2 s for the last
 *  records of keyshift.report.topic at destroy. */
#define KS_CONFIG_DEFAULT_INTERVAL_MS 60000
#define KS_CONFIG_DEFAULT_HOT_KEYS 20
#define KS_CONFIG_DEFAULT_KEY_SAMPLE 4096
#define KS_CONFIG_DEFAULT_MIXED_SAMPLE 2048
#define KS_CONFIG_DEFAULT_TOPICS_MAX 1000
#define KS_CONFIG_DEFAULT_MEMORY_MB 64
#define KS_CONFIG_DEFAULT_REFRESH_MS 10000
#define KS_CONFIG_DEFAULT_FLOW_CELLS 65536
#define KS_CONFIG_DEFAULT_FLUSH_MS 2000

typedef struct ks_config {
        int     enable;
        int32_t proposed[KEYSHIFT_PROPOSED_MAX]; /**< partition counts */
        size_t  proposed_cnt;     /**< 0: twice each topic's current count */
        size_t  proposed_dups;    /**< counts given again, dropped (the
                                   *   first report says so) */
        int32_t current_override; /**< 0: from metadata */
        char   *report_path;      /**< template, never NULL */
        char   *metrics_path;     /**< template; NULL: no metrics file */
        int64_t report_interval_ms;
        char   *topics_regex; /**< NULL: every topic */
        regex_t topics_re;    /**< compiled topics_regex */
        int     hot_keys;
        int     key_sample_size;
        int     mixed_sample_size;
        int     topics_max;
        int     memory_max_mb; /**< all topics' sketches, MiB */
        int64_t metadata_refresh_ms;
        int64_t flow_max_cells;
        int     partitioner; /**< ks_partitioner_t, or -1: the producer's own */
        int     overload_analyse;  /**< keyshift.overload: 1 analyse, 0 skip */
        ks_sizing_params_t sizing; /**< sizing inputs (ks_sizing.h) */
        int sizing_metadata_age_set; /**< else: the producer's own */
        /* keyshift.report.topic (issue 32): NULL, off */
        char   *report_topic;
        int64_t report_topic_flush_ms; /**< at destroy, at most this long */
        /** keyshift.report.topic.X=V for the report producer: "X", "V",
         *  ... (report_topic_prop_cnt pairs, 2 strings each); later
         *  settings of one X replace earlier ones */
        char **report_topic_props;
        size_t report_topic_prop_cnt;
} ks_config_t;

/** The prefix of the report producer's own librdkafka properties. */
#define KS_CONFIG_REPORT_TOPIC_PREFIX "keyshift.report.topic."

/** @returns 1 if @p name is keyshift.report.topic.X for a librdkafka
 *           property X (not one of keyshift's own report-topic
 *           properties): its value is for the report producer, which the
 *           plugin checks with librdkafka. */
int ks_config_is_report_topic_prop(const char *name);

/** @returns 1 if librdkafka property @p x may not be set for the report
 *           producer: plugin.library.paths, interceptors, callbacks and
 *           keyshift's own (they would load code into it or reach the
 *           host's). */
int ks_config_report_prop_refused(const char *x);

/** @brief Sets every property to its default. @returns 0, -1 on ENOMEM. */
int ks_config_init(ks_config_t *conf);

/** @brief Frees what ks_config_init() and ks_config_set() allocated. */
void ks_config_destroy(ks_config_t *conf);

/** @brief dst := a deep copy of src (dst must not be initialised).
 *  @returns 0, -1 on ENOMEM. */
int ks_config_copy(ks_config_t *dst, const ks_config_t *src);

/**
 * @brief Sets property @p name to @p value.
 * @returns KS_CONFIG_OK; KS_CONFIG_INVALID with @p errstr naming the
 *          property and the accepted values, or, for an unknown keyshift.*
 *          name, the name (up to 64 characters), the closest known
 *          property (up to 3 edits) and where the list is, in under 256
 *          bytes; KS_CONFIG_UNKNOWN (errstr untouched) when @p name is not
 *          a keyshift.* property.
 */
ks_config_res_t ks_config_set(ks_config_t *conf, const char *name,
                              const char *value, char *errstr,
                              size_t errstr_size);

/**
 * @brief The @p i-th keyshift.* property the plugin accepts (its own, then
 *        the sizing inputs, core/report/ks_sizing.h), for listings: the
 *        `keyshift config` command and the Python module's checks.
 * @param name     set to the property's name ("keyshift.hot.keys")
 * @param accepted set to what it accepts, as its errors say
 * @returns 1 while @p i is a property, 0 past the last.
 * @locality any thread (constant tables).
 */
int ks_config_property(size_t i, const char **name, const char **accepted);

/** @returns 1 if topic @p name is analysed under keyshift.topics. */
int ks_config_topic_selected(const ks_config_t *conf, const char *name);

/**
 * @brief Expands the report path template: %c = @p client_id (characters
 *        other than [A-Za-z0-9._-] become '_'), %p = @p pid, %% = '%'.
 * @returns 0, -1 when @p size is too small.
 */
int ks_config_report_path(const ks_config_t *conf, const char *client_id,
                          long pid, char *out, size_t size);

/** @brief ks_config_report_path() of any template @p tmpl (a checked
 *         one: keyshift.metrics.path's). */
int ks_config_expand_path(const char *tmpl, const char *client_id, long pid,
                          char *out, size_t size);

#endif /* KS_CONFIG_H */
