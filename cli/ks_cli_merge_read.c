/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli_merge_read.c
 * @brief An input of `keyshift merge` read one topic at a time
 *        (ks_cli_merge.h), so that a merge holds one topic of each input
 *        in memory, not every input whole: 20 reports of 1,000 topics
 *        parse into ~5 GiB of jansson values, one topic of each into a
 *        few MiB.
 *
 * Opening reads the file once: the two outer levels (the report object
 * and its `topics` object) are walked here, finding where each value
 * starts and ends (strings and brackets only; nothing is interpreted),
 * and every value but a topic is parsed by jansson and checked
 * (ks_cli_report_check() on the report without its topics); each topic's
 * place in the file is kept. A topic is then read again from the file
 * (pread: the page cache holds it, not this process), parsed by jansson
 * and checked as the one topic of a report of that head. Every byte is
 * thus parsed by jansson once, and the walk only decides what each
 * piece is. When the walk finds a file not to be one JSON object, or a
 * piece does not parse, the whole file is parsed as ks_cli_report_load()
 * does, so the error is the one any other subcommand gives.
 */
#include "ks_cli_merge.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define KS_WALK_FAIL ((size_t)-1)

/** @returns the first index from @p i that is not JSON whitespace. */
static size_t ks_walk_ws(const char *b, size_t i, size_t n)
{
        while (i < n &&
               (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t'))
                i++;
        return i;
}

/** @returns the index of the quote that closes the string opened at
 *           @p i, or KS_WALK_FAIL. */
static size_t ks_walk_string(const char *b, size_t i, size_t n)
{
        const char *q;
        size_t      k;

        for (i++; i < n; i = (size_t)(q - b) + 1) {
                if (!(q = memchr(b + i, '"', n - i)))
                        return KS_WALK_FAIL;
                for (k = 0; q - k > b + i && q[-1 - (ptrdiff_t)k] == '\\'; k++)
                        ;
                if (!(k & 1)) /* not escaped */
                        return (size_t)(q - b);
        }
        return KS_WALK_FAIL;
}

/** @returns the index just past the value that starts at @p i (a string,
 *           a bracketed value, or a scalar up to a separator), or
 *           KS_WALK_FAIL. Whether it is valid JSON is jansson's to say. */
static size_t ks_walk_value(const char *b, size_t i, size_t n)
{
        size_t depth = 0, e;

        if (i >= n)
                return KS_WALK_FAIL;
        if (b[i] == '"')
                return (e = ks_walk_string(b, i, n)) == KS_WALK_FAIL ? e
                                                                     : e + 1;
        if (b[i] != '{' && b[i] != '[') {
                for (e = i; e < n && b[e] != ',' && b[e] != '}' &&
                            b[e] != ']' && b[e] != ' ' && b[e] != '\n' &&
                            b[e] != '\r' && b[e] != '\t';
                     e++)
                        ;
                return e > i ? e : KS_WALK_FAIL;
        }
        for (; i < n; i++) {
                switch (b[i]) {
                case '"':
                        if ((i = ks_walk_string(b, i, n)) == KS_WALK_FAIL)
                                return i;
                        break;
                case '{':
                case '[':
                        depth++;
                        break;
                case '}':
                case ']':
                        if (!--depth)
                                return i + 1;
                        break;
                default:
                        break;
                }
        }
        return KS_WALK_FAIL;
}

/** @returns the key string at @p i (jansson-decoded, to free()), its
 *           closing quote's index in *@p end; NULL when not a string. */
static char *ks_walk_key(const char *b, size_t i, size_t n, size_t *end)
{
        json_error_t e;
        json_t      *k;
        char        *s;

        if (i >= n || b[i] != '"' ||
            (*end = ks_walk_string(b, i, n)) == KS_WALK_FAIL)
                return NULL;
        k = json_loadb(b + i, *end + 1 - i, JSON_DECODE_ANY, &e);
        s = json_is_string(k) ? strdup(json_string_value(k)) : NULL;
        json_decref(k);
        return s;
}

/** @brief The error ks_cli_report_load() gives for the whole text @p b:
 *         parsed and checked as one report. */
static void ks_read_whole_error(const char *path, const char *b, size_t n,
                                char *err, size_t errsz)
{
        json_error_t jerr;
        json_t      *root = json_loadb(b, n, JSON_REJECT_DUPLICATES, &jerr);

        if (!root) {
                int eof = strstr(jerr.text, "end of file") ||
                          strstr(jerr.text, "premature end of input");
                snprintf(err, errsz,
                         "%s: not valid JSON at line %d, column %d: %s%s", path,
                         jerr.line, jerr.column, jerr.text,
                         !eof            ? ""
                         : jerr.position ? " (the file ends before the "
                                           "report does: truncated)"
                                         : " (the file is empty)");
                return;
        }
        if (!ks_cli_report_check(root, path, err, errsz))
                snprintf(err, errsz,
                         "%s: not a JSON object of members keyshift can "
                         "read one by one",
                         path);
        json_decref(root);
}

/** @returns the whole of @p fd (a file or a pipe) in a new buffer of
 *           *@p size bytes, or NULL with errno set. */
static char *ks_read_all(int fd, size_t *size)
{
        struct stat st;
        size_t      cap = 1 << 16, len = 0;
        char       *b, *nb;
        ssize_t     r;

        if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size > 0)
                cap = (size_t)st.st_size + 1;
        if (!(b = malloc(cap)))
                return NULL;
        for (;;) {
                if (len == cap) {
                        if (!(nb = realloc(b, cap *= 2))) {
                                free(b);
                                errno = ENOMEM;
                                return NULL;
                        }
                        b = nb;
                }
                r = read(fd, b + len, cap - len);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0) {
                        free(b);
                        return NULL;
                }
                if (!r)
                        break;
                len += (size_t)r;
        }
        *size = len;
        return b;
}

/** @brief Records topic @p name at [@p off, @p off + @p len).
 *  @returns 0, 1 if the name is there already, -1 on ENOMEM. */
static int ks_src_add(ks_cli_merge_src_t *s, char *name, size_t off, size_t len)
{
        ks_cli_merge_slice_t *t;

        if (json_object_get(s->index, name))
                return 1;
        if (s->ntopics % 256 == 0) {
                t = realloc(s->topics, (s->ntopics + 256) * sizeof(*t));
                if (!t)
                        return -1;
                s->topics = t;
        }
        if (json_object_set_new(s->index, name,
                                json_integer((json_int_t)s->ntopics)))
                return -1;
        s->topics[s->ntopics].name = name;
        s->topics[s->ntopics].off  = off;
        s->topics[s->ntopics].len  = len;
        s->ntopics++;
        return 0;
}

/** @brief Walks the `topics` object at @p i: each topic's place kept.
 *  @returns the index past it, or KS_WALK_FAIL. */
static size_t ks_walk_topics(ks_cli_merge_src_t *s, const char *b, size_t i,
                             size_t n)
{
        size_t end, vend;
        char  *name;

        i = ks_walk_ws(b, i + 1, n);
        if (i < n && b[i] == '}')
                return i + 1;
        for (;;) {
                if (!(name = ks_walk_key(b, i, n, &end)))
                        return KS_WALK_FAIL;
                i = ks_walk_ws(b, end + 1, n);
                if (i >= n || b[i] != ':' ||
                    (vend = ks_walk_value(b, i = ks_walk_ws(b, i + 1, n), n)) ==
                        KS_WALK_FAIL ||
                    ks_src_add(s, name, i, vend - i)) {
                        free(name); /* a duplicate, ENOMEM or a bad value */
                        return KS_WALK_FAIL;
                }
                i = ks_walk_ws(b, vend, n);
                if (i < n && b[i] == '}')
                        return i + 1;
                if (i >= n || b[i] != ',')
                        return KS_WALK_FAIL;
                i = ks_walk_ws(b, i + 1, n);
        }
}

/** @brief Walks the report object of @p b: members parsed into s->head
 *         but `topics`, whose members are placed. @returns 0 or -1. */
static int ks_walk_report(ks_cli_merge_src_t *s, const char *b, size_t n)
{
        size_t       i = ks_walk_ws(b, 0, n), end, vend;
        json_error_t jerr;
        json_t      *v;
        char        *key;
        int          topics = 0;

        if (i >= n || b[i] != '{')
                return -1;
        i = ks_walk_ws(b, i + 1, n);
        if (i < n && b[i] == '}')
                return ks_walk_ws(b, i + 1, n) == n ? 0 : -1;
        for (;;) {
                if (!(key = ks_walk_key(b, i, n, &end)))
                        return -1;
                i = ks_walk_ws(b, end + 1, n);
                if (i >= n || b[i] != ':' || json_object_get(s->head, key)) {
                        free(key);
                        return -1;
                }
                i = ks_walk_ws(b, i + 1, n);
                if (!strcmp(key, "topics") && i < n && b[i] == '{' &&
                    !topics++) {
                        vend = ks_walk_topics(s, b, i, n);
                        v    = json_object(); /* the topics go one by one */
                } else {
                        vend = ks_walk_value(b, i, n);
                        v    = vend == KS_WALK_FAIL
                                   ? NULL
                                   : json_loadb(b + i, vend - i,
                                                JSON_DECODE_ANY |
                                                    JSON_REJECT_DUPLICATES,
                                                &jerr);
                }
                if (vend == KS_WALK_FAIL || !v) {
                        json_decref(v);
                        free(key);
                        return -1;
                }
                if (json_object_set_new(s->head, key, v)) { /* v freed */
                        free(key);
                        return -1;
                }
                free(key);
                i = ks_walk_ws(b, vend, n);
                if (i < n && b[i] == '}')
                        return ks_walk_ws(b, i + 1, n) == n ? 0 : -1;
                if (i >= n || b[i] != ',')
                        return -1;
                i = ks_walk_ws(b, i + 1, n);
        }
}

/** @returns the name of the topic that the head's `scan` describes, or
 *           NULL (checked with that topic: ks_cli_report_check()). */
static const char *ks_src_scan_topic(const ks_cli_merge_src_t *s)
{
        return json_string_value(
            json_object_get(json_object_get(s->head, "scan"), "topic"));
}

/** @returns a new report of @p s's head and, as its only topic, @p topic
 *           (stolen; NULL: no topic), `scan` there only with its topic.
 */
static json_t *ks_src_root(const ks_cli_merge_src_t *s, const char *name,
                           json_t *topic)
{
        json_t     *root = json_object(), *topics = json_object();
        const char *scan = ks_src_scan_topic(s);

        json_object_update(root, s->head);
        if (scan && (name ? strcmp(scan, name)
                          : json_object_get(s->index, scan) != NULL))
                json_object_del(root, "scan");
        if (topic)
                json_object_set_new(topics, name, topic);
        /* no topics object (missing, or of another type): left as read,
         * for the check to say so */
        if (json_is_object(json_object_get(s->head, "topics")))
                json_object_set_new(root, "topics", topics);
        else
                json_decref(topics);
        return root;
}

int ks_cli_merge_src_open(ks_cli_merge_src_t *s, const char *path, char *err,
                          size_t errsz)
{
        int     is_stdin = !strcmp(path, "-");
        char   *b;
        size_t  n = 0;
        json_t *root;

        memset(s, 0, sizeof(*s));
        s->path  = path;
        s->fd    = is_stdin ? -1 : ks_cli_report_open_fd(path, err, errsz);
        s->head  = json_object();
        s->index = json_object();
        if (!is_stdin && s->fd < 0)
                return -1; /* not a regular file, said as the loader says */
        if (!(b = ks_read_all(is_stdin ? 0 : s->fd, &n))) {
                snprintf(err, errsz, "%s: cannot read: %s", path,
                         strerror(errno));
                return -1;
        }
        if (ks_cli_report_head_refused(path, b, n, n <= 4096, err, errsz)) {
                free(b);
                return -1;
        }
        if (ks_walk_report(s, b, n)) {
                ks_read_whole_error(path, b, n, err, errsz);
                free(b);
                return -1;
        }
        if (is_stdin) /* a pipe is read once: its text is kept */
                s->text = b;
        else
                free(b);
        s->size = n;
        root    = ks_src_root(s, NULL, NULL);
        if (ks_cli_report_check(root, path, err, errsz)) {
                json_decref(root);
                return -1;
        }
        json_decref(root);
        return 0;
}

long ks_cli_merge_src_find(const ks_cli_merge_src_t *s, const char *name)
{
        json_t *i = json_object_get(s->index, name);

        return i ? (long)json_integer_value(i) : -1;
}

int ks_cli_merge_src_topic(const ks_cli_merge_src_t *s, size_t idx,
                           ks_cli_report_t *r, char *err, size_t errsz)
{
        const ks_cli_merge_slice_t *t = &s->topics[idx];
        json_error_t                jerr;
        json_t                     *topic;
        char                       *b = s->text ? s->text + t->off : NULL;
        size_t                      got;
        ssize_t                     k;

        r->path = s->path;
        r->root = NULL;
        if (!b) {
                if (!(b = malloc(t->len ? t->len : 1))) {
                        snprintf(err, errsz, "out of memory");
                        return -1;
                }
                for (got = 0; got < t->len;) {
                        k = pread(s->fd, b + got, t->len - got,
                                  (off_t)(t->off + got));
                        if (k > 0) {
                                got += (size_t)k;
                                continue;
                        }
                        if (k < 0 && errno == EINTR)
                                continue;
                        snprintf(err, errsz,
                                 "%s: cannot read again (changed while "
                                 "merged?): %s",
                                 s->path, k ? strerror(errno) : "end of file");
                        free(b);
                        return -1;
                }
        }
        topic = json_loadb(b, t->len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES,
                           &jerr);
        if (!s->text)
                free(b);
        if (!topic) { /* the error as the whole file's parse gives it */
                char  *all = NULL;
                size_t n   = 0;
                if (s->text)
                        ks_read_whole_error(s->path, s->text, s->size, err,
                                            errsz);
                else if (lseek(s->fd, 0, SEEK_SET) == 0 &&
                         (all = ks_read_all(s->fd, &n)))
                        ks_read_whole_error(s->path, all, n, err, errsz);
                else
                        snprintf(err, errsz, "%s: topics.%s: not valid JSON",
                                 s->path, t->name);
                free(all);
                return -1;
        }
        r->root = ks_src_root(s, t->name, topic);
        if (ks_cli_report_check(r->root, s->path, err, errsz) ||
            ks_cli_report_rows(r->root, s->path, err, errsz)) {
                ks_cli_report_free(r);
                return -1;
        }
        return 0;
}

void ks_cli_merge_src_close(ks_cli_merge_src_t *s)
{
        size_t i;

        if (s->fd >= 0)
                close(s->fd);
        s->fd = -1;
        for (i = 0; i < s->ntopics; i++)
                free(s->topics[i].name);
        free(s->topics);
        free(s->text);
        json_decref(s->head);
        json_decref(s->index);
        memset(s, 0, sizeof(*s));
        s->fd = -1;
}
