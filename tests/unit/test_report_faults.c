/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_report_faults.c
 * @brief Report paths that cannot be written, and a failed write's
 *        effect on the next (issue 30):
 *  - one report whose temporary file cannot be named (linkat(2) of a
 *    300-byte name: ENAMETOOLONG) must not make every later report of
 *    the process use a named temporary file (O_TMPFILE is kept per
 *    report, so a process killed mid-write leaves nothing behind);
 *  - ks_report_path_fits(): a file name fits NAME_MAX with the longest
 *    temporary suffix (".tmp.<pid>.<n>", 23 bytes), or is refused, as is
 *    a folder name over NAME_MAX and a path reaching PATH_MAX;
 *  - keyshift.report.path and keyshift.metrics.path refuse at
 *    rd_kafka_conf_set() (ks_config_set()) a template no client.id can
 *    make writable, and accept one a short client.id can.
 *
 * Oracle: the kernel's own limits (NAME_MAX 255, PATH_MAX 4096 in
 * <limits.h>), and open(2) itself: the names ks_report_path_fits() accepts
 * are created, the ones it refuses fail with ENAMETOOLONG.
 */
#include "ks_test.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ks_config.h"
#include "ks_report.h"

static char dir[256];

static int setup(void)
{
        snprintf(dir, sizeof(dir), "/tmp/keyshift-faults-%ld", (long)getpid());
        return mkdir(dir, 0755) ? -1 : 0;
}

static int teardown(void)
{
        char cmd[300];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        return system(cmd) ? -1 : 0;
}

/** @returns "DIR/" + @p n times 'a' + @p ext (static buffer). */
static const char *named(size_t n, const char *ext)
{
        static char p[8192];
        size_t      o = (size_t)snprintf(p, sizeof(p), "%s/", dir);
        memset(p + o, 'a', n);
        snprintf(p + o + n, sizeof(p) - o - n, "%s", ext);
        return p;
}

static void test_tmpfile_kept_after_failed_link(void)
{
        json_t            *r = json_pack("{s:s}", "schema", "x");
        ks_report_writer_t w;
        char               err[9000], good[512];

        /* is O_TMPFILE there at all (tmpfs, ext4, xfs, btrfs: yes)? */
        snprintf(good, sizeof(good), "%s", named(8, ".json"));
        CU_ASSERT_EQUAL_FATAL(ks_report_writer_open(&w, good), 0);
        if (!w.unnamed) {
                ks_report_writer_abort(&w);
                printf("\n    O_TMPFILE not supported under %s: skipped\n",
                       dir);
                json_decref(r);
                return;
        }
        ks_report_writer_abort(&w);
        /* a 300-byte name: the unnamed file cannot be linked */
        CU_ASSERT_EQUAL(
            ks_report_write_atomic(r, named(300, ".json"), err, sizeof(err)),
            -1);
        CU_ASSERT_PTR_NOT_NULL(strstr(err, "File name too long"));
        /* the next report, at a good path, is unnamed again */
        CU_ASSERT_EQUAL_FATAL(ks_report_writer_open(&w, good), 0);
        CU_ASSERT_EQUAL(w.unnamed, 1);
        ks_report_writer_abort(&w);
        json_decref(r);
}

/** @brief ks_report_path_fits(path) says what open(2) of the path's
 *         longest temporary name says. */
static void fits_as_open_says(const char *path)
{
        char why[256], tmp[8192];
        int  fd, fits = !ks_report_path_fits(path, why, sizeof(why));

        snprintf(tmp, sizeof(tmp), "%s.tmp.4194304.4294967295", path);
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0644);
        CU_ASSERT_EQUAL(fits, fd >= 0);
        if (fd < 0) {
                CU_ASSERT_EQUAL(errno, ENAMETOOLONG);
        } else {
                close(fd);
                unlink(tmp);
        }
        if (!fits)
                CU_ASSERT_PTR_NOT_NULL(strstr(why, "_MAX"));
}

static void test_path_fits(void)
{
        char        p[8192], why[256];
        size_t      o;
        const char *fold;

        fits_as_open_says(named(NAME_MAX - KS_REPORT_TMP_SUFFIX_MAX, ""));
        fits_as_open_says(named(NAME_MAX - KS_REPORT_TMP_SUFFIX_MAX + 1, ""));
        fits_as_open_says(named(300, ".json"));
        /* a folder name over NAME_MAX */
        fold = named(NAME_MAX + 1, "/r.json");
        CU_ASSERT_EQUAL(ks_report_path_fits(fold, why, sizeof(why)), -1);
        CU_ASSERT_PTR_NOT_NULL(strstr(why, "folder"));
        /* a path reaching PATH_MAX, of short components */
        for (o = 0; o + 3 < 4100;)
                o += (size_t)snprintf(p + o, sizeof(p) - o, "/ab");
        CU_ASSERT_EQUAL(ks_report_path_fits(p, why, sizeof(why)), -1);
        CU_ASSERT_PTR_NOT_NULL(strstr(why, "PATH_MAX"));
        CU_ASSERT_EQUAL(
            ks_report_path_fits("keyshift-%c-%p.json", why, sizeof(why)), 0);
}

static void test_conf_refuses_unwritable_path(void)
{
        ks_config_t c;
        char        err[1024], v[8192];

        CU_ASSERT_EQUAL_FATAL(ks_config_init(&c), 0);
        /* a literal name too long: never writable */
        CU_ASSERT_EQUAL(ks_config_set(&c, "keyshift.report.path",
                                      named(300, ".json"), err, sizeof(err)),
                        KS_CONFIG_INVALID);
        CU_ASSERT_PTR_NOT_NULL(strstr(err, "keyshift.report.path"));
        CU_ASSERT_PTR_NOT_NULL(strstr(err, "NAME_MAX"));
        /* too long even with %c and %p at their shortest */
        snprintf(v, sizeof(v), "%s", named(240, "-%c-%p.json"));
        CU_ASSERT_EQUAL(
            ks_config_set(&c, "keyshift.report.path", v, err, sizeof(err)),
            KS_CONFIG_INVALID);
        /* the metrics file alike */
        snprintf(v, sizeof(v), "%s", named(240, ".prom"));
        CU_ASSERT_EQUAL(
            ks_config_set(&c, "keyshift.metrics.path", v, err, sizeof(err)),
            KS_CONFIG_INVALID);
        CU_ASSERT_PTR_NOT_NULL(strstr(err, "keyshift.metrics.path"));
        /* a short client.id can make this one writable: accepted (the
         * producer checks its own expansion, plugin/ks_client.c) */
        snprintf(v, sizeof(v), "%s", named(200, "-%c.json"));
        CU_ASSERT_EQUAL(
            ks_config_set(&c, "keyshift.report.path", v, err, sizeof(err)),
            KS_CONFIG_OK);
        ks_config_destroy(&c);
}

void ks_test_register(void)
{
        CU_pSuite s = CU_add_suite("report faults", setup, teardown);
        CU_add_test(s, "O_TMPFILE kept after a failed link",
                    test_tmpfile_kept_after_failed_link);
        CU_add_test(s, "a path fits as open(2) says", test_path_fits);
        CU_add_test(s, "unwritable paths refused at conf_set",
                    test_conf_refuses_unwritable_path);
}
