/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_broker_scan_increase.c
 * @brief `keyshift scan` of a grown topic on the real broker (issue 28):
 *        60,000 records written under 6 partitions (murmur2_random), the
 *        topic grown to 12 (CreatePartitions), 60,000 more under 12.
 *
 *  - one moment: one producer before, another after. The scan's switch
 *    (audit.switch) counts 60,000 old and 60,000 new records, none
 *    ambiguous, each partition's switch offset is the number of old
 *    records the delivery reports put there; RECORDS_FROM_OLD_COUNT says
 *    60,000; `--until increase` reads exactly the old records,
 *    `--until OFFSET` and `--until @TIME` their ranges;
 *  - two producers switching at different moments: a producer frozen at
 *    6 (its partitioner is murmur2 % 6) keeps writing under 6 while a new one writes
 *    under 12 (an interleaved stretch). Old-only and new-only records per
 *    partition equal librdkafka's functions over the delivered partitions;
 *    the true 60,000 lies within old_records .. old_records + ambiguous,
 *    and the ambiguous records are at most the stretch's records both
 *    counts explain.
 * In both, the proposal 12 -> 24 (moved messages, loads at 24, loads at
 * 12) equals the oracle over the keys' records: murmur2(key) % 12 against
 * % 24 (rd_kafka_msg_partitioner_murmur2), whatever count placed them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ks_broker_support.h"
#include "ks_e2e_support.h"
#include "ks_test.h"

#define OLD_MSGS 60000
#define NEW_MSGS 60000
#define TOTAL (OLD_MSGS + NEW_MSGS)
#define STRETCH 10000 /* per producer, in the interleaved stretch */
#define KEYS 20000
#define OLD 6
#define NEW 12

static char    keys[TOTAL][16];
static size_t  keylen[TOTAL];
static int32_t part[TOTAL];    /* delivery reports */
static int     is_old[TOTAL];  /* the truth: written under OLD */
static int     stretch[TOTAL]; /* written in the interleaved stretch */

static const char *cli(void)
{
        const char *c = getenv("KS_CLI");
        if (!c)
                CU_FAIL_FATAL("KS_CLI is not set (ctest sets it)");
        return c;
}

static int32_t m2(size_t i, int n)
{
        return rd_kafka_msg_partitioner_murmur2(NULL, keys[i], keylen[i], n,
                                                NULL, NULL);
}

/** @brief murmur2 % OLD whatever count the producer's metadata holds:
 *         a producer frozen at the count it saw first. A long
 *         topic.metadata.refresh.interval.ms alone is not enough:
 *         librdkafka may still refresh (CI saw one 14 ms after the
 *         increase). */
static int32_t frozen_partitioner(const rd_kafka_topic_t *rkt, const void *key,
                                  size_t keylen, int32_t partition_cnt,
                                  void *rkt_opaque, void *msg_opaque)
{
        (void)partition_cnt;
        return rd_kafka_msg_partitioner_murmur2(rkt, key, keylen, OLD,
                                                rkt_opaque, msg_opaque);
}

/** @brief A murmur2_random producer; @p frozen: it keeps writing under
 *         OLD partitions after the increase. */
static void producer(ks_broker_producer_t *pr, int frozen)
{
        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        char             errstr[256];

        CU_ASSERT_FATAL(rd_kafka_conf_set(conf, "partitioner", "murmur2_random",
                                          errstr,
                                          sizeof(errstr)) == RD_KAFKA_CONF_OK);
        if (frozen) {
                rd_kafka_topic_conf_t *tc = rd_kafka_topic_conf_new();
                rd_kafka_topic_conf_set_partitioner_cb(tc, frozen_partitioner);
                rd_kafka_conf_set_default_topic_conf(conf, tc);
        }
        CU_ASSERT_FATAL(ks_broker_producer_new(pr, conf, TOTAL) == 0);
}

static void send_one(ks_broker_producer_t *pr, const char *topic, size_t i,
                     uint64_t *seed, int old, int in_stretch)
{
        keylen[i] =
            (size_t)snprintf(keys[i], sizeof(keys[i]), "acct-%llu",
                             (unsigned long long)(ks_broker_rand(seed) % KEYS));
        is_old[i]  = old;
        stretch[i] = in_stretch;
        ks_broker_produce(pr, topic, i, keys[i], keylen[i], "v", 1);
}

static void done(ks_broker_producer_t *pr, size_t from, size_t to)
{
        size_t i;

        ks_broker_flush(pr);
        CU_ASSERT_EQUAL_FATAL(pr->failed, 0);
        for (i = from; i < to; i++)
                if (pr->partition[i] >= 0)
                        part[i] = pr->partition[i];
}

/** @brief Checks that every record is where its truth's count puts it
 *         (else a producer switched when the test did not mean it to). */
static void check_truth(void)
{
        size_t i, wrong = 0;

        for (i = 0; i < TOTAL; i++)
                wrong += part[i] != m2(i, is_old[i] ? OLD : NEW);
        CU_ASSERT_EQUAL_FATAL(wrong, 0);
}

/** @brief Scans @p topic with @p extra options into @p dir/@p name.json.
 *  @returns the report's topic object (decref the returned report). */
static json_t *scan(const char *dir, const char *topic, const char *extra,
                    const char *name, json_t **report)
{
        char path[600];
        int  rc;

        snprintf(path, sizeof(path), "%s/%s.json", dir, name);
        rc = ks_e2e_system("%s scan -b %s -t %s --proposed 24 %s -o %s > "
                           "%s/%s.out 2>&1",
                           cli(), ks_broker_bootstrap(), topic, extra, path,
                           dir, name);
        CU_ASSERT_EQUAL_FATAL(rc, 0);
        if (getenv("KS_KEEP"))
                ks_e2e_system("cat %s/%s.out", dir, name);
        *report = ks_e2e_load_json(path);
        CU_ASSERT_PTR_NOT_NULL_FATAL(*report);
        return json_object_get(json_object_get(*report, "topics"), topic);
}

/** @brief The proposal 12 -> 24 and the loads at 12 against the oracle
 *         over the keys' records. */
static void check_proposal(json_t *t)
{
        uint64_t at12[NEW] = {0}, at24[2 * NEW] = {0}, moved = 0;
        json_t  *prop = json_array_get(json_object_get(t, "proposals"), 0);
        size_t   i;
        int      p;
        char     at[64];

        for (i = 0; i < TOTAL; i++) {
                at12[m2(i, NEW)]++;
                at24[m2(i, 2 * NEW)]++;
                moved += m2(i, NEW) != m2(i, 2 * NEW);
        }
        CU_ASSERT_EQUAL(ks_e2e_int(prop, "partition_count"), 2 * NEW);
        CU_ASSERT_EQUAL(ks_e2e_int(prop, "moved/messages"), (long long)moved);
        for (p = 0; p < 2 * NEW; p++) {
                snprintf(at, sizeof(at), "partitions/messages/%d", p);
                CU_ASSERT_EQUAL(ks_e2e_int(prop, at), (long long)at24[p]);
        }
        for (p = 0; p < NEW; p++) {
                snprintf(at, sizeof(at), "current/partitions/messages/%d", p);
                CU_ASSERT_EQUAL(ks_e2e_int(t, at), (long long)at12[p]);
        }
        ks_broker_summary(
            "scan_increase",
            "  proposal 12 -> 24: moved %llu of %d records "
            "(oracle %llu)\n",
            (unsigned long long)ks_e2e_int(prop, "moved/messages"), TOTAL,
            (unsigned long long)moved);
}

/** @brief Old-only and new-only records per partition against
 *         librdkafka's functions over the delivered partitions. */
static void check_evidence(json_t *sw)
{
        uint64_t oo[NEW] = {0}, no[NEW] = {0};
        size_t   i;
        int      p;
        char     at[64];

        for (i = 0; i < TOTAL; i++) {
                int o = m2(i, OLD) == part[i], n = m2(i, NEW) == part[i];
                oo[part[i]] += o && !n;
                no[part[i]] += n && !o;
        }
        for (p = 0; p < NEW; p++) {
                snprintf(at, sizeof(at), "partitions/old_only/%d", p);
                CU_ASSERT_EQUAL(ks_e2e_int(sw, at), (long long)oo[p]);
                snprintf(at, sizeof(at), "partitions/new_only/%d", p);
                CU_ASSERT_EQUAL(ks_e2e_int(sw, at), (long long)no[p]);
        }
        CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(sw, "family")),
                               "murmur2");
        CU_ASSERT_EQUAL(ks_e2e_int(sw, "old_count"), OLD);
        CU_ASSERT_EQUAL(ks_e2e_int(sw, "new_count"), NEW);
}

static void test_one_moment(void)
{
        const char          *dir = ks_e2e_tmpdir("scan-increase");
        char                 topic[128], extra[64];
        ks_broker_producer_t pr;
        uint64_t             seed = 28, old_in[NEW] = {0}, below = 0;
        json_t              *r, *t, *sw, *w;
        int64_t              between;
        size_t               i;
        int                  p;

        ks_broker_topic_name("scan-increase", topic, sizeof(topic));
        CU_ASSERT_FATAL(ks_broker_create_topic(topic, OLD) == 0);
        producer(&pr, 0);
        for (i = 0; i < OLD_MSGS; i++)
                send_one(&pr, topic, i, &seed, 1, 0);
        done(&pr, 0, OLD_MSGS);
        ks_broker_producer_free(&pr);
        usleep(20 * 1000);
        between = ks_broker_wall_ms();
        usleep(20 * 1000);
        CU_ASSERT_FATAL(ks_broker_create_partitions(topic, NEW) == 0);
        producer(&pr, 0);
        for (i = OLD_MSGS; i < TOTAL; i++)
                send_one(&pr, topic, i, &seed, 0, 0);
        done(&pr, OLD_MSGS, TOTAL);
        ks_broker_producer_free(&pr);
        check_truth();
        for (i = 0; i < OLD_MSGS; i++)
                old_in[part[i]]++;

        t = scan(dir, topic, "", "full", &r);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        sw = ks_e2e_get(t, "audit/switch");
        CU_ASSERT_FATAL(json_is_object(sw));
        check_evidence(sw);
        CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(sw, "moment")),
                               "one");
        CU_ASSERT_EQUAL(ks_e2e_int(sw, "old_records"), OLD_MSGS);
        CU_ASSERT_EQUAL(ks_e2e_int(sw, "new_records"), NEW_MSGS);
        CU_ASSERT_EQUAL(ks_e2e_int(sw, "ambiguous_records"), 0);
        CU_ASSERT(json_is_true(json_object_get(sw, "exact")));
        for (p = 0; p < NEW; p++) {
                char at[64];
                snprintf(at, sizeof(at), "partitions/switch_offset/%d", p);
                CU_ASSERT_EQUAL(ks_e2e_int(sw, at), (long long)old_in[p]);
        }
        w = json_object_get(t, "warnings");
        CU_ASSERT(ks_e2e_has_warning(w, "RECORDS_FROM_OLD_COUNT"));
        CU_ASSERT_EQUAL(ks_e2e_system("grep -q 'RECORDS_FROM_OLD_COUNT: %d "
                                      "records were placed by murmur2 under 6 "
                                      "partitions, before the increase to 12 "
                                      "(exact)' %s/full.out",
                                      OLD_MSGS, dir),
                        0);
        check_proposal(t);
        ks_broker_summary("scan_increase",
                          "### keyshift scan of a grown topic\n\n"
                          "one moment: %d records under 6, %d under 12: "
                          "old %lld, new %lld, ambiguous %lld (truth %d, %d, "
                          "0)\n",
                          OLD_MSGS, NEW_MSGS, ks_e2e_int(sw, "old_records"),
                          ks_e2e_int(sw, "new_records"),
                          ks_e2e_int(sw, "ambiguous_records"), OLD_MSGS,
                          NEW_MSGS);
        json_decref(r);

        /* --until increase: the old records, exactly */
        t = scan(dir, topic, "--until increase", "until-increase", &r);
        CU_ASSERT_EQUAL(ks_e2e_int(r, "scan/records"), OLD_MSGS);
        CU_ASSERT_STRING_EQUAL(json_string_value(ks_e2e_get(r, "scan/until")),
                               "increase");
        for (p = 0; p < NEW; p++) {
                char at[64];
                snprintf(at, sizeof(at), "scan/partitions/records/%d", p);
                CU_ASSERT_EQUAL(ks_e2e_int(r, at), (long long)old_in[p]);
        }
        json_decref(r);

        /* --until @TIME between the two producers: the same records */
        snprintf(extra, sizeof(extra), "--until @%lld", (long long)between);
        scan(dir, topic, extra, "until-time", &r);
        CU_ASSERT_EQUAL(ks_e2e_int(r, "scan/records"), OLD_MSGS);
        json_decref(r);

        /* --until OFFSET: each partition below offset 3000 */
        for (p = 0; p < NEW; p++) {
                uint64_t n = 0;
                for (i = 0; i < TOTAL; i++)
                        n += part[i] == p;
                below += n < 3000 ? n : 3000;
        }
        scan(dir, topic, "--until 3000", "until-offset", &r);
        CU_ASSERT_EQUAL(ks_e2e_int(r, "scan/records"), (long long)below);
        json_decref(r);

        if (!getenv("KS_KEEP"))
                ks_broker_delete_topic(topic);
        else
                printf("\n    kept topic %s\n", topic);
        ks_broker_tmpdir_done(dir);
}

static void test_two_moments(void)
{
        const char          *dir = ks_e2e_tmpdir("scan-increase2");
        char                 topic[128];
        ks_broker_producer_t a, b, c;
        uint64_t             seed = 2828, both_stretch = 0;
        json_t              *r, *t, *sw;
        long long            old_r, new_r, amb;
        size_t               i, n;

        ks_broker_topic_name("scan-increase2", topic, sizeof(topic));
        CU_ASSERT_FATAL(ks_broker_create_topic(topic, OLD) == 0);
        /* two producers under 6; a keeps its count (frozen at 6) */
        producer(&a, 1);
        producer(&b, 0);
        n = OLD_MSGS - STRETCH;
        for (i = 0; i < n; i++)
                send_one(i % 2 ? &b : &a, topic, i, &seed, 1, 0);
        done(&b, 0, n);
        ks_broker_producer_free(&b);
        ks_broker_flush(&a);
        CU_ASSERT_FATAL(ks_broker_create_partitions(topic, NEW) == 0);
        /* the stretch: a still under 6, a new producer under 12 */
        producer(&c, 0);
        for (i = n; i < n + 2 * STRETCH; i++)
                send_one(i % 2 ? &c : &a, topic, i, &seed, i % 2 == 0, 1);
        done(&a, 0, n + 2 * STRETCH);
        ks_broker_producer_free(&a);
        for (i = n + 2 * STRETCH; i < TOTAL; i++)
                send_one(&c, topic, i, &seed, 0, 0);
        done(&c, n, TOTAL);
        ks_broker_producer_free(&c);
        check_truth();
        for (i = 0; i < TOTAL; i++)
                both_stretch += stretch[i] && m2(i, OLD) == part[i] &&
                                m2(i, NEW) == part[i];

        t = scan(dir, topic, "", "full", &r);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        sw = ks_e2e_get(t, "audit/switch");
        CU_ASSERT_FATAL(json_is_object(sw));
        check_evidence(sw);
        CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(sw, "moment")),
                               "interleaved");
        old_r = ks_e2e_int(sw, "old_records");
        new_r = ks_e2e_int(sw, "new_records");
        amb   = ks_e2e_int(sw, "ambiguous_records");
        CU_ASSERT(old_r <= OLD_MSGS && OLD_MSGS <= old_r + amb);
        CU_ASSERT(new_r <= NEW_MSGS && NEW_MSGS <= new_r + amb);
        CU_ASSERT_EQUAL(old_r + new_r + amb, TOTAL);
        CU_ASSERT(amb > 0 && (uint64_t)amb <= both_stretch);
        CU_ASSERT(json_is_false(json_object_get(sw, "exact")));
        CU_ASSERT_EQUAL(ks_e2e_system("grep -Eq 'RECORDS_FROM_OLD_COUNT: %lld "
                                      "records .* %lld more are ambiguous' "
                                      "%s/full.out",
                                      old_r, amb, dir),
                        0);
        check_proposal(t);
        ks_broker_summary("scan_increase",
                          "two moments (a %d-record interleaved stretch): old "
                          "%lld, new %lld, ambiguous %lld (truth %d, %d; the "
                          "stretch holds %llu records both counts explain)\n",
                          2 * STRETCH, old_r, new_r, amb, OLD_MSGS, NEW_MSGS,
                          (unsigned long long)both_stretch);
        json_decref(r);
        if (!getenv("KS_KEEP"))
                ks_broker_delete_topic(topic);
        else
                printf("\n    kept topic %s\n", topic);
        ks_broker_tmpdir_done(dir);
}

void ks_test_register(void)
{
        KS_ADD_SUITE(
            "keyshift scan of a grown topic",
            {"one switch moment: exact counts, --until", test_one_moment},
            {"two producers switching at different moments", test_two_moments});
}
