/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli_fleet_parse.c
 * @brief The report topic's records parsed and checked ahead by worker
 *        threads while the command takes the ones before (ks_cli_fleet.h).
 *
 * Parsing a record's JSON is a quarter of `keyshift fleet`'s time over
 * 100 producers x 100 topics, checking it as a report most of the rest
 * (perf, bench/ksb_fleet.sh). Both run on up to KS_FLEET_PARSERS_MAX
 * threads, one a CPU, at most KS_FLEET_PARSE_AHEAD records ahead of the
 * command, so the texts and trees waiting stay few; the command takes
 * the records in their order, so what it does with them (and says of the
 * ones it skips) is what one thread would do. The parse touches nothing
 * shared but jansson's hash seed (set once, thread-safely, by jansson);
 * the check reads the report schema, parsed and looked up once under
 * pthread_once, and its compiled patterns (ks_cli_schema.h).
 */
#include "ks_cli_fleet.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/** Worker threads at most (one a CPU: the command's thread only waits). */
#define KS_FLEET_PARSERS_MAX 4
/** Records parsed and not yet taken, at most. */
#define KS_FLEET_PARSE_AHEAD 256

typedef struct ks_fleet_slot {
        json_t *key, *val;
        char   *err; /**< set when the record does not parse or check */
        int     ready;
} ks_fleet_slot_t;

struct ks_fleet_parser {
        ks_fleet_read_t *rd;
        ks_fleet_check_t check; /**< or NULL */
        void            *check_arg;
        ks_fleet_slot_t *slots; /**< [rd->cnt] */
        pthread_mutex_t  lock;
        pthread_cond_t   ready, room;
        size_t           next;  /**< the next record a worker parses */
        size_t           taken; /**< records the command has taken */
        int              stop;
        pthread_t        threads[KS_FLEET_PARSERS_MAX];
        size_t           thread_cnt;
};

int ks_fleet_parse_record(ks_fleet_rec_t *rec, json_t **key, json_t **val,
                          char *err, size_t errsz)
{
        json_error_t je;

        *val = NULL;
        *key = json_loads(rec->key, 0, &je);
        if (!json_is_object(*key) ||
            json_integer_value(json_object_get(*key, "v")) != 1 ||
            !json_is_string(json_object_get(*key, "client_id")) ||
            !json_is_string(json_object_get(*key, "host")) ||
            !json_is_integer(json_object_get(*key, "pid")) ||
            !json_is_integer(json_object_get(*key, "started_at_ms")) ||
            !json_is_string(json_object_get(*key, "topic"))) {
                snprintf(err, errsz, "its key is not a keyshift record key");
                goto bad;
        }
        if (!(*val = json_loadb(rec->value, rec->value_len, 0, &je))) {
                snprintf(err, errsz, "its value is not JSON (%s)", je.text);
                goto bad;
        }
        return 0;
bad:
        json_decref(*key);
        *key = NULL;
        return -1;
}

/** @brief Parses record @p rec into slot @p s, checks it, and frees its
 *         text. */
static void parse_one(ks_fleet_parser_t *ps, ks_fleet_rec_t *rec,
                      ks_fleet_slot_t *s)
{
        char err[2048];

        if (!rec->value) /* deleted, nothing to parse */
                return;
        if (ks_fleet_parse_record(rec, &s->key, &s->val, err, sizeof(err)) ||
            (ps->check &&
             ps->check(ps->check_arg, rec, s->key, s->val, err, sizeof(err)))) {
                json_decref(s->key);
                json_decref(s->val);
                s->key = s->val = NULL;
                if (!(s->err = strdup(err)))
                        s->err = strdup("out of memory");
        }
        free(rec->value); /* its text is not needed */
        rec->value = NULL;
}

/** @brief A worker: parses and checks the next record not yet parsed,
 *         while it is fewer than KS_FLEET_PARSE_AHEAD ahead. */
static void *parse_main(void *arg)
{
        ks_fleet_parser_t *ps = arg;
        ks_fleet_slot_t   *s;
        ks_fleet_rec_t    *rec;
        size_t             i;

        for (;;) {
                pthread_mutex_lock(&ps->lock);
                while (!ps->stop && ps->next < ps->rd->cnt &&
                       ps->next >= ps->taken + KS_FLEET_PARSE_AHEAD)
                        pthread_cond_wait(&ps->room, &ps->lock);
                if (ps->stop || ps->next >= ps->rd->cnt) {
                        pthread_mutex_unlock(&ps->lock);
                        return NULL;
                }
                i = ps->next++;
                pthread_mutex_unlock(&ps->lock);

                rec = &ps->rd->recs[i];
                s   = &ps->slots[i];
                parse_one(ps, rec, s);
                pthread_mutex_lock(&ps->lock);
                s->ready = 1;
                pthread_cond_broadcast(&ps->ready);
                pthread_mutex_unlock(&ps->lock);
        }
}

ks_fleet_parser_t *ks_fleet_parser_start(ks_fleet_read_t *rd,
                                         ks_fleet_check_t check, void *arg)
{
        ks_fleet_parser_t *ps   = calloc(1, sizeof(*ps));
        long               cpus = sysconf(_SC_NPROCESSORS_ONLN);
        size_t             want, i;

        want = cpus > 1 ? (size_t)cpus : 1;
        if (want > KS_FLEET_PARSERS_MAX)
                want = KS_FLEET_PARSERS_MAX;
        if (!ps ||
            !(ps->slots = calloc(rd->cnt ? rd->cnt : 1, sizeof(*ps->slots)))) {
                free(ps);
                return NULL;
        }
        ps->rd        = rd;
        ps->check     = check;
        ps->check_arg = arg;
        pthread_mutex_init(&ps->lock, NULL);
        pthread_cond_init(&ps->ready, NULL);
        pthread_cond_init(&ps->room, NULL);
        for (i = 0; i < want; i++)
                if (!pthread_create(&ps->threads[ps->thread_cnt], NULL,
                                    parse_main, ps))
                        ps->thread_cnt++;
        if (!ps->thread_cnt) { /* none: the caller parses itself */
                ks_fleet_parser_stop(ps);
                return NULL;
        }
        return ps;
}

int ks_fleet_parser_take(ks_fleet_parser_t *ps, size_t i, json_t **key,
                         json_t **val, char *err, size_t errsz)
{
        ks_fleet_slot_t *s = &ps->slots[i];

        pthread_mutex_lock(&ps->lock);
        while (!s->ready)
                pthread_cond_wait(&ps->ready, &ps->lock);
        ps->taken = i + 1;
        pthread_cond_broadcast(&ps->room);
        pthread_mutex_unlock(&ps->lock);
        *key   = s->key;
        *val   = s->val;
        s->key = s->val = NULL;
        if (s->err) {
                snprintf(err, errsz, "%s", s->err);
                free(s->err);
                s->err = NULL;
                return -1;
        }
        return *key ? 0 : 1; /* 1: deleted */
}

void ks_fleet_parser_stop(ks_fleet_parser_t *ps)
{
        size_t i;

        if (!ps)
                return;
        pthread_mutex_lock(&ps->lock);
        ps->stop = 1;
        pthread_cond_broadcast(&ps->room);
        pthread_mutex_unlock(&ps->lock);
        for (i = 0; i < ps->thread_cnt; i++)
                pthread_join(ps->threads[i], NULL);
        for (i = 0; i < ps->rd->cnt; i++) { /* parsed, never taken */
                json_decref(ps->slots[i].key);
                json_decref(ps->slots[i].val);
                free(ps->slots[i].err);
        }
        pthread_cond_destroy(&ps->ready);
        pthread_cond_destroy(&ps->room);
        pthread_mutex_destroy(&ps->lock);
        free(ps->slots);
        free(ps);
}
