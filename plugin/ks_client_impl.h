/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_client_impl.h
 * @brief The state of keyshift for one producer (ks_client_t), shared by
 *        the files the client is split into; not an interface
 *        (ks_client.h is, for the interceptors):
 *
 *  - ks_client.c: creation, the interceptors, destruction and the final
 *    report's call, the threads started and stopped;
 *  - ks_reporter.c: the reporter thread and the report written;
 *  - ks_metadata.c: the reporter's questions to the cluster, the
 *    client's name learned;
 *  - ks_drainer.c: the drainer thread;
 *  - ks_cpuwatcher.c: the watcher thread.
 *
 * Calls go one way: ks_client.c calls the reporter, the drainer, the
 * watcher and the metadata; the reporter calls the metadata; none calls
 * ks_client.c.
 */
#ifndef KS_CLIENT_IMPL_H
#define KS_CLIENT_IMPL_H

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
        int      name_known; /**< set by ks_metadata_learn_name() */
        char     partitioner_detail[64]; /**< a problem reading it, or "" */
        char     partitioner_source[32]; /**< "partitioner" or
                                      *   "keyshift.partitioner" */
        int64_t  started_at_ms;
        int      started; /**< 0: creation failed, no final report */
        uint64_t id;      /**< unique for the process's life (an address
                           *   can be reused by a later producer) */
        ks_registry_t reg;
        ks_stage_t   *stage; /**< on_send's per-thread rings (ks_stage.h) */

        /* drainer thread: analyses the staged messages (ks_drainer.c) */
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

#endif /* KS_CLIENT_IMPL_H */
