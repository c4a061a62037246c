/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file fuzz_ais.c
 * @brief libFuzzer target: the AIS log reader and NMEA decoder
 *        (replay/ais_reader.c, replay/ais_nmea.c), what keyshift-replay
 *        reads. The input is the log file's bytes (plain or gzip).
 *
 * Invariants (ais_nmea.h): every line is counted once,
 * lines = non_ais + malformed + sentences and
 * sentences = bad_checksum + keyed + unkeyed + orphan_fragments; a keyed
 * MMSI fits 30 bits; the sentence lies within its line.
 */
#include <stdint.h>
#include <stdlib.h>

#include "ais_nmea.h"
#include "ais_reader.h"
#include "ks_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const char           *path = ks_fuzz_file(data, size), *line;
        char                  err[256];
        ks_ais_reader_t      *r   = ks_ais_reader_open(path, err, sizeof(err));
        ks_ais_decoder_t     *dec = ks_ais_decoder_new();
        const ks_ais_stats_t *st;
        size_t                len;
        uint64_t              lines = 0;

        if (!r || !dec) {
                ks_ais_reader_close(r);
                ks_ais_decoder_destroy(dec);
                return 0;
        }
        while (ks_ais_reader_next(r, &line, &len) == 1) {
                ks_ais_msg_t    m;
                ks_ais_result_t res = ks_ais_decode_line(dec, line, len, &m);

                lines++;
                if (res == KS_AIS_KEYED && m.mmsi >= (1u << 30))
                        abort();
                if (res >= KS_AIS_BAD_CHECKSUM &&
                    (m.sentence < line ||
                     m.sentence + m.sentence_len > line + len))
                        abort();
        }
        st = ks_ais_decoder_stats(dec);
        if (st->lines != lines ||
            st->lines != st->non_ais + st->malformed + st->sentences ||
            st->sentences != st->bad_checksum + st->keyed + st->unkeyed +
                                 st->orphan_fragments)
                abort();
        ks_ais_reader_close(r);
        ks_ais_decoder_destroy(dec);
        return 0;
}
