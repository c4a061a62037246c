/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_fuzz_support.c
 * @brief ks_fuzz.h: scratch files, fields, the report of a run of records.
 */
#include "ks_fuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ks_report.h"
#include "ks_sizing.h"
#include "ks_topic.h"
#include "ks_warn.h"

/** @brief Rewrites memfd *fd (created on first use) with the bytes. */
static const char *scratch(int *fd, char *path, size_t pathsz,
                           const uint8_t *data, size_t size)
{
        if (*fd < 0) {
                *fd = memfd_create("ks-fuzz", 0);
                if (*fd < 0) {
                        perror("ks_fuzz: memfd_create");
                        abort();
                }
                snprintf(path, pathsz, "/proc/self/fd/%d", *fd);
        }
        if (ftruncate(*fd, 0) ||
            (size && pwrite(*fd, data, size, 0) != (ssize_t)size)) {
                perror("ks_fuzz: scratch file");
                abort();
        }
        return path;
}

const char *ks_fuzz_file(const uint8_t *data, size_t size)
{
        static int  fd = -1;
        static char path[64];

        return scratch(&fd, path, sizeof(path), data, size);
}

const char *ks_fuzz_file2(const uint8_t *data, size_t size)
{
        static int  fd = -1;
        static char path[64];

        return scratch(&fd, path, sizeof(path), data, size);
}

int ks_fuzz_fields(ks_fuzz_fields_t *f, const uint8_t *data, size_t size,
                   char sep, const char *argv0, int max)
{
        size_t i, start = 0;

        f->n   = 0;
        f->v   = calloc((size_t)max + 2, sizeof(*f->v));
        f->buf = malloc(size + 1);
        if (!f->v || !f->buf) {
                ks_fuzz_fields_free(f);
                return -1;
        }
        if (size)
                memcpy(f->buf, data, size);
        f->buf[size] = '\0';
        if (argv0)
                f->v[f->n++] = (char *)argv0;
        for (i = 0; i <= size && f->n < max + (argv0 ? 1 : 0); i++) {
                if (i < size && f->buf[i] != sep)
                        continue;
                f->buf[i]    = '\0';
                f->v[f->n++] = f->buf + start;
                start        = i + 1;
        }
        f->v[f->n] = NULL;
        return 0;
}

void ks_fuzz_fields_free(ks_fuzz_fields_t *f)
{
        free(f->v);
        free(f->buf);
        f->v   = NULL;
        f->buf = NULL;
        f->n   = 0;
}

json_t *ks_fuzz_report(const ks_fuzz_topic_t *ft, const ks_fuzz_record_t *recs,
                       size_t n)
{
        ks_report_producer_t p = {.client_id          = "fuzz",
                                  .client_name        = "fuzz#producer-1",
                                  .pid                = 1,
                                  .librdkafka_version = "2.0.2",
                                  .started_at_ms      = 1000,
                                  .report_interval_ms = 60000};
        ks_sizing_params_t   sp;
        ks_report_opts_t o = {ft->hot_keys, 5000, 1, &sp, 1e6, 1e9, 0, 0, NULL};
        ks_topic_params_t   tp = {0};
        ks_topic_snapshot_t s;
        ks_warn_list_t      wl;
        ks_topic_t         *t;
        json_t             *topics, *whole, *file = NULL;
        size_t              i;
        int                 k;

        tp.partitioner       = ft->partitioner;
        tp.key_sample_size   = 64;
        tp.mixed_sample_size = 64;
        tp.topk_capacity     = 64;
        tp.flow_max_cells    = 4096;
        tp.pending_max       = 16;
        for (k = 0; k < ft->proposed_cnt && k < KEYSHIFT_PROPOSED_MAX; k++)
                tp.proposed[tp.proposed_cnt++] = ft->proposed[k];
        p.partitioner        = ks_partitioner_name(ft->partitioner);
        p.partitioner_source = "partitioner";
        ks_sizing_params_init(&sp);
        if (!(t = ks_topic_new(ft->name, &tp, 1000)))
                return NULL;
        ks_topic_set_partition_count(t, ft->count, KS_COUNT_CONFIG, 1000);
        for (i = 0; i < n; i++) {
                const ks_fuzz_record_t *r = &recs[i];
                ks_key_facts_t          kf;

                if (!ft->stored) {
                        ks_topic_record(t, r->key, r->keylen, r->partition,
                                        r->bytes);
                        continue;
                }
                ks_topic_key_facts(t, r->key, r->keylen, -1, &kf);
                ks_topic_lock(t);
                ks_topic_record_stored_locked(
                    t, r->key, r->keylen,
                    kf.place == KS_PLACE_HASHED
                        ? ks_partition_of(kf.phash, ft->count)
                        : r->partition,
                    &kf, 1, r->bytes);
                ks_topic_unlock(t);
        }
        ks_warn_list_init(&wl);
        if (ks_topic_snapshot(t, &s) == 0) {
                topics = json_object();
                json_object_set_new(topics, s.name,
                                    ks_report_topic(&s, &o, &wl));
                whole = ks_report_build(&p, &o, topics, &wl);
                if (whole)
                        file = ks_report_file_form(whole);
                json_decref(whole);
                ks_topic_snapshot_free(&s);
        }
        ks_warn_list_clear(&wl);
        ks_topic_destroy(t);
        return file;
}
