/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_plugin.c
 * @brief The plugin's entry point and configuration-object interceptors.
 *
 * librdkafka loads libkeyshift.so for `plugin.library.paths` and calls
 * conf_init() for that configuration object. Following librdkafka's own
 * interceptor test (tests/interceptor_test/interceptor_test.c), keyshift
 * keeps one state object per configuration object:
 *  - conf_init() and on_conf_dup() create it (a dup copies the settings);
 *  - on_conf_set() parses keyshift.* properties into it and returns
 *    RD_KAFKA_CONF_UNKNOWN for everything else;
 *  - on_new() creates the per-producer state (ks_client_t) and registers
 *    on_send, on_acknowledgement and on_destroy with it;
 *  - on_conf_destroy() frees it; for the configuration a producer owns this
 *    is rd_kafka_destroy()'s last step, after all librdkafka threads have
 *    stopped, so the final report is written there.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <librdkafka/rdkafka.h>

#include "ks_client.h"
#include "ks_config.h"
#include "ks_host.h"
#include "ks_publish.h"

#define KS_IC_NAME "keyshift"

/** State per configuration object. */
typedef struct ks_conf_state {
        ks_config_t  conf;
        ks_client_t *client; /**< the producer created from this conf */
} ks_conf_state_t;

static int conf_state_register(rd_kafka_conf_t *conf, ks_conf_state_t *st);

/**
 * @brief on_conf_set: keyshift.* properties are ours; validated here so a
 *        bad value is refused at rd_kafka_conf_set() time.
 * @locality application thread calling rd_kafka_conf_set().
 */
static rd_kafka_conf_res_t on_conf_set(rd_kafka_conf_t *conf, const char *name,
                                       const char *val, char *errstr,
                                       size_t errstr_size, void *ic_opaque)
{
        ks_conf_state_t *st = ic_opaque;
        (void)conf;

        /* keyshift.report.topic.X: X's value checked by the host's
         * librdkafka on a scratch configuration, as the report producer
         * will set it (ks_publish.c) */
        if (val && ks_config_is_report_topic_prop(name) &&
            ks_publish_check_property(name +
                                          strlen(KS_CONFIG_REPORT_TOPIC_PREFIX),
                                      val, errstr, errstr_size))
                return RD_KAFKA_CONF_INVALID;
        switch (ks_config_set(&st->conf, name, val, errstr, errstr_size)) {
        case KS_CONFIG_OK:
                return RD_KAFKA_CONF_OK;
        case KS_CONFIG_INVALID:
                return RD_KAFKA_CONF_INVALID;
        default:
                return RD_KAFKA_CONF_UNKNOWN;
        }
}

/**
 * @brief on_conf_dup: the copy gets its own state with the same settings.
 * @locality application thread calling rd_kafka_conf_dup().
 */
static rd_kafka_resp_err_t on_conf_dup(rd_kafka_conf_t       *new_conf,
                                       const rd_kafka_conf_t *old_conf,
                                       size_t filter_cnt, const char **filter,
                                       void *ic_opaque)
{
        const ks_conf_state_t *old = ic_opaque;
        ks_conf_state_t       *st  = calloc(1, sizeof(*st));
        size_t                 i;
        (void)old_conf;

        /* rd_kafka_conf_dup_filter() drops properties whose names start
         * with a filter entry: a filter that covers every keyshift.*
         * property (e.g. "keyshift.") gives the copy the defaults. */
        for (i = 0; i < filter_cnt; i++)
                if (!strncmp(filter[i], "keyshift.", strlen(filter[i])))
                        break;
        if (!st)
                return RD_KAFKA_RESP_ERR__CRIT_SYS_RESOURCE;
        if (i < filter_cnt ? ks_config_init(&st->conf)
                           : ks_config_copy(&st->conf, &old->conf)) {
                free(st);
                return RD_KAFKA_RESP_ERR__CRIT_SYS_RESOURCE;
        }
        if (conf_state_register(new_conf, st)) {
                ks_config_destroy(&st->conf);
                free(st);
        }
        return RD_KAFKA_RESP_ERR_NO_ERROR;
}

/**
 * @brief on_conf_destroy: frees the state; for a producer's configuration,
 *        writes the final report first.
 * @locality application thread in rd_kafka_conf_destroy() or
 *           rd_kafka_destroy().
 */
static rd_kafka_resp_err_t on_conf_destroy(void *ic_opaque)
{
        ks_conf_state_t *st = ic_opaque;

        ks_client_destroy(st->client);
        ks_config_destroy(&st->conf);
        free(st);
        return RD_KAFKA_RESP_ERR_NO_ERROR;
}

static rd_kafka_resp_err_t on_send(rd_kafka_t *rk, rd_kafka_message_t *m,
                                   void *ic_opaque)
{
        (void)rk;
        ks_client_on_send(ic_opaque, m);
        return RD_KAFKA_RESP_ERR_NO_ERROR;
}

static rd_kafka_resp_err_t
on_acknowledgement(rd_kafka_t *rk, rd_kafka_message_t *m, void *ic_opaque)
{
        (void)rk;
        ks_client_on_ack(ic_opaque, m);
        return RD_KAFKA_RESP_ERR_NO_ERROR;
}

static rd_kafka_resp_err_t
on_broker_state_change(rd_kafka_t *rk, int32_t broker_id, const char *secproto,
                       const char *name, int port, const char *state,
                       void *ic_opaque)
{
        char id[96];

        (void)rk, (void)secproto;
        /* a broker is its id, host and port: the bootstrap connection
         * (id -1) and the broker it leads to may share host and port, and
         * the first going down must not count the second as down (the
         * mock cluster: every topic's count stayed unknown) */
        snprintf(id, sizeof(id), "%d/%.64s:%d", (int)broker_id, name, port);
        ks_client_on_broker_state(ic_opaque, id, state);
        return RD_KAFKA_RESP_ERR_NO_ERROR;
}

static rd_kafka_resp_err_t on_destroy(rd_kafka_t *rk, void *ic_opaque)
{
        (void)rk;
        ks_client_stop(ic_opaque);
        return RD_KAFKA_RESP_ERR_NO_ERROR;
}

/**
 * @brief on_new: a producer is being created from this configuration.
 *        Consumers are left alone. A failure here only disables keyshift
 *        for this producer (librdkafka logs it); it never fails the client.
 * @locality application thread in rd_kafka_new().
 */
static rd_kafka_resp_err_t on_new(rd_kafka_t *rk, const rd_kafka_conf_t *conf,
                                  void *ic_opaque, char *errstr,
                                  size_t errstr_size)
{
        ks_conf_state_t *st = ic_opaque;
        ks_client_t     *c;

        if (!st->conf.enable || ks_rdk.rd_kafka_type(rk) != RD_KAFKA_PRODUCER)
                return RD_KAFKA_RESP_ERR_NO_ERROR;
        if (st->client) { /* an earlier rd_kafka_new() with it failed */
                ks_client_destroy(st->client);
                st->client = NULL;
        }
        if (!(c = ks_client_new(rk, conf, &st->conf, errstr, errstr_size)))
                return RD_KAFKA_RESP_ERR__CRIT_SYS_RESOURCE;
        st->client = c;
        ks_rdk.rd_kafka_interceptor_add_on_send(rk, KS_IC_NAME, on_send, c);
        ks_rdk.rd_kafka_interceptor_add_on_acknowledgement(
            rk, KS_IC_NAME, on_acknowledgement, c);
        ks_rdk.rd_kafka_interceptor_add_on_destroy(rk, KS_IC_NAME, on_destroy,
                                                   c);
        ks_rdk.rd_kafka_interceptor_add_on_broker_state_change(
            rk, KS_IC_NAME, on_broker_state_change, c);
        return RD_KAFKA_RESP_ERR_NO_ERROR;
}

/**
 * @brief Registers the configuration interceptors with state @p st.
 * @returns 0, or -1 if keyshift is already registered on @p conf (then
 *          nothing was registered with @p st, which the caller frees):
 *          rd_kafka_conf_dup() calls on_conf_dup and then copies
 *          plugin.library.paths, which calls conf_init on the copy again.
 */
static int conf_state_register(rd_kafka_conf_t *conf, ks_conf_state_t *st)
{
        if (ks_rdk.rd_kafka_conf_interceptor_add_on_conf_set(conf, KS_IC_NAME,
                                                             on_conf_set, st))
                return -1;
        ks_rdk.rd_kafka_conf_interceptor_add_on_conf_dup(conf, KS_IC_NAME,
                                                         on_conf_dup, st);
        ks_rdk.rd_kafka_conf_interceptor_add_on_conf_destroy(
            conf, KS_IC_NAME, on_conf_destroy, st);
        ks_rdk.rd_kafka_conf_interceptor_add_on_new(conf, KS_IC_NAME, on_new,
                                                    st);
        return 0;
}

/**
 * @brief librdkafka's plugin entry point (rd_kafka_plugin_f_conf_init_t),
 *        the only symbol libkeyshift.so exports. It first binds keyshift to
 *        the librdkafka calling it (ks_host.h): where that fails, the error
 *        goes back to the host, which refuses plugin.library.paths.
 * @locality application thread setting plugin.library.paths.
 */
__attribute__((visibility("default"), noinline)) rd_kafka_resp_err_t
conf_init(rd_kafka_conf_t *conf, void **plug_opaquep, char *errstr,
          size_t errstr_size)
{
        ks_conf_state_t *st;

        *plug_opaquep = NULL;
        if (ks_host_bind(__builtin_return_address(0), errstr, errstr_size))
                return RD_KAFKA_RESP_ERR__INVALID_ARG;
        st = calloc(1, sizeof(*st));
        if (!st || ks_config_init(&st->conf)) {
                free(st);
                snprintf(errstr, errstr_size, "keyshift: out of memory");
                return RD_KAFKA_RESP_ERR__CRIT_SYS_RESOURCE;
        }
        if (conf_state_register(conf, st)) {
                ks_config_destroy(&st->conf);
                free(st);
        }
        return RD_KAFKA_RESP_ERR_NO_ERROR;
}
