/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli_scan_switch.c
 * @brief `keyshift scan`'s second pass over a grown topic: the same
 *        records read again into the count switch detector
 *        (core/report/ks_switch.h), once the audit named the family and
 *        the old count. A second read, not a store of every record, keeps
 *        the scan's memory bounded whatever the topic's size.
 */
#include "ks_cli_scan.h"

#include <stdio.h>

#include "ks_switch.h"

/** @brief ks_scan_record_cb: one record into the detector. */
static void on_record(void *opaque, const rd_kafka_message_t *m)
{
        ks_switch_add(opaque, m->key, m->key_len, m->partition, m->offset,
                      rd_kafka_message_timestamp(m, NULL));
}

int ks_cli_scan_switch(ks_scan_reader_t *r, int family, int32_t old_count,
                       size_t max_bytes, ks_switch_result_t *out, char *err,
                       size_t errsz)
{
        ks_switch_t *s =
            ks_switch_new(family, old_count, r->partition_count, max_bytes);
        int ret = 1;

        if (!s) {
                snprintf(err, errsz, "out of memory");
                return 1;
        }
        if (!ks_scan_rewind(r, NULL, err, errsz) &&
            !ks_scan_read(r, on_record, s, err, errsz)) {
                if (ks_switch_result(s, out))
                        snprintf(err, errsz, "out of memory");
                else
                        ret = 0;
        } else if (!*err) {
                snprintf(err, errsz, "the second pass stopped: %s",
                         r->stopped_by);
        }
        ks_switch_destroy(s);
        return ret;
}
