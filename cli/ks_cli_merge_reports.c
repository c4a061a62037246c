/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli_merge_reports.c
 * @brief Reports already loaded merged into one (ks_cli_merge_reports():
 *        `keyshift fleet`'s producers), their topics on several threads.
 *
 * Each topic is merged from the inputs that have it alone
 * (ks_cli_merge_topic()), reading them and building a new object: the
 * topics are shared out between up to KS_MERGE_THREADS threads (one a
 * CPU), which take the next topic not yet taken, and the merged topics
 * are put together in the order first seen, as one thread would; a
 * failure is the first failing topic's in that order, as one thread
 * would stop at. (100 producers x 100 topics: the merge was a quarter of
 * `keyshift fleet`'s time, on one thread after the records' checks on
 * all; bench/README.md, issue 32.) Inputs are only read; what a merged
 * topic takes of them it takes by reference, jansson's counts being
 * atomic (jansson_config.h, JSON_HAVE_ATOMIC_BUILTINS).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ks_cli_merge.h"
#include "ks_cli_report.h"

/** Threads at most. */
#define KS_MERGE_THREADS 4

/** One topic to merge. */
typedef struct ks_merge_job {
        const char *name; /**< borrowed from the first input that has it */
        json_t     *out;  /**< the merged topic, or NULL with err */
        char       *err;  /**< why not (allocated); NULL while not run */
} ks_merge_job_t;

/** What the threads share. */
typedef struct ks_merge_jobs {
        const ks_cli_report_t *r;
        size_t                 n, hot_max, errsz;
        ks_merge_job_t        *jobs;
        size_t                 cnt;
        atomic_size_t          next; /**< the next job not taken */
} ks_merge_jobs_t;

/** @brief Merges job @p j (@p in: room for the inputs, @p buf for the
 *         message, js->errsz bytes). */
static void merge_one(const ks_merge_jobs_t *js, ks_merge_job_t *j,
                      ks_cli_merge_in_t *in, char *buf)
{
        size_t cnt = 0, k;

        for (k = 0; k < js->n; k++)
                if ((in[cnt].topic = json_object_get(
                         ks_cli_report_topics(&js->r[k]), j->name)))
                        in[cnt++].report = &js->r[k];
        buf[0] = '\0';
        j->out = ks_cli_merge_topic(j->name, in, cnt, js->hot_max, js->n, buf,
                                    js->errsz);
        if (!j->out && !(j->err = strdup(buf)))
                j->err = strdup("out of memory");
}

/** @brief A thread: merges the next topic not taken, until none is left.
 *  @locality a merge thread, or the caller's. */
static void *merge_main(void *arg)
{
        ks_merge_jobs_t   *js  = arg;
        ks_cli_merge_in_t *in  = calloc(js->n, sizeof(*in));
        char              *buf = malloc(js->errsz);
        size_t             i;

        if (in && buf)
                while ((i = atomic_fetch_add(&js->next, 1)) < js->cnt)
                        merge_one(js, &js->jobs[i], in, buf);
        free(in); /* else its jobs are left to the others, or to run_jobs() */
        free(buf);
        return NULL;
}

/** @returns the topics of @p r in the order first seen, as jobs (a new
 *           array of *@p cnt), or NULL when out of memory. */
static ks_merge_job_t *list_topics(const ks_cli_report_t *r, size_t n,
                                   size_t *cnt)
{
        json_t         *seen = json_object(), *t;
        ks_merge_job_t *jobs = NULL, *grown;
        const char     *name;
        size_t          i, cap = 0;

        *cnt = 0;
        for (i = 0; seen && i < n; i++)
                json_object_foreach(ks_cli_report_topics(&r[i]), name, t)
                {
                        if (json_object_get(seen, name))
                                continue;
                        if (*cnt == cap) {
                                cap   = cap ? cap * 2 : 64;
                                grown = realloc(jobs, cap * sizeof(*jobs));
                                if (!grown)
                                        goto oom;
                                jobs = grown;
                        }
                        memset(&jobs[*cnt], 0, sizeof(*jobs));
                        jobs[(*cnt)++].name = name;
                        json_object_set_new(seen, name, json_true());
                }
        if (!seen)
                goto oom;
        json_decref(seen);
        return jobs ? jobs : calloc(1, sizeof(*jobs));
oom:
        json_decref(seen);
        free(jobs);
        return NULL;
}

/** @brief Runs the jobs of @p js on up to KS_MERGE_THREADS threads (the
 *         caller's among them), each job once. */
static void run_jobs(ks_merge_jobs_t *js)
{
        pthread_t th[KS_MERGE_THREADS - 1];
        long      cpus = sysconf(_SC_NPROCESSORS_ONLN);
        size_t    want = cpus > 1 ? (size_t)cpus : 1, started = 0, i;

        if (want > KS_MERGE_THREADS)
                want = KS_MERGE_THREADS;
        if (want > js->cnt)
                want = js->cnt ? js->cnt : 1;
        for (i = 0; i + 1 < want; i++)
                if (!pthread_create(&th[started], NULL, merge_main, js))
                        started++;
        merge_main(js);
        for (i = 0; i < started; i++)
                pthread_join(th[i], NULL);
        /* jobs no thread could take (out of memory) */
        for (i = 0; i < js->cnt; i++)
                if (!js->jobs[i].out && !js->jobs[i].err)
                        js->jobs[i].err = strdup("out of memory");
}

json_t *ks_cli_merge_reports(const ks_cli_report_t *r, size_t n, size_t hot_max,
                             char *err, size_t errsz)
{
        ks_merge_jobs_t js = {
            .r = r, .n = n, .hot_max = hot_max, .errsz = errsz ? errsz : 1};
        json_t     *topics, *warnings, *t, *out;
        const char *name;
        json_int_t  messages = 0;
        size_t      i;
        int         failed = 0;

        if (!(out = ks_cli_merge_head(r, n, &warnings, err, errsz)))
                return NULL;
        if (!(js.jobs = list_topics(r, n, &js.cnt))) {
                snprintf(err, errsz, "out of memory");
                json_decref(warnings);
                json_decref(out);
                return NULL;
        }
        atomic_init(&js.next, 0);
        run_jobs(&js);
        topics = json_object();
        for (i = 0; i < js.cnt; i++) {
                if (!failed && !js.jobs[i].out) { /* the first, in order */
                        snprintf(err, errsz, "%s",
                                 js.jobs[i].err ? js.jobs[i].err
                                                : "out of memory");
                        failed = 1;
                }
                free(js.jobs[i].err);
                if (!failed)
                        json_object_set_new(topics, js.jobs[i].name,
                                            js.jobs[i].out);
                else
                        json_decref(js.jobs[i].out);
        }
        free(js.jobs);
        if (failed) {
                json_decref(topics);
                json_decref(warnings);
                json_decref(out);
                return NULL;
        }
        json_object_foreach(topics, name, t)
        {
                json_int_t m =
                    json_integer_value(json_object_get(t, "messages"));
                if (messages > INT64_MAX - m) {
                        snprintf(err, errsz,
                                 "messages: overflow: the merged topics' "
                                 "messages sum past 2^63 - 1");
                        json_decref(topics);
                        json_decref(warnings);
                        json_decref(out);
                        return NULL;
                }
                messages += m;
        }
        json_object_set_new(out, "topics", topics);
        json_object_set_new(out, "messages", json_integer(messages));
        json_object_set_new(out, "warnings", warnings);
        return out;
}
