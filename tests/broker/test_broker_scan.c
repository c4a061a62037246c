/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_broker_scan.c
 * @brief `keyshift scan` on the real broker: a 6-partition topic written by
 *        a `consistent_random` producer and a `murmur2_random` one
 *        (librdkafka), grown to 12 (CreatePartitions), written again by a
 *        real Java `KafkaProducer` (kafka-clients, tests/broker/java). The
 *        scan's report is checked against the oracles: each record's real
 *        partition (delivery reports, Java's RecordMetadata) and
 *        librdkafka's own partitioner functions (every explained cell and
 *        `unexplained` recomputed); the history names (consistent, 6),
 *        (murmur2, 6) and (murmur2, 12). A second topic, written by a
 *        producer with the plugin, is scanned too: the scan's moved figures
 *        and loads equal the plugin's report of the same records. Then
 *        `show`, `html` and `merge` read the report, and bad inputs fail
 *        clearly.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ks_broker_support.h"
#include "ks_e2e_support.h"
#include "ks_test.h"

#define CRC_MSGS 3000
#define MURMUR_MSGS 3000
#define JAVA_MSGS 3000
#define TOTAL (CRC_MSGS + MURMUR_MSGS + JAVA_MSGS)
#define COUNT 12 /* after the increase */

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

/** @brief Produces records [from, to) with a real Java KafkaProducer
 *         (StringSerializer keys, the default partitioner: murmur2 for a
 *         keyed record), recording the partitions its RecordMetadata gives. */
static void produce_java(const char *dir, const char *topic, size_t from,
                         size_t to, uint64_t *seed)
{
        char   in[600], out[600], args[1024], *line = NULL;
        size_t i, cap = 0, got = 0;
        FILE  *fp;

        snprintf(in, sizeof(in), "%s/java-keys.txt", dir);
        snprintf(out, sizeof(out), "%s/java-produced.tsv", dir);
        CU_ASSERT_PTR_NOT_NULL_FATAL(fp = fopen(in, "w"));
        for (i = from; i < to; i++) {
                keylen[i] = (size_t)snprintf(
                    keys[i], sizeof(keys[i]), "acct-%llu",
                    (unsigned long long)(ks_broker_rand(seed) % 5000));
                fprintf(fp, "string:%s\n", keys[i]);
        }
        fclose(fp);
        snprintf(args, sizeof(args), "produce --bootstrap '%s' --topic '%s'",
                 ks_broker_bootstrap(), topic);
        CU_ASSERT_EQUAL_FATAL(ks_broker_java(args, in, out), 0);
        CU_ASSERT_PTR_NOT_NULL_FATAL(fp = fopen(out, "r"));
        /* line, type, key_hex, partition, offset, partition_count */
        while (getline(&line, &cap, fp) > 0) {
                long ln, pn, cnt;
                if (line[0] == '#' ||
                    sscanf(line, "%ld\t%*s\t%*s\t%ld\t%*s\t%ld", &ln, &pn,
                           &cnt) != 3)
                        continue;
                CU_ASSERT_FATAL(ln >= 1 && (size_t)ln <= to - from);
                CU_ASSERT_EQUAL(cnt, COUNT);
                part[from + (size_t)ln - 1] = (int32_t)pn;
                got++;
        }
        free(line);
        fclose(fp);
        CU_ASSERT_EQUAL_FATAL(got, to - from);
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
        uint64_t    seed = 42, per[COUNT] = {0}, unexplained = 0;
        json_t     *r, *t, *audit, *w, *cur;
        size_t      i;
        int         f, n, rc;

        ks_broker_topic_name("scan", topic, sizeof(topic));
        CU_ASSERT_FATAL(ks_broker_create_topic(topic, 6) == 0);
        produce(topic, "consistent_random", 0, CRC_MSGS, &seed);
        produce(topic, "murmur2_random", CRC_MSGS, CRC_MSGS + MURMUR_MSGS,
                &seed);
        CU_ASSERT_FATAL(ks_broker_create_partitions(topic, COUNT) == 0);
        produce_java(dir, topic, CRC_MSGS + MURMUR_MSGS, TOTAL, &seed);

        snprintf(report, sizeof(report), "%s/scan.json", dir);
        rc = ks_e2e_system("%s scan --bootstrap %s --topic %s --proposed 24 "
                           "-o %s > %s/scan.out 2>&1",
                           cli(), ks_broker_bootstrap(), topic, report, dir);
        CU_ASSERT_EQUAL_FATAL(rc, 0);
        r = ks_e2e_load_json(report);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(r, "source")),
                               "scan");
        CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(r, "schema")),
                               "keyshift.report.v2");
        CU_ASSERT(json_is_true(ks_e2e_get(r, "scan/complete")));
        CU_ASSERT_EQUAL(ks_e2e_int(r, "scan/records"), TOTAL);
        t = json_object_get(json_object_get(r, "topics"), topic);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        audit = json_object_get(t, "audit");
        CU_ASSERT_PTR_NOT_NULL_FATAL(audit);

        /* loads: where each record's key goes under the current count
         * with the proposals' partitioner (murmur2), whatever placed it */
        for (i = 0; i < TOTAL; i++)
                per[rd_kafka_msg_partitioner_murmur2(NULL, keys[i], keylen[i],
                                                     COUNT, NULL, NULL)]++;
        cur = ks_e2e_get(t, "current/partitions/messages");
        CU_ASSERT_EQUAL_FATAL(json_array_size(cur), COUNT);
        for (n = 0; n < COUNT; n++)
                CU_ASSERT_EQUAL(
                    json_integer_value(json_array_get(cur, (size_t)n)),
                    (json_int_t)per[n]);

        /* every explained cell and unexplained, recomputed */
        for (f = 0; f < 3; f++)
                for (n = 1; n <= COUNT; n++) {
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
                        for (n = 1; n <= COUNT && !any; n++)
                                any = oracle[f](NULL, keys[i], keylen[i], n,
                                                NULL, NULL) == part[i];
                unexplained += !any;
        }
        CU_ASSERT_EQUAL(ks_e2e_int(audit, "unexplained"),
                        (long long)unexplained);
        CU_ASSERT_EQUAL(ks_e2e_int(audit, "keyed_records"), TOTAL);

        /* history: both librdkafka producers under 6, Java's under 12 */
        CU_ASSERT_PTR_NOT_NULL(step(audit, "consistent", 6));
        CU_ASSERT_PTR_NOT_NULL(step(audit, "murmur2", 6));
        CU_ASSERT_PTR_NOT_NULL(step(audit, "murmur2", COUNT));
        CU_ASSERT_STRING_EQUAL(
            json_string_value(json_object_get(audit, "proposals_partitioner")),
            "murmur2_random");
        CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(
                                   audit, "proposals_partitioner_source")),
                               "audit");
        w = json_object_get(t, "warnings");
        CU_ASSERT(ks_e2e_has_warning(w, "MIXED_PARTITIONERS"));
        CU_ASSERT(ks_e2e_has_warning(w, "RECORDS_FROM_OLD_COUNT"));

        /* moved under 24: each key's murmur2 partition at 24 vs at 12 */
        {
                uint64_t moved = 0;
                for (i = 0; i < TOTAL; i++)
                        moved +=
                            rd_kafka_msg_partitioner_murmur2(
                                NULL, keys[i], keylen[i], 24, NULL, NULL) !=
                            rd_kafka_msg_partitioner_murmur2(
                                NULL, keys[i], keylen[i], COUNT, NULL, NULL);
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
        /* the audit in words: the history's steps and where they sit */
        CU_ASSERT_EQUAL(
            ks_e2e_system("grep -q 'consistent under 6 placed' %s/show.txt",
                          dir),
            0);
        CU_ASSERT_EQUAL(ks_e2e_system("grep -q 'murmur2 under 12 placed' "
                                      "%s/show.txt",
                                      dir),
                        0);
        CU_ASSERT_EQUAL(ks_e2e_system("grep -Eq '^  [0-9] +murmur2 +6 ' "
                                      "%s/show.txt",
                                      dir),
                        0);
        CU_ASSERT_EQUAL(ks_e2e_system("grep -q 'class=\"ks-table ks-audit\"' "
                                      "%s/scan.html",
                                      dir),
                        0);
        if (getenv("KS_KEEP"))
                ks_e2e_system("cp %s/show.txt %s/scan.html %s /tmp/", dir, dir,
                              report);
        /* merge: with a second (partial) scan, another consumer process;
         * its first 500 records are consistent_random's, so it is told the
         * partitioner (merge refuses keys hashed by two partitioners) */
        snprintf(merged, sizeof(merged), "%s/merged.json", dir);
        CU_ASSERT_EQUAL(ks_e2e_system("%s scan -b %s -t %s --max-messages 500 "
                                      "--partitioner murmur2_random -o "
                                      "%s/part.json > /dev/null 2>&1",
                                      cli(), ks_broker_bootstrap(), topic, dir),
                        0);
        CU_ASSERT_EQUAL(ks_e2e_system("%s merge %s %s/part.json -o %s 2>&1",
                                      cli(), report, dir, merged),
                        0);
        json_decref(r);
        ks_broker_summary("scan",
                          "### keyshift scan\n\n%d records (consistent_random "
                          "and murmur2_random under 6, grown to 12, Java "
                          "KafkaProducer): explained cells and unexplained "
                          "equal librdkafka's functions, loads equal the "
                          "keys' murmur2 partitions at 12, history "
                          "(consistent,6), (murmur2,6), (murmur2,12).\n",
                          TOTAL);
        ks_broker_delete_topic(topic);
        ks_broker_tmpdir_done(dir);
}

/** @returns member @p path of topic @p t's proposal for @p count (-1 when
 *           there is no such proposal). */
static long long proposal_int(json_t *t, int count, const char *path)
{
        json_t *props = json_object_get(t, "proposals"), *p;
        size_t  i;

        json_array_foreach(props, i, p)
        {
                if (json_integer_value(json_object_get(p, "partition_count")) ==
                    count)
                        return ks_e2e_int(p, path);
        }
        return -1;
}

/** @brief The same records seen twice: by the plugin in the producer that
 *         wrote them, and by a scan of the topic. Moved messages and keys,
 *         and the loads now and at the proposed count, are equal. */
static void test_scan_equals_plugin(void)
{
        const char          *dir = ks_e2e_tmpdir("scan-plugin");
        char                 topic[128], plugin_path[600], scan_path[600];
        char                 errstr[256], at[64];
        rd_kafka_conf_t     *conf = rd_kafka_conf_new();
        ks_broker_producer_t pr;
        uint64_t             seed = 7;
        json_t              *pr_r, *sc_r, *pt, *st;
        size_t               i;
        int                  p;

        ks_broker_topic_name("scan-plugin", topic, sizeof(topic));
        CU_ASSERT_FATAL(ks_broker_create_topic(topic, 6) == 0);
        snprintf(plugin_path, sizeof(plugin_path), "%s/plugin.json", dir);
        snprintf(scan_path, sizeof(scan_path), "%s/scan.json", dir);
        CU_ASSERT_FATAL(rd_kafka_conf_set(conf, "plugin.library.paths",
                                          getenv("KS_PLUGIN"), errstr,
                                          sizeof(errstr)) == RD_KAFKA_CONF_OK);
        CU_ASSERT_FATAL(rd_kafka_conf_set(conf, "partitioner", "murmur2_random",
                                          errstr,
                                          sizeof(errstr)) == RD_KAFKA_CONF_OK);
        CU_ASSERT_FATAL(rd_kafka_conf_set(conf, "keyshift.partitions.proposed",
                                          "12", errstr,
                                          sizeof(errstr)) == RD_KAFKA_CONF_OK);
        CU_ASSERT_FATAL(rd_kafka_conf_set(conf, "keyshift.report.path",
                                          plugin_path, errstr,
                                          sizeof(errstr)) == RD_KAFKA_CONF_OK);
        CU_ASSERT_FATAL(ks_broker_producer_new(&pr, conf, MURMUR_MSGS) == 0);
        for (i = 0; i < MURMUR_MSGS; i++) {
                keylen[i] = (size_t)snprintf(
                    keys[i], sizeof(keys[i]), "acct-%llu",
                    (unsigned long long)(ks_broker_rand(&seed) % 2000));
                ks_broker_produce(&pr, topic, i, keys[i], keylen[i], "value",
                                  5);
        }
        ks_broker_flush(&pr);
        CU_ASSERT_EQUAL_FATAL(pr.failed, 0);
        ks_broker_producer_free(&pr); /* destroy: the final report */

        CU_ASSERT_EQUAL_FATAL(
            ks_e2e_system("%s scan -b %s -t %s --proposed 12 -o %s > "
                          "%s/scan.out 2>&1",
                          cli(), ks_broker_bootstrap(), topic, scan_path, dir),
            0);
        pr_r = ks_e2e_load_json(plugin_path);
        sc_r = ks_e2e_load_json(scan_path);
        CU_ASSERT_PTR_NOT_NULL_FATAL(pr_r);
        CU_ASSERT_PTR_NOT_NULL_FATAL(sc_r);
        pt = json_object_get(json_object_get(pr_r, "topics"), topic);
        st = json_object_get(json_object_get(sc_r, "topics"), topic);
        CU_ASSERT_PTR_NOT_NULL_FATAL(pt);
        CU_ASSERT_PTR_NOT_NULL_FATAL(st);
        CU_ASSERT_EQUAL(ks_e2e_int(pt, "acknowledged/mismatched"), 0);
        CU_ASSERT_EQUAL(proposal_int(st, 12, "moved/messages"),
                        proposal_int(pt, 12, "moved/messages"));
        CU_ASSERT(proposal_int(st, 12, "moved/messages") > 0);
        CU_ASSERT_EQUAL(proposal_int(st, 12, "moved/distinct_keys"),
                        proposal_int(pt, 12, "moved/distinct_keys"));
        for (p = 0; p < 12; p++) {
                snprintf(at, sizeof(at), "partitions/messages/%d", p);
                CU_ASSERT_EQUAL(proposal_int(st, 12, at),
                                proposal_int(pt, 12, at));
                if (p < 6) {
                        snprintf(at, sizeof(at),
                                 "current/partitions/messages/%d", p);
                        CU_ASSERT_EQUAL(ks_e2e_int(st, at), ks_e2e_int(pt, at));
                }
        }
        json_decref(pr_r);
        json_decref(sc_r);
        ks_broker_delete_topic(topic);
        ks_broker_tmpdir_done(dir);
}

/** @brief Produces @p n keyed records to @p topic in one transaction of
 *         producer @p rk, committed or aborted. @returns 0, or -1 when
 *         the transaction failed (printed). */
static int transaction(rd_kafka_t *rk, const char *topic, int from, int n,
                       int commit)
{
        rd_kafka_error_t *e;
        char              key[32];
        int               i;

        if ((e = rd_kafka_begin_transaction(rk)))
                goto failed;
        for (i = from; i < from + n; i++) {
                snprintf(key, sizeof(key), "acct-%d", i);
                CU_ASSERT_EQUAL(
                    rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic),
                                      RD_KAFKA_V_KEY(key, strlen(key)),
                                      RD_KAFKA_V_VALUE("v", 1),
                                      RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                                      RD_KAFKA_V_END),
                    0);
        }
        /* every record delivered (its partition added to the transaction)
         * before the transaction ends: an abort right after producing can
         * fail with INVALID_TXN_STATE (librdkafka issue #4849) */
        rd_kafka_flush(rk, 30000);
        e = commit ? rd_kafka_commit_transaction(rk, 30000)
                   : rd_kafka_abort_transaction(rk, 30000);
        if (!e)
                return 0;
failed:
        printf("\n    transaction: %s\n", rd_kafka_error_string(e));
        rd_kafka_error_destroy(e);
        return -1;
}

/** @brief Writes 300 committed, 200 aborted and 100 committed records to
 *         a new 3-partition topic (@p topic) with a transactional producer
 *         of id @p txid. @returns 0, or -1 when a transaction failed. */
static int produce_transactions(const char *topic, const char *txid)
{
        rd_kafka_conf_t  *conf = rd_kafka_conf_new();
        rd_kafka_t       *rk;
        rd_kafka_error_t *e;
        char              errstr[256];
        int               r = -1;

        CU_ASSERT_FATAL(ks_broker_create_topic(topic, 3) == 0);
        CU_ASSERT_FATAL(rd_kafka_conf_set(conf, "bootstrap.servers",
                                          ks_broker_bootstrap(), errstr,
                                          sizeof(errstr)) == RD_KAFKA_CONF_OK);
        CU_ASSERT_FATAL(rd_kafka_conf_set(conf, "transactional.id", txid,
                                          errstr,
                                          sizeof(errstr)) == RD_KAFKA_CONF_OK);
        CU_ASSERT_PTR_NOT_NULL_FATAL(
            rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr)));
        if ((e = rd_kafka_init_transactions(rk, 60000))) {
                printf("\n    init_transactions: %s\n",
                       rd_kafka_error_string(e));
                rd_kafka_error_destroy(e);
        } else if (!transaction(rk, topic, 0, 300, 1) &&
                   !transaction(rk, topic, 300, 200, 0) && /* aborted */
                   !transaction(rk, topic, 500, 100, 1)) {
                r = 0;
        }
        rd_kafka_destroy(rk);
        return r;
}

/** Transactional records: the scan reads committed ones only
 *  (isolation.level=read_committed); an aborted transaction's records and
 *  the transaction markers are skipped, and the scan still ends. A
 *  transaction the client or broker fails (librdkafka 2.0.2 against Kafka
 *  4.x, rarely) is not what is tested: the records are written once more,
 *  to a new topic with a new transactional id, and a second failure fails
 *  the test. */
static void test_scan_aborted_transactions(void)
{
        const char *dir = ks_e2e_tmpdir("scan-txn");
        char        topic[128], report[600], txid[64];
        json_t     *r;
        int         attempt, ok = 0;

        for (attempt = 0; attempt < 2 && !ok; attempt++) {
                ks_broker_topic_name("scan-txn", topic, sizeof(topic));
                snprintf(txid, sizeof(txid), "keyshift-scan-test-%ld-%d",
                         (long)getpid(), attempt);
                ok = !produce_transactions(topic, txid);
                if (!ok) {
                        printf("    (attempt %d failed: writing again)\n",
                               attempt + 1);
                        ks_broker_delete_topic(topic);
                }
        }
        CU_ASSERT_FATAL(ok);

        snprintf(report, sizeof(report), "%s/scan.json", dir);
        CU_ASSERT_EQUAL_FATAL(
            ks_e2e_system("timeout 120 %s scan -b %s -t %s -o %s > "
                          "%s/scan.out 2>&1",
                          cli(), ks_broker_bootstrap(), topic, report, dir),
            0);
        r = ks_e2e_load_json(report);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        CU_ASSERT(json_is_true(ks_e2e_get(r, "scan/complete")));
        CU_ASSERT_EQUAL(ks_e2e_int(r, "scan/records"), 400);
        CU_ASSERT_EQUAL(
            ks_e2e_int(json_object_get(json_object_get(r, "topics"), topic),
                       "messages"),
            400);
        json_decref(r);
        ks_broker_delete_topic(topic);
        ks_broker_tmpdir_done(dir);
}

/** @brief Produces @p n records with keys "k<i % @p keys>" to @p topic
 *         (librdkafka's default partitioner) and waits for them. */
static void produce_small(const char *topic, int n, int keys)
{
        ks_broker_producer_t pr;
        int                  i;

        CU_ASSERT_FATAL(
            ks_broker_producer_new(&pr, rd_kafka_conf_new(), (size_t)n) == 0);
        for (i = 0; i < n; i++) {
                char k[16];
                snprintf(k, sizeof(k), "k%d", i % keys);
                ks_broker_produce(&pr, topic, (size_t)i, k, strlen(k), "v", 1);
        }
        ks_broker_flush(&pr);
        CU_ASSERT_EQUAL(pr.failed, 0);
        ks_broker_producer_free(&pr);
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

        /* --from past the end of a topic that has records */
        ks_broker_topic_name("scan-end", empty, sizeof(empty));
        CU_ASSERT_FATAL(ks_broker_create_topic(empty, 2) == 0);
        produce_small(empty, 10, 1);
        snprintf(args, sizeof(args),
                 "--bootstrap %s --topic %s --from @99999999999999",
                 ks_broker_bootstrap(), empty);
        expect(dir, args, 1, "past the end");
        snprintf(args, sizeof(args), "--bootstrap %s --topic %s --from latest",
                 ks_broker_bootstrap(), empty);
        expect(dir, args, 1, "past the end");
        ks_broker_delete_topic(empty);

        /* one partition: every family explains every record, so the
         * records single out none (the proposals use the default) */
        ks_broker_topic_name("scan-one", empty, sizeof(empty));
        CU_ASSERT_FATAL(ks_broker_create_topic(empty, 1) == 0);
        {
                char    out[4096], p[700];
                json_t *r, *pt;
                produce_small(empty, 50, 50);
                snprintf(args, sizeof(args), "--bootstrap %s --topic %s",
                         ks_broker_bootstrap(), empty);
                CU_ASSERT_EQUAL(run(dir, args, out, sizeof(out)), 0);
                snprintf(p, sizeof(p), "%s/bad.json", dir);
                r = ks_e2e_load_json(p);
                CU_ASSERT_PTR_NOT_NULL_FATAL(r);
                snprintf(p, sizeof(p), "topics/%s/partitioner", empty);
                pt = ks_e2e_get(r, p);
                CU_ASSERT_STRING_EQUAL(
                    json_string_value(json_object_get(pt, "source")),
                    "default");
                CU_ASSERT(json_is_false(json_object_get(pt, "confirmed")));
                json_decref(r);
        }
        ks_broker_delete_topic(empty);

        /* a compacted topic: read, and said so */
        ks_broker_topic_name("scan-compact", empty, sizeof(empty));
        CU_ASSERT_FATAL(ks_broker_create_topic_config(
                            empty, 2, "cleanup.policy", "compact") == 0);
        {
                char    out[4096], p[700];
                json_t *r;
                produce_small(empty, 20, 7);
                snprintf(args, sizeof(args), "--bootstrap %s --topic %s",
                         ks_broker_bootstrap(), empty);
                CU_ASSERT_EQUAL(run(dir, args, out, sizeof(out)), 0);
                CU_ASSERT_PTR_NOT_NULL(strstr(out, "is compacted"));
                snprintf(p, sizeof(p), "%s/bad.json", dir);
                r = ks_e2e_load_json(p);
                CU_ASSERT_PTR_NOT_NULL_FATAL(r);
                snprintf(p, sizeof(p), "topics/%s", empty);
                CU_ASSERT(json_is_true(json_object_get(
                    json_object_get(ks_e2e_get(r, p), "partition_count"),
                    "compacted")));
                CU_ASSERT(ks_e2e_has_warning(
                    json_object_get(ks_e2e_get(r, p), "warnings"),
                    "TOPIC_COMPACTED"));
                json_decref(r);
        }
        ks_broker_delete_topic(empty);

        /* nothing listens on port 1: fails within the stated timeout */
        t0 = ks_broker_now_s();
        expect(dir, "--bootstrap 127.0.0.1:1 --topic x --timeout-ms 2000", 1,
               "within 2000 ms");
        CU_ASSERT(ks_broker_now_s() - t0 < 10);
        ks_broker_tmpdir_done(dir);
}

/**
 * @brief The output path is checked before a record is read, and SIGTERM
 *        writes the partial report as SIGINT does (issue 30). The scan is
 *        made slow on purpose: records in batches of one, and each fetch
 *        waits fetch.wait.max.ms for more bytes than there are
 *        (fetch.min.bytes) and takes one batch (max.partition.fetch.bytes
 *        1): about 2 records a second, so SIGTERM after 2 s meets it
 *        reading.
 */
static void test_scan_output_and_sigterm(void)
{
        const char          *dir = ks_e2e_tmpdir("scan-term");
        char                 topic[128], p[700], err[4096] = "";
        ks_broker_producer_t pr;
        rd_kafka_conf_t     *conf = rd_kafka_conf_new();
        char                 errstr[256];
        json_t              *r;
        FILE                *fp;
        double               t0;
        int                  i, rc;
        size_t               n;

        ks_broker_topic_name("scan-term", topic, sizeof(topic));
        CU_ASSERT_FATAL(ks_broker_create_topic(topic, 1) == 0);
        CU_ASSERT_FATAL(rd_kafka_conf_set(conf, "linger.ms", "0", errstr,
                                          sizeof(errstr)) == RD_KAFKA_CONF_OK);
        CU_ASSERT_FATAL(ks_broker_producer_new(&pr, conf, 60) == 0);
        for (i = 0; i < 60; i++) { /* one record a batch */
                char k[16];
                snprintf(k, sizeof(k), "k%d", i);
                ks_broker_produce(&pr, topic, (size_t)i, k, strlen(k), "v", 1);
                ks_broker_flush(&pr);
        }
        CU_ASSERT_EQUAL(pr.failed, 0);
        ks_broker_producer_free(&pr);

        /* an output path it cannot write: refused at once, nothing read */
        t0 = ks_broker_now_s();
        rc = ks_e2e_system("timeout 60 %s scan --bootstrap %s --topic %s "
                           "-o %s/no-such-folder/r.json 2> %s/err.txt",
                           cli(), ks_broker_bootstrap(), topic, dir, dir);
        snprintf(p, sizeof(p), "%s/err.txt", dir);
        if ((fp = fopen(p, "r"))) {
                n      = fread(err, 1, sizeof(err) - 1, fp);
                err[n] = 0;
                fclose(fp);
        }
        printf("\n    %s", err);
        CU_ASSERT_EQUAL(rc, 1);
        CU_ASSERT_PTR_NOT_NULL(strstr(err, "cannot write the report at"));
        CU_ASSERT(ks_broker_now_s() - t0 < 5);

        /* SIGTERM mid-scan: the partial report, exit 143 */
        snprintf(p, sizeof(p), "%s/r.json", dir);
        CU_ASSERT_EQUAL_FATAL(
            ks_e2e_system(
                "%s scan --bootstrap %s --topic %s -o %s "
                "-X fetch.min.bytes=100000000 -X fetch.wait.max.ms=500 "
                "-X max.partition.fetch.bytes=1 --timeout-ms 30000 "
                "2> %s/term.txt & echo $! > %s/pid; sleep 4; "
                "kill -TERM $(cat %s/pid); wait $(cat %s/pid); "
                "echo $? > %s/rc",
                cli(), ks_broker_bootstrap(), topic, p, dir, dir, dir, dir,
                dir),
            0);
        snprintf(err, sizeof(err), "%s/rc", dir);
        CU_ASSERT_PTR_NOT_NULL_FATAL(fp = fopen(err, "r"));
        CU_ASSERT_EQUAL(fscanf(fp, "%d", &rc), 1);
        fclose(fp);
        CU_ASSERT_EQUAL(rc, 143);
        r = ks_e2e_load_json(p);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        CU_ASSERT_STRING_EQUAL(
            json_string_value(ks_e2e_get(r, "scan/stopped_by")), "interrupt");
        CU_ASSERT(json_is_false(ks_e2e_get(r, "scan/complete")));
        printf("    SIGTERM: exit %d, %lld of 60 records read\n", rc,
               ks_e2e_int(r, "scan/records"));
        CU_ASSERT(ks_e2e_int(r, "scan/records") < 60);
        json_decref(r);
        ks_broker_delete_topic(topic);
        ks_broker_tmpdir_done(dir);
}

void ks_test_register(void)
{
        KS_ADD_SUITE(
            "keyshift scan",
            {"three producers, an increase: audit and analysis", test_scan},
            {"the plugin's and the scan's figures of the same records",
             test_scan_equals_plugin},
            {"aborted transactions are not read",
             test_scan_aborted_transactions},
            {"bad inputs fail clearly", test_bad_inputs},
            {"the output path checked first; SIGTERM: a partial report",
             test_scan_output_and_sigterm});
}
