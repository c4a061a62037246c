/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ais_synth.h
 * @brief Deterministic synthetic AIS feed: `!AIVDM` sentences whose MMSIs
 *        are as unevenly spread as a real coastal receiver's.
 *
 * What a real feed looks like (tests/data/ais/README.md, risky_ais.txt.gz,
 * 2 h of the Australian coastal network): a few thousand MMSIs, the busiest
 * sending hundreds of times the median (427 against 1), and MMSI 0 from
 * misconfigured transponders about 1.4% of the time. The generator draws
 * each message's sender from a fixed population of `vessels` distinct
 * 9-digit MMSIs (a real maritime identification digit followed by six
 * digits) with these relative rates:
 *
 *  - ordinary vessels, Zipf-like: the vessel of rank r (1-based) sends at
 *    rate r^-zipf_s; with zipf_s = 0.5 and 3,000 vessels the busiest
 *    ordinary vessel sends sqrt(1,500) ~ 39 times the median one;
 *  - `hot_vessels` of them send at hot_factor x the median vessel's rate
 *    (default 5 vessels at 100x: a ferry, a tug, a base station);
 *  - a share `mmsi_zero_share` of all messages comes from MMSI 0.
 *
 * Sampling is by inverse transform over the cumulative rates (binary
 * search, O(log vessels) per message). Random numbers come from
 * SplitMix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number
 * generators", OOPSLA 2014; the constants of Vigna's public-domain
 * splitmix64.c), so a seed gives the same feed on every platform.
 *
 * Each message is a type 1 position report (168 bits, one sentence, no
 * fill bits) or, with probability `type5_share`, a type 5 static and
 * voyage report (424 bits) sent as two fragments (60 + 11 payload
 * characters, 2 fill bits) with a sequential message id 0..9: the MMSI is
 * only in fragment 1, as in real feeds. Layouts: ITU-R M.1371-5 Annex 8;
 * 6-bit armouring and checksum as in ais_nmea.h.
 *
 * A generator is used by one thread at a time.
 */
#ifndef KS_AIS_SYNTH_H
#define KS_AIS_SYNTH_H

#include <stddef.h>
#include <stdint.h>

/** Room for any line ks_ais_synth_next() writes, terminator included. */
#define KS_AIS_SYNTH_LINE_MAX 96

typedef struct ks_ais_synth_config {
        uint64_t seed;
        uint32_t vessels;         /**< distinct non-zero MMSIs (>= 2) */
        double   zipf_s;          /**< rate exponent of ordinary vessels */
        uint32_t hot_vessels;     /**< vessels at hot_factor x median */
        double   hot_factor;      /**< their rate over the median's */
        double   mmsi_zero_share; /**< of messages, 0..1 */
        double   type5_share;     /**< of messages, 0..1 */
} ks_ais_synth_config_t;

typedef struct ks_ais_synth ks_ais_synth_t;

/** @brief Sets @p conf to the defaults: seed 1, 3000 vessels, zipf_s 0.5,
 *         5 hot vessels at 100x, 1% MMSI 0, 2% type 5. */
void ks_ais_synth_config_defaults(ks_ais_synth_config_t *conf);

/**
 * @brief Creates a generator; NULL @p conf means the defaults.
 * @returns the generator (free with ks_ais_synth_destroy()), or NULL for
 *          ENOMEM or a configuration out of range (vessels < 2 or more
 *          than 10,000,000, hot_vessels >= vessels, shares outside 0..1,
 *          hot_factor <= 0, zipf_s < 0).
 */
ks_ais_synth_t *ks_ais_synth_new(const ks_ais_synth_config_t *conf);

/** @brief Frees @p s (NULL is fine). */
void ks_ais_synth_destroy(ks_ais_synth_t *s);

/**
 * @brief Writes the next sentence (no line terminator) into @p buf.
 * @param size  at least KS_AIS_SYNTH_LINE_MAX.
 * @param mmsi  if not NULL, set to the message's MMSI (for fragment 2 of a
 *              type 5: fragment 1's), as the decoder should find it.
 * @returns the sentence's length, or 0 if @p size is too small.
 */
size_t ks_ais_synth_next(ks_ais_synth_t *s, char *buf, size_t size,
                         uint32_t *mmsi);

/** @returns the MMSI of the vessel of rank @p rank (0-based; ranks 0 ..
 *           hot_vessels-1 are the hot ones), or 0 if out of range. */
uint32_t ks_ais_synth_vessel_mmsi(const ks_ais_synth_t *s, uint32_t rank);

#endif /* KS_AIS_SYNTH_H */
