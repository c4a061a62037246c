/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_ais.c
 * @brief The AIS decoder, reader and synthetic feed (replay/ais_*.c).
 *
 * Oracles, independent of the code under test:
 *  - single sentences: MMSIs decoded by hand from the 6-bit payload and
 *    confirmed with pyais 3.3.1 (`pyais.decode(...).mmsi`);
 *  - the AIS logs: the measured facts of tests/data/ais/README.md, with
 *    the README's counting method (documented in replay/ais_nmea.h):
 *    fragment-1 sentences of types 1, 2, 3, 5, 18, 19, 24, checksum not
 *    checked;
 *  - the synthetic feed: the MMSI the generator says it sent, and the
 *    skew it promises in replay/ais_synth.h.
 */
#include "ks_test.h"

#include "ais_nmea.h"
#include "ais_reader.h"
#include "ais_synth.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

/** @returns the decoder's result for NUL-terminated @p line. */
static ks_ais_result_t decode(ks_ais_decoder_t *d, const char *line,
                              ks_ais_msg_t *m)
{
        return ks_ais_decode_line(d, line, strlen(line), m);
}

/** @returns @p body (a sentence from '!' up to its '*') with "*hh"
 *           appended, in a static buffer valid until the next call. */
static const char *with_checksum(const char *body)
{
        static char buf[256];
        snprintf(buf, sizeof(buf), "%s*%02X", body,
                 ks_ais_checksum(body + 1, strlen(body) - 1));
        return buf;
}

static void test_known_sentences(void)
{
        static const struct {
                const char *line;
                int         type;
                uint32_t    mmsi;
        } v[] = {
            /* risky_ais.txt.gz line 1; talker AB */
            {"!ABVDM,1,1,6,B,1G7lQJ001PbomTie:ms2sR@40000,0*34", 1, 477962600},
            {"!AIVDM,1,1,,A,17P@<J?P00blFWmjG@5a5?v62<10,0*27", 1, 503581800},
            /* own-ship class B report with MMSI 0 (risky line 8) */
            {"!AIVDO,1,1,,,B000000002EgKjv=lCL03wQ5wP06,0*0F", 18, 0},
            /* base station, talker AS, VDO */
            {"!ASVDO,1,1,4,A,4@4k0W1uhMcfsbf=MQkvWTW00000,0*0D", 4, 5030044},
            /* the odd talker "=I" */
            {"!=IVDM,1,1,,A,18JSmJ001D8FqSClKd51JAD20D0W,0*2E", 1, 564721000},
        };
        ks_ais_decoder_t *d = ks_ais_decoder_new();
        ks_ais_msg_t      m;
        size_t            i;

        for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
                CU_ASSERT_EQUAL(decode(d, v[i].line, &m), KS_AIS_KEYED);
                CU_ASSERT_EQUAL(m.type, v[i].type);
                CU_ASSERT_EQUAL(m.mmsi, v[i].mmsi);
                CU_ASSERT_EQUAL(m.sentence_len, strlen(v[i].line));
        }
        /* By hand: "17P@<J?" = 000001 000111 100000 010000 001100 011010
         * 001111; bits 8..37 = 0111 100000 010000 001100 011010 00
         * = 503581800. */
        CU_ASSERT_EQUAL(decode(d, v[1].line, &m), KS_AIS_KEYED);
        CU_ASSERT_STRING_EQUAL(m.talker, "AI");
        CU_ASSERT_STRING_EQUAL(m.channel, "A");
        CU_ASSERT_EQUAL(m.formatter, 'M');
        CU_ASSERT_EQUAL(m.seq_id, -1);
        CU_ASSERT_EQUAL(decode(d, v[3].line, &m), KS_AIS_KEYED);
        CU_ASSERT_EQUAL(m.formatter, 'O');
        CU_ASSERT_EQUAL(m.seq_id, 4);
        CU_ASSERT_EQUAL(decode(d, v[4].line, &m), KS_AIS_KEYED);
        CU_ASSERT_STRING_EQUAL(m.talker, "=I");
        ks_ais_decoder_destroy(d);
}

static void test_armour(void)
{
        unsigned v;

        for (v = 0; v < 64; v++)
                CU_ASSERT_EQUAL(ks_ais_sixbit(ks_ais_armour(v)), (int)v);
        CU_ASSERT_EQUAL(ks_ais_armour(0), '0');
        CU_ASSERT_EQUAL(ks_ais_armour(39), 'W');
        CU_ASSERT_EQUAL(ks_ais_armour(40), '`');
        CU_ASSERT_EQUAL(ks_ais_armour(63), 'w');
        CU_ASSERT_EQUAL(ks_ais_sixbit('X'), -1);
        CU_ASSERT_EQUAL(ks_ais_sixbit('_'), -1);
        CU_ASSERT_EQUAL(ks_ais_sixbit('x'), -1);
        CU_ASSERT_EQUAL(ks_ais_sixbit(','), -1);
}

static void test_checksum(void)
{
        const char *good    = "!AIVDM,1,1,,A,17P@<J?P00blFWmjG@5a5?v62<10,0*27";
        ks_ais_decoder_t *d = ks_ais_decoder_new();
        ks_ais_msg_t      m;

        CU_ASSERT_EQUAL(ks_ais_checksum(good + 1, strlen(good) - 4), 0x27);
        /* one payload character changed: '7' -> '8' */
        CU_ASSERT_EQUAL(
            decode(d, "!AIVDM,1,1,,A,18P@<J?P00blFWmjG@5a5?v62<10,0*27", &m),
            KS_AIS_BAD_CHECKSUM);
        CU_ASSERT_EQUAL(
            decode(d, "!AIVDM,1,1,,A,17P@<J?P00blFWmjG@5a5?v62<10,0*72", &m),
            KS_AIS_BAD_CHECKSUM);
        /* the two bad ones of risky_ais.txt.gz */
        CU_ASSERT_EQUAL(decode(d, "!=IVDM,1,1,,B,37P8OL2<01Ch,0*32", &m),
                        KS_AIS_BAD_CHECKSUM);
        CU_ASSERT_EQUAL(
            decode(d, "!=IVDM,1,1,,B,H7P9kl4j1=cm58FL6il<w`G00`3F,0*1D", &m),
            KS_AIS_BAD_CHECKSUM);
        /* lower-case hex digits are accepted */
        CU_ASSERT_EQUAL(
            decode(d, "!AIVDO,1,1,,,B000000002EgKjv=lCL03wQ5wP06,0*0f", &m),
            KS_AIS_KEYED);
        CU_ASSERT_EQUAL(ks_ais_decoder_stats(d)->bad_checksum, 4);
        CU_ASSERT_EQUAL(ks_ais_decoder_stats(d)->sentences, 5);
        CU_ASSERT_EQUAL(ks_ais_decoder_stats(d)->keyed, 1);
        ks_ais_decoder_destroy(d);
}

static void test_prefixes_and_non_ais(void)
{
        static const char *keyed[] = {
            "\\s:2573345,c:1328182324*5B\\!AIVDM,1,1,,A,17P@<J?P00blFWmjG@5a5?"
            "v62<10,0*27",
            "1550303566167726840 !AIVDM,1,1,,A,17P@<J?P00blFWmjG@5a5?v62<10,0*"
            "27",
            "!AIVDM,1,1,,A,17P@<J?P00blFWmjG@5a5?v62<10,0*27,1328182324603",
            "!AIVDM,1,1,,A,17P@<J?P00blFWmjG@5a5?v62<10,0*27\r\n",
            "junk ! !! !AI !AIVDX, "
            "!AIVDM,1,1,,A,17P@<J?P00blFWmjG@5a5?v62<10,0*"
            "27 junk",
        };
        static const char *non_ais[] = {
            "$PGHP,1,2012,2,2,10,58,6,0,316,56,316999999,1AIS_S,18*75",
            "$GPRMC,213950.00,A,5250.53669,N,00542.34920,E,0.020,,070420,,,A*"
            "7D",
            "# Note: NMEA 0183 and AIS data",
            "",
            "$AIVDM,1,1,,A,17P@<J?P00blFWmjG@5a5?v62<10,0*27",
            "!AIALR,1,1,,A,17P@<J?P00blFWmjG@5a5?v62<10,0*27",
        };
        const char *plain   = "!AIVDM,1,1,,A,17P@<J?P00blFWmjG@5a5?v62<10,0*27";
        ks_ais_decoder_t *d = ks_ais_decoder_new();
        ks_ais_msg_t      m;
        size_t            i;

        for (i = 0; i < sizeof(keyed) / sizeof(keyed[0]); i++) {
                CU_ASSERT_EQUAL(decode(d, keyed[i], &m), KS_AIS_KEYED);
                CU_ASSERT_EQUAL(m.mmsi, 503581800);
                CU_ASSERT_EQUAL(m.sentence_len, strlen(plain));
                CU_ASSERT_EQUAL(m.sentence[0], '!');
        }
        for (i = 0; i < sizeof(non_ais) / sizeof(non_ais[0]); i++)
                CU_ASSERT_EQUAL(decode(d, non_ais[i], &m), KS_AIS_NON_AIS);
        /* the talker "--" of aislib_stream_example.txt is accepted */
        CU_ASSERT_EQUAL(decode(d,
                               "!--VDM,1,1,,A,802R5Ph0BkAgoPNCkQn0Q@sMKg"
                               "wwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwt,2*57",
                               &m),
                        KS_AIS_KEYED);
        CU_ASSERT_EQUAL(m.type, 8);
        CU_ASSERT_EQUAL(m.mmsi, 2655619);
        ks_ais_decoder_destroy(d);
}

static void test_malformed_and_unkeyed(void)
{
        static const char *malformed[] = {
            "!BSVDM,1,1,,A", /* truncated lines of risky_ais.txt.gz */
            "!ABVDO,2,2,7,",
            "!=IVDM,1,1,,B,18JSmJ001I8FrFslKlEAL1EV0@NK,0",
            /* two sentences run together */
            "!ABVDM,1,1,6,A,17P=e23000bngMBVDM,1,1,7,A,14W:<b0u@LboM1ue6QlMp0b:"
            "85KD,0*58",
            "!AIVDM,1,2,,A,17P@<J?P00blFWmjG@5a5?v62<10,0*27", /* num > cnt */
            "!AIVDM,1,1,,A,17P@<J?P00blFWmjG@5a5?v62<10,7*27", /* fill 7 */
            "!AIVDM,1,1,,A,17P@<J?P00blFWmjG@5a5?v62<1x,0*27", /* 'x' */
            "!AIVDM,1,1,12,A,17P@<J?P00blFWmjG@5a5?v62<10,0*27",
            "!AIVDM,1,1,,ABC,17P@<J?P00blFWmjG@5a5?v62<10,0*27",
            "!AIVDM,1,1,,A,17P@<J?P00blFWmjG@5a5?v62<10,0*2",
        };
        ks_ais_decoder_t     *d = ks_ais_decoder_new();
        const ks_ais_stats_t *st;
        ks_ais_msg_t          m;
        size_t                i;

        for (i = 0; i < sizeof(malformed) / sizeof(malformed[0]); i++)
                CU_ASSERT_EQUAL(decode(d, malformed[i], &m), KS_AIS_MALFORMED);
        /* empty payloads (pyais_nmea_data_sample.txt) and a 36-bit one */
        CU_ASSERT_EQUAL(decode(d, "!AIVDM,1,1,,B,,0*25", &m), KS_AIS_UNKEYED);
        CU_ASSERT_EQUAL(decode(d, with_checksum("!AIVDM,1,1,,B,17P@<J,0"), &m),
                        KS_AIS_UNKEYED);
        st = ks_ais_decoder_stats(d);
        CU_ASSERT_EQUAL(st->malformed,
                        sizeof(malformed) / sizeof(malformed[0]));
        CU_ASSERT_EQUAL(st->unkeyed, 2);
        CU_ASSERT_EQUAL(st->sentences, 2);
        CU_ASSERT_EQUAL(st->messages, 2);
        CU_ASSERT_EQUAL(st->lines, st->non_ais + st->malformed + st->sentences);
        ks_ais_decoder_destroy(d);
}

static void test_multi_fragment(void)
{
        /* gpsd_ais-nmea.log: a type 5 of SEA ENTERPRISE, MMSI 371255000 */
        const char *f1 = "!AIVDM,2,1,9,B,55R3Vn82=ILTQ3KKS>1<D60Dq@E918U<F22222"
                         "1J1`?164vc03S1CCAD,0*2A";
        const char *f2 = "!AIVDM,2,2,9,B,`88888888888880,2*76";
        ks_ais_decoder_t     *d = ks_ais_decoder_new();
        const ks_ais_stats_t *st;
        ks_ais_msg_t          m;

        CU_ASSERT_EQUAL(decode(d, f1, &m), KS_AIS_KEYED);
        CU_ASSERT_EQUAL(m.type, 5);
        CU_ASSERT_EQUAL(m.mmsi, 371255000);
        CU_ASSERT_EQUAL(decode(d, f2, &m), KS_AIS_KEYED);
        CU_ASSERT_EQUAL(m.mmsi, 371255000);
        CU_ASSERT_EQUAL(m.type, 5);
        CU_ASSERT_EQUAL(m.frag_num, 2);
        /* the message is complete: a repeated fragment 2 is an orphan */
        CU_ASSERT_EQUAL(decode(d, f2, &m), KS_AIS_ORPHAN);
        /* fragment 1, then the wrong channel, talker or sequence id */
        CU_ASSERT_EQUAL(decode(d, f1, &m), KS_AIS_KEYED);
        CU_ASSERT_EQUAL(
            decode(d, with_checksum("!AIVDM,2,2,9,A,`88888888888880,2"), &m),
            KS_AIS_ORPHAN);
        CU_ASSERT_EQUAL(
            decode(d, with_checksum("!BSVDM,2,2,9,B,`88888888888880,2"), &m),
            KS_AIS_ORPHAN);
        CU_ASSERT_EQUAL(
            decode(d, with_checksum("!AIVDM,2,2,8,B,`88888888888880,2"), &m),
            KS_AIS_ORPHAN);
        /* ... interleaved with another message, still keyed */
        CU_ASSERT_EQUAL(
            decode(d, "!AIVDM,1,1,,A,17P@<J?P00blFWmjG@5a5?v62<10,0*27", &m),
            KS_AIS_KEYED);
        CU_ASSERT_EQUAL(decode(d, f2, &m), KS_AIS_KEYED);
        CU_ASSERT_EQUAL(m.mmsi, 371255000);
        /* a 3-fragment message missing fragment 2 */
        CU_ASSERT_EQUAL(
            decode(d, with_checksum("!AIVDM,3,1,1,A,55R3Vn82=ILT,0"), &m),
            KS_AIS_KEYED);
        CU_ASSERT_EQUAL(decode(d, with_checksum("!AIVDM,3,3,1,A,88,0"), &m),
                        KS_AIS_ORPHAN);
        st = ks_ais_decoder_stats(d);
        CU_ASSERT_EQUAL(st->orphan_fragments, 5);
        CU_ASSERT_EQUAL(st->keyed, 6);
        CU_ASSERT_EQUAL(st->messages, 4);
        CU_ASSERT_EQUAL(st->sentences, st->bad_checksum + st->keyed +
                                           st->unkeyed + st->orphan_fragments);
        ks_ais_decoder_destroy(d);
}

static void test_fragment_table_bounded(void)
{
        ks_ais_decoder_t *d = ks_ais_decoder_new();
        ks_ais_msg_t      m;
        char              body[64];
        int               i, c, n = KS_AIS_PENDING_MAX + 10;

        /* n unfinished type 5 messages (MMSI i) from n receivers (talkers
         * "AA", "AB", ...): only the KS_AIS_PENDING_MAX most recent are
         * remembered, the 10 oldest fragments 2 become orphans. */
        for (i = 0; i < n; i++) {
                uint64_t bits = (uint64_t)5 << 36 | (uint64_t)i << 4;
                int      len = snprintf(body, sizeof(body), "!%c%cVDM,2,1,0,A,",
                                        'A' + i / 26, 'A' + i % 26);
                for (c = 0; c < 7; c++)
                        body[len++] = ks_ais_armour(
                            (unsigned)(bits >> (36 - 6 * c)) & 63);
                snprintf(body + len, sizeof(body) - (size_t)len, ",0");
                CU_ASSERT_EQUAL(decode(d, with_checksum(body), &m),
                                KS_AIS_KEYED);
                CU_ASSERT_EQUAL(m.type, 5);
                CU_ASSERT_EQUAL(m.mmsi, (uint32_t)i);
        }
        for (i = 0; i < n; i++) {
                snprintf(body, sizeof(body), "!%c%cVDM,2,2,0,A,88,2",
                         'A' + i / 26, 'A' + i % 26);
                CU_ASSERT_EQUAL(decode(d, with_checksum(body), &m),
                                i < 10 ? KS_AIS_ORPHAN : KS_AIS_KEYED);
                if (i >= 10)
                        CU_ASSERT_EQUAL(m.mmsi, (uint32_t)i);
        }
        CU_ASSERT_EQUAL(ks_ais_decoder_stats(d)->orphan_fragments, 10);
        ks_ais_decoder_destroy(d);
}

/* ------------------------------------------------------------------ */
/* The shared files against their README                              */

/** Per-MMSI counts of a list of keys. */
typedef struct mmsi_summary {
        size_t   n;        /**< keys */
        size_t   distinct; /**< distinct MMSIs */
        size_t   busiest;  /**< keys of the busiest MMSI */
        uint32_t busiest_mmsi;
        size_t   zero;   /**< keys that are MMSI 0 */
        double   median; /**< median keys per MMSI */
} mmsi_summary_t;

/** What one pass of the decoder over a file saw. */
typedef struct file_scan {
        ks_ais_stats_t st;
        uint64_t       dash_talker; /**< sentences from talker "--" */
        uint64_t       eq_i_vdm;    /**< lines with a "!=IVDM", any state */
        mmsi_summary_t readme;      /**< the README's counting method */
        mmsi_summary_t keys;        /**< every key the decoder gave */
} file_scan_t;

static int cmp_u32(const void *a, const void *b)
{
        uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
        return x < y ? -1 : x > y;
}

static int cmp_size(const void *a, const void *b)
{
        size_t x = *(const size_t *)a, y = *(const size_t *)b;
        return x < y ? -1 : x > y;
}

/** @brief Summarises @p n keys (sorting @p keys in place). */
static void summarize(uint32_t *keys, size_t n, mmsi_summary_t *out)
{
        size_t *runs = malloc((n + 1) * sizeof(*runs));
        size_t  i, j;

        memset(out, 0, sizeof(*out));
        out->n = n;
        qsort(keys, n, sizeof(*keys), cmp_u32);
        for (i = 0; i < n; i = j) {
                for (j = i; j < n && keys[j] == keys[i]; j++)
                        ;
                runs[out->distinct++] = j - i;
                if (j - i > out->busiest) {
                        out->busiest      = j - i;
                        out->busiest_mmsi = keys[i];
                }
                if (keys[i] == 0)
                        out->zero = j - i;
        }
        qsort(runs, out->distinct, sizeof(*runs), cmp_size);
        if (out->distinct)
                out->median = out->distinct % 2
                                  ? (double)runs[out->distinct / 2]
                                  : (runs[out->distinct / 2 - 1] +
                                     runs[out->distinct / 2]) /
                                        2.0;
        free(runs);
}

/** @brief Decodes shared file @p rel into @p out. @returns 0, -1 if the
 *         file could not be read. */
static int scan_file(const char *rel, file_scan_t *out)
{
        char             err[512];
        ks_ais_reader_t *r =
            ks_ais_reader_open(ks_test_shared_path(rel), err, sizeof(err));
        ks_ais_decoder_t *d      = ks_ais_decoder_new();
        uint32_t         *readme = malloc(sizeof(uint32_t) << 17);
        uint32_t         *keys   = malloc(sizeof(uint32_t) << 17);
        size_t            nr = 0, nk = 0;
        const char       *line;
        size_t            len;
        int               rc = -1;

        memset(out, 0, sizeof(*out));
        if (!r) {
                fprintf(stderr, "\n%s\n", err);
                goto done;
        }
        while ((rc = ks_ais_reader_next(r, &line, &len)) == 1 &&
               nk < (1u << 17)) {
                ks_ais_msg_t    m;
                ks_ais_result_t res = ks_ais_decode_line(d, line, len, &m);
                int             type;
                uint32_t        mmsi;

                if (res == KS_AIS_NON_AIS)
                        continue;
                out->dash_talker += !strcmp(m.talker, "--");
                out->eq_i_vdm += !strcmp(m.talker, "=I") && m.formatter == 'M';
                if (res == KS_AIS_KEYED)
                        keys[nk++] = m.mmsi;
                /* README: fragment 1, vessel types, checksum unchecked */
                if (res >= KS_AIS_BAD_CHECKSUM && m.frag_num == 1 &&
                    ks_ais_payload_mmsi(m.payload, m.payload_len, m.fill_bits,
                                        &type, &mmsi) == 0 &&
                    ks_ais_is_vessel_type(type))
                        readme[nr++] = mmsi;
        }
        if (rc == -1)
                fprintf(stderr, "\n%s: %s\n", rel, ks_ais_reader_error(r));
        out->st = *ks_ais_decoder_stats(d);
        summarize(readme, nr, &out->readme);
        summarize(keys, nk, &out->keys);
done:
        ks_ais_reader_close(r);
        ks_ais_decoder_destroy(d);
        free(readme);
        free(keys);
        return rc == 0 ? 0 : -1;
}

/** @brief The counters' identities (ais_nmea.h) hold for @p st. */
static void assert_invariants(const ks_ais_stats_t *st)
{
        CU_ASSERT_EQUAL(st->lines, st->non_ais + st->malformed + st->sentences);
        CU_ASSERT_EQUAL(st->sentences, st->bad_checksum + st->keyed +
                                           st->unkeyed + st->orphan_fragments);
}

static void test_file_risky(void)
{
        file_scan_t f;

        CU_ASSERT_FATAL(scan_file("ais/risky_ais.txt.gz", &f) == 0);
        assert_invariants(&f.st);
        CU_ASSERT_EQUAL(f.st.lines, 44687);
        CU_ASSERT_EQUAL(f.st.sentences, 34015);
        CU_ASSERT_EQUAL(f.st.bad_checksum, 2);
        CU_ASSERT_EQUAL(f.eq_i_vdm, 1355);
        CU_ASSERT_EQUAL(f.st.non_ais, 10658); /* README: ~10.7k */
        /* README: 27,941 carry an MMSI over 2,184 distinct MMSIs; busiest
         * 427, median 1; MMSI 0 378 times. */
        CU_ASSERT_EQUAL(f.readme.n, 27941);
        CU_ASSERT_EQUAL(f.readme.distinct, 2184);
        CU_ASSERT_EQUAL(f.readme.busiest, 427);
        CU_ASSERT_EQUAL(f.readme.busiest_mmsi, 503642000);
        CU_ASSERT_EQUAL(f.readme.median, 1.0);
        CU_ASSERT_EQUAL(f.readme.zero, 378);
        /* the decoder's own keys (ais_nmea.h explains the differences) */
        CU_ASSERT_EQUAL(f.st.malformed, 14);
        CU_ASSERT_EQUAL(f.st.messages, 34013);
        CU_ASSERT_EQUAL(f.st.keyed, 34013);
        CU_ASSERT_EQUAL(f.st.orphan_fragments, 0);
        CU_ASSERT_EQUAL(f.keys.distinct, 2324);
        CU_ASSERT_EQUAL(f.keys.busiest, 455);
        CU_ASSERT_EQUAL(f.keys.busiest_mmsi, 5030045);
        CU_ASSERT_EQUAL(f.keys.zero, 378);
}

static void test_file_exact_earth(void)
{
        file_scan_t f;

        CU_ASSERT_FATAL(
            scan_file("ais/risky_exact-earth-augmented-3.txt", &f) == 0);
        assert_invariants(&f.st);
        /* README: 4,313 messages, 4,032 keyed, 384 MMSIs, busiest/median
         * 28 */
        CU_ASSERT_EQUAL(f.st.messages, 4313);
        CU_ASSERT_EQUAL(f.readme.n, 4032);
        CU_ASSERT_EQUAL(f.readme.distinct, 384);
        CU_ASSERT_EQUAL((int)(f.readme.busiest / f.readme.median), 28);
        CU_ASSERT_EQUAL(f.st.non_ais, 3355); /* the $PGHP lines */
        CU_ASSERT_EQUAL(f.st.orphan_fragments, 4);
        CU_ASSERT_EQUAL(f.st.bad_checksum, 0);
}

static void test_file_aislib(void)
{
        file_scan_t f;

        CU_ASSERT_FATAL(scan_file("ais/aislib_stream_example.txt", &f) == 0);
        assert_invariants(&f.st);
        /* README: 4,482 sentences -> 4,033 messages, 1,726 MMSIs; it left
         * out the 18 single-sentence "!--VDM" this decoder accepts. */
        CU_ASSERT_EQUAL(f.dash_talker, 18);
        CU_ASSERT_EQUAL(f.st.sentences - f.dash_talker, 4482);
        CU_ASSERT_EQUAL(f.st.messages - f.dash_talker, 4033);
        CU_ASSERT_EQUAL(f.readme.distinct, 1726);
        /* every fragment 2..n found its fragment 1 */
        CU_ASSERT_EQUAL(f.st.orphan_fragments, 0);
        CU_ASSERT_EQUAL(f.st.keyed, f.st.sentences);
}

static void test_file_small(void)
{
        static const struct {
                const char *rel;
                size_t      mmsis; /* README */
                uint64_t    lines, non_ais, orphans;
        } v[] = {
            {"ais/goais_aistest.nmea", 657, 998, 0, 3},
            {"ais/gpsd_ais-nmea.log", 33, 1500, 1317, 0},
            {"ais/pyais_nmea_data_sample.txt", 169, 898, 0, 0},
        };
        size_t i;

        for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
                file_scan_t f;
                CU_ASSERT_FATAL(scan_file(v[i].rel, &f) == 0);
                assert_invariants(&f.st);
                CU_ASSERT_EQUAL(f.readme.distinct, v[i].mmsis);
                CU_ASSERT_EQUAL(f.st.lines, v[i].lines);
                CU_ASSERT_EQUAL(f.st.non_ais, v[i].non_ais);
                CU_ASSERT_EQUAL(f.st.orphan_fragments, v[i].orphans);
                CU_ASSERT_EQUAL(f.st.bad_checksum, 0);
        }
}

/* ------------------------------------------------------------------ */
/* The reader                                                         */

/** @brief Writes @p len bytes to a new temporary file, gzip-compressed
 *         if @p gz, and puts its path in @p path (256 bytes). */
static void write_temp(char *path, const char *data, size_t len, int gz)
{
        int fd;

        snprintf(path, 256, "/tmp/ks_test_ais_XXXXXX");
        fd = mkstemp(path);
        CU_ASSERT_FATAL(fd >= 0);
        if (gz) {
                gzFile g = gzdopen(fd, "wb");
                CU_ASSERT_FATAL(g != NULL);
                CU_ASSERT_EQUAL(gzwrite(g, data, (unsigned)len), (int)len);
                CU_ASSERT_EQUAL(gzclose(g), Z_OK);
        } else {
                CU_ASSERT_EQUAL(write(fd, data, len), (ssize_t)len);
                close(fd);
        }
}

static void test_reader(void)
{
        size_t long_len = 300000, total = long_len + 64;
        char  *data = malloc(total), path[256], err[256];
        int    gz;

        /* "a\n" <long line>"\r\n" "b\0c\n" "\n" "last" (no newline) */
        size_t n = 0;
        memcpy(data, "a\n", 2);
        n = 2;
        memset(data + n, 'x', long_len);
        n += long_len;
        memcpy(data + n, "\r\nb\0c\n\nlast", 11);
        n += 11;
        for (gz = 0; gz <= 1; gz++) {
                ks_ais_reader_t *r;
                const char      *line;
                size_t           len;

                write_temp(path, data, n, gz);
                r = ks_ais_reader_open(path, err, sizeof(err));
                CU_ASSERT_FATAL(r != NULL);
                CU_ASSERT_EQUAL(ks_ais_reader_next(r, &line, &len), 1);
                CU_ASSERT(len == 1 && !strcmp(line, "a"));
                CU_ASSERT_EQUAL(ks_ais_reader_next(r, &line, &len), 1);
                CU_ASSERT_EQUAL(len, long_len);
                CU_ASSERT(len == long_len && line[0] == 'x' &&
                          line[long_len - 1] == 'x' && line[long_len] == 0);
                CU_ASSERT_EQUAL(ks_ais_reader_next(r, &line, &len), 1);
                CU_ASSERT(len == 3 && !memcmp(line, "b\0c", 3));
                CU_ASSERT_EQUAL(ks_ais_reader_next(r, &line, &len), 1);
                CU_ASSERT_EQUAL(len, 0);
                CU_ASSERT_EQUAL(ks_ais_reader_next(r, &line, &len), 1);
                CU_ASSERT(len == 4 && !strcmp(line, "last"));
                CU_ASSERT_EQUAL(ks_ais_reader_next(r, &line, &len), 0);
                CU_ASSERT_EQUAL(ks_ais_reader_line_no(r), 5);
                ks_ais_reader_close(r);
                unlink(path);
        }
        /* a gzip stream cut short is an error, not a clean end */
        write_temp(path, data, n, 1);
        CU_ASSERT_EQUAL(truncate(path, 200), 0);
        {
                ks_ais_reader_t *r = ks_ais_reader_open(path, err, sizeof(err));
                const char      *line;
                size_t           len;
                int              rc;
                CU_ASSERT_FATAL(r != NULL);
                while ((rc = ks_ais_reader_next(r, &line, &len)) == 1)
                        ;
                CU_ASSERT_EQUAL(rc, -1);
                CU_ASSERT(*ks_ais_reader_error(r) != '\0');
                ks_ais_reader_close(r);
        }
        unlink(path);
        CU_ASSERT_PTR_NULL(
            ks_ais_reader_open("/nonexistent/ais.txt", err, sizeof(err)));
        CU_ASSERT(strstr(err, "/nonexistent/ais.txt") != NULL);
        free(data);
}

/* ------------------------------------------------------------------ */
/* The synthetic feed                                                 */

#define SYNTH_N 200000

static void test_synth_round_trip(void)
{
        ks_ais_synth_t       *s = ks_ais_synth_new(NULL);
        ks_ais_decoder_t     *d = ks_ais_decoder_new();
        const ks_ais_stats_t *st;
        char                  line[KS_AIS_SYNTH_LINE_MAX];
        size_t                i, wrong = 0;
        uint64_t              type5 = 0;

        CU_ASSERT_FATAL(s != NULL);
        for (i = 0; i < SYNTH_N; i++) {
                uint32_t     sent;
                ks_ais_msg_t m;
                size_t len = ks_ais_synth_next(s, line, sizeof(line), &sent);
                ks_ais_result_t res = ks_ais_decode_line(d, line, len, &m);
                wrong += res != KS_AIS_KEYED || m.mmsi != sent ||
                         len != strlen(line) || m.sentence_len != len ||
                         (m.type != 1 && m.type != 5);
                type5 += m.type == 5 && m.frag_num == 1;
        }
        st = ks_ais_decoder_stats(d);
        CU_ASSERT_EQUAL(wrong, 0);
        CU_ASSERT_EQUAL(st->keyed, SYNTH_N);
        CU_ASSERT_EQUAL(st->bad_checksum + st->malformed + st->orphan_fragments,
                        0);
        /* type 5 in 2 fragments, ~2% of messages */
        CU_ASSERT_EQUAL(st->sentences - st->messages, type5);
        CU_ASSERT(type5 > 0.015 * st->messages && type5 < 0.025 * st->messages);
        CU_ASSERT_EQUAL(ks_ais_synth_next(s, line, 10, NULL), 0);
        ks_ais_synth_destroy(s);
        ks_ais_decoder_destroy(d);
}

static void test_synth_deterministic(void)
{
        ks_ais_synth_config_t c;
        ks_ais_synth_t       *a, *b, *other;
        char                  la[KS_AIS_SYNTH_LINE_MAX], lb[sizeof(la)];
        int                   i, same = 1, same_other = 1;

        ks_ais_synth_config_defaults(&c);
        c.seed = 42;
        a      = ks_ais_synth_new(&c);
        b      = ks_ais_synth_new(&c);
        c.seed = 43;
        other  = ks_ais_synth_new(&c);
        for (i = 0; i < 10000; i++) {
                ks_ais_synth_next(a, la, sizeof(la), NULL);
                ks_ais_synth_next(b, lb, sizeof(lb), NULL);
                same &= !strcmp(la, lb);
                ks_ais_synth_next(other, lb, sizeof(lb), NULL);
                same_other &= !strcmp(la, lb);
        }
        CU_ASSERT(same);
        CU_ASSERT(!same_other);
        ks_ais_synth_destroy(a);
        ks_ais_synth_destroy(b);
        ks_ais_synth_destroy(other);
}

static void test_synth_skew(void)
{
        ks_ais_synth_t *s    = ks_ais_synth_new(NULL);
        uint32_t       *keys = malloc(SYNTH_N * sizeof(*keys));
        uint32_t        hot[5];
        size_t          hot_cnt[5] = {0}, i, j, n = 0;
        mmsi_summary_t  sum;
        char            line[KS_AIS_SYNTH_LINE_MAX];

        /* defaults: 3000 vessels, 5 at 100 x the median, 1% MMSI 0 */
        for (i = 0; i < 5; i++)
                hot[i] = ks_ais_synth_vessel_mmsi(s, (uint32_t)i);
        for (i = 0; i < SYNTH_N; i++) {
                uint32_t mmsi;
                ks_ais_synth_next(s, line, sizeof(line), &mmsi);
                if (line[9] != '1')
                        continue; /* count messages, not fragments 2 */
                keys[n++] = mmsi;
                for (j = 0; j < 5; j++)
                        hot_cnt[j] += mmsi == hot[j];
        }
        summarize(keys, n, &sum);
        CU_ASSERT_EQUAL(sum.distinct, 3000 + 1); /* every vessel, MMSI 0 */
        CU_ASSERT(sum.zero > 0.008 * n && sum.zero < 0.012 * n);
        /* 196,000 messages: the median vessel sends ~42 */
        CU_ASSERT(sum.median > 30 && sum.median < 55);
        for (j = 0; j < 5; j++) {
                double ratio = hot_cnt[j] / sum.median;
                CU_ASSERT(hot[j] >= 100000000 && hot[j] <= 999999999);
                CU_ASSERT(ratio > 75 && ratio < 130);
        }
        CU_ASSERT(sum.busiest / sum.median > 75);
        CU_ASSERT_EQUAL(ks_ais_synth_vessel_mmsi(s, 3000), 0);
        ks_ais_synth_destroy(s);
        free(keys);
}

static void test_synth_config(void)
{
        ks_ais_synth_config_t c;

        ks_ais_synth_config_defaults(&c);
        c.vessels = 1;
        CU_ASSERT_PTR_NULL(ks_ais_synth_new(&c));
        ks_ais_synth_config_defaults(&c);
        c.hot_vessels = c.vessels;
        CU_ASSERT_PTR_NULL(ks_ais_synth_new(&c));
        ks_ais_synth_config_defaults(&c);
        c.mmsi_zero_share = 1.5;
        CU_ASSERT_PTR_NULL(ks_ais_synth_new(&c));
        ks_ais_synth_config_defaults(&c);
        c.hot_factor = 0;
        CU_ASSERT_PTR_NULL(ks_ais_synth_new(&c));
}

void ks_test_register(void)
{
        KS_ADD_SUITE(
            "ais_nmea", {"known sentences", test_known_sentences},
            {"6-bit armouring", test_armour}, {"checksum", test_checksum},
            {"prefixes, tag blocks, non-AIS", test_prefixes_and_non_ais},
            {"malformed and unkeyed", test_malformed_and_unkeyed},
            {"multi-fragment", test_multi_fragment},
            {"fragment table bounded", test_fragment_table_bounded});
        KS_ADD_SUITE(
            "ais_files", {"risky_ais.txt.gz", test_file_risky},
            {"risky_exact-earth-augmented-3.txt", test_file_exact_earth},
            {"aislib_stream_example.txt", test_file_aislib},
            {"goais, gpsd, pyais", test_file_small});
        KS_ADD_SUITE("ais_reader", {"lines, long lines, gzip", test_reader});
        KS_ADD_SUITE("ais_synth", {"round trip", test_synth_round_trip},
                     {"deterministic", test_synth_deterministic},
                     {"skew", test_synth_skew},
                     {"configuration", test_synth_config});
}
