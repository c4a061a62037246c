/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_hll.h
 * @brief Distinct-key estimate: HyperLogLog (Flajolet et al. 2007) with
 *        the small-range correction of Heule et al. 2013 (linear counting
 *        below 2.5m), over ks_hash_key64() values.
 *
 * Memory: 2^KS_HLL_P one-byte registers (16 KiB). Relative standard error
 * 1.04 / sqrt(2^KS_HLL_P) = 0.81 %. Mergeable: the union of two streams is
 * the register-wise maximum.
 *
 * Not thread-safe: the caller serialises access to one sketch.
 */
#ifndef KS_HLL_H
#define KS_HLL_H

#include <stddef.h>
#include <stdint.h>

#define KS_HLL_P 14
#define KS_HLL_REGISTERS (1u << KS_HLL_P)

typedef struct ks_hll {
        uint8_t reg[KS_HLL_REGISTERS];
} ks_hll_t;

void ks_hll_init(ks_hll_t *hll);
void ks_hll_add(ks_hll_t *hll, uint64_t hash64);
/** @returns the estimated number of distinct hashes added. */
double ks_hll_estimate(const ks_hll_t *hll);
/** @returns the relative standard error, 1.04 / sqrt(registers). */
double ks_hll_std_error(void);
/** @brief dst := union(dst, src). */
void ks_hll_merge(ks_hll_t *dst, const ks_hll_t *src);

#endif /* KS_HLL_H */
