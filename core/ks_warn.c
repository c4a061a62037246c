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

void ks_warn_remove(ks_warn_list_t *wl, const char *code, const char *topic)
{
        size_t i, o = 0;

        for (i = 0; i < wl->cnt; i++)
                if (strcmp(wl->items[i].code, code) ||
                    strcmp(wl->items[i].topic, topic ? topic : ""))
                        wl->items[o++] = wl->items[i];
        wl->cnt = o;
}

json_t *ks_warn_list_json(const ks_warn_list_t *wl, const char *topic)
{
        json_t *arr = json_array();
        size_t  i;

        for (i = 0; arr && i < wl->cnt; i++) {
                const ks_warn_t *w = &wl->items[i];
                if (strcmp(w->topic, topic ? topic : ""))
                        continue;
                json_array_append_new(arr,
                                      json_pack("{s:s, s:s}", "code", w->code,
                                                "message", w->message));
        }
        return arr;
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

void ks_warn_list_log(const ks_warn_list_t *wl, FILE *fp,
                      const char *client_name)
{
        size_t i, j;

        for (i = 0; i < wl->cnt; i++) {
                const ks_warn_t *w     = &wl->items[i];
                size_t           same  = 0;
                int              first = 1;

                for (j = 0; j < wl->cnt; j++) {
                        size_t k;
                        int    seen = 0;
                        if (strcmp(wl->items[j].code, w->code))
                                continue;
                        first &= j >= i;
                        /* count each topic once: was it seen before j? */
                        for (k = 0; k < j && !seen; k++)
                                seen = !strcmp(wl->items[k].code, w->code) &&
                                       !strcmp(wl->items[k].topic,
                                               wl->items[j].topic);
                        same += !seen;
                }
                if (!first)
                        continue; /* logged with the first of its code */
                if (same == 1)
                        ks_warn_log_line(fp, 4, client_name, "%s: %s%s%s",
                                         w->code, w->topic,
                                         *w->topic ? ": " : "", w->message);
                else
                        ks_warn_log_line(fp, 4, client_name,
                                         "%s on %zu topics; first %s: %s",
                                         w->code, same, w->topic, w->message);
        }
}
