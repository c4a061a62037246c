/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_audit.h
 * @brief Which partitioner wrote a topic's stored records: for each keyed
 *        record read back from the topic (`keyshift scan`), the (hash
 *        family, partition count) pairs that put its key in the partition
 *        it is stored in.
 *
 * Hash families, in this order everywhere (ks_topic_diag_families): 0
 * `consistent` (CRC-32 as zlib's crc32(), librdkafka's rd_crc32()), 1
 * `murmur2` (Kafka's Utils.murmur2(), & 0x7fffffff), 2 `fnv1a`
 * (librdkafka's rd_fnv1a(): |(int32_t)FNV-1a|), each through
 * ks_partitioner_hash() (core/model/ks_hash.h gives the sources). Counts run
 * 1..the topic's current count C.
 *
 * Per keyed record (non-NULL key of >= 1 byte; NULL and empty keys are
 * placed by stickiness or at random by most partitioners and count as
 * unkeyed): 3 hashes and 3 x C remainders. Kept:
 *  - explained[f][n]: records in partition hash_f(key) % n (a record
 *    counts under every pair that explains it);
 *  - unexplained: records no pair explains, per partition;
 *  - signatures: the records grouped by (partition, set of pairs that
 *    explain them), each group with its records, first and last offset
 *    and one example key; the history is computed from them;
 *  - per partition, which families explain each of the newest
 *    KS_AUDIT_NEWEST keyed records under C (the family the proposals use).
 *
 * History: the fewest pairs that explain the records, by greedy set
 * cover (each step takes the pair explaining most records the pairs
 * taken before do not; ties: the larger count, then family order), which
 * is within a factor ln(records) of the fewest. It stops when the best
 * pair adds fewer than KS_AUDIT_MIN_SHARE of the keyed records (or none):
 * what is left is `uncovered`, placed by something no significant pair
 * explains (custom partitioners, explicit partitions, chance matches).
 * Each pair's records, per partition, are those the cover assigned to it,
 * with their offset range.
 *
 * Memory (bounded whatever the number of records): 24 B x 3 x C counters
 * and ranges, C x KS_AUDIT_NEWEST bytes for the newest records, and at
 * most `max_bytes` for the signature groups (each 104 B + 8 B x
 * ceil(3C / 64)); records of a new group met when that is full are still
 * counted in explained/unexplained but left out of the history
 * (`records_not_grouped`, reported).
 *
 * Not thread-safe: one audit is fed by one thread.
 */
#ifndef KS_AUDIT_H
#define KS_AUDIT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "ks_warn.h"

/** Hash families audited (consistent, murmur2, fnv1a). */
#define KS_AUDIT_FAMILIES 3
/** Newest keyed records per partition that decide the current family. */
#define KS_AUDIT_NEWEST 256
/** Key bytes kept of an example key. */
#define KS_AUDIT_KEY_MAX 48
/** Most pairs in the history. */
#define KS_AUDIT_HISTORY_MAX 16
/** A pair enters the history when it adds at least this share of the
 *  keyed records (and at least one record). */
#define KS_AUDIT_MIN_SHARE 0.01
/** Signature groups kept when no budget is given. */
#define KS_AUDIT_DEFAULT_BYTES ((size_t)64 << 20)

typedef struct ks_audit ks_audit_t;

/** One record's key kept as an example. */
typedef struct ks_audit_example {
        uint8_t  key[KS_AUDIT_KEY_MAX];
        uint32_t keylen; /**< the full key length (bytes kept: at most 48) */
        int32_t  partition;
        int64_t  offset;
} ks_audit_example_t;

/** Records of one pair in one partition. */
typedef struct ks_audit_range {
        uint64_t records;      /**< assigned to the pair by the cover */
        uint64_t explained;    /**< explained by the pair (grouped records) */
        int64_t  first_offset; /**< of the assigned records; -1: none */
        int64_t  last_offset;
} ks_audit_range_t;

/** One step of the history. */
typedef struct ks_audit_step {
        int                family; /**< 0 consistent, 1 murmur2, 2 fnv1a */
        int32_t            count;
        uint64_t           records;    /**< assigned by the cover */
        uint64_t           explained;  /**< explained[family][count] */
        ks_audit_range_t  *partitions; /**< [C] */
        ks_audit_example_t example;    /**< one assigned record */
} ks_audit_step_t;

typedef struct ks_audit_history {
        ks_audit_step_t    steps[KS_AUDIT_HISTORY_MAX];
        size_t             cnt;
        uint64_t           uncovered; /**< grouped explained records no step
                                    *   covers */
        ks_audit_example_t uncovered_example;
        int                has_uncovered_example;
} ks_audit_history_t;

/**
 * @brief A new audit of a topic with @p partition_count (C, 1..100,000)
 *        partitions, its signature groups held to @p max_bytes (0:
 *        KS_AUDIT_DEFAULT_BYTES).
 * @returns the audit, or NULL on ENOMEM or a count out of range.
 */
ks_audit_t *ks_audit_new(int32_t partition_count, size_t max_bytes);
void        ks_audit_destroy(ks_audit_t *a);

/**
 * @brief Counts one record read back from partition @p partition at
 *        @p offset with key @p key (NULL: a NULL key). A partition out of
 *        0..C-1 is counted in `records_out_of_range` only.
 */
void ks_audit_add(ks_audit_t *a, const void *key, size_t keylen,
                  int32_t partition, int64_t offset);

int32_t  ks_audit_partition_count(const ks_audit_t *a);
uint64_t ks_audit_keyed(const ks_audit_t *a);
uint64_t ks_audit_unkeyed(const ks_audit_t *a);
/** @returns explained[@p family][@p count] (0 out of range). */
uint64_t ks_audit_explained(const ks_audit_t *a, int family, int32_t count);
uint64_t ks_audit_unexplained(const ks_audit_t *a);

/**
 * @brief Which family explains most of the newest keyed records (up to
 *        KS_AUDIT_NEWEST per partition) under the current count.
 * @param counts if not NULL, receives how many of them each family
 *        explains.
 * @returns 0..2, or -1 when there is no keyed record, no family
 *          explains more than half of them, or two explain as many (a
 *          1-partition topic: every family explains every record).
 */
int ks_audit_newest_family(const ks_audit_t *a,
                           uint64_t          counts[KS_AUDIT_FAMILIES]);

/**
 * @brief Computes the history (greedy set cover, see the file comment).
 * @returns 0, or -1 on ENOMEM (@p h is then empty). Free with
 *          ks_audit_history_free().
 */
int  ks_audit_history(const ks_audit_t *a, ks_audit_history_t *h);
void ks_audit_history_free(ks_audit_history_t *h);

/** @returns the family's name ("consistent", "murmur2", "fnv1a"). */
const char *ks_audit_family_name(int family);

/**
 * @brief The report's `audit` object of a topic (docs/report-schema.md).
 * @param partitioner the partitioner the proposals use, and
 *        @p partitioner_source why ("audit", "--partitioner", "default").
 * @returns a new reference, or NULL on ENOMEM.
 */
json_t *ks_audit_json(const ks_audit_t *a, const ks_audit_history_t *h,
                      const char *partitioner, const char *partitioner_source);

/**
 * @brief Adds the audit's warnings of @p topic to @p wl:
 *        MIXED_PARTITIONERS (history steps of two families),
 *        RECORDS_FROM_OLD_COUNT (a step under a count below C, except the
 *        step (@p switch_family, @p switch_old): ks_switch.h counts that
 *        one's records exactly; -1, -1: none),
 *        UNEXPLAINED_PLACEMENT (unexplained or uncovered records).
 *        A step's records are the greedy cover's: records both counts
 *        explain go to the step taken first, so an old count's figure
 *        from the history is an estimate.
 */
void ks_audit_warnings(const ks_audit_t *a, const ks_audit_history_t *h,
                       const char *topic, int switch_family, int32_t switch_old,
                       ks_warn_list_t *wl);

#endif /* KS_AUDIT_H */
