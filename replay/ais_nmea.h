/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ais_nmea.h
 * @brief AIS NMEA 0183 decoder: finds the `!xxVDM` / `!xxVDO` sentence in
 *        a log line, verifies it and keys it by the sender's MMSI.
 *
 * Sources: IEC 61162-1 (NMEA 0183) sentence framing and checksum; ITU-R
 * M.1371-5 Annex 8 (message layouts); Eric S. Raymond, "AIVDM/AIVDO protocol
 * decoding" (https://gpsd.gitlab.io/gpsd/AIVDM.html), which documents the
 * field order, the 6-bit armouring and the fragment fields used here.
 *
 * A sentence is
 *
 *     !ttVDM,<count>,<number>,<seq id>,<channel>,<payload>,<fill>*hh
 *
 * `tt` is any two-character talker (`AI`, `AB`, `BS`, `=I`, `--`, ...);
 * `VDM` reports other stations, `VDO` the receiver's own ship. The checksum
 * `hh` is the XOR of every character between `!` and `*`. The payload packs
 * 6 bits per character (armouring: value v is sent as v + 48, or v + 56 when
 * v >= 40); bits 0..5 are the message type and bits 8..37 the sender's MMSI
 * in every AIS message type. Whatever surrounds the sentence on its line (a
 * `\...\` tag block, an epoch prefix, a `,<epoch ms>` suffix) is ignored.
 *
 * Multi-fragment messages (count > 1) carry the MMSI only in fragment 1.
 * The decoder keeps fragment 1's MMSI in a small table (KS_AIS_PENDING_MAX
 * entries, least recently used evicted) keyed by talker, VDM/VDO, channel,
 * sequential message id and fragment count, and gives it to fragments
 * 2..count when they arrive in order. A later fragment with no matching
 * fragment 1 is an orphan: counted and not keyed.
 *
 * Counting (ks_ais_stats_t), per line, in this order:
 *  - non_ais: no `!ttVDM,` / `!ttVDO,` on the line (`$PGHP`, `$GPRMC`,
 *    `#` comments, blank lines ...);
 *  - malformed: one is there but the fields after it are not a complete
 *    sentence (truncated lines, two sentences run together, a payload
 *    character outside the armouring alphabet, no `*hh`);
 *  - sentences: everything else; of which bad_checksum fail `*hh`, and
 *    each valid one is exactly one of keyed, unkeyed (payload too short for
 *    an MMSI: fewer than 38 bits, e.g. empty) or orphan_fragments.
 *    messages counts the valid sentences with fragment number 1.
 *  So lines = non_ais + malformed + sentences and
 *  sentences = bad_checksum + keyed + unkeyed + orphan_fragments.
 *
 * How these relate to tests/data/ais/README.md (the AIS logs the tests
 * replay, from other projects: their provenance is there). The README's
 * figures were reproduced exactly (tests/unit/test_ais.c) by this method:
 * a sentence is a well-formed `!ttVDM`/`!ttVDO` (as above); "messages" are
 * fragment-1 sentences with a good checksum; "carry an MMSI" / "keyed" /
 * "MMSIs" / "busiest" / "MMSI 0" count fragment-1 sentences of message types
 * 1, 2, 3, 5, 18, 19 and 24 only (ks_ais_is_vessel_type()), with the
 * checksum NOT checked, and never fragments 2..n. This decoder differs:
 *  - it keys every message type (bits 8..37 are the sender's MMSI in all
 *    of them, base stations and aids to navigation included) and it keys
 *    fragments 2..n too, because a producer keyed by MMSI sends them all.
 *    On risky_ais.txt.gz it keys 34,013 sentences; the busiest key is base
 *    station 5030045 (455 type-4 reports), not vessel 503642000 (427);
 *  - it skips the 2 bad-checksum sentences of risky_ais.txt.gz, which the
 *    README counts among its 27,941 (27,939 + 2; distinct, busiest and MMSI
 *    0 counts are unchanged);
 *  - it accepts the talker `--`: aislib_stream_example.txt has 18 `!--VDM`
 *    type 8 sentences the README left out (4,500 sentences and 4,051
 *    messages here against the README's 4,482 and 4,033);
 *  - the README's "1,355 use `!=IVDM`" counts lines, malformed ones
 *    included.
 *
 * Thread safety: a decoder is used by one thread at a time; the helper
 * functions are pure.
 */
#ifndef KS_AIS_NMEA_H
#define KS_AIS_NMEA_H

#include <stddef.h>
#include <stdint.h>

/** Most multi-fragment messages awaiting their next fragment at once. */
#define KS_AIS_PENDING_MAX 64

/** The payload bits that must be present for the MMSI (bits 8..37). */
#define KS_AIS_MMSI_MIN_BITS 38

/** What ks_ais_decode_line() made of a line. */
typedef enum ks_ais_result {
        KS_AIS_NON_AIS = 0,  /**< no VDM/VDO sentence on the line */
        KS_AIS_MALFORMED,    /**< VDM/VDO found, but not a whole sentence */
        KS_AIS_BAD_CHECKSUM, /**< well-formed, `*hh` does not match */
        KS_AIS_UNKEYED,      /**< valid, but no MMSI (payload too short) */
        KS_AIS_ORPHAN,       /**< fragment 2..n without its fragment 1 */
        KS_AIS_KEYED,        /**< valid, msg->mmsi is the key */
} ks_ais_result_t;

/**
 * One decoded sentence. Pointers point into the caller's line and are
 * valid as long as it is. With KS_AIS_NON_AIS nothing is set; with
 * KS_AIS_MALFORMED only talker, formatter and sentence (to the end of the
 * line); otherwise every field but type and mmsi; those are set with
 * KS_AIS_KEYED (for fragments 2..n: fragment 1's).
 */
typedef struct ks_ais_msg {
        char        talker[3];    /**< "AI", "BS", "=I", ... */
        char        formatter;    /**< 'M' (VDM) or 'O' (VDO) */
        char        channel[3];   /**< "A", "B", "1", "2" or "" */
        int         frag_count;   /**< 1..9 */
        int         frag_num;     /**< 1..frag_count */
        int         seq_id;       /**< 0..9, -1 when the field is empty */
        int         fill_bits;    /**< 0..5 */
        const char *sentence;     /**< the '!' */
        size_t      sentence_len; /**< through the checksum's 2 digits */
        const char *payload;      /**< armoured payload characters */
        size_t      payload_len;
        int         type; /**< message type 0..63, -1 when unknown */
        uint32_t    mmsi; /**< the key, 0..2^30-1 (0 is a real value) */
} ks_ais_msg_t;

/** Counters since ks_ais_decoder_new(); see the file comment. */
typedef struct ks_ais_stats {
        uint64_t lines;
        uint64_t non_ais;
        uint64_t malformed;
        uint64_t sentences;
        uint64_t bad_checksum;
        uint64_t messages;
        uint64_t keyed;
        uint64_t unkeyed;
        uint64_t orphan_fragments;
} ks_ais_stats_t;

typedef struct ks_ais_decoder ks_ais_decoder_t;

/** @returns a new decoder (free with ks_ais_decoder_destroy()), NULL on
 *           ENOMEM. */
ks_ais_decoder_t *ks_ais_decoder_new(void);

/** @brief Frees @p dec (NULL is fine). */
void ks_ais_decoder_destroy(ks_ais_decoder_t *dec);

/**
 * @brief Decodes one log line (without or with its line terminator) and
 *        updates the counters and the fragment table.
 * @param line  @p len bytes, need not be NUL-terminated.
 * @param out   filled as described at ks_ais_msg_t.
 * @returns what the line is; only KS_AIS_KEYED lines have a key.
 */
ks_ais_result_t ks_ais_decode_line(ks_ais_decoder_t *dec, const char *line,
                                   size_t len, ks_ais_msg_t *out);

/** @returns the decoder's counters (owned by @p dec). */
const ks_ais_stats_t *ks_ais_decoder_stats(const ks_ais_decoder_t *dec);

/** @returns a short lower-case name for @p res ("keyed", "orphan", ...). */
const char *ks_ais_result_name(ks_ais_result_t res);

/** @returns the NMEA checksum of @p len bytes: their XOR. */
unsigned ks_ais_checksum(const char *s, size_t len);

/** @returns the 6-bit value of payload character @p c, -1 if @p c is not
 *           in the armouring alphabet ('0'..'W', '`'..'w'). */
int ks_ais_sixbit(char c);

/** @returns the payload character carrying 6-bit value @p v (0..63). */
char ks_ais_armour(unsigned v);

/**
 * @brief Reads the message type (bits 0..5) and MMSI (bits 8..37) of an
 *        armoured payload: a single-fragment payload or a fragment 1.
 * @param fill_bits  the sentence's fill-bit count (bits to ignore at the end).
 * @returns 0, or -1 when the payload has fewer than KS_AIS_MMSI_MIN_BITS
 *          bits or a character outside the alphabet (outputs untouched).
 */
int ks_ais_payload_mmsi(const char *payload, size_t len, int fill_bits,
                        int *type, uint32_t *mmsi);

/** @returns 1 for the message types the README's "carry an MMSI" counts
 *           (position reports and static data of ships: 1, 2, 3, 5, 18,
 *           19, 24), else 0. */
int ks_ais_is_vessel_type(int type);

#endif /* KS_AIS_NMEA_H */
