/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ksb_accuracy.c
 * @brief What the sketches say against exact values on the same stream,
 *        so that no speed-up trades accuracy away unnoticed.
 *
 * Streams as in ksb_core: Zipf MMSI keys over 100,000 ids (1 % as int32,
 * so distinct byte keys = distinct (id, encoding) pairs), and 10 million
 * distinct keys. One topic, current 6, proposed 12, 16, 24, fed as the
 * plugin feeds it (on_send's staging ring, the drainer's key table). The figures
 * are read from the topic's report JSON (ks_report_topic()), i.e. what a
 * user reads:
 *  - keys.distinct_estimate against the exact count of distinct byte keys
 *    (relative error; bound: 3 x the reported distinct_error);
 *  - proposals[i].moved.distinct_keys_fraction against the exact fraction
 *    of distinct keys whose partition changes (absolute error; bound: 3 x
 *    the reported distinct_keys_fraction_error, or 1e-9 when exact);
 *  - proposals[i].moved.messages_fraction against the exact one (keyshift
 *    counts every message: bound 1e-9);
 *  - hot_keys: how many of the exact 20 busiest keys are listed, and the
 *    largest relative error of their counts.
 * The oracle for partitions is librdkafka's own
 * rd_kafka_msg_partitioner_consistent() (CRC-32), not keyshift's code.
 *
 * --force-n 4,16,64 (issue 33): the same streams staged with every message
 * sampled at 1 in N (ks_stage_force_sampling(), as under overload), and
 * instead of the above, every per-message figure the report gives with a
 * sampling error (the current and proposed partitions' messages, moved
 * messages, the window) against its exact value: within 3 x its stated
 * standard error (messages_sampling_error, which is 3 sigma already), and
 * messages_produced exact. Per stream and N the share within is printed;
 * the goal is the share pooled over all of them (3 sigma: 0.997 expected;
 * bound 0.99).
 *
 * Usage: ksb_accuracy [--msgs N] [--distinct N] [--force-n N,N,...]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <librdkafka/rdkafka.h>

#include "ks_report.h"
#include "ksb_keys.h"
#include "ksb_stats.h"
#include "ksb_topics.h"

#define KSB_HOT 20

static const int32_t ksb_proposed[3] = {12, 16, 24};

static int32_t oracle_partition(const ksb_key_t *k, int32_t cnt)
{
        return rd_kafka_msg_partitioner_consistent(NULL, k->bytes, k->len, cnt,
                                                   NULL, NULL);
}

typedef struct exact {
        double    distinct;
        double    moved_keys[3];     /**< fraction of distinct keys */
        double    moved_messages[3]; /**< fraction of messages */
        uint64_t *count;             /**< [2 x keys] messages per byte key */
} exact_t;

/** @brief Exact figures; byte key = id x 2 + (int32 ? 1 : 0). */
static void compute_exact(const ksb_stream_t *st, exact_t *ex)
{
        uint64_t moved_msgs[3] = {0}, moved_keys[3] = {0}, distinct = 0;
        size_t   i, p;

        ex->count = calloc(st->keys * 2, sizeof(*ex->count));
        if (!ex->count)
                ksb_die("out of memory");
        for (i = 0; i < st->n; i++) {
                const ksb_key_t *k     = &st->msgs[i];
                size_t           b     = (size_t)k->id * 2 + (k->len == 4);
                int32_t          cur   = oracle_partition(k, 6);
                int              first = ex->count[b]++ == 0;
                distinct += first;
                for (p = 0; p < 3; p++) {
                        int moved = oracle_partition(k, ksb_proposed[p]) != cur;
                        moved_msgs[p] += moved;
                        moved_keys[p] += moved && first;
                }
        }
        ex->distinct = (double)distinct;
        for (p = 0; p < 3; p++) {
                ex->moved_keys[p] = (double)moved_keys[p] / (double)distinct;
                ex->moved_messages[p] = (double)moved_msgs[p] / (double)st->n;
        }
}

static double jnum(json_t *o, const char *a, const char *b)
{
        json_t *v = json_object_get(o, a);

        if (b)
                v = json_object_get(v, b);
        return json_number_value(v);
}

/** @returns the byte-key index of a reported hot key, or -1. */
static long hot_key_index(json_t *hk, const ksb_stream_t *st)
{
        const char *key = json_string_value(json_object_get(hk, "key"));
        const char *hex = json_string_value(json_object_get(hk, "key_hex"));
        size_t      i;

        /* The report names keys; find one message with these bytes. */
        for (i = 0; i < st->n && i < 5000000; i++) {
                const ksb_key_t *k = &st->msgs[i];
                char             h[32];
                int              j;
                if (key && k->len != 4 && strlen(key) == k->len &&
                    !memcmp(key, k->bytes, k->len))
                        return (long)k->id * 2;
                if (k->len != 4 || !hex)
                        continue;
                for (j = 0; j < 4; j++)
                        snprintf(h + 2 * j, 3, "%02x", k->bytes[j]);
                if (!strcmp(h, hex))
                        return (long)k->id * 2 + 1;
        }
        return -1;
}

static int cmp_desc_u64(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
        return x < y ? 1 : x > y ? -1 : 0;
}

/** Set: measure() prints no RESULT line (the extra seeds of a stream whose
 *  pooled figure is printed once). */
static int quiet;
/** Listed hot keys, and those within their stated error, over every
 *  measure() call since the last reset (pooled over seeds). */
static size_t pooled_listed, pooled_within;

static void result(const char *id, const char *what, const char *op,
                   double bound, const double *v)
{
        if (!quiet)
                ksb_result(id, what, op, bound, "", v, 1);
}

/**
 * @brief Stream @p st fed as the plugin feeds it (staged by on_send,
 *        counted in the drainer's key table, analysed as weighted runs,
 *        ks_batch.h) to topic "ais" (current 6, proposed 12, 16, 24), each
 *        message staged at 1 in 2^@p shift (-1: sampling only under
 *        overload, as the plugin).
 * @returns the topic's report object (ks_report_topic()), the caller's.
 */
static json_t *report_of(const ksb_stream_t *st, int shift)
{
        const char *const props[] = {"keyshift.partitions.proposed", "12,16,24",
                                     NULL};
        ksb_topics_t      kt;
        ks_topic_t       *t;
        ks_topic_snapshot_t snap;
        ks_report_opts_t    opts;
        ks_warn_list_t      wl;
        json_t             *o;
        size_t              i;

        ksb_topics_init(&kt, props);
        ks_stage_force_sampling(kt.stage, shift);
        t = ksb_topics_add(&kt, "ais", 6);
        for (i = 0; i < st->n; i++) {
                ksb_topics_on_send(&kt, "ais", st->msgs[i].bytes,
                                   st->msgs[i].len, 64);
                if ((i & 2047) == 2047)
                        ks_stage_collect(kt.stage);
        }
        ks_stage_drain(kt.stage);
        if (ks_topic_snapshot(t, &snap))
                ksb_die("snapshot failed");
        ks_warn_list_init(&wl);
        opts = ksb_topics_report_opts(&kt, KSB_HOT);
        o    = ks_report_topic(&snap, &opts, &wl);
        if (!o)
                ksb_die("report failed");
        ks_warn_list_clear(&wl);
        ks_topic_snapshot_free(&snap);
        ksb_topics_destroy(&kt);
        return o;
}

static void measure(const ksb_stream_t *st, const char *tag)
{
        exact_t   ex;
        json_t   *o, *props_j, *hot;
        double    v, est, err, bound;
        uint64_t *sorted, kth;
        size_t    i, p, found = 0, within = 0, listed = 0;
        double    worst = 0, serr, sampled_err = 0;
        int       ok;
        char      id[64], what[160];

        compute_exact(st, &ex);
        o = report_of(st, -1);

        est   = jnum(o, "keys", "distinct_estimate");
        err   = jnum(o, "keys", "distinct_error");
        v     = fabs(est - ex.distinct) / ex.distinct;
        bound = err > 0 ? 3 * err : 1e-9;
        ksb_note("%s: distinct keys exact %.0f, reported %.0f (+-%.2f %%)", tag,
                 ex.distinct, est, 100 * err);
        snprintf(id, sizeof(id), "f.%s.distinct.relerr", tag);
        snprintf(what, sizeof(what),
                 "distinct-key estimate, relative error (bound 3 sigma), %s",
                 st->name);
        result(id, what, "<=", bound, &v);

        props_j = json_object_get(o, "proposals");
        for (p = 0; p < 3; p++) {
                json_t *moved =
                    json_object_get(json_array_get(props_j, p), "moved");
                double f  = jnum(moved, "distinct_keys_fraction", NULL);
                double fe = jnum(moved, "distinct_keys_fraction_error", NULL);
                double mf = jnum(moved, "messages_fraction", NULL);
                ksb_note("%s: 6 -> %d: moved keys exact %.4f reported %.4f "
                         "(+-%.4f); moved messages exact %.6f reported %.6f",
                         tag, ksb_proposed[p], ex.moved_keys[p], f, fe,
                         ex.moved_messages[p], mf);
                v = fabs(f - ex.moved_keys[p]);
                snprintf(id, sizeof(id), "f.%s.moved_keys_%d.abserr", tag,
                         ksb_proposed[p]);
                snprintf(what, sizeof(what),
                         "moved-key fraction 6->%d, abs error (bound 3 "
                         "sigma), %s",
                         ksb_proposed[p], st->name);
                result(id, what, "<=", fe > 0 ? 3 * fe : 1e-9, &v);
                v = fabs(mf - ex.moved_messages[p]);
                snprintf(id, sizeof(id), "f.%s.moved_msgs_%d.abserr", tag,
                         ksb_proposed[p]);
                snprintf(what, sizeof(what),
                         "moved-message fraction 6->%d, abs error, %s",
                         ksb_proposed[p], st->name);
                result(id, what, "<=", 1e-9, &v);
        }

        sorted = malloc(st->keys * 2 * sizeof(*sorted));
        memcpy(sorted, ex.count, st->keys * 2 * sizeof(*sorted));
        qsort(sorted, st->keys * 2, sizeof(*sorted), cmp_desc_u64);
        kth = sorted[KSB_HOT - 1];
        hot = json_object_get(o, "hot_keys");
        for (i = 0; i < json_array_size(hot) && i < KSB_HOT; i++) {
                json_t *hk  = json_array_get(hot, i);
                long    b   = hot_key_index(hk, st);
                double  cnt = jnum(hk, "messages", NULL);
                if (b < 0)
                        continue;
                found += ex.count[b] >= kth && ex.count[b] > 1;
                /* within what the report states: Space-Saving's one-sided
                 * bound and, if the summary was given samples, 3 standard
                 * errors either way */
                serr = jnum(hk, "messages_sampling_error", NULL);
                ok   = (double)ex.count[b] >=
                         cnt - jnum(hk, "messages_error", NULL) - serr &&
                     (double)ex.count[b] <= cnt + serr;
                within += ok;
                listed++;
                sampled_err = serr > sampled_err ? serr : sampled_err;
                if (!ok)
                        ksb_note("%s: hot key %s: exact %llu, reported %.0f "
                                 "(error %.0f, sampling error %.0f)",
                                 tag,
                                 json_string_value(json_object_get(hk, "key")),
                                 (unsigned long long)ex.count[b], cnt,
                                 jnum(hk, "messages_error", NULL), serr);
                if (ex.count[b] &&
                    fabs(cnt - (double)ex.count[b]) / (double)ex.count[b] >
                        worst)
                        worst = fabs(cnt - (double)ex.count[b]) /
                                (double)ex.count[b];
        }
        if (sorted[0] > 1) { /* a stream with hot keys */
                v = (double)found / KSB_HOT;
                snprintf(id, sizeof(id), "f.%s.hot_keys.recall", tag);
                snprintf(what, sizeof(what),
                         "exact top-20 keys listed in hot_keys, %s", st->name);
                result(id, what, ">=", 1.0, &v);
                snprintf(id, sizeof(id), "f.%s.hot_keys.count_relerr", tag);
                snprintf(what, sizeof(what),
                         "worst relative count error of listed hot keys, %s",
                         st->name);
                result(id, what, "-", 0, &worst);
                pooled_listed += listed;
                pooled_within += within;
                v = listed ? (double)within / (double)listed : 0;
                snprintf(id, sizeof(id), "f.%s.hot_keys.within_error", tag);
                snprintf(what, sizeof(what),
                         "listed hot keys whose exact count is within the "
                         "stated error (sampled: %s), %s",
                         sampled_err > 0 ? "yes" : "no", st->name);
                /* exact streams: every one; sampled: the pooled figure */
                result(id, what, sampled_err > 0 ? "-" : ">=", 1.0, &v);
                ksb_note("%s: hot-key summary given %.0f of %.0f messages "
                         "passed by (one in %.0f)",
                         tag, jnum(o, "hot_keys_sampling", "messages_sampled"),
                         jnum(o, "hot_keys_sampling", "messages_passed_by"),
                         jnum(o, "hot_keys_sampling", "one_in"));
        }
        free(sorted);
        json_decref(o);
        free(ex.count);
}

/** @returns field @p f of partition @p i of a partitions list, in either
 *           form: an array of objects, or columns ({"messages": [...]}). */
static double part_field(json_t *parts, size_t i, const char *f)
{
        if (json_is_array(parts))
                return jnum(json_array_get(parts, i), f, NULL);
        return json_number_value(json_array_get(json_object_get(parts, f), i));
}

/** Figures within their stated error, and all figures, over every
 *  measure_sampled() call. */
static size_t sampled_within, sampled_figures;

/** @brief One figure against its exact value: within @p err (3 sigma, as
 *         stated), counted in @p within / @p n. */
static void figure(const char *tag, const char *what, double got, double exact,
                   double err, size_t *within, size_t *n)
{
        int ok = fabs(got - exact) <= err;
        *within += ok;
        (*n)++;
        if (!ok)
                ksb_note("%s: %s: exact %.0f, estimated %.0f +- %.0f", tag,
                         what, exact, got, err);
}

/** @brief Stream @p st staged at 1 in 2^@p shift (every message, forced);
 *         its per-message figures against the exact ones. */
static void measure_sampled(const ksb_stream_t *st, const char *name, int shift)
{
        json_t  *o, *parts, *props_j;
        uint64_t cur[6] = {0}, prop[3][24] = {{0}}, moved[3] = {0};
        size_t   i, p, within = 0, n = 0;
        double   v;
        char     tag[64], id[96], what[192], fig[64];

        snprintf(tag, sizeof(tag), "N%d.%s", 1 << shift, name);
        for (i = 0; i < st->n; i++) {
                const ksb_key_t *k = &st->msgs[i];
                int32_t          c = oracle_partition(k, 6);
                cur[c]++;
                for (p = 0; p < 3; p++) {
                        int32_t q = oracle_partition(k, ksb_proposed[p]);
                        prop[p][q]++;
                        moved[p] += q != c;
                }
        }
        o = report_of(st, shift);

        /* counted exactly by the producing threads, sampled or not */
        v = jnum(o, "analysis", "messages_produced") == (double)st->n;
        snprintf(id, sizeof(id), "f.%s.produced_exact", tag);
        snprintf(what, sizeof(what),
                 "messages_produced exact at 1 in %d (1 = yes), %s", 1 << shift,
                 st->name);
        ksb_result(id, what, ">=", 1, "", &v, 1);

        figure(tag, "window messages", jnum(o, "window", "messages"),
               (double)st->n, jnum(o, "window", "messages_sampling_error"),
               &within, &n);
        parts = json_object_get(json_object_get(o, "current"), "partitions");
        for (i = 0; i < 6; i++) {
                snprintf(fig, sizeof(fig), "current partition %zu", i);
                figure(tag, fig, part_field(parts, i, "messages"),
                       (double)cur[i],
                       part_field(parts, i, "messages_sampling_error"), &within,
                       &n);
        }
        props_j = json_object_get(o, "proposals");
        for (p = 0; p < 3; p++) {
                json_t *pr = json_array_get(props_j, p);
                json_t *mv = json_object_get(pr, "moved");
                parts      = json_object_get(pr, "partitions");
                for (i = 0; i < (size_t)ksb_proposed[p]; i++) {
                        snprintf(fig, sizeof(fig), "%d: partition %zu",
                                 ksb_proposed[p], i);
                        figure(tag, fig, part_field(parts, i, "messages"),
                               (double)prop[p][i],
                               part_field(parts, i, "messages_sampling_error"),
                               &within, &n);
                }
                snprintf(fig, sizeof(fig), "6 -> %d: moved messages",
                         ksb_proposed[p]);
                figure(tag, fig, jnum(mv, "messages", NULL), (double)moved[p],
                       jnum(mv, "messages_sampling_error", NULL), &within, &n);
        }
        v = (double)within / (double)n;
        ksb_note("%s: %zu of %zu per-message figures within their stated "
                 "error",
                 tag, within, n);
        snprintf(id, sizeof(id), "f.%s.within_error", tag);
        snprintf(what, sizeof(what),
                 "per-message figures within their stated 3-sigma error at "
                 "1 in %d, %s",
                 1 << shift, st->name);
        ksb_result(id, what, "-", 0, "", &v, 1);
        sampled_within += within;
        sampled_figures += n;
        json_decref(o);
}

/** @brief --force-n: the four streams at each N of @p ns. */
static void force_n(const int *ns, int cnt, size_t msgs, size_t distinct,
                    uint64_t seed)
{
        ksb_stream_t st;
        double       v;
        int          j;

        for (j = 0; j < cnt; j++) {
                int shift = 0;
                while ((1 << shift) < ns[j])
                        shift++;
                ksb_stream_zipf(&st, msgs, 100000, 1.0, 0.01, 42);
                measure_sampled(&st, "zipf", shift);
                ksb_stream_free(&st);
                ksb_stream_distinct(&st, distinct);
                measure_sampled(&st, "distinct", shift);
                ksb_stream_free(&st);
                ksb_stream_spiked(&st, distinct, 100, 0.2, seed);
                measure_sampled(&st, "spiked", shift);
                ksb_stream_free(&st);
                ksb_stream_ais(&st, ksb_ais_log_path(), msgs);
                measure_sampled(&st, "ais", shift);
                ksb_stream_free(&st);
        }
        v = (double)sampled_within / (double)sampled_figures;
        ksb_note("forced sampling: %zu of %zu per-message figures within "
                 "their stated error",
                 sampled_within, sampled_figures);
        ksb_result("f.sampled.within_error",
                   "per-message figures within their stated 3-sigma error, "
                   "sampled at every forced N, 4 streams pooled (0.997 "
                   "expected)",
                   ">=", 0.99, "", &v, 1);
}

int main(int argc, char **argv)
{
        size_t       msgs = 2000000, distinct = 10000000;
        uint64_t     seed = 43, s;
        double       v;
        ksb_stream_t st;
        int          a, ns[8], ncnt = 0;

        for (a = 1; a < argc; a++) {
                if (!strcmp(argv[a], "--msgs") && a + 1 < argc)
                        msgs = strtoull(argv[++a], NULL, 10);
                else if (!strcmp(argv[a], "--seed") && a + 1 < argc)
                        seed = strtoull(argv[++a], NULL, 10);
                else if (!strcmp(argv[a], "--distinct") && a + 1 < argc)
                        distinct = strtoull(argv[++a], NULL, 10);
                else if (!strcmp(argv[a], "--force-n") && a + 1 < argc) {
                        char *c = argv[++a], *end;
                        for (ncnt = 0; *c && ncnt < 8; c = end) {
                                ns[ncnt] = (int)strtol(c, &end, 10);
                                if (ns[ncnt] < 2 || ns[ncnt] > 1024 ||
                                    (ns[ncnt] & (ns[ncnt] - 1)))
                                        ksb_die("--force-n: powers of two, "
                                                "2..1024");
                                ncnt++;
                                if (*end == ',')
                                        end++;
                        }
                } else
                        ksb_die("usage: ksb_accuracy [--msgs N] [--distinct N] "
                                "[--seed S] [--force-n N,N,...]");
        }
        if (ncnt) {
                force_n(ns, ncnt, msgs, distinct, seed);
                return 0;
        }
        ksb_stream_zipf(&st, msgs, 100000, 1.0, 0.01, 42);
        measure(&st, "zipf");
        ksb_stream_free(&st);
        if (distinct) {
                ksb_stream_distinct(&st, distinct);
                measure(&st, "distinct");
                ksb_stream_free(&st);
                /* new keys with hot keys among them: the hot-key summary
                 * sees the passed-by messages by sample */
                ksb_stream_spiked(&st, distinct, 100, 0.2, seed);
                measure(&st, "spiked");
                ksb_stream_free(&st);
                /* each count is stated within 3 standard errors: over many
                 * keys ~0.3 % fall outside by chance; pooled over ten
                 * streams (200 listed keys) the share within is the
                 * figure to read */
                pooled_listed = pooled_within = 0;
                quiet                         = 1;
                for (s = 0; s < 10; s++) {
                        ksb_stream_spiked(&st, distinct / 2, 100, 0.2,
                                          seed + 1000 + s);
                        measure(&st, "spiked");
                        ksb_stream_free(&st);
                }
                quiet = 0;
                v     = (double)pooled_within / (double)pooled_listed;
                ksb_note("spiked, 10 more streams: %zu of %zu listed hot keys "
                         "within their stated error",
                         pooled_within, pooled_listed);
                ksb_result("f.spiked10.hot_keys.within_error",
                           "listed hot keys within their stated error (3 "
                           "sigma: 0.997 expected), 10 spiked streams pooled",
                           ">=", 0.99, "", &v, 1);
        }
        ksb_stream_ais(&st, ksb_ais_log_path(), msgs);
        measure(&st, "ais");
        ksb_stream_free(&st);
        return 0;
}
