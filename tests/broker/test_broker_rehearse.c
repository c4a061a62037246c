/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_broker_rehearse.c
 * @brief Rehearse, then do it, on a real Kafka broker: keyshift predicts
 *        what a partition increase N -> M does to a producer's keys, the
 *        increase really happens (CreatePartitions), the same keys are
 *        produced again, and the prediction is compared with where every
 *        message really landed.
 *
 * Per scenario (partitioner x N -> M):
 *  1. create a topic with N partitions;
 *  2. run 1: a librdkafka producer with keyshift loaded
 *     (keyshift.partitions.proposed=M, keyshift.hot.keys=1000, a key sample
 *     large enough to hold every key, so its figures are exact) produces
 *     the key set: every MMSI-keyed sentence of the shared AIS logs, keyed
 *     by the MMSI in decimal (the real traffic, with its skew), plus random
 *     binary, UTF-8 and ASCII keys, an empty key and NULL keys; its final
 *     report is the prediction;
 *  3. increase the topic to M partitions (Admin API CreatePartitions, what
 *     `kafka-topics --alter --partitions M` does) and wait until the
 *     broker's metadata shows M;
 *  4. run 2: a new producer (keyshift loaded) sends the same messages.
 *
 * Oracles: the partition of every message in each run's delivery reports,
 * and librdkafka's documented rules for which keys a partitioner hashes
 * (consistent_random: non-empty keys; murmur2_random: every non-NULL key).
 * Checked, with no tolerance:
 *  - per key: run 1's partition == keyshift's model under N, run 2's ==
 *    the model under M (ks_partition_of(ks_partitioner_hash(p, key), n),
 *    every key) and == the report's hot_keys[].partition_proposed[M] (the
 *    1000 keys listed), hot_keys[].partition_current == run 1's;
 *  - moved keys: proposals[0].moved.distinct_keys(_fraction) == the keys
 *    whose partition differs between the runs; moved traffic:
 *    moved.messages(_fraction), moved.bytes == the messages that did;
 *  - per partition: the report's current figures == run 1's deliveries,
 *    proposals[0].partitions == run 2's deliveries (messages and bytes),
 *    proposals[0].flow == run 1 partition x run 2 partition counts;
 *  - acknowledgements: every hashed message matched, none mismatched.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ks_broker_support.h"
#include "ks_e2e_support.h"
#include "ks_hex.h"
#include "ks_partitioner.h"
#include "ks_test.h"

#define SUMMARY "2-rehearse"
#define RANDOM_KEYS 3000
#define NULL_MSGS 300
#define HOT_KEYS 1000

typedef struct scenario {
        const char      *name;
        ks_partitioner_t p;
        int              n, m;
} scenario_t;

static const scenario_t scenarios[] = {
    {"murmur2_random", KS_PARTITIONER_MURMUR2_RANDOM, 6, 12},
    {"murmur2_random", KS_PARTITIONER_MURMUR2_RANDOM, 3, 4},
    {"murmur2_random", KS_PARTITIONER_MURMUR2_RANDOM, 8, 24},
    {"consistent_random", KS_PARTITIONER_CONSISTENT_RANDOM, 6, 12},
    {"consistent_random", KS_PARTITIONER_CONSISTENT_RANDOM, 3, 4},
    {"consistent_random", KS_PARTITIONER_CONSISTENT_RANDOM, 8, 24},
};

static ks_keyset_t keys;
static int         header_done;

static int suite_init(void)
{
        long ais;

        ks_keyset_init(&keys);
        if ((ais = ks_keyset_add_ais(&keys)) <= 0)
                return 1;
        ks_keyset_add_random(&keys, RANDOM_KEYS, NULL_MSGS, 0x5eed2u);
        printf("\nkey set: %zu messages over %zu distinct keys; %zu AIS "
               "messages over %zu MMSIs, %d random keys (1-4 messages "
               "each), an empty key, %d NULL-key messages\n",
               keys.msg_cnt, keys.key_cnt, keys.ais_msgs, keys.ais_keys,
               RANDOM_KEYS, NULL_MSGS);
        return 0;
}

static int suite_clean(void)
{
        ks_keyset_free(&keys);
        ks_broker_admin_close();
        return 0;
}

/** @brief One producer run of the whole key set. */
static void produce_all(ks_broker_producer_t *pr, const scenario_t *s,
                        const char *topic, const char *report, int proposed)
{
        char             prop[16];
        size_t           i;
        rd_kafka_conf_t *conf;

        snprintf(prop, sizeof(prop), "%d", proposed);
        conf = ks_e2e_conf(
            "client.id", "keyshift-broker-rehearse", "partitioner", s->name,
            "linger.ms", "20", "keyshift.partitions.proposed", prop,
            "keyshift.hot.keys", "1000", "keyshift.key.sample.size", "65536",
            /* a budget that keeps every key's counter (exact hot keys) */
            "keyshift.memory.max.mb", "256", "keyshift.report.interval.ms", "0",
            "keyshift.report.path", report, NULL);
        CU_ASSERT_FATAL(ks_broker_producer_new(pr, conf, keys.msg_cnt) == 0);
        for (i = 0; i < keys.msg_cnt; i++) {
                const ks_bmsg_t *m = &keys.msgs[i];
                const ks_bkey_t *k = &keys.keys[m->key];
                ks_broker_produce(pr, topic, i, k->is_null ? NULL : k->bytes,
                                  k->len, m->value, m->value_len);
        }
        ks_broker_producer_close(pr);
        CU_ASSERT_EQUAL(pr->failed, 0);
        CU_ASSERT_EQUAL(pr->delivered, keys.msg_cnt);
}

/** @returns the report's integer, -1 (and a failure) when absent. */
static long long rint_(json_t *t, const char *path)
{
        return ks_e2e_int(t, path);
}

/** Checks an integer of the report, saying which one and both values when
 *  it differs. */
#define EXPECT_INT(obj, path, want)                                            \
        do {                                                                   \
                long long got_  = rint_((obj), (path));                        \
                long long want_ = (long long)(want);                           \
                if (got_ != want_)                                             \
                        fprintf(stderr,                                        \
                                "%s: report %s = %lld, observed %lld\n",       \
                                s->name, (path), got_, want_);                 \
                CU_ASSERT_EQUAL(got_, want_);                                  \
        } while (0)

static double rreal(json_t *t, const char *path)
{
        json_t *j = ks_e2e_get(t, path);
        if (!json_is_number(j)) {
                fprintf(stderr, "report: no number at %s\n", path);
                CU_FAIL("missing number in report");
                return -1;
        }
        return json_number_value(j);
}

/** @brief Checks a report's per-partition array against observed loads.
 *  @returns partitions that differ. */
static int check_loads(json_t *arr, const uint64_t *msgs, const uint64_t *bytes,
                       int n, const char *what)
{
        int i, bad = 0;

        json_t *am = json_object_get(arr, "messages");
        json_t *ab = json_object_get(arr, "bytes");

        if (json_array_size(am) != (size_t)n ||
            json_array_size(ab) != (size_t)n) {
                fprintf(stderr, "%s: %zu partitions, expected %d\n", what,
                        json_array_size(am), n);
                CU_FAIL("wrong partition array size");
                return n;
        }
        for (i = 0; i < n; i++) {
                long long m = json_integer_value(json_array_get(am, (size_t)i));
                long long b = json_integer_value(json_array_get(ab, (size_t)i));
                if (m != (long long)msgs[i] || b != (long long)bytes[i]) {
                        if (!bad)
                                fprintf(stderr,
                                        "%s partition %d: report %lld "
                                        "messages %lld bytes, observed "
                                        "%" PRIu64 " / %" PRIu64 "\n",
                                        what, i, m, b, msgs[i], bytes[i]);
                        bad++;
                }
        }
        CU_ASSERT_EQUAL(bad, 0);
        return bad;
}

static int has_warning(json_t *t, const char *code)
{
        json_t *w = json_object_get(t, "warnings");
        size_t  i;

        for (i = 0; i < json_array_size(w); i++)
                if (!strcmp(json_string_value(
                                json_object_get(json_array_get(w, i), "code")),
                            code))
                        return 1;
        return 0;
}

/**
 * @brief Checks window.messages against every message of a run whose count
 *        never changed: messages of every kind, including the NULL-key ones
 *        sent before keyshift knew the count, are in the window.
 * @returns how many messages window.messages is short by (must be 0).
 */
static long long window_check(const scenario_t *s, json_t *t, size_t total_msgs)
{
        long long win = rint_(t, "window/messages");

        if (win != (long long)total_msgs)
                fprintf(stderr, "%s: window.messages = %lld, sent %zu\n",
                        s->name, win, total_msgs);
        CU_ASSERT_EQUAL(win, (long long)total_msgs);
        return (long long)total_msgs - win;
}

/**
 * @brief Checks a run's acknowledgement counters: every delivery report
 *        counted, none failed, none mismatched, none left pending or
 *        unverified (those that arrive before keyshift's first metadata
 *        answer are checked when it comes), every hashed one matched.
 * @returns the unverified count (must be 0).
 */
static long long ack_check(const scenario_t *s, json_t *t, size_t total_msgs,
                           uint64_t hashed_msgs)
{
        long long unv = rint_(t, "acknowledged/unverified");

        (void)s;
        EXPECT_INT(t, "acknowledged/messages", total_msgs);
        EXPECT_INT(t, "acknowledged/mismatched", 0);
        EXPECT_INT(t, "acknowledged/failed", 0);
        EXPECT_INT(t, "acknowledged/pending_verification", 0);
        EXPECT_INT(t, "acknowledged/not_predictable", total_msgs - hashed_msgs);
        EXPECT_INT(t, "acknowledged/unverified", 0);
        EXPECT_INT(t, "acknowledged/matched", (long long)hashed_msgs);
        return unv;
}

static void run_scenario(const scenario_t *s)
{
        const char *dir = ks_e2e_tmpdir("rehearse");
        char        topic[256], rep1[600], rep2[600], path[64], hex[300];
        ks_broker_producer_t r1, r2;
        double               t0 = ks_broker_now_s();
        int                  n = s->n, m    = s->m, i;
        size_t               j, hashed_keys = 0, moved_keys = 0, bad_keys = 0,
                  hot_checked = 0, total_msgs = keys.msg_cnt, null_msgs = 0,
                  empty_msgs  = 0;
        uint64_t  hashed_msgs = 0, moved_msgs = 0, moved_bytes = 0;
        uint64_t *l1m = calloc((size_t)n, 8), *l1b = calloc((size_t)n, 8);
        uint64_t *l2m = calloc((size_t)m, 8), *l2b = calloc((size_t)m, 8);
        uint64_t *flow     = calloc((size_t)n * (size_t)m, 8);
        int32_t  *obs1     = malloc(keys.key_cnt * 4),
                *obs2      = malloc(keys.key_cnt * 4);
        uint8_t *bad       = calloc(keys.key_cnt, 1),
                *hashed    = calloc(keys.key_cnt, 1);
        uint64_t *key_msgs = calloc(keys.key_cnt, 8);
        json_t   *rep, *t, *prop, *hot, *flowj;
        int       part_bad = 0, flow_bad = 0;
        long long win_short[2] = {0, 0}, unverified[2] = {0, 0};
        double    f_keys, f_msgs, pk, pm, pt;

        snprintf(rep1, sizeof(rep1), "%s/run1-before.json", dir);
        snprintf(rep2, sizeof(rep2), "%s/run2-after.json", dir);
        ks_broker_topic_name("rehearse", topic, sizeof(topic));
        CU_ASSERT_FATAL(ks_broker_create_topic(topic, n) == 0);

        produce_all(&r1, s, topic, rep1, m); /* rehearse */
        CU_ASSERT_FATAL(ks_broker_create_partitions(topic, m) == 0); /* do */
        produce_all(&r2, s, topic, rep2, 2 * m);                     /* again */

        /* Observed, per key and per message. */
        for (j = 0; j < keys.key_cnt; j++)
                obs1[j] = obs2[j] = -1;
        for (j = 0; j < keys.msg_cnt; j++) {
                const ks_bmsg_t *msg = &keys.msgs[j];
                const ks_bkey_t *k   = &keys.keys[msg->key];
                int32_t          p1 = r1.partition[j], p2 = r2.partition[j];
                uint64_t         bytes = k->len + msg->value_len;

                null_msgs += k->is_null;
                empty_msgs += !k->is_null && !k->len;
                if (!ks_broker_oracle_hashed(s->p, k))
                        continue;
                if (p1 < 0 || p1 >= n || p2 < 0 || p2 >= m) {
                        bad[msg->key] = 1; /* undelivered or out of range */
                        continue;
                }
                hashed[msg->key] = 1;
                key_msgs[msg->key]++;
                hashed_msgs++;
                /* every message of a key lands where its first did */
                if ((obs1[msg->key] >= 0 && obs1[msg->key] != p1) ||
                    (obs2[msg->key] >= 0 && obs2[msg->key] != p2))
                        bad[msg->key] = 1;
                obs1[msg->key] = p1;
                obs2[msg->key] = p2;
                l1m[p1]++;
                l1b[p1] += bytes;
                l2m[p2]++;
                l2b[p2] += bytes;
                flow[(size_t)p1 * (size_t)m + (size_t)p2]++;
                if (p1 != p2) {
                        moved_msgs++;
                        moved_bytes += bytes;
                }
        }
        /* keyshift's model functions, every hashed key. */
        for (j = 0; j < keys.key_cnt; j++) {
                const ks_bkey_t *k = &keys.keys[j];
                uint32_t         h;
                if (!hashed[j])
                        continue;
                hashed_keys++;
                moved_keys += obs1[j] != obs2[j];
                h = ks_partitioner_hash(s->p, k->bytes, k->len);
                if (ks_partition_of(h, n) != obs1[j] ||
                    ks_partition_of(h, m) != obs2[j])
                        bad[j] = 1;
        }

        /* The prediction: run 1's final report. */
        rep = ks_e2e_load_json(rep1);
        CU_ASSERT_PTR_NOT_NULL_FATAL(rep);
        t = json_object_get(json_object_get(rep, "topics"), topic);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        EXPECT_INT(t, "partition_count/current", n);
        EXPECT_INT(t, "messages", (long long)total_msgs);
        EXPECT_INT(t, "keys/hashed", (long long)hashed_msgs);
        EXPECT_INT(t, "keys/null", (long long)null_msgs);
        EXPECT_INT(t, "keys/empty", (long long)empty_msgs);
        EXPECT_INT(t, "keys/distinct_estimate", (long long)hashed_keys);
        CU_ASSERT_EQUAL(rreal(t, "keys/distinct_error"), 0.0);
        EXPECT_INT(t, "window/hashed_messages", (long long)hashed_msgs);
        /* The count never changed during run 1: its window should be all
         * of it (see window_check()). */
        win_short[0]  = window_check(s, t, total_msgs);
        unverified[0] = ack_check(s, t, total_msgs, hashed_msgs);
        part_bad += check_loads(ks_e2e_get(t, "current/partitions"), l1m, l1b,
                                n, "current (run 1)");

        prop = ks_e2e_get(t, "proposals/0");
        CU_ASSERT_PTR_NOT_NULL_FATAL(prop);
        EXPECT_INT(prop, "partition_count", m);
        part_bad += check_loads(json_object_get(prop, "partitions"), l2m, l2b,
                                m, "proposed (run 2)");
        flowj = ks_e2e_flow(prop, n);
        CU_ASSERT_PTR_NOT_NULL(flowj);
        for (i = 0; i < n * m; i++)
                flow_bad += json_integer_value(json_array_get(
                                json_array_get(flowj, (size_t)(i / m)),
                                (size_t)(i % m))) != (long long)flow[i];
        json_decref(flowj);
        CU_ASSERT_EQUAL(flow_bad, 0);

        EXPECT_INT(prop, "moved/messages", (long long)moved_msgs);
        EXPECT_INT(prop, "moved/bytes", (long long)moved_bytes);
        EXPECT_INT(prop, "moved/distinct_keys", (long long)moved_keys);
        f_keys = (double)moved_keys / (double)hashed_keys;
        f_msgs = (double)moved_msgs / (double)hashed_msgs;
        pk     = rreal(prop, "moved/distinct_keys_fraction");
        pm     = rreal(prop, "moved/messages_fraction");
        pt     = rreal(prop, "moved/traffic_fraction");
        CU_ASSERT_EQUAL(pk, f_keys);
        CU_ASSERT_EQUAL(rreal(prop, "moved/distinct_keys_fraction_error"), 0.0);
        CU_ASSERT_EQUAL(pm, f_msgs);
        /* moved / window.messages = moved / all messages (no change). */
        CU_ASSERT_EQUAL(pt, (double)moved_msgs /
                                (double)(total_msgs - win_short[0]));
        CU_ASSERT_EQUAL(has_warning(t, "KEYS_WOULD_MOVE"), moved_msgs > 0);
        CU_ASSERT_EQUAL(has_warning(t, "PARTITIONER_MISMATCH"), 0);

        /* The per-key prediction: hot_keys. */
        hot = ks_e2e_hot_keys(t);
        CU_ASSERT_EQUAL(json_array_size(hot), hashed_keys < HOT_KEYS
                                                  ? hashed_keys
                                                  : (size_t)HOT_KEYS);
        snprintf(path, sizeof(path), "partition_proposed/%d", m);
        for (j = 0; j < json_array_size(hot); j++) {
                json_t     *h = json_array_get(hot, j);
                const char *x =
                    json_string_value(json_object_get(h, "key_hex"));
                uint8_t kb[256];
                long kl = x ? ks_hex_decode(x, strlen(x), kb, sizeof(kb)) : -1;
                long ki = kl >= 0 ? ks_keyset_find(&keys, kb, (size_t)kl) : -1;
                char mv[32];

                if (ki < 0 || !hashed[ki]) {
                        fprintf(stderr,
                                "hot key %s is not a hashed key "
                                "of the set\n",
                                x ? x : "(none)");
                        CU_FAIL("unknown hot key");
                        continue;
                }
                hot_checked++;
                snprintf(mv, sizeof(mv), "moves/%d", m);
                if (ks_e2e_int(h, "partition_current") != obs1[ki] ||
                    ks_e2e_int(h, path) != obs2[ki] ||
                    json_is_true(ks_e2e_get(h, mv)) != (obs1[ki] != obs2[ki]) ||
                    ks_e2e_int(h, "messages") != (long long)key_msgs[ki] ||
                    ks_e2e_int(h, "messages_error") != 0) {
                        if (!bad[ki]) {
                                ks_hex_encode(kb, (size_t)kl, hex);
                                fprintf(stderr,
                                        "hot key %s: predicted %lld -> "
                                        "%lld (%lld messages), observed %d "
                                        "-> %d (%" PRIu64 ")\n",
                                        hex, ks_e2e_int(h, "partition_current"),
                                        ks_e2e_int(h, path),
                                        ks_e2e_int(h, "messages"), obs1[ki],
                                        obs2[ki], key_msgs[ki]);
                        }
                        bad[ki] = 1;
                }
        }
        json_decref(hot);
        json_decref(rep);

        /* Run 2's own report: the count it saw, and its deliveries. */
        rep = ks_e2e_load_json(rep2);
        CU_ASSERT_PTR_NOT_NULL_FATAL(rep);
        t = json_object_get(json_object_get(rep, "topics"), topic);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        EXPECT_INT(t, "partition_count/current", m);
        unverified[1] = ack_check(s, t, total_msgs, hashed_msgs);
        win_short[1]  = window_check(s, t, total_msgs);
        part_bad += check_loads(ks_e2e_get(t, "current/partitions"), l2m, l2b,
                                m, "current (run 2)");
        json_decref(rep);

        for (j = 0; j < keys.key_cnt; j++)
                bad_keys += bad[j];
        CU_ASSERT_EQUAL(bad_keys, 0);
        ks_broker_delete_topic(topic);

        if (!header_done++) {
                ks_broker_summary(SUMMARY, "### Rehearse, then do it (real "
                                           "broker, CreatePartitions)");
                ks_broker_summary(SUMMARY, "%s", "");
                ks_broker_summary(SUMMARY,
                                  "key set: %zu messages, %zu distinct keys "
                                  "(%zu AIS MMSIs with %zu messages, %d "
                                  "random keys, 1 empty key, %d NULL-key "
                                  "messages)",
                                  keys.msg_cnt, keys.key_cnt, keys.ais_keys,
                                  keys.ais_msgs, RANDOM_KEYS, NULL_MSGS);
                ks_broker_summary(SUMMARY, "%s", "");
                ks_broker_summary(
                    SUMMARY,
                    "| partitioner | N→M | hashed keys | hashed messages | "
                    "moved keys: predicted | observed | moved traffic: "
                    "predicted | observed | hot keys checked | per-partition "
                    "(N+M+M) and flow cells differing | disagreeing keys | "
                    "traffic_fraction: report / moved ÷ all messages | "
                    "window.messages short (run 1 / run 2) | acks "
                    "unverified (run 1 / run 2) | time |");
                ks_broker_summary(SUMMARY, "|---|---|---|---|---|---|---|---|"
                                           "---|---|---|---|---|---|---|");
        }
        ks_broker_summary(
            SUMMARY,
            "| %s | %d→%d | %zu | %" PRIu64 " | %.6f | %.6f (%zu/%zu) | %.6f "
            "| %.6f (%" PRIu64 "/%" PRIu64 ") | %zu | %d | %zu | %.6f / "
            "%.6f | %lld / %lld | %lld / %lld | %.1f s |",
            s->name, n, m, hashed_keys, hashed_msgs, pk, f_keys, moved_keys,
            hashed_keys, pm, f_msgs, moved_msgs, hashed_msgs, hot_checked,
            part_bad + flow_bad, bad_keys, pt,
            (double)moved_msgs / (double)total_msgs, win_short[0], win_short[1],
            unverified[0], unverified[1], ks_broker_now_s() - t0);

        ks_broker_producer_free(&r1);
        ks_broker_producer_free(&r2);
        free(l1m);
        free(l1b);
        free(l2m);
        free(l2b);
        free(flow);
        free(obs1);
        free(obs2);
        free(bad);
        free(hashed);
        free(key_msgs);
        ks_broker_tmpdir_done(dir);
}

static void test_murmur2_6_12(void)
{
        run_scenario(&scenarios[0]);
}
static void test_murmur2_3_4(void)
{
        run_scenario(&scenarios[1]);
}
static void test_murmur2_8_24(void)
{
        run_scenario(&scenarios[2]);
}
static void test_consistent_6_12(void)
{
        run_scenario(&scenarios[3]);
}
static void test_consistent_3_4(void)
{
        run_scenario(&scenarios[4]);
}
static void test_consistent_8_24(void)
{
        run_scenario(&scenarios[5]);
}

void ks_test_register(void)
{
        CU_pSuite s = CU_add_suite("rehearse", suite_init, suite_clean);
        CU_add_test(s, "murmur2_random 6->12", test_murmur2_6_12);
        CU_add_test(s, "murmur2_random 3->4", test_murmur2_3_4);
        CU_add_test(s, "murmur2_random 8->24", test_murmur2_8_24);
        CU_add_test(s, "consistent_random 6->12", test_consistent_6_12);
        CU_add_test(s, "consistent_random 3->4", test_consistent_3_4);
        CU_add_test(s, "consistent_random 8->24", test_consistent_8_24);
}
