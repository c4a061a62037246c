/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_plugin_conf.c
 * @brief keyshift's configuration through librdkafka (rd_kafka_conf_set,
 *        rd_kafka_conf_dup) and its behaviour in a live producer: two
 *        producers in one process, the kill switch, topic selection, the
 *        count override, explicit partitions, a custom partitioner, an
 *        unwritable report path and periodic reports.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ks_e2e_support.h"
#include "ks_test.h"

static rd_kafka_conf_t *plugin_conf(void)
{
        return ks_e2e_conf(NULL);
}

static void expect_set(const char *name, const char *value,
                       rd_kafka_conf_res_t want)
{
        rd_kafka_conf_t    *conf        = plugin_conf();
        char                errstr[512] = "";
        rd_kafka_conf_res_t r =
            rd_kafka_conf_set(conf, name, value, errstr, sizeof(errstr));

        if (r != want)
                fprintf(stderr, "%s=%s: got %d want %d (%s)\n", name, value, r,
                        want, errstr);
        CU_ASSERT_EQUAL(r, want);
        if (want == RD_KAFKA_CONF_INVALID) {
                /* The errstr names the property and what is accepted. */
                CU_ASSERT_PTR_NOT_NULL(strstr(errstr, name));
                CU_ASSERT(strstr(errstr, "expected") ||
                          strstr(errstr, "docs/properties.md"));
        }
        rd_kafka_conf_destroy(conf);
}

/* The report replaces the file at its path (a rename): a symbolic link,
 * FIFO or device there is refused at rd_kafka_conf_set(), and one that
 * appears later is left as it is (REPORT_WRITE_FAILED), never replaced. */
static void test_report_path_not_regular(void)
{
        const char      *dir = ks_e2e_tmpdir("conf-paths");
        char             fifo[512], link[512], target[512], later[512];
        char             errstr[512];
        rd_kafka_conf_t *conf;
        rd_kafka_t      *rk;
        struct stat      st;

        snprintf(fifo, sizeof(fifo), "%s/fifo.json", dir);
        snprintf(link, sizeof(link), "%s/link.json", dir);
        snprintf(target, sizeof(target), "%s/target.json", dir);
        snprintf(later, sizeof(later), "%s/later.json", dir);
        CU_ASSERT_EQUAL_FATAL(mkfifo(fifo, 0600), 0);
        CU_ASSERT_EQUAL_FATAL(symlink(target, link), 0);
        expect_set("keyshift.report.path", fifo, RD_KAFKA_CONF_INVALID);
        expect_set("keyshift.report.path", link, RD_KAFKA_CONF_INVALID);
        expect_set("keyshift.report.path", "/dev/full", RD_KAFKA_CONF_INVALID);
        expect_set("keyshift.report.path", target, RD_KAFKA_CONF_OK);

        /* a FIFO made after the configuration: the report is not written
         * over it */
        conf = ks_e2e_conf("keyshift.report.path", later, "bootstrap.servers",
                           "127.0.0.1:1", NULL);
        rk   = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
        CU_ASSERT_PTR_NOT_NULL_FATAL(rk);
        CU_ASSERT_EQUAL(mkfifo(later, 0600), 0);
        rd_kafka_destroy(rk);
        CU_ASSERT_EQUAL(lstat(later, &st), 0);
        CU_ASSERT(S_ISFIFO(st.st_mode));
        CU_ASSERT_EQUAL(lstat(fifo, &st), 0);
        CU_ASSERT(S_ISFIFO(st.st_mode));
        CU_ASSERT_EQUAL(lstat(link, &st), 0);
        CU_ASSERT(S_ISLNK(st.st_mode));
        ks_e2e_system("rm -rf '%s'", dir);
}

static void test_values(void)
{
        static const struct {
                const char *name, *value;
                int         ok;
        } cases[] = {
            {"keyshift.enable", "true", 1},
            {"keyshift.enable", "false", 1},
            {"keyshift.enable", "yes", 0},
            {"keyshift.enable", "", 0},
            {"keyshift.partitions.proposed", "12", 1},
            {"keyshift.partitions.proposed", "12,16,24", 1},
            {"keyshift.partitions.proposed", "1", 1},
            {"keyshift.partitions.proposed", "100000", 1},
            {"keyshift.partitions.proposed", "1,2,3,4,5,6,7,8", 1},
            {"keyshift.partitions.proposed", "1,2,3,4,5,6,7,8,9", 0},
            {"keyshift.partitions.proposed", "0", 0},
            {"keyshift.partitions.proposed", "100001", 0},
            {"keyshift.partitions.proposed", "-4", 0},
            {"keyshift.partitions.proposed", "12,", 0},
            {"keyshift.report.topic", "_keyshift-reports", 1},
            {"keyshift.report.topic", "", 1}, /* off */
            {"keyshift.report.topic", "a.b_c-D9", 1},
            {"keyshift.report.topic", "bad topic", 0},
            {"keyshift.report.topic", "a/b", 0},
            {"keyshift.report.topic", ".", 0},
            {"keyshift.report.topic", "..", 0},
            {"keyshift.report.topic.flush.ms", "0", 1},
            {"keyshift.report.topic.flush.ms", "60000", 1},
            {"keyshift.report.topic.flush.ms", "60001", 0},
            {"keyshift.report.topic.flush.ms", "-1", 0},
            {"keyshift.report.topic.bootstrap.servers", "other:9092", 1},
            {"keyshift.report.topic.linger.ms", "50", 1},
            {"keyshift.report.topic.linger.ms", "not-a-number", 0},
            {"keyshift.report.topic.no.such.property", "1", 0},
            {"keyshift.report.topic.plugin.library.paths", "x.so", 0},
            {"keyshift.report.topic.security.protocol", "sasl_ssl", 1},
            {"keyshift.report.topic.security.protocol", "bogus", 0},
            {"keyshift.report.topic.", "1", 0},
            {"keyshift.overload", "skip", 1},
            {"keyshift.overload", "analyse", 1},
            {"keyshift.overload", "analyze", 0},
            {"keyshift.overload", "", 0},
            {"keyshift.partitions.proposed", "12,,16", 0},
            {"keyshift.partitions.proposed", " 12, 16", 1},
            {"keyshift.partitions.proposed", ",", 0},
            {"keyshift.partitions.proposed", "12,x", 0},
            {"keyshift.partitions.proposed", "1.5", 0},
            {"keyshift.partitions.proposed", "", 0},
            {"keyshift.partitions.current", "6", 1},
            {"keyshift.partitions.current", "0", 0},
            {"keyshift.partitions.current", "6,7", 0},
            {"keyshift.report.path", "/tmp/ks-%c-%p.json", 1},
            {"keyshift.report.path", "report.json", 1},
            {"keyshift.report.path", "100%%.json", 1},
            {"keyshift.report.path", "bad-%x.json", 0},
            {"keyshift.report.path", "", 0},
            {"keyshift.metrics.path", "/tmp/keyshift-%c-%p.prom", 1},
            {"keyshift.metrics.path", "m.prom", 1},
            {"keyshift.metrics.path", "", 1}, /* off */
            {"keyshift.metrics.path", "/tmp/m.txt", 0},
            {"keyshift.metrics.path", "/tmp/m.prom.tmp", 0},
            {"keyshift.metrics.path", "/tmp/.prom", 0},
            {"keyshift.metrics.path", ".prom", 0},
            {"keyshift.metrics.path", "/tmp/bad-%x.prom", 0},
            {"keyshift.metrics.path", "/nonexistent-dir/m.prom", 0},
            {"keyshift.metrics.path", "/tmp", 0},
            {"keyshift.report.interval.ms", "0", 1},
            {"keyshift.report.interval.ms", "60000", 1},
            {"keyshift.report.interval.ms", "-1", 0},
            {"keyshift.report.interval.ms", "86400001", 0},
            {"keyshift.report.interval.ms", "soon", 0},
            {"keyshift.topics", "^ais(-.*)?$", 1},
            {"keyshift.topics", "(unclosed", 0},
            /* compilation alone would take gigabytes (fuzz target config) */
            {"keyshift.topics", "tru++++++++++++++++++++++++++++++++++++++++",
             0},
            {"keyshift.topics", "(a{50}){50}", 0},
            {"keyshift.topics", "^(ais|orders)[+*?]{1,3}$", 1},
            {"keyshift.topics", "^a\\+++$", 0},
            {"keyshift.topics", "^a\\+$", 1},
            {"keyshift.hot.keys", "0", 1},
            {"keyshift.hot.keys", "1000", 1},
            {"keyshift.hot.keys", "1001", 0},
            {"keyshift.key.sample.size", "64", 1},
            {"keyshift.key.sample.size", "63", 0},
            {"keyshift.topics.max", "1", 1},
            {"keyshift.topics.max", "0", 0},
            {"keyshift.memory.max.mb", "1", 1},
            {"keyshift.memory.max.mb", "65536", 1},
            {"keyshift.memory.max.mb", "0", 0},
            {"keyshift.memory.max.mb", "65537", 0},
            {"keyshift.memory.max.mb", "64M", 0},
            {"keyshift.metadata.refresh.ms", "100", 1},
            {"keyshift.metadata.refresh.ms", "99", 0},
            {"keyshift.flow.max.cells", "0", 1},
            {"keyshift.flow.max.cells", "1048577", 0},
            {"keyshift.flow.max.cells", "1048576", 1},
            {"keyshift.report.interval.ms", "1", 0},
            {"keyshift.report.interval.ms", "100", 1},
            {"keyshift.no.such.property", "1", 0},
            {"keyshift.", "1", 0},
        };
        size_t i;

        for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                expect_set(cases[i].name, cases[i].value,
                           cases[i].ok ? RD_KAFKA_CONF_OK
                                       : RD_KAFKA_CONF_INVALID);
        /* An unknown name: the closest property and where the list is, the
         * whole message within the 256 bytes confluent-kafka-python gives
         * (a list of every name was cut there mid-word). */
        {
                rd_kafka_conf_t *conf = plugin_conf();
                char             errstr[256], name[300];
                size_t           len;

                CU_ASSERT_EQUAL(rd_kafka_conf_set(conf,
                                                  "keyshift.partition.proposed",
                                                  "12", errstr, sizeof(errstr)),
                                RD_KAFKA_CONF_INVALID);
                CU_ASSERT_PTR_NOT_NULL(strstr(
                    errstr, "did you mean keyshift.partitions.proposed?"));
                CU_ASSERT_PTR_NOT_NULL(strstr(errstr, "docs/properties.md"));
                CU_ASSERT(strlen(errstr) < sizeof(errstr) - 1);
                CU_ASSERT_EQUAL(rd_kafka_conf_set(conf, "keyshift.zzzzzzzz",
                                                  "1", errstr, sizeof(errstr)),
                                RD_KAFKA_CONF_INVALID);
                CU_ASSERT_PTR_NULL(strstr(errstr, "did you mean"));
                CU_ASSERT_PTR_NOT_NULL(strstr(errstr, "keyshift.zzzzzzzz"));
                /* the longest: a long typo of the longest name, echoed
                 * in part */
                snprintf(name, sizeof(name), "%s",
                         "keyshift.replication.latency.ms.per.partitionx");
                CU_ASSERT_EQUAL(
                    rd_kafka_conf_set(conf, name, "1", errstr, sizeof(errstr)),
                    RD_KAFKA_CONF_INVALID);
                CU_ASSERT_PTR_NOT_NULL(
                    strstr(errstr, "did you mean "
                                   "keyshift.replication.latency.ms.per."
                                   "partition?"));
                len = strlen(errstr);
                CU_ASSERT(len < sizeof(errstr) - 1);
                CU_ASSERT(len >= strlen("lists them)") &&
                          !strcmp(errstr + len - strlen("lists them)"),
                                  "lists them)"));
                memset(name, 'x', sizeof(name) - 1);
                memcpy(name, "keyshift.", 9);
                name[sizeof(name) - 1] = '\0';
                CU_ASSERT_EQUAL(
                    rd_kafka_conf_set(conf, name, "1", errstr, sizeof(errstr)),
                    RD_KAFKA_CONF_INVALID);
                len = strlen(errstr);
                CU_ASSERT(len < sizeof(errstr) - 1);
                CU_ASSERT_PTR_NOT_NULL(strstr(errstr, "xxx...: "));
                CU_ASSERT(len >= strlen("lists them)") &&
                          !strcmp(errstr + len - strlen("lists them)"),
                                  "lists them)"));
                rd_kafka_conf_destroy(conf);
        }
        /* librdkafka's own properties are untouched. */
        expect_set("linger.ms", "5", RD_KAFKA_CONF_OK);
        expect_set("no.such.librdkafka.property", "1", RD_KAFKA_CONF_UNKNOWN);
}

/** Produces @p n keyed messages to @p topic and closes the producer. */
static void produce_n(rd_kafka_conf_t *conf, const char *topic, int parts,
                      int n, int32_t partition, ks_e2e_producer_t *out)
{
        ks_e2e_producer_t p;
        char              key[32];
        int               i;

        CU_ASSERT_FATAL(ks_e2e_producer_new(&p, conf, topic, parts) == 0);
        for (i = 0; i < n; i++) {
                int kl = snprintf(key, sizeof(key), "key-%d", i % 97);
                ks_e2e_produce(&p, topic, key, (size_t)kl, partition, "v", 1);
        }
        ks_e2e_producer_close(&p);
        if (out)
                *out = p;
        else
                ks_e2e_producer_free(&p);
}

static json_t *report_at(const char *dir, const char *name)
{
        char path[700];
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        return ks_e2e_load_json(path);
}

static void test_conf_dup(void)
{
        const char      *dir = ks_e2e_tmpdir("dup");
        char             path[600], errstr[256];
        rd_kafka_conf_t *orig, *dup, *filtered;
        const char      *filter[] = {"keyshift."};
        json_t          *r;

        snprintf(path, sizeof(path), "%s/dup.json", dir);
        orig = ks_e2e_conf("keyshift.report.path", path,
                           "keyshift.partitions.proposed", "9",
                           "keyshift.report.interval.ms", "0", NULL);
        dup  = rd_kafka_conf_dup(orig);
        /* The copy is independent: changing the original does not touch
         * it, and it still validates keyshift.* properties. */
        CU_ASSERT_EQUAL(rd_kafka_conf_set(orig, "keyshift.partitions.proposed",
                                          "24", errstr, sizeof(errstr)),
                        RD_KAFKA_CONF_OK);
        CU_ASSERT_EQUAL(rd_kafka_conf_set(dup, "keyshift.hot.keys", "x", errstr,
                                          sizeof(errstr)),
                        RD_KAFKA_CONF_INVALID);
        filtered = rd_kafka_conf_dup_filter(orig, 1, filter);
        rd_kafka_conf_destroy(orig); /* never used: writes no report */
        rd_kafka_conf_destroy(filtered);

        produce_n(dup, "t", 3, 50, -1, NULL);
        r = ks_e2e_load_json(path);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        CU_ASSERT_EQUAL(ks_e2e_int(r, "topics/t/messages"), 50);
        CU_ASSERT_EQUAL(ks_e2e_int(r, "topics/t/proposals/0/partition_count"),
                        9);
        json_decref(r);
        CU_ASSERT_EQUAL(ks_e2e_system("test $(ls '%s' | wc -l) -eq 1", dir), 0);
        ks_e2e_system("rm -rf '%s'", dir);
}

static void test_two_producers(void)
{
        const char       *dir = ks_e2e_tmpdir("two");
        char              tmpl[600];
        ks_e2e_producer_t a, b;
        json_t           *ra, *rb;
        int               i;

        snprintf(tmpl, sizeof(tmpl), "%s/%%c.json", dir);
        CU_ASSERT_FATAL(
            ks_e2e_producer_new(&a,
                                ks_e2e_conf("client.id", "alpha",
                                            "keyshift.report.path", tmpl, NULL),
                                "ta", 4) == 0);
        CU_ASSERT_FATAL(
            ks_e2e_producer_new(
                &b,
                ks_e2e_conf("client.id", "beta", "keyshift.report.path", tmpl,
                            "keyshift.partitions.proposed", "5", NULL),
                "tb", 3) == 0);
        for (i = 0; i < 300; i++) {
                ks_e2e_produce(&a, "ta", "k", 1, -1, "v", 1);
                if (i % 3 == 0)
                        ks_e2e_produce(&b, "tb", "kk", 2, -1, "v", 1);
        }
        ks_e2e_producer_free(&a);
        ks_e2e_producer_free(&b);
        ra = report_at(dir, "alpha.json");
        rb = report_at(dir, "beta.json");
        CU_ASSERT_PTR_NOT_NULL_FATAL(ra);
        CU_ASSERT_PTR_NOT_NULL_FATAL(rb);
        CU_ASSERT_EQUAL(ks_e2e_int(ra, "topics/ta/messages"), 300);
        CU_ASSERT_PTR_NULL(ks_e2e_get(ra, "topics/tb"));
        CU_ASSERT_EQUAL(ks_e2e_int(ra, "topics/ta/proposals/0/partition_count"),
                        8); /* default: twice the current 4 */
        CU_ASSERT_EQUAL(ks_e2e_int(rb, "topics/tb/messages"), 100);
        CU_ASSERT_PTR_NULL(ks_e2e_get(rb, "topics/ta"));
        CU_ASSERT_EQUAL(ks_e2e_int(rb, "topics/tb/proposals/0/partition_count"),
                        5);
        CU_ASSERT_STRING_EQUAL(
            json_string_value(ks_e2e_get(rb, "producer/client_id")), "beta");
        json_decref(ra);
        json_decref(rb);
        ks_e2e_system("rm -rf '%s'", dir);
}

/** Two producers with one client.id in one process: two reports, and a
 *  third handle that never produced (e.g. an AdminClient made from a
 *  producer's configuration) writes a third, of no topics, that says
 *  keyshift was there. */
static void test_same_client_id(void)
{
        const char       *dir = ks_e2e_tmpdir("sameid");
        char              tmpl[600], p2[700];
        ks_e2e_producer_t a, b;
        rd_kafka_t       *idle;
        char              errstr[256];
        json_t           *ra, *rb;

        snprintf(tmpl, sizeof(tmpl), "%s/%%c.json", dir);
        snprintf(p2, sizeof(p2), "%s/same-2.json", dir);
        CU_ASSERT_FATAL(
            ks_e2e_producer_new(&a,
                                ks_e2e_conf("client.id", "same",
                                            "keyshift.report.path", tmpl, NULL),
                                "ta", 2) == 0);
        CU_ASSERT_FATAL(
            ks_e2e_producer_new(&b,
                                ks_e2e_conf("client.id", "same",
                                            "keyshift.report.path", tmpl, NULL),
                                "tb", 2) == 0);
        idle = rd_kafka_new(
            RD_KAFKA_PRODUCER,
            ks_e2e_conf("client.id", "same", "keyshift.report.path", tmpl,
                        "bootstrap.servers", "127.0.0.1:1", NULL),
            errstr, sizeof(errstr));
        CU_ASSERT_PTR_NOT_NULL_FATAL(idle);
        ks_e2e_produce(&a, "ta", "k", 1, -1, "v", 1);
        ks_e2e_produce(&b, "tb", "k", 1, -1, "v", 1);
        ks_e2e_producer_free(&a);
        rd_kafka_destroy(idle);
        ks_e2e_producer_free(&b);
        ra = report_at(dir, "same.json");
        rb = ks_e2e_load_json(p2);
        CU_ASSERT_PTR_NOT_NULL_FATAL(ra);
        CU_ASSERT_PTR_NOT_NULL_FATAL(rb);
        CU_ASSERT_PTR_NOT_NULL(ks_e2e_get(ra, "topics/ta"));
        CU_ASSERT_PTR_NOT_NULL(ks_e2e_get(rb, "topics/tb"));
        CU_ASSERT_EQUAL(ks_e2e_system("test $(ls '%s' | wc -l) -eq 3", dir), 0);
        json_decref(ra);
        json_decref(rb);
        snprintf(p2, sizeof(p2), "%s/same-3.json", dir);
        ra = ks_e2e_load_json(p2);
        CU_ASSERT_PTR_NOT_NULL_FATAL(ra);
        CU_ASSERT_EQUAL(json_object_size(json_object_get(ra, "topics")), 0);
        CU_ASSERT_EQUAL(ks_e2e_int(ra, "messages"), 0);
        json_decref(ra);
        ks_e2e_system("rm -rf '%s'", dir);
}

static void test_disabled(void)
{
        const char *dir = ks_e2e_tmpdir("off");
        char        path[600];

        snprintf(path, sizeof(path), "%s/r.json", dir);
        produce_n(ks_e2e_conf("keyshift.enable", "false",
                              "keyshift.report.path", path, NULL),
                  "t", 2, 20, -1, NULL);
        CU_ASSERT_NOT_EQUAL(access(path, F_OK), 0);
        ks_e2e_system("rm -rf '%s'", dir);
}

static void test_topic_selection(void)
{
        const char       *dir = ks_e2e_tmpdir("sel");
        char              path[600];
        ks_e2e_producer_t p;
        json_t           *r;
        int               i;

        snprintf(path, sizeof(path), "%s/r.json", dir);
        CU_ASSERT_FATAL(
            ks_e2e_producer_new(&p,
                                ks_e2e_conf("keyshift.topics", "^ais(-.*)?$",
                                            "keyshift.report.path", path, NULL),
                                "ais-1", 2) == 0);
        rd_kafka_mock_topic_create(rd_kafka_handle_mock_cluster(p.rk), "other",
                                   2, 1);
        for (i = 0; i < 40; i++) {
                ks_e2e_produce(&p, "ais-1", "a", 1, -1, "v", 1);
                ks_e2e_produce(&p, "other", "a", 1, -1, "v", 1);
        }
        ks_e2e_producer_free(&p);
        r = ks_e2e_load_json(path);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        CU_ASSERT_EQUAL(ks_e2e_int(r, "topics/ais-1/messages"), 40);
        CU_ASSERT_PTR_NULL(ks_e2e_get(r, "topics/other"));
        json_decref(r);
        ks_e2e_system("rm -rf '%s'", dir);
}

static void test_count_override_and_explicit(void)
{
        const char       *dir = ks_e2e_tmpdir("ovr");
        char              path[600];
        ks_e2e_producer_t p;
        json_t           *r;
        int               i;

        snprintf(path, sizeof(path), "%s/r.json", dir);
        CU_ASSERT_FATAL(ks_e2e_producer_new(
                            &p,
                            ks_e2e_conf("keyshift.partitions.current", "6",
                                        "keyshift.report.path", path,
                                        "partitioner", "murmur2_random", NULL),
                            "t", 6) == 0);
        for (i = 0; i < 60; i++) {
                char key[16];
                int  kl = snprintf(key, sizeof(key), "k%d", i);
                /* one message in three goes to explicit partition 4 */
                ks_e2e_produce(&p, "t", key, (size_t)kl, i % 3 ? -1 : 4, "v",
                               1);
        }
        ks_e2e_producer_free(&p);
        r = ks_e2e_load_json(path);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        CU_ASSERT_STRING_EQUAL(
            json_string_value(ks_e2e_get(r, "topics/t/partition_count/source")),
            "config");
        CU_ASSERT_EQUAL(ks_e2e_int(r, "topics/t/keys/explicit_partition"), 20);
        CU_ASSERT_EQUAL(ks_e2e_int(r, "topics/t/keys/hashed"), 40);
        /* Explicit messages stay on partition 4 at 12 partitions too, and
         * never count as moved. */
        {
                long long on4 =
                    ks_e2e_int(r, "topics/t/proposals/0/partitions/messages/4");
                json_t *flow = ks_e2e_flow(
                    ks_e2e_get(r, "topics/t/proposals/0"),
                    ks_e2e_int(r, "topics/t/partition_count/current"));
                long long flow44 = json_integer_value(
                    json_array_get(json_array_get(flow, 4), 4));
                json_decref(flow);
                CU_ASSERT(on4 >= 20);
                CU_ASSERT(flow44 >= 20);
                CU_ASSERT(
                    ks_e2e_int(r, "topics/t/proposals/0/moved/messages") <= 40);
        }
        CU_ASSERT_EQUAL(ks_e2e_int(r, "topics/t/acknowledged/mismatched"), 0);
        json_decref(r);
        ks_e2e_system("rm -rf '%s'", dir);
}

/** A partitioner keyshift cannot see: everything to the last partition. */
static int32_t last_partition(const rd_kafka_topic_t *rkt, const void *key,
                              size_t keylen, int32_t cnt, void *a, void *b)
{
        (void)rkt, (void)key, (void)keylen, (void)a, (void)b;
        return cnt - 1;
}

/** Runs @p fn with stderr captured into @p out (size @p size). */
static void capture_stderr(void (*fn)(void *), void *arg, char *out,
                           size_t size)
{
        char    path[] = "/tmp/keyshift-stderr-XXXXXX";
        int     fd = mkstemp(path), saved = dup(2);
        ssize_t n;

        fflush(stderr);
        dup2(fd, 2);
        fn(arg);
        fflush(stderr);
        dup2(saved, 2);
        close(saved);
        lseek(fd, 0, SEEK_SET);
        n                  = read(fd, out, size - 1);
        out[n > 0 ? n : 0] = '\0';
        close(fd);
        unlink(path);
        fputs(out, stderr);
}

static void custom_partitioner_run(void *arg)
{
        const char      *path = arg;
        rd_kafka_conf_t *conf = ks_e2e_conf("keyshift.report.path", path, NULL);
        rd_kafka_topic_conf_t *tconf = rd_kafka_topic_conf_new();

        rd_kafka_topic_conf_set_partitioner_cb(tconf, last_partition);
        rd_kafka_conf_set_default_topic_conf(conf, tconf);
        produce_n(conf, "t", 5, 200, -1, NULL);
}

static void test_custom_partitioner(void)
{
        const char *dir = ks_e2e_tmpdir("custom");
        char        path[600], err[16384];
        json_t     *r;

        snprintf(path, sizeof(path), "%s/r.json", dir);
        capture_stderr(custom_partitioner_run, path, err, sizeof(err));
        r = ks_e2e_load_json(path);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        /* 97 keys: about 1 in 5 really hash to partition 4. */
        CU_ASSERT(ks_e2e_int(r, "topics/t/acknowledged/mismatched") > 100);
        CU_ASSERT_EQUAL(ks_e2e_int(r, "topics/t/acknowledged/mismatched") +
                            ks_e2e_int(r, "topics/t/acknowledged/matched"),
                        200);
        CU_ASSERT(ks_e2e_has_warning(ks_e2e_get(r, "topics/t/warnings"),
                                     "PARTITIONER_MISMATCH"));
        /* and on stderr, in librdkafka's log format */
        CU_ASSERT_PTR_NOT_NULL(strstr(err, "|KEYSHIFT|"));
        CU_ASSERT_PTR_NOT_NULL(strstr(err, "PARTITIONER_MISMATCH"));
        json_decref(r);
        ks_e2e_system("rm -rf '%s'", dir);
}

/** @brief A producer on topic "t" (5 partitions) with @p conf and the
 *         custom partitioner, having produced an explicit message to
 *         partition 0 first if @p explicit_first, then 200 keyed messages
 *         (97 keys). */
static void custom_partitioner_produce(ks_e2e_producer_t *p,
                                       rd_kafka_conf_t   *conf,
                                       int                explicit_first)
{
        rd_kafka_topic_conf_t *tconf = rd_kafka_topic_conf_new();
        char                   key[32];
        int                    i, kl;

        rd_kafka_topic_conf_set_partitioner_cb(tconf, last_partition);
        rd_kafka_conf_set_default_topic_conf(conf, tconf);
        CU_ASSERT_FATAL(ks_e2e_producer_new(p, conf, "t", 5) == 0);
        if (explicit_first)
                ks_e2e_produce(p, "t", "x", 1, 0, "v", 1);
        for (i = 0; i < 200; i++) {
                kl = snprintf(key, sizeof(key), "key-%d", i % 97);
                ks_e2e_produce(p, "t", key, (size_t)kl, -1, "v", 1);
        }
}

/** The same custom partitioner with keyshift.partitions.current: no
 *  metadata comes to check the disagreements against, and a long-running
 *  producer's reports must still say so (each refresh settles them), not
 *  only the final report. */
static void test_custom_partitioner_count_override(void)
{
        const char       *dir = ks_e2e_tmpdir("custom-current");
        char              path[600];
        ks_e2e_producer_t p;
        json_t           *r;
        int               i, seen = 0;

        snprintf(path, sizeof(path), "%s/r.json", dir);
        custom_partitioner_produce(
            &p,
            ks_e2e_conf("keyshift.report.path", path,
                        "keyshift.partitions.current", "5",
                        "keyshift.report.interval.ms", "200",
                        "keyshift.metadata.refresh.ms", "200", NULL),
            0);
        rd_kafka_flush(p.rk, 5000);
        /* a periodic report, the producer still running (within 15 s: a
         * report waits up to 5 s for a drainer at idle priority) */
        for (i = 0; i < 150 && !seen; i++) {
                usleep(100 * 1000);
                if (access(path, F_OK) || !(r = ks_e2e_load_json(path)))
                        continue;
                seen =
                    ks_e2e_int(r, "topics/t/acknowledged/messages") == 200 &&
                    ks_e2e_int(r, "topics/t/acknowledged/mismatched") > 100 &&
                    ks_e2e_int(r, "topics/t/acknowledged/"
                                  "pending_verification") == 0;
                CU_ASSERT(json_is_false(json_object_get(r, "final")));
                json_decref(r);
        }
        CU_ASSERT(seen);
        ks_e2e_producer_free(&p);
        ks_e2e_system("rm -rf '%s'", dir);
}

/** The custom partitioner, and one message sent to an explicit partition:
 *  every disagreement could be that message, so none is a mismatch
 *  (unverified); but 200 disagreements against one explicit message
 *  cannot all be, and the report says so (PARTITIONER_MISMATCH). */
static void test_custom_partitioner_with_explicit(void)
{
        const char       *dir = ks_e2e_tmpdir("custom-explicit");
        char              path[600];
        ks_e2e_producer_t p;
        json_t           *r, *w;

        snprintf(path, sizeof(path), "%s/r.json", dir);
        custom_partitioner_produce(
            &p, ks_e2e_conf("keyshift.report.path", path, NULL), 1);
        ks_e2e_producer_close(&p);
        r = ks_e2e_load_json(path);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        CU_ASSERT_EQUAL(ks_e2e_int(r, "topics/t/acknowledged/mismatched"), 0);
        CU_ASSERT(ks_e2e_int(r, "topics/t/acknowledged/unverified") > 100);
        w = ks_e2e_get(r, "topics/t/warnings");
        CU_ASSERT(ks_e2e_has_warning(w, "PARTITIONER_MISMATCH"));
        json_decref(r);
        ks_e2e_producer_free(&p);
        ks_e2e_system("rm -rf '%s'", dir);
}

/** No broker ever reachable: the report still names the producer as
 *  librdkafka does (client.id#producer-N), as keyshift's stderr lines do,
 *  and says the partition counts could not be asked (METADATA_FAILED,
 *  after 3 refreshes in a row found no broker up). */
static void test_name_without_broker(void)
{
        const char *dir = ks_e2e_tmpdir("nobroker");
        char        path[600], errstr[256], name[256];
        rd_kafka_t *rk;
        json_t     *r;

        snprintf(path, sizeof(path), "%s/r.json", dir);
        rk = rd_kafka_new(
            RD_KAFKA_PRODUCER,
            ks_e2e_conf("keyshift.report.path", path, "bootstrap.servers",
                        "127.0.0.1:1", "message.timeout.ms", "300",
                        "keyshift.metadata.refresh.ms", "200", NULL),
            errstr, sizeof(errstr));
        CU_ASSERT_PTR_NOT_NULL_FATAL(rk);
        snprintf(name, sizeof(name), "%s", rd_kafka_name(rk));
        CU_ASSERT_EQUAL(
            rd_kafka_producev(rk, RD_KAFKA_V_TOPIC("t"), RD_KAFKA_V_KEY("k", 1),
                              RD_KAFKA_V_VALUE("v", 1), RD_KAFKA_V_END),
            RD_KAFKA_RESP_ERR_NO_ERROR);
        rd_kafka_flush(rk, 2000);
        usleep(1000 * 1000); /* refreshes every 200 ms meanwhile */
        rd_kafka_destroy(rk);
        r = ks_e2e_load_json(path);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        CU_ASSERT_STRING_EQUAL(
            json_string_value(ks_e2e_get(r, "producer/name")), name);
        CU_ASSERT_EQUAL(ks_e2e_int(r, "topics/t/acknowledged/failed"), 1);
        CU_ASSERT(ks_e2e_has_warning(json_object_get(r, "warnings"),
                                     "METADATA_FAILED"));
        json_decref(r);
        ks_e2e_system("rm -rf '%s'", dir);
}

/** The report's folder vanishes after configuration: every write fails. */
static void unwritable_run(void *arg)
{
        const char       *path = arg;
        char              dir[600];
        ks_e2e_producer_t p;
        rd_kafka_conf_t  *conf =
            ks_e2e_conf("keyshift.report.path", path,
                        "keyshift.report.interval.ms", "100", NULL);

        snprintf(dir, sizeof(dir), "%.*s", (int)(strrchr(path, '/') - path),
                 path);
        CU_ASSERT_EQUAL(rmdir(dir), 0);
        produce_n(conf, "t", 3, 500, -1, &p);
        /* The producer is unharmed: everything delivered. */
        CU_ASSERT_EQUAL(p.dr_cnt, 500);
        for (size_t i = 0; i < p.dr_cnt; i++)
                CU_ASSERT_EQUAL(p.drs[i].err, 0);
        ks_e2e_producer_free(&p);
}

static void test_unwritable_report(void)
{
        char err[16384], path[600];

        /* Refused at configuration time when the folder is missing ... */
        expect_set("keyshift.report.path", "/nonexistent-dir/keyshift/r.json",
                   RD_KAFKA_CONF_INVALID);
        expect_set("keyshift.report.path", "/tmp", RD_KAFKA_CONF_INVALID);
        /* ... and a warning, never a failure, when it goes away later. */
        snprintf(path, sizeof(path), "%s/r.json", ks_e2e_tmpdir("gone"));
        capture_stderr(unwritable_run, path, err, sizeof(err));
        CU_ASSERT_PTR_NOT_NULL(strstr(err, "REPORT_WRITE_FAILED"));
        CU_ASSERT_PTR_NOT_NULL(strstr(err, path));
}

static void test_periodic_reports(void)
{
        const char       *dir = ks_e2e_tmpdir("periodic");
        char              path[600];
        ks_e2e_producer_t p;
        json_t           *r;
        int               i, seen_running = 0;

        snprintf(path, sizeof(path), "%s/r.json", dir);
        CU_ASSERT_FATAL(
            ks_e2e_producer_new(&p,
                                ks_e2e_conf("keyshift.report.path", path,
                                            "keyshift.report.interval.ms",
                                            "100", NULL),
                                "t", 3) == 0);
        /* 30 messages over 1.5 s, then up to 12 s more: on a busy machine
         * keyshift's drainer runs at idle priority, and a report waits
         * for it up to KS_SYNC_TIMEOUT_MS (5 s) */
        for (i = 0; i < 30 || (!seen_running && i < 270); i++) {
                if (i < 30)
                        ks_e2e_produce(&p, "t", "k", 1, -1, "v", 1);
                rd_kafka_poll(p.rk, 50);
                if (access(path, F_OK) == 0 && (r = ks_e2e_load_json(path))) {
                        /* a complete report, written while running */
                        CU_ASSERT(json_is_false(json_object_get(r, "final")));
                        seen_running++;
                        json_decref(r);
                }
        }
        CU_ASSERT(seen_running > 0);
        ks_e2e_producer_free(&p);
        r = ks_e2e_load_json(path);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        CU_ASSERT(json_is_true(json_object_get(r, "final")));
        CU_ASSERT_EQUAL(ks_e2e_int(r, "topics/t/messages"), 30);
        CU_ASSERT_EQUAL(ks_e2e_int(r, "topics/t/acknowledged/matched"), 30);
        json_decref(r);
        ks_e2e_system("rm -rf '%s'", dir);
}

/** @returns in @p buf (16 bytes) the name of budget_run_with()'s topic
 *           number @p i: b<i> for the first @p topics, then x0, x1, ... */
static const char *budget_topic(char *buf, int i, int topics)
{
        snprintf(buf, 16, "%s%d", i < topics ? "b" : "x",
                 i < topics ? i : i - topics);
        return buf;
}

/**
 * @brief A producer with keyshift.memory.max.mb=@p mb (and property
 *        @p name = @p value when @p name is not NULL) sends one message to
 *        each of @p topics topics b0, b1, ... in order, then to
 *        @p others topics x0, x1, ... @returns its final report (NULL on
 *        failure).
 */
static json_t *budget_run_with(const char *dir, int mb, int topics, int others,
                               const char *name, const char *value)
{
        char                     path[600], mbs[16], topic[16];
        ks_e2e_producer_t        p;
        rd_kafka_mock_cluster_t *mc;
        rd_kafka_conf_t         *conf;
        char                     errstr[256];
        int                      i;

        snprintf(path, sizeof(path), "%s/mb%d-%d-%d.json", dir, mb, topics,
                 others);
        snprintf(mbs, sizeof(mbs), "%d", mb);
        conf = ks_e2e_conf("keyshift.memory.max.mb", mbs,
                           "keyshift.partitions.current", "4",
                           "keyshift.report.path", path,
                           "keyshift.report.interval.ms", "0", NULL);
        if (name)
                CU_ASSERT_EQUAL(rd_kafka_conf_set(conf, name, value, errstr,
                                                  sizeof(errstr)),
                                RD_KAFKA_CONF_OK);
        if (ks_e2e_producer_new(&p, conf, "b0", 4))
                return NULL;
        mc = rd_kafka_handle_mock_cluster(p.rk);
        for (i = 1; i < topics + others; i++)
                CU_ASSERT_EQUAL(rd_kafka_mock_topic_create(
                                    mc, budget_topic(topic, i, topics), 4, 1),
                                0);
        for (i = 0; i < topics + others; i++)
                ks_e2e_produce(&p, budget_topic(topic, i, topics), "k", 1, -1,
                               "v", 1);
        ks_e2e_producer_free(&p);
        return ks_e2e_load_json(path);
}

/** @brief budget_run_with() with the defaults and no other topics. */
static json_t *budget_run(const char *dir, int mb, int topics)
{
        return budget_run_with(dir, mb, topics, 0, NULL, NULL);
}

/** @returns the message of @p r's producer-level warning @p code, or NULL. */
static const char *warning_text(json_t *r, const char *code)
{
        return ks_e2e_warning_message(json_object_get(r, "warnings"), code);
}

/** @returns the keyshift.memory.max.mb SKETCHES_REDUCED @p w advises, or
 *           0. */
static int advised_mb(const char *w)
{
        const char *at = w ? strstr(w, "; keyshift.memory.max.mb=") : NULL;
        int         mb = 0;

        if (!at || sscanf(at, "; keyshift.memory.max.mb=%d keeps", &mb) != 1)
                return 0;
        return mb;
}

/** @returns how many of @p r's @p topics topics (b0, b1, ...) have a
 *           sketch below the default sizes. */
static int topics_reduced(json_t *r, int topics)
{
        int i, n = 0;

        for (i = 0; i < topics; i++) {
                char k[64], h[64], m[64];
                snprintf(k, sizeof(k), "topics/b%d/merge/key_sample/capacity",
                         i);
                snprintf(h, sizeof(h), "topics/b%d/merge/hot_keys/capacity", i);
                snprintf(m, sizeof(m), "topics/b%d/mixed_keys/sample_capacity",
                         i);
                n += ks_e2e_int(r, k) < 4096 || ks_e2e_int(r, h) < 1024 ||
                     ks_e2e_int(r, m) < 2048;
        }
        return n;
}

/** keyshift.memory.max.mb too small for the topics' sketches:
 *  SKETCHES_REDUCED says how many topics got smaller sketches, which, how
 *  small, and which budget keeps the sizes asked; a producer given that
 *  budget has the sizes asked on every topic and no warning, one given
 *  1 MiB less is warned again. At the default 64 MiB, where the key table
 *  doubles and leaves the sketches less than at 63, the advice is a value
 *  above 64. */
static void test_sketches_reduced(void)
{
        const char *dir = ks_e2e_tmpdir("budget");
        const char *w;
        json_t     *small, *enough, *less, *dip, *raised, *only;
        int         mb, mb64;

        small = budget_run(dir, 1, 20);
        CU_ASSERT_PTR_NOT_NULL_FATAL(small);
        w = warning_text(small, "SKETCHES_REDUCED");
        CU_ASSERT_PTR_NOT_NULL_FATAL(w);
        CU_ASSERT_PTR_NOT_NULL(
            strstr(w, "smaller sketches than asked in 20 of 20 topics"));
        CU_ASSERT_PTR_NOT_NULL(strstr(w, "keyshift.memory.max.mb=1 / max(16"));
        /* whole: it ends with the advice */
        CU_ASSERT_PTR_NOT_NULL(strstr(w, "keeps the sizes asked"));
        CU_ASSERT_PTR_NOT_NULL(
            strstr(w, "key sample down to 64 of 4096 keys in 20"));
        CU_ASSERT_PTR_NOT_NULL(
            strstr(w, "hot-key counters down to 64 of 1024 in 20"));
        CU_ASSERT_PTR_NOT_NULL(
            strstr(w, "mixed-key sample down to 64 of 2048 in 20"));
        CU_ASSERT_EQUAL(topics_reduced(small, 20), 20);
        /* 20 topics at the minimum sizes take more than 1 MiB leaves */
        CU_ASSERT_PTR_NOT_NULL(strstr(w, "; the 20 topics made take "));
        mb = advised_mb(w);
        /* 20 topics of ~0.9 MiB, each when made wanting 1/16 (then 1/n) of
         * what is left: tens of MiB, not 1 */
        CU_ASSERT(mb > 20 && mb < 64);

        enough = budget_run(dir, mb, 20);
        CU_ASSERT_PTR_NOT_NULL_FATAL(enough);
        CU_ASSERT_PTR_NULL(warning_text(enough, "SKETCHES_REDUCED"));
        CU_ASSERT_EQUAL(topics_reduced(enough, 20), 0);

        less = budget_run(dir, mb - 1, 20);
        CU_ASSERT_PTR_NOT_NULL_FATAL(less);
        w = warning_text(less, "SKETCHES_REDUCED");
        CU_ASSERT_PTR_NOT_NULL(w);
        /* the last topic made is the one the smaller budget shrinks */
        CU_ASSERT_PTR_NOT_NULL(w && strstr(w, "in 1 of 20 topics"));
        CU_ASSERT_PTR_NULL(w ? strstr(w, "topics made take") : "");
        CU_ASSERT_EQUAL(topics_reduced(less, 20), 1);
        CU_ASSERT(ks_e2e_int(less, "topics/b19/merge/key_sample/capacity") <
                  4096);

        dip = budget_run(dir, 64, 32);
        CU_ASSERT_PTR_NOT_NULL_FATAL(dip);
        w    = warning_text(dip, "SKETCHES_REDUCED");
        mb64 = advised_mb(w);
        CU_ASSERT_EQUAL(topics_reduced(dip, 32), 1);
        CU_ASSERT(mb64 > 64);
        raised = budget_run(dir, mb64 ? mb64 : 65, 32);
        CU_ASSERT_PTR_NOT_NULL_FATAL(raised);
        CU_ASSERT_PTR_NULL(warning_text(raised, "SKETCHES_REDUCED"));
        CU_ASSERT_EQUAL(topics_reduced(raised, 32), 0);

        /* only the sketches reduced are named, and the topics counted
         * are the report's (5 topics outside keyshift.topics are seen,
         * not analysed): a key sample asked at its minimum cannot shrink */
        only = budget_run_with(dir, 1, 20, 5, "keyshift.key.sample.size", "64");
        CU_ASSERT_PTR_NOT_NULL_FATAL(only);
        w = warning_text(only, "SKETCHES_REDUCED");
        CU_ASSERT_PTR_NOT_NULL_FATAL(w);
        CU_ASSERT_PTR_NOT_NULL(strstr(w, "in 25 of 25 topics"));
        CU_ASSERT_PTR_NULL(strstr(w, " keys in "));
        CU_ASSERT_PTR_NOT_NULL(
            strstr(w, "): hot-key counters down to 64 of 1024 in 25, "
                      "mixed-key sample down to 64 of 2048 in 25;"));
        json_decref(only);
        only = budget_run_with(dir, 1, 20, 5, "keyshift.topics", "^b");
        CU_ASSERT_PTR_NOT_NULL_FATAL(only);
        w = warning_text(only, "SKETCHES_REDUCED");
        CU_ASSERT_PTR_NOT_NULL(w && strstr(w, "in 20 of 20 topics"));
        CU_ASSERT_PTR_NULL(ks_e2e_get(only, "topics/x0"));

        json_decref(only);
        json_decref(small);
        json_decref(enough);
        json_decref(less);
        json_decref(dip);
        json_decref(raised);
        ks_e2e_system("rm -rf '%s'", dir);
}

void ks_test_register(void)
{
        KS_ADD_SUITE("configuration through librdkafka",
                     {"accepted and refused values", test_values},
                     {"a report path that is not a regular file",
                      test_report_path_not_regular},
                     {"rd_kafka_conf_dup and dup_filter", test_conf_dup});
        KS_ADD_SUITE("live producers",
                     {"two producers in one process", test_two_producers},
                     {"keyshift.enable=false", test_disabled},
                     {"one client.id, two producers and an idle handle",
                      test_same_client_id},
                     {"keyshift.topics", test_topic_selection},
                     {"count override and explicit partitions",
                      test_count_override_and_explicit},
                     {"custom partitioner is caught", test_custom_partitioner},
                     {"custom partitioner, count from keyshift.partitions."
                      "current: caught while running",
                      test_custom_partitioner_count_override},
                     {"custom partitioner and one explicit message",
                      test_custom_partitioner_with_explicit},
                     {"producer name with no broker reachable",
                      test_name_without_broker},
                     {"unwritable report path", test_unwritable_report},
                     {"periodic reports", test_periodic_reports},
                     {"keyshift.memory.max.mb too small for the topics",
                      test_sketches_reduced});
}
