/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_broker_acl.c
 * @brief The broker tests' SASL/PLAIN listener and ACLs (see
 *        ks_broker_support.h): the listener's address, and ACLs created,
 *        awaited and deleted through librdkafka's Admin API on the
 *        plaintext listener, whose principal (User:ANONYMOUS) is a super
 *        user of the test broker (server-sasl.properties).
 */
#include "ks_broker_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#define KS_ACL_TIMEOUT_MS 30000

const char *ks_broker_sasl_bootstrap(void)
{
        static char buf[512];
        const char *env   = getenv("KS_KAFKA_SASL_BOOTSTRAP");
        const char *state = getenv("KS_BROKER_STATE");
        const char *ext   = getenv("KS_KAFKA_BOOTSTRAP");
        char        path[1024];
        FILE       *fp;

        if (env && *env)
                return env;
        if (*buf)
                return buf;
        snprintf(path, sizeof(path), "%s/sasl_bootstrap",
                 state && *state ? state : ".");
        if (!(ext && *ext) && (fp = fopen(path, "r"))) {
                if (fgets(buf, sizeof(buf), fp))
                        buf[strcspn(buf, "\r\n")] = '\0';
                fclose(fp);
        }
        if (!*buf) {
                fprintf(stderr,
                        "no SASL/PLAIN listener: %s. With an existing "
                        "cluster (KS_KAFKA_BOOTSTRAP), set "
                        "KS_KAFKA_SASL_BOOTSTRAP=host:port to a "
                        "SASL_PLAINTEXT listener with the PLAIN users of "
                        "tests/broker/kafka_server_jaas.conf, ACLs enforced, "
                        "and KS_KAFKA_BOOTSTRAP's principal allowed to "
                        "create ACLs (tests/broker/server-sasl.properties).\n",
                        ext && *ext ? "KS_KAFKA_BOOTSTRAP is set and "
                                      "KS_KAFKA_SASL_BOOTSTRAP is not"
                                    : "the fixture wrote no sasl_bootstrap");
                CU_FAIL_FATAL("no SASL listener (see stderr)");
        }
        return buf;
}

/** @returns a new admin options object for @p op with our timeouts. */
static rd_kafka_AdminOptions_t *options(rd_kafka_admin_op_t op)
{
        char                     err[256];
        rd_kafka_AdminOptions_t *o =
            rd_kafka_AdminOptions_new(ks_broker_admin(), op);

        rd_kafka_AdminOptions_set_request_timeout(o, KS_ACL_TIMEOUT_MS, err,
                                                  sizeof(err));
        return o;
}

/** @returns the ACLs of @p principal the broker lists, -1 on error. */
static int acl_count(const char *principal)
{
        char                         err[256];
        rd_kafka_AclBindingFilter_t *f = rd_kafka_AclBindingFilter_new(
            RD_KAFKA_RESOURCE_ANY, NULL, RD_KAFKA_RESOURCE_PATTERN_ANY,
            principal, NULL, RD_KAFKA_ACL_OPERATION_ANY,
            RD_KAFKA_ACL_PERMISSION_TYPE_ANY, err, sizeof(err));
        rd_kafka_queue_t        *q = rd_kafka_queue_new(ks_broker_admin());
        rd_kafka_AdminOptions_t *o = options(RD_KAFKA_ADMIN_OP_DESCRIBEACLS);
        rd_kafka_event_t        *ev;
        size_t                   n = 0;
        int                      r = -1;

        rd_kafka_DescribeAcls(ks_broker_admin(), f, o, q);
        ev = rd_kafka_queue_poll(q, KS_ACL_TIMEOUT_MS + 5000);
        if (ev && !rd_kafka_event_error(ev)) {
                rd_kafka_DescribeAcls_result_acls(
                    rd_kafka_event_DescribeAcls_result(ev), &n);
                r = (int)n;
        } else
                fprintf(stderr, "DescribeAcls %s: %s\n", principal,
                        ev ? rd_kafka_event_error_string(ev) : "timed out");
        if (ev)
                rd_kafka_event_destroy(ev);
        rd_kafka_AdminOptions_destroy(o);
        rd_kafka_queue_destroy(q);
        rd_kafka_AclBinding_destroy(f);
        return r;
}

int ks_broker_acl_allow(const char *principal, rd_kafka_ResourceType_t type,
                        const char *name, const rd_kafka_AclOperation_t *ops,
                        size_t n)
{
        char                          err[256];
        rd_kafka_AclBinding_t        *b[16];
        rd_kafka_queue_t             *q;
        rd_kafka_AdminOptions_t      *o;
        rd_kafka_event_t             *ev;
        const rd_kafka_acl_result_t **res;
        size_t                        i, cnt = 0;
        int    rc = 0, before = acl_count(principal), now;
        double end;

        if (n > sizeof(b) / sizeof(b[0]) || before < 0)
                return -1;
        for (i = 0; i < n; i++)
                if (!(b[i] = rd_kafka_AclBinding_new(
                          type, name, RD_KAFKA_RESOURCE_PATTERN_LITERAL,
                          principal, "*", ops[i],
                          RD_KAFKA_ACL_PERMISSION_TYPE_ALLOW, err,
                          sizeof(err)))) {
                        fprintf(stderr, "AclBinding %s %s: %s\n", principal,
                                name, err);
                        while (i--)
                                rd_kafka_AclBinding_destroy(b[i]);
                        return -1;
                }
        q = rd_kafka_queue_new(ks_broker_admin());
        o = options(RD_KAFKA_ADMIN_OP_CREATEACLS);
        rd_kafka_CreateAcls(ks_broker_admin(), b, n, o, q);
        ev = rd_kafka_queue_poll(q, KS_ACL_TIMEOUT_MS + 5000);
        if (!ev || rd_kafka_event_error(ev)) {
                fprintf(stderr, "CreateAcls %s %s: %s\n", principal, name,
                        ev ? rd_kafka_event_error_string(ev) : "timed out");
                rc = -1;
        } else {
                res = rd_kafka_CreateAcls_result_acls(
                    rd_kafka_event_CreateAcls_result(ev), &cnt);
                for (i = 0; i < cnt; i++)
                        if (rd_kafka_acl_result_error(res[i])) {
                                fprintf(stderr, "CreateAcls %s %s: %s\n",
                                        principal, name,
                                        rd_kafka_error_string(
                                            rd_kafka_acl_result_error(res[i])));
                                rc = -1;
                        }
        }
        if (ev)
                rd_kafka_event_destroy(ev);
        rd_kafka_AdminOptions_destroy(o);
        rd_kafka_queue_destroy(q);
        rd_kafka_AclBinding_destroy_array(b, n);
        /* committed by the controller; the broker's authorizer applies it
         * from the metadata log a moment later */
        end = ks_broker_now_s() + KS_ACL_TIMEOUT_MS / 1000.0;
        while (!rc && (now = acl_count(principal)) < before + (int)n) {
                if (now < 0 || ks_broker_now_s() > end) {
                        fprintf(stderr, "%s: %d ACLs listed, expected %d\n",
                                principal, now, before + (int)n);
                        rc = -1;
                }
                usleep(50 * 1000);
        }
        return rc;
}

void ks_broker_acl_delete(const char *principal)
{
        char                         err[256];
        rd_kafka_AclBindingFilter_t *f = rd_kafka_AclBindingFilter_new(
            RD_KAFKA_RESOURCE_ANY, NULL, RD_KAFKA_RESOURCE_PATTERN_ANY,
            principal, NULL, RD_KAFKA_ACL_OPERATION_ANY,
            RD_KAFKA_ACL_PERMISSION_TYPE_ANY, err, sizeof(err));
        rd_kafka_queue_t        *q = rd_kafka_queue_new(ks_broker_admin());
        rd_kafka_AdminOptions_t *o = options(RD_KAFKA_ADMIN_OP_DELETEACLS);
        rd_kafka_event_t        *ev;

        rd_kafka_DeleteAcls(ks_broker_admin(), &f, 1, o, q);
        if ((ev = rd_kafka_queue_poll(q, KS_ACL_TIMEOUT_MS + 5000)))
                rd_kafka_event_destroy(ev);
        rd_kafka_AdminOptions_destroy(o);
        rd_kafka_queue_destroy(q);
        rd_kafka_AclBinding_destroy(f);
}
