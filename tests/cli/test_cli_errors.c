/**
 * @file test_cli_errors.c
 * @brief Bad input to every subcommand that reads a report (show, html,
 *        merge): a missing file, truncated JSON, another schema version,
 *        an unknown topic, a field of the wrong type or an array of the
 *        wrong length, and files that are not reports at all. Each must
 *        give exit code 1 (2 for a bad command line), a message naming the
 *        file and the field at fault, and never a crash (a signal).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_test_support.h"
#include "ks_e2e_support.h"
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

/**
 * @brief Runs `show FILE`, `html FILE -o ...` and `merge GOOD FILE` and
 *        checks each: exit @p code, not killed, stderr names @p path and
 *        holds every needle.
 */
static void expect_refused(const char *path, int code, const char *needle1,
                           const char *needle2)
{
        static const char *cmds[] = {"show '%s'", "html '%s' -o '%s/o.html'",
                                     "merge '%s' '%s' -o '%s/o.json'"};
        char               args[4096];
        size_t             i;

        for (i = 0; i < 3; i++) {
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
                CU_ASSERT(!ks_clit_has(r.out, "<html"));
                ks_clit_run_free(&r);
        }
}

static void edit_schema(json_t *j)
{
        json_object_set_new(j, "schema", json_string("keyshift.report.v1"));
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

static void edit_bad_registers(json_t *j)
{
        json_t *hll = ks_e2e_get(j, "topics/orders/merge/distinct_hll");

        json_object_del(hll, "registers_nonzero");
        json_object_set_new(hll, "registers_hex", json_string("00ff"));
}

static void edit_bad_nonzero(json_t *j)
{
        json_t *hll = ks_e2e_get(j, "topics/orders/merge/distinct_hll");

        json_object_del(hll, "registers_hex");
        json_object_set_new(hll, "registers_nonzero",
                            json_pack("[[i, i], [i, i]]", 3, 7, 16384, 2));
}

static void edit_both_registers(json_t *j)
{
        json_t *hll = ks_e2e_get(j, "topics/orders/merge/distinct_hll");

        json_object_set_new(hll, "registers_hex", json_string("00"));
        json_object_set_new(hll, "registers_nonzero", json_array());
}

static void edit_flow_shape(json_t *j)
{
        json_array_append_new(ks_e2e_get(j, "topics/orders/proposals/0/flow"),
                              json_array());
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
        expect_refused(edited("v1.json", edit_schema), 1, "schema",
                       "keyshift.report.v1");
        free(content);
}

static void test_wrong_fields(void)
{
        expect_refused(edited("type.json", edit_messages_type), 1,
                       "topics.orders.messages",
                       "expected a non-negative integer, got a string");
        expect_refused(edited("short.json", edit_short_partitions), 1,
                       "topics.orders.current.partitions.messages",
                       "expected 6 values");
        expect_refused(edited("nosketch.json", edit_no_sketch), 1,
                       "topics.orders.merge.key_sample", "missing");
        expect_refused(edited("registers.json", edit_bad_registers), 1,
                       "topics.orders.merge.distinct_hll: registers_hex",
                       "not 16384 registers");
        expect_refused(edited("nonzero.json", edit_bad_nonzero), 1,
                       "topics.orders.merge.distinct_hll: "
                       "registers_nonzero[1]",
                       "index 0..16383");
        expect_refused(edited("both.json", edit_both_registers), 1,
                       "topics.orders.merge.distinct_hll",
                       "exactly one of registers_hex and registers_nonzero");
        expect_refused(edited("flow.json", edit_flow_shape), 1,
                       "topics.orders.proposals[0].flow", "rows");
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
            {"binary.json", "\x89PNG\r\n\x1a\n\x00\x00", "not valid JSON"},
            {"topics.json",
             "{\"schema\": \"keyshift.report.v2\", \"generated_at\": \"x\", "
             "\"producer\": {}, \"topics\": [], \"warnings\": []}",
             "topics: expected an object, got an array"},
            {"deep.json",
             "{\"schema\": \"keyshift.report.v2\", \"generated_at\": \"x\", "
             "\"producer\": {}, \"topics\": {\"t\": {\"partition_count\": "
             "{\"current\": 0}}}, \"warnings\": []}",
             "topics.t.partition_count.current: 0 is not a partition count"},
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
