/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_phash_cache.h
 * @brief A per-thread cache of partitioner hashes for the delivery check:
 *        ks_partitioner_hash() of keys a thread has checked before.
 *
 * Why: librdkafka calls on_acknowledgement for every message on its broker
 * thread, the thread that also builds and sends the next batches, and
 * keyshift checks each delivered partition against the hash of the key
 * (ks_topic_ack()). For the consistent* partitioners that hash is zlib's
 * CRC-32, whose tables the broker thread's own work keeps evicting: the
 * check took 12-14 % of that thread's time on librdkafka's mock cluster
 * (bench/README.md). Keys repeat (Zipf-like over MMSIs, users, orders), so
 * a key checked before is looked up instead: a multiply-xorshift of its
 * bytes and one 32-byte slot.
 *
 * Design: 2048 direct-mapped slots (64 KiB) per thread that checks a
 * delivery, allocated at its first check and freed when it exits (a
 * pthread key's destructor). A slot holds a key of 1 to
 * KS_PHASH_CACHE_KEY_MAX bytes, its partitioner and its hash; a key meets
 * only the slot its bytes choose, and takes it. Longer and empty keys, and
 * a thread whose slots could not be allocated, are hashed every time. The
 * hash of a key depends on nothing else (ks_partitioner.h), so slots never
 * go stale.
 *
 * Thread-safety: each thread has its own slots; no lock.
 */
#ifndef KS_PHASH_CACHE_H
#define KS_PHASH_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "ks_partitioner.h"

/** Longest key cached, in bytes (an MMSI's 9 digits, a number, a short
 *  id; a UUID's text form, 36, is hashed every time). */
#define KS_PHASH_CACHE_KEY_MAX 24
/** Slots per thread, 32 B each. */
#define KS_PHASH_CACHE_SLOTS 2048

/**
 * @returns ks_partitioner_hash(@p p, @p key, @p keylen), from this
 *          thread's slots when the key was hashed there last.
 * @locality any thread; allocates the thread's slots (64 KiB) at its
 *           first call, freed when it exits.
 */
uint32_t ks_phash_cached(ks_partitioner_t p, const void *key, size_t keylen);

/** What this thread's slots did, since it first called ks_phash_cached()
 *  (tests, benchmarks). */
typedef struct ks_phash_cache_stats {
        uint64_t hits;   /**< hashes found in a slot */
        uint64_t misses; /**< hashed, then kept in a slot */
        uint64_t bypass; /**< hashed, not cacheable (length, no memory) */
} ks_phash_cache_stats_t;

/** @brief Copies this thread's counters (zeros before its first call). */
void ks_phash_cache_stats(ks_phash_cache_stats_t *out);

#endif /* KS_PHASH_CACHE_H */
