/**
 * @file ksb_stage.c
 * @brief Phase 2 prototype: per-thread staging buffers drained by
 *        keyshift's own thread, on a real producer's produce path.
 *
 * The application registers an interceptor itself (rd_kafka_conf_
 * interceptor_add_on_new, then on_send), so the prototype runs where
 * libkeyshift.so's on_send runs, without touching plugin/ or core/:
 *  - on_send (application thread): the topic from a one-entry per-thread
 *    cache keyed by the rkt pointer (registry lookup on a miss), then one
 *    64-byte entry (topic, key up to 40 bytes, lengths, partition) written
 *    into the thread's single-producer single-consumer ring and published
 *    with a release store. No lock, no hashing, no clock read. A full
 *    ring falls back to ks_topic_record() inline (counted), so nothing is
 *    lost and nothing blocks;
 *    A thread's ring is recycled when the thread exits (a pthread key
 *    destructor marks it orphaned; a new thread adopts an orphaned ring
 *    once it is drained), so threads that come and go do not pile up
 *    rings;
 *  - keyshift's thread drains every ring (acquire loads) and calls the
 *    unchanged ks_topic_record() for each entry, then sleeps 200 us when
 *    all are empty.
 * Compared A/B with the same producer without any interceptor, as
 * ksb_produce --queue does (queue only, rounds alternating AB/BA, 1, 2 and
 * 8 threads), with the process's CPU counted until the rings are drained
 * (so keyshift's thread's work is in "CPU per message"), and a
 * single-thread per-call latency round. At the end the topic must have
 * counted every message produced.
 *
 * Usage: ksb_stage [--threads 1,2,8] [--msgs M] [--rounds R]
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ksb_keys.h"
#include "ksb_producer.h"
#include "ksb_stats.h"
#include "ksb_topics.h"

#define KSB_TOPIC "ais"
#define KSB_RING 16384 /* entries per thread: 1 MiB */
#define KSB_KEY_INLINE 40
#define KSB_RINGS_MAX 64
#define KSB_ROUNDS_MAX 64

typedef struct entry {
        ks_topic_t *t;
        uint32_t    keylen;
        uint32_t    value_len;
        int32_t     partition;
        uint8_t     key_null;
        uint8_t     key[KSB_KEY_INLINE];
} entry_t;

typedef struct ring {
        _Alignas(64) atomic_size_t head; /**< written by the app thread */
        size_t     tail_cache;           /**< app thread's view of tail */
        atomic_int orphaned;             /**< its thread has exited */
        _Alignas(64) atomic_size_t tail; /**< written by the drainer */
        _Alignas(64) entry_t e[KSB_RING];
} ring_t;

typedef struct stage {
        ksb_topics_t    kt;
        pthread_mutex_t lock; /**< protects ring registration */
        ring_t         *rings[KSB_RINGS_MAX];
        atomic_int      nrings;
        atomic_int      stop;
        atomic_size_t   inline_records;
        pthread_t       drainer;
} stage_t;

static _Thread_local ring_t     *tls_ring;
static _Thread_local const void *tls_rkt;
static _Thread_local ks_topic_t *tls_topic;

/** @brief Thread-exit destructor: the ring may be adopted by a new thread
 *         once keyshift's thread has drained it. */
static void ring_orphan(void *arg)
{
        ring_t *r = arg;

        atomic_store_explicit(&r->orphaned, 1, memory_order_release);
}

static pthread_key_t  ring_key;
static pthread_once_t ring_key_once = PTHREAD_ONCE_INIT;

static void ring_key_init(void)
{
        pthread_key_create(&ring_key, ring_orphan);
}

/**
 * @returns the calling thread's ring: its own, an orphaned ring that is
 *          empty (a thread that exited), or a new one; NULL when
 *          KSB_RINGS_MAX are all in use (then the thread records inline,
 *          and remembers that it has no ring for the next 4096 messages).
 */
static ring_t *ring_for_thread(stage_t *s)
{
        static _Thread_local unsigned retry_in;
        ring_t                       *r = NULL;
        int                           n, i;

        if (tls_ring)
                return tls_ring;
        if (retry_in) {
                retry_in--;
                return NULL;
        }
        pthread_once(&ring_key_once, ring_key_init);
        pthread_mutex_lock(&s->lock);
        n = atomic_load(&s->nrings);
        for (i = 0; i < n && !r; i++) {
                ring_t *o = s->rings[i];
                if (atomic_load_explicit(&o->orphaned, memory_order_acquire) &&
                    atomic_load(&o->head) == atomic_load(&o->tail)) {
                        atomic_store(&o->orphaned, 0);
                        o->tail_cache = atomic_load(&o->tail);
                        r             = o;
                }
        }
        if (!r && n < KSB_RINGS_MAX && (r = aligned_alloc(64, sizeof(*r)))) {
                memset(r, 0, sizeof(*r));
                s->rings[n] = r;
                atomic_store_explicit(&s->nrings, n + 1, memory_order_release);
        }
        pthread_mutex_unlock(&s->lock);
        if (!r) {
                retry_in = 4096;
                return NULL;
        }
        pthread_setspecific(ring_key, r);
        return tls_ring = r;
}

static rd_kafka_resp_err_t stage_on_send(rd_kafka_t *rk, rd_kafka_message_t *m,
                                         void *opaque)
{
        stage_t *s = opaque;
        ring_t  *r;
        entry_t *e;
        size_t   head;
        (void)rk;

        if (!m->rkt)
                return RD_KAFKA_RESP_ERR_NO_ERROR;
        if (m->rkt != tls_rkt) {
                tls_topic =
                    ksb_topics_add(&s->kt, rd_kafka_topic_name(m->rkt), 6);
                tls_rkt = m->rkt;
        }
        r = ring_for_thread(s);
        if (!r || m->key_len > KSB_KEY_INLINE)
                goto record_inline;
        head = atomic_load_explicit(&r->head, memory_order_relaxed);
        if (head - r->tail_cache >= KSB_RING) {
                r->tail_cache =
                    atomic_load_explicit(&r->tail, memory_order_acquire);
                if (head - r->tail_cache >= KSB_RING)
                        goto record_inline;
        }
        e            = &r->e[head % KSB_RING];
        e->t         = tls_topic;
        e->keylen    = (uint32_t)m->key_len;
        e->value_len = (uint32_t)m->len;
        e->partition = m->partition;
        e->key_null  = m->key == NULL;
        if (m->key_len)
                memcpy(e->key, m->key, m->key_len);
        atomic_store_explicit(&r->head, head + 1, memory_order_release);
        return RD_KAFKA_RESP_ERR_NO_ERROR;

record_inline:
        atomic_fetch_add_explicit(&s->inline_records, 1, memory_order_relaxed);
        ks_topic_record(tls_topic, m->key, m->key_len, m->partition, m->len);
        return RD_KAFKA_RESP_ERR_NO_ERROR;
}

/** @returns entries drained from every ring. @locality keyshift's thread. */
static size_t drain_once(stage_t *s)
{
        int    n = atomic_load_explicit(&s->nrings, memory_order_acquire), i;
        size_t total = 0;

        for (i = 0; i < n; i++) {
                ring_t *r = s->rings[i];
                size_t  tail =
                    atomic_load_explicit(&r->tail, memory_order_relaxed);
                size_t head =
                    atomic_load_explicit(&r->head, memory_order_acquire);
                for (; tail != head; tail++) {
                        const entry_t *e = &r->e[tail % KSB_RING];
                        ks_topic_record(e->t, e->key_null ? NULL : e->key,
                                        e->keylen, e->partition, e->value_len);
                        if ((tail & 255) == 255) /* free space as we go */
                                atomic_store_explicit(&r->tail, tail + 1,
                                                      memory_order_release);
                        total++;
                }
                atomic_store_explicit(&r->tail, tail, memory_order_release);
        }
        return total;
}

static void *drainer_main(void *arg)
{
        stage_t        *s  = arg;
        struct timespec ts = {0, 200000};

        while (!atomic_load(&s->stop))
                if (!drain_once(s))
                        nanosleep(&ts, NULL);
        drain_once(s);
        return NULL;
}

/** @returns 1 when every ring is empty. */
static int drained(stage_t *s)
{
        int n = atomic_load(&s->nrings), i;

        for (i = 0; i < n; i++)
                if (atomic_load(&s->rings[i]->head) !=
                    atomic_load(&s->rings[i]->tail))
                        return 0;
        return 1;
}

static rd_kafka_resp_err_t stage_on_new(rd_kafka_t            *rk,
                                        const rd_kafka_conf_t *conf,
                                        void *opaque, char *errstr,
                                        size_t errstr_size)
{
        (void)conf, (void)errstr, (void)errstr_size;
        return rd_kafka_interceptor_add_on_send(rk, "ksb-stage", stage_on_send,
                                                opaque);
}

/* ---- the A/B rounds (as ksb_produce.c) ---- */

static char ksb_value[64];

typedef struct worker {
        rd_kafka_t        *rk;
        rd_kafka_topic_t  *rkt;
        const ksb_key_t   *msgs;
        size_t             n;
        pthread_barrier_t *go;
} worker_t;

static void produce_one(rd_kafka_t *rk, rd_kafka_topic_t *rkt,
                        const ksb_key_t *k)
{
        while (rd_kafka_produce(rkt, RD_KAFKA_PARTITION_UA, RD_KAFKA_MSG_F_COPY,
                                ksb_value, sizeof(ksb_value), k->bytes, k->len,
                                NULL) == -1)
                rd_kafka_poll(rk, 1);
}

static void *worker_main(void *arg)
{
        worker_t *w = arg;
        size_t    i;

        pthread_barrier_wait(w->go);
        for (i = 0; i < w->n; i++)
                produce_one(w->rk, w->rkt, &w->msgs[i]);
        return NULL;
}

typedef struct block {
        double rate, cpu_per_msg;
} block_t;

static block_t run_block(rd_kafka_t *rk, rd_kafka_topic_t *rkt, stage_t *s,
                         const ksb_stream_t *st, size_t off, size_t n,
                         int threads)
{
        pthread_t         th[64];
        worker_t          w[64];
        pthread_barrier_t go;
        size_t            per = n / (size_t)threads;
        uint64_t          t0, t1, c0, c1;
        block_t           b;
        int               i;

        if (off + n > st->n)
                off = 0;
        pthread_barrier_init(&go, NULL, (unsigned)threads + 1);
        for (i = 0; i < threads; i++) {
                w[i] = (worker_t){rk, rkt, st->msgs + off + per * (size_t)i,
                                  per, &go};
                pthread_create(&th[i], NULL, worker_main, &w[i]);
        }
        c0 = ksb_process_cpu_ns();
        pthread_barrier_wait(&go);
        t0 = ksb_now_ns();
        for (i = 0; i < threads; i++)
                pthread_join(th[i], NULL);
        t1 = ksb_now_ns();
        while (s && !drained(s)) /* keyshift's deferred work counts too */
                usleep(100);
        c1 = ksb_process_cpu_ns();
        pthread_barrier_destroy(&go);
        ksb_producer_drain(rk);
        b.rate = (double)(per * (size_t)threads) / ((double)(t1 - t0) / 1e9);
        b.cpu_per_msg = (double)(c1 - c0) / (double)(per * (size_t)threads);
        return b;
}

int main(int argc, char **argv)
{
        const char *const props[] = {"keyshift.partitions.proposed", "12,16,24",
                                     NULL};
        int          tcounts[8] = {1, 2, 8}, tcnt = 3, rounds = 7, a, c, r, v;
        size_t       msgs = 400000, off = 0, produced = 0;
        ksb_stream_t st;
        stage_t      s;
        rd_kafka_t  *rk[2];
        rd_kafka_topic_t   *rkt[2];
        rd_kafka_conf_t    *conf;
        char                errstr[512];
        ks_topic_snapshot_t snap;
        uint32_t           *lat;
        double ratio[KSB_ROUNDS_MAX], cpu[KSB_ROUNDS_MAX], dmed[KSB_ROUNDS_MAX],
            dp99[KSB_ROUNDS_MAX];

        for (a = 1; a < argc; a++) {
                if (!strcmp(argv[a], "--msgs") && a + 1 < argc)
                        msgs = strtoull(argv[++a], NULL, 10);
                else if (!strcmp(argv[a], "--rounds") && a + 1 < argc)
                        rounds = atoi(argv[++a]);
                else if (!strcmp(argv[a], "--threads") && a + 1 < argc) {
                        char *p = argv[++a], *end;
                        for (tcnt = 0; *p && tcnt < 8; p = end) {
                                tcounts[tcnt++] = (int)strtol(p, &end, 10);
                                if (*end == ',')
                                        end++;
                        }
                } else
                        ksb_die("usage: ksb_stage [--threads 1,2,8] [--msgs M] "
                                "[--rounds R]");
        }
        if (rounds < 1 || rounds > KSB_ROUNDS_MAX)
                ksb_die("rounds: 1..%d", KSB_ROUNDS_MAX);
        memset(ksb_value, 'v', sizeof(ksb_value));
        memset(&s, 0, sizeof(s));
        ksb_topics_init(&s.kt, props);
        pthread_mutex_init(&s.lock, NULL);
        pthread_create(&s.drainer, NULL, drainer_main, &s);
        ksb_stream_zipf(&st, 4000000, 100000, 1.0, 0.01, 7);

        rk[0] = ksb_producer_new(KSB_QUEUE_ONLY, NULL, KSB_TOPIC, NULL);
        conf  = rd_kafka_conf_new();
        rd_kafka_conf_set(conf, "client.id", "ksb-staged", errstr,
                          sizeof(errstr));
        rd_kafka_conf_set(conf, "bootstrap.servers", "127.0.0.1:1", errstr,
                          sizeof(errstr));
        rd_kafka_conf_set(conf, "queue.buffering.max.messages", "10000000",
                          errstr, sizeof(errstr));
        rd_kafka_conf_set(conf, "queue.buffering.max.kbytes", "2147483647",
                          errstr, sizeof(errstr));
        rd_kafka_conf_set(conf, "message.timeout.ms", "0", errstr,
                          sizeof(errstr));
        rd_kafka_conf_set(conf, "log_level", "0", errstr, sizeof(errstr));
        rd_kafka_conf_interceptor_add_on_new(conf, "ksb-stage", stage_on_new,
                                             &s);
        rk[1] = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
        if (!rk[1])
                ksb_die("rd_kafka_new: %s", errstr);
        for (v = 0; v < 2; v++) {
                rkt[v] = rd_kafka_topic_new(rk[v], KSB_TOPIC, NULL);
                run_block(rk[v], rkt[v], v ? &s : NULL, &st, 0, msgs / 4, 1);
        }
        produced += msgs / 4;

        for (c = 0; c < tcnt; c++) {
                int  t = tcounts[c];
                char id[64], what[160];
                for (r = 0; r < rounds; r++) {
                        block_t b[2];
                        for (v = 0; v < 2; v++) {
                                int w = r % 2 ? 1 - v : v;
                                b[w]  = run_block(rk[w], rkt[w], w ? &s : NULL,
                                                  &st, off, msgs, t);
                        }
                        produced += msgs / (size_t)t * (size_t)t;
                        off += msgs;
                        ratio[r] = b[1].rate / b[0].rate;
                        cpu[r]   = b[1].cpu_per_msg - b[0].cpu_per_msg;
                        ksb_note(
                            "staged %d thread(s) round %d: without %.0f "
                            "msg/s, staged %.0f msg/s, ratio %.3f; CPU/msg "
                            "%.0f / %.0f ns",
                            t, r, b[0].rate, b[1].rate, ratio[r],
                            b[0].cpu_per_msg, b[1].cpu_per_msg);
                }
                snprintf(id, sizeof(id), "s.stage.queue.threads%d.ratio", t);
                snprintf(what, sizeof(what),
                         "PROTOTYPE staged: throughput with/without, queue "
                         "only, %d thread(s)",
                         t);
                ksb_result(id, what, ">=", 0.90, "x", ratio, (size_t)rounds);
                snprintf(id, sizeof(id), "s.stage.queue.threads%d.cpu", t);
                snprintf(what, sizeof(what),
                         "PROTOTYPE staged: CPU/msg with - without incl. "
                         "drainer, %d thread(s)",
                         t);
                ksb_result(id, what, "<=", 100, "ns", cpu, (size_t)rounds);
        }

        lat = malloc(msgs * sizeof(*lat));
        for (r = 0; r < rounds; r++) {
                double   med[2], p99[2];
                uint64_t ovh = ksb_tsc_overhead();
                for (v = 0; v < 2; v++) {
                        int    w = r % 2 ? 1 - v : v;
                        size_t i, o = off + msgs > st.n ? 0 : off;
                        for (i = 0; i < msgs; i++) {
                                uint64_t t0 = ksb_tsc(), t1;
                                produce_one(rk[w], rkt[w], &st.msgs[o + i]);
                                t1     = ksb_tsc();
                                lat[i] = t1 - t0 > ovh
                                             ? (uint32_t)(t1 - t0 - ovh)
                                             : 0;
                        }
                        while (w && !drained(&s))
                                usleep(100);
                        ksb_producer_drain(rk[w]);
                        ksb_sort_u32(lat, msgs);
                        med[w] =
                            ksb_quantile_u32(lat, msgs, 0.5) / ksb_tsc_per_ns();
                        p99[w] = ksb_quantile_u32(lat, msgs, 0.99) /
                                 ksb_tsc_per_ns();
                }
                produced += msgs;
                off += msgs;
                dmed[r] = med[1] - med[0];
                dp99[r] = p99[1] - p99[0];
                ksb_note("staged latency round %d: without median %.0f p99 "
                         "%.0f ns; staged median %.0f p99 %.0f ns",
                         r, med[0], p99[0], med[1], p99[1]);
        }
        ksb_result("s.stage.median_delta",
                   "PROTOTYPE staged: produce() median with - without",
                   "<=", 50, "ns", dmed, (size_t)rounds);
        ksb_result("s.stage.p99_delta",
                   "PROTOTYPE staged: produce() p99 with - without", "<=", 500,
                   "ns", dp99, (size_t)rounds);
        free(lat);

        atomic_store(&s.stop, 1);
        pthread_join(s.drainer, NULL);
        if (ks_topic_snapshot(ksb_topics_add(&s.kt, KSB_TOPIC, 6), &snap))
                ksb_die("snapshot failed");
        ksb_note("staged topic counted %llu of %zu messages produced; %zu "
                 "recorded inline because a ring was full",
                 (unsigned long long)snap.c.total.messages, produced,
                 (size_t)atomic_load(&s.inline_records));
        ks_topic_snapshot_free(&snap);
        for (v = 0; v < 2; v++) {
                rd_kafka_topic_destroy(rkt[v]);
                ksb_producer_drain(rk[v]);
                rd_kafka_destroy(rk[v]);
        }
        ksb_topics_destroy(&s.kt);
        ksb_stream_free(&st);
        return 0;
}
