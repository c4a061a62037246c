/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_host.h
 * @brief The host's librdkafka: the one that loaded libkeyshift.so, bound
 *        at run time.
 *
 * libkeyshift.so has no link-time dependency on librdkafka (no NEEDED
 * librdkafka.so.1, no undefined rd_kafka_* symbol). Every librdkafka
 * function keyshift calls goes through the table `ks_rdk`, resolved once
 * per process from the library whose code called conf_init():
 *
 *   conf_init()'s return address (inside the host's librdkafka:
 *   rd_kafka_plugin_new() in src/rdkafka_plugin.c calls conf_init() itself)
 *   -> dladdr1(): the loaded object holding that address
 *   -> dlopen(its file, RTLD_NOW | RTLD_NOLOAD) (the main program: dlopen(NULL))
 *   -> dlsym() of each function, which must lie in that same object.
 *
 * Why: a host may carry its own librdkafka under another name. The PyPI
 * wheels of confluent-kafka bundle `confluent_kafka.libs/librdkafka-<hash>.so.1`
 * (SONAME rewritten) loaded with RTLD_LOCAL; .NET's librdkafka.redist loads
 * `librdkafka.so`; Go links a static copy. A NEEDED librdkafka.so.1 would
 * map the system's copy beside the host's and call it on the host's
 * objects (a crash with the wheels). Binding to the caller means there is
 * only ever one librdkafka in the process, the host's.
 *
 * Where the functions cannot be found (a host that links librdkafka
 * statically without exporting its symbols, such as a Go program built
 * with confluent-kafka-go's bundled library), ks_host_bind() fails with an
 * error saying so and what to do, and conf_init() returns it: the host
 * refuses `plugin.library.paths` as for any plugin error.
 *
 * Versions: librdkafka 2.x (on_broker_state_change() appeared in 2.0.0).
 * The partition model was checked against the host versions' own
 * partitioner functions (tests/hosts/).
 */
#ifndef KS_HOST_H
#define KS_HOST_H

#include <stddef.h>

#include <librdkafka/rdkafka.h>

/** Every librdkafka function keyshift calls (the plugin only: the core
 *  knows nothing of librdkafka). */
#define KS_HOST_FUNCS(X)                                                       \
        X(rd_kafka_version)                                                    \
        X(rd_kafka_version_str)                                                \
        X(rd_kafka_err2str)                                                    \
        X(rd_kafka_type)                                                       \
        X(rd_kafka_name)                                                       \
        X(rd_kafka_conf_get)                                                   \
        X(rd_kafka_topic_name)                                                 \
        X(rd_kafka_conf_interceptor_add_on_conf_set)                           \
        X(rd_kafka_conf_interceptor_add_on_conf_dup)                           \
        X(rd_kafka_conf_interceptor_add_on_conf_destroy)                       \
        X(rd_kafka_conf_interceptor_add_on_new)                                \
        X(rd_kafka_interceptor_add_on_send)                                    \
        X(rd_kafka_interceptor_add_on_acknowledgement)                         \
        X(rd_kafka_interceptor_add_on_destroy)                                 \
        X(rd_kafka_interceptor_add_on_broker_state_change)                     \
        X(rd_kafka_metadata)                                                   \
        X(rd_kafka_metadata_destroy)                                           \
        X(rd_kafka_queue_new)                                                  \
        X(rd_kafka_queue_poll)                                                 \
        X(rd_kafka_queue_destroy)                                              \
        X(rd_kafka_event_type)                                                 \
        X(rd_kafka_event_error)                                                \
        X(rd_kafka_event_opaque)                                               \
        X(rd_kafka_event_destroy)                                              \
        X(rd_kafka_event_DescribeConfigs_result)                               \
        X(rd_kafka_DescribeConfigs)                                            \
        X(rd_kafka_DescribeConfigs_result_resources)                           \
        X(rd_kafka_AdminOptions_new)                                           \
        X(rd_kafka_AdminOptions_set_request_timeout)                           \
        X(rd_kafka_AdminOptions_set_opaque)                                    \
        X(rd_kafka_AdminOptions_destroy)                                       \
        X(rd_kafka_ConfigResource_new)                                         \
        X(rd_kafka_ConfigResource_destroy)                                     \
        X(rd_kafka_ConfigResource_error)                                       \
        X(rd_kafka_ConfigResource_configs)                                     \
        X(rd_kafka_ConfigEntry_name)                                           \
        X(rd_kafka_ConfigEntry_value)                                          \
        KS_HOST_PUBLISH_FUNCS(X)

/** What the report producer (ks_publish.c) calls: a producer instance of
 *  keyshift's own, made with the host's librdkafka. */
#define KS_HOST_PUBLISH_FUNCS(X)                                               \
        X(rd_kafka_conf_new)                                                   \
        X(rd_kafka_conf_set)                                                   \
        X(rd_kafka_conf_destroy)                                               \
        X(rd_kafka_conf_dump)                                                  \
        X(rd_kafka_conf_dump_free)                                             \
        X(rd_kafka_conf_set_dr_msg_cb)                                         \
        X(rd_kafka_conf_set_error_cb)                                          \
        X(rd_kafka_conf_set_log_cb)                                            \
        X(rd_kafka_conf_set_opaque)                                            \
        X(rd_kafka_new)                                                        \
        X(rd_kafka_destroy)                                                    \
        X(rd_kafka_poll)                                                       \
        X(rd_kafka_flush)                                                      \
        X(rd_kafka_purge)                                                      \
        X(rd_kafka_outq_len)                                                   \
        X(rd_kafka_last_error)                                                 \
        X(rd_kafka_topic_new)                                                  \
        X(rd_kafka_topic_destroy)                                              \
        X(rd_kafka_produce)                                                    \
        X(rd_kafka_event_error_string)                                         \
        X(rd_kafka_NewTopic_new)                                               \
        X(rd_kafka_NewTopic_set_config)                                        \
        X(rd_kafka_NewTopic_destroy)                                           \
        X(rd_kafka_CreateTopics)                                               \
        X(rd_kafka_event_CreateTopics_result)                                  \
        X(rd_kafka_CreateTopics_result_topics)                                 \
        X(rd_kafka_topic_result_error)                                         \
        X(rd_kafka_topic_result_error_string)

/** The host's functions, named as librdkafka names them:
 *  `ks_rdk.rd_kafka_topic_name(rkt)`. */
typedef struct ks_host_api {
#define KS_HOST_FIELD(fn) __typeof__(fn) *fn;
        KS_HOST_FUNCS(KS_HOST_FIELD)
#undef KS_HOST_FIELD
} ks_host_api_t;

/** Filled by the first successful ks_host_bind(), then never written
 *  again: read it from any thread once conf_init() has returned. */
extern ks_host_api_t ks_rdk;

/** Oldest and first unsupported librdkafka versions (rd_kafka_version()). */
#define KS_HOST_VERSION_MIN 0x020000ff /* 2.0.0: on_broker_state_change */
#define KS_HOST_VERSION_END 0x03000000 /* 3.x: another ABI, untested */

/**
 * @brief Binds ks_rdk to the librdkafka that contains @p caller (conf_init()'s
 *        return address), once per process.
 * @returns 0 when bound (now or before, to the same library); -1 with
 *          @p errstr set ("keyshift: ..." naming the cause and the fix)
 *          when the caller is not in a loaded object, a function is not
 *          exported by it, its version is not 2.x, or keyshift is already
 *          bound to another librdkafka in this process (one plugin copy
 *          cannot serve two: its table is per process).
 * @locality application thread in conf_init(). @locks a mutex of its own.
 */
int ks_host_bind(const void *caller, char *errstr, size_t errstr_size);

/** @returns the file of the bound librdkafka (as the loader names it), or
 *           "" before ks_host_bind() succeeded. */
const char *ks_host_library(void);

#endif /* KS_HOST_H */
