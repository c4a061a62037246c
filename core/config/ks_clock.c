/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_clock.c
 * @brief keyshift's clocks (see ks_clock.h): below every stage, so that
 *        the staging, the topics' analysis and the plugin read the same
 *        clocks without calling each other for them.
 */
#include "ks_clock.h"

#include <time.h>

int64_t ks_clock_mono_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t ks_clock_wall_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
