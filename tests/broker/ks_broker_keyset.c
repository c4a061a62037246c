/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_broker_keyset.c
 * @brief The broker tests' key set: distinct keys (an open-addressing
 *        table over their bytes) and a message stream over them, filled
 *        from the shared AIS logs and from a seeded random generator (see
 *        ks_broker_support.h).
 */
#include "ks_broker_support.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ais_nmea.h"
#include "ais_reader.h"
#include "ks_test.h"

uint64_t ks_broker_rand(uint64_t *state)
{
        /* SplitMix64 (Steele, Lea, Flood 2014): a deterministic stream
         * independent of the libc. */
        uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
        z          = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z          = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
}

/** FNV-1a 64 over the key bytes, for the set's table only (any hash
 *  would do; keyshift's own hashes are what is tested). */
static uint64_t table_hash(const void *key, size_t len)
{
        const uint8_t *b = key;
        uint64_t       h = 0xcbf29ce484222325ull;
        size_t         i;

        if (!key)
                return 0x9e3779b97f4a7c15ull; /* the NULL key */
        for (i = 0; i < len; i++)
                h = (h ^ b[i]) * 0x100000001b3ull;
        return h;
}

static int key_equal(const ks_bkey_t *k, const void *key, size_t len)
{
        if (!key || k->is_null)
                return !key && k->is_null;
        return k->len == len && (len == 0 || !memcmp(k->bytes, key, len));
}

void ks_keyset_init(ks_keyset_t *ks)
{
        memset(ks, 0, sizeof(*ks));
}

void ks_keyset_free(ks_keyset_t *ks)
{
        size_t i;

        for (i = 0; i < ks->key_cnt; i++)
                free(ks->keys[i].bytes);
        for (i = 0; i < ks->msg_cnt; i++)
                free(ks->msgs[i].value);
        free(ks->keys);
        free(ks->msgs);
        free(ks->table);
        memset(ks, 0, sizeof(*ks));
}

long ks_keyset_find(const ks_keyset_t *ks, const void *key, size_t len)
{
        size_t i;

        if (!ks->table_size)
                return -1;
        for (i = table_hash(key, len) & (ks->table_size - 1); ks->table[i];
             i = (i + 1) & (ks->table_size - 1))
                if (key_equal(&ks->keys[ks->table[i] - 1], key, len))
                        return (long)ks->table[i] - 1;
        return -1;
}

static void table_grow(ks_keyset_t *ks)
{
        size_t n = ks->table_size ? ks->table_size * 2 : 1024, i, j;

        free(ks->table);
        ks->table      = calloc(n, sizeof(*ks->table));
        ks->table_size = n;
        for (i = 0; i < ks->key_cnt; i++) {
                const ks_bkey_t *k = &ks->keys[i];
                for (j = table_hash(k->is_null ? NULL : k->bytes, k->len) &
                         (n - 1);
                     ks->table[j]; j = (j + 1) & (n - 1))
                        ;
                ks->table[j] = (uint32_t)i + 1;
        }
}

uint32_t ks_keyset_key(ks_keyset_t *ks, const void *key, size_t len)
{
        long       found = ks_keyset_find(ks, key, len);
        ks_bkey_t *k;
        size_t     j;

        if (found >= 0)
                return (uint32_t)found;
        if (ks->key_cnt == ks->key_cap) {
                ks->key_cap = ks->key_cap ? ks->key_cap * 2 : 1024;
                ks->keys    = realloc(ks->keys, ks->key_cap * sizeof(*k));
        }
        k          = &ks->keys[ks->key_cnt++];
        k->is_null = key == NULL;
        k->len     = key ? len : 0;
        k->bytes   = malloc(k->len ? k->len : 1);
        k->is_ais  = 0;
        if (k->len)
                memcpy(k->bytes, key, k->len);
        if (ks->key_cnt * 2 > ks->table_size) {
                table_grow(ks);
        } else {
                for (j = table_hash(key, len) & (ks->table_size - 1);
                     ks->table[j]; j = (j + 1) & (ks->table_size - 1))
                        ;
                ks->table[j] = (uint32_t)ks->key_cnt;
        }
        return (uint32_t)ks->key_cnt - 1;
}

void ks_keyset_add_msg(ks_keyset_t *ks, uint32_t key, const char *value,
                       size_t len)
{
        ks_bmsg_t *m;

        if (ks->msg_cnt == ks->msg_cap) {
                ks->msg_cap = ks->msg_cap ? ks->msg_cap * 2 : 4096;
                ks->msgs    = realloc(ks->msgs, ks->msg_cap * sizeof(*m));
        }
        m            = &ks->msgs[ks->msg_cnt++];
        m->key       = key;
        m->value_len = (uint32_t)len;
        m->value     = malloc(len + 1);
        memcpy(m->value, value, len);
        m->value[len] = '\0';
}

static int name_cmp(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

long ks_keyset_add_ais(ks_keyset_t *ks)
{
        char           dirpath[4096], path[4400], errstr[256], key[16];
        char          *names[64];
        size_t         n     = 0, i;
        long           added = 0;
        int            files = 0;
        struct dirent *de;
        DIR           *d;

        snprintf(dirpath, sizeof(dirpath), "%s", ks_test_shared_path("ais"));
        if (!(d = opendir(dirpath))) {
                fprintf(stderr, "cannot read the AIS logs in %s\n", dirpath);
                return -1;
        }
        while ((de = readdir(d)) && n < 64)
                if (de->d_name[0] != '.' && strcmp(de->d_name, "README.md"))
                        names[n++] = strdup(de->d_name);
        closedir(d);
        qsort(names, n, sizeof(*names), name_cmp);
        for (i = 0; i < n; i++) {
                ks_ais_reader_t  *r;
                ks_ais_decoder_t *dec;
                const char       *line;
                size_t            len;
                ks_ais_msg_t      m;

                snprintf(path, sizeof(path), "%s/%s", dirpath, names[i]);
                free(names[i]);
                if (!(r = ks_ais_reader_open(path, errstr, sizeof(errstr)))) {
                        fprintf(stderr, "%s: %s\n", path, errstr);
                        continue;
                }
                dec = ks_ais_decoder_new();
                while (ks_ais_reader_next(r, &line, &len) == 1) {
                        uint32_t k;
                        int      kl;
                        if (ks_ais_decode_line(dec, line, len, &m) !=
                            KS_AIS_KEYED)
                                continue;
                        /* keyshift-replay's key: the MMSI in decimal. */
                        kl = snprintf(key, sizeof(key), "%u", m.mmsi);
                        k  = ks_keyset_key(ks, key, (size_t)kl);
                        if (!ks->keys[k].is_ais) {
                                ks->keys[k].is_ais = 1;
                                ks->ais_keys++;
                        }
                        ks_keyset_add_msg(ks, k, m.sentence, m.sentence_len);
                        ks->ais_msgs++;
                        added++;
                }
                ks_ais_decoder_destroy(dec);
                ks_ais_reader_close(r);
                files++;
        }
        return files ? added : -1;
}

/** @brief Appends code point @p cp as UTF-8. @returns bytes written. */
static size_t utf8_put(uint32_t cp, uint8_t *out)
{
        if (cp < 0x80) {
                out[0] = (uint8_t)cp;
                return 1;
        }
        if (cp < 0x800) {
                out[0] = (uint8_t)(0xc0 | (cp >> 6));
                out[1] = (uint8_t)(0x80 | (cp & 0x3f));
                return 2;
        }
        if (cp < 0x10000) {
                out[0] = (uint8_t)(0xe0 | (cp >> 12));
                out[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
                out[2] = (uint8_t)(0x80 | (cp & 0x3f));
                return 3;
        }
        out[0] = (uint8_t)(0xf0 | (cp >> 18));
        out[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3f));
        out[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
        out[3] = (uint8_t)(0x80 | (cp & 0x3f));
        return 4;
}

/** @returns a random non-ASCII-heavy code point (never a surrogate). */
static uint32_t random_cp(uint64_t *st)
{
        static const uint32_t ranges[][2] = {
            {0x20, 0x7e},       /* ASCII */
            {0xa0, 0xff},       /* Latin-1: æøå ... */
            {0x391, 0x3c9},     /* Greek */
            {0x410, 0x44f},     /* Cyrillic */
            {0x4e00, 0x9fff},   /* CJK */
            {0xe000, 0xfffd},   /* private use .. specials */
            {0x1f300, 0x1f5ff}, /* pictographs: 4-byte UTF-8 */
        };
        uint64_t        r  = ks_broker_rand(st);
        const uint32_t *rg = ranges[r % 7];
        return rg[0] + (uint32_t)((r >> 8) % (rg[1] - rg[0] + 1));
}

void ks_keyset_add_random(ks_keyset_t *ks, size_t n, size_t nulls,
                          uint64_t seed)
{
        uint64_t st = seed;
        uint8_t  key[512];
        char     value[64];
        size_t   i, j, len, reps;
        uint32_t k;

        for (i = 0; i < n; i++) {
                switch (i % 3) {
                case 0: /* binary, 1..100 bytes */
                        len = 1 + ks_broker_rand(&st) % 100;
                        for (j = 0; j < len; j++)
                                key[j] = (uint8_t)ks_broker_rand(&st);
                        break;
                case 1: /* UTF-8, 1..24 code points */
                        len  = 0;
                        reps = 1 + ks_broker_rand(&st) % 24;
                        for (j = 0; j < reps; j++)
                                len += utf8_put(random_cp(&st), key + len);
                        break;
                default:
                        len = (size_t)snprintf(
                            (char *)key, sizeof(key), "key-%llx",
                            (unsigned long long)(ks_broker_rand(&st) >> 20));
                }
                k    = ks_keyset_key(ks, key, len);
                reps = 1 + ks_broker_rand(&st) % 4;
                for (j = 0; j < reps; j++) {
                        int vl = snprintf(value, sizeof(value),
                                          "random-%zu-%zu", i, j);
                        ks_keyset_add_msg(ks, k, value, (size_t)vl);
                }
        }
        k = ks_keyset_key(ks, "", 0); /* the empty key */
        for (j = 0; j < 3; j++)
                ks_keyset_add_msg(ks, k, "empty-key", 9);
        if (nulls) {
                k = ks_keyset_key(ks, NULL, 0);
                for (j = 0; j < nulls; j++)
                        ks_keyset_add_msg(ks, k, "null-key", 8);
        }
        for (i = ks->msg_cnt; i > 1; i--) { /* Fisher-Yates */
                ks_bmsg_t t;
                j               = (size_t)(ks_broker_rand(&st) % i);
                t               = ks->msgs[i - 1];
                ks->msgs[i - 1] = ks->msgs[j];
                ks->msgs[j]     = t;
        }
}

int ks_broker_oracle_hashed(ks_partitioner_t p, const ks_bkey_t *k)
{
        if (k->is_null)
                return 0;
        if (k->len == 0)
                return p == KS_PARTITIONER_MURMUR2_RANDOM;
        return 1;
}
