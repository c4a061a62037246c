/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli_fleet_group.c
 * @brief `keyshift fleet`: the report topic's records checked and grouped
 *        by producer (ks_cli_fleet.h). A record is a report holding its
 *        key's topic alone (none for the producer's own record) that the
 *        report check passes; one that is not is garbage: counted,
 *        skipped and named by its offset.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ks_cli_fleet.h"
#include "ks_cli_report.h"

/** Garbage records named one by one on stderr, at most. */
#define KS_FLEET_GARBAGE_NAMED 10

/**
 * @brief Checks one parsed record (@p key, ks_fleet_parse_record()): its
 *        value @p val a report holding the key's topic alone (none for
 *        the producer's own record) that the report check passes. The
 *        check reads every packed sketch whole (ks_cli_report_check(),
 *        "merge"), with the functions the merge reads them with: a record
 *        whose sketches do not read is garbage here, not a failed merge.
 *        (A merge of each record alone, to the same end, took 13 % of
 *        `keyshift fleet`'s time over 100 x 100.)
 * @returns 0, or -1 with @p err set.
 */
static int check_record(json_t *key, json_t *val, const char *where, char *err,
                        size_t errsz)
{
        const char *topic = json_string_value(json_object_get(key, "topic"));
        json_t     *topics;

        if (ks_cli_report_check(val, where, err, errsz) ||
            ks_cli_report_rows(val, where, err, errsz)) /* hot keys */
                return -1;
        topics = json_object_get(val, "topics");
        if (json_object_size(topics) != (*topic ? 1u : 0u) ||
            (*topic && !json_object_get(topics, topic))) {
                snprintf(err, errsz,
                         "its report does not hold topic \"%s\" alone", topic);
                return -1;
        }
        return 0;
}

/** @brief Writes where record @p rec is into @p where. */
static void record_where(const ks_fleet_opts_t *o, const ks_fleet_rec_t *rec,
                         char *where, size_t wheresz)
{
        snprintf(where, wheresz, "%s [%d] offset %lld", o->report_topic,
                 (int)rec->partition, (long long)rec->offset);
}

/** @brief check_record() as a ks_fleet_check_t (@p arg: the options).
 *  @locality a parser's worker thread. */
static int check_parsed(void *arg, const ks_fleet_rec_t *rec, json_t *key,
                        json_t *val, char *err, size_t errsz)
{
        char where[600];

        record_where(arg, rec, where, sizeof(where));
        return check_record(key, val, where, err, errsz);
}

/** @returns the producer of @p key in @p ps (added if new), or NULL. */
static ks_fleet_producer_t *producer_of(ks_fleet_producer_t **ps, size_t *n,
                                        json_t *key)
{
        json_t *id = json_deep_copy(key);
        size_t  i;
        void   *grown;

        json_object_del(id, "topic");
        for (i = 0; i < *n; i++)
                if (json_equal((*ps)[i].key, id)) {
                        json_decref(id);
                        return &(*ps)[i];
                }
        if (!(grown = realloc(*ps, (*n + 1) * sizeof(**ps)))) {
                json_decref(id);
                return NULL;
        }
        *ps = grown;
        memset(&(*ps)[*n], 0, sizeof(**ps));
        (*ps)[*n].key     = id;
        (*ps)[*n].topics  = json_object();
        (*ps)[*n].last_ms = -1;
        return &(*ps)[(*n)++];
}

/**
 * @brief Counts record @p where as garbage in @p rd, naming it (with the
 *        reason @p err) on stderr while fewer than KS_FLEET_GARBAGE_NAMED
 *        were.
 */
static void skip_record(ks_fleet_round_t *rd, const char *where,
                        const char *err)
{
        if (rd->garbage < KS_FLEET_GARBAGE_NAMED) {
                /* the check's words name the record already: said once */
                size_t      wl  = strlen(where);
                const char *why = err;
                if (!strncmp(err, where, wl) && !strncmp(err + wl, ": ", 2))
                        why = err + wl + 2;
                fprintf(stderr,
                        "keyshift fleet: skipped the record at %s: %s\n", where,
                        why);
        }
        if (!rd->garbage)
                snprintf(rd->first_bad, sizeof(rd->first_bad), "%s", where);
        rd->garbage++;
}

/**
 * @brief Takes record @p i of @p recs: parsed and checked by @p parser's
 *        workers, or here when there is no parser (its text freed then).
 * @returns 0 with @p key and @p val (new references), 1 for a deleted
 *          record, -1 with @p err set for garbage.
 */
static int take_record(ks_fleet_parser_t *parser, ks_fleet_read_t *recs,
                       size_t i, const char *where, json_t **key, json_t **val,
                       char *err, size_t errsz)
{
        ks_fleet_rec_t *rec = &recs->recs[i];
        int             r;

        if (parser) /* parsed and checked */
                return ks_fleet_parser_take(parser, i, key, val, err, errsz);
        if (!rec->value)
                return 1;
        r = ks_fleet_parse_record(rec, key, val, err, errsz) ||
                    check_record(*key, *val, where, err, errsz)
                ? -1
                : 0;
        free(rec->value); /* its text is not needed */
        rec->value = NULL;
        return r;
}

void ks_fleet_group_records(const ks_fleet_opts_t *o, ks_fleet_read_t *recs,
                            ks_fleet_round_t *rd)
{
        ks_fleet_parser_t *parser;
        char               err[2048], where[600];
        size_t             i;

        parser = ks_fleet_parser_start(recs, check_parsed, (void *)o);
        for (i = 0; i < recs->cnt; i++) {
                ks_fleet_rec_t      *rec = &recs->recs[i];
                json_t              *key = NULL, *val = NULL;
                ks_fleet_producer_t *p;
                const char          *topic;
                int                  r;

                record_where(o, rec, where, sizeof(where));
                r = take_record(parser, recs, i, where, &key, &val, err,
                                sizeof(err));
                if (r == 1) /* deleted */
                        continue;
                if (r) {
                        json_decref(key);
                        json_decref(val);
                        skip_record(rd, where, err);
                        continue;
                }
                topic = json_string_value(json_object_get(key, "topic"));
                if (!(p = producer_of(&rd->ps, &rd->np, key))) {
                        json_decref(key);
                        json_decref(val);
                        break;
                }
                if (*topic)
                        json_object_set_new(p->topics, topic, val);
                else {
                        json_decref(p->own);
                        p->own = val;
                }
                if (rec->timestamp_ms > p->last_ms)
                        p->last_ms = rec->timestamp_ms;
                json_decref(key);
        }
        ks_fleet_parser_stop(parser);
        if (rd->garbage > KS_FLEET_GARBAGE_NAMED)
                fprintf(stderr, "keyshift fleet: %zu more records skipped\n",
                        rd->garbage - KS_FLEET_GARBAGE_NAMED);
}
