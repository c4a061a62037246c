/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ais_reader.c
 * @brief Line reader for plain or gzip-compressed AIS logs (see
 *        ais_reader.h).
 */
#include "ais_reader.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

/** First buffer size; AIS sentences are at most 82 characters, log lines
 *  with prefixes rarely above a few hundred. */
#define KS_AIS_READER_INITIAL 1024

/** Longest line accepted (a corrupt file without newlines would otherwise
 *  be read into memory whole). */
#define KS_AIS_READER_MAX (64u * 1024u * 1024u)

struct ks_ais_reader {
        gzFile   gz;
        char    *buf;
        size_t   size;
        uint64_t line_no;
        char     error[256];
};

ks_ais_reader_t *ks_ais_reader_open(const char *path, char *errstr,
                                    size_t errstr_size)
{
        ks_ais_reader_t *r = calloc(1, sizeof(*r));
        int              err;

        if (!r || !(r->buf = malloc(KS_AIS_READER_INITIAL))) {
                free(r);
                snprintf(errstr, errstr_size, "%s: out of memory", path);
                errno = ENOMEM;
                return NULL;
        }
        r->size = KS_AIS_READER_INITIAL;
        errno   = 0;
        if (!strcmp(path, "-"))
                r->gz = gzdopen(dup(STDIN_FILENO), "rb");
        else
                r->gz = gzopen(path, "rb");
        if (!r->gz) {
                err = errno ? errno : ENOMEM;
                snprintf(errstr, errstr_size, "%s: %s", path, strerror(err));
                free(r->buf);
                free(r);
                errno = err;
                return NULL;
        }
        return r;
}

/** @brief Records zlib's error (or errno's) in r->error. @returns -1. */
static int ks_ais_reader_fail(ks_ais_reader_t *r)
{
        int         zerr;
        const char *msg = gzerror(r->gz, &zerr);

        if (zerr == Z_ERRNO)
                msg = strerror(errno);
        snprintf(r->error, sizeof(r->error), "line %llu: %s",
                 (unsigned long long)r->line_no + 1,
                 msg && *msg ? msg : "read error");
        return -1;
}

int ks_ais_reader_next(ks_ais_reader_t *r, const char **line, size_t *len)
{
        size_t used = 0;

        for (;;) {
                char *nul;
                /* gzgets() ends what it read with a NUL; a line may hold NUL
                 * bytes itself, so fill the space with non-NUL bytes first
                 * and take the last NUL as the end. */
                memset(r->buf + used, 1, r->size - used);
                if (!gzgets(r->gz, r->buf + used, (int)(r->size - used))) {
                        int zerr;
                        gzerror(r->gz, &zerr);
                        /* Z_BUF_ERROR here: a truncated gzip stream. */
                        if (zerr != Z_OK)
                                return ks_ais_reader_fail(r);
                        if (used == 0)
                                return 0; /* end of file */
                        break;            /* last line, no newline */
                }
                nul  = memrchr(r->buf + used, '\0', r->size - used);
                used = nul ? (size_t)(nul - r->buf) : r->size - 1;
                if (used > 0 && r->buf[used - 1] == '\n')
                        break;
                if (used + 1 < r->size)
                        continue; /* no newline but room left: EOF next */
                if (r->size >= KS_AIS_READER_MAX) {
                        snprintf(r->error, sizeof(r->error),
                                 "line %llu: longer than %u bytes",
                                 (unsigned long long)r->line_no + 1,
                                 KS_AIS_READER_MAX);
                        return -1;
                }
                {
                        char *nbuf = realloc(r->buf, r->size * 2);
                        if (!nbuf) {
                                snprintf(r->error, sizeof(r->error),
                                         "out of memory");
                                return -1;
                        }
                        r->buf = nbuf;
                        r->size *= 2;
                }
        }
        r->buf[used] = '\0';
        while (used > 0 &&
               (r->buf[used - 1] == '\n' || r->buf[used - 1] == '\r'))
                r->buf[--used] = '\0';
        r->line_no++;
        *line = r->buf;
        *len  = used;
        return 1;
}

uint64_t ks_ais_reader_line_no(const ks_ais_reader_t *r)
{
        return r->line_no;
}

const char *ks_ais_reader_error(const ks_ais_reader_t *r)
{
        return r->error;
}

void ks_ais_reader_close(ks_ais_reader_t *r)
{
        if (!r)
                return;
        gzclose(r->gz);
        free(r->buf);
        free(r);
}
