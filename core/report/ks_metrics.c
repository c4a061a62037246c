/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_metrics.c
 * @brief A report as Prometheus metrics (ks_metrics.h, docs/metrics.md).
 *
 * Every series carries `client_id` and `pid` (the producer's, from the
 * report's `producer`): the textfile collector merges the files of every
 * producer on the machine, and two files with the same series would make
 * it fail the whole scrape.
 */
#include "ks_metrics.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ks_analysis.h"
#include "ks_report.h"

typedef enum ks_fam {
        KS_FAM_INFO,
        KS_FAM_GENERATED,
        KS_FAM_UPTIME,
        KS_FAM_PARTITIONS,
        KS_FAM_MESSAGES,
        KS_FAM_BYTES,
        KS_FAM_ANALYSED,
        KS_FAM_UNANALYSED,
        KS_FAM_SAMPLED,
        KS_FAM_SAMPLED_OUT,
        KS_FAM_ONE_IN_MAX,
        KS_FAM_SAMPLED_SECONDS,
        KS_FAM_MOVED_MESSAGES,
        KS_FAM_MOVED_TRAFFIC,
        KS_FAM_MOVED_KEYS,
        KS_FAM_SKEW,
        KS_FAM_HOT_SHARE,
        KS_FAM_HOT_PARTITION_SHARE,
        KS_FAM_HOT_RATE,
        KS_FAM_HOT_FIXABLE,
        KS_FAM_HOT_SALT,
        KS_FAM_RATE_MESSAGES,
        KS_FAM_RATE_BYTES,
        KS_FAM_PEAK_MESSAGES,
        KS_FAM_ACKED,
        KS_FAM_ACK_PENDING,
        KS_FAM_RECOMMENDED,
        KS_FAM_WARNINGS,
        KS_FAM_CNT
} ks_fam_t;

static const struct {
        const char *name, *type, *help;
} ks_fams[KS_FAM_CNT] = {
    [KS_FAM_INFO]        = {"keyshift_report_info", "gauge",
                            "The report these metrics come from (always 1): its "
                                   "source (producer, merge or scan), keyshift and "
                                   "librdkafka versions, the partitioner modelled."},
    [KS_FAM_GENERATED]   = {"keyshift_report_generated_timestamp_seconds",
                            "gauge", "When the report was built, Unix time."},
    [KS_FAM_UPTIME]      = {"keyshift_report_uptime_seconds", "gauge",
                            "Seconds the report covers (producer start to "
                                 "report)."},
    [KS_FAM_PARTITIONS]  = {"keyshift_topic_partitions", "gauge",
                            "The topic's current partition count."},
    [KS_FAM_MESSAGES]    = {"keyshift_messages_total", "counter",
                            "Messages produced to the topic since the "
                               "producer started."},
    [KS_FAM_BYTES]       = {"keyshift_bytes_total", "counter",
                            "Key and value bytes produced to the topic since the "
                                  "producer started."},
    [KS_FAM_ANALYSED]    = {"keyshift_analysed_messages_ratio", "gauge",
                            "Fraction of the messages produced to the "
                               "topic that keyshift analysed; below 1 every "
                               "other figure is partial."},
    [KS_FAM_UNANALYSED]  = {"keyshift_unanalysed_messages_total", "counter",
                            "Messages produced to the topic that met a "
                             "full staging ring and were skipped."},
    [KS_FAM_SAMPLED]     = {"keyshift_sampled_messages_total", "counter",
                            "Messages keyshift analysed while it sampled "
                                "under overload, each standing for up to "
                                "keyshift_sampling_one_in_max messages."},
    [KS_FAM_SAMPLED_OUT] = {"keyshift_sampled_out_messages_total", "counter",
                            "Messages counted exactly but not analysed "
                            "while keyshift sampled under overload."},
    [KS_FAM_ONE_IN_MAX]  = {"keyshift_sampling_one_in_max", "gauge",
                            "The most messages one analysed message stood "
                             "for (1 in N); 0: never sampled, every figure "
                             "counts each message."},
    [KS_FAM_SAMPLED_SECONDS]     = {"keyshift_sampled_seconds_total", "counter",
                                    "Seconds in which keyshift sampled this "
                                        "topic's messages (the producer was out of "
                                        "CPU)."},
    [KS_FAM_MOVED_MESSAGES]      = {"keyshift_moved_messages_ratio", "gauge",
                                    "Fraction of hashed (keyed) messages whose "
                                         "partition would change at "
                                         "proposed_partitions."},
    [KS_FAM_MOVED_TRAFFIC]       = {"keyshift_moved_traffic_ratio", "gauge",
                                    "Fraction of all messages whose partition "
                                          "would change at proposed_partitions."},
    [KS_FAM_MOVED_KEYS]          = {"keyshift_moved_keys_ratio", "gauge",
                                    "Fraction of distinct hashed keys whose "
                                             "partition would change at proposed_partitions."},
    [KS_FAM_SKEW]                = {"keyshift_partition_skew_ratio", "gauge",
                                    "Busiest partition's messages over the median "
                                                   "partition's at partitions (scenario current or "
                                                   "proposed); 1 is even."},
    [KS_FAM_HOT_SHARE]           = {"keyshift_hot_key_share_ratio", "gauge",
                                    "Share of the topic's messages carried by its "
                                              "rank-th busiest key (the key is never a "
                                              "label)."},
    [KS_FAM_HOT_PARTITION_SHARE] = {"keyshift_hot_key_partition_share_ratio",
                                    "gauge",
                                    "Share of its partition's load carried "
                                    "by the rank-th busiest key at "
                                    "partitions (scenario current or "
                                    "proposed)."},
    [KS_FAM_HOT_RATE]      = {"keyshift_hot_key_messages_per_second", "gauge",
                              "Messages per second of the rank-th busiest key "
                                   "over the run."},
    [KS_FAM_HOT_FIXABLE]   = {"keyshift_hot_key_fixable_by_partitions", "gauge",
                              "1 when more partitions can spread the rank-th "
                                "busiest key's load, 0 when the key alone "
                                "exceeds one partition's target rate."},
    [KS_FAM_HOT_SALT]      = {"keyshift_hot_key_salt_buckets", "gauge",
                              "Sub-keys the rank-th busiest key would need to "
                                   "stay under one partition's target rate."},
    [KS_FAM_RATE_MESSAGES] = {"keyshift_messages_per_second", "gauge",
                              "Messages per second to the topic, over the "
                              "run or the last report interval."},
    [KS_FAM_RATE_BYTES]    = {"keyshift_bytes_per_second", "gauge",
                              "Bytes per second to the topic, over the run or "
                                 "the last report interval."},
    [KS_FAM_PEAK_MESSAGES] = {"keyshift_peak_messages_per_second", "gauge",
                              "0.999 quantile of the topic's per-second "
                              "message counts."},
    [KS_FAM_ACKED]         = {"keyshift_acknowledged_messages_total", "counter",
                              "Delivery reports by result: matched or mismatched "
                                      "the partition keyshift predicted, failed, "
                                      "not_predictable (sticky or random), unverified."},
    [KS_FAM_ACK_PENDING]   = {"keyshift_acknowledged_pending_messages", "gauge",
                              "Deliveries whose partition is checked again "
                                "at the next metadata refresh."},
    [KS_FAM_RECOMMENDED]   = {"keyshift_recommended_partitions", "gauge",
                              "The partition count keyshift's sizing "
                                "recommends for the topic."},
    [KS_FAM_WARNINGS]      = {"keyshift_warnings", "gauge",
                              "Warnings in the report by code, per topic (no "
                                   "topic label: the producer's own)."},
};

/** Room for one sample's labels: the topic's (at most
 *  KS_TOPIC_LABEL_MAX) and a few short ones. */
#define KS_LABELS_MAX 1280
#define KS_TOPIC_LABEL_MAX 1024

typedef struct ks_buf {
        char  *b;
        size_t len, cap;
} ks_buf_t;

struct ks_metrics {
        ks_buf_t fam[KS_FAM_CNT];
        char    *common; /**< `client_id="..",pid=".."`, escaped */
        int      oom;
};

/** @brief Appends printf output to @p b (sets m->oom on failure). */
static void buf_printf(ks_metrics_t *m, ks_buf_t *b, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void buf_printf(ks_metrics_t *m, ks_buf_t *b, const char *fmt, ...)
{
        va_list ap;
        int     n;

        if (m->oom)
                return;
        for (;;) {
                va_start(ap, fmt);
                n = vsnprintf(b->b ? b->b + b->len : NULL,
                              b->b ? b->cap - b->len : 0, fmt, ap);
                va_end(ap);
                if (n < 0) {
                        m->oom = 1;
                        return;
                }
                if (b->b && b->len + (size_t)n < b->cap) {
                        b->len += (size_t)n;
                        return;
                }
                size_t cap = b->cap ? b->cap : 4096;
                while (cap <= b->len + (size_t)n)
                        cap *= 2;
                char *nb = realloc(b->b, cap);
                if (!nb) {
                        m->oom = 1;
                        return;
                }
                b->b   = nb;
                b->cap = cap;
        }
}

/**
 * @brief Escapes @p s as a label value (backslash, double quote and line
 *        feed, as the exposition format asks) into a new string.
 * @returns it, or NULL on ENOMEM.
 */
static char *label_escape(const char *s)
{
        size_t      n = 0;
        char       *out, *o;
        const char *p;

        for (p = s; *p; p++)
                n += (*p == '\\' || *p == '"' || *p == '\n') ? 2 : 1;
        if (!(out = malloc(n + 1)))
                return NULL;
        for (o = out, p = s; *p; p++) {
                if (*p == '\\' || *p == '"' || *p == '\n') {
                        *o++ = '\\';
                        *o++ = *p == '\n' ? 'n' : *p;
                } else {
                        *o++ = *p;
                }
        }
        *o = '\0';
        return out;
}

/** @brief Formats @p v as the exposition format reads it, exactly. */
static void fmt_value(double v, char *out, size_t size)
{
        int prec;

        if (isnan(v)) {
                snprintf(out, size, "NaN");
                return;
        }
        if (isinf(v)) {
                snprintf(out, size, v > 0 ? "+Inf" : "-Inf");
                return;
        }
        if (v == floor(v) && fabs(v) < 1e15) {
                snprintf(out, size, "%.0f", v);
                return;
        }
        /* the shortest that reads back as the same double */
        for (prec = 15; prec < 17; prec++) {
                snprintf(out, size, "%.*g", prec, v);
                if (strtod(out, NULL) == v)
                        return;
        }
        snprintf(out, size, "%.17g", v);
}

/**
 * @brief Adds one sample of family @p f: the common labels, then
 *        @p labels (already escaped, may be ""), then @p v.
 */
static void sample(ks_metrics_t *m, ks_fam_t f, const char *labels, double v)
{
        char        val[40];
        const char *sep = *m->common && *labels ? "," : "";

        fmt_value(v, val, sizeof(val));
        if (!*m->common && !*labels)
                buf_printf(m, &m->fam[f], "%s %s\n", ks_fams[f].name, val);
        else
                buf_printf(m, &m->fam[f], "%s{%s%s%s} %s\n", ks_fams[f].name,
                           m->common, sep, labels, val);
}

/** @brief sample() of a JSON number or boolean @p j; nothing for any other
 *         value (null: not known). */
static void sample_json(ks_metrics_t *m, ks_fam_t f, const char *labels,
                        const json_t *j)
{
        if (json_is_number(j))
                sample(m, f, labels, json_number_value(j));
        else if (json_is_boolean(j))
                sample(m, f, labels, json_is_true(j) ? 1 : 0);
}

/** @brief sample_json() of member @p key of @p o. */
static void sample_member(ks_metrics_t *m, ks_fam_t f, const char *labels,
                          const json_t *o, const char *key)
{
        sample_json(m, f, labels, json_object_get(o, key));
}

/** @returns member @p key of @p o as a string, or @p def. */
static const char *str_or(const json_t *o, const char *key, const char *def)
{
        const char *s = json_string_value(json_object_get(o, key));
        return s ? s : def;
}

ks_metrics_t *ks_metrics_new(const json_t *head)
{
        ks_metrics_t *m = calloc(1, sizeof(*m));
        const json_t *prod, *pid;
        const char   *source;
        char         *cid, *src, *kv, *rv, *part;
        char          pidbuf[32] = "";
        size_t        n;

        if (!m)
                return NULL;
        prod = json_object_get(head, "producer");
        pid  = json_object_get(prod, "pid");
        if (json_is_integer(pid))
                snprintf(pidbuf, sizeof(pidbuf), "%lld",
                         (long long)json_integer_value(pid));
        cid = label_escape(str_or(prod, "client_id", ""));
        n   = (cid ? strlen(cid) : 0) + strlen(pidbuf) + 32;
        if (cid && (m->common = malloc(n)))
                snprintf(m->common, n, "client_id=\"%s\",pid=\"%s\"", cid,
                         pidbuf);
        free(cid);
        if (!m->common) {
                free(m);
                return NULL;
        }
        /* plugin reports have no `source`; a merge says so in producer */
        source =
            str_or(head, "source",
                   !strcmp(str_or(prod, "partitioner_source", ""), "merged")
                       ? "merge"
                       : "producer");
        src  = label_escape(source);
        kv   = label_escape(str_or(prod, "keyshift_version", ""));
        rv   = label_escape(str_or(prod, "librdkafka_version", ""));
        part = label_escape(str_or(prod, "partitioner", ""));
        if (src && kv && rv && part) {
                char  *labels;
                size_t ln =
                    strlen(src) + strlen(kv) + strlen(rv) + strlen(part) + 96;
                if ((labels = malloc(ln))) {
                        snprintf(labels, ln,
                                 "source=\"%s\",keyshift_version=\"%s\","
                                 "librdkafka_version=\"%s\","
                                 "partitioner=\"%s\"",
                                 src, kv, rv, part);
                        sample(m, KS_FAM_INFO, labels, 1);
                        free(labels);
                } else {
                        m->oom = 1;
                }
        } else {
                m->oom = 1;
        }
        free(src);
        free(kv);
        free(rv);
        free(part);
        {
                double t = ks_report_rfc3339_parse(
                    json_string_value(json_object_get(head, "generated_at")));
                if (t >= 0)
                        sample(m, KS_FAM_GENERATED, "", t);
        }
        sample_member(m, KS_FAM_UPTIME, "", head, "uptime_s");
        return m;
}

/** @brief Adds warnings @p arr ([{code, message}]) counted by code, with
 *         @p topic_label ("" or `topic="..."`) first. */
static void add_warnings(ks_metrics_t *m, const char *topic_label,
                         const json_t *arr)
{
        size_t i, j, n = json_array_size(arr);

#define KS_CODE_AT(k) str_or(json_array_get(arr, (k)), "code", "")
        for (i = 0; i < n; i++) {
                const char *code = KS_CODE_AT(i);
                size_t      cnt  = 0;
                char        labels[KS_LABELS_MAX];
                char       *esc;

                for (j = 0; j < i && strcmp(code, KS_CODE_AT(j)); j++)
                        ;
                if (!*code || j < i) /* counted at its first */
                        continue;
                for (j = i; j < n; j++)
                        cnt += !strcmp(code, KS_CODE_AT(j));
                if (!(esc = label_escape(code))) {
                        m->oom = 1;
                        return;
                }
                snprintf(labels, sizeof(labels), "%s%scode=\"%.64s\"",
                         topic_label, *topic_label ? "," : "", esc);
                free(esc);
                sample(m, KS_FAM_WARNINGS, labels, (double)cnt);
        }
#undef KS_CODE_AT
}

/** @brief The hot keys' series of one topic (@p tl: `topic="..."`). */
static void add_hot_keys(ks_metrics_t *m, const char *tl, const json_t *topic,
                         long long current)
{
        const json_t *hot = json_object_get(topic, "hot_keys");
        size_t        i;
        char          labels[KS_LABELS_MAX];

        for (i = 0; i < json_array_size(hot) && i < KS_METRICS_HOT_KEYS_MAX;
             i++) {
                const json_t *k = json_array_get(hot, i);
                const json_t *prop =
                    json_object_get(k, "share_of_partition_proposed");
                const char *count;
                json_t     *v;

                snprintf(labels, sizeof(labels), "%s,rank=\"%zu\"", tl, i + 1);
                sample_member(m, KS_FAM_HOT_SHARE, labels, k, "share");
                sample_member(m, KS_FAM_HOT_RATE, labels, k, "msgs_per_s");
                sample_member(m, KS_FAM_HOT_FIXABLE, labels, k,
                              "fixable_by_partitions");
                sample_member(m, KS_FAM_HOT_SALT, labels, k, "salt_buckets");
                if (current > 0) {
                        snprintf(labels, sizeof(labels),
                                 "%s,rank=\"%zu\",partitions=\"%lld\","
                                 "scenario=\"current\"",
                                 tl, i + 1, current);
                        sample_member(m, KS_FAM_HOT_PARTITION_SHARE, labels, k,
                                      "share_of_partition");
                }
                json_object_foreach((json_t *)prop, count, v)
                {
                        snprintf(labels, sizeof(labels),
                                 "%s,rank=\"%zu\",partitions=\"%.12s\","
                                 "scenario=\"proposed\"",
                                 tl, i + 1, count);
                        sample_json(m, KS_FAM_HOT_PARTITION_SHARE, labels, v);
                }
        }
}

/** What the topic label adds to the escaped name: `topic=""`, its NUL,
 *  and room to spare. */
#define KS_TOPIC_LABEL_FRAME 16

/**
 * @returns `topic="<name>"`, the name escaped (free() it), or NULL: on
 *          ENOMEM (m->oom set), or when the label would be longer than
 *          KS_TOPIC_LABEL_MAX (not a Kafka topic name: 249 bytes at most).
 */
static char *topic_label(ks_metrics_t *m, const char *name)
{
        char  *esc = label_escape(name);
        char  *tl;
        size_t n = esc ? strlen(esc) + KS_TOPIC_LABEL_FRAME : 0;

        if (n > KS_TOPIC_LABEL_MAX) {
                free(esc);
                return NULL;
        }
        if (!esc || !(tl = malloc(n))) {
                free(esc);
                m->oom = 1;
                return NULL;
        }
        snprintf(tl, n, "topic=\"%s\"", esc);
        free(esc);
        return tl;
}

/** @brief The topic's `analysis` series, or what older reports say of it
 *         (ks_analysis.h); @p tl: `topic="..."`. */
static void add_analysis(ks_metrics_t *m, const char *tl, const json_t *topic)
{
        ks_analysis_t a;

        ks_analysis_of_topic(topic, &a);
        sample(m, KS_FAM_ANALYSED, tl, a.analysed_fraction);
        sample(m, KS_FAM_UNANALYSED, tl, (double)a.unanalysed);
        sample(m, KS_FAM_SAMPLED, tl, (double)a.smp.in_messages);
        sample(m, KS_FAM_SAMPLED_OUT, tl, (double)a.smp.out_messages);
        sample(m, KS_FAM_ONE_IN_MAX, tl, (double)a.smp.one_in_max);
        sample(m, KS_FAM_SAMPLED_SECONDS, tl, (double)a.smp.seconds);
}

/** @brief What each proposed count would move (messages, traffic, keys). */
static void add_proposals(ks_metrics_t *m, const char *tl, const json_t *props)
{
        char   labels[KS_LABELS_MAX];
        size_t i;

        for (i = 0; i < json_array_size(props); i++) {
                const json_t *p     = json_array_get(props, i);
                const json_t *moved = json_object_get(p, "moved");
                const json_t *pc    = json_object_get(p, "partition_count");

                if (!json_is_integer(pc))
                        continue;
                snprintf(labels, sizeof(labels),
                         "%s,proposed_partitions=\"%lld\"", tl,
                         (long long)json_integer_value(pc));
                sample_member(m, KS_FAM_MOVED_MESSAGES, labels, moved,
                              "messages_fraction");
                sample_member(m, KS_FAM_MOVED_TRAFFIC, labels, moved,
                              "traffic_fraction");
                sample_member(m, KS_FAM_MOVED_KEYS, labels, moved,
                              "distinct_keys_fraction");
        }
}

/** @brief The partitions' skew under each count (`skew.partitions`),
 *         the @p current one's labelled so. */
static void add_skew(ks_metrics_t *m, const char *tl, const json_t *skew,
                     long long current)
{
        char        labels[KS_LABELS_MAX];
        const char *count;
        json_t     *v;

        json_object_foreach((json_t *)skew, count, v)
        {
                snprintf(labels, sizeof(labels),
                         "%s,partitions=\"%.12s\",scenario=\"%s\"", tl, count,
                         atoll(count) == current ? "current" : "proposed");
                sample_member(m, KS_FAM_SKEW, labels, v, "max_over_median");
        }
}

/** @brief The topic's rates: over the run and the last interval, and the
 *         peak second (no series when @p rates is not an object). */
static void add_rates(ks_metrics_t *m, const char *tl, const json_t *rates)
{
        char labels[KS_LABELS_MAX];

        if (!json_is_object(rates))
                return;
        snprintf(labels, sizeof(labels), "%s,window=\"run\"", tl);
        sample_member(m, KS_FAM_RATE_MESSAGES, labels, rates, "msgs_per_s");
        sample_member(m, KS_FAM_RATE_BYTES, labels, rates, "bytes_per_s");
        snprintf(labels, sizeof(labels), "%s,window=\"interval\"", tl);
        sample_member(m, KS_FAM_RATE_MESSAGES, labels,
                      json_object_get(rates, "interval"), "msgs_per_s");
        sample_member(m, KS_FAM_RATE_BYTES, labels,
                      json_object_get(rates, "interval"), "bytes_per_s");
        sample_member(m, KS_FAM_PEAK_MESSAGES, tl, rates, "peak_msgs_per_s");
}

/** @brief The acknowledgements by result, and those pending verification
 *         (no series when @p ack is not an object). */
static void add_acks(ks_metrics_t *m, const char *tl, const json_t *ack)
{
        static const char *const acked[] = {"matched", "mismatched", "failed",
                                            "not_predictable", "unverified"};
        char                     labels[KS_LABELS_MAX];
        size_t                   i;

        if (!json_is_object(ack))
                return;
        for (i = 0; i < sizeof(acked) / sizeof(acked[0]); i++) {
                snprintf(labels, sizeof(labels), "%s,result=\"%s\"", tl,
                         acked[i]);
                sample_member(m, KS_FAM_ACKED, labels, ack, acked[i]);
        }
        sample_member(m, KS_FAM_ACK_PENDING, tl, ack, "pending_verification");
}

void ks_metrics_topic(ks_metrics_t *m, const char *name, const json_t *topic)
{
        const json_t *cur = json_object_get(
            json_object_get(topic, "partition_count"), "current");
        long long current = json_is_integer(cur) ? json_integer_value(cur) : 0;
        char     *tl;

        if (!m || m->oom || !(tl = topic_label(m, name)))
                return;
        sample_json(m, KS_FAM_PARTITIONS, tl, cur);
        sample_member(m, KS_FAM_MESSAGES, tl, topic, "messages");
        sample_member(m, KS_FAM_BYTES, tl, topic, "bytes");
        add_analysis(m, tl, topic);
        add_proposals(m, tl, json_object_get(topic, "proposals"));
        add_skew(m, tl,
                 json_object_get(json_object_get(topic, "skew"), "partitions"),
                 current);
        add_hot_keys(m, tl, topic, current);
        add_rates(m, tl, json_object_get(topic, "rates"));
        add_acks(m, tl, json_object_get(topic, "acknowledged"));
        sample_member(m, KS_FAM_RECOMMENDED, tl,
                      json_object_get(topic, "sizing"), "recommended");
        add_warnings(m, tl, json_object_get(topic, "warnings"));
        free(tl);
}

struct ks_metrics_kept {
        size_t len[KS_FAM_CNT]; /**< bytes of each family, in order */
        char   text[];
};

/** @brief Appends @p n bytes to family buffer @p b (sets m->oom). */
static void buf_put(ks_metrics_t *m, ks_buf_t *b, const char *s, size_t n)
{
        if (m->oom || !n)
                return;
        if (b->len + n >= b->cap) {
                size_t cap = b->cap ? b->cap : 4096;
                char  *nb;
                while (cap <= b->len + n)
                        cap *= 2;
                if (!(nb = realloc(b->b, cap))) {
                        m->oom = 1;
                        return;
                }
                b->b   = nb;
                b->cap = cap;
        }
        memcpy(b->b + b->len, s, n);
        b->len += n;
}

ks_metrics_kept_t *ks_metrics_topic_kept(ks_metrics_t *m, const char *name,
                                         const json_t *topic)
{
        size_t             before[KS_FAM_CNT], n = 0, at = 0;
        ks_metrics_kept_t *k;
        int                f;

        if (!m)
                return NULL;
        for (f = 0; f < KS_FAM_CNT; f++)
                before[f] = m->fam[f].len;
        ks_metrics_topic(m, name, topic);
        if (m->oom)
                return NULL;
        for (f = 0; f < KS_FAM_CNT; f++)
                n += m->fam[f].len - before[f];
        if (!(k = malloc(sizeof(*k) + n)))
                return NULL;
        for (f = 0; f < KS_FAM_CNT; f++) {
                k->len[f] = m->fam[f].len - before[f];
                if (k->len[f])
                        memcpy(k->text + at, m->fam[f].b + before[f],
                               k->len[f]);
                at += k->len[f];
        }
        return k;
}

void ks_metrics_topic_again(ks_metrics_t *m, const ks_metrics_kept_t *k)
{
        size_t at = 0;
        int    f;

        if (!m || !k)
                return;
        for (f = 0; f < KS_FAM_CNT; f++) {
                buf_put(m, &m->fam[f], k->text + at, k->len[f]);
                at += k->len[f];
        }
}

void ks_metrics_kept_free(ks_metrics_kept_t *k)
{
        free(k);
}

void ks_metrics_warnings(ks_metrics_t *m, const json_t *warnings)
{
        if (m)
                add_warnings(m, "", warnings);
}

int ks_metrics_print(const ks_metrics_t *m, FILE *fp)
{
        int f;

        if (!m || m->oom)
                return -1;
        for (f = 0; f < KS_FAM_CNT; f++) {
                if (!m->fam[f].len)
                        continue;
                if (fprintf(fp, "# HELP %s %s\n# TYPE %s %s\n", ks_fams[f].name,
                            ks_fams[f].help, ks_fams[f].name,
                            ks_fams[f].type) < 0 ||
                    fwrite(m->fam[f].b, 1, m->fam[f].len, fp) != m->fam[f].len)
                        return -1;
        }
        return 0;
}

int ks_metrics_write_atomic(const ks_metrics_t *m, const char *path,
                            char *errstr, size_t errstr_size)
{
        ks_report_writer_t w;

        if (!m || m->oom) {
                snprintf(errstr, errstr_size,
                         "cannot build the metrics for %s: out of memory",
                         path);
                return -1;
        }
        if (ks_report_writer_open(&w, path)) {
                snprintf(errstr, errstr_size, "%s", w.errstr);
                return -1;
        }
        if (ks_metrics_print(m, w.fp)) {
                snprintf(w.errstr, sizeof(w.errstr), "cannot write %s", w.tmp);
                w.failed = 1;
        }
        return ks_report_writer_finish(&w, errstr, errstr_size);
}

void ks_metrics_free(ks_metrics_t *m)
{
        int f;

        if (!m)
                return;
        for (f = 0; f < KS_FAM_CNT; f++)
                free(m->fam[f].b);
        free(m->common);
        free(m);
}

int ks_metrics_report(const json_t *report, FILE *fp)
{
        ks_metrics_t *m = ks_metrics_new(report);
        const char   *name;
        json_t       *t;
        int           r;

        if (!m)
                return -1;
        json_object_foreach(json_object_get(report, "topics"), name, t)
        {
                json_t *h = json_object_get(t, "hot_keys"), *c = NULL;
                json_t *rows = NULL;
                char    why[128];
                /* as its file holds it: hot keys as columns */
                if (json_is_object(h) &&
                    (rows = ks_report_hot_keys_rows(h, why, sizeof(why))) &&
                    (c = json_copy(t)))
                        json_object_set_new(c, "hot_keys", rows);
                else if (json_is_object(h))
                        json_decref(rows);
                ks_metrics_topic(m, name, c ? c : t);
                json_decref(c);
        }
        ks_metrics_warnings(m, json_object_get(report, "warnings"));
        r = ks_metrics_print(m, fp);
        ks_metrics_free(m);
        return r;
}
