/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_e2e_replay.c
 * @brief The main job on real input: keyshift-replay (a producer that loads
 *        keyshift only through plugin.library.paths) replays the shared AIS
 *        logs on the mock cluster. The report must count every message, and
 *        its per-partition, moved and distinct-key figures must equal a
 *        recomputation from the log itself with librdkafka's partitioner
 *        functions; every delivery must match the prediction.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ais_nmea.h"
#include "ais_reader.h"
#include "ais_synth.h"
#include "replay_keys.h"
#include "ks_e2e_support.h"
#include "ks_test.h"

typedef int32_t(rk_partitioner_f)(const rd_kafka_topic_t *, const void *,
                                  size_t, int32_t, void *, void *);

#define MAXP 64

/** What the log should produce: per-partition load under each count, moved
 *  traffic and keys, computed from the log with librdkafka's functions. */
typedef struct expect {
        uint64_t  messages;
        uint64_t  load_m[3][MAXP], load_b[3][MAXP];
        uint64_t  moved_m[2], moved_b[2];
        uint32_t *mmsis; /* distinct */
        size_t    distinct, distinct_cap, distinct_moved[2];
        uint32_t  top_mmsi;
        uint64_t  top_count;
} expect_t;

static int cmp_u32(const void *a, const void *b)
{
        uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
        return x < y ? -1 : x > y;
}

static void expect_add(expect_t *e, rk_partitioner_f *fn, const int32_t *cnt,
                       uint32_t mmsi, size_t value_len)
{
        char     key[16];
        int      kl    = snprintf(key, sizeof(key), "%u", mmsi);
        uint64_t bytes = (uint64_t)kl + value_len;
        int32_t  p[3];
        int      j;

        e->messages++;
        for (j = 0; j < 3; j++) {
                p[j] = fn(NULL, key, (size_t)kl, cnt[j], NULL, NULL);
                e->load_m[j][p[j]]++;
                e->load_b[j][p[j]] += bytes;
        }
        for (j = 0; j < 2; j++)
                if (p[j + 1] != p[0]) {
                        e->moved_m[j]++;
                        e->moved_b[j] += bytes;
                }
        if (e->distinct == e->distinct_cap) {
                e->distinct_cap = e->distinct_cap ? 2 * e->distinct_cap : 1024;
                e->mmsis =
                    realloc(e->mmsis, e->distinct_cap * sizeof(uint32_t));
        }
        e->mmsis[e->distinct++] = mmsi; /* deduplicated in expect_finish */
}

static void expect_finish(expect_t *e, rk_partitioner_f *fn, const int32_t *cnt)
{
        size_t i, n = 0, run = 0;

        qsort(e->mmsis, e->distinct, sizeof(uint32_t), cmp_u32);
        for (i = 0; i < e->distinct; i++) {
                run = i && e->mmsis[i] == e->mmsis[i - 1] ? run + 1 : 1;
                if (run > e->top_count) {
                        e->top_count = run;
                        e->top_mmsi  = e->mmsis[i];
                }
                if (i && e->mmsis[i] == e->mmsis[i - 1])
                        continue;
                e->mmsis[n++] = e->mmsis[i];
        }
        e->distinct = n;
        for (i = 0; i < n; i++) {
                char    key[16];
                int     kl = snprintf(key, sizeof(key), "%u", e->mmsis[i]);
                int32_t p0 = fn(NULL, key, (size_t)kl, cnt[0], NULL, NULL);
                int     j;
                for (j = 0; j < 2; j++)
                        e->distinct_moved[j] +=
                            fn(NULL, key, (size_t)kl, cnt[j + 1], NULL, NULL) !=
                            p0;
        }
}

static void check_load(json_t *parts, const uint64_t *m, const uint64_t *b,
                       int32_t n)
{
        json_t *pm = json_object_get(parts, "messages");
        json_t *pb = json_object_get(parts, "bytes");
        int32_t i;
        CU_ASSERT_EQUAL_FATAL(json_array_size(pm), (size_t)n);
        CU_ASSERT_EQUAL_FATAL(json_array_size(pb), (size_t)n);
        for (i = 0; i < n; i++) {
                CU_ASSERT_EQUAL(json_integer_value(json_array_get(pm, i)),
                                (long long)m[i]);
                CU_ASSERT_EQUAL(json_integer_value(json_array_get(pb, i)),
                                (long long)b[i]);
        }
}

/**
 * @brief Replays @p file (NULL: the synthetic feed of @p synth_n sentences)
 *        at cnt[0] partitions proposing cnt[1],cnt[2] with @p partitioner,
 *        and checks the report against the recomputation.
 */
static void run_replay(const char *file, int synth_n, const char *partitioner,
                       rk_partitioner_f *fn, const int32_t *cnt)
{
        const char *dir    = ks_e2e_tmpdir("replay");
        const char *replay = getenv("KS_REPLAY");
        char        report[600], out[700], errstr[256];
        expect_t    e;
        json_t     *r, *t;
        int         j, rc;

        memset(&e, 0, sizeof(e));
        CU_ASSERT_PTR_NOT_NULL_FATAL(replay);
        snprintf(report, sizeof(report), "%s/report.json", dir);
        snprintf(out, sizeof(out), "%s/stdout.txt", dir);
        rc = ks_e2e_system(
            "'%s' --plugin '%s' -p %d --proposed %d,%d --partitioner %s "
            "--report '%s' %s%s%s -n %d > '%s' 2>&1",
            replay, ks_e2e_plugin(), cnt[0], cnt[1], cnt[2], partitioner,
            report, file ? "'" : "", file ? file : "", file ? "'" : "", synth_n,
            out);
        if (rc != 0)
                ks_e2e_system("cat '%s'", out);
        CU_ASSERT_EQUAL_FATAL(rc, 0);

        /* The expectation, from the input itself. */
        {
                ks_ais_decoder_t *dec = ks_ais_decoder_new();
                ks_ais_msg_t      m;
                if (file) {
                        ks_ais_reader_t *rd =
                            ks_ais_reader_open(file, errstr, sizeof(errstr));
                        const char *line;
                        size_t      len;
                        CU_ASSERT_PTR_NOT_NULL_FATAL(rd);
                        while (ks_ais_reader_next(rd, &line, &len) == 1)
                                if (ks_ais_decode_line(dec, line, len, &m) ==
                                    KS_AIS_KEYED)
                                        expect_add(&e, fn, cnt, m.mmsi, len);
                        ks_ais_reader_close(rd);
                } else {
                        ks_ais_synth_t *s = ks_ais_synth_new(NULL);
                        char            line[512];
                        int             i;
                        for (i = 0; i < synth_n; i++) {
                                size_t len = ks_ais_synth_next(
                                    s, line, sizeof(line), NULL);
                                if (ks_ais_decode_line(dec, line, len, &m) ==
                                    KS_AIS_KEYED)
                                        expect_add(&e, fn, cnt, m.mmsi, len);
                        }
                        ks_ais_synth_destroy(s);
                }
                ks_ais_decoder_destroy(dec);
                expect_finish(&e, fn, cnt);
        }

        r = ks_e2e_load_json(report);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        t = ks_e2e_get(r, "topics/ais");
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        printf("\n    %s: %llu messages, %zu MMSIs; %d->%d moves %llu "
               "messages and %zu MMSIs\n",
               file ? file : "synthetic", (unsigned long long)e.messages,
               e.distinct, cnt[0], cnt[1], (unsigned long long)e.moved_m[0],
               e.distinct_moved[0]);
        CU_ASSERT(e.messages > 0);
        CU_ASSERT_EQUAL(ks_e2e_int(t, "messages"), (long long)e.messages);
        CU_ASSERT_EQUAL(ks_e2e_int(t, "keys/hashed"), (long long)e.messages);
        CU_ASSERT_EQUAL(ks_e2e_int(t, "partition_count/current"), cnt[0]);
        CU_ASSERT_EQUAL(ks_e2e_int(t, "keys/distinct_estimate"),
                        (long long)e.distinct);
        CU_ASSERT_EQUAL(ks_e2e_int(t, "acknowledged/matched"),
                        (long long)e.messages);
        CU_ASSERT_EQUAL(ks_e2e_int(t, "acknowledged/mismatched"), 0);
        check_load(ks_e2e_get(t, "current/partitions"), e.load_m[0],
                   e.load_b[0], cnt[0]);
        for (j = 0; j < 2; j++) {
                char    path[64];
                json_t *p;
                snprintf(path, sizeof(path), "proposals/%d", j);
                p = ks_e2e_get(t, path);
                CU_ASSERT_EQUAL(ks_e2e_int(p, "partition_count"), cnt[j + 1]);
                check_load(json_object_get(p, "partitions"), e.load_m[j + 1],
                           e.load_b[j + 1], cnt[j + 1]);
                CU_ASSERT_EQUAL(ks_e2e_int(p, "moved/messages"),
                                (long long)e.moved_m[j]);
                CU_ASSERT_EQUAL(ks_e2e_int(p, "moved/bytes"),
                                (long long)e.moved_b[j]);
                CU_ASSERT_EQUAL(ks_e2e_int(p, "moved/distinct_keys"),
                                (long long)e.distinct_moved[j]);
                CU_ASSERT_DOUBLE_EQUAL(
                    json_real_value(ks_e2e_get(p, "moved/messages_fraction")),
                    (double)e.moved_m[j] / (double)e.messages, 1e-12);
        }
        /* The busiest MMSI is the first hot key, with its exact count. */
        {
                char top[16];
                snprintf(top, sizeof(top), "%u", e.top_mmsi);
                CU_ASSERT_STRING_EQUAL(
                    json_string_value(ks_e2e_get(t, "hot_keys/key/0")), top);
                CU_ASSERT_EQUAL(ks_e2e_int(t, "hot_keys/messages/0"),
                                (long long)e.top_count);
        }
        /* The summary says where the report went. */
        /* the summary names the partitioner (an object in the report) */
        CU_ASSERT_EQUAL(
            ks_e2e_system("grep -q 'partitioner %s$' '%s'", partitioner, out),
            0);
        CU_ASSERT_EQUAL(ks_e2e_system("grep -q 'report: %s' '%s'", report, out),
                        0);
        free(e.mmsis);
        json_decref(r);
        ks_e2e_system("rm -rf '%s'", dir);
}

static void test_risky_6_12(void)
{
        static const int32_t cnt[3] = {6, 12, 24};
        run_replay(ks_test_shared_path("ais/risky_ais.txt.gz"), 0,
                   "consistent_random", rd_kafka_msg_partitioner_consistent,
                   cnt);
}

static void test_aislib_murmur2(void)
{
        static const int32_t cnt[3] = {8, 24, 9};
        run_replay(ks_test_shared_path("ais/aislib_stream_example.txt"), 0,
                   "murmur2_random", rd_kafka_msg_partitioner_murmur2, cnt);
}

static void test_satellite_fnv1a(void)
{
        static const int32_t cnt[3] = {3, 4, 6};
        run_replay(ks_test_shared_path("ais/risky_exact-earth-augmented-3.txt"),
                   0, "fnv1a_random", rd_kafka_msg_partitioner_fnv1a, cnt);
}

/** One MMSI of the mixed-serializer replay: messages per encoding. */
typedef struct mixed_mmsi {
        uint32_t mmsi;
        uint64_t text, int32;
} mixed_mmsi_t;

static int cmp_mixed(const void *a, const void *b)
{
        const mixed_mmsi_t *x = a, *y = b;
        return x->mmsi < y->mmsi ? -1 : x->mmsi > y->mmsi;
}

/**
 * @brief The done-when of issue "mixed key serializers": replay the real
 *        log with 10% of MMSIs sent, every other message, as 4-byte ints.
 *        The report must name exactly the MMSIs that arrived both ways, each
 *        with the partition of each encoding (librdkafka's
 *        rd_kafka_msg_partitioner_consistent as the oracle).
 */
static void test_risky_mixed_int32(void)
{
        const char       *file   = ks_test_shared_path("ais/risky_ais.txt.gz");
        const char       *dir    = ks_e2e_tmpdir("mixed");
        const char       *replay = getenv("KS_REPLAY");
        char              report[600], errstr[256];
        ks_ais_decoder_t *dec = ks_ais_decoder_new();
        ks_ais_reader_t  *rd;
        ks_ais_msg_t      m;
        mixed_mmsi_t     *all = NULL;
        size_t            n = 0, cap = 0, i, j, expected = 0, listed;
        uint64_t          seq = 0;
        const char       *line;
        size_t            len;
        json_t           *r, *keys;

        snprintf(report, sizeof(report), "%s/report.json", dir);
        CU_ASSERT_EQUAL_FATAL(
            ks_e2e_system("'%s' --plugin '%s' -p 6 --proposed 12 "
                          "--int32-keys 10 -X keyshift.mixed.sample.size=4096 "
                          "-X keyshift.hot.keys=1000 --report '%s' '%s' "
                          ">/dev/null 2>&1",
                          replay, ks_e2e_plugin(), report, file),
            0);

        /* Which MMSIs went both ways, from the log and the replay's rule. */
        rd = ks_ais_reader_open(file, errstr, sizeof(errstr));
        CU_ASSERT_PTR_NOT_NULL_FATAL(rd);
        while (ks_ais_reader_next(rd, &line, &len) == 1) {
                if (ks_ais_decode_line(dec, line, len, &m) != KS_AIS_KEYED)
                        continue;
                if (n == cap) {
                        cap = cap ? cap * 2 : 4096;
                        all = realloc(all, cap * sizeof(*all));
                }
                all[n].mmsi  = m.mmsi;
                all[n].int32 = ks_replay_int32_key(10, m.mmsi, seq++);
                all[n].text  = !all[n].int32;
                n++;
        }
        ks_ais_reader_close(rd);
        ks_ais_decoder_destroy(dec);
        qsort(all, n, sizeof(*all), cmp_mixed);
        for (i = 0, j = 0; i < n; i++) { /* fold to one row per MMSI */
                if (j && all[j - 1].mmsi == all[i].mmsi) {
                        all[j - 1].text += all[i].text;
                        all[j - 1].int32 += all[i].int32;
                } else {
                        all[j++] = all[i];
                }
        }
        n = j;
        for (i = 0; i < n; i++)
                expected += all[i].text && all[i].int32;

        r = ks_e2e_load_json(report);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        printf("\n    %zu MMSIs, %zu sent both as text and as int32; "
               "report: %lld\n",
               n, expected, ks_e2e_int(r, "topics/ais/mixed_keys/total"));
        CU_ASSERT(expected > 50);
        CU_ASSERT_EQUAL(ks_e2e_int(r, "topics/ais/mixed_keys/total"),
                        (long long)expected);
        keys   = ks_e2e_get(r, "topics/ais/mixed_keys/keys");
        listed = json_array_size(keys);
        CU_ASSERT_EQUAL(listed, expected);
        for (i = 0; i < listed; i++) {
                json_t     *k = json_array_get(keys, i);
                const char *logical =
                    json_string_value(json_object_get(k, "logical_key"));
                mixed_mmsi_t key = {(uint32_t)strtoul(logical, NULL, 10), 0, 0},
                             *found;
                char text[16], bin[4];
                int  tl = snprintf(text, sizeof(text), "%u", key.mmsi);

                found = bsearch(&key, all, n, sizeof(*all), cmp_mixed);
                CU_ASSERT_PTR_NOT_NULL_FATAL(found);
                CU_ASSERT(found->text && found->int32);
                CU_ASSERT_EQUAL(ks_e2e_int(k, "encodings/decimal/messages"),
                                (long long)found->text);
                CU_ASSERT_EQUAL(ks_e2e_int(k, "encodings/int32_be/messages"),
                                (long long)found->int32);
                bin[0] = (char)(key.mmsi >> 24);
                bin[1] = (char)(key.mmsi >> 16);
                bin[2] = (char)(key.mmsi >> 8);
                bin[3] = (char)key.mmsi;
                CU_ASSERT_EQUAL(
                    ks_e2e_int(k, "encodings/decimal/partition_current"),
                    rd_kafka_msg_partitioner_consistent(NULL, text, (size_t)tl,
                                                        6, NULL, NULL));
                CU_ASSERT_EQUAL(
                    ks_e2e_int(k, "encodings/int32_be/partition_current"),
                    rd_kafka_msg_partitioner_consistent(NULL, bin, 4, 6, NULL,
                                                        NULL));
                CU_ASSERT_EQUAL(
                    ks_e2e_int(k, "encodings/int32_be/partition_proposed/12"),
                    rd_kafka_msg_partitioner_consistent(NULL, bin, 4, 12, NULL,
                                                        NULL));
        }
        CU_ASSERT(ks_e2e_has_warning(ks_e2e_get(r, "topics/ais/warnings"),
                                     "MIXED_KEY_SERIALIZERS"));
        free(all);
        json_decref(r);
        ks_e2e_system("rm -rf '%s'", dir);
}

static void test_synthetic(void)
{
        static const int32_t cnt[3] = {6, 12, 16};
        run_replay(NULL, 50000, "consistent_random",
                   rd_kafka_msg_partitioner_consistent, cnt);
}

void ks_test_register(void)
{
        KS_ADD_SUITE(
            "keyshift-replay on the shared AIS logs",
            {"risky_ais.txt.gz, consistent_random, 6 -> 12, 24",
             test_risky_6_12},
            {"aislib stream, murmur2_random, 8 -> 24, 9", test_aislib_murmur2},
            {"exactEarth satellite log, fnv1a_random, 3 -> 4, 6",
             test_satellite_fnv1a},
            {"synthetic feed, 6 -> 12, 16", test_synthetic},
            {"risky_ais.txt.gz with 10% of MMSIs also as int32: "
             "exactly those are mixed",
             test_risky_mixed_int32});
}
