/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ais_nmea.c
 * @brief AIS NMEA 0183 decoder (see ais_nmea.h for the format, the
 *        counting rules and the sources).
 */
#include "ais_nmea.h"

#include <stdlib.h>
#include <string.h>

/**
 * A fragment 1 whose later fragments are still expected. Its identity is
 * what the sentences of one message share: the receiver (talker), VDM/VDO,
 * the channel, the sequential message id and the fragment count.
 */
typedef struct ks_ais_pending {
        int      used;
        char     talker[2];
        char     formatter;
        char     channel[3];
        int      seq_id;
        int      frag_count;
        int      next_frag; /**< the fragment number expected next */
        int      has_mmsi;
        int      type;
        uint32_t mmsi;
        uint64_t last_used; /**< sentence counter, for LRU eviction */
} ks_ais_pending_t;

struct ks_ais_decoder {
        ks_ais_stats_t   stats;
        uint64_t         clock; /**< ticks once per valid sentence */
        ks_ais_pending_t pending[KS_AIS_PENDING_MAX];
};

ks_ais_decoder_t *ks_ais_decoder_new(void)
{
        return calloc(1, sizeof(ks_ais_decoder_t));
}

void ks_ais_decoder_destroy(ks_ais_decoder_t *dec)
{
        free(dec);
}

const ks_ais_stats_t *ks_ais_decoder_stats(const ks_ais_decoder_t *dec)
{
        return &dec->stats;
}

const char *ks_ais_result_name(ks_ais_result_t res)
{
        static const char *names[] = {"non_ais", "malformed", "bad_checksum",
                                      "unkeyed", "orphan",    "keyed"};
        if ((unsigned)res >= sizeof(names) / sizeof(names[0]))
                return "?";
        return names[res];
}

unsigned ks_ais_checksum(const char *s, size_t len)
{
        unsigned x = 0;
        size_t   i;

        for (i = 0; i < len; i++)
                x ^= (unsigned char)s[i];
        return x;
}

int ks_ais_sixbit(char c)
{
        /* AIVDM/AIVDO protocol decoding, "AIS Payload Data Types":
         * '0'..'W' carry 0..39, '`'..'w' carry 40..63. */
        if (c >= '0' && c <= 'W')
                return c - '0';
        if (c >= '`' && c <= 'w')
                return c - '0' - 8;
        return -1;
}

char ks_ais_armour(unsigned v)
{
        v &= 63;
        return (char)(v < 40 ? v + '0' : v + '0' + 8);
}

int ks_ais_payload_mmsi(const char *payload, size_t len, int fill_bits,
                        int *type, uint32_t *mmsi)
{
        uint64_t bits = 0;
        size_t   i;

        if (len * 6 < (size_t)fill_bits + KS_AIS_MMSI_MIN_BITS)
                return -1;
        /* The first 7 characters hold bits 0..41, enough for bits 0..37. */
        for (i = 0; i < 7; i++) {
                int v = ks_ais_sixbit(payload[i]);
                if (v < 0)
                        return -1;
                bits = (bits << 6) | (uint64_t)v;
        }
        *type = (int)(bits >> 36);
        *mmsi = (uint32_t)((bits >> 4) & 0x3fffffffu);
        return 0;
}

int ks_ais_is_vessel_type(int type)
{
        switch (type) {
        case 1:  /* position report class A */
        case 2:  /* position report class A (assigned schedule) */
        case 3:  /* position report class A (response to interrogation) */
        case 5:  /* static and voyage related data */
        case 18: /* standard class B position report */
        case 19: /* extended class B position report */
        case 24: /* class B static data report */
                return 1;
        default:
                return 0;
        }
}

/** @returns 1 if s[0..] starts a `!ttVDM,` or `!ttVDO,` (7 bytes). */
static int ks_ais_is_sentence_start(const char *s, size_t avail)
{
        int i;

        if (avail < 7 || s[0] != '!')
                return 0;
        for (i = 1; i <= 2; i++)
                if ((unsigned char)s[i] <= ' ' || (unsigned char)s[i] > '~' ||
                    strchr(",*!$\\", s[i]))
                        return 0;
        return s[3] == 'V' && s[4] == 'D' && (s[5] == 'M' || s[5] == 'O') &&
               s[6] == ',';
}

/** @returns the value of hex digit @p c, -1 if it is none. */
static int ks_ais_hexval(char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        return -1;
}

/**
 * @brief Parses the fields after `!ttVDx,` into @p m.
 * @param p    the first byte after `!ttVDx,`; @p end one past the line.
 * @param sum  set to the checksum the sentence declares.
 * @returns 0, or -1 if the fields are not a well-formed sentence.
 */
static int ks_ais_parse_fields(const char *p, const char *end, ks_ais_msg_t *m,
                               unsigned *sum)
{
        const char *q;
        int         hi, lo;

        /* <count>,<number>, : one digit each, 1 <= number <= count */
        if (end - p < 4 || p[0] < '1' || p[0] > '9' || p[1] != ',' ||
            p[2] < '1' || p[2] > p[0] || p[3] != ',')
                return -1;
        m->frag_count = p[0] - '0';
        m->frag_num   = p[2] - '0';
        p += 4;
        /* <seq id>, : empty or one digit */
        m->seq_id = -1;
        if (p < end && *p >= '0' && *p <= '9')
                m->seq_id = *p++ - '0';
        if (p >= end || *p++ != ',')
                return -1;
        /* <channel>, : empty, "A", "B", "1", "2" (at most 2 characters) */
        for (q = p; q < end && *q != ',' && *q != '*' && q - p < 3; q++)
                ;
        if (q >= end || *q != ',' || q - p > 2)
                return -1;
        memcpy(m->channel, p, (size_t)(q - p));
        m->channel[q - p] = '\0';
        p                 = q + 1;
        /* <payload>, : armoured characters only */
        for (q = p; q < end && *q != ','; q++)
                if (ks_ais_sixbit(*q) < 0)
                        return -1;
        if (q >= end)
                return -1;
        m->payload     = p;
        m->payload_len = (size_t)(q - p);
        p              = q + 1;
        /* <fill>*hh */
        if (end - p < 4 || p[0] < '0' || p[0] > '5' || p[1] != '*')
                return -1;
        m->fill_bits = p[0] - '0';
        hi           = ks_ais_hexval(p[2]);
        lo           = ks_ais_hexval(p[3]);
        if (hi < 0 || lo < 0)
                return -1;
        *sum            = (unsigned)(hi << 4 | lo);
        m->sentence_len = (size_t)(p + 4 - m->sentence);
        return 0;
}

/** @returns 1 if @p e is the table entry of @p m's message. */
static int ks_ais_pending_matches(const ks_ais_pending_t *e,
                                  const ks_ais_msg_t     *m)
{
        return e->used && e->talker[0] == m->talker[0] &&
               e->talker[1] == m->talker[1] && e->formatter == m->formatter &&
               !strcmp(e->channel, m->channel) && e->seq_id == m->seq_id &&
               e->frag_count == m->frag_count;
}

/**
 * @brief Remembers fragment 1 @p m of a multi-fragment message, replacing
 *        an unfinished message with the same identity, else a free entry,
 *        else the least recently used one.
 */
static void ks_ais_pending_put(ks_ais_decoder_t *dec, const ks_ais_msg_t *m,
                               int has_mmsi)
{
        ks_ais_pending_t *e = NULL;
        int               i;

        for (i = 0; i < KS_AIS_PENDING_MAX && !e; i++)
                if (ks_ais_pending_matches(&dec->pending[i], m))
                        e = &dec->pending[i];
        for (i = 0; i < KS_AIS_PENDING_MAX && !e; i++)
                if (!dec->pending[i].used)
                        e = &dec->pending[i];
        if (!e) {
                e = &dec->pending[0];
                for (i = 1; i < KS_AIS_PENDING_MAX; i++)
                        if (dec->pending[i].last_used < e->last_used)
                                e = &dec->pending[i];
        }
        e->used = 1;
        memcpy(e->talker, m->talker, 2);
        e->formatter = m->formatter;
        memcpy(e->channel, m->channel, sizeof(e->channel));
        e->seq_id     = m->seq_id;
        e->frag_count = m->frag_count;
        e->next_frag  = 2;
        e->has_mmsi   = has_mmsi;
        e->type       = m->type;
        e->mmsi       = m->mmsi;
        e->last_used  = dec->clock;
}

/**
 * @brief Keys fragment 2..n @p m from its fragment 1 in the table.
 * @returns KS_AIS_KEYED, KS_AIS_UNKEYED (fragment 1 had no MMSI) or
 *          KS_AIS_ORPHAN (no fragment 1, or a fragment missing between).
 */
static ks_ais_result_t ks_ais_continue(ks_ais_decoder_t *dec, ks_ais_msg_t *m)
{
        int i;

        for (i = 0; i < KS_AIS_PENDING_MAX; i++) {
                ks_ais_pending_t *e = &dec->pending[i];
                if (!ks_ais_pending_matches(e, m) ||
                    e->next_frag != m->frag_num)
                        continue;
                m->type      = e->type;
                m->mmsi      = e->mmsi;
                e->last_used = dec->clock;
                if (++e->next_frag > e->frag_count)
                        e->used = 0;
                return e->has_mmsi ? KS_AIS_KEYED : KS_AIS_UNKEYED;
        }
        return KS_AIS_ORPHAN;
}

/** @returns the first `!ttVDM,` / `!ttVDO,` in the line, or NULL. */
static const char *ks_ais_find_sentence(const char *line, size_t len)
{
        const char *p = line, *end = line + len;

        while ((p = memchr(p, '!', (size_t)(end - p))) != NULL) {
                if (ks_ais_is_sentence_start(p, (size_t)(end - p)))
                        return p;
                p++;
        }
        return NULL;
}

/** @brief Counts @p res and returns it. */
static ks_ais_result_t ks_ais_count(ks_ais_decoder_t *dec, ks_ais_result_t res)
{
        ks_ais_stats_t *st = &dec->stats;

        switch (res) {
        case KS_AIS_NON_AIS:
                st->non_ais++;
                break;
        case KS_AIS_MALFORMED:
                st->malformed++;
                break;
        case KS_AIS_BAD_CHECKSUM:
                st->bad_checksum++;
                break;
        case KS_AIS_UNKEYED:
                st->unkeyed++;
                break;
        case KS_AIS_ORPHAN:
                st->orphan_fragments++;
                break;
        case KS_AIS_KEYED:
                st->keyed++;
                break;
        }
        return res;
}

ks_ais_result_t ks_ais_decode_line(ks_ais_decoder_t *dec, const char *line,
                                   size_t len, ks_ais_msg_t *out)
{
        const char *s, *end = line + len;
        unsigned    declared;
        int         has_mmsi;

        memset(out, 0, sizeof(*out));
        out->type = -1;
        dec->stats.lines++;
        if (!(s = ks_ais_find_sentence(line, len)))
                return ks_ais_count(dec, KS_AIS_NON_AIS);

        out->talker[0]    = s[1];
        out->talker[1]    = s[2];
        out->formatter    = s[5];
        out->sentence     = s;
        out->sentence_len = (size_t)(end - s);
        if (ks_ais_parse_fields(s + 7, end, out, &declared) == -1)
                return ks_ais_count(dec, KS_AIS_MALFORMED);

        dec->stats.sentences++;
        /* The checksum covers everything between '!' and '*'. */
        if (ks_ais_checksum(s + 1, out->sentence_len - 4) != declared)
                return ks_ais_count(dec, KS_AIS_BAD_CHECKSUM);

        dec->clock++;
        if (out->frag_num > 1)
                return ks_ais_count(dec, ks_ais_continue(dec, out));

        dec->stats.messages++;
        has_mmsi =
            ks_ais_payload_mmsi(out->payload, out->payload_len, out->fill_bits,
                                &out->type, &out->mmsi) == 0;
        if (out->frag_count > 1)
                ks_ais_pending_put(dec, out, has_mmsi);
        return ks_ais_count(dec, has_mmsi ? KS_AIS_KEYED : KS_AIS_UNKEYED);
}
