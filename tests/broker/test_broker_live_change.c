/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_broker_live_change.c
 * @brief The partition count grows underneath a live producer: keyshift
 *        must notice, restart its per-partition figures at the change, and
 *        keep every acknowledgement verified.
 *
 * One producer run per case, keyshift loaded with
 * keyshift.metadata.refresh.ms=500 and default proposals (2 x current),
 * and topic.metadata.refresh.interval.ms=500 so librdkafka notices too:
 *  - before: messages under N, flushed; keyshift's periodic report shows N;
 *  - during: one message about every millisecond while CreatePartitions
 *    raises the topic to M, until both librdkafka (a delivery to a
 *    partition >= N) and keyshift (a periodic report with current M) have
 *    noticed, and 300 more;
 *  - after: more messages, flushed; the producer is destroyed and keyshift
 *    writes its final report.
 *
 * The final report must show partition_count.current = M, previous = N,
 * changed_at (no earlier than the request, no later than the report that
 * first showed M), a PARTITION_COUNT_CHANGED warning, every hashed
 * acknowledgement matched (0 mismatched, 0 pending, 0 unverified), and
 * per-partition figures of exactly the messages produced after keyshift's
 * switch: the window is a suffix of the produce order starting at or after
 * the CreatePartitions request, and its per-partition messages and bytes
 * are the model's placement of that suffix under M, message for message.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ks_broker_support.h"
#include "ks_e2e_support.h"
#include "ks_partitioner.h"
#include "ks_test.h"

#define SUMMARY "3-live-change"
#define BEFORE 6000
#define AFTER 6000
#define EXTRA 300
#define MAX_MSGS 200000
#define NOTICE_TIMEOUT_S 60.0

typedef struct live_case {
        const char      *name;
        ks_partitioner_t p;
        int              n, m;
} live_case_t;

static const live_case_t cases[] = {
    {"consistent_random", KS_PARTITIONER_CONSISTENT_RANDOM, 6, 12},
    {"murmur2_random", KS_PARTITIONER_MURMUR2_RANDOM, 3, 8},
};

static ks_keyset_t keys;
static int         header_done;

static int suite_init(void)
{
        ks_keyset_init(&keys);
        if (ks_keyset_add_ais(&keys) <= 0)
                return 1;
        ks_keyset_add_random(&keys, 500, 100, 0x11fe);
        return 0;
}

static int suite_clean(void)
{
        ks_keyset_free(&keys);
        ks_broker_admin_close();
        return 0;
}

/** @returns partition_count.current of @p topic in the report at @p path,
 *           0 if there is none (yet). */
static long long report_count(const char *path, const char *topic)
{
        json_t *r = json_load_file(path, 0, NULL);
        json_t *c =
            r ? json_object_get(
                    json_object_get(
                        json_object_get(json_object_get(r, "topics"), topic),
                        "partition_count"),
                    "current")
              : NULL;
        long long v = json_is_integer(c) ? json_integer_value(c) : 0;
        json_decref(r);
        return v;
}

/** @returns RFC 3339 "YYYY-MM-DDTHH:MM:SS.mmmZ" as ms since the epoch, or
 *           -1. */
static int64_t parse_rfc3339(const char *s)
{
        struct tm tm = {0};
        int       ms = 0;

        if (!s ||
            sscanf(s, "%d-%d-%dT%d:%d:%d.%dZ", &tm.tm_year, &tm.tm_mon,
                   &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms) != 7)
                return -1;
        tm.tm_year -= 1900;
        tm.tm_mon -= 1;
        return (int64_t)timegm(&tm) * 1000 + ms;
}

static const ks_bkey_t *key_of(size_t idx, const ks_bmsg_t **msg)
{
        *msg = &keys.msgs[idx % keys.msg_cnt];
        return &keys.keys[(*msg)->key];
}

static void produce_one(ks_broker_producer_t *pr, const char *topic, size_t idx)
{
        const ks_bmsg_t *msg;
        const ks_bkey_t *k = key_of(idx, &msg);
        ks_broker_produce(pr, topic, idx, k->is_null ? NULL : k->bytes, k->len,
                          msg->value, msg->value_len);
}

static int has_warning(json_t *t, const char *code, const char *needle)
{
        json_t *w = json_object_get(t, "warnings");
        size_t  i;

        for (i = 0; i < json_array_size(w); i++) {
                json_t     *x = json_array_get(w, i);
                const char *c = json_string_value(json_object_get(x, "code"));
                const char *m =
                    json_string_value(json_object_get(x, "message"));
                if (c && !strcmp(c, code) && m && strstr(m, needle))
                        return 1;
        }
        return 0;
}

static void run_case(const live_case_t *lc)
{
        const char          *dir = ks_e2e_tmpdir("live");
        char                 topic[256], report[600], needle[64];
        ks_broker_producer_t pr;
        rd_kafka_conf_t     *conf;
        rd_kafka_queue_t    *q;
        double  t0 = ks_broker_now_s(), t_next = 0, t_create, deadline;
        int64_t wall_create, wall_ks_seen      = 0, changed_ms;
        size_t  i, produced = 0, i_create, i_created = 0, i_rk = 0, i_ks = 0,
                  i_after, total, cut, extra = 0;
        int      admin_done = 0, rk_seen = 0, ks_seen = 0, n = lc->n, m = lc->m;
        size_t   old_during = 0, new_during = 0, bad_deliveries = 0;
        uint64_t hashed_all = 0, null_all = 0, w_hashed = 0, w_moved = 0;
        uint64_t *wm = calloc((size_t)m, 8), *wb = calloc((size_t)m, 8);
        json_t   *rep, *t, *arr;
        int       part_bad = 0;

        snprintf(report, sizeof(report), "%s/report.json", dir);
        ks_broker_topic_name("live", topic, sizeof(topic));
        CU_ASSERT_FATAL(ks_broker_create_topic(topic, n) == 0);

        conf = ks_e2e_conf("client.id", "keyshift-broker-live", "partitioner",
                           lc->name, "linger.ms", "5",
                           "topic.metadata.refresh.interval.ms", "500",
                           "keyshift.metadata.refresh.ms", "500",
                           "keyshift.report.interval.ms", "200",
                           "keyshift.report.path", report, NULL);
        CU_ASSERT_FATAL(ks_broker_producer_new(&pr, conf, MAX_MSGS) == 0);

        /* Before: N partitions, and keyshift knows it. One message first:
         * keyshift learns the count before the burst, so the window of
         * the first count is known exactly. */
        produce_one(&pr, topic, produced++);
        deadline = ks_broker_now_s() + 20;
        while (report_count(report, topic) != n && ks_broker_now_s() < deadline)
                rd_kafka_poll(pr.rk, 50);
        CU_ASSERT_EQUAL_FATAL(report_count(report, topic), n);
        for (; produced < BEFORE; produced++)
                produce_one(&pr, topic, produced);
        ks_broker_flush(&pr);

        /* During: keep producing while the count grows underneath. */
        i_create    = produced;
        wall_create = ks_broker_wall_ms();
        t_create    = ks_broker_now_s();
        q           = ks_broker_create_partitions_send(topic, m);
        CU_ASSERT_PTR_NOT_NULL_FATAL(q);
        deadline = t_create + NOTICE_TIMEOUT_S;
        while (!(rk_seen && ks_seen && extra >= EXTRA)) {
                double now = ks_broker_now_s();
                if (produced >= MAX_MSGS || now > deadline) {
                        fprintf(stderr,
                                "not noticed after %.0f s: CreatePartitions "
                                "%s, librdkafka %s, keyshift %s\n",
                                now - t_create, admin_done ? "done" : "pending",
                                rk_seen ? "yes" : "no", ks_seen ? "yes" : "no");
                        CU_FAIL_FATAL("the change was not noticed");
                }
                produce_one(&pr, topic, produced++);
                rd_kafka_poll(pr.rk, 1);
                if (rk_seen && ks_seen)
                        extra++;
                if (now < t_next)
                        continue;
                t_next = now + 0.05;
                if (!admin_done) {
                        int r = ks_broker_admin_result(q, 0);
                        CU_ASSERT_FATAL(r >= 0);
                        if (r == 1) {
                                admin_done = 1;
                                i_created  = produced;
                        }
                }
                for (i = i_create; !rk_seen && i < produced; i++)
                        if (pr.partition[i] >= n) {
                                rk_seen = 1;
                                i_rk    = produced;
                        }
                if (!ks_seen && report_count(report, topic) == m) {
                        ks_seen      = 1;
                        i_ks         = produced;
                        wall_ks_seen = ks_broker_wall_ms();
                }
        }
        if (!admin_done) { /* seen by both before its result was polled */
                CU_ASSERT_EQUAL(ks_broker_admin_result(q, 30000), 1);
                i_created = produced;
        }
        ks_broker_flush(&pr);

        /* After: both know M. */
        i_after = produced;
        for (i = 0; i < AFTER; i++, produced++)
                produce_one(&pr, topic, produced);
        ks_broker_producer_close(&pr); /* the final report */
        total = produced;
        CU_ASSERT_EQUAL(pr.failed, 0);
        CU_ASSERT_EQUAL(pr.delivered, total);

        /* librdkafka itself: N before, M after, either during. */
        for (i = 0; i < total; i++) {
                const ks_bmsg_t *msg;
                const ks_bkey_t *k = key_of(i, &msg);
                uint32_t         h;
                int32_t          pn, pm;
                null_all += k->is_null;
                if (!ks_broker_oracle_hashed(lc->p, k))
                        continue;
                hashed_all++;
                h  = ks_partitioner_hash(lc->p, k->bytes, k->len);
                pn = ks_partition_of(h, n);
                pm = ks_partition_of(h, m);
                if (i < i_create)
                        bad_deliveries += pr.partition[i] != pn;
                else if (i >= i_after)
                        bad_deliveries += pr.partition[i] != pm;
                else if (pr.partition[i] == pn && pn != pm)
                        old_during++;
                else if (pr.partition[i] == pm && pn != pm)
                        new_during++;
                else
                        bad_deliveries += pr.partition[i] != pn;
        }
        CU_ASSERT_EQUAL(bad_deliveries, 0);
        CU_ASSERT(new_during > 0 || i_after > i_create);

        rep = ks_e2e_load_json(report);
        CU_ASSERT_PTR_NOT_NULL_FATAL(rep);
        CU_ASSERT(json_is_true(json_object_get(rep, "final")));
        t = json_object_get(json_object_get(rep, "topics"), topic);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        CU_ASSERT_EQUAL(ks_e2e_int(t, "partition_count/current"), m);
        CU_ASSERT_EQUAL(ks_e2e_int(t, "partition_count/previous"), n);
        changed_ms = parse_rfc3339(
            json_string_value(ks_e2e_get(t, "partition_count/changed_at")));
        CU_ASSERT(changed_ms > 0);
        /* keyshift stamps the refresh cycle's start, which may precede the
         * metadata request by up to its 2 s timeout. */
        CU_ASSERT(changed_ms >= wall_create - 2500);
        CU_ASSERT(changed_ms <= wall_ks_seen + 5);
        CU_ASSERT_EQUAL(parse_rfc3339(json_string_value(
                            ks_e2e_get(t, "partition_count/analysis_since"))),
                        changed_ms);
        snprintf(needle, sizeof(needle), "from %d to %d", n, m);
        CU_ASSERT(has_warning(t, "PARTITION_COUNT_CHANGED", needle));
        CU_ASSERT(!has_warning(t, "PARTITIONER_MISMATCH", ""));

        CU_ASSERT_EQUAL(ks_e2e_int(t, "messages"), (long long)total);
        CU_ASSERT_EQUAL(ks_e2e_int(t, "keys/hashed"), (long long)hashed_all);
        CU_ASSERT_EQUAL(ks_e2e_int(t, "acknowledged/messages"),
                        (long long)total);
        CU_ASSERT_EQUAL(ks_e2e_int(t, "acknowledged/matched"),
                        (long long)hashed_all);
        CU_ASSERT_EQUAL(ks_e2e_int(t, "acknowledged/mismatched"), 0);
        CU_ASSERT_EQUAL(ks_e2e_int(t, "acknowledged/failed"), 0);
        CU_ASSERT_EQUAL(ks_e2e_int(t, "acknowledged/unverified"), 0);
        CU_ASSERT_EQUAL(ks_e2e_int(t, "acknowledged/pending_verification"), 0);
        CU_ASSERT_EQUAL(ks_e2e_int(t, "acknowledged/not_predictable"),
                        (long long)(total - hashed_all));

        /* The window: the messages after keyshift's switch, a suffix of
         * the produce order that starts after the request was sent. */
        cut = total - (size_t)ks_e2e_int(t, "window/messages");
        CU_ASSERT(cut >= i_create);
        CU_ASSERT(cut <= i_ks);
        for (i = cut < total ? cut : total; i < total; i++) {
                const ks_bmsg_t *msg;
                const ks_bkey_t *k = key_of(i, &msg);
                uint32_t         h;
                int32_t          pm;
                if (!ks_broker_oracle_hashed(lc->p, k))
                        continue;
                h  = ks_partitioner_hash(lc->p, k->bytes, k->len);
                pm = ks_partition_of(h, m);
                wm[pm]++;
                wb[pm] += k->len + msg->value_len;
                w_hashed++;
                w_moved += ks_partition_of(h, 2 * m) != pm;
        }
        CU_ASSERT_EQUAL(ks_e2e_int(t, "window/hashed_messages"),
                        (long long)w_hashed);
        arr = ks_e2e_get(t, "current/partitions");
        CU_ASSERT_EQUAL_FATAL(json_array_size(json_object_get(arr, "messages")),
                              (size_t)m);
        for (i = 0; i < (size_t)m; i++)
                part_bad +=
                    json_integer_value(
                        json_array_get(json_object_get(arr, "messages"), i)) !=
                        (long long)wm[i] ||
                    json_integer_value(json_array_get(
                        json_object_get(arr, "bytes"), i)) != (long long)wb[i];
        CU_ASSERT_EQUAL(part_bad, 0);
        CU_ASSERT(json_is_true(json_object_get(t, "proposals_default")));
        CU_ASSERT_EQUAL(ks_e2e_int(t, "proposals/0/partition_count"), 2 * m);
        CU_ASSERT_EQUAL(ks_e2e_int(t, "proposals/0/moved/messages"),
                        (long long)w_moved);
        json_decref(rep);
        ks_broker_delete_topic(topic);

        if (!header_done++) {
                ks_broker_summary(SUMMARY, "### The count grows under a live "
                                           "producer");
                ks_broker_summary(SUMMARY, "%s", "");
                ks_broker_summary(
                    SUMMARY,
                    "| partitioner | N→M | messages before / during / after "
                    "| CreatePartitions done after | librdkafka noticed "
                    "by msg | keyshift switched at msg (changed_at - "
                    "request) | window messages = after switch | "
                    "per-partition cells differing | acks matched / "
                    "mismatched | time |");
                ks_broker_summary(SUMMARY,
                                  "|---|---|---|---|---|---|---|---|---|---|");
        }
        ks_broker_summary(
            SUMMARY,
            "| %s | %d→%d | %zu / %zu / %zu | msg %zu | %zu | %zu (%+" PRId64
            " ms) | %zu | %d | %" PRIu64 " / 0 | %.1f s |",
            lc->name, n, m, i_create, i_after - i_create, total - i_after,
            i_created, i_rk, cut, changed_ms - wall_create, total - cut,
            part_bad, hashed_all, ks_broker_now_s() - t0);
        (void)null_all;
        (void)old_during;

        ks_broker_producer_free(&pr);
        free(wm);
        free(wb);
        ks_broker_tmpdir_done(dir);
}

static void test_consistent_random(void)
{
        run_case(&cases[0]);
}

static void test_murmur2_random(void)
{
        run_case(&cases[1]);
}

void ks_test_register(void)
{
        CU_pSuite s = CU_add_suite("live_change", suite_init, suite_clean);
        CU_add_test(s, "consistent_random 6->12 under a live producer",
                    test_consistent_random);
        CU_add_test(s, "murmur2_random 3->8 under a live producer",
                    test_murmur2_random);
}
