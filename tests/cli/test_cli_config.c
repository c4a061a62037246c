/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_cli_config.c
 * @brief `keyshift config`: its list and its checks against the plugin
 *        itself, loaded into librdkafka (rd_kafka_conf_set() is the
 *        oracle: the list must be what the plugin accepts, and a check
 *        must refuse what the plugin refuses, with the plugin's words),
 *        and against docs/properties.md (every listed property is
 *        documented there, and every documented one is listed).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_test_support.h"
#include "ks_e2e_support.h"
#include "ks_test.h"

/** @returns the plugin's verdict on NAME=VALUE, its errstr in @p errstr. */
static rd_kafka_conf_res_t plugin_set(const char *name, const char *value,
                                      char *errstr, size_t size)
{
        rd_kafka_conf_t    *conf = ks_e2e_conf(NULL);
        rd_kafka_conf_res_t r;

        errstr[0] = '\0';
        r         = rd_kafka_conf_set(conf, name, value, errstr, size);
        rd_kafka_conf_destroy(conf);
        return r;
}

/* Every listed name is known to the plugin (a bad value is INVALID with
 * an errstr naming it, never "Unknown property"), names are unique, and
 * docs/properties.md documents each; every keyshift.* name documented in
 * a table row of docs/properties.md is listed. The control: a name the
 * plugin does not know is refused as unknown. */
static void test_list_is_the_plugins(void)
{
        ks_clit_run_t r;
        json_t       *root, *props, *p;
        json_error_t  jerr;
        char         *doc, *line, *save = NULL, errstr[512];
        size_t        i, n;

        CU_ASSERT_EQUAL(
            plugin_set("keyshift.no.such", "1", errstr, sizeof(errstr)),
            RD_KAFKA_CONF_INVALID);
        CU_ASSERT(ks_clit_has(errstr, "Unknown property"));
        CU_ASSERT_EQUAL_FATAL(ks_clit_run(&r, "config --json"), 0);
        root = json_loads(r.out, 0, &jerr);
        CU_ASSERT_PTR_NOT_NULL_FATAL(root);
        props = json_object_get(root, "properties");
        n     = json_array_size(props);
        CU_ASSERT(n >= 30);
        doc = ks_clit_read(KS_SOURCE_DIR "/docs/properties.md", NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
        json_array_foreach(props, i, p)
        {
                const char *name =
                    json_string_value(json_object_get(p, "name"));
                const char *acc =
                    json_string_value(json_object_get(p, "accepted"));
                char                quoted[128];
                size_t              j;
                rd_kafka_conf_res_t res;

                CU_ASSERT_FATAL(name && acc && *acc);
                /* a regex or a path template may take it: OK or INVALID,
                 * never unknown to the plugin */
                res =
                    plugin_set(name, "\x01not a value", errstr, sizeof(errstr));
                CU_ASSERT(res == RD_KAFKA_CONF_OK ||
                          (res == RD_KAFKA_CONF_INVALID &&
                           ks_clit_has(errstr, name) &&
                           !ks_clit_has(errstr, "Unknown property")));
                snprintf(quoted, sizeof(quoted), "`%s`", name);
                if (!ks_clit_has(doc, quoted))
                        fprintf(stderr, "\n%s not in docs/properties.md", name);
                CU_ASSERT(ks_clit_has(doc, quoted));
                for (j = 0; j < i; j++)
                        CU_ASSERT(
                            strcmp(name, json_string_value(json_object_get(
                                             json_array_get(props, j),
                                             "name"))) != 0);
        }
        /* documented table rows (| `keyshift.x` | ...) are all listed */
        for (line = strtok_r(doc, "\n", &save); line;
             line = strtok_r(NULL, "\n", &save)) {
                char   name[128];
                size_t k;
                int    found = 0;

                if (strncmp(line, "| `keyshift.", 12) ||
                    sscanf(line + 3, "%127[^`]", name) != 1)
                        continue;
                json_array_foreach(props, k, p) found |= !strcmp(
                    name, json_string_value(json_object_get(p, "name")));
                if (!found)
                        fprintf(stderr, "\n%s documented, not listed", name);
                CU_ASSERT(found);
        }
        free(doc);
        json_decref(root);
        ks_clit_run_free(&r);
}

/* Checks: accepted and refused as the plugin does, the plugin's errstr. */
static void test_checks_are_the_plugins(void)
{
        static const struct {
                const char *name, *value;
        } cases[] = {
            {"keyshift.partitions.proposed", "12,24"},
            {"keyshift.partitions.proposed", "0"},
            {"keyshift.partitions.proposed", "12,x"},
            {"keyshift.hot.keys", "50"},
            {"keyshift.hot.keys", "many"},
            {"keyshift.report.interval.ms", "1000"},
            {"keyshift.report.interval.ms", "1"},
            {"keyshift.report.path", "/nonexistent-dir/r.json"},
            {"keyshift.consumers.max", "4"},
            {"keyshift.consumers.max", "4.5"},
            {"keyshift.partitions.propsed", "12"},
            {"keyshift.enable", "maybe"},
        };
        size_t i;

        for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char                errstr[512];
                rd_kafka_conf_res_t want = plugin_set(
                    cases[i].name, cases[i].value, errstr, sizeof(errstr));
                ks_clit_run_t r;
                json_t       *root;
                json_error_t  jerr;
                int st = ks_clit_run(&r, "config --json '%s=%s'", cases[i].name,
                                     cases[i].value);

                root = json_loads(r.out, 0, &jerr);
                CU_ASSERT_PTR_NOT_NULL_FATAL(root);
                if (want == RD_KAFKA_CONF_OK) {
                        CU_ASSERT_EQUAL(st, 0);
                        CU_ASSERT_EQUAL(
                            json_array_size(json_object_get(root, "accepted")),
                            1);
                } else {
                        json_t *ref =
                            json_array_get(json_object_get(root, "refused"), 0);
                        CU_ASSERT_EQUAL(want, RD_KAFKA_CONF_INVALID);
                        CU_ASSERT_EQUAL(st, 1);
                        CU_ASSERT_STRING_EQUAL(
                            json_string_value(json_object_get(ref, "property")),
                            cases[i].name);
                        CU_ASSERT_STRING_EQUAL(
                            json_string_value(json_object_get(ref, "error")),
                            errstr);
                }
                json_decref(root);
                ks_clit_run_free(&r);
        }
}

/* Text mode: accepted pairs on stdout, each refused one on stderr, exit
 * 1; a librdkafka property is not keyshift's; a bad argument is usage. */
static void test_text_and_usage(void)
{
        ks_clit_run_t r;

        CU_ASSERT_EQUAL(ks_clit_run(&r, "config keyshift.hot.keys=5 "
                                        "keyshift.partitions.proposed=0 "
                                        "linger.ms=5"),
                        1);
        CU_ASSERT(ks_clit_has(r.out, "keyshift.hot.keys=5\n"));
        CU_ASSERT(ks_clit_has(r.err, "keyshift.partitions.proposed"));
        CU_ASSERT(ks_clit_has(r.err, "linger.ms is not a keyshift.* property"));
        ks_clit_run_free(&r);
        CU_ASSERT_EQUAL(ks_clit_run(&r, "config keyshift.hot.keys"), 2);
        ks_clit_run_free(&r);
        CU_ASSERT_EQUAL(ks_clit_run(&r, "config --help"), 0);
        CU_ASSERT(ks_clit_has(r.out, "Usage: keyshift config"));
        ks_clit_run_free(&r);
}

void ks_test_register(void)
{
        KS_ADD_SUITE("keyshift config",
                     {"the list is the plugin's and the docs'",
                      test_list_is_the_plugins},
                     {"checks are the plugin's", test_checks_are_the_plugins},
                     {"text output and usage", test_text_and_usage});
}
