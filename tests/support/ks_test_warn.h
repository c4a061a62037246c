/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_test_warn.h
 * @brief A test helper over the core's warning list (core/report/ks_warn.h),
 *        header-only so that ks_test_support needs no core.
 */
#ifndef KS_TEST_WARN_H
#define KS_TEST_WARN_H

#include <string.h>

#include "ks_warn.h"

/** @returns 1 if @p wl holds a warning with @p code, else 0. */
static inline int ks_test_has_warning(const ks_warn_list_t *wl,
                                      const char           *code)
{
        size_t i;

        for (i = 0; i < wl->cnt; i++)
                if (!strcmp(wl->items[i].code, code))
                        return 1;
        return 0;
}

#endif /* KS_TEST_WARN_H */
