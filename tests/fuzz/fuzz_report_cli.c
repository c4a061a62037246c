/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file fuzz_report_cli.c
 * @brief libFuzzer target: what `keyshift show`, `html`, `metrics` and
 *        `merge` do with a report that passed the check. The input is the
 *        file's bytes.
 *
 * The check promises the subcommands a report they can read without
 * checks of their own (ks_cli_report.h); this target holds it to that:
 * every input the check accepts is shown, drawn, turned into metrics and
 * merged with a copy of itself from another process (its pid changed),
 * in-process (the subcommands' main functions, their
 * output to /dev/null). Inputs the check refuses are left to
 * fuzz_report_check.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "ks_cli.h"
#include "ks_cli_report.h"
#include "ks_fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
        (void)argc;
        (void)argv;
        /* the subcommands print the page, the metrics, the merged report */
        if (!freopen("/dev/null", "w", stdout))
                abort();
        return 0;
}

/** @brief Runs @p main with @p args (NULL-terminated), as main() would. */
static void run(int (*main_fn)(int, char **), char **args)
{
        int argc = 0;

        while (args[argc])
                argc++;
        main_fn(argc, args);
}

/** Mutates the report as JSON, not only as bytes (ks_fuzz_json.c). */
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
                               unsigned int seed)
{
        return ks_fuzz_json_mutate(data, size, max_size, seed);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        json_error_t jerr;
        json_t      *root;
        const char  *f, *g;
        char         err[1024];

        root =
            json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &jerr);
        if (!root)
                return 0;
        /* capacities and sums past 2^63 - 1 are the check's and merge's
         * to refuse (issue 30): no filter here */
        if (ks_cli_report_check(root, "fuzz.json", err, sizeof(err))) {
                json_decref(root);
                return 0;
        }
        f = ks_fuzz_file(data, size);
        { /* merge refuses two reports of one producer: the second is
           * another process's (pid + 1) */
                json_t *prod = json_object_get(root, "producer");
                char   *text;
                json_object_set_new(
                    prod, "pid",
                    json_integer(
                        json_integer_value(json_object_get(prod, "pid")) == 1
                            ? 2
                            : 1));
                text = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
                g    = ks_fuzz_file2((const uint8_t *)(text ? text : ""),
                                  text ? strlen(text) : 0);
                free(text);
        }
        json_decref(root);
        {
                char *show[]    = {"show", "--color", "never", (char *)f, NULL};
                char *show_k[]  = {"show", "--hot", "3", (char *)f, NULL};
                char *html[]    = {"html", "-o", "-", (char *)f, NULL};
                char *metrics[] = {"metrics", (char *)f, NULL};
                char *merge[]   = {"merge", (char *)f, (char *)g, NULL};
                run(ks_cli_show_main, show);
                run(ks_cli_show_main, show_k);
                run(ks_cli_html_main, html);
                run(ks_cli_metrics_main, metrics);
                run(ks_cli_merge_main, merge);
        }
        return 0;
}
