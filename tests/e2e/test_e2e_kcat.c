/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_e2e_kcat.c
 * @brief keyshift loaded into a producer we did not write: Debian's kcat
 *        (`kcat -P -X plugin.library.paths=...`) on the mock cluster. The
 *        report must count every line kcat produced, and its moved figures
 *        must equal a recomputation with librdkafka's own partitioner
 *        functions.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ks_e2e_support.h"
#include "ks_test.h"

#define LINES 3000

typedef int32_t(rk_partitioner_f)(const rd_kafka_topic_t *, const void *,
                                  size_t, int32_t, void *, void *);

/** Runs kcat -P on a generated MMSI-keyed file. kcat puts -X partitioner=
 *  into its own topic configuration, which a plugin cannot read: the model
 *  is told with keyshift.partitioner (@p tell_keyshift), or learns it from
 *  the delivery reports; either way every figure must equal librdkafka's
 *  own function for that partitioner (@p fn). */
static void run_kcat(const char *partitioner, rk_partitioner_f *fn,
                     int tell_keyshift)
{
        int learned_case =
            !tell_keyshift && strcmp(partitioner, "consistent_random") != 0;
        const char          *dir = ks_e2e_tmpdir("kcat");
        const char          *pre = getenv("KS_PRELOAD");
        char                 input[600], report[600], key[64];
        FILE                *fp;
        json_t              *r, *t;
        int                  i, j, rc;
        long long            cur, unchecked;
        static const int32_t proposed[] = {12, 16};
        uint64_t             moved[2] = {0}, moved_bytes[2] = {0};

        snprintf(input, sizeof(input), "%s/in.txt", dir);
        snprintf(report, sizeof(report), "%s/report.json", dir);
        fp = fopen(input, "w");
        CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
        for (i = 0; i < LINES; i++)
                fprintf(fp, "%d:position-%d\n",
                        i % 10 < 3 ? 211234567 : 200000000 + i % 613, i);
        fclose(fp);

        rc = ks_e2e_system(
            "%s%s%s kcat -b localhost:9 -X test.mock.num.brokers=1 "
            "-X plugin.library.paths='%s' -X partitioner=%s "
            "%s%s -X keyshift.partitions.proposed=12,16 "
            "-X keyshift.report.path='%s' -P -t ais -K: -l '%s'",
            pre && *pre ? "LD_PRELOAD='" : "", pre && *pre ? pre : "",
            pre && *pre ? "'" : "", ks_e2e_plugin(), partitioner,
            tell_keyshift ? "-X keyshift.partitioner=" : "",
            tell_keyshift ? partitioner : "", report, input);
        CU_ASSERT_EQUAL_FATAL(rc, 0);

        r = ks_e2e_load_json(report);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        t = ks_e2e_get(r, "topics/ais");
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        CU_ASSERT_EQUAL(ks_e2e_int(t, "messages"), LINES);
        CU_ASSERT_EQUAL(ks_e2e_int(t, "keys/hashed"), LINES);
        /* checked, or not while the host was out of CPU (counted, unread:
         * core/stage/ks_cpuwatch.h; kcat runs keyshift.overload=skip) */
        unchecked = ks_e2e_int(r, "producer/out_of_cpu/deliveries_unchecked");
        CU_ASSERT_EQUAL(ks_e2e_int(t, "acknowledged/messages") + unchecked,
                        LINES);
        /* kcat's own topic configuration is unseen: the deliveries prove
         * the partitioner (ks_learn.h), and every figure is its own */
        CU_ASSERT_STRING_EQUAL(
            json_string_value(ks_e2e_get(t, "partitioner/name")), partitioner);
        CU_ASSERT_STRING_EQUAL(
            json_string_value(ks_e2e_get(t, "partitioner/source")),
            tell_keyshift  ? "keyshift.partitioner"
            : learned_case ? "deliveries"
                           : "config");
        CU_ASSERT(json_is_true(ks_e2e_get(t, "partitioner/confirmed")));
        CU_ASSERT_EQUAL(ks_e2e_has_warning(json_object_get(t, "warnings"),
                                           "PARTITIONER_LEARNED"),
                        learned_case);
        CU_ASSERT(!ks_e2e_has_warning(json_object_get(t, "warnings"),
                                      "PARTITIONER_MISMATCH"));
        if (learned_case) {
                CU_ASSERT(ks_e2e_int(t, "partitioner/evidence/"
                                        "discriminating_keys") >= 32);
                CU_ASSERT_EQUAL(
                    ks_e2e_int(t, "partitioner/evidence/disagreeing"), 0);
                CU_ASSERT(
                    !ks_e2e_has_warning(json_object_get(t, "warnings"),
                                        "PARTITIONER_NOT_JAVA_COMPATIBLE") ||
                    strncmp(partitioner, "murmur2", 7));
        }
        CU_ASSERT_EQUAL(ks_e2e_int(t, "acknowledged/mismatched"), 0);
        CU_ASSERT_EQUAL(ks_e2e_int(t, "acknowledged/matched") + unchecked,
                        LINES);
        cur = ks_e2e_int(t, "partition_count/current");
        CU_ASSERT_FATAL(cur > 0);

        for (i = 0; i < LINES; i++) {
                int     kl = snprintf(key, sizeof(key), "%d",
                                  i % 10 < 3 ? 211234567 : 200000000 + i % 613);
                int     vl = snprintf(NULL, 0, "position-%d", i);
                int32_t pc =
                    fn(NULL, key, (size_t)kl, (int32_t)cur, NULL, NULL);
                for (j = 0; j < 2; j++)
                        if (fn(NULL, key, (size_t)kl, proposed[j], NULL,
                               NULL) != pc) {
                                moved[j]++;
                                moved_bytes[j] += (uint64_t)(kl + vl);
                        }
        }
        for (j = 0; j < 2; j++) {
                char p[64];
                snprintf(p, sizeof(p), "proposals/%d/moved/messages", j);
                CU_ASSERT_EQUAL(ks_e2e_int(t, p), (long long)moved[j]);
                snprintf(p, sizeof(p), "proposals/%d/moved/bytes", j);
                CU_ASSERT_EQUAL(ks_e2e_int(t, p), (long long)moved_bytes[j]);
        }
        /* The hottest key is the MMSI sent 3 times in 10. */
        CU_ASSERT_STRING_EQUAL(
            json_string_value(ks_e2e_get(t, "hot_keys/key/0")), "211234567");
        CU_ASSERT_EQUAL(ks_e2e_int(t, "hot_keys/messages/0"), LINES * 3 / 10);
        json_decref(r);
        ks_e2e_system("rm -rf '%s'", dir);
}

static void test_kcat_default(void)
{
        run_kcat("consistent_random", rd_kafka_msg_partitioner_consistent, 0);
}

static void test_kcat_murmur2(void)
{
        run_kcat("murmur2_random", rd_kafka_msg_partitioner_murmur2, 1);
}

static void test_kcat_murmur2_unseen(void)
{
        run_kcat("murmur2_random", rd_kafka_msg_partitioner_murmur2, 0);
}

static void test_kcat_fnv1a_unseen(void)
{
        run_kcat("fnv1a_random", rd_kafka_msg_partitioner_fnv1a, 0);
}

void ks_test_register(void)
{
        KS_ADD_SUITE(
            "kcat -P with the plugin",
            {"partitioner consistent_random", test_kcat_default},
            {"partitioner murmur2_random, keyshift told", test_kcat_murmur2},
            {"partitioner murmur2_random, keyshift not told: "
             "learned from delivery reports",
             test_kcat_murmur2_unseen},
            {"partitioner fnv1a_random, keyshift not told: "
             "learned from delivery reports",
             test_kcat_fnv1a_unseen});
}
