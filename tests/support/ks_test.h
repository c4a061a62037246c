/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_test.h
 * @brief Shared test scaffolding: each test program defines
 *        ks_test_register() to add its CUnit suites; main() runs them with
 *        the basic interface and exits non-zero on any failure.
 */
#ifndef KS_TEST_H
#define KS_TEST_H

#include <stddef.h>

#include <CUnit/Basic.h>
#include <CUnit/CUnit.h>

/** Implemented by each test program: adds its suites to the registry. */
void ks_test_register(void);

/** @returns the path of a committed fixture shared by the tests,
 *           tests/data/@p rel in the source tree (e.g. "ais/risky_ais.txt.gz":
 *           tests/data/ais/README.md), in a static buffer. */
const char *ks_test_shared_path(const char *rel);

/** @returns tests/unit/data/@p name (KS_UNIT_DATA overrides the folder),
 *           in a static buffer. */
const char *ks_test_data_path(const char *name);

/** @brief Splits @p line at tabs in place (drops the line end).
 *  @returns the number of fields (at most @p max). */
int ks_test_split_tabs(char *line, char **f, int max);

/** @brief Decodes hex @p s into @p out. @returns the length, or -1. */
long ks_test_unhex(const char *s, unsigned char *out, size_t outsz);

/**
 * @brief Validates the keyshift report at @p path against the published
 *        schema, docs/keyshift.report.v2.schema.json, with
 *        python3-jsonschema (tests/support/validate_report.py run by
 *        /usr/bin/python3, Debian's, which tests/run installs it into),
 *        printing the first problem and failing the current test.
 * @returns 0 when valid, else non-zero.
 */
int ks_test_report_valid(const char *path);

#define KS_ADD_SUITE(name, tests...)                                           \
        do {                                                                   \
                CU_pSuite    s_ = CU_add_suite(name, NULL, NULL);              \
                CU_TestInfo *t_ = (CU_TestInfo[]){tests, CU_TEST_INFO_NULL};   \
                for (; t_->pName; t_++)                                        \
                        CU_add_test(s_, t_->pName, t_->pTestFunc);             \
        } while (0)

#endif
