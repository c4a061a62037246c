/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_report_write.c
 * @brief Writes a report file atomically, topic by topic.
 *
 * Why topic by topic: a report of 50 topics x 1,000 partitions held as one
 * jansson tree took ~340 MiB and ~3 s to build and dump (bench/README.md,
 * target 6). Here the head is written first, then each topic's object is
 * dumped as soon as it is built and freed before the next is built, then
 * the producer-level warnings (which the topics add to) close the file
 * (ks_report_bulk.c writes a topic).
 * At most one topic's tree is in memory at a time.
 *
 * Why compact: indentation made the file ~2.5 times larger (every value of
 * the per-partition arrays on its own line), and writing plus fsync'ing
 * the bytes was half of the time. Readers parse JSON, not lines.
 *
 * Atomic as before: a temporary file in the same directory, fsync'ed, then
 * rename()d over the path, so a reader sees the previous report or this
 * one, never part of one.
 *
 * Why O_TMPFILE: a process killed while it writes a report (seconds at
 * thousands of topics) left `<report>.tmp.<pid>.<n>` behind, megabytes that
 * nothing removed. The file is now made unnamed (Linux open(2) O_TMPFILE in
 * the report's directory), so the kernel frees it with the process; only
 * once it is complete and fsync'ed is it given the temporary name
 * (linkat(2) of /proc/self/fd/N, AT_SYMLINK_FOLLOW) and renamed over the
 * report, microseconds later. Where O_TMPFILE or /proc is missing (other
 * file systems, old kernels) the named temporary file is the fallback, and
 * ks_report_remove_stale() removes what a dead process left.
 *
 * @locality keyshift's reporter thread, the application thread writing the
 *           final report, or the CLI. One writer per file.
 */
#include "ks_report.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/** Compact, in the order the members were set (the schema's order). */
#define KS_REPORT_DUMP_FLAGS (JSON_COMPACT | JSON_PRESERVE_ORDER)

/** stdio buffer of the report file: few large writes. */
#define KS_REPORT_BUFSIZE (1 << 20)

/** Bytes written between two writeback starts (ks_report_writer_kick()). */
#define KS_REPORT_KICK_BYTES (4L << 20)

static void writer_fail(ks_report_writer_t *w, const char *what)
{
        if (!w->failed)
                snprintf(w->errstr, sizeof(w->errstr), "cannot %s %s: %s", what,
                         w->tmp, strerror(errno ? errno : EIO));
        w->failed = 1;
}

/** Set once O_TMPFILE's file could not be named because linking a
 *  /proc/self/fd entry is not supported here: named temporary files from
 *  then on. */
static atomic_int ks_unnamed_off;

/** @brief The temporary name beside @p path for this process's next
 *  report: `<path>.tmp.<pid>.<n>`. @returns 0, -1 if too long. */
static int tmp_name(ks_report_writer_t *w)
{
        static atomic_uint seq;

        if (snprintf(w->tmp, sizeof(w->tmp), "%s.tmp.%ld.%u", w->path,
                     (long)getpid(),
                     atomic_fetch_add(&seq, 1)) < (int)sizeof(w->tmp))
                return 0;
        snprintf(w->errstr, sizeof(w->errstr), "report path too long: %s",
                 w->path);
        w->failed = 1;
        return -1;
}

/** @brief Opens an unnamed file (O_TMPFILE) in @p path's directory.
 *  @returns its descriptor, or -1 (then the caller falls back). */
static int open_unnamed(const char *path)
{
#ifdef O_TMPFILE
        char        dir[4096];
        const char *slash = strrchr(path, '/');
        size_t      n     = slash ? (size_t)(slash - path) : 1;

        if (atomic_load(&ks_unnamed_off) || n >= sizeof(dir) ||
            access("/proc/self/fd", X_OK))
                return -1;
        memcpy(dir, slash ? (n ? path : "/") : ".", n ? n : 1);
        dir[n ? n : 1] = '\0';
        /* mode 0666: the process's umask decides who may read the report
         * (it holds key values), as for the named file */
        return open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
#else
        (void)path;
        return -1;
#endif
}

/** @brief Gives the complete unnamed file its temporary name (linkat of
 *  /proc/self/fd/N). @returns 0, or -1 with the writer failed. */
static int name_unnamed(ks_report_writer_t *w, int fd)
{
        char proc[64];
        int  tries;

        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        for (tries = 0; tries < 100; tries++) {
                if (!linkat(AT_FDCWD, proc, AT_FDCWD, w->tmp,
                            AT_SYMLINK_FOLLOW)) {
                        w->created = 1;
                        return 0;
                }
                if (errno != EEXIST || tmp_name(w))
                        break;
        }
        /* named from now on only when naming an unnamed file is what
         * fails here, not this report's name or folder (a name too long,
         * a full disk, a folder removed): one report's failure must not
         * take O_TMPFILE from every later one (issue 30) */
        if (errno == EOPNOTSUPP || errno == EPERM || errno == EINVAL ||
            errno == ENOSYS || errno == EXDEV)
                atomic_store(&ks_unnamed_off, 1);
        writer_fail(w, "link");
        return -1;
}

int ks_report_writer_open(ks_report_writer_t *w, const char *path)
{
        int fd = -1, tries;

        memset(w, 0, sizeof(*w));
        w->path = path;
        if (tmp_name(w))
                return -1;
        if ((fd = open_unnamed(path)) != -1) {
                w->unnamed = 1;
        } else {
                /* O_EXCL with mode 0666: the process's umask decides who
                 * may read the report (it holds key values). */
                for (tries = 0; fd == -1 && tries < 100; tries++) {
                        if (tries && tmp_name(w))
                                return -1;
                        fd =
                            open(w->tmp,
                                 O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
                        if (fd == -1 && errno != EEXIST)
                                break;
                }
                if (fd == -1) {
                        writer_fail(w, "create");
                        return -1;
                }
                w->created = 1;
        }
        if (!(w->fp = fdopen(fd, "w"))) {
                writer_fail(w, "open");
                close(fd);
                ks_report_writer_abort(w);
                return -1;
        }
        /* A failed setvbuf keeps stdio's default buffer: slower, not wrong */
        (void)setvbuf(w->fp, NULL, _IOFBF, KS_REPORT_BUFSIZE);
        return 0;
}

/* A temporary name of keyshift's: `<base>.tmp.<pid>.<n>`, digits only. */
static long stale_pid(const char *name, const char *base, size_t base_len)
{
        const char *p = name + base_len + 5;
        char       *e;
        long        pid;

        if (strncmp(name, base, base_len) ||
            strncmp(name + base_len, ".tmp.", 5) || *p < '1' || *p > '9')
                return 0;
        pid = strtol(p, &e, 10);
        if (*e != '.' || e[1] < '0' || e[1] > '9')
                return 0;
        for (p = e + 1; *p; p++)
                if (*p < '0' || *p > '9')
                        return 0;
        return pid;
}

size_t ks_report_remove_stale(const char *path, int64_t older_than_s)
{
        const char    *slash    = strrchr(path, '/');
        const char    *base     = slash ? slash + 1 : path;
        size_t         base_len = strlen(base), n = 0;
        char           dir[4096];
        DIR           *d;
        struct dirent *e;
        time_t         now = time(NULL);

        if (!base_len || (slash && (size_t)(slash - path) >= sizeof(dir)))
                return 0;
        if (slash)
                snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
        else
                snprintf(dir, sizeof(dir), ".");
        if (!(d = opendir(*dir ? dir : "/")))
                return 0;
        while ((e = readdir(d))) {
                long        pid = stale_pid(e->d_name, base, base_len);
                struct stat st;

                if (pid <= 0 || pid == (long)getpid() ||
                    !(kill((pid_t)pid, 0) == -1 && errno == ESRCH) ||
                    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
                    !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
                    now - st.st_mtime < older_than_s)
                        continue;
                n += !unlinkat(dirfd(d), e->d_name, 0);
        }
        closedir(d);
        return n;
}

/** @brief Copies @p n bytes of @p s into @p keep (NULL: none), emptied
 *         first; ENOMEM sets keep->failed, which its reader checks. */
static void keep_text(ks_report_text_t *keep, const char *s, size_t n)
{
        if (!keep)
                return;
        keep->len    = 0;
        keep->failed = 0;
        (void)ks_report_text_append(keep, s, n);
}

/** @brief Writes @p j's dump without its closing brace (an object), and
 *         keeps it in w->keep_head. @returns 0, -1 on failure. */
static int put_open_object(ks_report_writer_t *w, const json_t *j)
{
        char  *s = j ? json_dumps(j, KS_REPORT_DUMP_FLAGS) : NULL;
        size_t n = s ? strlen(s) : 0;
        int    r = -1;

        if (n >= 2 && s[n - 1] == '}') {
                r = fwrite(s, 1, n - 1, w->fp) == n - 1 ? 0 : -1;
                keep_text(w->keep_head, s, n - 1);
        }
        free(s);
        return r;
}

int ks_report_writer_begin(ks_report_writer_t         *w,
                           const ks_report_producer_t *producer,
                           const ks_report_opts_t     *opts)
{
        json_t *head;
        int     r;

        if (w->failed)
                return -1;
        head  = ks_report_head(producer, opts);
        errno = 0;
        r     = put_open_object(w, head);
        json_decref(head);
        if (r || fputs(",\"topics\":{", w->fp) == EOF) {
                writer_fail(w, head ? "write" : "build the report head for");
                return -1;
        }
        return 0;
}

int ks_report_text_append(ks_report_text_t *t, const char *s, size_t n)
{
        if (t->failed)
                return -1;
        if (t->len + n > t->cap) {
                size_t cap = t->cap ? t->cap : 4096;
                char  *b;
                while (cap < t->len + n)
                        cap *= 2;
                if (!(b = realloc(t->b, cap))) {
                        t->failed = 1;
                        return -1;
                }
                t->b   = b;
                t->cap = cap;
        }
        memcpy(t->b + t->len, s, n);
        t->len += n;
        return 0;
}

void ks_report_text_free(ks_report_text_t *t)
{
        free(t->b);
        memset(t, 0, sizeof(*t));
}

int ks_report_writer_topic_text(ks_report_writer_t *w, const char *text,
                                size_t len, uint64_t messages)
{
        if (w->failed)
                return -1;
        errno = 0;
        if ((w->topics && fputc(',', w->fp) == EOF) ||
            fwrite(text, 1, len, w->fp) != len) {
                writer_fail(w, "write");
                return -1;
        }
        w->messages += messages;
        w->topics++;
        ks_report_writer_kick(w);
        return 0;
}

/** @brief Flushes, fsyncs and closes the temporary file. @returns 0/-1. */
static int writer_close(ks_report_writer_t *w)
{
        FILE *fp = w->fp;

        w->fp = NULL;
        errno = 0;
        if (fflush(fp) || fsync(fileno(fp))) {
                writer_fail(w, "write");
                fclose(fp);
                return -1;
        }
        if (w->unnamed && name_unnamed(w, fileno(fp))) {
                fclose(fp);
                return -1;
        }
        if (fclose(fp)) {
                writer_fail(w, "write");
                return -1;
        }
        return 0;
}

int ks_report_writer_end(ks_report_writer_t *w, const ks_warn_list_t *wl,
                         char *errstr, size_t errstr_size)
{
        json_t *warnings;
        char   *text = NULL;
        int     r;

        if (!w->failed) {
                warnings = ks_warn_list_json(wl, NULL);
                text     = warnings ? json_dumps(warnings, KS_REPORT_DUMP_FLAGS)
                                    : NULL;
                errno    = 0;
                r        = !text ||
                    fprintf(w->fp, "},\"messages\":%llu,\"warnings\":",
                            (unsigned long long)w->messages) < 0 ||
                    fputs(text, w->fp) == EOF || fputs("}\n", w->fp) == EOF;
                if (text)
                        keep_text(w->keep_warnings, text, strlen(text));
                free(text);
                json_decref(warnings);
                if (r)
                        writer_fail(w, "write");
        }
        return ks_report_writer_finish(w, errstr, errstr_size);
}

int ks_report_writer_finish(ks_report_writer_t *w, char *errstr,
                            size_t errstr_size)
{
        struct stat st;

        if (w->fp && !w->failed)
                writer_close(w);
        /* the path is replaced only when it is a report of ours or new: a
         * symbolic link, FIFO, device or folder there (e.g. /dev/stdout
         * as root) would itself be replaced by the rename */
        if (!w->failed && !lstat(w->path, &st) && !S_ISREG(st.st_mode)) {
                snprintf(w->errstr, sizeof(w->errstr),
                         "%s exists and is not a regular file (a symbolic "
                         "link, FIFO, device or folder): not replaced",
                         w->path);
                w->failed = 1;
        }
        if (!w->failed && rename(w->tmp, w->path)) {
                snprintf(w->errstr, sizeof(w->errstr),
                         "cannot rename %s to %s: %s", w->tmp, w->path,
                         strerror(errno));
                w->failed = 1;
        } else if (!w->failed) {
                w->created = 0; /* it is the report now */
        }
        if (w->failed) {
                ks_report_writer_abort(w);
                snprintf(errstr, errstr_size, "%s", w->errstr);
                return -1;
        }
        return 0;
}

/*
 * Why kick: a report of 50 topics x 1,000 partitions is ~29 MB, and the
 * fsync that makes it durable before the rename waited 20-35 ms for all of
 * it to reach the disk (bench/ksb_report). Starting the writeback of each
 * few MB as soon as they are written (sync_file_range(), Linux, returns
 * without waiting) overlaps the disk with building the next topics; the
 * fsync still comes last and still decides durability.
 */
void ks_report_writer_kick(ks_report_writer_t *w)
{
#ifdef SYNC_FILE_RANGE_WRITE
        int   fd;
        off_t at;

        if (w->failed || !w->fp)
                return;
        fd = fileno(w->fp);
        at = lseek(fd, 0, SEEK_CUR); /* what the kernel has: past stdio */
        if (at < 0 || at - w->kicked < KS_REPORT_KICK_BYTES)
                return;
        /* A failure is no error: fsync() writes whatever was not started */
        (void)sync_file_range(fd, w->kicked, at - w->kicked,
                              SYNC_FILE_RANGE_WRITE);
        w->kicked = (long)at;
#else
        (void)w;
#endif
}

void ks_report_writer_abort(ks_report_writer_t *w)
{
        if (w->fp) {
                fclose(w->fp);
                w->fp = NULL;
        }
        if (w->created)
                unlink(w->tmp);
        w->created = 0;
        w->failed  = 1;
}

int ks_report_write_atomic(const json_t *report, const char *path, char *errstr,
                           size_t errstr_size)
{
        ks_report_writer_t w;
        json_t            *file;

        if (ks_report_writer_open(&w, path)) {
                snprintf(errstr, errstr_size, "%s", w.errstr);
                return -1;
        }
        errno = 0;
        file  = ks_report_file_form(report); /* hot keys as columns */
        if (!file || json_dumpf(file, w.fp, KS_REPORT_DUMP_FLAGS) ||
            fputc('\n', w.fp) == EOF)
                writer_fail(&w, "write");
        json_decref(file);
        return ks_report_writer_finish(&w, errstr, errstr_size);
}

/* Why check a path before writing: a report path that cannot be written
 * (a name over NAME_MAX once the temporary suffix is added, a path over
 * PATH_MAX) failed only at the first report, after the producer had run
 * for a report interval, or after `keyshift scan` had read millions of
 * records (issue 30). */
int ks_report_path_fits(const char *path, char *why, size_t whysz)
{
        const char *c   = path, *slash;
        size_t      len = strlen(path), n;

        if (len + KS_REPORT_TMP_SUFFIX_MAX >= KS_REPORT_PATH_MAX) {
                snprintf(why, whysz,
                         "the path is %zu bytes, and with the temporary "
                         "file's suffix (up to %d) it reaches PATH_MAX (%d)",
                         len, KS_REPORT_TMP_SUFFIX_MAX, KS_REPORT_PATH_MAX);
                return -1;
        }
        for (;;) {
                slash = strchr(c, '/');
                n     = slash ? (size_t)(slash - c) : strlen(c);
                if (!slash && n + KS_REPORT_TMP_SUFFIX_MAX > NAME_MAX) {
                        snprintf(why, whysz,
                                 "its file name is %zu bytes, and with the "
                                 "temporary file's suffix (up to %d) it "
                                 "exceeds NAME_MAX (%d)",
                                 n, KS_REPORT_TMP_SUFFIX_MAX, NAME_MAX);
                        return -1;
                }
                if (n > NAME_MAX) {
                        snprintf(why, whysz,
                                 "a folder's name is %zu bytes, over NAME_MAX "
                                 "(%d)",
                                 n, NAME_MAX);
                        return -1;
                }
                if (!slash)
                        return 0;
                c = slash + 1;
        }
}

int ks_report_path_check(const char *path, char *why, size_t whysz)
{
        const char *slash = strrchr(path, '/');
        char        dir[KS_REPORT_PATH_MAX];
        struct stat st;

        if (ks_report_path_fits(path, why, whysz))
                return -1;
        if (!*path || (slash && !slash[1])) {
                snprintf(why, whysz, "not a file name");
                return -1;
        }
        if (slash == path)
                snprintf(dir, sizeof(dir), "/");
        else if (slash)
                snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
        else
                snprintf(dir, sizeof(dir), ".");
        if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
                snprintf(why, whysz, "%s is not a folder", dir);
                return -1;
        }
        if (access(dir, W_OK | X_OK)) {
                snprintf(why, whysz, "the folder %s is not writable: %s", dir,
                         strerror(errno));
                return -1;
        }
        if (!lstat(path, &st) && !S_ISREG(st.st_mode)) {
                snprintf(why, whysz,
                         "it exists and is not a regular file (a symbolic "
                         "link, FIFO, device or folder), which the report "
                         "would replace");
                return -1;
        }
        return 0;
}
