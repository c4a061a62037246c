/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ksb_parts.c
 * @brief Phase 2: what each step of the produce path costs, and what
 *        cheaper versions of the costly steps would cost, so each proposed
 *        change comes with a measured gain. Not part of the target table
 *        (its lines are informational, op "-").
 *
 * Every step runs over the same 1 million messages (Zipf MMSI keys, 1 %
 * int32) in a loop timed as a whole (CLOCK_MONOTONIC); the figure is ns
 * per message, median of 5 passes. Steps, in ks_client_on_send() /
 * ks_topic_record() order:
 *  - now_ms: clock_gettime(CLOCK_REALTIME), which on_send read on every
 *    message until 29cf2b2 (kept as a reference for clock reads);
 *  - coarse: clock_gettime(CLOCK_MONOTONIC_COARSE), which ks_topic_record()
 *    reads per message since 29cf2b2 (rates);
 *  - registry: ks_registry_get() of a known topic (FNV-1a of the name,
 *    strlen, probe, strcmp);
 *  - classify: ks_keyenc_classify();
 *  - logical: ks_mixed_logical_hash() (logical value as text, then
 *    MurmurHash64A of it);
 *  - hash64, crc32: the sketch hash and the partitioner hash;
 *  - place4: four remainders (current 6, proposed 12, 16, 24);
 *  - mutex: an uncontended lock + unlock;
 *  - hll, keysample, topk: each sketch's update alone;
 *  - record: ks_topic_record() whole, for comparison.
 * Prototypes (each checked to give the same answer on every message):
 *  - classify_fast: printable-ASCII keys up to 16 bytes decided with a
 *    byte loop that stops at the first non-printable, else the full rules;
 *  - logical_fast: a `decimal` or `text` key that is not 36 bytes long
 *    (so not UUID-shaped) is its own logical value, so its logical hash
 *    IS hash64 (already computed); int32 formatted without snprintf;
 *  - crc32_table: CRC-32 with a 256-entry table, inline (no zlib call);
 *  - place4_fastmod: remainders by a precomputed reciprocal (Lemire,
 *    Kaser & Kurz, "Faster remainder by direct computation", 2019).
 *
 * Usage: ksb_parts [--msgs N]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ks_hash.h"
#include "ks_hll.h"
#include "ks_keyenc.h"
#include "ks_keysample.h"
#include "ks_mixed.h"
#include "ks_partitioner.h"
#include "ks_topk.h"
#include "ksb_keys.h"
#include "ksb_stats.h"
#include "ksb_topics.h"

#define KSB_REPS 5

static volatile uint64_t ksb_sink;

/* ---- prototypes ---- */

static ks_keyenc_t classify_fast(const uint8_t *p, size_t len)
{
        size_t i;
        int    digits = 1;

        if (!p || len == 0 || len > 16 || p[0] == '"')
                return ks_keyenc_classify(p, len);
        for (i = 0; i < len; i++) {
                if (p[i] < 0x20 || p[i] > 0x7e)
                        return ks_keyenc_classify(p, len);
                digits &= p[i] >= '0' && p[i] <= '9';
        }
        if (digits && len <= 18 && (p[0] != '0' || len == 1))
                return KS_KEYENC_DECIMAL;
        return ks_keyenc_classify(p, len); /* '-', long numbers, text */
}

static int logical_fast(const uint8_t *p, size_t len, ks_keyenc_t enc,
                        uint64_t h64, uint64_t *lhash)
{
        if ((enc == KS_KEYENC_DECIMAL || enc == KS_KEYENC_TEXT) && len != 36) {
                *lhash = h64;
                return 0;
        }
        if (enc == KS_KEYENC_INT32_BE && len == 4) {
                char    buf[16], *e = buf + sizeof(buf), *s = e;
                int32_t v =
                    (int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
                              (uint32_t)p[2] << 8 | p[3]);
                uint32_t m = v < 0 ? 0u - (uint32_t)v : (uint32_t)v;
                do
                        *--s = (char)('0' + m % 10);
                while (m /= 10);
                if (v < 0)
                        *--s = '-';
                *lhash = ks_hash_key64(s, (size_t)(e - s));
                return 0;
        }
        return ks_mixed_logical_hash(p, len, enc, lhash);
}

static uint32_t crc_table[256];

static void crc_init(void)
{
        uint32_t i, j, c;

        for (i = 0; i < 256; i++) {
                for (c = i, j = 0; j < 8; j++)
                        c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
                crc_table[i] = c;
        }
}

static inline uint32_t crc32_table(const uint8_t *p, size_t len)
{
        uint32_t c = 0xffffffffu;

        while (len--)
                c = crc_table[(c ^ *p++) & 0xff] ^ (c >> 8);
        return c ^ 0xffffffffu;
}

typedef struct fastmod {
        uint64_t m;
        uint32_t d;
} fastmod_t;

static fastmod_t fastmod_new(uint32_t d)
{
        return (fastmod_t){UINT64_MAX / d + 1, d};
}

static inline uint32_t fastmod(uint32_t a, fastmod_t f)
{
        uint64_t low = f.m * a;
        return (uint32_t)(((unsigned __int128)low * f.d) >> 64);
}

/* ---- steps ---- */

typedef struct ctx {
        const ksb_stream_t *st;
        ks_keyenc_t        *enc;
        uint64_t           *h64;
        uint32_t           *phash;
        ksb_topics_t        kt;
        ks_topic_t         *topic;
        pthread_mutex_t     mu;
        ks_hll_t            hll;
        ks_keysample_t     *ks;
        ks_topk_t          *tk;
} ctx_t;

enum step {
        S_NOW,
        S_COARSE,
        S_REGISTRY,
        S_CLASSIFY,
        S_LOGICAL,
        S_HASH64,
        S_CRC32,
        S_PLACE4,
        S_MUTEX,
        S_HLL,
        S_KEYSAMPLE,
        S_TOPK,
        S_RECORD,
        S_CLASSIFY_FAST,
        S_LOGICAL_FAST,
        S_CRC32_TABLE,
        S_PLACE4_FASTMOD,
        S__CNT
};

static const char *const step_names[S__CNT] = {
    "now_ms",      "coarse",        "registry", "classify",      "logical",
    "hash64",      "crc32",         "place4",   "mutex",         "hll",
    "keysample",   "topk",          "record",   "classify_fast", "logical_fast",
    "crc32_table", "place4_fastmod"};

static void run_step(ctx_t *c, enum step s)
{
        const ksb_stream_t *st  = c->st;
        uint64_t            acc = 0;
        fastmod_t f[4] = {fastmod_new(6), fastmod_new(12), fastmod_new(16),
                          fastmod_new(24)};
        size_t    i;
        int       created;

        for (i = 0; i < st->n; i++) {
                const ksb_key_t *k = &st->msgs[i];
                uint64_t         lh;
                struct timespec  ts;
                switch (s) {
                case S_NOW:
                        clock_gettime(CLOCK_REALTIME, &ts);
                        acc += (uint64_t)ts.tv_nsec;
                        break;
                case S_COARSE:
                        clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
                        acc += (uint64_t)ts.tv_nsec;
                        break;
                case S_REGISTRY:
                        acc += (uintptr_t)ks_registry_get(
                            &c->kt.reg, "ais", &c->kt.conf, &c->kt.params, 0,
                            &created);
                        break;
                case S_CLASSIFY:
                        acc += ks_keyenc_classify(k->bytes, k->len);
                        break;
                case S_LOGICAL:
                        ks_mixed_logical_hash(k->bytes, k->len, c->enc[i], &lh);
                        acc += lh;
                        break;
                case S_HASH64:
                        acc += ks_hash_key64(k->bytes, k->len);
                        break;
                case S_CRC32:
                        acc += ks_partitioner_hash(
                            KS_PARTITIONER_CONSISTENT_RANDOM, k->bytes, k->len);
                        break;
                case S_PLACE4:
                        acc += ks_partition_of(c->phash[i], 6) +
                               ks_partition_of(c->phash[i], 12) +
                               ks_partition_of(c->phash[i], 16) +
                               ks_partition_of(c->phash[i], 24);
                        break;
                case S_MUTEX:
                        pthread_mutex_lock(&c->mu);
                        acc++;
                        pthread_mutex_unlock(&c->mu);
                        break;
                case S_HLL:
                        ks_hll_add(&c->hll, c->h64[i]);
                        break;
                case S_KEYSAMPLE: {
                        int a;
                        acc += (uintptr_t)ks_keysample_add_payload(
                            c->ks, c->h64[i], c->phash[i], 73, &a);
                        break;
                }
                case S_TOPK:
                        ks_topk_add(c->tk, k->bytes, k->len, c->h64[i],
                                    c->phash[i], 73);
                        break;
                case S_RECORD:
                        ks_topic_record(c->topic, k->bytes, k->len, -1, 64);
                        break;
                case S_CLASSIFY_FAST:
                        acc += classify_fast(k->bytes, k->len);
                        break;
                case S_LOGICAL_FAST:
                        logical_fast(k->bytes, k->len, c->enc[i], c->h64[i],
                                     &lh);
                        acc += lh;
                        break;
                case S_CRC32_TABLE:
                        acc += crc32_table(k->bytes, k->len);
                        break;
                case S_PLACE4_FASTMOD:
                        acc += fastmod(c->phash[i], f[0]) +
                               fastmod(c->phash[i], f[1]) +
                               fastmod(c->phash[i], f[2]) +
                               fastmod(c->phash[i], f[3]);
                        break;
                default:
                        break;
                }
        }
        ksb_sink += acc;
}

/** @brief Checks the prototypes against keyshift on every message. */
static void check_prototypes(ctx_t *c)
{
        fastmod_t f[4] = {fastmod_new(6), fastmod_new(12), fastmod_new(16),
                          fastmod_new(24)};
        int32_t   d[4] = {6, 12, 16, 24};
        size_t    i, j, checked = 0;

        for (i = 0; i < c->st->n; i++) {
                const ksb_key_t *k = &c->st->msgs[i];
                uint64_t         a = 0, b = 0;
                int              ra, rb;
                if (classify_fast(k->bytes, k->len) != c->enc[i])
                        ksb_die("classify_fast differs at %zu", i);
                ra = ks_mixed_logical_hash(k->bytes, k->len, c->enc[i], &a);
                rb = logical_fast(k->bytes, k->len, c->enc[i], c->h64[i], &b);
                if (ra != rb || (ra == 0 && a != b))
                        ksb_die("logical_fast differs at %zu", i);
                if (crc32_table(k->bytes, k->len) != c->phash[i])
                        ksb_die("crc32_table differs at %zu", i);
                for (j = 0; j < 4; j++)
                        if ((int32_t)fastmod(c->phash[i], f[j]) !=
                            ks_partition_of(c->phash[i], d[j]))
                                ksb_die("fastmod differs at %zu", i);
                checked++;
        }
        for (i = 0; i < 1000000; i++) { /* fastmod over the whole range */
                uint32_t x = (uint32_t)(i * 4294967291u) ^ (uint32_t)(i << 7);
                for (j = 0; j < 4; j++)
                        if ((int32_t)fastmod(x, f[j]) !=
                            ks_partition_of(x, d[j]))
                                ksb_die("fastmod differs for %u", x);
        }
        ksb_note("prototypes give keyshift's answers on all %zu messages",
                 checked);
}

int main(int argc, char **argv)
{
        const char *const props[] = {"keyshift.partitions.proposed", "12,16,24",
                                     NULL};
        size_t            msgs    = 1000000, i;
        ksb_stream_t      st;
        ctx_t             c;
        double            cost[S__CNT];
        int               a, s, r;

        for (a = 1; a < argc; a++) {
                if (!strcmp(argv[a], "--msgs") && a + 1 < argc)
                        msgs = strtoull(argv[++a], NULL, 10);
                else
                        ksb_die("usage: ksb_parts [--msgs N]");
        }
        crc_init();
        ksb_stream_zipf(&st, msgs, 100000, 1.0, 0.01, 42);
        memset(&c, 0, sizeof(c));
        c.st    = &st;
        c.enc   = malloc(st.n * sizeof(*c.enc));
        c.h64   = malloc(st.n * sizeof(*c.h64));
        c.phash = malloc(st.n * sizeof(*c.phash));
        for (i = 0; i < st.n; i++) {
                c.enc[i] = ks_keyenc_classify(st.msgs[i].bytes, st.msgs[i].len);
                c.h64[i] = ks_hash_key64(st.msgs[i].bytes, st.msgs[i].len);
                c.phash[i] =
                    ks_partitioner_hash(KS_PARTITIONER_CONSISTENT_RANDOM,
                                        st.msgs[i].bytes, st.msgs[i].len);
        }
        check_prototypes(&c);
        pthread_mutex_init(&c.mu, NULL);
        for (s = 0; s < S__CNT; s++) {
                double v[KSB_REPS];
                char   id[64];
                for (r = 0; r < KSB_REPS; r++) {
                        uint64_t t0, t1;
                        ksb_topics_init(&c.kt, props);
                        c.topic = ksb_topics_add(&c.kt, "ais", 6);
                        ks_hll_init(&c.hll);
                        c.ks = ks_keysample_new_payload(4096, 16);
                        c.tk = ks_topk_new(1024);
                        t0   = ksb_now_ns();
                        run_step(&c, (enum step)s);
                        t1   = ksb_now_ns();
                        v[r] = (double)(t1 - t0) / (double)st.n;
                        ks_topk_destroy(c.tk);
                        ks_keysample_destroy(c.ks);
                        ksb_topics_destroy(&c.kt);
                }
                cost[s] = ksb_median(v, KSB_REPS);
                snprintf(id, sizeof(id), "p.%s", step_names[s]);
                ksb_result(id, "step cost per message (Zipf 100k)", "-", 0,
                           "ns", v, KSB_REPS);
        }
        ksb_note("sum of steps %.0f ns (record alone %.0f ns); with the "
                 "prototypes: %.0f ns",
                 cost[S_COARSE] + cost[S_REGISTRY] + cost[S_CLASSIFY] +
                     cost[S_LOGICAL] + cost[S_HASH64] + cost[S_CRC32] +
                     cost[S_PLACE4] + cost[S_MUTEX] + cost[S_HLL] +
                     cost[S_KEYSAMPLE] + cost[S_TOPK],
                 cost[S_RECORD],
                 cost[S_COARSE] + cost[S_REGISTRY] + cost[S_CLASSIFY_FAST] +
                     cost[S_LOGICAL_FAST] + cost[S_HASH64] +
                     cost[S_CRC32_TABLE] + cost[S_PLACE4_FASTMOD] +
                     cost[S_MUTEX] + cost[S_HLL] + cost[S_KEYSAMPLE] +
                     cost[S_TOPK]);
        free(c.enc);
        free(c.h64);
        free(c.phash);
        ksb_stream_free(&st);
        return 0;
}
