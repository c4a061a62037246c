/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ais_synth.c
 * @brief Deterministic synthetic AIS feed (see ais_synth.h for the model
 *        and the sources).
 */
#include "ais_synth.h"

#include "ais_nmea.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/** Bits of a type 1 position report and of a type 5 static report
 *  (ITU-R M.1371-5 Annex 8, messages 1 and 5). */
#define KS_SYNTH_TYPE1_BITS 168
#define KS_SYNTH_TYPE5_BITS 424
/** Payload characters of the type 5's first fragment (the rest, 11
 *  characters with 2 fill bits, go in fragment 2), as AIS transponders
 *  commonly split it. */
#define KS_SYNTH_TYPE5_FRAG1_CHARS 60

struct ks_ais_synth {
        ks_ais_synth_config_t conf;
        uint64_t              rng;
        uint32_t             *mmsi; /**< by rank */
        double               *cum;  /**< cumulative rate by rank */
        char                  pending[KS_AIS_SYNTH_LINE_MAX];
        size_t                pending_len; /**< a type 5's fragment 2 */
        uint32_t              pending_mmsi;
        unsigned              seq_id;  /**< next sequential message id */
        unsigned              channel; /**< alternates A / B */
};

/** A packed payload under construction: one 6-bit value per byte. */
typedef struct ks_synth_bits {
        uint8_t six[(KS_SYNTH_TYPE5_BITS + 5) / 6];
        size_t  nbits;
} ks_synth_bits_t;

/**
 * @brief SplitMix64 (Steele, Lea, Flood, OOPSLA 2014; constants from
 *        Vigna's public-domain splitmix64.c).
 * @returns the next 64 random bits of state @p x.
 */
static uint64_t ks_synth_splitmix64(uint64_t *x)
{
        uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
        z          = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z          = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
}

/** @returns a uniform double in [0, 1) (the top 53 bits). */
static double ks_synth_uniform(ks_ais_synth_t *s)
{
        return (double)(ks_synth_splitmix64(&s->rng) >> 11) * 0x1.0p-53;
}

/** @returns a uniform integer in [0, n) (n small: the modulo bias of
 *           n / 2^64 is irrelevant here). */
static uint32_t ks_synth_below(ks_ais_synth_t *s, uint32_t n)
{
        return (uint32_t)(ks_synth_splitmix64(&s->rng) % n);
}

void ks_ais_synth_config_defaults(ks_ais_synth_config_t *conf)
{
        conf->seed            = 1;
        conf->vessels         = 3000;
        conf->zipf_s          = 0.5;
        conf->hot_vessels     = 5;
        conf->hot_factor      = 100.0;
        conf->mmsi_zero_share = 0.01;
        conf->type5_share     = 0.02;
}

/**
 * @brief Draws `vessels` distinct 9-digit MMSIs: a maritime identification
 *        digit group (ITU MID table: Australia, Liberia, Hong Kong, ...)
 *        followed by 6 random digits. Uniqueness via an open-addressing
 *        set of twice the population.
 * @returns 0, -1 on ENOMEM.
 */
static int ks_synth_draw_mmsis(ks_ais_synth_t *s)
{
        static const uint32_t mids[] = {503, 636, 477, 538, 563, 219, 244, 366,
                                        235, 257, 311, 353, 413, 431, 440, 525};
        size_t                cap    = 1, i;
        uint32_t             *set, r;

        while (cap < 2 * (size_t)s->conf.vessels)
                cap <<= 1;
        if (!(set = calloc(cap, sizeof(*set))))
                return -1;
        for (r = 0; r < s->conf.vessels;) {
                uint32_t m =
                    mids[ks_synth_below(s, sizeof(mids) / sizeof(mids[0]))] *
                        1000000u +
                    ks_synth_below(s, 1000000u);
                for (i = (m * 2654435761u) & (cap - 1); set[i] && set[i] != m;
                     i = (i + 1) & (cap - 1))
                        ;
                if (set[i] == m)
                        continue; /* drawn before: draw again */
                set[i]       = m;
                s->mmsi[r++] = m;
        }
        free(set);
        return 0;
}

/** @brief Fills s->cum with the cumulative rates by rank (ais_synth.h). */
static void ks_synth_build_rates(ks_ais_synth_t *s)
{
        const ks_ais_synth_config_t *c = &s->conf;
        /* The median vessel is the one of rank vessels/2, an ordinary one
         * (hot_vessels < vessels/2 in any sensible configuration). */
        double median =
            pow((double)c->vessels / 2 - c->hot_vessels + 1, -c->zipf_s);
        double   sum = 0;
        uint32_t r;

        for (r = 0; r < c->vessels; r++) {
                double w =
                    r < c->hot_vessels
                        ? c->hot_factor * median
                        : pow((double)(r - c->hot_vessels + 1), -c->zipf_s);
                sum += w;
                s->cum[r] = sum;
        }
}

ks_ais_synth_t *ks_ais_synth_new(const ks_ais_synth_config_t *conf)
{
        ks_ais_synth_config_t defaults;
        ks_ais_synth_t       *s;

        if (!conf) {
                ks_ais_synth_config_defaults(&defaults);
                conf = &defaults;
        }
        if (conf->vessels < 2 || conf->vessels > 10000000 ||
            conf->hot_vessels >= conf->vessels || !(conf->hot_factor > 0) ||
            !(conf->zipf_s >= 0) || !(conf->mmsi_zero_share >= 0) ||
            !(conf->mmsi_zero_share <= 1) || !(conf->type5_share >= 0) ||
            !(conf->type5_share <= 1))
                return NULL;
        if (!(s = calloc(1, sizeof(*s))))
                return NULL;
        s->conf = *conf;
        s->rng  = conf->seed;
        s->mmsi = malloc(conf->vessels * sizeof(*s->mmsi));
        s->cum  = malloc(conf->vessels * sizeof(*s->cum));
        if (!s->mmsi || !s->cum || ks_synth_draw_mmsis(s) == -1) {
                ks_ais_synth_destroy(s);
                return NULL;
        }
        ks_synth_build_rates(s);
        return s;
}

void ks_ais_synth_destroy(ks_ais_synth_t *s)
{
        if (!s)
                return;
        free(s->mmsi);
        free(s->cum);
        free(s);
}

uint32_t ks_ais_synth_vessel_mmsi(const ks_ais_synth_t *s, uint32_t rank)
{
        return rank < s->conf.vessels ? s->mmsi[rank] : 0;
}

/** @returns the sender of the next message: MMSI 0 or a vessel drawn by
 *           rate (inverse transform sampling, binary search). */
static uint32_t ks_synth_pick_mmsi(ks_ais_synth_t *s)
{
        double   u;
        uint32_t lo = 0, hi = s->conf.vessels - 1;

        if (ks_synth_uniform(s) < s->conf.mmsi_zero_share)
                return 0;
        u = ks_synth_uniform(s) * s->cum[hi];
        while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (s->cum[mid] > u)
                        hi = mid;
                else
                        lo = mid + 1;
        }
        return s->mmsi[lo];
}

/** @brief Appends the @p nbits low bits of @p v, most significant first. */
static void ks_synth_put(ks_synth_bits_t *b, uint64_t v, unsigned nbits)
{
        while (nbits-- > 0) {
                size_t i = b->nbits / 6;
                b->six[i] =
                    (uint8_t)((b->six[i] << 1) | (unsigned)((v >> nbits) & 1));
                b->nbits++;
        }
}

/** @brief Appends @p text as @p nchars 6-bit characters ('@'-padded;
 *         AIVDM/AIVDO protocol decoding, "6-bit ASCII"). */
static void ks_synth_put_text(ks_synth_bits_t *b, const char *text,
                              unsigned nchars)
{
        unsigned i;
        size_t   len = strlen(text);

        for (i = 0; i < nchars; i++) {
                unsigned c = i < len ? (unsigned char)text[i] : '@';
                ks_synth_put(b, c >= 64 ? c - 64 : c, 6);
        }
}

/** @brief Builds a type 1 position report from @p mmsi near Australia's
 *         coast, the vessel's own area derived from its MMSI. */
static void ks_synth_type1(ks_ais_synth_t *s, uint32_t mmsi, ks_synth_bits_t *b)
{
        uint64_t h    = mmsi;
        uint64_t home = ks_synth_splitmix64(&h);
        /* 1/10000 minute units: degrees x 600000 */
        int64_t lon = (int64_t)(110 + home % 45) * 600000 +
                      (int64_t)ks_synth_below(s, 600000);
        int64_t lat = -(int64_t)(10 + (home >> 8) % 35) * 600000 -
                      (int64_t)ks_synth_below(s, 600000);

        ks_synth_put(b, 1, 6);                            /* message type */
        ks_synth_put(b, 0, 2);                            /* repeat */
        ks_synth_put(b, mmsi, 30);                        /* MMSI */
        ks_synth_put(b, ks_synth_below(s, 2) ? 0 : 5, 4); /* status */
        ks_synth_put(b, 128, 8);                          /* ROT n/a */
        ks_synth_put(b, ks_synth_below(s, 250), 10);      /* SOG 0.1 kn */
        ks_synth_put(b, 1, 1);                            /* accuracy */
        ks_synth_put(b, (uint64_t)lon & 0xfffffff, 28);   /* longitude */
        ks_synth_put(b, (uint64_t)lat & 0x7ffffff, 27);   /* latitude */
        ks_synth_put(b, ks_synth_below(s, 3600), 12);     /* COG 0.1 deg */
        ks_synth_put(b, ks_synth_below(s, 360), 9);       /* heading */
        ks_synth_put(b, ks_synth_below(s, 60), 6);        /* UTC second */
        ks_synth_put(b, 0, 2 + 3 + 1); /* man., spare, RAIM */
        ks_synth_put(b, ks_synth_below(s, 1u << 19), 19); /* radio */
}

/** @brief Builds a type 5 static and voyage report for @p mmsi. */
static void ks_synth_type5(ks_ais_synth_t *s, uint32_t mmsi, ks_synth_bits_t *b)
{
        char name[24], callsign[8];

        snprintf(name, sizeof(name), "SYNTH %09u", (unsigned)mmsi);
        snprintf(callsign, sizeof(callsign), "S%06u",
                 (unsigned)(mmsi % 1000000));
        ks_synth_put(b, 5, 6);                         /* message type */
        ks_synth_put(b, 0, 2);                         /* repeat */
        ks_synth_put(b, mmsi, 30);                     /* MMSI */
        ks_synth_put(b, 0, 2);                         /* AIS version */
        ks_synth_put(b, 9000000 + mmsi % 1000000, 30); /* IMO number */
        ks_synth_put_text(b, callsign, 7);
        ks_synth_put_text(b, name, 20);
        ks_synth_put(b, 70 + ks_synth_below(s, 20), 8);  /* cargo, tanker */
        ks_synth_put(b, 150, 9);                         /* to bow */
        ks_synth_put(b, 30, 9);                          /* to stern */
        ks_synth_put(b, 15, 6);                          /* to port */
        ks_synth_put(b, 15, 6);                          /* to starboard */
        ks_synth_put(b, 1, 4);                           /* EPFD: GPS */
        ks_synth_put(b, 1 + ks_synth_below(s, 12), 4);   /* ETA month */
        ks_synth_put(b, 1 + ks_synth_below(s, 28), 5);   /* ETA day */
        ks_synth_put(b, ks_synth_below(s, 24), 5);       /* ETA hour */
        ks_synth_put(b, ks_synth_below(s, 60), 6);       /* ETA minute */
        ks_synth_put(b, 50 + ks_synth_below(s, 100), 8); /* draught dm */
        ks_synth_put_text(b, "SYDNEY", 20);              /* destination */
        ks_synth_put(b, 0, 2);                           /* DTE, spare */
}

/**
 * @brief Formats one sentence of @p b's payload characters [from, to).
 * @returns its length.
 */
static size_t ks_synth_sentence(char *buf, size_t size, int count, int num,
                                int seq_id, char channel,
                                const ks_synth_bits_t *b, size_t from,
                                size_t to, int fill)
{
        char   seq[2] = {0, 0};
        size_t n, i;

        if (seq_id >= 0)
                seq[0] = (char)('0' + seq_id);
        n = (size_t)snprintf(buf, size, "!AIVDM,%d,%d,%s,%c,", count, num, seq,
                             channel);
        for (i = from; i < to; i++)
                buf[n++] = ks_ais_armour(b->six[i]);
        n += (size_t)snprintf(buf + n, size - n, ",%d", fill);
        n += (size_t)snprintf(buf + n, size - n, "*%02X",
                              ks_ais_checksum(buf + 1, n - 1));
        return n;
}

size_t ks_ais_synth_next(ks_ais_synth_t *s, char *buf, size_t size,
                         uint32_t *mmsi)
{
        ks_synth_bits_t b;
        uint32_t        m;
        char            channel;

        if (size < KS_AIS_SYNTH_LINE_MAX)
                return 0;
        if (s->pending_len) {
                size_t n = s->pending_len;
                memcpy(buf, s->pending, n + 1);
                s->pending_len = 0;
                if (mmsi)
                        *mmsi = s->pending_mmsi;
                return n;
        }
        memset(&b, 0, sizeof(b));
        m       = ks_synth_pick_mmsi(s);
        channel = (s->channel++ & 1) ? 'B' : 'A';
        if (mmsi)
                *mmsi = m;
        if (ks_synth_uniform(s) >= s->conf.type5_share) {
                ks_synth_type1(s, m, &b);
                return ks_synth_sentence(buf, size, 1, 1, -1, channel, &b, 0,
                                         KS_SYNTH_TYPE1_BITS / 6, 0);
        }
        ks_synth_type5(s, m, &b);
        /* 424 bits: 70 whole characters and 4 bits padded with 2 fill
         * bits into a 71st (the last value still needs its low bits). */
        b.six[b.nbits / 6] <<= 6 - b.nbits % 6;
        s->pending_len = ks_synth_sentence(
            s->pending, sizeof(s->pending), 2, 2, (int)s->seq_id, channel, &b,
            KS_SYNTH_TYPE5_FRAG1_CHARS, (KS_SYNTH_TYPE5_BITS + 5) / 6,
            (int)((6 - KS_SYNTH_TYPE5_BITS % 6) % 6));
        s->pending_mmsi = m;
        {
                size_t n =
                    ks_synth_sentence(buf, size, 2, 1, (int)s->seq_id, channel,
                                      &b, 0, KS_SYNTH_TYPE5_FRAG1_CHARS, 0);
                s->seq_id = (s->seq_id + 1) % 10;
                return n;
        }
}
