/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli_merge.c
 * @brief `keyshift merge A.json B.json ... -o fleet.json`: one report for
 *        a fleet of producer processes of the same topics.
 *
 * Topics are merged one by one over the inputs that have them
 * (ks_cli_merge_topic.c); the top level says where the data came from:
 * `started_at` the earliest start, `generated_at` the latest report,
 * `final` only if every input was final, `producer.merged_from` the
 * inputs, and the inputs' producer-level warnings prefixed with their
 * file (ks_cli_merge_head.c). The output is checked like any input before
 * it is written, and written atomically (core/report/ks_report.h).
 *
 * `keyshift merge` itself (ks_cli_merge_files()) reads its inputs one
 * topic at a time (ks_cli_merge_read.c) and writes each merged topic as
 * soon as it is merged, so that 20 inputs of 1,000 topics take tens of
 * MiB, not the jansson values of every input (GiBs);
 * ks_cli_merge_reports() merges reports already loaded (keyshift fleet's
 * records; ks_cli_merge_reports.c).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "keyshift/keyshift.h"
#include "ks_cli.h"
#include "ks_cli_merge.h"
#include "ks_cli_report.h"
#include "ks_report.h"

/** @brief Prints the usage of `keyshift merge` to @p fp. */
static void ks_merge_help(FILE *fp)
{
        fprintf(fp,
                "Usage: keyshift merge [OPTIONS] REPORT.json... [-o "
                "FLEET.json]\n"
                "Combines the reports of several producer processes of the "
                "same topics into\n"
                "one %s report. Exact counters are summed (messages,\n"
                "bytes, keys, per-partition loads, flows, moved, "
                "acknowledged, key encodings);\n"
                "sketches are merged (distinct-key HyperLogLog, key sample, "
                "hot keys), and\n"
                "distinct keys, moved-key fractions and hot keys recomputed "
                "from them. A topic\n"
                "whose partition count, proposed counts or partitioner "
                "differ between reports\n"
                "is refused, and so are two reports of one producer (its "
                "reports are cumulative).\n\n"
                "  -o, --output FILE  the merged report (default - : "
                "standard output)\n"
                "  -k, --hot N        hot keys listed per topic (default: "
                "the most any input\n"
                "                     lists)\n"
                "  -h, --help         this help\n\n"
                "Exit: 0 ok, 1 unreadable, invalid or incompatible report, "
                "or unwritable output,\n"
                "2 usage.\n",
                KEYSHIFT_REPORT_SCHEMA);
}

/** The merged report as it is written, piece by piece. */
typedef struct ks_merge_out {
        FILE              *fp;
        int                indent; /**< standard output: JSON_INDENT(1) */
        int                failed;
        ks_report_writer_t w; /**< a file: written atomically */
} ks_merge_out_t;

/** @brief Writes @p n bytes of @p s, each newline followed by @p extra
 *         more spaces of indentation (a value dumped alone, written
 *         @p extra levels deep in an indented document). */
static void ks_out_put(ks_merge_out_t *o, const char *s, size_t n, int extra)
{
        static const char spaces[] = "        ";
        const char       *nl;

        while (n && extra && (nl = memchr(s, '\n', n))) {
                size_t k = (size_t)(nl - s) + 1;
                o->failed |= fwrite(s, 1, k, o->fp) != k;
                o->failed |=
                    fwrite(spaces, 1, (size_t)extra, o->fp) != (size_t)extra;
                s += k;
                n -= k;
        }
        o->failed |= n && fwrite(s, 1, n, o->fp) != n;
}

static void ks_out_lit(ks_merge_out_t *o, const char *s)
{
        ks_out_put(o, s, strlen(s), 0);
}

/** @brief Writes @p v as the document's flags dump it, @p depth levels
 *         deep; @p open: without its closing brace (and the newline
 *         before it), members to follow. */
static void ks_out_json(ks_merge_out_t *o, const json_t *v, int depth, int open)
{
        size_t flags = JSON_PRESERVE_ORDER | JSON_ENCODE_ANY |
                       (o->indent ? JSON_INDENT(1) : JSON_COMPACT);
        char  *s = json_dumps(v, flags);
        size_t n = s ? strlen(s) : 0;

        if (!s) {
                o->failed = 1;
                return;
        }
        if (open && n && s[n - 1] == '}')
                n -= 1 + (o->indent && n >= 2 && s[n - 2] == '\n');
        ks_out_put(o, s, n, o->indent ? depth : 0);
        free(s);
}

/** @brief Writes member name @p key of an object @p depth levels deep,
 *         after a comma unless @p first. */
static void ks_out_key(ks_merge_out_t *o, const char *key, int depth, int first)
{
        json_t *k = json_string(key);

        if (!first)
                ks_out_lit(o, ",");
        if (o->indent) {
                ks_out_lit(o, "\n");
                ks_out_put(o, "        ", (size_t)depth, 0);
        }
        ks_out_json(o, k, 0, 0);
        ks_out_lit(o, o->indent ? ": " : ":");
        json_decref(k);
}

/** @returns 0 when all of @p from (rewound) is copied to @p to and
 *           flushed, else -1. */
static int ks_out_copy(FILE *from, FILE *to)
{
        char   buf[1 << 16];
        size_t k;

        if (fflush(from) || fseek(from, 0, SEEK_SET))
                return -1;
        while ((k = fread(buf, 1, sizeof(buf), from)))
                if (fwrite(buf, 1, k, to) != k)
                        return -1;
        return ferror(from) || fflush(to) ? -1 : 0;
}

/** @returns a new report of @p head, topic @p t (borrowed) alone in
 *           `topics`, its `messages` and @p warnings (borrowed): what
 *           ks_cli_report_check() checks the output by. */
static json_t *ks_out_root(const json_t *head, const char *name, json_t *t,
                           json_t *warnings)
{
        json_t *root = json_copy((json_t *)head), *topics = json_object();

        if (t)
                json_object_set(topics, name, t);
        json_object_set_new(root, "topics", topics);
        json_object_set_new(
            root, "messages",
            json_integer(t ? json_integer_value(json_object_get(t, "messages"))
                           : 0));
        json_object_set(root, "warnings", warnings);
        return root;
}

/**
 * @brief Checks @p root, a merged report (or its head with one topic), as
 *        any report is checked, and frees it: a failure is keyshift's own
 *        ("internal error, merged report invalid: ...").
 * @returns 0, or -1 with @p err set.
 */
static int ks_merged_check(json_t *root, const char *path, char *err,
                           size_t errsz)
{
        int rc = ks_cli_report_check(root, path, err, errsz);

        if (rc) {
                char why[2048];
                snprintf(why, sizeof(why), "%s", err);
                snprintf(err, errsz,
                         "internal error, merged report invalid: %s", why);
        }
        json_decref(root);
        return rc ? -1 : 0;
}

/**
 * @brief Merges topic @p name of sources @p src[i..n) that have it (@p k:
 *        its number in src[i]) and writes it: its inputs read one by one,
 *        freed once merged; the merged topic in its file form, checked.
 * @returns 0, or -1 with @p err set; *@p messages += the topic's.
 */
static int ks_merge_one(ks_merge_out_t *o, const ks_cli_merge_src_t *src,
                        size_t n, size_t i, size_t k, size_t hot_max,
                        const json_t *head, json_t *warnings, int first,
                        json_int_t *messages, char *err, size_t errsz)
{
        const char        *name = src[i].topics[k].name;
        ks_cli_report_t   *rep  = calloc(n - i, sizeof(*rep));
        ks_cli_merge_in_t *in   = calloc(n - i, sizeof(*in));
        json_t            *t    = NULL, *one, *ff;
        size_t             cnt  = 0, j;
        long               idx;
        int                rc = -1;

        if (!rep || !in) {
                snprintf(err, errsz, "out of memory");
                goto done;
        }
        for (j = i; j < n; j++) {
                idx = j == i ? (long)k : ks_cli_merge_src_find(&src[j], name);
                if (idx < 0)
                        continue;
                if (ks_cli_merge_src_topic(&src[j], (size_t)idx, &rep[cnt], err,
                                           errsz))
                        goto done;
                in[cnt].report = &rep[cnt];
                in[cnt].topic =
                    json_object_get(ks_cli_report_topics(&rep[cnt]), name);
                cnt++;
        }
        if (!(t = ks_cli_merge_topic(name, in, cnt, hot_max, n, err, errsz)))
                goto done;
        for (j = 0; j < cnt; j++) /* the inputs' part is done */
                ks_cli_report_free(&rep[j]);
        /* what we write must read back as a report: its file form */
        one = json_object();
        json_object_set_new(one, "topics", json_object());
        json_object_set(json_object_get(one, "topics"), name, t);
        ff = ks_report_file_form(one);
        json_decref(one);
        json_decref(t);
        t = ff ? json_incref(
                     json_object_get(json_object_get(ff, "topics"), name))
               : NULL;
        json_decref(ff);
        if (!t) {
                snprintf(err, errsz, "out of memory");
                goto done;
        }
        if (ks_merged_check(ks_out_root(head, name, t, warnings),
                            o->indent ? "-" : o->w.path, err, errsz))
                goto done;
        if (*messages >
            INT64_MAX - json_integer_value(json_object_get(t, "messages"))) {
                snprintf(err, errsz,
                         "messages: overflow: the merged topics' messages "
                         "sum past 2^63 - 1");
                goto done;
        }
        *messages += json_integer_value(json_object_get(t, "messages"));
        if (first)
                ks_out_lit(o, "{");
        ks_out_key(o, name, 2, first);
        ks_out_json(o, t, 2, 0);
        if (!o->indent)
                ks_report_writer_kick(&o->w);
        rc = 0;
done:
        for (j = 0; rep && j < cnt; j++)
                ks_cli_report_free(&rep[j]);
        json_decref(t);
        free(rep);
        free(in);
        return rc;
}

/**
 * @brief Reads and checks every topic of sources @p src[0..n), in order,
 *        after a merge failed with @p err: the error to give is the
 *        first input's that does not read, as when every input was read
 *        before merging (the message other subcommands give for it), and
 *        @p err only when all read.
 */
static void ks_merge_first_bad(const ks_cli_merge_src_t *src, size_t n,
                               char *err, size_t errsz)
{
        char            why[2048];
        ks_cli_report_t r;
        size_t          i, k;

        for (i = 0; i < n; i++)
                for (k = 0; k < src[i].ntopics; k++) {
                        if (ks_cli_merge_src_topic(&src[i], k, &r, why,
                                                   sizeof(why))) {
                                snprintf(err, errsz, "%s", why);
                                return;
                        }
                        ks_cli_report_free(&r);
                }
}

/**
 * @brief Opens the merged report's output @p out in @p o: a temporary
 *        file for standard output (which gets a whole report or none), or
 *        the atomic writer of the file.
 * @returns 0, or -1 with @p err set.
 */
static int ks_merge_open_out(ks_merge_out_t *o, const char *out, char *err,
                             size_t errsz)
{
        if (o->indent) {
                if (!(o->fp = tmpfile())) {
                        snprintf(err, errsz,
                                 "cannot create a temporary "
                                 "file for the output");
                        return -1;
                }
        } else if (ks_report_writer_open(&o->w, out)) {
                snprintf(err, errsz, "%s", o->w.errstr);
                return -1;
        } else {
                o->fp = o->w.fp;
        }
        return 0;
}

/**
 * @brief Writes the `topics` object to @p o: each topic of the @p n
 *        sources merged (ks_merge_one()), in the order first seen, counted
 *        in @p topics, their messages summed in @p messages.
 * @returns 0, or -1 with @p err set (the first input that does not read,
 *          ks_merge_first_bad(), when one does not).
 */
static int ks_merge_topics(ks_merge_out_t *o, const ks_cli_merge_src_t *src,
                           size_t n, size_t hot_max, const json_t *head,
                           json_t *warnings, size_t *topics,
                           json_int_t *messages, char *err, size_t errsz)
{
        size_t i, j, k;
        int    seen;

        ks_out_key(o, "topics", 1, 0);
        for (i = 0; i < n; i++)
                for (k = 0; k < src[i].ntopics; k++) {
                        for (seen = 0, j = 0; j < i && !seen; j++)
                                seen = ks_cli_merge_src_find(
                                           &src[j], src[i].topics[k].name) >= 0;
                        if (seen)
                                continue;
                        if (ks_merge_one(o, src, n, i, k, hot_max, head,
                                         warnings, !*topics, messages, err,
                                         errsz)) {
                                ks_merge_first_bad(src, n, err, errsz);
                                return -1;
                        }
                        ++*topics;
                }
        if (!*topics) {
                ks_out_lit(o, "{}");
        } else {
                if (o->indent)
                        ks_out_lit(o, "\n ");
                ks_out_lit(o, "}");
        }
        return 0;
}

/**
 * @brief Ends the merged report in @p o (its messages @p messages, its
 *        @p warnings) and writes it out: copied to standard output, or
 *        the file renamed over @p out.
 * @returns 0, or -1 with @p err set.
 */
static int ks_merge_finish(ks_merge_out_t *o, const char *out,
                           json_int_t messages, const json_t *warnings,
                           char *err, size_t errsz)
{
        json_t *m = json_integer(messages);

        ks_out_key(o, "messages", 1, 0);
        ks_out_json(o, m, 1, 0);
        json_decref(m);
        ks_out_key(o, "warnings", 1, 0);
        ks_out_json(o, warnings, 1, 0);
        ks_out_lit(o, o->indent ? "\n}\n" : "}\n");
        if (o->indent) {
                if (o->failed || ks_out_copy(o->fp, stdout)) {
                        snprintf(err, errsz, "cannot write the output");
                        return -1;
                }
        } else if (o->failed) {
                ks_report_writer_abort(&o->w);
                o->fp = NULL;
                snprintf(err, errsz, "%s: cannot write the merged report", out);
                return -1;
        } else {
                o->fp = NULL;
                if (ks_report_writer_finish(&o->w, err, errsz))
                        return -1;
        }
        return 0;
}

int ks_cli_merge_files(const char *const *paths, size_t n, size_t hot_max,
                       const char *out, size_t *topics, char *err, size_t errsz)
{
        ks_cli_merge_src_t *src  = calloc(n, sizeof(*src));
        ks_cli_report_t    *tops = calloc(n, sizeof(*tops));
        ks_merge_out_t      o    = {.indent = !strcmp(out, "-")};
        json_t             *head = NULL, *warnings = NULL;
        json_int_t          messages = 0;
        size_t              i, opened = 0;
        int                 rc = -1;

        *topics = 0;
        if (!src || !tops) {
                snprintf(err, errsz, "out of memory");
                goto done;
        }
        for (i = 0; i < n; i++, opened++)
                if (ks_cli_merge_src_open(&src[i], paths[i], err, errsz)) {
                        ks_merge_first_bad(src, i, err, errsz);
                        opened++;
                        goto done;
                }
        for (i = 0; i < n; i++) { /* the inputs' top levels */
                tops[i].path = src[i].path;
                tops[i].root = src[i].head;
        }
        if (!(head = ks_cli_merge_head(tops, n, &warnings, err, errsz))) {
                ks_merge_first_bad(src, n, err, errsz);
                goto done;
        }
        if (ks_merged_check(ks_out_root(head, NULL, NULL, warnings), out, err,
                            errsz) ||
            ks_merge_open_out(&o, out, err, errsz))
                goto done;
        ks_out_json(&o, head, 0, 1);
        if (ks_merge_topics(&o, src, n, hot_max, head, warnings, topics,
                            &messages, err, errsz) ||
            ks_merge_finish(&o, out, messages, warnings, err, errsz))
                goto done;
        rc = 0;
done:
        if (o.fp && !o.indent)
                ks_report_writer_abort(&o.w);
        else if (o.fp)
                fclose(o.fp);
        for (i = 0; i < opened; i++)
                ks_cli_merge_src_close(&src[i]);
        free(src);
        free(tops);
        json_decref(head);
        json_decref(warnings);
        return rc;
}

int ks_cli_merge_main(int argc, char **argv)
{
        static const struct option longopts[] = {
            {"output", required_argument, NULL, 'o'},
            {"hot", required_argument, NULL, 'k'},
            {"help", no_argument, NULL, 'h'},
            {NULL, 0, NULL, 0}};
        const char *out     = "-";
        size_t      hot_max = 0, n, topics;
        char        err[2048];
        long long   v;
        int         c;

        optind = 1;
        while ((c = getopt_long(argc, argv, "o:k:h", longopts, NULL)) != -1) {
                switch (c) {
                case 'o':
                        out = optarg;
                        break;
                case 'k':
                        if (ks_cli_parse_long(optarg, 1, 1000, &v, err,
                                              sizeof(err)))
                                return ks_cli_usage_error("merge", "--hot: %s",
                                                          err);
                        hot_max = (size_t)v;
                        break;
                case 'h':
                        ks_merge_help(stdout);
                        return KS_CLI_EXIT_OK;
                default:
                        return ks_cli_usage_error("merge", "bad option");
                }
        }
        if (optind >= argc)
                return ks_cli_usage_error("merge", "no REPORT.json given");
        n = (size_t)(argc - optind);
        if (ks_cli_merge_files((const char *const *)argv + optind, n, hot_max,
                               out, &topics, err, sizeof(err)))
                return ks_cli_fail("merge", "%s", err);
        if (strcmp(out, "-"))
                fprintf(stderr,
                        "keyshift merge: wrote %s (%zu reports, %zu "
                        "topics)\n",
                        out, n, topics);
        return KS_CLI_EXIT_OK;
}
