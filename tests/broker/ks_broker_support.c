/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_broker_support.c
 * @brief The broker tests' small helpers: clocks, temporary folders, the
 *        Java reference (java-oracle.sh) and the summary the fixture
 *        prints (see ks_broker_support.h). Hex: ks_hex.h, the core's.
 */
#include "ks_broker_support.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <CUnit/CUnit.h>

#include "ks_e2e_support.h"

void ks_broker_tmpdir_done(const char *dir)
{
        if (CU_get_number_of_failures()) {
                fprintf(stderr, "kept for inspection: %s\n", dir);
                return;
        }
        ks_e2e_system("rm -rf '%s'", dir);
}

double ks_broker_now_s(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int64_t ks_broker_wall_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ------------------------------------------------------------- Java */

static const char *broker_dir(void)
{
        const char *d = getenv("KS_BROKER_DIR");
        return d && *d ? d : KS_BROKER_DIR;
}

int ks_broker_java(const char *args, const char *in_path, const char *out_path)
{
        char  err_path[4200];
        int   rc;
        FILE *fp;

        snprintf(err_path, sizeof(err_path), "%s.stderr", out_path);
        rc = ks_e2e_system("'%s/java-oracle.sh' %s <'%s' >'%s' 2>'%s'",
                           broker_dir(), args, in_path ? in_path : "/dev/null",
                           out_path, err_path);
        if (rc == 0)
                return 0;
        fprintf(stderr, "java-oracle.sh %s: exit status %d; its stderr:\n",
                args, rc);
        if ((fp = fopen(err_path, "r"))) {
                char line[1024];
                while (fgets(line, sizeof(line), fp))
                        fprintf(stderr, "  %s", line);
                fclose(fp);
        }
        fprintf(stderr,
                "The Java reference needs Java 17+ and Maven (to build it "
                "once against kafka-clients). This test does not skip "
                "itself when they are missing: it fails. To leave the "
                "broker tests out (outside CI only) run tests/run "
                "--unit-only.\n");
        return rc;
}

/* ---------------------------------------------------------- summary */

void ks_broker_summary(const char *name, const char *fmt, ...)
{
        static char opened[8][64];
        const char *state = getenv("KS_BROKER_STATE");
        char        path[4200], line[2048];
        int         first = 1, i;
        va_list     ap;
        FILE       *fp;

        va_start(ap, fmt);
        vsnprintf(line, sizeof(line), fmt, ap);
        va_end(ap);
        printf("%s\n", line);
        fflush(stdout);
        if (!state || !*state)
                return;
        for (i = 0; i < 8 && opened[i][0]; i++)
                if (!strcmp(opened[i], name))
                        first = 0;
        if (first && i < 8)
                snprintf(opened[i], sizeof(opened[i]), "%s", name);
        snprintf(path, sizeof(path), "%s/summary", state);
        mkdir(state, 0755);
        mkdir(path, 0755);
        snprintf(path, sizeof(path), "%s/summary/%s.md", state, name);
        if ((fp = fopen(path, first ? "w" : "a"))) {
                fprintf(fp, "%s\n", line);
                fclose(fp);
        }
}
