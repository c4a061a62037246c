/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file fuzz_config.c
 * @brief libFuzzer target: every keyshift.* property parser
 *        (core/config/ks_config.c and the sizing inputs of
 *        core/report/ks_sizing.c), what rd_kafka_conf_set() hands the
 *        plugin.
 *
 * Input: lines NAME=VALUE (a line without '=' is a name with an empty
 * value), set in order on one configuration, which is then copied (as
 * librdkafka's rd_kafka_conf_dup() makes the plugin do), asked which
 * topics it selects and where its report goes, and destroyed.
 *
 * Invariants: a refusal says why (errstr not empty) and, for an unknown
 * keyshift.* name, in under 256 bytes (ks_config.h); a name outside
 * keyshift.* is never claimed; the copy selects the same topics.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ks_config.h"
#include "ks_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        ks_fuzz_fields_t f;
        ks_config_t      conf, copy;
        char             errstr[512], path[4096];
        int              i;

        if (size > 4096) /* property values are short; keep runs fast */
                return 0;
        if (ks_fuzz_fields(&f, data, size, '\n', NULL, 16))
                return 0;
        if (ks_config_init(&conf)) {
                ks_fuzz_fields_free(&f);
                return 0;
        }
        for (i = 0; i < f.n; i++) {
                char           *name = f.v[i], *eq = strchr(name, '=');
                const char     *value = "";
                ks_config_res_t res;

                if (eq) {
                        *eq   = '\0';
                        value = eq + 1;
                }
                errstr[0] = '\0';
                res = ks_config_set(&conf, name, value, errstr, sizeof(errstr));
                if (res == KS_CONFIG_INVALID && !errstr[0])
                        abort();
                if (res != KS_CONFIG_UNKNOWN &&
                    strncmp(name, "keyshift.", 9) != 0)
                        abort();
                if (res == KS_CONFIG_UNKNOWN &&
                    strncmp(name, "keyshift.", 9) == 0)
                        abort();
        }
        if (ks_config_copy(&copy, &conf) == 0) {
                static const char *topics[] = {"orders", "", "keyshift.x",
                                               "a.b-c_d"};
                size_t             t;

                for (t = 0; t < sizeof(topics) / sizeof(topics[0]); t++)
                        if (ks_config_topic_selected(&conf, topics[t]) !=
                            ks_config_topic_selected(&copy, topics[t]))
                                abort();
                ks_config_report_path(&copy, "client/../x%", 42, path,
                                      sizeof(path));
                if (copy.metrics_path)
                        ks_config_expand_path(copy.metrics_path, "c", 42, path,
                                              sizeof(path));
                ks_config_destroy(&copy);
        }
        ks_config_destroy(&conf);
        ks_fuzz_fields_free(&f);
        return 0;
}
