/* SPDX-License-Identifier: Apache-2.0 */
#include "ks_e2e_support.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CUnit/CUnit.h>
#include <librdkafka/rdkafka_mock.h>

#include "ks_report.h"
#include "ks_test.h"

const char *ks_e2e_plugin(void)
{
        const char *p = getenv("KS_PLUGIN");
        return p && *p ? p : "libkeyshift";
}

const char *ks_e2e_tmpdir(const char *tag)
{
        static char buf[512];
        const char *base = getenv("TMPDIR");
        snprintf(buf, sizeof(buf), "%s/keyshift-%s-XXXXXX",
                 base && *base ? base : "/tmp", tag);
        if (!mkdtemp(buf)) {
                perror("mkdtemp");
                abort();
        }
        return buf;
}

rd_kafka_conf_t *ks_e2e_conf(const char *first_name, ...)
{
        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        char             errstr[512];
        const char      *name;
        va_list          ap;

        if (rd_kafka_conf_set(conf, "plugin.library.paths", ks_e2e_plugin(),
                              errstr, sizeof(errstr)) != RD_KAFKA_CONF_OK) {
                fprintf(stderr, "plugin.library.paths: %s\n", errstr);
                CU_FAIL_FATAL("cannot load the plugin");
        }
        /* the tests compare exact figures, and a producer in a tight loop
         * on a loaded machine can outrun keyshift's drainer: analyse such
         * messages on the producing thread rather than skip them (the
         * default, keyshift.overload=skip, is unit-tested in test_stage) */
        if (rd_kafka_conf_set(conf, "keyshift.overload", "analyse", errstr,
                              sizeof(errstr)) != RD_KAFKA_CONF_OK) {
                fprintf(stderr, "keyshift.overload: %s\n", errstr);
                CU_FAIL_FATAL("keyshift.overload refused");
        }
        va_start(ap, first_name);
        for (name = first_name; name; name = va_arg(ap, const char *)) {
                const char *val = va_arg(ap, const char *);
                if (rd_kafka_conf_set(conf, name, val, errstr,
                                      sizeof(errstr)) != RD_KAFKA_CONF_OK) {
                        fprintf(stderr, "%s=%s: %s\n", name, val, errstr);
                        CU_FAIL("rd_kafka_conf_set refused a test setting");
                }
        }
        va_end(ap);
        return conf;
}

static void dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
        ks_e2e_producer_t *p = opaque;
        ks_e2e_dr_t       *d;
        (void)rk;

        if (p->dr_cnt == p->dr_cap) {
                p->dr_cap = p->dr_cap ? p->dr_cap * 2 : 1024;
                p->drs    = realloc(p->drs, p->dr_cap * sizeof(*p->drs));
        }
        d            = &p->drs[p->dr_cnt++];
        d->partition = m->partition;
        d->err       = m->err;
        d->key_null  = m->key == NULL;
        d->keylen    = m->key_len;
        memcpy(d->key, m->key ? m->key : "",
               m->key_len < sizeof(d->key) ? m->key_len : sizeof(d->key));
}

int ks_e2e_producer_new(ks_e2e_producer_t *p, rd_kafka_conf_t *conf,
                        const char *topic, int partitions)
{
        char                     errstr[512];
        rd_kafka_mock_cluster_t *mc;

        memset(p, 0, sizeof(*p));
        rd_kafka_conf_set_dr_msg_cb(conf, dr_cb);
        rd_kafka_conf_set_opaque(conf, p);
        if (rd_kafka_conf_set(conf, "test.mock.num.brokers", "1", errstr,
                              sizeof(errstr)) != RD_KAFKA_CONF_OK) {
                fprintf(stderr, "%s\n", errstr);
                return -1;
        }
        if (!(p->rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr,
                                   sizeof(errstr)))) {
                fprintf(stderr, "rd_kafka_new: %s\n", errstr);
                rd_kafka_conf_destroy(conf);
                return -1;
        }
        if (topic) {
                mc = rd_kafka_handle_mock_cluster(p->rk);
                if (!mc ||
                    rd_kafka_mock_topic_create(mc, topic, partitions, 1)) {
                        fprintf(stderr, "cannot create mock topic %s\n", topic);
                        return -1;
                }
        }
        return 0;
}

void ks_e2e_produce(ks_e2e_producer_t *p, const char *topic, const void *key,
                    size_t keylen, int32_t partition, const void *value,
                    size_t len)
{
        rd_kafka_resp_err_t err;

        for (;;) {
                err = rd_kafka_producev(
                    p->rk, RD_KAFKA_V_TOPIC(topic),
                    RD_KAFKA_V_KEY((void *)key, keylen),
                    RD_KAFKA_V_PARTITION(partition),
                    RD_KAFKA_V_VALUE((void *)value, len),
                    RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
                if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL)
                        break;
                rd_kafka_poll(p->rk, 10);
        }
        CU_ASSERT_EQUAL(err, RD_KAFKA_RESP_ERR_NO_ERROR);
        rd_kafka_poll(p->rk, 0);
}

void ks_e2e_producer_close(ks_e2e_producer_t *p)
{
        if (!p->rk)
                return;
        CU_ASSERT_EQUAL(rd_kafka_flush(p->rk, 30000),
                        RD_KAFKA_RESP_ERR_NO_ERROR);
        /* These producers live a fraction of a second; on a loaded machine
         * keyshift's metadata answer (handled by librdkafka's main thread)
         * can still be on its way when the last delivery report is. */
        rd_kafka_poll(p->rk, 300);
        rd_kafka_destroy(p->rk);
        p->rk = NULL;
}

void ks_e2e_producer_free(ks_e2e_producer_t *p)
{
        ks_e2e_producer_close(p);
        free(p->drs);
        memset(p, 0, sizeof(*p));
}

json_t *ks_e2e_load_json(const char *path)
{
        json_error_t jerr;
        json_t      *j = json_load_file(path, 0, &jerr);
        const char  *schema;

        if (!j) {
                fprintf(stderr, "%s: %s (line %d)\n", path, jerr.text,
                        jerr.line);
                return NULL;
        }
        /* a keyshift report, whoever wrote it: checked against the
         * published schema (ks_test.h) */
        schema = json_string_value(json_object_get(j, "schema"));
        if (schema && !strncmp(schema, "keyshift.report.", 16))
                ks_test_report_valid(path);
        return j;
}

json_t *ks_e2e_get(json_t *root, const char *path)
{
        char    buf[512], *save = NULL, *tok;
        json_t *j = root;

        snprintf(buf, sizeof(buf), "%s", path);
        for (tok = strtok_r(buf, "/", &save); tok && j;
             tok = strtok_r(NULL, "/", &save)) {
                if (json_is_array(j))
                        j = json_array_get(j, (size_t)atol(tok));
                else
                        j = json_object_get(j, tok);
        }
        return j;
}

const char *ks_e2e_warning_message(json_t *warnings, const char *code)
{
        size_t i;

        for (i = 0; i < json_array_size(warnings); i++) {
                json_t     *w = json_array_get(warnings, i);
                const char *c = json_string_value(json_object_get(w, "code"));
                if (c && !strcmp(c, code)) {
                        const char *m =
                            json_string_value(json_object_get(w, "message"));
                        return m ? m : "";
                }
        }
        return NULL;
}

int ks_e2e_has_warning(json_t *warnings, const char *code)
{
        return ks_e2e_warning_message(warnings, code) != NULL;
}

long long ks_e2e_int(json_t *root, const char *path)
{
        json_t *j = ks_e2e_get(root, path);
        if (!json_is_integer(j)) {
                fprintf(stderr, "report: no integer at %s\n", path);
                CU_FAIL("missing integer in report");
                return -1;
        }
        return json_integer_value(j);
}

int ks_e2e_system(const char *fmt, ...)
{
        char    cmd[8192];
        va_list ap;
        int     st;

        va_start(ap, fmt);
        vsnprintf(cmd, sizeof(cmd), fmt, ap);
        va_end(ap);
        fflush(stdout);
        st = system(cmd);
        if (st == -1)
                return -1;
        return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

json_t *ks_e2e_flow(json_t *proposal, long long rows)
{
        json_t *nz = json_object_get(proposal, "flow_nonzero");
        json_t *m  = json_object_get(proposal, "flow");
        char    err[160];

        if (!nz)
                return json_is_array(m) ? json_incref(m) : NULL;
        m = ks_report_flow_dense(nz, (int32_t)rows,
                                 (int32_t)json_integer_value(json_object_get(
                                     proposal, "partition_count")),
                                 err, sizeof(err));
        if (!m)
                fprintf(stderr, "report: flow_nonzero: %s\n", err);
        return m;
}

json_t *ks_e2e_hot_keys(const json_t *topic)
{
        const json_t *h = json_object_get(topic, "hot_keys");
        json_t       *rows;
        char          err[256];

        if (json_is_array(h))
                return json_incref((json_t *)h);
        rows = ks_report_hot_keys_rows(h, err, sizeof(err));
        if (!rows)
                fprintf(stderr, "report: hot_keys: %s\n", err);
        CU_ASSERT_PTR_NOT_NULL(rows);
        return rows;
}
