/**
 * @file ks_report_bulk.c
 * @brief Writes the bulk of a topic's report straight from its snapshot:
 *        the per-partition arrays and the mergeable sketches, in the
 *        keyshift.report.v1 schema, without a JSON value per number.
 *
 * Why: for 50 topics x 1,000 partitions x 3 proposed counts, these parts
 * are ~2 million JSON values (5,700 {partition, messages, bytes} objects
 * per topic, 4,096 key-sample entries, 1,024 hot-key counters and the
 * HyperLogLog registers). Building them with jansson, dumping and freeing
 * them took ~1 s on keyshift's thread (bench/ksb_report); formatted here
 * into a buffer they take a few percent of that. Everything else of a
 * topic (counters, hot keys, sizing, warnings...) is small and still
 * built with jansson by ks_report_topic(), which leaves null placeholders
 * where the bulk goes; this file writes the topic's members in their
 * order, putting the bulk in place of the placeholders. The result parses
 * to the same JSON as ks_report_topic() without placeholders (a unit test
 * compares them).
 *
 * @locality the thread writing the report; snapshots only.
 */
#include "ks_report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ks_report_parts.h"

/** Output buffered here, then written to the report file in large
 *  fwrite()s: no stdio call per number. */
typedef struct ks_jout {
        FILE  *fp;
        int    failed;
        size_t n;
        char   buf[16384];
} ks_jout_t;

static void jout_flush(ks_jout_t *o)
{
        if (o->n && !o->failed && fwrite(o->buf, 1, o->n, o->fp) != o->n)
                o->failed = 1;
        o->n = 0;
}

/** @brief Makes room for @p n bytes (n <= sizeof(buf)). */
static char *jout_room(ks_jout_t *o, size_t n)
{
        if (o->n + n > sizeof(o->buf))
                jout_flush(o);
        return o->buf + o->n;
}

static void put_mem(ks_jout_t *o, const char *s, size_t n)
{
        while (n) {
                size_t k = n < sizeof(o->buf) ? n : sizeof(o->buf);
                memcpy(jout_room(o, k), s, k);
                o->n += k;
                s += k;
                n -= k;
        }
}

static void put_str(ks_jout_t *o, const char *s)
{
        put_mem(o, s, strlen(s));
}

static void put_u64(ks_jout_t *o, uint64_t v)
{
        char  tmp[24], *e = tmp + sizeof(tmp), *p = e;
        char *d;

        do
                *--p = (char)('0' + v % 10);
        while (v /= 10);
        d = jout_room(o, (size_t)(e - p));
        memcpy(d, p, (size_t)(e - p));
        o->n += (size_t)(e - p);
}

/** @brief @p n bytes as lower-case hex, without quotes. */
static void put_hex(ks_jout_t *o, const uint8_t *b, size_t n)
{
        static const char digits[] = "0123456789abcdef";
        size_t            i;

        for (i = 0; i < n; i++) {
                char *d = jout_room(o, 2);
                d[0]    = digits[b[i] >> 4];
                d[1]    = digits[b[i] & 15];
                o->n += 2;
        }
}

/** @brief A 64-bit hash as 16 hex digits, as "%016llx". */
static void put_hash64(ks_jout_t *o, uint64_t h)
{
        static const char digits[] = "0123456789abcdef";
        char             *d        = jout_room(o, 16);
        int               i;

        for (i = 15; i >= 0; i--, h >>= 4)
                d[i] = digits[h & 15];
        o->n += 16;
}

/** @brief [{partition, messages, bytes}, ...] as partitions_json(). */
static void put_partitions(ks_jout_t *o, const ks_load_t *l, int32_t n)
{
        int32_t i;

        put_mem(o, "[", 1);
        for (i = 0; i < n; i++) {
                put_str(o, i ? ",{\"partition\":" : "{\"partition\":");
                put_u64(o, (uint64_t)i);
                put_str(o, ",\"messages\":");
                put_u64(o, l[i].messages);
                put_str(o, ",\"bytes\":");
                put_u64(o, l[i].bytes);
                put_mem(o, "}", 1);
        }
        put_mem(o, "]", 1);
}

/** @brief The `merge` object as merge_json() (docs/report-schema.md). */
static void put_merge(ks_jout_t *o, const ks_topic_snapshot_t *s)
{
        size_t i;

        put_str(o, "{\"distinct_hll\":{\"p\":");
        put_u64(o, KS_HLL_P);
        put_str(o, ",\"registers_hex\":\"");
        put_hex(o, s->hll.reg, sizeof(s->hll.reg));
        put_str(o, "\"},\"key_sample\":{\"capacity\":");
        put_u64(o, s->sample_capacity);
        put_str(o, ",\"entries\":[");
        for (i = 0; i < s->sample_cnt; i++) {
                const ks_keysample_entry_t *e = &s->sample[i];
                put_str(o, i ? ",[\"" : "[\"");
                put_hash64(o, e->hash64);
                put_str(o, "\",");
                put_u64(o, e->phash);
                put_mem(o, ",", 1);
                put_u64(o, e->messages);
                put_mem(o, ",", 1);
                put_u64(o, e->bytes);
                put_mem(o, "]", 1);
        }
        put_str(o, "]},\"hot_keys\":{\"capacity\":");
        put_u64(o, s->topk_capacity);
        put_str(o, ",\"total\":");
        put_u64(o, s->topk_total);
        put_str(o, ",\"entries\":[");
        for (i = 0; i < s->hot_cnt; i++) {
                const ks_topk_entry_t *e = &s->hot[i];
                size_t                 kl =
                    e->keylen < KS_TOPK_KEY_MAX ? e->keylen : KS_TOPK_KEY_MAX;
                put_str(o, i ? ",{\"key_hex\":\"" : "{\"key_hex\":\"");
                put_hex(o, e->key, kl);
                put_str(o, "\",\"key_length\":");
                put_u64(o, e->keylen);
                put_str(o, ",\"hash64\":\"");
                put_hash64(o, e->hash64);
                put_str(o, "\",\"phash\":");
                put_u64(o, e->phash);
                put_str(o, ",\"count\":");
                put_u64(o, e->count);
                put_str(o, ",\"error\":");
                put_u64(o, e->error);
                put_str(o, ",\"bytes\":");
                put_u64(o, e->bytes);
                put_mem(o, "}", 1);
        }
        put_str(o, "]}}");
}

/** jansson's dump callback: into the buffer. */
static int put_cb(const char *buffer, size_t size, void *data)
{
        put_mem(data, buffer, size);
        return 0;
}

/** @brief A value built by jansson, compact. */
static void put_json(ks_jout_t *o, const json_t *v)
{
        if (json_dump_callback(v, put_cb, o,
                               JSON_COMPACT | JSON_PRESERVE_ORDER |
                                   JSON_ENCODE_ANY))
                o->failed = 1;
}

/** @brief "key": */
static void put_key(ks_jout_t *o, const char *key, int first)
{
        json_t *k = json_string(key);

        if (!first)
                put_mem(o, ",", 1);
        if (k)
                put_json(o, k);
        else
                o->failed = 1;
        json_decref(k);
        put_mem(o, ":", 1);
}

/** @brief An object of @p v's members, the null "partitions" member
 *         replaced by @p l's per-partition array. */
static void put_with_partitions(ks_jout_t *o, const json_t *v,
                                const ks_load_t *l, int32_t n)
{
        const char *key;
        json_t     *m;
        int         first = 1;

        put_mem(o, "{", 1);
        json_object_foreach((json_t *)v, key, m)
        {
                put_key(o, key, first);
                first = 0;
                if (!strcmp(key, "partitions") && json_is_null(m) && l)
                        put_partitions(o, l, n);
                else
                        put_json(o, m);
        }
        put_mem(o, "}", 1);
}

/** @returns the snapshot's proposal that @p o (a proposals[] element)
 *           describes, by its partition count (unique per topic), or
 *           NULL: its placeholder then stays null. */
static const ks_proposal_t *proposal_of(const ks_topic_snapshot_t *s,
                                        const json_t              *o)
{
        json_int_t n =
            json_integer_value(json_object_get(o, "partition_count"));
        size_t i;

        for (i = 0; i < s->proposal_cnt; i++)
                if (s->proposals[i].partition_count == n)
                        return &s->proposals[i];
        return NULL;
}

int ks_report_writer_topic_snapshot(ks_report_writer_t        *w,
                                    const ks_topic_snapshot_t *s,
                                    const json_t              *topic)
{
        ks_jout_t   o;
        const char *key;
        json_t     *m;
        int         first = 1;

        if (w->failed)
                return -1;
        o.fp     = w->fp;
        o.failed = 0;
        o.n      = 0;
        put_key(&o, s->name, !w->topics);
        put_mem(&o, "{", 1);
        json_object_foreach((json_t *)topic, key, m)
        {
                put_key(&o, key, first);
                first = 0;
                if (!strcmp(key, "current") && json_is_object(m)) {
                        put_with_partitions(&o, m, s->current,
                                            s->partition_count);
                } else if (!strcmp(key, "proposals") && json_is_array(m)) {
                        size_t i;
                        put_mem(&o, "[", 1);
                        for (i = 0; i < json_array_size(m); i++) {
                                const ks_proposal_t *p =
                                    proposal_of(s, json_array_get(m, i));
                                if (i)
                                        put_mem(&o, ",", 1);
                                put_with_partitions(&o, json_array_get(m, i),
                                                    p ? p->partitions : NULL,
                                                    p ? p->partition_count : 0);
                        }
                        put_mem(&o, "]", 1);
                } else if (!strcmp(key, "merge") && json_is_null(m)) {
                        put_merge(&o, s);
                } else {
                        put_json(&o, m);
                }
        }
        put_mem(&o, "}", 1);
        jout_flush(&o);
        if (o.failed) {
                if (!w->failed)
                        snprintf(w->errstr, sizeof(w->errstr),
                                 "cannot write %s: %s", w->tmp,
                                 strerror(errno ? errno : EIO));
                w->failed = 1;
                return -1;
        }
        w->topics++;
        return 0;
}
