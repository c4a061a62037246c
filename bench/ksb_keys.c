/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ksb_keys.c
 * @brief MMSI-like key streams (see ksb_keys.h).
 */
#include "ksb_keys.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ais_nmea.h"
#include "ais_reader.h"
#include "ksb_stats.h"

/** Size of the MMSI range used, 201000000 .. 775999999. */
#define KSB_MMSI_SPAN 575000000ull

uint64_t ksb_splitmix64(uint64_t *state)
{
        uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
}

uint32_t ksb_mmsi(uint32_t id)
{
        return (uint32_t)(201000000ull +
                          ((uint64_t)id * 2654435761ull) % KSB_MMSI_SPAN);
}

void ksb_key_make(ksb_key_t *k, uint32_t id, int int32)
{
        uint32_t m = ksb_mmsi(id);
        int      i;

        memset(k, 0, sizeof(*k));
        k->id = id;
        if (int32) {
                k->len      = 4;
                k->bytes[0] = (uint8_t)(m >> 24);
                k->bytes[1] = (uint8_t)(m >> 16);
                k->bytes[2] = (uint8_t)(m >> 8);
                k->bytes[3] = (uint8_t)m;
                return;
        }
        k->len = 9;
        for (i = 8; i >= 0; i--, m /= 10)
                k->bytes[i] = (uint8_t)('0' + m % 10);
}

static ksb_key_t *alloc_msgs(size_t n)
{
        ksb_key_t *m = malloc(n * sizeof(*m));

        if (!m)
                ksb_die("out of memory for %zu keys", n);
        return m;
}

void ksb_stream_zipf(ksb_stream_t *st, size_t n, size_t keys, double s,
                     double int32_share, uint64_t seed)
{
        double  *cdf = malloc(keys * sizeof(*cdf));
        double   sum = 0;
        uint64_t rng = seed;
        size_t   i;

        if (!cdf)
                ksb_die("out of memory");
        for (i = 0; i < keys; i++) {
                sum += pow((double)(i + 1), -s);
                cdf[i] = sum;
        }
        st->msgs = alloc_msgs(n);
        st->n    = n;
        st->keys = keys;
        snprintf(st->name, sizeof(st->name), "zipf%.1f-%zuk", s, keys / 1000);
        for (i = 0; i < n; i++) {
                double u  = (double)(ksb_splitmix64(&rng) >> 11) * 0x1p-53;
                double t  = u * sum;
                size_t lo = 0, hi = keys - 1;
                int    int32;

                while (lo < hi) {
                        size_t mid = (lo + hi) / 2;
                        if (cdf[mid] < t)
                                lo = mid + 1;
                        else
                                hi = mid;
                }
                int32 = (double)(ksb_splitmix64(&rng) >> 11) * 0x1p-53 <
                        int32_share;
                ksb_key_make(&st->msgs[i], (uint32_t)lo, int32);
        }
        free(cdf);
}

void ksb_stream_distinct(ksb_stream_t *st, size_t keys)
{
        size_t i;

        st->msgs = alloc_msgs(keys);
        st->n    = keys;
        st->keys = keys;
        snprintf(st->name, sizeof(st->name), "distinct-%zuM", keys / 1000000);
        for (i = 0; i < keys; i++)
                ksb_key_make(&st->msgs[i], (uint32_t)i, 0);
}

static const uint32_t *sort_by_mmsi;

static int by_mmsi(const void *a, const void *b)
{
        uint32_t x = sort_by_mmsi[*(const size_t *)a];
        uint32_t y = sort_by_mmsi[*(const size_t *)b];

        return x < y ? -1 : x > y;
}

void ksb_stream_spiked(ksb_stream_t *st, size_t n, size_t hot, double share,
                       uint64_t seed)
{
        uint64_t rng = seed;
        size_t   i, fresh = hot;

        st->msgs = alloc_msgs(n);
        st->n    = n;
        snprintf(st->name, sizeof(st->name), "spiked-%zuM-%zu@%.0f%%",
                 n / 1000000, hot, share * 100);
        for (i = 0; i < n; i++) {
                double u = (double)(ksb_splitmix64(&rng) >> 11) * 0x1p-53;
                /* hot key r (0-based): the lower ids busier */
                size_t r = u < share
                               ? (size_t)((double)hot * pow(u / share, 3.0))
                               : fresh++;
                ksb_key_make(&st->msgs[i], (uint32_t)r, 0);
        }
        st->keys = fresh;
}

const char *ksb_ais_log_path(void)
{
        return KSB_AIS_LOG;
}

void ksb_stream_ais(ksb_stream_t *st, const char *path, size_t n)
{
        char              errstr[256];
        ks_ais_decoder_t *dec = ks_ais_decoder_new();
        ks_ais_reader_t  *rd = ks_ais_reader_open(path, errstr, sizeof(errstr));
        ks_ais_msg_t      m;
        const char       *line;
        size_t            len, logged = 0, cap = 32768, i, distinct = 0;
        size_t           *order;
        uint32_t         *mmsi = malloc(cap * sizeof(*mmsi)), *ids;

        if (!dec || !rd || !mmsi)
                ksb_die("%s: %s", path, rd ? "out of memory" : errstr);
        while (ks_ais_reader_next(rd, &line, &len) == 1) {
                if (ks_ais_decode_line(dec, line, len, &m) != KS_AIS_KEYED)
                        continue;
                if (logged == cap &&
                    !(mmsi = realloc(mmsi, (cap *= 2) * sizeof(*mmsi))))
                        ksb_die("out of memory");
                mmsi[logged++] = m.mmsi;
        }
        ks_ais_reader_close(rd);
        ks_ais_decoder_destroy(dec);
        if (!logged)
                ksb_die("%s: no keyed AIS message", path);
        /* ids: 0.. in the order of the MMSIs' values (a dense population,
         * as the other streams'); the key is the MMSI */
        if (!(ids = calloc(logged, sizeof(*ids))) ||
            !(order = malloc(logged * sizeof(*order))))
                ksb_die("out of memory");
        for (i = 0; i < logged; i++)
                order[i] = i;
        sort_by_mmsi = mmsi;
        qsort(order, logged, sizeof(*order), by_mmsi);
        for (i = 0; i < logged; i++)
                if (i && mmsi[order[i]] == mmsi[order[i - 1]])
                        ids[order[i]] = ids[order[i - 1]];
                else
                        ids[order[i]] = (uint32_t)distinct++;
        st->msgs = alloc_msgs(n);
        st->n    = n;
        st->keys = distinct;
        snprintf(st->name, sizeof(st->name), "risky_ais-x%zu",
                 (n + logged - 1) / logged);
        for (i = 0; i < n; i++) {
                /* keyshift-replay's key: the MMSI's decimal text */
                ksb_key_t *k = &st->msgs[i];
                k->id        = ids[i % logged];
                k->len = (uint8_t)snprintf((char *)k->bytes, sizeof(k->bytes),
                                           "%u", mmsi[i % logged]);
        }
        free(order);
        free(ids);
        free(mmsi);
}

void ksb_stream_free(ksb_stream_t *st)
{
        free(st->msgs);
        memset(st, 0, sizeof(*st));
}
