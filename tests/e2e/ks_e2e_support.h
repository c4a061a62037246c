/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_e2e_support.h
 * @brief Helpers for end-to-end tests: a real librdkafka producer with
 *        keyshift loaded by full path (as an operator would configure it)
 *        on librdkafka's mock cluster, and the report read back with
 *        jansson.
 */
#ifndef KS_E2E_SUPPORT_H
#define KS_E2E_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

/** @returns the plugin's full path ($KS_PLUGIN). */
const char *ks_e2e_plugin(void);

/** @returns a fresh empty directory under $TMPDIR (static buffer). */
const char *ks_e2e_tmpdir(const char *tag);

/**
 * @brief A configuration with plugin.library.paths set first, then the
 *        NULL-terminated name/value pairs. Fails the test on any refusal.
 */
rd_kafka_conf_t *ks_e2e_conf(const char *first_name, ...);

/** Delivery reports collected by the producer's dr_msg_cb. */
typedef struct ks_e2e_dr {
        int32_t partition;
        int     err;
        size_t  keylen;
        int     key_null;
        uint8_t key[128];
} ks_e2e_dr_t;

typedef struct ks_e2e_producer {
        rd_kafka_t  *rk;
        ks_e2e_dr_t *drs;
        size_t       dr_cnt, dr_cap;
} ks_e2e_producer_t;

/**
 * @brief Creates a producer from @p conf (mock cluster with one broker,
 *        topic @p topic created with @p partitions partitions).
 * @returns 0, or -1 with the reason printed.
 */
int ks_e2e_producer_new(ks_e2e_producer_t *p, rd_kafka_conf_t *conf,
                        const char *topic, int partitions);

/** @brief Produces one message (blocking on a full queue). key NULL = NULL
 *         key. partition -1 = partitioner's choice. */
void ks_e2e_produce(ks_e2e_producer_t *p, const char *topic, const void *key,
                    size_t keylen, int32_t partition, const void *value,
                    size_t len);

/** @brief Flushes and destroys the producer (the final report is written),
 *         keeping the delivery reports. */
void ks_e2e_producer_close(ks_e2e_producer_t *p);
void ks_e2e_producer_free(ks_e2e_producer_t *p);

/** @returns the parsed JSON file, or NULL (with the reason printed). */
json_t *ks_e2e_load_json(const char *path);

/** @returns integer at a '/'-separated path inside @p root (object keys,
 *           or array indexes), -1 if absent (fails the test). */
long long ks_e2e_int(json_t *root, const char *path);
json_t   *ks_e2e_get(json_t *root, const char *path);

/** @returns @p proposal's flow matrix as dense rows (@p rows of them: the
 *           current count), from `flow` or `flow_nonzero` (a new
 *           reference), or NULL when it has none or it is malformed. */
json_t *ks_e2e_flow(json_t *proposal, long long rows);

/** @returns topic @p topic's `hot_keys` as an array of objects, one per
 *           key (a new reference), from the file's columns
 *           (ks_report_hot_keys_rows()) or as it is when already an
 *           array; NULL (failing the test) when malformed. */
json_t *ks_e2e_hot_keys(const json_t *topic);

/** @returns 1 if the warnings array @p warnings has code @p code. */
int ks_e2e_has_warning(json_t *warnings, const char *code);

/** @returns the message of the first warning with code @p code in the
 *           warnings array @p warnings (owned by it), or NULL. */
const char *ks_e2e_warning_message(json_t *warnings, const char *code);

/** @brief Runs a shell command, @returns its exit status (-1 on error). */
int ks_e2e_system(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
