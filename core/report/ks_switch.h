/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_switch.h
 * @brief Where a grown topic's placement switched from (family, old count)
 *        to (family, new count): per partition, which stored records the
 *        old count placed, which the new one placed, and which no evidence
 *        tells apart (`keyshift scan`, after the audit named the family and
 *        the old count).
 *
 * Each keyed record (non-NULL key of >= 1 byte) in partition p is, with
 * h = the family's partitioner hash of its key (ks_partitioner_hash() of
 * ks_topic_diag_families[family]; sources in core/model/ks_hash.h):
 *  - old-only: h % old == p and h % new != p: placed under the old count;
 *  - new-only: h % new == p and h % old != p: placed under the new count;
 *  - both: h % old == p == h % new (half the keys of p < old for a
 *    doubling, since h % 2n < n implies h % n == h % 2n): placement alone
 *    cannot tell which count placed it;
 *  - other: neither count of the family puts it there (another family,
 *    explicit partitions).
 *
 * A "both" record is decided by evidence, each source old, new or silent:
 *  - time (record timestamps, topic-wide): T_old = the newest old-only
 *    record's, T_new = the oldest new-only record's. When T_old < T_new
 *    the producers switched at one moment T with T_old < T <= T_new: a
 *    record at or before T_old is old, one at or after T_new new, one in
 *    between ambiguous. When T_new <= T_old, producers switched at
 *    different moments (an interleaved stretch): before T_new old, after
 *    T_old new, within [T_new, T_old] ambiguous;
 *  - offsets (per partition, only where both kinds can occur: not in
 *    p < old when old divides new): L = the last old-only offset, F = the
 *    first new-only offset; a record before both is old, after both new,
 *    between them (after L and before F: one switch; between F and L: an
 *    interleaved stretch) ambiguous.
 * A record is old (new) when a source says so and none says the other;
 * otherwise it is ambiguous, and stated as such. With one switch moment
 * and timestamps, every record is decided except those produced between
 * the newest old-only and the oldest new-only record: the count of old
 * records is exact when that stretch holds none. The interleaved rule
 * assumes a producer's first new-count records (and its last old-count
 * ones) are not all "both" records: k of them are with probability
 * about 2^-k for a doubling.
 *
 * A partition's switch offset is the first record that is new or
 * ambiguous: [start, switch) holds only records of the old count (what
 * `scan --until increase` reads).
 *
 * Memory: 56 B x new per partition, plus the "both" records kept until
 * the end, as runs of one partition's consecutive "both" records with one
 * timestamp (32 B a run), at most @p max_bytes; records of runs that do not
 * fit are counted ambiguous (`not_kept`).
 *
 * Not thread-safe: one detector is fed by one thread.
 */
#ifndef KS_SWITCH_H
#define KS_SWITCH_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "ks_warn.h"

typedef struct ks_switch ks_switch_t;

/** One partition's records by the count that placed them. */
typedef struct ks_switch_part {
        uint64_t old_only, new_only; /**< exact by placement */
        uint64_t both_old, both_new; /**< "both", decided by evidence */
        uint64_t ambiguous;          /**< "both", undecided */
        uint64_t other, unkeyed;
        int64_t  last_old_only;                   /**< offset, -1: none */
        int64_t  first_new_only;                  /**< offset, -1: none */
        int64_t  ambiguous_first, ambiguous_last; /**< offsets, -1: none */
        int64_t  switch_offset; /**< first new or ambiguous record, -1:
                                 *   none (every record is old) */
        int      offsets_used;  /**< both kinds can occur here */
} ks_switch_part_t;

/** The switch over the whole topic. */
typedef struct ks_switch_result {
        int      family; /**< 0 consistent, 1 murmur2, 2 fnv1a (ks_audit.h) */
        int32_t  old_count, new_count;
        int64_t  old_only_last_ms;  /**< T_old, -1: no old-only record */
        int64_t  new_only_first_ms; /**< T_new, -1: no new-only record */
        int      one_moment;        /**< T_old < T_new: one switch moment */
        uint64_t old_exact;         /**< old-only + both_old */
        uint64_t new_exact;         /**< new-only + both_new */
        uint64_t ambiguous;         /**< including not_kept */
        uint64_t not_kept; /**< "both" records over the memory budget */
        uint64_t other, unkeyed;
        ks_switch_part_t *parts; /**< [new_count] */
} ks_switch_result_t;

/**
 * @brief A detector of the switch from (@p family, @p old_count) to
 *        (@p family, @p new_count), 1 <= old_count < new_count <= 100,000,
 *        its kept "both" records held to @p max_bytes (0: 64 MiB).
 * @returns the detector, or NULL on ENOMEM or arguments out of range.
 */
ks_switch_t *ks_switch_new(int family, int32_t old_count, int32_t new_count,
                           size_t max_bytes);
void         ks_switch_destroy(ks_switch_t *s);

/**
 * @brief Counts one record read from @p partition at @p offset, key @p key
 *        (NULL: a NULL key), timestamp @p ts_ms (ms since the epoch; < 0:
 *        none). A partition's records must come in offset order (as a
 *        consumer delivers them); partitions may interleave. A partition
 *        out of 0..new-1 is ignored.
 */
void ks_switch_add(ks_switch_t *s, const void *key, size_t keylen,
                   int32_t partition, int64_t offset, int64_t ts_ms);

/**
 * @brief Decides the "both" records with the evidence gathered (file
 *        comment) and fills @p r. @returns 0, or -1 on ENOMEM. Free with
 *        ks_switch_result_free().
 */
int  ks_switch_result(const ks_switch_t *s, ks_switch_result_t *r);
void ks_switch_result_free(ks_switch_result_t *r);

/** @returns the report's `audit.switch` object (docs/report-schema.md), a
 *           new reference, or NULL on ENOMEM. */
json_t *ks_switch_json(const ks_switch_result_t *r);

/**
 * @brief Adds RECORDS_FROM_OLD_COUNT for @p topic to @p wl: the old
 *        count's records, exact or with the ambiguous ones stated, and
 *        where each partition switched. Nothing when no record is old.
 */
void ks_switch_warnings(const ks_switch_result_t *r, const char *topic,
                        ks_warn_list_t *wl);

#endif /* KS_SWITCH_H */
