/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ksb_keys.h
 * @brief Key streams for the benchmarks: MMSI-like ship identifiers, as a
 *        ship-tracking producer keys its messages, drawn Zipf-distributed
 *        from a fixed population or each sent once.
 *
 * A key is the 9-digit decimal text of an MMSI (what a Java
 * StringSerializer or a C producer's snprintf writes), or, for a share of
 * messages, the same MMSI as a 4-byte big-endian int (IntegerSerializer):
 * a producer with two code paths, which keyshift's mixed-serializer
 * analysis exists to catch, so its cost is part of the measured path.
 *
 * Key id i (0-based) is the MMSI 201000000 + (i x 2654435761 mod 575e6):
 * multiplication by a number prime to 575e6 = 2^6 5^8 23 permutes the
 * residues, so ids below 575 million give distinct MMSIs in 201000000 ..
 * 775999999 (maritime identification digits 201-775), spread over the
 * range rather than consecutive.
 *
 * Zipf: the key of rank r (1-based) has probability r^-s / H(n, s);
 * messages are drawn by inverse transform over the cumulative weights
 * (binary search). Random numbers: SplitMix64 (Steele, Lea & Flood,
 * OOPSLA 2014), so a seed gives the same stream everywhere. Streams are
 * generated before any timed section.
 */
#ifndef KSB_KEYS_H
#define KSB_KEYS_H

#include <stddef.h>
#include <stdint.h>

/** One message's key, ready to hand to produce(). */
typedef struct ksb_key {
        uint8_t  len; /**< 9 (text) or 4 (int32) */
        uint8_t  bytes[11];
        uint32_t id; /**< key id: same id = same MMSI (logical key) */
} ksb_key_t;

typedef struct ksb_stream {
        ksb_key_t *msgs;
        size_t     n;        /**< messages */
        size_t     keys;     /**< population (distinct ids possible) */
        char       name[64]; /**< e.g. "zipf1.0-100k" */
} ksb_stream_t;

/** @returns the next SplitMix64 value of *state. */
uint64_t ksb_splitmix64(uint64_t *state);

/** @returns the MMSI of key id @p id (see the file comment). */
uint32_t ksb_mmsi(uint32_t id);

/** @brief Writes key @p id as text (9 bytes) or, if @p int32, as a 4-byte
 *         big-endian int into @p k. */
void ksb_key_make(ksb_key_t *k, uint32_t id, int int32);

/**
 * @brief @p n messages whose keys are drawn Zipf(@p s) from @p keys ids;
 *        a share @p int32_share of them is sent as int32 instead of text.
 */
void ksb_stream_zipf(ksb_stream_t *st, size_t n, size_t keys, double s,
                     double int32_share, uint64_t seed);

/** @brief @p keys messages, each a different key (ids 0..keys-1), text. */
void ksb_stream_distinct(ksb_stream_t *st, size_t keys);

/**
 * @brief @p n messages: a share @p share of them keyed by @p hot hot keys
 *        (ids 0..hot-1, the lower ids busier: id floor(hot u^3) for u
 *        uniform), the rest each a key never seen before (ids from @p hot
 *        on): the key table passes such a stream by (ks_batch.h), and its
 *        hot keys reach the hot-key summary by sample (ks_run_hot_t).
 */
void ksb_stream_spiked(ksb_stream_t *st, size_t n, size_t hot, double share,
                       uint64_t seed);

/** @returns the risky_ais log: the checkout's
 *           tests/data/ais/risky_ais.txt.gz (compiled in). */
const char *ksb_ais_log_path(void);

/**
 * @brief @p n messages keyed as keyshift-replay keys the AIS log @p path
 *        (each keyed sentence's MMSI as decimal text), in the log's order,
 *        the log repeated until @p n (risky_ais: 27,941 keyed messages over
 *        2,184 MMSIs, busiest 427); ids 0.. in the order of the MMSIs'
 *        values. Dies if the log cannot be read.
 */
void ksb_stream_ais(ksb_stream_t *st, const char *path, size_t n);

void ksb_stream_free(ksb_stream_t *st);

#endif /* KSB_KEYS_H */
