/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_warn.c
 * @brief Warning collection and librdkafka-format logging.
 */
#include "ks_warn.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

void ks_warn_list_init(ks_warn_list_t *wl)
{
        memset(wl, 0, sizeof(*wl));
}

void ks_warn_list_clear(ks_warn_list_t *wl)
{
        free(wl->items);
        memset(wl, 0, sizeof(*wl));
}

void ks_warn_add(ks_warn_list_t *wl, const char *code, const char *topic,
                 const char *fmt, ...)
{
        ks_warn_t *w;
        va_list    ap;

        if (wl->cnt == wl->cap) {
                size_t     cap = wl->cap ? wl->cap * 2 : 16;
                ks_warn_t *nw  = realloc(wl->items, cap * sizeof(*nw));
                if (!nw)
                        return;
                wl->items = nw;
                wl->cap   = cap;
        }
        w = &wl->items[wl->cnt++];
        snprintf(w->code, sizeof(w->code), "%s", code);
        snprintf(w->topic, sizeof(w->topic), "%s", topic ? topic : "");
        va_start(ap, fmt);
        vsnprintf(w->message, sizeof(w->message), fmt, ap);
        va_end(ap);
}

void ks_warn_remove_since(ks_warn_list_t *wl, const char *code,
                          const char *topic, size_t from)
{
        size_t i, o = from;

        for (i = from; i < wl->cnt; i++) {
                if (strcmp(wl->items[i].code, code) ||
                    strcmp(wl->items[i].topic, topic ? topic : ""))
                        wl->items[o++] = wl->items[i];
        }
        wl->cnt = o;
}

void ks_warn_remove(ks_warn_list_t *wl, const char *code, const char *topic)
{
        ks_warn_remove_since(wl, code, topic, 0);
}

json_t *ks_warn_list_json_since(const ks_warn_list_t *wl, const char *topic,
                                size_t from)
{
        json_t *arr = json_array();
        size_t  i;

        for (i = from; arr && i < wl->cnt; i++) {
                const ks_warn_t *w = &wl->items[i];
                if (strcmp(w->topic, topic ? topic : ""))
                        continue;
                json_array_append_new(arr,
                                      json_pack("{s:s, s:s}", "code", w->code,
                                                "message", w->message));
        }
        return arr;
}

json_t *ks_warn_list_json(const ks_warn_list_t *wl, const char *topic)
{
        return ks_warn_list_json_since(wl, topic, 0);
}

void ks_warn_log_line(FILE *fp, int level, const char *client_name,
                      const char *fmt, ...)
{
        struct timeval tv;
        char           buf[1024];
        va_list        ap;

        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        gettimeofday(&tv, NULL);
        /* librdkafka's rd_kafka_log_print(): "%%%i|%u.%03u|%s|%s| %s\n" */
        fprintf(fp, "%%%i|%u.%03u|KEYSHIFT|%s| %s\n", level,
                (unsigned)tv.tv_sec, (unsigned)(tv.tv_usec / 1000),
                client_name ? client_name : "", buf);
}

/** @brief Logs warning @p w, raised by @p topics distinct topics. */
static void log_one(FILE *fp, const char *client_name, const ks_warn_t *w,
                    size_t topics)
{
        /* what keyshift learned is information (level 6), not a warning */
        int level = strcmp(w->code, KS_WARN_PARTITIONER_LEARNED) &&
                            strcmp(w->code, KS_WARN_COUNT_REHEARSED)
                        ? 4
                        : 6;

        if (topics == 1)
                ks_warn_log_line(fp, level, client_name, "%s: %s%s%s", w->code,
                                 w->topic, *w->topic ? ": " : "", w->message);
        else
                ks_warn_log_line(fp, level, client_name,
                                 "%s on %zu topics; first %s: %s", w->code,
                                 topics, w->topic, w->message);
}

/** qsort()'s context: the list being sorted by index. */
static _Thread_local const ks_warn_list_t *ks_warn_sorting;

/** Orders warning indexes by code, then topic, then position. */
static int cmp_code_topic(const void *a, const void *b)
{
        const ks_warn_t *x = &ks_warn_sorting->items[*(const size_t *)a];
        const ks_warn_t *y = &ks_warn_sorting->items[*(const size_t *)b];
        int              r;

        if ((r = strcmp(x->code, y->code)) || (r = strcmp(x->topic, y->topic)))
                return r;
        return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

/** One line to log: a code's first warning and its distinct topics. */
typedef struct ks_warn_line {
        size_t first;  /**< index of the code's first warning */
        size_t topics; /**< distinct topics ("" counts as one) */
} ks_warn_line_t;

static int cmp_line_first(const void *a, const void *b)
{
        size_t x = ((const ks_warn_line_t *)a)->first;
        size_t y = ((const ks_warn_line_t *)b)->first;

        return x < y ? -1 : x > y;
}

/*
 * One line per code, in the order codes first appear, naming the code's
 * first warning and how many distinct topics raised it: indexes sorted by
 * (code, topic, position), so a code is one run and each distinct topic
 * starts a sub-run; then the lines sorted by first position. O(n log n)
 * comparisons for n warnings (a report of 1,000 topics has ~4,000).
 */
void ks_warn_list_log(const ks_warn_list_t *wl, FILE *fp,
                      const char *client_name)
{
        size_t         *idx, i, n = 0;
        ks_warn_line_t *lines;

        if (!wl->cnt)
                return;
        idx   = malloc(wl->cnt * sizeof(*idx));
        lines = malloc(wl->cnt * sizeof(*lines));
        if (!idx || !lines) { /* no memory: each warning on its own line */
                for (i = 0; i < wl->cnt; i++)
                        log_one(fp, client_name, &wl->items[i], 1);
                free(idx);
                free(lines);
                return;
        }
        for (i = 0; i < wl->cnt; i++)
                idx[i] = i;
        ks_warn_sorting = wl;
        qsort(idx, wl->cnt, sizeof(*idx), cmp_code_topic);
        for (i = 0; i < wl->cnt; i++) {
                const ks_warn_t *w = &wl->items[idx[i]];
                const ks_warn_t *p = i ? &wl->items[idx[i - 1]] : NULL;
                if (!p || strcmp(p->code, w->code)) {
                        lines[n].first    = idx[i];
                        lines[n++].topics = 1;
                } else if (strcmp(p->topic, w->topic)) {
                        lines[n - 1].topics++;
                }
        }
        qsort(lines, n, sizeof(*lines), cmp_line_first);
        for (i = 0; i < n; i++)
                log_one(fp, client_name, &wl->items[lines[i].first],
                        lines[i].topics);
        free(idx);
        free(lines);
}
