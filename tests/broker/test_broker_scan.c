/**
 * @file test_broker_scan.c
 * @brief `keyshift scan` on the real broker: a topic written by a murmur2
 *        producer under 3 partitions, grown to 6 (CreatePartitions), then
 *        written by a murmur2 producer and an fnv1a producer (librdkafka's
 *        `partitioner` property). The scan's report is checked against
 *        the oracles: the broker's delivery reports (each record's real
 *        partition) and librdkafka's own partitioner functions (every
 *        explained cell and `unexplained` recomputed). Then `show`, `html`
 *        and `merge` read the report, and bad inputs fail clearly.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ks_broker_support.h"
#include "ks_e2e_support.h"
#include "ks_test.h"

#define OLD_MSGS 3000
#define MURMUR_MSGS 4000
#define FNV_MSGS 2000
#define TOTAL (OLD_MSGS + MURMUR_MSGS + FNV_MSGS)

typedef int32_t(oracle_fn)(const rd_kafka_topic_t *, const void *, size_t,
                           int32_t, void *, void *);
static oracle_fn *const  oracle[3] = {rd_kafka_msg_partitioner_consistent,
                                      rd_kafka_msg_partitioner_murmur2,
                                      rd_kafka_msg_partitioner_fnv1a};
static const char *const family[3] = {"consistent", "murmur2", "fnv1a"};

static char    keys[TOTAL][24];
static size_t  keylen[TOTAL];
static int32_t part[TOTAL]; /* from the delivery reports */

static const char *cli(void)
{
        const char *c = getenv("KS_CLI");
        if (!c)
                CU_FAIL_FATAL("KS_CLI is not set (ctest sets it)");
        return c;
}

/** @brief Produces messages [from, to) with @p partitioner, recording
 *         their delivered partitions in part[]. */
static void produce(const char *topic, const char *partitioner, size_t from,
                    size_t to, uint64_t *seed)
{
        ks_broker_producer_t pr;
        rd_kafka_conf_t     *conf = rd_kafka_conf_new();
        char                 errstr[256];
        size_t               i;

        CU_ASSERT_FATAL(rd_kafka_conf_set(conf, "partitioner", partitioner,
                                          errstr,
                                          sizeof(errstr)) == RD_KAFKA_CONF_OK);
        CU_ASSERT_FATAL(ks_broker_producer_new(&pr, conf, to) == 0);
        for (i = from; i < to; i++) {
                keylen[i] = (size_t)snprintf(
                    keys[i], sizeof(keys[i]), "acct-%llu",
                    (unsigned long long)(ks_broker_rand(seed) % 5000));
                ks_broker_produce(&pr, topic, i, keys[i], keylen[i], "value",
                                  5);
        }
        ks_broker_flush(&pr);
        CU_ASSERT_EQUAL_FATAL(pr.failed, 0);
        for (i = from; i < to; i++)
                part[i] = pr.partition[i];
        ks_broker_producer_free(&pr);
}

/** @returns the history step (family f, count n) of @p audit, or NULL. */
static json_t *step(json_t *audit, const char *f, int n)
{
        json_t *steps = ks_e2e_get(audit, "history/steps"), *s;
        size_t  i;

        json_array_foreach(steps, i, s)
        {
                if (!strcmp(json_string_value(json_object_get(s, "family")),
                            f) &&
                    json_integer_value(json_object_get(s, "count")) == n)
                        return s;
        }
        return NULL;
}

static void test_scan(void)
{
        const char *dir = ks_e2e_tmpdir("scan");
        char        topic[128], report[600], merged[600];
        uint64_t    seed = 42, per[6] = {0}, unexplained = 0;
        json_t     *r, *t, *audit, *w, *cur;
        size_t      i;
        int         f, n, rc;

        ks_broker_topic_name("scan", topic, sizeof(topic));
        CU_ASSERT_FATAL(ks_broker_create_topic(topic, 3) == 0);
        produce(topic, "murmur2", 0, OLD_MSGS, &seed);
        CU_ASSERT_FATAL(ks_broker_create_partitions(topic, 6) == 0);
        produce(topic, "fnv1a", OLD_MSGS, OLD_MSGS + FNV_MSGS, &seed);
        produce(topic, "murmur2", OLD_MSGS + FNV_MSGS, TOTAL, &seed);

        snprintf(report, sizeof(report), "%s/scan.json", dir);
        rc = ks_e2e_system("%s scan --bootstrap %s --topic %s --proposed 12 "
                           "-o %s > %s/scan.out 2>&1",
                           cli(), ks_broker_bootstrap(), topic, report, dir);
        CU_ASSERT_EQUAL_FATAL(rc, 0);
        r = ks_e2e_load_json(report);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(r, "source")),
                               "scan");
        CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(r, "schema")),
                               "keyshift.report.v1");
        CU_ASSERT(json_is_true(ks_e2e_get(r, "scan/complete")));
        CU_ASSERT_EQUAL(ks_e2e_int(r, "scan/records"), TOTAL);
        t = json_object_get(json_object_get(r, "topics"), topic);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        audit = json_object_get(t, "audit");
        CU_ASSERT_PTR_NOT_NULL_FATAL(audit);

        /* loads: the records' real partitions */
        for (i = 0; i < TOTAL; i++)
                per[part[i]]++;
        cur = ks_e2e_get(t, "current/partitions");
        CU_ASSERT_EQUAL_FATAL(json_array_size(cur), 6);
        for (n = 0; n < 6; n++)
                CU_ASSERT_EQUAL(
                    json_integer_value(json_object_get(
                        json_array_get(cur, (size_t)n), "messages")),
                    (json_int_t)per[n]);

        /* every explained cell and unexplained, recomputed */
        for (f = 0; f < 3; f++)
                for (n = 1; n <= 6; n++) {
                        uint64_t want = 0;
                        char     p[64];
                        for (i = 0; i < TOTAL; i++)
                                want += oracle[f](NULL, keys[i], keylen[i], n,
                                                  NULL, NULL) == part[i];
                        snprintf(p, sizeof(p), "explained/%s/%d", family[f], n);
                        CU_ASSERT_EQUAL(ks_e2e_int(audit, p), (long long)want);
                }
        for (i = 0; i < TOTAL; i++) {
                int any = 0;
                for (f = 0; f < 3 && !any; f++)
                        for (n = 1; n <= 6 && !any; n++)
                                any = oracle[f](NULL, keys[i], keylen[i], n,
                                                NULL, NULL) == part[i];
                unexplained += !any;
        }
        CU_ASSERT_EQUAL(ks_e2e_int(audit, "unexplained"),
                        (long long)unexplained);
        CU_ASSERT_EQUAL(ks_e2e_int(audit, "keyed_records"), TOTAL);

        /* history: both producers under 6, the old count 3 */
        CU_ASSERT_PTR_NOT_NULL(step(audit, "murmur2", 6));
        CU_ASSERT_PTR_NOT_NULL(step(audit, "fnv1a", 6));
        CU_ASSERT_PTR_NOT_NULL(step(audit, "murmur2", 3));
        CU_ASSERT_STRING_EQUAL(
            json_string_value(json_object_get(audit, "proposals_partitioner")),
            "murmur2_random");
        CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(
                                   audit, "proposals_partitioner_source")),
                               "audit");
        w = json_object_get(t, "warnings");
        CU_ASSERT(ks_e2e_has_warning(w, "MIXED_PARTITIONERS"));
        CU_ASSERT(ks_e2e_has_warning(w, "RECORDS_FROM_OLD_COUNT"));

        /* moved under 12: the model's murmur2 partition vs the real one */
        {
                uint64_t moved = 0;
                for (i = 0; i < TOTAL; i++)
                        moved += rd_kafka_msg_partitioner_murmur2(
                                     NULL, keys[i], keylen[i], 12, NULL,
                                     NULL) != part[i];
                CU_ASSERT_EQUAL(
                    json_integer_value(json_object_get(
                        json_object_get(
                            json_array_get(json_object_get(t, "proposals"), 0),
                            "moved"),
                        "messages")),
                    (json_int_t)moved);
        }

        /* the other commands read it */
        CU_ASSERT_EQUAL(
            ks_e2e_system("%s show %s > %s/show.txt", cli(), report, dir), 0);
        CU_ASSERT_EQUAL(ks_e2e_system("%s html %s -o %s/scan.html 2>/dev/null",
                                      cli(), report, dir),
                        0);
        /* merge: with a second (partial) scan, another consumer process */
        snprintf(merged, sizeof(merged), "%s/merged.json", dir);
        CU_ASSERT_EQUAL(
            ks_e2e_system("%s scan -b %s -t %s --max-messages 500 -o "
                          "%s/part.json > /dev/null 2>&1",
                          cli(), ks_broker_bootstrap(), topic, dir),
            0);
        CU_ASSERT_EQUAL(ks_e2e_system("%s merge %s %s/part.json -o %s 2>&1",
                                      cli(), report, dir, merged),
                        0);
        json_decref(r);
        ks_broker_summary("scan",
                          "### keyshift scan\n\n%d records (murmur2 under 3, "
                          "then murmur2 and fnv1a under 6): explained cells "
                          "and unexplained equal librdkafka's functions, "
                          "loads equal the delivery reports, history "
                          "(murmur2,6), (fnv1a,6), (murmur2,3).\n",
                          TOTAL);
        ks_broker_delete_topic(topic);
        ks_broker_tmpdir_done(dir);
}

/** @brief Runs the CLI with @p args; @returns its exit status and its
 *         stderr in @p out. */
static int run(const char *dir, const char *args, char *out, size_t size)
{
        char   p[600];
        FILE  *fp;
        int    rc;
        size_t n;

        snprintf(p, sizeof(p), "%s/err.txt", dir);
        rc = ks_e2e_system("timeout 60 %s scan %s -o %s/bad.json > /dev/null "
                           "2> %s",
                           cli(), args, dir, p);
        out[0] = 0;
        if ((fp = fopen(p, "r"))) {
                n      = fread(out, 1, size - 1, fp);
                out[n] = 0;
                fclose(fp);
        }
        return rc;
}

/** @brief Checks a bad input's exit status and message (printed when it
 *         is not as expected). */
static void expect(const char *dir, const char *args, int want_rc,
                   const char *needle)
{
        char out[4096];
        int  rc = run(dir, args, out, sizeof(out));

        CU_ASSERT_EQUAL(rc, want_rc);
        CU_ASSERT_PTR_NOT_NULL(strstr(out, needle));
        if (rc != want_rc || !strstr(out, needle))
                printf("\nscan %s: exit %d, wanted %d and '%s':\n%s\n", args,
                       rc, want_rc, needle, out);
}

static void test_bad_inputs(void)
{
        const char *dir = ks_e2e_tmpdir("scan-bad");
        char        args[600], empty[128];
        double      t0;

        snprintf(args, sizeof(args),
                 "--bootstrap %s --topic keyshift-no-such-topic-%ld",
                 ks_broker_bootstrap(), (long)getpid());
        expect(dir, args, 1, "--topic");

        ks_broker_topic_name("scan-empty", empty, sizeof(empty));
        CU_ASSERT_FATAL(ks_broker_create_topic(empty, 2) == 0);
        snprintf(args, sizeof(args), "--bootstrap %s --topic %s",
                 ks_broker_bootstrap(), empty);
        expect(dir, args, 1, "empty");
        ks_broker_delete_topic(empty);

        snprintf(args, sizeof(args),
                 "--bootstrap %s --topic x --from yesterday",
                 ks_broker_bootstrap());
        expect(dir, args, 2, "expected earliest, latest, -N");

        snprintf(args, sizeof(args),
                 "--bootstrap %s --topic x -X no.such.property=1",
                 ks_broker_bootstrap());
        expect(dir, args, 2, "-X no.such.property");

        snprintf(args, sizeof(args), "--bootstrap %s --topic x -P crc",
                 ks_broker_bootstrap());
        expect(dir, args, 2, "murmur2_random");

        /* nothing listens on port 1: fails within the stated timeout */
        t0 = ks_broker_now_s();
        expect(dir, "--bootstrap 127.0.0.1:1 --topic x --timeout-ms 2000", 1,
               "within 2000 ms");
        CU_ASSERT(ks_broker_now_s() - t0 < 10);
        ks_broker_tmpdir_done(dir);
}

void ks_test_register(void)
{
        KS_ADD_SUITE(
            "keyshift scan",
            {"three producers, an increase: audit and analysis", test_scan},
            {"bad inputs fail clearly", test_bad_inputs});
}
