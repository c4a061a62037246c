/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_cli_merge.c
 * @brief `keyshift merge` on reports of real producers (the plugin loaded
 *        by full path, librdkafka's mock cluster).
 *
 * One seeded stream (Zipf-like keys over 30,000 ids, text and int32 keys,
 * NULL keys, explicit partitions; two topics) is produced three times: by
 * one producer whole (W), and split between two producers (A, B). The
 * merged report of A and B must equal W's report in every exact counter,
 * and the merged sketches must give W's sketches where the merge is exact
 * (HyperLogLog registers, the bottom-k sample) and estimates within their
 * stated error of the truth, which the test knows from the stream it
 * generated (distinct keys, moved-key fractions with librdkafka's own
 * partitioner as the oracle, Space-Saving bounds of hot keys).
 *
 * Then the refusals: a topic with another partition count, other proposed
 * counts or another partitioner is not merged, with a message naming the
 * file and the field.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_test_support.h"
#include "ks_e2e_support.h"
#include "ks_test.h"
#include "ks_pack.h"
#include "ks_topic.h"

#define N_MSGS 150000
#define N_IDS 30000
#define N_AUDIT 3000
#define CUR 6

static const int32_t proposed[] = {8, 12};

static const char *dir;
static char        path_w[600], path_a[600], path_b[600], path_m[600];
static uint32_t   *msg_id;     /* id of message i; N_IDS: NULL key */
static int32_t    *msg_part;   /* explicit partition, or -1 */
static uint64_t   *true_count; /* hashed messages per id */

/** @brief Key bytes of id: every tenth id as a 4-byte big-endian int
 *         (IntegerSerializer), the others as text. */
static size_t key_of(uint32_t id, uint8_t *key)
{
        if (id % 10 == 0) {
                uint32_t v = 100000 + id;
                key[0]     = (uint8_t)(v >> 24);
                key[1]     = (uint8_t)(v >> 16);
                key[2]     = (uint8_t)(v >> 8);
                key[3]     = (uint8_t)v;
                return 4;
        }
        return (size_t)snprintf((char *)key, 32, "vessel-%u", id);
}

/** @brief The stream: Zipf(1.1) ids by inverse CDF on a seeded LCG; one
 *         message in 97 NULL-keyed, one in 101 to an explicit partition. */
static void make_stream(void)
{
        double  *cdf = malloc(N_IDS * sizeof(*cdf)), sum = 0;
        uint64_t s = 0x5eed;
        int      i;

        msg_id     = malloc(N_MSGS * sizeof(*msg_id));
        msg_part   = malloc(N_MSGS * sizeof(*msg_part));
        true_count = calloc(N_IDS + 1, sizeof(*true_count));
        for (i = 0; i < N_IDS; i++)
                cdf[i] = (sum += 1.0 / pow(i + 1, 1.1));
        for (i = 0; i < N_MSGS; i++) {
                double u;
                int    lo = 0, hi = N_IDS - 1;
                s = s * 6364136223846793005ULL + 1442695040888963407ULL;
                u = (double)(s >> 11) / 9007199254740992.0 * sum;
                while (lo < hi) {
                        int mid = (lo + hi) / 2;
                        if (cdf[mid] < u)
                                lo = mid + 1;
                        else
                                hi = mid;
                }
                msg_id[i]   = i % 97 == 0 ? N_IDS : (uint32_t)lo;
                msg_part[i] = i % 101 == 0 ? i % CUR : -1;
                if (msg_id[i] < N_IDS && msg_part[i] < 0)
                        true_count[msg_id[i]]++;
        }
        free(cdf);
}

/** @brief Produces the messages i with pick(i) (all when pick is NULL) to
 *         topic "fleet", and every tenth audit message to "audit". */
static void produce(const char *path, int (*pick)(int), const char *partitions,
                    const char *proposed_s, const char *partitioner)
{
        ks_e2e_producer_t p;
        rd_kafka_conf_t  *conf;
        uint8_t           key[32];
        char              value[64];
        int               i;
        size_t            n = 0;
        char              cur[16];

        snprintf(cur, sizeof(cur), "%d", atoi(partitions));
        conf = ks_e2e_conf(
            "keyshift.report.path", path, "keyshift.report.interval.ms", "0",
            "keyshift.partitions.proposed", proposed_s,
            "keyshift.partitions.current", cur, "partitioner", partitioner,
            "queue.buffering.max.messages", "200000", NULL);
        CU_ASSERT_FATAL(
            ks_e2e_producer_new(&p, conf, "fleet", atoi(partitions)) == 0);
        /* keyshift.partitions.current is for every topic: same count */
        CU_ASSERT_FATAL(
            rd_kafka_mock_topic_create(rd_kafka_handle_mock_cluster(p.rk),
                                       "audit", atoi(partitions), 1) == 0);
        for (i = 0; i < N_MSGS; i++) {
                size_t kl;
                int    vl;
                if (pick && !pick(i))
                        continue;
                kl = msg_id[i] < N_IDS ? key_of(msg_id[i], key) : 0;
                vl = snprintf(value, sizeof(value), "position-%d-%.*s", i,
                              i % 23, "................................");
                ks_e2e_produce(&p, "fleet", msg_id[i] < N_IDS ? key : NULL, kl,
                               msg_part[i], value, (size_t)vl);
                n++;
                if (i < N_AUDIT * 10 && i % 10 == 0) {
                        kl = key_of((uint32_t)(i / 10 % 1000), key);
                        ks_e2e_produce(&p, "audit", key, kl, -1, "a", 1);
                        n++;
                }
        }
        ks_e2e_producer_close(&p);
        CU_ASSERT_EQUAL(p.dr_cnt, n);
        ks_e2e_producer_free(&p);
}

static int pick_a(int i)
{
        return (int)((uint32_t)i * 2654435761u % 5) < 2;
}

static int pick_b(int i)
{
        return !pick_a(i);
}

static int pick_small(int i)
{
        return i < 3000;
}

static int setup(void)
{
        dir = ks_e2e_tmpdir("cli-merge");
        snprintf(path_w, sizeof(path_w), "%s/whole.json", dir);
        snprintf(path_a, sizeof(path_a), "%s/producer-a.json", dir);
        snprintf(path_b, sizeof(path_b), "%s/producer-b.json", dir);
        snprintf(path_m, sizeof(path_m), "%s/fleet.json", dir);
        make_stream();
        return 0;
}

/** @brief Asserts @p a and @p b are equal JSON at @p path. */
static void same(json_t *a, json_t *b, const char *path)
{
        json_t *x = ks_e2e_get(a, path), *y = ks_e2e_get(b, path);
        int     eq;

        if (json_is_real(x) || json_is_real(y))
                eq = x && y &&
                     fabs(json_number_value(x) - json_number_value(y)) < 1e-12;
        else
                eq = x && y && json_equal(x, y);
        if (!eq) {
                char *sx = x ? json_dumps(x, JSON_COMPACT) : NULL;
                char *sy = y ? json_dumps(y, JSON_COMPACT) : NULL;
                printf("\n      %s: merged %.200s, whole %.200s", path,
                       sx ? sx : "(absent)", sy ? sy : "(absent)");
                free(sx);
                free(sy);
        }
        CU_ASSERT(eq);
}

/** @returns topic @p t's packed sketch @p name ("key_sample", ...) read
 *           back; fails the test when it does not read. */
static const char *packed_of(json_t *t, const char *name, size_t *len)
{
        char        p[64];
        json_t     *j;
        const char *s;

        snprintf(p, sizeof(p), "merge/%s/packed", name);
        j = ks_e2e_get(t, p);
        CU_ASSERT_FATAL(json_is_string(j));
        s    = json_string_value(j);
        *len = json_string_length(j);
        return s;
}

/** @returns topic @p t's HyperLogLog, unpacked. */
static void hll_of(json_t *t, ks_hll_t *hll)
{
        size_t      len;
        char        err[256];
        const char *s = packed_of(t, "distinct_hll", &len);

        CU_ASSERT_EQUAL_FATAL(
            ks_unpack_hll(s, len, hll, NULL, err, sizeof(err)), 0);
}

static int by_hash64(const void *a, const void *b)
{
        const ks_keysample_entry_t *x = a, *y = b;

        return x->hash64 < y->hash64 ? -1 : x->hash64 > y->hash64;
}

/** @returns 1 if topics @p a and @p b's packed key samples hold the same
 *           entries (in any order), every field equal. */
static int same_sample(json_t *a, json_t *b)
{
        ks_keysample_entry_t *x, *y;
        size_t                nx, ny, len, i;
        const char           *s;
        char                  err[256];
        int                   same;

        s = packed_of(a, "key_sample", &len);
        CU_ASSERT_EQUAL_FATAL(
            ks_unpack_key_sample(s, len, &x, &nx, err, sizeof(err)), 0);
        s = packed_of(b, "key_sample", &len);
        CU_ASSERT_EQUAL_FATAL(
            ks_unpack_key_sample(s, len, &y, &ny, err, sizeof(err)), 0);
        same = nx == ny && nx > 0;
        if (same) {
                qsort(x, nx, sizeof(*x), by_hash64);
                qsort(y, ny, sizeof(*y), by_hash64);
                for (i = 0; i < nx; i++)
                        same &= x[i].hash64 == y[i].hash64 &&
                                x[i].phash == y[i].phash &&
                                x[i].messages == y[i].messages &&
                                x[i].bytes == y[i].bytes;
        }
        free(x);
        free(y);
        return same;
}

/** The merged HyperLogLog is the register-wise maximum of the inputs'
 *  (read from their packed strings), equal to the whole stream's, and
 *  its estimate is the merged report's distinct_estimate. */
static void same_hll(json_t *tm, json_t *tw, json_t *ta, json_t *tb)
{
        ks_hll_t m, w, a, b;
        size_t   i, diff = 0;

        hll_of(tm, &m);
        hll_of(tw, &w);
        hll_of(ta, &a);
        hll_of(tb, &b);
        for (i = 0; i < KS_HLL_REGISTERS; i++)
                diff +=
                    m.reg[i] != (a.reg[i] > b.reg[i] ? a.reg[i] : b.reg[i]) ||
                    m.reg[i] != w.reg[i];
        CU_ASSERT_EQUAL(diff, 0);
        CU_ASSERT_EQUAL(ks_hll_estimate(&m), ks_hll_estimate(&w));
        if (json_real_value(ks_e2e_get(tm, "keys/distinct_error")) > 0)
                CU_ASSERT_EQUAL(ks_e2e_int(tm, "keys/distinct_estimate"),
                                llround(ks_hll_estimate(&m)));
}

static void test_merge_equals_whole(void)
{
        static const char *exact[]    = {"messages",
                                         "bytes",
                                         "keys/null",
                                         "keys/empty",
                                         "keys/explicit_partition",
                                         "keys/hashed",
                                         "keys/sticky",
                                         "keys/random",
                                         "keys/unplaced",
                                         "window",
                                         "current",
                                         "key_encodings",
                                         "acknowledged/messages",
                                         "acknowledged/failed",
                                         "partition_count/current",
                                         "merge/distinct_hll",
                                         "merge/key_sample/capacity",
                                         "keys/distinct_estimate",
                                         "keys/distinct_error",
                                         NULL};
        static const char *per_prop[] = {"partition_count",
                                         "partitions",
                                         "flow",
                                         "moved/messages",
                                         "moved/bytes",
                                         "moved/messages_fraction",
                                         "moved/traffic_fraction",
                                         "moved/distinct_keys",
                                         "moved/distinct_keys_fraction",
                                         "moved/distinct_keys_fraction_error",
                                         NULL};
        static const char *topics[]   = {"fleet", "audit"};
        ks_clit_run_t      r;
        json_t            *w, *m, *a, *b;
        size_t             t, i, j;
        char               path[256];

        produce(path_w, NULL, "6", "8,12", "consistent_random");
        produce(path_a, pick_a, "6", "8,12", "consistent_random");
        produce(path_b, pick_b, "6", "8,12", "consistent_random");
        CU_ASSERT_EQUAL_FATAL(
            ks_clit_run(&r, "merge '%s' '%s' -o '%s'", path_a, path_b, path_m),
            0);
        ks_clit_run_free(&r);
        w = ks_e2e_load_json(path_w);
        m = ks_e2e_load_json(path_m);
        a = ks_e2e_load_json(path_a);
        b = ks_e2e_load_json(path_b);
        CU_ASSERT_PTR_NOT_NULL_FATAL(w);
        CU_ASSERT_PTR_NOT_NULL_FATAL(m);
        CU_ASSERT_PTR_NOT_NULL_FATAL(a);
        CU_ASSERT_PTR_NOT_NULL_FATAL(b);
        CU_ASSERT_EQUAL(json_array_size(ks_e2e_get(m, "producer/merged_from")),
                        2);
        CU_ASSERT_STRING_EQUAL(
            json_string_value(ks_e2e_get(m, "producer/merged_from/0/file")),
            path_a);
        CU_ASSERT(json_is_true(json_object_get(m, "final")));
        for (t = 0; t < 2; t++) {
                json_t *tw, *tm;
                snprintf(path, sizeof(path), "topics/%s", topics[t]);
                tw = ks_e2e_get(w, path);
                tm = ks_e2e_get(m, path);
                CU_ASSERT_PTR_NOT_NULL_FATAL(tw);
                CU_ASSERT_PTR_NOT_NULL_FATAL(tm);
                for (i = 0; exact[i]; i++)
                        same(tm, tw, exact[i]);
                for (j = 0; j < 2; j++) {
                        for (i = 0; per_prop[i]; i++) {
                                snprintf(path, sizeof(path), "proposals/%zu/%s",
                                         j, per_prop[i]);
                                same(tm, tw, path);
                        }
                        /* 6 -> 12 fills 2 cells of 12 a row: written sparse,
                         * summed as such */
                        snprintf(path, sizeof(path),
                                 "proposals/%zu/flow_nonzero", j);
                        if (j == 1 || ks_e2e_get(tw, path))
                                same(tm, tw, path);
                }
                CU_ASSERT(same_sample(tm, tw));
                snprintf(path, sizeof(path), "topics/%s", topics[t]);
                same_hll(tm, tw, ks_e2e_get(a, path), ks_e2e_get(b, path));
                same(tm, tw, "hot_keys/key_hex/0");
        }
        /* the stream really exercises the sketches: the sample is full and
         * the hot-key summary evicted */
        CU_ASSERT(ks_e2e_int(w, "topics/fleet/keys/distinct_estimate") > 4096);
        CU_ASSERT(json_real_value(ks_e2e_get(w, "topics/fleet/keys/"
                                                "distinct_error")) > 0);
        json_decref(w);
        json_decref(m);
        json_decref(a);
        json_decref(b);
}

/** `keyshift merge` reads both forms of the HyperLogLog: producer A's
 *  registers rewritten in the form it did not use give the same merged
 *  report, member for member (producer.merged_from's file aside). */
static void test_merge_reads_both_forms(void)
{
        json_t       *a = ks_e2e_load_json(path_a), *m, *m2, *t;
        const char   *name;
        char          other[700], merged[700];
        ks_clit_run_t r;
        size_t        forms[2] = {0, 0};

        CU_ASSERT_PTR_NOT_NULL_FATAL(a);
        json_object_foreach(json_object_get(a, "topics"), name, t)
        {
                ks_hll_t       hll;
                ks_pack_form_t form;
                ks_pack_buf_t  pb = {0};
                size_t         len;
                char           err[256];
                const char    *s = packed_of(t, "distinct_hll", &len);
                CU_ASSERT_EQUAL_FATAL(
                    ks_unpack_hll(s, len, &hll, &form, err, sizeof(err)), 0);
                forms[form]++;
                CU_ASSERT_EQUAL_FATAL(ks_pack_hll_form(&pb, &hll,
                                                       form == KS_PACK_SPARSE
                                                           ? KS_PACK_DENSE
                                                           : KS_PACK_SPARSE),
                                      0);
                json_object_set_new(ks_e2e_get(t, "merge/distinct_hll"),
                                    "packed", ks_pack_json(pb.b, pb.n));
                ks_pack_buf_free(&pb);
        }
        /* each topic's registers now in the other form: the merge of
         * path_m read the first, this one reads the second */
        CU_ASSERT_EQUAL(forms[KS_PACK_SPARSE] + forms[KS_PACK_DENSE], 2);
        snprintf(other, sizeof(other), "%s/a-other-forms.json", dir);
        snprintf(merged, sizeof(merged), "%s/merged-other-forms.json", dir);
        CU_ASSERT_EQUAL_FATAL(json_dump_file(a, other, JSON_COMPACT), 0);
        json_decref(a);
        CU_ASSERT_EQUAL_FATAL(
            ks_clit_run(&r, "merge '%s' '%s' -o '%s'", other, path_b, merged),
            0);
        ks_clit_run_free(&r);
        m  = ks_e2e_load_json(path_m);
        m2 = ks_e2e_load_json(merged);
        CU_ASSERT_PTR_NOT_NULL_FATAL(m);
        CU_ASSERT_PTR_NOT_NULL_FATAL(m2);
        CU_ASSERT(json_equal(json_object_get(m, "topics"),
                             json_object_get(m2, "topics")));
        json_decref(m);
        json_decref(m2);
}

/** The merged estimates against the truth the test knows. */
static void test_merge_estimates_within_error(void)
{
        json_t  *m = ks_e2e_load_json(path_m);
        json_t  *t = ks_e2e_get(m, "topics/fleet");
        json_t  *hot;
        uint64_t hashed = 0, distinct = 0, moved[2] = {0};
        double   est, err, f, ferr, bound;
        uint8_t  key[32];
        size_t   i, j, kl;

        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        for (i = 0; i < N_IDS; i++) {
                if (!true_count[i])
                        continue;
                hashed += true_count[i];
                distinct++;
                kl = key_of((uint32_t)i, key);
                for (j = 0; j < 2; j++)
                        moved[j] += rd_kafka_msg_partitioner_consistent(
                                        NULL, key, kl, CUR, NULL, NULL) !=
                                    rd_kafka_msg_partitioner_consistent(
                                        NULL, key, kl, proposed[j], NULL, NULL);
        }
        CU_ASSERT_EQUAL(ks_e2e_int(t, "keys/hashed"), (long long)hashed);

        est = (double)ks_e2e_int(t, "keys/distinct_estimate");
        err = json_number_value(ks_e2e_get(t, "keys/distinct_error"));
        printf("\n      distinct: true %llu, merged estimate %.0f "
               "(stated error %.2f%%)",
               (unsigned long long)distinct, est, 100 * err);
        CU_ASSERT(fabs(est - (double)distinct) <= 4 * err * (double)distinct);

        for (j = 0; j < 2; j++) {
                char   p[128];
                double truth = (double)moved[j] / (double)distinct;
                snprintf(p, sizeof(p),
                         "proposals/%zu/moved/"
                         "distinct_keys_fraction",
                         j);
                f = json_number_value(ks_e2e_get(t, p));
                snprintf(p, sizeof(p),
                         "proposals/%zu/moved/"
                         "distinct_keys_fraction_error",
                         j);
                ferr = json_number_value(ks_e2e_get(t, p));
                printf("\n      keys moving 6 -> %d: true %.4f, merged %.4f "
                       "+- %.4f",
                       (int)proposed[j], truth, f, ferr);
                CU_ASSERT(ferr > 0);
                CU_ASSERT(fabs(f - truth) <= 4 * ferr);
        }

        /* Space-Saving: the true count of every listed key is in
         * [messages - messages_error, messages]; the busiest keys are
         * listed in order; the error is at most N / capacity. */
        hot = ks_e2e_hot_keys(t);
        bound =
            (double)hashed / (double)ks_e2e_int(t, "merge/hot_keys/capacity");
        CU_ASSERT_EQUAL(json_array_size(hot), 20);
        for (i = 0; i < json_array_size(hot); i++) {
                json_t  *h   = json_array_get(hot, i);
                uint64_t c   = (uint64_t)ks_e2e_int(h, "messages");
                uint64_t e   = (uint64_t)ks_e2e_int(h, "messages_error");
                uint64_t tru = 0;
                char     hex[80];
                for (j = 0; j < N_IDS && !tru; j++) {
                        size_t k;
                        kl = key_of((uint32_t)j, key);
                        for (k = 0; k < kl; k++)
                                sprintf(hex + 2 * k, "%02x", key[k]);
                        if (!strcmp(hex, json_string_value(
                                             json_object_get(h, "key_hex"))))
                                tru = true_count[j];
                }
                CU_ASSERT(tru >= c - e && tru <= c);
                CU_ASSERT((double)e <= bound);
                if (i < 10) /* Zipf's head is well separated */
                        CU_ASSERT_EQUAL(tru, true_count[i]);
        }
        json_decref(hot);
        json_decref(m);
}

/** A report merged with itself, with a copy of itself, or with a merge
 *  that holds it would count its producer twice: refused, naming both
 *  files; and the merged report reads like any other. */
static void test_merge_self_and_views(void)
{
        ks_clit_run_t r;
        char          self[700], copy[700];

        snprintf(self, sizeof(self), "%s/self.json", dir);
        snprintf(copy, sizeof(copy), "%s/copy-of-a.json", dir);
        CU_ASSERT_EQUAL(
            ks_clit_run(&r, "merge '%s' '%s' -o '%s'", path_a, path_a, self),
            1);
        CU_ASSERT(ks_clit_has(r.err, "one producer"));
        ks_clit_run_free(&r);
        CU_ASSERT_EQUAL(ks_e2e_system("cp '%s' '%s'", path_a, copy), 0);
        CU_ASSERT_EQUAL(ks_clit_run(&r, "merge '%s' '%s' '%s' -o '%s'", path_a,
                                    path_b, copy, self),
                        1);
        CU_ASSERT(ks_clit_has(r.err, copy));
        CU_ASSERT(ks_clit_has(r.err, "merge only its latest"));
        ks_clit_run_free(&r);
        CU_ASSERT_NOT_EQUAL(ks_e2e_system("test -e '%s'", self), 0);
        /* a merged report and one of its inputs: refused too */
        CU_ASSERT_EQUAL(
            ks_clit_run(&r, "merge '%s' '%s' -o '%s'", path_m, path_b, self),
            1);
        CU_ASSERT(ks_clit_has(r.err, "one producer"));
        ks_clit_run_free(&r);

        /* the merged report reads like any other */
        CU_ASSERT_EQUAL(ks_clit_run(&r, "show '%s'", path_m), 0);
        CU_ASSERT(ks_clit_has(r.out, "merged from 2 producer reports"));
        CU_ASSERT(ks_clit_has(r.out, "topic fleet: 6 -> 8, 12 partitions"));
        ks_clit_run_free(&r);
        CU_ASSERT_EQUAL(
            ks_clit_run(&r, "html '%s' -o '%s/fleet.html'", path_m, dir), 0);
        ks_clit_run_free(&r);
        /* and to standard output, then back in through a pipe */
        CU_ASSERT_EQUAL(ks_clit_run(&r, "merge '%s' '%s' | '%s' show -", path_a,
                                    path_b, ks_clit_cli()),
                        0);
        CU_ASSERT(ks_clit_has(r.out, "topic audit"));
        ks_clit_run_free(&r);
}

static void test_merge_refuses(void)
{
        ks_clit_run_t r;
        char          p12[700], p16[700], pm[700];

        snprintf(p12, sizeof(p12), "%s/twelve.json", dir);
        snprintf(p16, sizeof(p16), "%s/proposed-16.json", dir);
        snprintf(pm, sizeof(pm), "%s/murmur.json", dir);
        /* small producers are enough: the first 3000 messages */
        produce(p12, pick_small, "12", "24", "consistent_random");
        produce(p16, pick_small, "6", "8,16", "consistent_random");
        produce(pm, pick_small, "6", "8,12", "murmur2_random");

        CU_ASSERT_EQUAL(ks_clit_run(&r, "merge '%s' '%s'", path_a, p12), 1);
        CU_ASSERT(ks_clit_has(r.err, p12));
        /* the first topic found incompatible: fleet or audit */
        CU_ASSERT(ks_clit_has(r.err, ".partition_count.current: 12, but"));
        CU_ASSERT_EQUAL(r.out_len, 0);
        ks_clit_run_free(&r);

        CU_ASSERT_EQUAL(
            ks_clit_run(&r, "merge '%s' '%s' -o '%s/x.json'", path_a, p16, dir),
            1);
        CU_ASSERT(ks_clit_has(r.err, p16));
        CU_ASSERT(ks_clit_has(r.err, ".proposals: partition counts"));
        CU_ASSERT(ks_clit_has(r.err, "[8, 16]"));
        ks_clit_run_free(&r);

        CU_ASSERT_EQUAL(ks_clit_run(&r, "merge '%s' '%s'", path_a, pm), 1);
        CU_ASSERT(ks_clit_has(r.err, ".partitioner: murmur2_random"));
        ks_clit_run_free(&r);

        CU_ASSERT_EQUAL(ks_clit_run(&r, "merge"), 2);
        ks_clit_run_free(&r);
        CU_ASSERT_EQUAL(ks_clit_run(&r, "merge --help"), 0);
        CU_ASSERT(ks_clit_has(r.out, "Usage: keyshift merge"));
        ks_clit_run_free(&r);
}

/** @brief A producer's report of topic "sr" (6 partitions): for each id
 *         ids[i] (0 ends), nkeys[i] keys framed as Confluent's wire format
 *         (0x00, the id, an Avro long: first[i], first[i] + 1, ...), each
 *         sent twice. */
static void produce_framed(const char *path, const int *ids, const int *nkeys,
                           const int *first)
{
        ks_e2e_producer_t p;
        int               i, k, r;

        CU_ASSERT_FATAL(
            ks_e2e_producer_new(&p,
                                ks_e2e_conf("keyshift.report.path", path,
                                            "keyshift.report.interval.ms", "0",
                                            "keyshift.partitions.current", "6",
                                            NULL),
                                "sr", 6) == 0);
        for (i = 0; ids[i]; i++)
                for (k = 0; k < nkeys[i]; k++)
                        for (r = 0; r < 2; r++) {
                                uint8_t key[6] = {
                                    0,
                                    0,
                                    0,
                                    0,
                                    (uint8_t)ids[i],
                                    (uint8_t)(2 * (first[i] + k))};
                                ks_e2e_produce(&p, "sr", key, sizeof(key), -1,
                                               "v", 1);
                        }
        ks_e2e_producer_close(&p);
        ks_e2e_producer_free(&p);
}

/** Schema ids across producers: one producer's keys under id 1 and
 *  another's under id 2 (a rolling upgrade) warn MULTIPLE_SCHEMA_IDS only
 *  once merged; an id framing one key in each of two producers frames two
 *  keys if those differ, one if they are the same key. */
static void test_merge_schema_ids(void)
{
        static const int ids_a[] = {1, 3, 4, 0}, keys_a[] = {10, 1, 1},
                         first_a[] = {0, 20, 30};
        static const int ids_b[] = {2, 3, 4, 0}, keys_b[] = {5, 1, 1},
                         first_b[] = {0, 20, 31};
        char    pa[700], pb[700], pm[700];
        json_t *a, *b, *m;

        snprintf(pa, sizeof(pa), "%s/sr-a.json", dir);
        snprintf(pb, sizeof(pb), "%s/sr-b.json", dir);
        snprintf(pm, sizeof(pm), "%s/sr-merged.json", dir);
        produce_framed(pa, ids_a, keys_a, first_a);
        produce_framed(pb, ids_b, keys_b, first_b);
        CU_ASSERT_EQUAL(
            ks_e2e_system("'%s' merge '%s' '%s' -o '%s' 2>/dev/null",
                          ks_clit_cli(), pa, pb, pm),
            0);
        a = ks_e2e_load_json(pa);
        b = ks_e2e_load_json(pb);
        m = ks_e2e_load_json(pm);
        CU_ASSERT_PTR_NOT_NULL_FATAL(a && b && m ? m : NULL);
        CU_ASSERT_FALSE(ks_e2e_has_warning(ks_e2e_get(a, "topics/sr/warnings"),
                                           "MULTIPLE_SCHEMA_IDS"));
        CU_ASSERT_FALSE(ks_e2e_has_warning(ks_e2e_get(b, "topics/sr/warnings"),
                                           "MULTIPLE_SCHEMA_IDS"));
        CU_ASSERT_EQUAL(
            ks_e2e_int(a, "topics/sr/key_encodings/schema_id_keys/1/keys"), 2);
        CU_ASSERT_EQUAL(
            ks_e2e_int(a, "topics/sr/key_encodings/schema_id_keys/4/keys"), 1);
        CU_ASSERT_EQUAL(ks_e2e_int(m, "topics/sr/key_encodings/schema_ids/1"),
                        20);
        CU_ASSERT_EQUAL(ks_e2e_int(m, "topics/sr/key_encodings/schema_ids/2"),
                        10);
        CU_ASSERT_EQUAL(
            ks_e2e_int(m, "topics/sr/key_encodings/schema_id_keys/3/keys"), 1);
        CU_ASSERT_EQUAL(
            ks_e2e_int(m, "topics/sr/key_encodings/schema_id_keys/4/keys"), 2);
        {
                json_t *w = ks_e2e_get(m, "topics/sr/warnings");
                size_t  i;
                int     found = 0;
                for (i = 0; i < json_array_size(w); i++) {
                        json_t *e = json_array_get(w, i);
                        if (strcmp(
                                json_string_value(json_object_get(e, "code")),
                                "MULTIPLE_SCHEMA_IDS"))
                                continue;
                        found++;
                        CU_ASSERT_PTR_NOT_NULL(strstr(
                            json_string_value(json_object_get(e, "message")),
                            "framed with 3 Schema Registry ids that each frame "
                            "several keys (1 and 2 the busiest)"));
                }
                CU_ASSERT_EQUAL(found, 1);
        }
        json_decref(a);
        json_decref(b);
        json_decref(m);
}

/** @brief Produces @p n messages to "orders": the ids (hot key h for
 *         message i when i % 10 == 0: h = (i / 10) % 13 folded to 0..6,
 *         else a key never seen: "order-<base + i>"), into @p path; counts
 *         each hot key's messages in @p hot_true. */
static void produce_spiked(const char *path, int base, int n,
                           uint64_t hot_true[7])
{
        ks_e2e_producer_t p;
        rd_kafka_conf_t  *conf;
        char              key[32];
        int               i, kl;

        conf = ks_e2e_conf(
            "keyshift.report.path", path, "keyshift.report.interval.ms", "0",
            "keyshift.partitions.proposed", "12", "keyshift.partitions.current",
            "6", "queue.buffering.max.messages", "400000", NULL);
        CU_ASSERT_FATAL(ks_e2e_producer_new(&p, conf, "orders", 6) == 0);
        for (i = 0; i < n; i++) {
                if (i % 10 == 0) { /* under a fifth: the table is passed by */
                        int h = (i / 10) % 13;
                        h     = h < 7 ? h / 2 : h - 6; /* 0-3 twice as busy */
                        kl    = snprintf(key, sizeof(key), "hot-%d", h);
                        hot_true[h]++;
                } else {
                        kl = snprintf(key, sizeof(key), "order-%d", base + i);
                }
                ks_e2e_produce(&p, "orders", key, (size_t)kl, -1, "v", 1);
        }
        ks_e2e_producer_close(&p);
        CU_ASSERT_EQUAL(p.dr_cnt, (size_t)n);
        ks_e2e_producer_free(&p);
}

/* New keys, with hot keys among them: the key table passes the stream by
 * and the hot-key summary sees it by sample; each producer's report and
 * the merge say so, state the sampling error beside each count, and the
 * true counts are within it; show and html print it. */
static void test_merge_sampled_hot_keys(void)
{
        enum { N = 250000 };
        char          pa[700], pb[700], pm[700];
        uint64_t      truth[7] = {0};
        json_t       *m, *hot, *hs;
        ks_clit_run_t r;
        size_t        i, k;
        uint64_t      sampled = 0;

        snprintf(pa, sizeof(pa), "%s/orders-a.json", dir);
        snprintf(pb, sizeof(pb), "%s/orders-b.json", dir);
        snprintf(pm, sizeof(pm), "%s/orders.json", dir);
        produce_spiked(pa, 0, N, truth);
        produce_spiked(pb, N, N, truth);
        for (i = 0; i < 2; i++) {
                json_t *a = ks_e2e_load_json(i ? pb : pa);
                CU_ASSERT_PTR_NOT_NULL_FATAL(a);
                hs = ks_e2e_get(a, "topics/orders/hot_keys_sampling");
                CU_ASSERT(ks_e2e_int(hs, "messages_passed_by") > N / 2);
                CU_ASSERT(ks_e2e_int(hs, "messages_sampled") > 0);
                sampled += (uint64_t)ks_e2e_int(hs, "messages_sampled");
                json_decref(a);
        }
        CU_ASSERT_EQUAL(ks_clit_run(&r, "merge '%s' '%s' -o '%s'", pa, pb, pm),
                        0);
        ks_clit_run_free(&r);
        /* a report of another sampling rate, or with more messages sampled
         * than passed by, or a negative count: refused, saying where */
        {
                static const struct {
                        const char *key;
                        json_int_t  value;
                        const char *says;
                } bad[] = {{"sampled_one_in", 16, "samples one in 8"},
                           {"sampled", -5, "sampled"},
                           {"sampled", (json_int_t)1 << 40, "more than"}};
                char pbad[720];
                snprintf(pbad, sizeof(pbad), "%s/orders-bad.json", dir);
                for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                        json_t *a = json_load_file(pa, 0, NULL);
                        CU_ASSERT_PTR_NOT_NULL_FATAL(a);
                        json_object_set_new(
                            ks_e2e_get(a, "topics/orders/merge/hot_keys"),
                            bad[i].key, json_integer(bad[i].value));
                        CU_ASSERT_EQUAL(json_dump_file(a, pbad, 0), 0);
                        json_decref(a);
                        CU_ASSERT_EQUAL(ks_clit_run(&r,
                                                    "merge '%s' '%s' -o '%s'",
                                                    pbad, pb, pm),
                                        1);
                        CU_ASSERT(ks_clit_has(r.err, bad[i].says));
                        CU_ASSERT(ks_clit_has(r.err, "hot_keys"));
                        ks_clit_run_free(&r);
                }
        }
        CU_ASSERT_EQUAL(ks_clit_run(&r, "merge '%s' '%s' -o '%s'", pa, pb, pm),
                        0);
        ks_clit_run_free(&r);
        m = ks_e2e_load_json(pm);
        CU_ASSERT_PTR_NOT_NULL_FATAL(m);
        hs = ks_e2e_get(m, "topics/orders/hot_keys_sampling");
        CU_ASSERT_EQUAL((uint64_t)ks_e2e_int(hs, "messages_sampled"), sampled);
        CU_ASSERT_EQUAL(ks_e2e_int(hs, "one_in"), KS_HOT_SAMPLE_ONE_IN);
        hot = ks_e2e_hot_keys(ks_e2e_get(m, "topics/orders"));
        for (k = 0, i = 0; i < json_array_size(hot); i++) {
                json_t     *h   = json_array_get(hot, i);
                const char *key = json_string_value(json_object_get(h, "key"));
                double      c   = (double)ks_e2e_int(h, "messages");
                double      e   = (double)ks_e2e_int(h, "messages_error");
                double se = (double)ks_e2e_int(h, "messages_sampling_error");
                int    id;
                if (!key || sscanf(key, "hot-%d", &id) != 1 || id < 0 || id > 6)
                        continue;
                k++;
                CU_ASSERT_EQUAL((uint64_t)se, ks_topic_hot_sampling_error(
                                                  sampled, (uint64_t)c));
                CU_ASSERT((double)truth[id] >= c - e - se);
                CU_ASSERT((double)truth[id] <= c + se);
        }
        CU_ASSERT_EQUAL(k, 7); /* every hot key listed */
        json_decref(hot);
        json_decref(m);
        CU_ASSERT_EQUAL(ks_clit_run(&r, "show '%s'", pm), 0);
        CU_ASSERT(ks_clit_has(r.out, ", sampled)"));
        CU_ASSERT(ks_clit_has(r.out, "one message of 8 at random"));
        ks_clit_run_free(&r);
        CU_ASSERT_EQUAL(
            ks_clit_run(&r, "html '%s' -o '%s/orders.html'", pm, dir), 0);
        ks_clit_run_free(&r);
        CU_ASSERT_EQUAL(ks_e2e_system("grep -q 'an estimate from sampled "
                                      "messages' '%s/orders.html'",
                                      dir),
                        0);
}

void ks_test_register(void)
{
        CU_pSuite s = CU_add_suite("cli merge", setup, NULL);
        CU_add_test(s, "merged exact counters equal the whole stream's",
                    test_merge_equals_whole);
        CU_add_test(s, "both HyperLogLog forms read, same merge",
                    test_merge_reads_both_forms);
        CU_add_test(s, "merged sketch estimates within their stated error",
                    test_merge_estimates_within_error);
        CU_add_test(s, "one producer twice refused; show and html read it",
                    test_merge_self_and_views);
        CU_add_test(s, "different counts, proposals, partitioners refused",
                    test_merge_refuses);
        CU_add_test(s, "schema ids of several producers",
                    test_merge_schema_ids);
        CU_add_test(s, "hot keys seen by sample: stated, merged, printed",
                    test_merge_sampled_hot_keys);
}
