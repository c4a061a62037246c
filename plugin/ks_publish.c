/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_publish.c
 * @brief The reports published to keyshift.report.topic by a producer of
 *        keyshift's own (ks_publish.h).
 */
#include "ks_publish.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "ks_host.h"

/** Causes remembered (each warned once); past it, no more warnings. */
#define KS_PUBLISH_CAUSES_MAX 32
/** The cause of a librdkafka error, whichever way it came (error_cb, a
 *  delivery report, rd_kafka_produce()): one warning per error code. A
 *  topic refused (no Write ACL) fails the first records' deliveries and
 *  then every rd_kafka_produce() at once: one cause, one warning
 *  (broker.fleet_sasl). */
#define KS_PUBLISH_ERR_CAUSE "rdkafka error %d"
/** How long the publisher waits on its queue or librdkafka at a time. */
#define KS_PUBLISH_POLL_MS 100
/** The report topic's deleted keys are kept 7 days (issue 32). */
#define KS_PUBLISH_DELETE_RETENTION_MS "604800000"
/** Timeout of the CreateTopics request (asynchronous: never waited on). */
#define KS_PUBLISH_ADMIN_TIMEOUT_MS 10000
/** An unanswered CreateTopics is sent again after 1 s, doubling up to
 *  60 s while unanswered. */
#define KS_PUBLISH_CREATE_BACKOFF_MS 1000
#define KS_PUBLISH_CREATE_BACKOFF_MAX 60000

/** A topic's text in the report being written, with its messages. */
typedef struct ks_pub_text {
        char    *name, *text;
        size_t   len;
        uint64_t messages;
} ks_pub_text_t;

typedef struct ks_pub_rec {
        char  *key, *val;
        size_t key_len, val_len;
} ks_pub_rec_t;

struct ks_publish {
        char   *topic;
        int64_t flush_ms;
        char  **props; /**< name, value, ...: the record producer's conf */
        size_t  prop_cnt;
        char    client_id[256], host[256];
        long    pid;
        int64_t started_at_ms;

        pthread_mutex_t lock; /**< protects what follows up to `rk` */
        pthread_cond_t  cond;
        ks_pub_rec_t    q[KS_PUBLISH_QUEUE_MAX];
        size_t          q_cnt;
        int             stop;
        int64_t         deadline_ms; /**< monotonic: the flush's end */
        char            causes[KS_PUBLISH_CAUSES_MAX][48];
        size_t          cause_cnt;
        ks_warn_list_t  pending; /**< warnings for the next report */
        /** what the reports say of publishing (ks_publish_state()) */
        uint64_t  queued, delivered, failed;
        char      last_error[512];
        int64_t   last_error_ms, last_delivered_ms; /**< wall clock */
        char      name[256];
        pthread_t thread;
        int       thread_running;

        /* the publisher thread's only */
        rd_kafka_t       *rk;
        rd_kafka_topic_t *rkt;
        rd_kafka_queue_t *admin_q;
        int               create_failed; /**< rd_kafka_new() failed */
        /** CreateTopics unanswered (cluster away): sent again at this
         *  monotonic ms (0: not to be), after create_backoff_ms */
        int64_t create_again_ms, create_backoff_ms;

        /* the reporter thread's only (then the final report's thread):
         * the records of the last report read back, queued again as they
         * are while the report does not change (no re-read, no re-parse) */
        ks_pub_rec_t *last;
        size_t        last_cnt, last_cap;
        /* the reporter thread's only: the topics' texts of the report
         * being written (ks_publish_topic_text()), made into records by
         * ks_publish_report() */
        ks_pub_text_t *texts;
        size_t         text_cnt, text_cap;
        int            texts_failed; /**< ENOMEM: read the file back */
};

static int64_t wall_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t mono_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/**
 * @brief Warns once per @p cause: a REPORT_TOPIC_FAILED warning in the
 *        next report, whose writer logs it on stderr with the report's
 *        other warnings (logged here too, it came twice); one raised after
 *        the final report is logged by ks_publish_destroy(). Every call
 *        (not once per cause) becomes the last error the reports state
 *        (producer.report_topic), and @p records failed records counted.
 * @locality any of keyshift's threads. @locks takes p->lock.
 */
static void warn_once(ks_publish_t *p, unsigned records, const char *cause,
                      const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void warn_once(ks_publish_t *p, unsigned records, const char *cause,
                      const char *fmt, ...)
{
        char    msg[512];
        size_t  i;
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        pthread_mutex_lock(&p->lock);
        p->failed += records;
        snprintf(p->last_error, sizeof(p->last_error), "%s", msg);
        p->last_error_ms = wall_ms();
        for (i = 0; i < p->cause_cnt; i++)
                if (!strcmp(p->causes[i], cause))
                        break;
        if (i < p->cause_cnt || p->cause_cnt == KS_PUBLISH_CAUSES_MAX) {
                pthread_mutex_unlock(&p->lock);
                return;
        }
        snprintf(p->causes[p->cause_cnt++], sizeof(p->causes[0]), "%s", cause);
        ks_warn_add(&p->pending, KS_WARN_REPORT_TOPIC_FAILED, NULL,
                    "report topic %s: %s", p->topic, msg);
        pthread_mutex_unlock(&p->lock);
}

int ks_publish_check_property(const char *x, const char *value, char *errstr,
                              size_t errstr_size)
{
        rd_kafka_conf_t *conf;
        char             err[256] = "";
        int              r;

        if (ks_config_report_prop_refused(x)) {
                snprintf(errstr, errstr_size,
                         "Invalid value \"%s\" for %s%s: expected a "
                         "librdkafka producer property other than "
                         "plugin.library.paths, interceptors or callbacks",
                         value, KS_CONFIG_REPORT_TOPIC_PREFIX, x);
                return -1;
        }
        if (!(conf = ks_rdk.rd_kafka_conf_new()))
                return 0; /* said when the producer is made */
        r = ks_rdk.rd_kafka_conf_set(conf, x, value, err, sizeof(err)) !=
            RD_KAFKA_CONF_OK;
        ks_rdk.rd_kafka_conf_destroy(conf);
        if (r)
                snprintf(errstr, errstr_size,
                         "Invalid value \"%s\" for %s%s: expected what "
                         "librdkafka accepts for %s (%s)",
                         value, KS_CONFIG_REPORT_TOPIC_PREFIX, x, x, err);
        return r ? -1 : 0;
}

/** @returns 1 for a host property the record producer inherits. */
static int inherited(const char *name)
{
        return !strcmp(name, "metadata.broker.list") ||
               !strcmp(name, "bootstrap.servers") ||
               !strcmp(name, "security.protocol") ||
               !strcmp(name, "client.rack") || !strncmp(name, "sasl.", 5) ||
               !strncmp(name, "ssl.", 4);
}

/** @brief Appends @p name = @p value to p->props (a later one wins when
 *         the conf is made). @returns 0 or -1 (ENOMEM). */
static int add_prop(ks_publish_t *p, const char *name, const char *value)
{
        char **n = realloc(p->props, (p->prop_cnt + 1) * 2 * sizeof(char *));

        if (!n)
                return -1;
        p->props               = n;
        n[2 * p->prop_cnt]     = strdup(name);
        n[2 * p->prop_cnt + 1] = strdup(value);
        p->prop_cnt++;
        return n[2 * p->prop_cnt - 2] && n[2 * p->prop_cnt - 1] ? 0 : -1;
}

/**
 * @brief Copies the host's connection properties: those of its
 *        configuration that differ from librdkafka's defaults (an unset
 *        ssl.* stays unset), callbacks and pointers never.
 * @returns 0 or -1 (ENOMEM).
 */
static int inherit(ks_publish_t *p, const rd_kafka_conf_t *host_conf)
{
        rd_kafka_conf_t *def = ks_rdk.rd_kafka_conf_new();
        const char     **hv, **dv = NULL;
        size_t           hn = 0, dn = 0, i, j;
        int              r = 0;

        /* rd_kafka_conf_dump() does not modify the configuration */
        hv = ks_rdk.rd_kafka_conf_dump((rd_kafka_conf_t *)host_conf, &hn);
        if (def)
                dv = ks_rdk.rd_kafka_conf_dump(def, &dn);
        for (i = 0; i + 1 < hn && !r; i += 2) {
                const char *v = hv[i + 1] ? hv[i + 1] : "";
                if (!inherited(hv[i]) || ks_config_report_prop_refused(hv[i]))
                        continue;
                for (j = 0; j + 1 < dn; j += 2)
                        if (!strcmp(dv[j], hv[i]))
                                break;
                if (j + 1 < dn && !strcmp(dv[j + 1] ? dv[j + 1] : "", v))
                        continue; /* librdkafka's default */
                r = add_prop(p, hv[i], v);
        }
        ks_rdk.rd_kafka_conf_dump_free(hv, hn);
        if (dv)
                ks_rdk.rd_kafka_conf_dump_free(dv, dn);
        if (def)
                ks_rdk.rd_kafka_conf_destroy(def);
        return r;
}

ks_publish_t *ks_publish_new(const rd_kafka_conf_t *host_conf,
                             const ks_config_t *kconf, const char *client_id,
                             int64_t started_at_ms)
{
        ks_publish_t *p;
        size_t        i;

        if (!kconf->report_topic)
                return NULL;
        if (!(p = calloc(1, sizeof(*p))) ||
            !(p->topic = strdup(kconf->report_topic))) {
                free(p);
                ks_warn_log_line(stderr, 4, client_id,
                                 "%s: out of memory: no report topic",
                                 KS_WARN_REPORT_TOPIC_FAILED);
                return NULL;
        }
        p->flush_ms      = kconf->report_topic_flush_ms;
        p->pid           = (long)getpid();
        p->started_at_ms = started_at_ms;
        snprintf(p->client_id, sizeof(p->client_id), "%s", client_id);
        snprintf(p->name, sizeof(p->name), "%s", client_id);
        if (gethostname(p->host, sizeof(p->host)))
                snprintf(p->host, sizeof(p->host), "?");
        p->host[sizeof(p->host) - 1] = '\0';
        pthread_mutex_init(&p->lock, NULL);
        pthread_cond_init(&p->cond, NULL);
        ks_warn_list_init(&p->pending);
        /* inherited first, keyshift.report.topic.X after: they win */
        if (inherit(p, host_conf))
                warn_once(p, 0, "oom",
                          "out of memory copying the host's "
                          "connection properties");
        for (i = 0; i < kconf->report_topic_prop_cnt; i++)
                if (add_prop(p, kconf->report_topic_props[2 * i],
                             kconf->report_topic_props[2 * i + 1]))
                        warn_once(p, 0, "oom", "out of memory");
        return p;
}

/** @brief A log line of the record producer: dropped (its failures are
 *         said once per cause through error_cb and delivery reports). */
static void log_cb(const rd_kafka_t *rk, int level, const char *fac,
                   const char *buf)
{
        (void)rk, (void)level, (void)fac, (void)buf;
}

/** @locality the publisher thread (rd_kafka_poll()). */
static void error_cb(rd_kafka_t *rk, int err, const char *reason, void *opaque)
{
        char cause[48];

        (void)rk;
        snprintf(cause, sizeof(cause), KS_PUBLISH_ERR_CAUSE, err);
        warn_once(opaque, 0, cause, "%s: %s",
                  ks_rdk.rd_kafka_err2str((rd_kafka_resp_err_t)err), reason);
}

/** @locality the publisher thread (rd_kafka_poll()). */
static void dr_msg_cb(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
        char cause[48];

        (void)rk;
        if (!m->err) {
                ks_publish_t *p = opaque;
                pthread_mutex_lock(&p->lock);
                p->delivered++;
                p->last_delivered_ms = wall_ms();
                pthread_mutex_unlock(&p->lock);
                return;
        }
        /* purged at destroy: said once, with the count, by publish_main */
        if (m->err == RD_KAFKA_RESP_ERR__PURGE_QUEUE ||
            m->err == RD_KAFKA_RESP_ERR__PURGE_INFLIGHT)
                return;
        snprintf(cause, sizeof(cause), KS_PUBLISH_ERR_CAUSE, (int)m->err);
        warn_once(opaque, 1, cause, "a record was not delivered: %s",
                  ks_rdk.rd_kafka_err2str(m->err));
}

/**
 * @brief Asks the cluster to create the report topic (compacted, 7 days'
 *        retention of deleted keys, its default partitions and
 *        replication), without waiting: "already exists" is the usual
 *        answer, and a refusal is said only if producing fails too.
 */
static void create_topic(ks_publish_t *p)
{
        rd_kafka_NewTopic_t     *nt;
        rd_kafka_AdminOptions_t *opt;
        char                     err[256];

        nt = ks_rdk.rd_kafka_NewTopic_new(p->topic, -1, -1, err, sizeof(err));
        if (!nt)
                return;
        ks_rdk.rd_kafka_NewTopic_set_config(nt, "cleanup.policy", "compact");
        ks_rdk.rd_kafka_NewTopic_set_config(nt, "delete.retention.ms",
                                            KS_PUBLISH_DELETE_RETENTION_MS);
        p->admin_q = ks_rdk.rd_kafka_queue_new(p->rk);
        opt        = ks_rdk.rd_kafka_AdminOptions_new(p->rk,
                                                      RD_KAFKA_ADMIN_OP_CREATETOPICS);
        ks_rdk.rd_kafka_AdminOptions_set_request_timeout(
            opt, KS_PUBLISH_ADMIN_TIMEOUT_MS, err, sizeof(err));
        ks_rdk.rd_kafka_CreateTopics(p->rk, &nt, 1, opt, p->admin_q);
        ks_rdk.rd_kafka_AdminOptions_destroy(opt);
        ks_rdk.rd_kafka_NewTopic_destroy(nt);
}

/** @returns 1 if @p e says the request got no answer from the cluster
 *           (down, unreachable, no controller yet): worth sending again. */
static int unanswered(rd_kafka_resp_err_t e)
{
        switch (e) {
        case RD_KAFKA_RESP_ERR__TIMED_OUT:
        case RD_KAFKA_RESP_ERR__TIMED_OUT_QUEUE:
        case RD_KAFKA_RESP_ERR__TRANSPORT:
        case RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN:
        case RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT:
        case RD_KAFKA_RESP_ERR_NOT_CONTROLLER:
                return 1;
        default:
                return 0;
        }
}

/** @brief Reads the CreateTopics answer, if it came: logged at info
 *         level when the topic was created or could not be; unanswered
 *         (the cluster down when the producer started, for longer than
 *         the request's timeout), sent again after a backoff, else the
 *         topic would never be created while the records wait for it. */
static void take_create_result(ks_publish_t *p)
{
        rd_kafka_event_t                     *ev;
        const rd_kafka_CreateTopics_result_t *res;
        const rd_kafka_topic_result_t       **tr = NULL;
        size_t                                n  = 0;
        rd_kafka_resp_err_t                   e;

        if (!p->admin_q || !(ev = ks_rdk.rd_kafka_queue_poll(p->admin_q, 0)))
                return;
        /* a request-level error (timed out) comes with no topic result */
        if ((res = ks_rdk.rd_kafka_event_CreateTopics_result(ev)))
                tr = ks_rdk.rd_kafka_CreateTopics_result_topics(res, &n);
        e = tr && n == 1 ? ks_rdk.rd_kafka_topic_result_error(tr[0])
                         : ks_rdk.rd_kafka_event_error(ev);
        if (unanswered(e)) { /* the cluster is away: again later */
                p->create_backoff_ms = p->create_backoff_ms
                                           ? 2 * p->create_backoff_ms
                                           : KS_PUBLISH_CREATE_BACKOFF_MS;
                if (p->create_backoff_ms > KS_PUBLISH_CREATE_BACKOFF_MAX)
                        p->create_backoff_ms = KS_PUBLISH_CREATE_BACKOFF_MAX;
                p->create_again_ms = mono_ms() + p->create_backoff_ms;
        } else if (!e)
                ks_warn_log_line(stderr, 6, p->name,
                                 "created the report topic %s (compacted)",
                                 p->topic);
        else if (e != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS)
                ks_warn_log_line(
                    stderr, 6, p->name,
                    "could not create the report topic %s (%s: %s); records "
                    "go to it if it exists",
                    p->topic, ks_rdk.rd_kafka_err2str(e),
                    tr && n == 1 &&
                            ks_rdk.rd_kafka_topic_result_error_string(tr[0])
                        ? ks_rdk.rd_kafka_topic_result_error_string(tr[0])
                        : "");
        ks_rdk.rd_kafka_event_destroy(ev);
        ks_rdk.rd_kafka_queue_destroy(p->admin_q);
        p->admin_q = NULL;
}

/** @brief Makes the record producer. @returns 0, or -1 (warned). */
static int make_producer(ks_publish_t *p)
{
        rd_kafka_conf_t *conf = ks_rdk.rd_kafka_conf_new();
        char             err[512];
        size_t           i;
        /* keyshift's settings first, so the inherited and the user's
         * keyshift.report.topic.X win */
        static const char *const base[] = {
            "client.id",
            "keyshift-report",
            "compression.codec",
            "lz4",
            "linger.ms",
            "100",
            "allow.auto.create.topics",
            "false",
            /* the memory records may hold while the cluster is away:
             * past it, newer records are dropped (REPORT_TOPIC_FAILED,
             * queue full) rather than the host's memory taken */
            "queue.buffering.max.messages",
            "20000",
            "queue.buffering.max.kbytes",
            "32768",
            "message.timeout.ms",
            "300000",
        };

        if (!conf) {
                warn_once(p, 0, "oom", "out of memory");
                return -1;
        }
        for (i = 0; i < sizeof(base) / sizeof(base[0]); i += 2)
                ks_rdk.rd_kafka_conf_set(conf, base[i], base[i + 1], err,
                                         sizeof(err));
        for (i = 0; i < p->prop_cnt; i++)
                if (ks_rdk.rd_kafka_conf_set(conf, p->props[2 * i],
                                             p->props[2 * i + 1], err,
                                             sizeof(err)) != RD_KAFKA_CONF_OK)
                        warn_once(p, 0, p->props[2 * i],
                                  "property %s not set: %s", p->props[2 * i],
                                  err);
        ks_rdk.rd_kafka_conf_set_opaque(conf, p);
        ks_rdk.rd_kafka_conf_set_log_cb(conf, log_cb);
        ks_rdk.rd_kafka_conf_set_error_cb(conf, error_cb);
        ks_rdk.rd_kafka_conf_set_dr_msg_cb(conf, dr_msg_cb);
        p->rk = ks_rdk.rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
        if (!p->rk) {
                ks_rdk.rd_kafka_conf_destroy(conf);
                warn_once(p, 0, "new", "cannot create its producer: %s", err);
                return -1;
        }
        p->rkt = ks_rdk.rd_kafka_topic_new(p->rk, p->topic, NULL);
        create_topic(p);
        return 0;
}

/** @brief Hands one record to the record producer (copied). */
static void produce(ks_publish_t *p, ks_pub_rec_t *r)
{
        if (p->rkt && ks_rdk.rd_kafka_produce(
                          p->rkt, RD_KAFKA_PARTITION_UA, RD_KAFKA_MSG_F_COPY,
                          r->val, r->val_len, r->key, r->key_len, NULL) == -1) {
                rd_kafka_resp_err_t e = ks_rdk.rd_kafka_last_error();
                char                cause[48];
                snprintf(cause, sizeof(cause), KS_PUBLISH_ERR_CAUSE, (int)e);
                warn_once(p, 1, cause, "a record was not queued: %s",
                          ks_rdk.rd_kafka_err2str(e));
        }
}

static void rec_free(ks_pub_rec_t *r)
{
        free(r->key);
        free(r->val);
        r->key = r->val = NULL;
}

/** @brief The publisher thread: makes the record producer at the first
 *         record, produces what is queued, serves its callbacks; at stop,
 *         waits for its records until the deadline, then purges. */
static void *publish_main(void *arg)
{
        ks_publish_t *p     = arg;
        ks_pub_rec_t *batch = calloc(KS_PUBLISH_QUEUE_MAX, sizeof(*batch));
        size_t        n, i;
        int           stop;
        int64_t       deadline;

        pthread_setname_np(pthread_self(), "ks:publish");
        for (;;) {
                pthread_mutex_lock(&p->lock);
                if (!p->q_cnt && !p->stop && !p->rk) {
                        struct timespec ts;
                        clock_gettime(CLOCK_REALTIME, &ts);
                        ts.tv_nsec += KS_PUBLISH_POLL_MS * 1000000L;
                        if (ts.tv_nsec >= 1000000000L) {
                                ts.tv_sec++;
                                ts.tv_nsec -= 1000000000L;
                        }
                        pthread_cond_timedwait(&p->cond, &p->lock, &ts);
                }
                n = batch ? p->q_cnt : 0;
                if (n)
                        memcpy(batch, p->q, n * sizeof(*batch));
                p->q_cnt -= n;
                stop     = p->stop;
                deadline = p->deadline_ms;
                pthread_mutex_unlock(&p->lock);

                if (n && !p->rk && !p->create_failed)
                        p->create_failed = make_producer(p) != 0;
                if (n && !p->rk) { /* no producer: these cannot go */
                        pthread_mutex_lock(&p->lock);
                        p->failed += n;
                        pthread_mutex_unlock(&p->lock);
                }
                for (i = 0; i < n; i++) {
                        if (p->rk)
                                produce(p, &batch[i]);
                        rec_free(&batch[i]);
                }
                if (stop)
                        break;
                if (p->rk) {
                        if (p->create_again_ms && !p->admin_q &&
                            mono_ms() >= p->create_again_ms) {
                                p->create_again_ms = 0;
                                create_topic(p);
                        }
                        take_create_result(p);
                        ks_rdk.rd_kafka_poll(p->rk, KS_PUBLISH_POLL_MS);
                }
        }
        if (p->rk) {
                int64_t left;
                while (ks_rdk.rd_kafka_outq_len(p->rk) > 0 &&
                       (left = deadline - mono_ms()) > 0)
                        ks_rdk.rd_kafka_poll(p->rk, left < 50 ? (int)left : 50);
                if (ks_rdk.rd_kafka_outq_len(p->rk) > 0)
                        warn_once(p, 0, "flush",
                                  "%d records not delivered within "
                                  "keyshift.report.topic.flush.ms=%lld",
                                  ks_rdk.rd_kafka_outq_len(p->rk),
                                  (long long)p->flush_ms);
                ks_rdk.rd_kafka_purge(p->rk, RD_KAFKA_PURGE_F_QUEUE |
                                                 RD_KAFKA_PURGE_F_INFLIGHT |
                                                 RD_KAFKA_PURGE_F_NON_BLOCKING);
                ks_rdk.rd_kafka_poll(p->rk, 0);
                take_create_result(p);
                if (p->admin_q)
                        ks_rdk.rd_kafka_queue_destroy(p->admin_q);
                if (p->rkt)
                        ks_rdk.rd_kafka_topic_destroy(p->rkt);
                ks_rdk.rd_kafka_destroy(p->rk);
                p->rk = NULL;
        }
        free(batch);
        return NULL;
}

/** @brief Queues one record (key and value taken), replacing a queued
 *         one of the same key; full: dropped and warned. @locks p->lock */
static void enqueue(ks_publish_t *p, char *key, size_t key_len, char *val,
                    size_t val_len)
{
        size_t i;

        pthread_mutex_lock(&p->lock);
        for (i = 0; i < p->q_cnt; i++)
                if (p->q[i].key_len == key_len &&
                    !memcmp(p->q[i].key, key, key_len))
                        break;
        if (i < p->q_cnt) {
                rec_free(&p->q[i]);
        } else if (p->q_cnt == KS_PUBLISH_QUEUE_MAX) {
                pthread_mutex_unlock(&p->lock);
                free(key);
                free(val);
                warn_once(p, 1, "queue",
                          "more than %d records waiting: the "
                          "newest were dropped",
                          KS_PUBLISH_QUEUE_MAX);
                return;
        } else {
                p->q_cnt++;
        }
        p->queued++;
        p->q[i] = (ks_pub_rec_t){key, val, key_len, val_len};
        pthread_cond_signal(&p->cond);
        pthread_mutex_unlock(&p->lock);
}

/** @returns a copy of @p n bytes of @p s, NUL-terminated (NULL: ENOMEM). */
static char *dup_bytes(const char *s, size_t n)
{
        char *d = malloc(n + 1);

        if (d) {
                memcpy(d, s, n);
                d[n] = '\0';
        }
        return d;
}

/** @brief Forgets the records of the last report. */
static void last_clear(ks_publish_t *p)
{
        size_t i;

        for (i = 0; i < p->last_cnt; i++)
                rec_free(&p->last[i]);
        p->last_cnt = 0;
}

/** @brief Remembers a copy of record @p k / @p v for the unchanged reports
 *         that follow; on ENOMEM forgets them all (the next unchanged
 *         report is read back again). @returns 0, or -1 on ENOMEM. */
static int last_add(ks_publish_t *p, const char *k, size_t kl, const char *v,
                    size_t vl)
{
        ks_pub_rec_t r;

        if (p->last_cnt == p->last_cap) {
                size_t        cap = p->last_cap ? 2 * p->last_cap : 8;
                ks_pub_rec_t *n   = realloc(p->last, cap * sizeof(*n));
                if (!n)
                        goto oom;
                p->last     = n;
                p->last_cap = cap;
        }
        r = (ks_pub_rec_t){dup_bytes(k, kl), dup_bytes(v, vl), kl, vl};
        if (!r.key || !r.val) {
                rec_free(&r);
                goto oom;
        }
        p->last[p->last_cnt++] = r;
        return 0;
oom:
        last_clear(p);
        return -1;
}

/** @returns the key of topic @p name's records (NULL or "": the
 *           producer's own), compact JSON to free; NULL on ENOMEM. */
static char *record_key(const ks_publish_t *p, const char *name)
{
        json_t *key = json_pack(
            "{s:i, s:s, s:s, s:I, s:I, s:s}", "v", 1, "client_id", p->client_id,
            "host", p->host, "pid", (json_int_t)p->pid, "started_at_ms",
            (json_int_t)p->started_at_ms, "topic", name ? name : "");
        char *k =
            key ? json_dumps(key, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;

        json_decref(key);
        return k;
}

/** @brief Queues record @p k / @p v (both taken; NULL: ENOMEM, warned),
 *         and remembers it (@p *remember set to 0 once that failed). */
static void queue_built(ks_publish_t *p, char *k, char *v, size_t vl,
                        int *remember)
{
        size_t kl;

        if (!k || !v) {
                free(k);
                free(v);
                warn_once(p, 1, "oom", "out of memory building a record");
                return;
        }
        kl = strlen(k);
        if (*remember && last_add(p, k, kl, v, vl))
                *remember = 0;
        enqueue(p, k, kl, v, vl);
}

/** @brief Queues the record of @p topic (NULL: the producer's own, with
 *         no topic) of report @p root, read back from its file, and
 *         remembers it (@p *remember set to 0 once that failed). */
static void queue_record(ks_publish_t *p, json_t *root, const char *name,
                         json_t *topic, int *remember)
{
        json_t *val = json_copy(root); /* shallow: the members are shared */
        char   *v   = NULL;

        if (val) {
                json_object_set_new(val, "topics",
                                    topic ? json_pack("{s:O}", name, topic)
                                          : json_object());
                if (topic)
                        json_object_set(val, "messages",
                                        json_object_get(topic, "messages"));
                else
                        json_object_set_new(val, "messages", json_integer(0));
                v = json_dumps(val, JSON_COMPACT | JSON_PRESERVE_ORDER);
        }
        queue_built(p, record_key(p, name), v, v ? strlen(v) : 0, remember);
        json_decref(val);
}

/**
 * @brief Queues the record of topic text @p t (NULL: the producer's own)
 *        built from the report's texts as the reporter wrote them, with
 *        no parsing: @p head (the report up to its `topics`, without the
 *        closing brace), `"topics":{` the topic's text `}`, its messages
 *        (0 for the producer's own), and the report's @p warnings: the
 *        report file with the other topics left out, as queue_record()
 *        builds it from the file. Remembers it as queue_built() does.
 */
static void queue_text(ks_publish_t *p, const ks_report_text_t *head,
                       const ks_pub_text_t *t, const ks_report_text_t *warnings,
                       int *remember)
{
        ks_report_text_t v = {0};
        char             num[32];

        (void)ks_report_text_append(&v, head->b, head->len);
        (void)ks_report_text_append(&v, ",\"topics\":{", 11);
        if (t)
                (void)ks_report_text_append(&v, t->text, t->len);
        snprintf(num, sizeof(num), "},\"messages\":%llu,\"warnings\":",
                 (unsigned long long)(t ? t->messages : 0));
        (void)ks_report_text_append(&v, num, strlen(num));
        (void)ks_report_text_append(&v, warnings->b, warnings->len);
        if (ks_report_text_append(&v, "}", 2)) /* with its NUL */
                ks_report_text_free(&v);
        queue_built(p, record_key(p, t ? t->name : NULL), v.b,
                    v.b ? v.len - 1 : 0, remember);
}

/** @brief Forgets the topics' texts gathered for the next report. */
static void texts_clear(ks_publish_t *p)
{
        size_t i;

        for (i = 0; i < p->text_cnt; i++) {
                free(p->texts[i].name);
                free(p->texts[i].text);
        }
        p->text_cnt     = 0;
        p->texts_failed = 0;
}

void ks_publish_report_begin(ks_publish_t *p)
{
        if (p)
                texts_clear(p);
}

void ks_publish_topic_text(void *arg, const char *name, const char *text,
                           size_t len, uint64_t messages)
{
        ks_publish_t  *p = arg;
        ks_pub_text_t *t;

        if (!p || p->texts_failed)
                return;
        if (!text) { /* not kept (ENOMEM): the file is read back */
                p->texts_failed = 1;
                return;
        }
        if (p->text_cnt == p->text_cap) {
                size_t cap = p->text_cap ? 2 * p->text_cap : 8;
                if (!(t = realloc(p->texts, cap * sizeof(*t)))) {
                        p->texts_failed = 1;
                        return;
                }
                p->texts    = t;
                p->text_cap = cap;
        }
        t           = &p->texts[p->text_cnt];
        t->name     = strdup(name);
        t->text     = dup_bytes(text, len);
        t->len      = len;
        t->messages = messages;
        if (!t->name || !t->text) {
                free(t->name);
                free(t->text);
                p->texts_failed = 1;
                return;
        }
        p->text_cnt++;
}

void ks_publish_report(ks_publish_t *p, const char *report_path,
                       const ks_report_text_t *head,
                       const ks_report_text_t *warnings, const char *name,
                       int unchanged)
{
        json_error_t jerr;
        json_t      *root, *topics, *t;
        const char  *tn;
        size_t       i;
        int          remember = 1;

        if (!p)
                return;
        pthread_mutex_lock(&p->lock);
        snprintf(p->name, sizeof(p->name), "%s", name);
        if (!p->thread_running && !p->stop &&
            !pthread_create(&p->thread, NULL, publish_main, p))
                p->thread_running = 1;
        pthread_mutex_unlock(&p->lock);
        if (unchanged && p->last_cnt) { /* the same records again */
                int again = 0;          /* remembered already */
                for (i = 0; i < p->last_cnt; i++)
                        queue_built(
                            p, dup_bytes(p->last[i].key, p->last[i].key_len),
                            dup_bytes(p->last[i].val, p->last[i].val_len),
                            p->last[i].val_len, &again);
                texts_clear(p);
                return;
        }
        last_clear(p);
        if (head && warnings && !head->failed && !warnings->failed &&
            head->len && warnings->len && !p->texts_failed) {
                /* built from what the reporter wrote: no read-back */
                for (i = 0; i < p->text_cnt; i++)
                        queue_text(p, head, &p->texts[i], warnings, &remember);
                queue_text(p, head, NULL, warnings, &remember);
                if (!remember)
                        last_clear(p);
                texts_clear(p);
                return;
        }
        texts_clear(p);
        if (!(root = json_load_file(report_path, 0, &jerr))) {
                warn_once(p, 0, "read", "cannot read the report back (%s): %s",
                          report_path, jerr.text);
                return;
        }
        topics = json_object_get(root, "topics");
        json_object_foreach(topics, tn, t)
            queue_record(p, root, tn, t, &remember);
        queue_record(p, root, NULL, NULL, &remember);
        if (!remember) /* incomplete: read back the next time */
                last_clear(p);
        json_decref(root);
}

void ks_publish_take_warnings(ks_publish_t *p, ks_warn_list_t *wl)
{
        size_t i;

        if (!p)
                return;
        pthread_mutex_lock(&p->lock);
        for (i = 0; i < p->pending.cnt; i++)
                ks_warn_add(wl, p->pending.items[i].code, NULL, "%s",
                            p->pending.items[i].message);
        ks_warn_list_clear(&p->pending);
        pthread_mutex_unlock(&p->lock);
}

int ks_publish_state(ks_publish_t *p, ks_report_publish_t *out, char *err,
                     size_t errsz)
{
        if (!p)
                return 0;
        pthread_mutex_lock(&p->lock);
        snprintf(err, errsz, "%s", p->last_error);
        *out = (ks_report_publish_t){
            p->topic, p->queued,        p->delivered,        p->failed,
            err,      p->last_error_ms, p->last_delivered_ms};
        pthread_mutex_unlock(&p->lock);
        return 1;
}

void ks_publish_destroy(ks_publish_t *p)
{
        size_t i;

        if (!p)
                return;
        pthread_mutex_lock(&p->lock);
        p->stop        = 1;
        p->deadline_ms = mono_ms() + p->flush_ms;
        pthread_cond_signal(&p->cond);
        pthread_mutex_unlock(&p->lock);
        if (p->thread_running)
                pthread_join(p->thread, NULL);
        /* raised after the final report took its warnings */
        for (i = 0; i < p->pending.cnt; i++)
                ks_warn_log_line(stderr, 4, p->name, "%s: %s",
                                 p->pending.items[i].code,
                                 p->pending.items[i].message);
        for (i = 0; i < p->q_cnt; i++)
                rec_free(&p->q[i]);
        last_clear(p);
        free(p->last);
        texts_clear(p);
        free(p->texts);
        for (i = 0; i < 2 * p->prop_cnt; i++)
                free(p->props[i]);
        free(p->props);
        ks_warn_list_clear(&p->pending);
        pthread_cond_destroy(&p->cond);
        pthread_mutex_destroy(&p->lock);
        free(p->topic);
        free(p);
}
