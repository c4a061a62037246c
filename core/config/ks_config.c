/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_config.c
 * @brief keyshift.* properties: one table row per property, each with its
 *        parser, so that accepted values, defaults and error messages are
 *        stated once.
 */
#include "ks_config.h"

#include "ks_partitioner.h"
#include "ks_report.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define KS_PREFIX "keyshift."
/** An unknown name is echoed up to this many characters (then "..."), so
 *  that the whole errstr fits 256 bytes. */
#define KS_UNKNOWN_NAME_MAX 64

typedef ks_config_res_t(ks_prop_set_f)(ks_config_t *conf, const char *value,
                                       char *errstr, size_t errstr_size);

typedef struct ks_prop {
        const char    *name;
        const char    *accepted; /**< for errstr and the list of properties */
        ks_prop_set_f *set;
} ks_prop_t;

static ks_config_res_t invalid(char *errstr, size_t size, const char *name,
                               const char *value, const char *accepted)
{
        snprintf(errstr, size, "Invalid value \"%s\" for %s: expected %s",
                 value, name, accepted);
        return KS_CONFIG_INVALID;
}

/** @brief Parses a whole decimal integer in [lo, hi]. @returns 0 or -1. */
static int parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
        char     *end;
        long long v;

        while (isspace((unsigned char)*s))
                s++;
        if (!*s || (!isdigit((unsigned char)*s) && *s != '-'))
                return -1;
        errno = 0;
        v     = strtoll(s, &end, 10);
        while (isspace((unsigned char)*end))
                end++;
        if (errno || *end || v < lo || v > hi)
                return -1;
        *out = v;
        return 0;
}

static int parse_bool(const char *s, int *out)
{
        if (!strcasecmp(s, "true") || !strcmp(s, "1")) {
                *out = 1;
                return 0;
        }
        if (!strcasecmp(s, "false") || !strcmp(s, "0")) {
                *out = 0;
                return 0;
        }
        return -1;
}

#define KS_ACCEPT_ENABLE "true or false"
#define KS_ACCEPT_OVERLOAD                                                     \
        "skip (a message that finds keyshift's analysis behind is counted, "   \
        "not analysed) or analyse (it is analysed on the producing thread)"
#define KS_ACCEPT_PROPOSED                                                     \
        "one to 8 comma-separated partition counts, each 1..100000 "           \
        "(e.g. 12 or 12,16,24)"
#define KS_ACCEPT_CURRENT "a partition count 1..100000"
#define KS_ACCEPT_PATH                                                         \
        "a non-empty file path template (%c = client.id, %p = pid, %% = %)"
#define KS_ACCEPT_METRICS_PATH                                                 \
        "empty (no metrics file), or a file path template ending in .prom, "   \
        "the name node_exporter's textfile collector reads (%c = client.id, "  \
        "%p = pid, %% = %)"
#define KS_ACCEPT_INTERVAL "0 (report only at shutdown) or 100 .. 86400000 ms"
#define KS_ACCEPT_TOPICS "a POSIX extended regular expression"
#define KS_ACCEPT_HOT "0..1000 hot keys per topic"
#define KS_ACCEPT_SAMPLE "64..1048576 keys"
#define KS_ACCEPT_MIXED_SAMPLE "64..1048576 logical keys"
#define KS_ACCEPT_TOPICS_MAX "1..100000 topics"
#define KS_ACCEPT_MEMORY "1..65536 MiB"
#define KS_ACCEPT_REFRESH "100..3600000 ms"
#define KS_ACCEPT_FLOW "0..1048576 cells (0 = no flow matrix)"
#define KS_ACCEPT_REPORT_TOPIC                                                 \
        "empty (off), or a Kafka topic name: 1..249 of [A-Za-z0-9._-], not "   \
        "\".\" or \"..\""
#define KS_ACCEPT_REPORT_FLUSH "0..60000 ms"
#define KS_ACCEPT_REPORT_PROP                                                  \
        "a librdkafka producer property of the report producer (not "          \
        "plugin.library.paths, interceptors or callbacks)"
#define KS_ACCEPT_PARTITIONER                                                  \
        "one of random, consistent, consistent_random, murmur2, "              \
        "murmur2_random, fnv1a, fnv1a_random"

static ks_config_res_t set_enable(ks_config_t *conf, const char *v,
                                  char *errstr, size_t size)
{
        if (parse_bool(v, &conf->enable))
                return invalid(errstr, size, "keyshift.enable", v,
                               KS_ACCEPT_ENABLE);
        return KS_CONFIG_OK;
}

static ks_config_res_t set_proposed(ks_config_t *conf, const char *v,
                                    char *errstr, size_t size)
{
        int32_t counts[KEYSHIFT_PROPOSED_MAX];
        size_t  cnt = 0, dups = 0;
        char    buf[512];
        char   *save = NULL, *tok;

        if (strlen(v) >= sizeof(buf))
                return invalid(errstr, size, "keyshift.partitions.proposed", v,
                               KS_ACCEPT_PROPOSED);
        strcpy(buf, v);
        for (tok = buf; tok; tok = save) {
                int64_t n;
                size_t  i;
                int     dup = 0;
                /* "12,,16" and ",12," are refused: no empty counts */
                if ((save = strchr(tok, ',')))
                        *save++ = '\0';
                if (parse_int(tok, 1, KEYSHIFT_PARTITIONS_MAX, &n))
                        return invalid(errstr, size,
                                       "keyshift.partitions.proposed", v,
                                       KS_ACCEPT_PROPOSED);
                for (i = 0; i < cnt; i++)
                        dup |= counts[i] == (int32_t)n;
                if (dup) {
                        dups++;
                        continue;
                }
                if (cnt == KEYSHIFT_PROPOSED_MAX)
                        return invalid(errstr, size,
                                       "keyshift.partitions.proposed", v,
                                       KS_ACCEPT_PROPOSED);
                counts[cnt++] = (int32_t)n;
        }
        if (cnt == 0)
                return invalid(errstr, size, "keyshift.partitions.proposed", v,
                               KS_ACCEPT_PROPOSED);
        memcpy(conf->proposed, counts, sizeof(counts[0]) * cnt);
        conf->proposed_cnt  = cnt;
        conf->proposed_dups = dups;
        return KS_CONFIG_OK;
}

static ks_config_res_t set_current(ks_config_t *conf, const char *v,
                                   char *errstr, size_t size)
{
        int64_t n;
        if (parse_int(v, 1, KEYSHIFT_PARTITIONS_MAX, &n))
                return invalid(errstr, size, "keyshift.partitions.current", v,
                               KS_ACCEPT_CURRENT);
        conf->current_override = (int32_t)n;
        return KS_CONFIG_OK;
}

/**
 * @brief Refuses a path (of property @p prop) whose folder does not exist
 *        or cannot be written, or that names a folder: found now rather
 *        than at the first write. A folder part holding a placeholder (%c,
 *        %p) is checked at write time only. @returns 0, or -1 with
 *        @p errstr set.
 */
static int check_path_dir(const char *prop, const char *path, char *errstr,
                          size_t size)
{
        const char *slash = strrchr(path, '/');
        char        dir[4096];
        struct stat st;

        if (slash == path)
                snprintf(dir, sizeof(dir), "/");
        else if (slash)
                snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
        else
                snprintf(dir, sizeof(dir), ".");
        if (strchr(dir, '%'))
                return 0;
        if (stat(dir, &st) || !S_ISDIR(st.st_mode) ||
            access(dir, W_OK | X_OK)) {
                snprintf(errstr, size,
                         "Invalid value \"%s\" for %s: "
                         "expected a file in an existing, writable folder "
                         "(%s is not)",
                         path, prop, dir);
                return -1;
        }
        if (!strchr(path, '%') && stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
                snprintf(errstr, size,
                         "Invalid value \"%s\" for %s: "
                         "expected a file name, not a folder",
                         path, prop);
                return -1;
        }
        /* the report replaces the file at the path (a rename): anything
         * but a regular file there would be replaced itself */
        if (!strchr(path, '%') && lstat(path, &st) == 0 &&
            !S_ISREG(st.st_mode)) {
                snprintf(errstr, size,
                         "Invalid value \"%s\" for %s: "
                         "expected a regular file or a new name (it is %s, "
                         "which the report would replace)",
                         path, prop,
                         S_ISLNK(st.st_mode)    ? "a symbolic link: give its "
                                                  "target"
                         : S_ISFIFO(st.st_mode) ? "a FIFO"
                         : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)
                             ? "a device"
                             : "not a regular file");
                return -1;
        }
        return 0;
}

/** @returns 1 when every % of @p v starts %c, %p or %%. */
static int template_ok(const char *v)
{
        const char *p;

        for (p = v; *p; p++) {
                if (*p != '%')
                        continue;
                if (p[1] != 'c' && p[1] != 'p' && p[1] != '%')
                        return 0;
                p++;
        }
        return 1;
}

/**
 * @brief Checks path template @p v of property @p prop and makes *dst a
 *        copy of it. @returns KS_CONFIG_OK or KS_CONFIG_INVALID + errstr.
 */
static ks_config_res_t set_template(char **dst, const char *prop,
                                    const char *accept, const char *v,
                                    char *errstr, size_t size)
{
        char *copy;

        char shortest[KS_REPORT_PATH_MAX], why[200];

        /* " " would be a file named by white space: a typo, refused */
        if (!template_ok(v) || !v[strspn(v, " \t\r\n")] || !(copy = strdup(v)))
                return invalid(errstr, size, prop, v, accept);
        /* a path no report can ever be written at, whatever client.id
         * and pid give %c and %p (the shortest: "" and one digit); longer
         * expansions are checked when the producer is made
         * (plugin/ks_client.c) */
        if (ks_config_expand_path(v, "", 1, shortest, sizeof(shortest)) ||
            ks_report_path_fits(shortest, why, sizeof(why))) {
                if (ks_config_expand_path(v, "", 1, shortest, sizeof(shortest)))
                        snprintf(why, sizeof(why),
                                 "the path is longer than PATH_MAX (%d)",
                                 KS_REPORT_PATH_MAX);
                snprintf(errstr, size,
                         "Invalid value \"%.300s%s\" for %s: no report can "
                         "be written there: %s",
                         v, strlen(v) > 300 ? "..." : "", prop, why);
                free(copy);
                return KS_CONFIG_INVALID;
        }
        if (check_path_dir(prop, copy, errstr, size)) {
                free(copy);
                return KS_CONFIG_INVALID;
        }
        free(*dst);
        *dst = copy;
        return KS_CONFIG_OK;
}

static ks_config_res_t set_path(ks_config_t *conf, const char *v, char *errstr,
                                size_t size)
{
        return set_template(&conf->report_path, "keyshift.report.path",
                            KS_ACCEPT_PATH, v, errstr, size);
}

/* The textfile collector reads *.prom only: another name would be written
 * and never scraped. */
static ks_config_res_t set_metrics_path(ks_config_t *conf, const char *v,
                                        char *errstr, size_t size)
{
        size_t n = strlen(v);

        if (!n) {
                free(conf->metrics_path);
                conf->metrics_path = NULL;
                return KS_CONFIG_OK;
        }
        if (n < 6 || strcmp(v + n - 5, ".prom") || v[n - 6] == '/')
                return invalid(errstr, size, "keyshift.metrics.path", v,
                               KS_ACCEPT_METRICS_PATH);
        return set_template(&conf->metrics_path, "keyshift.metrics.path",
                            KS_ACCEPT_METRICS_PATH, v, errstr, size);
}

static ks_config_res_t set_interval(ks_config_t *conf, const char *v,
                                    char *errstr, size_t size)
{
        if (parse_int(v, 0, KS_CONFIG_INTERVAL_MAX_MS,
                      &conf->report_interval_ms) ||
            (conf->report_interval_ms > 0 &&
             conf->report_interval_ms < KS_CONFIG_INTERVAL_MIN_MS))
                return invalid(errstr, size, "keyshift.report.interval.ms", v,
                               KS_ACCEPT_INTERVAL);
        return KS_CONFIG_OK;
}

/** The longest keyshift.topics expression, and the most copies of a
 *  piece its repetition counts may ask for (their product). */
#define KS_TOPICS_REGEX_MAX_LEN 1024
#define KS_TOPICS_REGEX_MAX_COPIES 1000

/**
 * @brief Refuses an expression whose compilation alone could take
 *        gigabytes: glibc's regcomp() copies a piece once per repetition
 *        asked, and once more per quantifier stacked on it ("a++++..."
 *        doubles it each time: found by the config fuzz target, 2.4 GB
 *        from 80 '+'). Stacked quantifiers mean nothing in an ERE, and a
 *        topic name needs no more than KS_TOPICS_REGEX_MAX_COPIES copies.
 * @returns NULL, or why it is refused.
 */
static const char *topics_regex_too_costly(const char *v)
{
        double      copies = 1;
        const char *p;
        int         after_quant = 0, in_bracket = 0;

        if (strlen(v) > KS_TOPICS_REGEX_MAX_LEN)
                return "longer than 1024 characters";
        for (p = v; *p; p++) {
                if (in_bracket) { /* [...]: quantifier characters are
                                   * literal there */
                        if (*p == ']' && p[-1] != '[' &&
                            !(p[-1] == '^' && p[-2] == '['))
                                in_bracket = 0;
                        continue;
                }
                if (*p == '\\' && p[1]) {
                        p++;
                        after_quant = 0;
                        continue;
                }
                if (*p == '[') {
                        in_bracket  = 1;
                        after_quant = 0;
                        continue;
                }
                if (*p == '*' || *p == '+' || *p == '?' || *p == '{') {
                        if (after_quant)
                                return "quantifiers stacked on one another";
                        if (*p == '{') {
                                char *end;
                                long  lo = strtol(p + 1, &end, 10), hi = lo;
                                if (*end == ',')
                                        hi = end[1] == '}'
                                                 ? lo
                                                 : strtol(end + 1, &end, 10);
                                copies *= (double)(hi > lo ? hi : lo) + 1;
                                while (*p && *p != '}')
                                        p++;
                                if (!*p)
                                        break;
                        }
                        after_quant = 1;
                        continue;
                }
                after_quant = 0;
        }
        if (copies > KS_TOPICS_REGEX_MAX_COPIES)
                return "repetition counts that ask for over 1000 copies";
        return NULL;
}

static ks_config_res_t set_topics(ks_config_t *conf, const char *v,
                                  char *errstr, size_t size)
{
        regex_t     re;
        char        reerr[256];
        int         r;
        char       *copy;
        const char *costly;

        if ((costly = topics_regex_too_costly(v))) {
                char accepted[512];
                snprintf(accepted, sizeof(accepted),
                         "%s of at most %d characters, without stacked "
                         "quantifiers or more than %d repetitions (this one "
                         "has %s)",
                         KS_ACCEPT_TOPICS, KS_TOPICS_REGEX_MAX_LEN,
                         KS_TOPICS_REGEX_MAX_COPIES, costly);
                return invalid(errstr, size, "keyshift.topics", v, accepted);
        }
        if ((r = regcomp(&re, v, REG_EXTENDED | REG_NOSUB))) {
                char accepted[512];
                regerror(r, &re, reerr, sizeof(reerr));
                snprintf(accepted, sizeof(accepted), "%s (%s)",
                         KS_ACCEPT_TOPICS, reerr);
                return invalid(errstr, size, "keyshift.topics", v, accepted);
        }
        if (!(copy = strdup(v))) {
                regfree(&re);
                return invalid(errstr, size, "keyshift.topics", v,
                               "(out of memory)");
        }
        if (conf->topics_regex) {
                regfree(&conf->topics_re);
                free(conf->topics_regex);
        }
        conf->topics_regex = copy;
        conf->topics_re    = re;
        return KS_CONFIG_OK;
}

#define KS_INT_SETTER(fn, field, prop, lo, hi, accepted)                       \
        static ks_config_res_t fn(ks_config_t *conf, const char *v,            \
                                  char *errstr, size_t size)                   \
        {                                                                      \
                int64_t n;                                                     \
                if (parse_int(v, lo, hi, &n))                                  \
                        return invalid(errstr, size, prop, v, accepted);       \
                conf->field = n;                                               \
                return KS_CONFIG_OK;                                           \
        }

KS_INT_SETTER(set_hot, hot_keys, "keyshift.hot.keys", 0, KS_CONFIG_HOT_KEYS_MAX,
              KS_ACCEPT_HOT)
KS_INT_SETTER(set_sample, key_sample_size, "keyshift.key.sample.size",
              KS_CONFIG_SAMPLE_MIN, KS_CONFIG_SAMPLE_MAX, KS_ACCEPT_SAMPLE)
KS_INT_SETTER(set_mixed_sample, mixed_sample_size, "keyshift.mixed.sample.size",
              KS_CONFIG_SAMPLE_MIN, KS_CONFIG_SAMPLE_MAX,
              KS_ACCEPT_MIXED_SAMPLE)
KS_INT_SETTER(set_topics_max, topics_max, "keyshift.topics.max", 1,
              KS_CONFIG_TOPICS_MAX_MAX, KS_ACCEPT_TOPICS_MAX)
KS_INT_SETTER(set_memory, memory_max_mb, "keyshift.memory.max.mb", 1,
              KS_MEMORY_MAX_MB_MAX, KS_ACCEPT_MEMORY)
KS_INT_SETTER(set_refresh, metadata_refresh_ms, "keyshift.metadata.refresh.ms",
              KS_CONFIG_REFRESH_MIN_MS, KS_CONFIG_REFRESH_MAX_MS,
              KS_ACCEPT_REFRESH)
KS_INT_SETTER(set_flow, flow_max_cells, "keyshift.flow.max.cells", 0,
              KS_CONFIG_FLOW_CELLS_MAX, KS_ACCEPT_FLOW)

static ks_config_res_t set_partitioner(ks_config_t *conf, const char *v,
                                       char *errstr, size_t size)
{
        ks_partitioner_t p;
        if (ks_partitioner_from_name(v, &p))
                return invalid(errstr, size, "keyshift.partitioner", v,
                               KS_ACCEPT_PARTITIONER);
        conf->partitioner = (int)p;
        return KS_CONFIG_OK;
}

static ks_config_res_t set_overload(ks_config_t *conf, const char *v,
                                    char *errstr, size_t size)
{
        if (!strcmp(v, "skip"))
                conf->overload_analyse = 0;
        else if (!strcmp(v, "analyse"))
                conf->overload_analyse = 1;
        else
                return invalid(errstr, size, "keyshift.overload", v,
                               KS_ACCEPT_OVERLOAD);
        return KS_CONFIG_OK;
}

/* Kafka's own rule for topic names (Topic.validate() in kafka-clients):
 * 1..249 characters of [a-zA-Z0-9._-], not "." or "..". */
static ks_config_res_t set_report_topic(ks_config_t *conf, const char *v,
                                        char *errstr, size_t size)
{
        size_t n = strlen(v), i;
        char  *copy;

        for (i = 0; i < n; i++)
                if (!isalnum((unsigned char)v[i]) && !strchr("._-", v[i]))
                        break;
        if (i < n || n > 249 || !strcmp(v, ".") || !strcmp(v, ".."))
                return invalid(errstr, size, "keyshift.report.topic", v,
                               KS_ACCEPT_REPORT_TOPIC);
        copy = n ? strdup(v) : NULL;
        if (n && !copy)
                return invalid(errstr, size, "keyshift.report.topic", v,
                               "(out of memory)");
        free(conf->report_topic);
        conf->report_topic = copy;
        return KS_CONFIG_OK;
}

KS_INT_SETTER(set_report_flush, report_topic_flush_ms,
              "keyshift.report.topic.flush.ms", 0, 60000,
              KS_ACCEPT_REPORT_FLUSH)

int ks_config_is_report_topic_prop(const char *name)
{
        const size_t n = strlen(KS_CONFIG_REPORT_TOPIC_PREFIX);

        return !strncmp(name, KS_CONFIG_REPORT_TOPIC_PREFIX, n) && name[n] &&
               strcmp(name, "keyshift.report.topic.flush.ms");
}

int ks_config_report_prop_refused(const char *x)
{
        return !strcmp(x, "plugin.library.paths") || strstr(x, "interceptor") ||
               strstr(x, "_cb") || strstr(x, "callback") ||
               !strncmp(x, "keyshift.", 9);
}

/**
 * @brief keyshift.report.topic.X=V: kept for the report producer. X is
 *        checked by librdkafka in the plugin (core knows nothing of it);
 *        refused here are the properties that would load code into it or
 *        point it at the host's callbacks.
 */
static ks_config_res_t set_report_prop(ks_config_t *conf, const char *name,
                                       const char *v, char *errstr, size_t size)
{
        const char *x = name + strlen(KS_CONFIG_REPORT_TOPIC_PREFIX);
        size_t      i, n = conf->report_topic_prop_cnt;
        char      **props, *xv, *vv;

        if (ks_config_report_prop_refused(x))
                return invalid(errstr, size, name, v, KS_ACCEPT_REPORT_PROP);
        for (i = 0; i < n; i++)
                if (!strcmp(conf->report_topic_props[2 * i], x)) {
                        if (!(vv = strdup(v)))
                                return invalid(errstr, size, name, v,
                                               "(out of memory)");
                        free(conf->report_topic_props[2 * i + 1]);
                        conf->report_topic_props[2 * i + 1] = vv;
                        return KS_CONFIG_OK;
                }
        props = realloc(conf->report_topic_props, (n + 1) * 2 * sizeof(char *));
        if (!props)
                return invalid(errstr, size, name, v, "(out of memory)");
        conf->report_topic_props = props;
        xv                       = strdup(x);
        vv                       = strdup(v);
        if (!xv || !vv) {
                free(xv);
                free(vv);
                return invalid(errstr, size, name, v, "(out of memory)");
        }
        props[2 * n]                = xv;
        props[2 * n + 1]            = vv;
        conf->report_topic_prop_cnt = n + 1;
        return KS_CONFIG_OK;
}

/* The row that lists keyshift.report.topic.<X> (`keyshift config`): the
 * name itself is no property. */
static ks_config_res_t set_report_prop_pattern(ks_config_t *conf, const char *v,
                                               char *errstr, size_t size)
{
        (void)conf;
        return invalid(errstr, size, "keyshift.report.topic.<X>", v,
                       "<X> replaced by a librdkafka producer property");
}

static const ks_prop_t ks_props[] = {
    {"keyshift.enable", KS_ACCEPT_ENABLE, set_enable},
    {"keyshift.partitions.proposed", KS_ACCEPT_PROPOSED, set_proposed},
    {"keyshift.partitions.current", KS_ACCEPT_CURRENT, set_current},
    {"keyshift.report.path", KS_ACCEPT_PATH, set_path},
    {"keyshift.metrics.path", KS_ACCEPT_METRICS_PATH, set_metrics_path},
    {"keyshift.report.interval.ms", KS_ACCEPT_INTERVAL, set_interval},
    {"keyshift.topics", KS_ACCEPT_TOPICS, set_topics},
    {"keyshift.hot.keys", KS_ACCEPT_HOT, set_hot},
    {"keyshift.key.sample.size", KS_ACCEPT_SAMPLE, set_sample},
    {"keyshift.mixed.sample.size", KS_ACCEPT_MIXED_SAMPLE, set_mixed_sample},
    {"keyshift.topics.max", KS_ACCEPT_TOPICS_MAX, set_topics_max},
    {"keyshift.memory.max.mb", KS_ACCEPT_MEMORY, set_memory},
    {"keyshift.metadata.refresh.ms", KS_ACCEPT_REFRESH, set_refresh},
    {"keyshift.flow.max.cells", KS_ACCEPT_FLOW, set_flow},
    {"keyshift.partitioner", KS_ACCEPT_PARTITIONER, set_partitioner},
    {"keyshift.overload", KS_ACCEPT_OVERLOAD, set_overload},
    {"keyshift.report.topic", KS_ACCEPT_REPORT_TOPIC, set_report_topic},
    {"keyshift.report.topic.flush.ms", KS_ACCEPT_REPORT_FLUSH,
     set_report_flush},
    {"keyshift.report.topic.<X>", KS_ACCEPT_REPORT_PROP,
     set_report_prop_pattern},
};

int ks_config_init(ks_config_t *conf)
{
        memset(conf, 0, sizeof(*conf));
        conf->enable                = 1;
        conf->report_interval_ms    = KS_CONFIG_DEFAULT_INTERVAL_MS;
        conf->hot_keys              = KS_CONFIG_DEFAULT_HOT_KEYS;
        conf->key_sample_size       = KS_CONFIG_DEFAULT_KEY_SAMPLE;
        conf->mixed_sample_size     = KS_CONFIG_DEFAULT_MIXED_SAMPLE;
        conf->topics_max            = KS_CONFIG_DEFAULT_TOPICS_MAX;
        conf->memory_max_mb         = KS_CONFIG_DEFAULT_MEMORY_MB;
        conf->metadata_refresh_ms   = KS_CONFIG_DEFAULT_REFRESH_MS;
        conf->flow_max_cells        = KS_CONFIG_DEFAULT_FLOW_CELLS;
        conf->partitioner           = -1;
        conf->report_topic_flush_ms = KS_CONFIG_DEFAULT_FLUSH_MS;
        ks_sizing_params_init(&conf->sizing);
        conf->report_path = strdup("keyshift-%c-%p.json");
        return conf->report_path ? 0 : -1;
}

/** @brief Frees the report producer's properties. */
static void free_report_props(ks_config_t *conf)
{
        size_t i;

        for (i = 0; i < 2 * conf->report_topic_prop_cnt; i++)
                free(conf->report_topic_props[i]);
        free(conf->report_topic_props);
        conf->report_topic_props    = NULL;
        conf->report_topic_prop_cnt = 0;
}

void ks_config_destroy(ks_config_t *conf)
{
        free(conf->report_path);
        free(conf->report_topic);
        free_report_props(conf);
        free(conf->metrics_path);
        if (conf->topics_regex) {
                regfree(&conf->topics_re);
                free(conf->topics_regex);
        }
        memset(conf, 0, sizeof(*conf));
}

/** @returns 0, or -1 on ENOMEM (then @p dst holds no report-topic
 *           strings). */
static int copy_report_topic(ks_config_t *dst, const ks_config_t *src)
{
        size_t i;

        dst->report_topic          = NULL;
        dst->report_topic_props    = NULL;
        dst->report_topic_prop_cnt = 0;
        if (src->report_topic &&
            !(dst->report_topic = strdup(src->report_topic)))
                return -1;
        for (i = 0; i < src->report_topic_prop_cnt; i++) {
                char name[512], err[8];
                snprintf(name, sizeof(name), "%s%s",
                         KS_CONFIG_REPORT_TOPIC_PREFIX,
                         src->report_topic_props[2 * i]);
                if (set_report_prop(dst, name,
                                    src->report_topic_props[2 * i + 1], err,
                                    sizeof(err)) != KS_CONFIG_OK) {
                        free(dst->report_topic);
                        dst->report_topic = NULL;
                        free_report_props(dst);
                        return -1;
                }
        }
        return 0;
}

int ks_config_copy(ks_config_t *dst, const ks_config_t *src)
{
        *dst              = *src;
        dst->topics_regex = NULL;
        if (copy_report_topic(dst, src))
                return -1;
        dst->report_path = strdup(src->report_path);
        dst->metrics_path =
            src->metrics_path ? strdup(src->metrics_path) : NULL;
        if (!dst->report_path || (src->metrics_path && !dst->metrics_path)) {
                free(dst->report_path);
                free(dst->metrics_path);
                free(dst->report_topic);
                free_report_props(dst);
                return -1;
        }
        if (src->topics_regex) {
                char err[8];
                if (set_topics(dst, src->topics_regex, err, sizeof(err)) !=
                    KS_CONFIG_OK) {
                        free(dst->report_path);
                        free(dst->metrics_path);
                        free(dst->report_topic);
                        free_report_props(dst);
                        return -1;
                }
        }
        return 0;
}

/** @returns the edit distance (Levenshtein) of @p a and @p b, at most
 *           64 characters each (longer: a large distance). */
static size_t edit_distance(const char *a, const char *b)
{
        size_t la = strlen(a), lb = strlen(b), i, j, row[65], prev, cur;

        if (la > 64 || lb > 64)
                return 99;
        for (j = 0; j <= lb; j++)
                row[j] = j;
        for (i = 1; i <= la; i++) {
                prev   = row[0];
                row[0] = i;
                for (j = 1; j <= lb; j++) {
                        cur = prev + (a[i - 1] != b[j - 1]);
                        if (row[j] + 1 < cur)
                                cur = row[j] + 1;
                        if (row[j - 1] + 1 < cur)
                                cur = row[j - 1] + 1;
                        prev   = row[j];
                        row[j] = cur;
                }
        }
        return row[lb];
}

/** @returns the known property closest to @p name (a typo), or NULL. */
static const char *closest_property(const char *name)
{
        const char *best   = NULL, *n;
        size_t      best_d = 4, d, i; /* up to 3 edits */

        for (i = 0; i < sizeof(ks_props) / sizeof(ks_props[0]); i++)
                if ((d = edit_distance(name, ks_props[i].name)) < best_d) {
                        best_d = d;
                        best   = ks_props[i].name;
                }
        for (i = 0; (n = ks_sizing_param_descs[i].name); i++)
                if ((d = edit_distance(name, n)) < best_d) {
                        best_d = d;
                        best   = n;
                }
        return best;
}

ks_config_res_t ks_config_set(ks_config_t *conf, const char *name,
                              const char *value, char *errstr,
                              size_t errstr_size)
{
        const char *like;
        size_t      i;

        if (strncmp(name, KS_PREFIX, strlen(KS_PREFIX)))
                return KS_CONFIG_UNKNOWN;
        switch (ks_sizing_params_set(&conf->sizing, name, value ? value : "",
                                     errstr, errstr_size)) {
        case 0:
                conf->sizing_metadata_age_set |=
                    !strcmp(name, "keyshift.producers.metadata.max.age.ms");
                return KS_CONFIG_OK;
        case 1:
                return KS_CONFIG_INVALID;
        default:
                break;
        }
        for (i = 0; i < sizeof(ks_props) / sizeof(ks_props[0]); i++)
                if (!strcmp(name, ks_props[i].name))
                        return ks_props[i].set(conf, value ? value : "", errstr,
                                               errstr_size);
        if (ks_config_is_report_topic_prop(name))
                return set_report_prop(conf, name, value ? value : "", errstr,
                                       errstr_size);

        /* The whole message fits librdkafka's usual errstr (256 bytes, as
         * confluent-kafka-python passes): the name (cut at
         * KS_UNKNOWN_NAME_MAX), the closest property, and where the list
         * is. A list of every property was cut mid-word there. */
        like = closest_property(name);
        snprintf(errstr, errstr_size,
                 "Unknown property %.*s%s: %s%s%skeyshift's properties are "
                 "in docs/properties.md (`keyshift config` lists them)",
                 (int)(strlen(name) > KS_UNKNOWN_NAME_MAX ? KS_UNKNOWN_NAME_MAX
                                                          : strlen(name)),
                 name, strlen(name) > KS_UNKNOWN_NAME_MAX ? "..." : "",
                 like ? "did you mean " : "", like ? like : "",
                 like ? "? " : "");
        return KS_CONFIG_INVALID;
}

int ks_config_property(size_t i, const char **name, const char **accepted)
{
        const size_t own = sizeof(ks_props) / sizeof(ks_props[0]);
        size_t       j;

        if (i < own) {
                *name     = ks_props[i].name;
                *accepted = ks_props[i].accepted;
                return 1;
        }
        for (j = 0; ks_sizing_param_descs[j].name; j++)
                if (j == i - own) {
                        *name     = ks_sizing_param_descs[j].name;
                        *accepted = ks_sizing_param_descs[j].accepted;
                        return 1;
                }
        return 0;
}

int ks_config_topic_selected(const ks_config_t *conf, const char *name)
{
        return !conf->topics_regex ||
               regexec(&conf->topics_re, name, 0, NULL, 0) == 0;
}

int ks_config_report_path(const ks_config_t *conf, const char *client_id,
                          long pid, char *out, size_t size)
{
        return ks_config_expand_path(conf->report_path, client_id, pid, out,
                                     size);
}

int ks_config_expand_path(const char *tmpl, const char *client_id, long pid,
                          char *out, size_t size)
{
        size_t      o = 0;
        const char *p;

#define KS_PUT(ch)                                                             \
        do {                                                                   \
                if (o + 1 >= size)                                             \
                        return -1;                                             \
                out[o++] = (ch);                                               \
        } while (0)

        for (p = tmpl; *p; p++) {
                if (*p != '%') {
                        KS_PUT(*p);
                        continue;
                }
                p++;
                if (*p == 'c') {
                        const char *c;
                        for (c = client_id ? client_id : ""; *c; c++)
                                KS_PUT(isalnum((unsigned char)*c) ||
                                               *c == '.' || *c == '_' ||
                                               *c == '-'
                                           ? *c
                                           : '_');
                } else if (*p == 'p') {
                        char        num[32];
                        const char *c;
                        snprintf(num, sizeof(num), "%ld", pid);
                        for (c = num; *c; c++)
                                KS_PUT(*c);
                } else if (*p == '%') {
                        KS_PUT('%');
                } else { /* refused by set_path(); never in a template */
                        break;
                }
        }
#undef KS_PUT
        if (size == 0)
                return -1;
        out[o] = '\0';
        return 0;
}
