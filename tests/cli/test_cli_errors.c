/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_cli_errors.c
 * @brief Bad input to every subcommand that reads a report (show, html,
 *        merge, metrics): a missing file, truncated JSON, another schema
 *        version (a v1 report is refused, saying what to do), an unknown
 *        topic, a member added, removed or of the wrong type, negative or
 *        fractional counts, a per-partition column of the wrong length, a
 *        packed sketch that is corrupted (checksum, length, layout version,
 *        entry count, kind, not base64), and files that are not reports at
 *        all. Each must give exit code 1 (2
 *        for a bad command line), one line naming the file and the field
 *        at fault, and never a crash (a signal; the ASan build runs this
 *        too).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_test_support.h"
#include "ks_base64.h"
#include "ks_e2e_support.h"
#include "ks_hash.h"
#include "ks_pack.h"
#include "ks_test.h"

static char dir[600], good[700];

static int setup(void)
{
        snprintf(dir, sizeof(dir), "%s", ks_e2e_tmpdir("cli-errors"));
        snprintf(good, sizeof(good), "%s/good.json", dir);
        return 0;
}

/** @brief Writes @p content as @p name in the test directory.
 *  @returns its path (static buffer). */
static const char *bad_file(const char *name, const char *content, size_t len)
{
        static char path[800];
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        ks_clit_write(path, content, len);
        return path;
}

/** @brief A copy of the good report with @p edit applied, as @p name. */
static const char *edited(const char *name, void (*edit)(json_t *))
{
        json_t     *j = ks_e2e_load_json(good);
        char       *s;
        const char *p;

        CU_ASSERT_PTR_NOT_NULL_FATAL(j);
        edit(j);
        s = json_dumps(j, JSON_INDENT(1));
        p = bad_file(name, s, strlen(s));
        free(s);
        json_decref(j);
        return p;
}

/** @returns the number of lines of @p s (a last line without '\n' too). */
static int lines_of(const char *s)
{
        int n = 0;

        for (; s && *s; s++)
                n += *s == '\n' || !s[1];
        return n;
}

/**
 * @brief Runs `show FILE`, `html FILE -o ...`, `merge GOOD FILE` and
 *        `metrics FILE` and checks each: exit @p code, not killed, one
 *        line on stderr that names @p path and holds every needle.
 */
static void expect_refused(const char *path, int code, const char *needle1,
                           const char *needle2)
{
        static const char *cmds[] = {"show '%s'", "html '%s' -o '%s/o.html'",
                                     "merge '%s' '%s' -o '%s/o.json'",
                                     "metrics '%s'"};
        char               args[4096];
        size_t             i;

        for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
                ks_clit_run_t r;
                if (i == 2) /* the bad file second: the good one is fine */
                        snprintf(args, sizeof(args), cmds[i], good, path, dir);
                else
                        snprintf(args, sizeof(args), cmds[i], path, dir);
                ks_clit_run(&r, "%s", args);
                CU_ASSERT_EQUAL(r.signal, 0);
                CU_ASSERT_EQUAL(r.status, code);
                CU_ASSERT(ks_clit_has(r.err, path));
                CU_ASSERT(ks_clit_has(r.err, needle1));
                if (needle2)
                        CU_ASSERT(ks_clit_has(r.err, needle2));
                CU_ASSERT_EQUAL(lines_of(r.err), 1);
                CU_ASSERT(!ks_clit_has(r.out, "<html"));
                CU_ASSERT(!ks_clit_has(r.out, "keyshift_"));
                ks_clit_run_free(&r);
        }
}

static void edit_schema(json_t *j)
{
        json_object_set_new(j, "schema", json_string("keyshift.report.v1"));
}

static void edit_schema_v7(json_t *j)
{
        json_object_set_new(j, "schema", json_string("keyshift.report.v7"));
}

static void edit_unknown_member(json_t *j)
{
        json_object_set_new(ks_e2e_get(j, "topics/orders"), "messages_total",
                            json_integer(1));
}

static void edit_no_member(json_t *j)
{
        json_object_del(ks_e2e_get(j, "topics/orders/window"),
                        "hashed_messages");
}

static void edit_long_bytes(json_t *j)
{
        json_array_append_new(
            ks_e2e_get(j, "topics/orders/proposals/1/partitions/bytes"),
            json_integer(7));
}

static void edit_negative_load(json_t *j)
{
        json_array_set_new(
            ks_e2e_get(j, "topics/orders/current/partitions/messages"), 2,
            json_integer(-5));
}

static void edit_fractional_count(json_t *j)
{
        json_object_set_new(ks_e2e_get(j, "topics/orders/keys"), "hashed",
                            json_real(1.5));
}

static void edit_negative_count(json_t *j)
{
        json_object_set_new(ks_e2e_get(j, "topics/orders/acknowledged"),
                            "matched", json_integer(-1));
}

static void edit_zero_count(json_t *j)
{
        json_object_set_new(ks_e2e_get(j, "topics/orders/partition_count"),
                            "current", json_integer(0));
}

static void edit_topics_array(json_t *j)
{
        json_object_set_new(j, "topics", json_array());
}

static void edit_messages_type(json_t *j)
{
        json_object_set_new(ks_e2e_get(j, "topics/orders"), "messages",
                            json_string("lots"));
}

static void edit_short_partitions(json_t *j)
{
        json_array_remove(
            ks_e2e_get(j, "topics/orders/current/partitions/messages"), 5);
}

static void edit_no_sketch(json_t *j)
{
        json_object_del(ks_e2e_get(j, "topics/orders/merge"), "key_sample");
}

/** @returns the packed string of sketch @p sketch ("distinct_hll", ...)
 *           of topic orders, decoded into @p b (its length in *n). */
static json_t *packed_bytes(json_t *j, const char *sketch, uint8_t *b,
                            size_t cap, size_t *n)
{
        char    path[128];
        json_t *o;
        long    r;

        snprintf(path, sizeof(path), "topics/orders/merge/%s", sketch);
        o = ks_e2e_get(j, path);
        CU_ASSERT_FATAL(
            json_string_length(json_object_get(o, "packed")) / 4 * 3 <= cap);
        r = ks_base64_decode(json_string_value(json_object_get(o, "packed")),
                             json_string_length(json_object_get(o, "packed")),
                             b, NULL);
        CU_ASSERT_FATAL(r > 0);
        *n = (size_t)r;
        return o;
}

/** @brief Sets sketch object @p o's packed string to @p b[n], with its
 *         checksum recomputed when @p reseal (so that only the field a
 *         test changed is wrong). */
static void set_packed(json_t *o, uint8_t *b, size_t n, int reseal)
{
        char *s = malloc(ks_base64_len(n) + 1);

        if (reseal) {
                uint32_t c = ks_hash_crc32(b, n - 4);
                b[n - 4]   = (uint8_t)c;
                b[n - 3]   = (uint8_t)(c >> 8);
                b[n - 2]   = (uint8_t)(c >> 16);
                b[n - 1]   = (uint8_t)(c >> 24);
        }
        CU_ASSERT_PTR_NOT_NULL_FATAL(s);
        *ks_base64_encode(b, n, s) = '\0';
        json_object_set_new(o, "packed", json_string(s));
        free(s);
}

static uint8_t packed_buf[1 << 20];

static void edit_hll_checksum(json_t *j)
{
        size_t  n;
        json_t *o =
            packed_bytes(j, "distinct_hll", packed_buf, sizeof(packed_buf), &n);

        packed_buf[KS_PACK_HEAD + 1] ^= 0x10; /* a register's gap */
        set_packed(o, packed_buf, n, 0);
}

static void edit_sample_truncated(json_t *j)
{
        size_t  n;
        json_t *o =
            packed_bytes(j, "key_sample", packed_buf, sizeof(packed_buf), &n);

        set_packed(o, packed_buf, n - 13, 0); /* the last entry cut short */
}

static void edit_hot_version(json_t *j)
{
        size_t  n;
        json_t *o =
            packed_bytes(j, "hot_keys", packed_buf, sizeof(packed_buf), &n);

        packed_buf[0] = KS_PACK_VERSION + 1;
        set_packed(o, packed_buf, n, 1);
}

static void edit_hot_entries(json_t *j)
{
        size_t  n;
        json_t *o =
            packed_bytes(j, "hot_keys", packed_buf, sizeof(packed_buf), &n);

        /* one counter more than the payload holds */
        uint32_t e    = (uint32_t)packed_buf[4] | (uint32_t)packed_buf[5] << 8;
        packed_buf[4] = (uint8_t)(e + 1);
        packed_buf[5] = (uint8_t)((e + 1) >> 8);
        set_packed(o, packed_buf, n, 1);
}

static void edit_hll_kind(json_t *j)
{
        size_t  n;
        json_t *o =
            packed_bytes(j, "key_sample", packed_buf, sizeof(packed_buf), &n);

        /* the key sample's string in the HyperLogLog's place */
        json_object_set(ks_e2e_get(j, "topics/orders/merge/distinct_hll"),
                        "packed", json_object_get(o, "packed"));
}

/** One character short: of the base64 alphabet (the schema's pattern
 *  holds), but not whole groups of four. */
static void edit_base64_short(json_t *j)
{
        json_t *o = ks_e2e_get(j, "topics/orders/merge/hot_keys");
        char   *s = strdup(json_string_value(json_object_get(o, "packed")));
        s[strlen(s) - 1] = '\0';
        json_object_set_new(o, "packed", json_string(s));
        free(s);
}

static void edit_not_base64(json_t *j)
{
        json_t *o = ks_e2e_get(j, "topics/orders/merge/hot_keys");
        char   *s = strdup(json_string_value(json_object_get(o, "packed")));
        s[12]     = '*';
        json_object_set_new(o, "packed", json_string(s));
        free(s);
}

static void edit_packed_type(json_t *j)
{
        json_object_set_new(ks_e2e_get(j, "topics/orders/merge/key_sample"),
                            "packed", json_integer(12));
}

static void edit_capacity(json_t *j)
{
        json_object_set_new(ks_e2e_get(j, "topics/orders/merge/key_sample"),
                            "capacity", json_integer(3));
}

/* hot keys are columns: one of them a value short */
static void edit_short_hot_column(json_t *j)
{
        json_t *m = ks_e2e_get(j, "topics/orders/hot_keys/messages");

        CU_ASSERT_FATAL(json_array_size(m) > 1);
        json_array_remove(m, json_array_size(m) - 1);
}

/* a per-count column of the hot keys a value short */
static void edit_short_hot_count_column(json_t *j)
{
        json_t *pp = ks_e2e_get(j, "topics/orders/hot_keys/partition_proposed");
        void   *it = json_object_iter(pp);

        CU_ASSERT_PTR_NOT_NULL_FATAL(it);
        json_array_remove(json_object_iter_value(it), 0);
}

static void edit_flow_shape(json_t *j)
{
        json_array_append_new(ks_e2e_get(j, "topics/orders/proposals/0/flow"),
                              json_array());
}

static void edit_flow_twice(json_t *j)
{
        json_t *nz = ks_e2e_get(j, "topics/orders/proposals/1/flow_nonzero");

        const char *c[] = {"from", "to", "messages"};
        size_t      i;

        /* 6 -> 12: sparse */
        CU_ASSERT_FATAL(json_array_size(json_object_get(nz, "from")) > 1);
        for (i = 0; i < 3; i++) { /* a cell again */
                json_t *col = json_object_get(nz, c[i]);
                json_array_append(col, json_array_get(col, 0));
        }
}

static void test_missing_truncated_schema(void)
{
        char  *content;
        size_t len;

        ks_clit_make_report(good, 3000);
        content = ks_clit_read(good, &len);
        CU_ASSERT_PTR_NOT_NULL_FATAL(content);

        expect_refused("/nonexistent/report.json", 1, "cannot open",
                       "No such file");
        expect_refused(bad_file("truncated.json", content, len * 6 / 10), 1,
                       "not valid JSON", "ends before the report does");
        expect_refused(edited("v1.json", edit_schema), 1,
                       "schema: \"keyshift.report.v1\"",
                       "write the report again with this keyshift");
        expect_refused(edited("v7.json", edit_schema_v7), 1,
                       "schema: \"keyshift.report.v7\"",
                       "is not a schema this keyshift");
        free(content);
}

static void test_wrong_fields(void)
{
        expect_refused(edited("type.json", edit_messages_type), 1,
                       "topics.orders.messages",
                       "expected an integer, got a string");
        expect_refused(edited("added.json", edit_unknown_member), 1,
                       "topics.orders.messages_total", "unknown member");
        expect_refused(edited("removed.json", edit_no_member), 1,
                       "topics.orders.window.hashed_messages", "missing");
        expect_refused(edited("short.json", edit_short_partitions), 1,
                       "topics.orders.current.partitions.messages",
                       "expected 6 values (the partition count), got 5");
        expect_refused(edited("long.json", edit_long_bytes), 1,
                       "topics.orders.proposals[1].partitions.bytes",
                       "expected 12 values (the partition count), got 13");
        expect_refused(edited("negload.json", edit_negative_load), 1,
                       "topics.orders.current.partitions.messages[2]",
                       "a negative integer -5, below the minimum 0");
        expect_refused(edited("fraction.json", edit_fractional_count), 1,
                       "topics.orders.keys.hashed",
                       "expected an integer, got a real number");
        expect_refused(edited("negcount.json", edit_negative_count), 1,
                       "topics.orders.acknowledged.matched",
                       "below the minimum 0");
        expect_refused(edited("zero.json", edit_zero_count), 1,
                       "topics.orders.partition_count.current",
                       "below the minimum 1");
        expect_refused(edited("topics.json", edit_topics_array), 1, "topics",
                       "expected an object, got an array");
        expect_refused(edited("nosketch.json", edit_no_sketch), 1,
                       "topics.orders.merge.key_sample", "missing");
        expect_refused(edited("hll-crc.json", edit_hll_checksum), 1,
                       "topics.orders.merge.distinct_hll.packed",
                       "checksum mismatch");
        expect_refused(edited("sample-cut.json", edit_sample_truncated), 1,
                       "topics.orders.merge.key_sample.packed", "wrong length");
        expect_refused(edited("hot-version.json", edit_hot_version), 1,
                       "topics.orders.merge.hot_keys.packed",
                       "layout version 2");
        expect_refused(edited("hot-entries.json", edit_hot_entries), 1,
                       "topics.orders.merge.hot_keys.packed",
                       "wrong entry count");
        expect_refused(edited("hll-kind.json", edit_hll_kind), 1,
                       "topics.orders.merge.distinct_hll.packed",
                       "holds a key sample");
        /* a character outside base64's alphabet: the schema's pattern */
        expect_refused(edited("base64.json", edit_not_base64), 1,
                       "topics.orders.merge.hot_keys.packed",
                       "is not of the form");
        expect_refused(edited("base64-short.json", edit_base64_short), 1,
                       "topics.orders.merge.hot_keys.packed", "not base64: ");
        expect_refused(edited("packed-type.json", edit_packed_type), 1,
                       "topics.orders.merge.key_sample.packed",
                       "expected a string, got an integer");
        expect_refused(edited("capacity.json", edit_capacity), 1,
                       "topics.orders.merge.key_sample.packed",
                       "above the sketch's capacity 3");
        expect_refused(edited("hot-column.json", edit_short_hot_column), 1,
                       "topics.orders.hot_keys.messages",
                       "values (the hot keys), got");
        expect_refused(
            edited("hot-count-column.json", edit_short_hot_count_column), 1,
            "topics.orders.hot_keys.partition_proposed.",
            "values (the hot keys), got");
        expect_refused(edited("flow.json", edit_flow_shape), 1,
                       "topics.orders.proposals[0].flow", "rows");
        expect_refused(edited("flow-twice.json", edit_flow_twice), 1,
                       "topics.orders.proposals[1].flow_nonzero",
                       "not after the one before");
}

static void test_not_reports(void)
{
        static const struct {
                const char *name, *content, *needle;
        } cases[] = {
            {"empty.json", "", "the file is empty"},
            {"array.json", "[1, 2]", "not a keyshift report"},
            {"null.json", "null", "not valid JSON"},
            {"object.json", "{}", "schema: missing"},
            {"binary.json", "\x89PNG\r\n\x1a\n\x00\x00", "binary data"},
            {"schemaless.json", "{\"topics\": {}}", "schema: missing"},
        };
        size_t i;

        for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                expect_refused(
                    bad_file(cases[i].name, cases[i].content,
                             strlen(cases[i].content) + (i == 4 ? 2 : 0)),
                    1, cases[i].needle, NULL);
}

static void test_unknown_topic_and_usage(void)
{
        ks_clit_run_t r;

        CU_ASSERT_EQUAL(ks_clit_run(&r, "show --topic nope '%s'", good), 1);
        CU_ASSERT(ks_clit_has(r.err, "no topic 'nope'"));
        CU_ASSERT(ks_clit_has(r.err, good));
        ks_clit_run_free(&r);
        CU_ASSERT_EQUAL(
            ks_clit_run(&r, "html --topic nope '%s' -o '%s/x.html'", good, dir),
            1);
        CU_ASSERT(ks_clit_has(r.err, "no topic 'nope'"));
        ks_clit_run_free(&r);
        CU_ASSERT_EQUAL(
            ks_clit_run(&r, "html '%s' -o /nonexistent/dir/x.html", good), 1);
        CU_ASSERT(ks_clit_has(r.err, "/nonexistent/dir/x.html"));
        ks_clit_run_free(&r);
        CU_ASSERT_EQUAL(
            ks_clit_run(&r, "merge '%s' -o /nonexistent/x.json", good), 1);
        CU_ASSERT(ks_clit_has(r.err, "/nonexistent/x.json"));
        ks_clit_run_free(&r);

        CU_ASSERT_EQUAL(ks_clit_run(&r, "show"), 2);
        ks_clit_run_free(&r);
        CU_ASSERT_EQUAL(ks_clit_run(&r, "show '%s' '%s'", good, good), 2);
        ks_clit_run_free(&r);
        CU_ASSERT_EQUAL(ks_clit_run(&r, "show --bogus '%s'", good), 2);
        ks_clit_run_free(&r);
        CU_ASSERT_EQUAL(ks_clit_run(&r, "html --hot many '%s'", good), 2);
        CU_ASSERT(ks_clit_has(r.err, "--hot"));
        ks_clit_run_free(&r);
        CU_ASSERT_EQUAL(ks_clit_run(&r, "html"), 2);
        ks_clit_run_free(&r);
        CU_ASSERT_EQUAL(ks_clit_run(&r, "html --help"), 0);
        CU_ASSERT(ks_clit_has(r.out, "Usage: keyshift html"));
        ks_clit_run_free(&r);
        /* the default page name: REPORT with .html */
        CU_ASSERT_EQUAL(ks_clit_run(&r, "html '%s'", good), 0);
        ks_clit_run_free(&r);
        {
                char   page[800];
                size_t len = 0;
                char  *html;
                snprintf(page, sizeof(page), "%s/good.html", dir);
                html = ks_clit_read(page, &len);
                CU_ASSERT(html && len > 1000);
                free(html);
        }
}

void ks_test_register(void)
{
        CU_pSuite s = CU_add_suite("cli bad input", setup, NULL);
        CU_add_test(s, "missing file, truncated JSON, other schema",
                    test_missing_truncated_schema);
        CU_add_test(s, "fields of the wrong type or shape", test_wrong_fields);
        CU_add_test(s, "files that are no report", test_not_reports);
        CU_add_test(s, "unknown topic, unwritable output, usage",
                    test_unknown_topic_and_usage);
}
