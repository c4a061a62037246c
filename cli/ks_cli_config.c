/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli_config.c
 * @brief `keyshift config`: every keyshift.* property the plugin accepts,
 *        and a check of NAME=VALUE pairs by the plugin's own parser
 *        (core/config/ks_config.c, the code behind rd_kafka_conf_set()).
 *
 * The Python module (python/keyshift/__init__.py) runs `keyshift config
 * --json` to check keyshift.config()'s properties before a Producer sees
 * them, so that its names and values are judged by the same table as the
 * plugin's.
 */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "ks_cli.h"
#include "ks_config.h"

/** @brief Prints the usage of `keyshift config` to @p fp. */
static void ks_config_help(FILE *fp)
{
        fprintf(fp,
                "Usage: keyshift config [--json] [NAME=VALUE]...\n"
                "Without NAME=VALUE: lists every keyshift.* property the "
                "plugin accepts and\n"
                "what it accepts (docs/properties.md explains them).\n"
                "With them: checks each as the plugin does when a producer "
                "sets it (the same\n"
                "code), in order, and prints the accepted ones as "
                "NAME=VALUE lines; each\n"
                "refused one is named on stderr with what it accepts.\n\n"
                "  --json       the list, or the checks, as one JSON object:\n"
                "               {\"properties\": [{\"name\", \"accepted\"}]} "
                "or\n"
                "               {\"accepted\": [NAME], \"refused\": "
                "[{\"property\", \"value\", \"error\"}]}\n"
                "  -h, --help   this help\n\n"
                "A path template (keyshift.report.path, "
                "keyshift.metrics.path) is checked\n"
                "from the current directory, as the producer would.\n"
                "Exit: 0 every property accepted (or the list), 1 one or "
                "more refused,\n"
                "2 usage.\n");
}

/** @brief Lists every property on stdout. @returns the exit code. */
static int list_properties(int json)
{
        const char *name, *accepted;
        json_t     *arr = json ? json_array() : NULL;
        size_t      i;
        int         rc = 0;

        for (i = 0; ks_config_property(i, &name, &accepted); i++) {
                if (json)
                        json_array_append_new(
                            arr, json_pack("{s:s, s:s}", "name", name,
                                           "accepted", accepted));
                else
                        printf("%-46s %s\n", name, accepted);
        }
        if (json) {
                json_t *o = json_pack("{s:o}", "properties", arr);
                rc        = !o || json_dumpf(o, stdout, JSON_INDENT(1)) ||
                     putchar('\n') == EOF;
                json_decref(o);
        }
        if (rc || fflush(stdout))
                return ks_cli_fail("config", "cannot write the list");
        return KS_CLI_EXIT_OK;
}

/** @brief Checks NAME=VALUE pairs @p argv[0..argc). @returns the exit
 *         code. */
static int check_properties(int argc, char **argv, int json)
{
        ks_config_t conf;
        json_t     *ok = json_array(), *refused = json_array();
        char        errstr[512], name[256];
        int         i, bad = 0, rc = 0;

        if (ks_config_init(&conf))
                return ks_cli_fail("config", "out of memory");
        for (i = 0; i < argc; i++) {
                const char *eq = strchr(argv[i], '='), *value;
                size_t      nl;

                if (!eq || eq == argv[i] ||
                    (nl = (size_t)(eq - argv[i])) >= sizeof(name)) {
                        ks_config_destroy(&conf);
                        json_decref(ok);
                        json_decref(refused);
                        return ks_cli_usage_error(
                            "config", "expected NAME=VALUE, got '%s'", argv[i]);
                }
                memcpy(name, argv[i], nl);
                name[nl]  = '\0';
                value     = eq + 1;
                errstr[0] = '\0';
                switch (
                    ks_config_set(&conf, name, value, errstr, sizeof(errstr))) {
                case KS_CONFIG_OK:
                        json_array_append_new(ok, json_string(name));
                        if (!json)
                                printf("%s=%s\n", name, value);
                        continue;
                case KS_CONFIG_UNKNOWN:
                        snprintf(errstr, sizeof(errstr),
                                 "%s is not a keyshift.* property "
                                 "(librdkafka checks its own)",
                                 name);
                        break;
                default:
                        break;
                }
                bad = 1;
                json_array_append_new(
                    refused, json_pack("{s:s, s:s, s:s}", "property", name,
                                       "value", value, "error", errstr));
                if (!json)
                        fprintf(stderr, "keyshift config: %s\n", errstr);
        }
        ks_config_destroy(&conf);
        if (json) {
                json_t *o =
                    json_pack("{s:o, s:o}", "accepted", ok, "refused", refused);
                rc = !o || json_dumpf(o, stdout, JSON_INDENT(1)) ||
                     putchar('\n') == EOF;
                json_decref(o);
        } else {
                json_decref(ok);
                json_decref(refused);
        }
        if (rc || fflush(stdout))
                return ks_cli_fail("config", "cannot write the result");
        return bad ? KS_CLI_EXIT_FAIL : KS_CLI_EXIT_OK;
}

int ks_cli_config_main(int argc, char **argv)
{
        static const struct option longopts[] = {
            {"json", no_argument, NULL, 'j'},
            {"help", no_argument, NULL, 'h'},
            {NULL, 0, NULL, 0}};
        int c, json = 0;

        optind = 1;
        while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
                switch (c) {
                case 'j':
                        json = 1;
                        break;
                case 'h':
                        ks_config_help(stdout);
                        return KS_CLI_EXIT_OK;
                default:
                        return ks_cli_usage_error("config", "bad option");
                }
        }
        if (optind == argc)
                return list_properties(json);
        return check_properties(argc - optind, argv + optind, json);
}
