/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_e2e_learn.c
 * @brief The partitioner learned from the deliveries (ks_learn.h), with a
 *        C producer on the mock cluster:
 *  - a topic created with its own topic configuration
 *    (`rd_kafka_topic_new(rk, name, tconf)`, partitioner murmur2_random or
 *    fnv1a_random, unseen by the plugin): every figure, for every message
 *    since the start, equals librdkafka's own function for it, no
 *    acknowledgement is a mismatch, PARTITIONER_LEARNED says so;
 *  - an application partitioner_cb that sends every key to partition 0:
 *    no candidate explains it; current loads are the acknowledged ones,
 *    proposals are `predictable: false`;
 *  - a producer whose messages are never delivered (queue-only): the
 *    configured partitioner, unconfirmed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ks_e2e_support.h"
#include "ks_test.h"

#define MSGS 4000
#define CUR 6

typedef int32_t(rk_partitioner_f)(const rd_kafka_topic_t *, const void *,
                                  size_t, int32_t, void *, void *);

static const int32_t proposed[] = {12, 9};

static int key_of(int i, char *key, size_t size)
{
        /* MMSI-like, a hot one in five */
        return snprintf(key, size, "%d",
                        i % 5 == 0 ? 219000001 : 200000000 + (i * 7919) % 1500);
}

/** @brief Produces MSGS keyed messages to @p topic, created first with its
 *         own topic configuration @p tconf (taken). */
static void produce_via_tconf(ks_e2e_producer_t *p, const char *topic,
                              rd_kafka_topic_conf_t *tconf)
{
        rd_kafka_topic_t *rkt = rd_kafka_topic_new(p->rk, topic, tconf);
        char              key[32];
        int               i, kl;

        CU_ASSERT_PTR_NOT_NULL_FATAL(rkt);
        for (i = 0; i < MSGS; i++) {
                kl = key_of(i, key, sizeof(key));
                ks_e2e_produce(p, topic, key, (size_t)kl, -1, "position", 8);
        }
        ks_e2e_producer_close(p);
        rd_kafka_topic_destroy(rkt);
}

static void learned_from_tconf(const char *partitioner, rk_partitioner_f *fn)
{
        const char            *dir = ks_e2e_tmpdir("learn");
        char                   path[512], errstr[256], key[32], at[64];
        rd_kafka_topic_conf_t *tconf;
        ks_e2e_producer_t      p;
        json_t                *r, *t;
        uint64_t               cur_m[CUR] = {0}, moved[2] = {0};
        size_t                 k;
        int                    i, j, kl;

        snprintf(path, sizeof(path), "%s/report.json", dir);
        CU_ASSERT_FATAL(!ks_e2e_producer_new(
            &p,
            ks_e2e_conf("keyshift.report.path", path,
                        "keyshift.partitions.proposed", "12,9", NULL),
            "t", CUR));
        tconf = rd_kafka_topic_conf_new();
        CU_ASSERT_EQUAL_FATAL(rd_kafka_topic_conf_set(tconf, "partitioner",
                                                      partitioner, errstr,
                                                      sizeof(errstr)),
                              RD_KAFKA_CONF_OK);
        produce_via_tconf(&p, "t", tconf);
        CU_ASSERT_EQUAL_FATAL(p.dr_cnt, MSGS);

        /* the oracle: librdkafka's own function, for every message */
        for (i = 0; i < MSGS; i++) {
                int32_t pc;
                kl = key_of(i, key, sizeof(key));
                pc = fn(NULL, key, (size_t)kl, CUR, NULL, NULL);
                cur_m[pc]++;
                for (j = 0; j < 2; j++)
                        moved[j] += fn(NULL, key, (size_t)kl, proposed[j], NULL,
                                       NULL) != pc;
        }
        for (k = 0; k < p.dr_cnt; k++) /* and it is where they went */
                CU_ASSERT_EQUAL(
                    p.drs[k].partition,
                    fn(NULL, p.drs[k].key, p.drs[k].keylen, CUR, NULL, NULL));

        r = ks_e2e_load_json(path);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        t = ks_e2e_get(r, "topics/t");
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        CU_ASSERT_STRING_EQUAL(
            json_string_value(ks_e2e_get(t, "partitioner/name")), partitioner);
        CU_ASSERT_STRING_EQUAL(
            json_string_value(ks_e2e_get(t, "partitioner/source")),
            "deliveries");
        CU_ASSERT_STRING_EQUAL(
            json_string_value(ks_e2e_get(t, "partitioner/configured")),
            "consistent_random");
        CU_ASSERT(ks_e2e_int(t, "partitioner/evidence/discriminating_keys") >=
                  32);
        CU_ASSERT_EQUAL(ks_e2e_int(t, "partitioner/evidence/disagreeing"), 0);
        CU_ASSERT(ks_e2e_has_warning(json_object_get(t, "warnings"),
                                     "PARTITIONER_LEARNED"));
        CU_ASSERT(!ks_e2e_has_warning(json_object_get(t, "warnings"),
                                      "PARTITIONER_MISMATCH"));
        CU_ASSERT_EQUAL(ks_e2e_int(t, "messages"), MSGS);
        CU_ASSERT_EQUAL(ks_e2e_int(t, "acknowledged/matched"), MSGS);
        CU_ASSERT_EQUAL(ks_e2e_int(t, "acknowledged/mismatched"), 0);
        for (i = 0; i < CUR; i++) {
                snprintf(at, sizeof(at), "current/partitions/messages/%d", i);
                CU_ASSERT_EQUAL(ks_e2e_int(t, at), (long long)cur_m[i]);
        }
        for (j = 0; j < 2; j++) {
                snprintf(at, sizeof(at), "proposals/%d/moved/messages", j);
                CU_ASSERT_EQUAL(ks_e2e_int(t, at), (long long)moved[j]);
        }
        /* the hot key's partition is the learned partitioner's */
        kl = key_of(0, key, sizeof(key));
        CU_ASSERT_STRING_EQUAL(
            json_string_value(ks_e2e_get(t, "hot_keys/key/0")), key);
        CU_ASSERT_EQUAL(ks_e2e_int(t, "hot_keys/partition_current/0"),
                        fn(NULL, key, (size_t)kl, CUR, NULL, NULL));
        json_decref(r);
        ks_e2e_producer_free(&p);
        ks_e2e_system("rm -rf '%s'", dir);
}

static void test_tconf_murmur2(void)
{
        learned_from_tconf("murmur2_random", rd_kafka_msg_partitioner_murmur2);
}

static void test_tconf_fnv1a(void)
{
        learned_from_tconf("fnv1a_random", rd_kafka_msg_partitioner_fnv1a);
}

static int32_t to_zero(const rd_kafka_topic_t *rkt, const void *key,
                       size_t keylen, int32_t cnt, void *topic_opaque,
                       void *msg_opaque)
{
        (void)rkt, (void)key, (void)keylen, (void)cnt, (void)topic_opaque,
            (void)msg_opaque;
        return 0;
}

static void test_partitioner_cb_unexplained(void)
{
        const char            *dir = ks_e2e_tmpdir("learn-cb");
        char                   path[512], at[64];
        rd_kafka_topic_conf_t *tconf;
        ks_e2e_producer_t      p;
        json_t                *r, *t;
        int                    i, j;

        snprintf(path, sizeof(path), "%s/report.json", dir);
        CU_ASSERT_FATAL(!ks_e2e_producer_new(
            &p,
            ks_e2e_conf("keyshift.report.path", path,
                        "keyshift.partitions.proposed", "12,9", NULL),
            "t", CUR));
        tconf = rd_kafka_topic_conf_new();
        rd_kafka_topic_conf_set_partitioner_cb(tconf, to_zero);
        produce_via_tconf(&p, "t", tconf);
        CU_ASSERT_EQUAL_FATAL(p.dr_cnt, MSGS);
        for (i = 0; i < (int)p.dr_cnt; i++)
                CU_ASSERT_EQUAL(p.drs[i].partition, 0);

        r = ks_e2e_load_json(path);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        t = ks_e2e_get(r, "topics/t");
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        CU_ASSERT(json_is_true(ks_e2e_get(t, "partitioner/unexplained")));
        CU_ASSERT(json_is_false(ks_e2e_get(t, "partitioner/confirmed")));
        CU_ASSERT(ks_e2e_has_warning(json_object_get(t, "warnings"),
                                     "PARTITIONER_MISMATCH"));
        CU_ASSERT(!ks_e2e_has_warning(json_object_get(t, "warnings"),
                                      "KEYS_WOULD_MOVE"));
        /* current loads: the acknowledged ones (all in partition 0) */
        for (i = 0; i < CUR; i++) {
                snprintf(at, sizeof(at), "current/partitions/messages/%d", i);
                CU_ASSERT_EQUAL(ks_e2e_int(t, at), i == 0 ? MSGS : 0);
        }
        for (j = 0; j < 2; j++) {
                json_t *prop = ks_e2e_get(t, j ? "proposals/1" : "proposals/0");
                CU_ASSERT(json_is_false(json_object_get(prop, "predictable")));
                CU_ASSERT(json_is_string(json_object_get(prop, "reason")));
                CU_ASSERT(json_is_null(json_object_get(prop, "partitions")));
                CU_ASSERT(json_is_null(json_object_get(prop, "moved")));
        }
        /* nothing placed by the wrong model: hot keys' partitions unknown,
         * no comparison with other clients */
        CU_ASSERT(json_is_null(ks_e2e_get(t, "hot_keys/partition_current/0")));
        CU_ASSERT_EQUAL(
            json_object_size(ks_e2e_get(t, "hot_keys/partition_proposed")), 0);
        CU_ASSERT(json_is_null(json_object_get(t, "other_clients")));
        json_decref(r);
        /* the CLI reads it */
        CU_ASSERT_EQUAL(
            ks_e2e_system("'%s/cli/keyshift' show '%s' >%s/show.txt",
                          getenv("KS_BUILD_DIR"), path, dir),
            0);
        CU_ASSERT_EQUAL(
            ks_e2e_system("grep -q 'not predictable' %s/show.txt", dir), 0);
        /* the headline says so rather than "moves 0.0%" */
        CU_ASSERT_EQUAL(
            ks_e2e_system("grep -q 'cannot be predicted' %s/show.txt", dir), 0);
        CU_ASSERT_NOT_EQUAL(
            ks_e2e_system("grep -q 'moves 0.0%%' %s/show.txt", dir), 0);
        CU_ASSERT_EQUAL(
            ks_e2e_system("'%s/cli/keyshift' html '%s' -o %s/r.html",
                          getenv("KS_BUILD_DIR"), path, dir),
            0);
        CU_ASSERT_EQUAL(
            ks_e2e_system("'%s/cli/keyshift' metrics '%s' >/dev/null",
                          getenv("KS_BUILD_DIR"), path),
            0);
        ks_e2e_producer_free(&p);
        if (getenv("KS_KEEP"))
                printf("\n    kept %s\n", dir);
        else
                ks_e2e_system("rm -rf '%s'", dir);
}

/** keyshift.partitions.current=6 on a 4-partition topic (a rehearsal on
 *  the mock cluster): no candidate explains the deliveries under 6, but
 *  the count is what differs: the configured partitioner stays, the
 *  proposals keep their figures, the report says it is a rehearsal
 *  (COUNT_REHEARSED, partition_count.cluster 4) and checks no delivery
 *  against a count the topic does not have. */
static void test_override_count_not_unexplained(void)
{
        const char       *dir = ks_e2e_tmpdir("learn-override");
        char              path[512], key[32];
        ks_e2e_producer_t p;
        json_t           *r, *t, *w, *prop;
        int               i, kl;

        snprintf(path, sizeof(path), "%s/report.json", dir);
        CU_ASSERT_FATAL(!ks_e2e_producer_new(
            &p,
            ks_e2e_conf("keyshift.report.path", path,
                        "keyshift.partitions.current", "6",
                        "keyshift.partitions.proposed", "12", NULL),
            "t", 4));
        for (i = 0; i < MSGS; i++) {
                kl = key_of(i, key, sizeof(key));
                ks_e2e_produce(&p, "t", key, (size_t)kl, -1, "position", 8);
        }
        ks_e2e_producer_close(&p);
        r = ks_e2e_load_json(path);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        t = ks_e2e_get(r, "topics/t");
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        CU_ASSERT_EQUAL(ks_e2e_int(t, "partition_count/current"), 6);
        CU_ASSERT(!json_is_true(ks_e2e_get(t, "partitioner/unexplained")));
        CU_ASSERT(json_is_false(ks_e2e_get(t, "partitioner/learning")));
        CU_ASSERT_STRING_EQUAL(
            json_string_value(ks_e2e_get(t, "partitioner/source")), "config");
        prop = ks_e2e_get(t, "proposals/0");
        CU_ASSERT(!json_is_false(json_object_get(prop, "predictable")));
        CU_ASSERT(ks_e2e_int(prop, "moved/messages") > 0);
        w = json_object_get(t, "warnings");
        CU_ASSERT(ks_e2e_has_warning(w, "COUNT_REHEARSED"));
        CU_ASSERT(!ks_e2e_has_warning(w, "PARTITIONER_MISMATCH"));
        CU_ASSERT_EQUAL(ks_e2e_int(t, "partition_count/cluster"), 4);
        CU_ASSERT(json_is_false(ks_e2e_get(t, "acknowledged/checked")));
        CU_ASSERT_EQUAL(ks_e2e_int(t, "acknowledged/mismatched"), 0);
        CU_ASSERT_EQUAL(ks_e2e_int(t, "acknowledged/unverified"), MSGS);
        CU_ASSERT(strstr(json_string_value(json_object_get(t, "summary")),
                         "A rehearsal of 6 partitions") != NULL);
        json_decref(r);
        ks_e2e_producer_free(&p);
        ks_e2e_system("rm -rf '%s'", dir);
}

/** @brief A queue-only producer of @p n keyed messages to topic "q";
 *         @returns its final report. */
static json_t *queue_only(int n)
{
        const char *dir = ks_e2e_tmpdir("learn-queue");
        char        path[512], errstr[256], key[32];
        rd_kafka_t *rk;
        json_t     *r;
        int         i, kl;

        snprintf(path, sizeof(path), "%s/report.json", dir);
        rk = rd_kafka_new(RD_KAFKA_PRODUCER,
                          ks_e2e_conf("keyshift.report.path", path,
                                      "keyshift.partitions.current", "6",
                                      "bootstrap.servers", "127.0.0.1:1",
                                      "queue.buffering.max.messages", "200000",
                                      "partitioner", "murmur2_random", NULL),
                          errstr, sizeof(errstr));
        CU_ASSERT_PTR_NOT_NULL_FATAL(rk);
        for (i = 0; i < n; i++) {
                kl = key_of(i, key, sizeof(key));
                CU_ASSERT_EQUAL(
                    rd_kafka_producev(rk, RD_KAFKA_V_TOPIC("q"),
                                      RD_KAFKA_V_KEY(key, (size_t)kl),
                                      RD_KAFKA_V_VALUE("v", 1),
                                      RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                                      RD_KAFKA_V_END),
                    0);
        }
        rd_kafka_purge(rk, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
        rd_kafka_flush(rk, 2000);
        rd_kafka_destroy(rk);
        r = ks_e2e_load_json(path);
        ks_e2e_system("rm -rf '%s'", dir);
        return r;
}

static void test_queue_only_unconfirmed(void)
{
        json_t *r = queue_only(500), *t;

        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        t = ks_e2e_get(r, "topics/q");
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        CU_ASSERT_STRING_EQUAL(
            json_string_value(ks_e2e_get(t, "partitioner/name")),
            "murmur2_random");
        CU_ASSERT_STRING_EQUAL(
            json_string_value(ks_e2e_get(t, "partitioner/source")), "config");
        CU_ASSERT(json_is_false(ks_e2e_get(t, "partitioner/confirmed")));
        CU_ASSERT(json_is_true(ks_e2e_get(t, "partitioner/learning")));
        CU_ASSERT_EQUAL(
            ks_e2e_int(t, "partitioner/evidence/discriminating_keys"), 0);
        CU_ASSERT_EQUAL(ks_e2e_int(t, "messages"), 500);
        json_decref(r);
}

/** 100,000 messages and not one acknowledgement: learning stops (its
 *  analyses cost up to three times the topic's), the configured one stays,
 *  unconfirmed, and the figures are its own. */
static void test_queue_only_stops_learning(void)
{
        json_t *r = queue_only(100500), *t;

        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        t = ks_e2e_get(r, "topics/q");
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        CU_ASSERT(json_is_false(ks_e2e_get(t, "partitioner/learning")));
        CU_ASSERT(json_is_false(ks_e2e_get(t, "partitioner/confirmed")));
        CU_ASSERT_STRING_EQUAL(
            json_string_value(ks_e2e_get(t, "partitioner/name")),
            "murmur2_random");
        CU_ASSERT_EQUAL(ks_e2e_int(t, "messages"), 100500);
        json_decref(r);
}

void ks_test_register(void)
{
        KS_ADD_SUITE(
            "partitioner learned from deliveries",
            {"rd_kafka_topic_new() with partitioner=murmur2_random",
             test_tconf_murmur2},
            {"rd_kafka_topic_new() with partitioner=fnv1a_random",
             test_tconf_fnv1a},
            {"partitioner_cb to partition 0: unexplained, not predictable",
             test_partitioner_cb_unexplained},
            {"queue-only: configured, unconfirmed",
             test_queue_only_unconfirmed},
            {"queue-only, 100,000 messages: learning stops",
             test_queue_only_stops_learning},
            {"keyshift.partitions.current=6 on 4 partitions: a rehearsal",
             test_override_count_not_unexplained});
}
