/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file replay_keys.h
 * @brief How keyshift-replay serializes an MMSI key: decimal text (as
 *        Java's StringSerializer writes it), or, with --int32-keys PCT, a
 *        4-byte big-endian int (IntegerSerializer) for every odd message of
 *        PCT% of the MMSIs: one vessel through two serializers, the case
 *        keyshift's MIXED_KEY_SERIALIZERS warning is for. Shared with the
 *        tests, which recompute which MMSIs must be reported as mixed.
 */
#ifndef KS_REPLAY_KEYS_H
#define KS_REPLAY_KEYS_H

#include <stdint.h>

/**
 * @returns 1 if message @p seq (0-based, counting produced messages) with
 *          MMSI @p mmsi is sent with an int32 key under --int32-keys @p pct.
 *          MMSIs are chosen by Knuth's multiplicative hash, so the choice
 *          does not follow the MMSI's country prefix.
 */
static inline int ks_replay_int32_key(int pct, uint32_t mmsi, uint64_t seq)
{
        return pct > 0 &&
               (uint32_t)(mmsi * 2654435761u) % 100u < (uint32_t)pct &&
               (seq & 1);
}

#endif
