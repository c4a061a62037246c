/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_fuzz_seeds.c
 * @brief Writes the fuzz targets' first inputs (seed corpora) into
 *        DIR/<target>/: built from the test suite's data and by keyshift's
 *        own code at run time, so that no binary seed is committed.
 *
 *   ks_fuzz_seeds DIR
 *
 *  - report_check, report_cli: reports keyshift builds (ks_fuzz_report())
 *    of keys of every encoding, under each partitioner, as the plugin and
 *    as the scan records them; each is checked to pass the report check;
 *  - pack: packed HyperLogLogs (sparse and dense), key samples and hot
 *    keys, as fuzz_pack.c reads its input;
 *  - ais: the first lines of each AIS log of tests/data/ais/, and a
 *    gzip-compressed one;
 *  - config: every keyshift.* property with a value it accepts;
 *  - keyenc, scan_records: keys of every encoding;
 *  - plan: the argument lists of tests/cli/test_cli_plan.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "ks_base64.h"
#include "ks_cli_report.h"
#include "ks_config.h"
#include "ks_fuzz.h"
#include "ks_hash.h"
#include "ks_pack.h"
#include "ks_sizing.h"

static const char *out_dir;

static void put(const char *target, const char *name, const void *b, size_t n)
{
        char  path[4096];
        FILE *fp;

        snprintf(path, sizeof(path), "%s/%s", out_dir, target);
        if (mkdir(path, 0755) && errno != EEXIST) {
                perror(path);
                exit(1);
        }
        snprintf(path, sizeof(path), "%s/%s/%s", out_dir, target, name);
        if (!(fp = fopen(path, "wb")) || fwrite(b, 1, n, fp) != n ||
            fclose(fp)) {
                perror(path);
                exit(1);
        }
}

/** A libFuzzer dictionary being written (-dict=: one "token" a line). */
static FILE *dict_open(const char *target)
{
        char  path[4096];
        FILE *fp;

        snprintf(path, sizeof(path), "%s/%s.dict", out_dir, target);
        if (!(fp = fopen(path, "w"))) {
                perror(path);
                exit(1);
        }
        return fp;
}

/** @brief Writes @p s as a dictionary token (escaped as libFuzzer reads
 *         them: \\, \" and \xNN). */
static void dict_put(FILE *fp, const char *s)
{
        fputc('"', fp);
        for (; *s; s++) {
                unsigned char c = (unsigned char)*s;
                if (c == '\\' || c == '"')
                        fprintf(fp, "\\%c", c);
                else if (c < 0x20 || c >= 0x7f)
                        fprintf(fp, "\\x%02x", c);
                else
                        fputc(c, fp);
        }
        fputs("\"\n", fp);
}

/** @brief Every member name of @p j (recursively), quoted as JSON has
 *         them, into @p fp (duplicates are harmless). */
static void dict_json_keys(FILE *fp, json_t *j)
{
        const char *k;
        json_t     *v;
        size_t      i;
        char        tok[512];

        if (json_is_object(j)) {
                json_object_foreach(j, k, v)
                {
                        snprintf(tok, sizeof(tok), "\"%s\":", k);
                        dict_put(fp, tok);
                        dict_json_keys(fp, v);
                }
        } else if (json_is_array(j)) {
                json_array_foreach(j, i, v) dict_json_keys(fp, v);
        }
}

/** Keys of every encoding (ks_keyenc.h). */
static const struct {
        const char *name;
        const char *b;
        size_t      n;
} keys[] = {
    {"decimal", "211234567", 9},
    {"text", "orders-eu-1", 11},
    {"json", "\"caf\\u00e9 \\\"x\\\"\"", 18},
    {"int32", "\x00\x00\x01\x02", 4},
    {"int64", "\xff\xff\xff\xff\xff\xff\xfe\x01", 8},
    {"uuid", "\x12\x3e\x45\x67\xe8\x9b\x42\xd3\xa4\x56\x42\x66\x14\x17\x40\x00",
     16},
    {"uuid_text", "123E4567-E89B-42D3-A456-426614174000", 36},
    {"sr_long", "\x00\x00\x00\x00\x07\x96\x01", 7},
    {"sr_string",
     "\x00\x00\x00\x00\x09\x0a"
     "hello",
     11},
    {"binary", "\x01\xfe\x00\x80\x7f", 5},
    {"empty", "", 0},
    {"long",
     "a-key-that-is-longer-than-the-hot-key-prefix-kept-by-keyshift-"
     "a-key-that-is-longer-than-the-hot-key-prefix-kept-by-keyshift-"
     "0123456789",
     134},
};
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

static void seed_keys(void)
{
        size_t i;

        for (i = 0; i < NKEYS; i++)
                put("keyenc", keys[i].name, keys[i].b, keys[i].n);
}

/** @brief A scan_records input of @p recs records of keys[]. */
static void seed_scan(const char *name, uint8_t count, uint8_t part, int recs)
{
        uint8_t buf[8192];
        size_t  n = 0;
        int     r;

        buf[n++] = count;
        buf[n++] = (uint8_t)(count * 2 + 1);
        buf[n++] = (uint8_t)(count * 4 + 3);
        buf[n++] = part;
        for (r = 0; r < recs && n + 140 < sizeof(buf); r++) {
                size_t k = (size_t)(r * 7) % NKEYS;
                buf[n++] = r % 13 == 12 ? 255 : (uint8_t)keys[k].n;
                buf[n++] = (uint8_t)(r % (count + 1));
                if (r % 13 == 12)
                        continue;
                memcpy(buf + n, keys[k].b, keys[k].n);
                n += keys[k].n;
        }
        put("scan_records", name, buf, n);
}

static void seed_reports(void)
{
        static const ks_partitioner_t parts[] = {
            KS_PARTITIONER_CONSISTENT_RANDOM, KS_PARTITIONER_MURMUR2_RANDOM,
            KS_PARTITIONER_FNV1A, KS_PARTITIONER_RANDOM};
        ks_fuzz_record_t recs[600];
        size_t           p, i;
        char             err[1024], name[64];

        for (p = 0; p < sizeof(parts) / sizeof(parts[0]); p++) {
                ks_fuzz_topic_t t = {.name         = p ? "orders" : "ais",
                                     .count        = (int32_t)(3 + 3 * p),
                                     .proposed     = {12, 16},
                                     .proposed_cnt = (int)(p % 3),
                                     .partitioner  = parts[p],
                                     .hot_keys     = 5,
                                     .stored       = (int)(p % 2)};
                size_t          n = p == 3 ? 0 : sizeof(recs) / sizeof(recs[0]);
                json_t         *r;
                char           *text;

                for (i = 0; i < n; i++) {
                        size_t k          = (i * i + p) % NKEYS;
                        recs[i].key       = i % 50 == 49 ? NULL : keys[k].b;
                        recs[i].keylen    = keys[k].n;
                        recs[i].partition = (int32_t)(i % (size_t)t.count);
                        recs[i].bytes     = 100 + i % 7;
                }
                if (!(r = ks_fuzz_report(&t, recs, n)) ||
                    !(text = json_dumps(r, JSON_INDENT(1)))) {
                        fprintf(stderr, "ks_fuzz_seeds: out of memory\n");
                        exit(1);
                }
                json_decref(r);
                r = json_loads(text, 0, NULL);
                if (!r || ks_cli_report_check(r, "seed", err, sizeof(err))) {
                        fprintf(stderr,
                                "ks_fuzz_seeds: keyshift refuses its own "
                                "report: %s\n",
                                err);
                        exit(1);
                }
                if (p == 0) { /* one dictionary: every member name */
                        FILE              *d1     = dict_open("report_check");
                        FILE              *d2     = dict_open("report_cli");
                        static const char *more[] = {"-1",
                                                     "1e308",
                                                     "-0.5",
                                                     "null",
                                                     "true",
                                                     "[]",
                                                     "{}",
                                                     "\"\"",
                                                     "18446744073709551615",
                                                     "9223372036854775807",
                                                     "\"keyshift.report.v2\""};
                        size_t             m;
                        dict_json_keys(d1, r);
                        dict_json_keys(d2, r);
                        for (m = 0; m < sizeof(more) / sizeof(more[0]); m++) {
                                dict_put(d1, more[m]);
                                dict_put(d2, more[m]);
                        }
                        fclose(d1);
                        fclose(d2);
                }
                json_decref(r);
                snprintf(name, sizeof(name), "report-%zu.json", p);
                put("report_check", name, text, strlen(text));
                put("report_cli", name, text, strlen(text));
                free(text);
        }
}

/** @brief A pack input: control byte @p ctl, then packed bytes. */
static void put_pack(const char *name, uint8_t ctl, const ks_pack_buf_t *pb)
{
        uint8_t *b = malloc(pb->n + 1);

        if (!b)
                exit(1);
        b[0] = ctl;
        memcpy(b + 1, pb->b, pb->n);
        put("pack", name, b, pb->n + 1);
        free(b);
}

static void seed_pack(void)
{
        ks_pack_buf_t        pb = {0};
        ks_hll_t             h;
        ks_keysample_entry_t ke[20];
        ks_topk_entry_t      te[6];
        size_t               i;
        char                *s;

        ks_hll_init(&h);
        for (i = 0; i < 300; i++)
                ks_hll_add(&h, ks_hash_key64(&i, sizeof(i)));
        ks_pack_hll_form(&pb, &h, KS_PACK_SPARSE);
        put_pack("hll-sparse", 0, &pb);
        /* the base64 text itself, for the decoder (control 3) */
        s    = malloc(ks_base64_len(pb.n) + 2);
        s[0] = 3;
        ks_base64_encode(pb.b, pb.n, s + 1);
        put("pack", "hll-sparse-text", s, ks_base64_len(pb.n) + 1);
        free(s);
        ks_pack_buf_reset(&pb);
        ks_pack_hll_form(&pb, &h, KS_PACK_DENSE);
        put_pack("hll-dense", 0, &pb);
        for (i = 0; i < 20; i++)
                ke[i] = (ks_keysample_entry_t){
                    (uint64_t)i * 0x9e3779b97f4a7c15u,
                    (uint32_t)i * 2654435761u, i * i + 1, i * 1000};
        ks_pack_buf_reset(&pb);
        ks_pack_key_sample(&pb, ke, 20);
        put_pack("key-sample", 1, &pb);
        memset(te, 0, sizeof(te));
        for (i = 0; i < 6; i++) {
                size_t k     = i * 2 % NKEYS;
                te[i].hash64 = ks_hash_key64(keys[k].b, keys[k].n);
                te[i].phash  = (uint32_t)i;
                te[i].count  = 1000 - i;
                te[i].error  = i;
                te[i].bytes  = 9999 + i;
                te[i].keylen = (uint32_t)keys[k].n;
                memcpy(te[i].key, keys[k].b,
                       keys[k].n < KS_TOPK_KEY_MAX ? keys[k].n
                                                   : KS_TOPK_KEY_MAX);
        }
        ks_pack_buf_reset(&pb);
        ks_pack_hot_keys(&pb, te, 6);
        put_pack("hot-keys", 2, &pb);
        ks_pack_buf_free(&pb);
}

/** @brief The first @p lines lines of tests/data/ais/@p file. */
static char *ais_head(const char *file, int lines, size_t *n)
{
        char   path[4096], *b = NULL;
        FILE  *fp;
        size_t cap = 0;
        int    c, l = 0;

        snprintf(path, sizeof(path), "%s/tests/data/ais/%s", KS_SOURCE_DIR,
                 file);
        *n = 0;
        if (!(fp = fopen(path, "rb"))) {
                perror(path);
                exit(1);
        }
        while ((c = getc(fp)) != EOF && l < lines) {
                if (*n + 1 >= cap && !(b = realloc(b, cap = cap * 2 + 4096)))
                        exit(1);
                b[(*n)++] = (char)c;
                l += c == '\n';
        }
        fclose(fp);
        return b;
}

static void seed_ais(void)
{
        static const char *files[] = {"aislib_stream_example.txt",
                                      "goais_aistest.nmea", "gpsd_ais-nmea.log",
                                      "pyais_nmea_data_sample.txt",
                                      "risky_exact-earth-augmented-3.txt"};
        size_t             i, n;
        char              *b;

        for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
                b = ais_head(files[i], 60, &n);
                put("ais", files[i], b, n);
                if (i == 1) { /* one gzip-compressed, as .gz logs are */
                        char   path[4096];
                        gzFile gz;
                        snprintf(path, sizeof(path), "%s/ais/head.txt.gz",
                                 out_dir);
                        if (!(gz = gzopen(path, "wb")) ||
                            gzwrite(gz, b, (unsigned)n) != (int)n ||
                            gzclose(gz) != Z_OK) {
                                fprintf(stderr, "ks_fuzz_seeds: %s\n", path);
                                exit(1);
                        }
                }
                free(b);
        }
}

static void seed_config(void)
{
        static const char *values[] = {"true",
                                       "12,16,24",
                                       "12",
                                       "1000",
                                       "0",
                                       "/tmp/keyshift-fuzz-%c-%p.json",
                                       "/tmp/keyshift-fuzz-%c.prom",
                                       "^orders\\..*$",
                                       "murmur2_random",
                                       "analyse",
                                       "64",
                                       "0.5",
                                       "keyshift-reports",
                                       "all",
                                       "1.5"};
        ks_config_t        conf;
        char               line[1024], all[16384], errstr[512], name[64];
        size_t             i, v, alln = 0;
        const char        *prop, *accepted;

        FILE *dict = dict_open("config");

        for (v = 0; v < sizeof(values) / sizeof(values[0]); v++)
                dict_put(dict, values[v]);
        for (i = 0; ks_config_property(i, &prop, &accepted); i++) {
                dict_put(dict, prop);
                if (ks_config_init(&conf))
                        exit(1);
                for (v = 0; v < sizeof(values) / sizeof(values[0]); v++)
                        if (ks_config_set(&conf, prop, values[v], errstr,
                                          sizeof(errstr)) == KS_CONFIG_OK)
                                break;
                ks_config_destroy(&conf);
                snprintf(line, sizeof(line), "%s=%s\n", prop,
                         v < sizeof(values) / sizeof(values[0]) ? values[v]
                                                                : "1");
                snprintf(name, sizeof(name), "prop-%02zu", i);
                put("config", name, line, strlen(line));
                if (alln + strlen(line) < sizeof(all)) {
                        memcpy(all + alln, line, strlen(line));
                        alln += strlen(line);
                }
        }
        fclose(dict);
        put("config", "all", all, alln);
        put("config", "report-topic-prop",
            "keyshift.report.topic=r\nkeyshift.report.topic.acks=all\n",
            strlen(
                "keyshift.report.topic=r\nkeyshift.report.topic.acks=all\n"));
}

static void seed_plan(void)
{
        static const char *args[][24] = {
            {"--peak-msgs-s", "1e6", "--consumer-msgs-s", "1000", "--consumers",
             "12", "--message-bytes", "500", NULL},
            {"--peak-msgs-s", "50000", "--consumer-msgs-s", "4000",
             "--consumers", "12", "--current", "6", "--json", NULL},
            {"--peak-msgs-s", "50000", "--consumer-msgs-s", "4000",
             "--consumers", "12", "--key-skew", "90", "--brokers", "3",
             "--replication-factor", "3", "--message-bytes", "1000",
             "--peak-bytes-s", "5e7", "--current", "6", NULL},
            {"--peak-msgs-s", "50000", "--consumer-msgs-s", "4000",
             "--consumers", "12", "-X", NULL, NULL},
            {"--help", NULL}};
        char   buf[1024], name[32], xarg[256];
        size_t i, j, n;

        FILE *dict = dict_open("plan");

        for (i = 0; i < 3; i++)
                for (j = 0; args[i][j]; j++)
                        dict_put(dict, args[i][j]);
        for (i = 0; ks_sizing_param_descs[i].name; i++)
                dict_put(dict, ks_sizing_param_descs[i].name);
        fclose(dict);
        snprintf(xarg, sizeof(xarg), "%s=2", ks_sizing_param_descs[0].name);
        for (i = 0; i < sizeof(args) / sizeof(args[0]); i++) {
                n = 0;
                for (j = 0; args[i][j] || (i == 3 && j == 7); j++) {
                        const char *a = args[i][j] ? args[i][j] : xarg;
                        if (j)
                                buf[n++] = '\0';
                        memcpy(buf + n, a, strlen(a));
                        n += strlen(a);
                }
                snprintf(name, sizeof(name), "args-%zu", i);
                put("plan", name, buf, n);
        }
}

int main(int argc, char **argv)
{
        if (argc != 2) {
                fprintf(stderr, "usage: ks_fuzz_seeds DIR\n");
                return 2;
        }
        out_dir = argv[1];
        if (mkdir(out_dir, 0755) && errno != EEXIST) {
                perror(out_dir);
                return 1;
        }
        seed_keys();
        seed_scan("mixed", 5, 2, 200);
        seed_scan("one-partition", 0, 4, 50);
        seed_scan("many", 200, 1, 400);
        seed_reports();
        seed_pack();
        seed_ais();
        seed_config();
        seed_plan();
        return 0;
}
