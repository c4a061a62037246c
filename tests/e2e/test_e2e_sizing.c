/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_e2e_sizing.c
 * @brief Hot keys, skew and sizing advice on the real AIS log, through
 *        keyshift-replay: the hot MMSIs with the counts the shared data's
 *        README gives (MMSI 0: 378 messages; busiest vessel 503642000:
 *        427), key skew from the log itself, and a sizing block whose
 *        figures follow from its own basis.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ais_nmea.h"
#include "ais_reader.h"
#include "ks_e2e_support.h"
#include "ks_test.h"

static int cmp_u64_desc(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
        return x < y ? 1 : x > y ? -1 : 0;
}

static int cmp_u32(const void *a, const void *b)
{
        uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
        return x < y ? -1 : x > y;
}

/** @returns busiest / median messages per MMSI in the log. */
static double log_key_skew(const char *file)
{
        char              errstr[256];
        ks_ais_reader_t  *rd = ks_ais_reader_open(file, errstr, sizeof(errstr));
        ks_ais_decoder_t *dec  = ks_ais_decoder_new();
        uint32_t         *mmsi = NULL;
        uint64_t         *counts;
        size_t            n = 0, cap = 0, i, k = 0;
        const char       *line;
        size_t            len;
        ks_ais_msg_t      m;
        double            median;

        while (rd && ks_ais_reader_next(rd, &line, &len) == 1)
                if (ks_ais_decode_line(dec, line, len, &m) == KS_AIS_KEYED) {
                        if (n == cap) {
                                cap  = cap ? 2 * cap : 4096;
                                mmsi = realloc(mmsi, cap * sizeof(*mmsi));
                        }
                        mmsi[n++] = m.mmsi;
                }
        ks_ais_reader_close(rd);
        ks_ais_decoder_destroy(dec);
        qsort(mmsi, n, sizeof(*mmsi), cmp_u32);
        counts = calloc(n + 1, sizeof(*counts));
        for (i = 0; i < n; i++) {
                if (i && mmsi[i] == mmsi[i - 1])
                        counts[k - 1]++;
                else
                        counts[k++] = 1;
        }
        qsort(counts, k, sizeof(*counts), cmp_u64_desc);
        median =
            k % 2 ? (double)counts[k / 2]
                  : ((double)counts[k / 2 - 1] + (double)counts[k / 2]) / 2.0;
        median = (double)counts[0] / median;
        free(mmsi);
        free(counts);
        return median;
}

static void test_risky_sizing(void)
{
        const char *file   = ks_test_shared_path("ais/risky_ais.txt.gz");
        const char *dir    = ks_e2e_tmpdir("sizing");
        const char *replay = getenv("KS_REPLAY");
        char        report[600];
        json_t     *r, *t, *hot;
        size_t      i;
        int         seen0 = 0, seen_busiest = 0;
        double      skew, peak, floor_expect, part_target = 50;
        long long   floor_, rec;

        snprintf(report, sizeof(report), "%s/report.json", dir);
        CU_ASSERT_EQUAL_FATAL(
            ks_e2e_system("'%s' --plugin '%s' -p 6 --proposed 12 --rate 20000 "
                          "-X keyshift.hot.keys=10 "
                          "-X keyshift.consumers.max=4 "
                          "-X keyshift.consumer.msgs.per.s=1000 "
                          "-X keyshift.partition.target.msgs.per.s=50 "
                          "--report '%s' '%s' >/dev/null 2>&1",
                          replay, ks_e2e_plugin(), report, file),
            0);
        r = ks_e2e_load_json(report);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        t = ks_e2e_get(r, "topics/ais");

        /* Hot MMSIs, with the README's counts, and their verdict: at ~100
         * msgs/s each exceeds the 50 msgs/s partition target, so more
         * partitions cannot help; salting can. */
        hot = ks_e2e_hot_keys(t);
        CU_ASSERT_EQUAL(json_array_size(hot), 10);
        for (i = 0; i < json_array_size(hot); i++) {
                json_t     *h = json_array_get(hot, i);
                const char *k = json_string_value(json_object_get(h, "key"));
                double      rate =
                    json_number_value(json_object_get(h, "msgs_per_s"));
                if (!strcmp(k, "0")) {
                        seen0 = 1;
                        CU_ASSERT_EQUAL(ks_e2e_int(h, "messages"), 378);
                        CU_ASSERT_EQUAL(ks_e2e_int(h, "messages_error"), 0);
                }
                if (!strcmp(k, "503642000")) {
                        seen_busiest = 1;
                        CU_ASSERT_EQUAL(ks_e2e_int(h, "messages"), 427);
                }
                CU_ASSERT(rate > 0);
                if (rate > part_target) {
                        CU_ASSERT(json_is_false(
                            json_object_get(h, "fixable_by_partitions")));
                        CU_ASSERT_EQUAL(ks_e2e_int(h, "salt_buckets"),
                                        (long long)ceil(rate / part_target));
                }
        }
        CU_ASSERT(seen0 && seen_busiest);
        /* A 2-second replay is too short to size on: the verdicts are in
         * the report, the HOT_KEY warning is held back and the report says
         * why (the warning itself is tested in test_sizing). */
        CU_ASSERT(ks_e2e_has_warning(json_object_get(t, "warnings"),
                                     "INSUFFICIENT_DATA"));
        CU_ASSERT(
            !ks_e2e_has_warning(json_object_get(t, "warnings"), "HOT_KEY"));
        CU_ASSERT(json_is_false(ks_e2e_get(t, "sizing/enough_data")));

        /* Key skew: busiest / median MMSI, computed from the log. */
        skew = log_key_skew(file);
        printf("\n    key skew from the log: %.1f, report: %.1f\n", skew,
               json_number_value(ks_e2e_get(t, "skew/key_skew")));
        CU_ASSERT_DOUBLE_EQUAL(
            json_number_value(ks_e2e_get(t, "skew/key_skew")), skew, 1e-9);

        /* Partition skew at 6 from the report's own partition loads. */
        {
                json_t  *parts = ks_e2e_get(t, "current/partitions");
                uint64_t l[6];
                double   med;
                for (i = 0; i < 6; i++)
                        l[i] = (uint64_t)json_integer_value(json_array_get(
                            json_object_get(parts, "messages"), i));
                qsort(l, 6, sizeof(*l), cmp_u64_desc);
                med = ((double)l[2] + (double)l[3]) / 2.0;
                CU_ASSERT_DOUBLE_EQUAL(
                    json_number_value(
                        ks_e2e_get(t, "skew/partitions/6/max_over_median")),
                    (double)l[0] / med, 1e-9);
        }

        /* Sizing follows its basis: floor = max(ceil(peak / 1000), 4) x
         * clamp(skew / 30, 2, 4); recommended = the next power of two. */
        peak = json_number_value(ks_e2e_get(t, "sizing/basis/peak_msgs_s"));
        CU_ASSERT(peak > 0);
        floor_expect =
            fmax(ceil(peak / 1000.0), 4) * fmin(fmax(skew / 30.0, 2.0), 4.0);
        floor_ = ks_e2e_int(t, "sizing/partition_floor");
        rec    = ks_e2e_int(t, "sizing/recommended");
        CU_ASSERT_EQUAL(floor_, (long long)ceil(floor_expect));
        CU_ASSERT(rec >= floor_ && (rec & (rec - 1)) == 0 && rec < 2 * floor_);
        CU_ASSERT_DOUBLE_EQUAL(json_number_value(ks_e2e_get(
                                   t, "sizing/rebalance/per_rebalance_s")),
                               (double)rec * 0.004, 1e-9);
        CU_ASSERT_EQUAL(
            ks_e2e_int(t, "migration/raise_in_place/messages_split"),
            ks_e2e_int(t, "proposals/0/moved/messages"));
        CU_ASSERT_PTR_NOT_NULL(ks_e2e_get(t, "migration/drain_and_switch"));
        CU_ASSERT_PTR_NOT_NULL(ks_e2e_get(t, "migration/shard"));
        CU_ASSERT_PTR_NOT_NULL(ks_e2e_get(t, "proposals/0/split_window"));
        printf("    peak %.0f msgs/s, floor %lld, recommended %lld\n", peak,
               floor_, rec);
        json_decref(hot);
        json_decref(r);
        ks_e2e_system("rm -rf '%s'", dir);
}

/* No broker: the partition count never comes. No advice may be built on
 * an unknown count (it was "2 partitions = 1 base x 2"); a consumer input
 * makes one possible. */
static void unknown_count(const char *consumers, int want_sizing)
{
        const char *dir = ks_e2e_tmpdir("sizing-unknown");
        char        path[512], errstr[256], at[600];
        rd_kafka_t *rk;
        json_t     *r;
        int         i;

        snprintf(path, sizeof(path), "%s/report.json", dir);
        rk =
            rd_kafka_new(RD_KAFKA_PRODUCER,
                         ks_e2e_conf("keyshift.report.path", path,
                                     "bootstrap.servers", "127.0.0.1:1",
                                     "keyshift.consumers.max", consumers, NULL),
                         errstr, sizeof(errstr));
        CU_ASSERT_PTR_NOT_NULL_FATAL(rk);
        for (i = 0; i < 100; i++)
                CU_ASSERT_EQUAL(
                    rd_kafka_producev(
                        rk, RD_KAFKA_V_TOPIC("u"), RD_KAFKA_V_KEY("k", 1),
                        RD_KAFKA_V_PARTITION(i % 4), RD_KAFKA_V_VALUE("v", 1),
                        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                        RD_KAFKA_V_END),
                    0);
        rd_kafka_purge(rk, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
        rd_kafka_flush(rk, 2000);
        rd_kafka_destroy(rk);
        r = ks_e2e_load_json(path);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        snprintf(at, sizeof(at), "topics/u/partition_count/current");
        CU_ASSERT(json_is_null(ks_e2e_get(r, at)));
        CU_ASSERT(want_sizing ? json_is_object(ks_e2e_get(r, "topics/u/sizing"))
                              : json_is_null(ks_e2e_get(r, "topics/u/sizing")));
        json_decref(r);
        ks_e2e_system("rm -rf '%s'", dir);
}

static void test_unknown_count_no_advice(void)
{
        unknown_count("0", 0);
        unknown_count("12", 1);
}

void ks_test_register(void)
{
        KS_ADD_SUITE(
            "sizing on the AIS replay",
            {"risky_ais.txt.gz: hot MMSIs, skew, sizing", test_risky_sizing},
            {"an unknown count: no advice from it",
             test_unknown_count_no_advice});
}
