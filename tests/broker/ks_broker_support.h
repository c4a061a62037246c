/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_broker_support.h
 * @brief Helpers for the broker tests: the address of the real Kafka broker
 *        (started by ctest-fixture.sh, or KS_KAFKA_BOOTSTRAP), topic
 *        administration through librdkafka's Admin API, a producer that
 *        records the partition of every message from its delivery report,
 *        the key set (real AIS MMSIs plus random keys), the Java reference
 *        (java-oracle.sh) and the summary table the fixture prints.
 *
 * The oracles here are the broker's delivery reports and Java's
 * kafka-clients; keyshift's model functions are what is under test.
 *
 * Implemented in ks_broker_client.c (address, admin, producer),
 * ks_broker_acl.c (the SASL listener, ACLs),
 * ks_broker_keyset.c (key set) and ks_broker_support.c (the rest).
 *
 * @locality the test's main thread, except the delivery report callback
 *           (called from rd_kafka_poll()/rd_kafka_flush() on that thread).
 */
#ifndef KS_BROKER_SUPPORT_H
#define KS_BROKER_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

#include <librdkafka/rdkafka.h>

#include "ks_partitioner.h"

/** @returns the bootstrap address: $KS_KAFKA_BOOTSTRAP, else the one
 *           ctest-fixture.sh wrote to $KS_BROKER_STATE/bootstrap. Fails
 *           the test (fatal) with the reason when there is none. */
const char *ks_broker_bootstrap(void);

/** @returns a fresh topic name "keyshift-<tag>-<pid>-<n>" (static buffer
 *           per call: copy it). */
const char *ks_broker_topic_name(const char *tag, char *buf, size_t size);

/** @brief Removes a test's temporary directory (from ks_e2e_tmpdir())
 *         when no assertion has failed so far; else keeps it and says
 *         where it is. */
void ks_broker_tmpdir_done(const char *dir);

/** @returns seconds on the monotonic clock. */
double ks_broker_now_s(void);

/** @returns milliseconds since the epoch (wall clock, as report times). */
int64_t ks_broker_wall_ms(void);

/* ------------------------------------------------------------ admin */

/** @brief Creates @p topic with @p partitions partitions (replication: the
 *         cluster's default) and waits until metadata shows all of them
 *         with a leader. @returns 0, or -1 with the reason printed. */
int ks_broker_create_topic(const char *topic, int partitions);

/** @brief ks_broker_create_topic() with one topic config (e.g.
 *         cleanup.policy=compact); @p name NULL for none. */
int ks_broker_create_topic_config(const char *topic, int partitions,
                                  const char *name, const char *value);

/** @brief Sends CreatePartitions (the new total, as `kafka-topics --alter
 *         --partitions`) without waiting. @returns the queue the result
 *         arrives on (pass it to ks_broker_admin_result()), NULL on error. */
rd_kafka_queue_t *ks_broker_create_partitions_send(const char *topic,
                                                   int         total);

/** @brief Polls for an admin result on @p q for up to @p timeout_ms.
 *  @returns 1 when it succeeded (q is destroyed), 0 when it has not
 *           arrived yet, -1 on error (reason printed, q is destroyed). */
int ks_broker_admin_result(rd_kafka_queue_t *q, int timeout_ms);

/** @brief CreatePartitions, then waits until metadata shows @p total
 *         partitions, all led. @returns 0, or -1 (reason printed). */
int ks_broker_create_partitions(const char *topic, int total);

/** @brief Waits until the broker's metadata shows @p topic with exactly
 *         @p partitions partitions, all with a leader. @returns 0, or -1. */
int ks_broker_wait_partitions(const char *topic, int partitions,
                              int timeout_ms);

/** @brief Deletes @p topic (best effort: the broker is shared). */
void ks_broker_delete_topic(const char *topic);

/** @returns the tests' admin client (on the plaintext listener: a super
 *           user when the broker enforces ACLs), made at the first call. */
rd_kafka_t *ks_broker_admin(void);

/** @brief Destroys the admin client (at the end of a test program). */
void ks_broker_admin_close(void);

/* --------------------------------------------- SASL and ACLs (ks_broker_acl.c) */

/**
 * @returns the address of the broker's SASL_PLAINTEXT listener (mechanism
 *          PLAIN, the users of kafka_server_jaas.conf, ACLs enforced by
 *          StandardAuthorizer; server-sasl.properties):
 *          $KS_KAFKA_SASL_BOOTSTRAP, else the one ctest-fixture.sh wrote
 *          to $KS_BROKER_STATE/sasl_bootstrap. Fails the test (fatal) with
 *          the reason when there is none (KS_KAFKA_BOOTSTRAP without
 *          KS_KAFKA_SASL_BOOTSTRAP).
 */
const char *ks_broker_sasl_bootstrap(void);

/**
 * @brief Allows @p principal ("User:NAME") the @p n operations @p ops on
 *        the resource @p type named @p name (a literal name, any host),
 *        through the admin client, and waits (at most 30 s) until the
 *        broker's authorizer lists them (DescribeAcls).
 * @returns 0, or -1 with the reason printed.
 */
int ks_broker_acl_allow(const char *principal, rd_kafka_ResourceType_t type,
                        const char *name, const rd_kafka_AclOperation_t *ops,
                        size_t n);

/** @brief Deletes every ACL of @p principal (best effort: the cluster may
 *         be shared). */
void ks_broker_acl_delete(const char *principal);

/* --------------------------------------------------------- producer */

/** A producer on the real broker; delivery reports fill partition[] by
 *  message index (the message's opaque). */
typedef struct ks_broker_producer {
        rd_kafka_t *rk;
        size_t      msg_cap;
        int32_t    *partition; /**< [msg_cap], -1 until delivered */
        size_t      delivered;
        size_t      failed;
        int         first_err; /**< rd_kafka_resp_err_t of the first failure */
} ks_broker_producer_t;

/**
 * @brief Creates a producer from @p conf (bootstrap.servers is set here)
 *        for up to @p msg_cap messages. @returns 0, or -1 (reason
 *        printed; @p conf destroyed either way).
 */
int ks_broker_producer_new(ks_broker_producer_t *p, rd_kafka_conf_t *conf,
                           size_t msg_cap);

/** @brief Produces message @p idx (key NULL = NULL key), partitioner's
 *         choice, waiting while the queue is full. */
void ks_broker_produce(ks_broker_producer_t *p, const char *topic, size_t idx,
                       const void *key, size_t keylen, const void *value,
                       size_t len);

/** @brief Flushes (fails the test if messages remain after 60 s). */
void ks_broker_flush(ks_broker_producer_t *p);

/** @brief Flushes and destroys the client (keyshift writes its final
 *         report here); the partitions stay. */
void ks_broker_producer_close(ks_broker_producer_t *p);
void ks_broker_producer_free(ks_broker_producer_t *p);

/* ---------------------------------------------------------- key set */

/** One key: its bytes, or NULL. */
typedef struct ks_bkey {
        uint8_t *bytes;
        size_t   len;
        int      is_null;
        int      is_ais; /**< an MMSI from the AIS logs */
} ks_bkey_t;

/** One message: its key (index into keys) and value. */
typedef struct ks_bmsg {
        uint32_t key;
        uint32_t value_len;
        char    *value;
} ks_bmsg_t;

/** Distinct keys and the message stream over them. */
typedef struct ks_keyset {
        ks_bkey_t *keys;
        size_t     key_cnt, key_cap;
        ks_bmsg_t *msgs;
        size_t     msg_cnt, msg_cap;
        uint32_t  *table; /**< open addressing: key index + 1, 0 = free */
        size_t     table_size;
        size_t     ais_keys, ais_msgs;
} ks_keyset_t;

/** @returns 1 if @p p hashes key @p k (librdkafka's rule, CONFIGURATION.md
 *           `partitioner`: consistent_random and murmur2_random place NULL
 *           keys randomly (sticky), and consistent_random empty keys too;
 *           every other key is hashed). For these two partitioners only. */
int ks_broker_oracle_hashed(ks_partitioner_t p, const ks_bkey_t *k);

void ks_keyset_init(ks_keyset_t *ks);
void ks_keyset_free(ks_keyset_t *ks);

/** @returns the index of the key (added if new). key NULL = NULL key. */
uint32_t ks_keyset_key(ks_keyset_t *ks, const void *key, size_t len);

/** @returns the index of the key, or -1 if it is not in the set. */
long ks_keyset_find(const ks_keyset_t *ks, const void *key, size_t len);

/** @brief Adds one message with key @p key (from ks_keyset_key()). */
void ks_keyset_add_msg(ks_keyset_t *ks, uint32_t key, const char *value,
                       size_t len);

/**
 * @brief Adds every MMSI-keyed sentence of the AIS logs (all files
 *        of tests/data/ais, decoded with replay/ais_nmea.h) as a
 *        message keyed by the MMSI in decimal, as keyshift-replay keys it,
 *        valued by the sentence. @returns the messages added, or -1 if no
 *        file could be read.
 */
long ks_keyset_add_ais(ks_keyset_t *ks);

/**
 * @brief Adds @p n random keys (binary of 1..100 bytes, non-ASCII UTF-8,
 *        ASCII), 1..4 messages each, plus one empty key and @p nulls
 *        NULL-key messages, deterministically from @p seed; then shuffles
 *        the whole message stream (with the same seed).
 */
void ks_keyset_add_random(ks_keyset_t *ks, size_t n, size_t nulls,
                          uint64_t seed);

/** @returns the next number of a SplitMix64 stream (the tests' PRNG). */
uint64_t ks_broker_rand(uint64_t *state);

/* ------------------------------------------------------------- Java */

/**
 * @brief Runs tests/broker/java-oracle.sh with @p args, stdin from
 *        @p in_path (NULL: /dev/null), stdout to @p out_path. On failure
 *        prints its stderr and what is missing (Java, Maven).
 * @returns the script's exit status (0 = ok).
 */
int ks_broker_java(const char *args, const char *in_path, const char *out_path);

/* ---------------------------------------------------------- summary */

/** @brief Appends a line to this program's summary
 *         ($KS_BROKER_STATE/summary/<name>.md, printed by the fixture's
 *         cleanup) and to stdout. */
void ks_broker_summary(const char *name, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif /* KS_BROKER_SUPPORT_H */
