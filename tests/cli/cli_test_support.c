/* SPDX-License-Identifier: Apache-2.0 */
#include "cli_test_support.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "ks_e2e_support.h"

const char *ks_clit_cli(void)
{
        const char *p = getenv("KS_CLI");
        return p && *p ? p : KS_SOURCE_DIR "/build/cli/keyshift";
}

char *ks_clit_read(const char *path, size_t *len)
{
        FILE  *fp = fopen(path, "rb");
        char  *buf;
        long   n;
        size_t got;

        if (!fp)
                return NULL;
        fseek(fp, 0, SEEK_END);
        n = ftell(fp);
        fseek(fp, 0, SEEK_SET);
        buf      = malloc((size_t)(n > 0 ? n : 0) + 1);
        got      = fread(buf, 1, (size_t)(n > 0 ? n : 0), fp);
        buf[got] = '\0';
        fclose(fp);
        if (len)
                *len = got;
        return buf;
}

void ks_clit_write(const char *path, const void *data, size_t len)
{
        FILE *fp = fopen(path, "wb");

        CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
        CU_ASSERT_EQUAL(fwrite(data, 1, len, fp), len);
        CU_ASSERT_EQUAL(fclose(fp), 0);
}

int ks_clit_run(ks_clit_run_t *r, const char *fmt, ...)
{
        char        out[512], err[512], *args, *cmd;
        static int  seq;
        const char *tmp = getenv("TMPDIR");
        va_list     ap;
        int         st, n;

        va_start(ap, fmt);
        n = vsnprintf(NULL, 0, fmt, ap);
        va_end(ap);
        args = malloc((size_t)n + 1);
        va_start(ap, fmt);
        vsnprintf(args, (size_t)n + 1, fmt, ap);
        va_end(ap);
        snprintf(out, sizeof(out), "%s/ks-clit-%d-%d.out",
                 tmp && *tmp ? tmp : "/tmp", (int)getpid(), seq);
        snprintf(err, sizeof(err), "%s/ks-clit-%d-%d.err",
                 tmp && *tmp ? tmp : "/tmp", (int)getpid(), seq++);
        cmd = malloc((size_t)n + 2048);
        snprintf(cmd, (size_t)n + 2048, "'%s' </dev/null %s >'%s' 2>'%s'",
                 ks_clit_cli(), args, out, err);
        fflush(stdout);
        st = system(cmd);
        free(cmd);
        memset(r, 0, sizeof(*r));
        if (st == -1) {
                r->status = -1;
        } else if (WIFEXITED(st) && WEXITSTATUS(st) >= 128) {
                /* the shell reports a child killed by a signal as 128+n */
                r->status = -1;
                r->signal = WEXITSTATUS(st) - 128;
        } else if (WIFSIGNALED(st)) {
                r->status = -1;
                r->signal = WTERMSIG(st);
        } else {
                r->status = WEXITSTATUS(st);
        }
        r->out = ks_clit_read(out, &r->out_len);
        r->err = ks_clit_read(err, NULL);
        if (!r->out)
                r->out = calloc(1, 1);
        if (!r->err)
                r->err = calloc(1, 1);
        unlink(out);
        unlink(err);
        printf("\n    $ keyshift %.160s%s -> exit %d%s\n", args,
               strlen(args) > 160 ? " ..." : "", r->status,
               r->signal ? " (killed by a signal)" : "");
        if (*r->err)
                printf("      stderr: %.600s%s", r->err,
                       r->err[strlen(r->err) - 1] == '\n' ? "" : "\n");
        free(args);
        return r->status;
}

void ks_clit_run_free(ks_clit_run_t *r)
{
        free(r->out);
        free(r->err);
        memset(r, 0, sizeof(*r));
}

int ks_clit_has(const char *hay, const char *needle)
{
        return hay && needle && strstr(hay, needle) != NULL;
}

void ks_clit_make_report(const char *path, int n)
{
        ks_e2e_producer_t p;
        rd_kafka_conf_t  *conf;
        uint64_t          s = 7;
        uint8_t           key[32];
        char              value[48];
        int               i;

        conf = ks_e2e_conf("keyshift.report.path", path,
                           "keyshift.report.interval.ms", "0",
                           "keyshift.partitions.proposed", "8,12", NULL);
        CU_ASSERT_FATAL(ks_e2e_producer_new(&p, conf, "orders", 6) == 0);
        for (i = 0; i < n; i++) {
                /* a skewed id: the square of a uniform variate */
                double   u;
                uint32_t id;
                size_t   kl;
                s  = s * 6364136223846793005ULL + 1442695040888963407ULL;
                u  = (double)(s >> 11) / 9007199254740992.0;
                id = (uint32_t)(u * u * u * 2000);
                if (id % 7 == 0 && i % 2) {
                        uint32_t v = 1000000 + id;
                        key[0]     = (uint8_t)(v >> 24);
                        key[1]     = (uint8_t)(v >> 16);
                        key[2]     = (uint8_t)(v >> 8);
                        key[3]     = (uint8_t)v;
                        kl         = 4;
                } else {
                        kl = (size_t)snprintf((char *)key, sizeof(key), "%u",
                                              1000000 + id);
                }
                snprintf(value, sizeof(value), "order %d", i);
                ks_e2e_produce(&p, "orders", i % 50 == 0 ? NULL : key, kl, -1,
                               value, strlen(value));
        }
        ks_e2e_producer_close(&p);
        ks_e2e_producer_free(&p);
}
