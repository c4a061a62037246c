/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli_hash.c
 * @brief `keyshift hash`: where keys go. For each key given on the command
 *        line: its bytes (as a serializer would write them), the hash and
 *        the partition at each count under the chosen librdkafka
 *        partitioner (core/model/ks_partitioner.h, bit-exact with librdkafka's
 *        rd_kafka_msg_partitioner_*()), and under the Java, librdkafka
 *        default and Sarama models (core/model/ks_clients.h).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "keyshift/keyshift.h"
#include "ks_cli.h"
#include "ks_clients.h"
#include "ks_hex.h"
#include "ks_keyenc.h"
#include "ks_partitioner.h"

#define KS_HASH_COUNTS_MAX 256
#define KS_HASH_KEY_MAX 65536
/** librdkafka's default sticky.partitioning.linger.ms (2 x linger.ms 5):
 *  only decides whether a spread key is called sticky or random. */
#define KS_HASH_STICKY_MS 10

typedef enum ks_hash_format {
        KS_HASH_FMT_STRING = 0,
        KS_HASH_FMT_INT32,
        KS_HASH_FMT_INT64,
        KS_HASH_FMT_HEX,
} ks_hash_format_t;

static const char *const ks_hash_format_names[] = {"string", "int32", "int64",
                                                   "hex"};

/** The key formats, as many as ks_hash_format_t has. */
#define KS_HASH_FORMATS                                                        \
        (sizeof(ks_hash_format_names) / sizeof(ks_hash_format_names[0]))
/** ks_hash_parse_args(): the arguments are good, hash on. */
#define KS_HASH_GO_ON (-1)

typedef struct ks_hash_opts {
        ks_partitioner_t p;
        int32_t          counts[KS_HASH_COUNTS_MAX];
        size_t           count_cnt;
        ks_hash_format_t fmt;
        int              json;
} ks_hash_opts_t;

/** @brief Prints the usage of `keyshift hash` to @p fp. */
static void ks_hash_help(FILE *fp)
{
        fprintf(fp,
                "Usage: keyshift hash [OPTIONS] KEY...\n"
                "For each KEY: its bytes, the partitioner's hash, and its "
                "partition at each\n"
                "count under the partitioner and under the Java, librdkafka "
                "default and Sarama\n"
                "partitioners.\n\n"
                "  -p, --partitioner NAME  librdkafka partitioner: random, "
                "consistent,\n"
                "                          consistent_random (default), "
                "murmur2, murmur2_random,\n"
                "                          fnv1a, fnv1a_random\n"
                "  -n, --partitions LIST   partition counts, e.g. 6,12 "
                "(default 6,12)\n"
                "  -f, --key-format FMT    how KEY becomes bytes: string "
                "(UTF-8 as given,\n"
                "                          default), int32 / int64 (decimal, "
                "written big-endian\n"
                "                          as Java's IntegerSerializer / "
                "LongSerializer), hex\n"
                "      --json              one JSON object per key (an array "
                "for several keys)\n"
                "  -h, --help              this help\n\n"
                "A key the partitioner does not hash (e.g. an empty key under "
                "consistent_random)\n"
                "has no fixed partition: shown as sticky or random, null in "
                "JSON.\n"
                "Exit: 0 ok, 2 bad arguments or key.\n");
}

/** @brief Writes @p v big-endian into @p out (@p n bytes). */
static void ks_hash_be(int64_t v, uint8_t *out, size_t n)
{
        uint64_t u = (uint64_t)v;
        size_t   i;

        for (i = 0; i < n; i++)
                out[n - 1 - i] = (uint8_t)(u >> (8 * i));
}

/** @brief Turns @p arg into key bytes per @p fmt.
 *  @returns the length, or -1 with @p err set. */
static long ks_hash_key_bytes(const char *arg, ks_hash_format_t fmt,
                              uint8_t *out, char *err, size_t errsz)
{
        long long v;
        char      e[256];
        size_t    n;

        switch (fmt) {
        case KS_HASH_FMT_STRING:
                n = strlen(arg);
                if (n > KS_HASH_KEY_MAX) {
                        snprintf(err, errsz, "key longer than %d bytes",
                                 KS_HASH_KEY_MAX);
                        return -1;
                }
                memcpy(out, arg, n);
                return (long)n;
        case KS_HASH_FMT_INT32:
                if (ks_cli_parse_long(arg, INT32_MIN, INT32_MAX, &v, e,
                                      sizeof(e))) {
                        snprintf(err, errsz, "int32 key: %s", e);
                        return -1;
                }
                ks_hash_be(v, out, 4);
                return 4;
        case KS_HASH_FMT_INT64:
                if (ks_cli_parse_long(arg, INT64_MIN, INT64_MAX, &v, e,
                                      sizeof(e))) {
                        snprintf(err, errsz, "int64 key: %s", e);
                        return -1;
                }
                ks_hash_be(v, out, 8);
                return 8;
        case KS_HASH_FMT_HEX: {
                long r;
                if (!strncmp(arg, "0x", 2) || !strncmp(arg, "0X", 2))
                        arg += 2;
                r = ks_hex_decode(arg, strlen(arg), out, KS_HASH_KEY_MAX);
                if (r < 0)
                        snprintf(err, errsz,
                                 "hex key '%s': not an even number of hex "
                                 "digits (at most %d bytes)",
                                 arg, KS_HASH_KEY_MAX);
                return r;
        }
        }
        return -1;
}

/** @returns how partitioner @p p hashes a key, for the text output. */
static const char *ks_hash_rule(ks_partitioner_t p)
{
        switch (ks_partitioner_hash_family(p)) {
        case KS_PARTITIONER_CONSISTENT:
                return "CRC-32";
        case KS_PARTITIONER_MURMUR2:
                return "murmur2 & 0x7fffffff";
        case KS_PARTITIONER_FNV1A:
                return "|FNV-1a|";
        default:
                return "none";
        }
}

/** @returns how client model @p m hashes a key (core/model/ks_clients.h). */
static const char *ks_hash_model_rule(ks_client_model_t m)
{
        static const char *const r[] = {"murmur2 & 0x7fffffff", "CRC-32",
                                        "|FNV-1a|"};
        return r[m];
}

/** @returns the JSON object for one key. */
static json_t *ks_hash_key_json(const ks_hash_opts_t *o, const char *arg,
                                const uint8_t *key, size_t len)
{
        ks_placement_t pl =
            ks_partitioner_placement(o->p, KS_HASH_STICKY_MS, key, len);
        uint32_t h     = ks_partitioner_hash(o->p, key, len);
        char    *hex   = malloc(2 * len + 1);
        json_t  *parts = json_object(), *models = json_object(),
               *mhash = json_object(), *j;
        size_t i;
        int    m;
        char   name[16];

        ks_hex_encode(key, len, hex);
        for (i = 0; i < o->count_cnt; i++) {
                snprintf(name, sizeof(name), "%d", (int)o->counts[i]);
                json_object_set_new(
                    parts, name,
                    pl == KS_PLACE_HASHED
                        ? json_integer(ks_partition_of(h, o->counts[i]))
                        : json_null());
        }
        for (m = 0; m < KS_CLIENT__CNT; m++) {
                json_t *mo = json_object();
                int hashed = ks_clients_hashes((ks_client_model_t)m, key, len);
                for (i = 0; i < o->count_cnt; i++) {
                        int32_t p = -1;
                        snprintf(name, sizeof(name), "%d", (int)o->counts[i]);
                        ks_clients_partition((ks_client_model_t)m, key, len,
                                             o->counts[i], &p);
                        json_object_set_new(mo, name,
                                            hashed && p >= 0 ? json_integer(p)
                                                             : json_null());
                }
                json_object_set_new(
                    models, ks_client_model_name((ks_client_model_t)m), mo);
                json_object_set_new(
                    mhash, ks_client_model_name((ks_client_model_t)m),
                    hashed ? json_integer(ks_clients_hash((ks_client_model_t)m,
                                                          key, len))
                           : json_null());
        }
        j = json_pack("{s:s, s:s, s:s, s:i, s:s, s:s, s:s, s:o, s:s, s:o, "
                      "s:o, s:o}",
                      "key", arg, "key_format", ks_hash_format_names[o->fmt],
                      "key_hex", hex, "key_length", (int)len, "encoding",
                      ks_keyenc_name(ks_keyenc_classify(key, len)),
                      "partitioner", ks_partitioner_name(o->p), "placement",
                      pl == KS_PLACE_HASHED   ? "hashed"
                      : pl == KS_PLACE_STICKY ? "sticky"
                                              : "random",
                      "hash",
                      pl == KS_PLACE_HASHED ? json_integer(h) : json_null(),
                      "hash_rule", ks_hash_rule(o->p), "partitions", parts,
                      "models", models, "model_hashes", mhash);
        free(hex);
        return j;
}

/** @brief Prints one row: who, rule, hash and the partitions. */
static void ks_hash_row(const char *who, const char *rule, json_t *hash,
                        json_t *parts, const ks_hash_opts_t *o,
                        const char *spread)
{
        char   h[16] = "-";
        size_t i;

        if (json_is_integer(hash))
                snprintf(h, sizeof(h), "0x%08llx",
                         (unsigned long long)json_integer_value(hash));
        printf("  %-20s %-22s %-10s", who, rule, h);
        for (i = 0; i < o->count_cnt; i++) {
                char    name[16];
                json_t *p;
                snprintf(name, sizeof(name), "%d", (int)o->counts[i]);
                p = json_object_get(parts, name);
                if (json_is_integer(p))
                        printf(" %6lld", (long long)json_integer_value(p));
                else
                        printf(" %6s", spread);
        }
        printf("\n");
}

/** @brief Prints one key's JSON object @p k as the text table. */
static void ks_hash_print(const ks_hash_opts_t *o, json_t *k)
{
        json_t     *models = json_object_get(k, "models");
        json_t     *mh     = json_object_get(k, "model_hashes");
        size_t      i;
        int         m;
        const char *pl = json_string_value(json_object_get(k, "placement"));

        printf("key \"%s\" (%s, %lld bytes: %s, encoding %s)\n",
               json_string_value(json_object_get(k, "key")),
               json_string_value(json_object_get(k, "key_format")),
               (long long)json_integer_value(json_object_get(k, "key_length")),
               *json_string_value(json_object_get(k, "key_hex"))
                   ? json_string_value(json_object_get(k, "key_hex"))
                   : "(empty)",
               json_string_value(json_object_get(k, "encoding")));
        printf("  %-20s %-22s %-10s", "partitioner", "hash", "value");
        for (i = 0; i < o->count_cnt; i++)
                printf(" %6d", (int)o->counts[i]);
        printf("   <- partition at each count\n");
        ks_hash_row(ks_partitioner_name(o->p), ks_hash_rule(o->p),
                    json_object_get(k, "hash"),
                    json_object_get(k, "partitions"), o, pl);
        for (m = 0; m < KS_CLIENT__CNT; m++) {
                const char *name = ks_client_model_name((ks_client_model_t)m);
                char        who[40];
                snprintf(who, sizeof(who), "model %s",
                         m == KS_CLIENT_LIBRDKAFKA_DEFAULT ? "librdkafka"
                                                           : name);
                ks_hash_row(who, ks_hash_model_rule((ks_client_model_t)m),
                            json_object_get(mh, name),
                            json_object_get(models, name), o, "spread");
        }
}

/**
 * @brief Parses `keyshift hash`'s options into @p o (its defaults set by
 *        the caller); the keys are argv[optind..].
 * @returns KS_HASH_GO_ON, or the exit code (--help, or a usage error said
 *          on stderr).
 */
static int ks_hash_parse_args(int argc, char **argv, ks_hash_opts_t *o)
{
        static const struct option longopts[] = {
            {"partitioner", required_argument, NULL, 'p'},
            {"partitions", required_argument, NULL, 'n'},
            {"key-format", required_argument, NULL, 'f'},
            {"json", no_argument, NULL, 'j'},
            {"help", no_argument, NULL, 'h'},
            {NULL, 0, NULL, 0}};
        char   err[512];
        int    c;
        size_t f;

        optind = 1;
        while ((c = getopt_long(argc, argv, "p:n:f:h", longopts, NULL)) != -1) {
                switch (c) {
                case 'p':
                        if (ks_partitioner_from_name(optarg, &o->p))
                                return ks_cli_usage_error(
                                    "hash", "--partitioner: unknown '%s'",
                                    optarg);
                        break;
                case 'n':
                        if (ks_cli_parse_counts(
                                optarg, o->counts, KS_HASH_COUNTS_MAX,
                                &o->count_cnt, err, sizeof(err)))
                                return ks_cli_usage_error(
                                    "hash", "--partitions: %s", err);
                        break;
                case 'f':
                        for (f = 0; f < KS_HASH_FORMATS; f++)
                                if (!strcmp(optarg, ks_hash_format_names[f]))
                                        break;
                        if (f == KS_HASH_FORMATS)
                                return ks_cli_usage_error(
                                    "hash",
                                    "--key-format: '%s' is not string, "
                                    "int32, int64 or hex",
                                    optarg);
                        o->fmt = (ks_hash_format_t)f;
                        break;
                case 'j':
                        o->json = 1;
                        break;
                case 'h':
                        ks_hash_help(stdout);
                        return KS_CLI_EXIT_OK;
                default:
                        return ks_cli_usage_error("hash", "bad option");
                }
        }
        if (optind >= argc)
                return ks_cli_usage_error("hash", "no KEY given");
        return KS_HASH_GO_ON;
}

/** @brief Prints the keys' objects @p all: as JSON (one object for one
 *         key, an array for several) or as text tables. */
static void ks_hash_output(const ks_hash_opts_t *o, json_t *all)
{
        size_t i;

        if (o->json) {
                json_dumpf(json_array_size(all) == 1 ? json_array_get(all, 0)
                                                     : all,
                           stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
                printf("\n");
                return;
        }
        for (i = 0; i < json_array_size(all); i++) {
                if (i)
                        printf("\n");
                ks_hash_print(o, json_array_get(all, i));
        }
}

int ks_cli_hash_main(int argc, char **argv)
{
        ks_hash_opts_t o = {.p         = KS_PARTITIONER_CONSISTENT_RANDOM,
                            .counts    = {6, 12},
                            .count_cnt = 2};
        char           err[512];
        uint8_t       *key;
        json_t        *all;
        int            i, r;

        if ((r = ks_hash_parse_args(argc, argv, &o)) != KS_HASH_GO_ON)
                return r;
        key = malloc(KS_HASH_KEY_MAX);
        all = json_array();
        for (i = optind; i < argc; i++) {
                long n =
                    ks_hash_key_bytes(argv[i], o.fmt, key, err, sizeof(err));
                if (n < 0) {
                        free(key);
                        json_decref(all);
                        return ks_cli_usage_error("hash", "%s", err);
                }
                json_array_append_new(
                    all, ks_hash_key_json(&o, argv[i], key, (size_t)n));
        }
        free(key);
        ks_hash_output(&o, all);
        json_decref(all);
        return KS_CLI_EXIT_OK; /* main() flushes, and names a write error */
}
