/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_e2e_producer.c
 * @brief A real librdkafka producer with keyshift loaded by full path, on
 *        the mock cluster. Oracles: the partition in each delivery report,
 *        and librdkafka's own rd_kafka_msg_partitioner_*() functions for
 *        the proposed counts; never keyshift's own model.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ks_e2e_support.h"
#include "ks_test.h"

typedef int32_t(rk_partitioner_f)(const rd_kafka_topic_t *, const void *,
                                  size_t, int32_t, void *, void *);

/** librdkafka's partitioners, and (from its documentation of the
 *  `partitioner` and `sticky.partitioning.linger.ms` properties) which
 *  keys each hashes: 0 = only non-empty keys, 1 = every non-NULL key,
 *  2 = every key including NULL. The random partitioner hashes none. */
static const struct {
        const char       *name;
        rk_partitioner_f *fn;
        int               hashes;
} partitioners[] = {
    {"random", NULL, -1},
    {"consistent", rd_kafka_msg_partitioner_consistent, 2},
    {"consistent_random", rd_kafka_msg_partitioner_consistent, 0},
    {"murmur2", rd_kafka_msg_partitioner_murmur2, 2},
    {"murmur2_random", rd_kafka_msg_partitioner_murmur2, 1},
    {"fnv1a", rd_kafka_msg_partitioner_fnv1a, 2},
    {"fnv1a_random", rd_kafka_msg_partitioner_fnv1a, 1},
};

static int oracle_hashes(int pi, const ks_e2e_dr_t *d)
{
        int h = partitioners[pi].hashes;
        if (h < 0)
                return 0;
        if (d->key_null)
                return h >= 2;
        if (d->keylen == 0)
                return h >= 1;
        return 1;
}

static int32_t oracle_partition(int pi, const ks_e2e_dr_t *d, int32_t cnt)
{
        return partitioners[pi].fn(NULL, d->key_null ? NULL : d->key, d->keylen,
                                   cnt, NULL, NULL);
}

/** A key stream with hot keys, repeats, NULL, empty and binary keys. */
static size_t make_key(unsigned *seed, uint8_t *key, int *is_null)
{
        int    r = rand_r(seed) % 100;
        size_t i, n;

        *is_null = 0;
        if (r < 5) {
                *is_null = 1;
                return 0;
        }
        if (r < 10)
                return 0;
        if (r < 25)
                return (size_t)snprintf((char *)key, 64, "hot-1");
        if (r < 32)
                return (size_t)snprintf((char *)key, 64, "hot-2");
        if (r < 42) {
                n = (size_t)(rand_r(seed) % 100) + 1;
                for (i = 0; i < n; i++)
                        key[i] = (uint8_t)rand_r(seed);
                return n;
        }
        if (r < 47)
                return (size_t)snprintf((char *)key, 64, "m\xc3\xa5ke-%d",
                                        rand_r(seed) % 50);
        return (size_t)snprintf((char *)key, 64, "vessel-%d",
                                rand_r(seed) % 700);
}

#define N_MSGS 4000
#define CUR 6

static const int32_t proposed[] = {12, 9};

static void check_partitions(json_t *arr, const uint64_t *msgs,
                             const uint64_t *bytes, int32_t n)
{
        json_t *am = json_object_get(arr, "messages");
        json_t *ab = json_object_get(arr, "bytes");
        int32_t i;

        /* columns indexed by partition (keyshift.report.v2) */
        CU_ASSERT_EQUAL_FATAL(json_array_size(am), (size_t)n);
        CU_ASSERT_EQUAL_FATAL(json_array_size(ab), (size_t)n);
        for (i = 0; i < n; i++) {
                CU_ASSERT_EQUAL(json_integer_value(json_array_get(am, i)),
                                (long long)msgs[i]);
                CU_ASSERT_EQUAL(json_integer_value(json_array_get(ab, i)),
                                (long long)bytes[i]);
        }
}

/** Distinct keys, for the exact distinct count and moved-key fraction. */
static int key_seen(ks_e2e_dr_t **seen, size_t *cnt, const ks_e2e_dr_t *d)
{
        size_t i;
        for (i = 0; i < *cnt; i++)
                if (seen[i]->keylen == d->keylen && /* NULL hashes as "" */
                    !memcmp(seen[i]->key, d->key, d->keylen))
                        return 1;
        seen[(*cnt)++] = (ks_e2e_dr_t *)d;
        return 0;
}

static void run_partitioner(int pi, const char *linger)
{
        const char       *dir = ks_e2e_tmpdir("producer");
        char              path[600], value[64];
        ks_e2e_producer_t p;
        unsigned          seed = 42u + (unsigned)pi;
        uint8_t           key[128];
        int               is_null, i, j;
        size_t            k;
        json_t           *report, *t;
        uint64_t          cur_m[CUR] = {0}, cur_b[CUR] = {0};
        uint64_t          prop_m[2][12] = {{0}}, prop_b[2][12] = {{0}};
        uint64_t moved_m[2] = {0}, moved_b[2] = {0}, flow[2][12][12] = {{{0}}};
        uint64_t hashed = 0, nulls = 0, empties = 0;
        uint64_t hot1              = 0;
        ks_e2e_dr_t **distinct     = calloc(N_MSGS, sizeof(*distinct));
        size_t        distinct_cnt = 0, distinct_moved[2] = {0};

        snprintf(path, sizeof(path), "%s/report.json", dir);
        rd_kafka_conf_t *conf = ks_e2e_conf(
            "partitioner", partitioners[pi].name,
            "sticky.partitioning.linger.ms", linger,
            "keyshift.partitions.proposed", "12,9", "keyshift.report.path",
            path, "keyshift.report.interval.ms", "0", NULL);
        CU_ASSERT_FATAL(ks_e2e_producer_new(&p, conf, "t", CUR) == 0);

        for (i = 0; i < N_MSGS; i++) {
                size_t kl = make_key(&seed, key, &is_null);
                int    vl = snprintf(value, sizeof(value), "v%d", i);
                ks_e2e_produce(&p, "t", is_null ? NULL : key, kl, -1, value,
                               (size_t)vl);
        }
        ks_e2e_producer_close(&p);
        CU_ASSERT_EQUAL_FATAL(p.dr_cnt, N_MSGS);

        for (k = 0; k < p.dr_cnt; k++) {
                const ks_e2e_dr_t *d = &p.drs[k];
                CU_ASSERT_EQUAL(d->err, 0);
                nulls += d->key_null;
                empties += !d->key_null && d->keylen == 0;
                hot1 += d->keylen == 5 && !memcmp(d->key, "hot-1", 5);
        }

        report = ks_e2e_load_json(path);
        CU_ASSERT_PTR_NOT_NULL_FATAL(report);
        t = ks_e2e_get(report, "topics/t");
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        CU_ASSERT_STRING_EQUAL(
            json_string_value(ks_e2e_get(t, "partitioner/name")),
            partitioners[pi].name);
        /* set in the producer's configuration, where keyshift reads it:
         * the deliveries confirm it (a random one: when they rule out
         * every hash family) */
        CU_ASSERT_STRING_EQUAL(
            json_string_value(ks_e2e_get(t, "partitioner/source")), "config");
        CU_ASSERT(!ks_e2e_has_warning(json_object_get(t, "warnings"),
                                      "PARTITIONER_LEARNED"));
        CU_ASSERT_EQUAL(ks_e2e_int(t, "messages"), N_MSGS);
        CU_ASSERT_EQUAL(ks_e2e_int(t, "keys/null"), (long long)nulls);
        CU_ASSERT_EQUAL(ks_e2e_int(t, "keys/empty"), (long long)empties);
        CU_ASSERT_EQUAL(ks_e2e_int(t, "partition_count/current"), CUR);

        /* The oracle for the current count: the delivered partition. */
        for (k = 0; k < p.dr_cnt; k++) {
                const ks_e2e_dr_t *d = &p.drs[k];
                if (!oracle_hashes(pi, d))
                        continue;
                hashed++;
                /* The delivered partition is what the model must predict. */
                CU_ASSERT_EQUAL(d->partition, oracle_partition(pi, d, CUR));
                if (!key_seen(distinct, &distinct_cnt, d)) {
                        for (j = 0; j < 2; j++)
                                distinct_moved[j] +=
                                    oracle_partition(pi, d, proposed[j]) !=
                                    d->partition;
                }
        }
        CU_ASSERT_EQUAL(ks_e2e_int(t, "keys/hashed"), (long long)hashed);
        CU_ASSERT_EQUAL(ks_e2e_int(t, "acknowledged/messages"), N_MSGS);
        if (ks_e2e_int(t, "acknowledged/matched") != (long long)hashed)
                fprintf(stderr, "%s linger %s: matched %lld, hashed %llu\n",
                        partitioners[pi].name, linger,
                        ks_e2e_int(t, "acknowledged/matched"),
                        (unsigned long long)hashed);
        CU_ASSERT_EQUAL(ks_e2e_int(t, "acknowledged/matched"),
                        (long long)hashed);
        CU_ASSERT_EQUAL(ks_e2e_int(t, "acknowledged/mismatched"), 0);
        CU_ASSERT_EQUAL(ks_e2e_int(t, "acknowledged/not_predictable"),
                        (long long)(N_MSGS - hashed));
        CU_ASSERT_EQUAL(ks_e2e_int(t, "keys/distinct_estimate"),
                        (long long)distinct_cnt);

        /* Expected per-partition load, flow and moved traffic: the same
         * stream regenerated (bytes = key + value), placed by librdkafka's
         * partitioner functions at each count. */
        {
                unsigned s2 = 42u + (unsigned)pi;
                for (i = 0; i < N_MSGS; i++) {
                        ks_e2e_dr_t d = {0};
                        uint64_t    bytes;
                        int32_t     pc;
                        d.keylen   = make_key(&s2, d.key, &is_null);
                        d.key_null = is_null;
                        bytes      = d.keylen + (uint64_t)snprintf(
                                                    value, sizeof(value), "v%d", i);
                        if (!oracle_hashes(pi, &d))
                                continue;
                        pc = oracle_partition(pi, &d, CUR);
                        cur_m[pc]++;
                        cur_b[pc] += bytes;
                        for (j = 0; j < 2; j++) {
                                int32_t pp =
                                    oracle_partition(pi, &d, proposed[j]);
                                prop_m[j][pp]++;
                                prop_b[j][pp] += bytes;
                                flow[j][pc][pp]++;
                                if (pp != pc) {
                                        moved_m[j]++;
                                        moved_b[j] += bytes;
                                }
                        }
                }
        }
        /* The delivered partitions agree with the histogram just computed. */
        {
                uint64_t dr_hist[CUR] = {0};
                for (k = 0; k < p.dr_cnt; k++)
                        if (oracle_hashes(pi, &p.drs[k]))
                                dr_hist[p.drs[k].partition]++;
                for (i = 0; i < CUR; i++)
                        CU_ASSERT_EQUAL(dr_hist[i], cur_m[i]);
        }
        check_partitions(ks_e2e_get(t, "current/partitions"), cur_m, cur_b,
                         CUR);
        for (j = 0; j < 2; j++) {
                char    pfx[64];
                json_t *prop;
                snprintf(pfx, sizeof(pfx), "proposals/%d", j);
                prop = ks_e2e_get(t, pfx);
                CU_ASSERT_PTR_NOT_NULL_FATAL(prop);
                CU_ASSERT_EQUAL(ks_e2e_int(prop, "partition_count"),
                                proposed[j]);
                check_partitions(json_object_get(prop, "partitions"), prop_m[j],
                                 prop_b[j], proposed[j]);
                CU_ASSERT_EQUAL(ks_e2e_int(prop, "moved/messages"),
                                (long long)moved_m[j]);
                CU_ASSERT_EQUAL(ks_e2e_int(prop, "moved/bytes"),
                                (long long)moved_b[j]);
                if (distinct_cnt)
                        CU_ASSERT_DOUBLE_EQUAL(
                            json_real_value(ks_e2e_get(
                                prop, "moved/distinct_keys_fraction")),
                            (double)distinct_moved[j] / (double)distinct_cnt,
                            1e-9);
        }
        /* Each flow is written as flow_nonzero when its nonzero cells,
         * counted from the oracle, are under a quarter of the matrix (6 ->
         * 12 with only hashed keys: 2 of 12 per row), else dense (6 -> 9:
         * 3 of 9; random NULL keys fill every cell); both read back the
         * same */
        for (k = 0; k < 2; k++) {
                json_t *m = ks_e2e_flow(
                    ks_e2e_get(t, k ? "proposals/1" : "proposals/0"), CUR);
                size_t nz = 0;
                for (i = 0; i < CUR; i++)
                        for (j = 0; j < proposed[k]; j++)
                                nz += flow[k][i][j] != 0;
                CU_ASSERT_PTR_NOT_NULL_FATAL(m);
                CU_ASSERT_EQUAL(
                    json_object_get(
                        ks_e2e_get(t, k ? "proposals/1" : "proposals/0"),
                        "flow_nonzero") != NULL,
                    nz * 4 < (size_t)(CUR * proposed[k]));
                for (i = 0; i < CUR; i++)
                        for (j = 0; j < proposed[k]; j++)
                                CU_ASSERT_EQUAL(
                                    json_integer_value(json_array_get(
                                        json_array_get(m, (size_t)i),
                                        (size_t)j)),
                                    (long long)flow[k][i][j]);
                json_decref(m);
        }

        /* The hottest key is hot-1, counted exactly, at its delivered
         * partition. */
        if (hashed) {
                json_t *rows = ks_e2e_hot_keys(t);
                json_t *hk   = json_array_get(rows, 0);
                CU_ASSERT_STRING_EQUAL(
                    json_string_value(json_object_get(hk, "key")), "hot-1");
                CU_ASSERT_EQUAL(ks_e2e_int(hk, "messages"), (long long)hot1);
                for (k = 0; k < p.dr_cnt; k++)
                        if (p.drs[k].keylen == 5 &&
                            !memcmp(p.drs[k].key, "hot-1", 5)) {
                                CU_ASSERT_EQUAL(
                                    ks_e2e_int(hk, "partition_current"),
                                    p.drs[k].partition);
                                break;
                        }
                json_decref(rows);
        } else {
                CU_ASSERT_EQUAL(json_object_size(ks_e2e_get(t, "hot_keys")), 0);
        }
        json_decref(report);
        free(distinct);
        ks_e2e_producer_free(&p);
        ks_e2e_system("rm -rf '%s'", dir);
}

static void test_every_partitioner_sticky(void)
{
        size_t i;
        for (i = 0; i < sizeof(partitioners) / sizeof(partitioners[0]); i++)
                run_partitioner((int)i, "10");
}

static void test_every_partitioner_no_sticky(void)
{
        size_t i;
        for (i = 0; i < sizeof(partitioners) / sizeof(partitioners[0]); i++)
                run_partitioner((int)i, "0");
}

/**
 * The broker answers keyshift's metadata requests @p rtt_ms late from
 * some point on (the mock cluster's round-trip delay): keyshift's first
 * request then outlasts its timeout (250 ms after fast answers, doubled
 * after each timeout, 1 s at most: plugin/ks_reporter.c). At 400 ms the
 * next is answered, so the final report has no METADATA_FAILED (the
 * counts stayed current); at 1,500 ms none is, and it has (the last 3 or
 * more failed).
 */
static void run_metadata_late(int rtt_ms, int expect_warning)
{
        const char       *dir = ks_e2e_tmpdir("metadata");
        char              path[600];
        ks_e2e_producer_t p;
        json_t           *report;
        int               i;

        snprintf(path, sizeof(path), "%s/report.json", dir);
        rd_kafka_conf_t *conf = ks_e2e_conf(
            "keyshift.report.path", path, "keyshift.report.interval.ms", "0",
            "keyshift.metadata.refresh.ms", "200", NULL);
        CU_ASSERT_FATAL(ks_e2e_producer_new(&p, conf, "t", CUR) == 0);
        for (i = 0; i < 100; i++)
                ks_e2e_produce(&p, "t", "k", 1, -1, "v", 1);
        rd_kafka_flush(p.rk, 5000);
        usleep(600 * 1000); /* fast answers: the timeout is down to 250 ms */
        rd_kafka_mock_broker_set_rtt(rd_kafka_handle_mock_cluster(p.rk), 1,
                                     rtt_ms);
        usleep(4000 * 1000); /* 1,500 ms: 3 timeouts take ~2.4 s */
        ks_e2e_producer_close(&p);
        report = ks_e2e_load_json(path);
        CU_ASSERT_PTR_NOT_NULL_FATAL(report);
        CU_ASSERT_EQUAL(ks_e2e_int(report, "topics/t/partition_count/current"),
                        CUR);
        CU_ASSERT_EQUAL(ks_e2e_has_warning(json_object_get(report, "warnings"),
                                           "METADATA_FAILED"),
                        expect_warning);
        json_decref(report);
        ks_e2e_producer_free(&p);
        ks_e2e_system("rm -rf '%s'", dir);
}

static void test_metadata_late_once(void)
{
        run_metadata_late(400, 0);
}

static void test_metadata_never_answered(void)
{
        run_metadata_late(1500, 1);
}

void ks_test_register(void)
{
        KS_ADD_SUITE("producer on the mock cluster",
                     {"every partitioner, sticky partitioning on",
                      test_every_partitioner_sticky},
                     {"every partitioner, sticky partitioning off",
                      test_every_partitioner_no_sticky},
                     {"metadata answered late once: no METADATA_FAILED",
                      test_metadata_late_once},
                     {"metadata never answered: METADATA_FAILED",
                      test_metadata_never_answered});
}
