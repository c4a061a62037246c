/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_report.c
 * @brief The report file: never seen half-written, a failed write leaves
 *        the previous report in place; and the report path template.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ks_config.h"
#include "ks_report.h"
#include "ks_report_parts.h"
#include "ks_sizing.h"
#include "ks_test.h"

#define REWRITES 400

static char       dir[256];
static char       path[700];
static atomic_int writer_done;

/** A report whose size varies a lot from one write to the next. */
static json_t *report_of_size(int i)
{
        json_t *arr = json_array();
        int     n   = (i * 7919) % 5000, k;

        for (k = 0; k < n; k++)
                json_array_append_new(arr, json_integer(k));
        return json_pack("{s:s, s:i, s:i, s:o}", "schema", "keyshift.report.v2",
                         "seq", i, "n", n, "data", arr);
}

static void *writer(void *arg)
{
        int  i;
        char err[256];
        (void)arg;

        for (i = 0; i < REWRITES; i++) {
                json_t *r = report_of_size(i);
                CU_ASSERT_EQUAL(
                    ks_report_write_atomic(r, path, err, sizeof(err)), 0);
                json_decref(r);
        }
        atomic_store(&writer_done, 1);
        return NULL;
}

static void test_never_half_written(void)
{
        pthread_t th;
        long      reads = 0, bad = 0;

        snprintf(dir, sizeof(dir), "/tmp/keyshift-atomic-XXXXXX");
        CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/r.json", dir);
        atomic_store(&writer_done, 0);
        pthread_create(&th, NULL, writer, NULL);
        while (!atomic_load(&writer_done)) {
                json_error_t jerr;
                json_t      *j;
                if (access(path, F_OK))
                        continue;
                reads++;
                j = json_load_file(path, 0, &jerr);
                if (!j || (size_t)json_integer_value(json_object_get(j, "n")) !=
                              json_array_size(json_object_get(j, "data")))
                        bad++;
                json_decref(j);
        }
        pthread_join(th, NULL);
        printf("\n    %ld reads during %d rewrites, %ld partial\n", reads,
               REWRITES, bad);
        CU_ASSERT(reads > 10);
        CU_ASSERT_EQUAL(bad, 0);
        /* no temporary file is left behind */
        {
                char cmd[600];
                snprintf(cmd, sizeof(cmd), "test $(ls -A '%s' | wc -l) -eq 1",
                         dir);
                CU_ASSERT_EQUAL(system(cmd), 0);
        }
}

/** A topic with traffic in every part of the report: partitions under
 *  the current and two proposed counts, key sample, hot keys, a mixed
 *  int32/decimal key, a key that is not printable. */
static ks_topic_t *busy_topic(const char *name)
{
        ks_topic_params_t tp = {0};
        ks_topic_t       *t;
        int               i;

        tp.partitioner       = KS_PARTITIONER_CONSISTENT_RANDOM;
        tp.key_sample_size   = 64;
        tp.mixed_sample_size = 64;
        tp.topk_capacity     = 32;
        tp.flow_max_cells    = 1000;
        tp.pending_max       = 10;
        tp.proposed[0]       = 12;
        tp.proposed[1]       = 16;
        tp.proposed_cnt      = 2;
        t                    = ks_topic_new(name, &tp, 1000);
        ks_topic_set_partition_count(t, 6, KS_COUNT_CONFIG, 1000);
        for (i = 0; i < 3000; i++) {
                char    key[32];
                uint8_t bin[4] = {0, 0, 1, (uint8_t)(i % 7)};
                snprintf(key, sizeof(key), "k\"%d", (i * 7919) % 500);
                ks_topic_record(t, key, strlen(key), -1, 10);
                if (i % 10 == 0)
                        ks_topic_record(t, bin, sizeof(bin), -1, 10);
        }
        return t;
}

/** The reporter writes a topic's bulk (per-partition arrays, `merge`)
 *  straight from the snapshot: the file must parse to what the whole
 *  jansson tree (ks_report_build) gives. */
static void test_bulk_writer_same_json(void)
{
        ks_report_producer_t p = {.client_id          = "c\"1",
                                  .client_name        = "c#producer-1",
                                  .pid                = 42,
                                  .librdkafka_version = "2.0.2",
                                  .partitioner        = "consistent_random",
                                  .partitioner_source = "partitioner",
                                  .sticky_linger_ms   = 10,
                                  .started_at_ms      = 1000,
                                  .report_interval_ms = 60000};
        ks_sizing_params_t   sp;
        ks_report_opts_t     o       = {20, 5000, 1, &sp, 1e6, 1e9, 0, 0, NULL};
        const char          *names[] = {"a", "b\u00e9\"q"};
        ks_topic_t          *t[2];
        ks_warn_list_t       wl1, wl2;
        ks_report_writer_t   w;
        json_t              *topics = json_object(), *whole, *back;
        char                 file[300], err[512];
        size_t               i;

        ks_sizing_params_init(&sp);
        snprintf(file, sizeof(file), "/tmp/keyshift-bulk-%ld.json",
                 (long)getpid());
        ks_warn_list_init(&wl1);
        ks_warn_list_init(&wl2);
        CU_ASSERT_EQUAL_FATAL(ks_report_writer_open(&w, file), 0);
        CU_ASSERT_EQUAL(ks_report_writer_begin(&w, &p, &o), 0);
        for (i = 0; i < 2; i++) {
                ks_topic_snapshot_t s;
                json_t             *j;
                t[i] = busy_topic(names[i]);
                CU_ASSERT_EQUAL_FATAL(ks_topic_snapshot(t[i], &s), 0);
                o.bulk_by_writer = 0;
                json_object_set_new(topics, s.name,
                                    ks_report_topic(&s, &o, &wl1));
                o.bulk_by_writer = 1;
                j                = ks_report_topic(&s, &o, &wl2);
                CU_ASSERT_EQUAL(ks_report_writer_topic_snapshot(&w, &s, j), 0);
                json_decref(j);
                ks_topic_snapshot_free(&s);
                ks_topic_destroy(t[i]);
        }
        CU_ASSERT_EQUAL(ks_report_writer_end(&w, &wl2, err, sizeof(err)), 0);
        whole = ks_report_build(&p, &o, topics, &wl1);
        ks_test_report_valid(file); /* the published schema (ks_test.h) */
        back = json_load_file(file, 0, NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(back);
        CU_ASSERT(json_array_size(json_object_get(
                      json_object_get(json_object_get(back, "topics"), "a"),
                      "proposals")) == 2);
        { /* as the file holds it: hot keys as columns */
                json_t *wf = ks_report_file_form(whole);
                CU_ASSERT(json_equal(wf, back));
                json_decref(wf);
        }
        json_decref(whole);
        json_decref(back);
        ks_warn_list_clear(&wl1);
        ks_warn_list_clear(&wl2);
        unlink(file);
}

/** @returns the message of topic @p topic's warning @p code in @p wl, or
 *           NULL (a copy: free() it). */
static char *warning_of(const ks_warn_list_t *wl, const char *topic,
                        const char *code)
{
        json_t *w = ks_warn_list_json(wl, topic);
        char   *m = NULL;
        size_t  i;

        for (i = 0; i < json_array_size(w) && !m; i++)
                if (!strcmp(json_string_value(
                                json_object_get(json_array_get(w, i), "code")),
                            code))
                        m = strdup(json_string_value(
                            json_object_get(json_array_get(w, i), "message")));
        json_decref(w);
        return m;
}

/** Messages on_send skipped (ring full) are in keys.unanalysed, not in
 *  messages, and warned about with their share. */
static void test_unanalysed(void)
{
        ks_sizing_params_t  sp;
        ks_report_opts_t    o = {20, 5000, 1, &sp, 1e6, 1e9, 0, 0, NULL};
        ks_topic_t         *t = busy_topic("a");
        ks_topic_snapshot_t s;
        ks_warn_list_t      wl;
        json_t             *j;
        char               *m;
        int                 i;

        ks_sizing_params_init(&sp);
        ks_warn_list_init(&wl);
        for (i = 0; i < 300; i++)
                ks_topic_note_unanalysed(t);
        CU_ASSERT_EQUAL_FATAL(ks_topic_snapshot(t, &s), 0);
        j = ks_report_topic(&s, &o, &wl);
        CU_ASSERT_EQUAL(json_integer_value(json_object_get(
                            json_object_get(j, "keys"), "unanalysed")),
                        300);
        CU_ASSERT_EQUAL(json_integer_value(json_object_get(j, "messages")),
                        3300);
        m = warning_of(&wl, "a", "ANALYSIS_BEHIND");
        CU_ASSERT_PTR_NOT_NULL_FATAL(m);
        CU_ASSERT_PTR_NOT_NULL(strstr(m, "300 of 3600 messages (8.33%)"));
        free(m);
        json_decref(j);
        ks_topic_snapshot_free(&s);
        ks_topic_destroy(t);
        ks_warn_list_clear(&wl);
}

/** @returns topic @p t's MULTIPLE_SCHEMA_IDS message, or NULL (free() it);
 *           its framed messages and its report's key_encodings in
 *           @p framed and @p enc (json_decref() it). */
static char *schema_ids_warning(ks_topic_t *t, uint64_t *framed, json_t **enc)
{
        ks_sizing_params_t  sp;
        ks_report_opts_t    o = {20, 5000, 1, &sp, 1e6, 1e9, 0, 0, NULL};
        ks_topic_snapshot_t s;
        ks_warn_list_t      wl;
        json_t             *j;
        char               *m;

        ks_sizing_params_init(&sp);
        ks_warn_list_init(&wl);
        CU_ASSERT_EQUAL_FATAL(ks_topic_snapshot(t, &s), 0);
        j       = ks_report_topic(&s, &o, &wl);
        m       = warning_of(&wl, "r", "MULTIPLE_SCHEMA_IDS");
        *framed = s.c.key_encodings[KS_KEYENC_SCHEMA_REGISTRY];
        *enc    = json_incref(json_object_get(j, "key_encodings"));
        json_decref(j);
        ks_topic_snapshot_free(&s);
        ks_warn_list_clear(&wl);
        return m;
}

static ks_topic_t *schema_topic(void)
{
        ks_topic_params_t tp = {0};
        ks_topic_t       *t;

        tp.partitioner       = KS_PARTITIONER_CONSISTENT_RANDOM;
        tp.key_sample_size   = 64;
        tp.mixed_sample_size = 64;
        tp.topk_capacity     = 32;
        tp.pending_max       = 10;
        tp.proposed[0]       = 12;
        tp.proposed_cnt      = 1;
        t                    = ks_topic_new("r", &tp, 1000);
        ks_topic_set_partition_count(t, 6, KS_COUNT_CONFIG, 1000);
        return t;
}

/** @brief @p n messages of random 32-byte keys (seeded LCG): about 1 in
 *         500 starts with 0x00 and a plausible schema id, its own. */
static void random_keys(ks_topic_t *t, int n, uint64_t *seed)
{
        int i, k;

        for (i = 0; i < n; i++) {
                uint8_t key[32];
                for (k = 0; k < 32; k++) {
                        *seed = *seed * 6364136223846793005ULL +
                                1442695040888963407ULL;
                        key[k] = (uint8_t)(*seed >> 56);
                }
                ks_topic_record(t, key, sizeof(key), -1, 10);
        }
}

/** @brief Message @p i of a Schema Registry serializer's: id @p id, an
 *         Avro long (zigzag varint) payload, one of @p nkeys keys. */
static void framed_key(ks_topic_t *t, uint8_t id, int i, int nkeys)
{
        uint8_t key[6] = {0, 0, 0, 0, id, (uint8_t)(2 * (i % nkeys))};

        ks_topic_record(t, key, sizeof(key), -1, 10);
}

/** Random binary keys look framed once in ~500 keys, each under an "id"
 *  of its own that frames that one key: no sign of several schemas, even
 *  when one of them is a hot key, or beside a serializer's one id. Keys a
 *  Schema Registry serializer writes under two ids are, whatever their
 *  share of the topic, and the ids named are theirs. */
static void test_schema_ids_plausible(void)
{
        ks_topic_t *t;
        uint64_t    framed, seed = 42;
        json_t     *enc;
        char       *m;
        int         i;
        uint8_t     hot[20] = {0, 0x12, 0x34, 0x56, 0x78, 1, 2, 3};

        /* random keys, then one of them hot */
        t = schema_topic();
        random_keys(t, 20000, &seed);
        m = schema_ids_warning(t, &framed, &enc);
        CU_ASSERT_PTR_NULL(m);
        CU_ASSERT(framed >= 10 && framed <= 100); /* the case is there */
        CU_ASSERT(json_object_size(json_object_get(enc, "schema_ids")) >= 10);
        free(m);
        json_decref(enc);
        for (i = 0; i < 5000; i++) { /* ~40 ids of random keys meanwhile */
                ks_topic_record(t, hot, sizeof(hot), -1, 10);
                random_keys(t, 4, &seed);
        }
        m = schema_ids_warning(t, &framed, &enc);
        CU_ASSERT_PTR_NULL(m);
        /* the hot one keeps its place, and all its messages */
        CU_ASSERT_EQUAL(json_integer_value(json_object_get(
                            json_object_get(enc, "schema_ids"), "305419896")),
                        5000);
        free(m);
        json_decref(enc);
        ks_topic_destroy(t);

        /* a serializer with one id (1), beside random keys */
        t = schema_topic();
        for (i = 0; i < 20000; i++) {
                random_keys(t, 1, &seed);
                framed_key(t, 1, i, 50);
        }
        m = schema_ids_warning(t, &framed, &enc);
        CU_ASSERT_PTR_NULL(m);
        CU_ASSERT_EQUAL(
            json_integer_value(json_object_get(
                json_object_get(json_object_get(enc, "schema_id_keys"), "1"),
                "keys")),
            2);
        free(m);
        json_decref(enc);

        /* then it upgrades its key schema (id 2) while random keys go on:
         * 10 messages under id 2 among 20,000, after ~40 ids of random
         * keys took the places, and 3 more of them after each */
        for (i = 0; i < 20000; i++) {
                random_keys(t, 1, &seed);
                if (i % 2000 == 1999) {
                        int j;
                        framed_key(t, 2, i / 2000, 50);
                        for (j = 0; j < 3; j++) {
                                uint8_t noise[20] = {
                                    0,          0x40,
                                    (uint8_t)i, (uint8_t)(i >> 8),
                                    (uint8_t)j, 0xff};
                                ks_topic_record(t, noise, sizeof(noise), -1,
                                                10);
                        }
                }
        }
        m = schema_ids_warning(t, &framed, &enc);
        CU_ASSERT_PTR_NOT_NULL(m);
        CU_ASSERT_PTR_NOT_NULL(m ? strstr(m, "(1 and 2 the busiest)") : NULL);
        free(m);
        json_decref(enc);
        ks_topic_destroy(t);
}

/** A topic whose count is not known yet, with keys sampled: its report is
 *  built (no remainder by a count of 0; this once killed the reporter
 *  thread with SIGFPE). */
static void test_count_unknown(void)
{
        ks_sizing_params_t  sp;
        ks_report_opts_t    o  = {20, 5000, 1, &sp, 1e6, 1e9, 0, 0, NULL};
        ks_topic_params_t   tp = {0};
        ks_topic_t         *t;
        ks_topic_snapshot_t s;
        ks_warn_list_t      wl;
        json_t             *j;
        double              f[KEYSHIFT_PROPOSED_MAX];
        int                 i;

        tp.partitioner       = KS_PARTITIONER_MURMUR2_RANDOM;
        tp.key_sample_size   = 64;
        tp.mixed_sample_size = 64;
        tp.topk_capacity     = 32;
        tp.pending_max       = 10;
        t                    = ks_topic_new("u", &tp, 1000);
        for (i = 0; i < 100; i++) {
                char key[16];
                snprintf(key, sizeof(key), "k%d", i);
                ks_topic_record(t, key, strlen(key), -1, 1);
        }
        ks_sizing_params_init(&sp);
        ks_warn_list_init(&wl);
        CU_ASSERT_EQUAL_FATAL(ks_topic_snapshot(t, &s), 0);
        CU_ASSERT_EQUAL(s.partition_count, 0);
        CU_ASSERT(s.sample_cnt > 0);
        ks_report_moved_key_fractions(&s, NULL, f);
        j = ks_report_topic(&s, &o, &wl);
        CU_ASSERT_PTR_NOT_NULL(j);
        json_decref(j);
        ks_topic_snapshot_free(&s);
        ks_topic_destroy(t);
        ks_warn_list_clear(&wl);
}

static void test_failed_write_keeps_previous(void)
{
        char    err[512] = "", sub[600];
        json_t *r        = report_of_size(3);
        json_t *back;

        /* A directory that refuses new files: the write fails cleanly. */
        snprintf(sub, sizeof(sub), "%s/ro", dir);
        mkdir(sub, 0755);
        snprintf(path, sizeof(path), "%s/r.json", sub);
        CU_ASSERT_EQUAL(ks_report_write_atomic(r, path, err, sizeof(err)), 0);
        chmod(sub, 0555);
        if (geteuid() == 0) {
                /* root ignores the mode bits: use a missing directory. */
                snprintf(path, sizeof(path), "%s/missing/r.json", dir);
        }
        CU_ASSERT_EQUAL(ks_report_write_atomic(r, path, err, sizeof(err)), -1);
        CU_ASSERT_PTR_NOT_NULL(strstr(err, path));
        chmod(sub, 0755);
        snprintf(path, sizeof(path), "%s/r.json", sub);
        back = json_load_file(path, 0, NULL);
        CU_ASSERT_PTR_NOT_NULL(back);
        json_decref(back);
        json_decref(r);
        snprintf(sub, sizeof(sub), "rm -rf '%s'", dir);
        CU_ASSERT_EQUAL(system(sub), 0);
}

static void test_path_template(void)
{
        ks_config_t c;
        char        out[256], err[256];

        CU_ASSERT_EQUAL(ks_config_init(&c), 0);
        CU_ASSERT_EQUAL(
            ks_config_report_path(&c, "my app/1", 42, out, sizeof(out)), 0);
        CU_ASSERT_STRING_EQUAL(out, "keyshift-my_app_1-42.json");
        CU_ASSERT_EQUAL(ks_config_set(&c, "keyshift.report.path",
                                      "/var/tmp/%c/%p-100%%.json", err,
                                      sizeof(err)),
                        KS_CONFIG_OK);
        CU_ASSERT_EQUAL(ks_config_report_path(&c, "a", 7, out, sizeof(out)), 0);
        CU_ASSERT_STRING_EQUAL(out, "/var/tmp/a/7-100%.json");
        CU_ASSERT_EQUAL(ks_config_report_path(&c, "a", 7, out, 8), -1);
        ks_config_destroy(&c);
}

static void test_config_copy_and_topics(void)
{
        ks_config_t a, b;
        char        err[256];

        ks_config_init(&a);
        CU_ASSERT_EQUAL(
            ks_config_set(&a, "keyshift.topics", "^ais", err, sizeof(err)),
            KS_CONFIG_OK);
        CU_ASSERT_EQUAL(ks_config_set(&a, "keyshift.partitions.proposed",
                                      "12, 16,12", err, sizeof(err)),
                        KS_CONFIG_OK);
        CU_ASSERT_EQUAL(a.proposed_cnt, 2); /* duplicates folded */
        CU_ASSERT_EQUAL(ks_config_copy(&b, &a), 0);
        ks_config_destroy(&a);
        CU_ASSERT(ks_config_topic_selected(&b, "ais-positions"));
        CU_ASSERT(!ks_config_topic_selected(&b, "orders"));
        CU_ASSERT_EQUAL(b.proposed[1], 16);
        CU_ASSERT_EQUAL(ks_config_set(&b, "linger.ms", "5", err, sizeof(err)),
                        KS_CONFIG_UNKNOWN);
        ks_config_destroy(&b);
}

/** One stderr line per code, counting each topic once. */
static void test_warning_lines(void)
{
        ks_warn_list_t wl;
        char           buf[4096] = "";
        FILE          *fp        = fmemopen(buf, sizeof(buf), "w");

        ks_warn_list_init(&wl);
        ks_warn_add(&wl, "KEYS_WOULD_MOVE", "a", "6 -> 12");
        ks_warn_add(&wl, "HOT_KEY", "a", "x");
        ks_warn_add(&wl, "KEYS_WOULD_MOVE", "a", "6 -> 24");
        ks_warn_add(&wl, "KEYS_WOULD_MOVE", "b", "6 -> 12");
        ks_warn_add(&wl, "HOT_KEY", "c", "y");
        ks_warn_add(&wl, "KEYS_WOULD_MOVE", "c", "6 -> 12");
        ks_warn_add(&wl, "REPORT_WRITE_FAILED", NULL, "z");
        ks_warn_list_log(&wl, fp, "p#producer-1");
        fclose(fp);
        CU_ASSERT_PTR_NOT_NULL(strstr(buf, "KEYS_WOULD_MOVE on 3 topics"));
        CU_ASSERT_PTR_NOT_NULL(strstr(buf, "HOT_KEY on 2 topics"));
        CU_ASSERT_PTR_NOT_NULL(strstr(buf, "|KEYSHIFT|p#producer-1| "
                                           "REPORT_WRITE_FAILED: z"));
        CU_ASSERT_EQUAL(strchr(buf, '\n') ? 1 : 0, 1);
        {
                int         lines = 0;
                const char *p;
                for (p = buf; (p = strchr(p, '\n')); p++)
                        lines++;
                CU_ASSERT_EQUAL(lines, 3);
        }
        ks_warn_list_clear(&wl);
}

void ks_test_register(void)
{
        KS_ADD_SUITE("report file",
                     {"never seen half-written", test_never_half_written},
                     {"a failed write keeps the previous report",
                      test_failed_write_keeps_previous},
                     {"bulk written from the snapshot = the whole tree",
                      test_bulk_writer_same_json});
        KS_ADD_SUITE("configuration values",
                     {"report path template", test_path_template},
                     {"skipped messages reported", test_unanalysed},
                     {"count unknown, keys sampled", test_count_unknown},
                     {"copy and topic selection", test_config_copy_and_topics});
        KS_ADD_SUITE("warnings", {"one line per code", test_warning_lines},
                     {"framed keys: several schema ids, or noise",
                      test_schema_ids_plausible});
}
