/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_report_flow.c
 * @brief A proposal's flow matrix (messages from each current partition to
 *        each partition under the proposed count) in a report, in one of two
 *        forms (docs/report-schema.md):
 *  - `flow`: the dense rows x columns matrix;
 *  - `flow_nonzero`: sparse columns `{"from": [...], "to": [...],
 *    "messages": [...]}`, one value each per cell that is not 0, row by
 *    row (with `flow` null), when that is shorter.
 *
 * Why: a key in current partition p = h mod n goes to h mod m, which
 * given p can only be one of m / gcd(n, m) partitions, so the matrix is
 * mostly zeros (100 -> 200: 2 cells of 200 per row). A report of 1,000
 * topics x 100 partitions x 3 proposals was 256 MB, nearly all zeros of
 * flows, and took seconds to write. Why columns rather than one
 * `[from, to, messages]` array a cell: the brackets were a quarter of the
 * text (9.3 MB of flows in that report, 7.7 MB as columns).
 */
#include "ks_report.h"

#include <stdio.h>
#include <stdlib.h>

/** Text of a sparse cell (its from, to and messages) against a dense
 *  one's: about 4x. */
#define KS_FLOW_NONZERO_COST 4

size_t ks_report_flow_nonzero(const uint64_t *flow, int32_t rows, int32_t cols)
{
        size_t i, n = 0, cells = (size_t)rows * (size_t)cols;

        for (i = 0; i < cells; i++)
                n += flow[i] != 0;
        return n;
}

int ks_report_flow_sparse(size_t nonzero, int32_t rows, int32_t cols)
{
        return nonzero * KS_FLOW_NONZERO_COST < (size_t)rows * (size_t)cols;
}

void ks_report_flow_set(json_t *proposal, const uint64_t *flow, int32_t rows,
                        int32_t cols)
{
        json_t *m = NULL, *nz = NULL;
        int32_t i, j;

        if (flow && ks_report_flow_sparse(
                        ks_report_flow_nonzero(flow, rows, cols), rows, cols)) {
                json_t *f = json_array(), *t = json_array(), *n = json_array();
                nz = json_pack("{s:o, s:o, s:o}", "from", f, "to", t,
                               "messages", n);
                for (i = 0; nz && i < rows; i++)
                        for (j = 0; j < cols; j++) {
                                uint64_t c = flow[(size_t)i * cols + j];
                                if (!c)
                                        continue;
                                json_array_append_new(f, json_integer(i));
                                json_array_append_new(t, json_integer(j));
                                json_array_append_new(
                                    n, json_integer((json_int_t)c));
                        }
        } else if (flow) {
                m = json_array();
                for (i = 0; m && i < rows; i++) {
                        json_t *row = json_array();
                        for (j = 0; row && j < cols; j++)
                                json_array_append_new(
                                    row,
                                    json_integer((
                                        json_int_t)flow[(size_t)i * cols + j]));
                        json_array_append_new(m, row);
                }
        }
        json_object_set_new(proposal, "flow", m ? m : json_null());
        if (nz)
                json_object_set_new(proposal, "flow_nonzero", nz);
}

/** @returns the cells of `flow_nonzero` @p nz (three columns of equal
 *           length), or -1 with @p err saying what is wrong. */
static long nz_cells(const json_t *nz, char *err, size_t errsz)
{
        const json_t *f = json_object_get(nz, "from");
        const json_t *t = json_object_get(nz, "to");
        const json_t *n = json_object_get(nz, "messages");

        if (!json_is_object(nz) || json_object_size(nz) != 3 ||
            !json_is_array(f) || !json_is_array(t) || !json_is_array(n)) {
                snprintf(err, errsz,
                         "not {\"from\": [...], \"to\": [...], "
                         "\"messages\": [...]}");
                return -1;
        }
        if (json_array_size(t) != json_array_size(f) ||
            json_array_size(n) != json_array_size(f)) {
                snprintf(err, errsz,
                         "from, to and messages of different lengths (%zu, "
                         "%zu, %zu)",
                         json_array_size(f), json_array_size(t),
                         json_array_size(n));
                return -1;
        }
        return (long)json_array_size(f);
}

/** @brief Cell @p k of `flow_nonzero`'s columns @p fc, @p tc, @p nc
 *         (checked by nz_cells(): arrays of one length; looked up once,
 *         not per cell). @returns 0, or -1 with @p err naming it when it
 *         is not from 0..rows-1, to 0..cols-1, messages >= 1. */
static int nz_cell(const json_t *fc, const json_t *tc, const json_t *nc,
                   size_t k, int32_t rows, int32_t cols, json_int_t *from,
                   json_int_t *to, json_int_t *msgs, char *err, size_t errsz)
{
        const json_t *f = json_array_get(fc, k);
        const json_t *t = json_array_get(tc, k);
        const json_t *n = json_array_get(nc, k);

        if (!json_is_integer(f) || !json_is_integer(t) || !json_is_integer(n) ||
            (*from = json_integer_value(f)) < 0 || *from >= rows ||
            (*to = json_integer_value(t)) < 0 || *to >= cols ||
            (*msgs = json_integer_value(n)) < 1) {
                snprintf(err, errsz,
                         "cell %zu: not from 0..%d, to 0..%d, messages >= 1", k,
                         rows - 1, cols - 1);
                return -1;
        }
        return 0;
}

json_t *ks_report_flow_dense(const json_t *nonzero, int32_t rows, int32_t cols,
                             char *err, size_t errsz)
{
        json_t *m = json_array();
        size_t  k;
        long    cells;
        int32_t i, j;

        for (i = 0; m && i < rows; i++) {
                json_t *row = json_array();
                for (j = 0; row && j < cols; j++)
                        json_array_append_new(row, json_integer(0));
                json_array_append_new(m, row);
        }
        if ((cells = nz_cells(nonzero, err, errsz)) < 0) {
                json_decref(m);
                return NULL;
        }
        for (k = 0; m && k < (size_t)cells; k++) {
                json_int_t from, to, msgs;
                if (nz_cell(json_object_get(nonzero, "from"),
                            json_object_get(nonzero, "to"),
                            json_object_get(nonzero, "messages"), k, rows, cols,
                            &from, &to, &msgs, err, errsz)) {
                        json_decref(m);
                        return NULL;
                }
                json_array_set_new(json_array_get(m, (size_t)from), (size_t)to,
                                   json_integer(msgs));
        }
        return m;
}

/** @brief Adds `flow_nonzero` @p nz to matrix @p m.
 *  @returns 0, or -1 with @p err naming the cell. */
static int add_nonzero(const json_t *nz, uint64_t *m, int32_t rows,
                       int32_t cols, char *err, size_t errsz)
{
        long          cells = nz_cells(nz, err, errsz);
        const json_t *fc    = json_object_get(nz, "from");
        const json_t *tc    = json_object_get(nz, "to");
        const json_t *nc    = json_object_get(nz, "messages");
        size_t        k;
        json_int_t    from, to, msgs, last = -1;

        if (cells < 0)
                return -1;
        for (k = 0; k < (size_t)cells; k++) {
                if (nz_cell(fc, tc, nc, k, rows, cols, &from, &to, &msgs, err,
                            errsz))
                        return -1;
                if (from * cols + to <= last) {
                        snprintf(err, errsz,
                                 "cell %zu: [%lld, %lld] not after the one "
                                 "before (row by row, each cell once)",
                                 k, (long long)from, (long long)to);
                        return -1;
                }
                last = from * cols + to;
                m[(size_t)from * cols + to] += (uint64_t)msgs;
        }
        return 0;
}

int ks_report_flow_add(const json_t *proposal, int32_t rows, int32_t cols,
                       uint64_t *m, char *err, size_t errsz)
{
        const json_t *dense = json_object_get(proposal, "flow");
        const json_t *nz    = json_object_get(proposal, "flow_nonzero");
        int32_t       i, j;

        *err = '\0';
        if ((!json_is_array(dense) && !nz) || rows < 1 || cols < 1)
                return 1;
        if (nz)
                return add_nonzero(nz, m, rows, cols, err, errsz);
        for (i = 0; i < rows; i++) { /* checked: rows x cols integers */
                const json_t *row = json_array_get(dense, (size_t)i);
                for (j = 0; j < cols; j++) {
                        json_int_t v =
                            json_integer_value(json_array_get(row, (size_t)j));
                        m[(size_t)i * cols + j] += v > 0 ? (uint64_t)v : 0;
                }
        }
        return 0;
}

uint64_t *ks_report_flow_read(const json_t *proposal, int32_t rows,
                              int32_t cols, char *err, size_t errsz)
{
        const json_t *dense = json_object_get(proposal, "flow");
        const json_t *nz    = json_object_get(proposal, "flow_nonzero");
        uint64_t     *m;

        *err = '\0';
        if ((!json_is_array(dense) && !nz) || rows < 1 || cols < 1)
                return NULL;
        if (!(m = calloc((size_t)rows * (size_t)cols, sizeof(*m)))) {
                snprintf(err, errsz, "out of memory");
                return NULL;
        }
        if (!ks_report_flow_add(proposal, rows, cols, m, err, errsz))
                return m;
        free(m);
        return NULL;
}
