/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_clock.h
 * @brief keyshift's two clocks, in milliseconds: the monotonic one that
 *        rates and ages are measured on, and the wall clock that reports
 *        state times in.
 *
 * Thread-safe: each call reads the clock, nothing else.
 */
#ifndef KS_CLOCK_H
#define KS_CLOCK_H

#include <stdint.h>

/** @returns CLOCK_MONOTONIC_COARSE in milliseconds: the rates' clock
 *           (a few ms of resolution, no system call on Linux's vDSO).
 *  @locality any thread. */
int64_t ks_clock_mono_ms(void);

/** @returns the wall clock (CLOCK_REALTIME) in milliseconds since the
 *           epoch: the report's times. @locality any thread. */
int64_t ks_clock_wall_ms(void);

#endif /* KS_CLOCK_H */
