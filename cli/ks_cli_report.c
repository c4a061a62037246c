/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli_report.c
 * @brief Reads a report file (ks_cli_report_check.c checks it). The
 *        accessors the subcommands read checked members with are
 *        ks_cli_report_fields.c's.
 */
#include "ks_cli_report.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ks_report.h"

/** Bytes of a report looked at before it is parsed: enough to tell an
 *  empty file, binary data and text that is no JSON object. */
#define KS_REPORT_HEAD 4096

/** A report being read: its descriptor and the head already read, which
 *  json_load_callback() gets first (a pipe cannot be read again). */
typedef struct ks_report_in {
        int    fd;
        char   head[KS_REPORT_HEAD];
        size_t head_len, head_at;
        int    read_errno; /**< a read error, said after the parse */
} ks_report_in_t;

/** @brief jansson's reader: the head, then the rest of the file. */
static size_t ks_report_read(void *buf, size_t size, void *arg)
{
        ks_report_in_t *in = arg;
        ssize_t         n;

        if (in->head_at < in->head_len) {
                size_t k = in->head_len - in->head_at;
                if (k > size)
                        k = size;
                memcpy(buf, in->head + in->head_at, k);
                in->head_at += k;
                return k;
        }
        do
                n = read(in->fd, buf, size);
        while (n < 0 && errno == EINTR);
        if (n < 0) {
                in->read_errno = errno;
                return (size_t)-1;
        }
        return (size_t)n;
}

int ks_cli_report_open_fd(const char *path, char *err, size_t errsz)
{
        int         is_stdin = !strcmp(path, "-");
        int         fd;
        struct stat st;

        fd = is_stdin ? STDIN_FILENO
                      : open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0) {
                snprintf(err, errsz, "%s: cannot open: %s", path,
                         strerror(errno));
                return -1;
        }
        if (fstat(fd, &st)) {
                snprintf(err, errsz, "%s: cannot read: %s", path,
                         strerror(errno));
                goto fail;
        }
        if (S_ISDIR(st.st_mode)) {
                snprintf(err, errsz, "%s: is a directory, not a report", path);
                goto fail;
        }
        if (!is_stdin && !S_ISREG(st.st_mode)) {
                snprintf(err, errsz,
                         "%s: not a regular file (%s): keyshift reads reports "
                         "from files, or from standard input as -",
                         path,
                         S_ISFIFO(st.st_mode)   ? "a FIFO"
                         : S_ISCHR(st.st_mode)  ? "a character device"
                         : S_ISBLK(st.st_mode)  ? "a block device"
                         : S_ISSOCK(st.st_mode) ? "a socket"
                                                : "not a file");
                goto fail;
        }
        if (!is_stdin) /* a regular file never blocks: reads as usual */
                fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
        return fd;
fail:
        if (!is_stdin)
                close(fd);
        return -1;
}

/**
 * @brief Opens @p path (ks_cli_report_open_fd()) and reads its head. The
 *        rest is read by the parser as it goes, not held twice.
 * @returns 0, or -1 with @p err = "PATH: problem" (the file closed).
 */
static int ks_report_open(const char *path, ks_report_in_t *in, char *err,
                          size_t errsz)
{
        int     is_stdin = !strcmp(path, "-");
        ssize_t got;

        memset(in, 0, sizeof(*in));
        if ((in->fd = ks_cli_report_open_fd(path, err, errsz)) < 0)
                return -1;
        while (in->head_len < sizeof(in->head)) {
                got = read(in->fd, in->head + in->head_len,
                           sizeof(in->head) - in->head_len);
                if (got < 0 && errno == EINTR)
                        continue;
                if (got < 0) {
                        snprintf(err, errsz, "%s: cannot read: %s", path,
                                 strerror(errno));
                        goto fail;
                }
                if (!got)
                        break;
                in->head_len += (size_t)got;
        }
        return 0;
fail:
        if (!is_stdin)
                close(in->fd);
        return -1;
}

/** @returns the offset of the first byte of @p b that JSON text never
 *           holds raw (a control character other than tab and line ends,
 *           DEL), or @p n when there is none: a binary file. */
static size_t ks_report_binary_at(const char *b, size_t n)
{
        size_t i;

        for (i = 0; i < n; i++) {
                unsigned char c = (unsigned char)b[i];
                if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') ||
                    c == 0x7f)
                        return i;
        }
        return n;
}

/** @brief Copies @p in to @p out with every byte that is not printable
 *         ASCII written as \xNN: a parser's message quotes the input, and
 *         a terminal must not get raw bytes of a binary file. */
static void ks_report_printable(const char *in, char *out, size_t outsz)
{
        size_t o = 0;

        for (; *in && o + 5 < outsz; in++) {
                unsigned char c = (unsigned char)*in;
                if (c >= 0x20 && c < 0x7f)
                        out[o++] = (char)c;
                else
                        o += (size_t)snprintf(out + o, outsz - o, "\\x%02x", c);
        }
        out[o] = '\0';
}

int ks_cli_report_head_refused(const char *path, const char *head, size_t len,
                               int whole, char *err, size_t errsz)
{
        size_t i, bin;

        if (len > KS_REPORT_HEAD)
                len = KS_REPORT_HEAD;
        for (i = 0; i < len && strchr(" \t\r\n", head[i]); i++)
                ;
        if (i == len && whole) {
                snprintf(err, errsz,
                         "%s: not a keyshift report: the file is empty%s", path,
                         len ? " (white space only)" : "");
                return -1;
        }
        if ((bin = ks_report_binary_at(head, len)) < len) {
                snprintf(err, errsz,
                         "%s: not a keyshift report: binary data (byte 0x%02x "
                         "at offset %zu), not JSON text",
                         path, (unsigned char)head[bin], bin);
                return -1;
        }
        return 0;
}

int ks_cli_report_load(const char *path, ks_cli_report_t *r, char *err,
                       size_t errsz)
{
        json_error_t   jerr;
        ks_report_in_t in;
        char           text[4 * JSON_ERROR_TEXT_LENGTH];
        size_t         i;
        int            is_stdin = !strcmp(path, "-");

        r->path = path;
        r->root = NULL;
        if (ks_report_open(path, &in, err, errsz))
                return -1;
        for (i = 0; i < in.head_len && strchr(" \t\r\n", in.head[i]); i++)
                ;
        if (ks_cli_report_head_refused(path, in.head, in.head_len,
                                       in.head_len < sizeof(in.head), err,
                                       errsz))
                ;
        else if (!(r->root = json_load_callback(
                       ks_report_read, &in, JSON_REJECT_DUPLICATES, &jerr))) {
                /* truncated: a report that began and ended early; text
                 * that never began as an object is not one */
                int obj = i < in.head_len && in.head[i] == '{';
                int eof = (strstr(jerr.text, "end of file") ||
                           strstr(jerr.text, "premature end of input")) &&
                          obj;
                ks_report_printable(jerr.text, text, sizeof(text));
                if (in.read_errno)
                        snprintf(err, errsz, "%s: cannot read: %s", path,
                                 strerror(in.read_errno));
                else
                        snprintf(err, errsz,
                                 "%s: not valid JSON at line %d, column %d: "
                                 "%s%s",
                                 path, jerr.line, jerr.column, text,
                                 eof    ? " (the file ends before the report "
                                          "does: truncated)"
                                 : !obj ? " (not a keyshift report: it does "
                                          "not begin with '{')"
                                        : "");
        }
        if (!is_stdin)
                close(in.fd);
        if (!r->root)
                return -1;
        if (ks_cli_report_check(r->root, path, err, errsz) ||
            ks_cli_report_rows(r->root, path, err, errsz)) {
                ks_cli_report_free(r);
                return -1;
        }
        return 0;
}

int ks_cli_report_rows(json_t *root, const char *path, char *err, size_t errsz)
{
        json_t     *t;
        const char *name;
        char        why[256];

        json_object_foreach(json_object_get(root, "topics"), name, t)
        {
                json_t *h = json_object_get(t, "hot_keys");
                json_t *rows;
                if (!json_is_object(h))
                        continue;
                if (!(rows = ks_report_hot_keys_rows(h, why, sizeof(why)))) {
                        snprintf(err, errsz, "%s: topics.%s.hot_keys: %s", path,
                                 name, *why ? why : "out of memory");
                        return -1;
                }
                json_object_set_new(t, "hot_keys", rows);
        }
        return 0;
}

void ks_cli_report_free(ks_cli_report_t *r)
{
        json_decref(r->root);
        r->root = NULL;
}

json_t *ks_cli_report_topics(const ks_cli_report_t *r)
{
        return json_object_get(r->root, "topics");
}
