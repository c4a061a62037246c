/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_client.h
 * @brief keyshift's state for one producer (rd_kafka_t): its topics, its
 *        configuration, and its reporter thread.
 *
 * Threads of keyshift's own: the reporter (metadata, periodic reports) and
 * the drainer, which analyses what on_send staged every 1 to 5 ms (it
 * never waits for the cluster or for a report, so the rings keep draining
 * while the reporter is busy).
 *
 * Life cycle (librdkafka v2.0.2 src/rdkafka.c):
 *  - created in on_new (application thread in rd_kafka_new());
 *  - on_send / on_acknowledgement count messages from then on;
 *  - on_destroy (librdkafka's main thread, while broker threads still run)
 *    stops and joins the reporter thread, the only keyshift code that
 *    calls into librdkafka;
 *  - acknowledgements may still arrive after on_destroy (messages purged
 *    at shutdown), so the state lives on until on_conf_destroy of the
 *    producer's configuration (rd_kafka_destroy_final(), after every
 *    librdkafka thread has stopped), which writes the final report and
 *    frees it.
 */
#ifndef KS_CLIENT_H
#define KS_CLIENT_H

#include <pthread.h>
#include <stdint.h>

#include <librdkafka/rdkafka.h>

#include "ks_config.h"
#include "ks_host.h"
#include "ks_publish.h"
#include "ks_registry.h"
#include "ks_stage.h"
#include "ks_topic.h"
#include "ks_warn.h"

/** Brokers whose state keyshift follows (beyond: assumed up). */
#define KS_BROKERS_TRACKED 64

/** While the host is out of CPU (ks_cpuwatch.h), 1 delivery in
 *  1 << KS_ACK_SAMPLE_SHIFT is checked: 16, which takes the check's ~85 ns
 *  a delivery on librdkafka's broker thread to ~6 ns, and still checks
 *  tens of thousands of deliveries a second at the rates that fill a CPU. */
#define KS_ACK_SAMPLE_SHIFT 4

/** librdkafka threads that call on_acknowledgement watched, at most: a
 *  producer's broker threads (one per broker it writes to; beyond these,
 *  unwatched). */
#define KS_ACK_THREADS_WATCHED 8

typedef struct ks_client {
        rd_kafka_t       *rk; /**< NULL once on_destroy has run */
        ks_config_t       conf;
        ks_topic_params_t params;
        char              client_id[256];
        char     name[256];  /**< rd_kafka_name(), known after rd_kafka_new() */
        int      name_known; /**< set by ks_client_learn_name() */
        char     partitioner_detail[64]; /**< a problem reading it, or "" */
        char     partitioner_source[32]; /**< "partitioner" or
                                      *   "keyshift.partitioner" */
        int64_t  started_at_ms;
        int      started; /**< 0: creation failed, no final report */
        uint64_t id;      /**< unique for the process's life (an address
                           *   can be reused by a later producer) */
        ks_registry_t reg;
        ks_stage_t   *stage; /**< on_send's per-thread rings (ks_stage.h) */

        /* drainer thread: analyses the staged messages (ks_reporter.c) */
        pthread_t  drainer;
        int        drainer_running;
        atomic_int drainer_stop;
        atomic_int sync_cancel; /**< the reporter's ks_stage_sync() ends:
                                 *   the producer is being destroyed */
        /** the priority each of keyshift's threads got (ks_priority_t,
         *  ks_priority.h), set by that thread first thing */
        atomic_int drainer_priority, reporter_priority;
        /** the watcher's verdict (ks_cpuwatch.h): while the host is out
         *  of CPU, 1 delivery in 1 << ack_shift is checked (0: all) */
        atomic_int  ack_shift;
        atomic_int  cpu_watched; /**< 1: the watcher watches the CPU (else
                                  *   every delivery is checked) */
        atomic_long drainer_tid; /**< the drainer's, once it runs; 0 */
        atomic_uint_fast64_t acks_unchecked; /**< deliveries not checked */
        atomic_int_fast64_t  out_of_cpu_ms;  /**< ms found out of CPU */
        /** of out_of_cpu_ms, the ms a delivery thread had no CPU to spare */
        atomic_int_fast64_t delivery_bound_ms;
        /** the threads that called on_acknowledgement (Linux tids; 0:
         *  a free slot), for the watcher's look at them */
        atomic_long ack_tids[KS_ACK_THREADS_WATCHED];

        /* watcher thread (ks_cpuwatcher.c): sets ack_shift */
        pthread_t       watcher;
        int             watcher_running;
        pthread_mutex_t watcher_lock; /**< protects watcher_stop */
        pthread_cond_t  watcher_cond; /**< on CLOCK_MONOTONIC */
        int             watcher_stop;

        /* reporter thread */
        pthread_t       thread;
        int             thread_running;
        pthread_mutex_t lock; /**< protects stop, wake */
        pthread_cond_t  cond;
        int             stop;
        int             wake; /**< a new topic, or a refresh was asked for */
        atomic_int      refresh_requested;

        /* touched only by the reporter thread, then by the final report */
        ks_warn_list_t carry; /**< producer-level warnings for next report */
        char           report_path[4096];
        char           metrics_path[4096]; /**< "": keyshift.metrics.path
                                            *   not set */
        int64_t        reports_written;
        /* what the last report written saw (ks_reporter.c, unchanged()) */
        uint64_t report_fp;         /**< producer-level fingerprint */
        int64_t  report_written_ms; /**< wall clock of its write */
        int      report_failed;     /**< its write failed */
        /* reports not written since the last one that was (a full disk):
         * how many, the first's and the last's wall-clock time, the last
         * error; said by the next report written (ks_reporter.c) */
        uint64_t reports_lost;
        int64_t  lost_first_ms, lost_last_ms;
        char     lost_error[512];
        char metadata_error[256]; /**< last metadata failure, for the report */
        int  metadata_failures;   /**< metadata requests failed in a row */
        /** metadata requests answered: written by the reporter thread,
         *  read by the final report once that thread has been joined */
        uint64_t          metadata_answers;
        rd_kafka_queue_t *admin_q; /**< DescribeConfigs answers */
        /* brokers in state UP (on_broker_state_change): keyshift asks for
         * metadata only when one is, because rd_kafka_metadata() waits its
         * whole timeout for a usable broker, even while the client is
         * being destroyed */
        pthread_mutex_t brokers_lock;
        char            broker_up_names[KS_BROKERS_TRACKED][96];
        int             broker_up_cnt;
        atomic_int      brokers_up;
        int metadata_timeout_ms; /**< reporter thread: adapts (ks_reporter.c) */
        atomic_int_fast64_t last_ack_wake_ms; /**< mono ms of the last wake
                                               *   asked by a delivery */
        double queue_max_messages; /**< queue.buffering.max.messages */
        double queue_max_bytes;    /**< queue.buffering.max.kbytes x 1024 */
        /** keyshift.report.topic's publisher (ks_publish.h), or NULL */
        ks_publish_t *publish;
} ks_client_t;

/** @returns wall-clock milliseconds since the epoch. */
int64_t ks_client_now_ms(void);

/**
 * @brief Creates the state of a new producer and starts its reporter
 *        thread. @returns the client, or NULL with @p errstr set.
 * @locality application thread in rd_kafka_new() (on_new).
 */
ks_client_t *ks_client_new(rd_kafka_t *rk, const rd_kafka_conf_t *conf,
                           const ks_config_t *kconf, char *errstr,
                           size_t errstr_size);

/** @brief on_send: stages one produced message for the drainer thread
 *         (ks_stage.h). Never fails, never blocks: no lock is taken unless
 *         the thread's ring is full, the key is longer than
 *         KS_STAGE_KEY_INLINE or the topic is new.
 *  @locality application threads. */
void ks_client_on_send(ks_client_t *c, const rd_kafka_message_t *m);

/** @brief on_acknowledgement. @locality broker threads or poll(). */
void ks_client_on_ack(ks_client_t *c, const rd_kafka_message_t *m);

/** @brief on_broker_state_change: counts the brokers that are UP, each
 *  named by @p name "<id>/<host>:<port>".
 *  @locality librdkafka's broker threads. */
void ks_client_on_broker_state(ks_client_t *c, const char *name,
                               const char *state);

/** @brief on_destroy: stops and joins the reporter thread; the client
 *         does not call librdkafka afterwards. @locality rdk:main. */
void ks_client_stop(ks_client_t *c);

/** @brief Sets c->name from rd_kafka_name() once (the name keyshift's
 *         stderr lines and reports carry). @locality the reporter thread
 *         once rd_kafka_new() has returned, or rdk:main in on_destroy after
 *         the reporter stopped. */
void ks_client_learn_name(ks_client_t *c);

/** @brief Writes the final report and frees the client.
 *  @locality application thread in rd_kafka_destroy() (on_conf_destroy). */
void ks_client_destroy(ks_client_t *c);

/* Reporter and drainer threads (ks_reporter.c), and the watcher. */
/** @brief Starts the drainer, the reporter and the watcher
 *         (ks_cpuwatcher_start()). @returns 0, or -1 (none left running). */
int ks_reporter_start(ks_client_t *c);
/** @brief Stops and joins the three threads; messages still staged are
 *         left for the caller to drain (ks_stage_drain()). */
void ks_reporter_stop(ks_client_t *c);
/** @brief Builds and writes a report. @param final 1 at shutdown. */
void ks_reporter_write(ks_client_t *c, int final);

/* The watcher thread (ks_cpuwatcher.c). */
/** @brief Starts it. @returns 0, or -1 (not started: every delivery is
 *         then checked). */
int ks_cpuwatcher_start(ks_client_t *c);
/** @brief Stops and joins it (if started); every delivery is checked
 *         after. */
void ks_cpuwatcher_stop(ks_client_t *c);

#endif /* KS_CLIENT_H */
