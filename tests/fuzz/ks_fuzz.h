/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_fuzz.h
 * @brief What the libFuzzer targets of tests/fuzz/ share: a fuzz input
 *        turned into a file the CLI's loaders open by path, into separate
 *        fields, and the report keyshift itself writes for a run of
 *        records (the seeds' reports, and the oracle of fuzz_scan_records).
 *
 * Built only with -DKEYSHIFT_FUZZ=ON (clang, libFuzzer). Single-threaded,
 * as libFuzzer runs a target.
 */
#ifndef KS_FUZZ_H
#define KS_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "ks_partitioner.h"

/**
 * @brief Replaces the contents of this process's scratch file (a memfd,
 *        created on first use) with @p data[size].
 * @returns its path ("/proc/self/fd/N", a regular file), valid until the
 *          next call; aborts when the file cannot be written (the
 *          harness, not the input, is broken).
 */
const char *ks_fuzz_file(const uint8_t *data, size_t size);

/** @brief As ks_fuzz_file(), a second file (merge reads two reports). */
const char *ks_fuzz_file2(const uint8_t *data, size_t size);

/** Fields cut from an input (ks_fuzz_fields()). */
typedef struct ks_fuzz_fields {
        char **v; /**< argv-like: v[0] .. v[n - 1], then NULL */
        int    n;
        char  *buf; /**< the strings, one block */
} ks_fuzz_fields_t;

/**
 * @brief Cuts @p data[size] at each byte @p sep into NUL-terminated
 *        strings (a NUL byte inside a field ends that field early: the
 *        parsers read C strings, as librdkafka and main() hand them over),
 *        at most @p max of them (the rest is dropped). When @p argv0 is
 *        not NULL it is v[0] and the fields follow, as main() gets them.
 * @returns 0, or -1 on ENOMEM. Free with ks_fuzz_fields_free().
 */
int  ks_fuzz_fields(ks_fuzz_fields_t *f, const uint8_t *data, size_t size,
                    char sep, const char *argv0, int max);
void ks_fuzz_fields_free(ks_fuzz_fields_t *f);

/** One record of ks_fuzz_report(): a key (NULL: none) and where the
 *  record was stored (-1: not known, the producer's view). */
typedef struct ks_fuzz_record {
        const void *key;
        size_t      keylen;
        int32_t     partition;
        uint64_t    bytes;
} ks_fuzz_record_t;

/** How ks_fuzz_report() builds its topic. */
typedef struct ks_fuzz_topic {
        const char      *name;
        int32_t          count;        /**< current partitions, 1.. */
        int32_t          proposed[4];  /**< proposed counts, 1.. */
        int              proposed_cnt; /**< 0..4 */
        ks_partitioner_t partitioner;
        int              hot_keys; /**< listed in the report */
        int              stored;   /**< 1: recorded as the scan does
                                    *   (ks_topic_record_stored_locked()),
                                    *   0: as the plugin does */
} ks_fuzz_topic_t;

/**
 * @brief The whole report (file form: hot keys as columns) of one topic
 *        @p t fed @p recs[n], as keyshift writes it.
 * @returns a new reference, or NULL on ENOMEM.
 */
json_t *ks_fuzz_report(const ks_fuzz_topic_t *t, const ks_fuzz_record_t *recs,
                       size_t n);

/**
 * @brief A libFuzzer custom mutation of a JSON input (ks_fuzz_json.c):
 *        one to three values of the parsed tree changed (numbers to their
 *        edges, strings, types, members removed, arrays grown or shrunk),
 *        the tree written back compact; a quarter of the time, and for an
 *        input that does not parse, libFuzzer's own byte mutations.
 * @returns the new size (<= @p max_size), as LLVMFuzzerCustomMutator.
 */
size_t ks_fuzz_json_mutate(uint8_t *data, size_t size, size_t max_size,
                           unsigned int seed);

#endif /* KS_FUZZ_H */
