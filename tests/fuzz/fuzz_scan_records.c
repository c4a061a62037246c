/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file fuzz_scan_records.c
 * @brief libFuzzer target: the records `keyshift scan` reads from a topic,
 *        through what it does with each (cli/ks_cli_scan.c on_record():
 *        the audit of where records are stored, the key's facts and
 *        encoding, the topic's sketches) to the report and the audit's
 *        JSON.
 *
 * Input: a header of 4 bytes (the current partition count - 1, two
 * proposed counts - 1, the partitioner), then records, each a length byte
 * (255: a NULL key), the partition the record was stored in (a byte: it
 * may be out of range, as the audit must bear), and the key's bytes.
 *
 * Oracle: the report keyshift builds from any records passes keyshift's
 * own report check (cli/ks_cli_report_check.c): what keyshift writes,
 * keyshift reads.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ks_audit.h"
#include "ks_cli_report.h"
#include "ks_fuzz.h"

#define MAX_RECORDS 1024

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static ks_fuzz_record_t recs[MAX_RECORDS];
        ks_fuzz_topic_t         t = {0};
        ks_audit_t             *a;
        ks_audit_history_t      h;
        json_t                 *report;
        size_t                  i = 4, n = 0;
        char                    err[1024];

        if (size < 4)
                return 0;
        t.name         = "fuzz";
        t.count        = data[0] + 1;
        t.proposed[0]  = data[1] + 1;
        t.proposed[1]  = data[2] + 1;
        t.proposed_cnt = 2;
        t.partitioner  = (ks_partitioner_t)(data[3] % KS_PARTITIONER__CNT);
        t.hot_keys     = 5;
        t.stored       = 1;
        if (!(a = ks_audit_new(t.count, 1 << 20)))
                return 0;
        while (i + 2 <= size && n < MAX_RECORDS) {
                uint8_t len = data[i], part = data[i + 1];
                size_t  kl = len == 255 ? 0 : len;

                i += 2;
                if (kl > size - i)
                        kl = size - i;
                recs[n].key       = len == 255 ? NULL : data + i;
                recs[n].keylen    = kl;
                recs[n].partition = part;
                recs[n].bytes     = kl + 10;
                ks_audit_add(a, recs[n].key, kl, part, (int64_t)n);
                i += kl;
                n++;
        }
        if (ks_audit_history(a, &h) == 0) {
                json_t *j = ks_audit_json(a, &h, "murmur2_random", "audit");
                json_decref(j);
                ks_audit_history_free(&h);
        }
        ks_audit_destroy(a);
        report = ks_fuzz_report(&t, recs, n);
        if (!report)
                return 0;
        { /* as the file holds it, read back */
                char *text = json_dumps(report, JSON_COMPACT);
                json_decref(report);
                report = text ? json_loads(text, 0, NULL) : NULL;
                free(text);
                if (!report)
                        return 0;
        }
        if (ks_cli_report_check(report, "scan.json", err, sizeof(err)) ||
            ks_cli_report_rows(report, "scan.json", err, sizeof(err))) {
                fprintf(stderr, "keyshift refuses its own report: %s\n", err);
                abort();
        }
        json_decref(report);
        return 0;
}
