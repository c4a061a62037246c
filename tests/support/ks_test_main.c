/* SPDX-License-Identifier: Apache-2.0 */
#include "ks_test.h"

#include <stdio.h>
#include <stdlib.h>

const char *ks_test_shared_path(const char *rel)
{
        static char buf[4096];
        snprintf(buf, sizeof(buf), "%s/%s", KS_SOURCE_DIR "/tests/data", rel);
        return buf;
}

int main(void)
{
        if (CU_initialize_registry() != CUE_SUCCESS)
                return 2;
        ks_test_register();
        CU_basic_set_mode(CU_BRM_VERBOSE);
        CU_basic_run_tests();
        unsigned failed =
            CU_get_number_of_failures() + CU_get_number_of_tests_failed();
        unsigned run = CU_get_number_of_tests_run();
        CU_cleanup_registry();
        if (run == 0) {
                fprintf(stderr, "no test ran\n");
                return 1;
        }
        return failed ? 1 : 0;
}
