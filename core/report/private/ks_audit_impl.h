/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_audit_impl.h
 * @brief The audit's state, shared by ks_audit.c (records grouped, the
 *        history found) and ks_audit_json.c (the report's object); not an
 *        interface (ks_audit.h is).
 */
#ifndef KS_AUDIT_IMPL_H
#define KS_AUDIT_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "ks_audit.h"

/** Largest partition count audited. */
#define KS_AUDIT_COUNT_MAX 100000

/** Records with one partition and one set of explaining pairs. */
typedef struct sig_entry {
        uint64_t           hash; /**< of partition and bits */
        uint64_t           records;
        int64_t            first, last; /**< offsets */
        int32_t            partition;
        ks_audit_example_t ex; /**< the first record */
} sig_entry_t;

struct ks_audit {
        int32_t   c;     /**< current count */
        size_t    words; /**< 64-bit words of a pair set: ceil(3c / 64) */
        uint64_t *m;     /**< [c + 1] ks_partition_m(n) */
        uint64_t  keyed, unkeyed, out_of_range, unexplained;
        uint64_t *explained;        /**< [3c]: f * c + n - 1 */
        uint64_t *unexplained_part; /**< [c] */
        ks_audit_example_t unexplained_ex;
        int                has_unexplained_ex;
        uint8_t           *newest;     /**< [c][KS_AUDIT_NEWEST] family masks */
        uint64_t          *newest_pos; /**< [c] keyed records per partition */
        /* signature groups */
        sig_entry_t *e;
        uint64_t    *bits; /**< [e_cap][words] */
        size_t       e_cnt, e_cap, e_max;
        uint32_t    *slot; /**< [slot_cnt]: entry index + 1, 0 free */
        size_t       slot_cnt;
        uint64_t     not_grouped; /**< records of groups that did not fit */
        uint64_t    *scratch;     /**< [words] */
};

#endif /* KS_AUDIT_IMPL_H */
