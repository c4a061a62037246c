/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_fleet_parse.c
 * @brief `keyshift fleet`'s records parsed ahead on worker threads
 *        (cli/ks_cli_fleet_parse.c): every record's parse, taken in order,
 *        is the one jansson gives for its text on this thread (the
 *        oracle: json_loads() of a copy, and ks_fleet_parse_record()'s
 *        verdict on a copy), tombstones are said as such, a bad record
 *        carries its reason, a record's check runs on the workers and its
 *        verdict and whole message come back with the record, and a stop
 *        midway frees what was parsed and not taken. Run under TSan too
 *        (label tsan).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ks_cli_fleet.h"
#include "ks_test.h"

#define KS_N 3000

/** @brief Fills @p rd with KS_N records: valid ones, tombstones (every
 *         7th), keys that are not record keys (every 11th), values that
 *         are not JSON (every 13th); @p texts gets a copy of each value. */
static void make_records(ks_fleet_read_t *rd, char **texts)
{
        size_t i;

        memset(rd, 0, sizeof(*rd));
        rd->recs = calloc(KS_N, sizeof(*rd->recs));
        CU_ASSERT_PTR_NOT_NULL_FATAL(rd->recs);
        rd->cnt = rd->cap = KS_N;
        for (i = 0; i < KS_N; i++) {
                ks_fleet_rec_t *r = &rd->recs[i];
                char            k[256], v[512];

                if (i % 11 == 3)
                        snprintf(k, sizeof(k), "{\"v\":2,\"n\":%zu}", i);
                else
                        snprintf(k, sizeof(k),
                                 "{\"v\":1,\"client_id\":\"c%zu\",\"host\":"
                                 "\"h\",\"pid\":%zu,\"started_at_ms\":1,"
                                 "\"topic\":\"t%zu\"}",
                                 i % 5, i % 5, i);
                if (i % 13 == 5)
                        snprintf(v, sizeof(v), "{\"i\": %zu, oops", i);
                else
                        snprintf(v, sizeof(v),
                                 "{\"i\":%zu,\"topics\":{\"t%zu\":{\"x\":[%zu,"
                                 "%zu,\"%0*zu\"]}}}",
                                 i, i, i * 3, i * 7, (int)(i % 200), i);
                r->key       = strdup(k);
                r->partition = 0;
                r->offset    = (int64_t)i;
                texts[i]     = strdup(v);
                if (i % 7 != 2) {
                        r->value     = strdup(v);
                        r->value_len = strlen(v);
                }
        }
}

/** @brief Checks record @p i's parse (@p r, @p key, @p val, @p err)
 *         against the oracle. */
static void check_one(ks_fleet_read_t *rd, char **texts, size_t i, int r,
                      json_t *key, json_t *val, const char *err)
{
        ks_fleet_rec_t one = rd->recs[i];
        json_t        *k2, *v2, *want;
        char           err2[256] = "";
        int            r2;

        if (i % 7 == 2) { /* a tombstone */
                CU_ASSERT_EQUAL(r, 1);
                CU_ASSERT_PTR_NULL(key);
                CU_ASSERT_PTR_NULL(val);
                return;
        }
        one.value     = texts[i];
        one.value_len = strlen(texts[i]);
        r2 = ks_fleet_parse_record(&one, &k2, &v2, err2, sizeof(err2));
        CU_ASSERT_EQUAL(r, r2);
        CU_ASSERT_EQUAL(r == 0, i % 11 != 3 && i % 13 != 5);
        if (r) {
                CU_ASSERT_STRING_EQUAL(err, err2);
                CU_ASSERT_PTR_NULL(key);
                CU_ASSERT_PTR_NULL(val);
                return;
        }
        want = json_loads(texts[i], 0, NULL);
        CU_ASSERT(json_equal(val, want));
        CU_ASSERT(json_equal(key, k2));
        CU_ASSERT_EQUAL(json_integer_value(json_object_get(val, "i")),
                        (json_int_t)i);
        json_decref(want);
        json_decref(k2);
        json_decref(v2);
}

static void free_texts(char **texts)
{
        size_t i;

        for (i = 0; i < KS_N; i++)
                free(texts[i]);
}

static void test_in_order(void)
{
        static char       *texts[KS_N];
        ks_fleet_read_t    rd;
        ks_fleet_parser_t *ps;
        size_t             i;

        make_records(&rd, texts);
        ps = ks_fleet_parser_start(&rd, NULL, NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(ps);
        for (i = 0; i < KS_N; i++) {
                json_t *key = NULL, *val = NULL;
                char    err[256] = "";
                int     r =
                    ks_fleet_parser_take(ps, i, &key, &val, err, sizeof(err));
                check_one(&rd, texts, i, r, key, val, err);
                json_decref(key);
                json_decref(val);
        }
        ks_fleet_parser_stop(ps);
        /* every text freed once parsed */
        for (i = 0; i < KS_N; i++)
                CU_ASSERT_PTR_NULL(rd.recs[i].value);
        ks_fleet_read_free(&rd);
        free_texts(texts);
}

/* Stopped after 100 of 3000: the workers end, what they parsed ahead is
 * freed (ASan's leak check), the rest stays for ks_fleet_read_free(). */
static void test_stop_midway(void)
{
        static char       *texts[KS_N];
        ks_fleet_read_t    rd;
        ks_fleet_parser_t *ps;
        size_t             i;

        make_records(&rd, texts);
        ps = ks_fleet_parser_start(&rd, NULL, NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(ps);
        for (i = 0; i < 100; i++) {
                json_t *key = NULL, *val = NULL;
                char    err[256] = "";
                int     r =
                    ks_fleet_parser_take(ps, i, &key, &val, err, sizeof(err));
                check_one(&rd, texts, i, r, key, val, err);
                json_decref(key);
                json_decref(val);
        }
        ks_fleet_parser_stop(ps);
        /* ahead at most 256 records (and the ones being parsed) */
        CU_ASSERT_PTR_NOT_NULL(rd.recs[KS_N - 1].value);
        ks_fleet_read_free(&rd);
        free_texts(texts);
}

/** The check of test_checked(): refuses every 17th offset with a message
 *  longer than 256 bytes, marks the others. */
static int check_cb(void *arg, const ks_fleet_rec_t *rec, json_t *key,
                    json_t *val, char *err, size_t errsz)
{
        CU_ASSERT_PTR_EQUAL(arg, &check_cb);
        CU_ASSERT_PTR_NOT_NULL(key);
        if (rec->offset % 17 == 4) {
                snprintf(err, errsz, "refused offset %lld: %0600d",
                         (long long)rec->offset, 7);
                return -1;
        }
        json_object_set_new(val, "checked", json_integer(rec->offset));
        return 0;
}

static void test_checked(void)
{
        static char       *texts[KS_N];
        ks_fleet_read_t    rd;
        ks_fleet_parser_t *ps;
        size_t             i;

        make_records(&rd, texts);
        ps = ks_fleet_parser_start(&rd, check_cb, (void *)&check_cb);
        CU_ASSERT_PTR_NOT_NULL_FATAL(ps);
        for (i = 0; i < KS_N; i++) {
                json_t *key = NULL, *val = NULL;
                char    err[2048] = "", want[2048];
                int     r =
                    ks_fleet_parser_take(ps, i, &key, &val, err, sizeof(err));
                int parses = i % 7 != 2 && i % 11 != 3 && i % 13 != 5;

                if (parses && i % 17 == 4) {
                        snprintf(want, sizeof(want),
                                 "refused offset %zu: %0600d", i, 7);
                        CU_ASSERT_EQUAL(r, -1);
                        CU_ASSERT_STRING_EQUAL(err, want);
                        CU_ASSERT_PTR_NULL(key);
                        CU_ASSERT_PTR_NULL(val);
                        continue;
                }
                if (parses) { /* checked on the worker */
                        CU_ASSERT_EQUAL(
                            json_integer_value(json_object_get(val, "checked")),
                            (json_int_t)i);
                        json_object_del(val, "checked");
                }
                check_one(&rd, texts, i, r, key, val, err);
                json_decref(key);
                json_decref(val);
        }
        ks_fleet_parser_stop(ps);
        ks_fleet_read_free(&rd);
        free_texts(texts);
}

void ks_test_register(void)
{
        KS_ADD_SUITE("keyshift fleet: records parsed ahead",
                     {"taken in order, as parsed on one thread", test_in_order},
                     {"checked on the workers", test_checked},
                     {"stopped midway", test_stop_midway});
}
