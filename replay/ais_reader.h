/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ais_reader.h
 * @brief Line reader for AIS logs, plain or gzip-compressed.
 *
 * zlib's gzopen()/gzgets() read gzip files and, transparently, plain files
 * too (zlib manual, gzopen: "gzread will read the file as is if it is not
 * in gzip format"), so one code path serves `.txt`, `.log` and `.gz`.
 * Lines of any length are returned whole: the buffer grows until gzgets()
 * has returned the newline. The terminator ("\n" or "\r\n") is stripped.
 * NUL bytes inside a line are kept (the length counts them).
 *
 * A reader is used by one thread at a time.
 */
#ifndef KS_AIS_READER_H
#define KS_AIS_READER_H

#include <stddef.h>
#include <stdint.h>

typedef struct ks_ais_reader ks_ais_reader_t;

/**
 * @brief Opens @p path ("-" reads standard input) for reading.
 * @returns a reader (close with ks_ais_reader_close()), or NULL with
 *          errno set and a message in @p errstr.
 */
ks_ais_reader_t *ks_ais_reader_open(const char *path, char *errstr,
                                    size_t errstr_size);

/**
 * @brief Reads the next line.
 * @param line  set to the line, NUL-terminated, without its terminator;
 *              owned by @p r and valid until the next call.
 * @param len   set to the line's length in bytes.
 * @returns 1 for a line, 0 at end of file, -1 on a read or decompression
 *          error (message in ks_ais_reader_error()).
 */
int ks_ais_reader_next(ks_ais_reader_t *r, const char **line, size_t *len);

/** @returns the number of lines returned so far. */
uint64_t ks_ais_reader_line_no(const ks_ais_reader_t *r);

/** @returns the last error's message, "" if none (owned by @p r). */
const char *ks_ais_reader_error(const ks_ais_reader_t *r);

/** @brief Closes @p r (NULL is fine). */
void ks_ais_reader_close(ks_ais_reader_t *r);

#endif /* KS_AIS_READER_H */
