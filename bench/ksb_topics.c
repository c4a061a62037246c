/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ksb_topics.c
 * @brief keyshift's core as one producer uses it (see ksb_topics.h).
 */
#include "ksb_topics.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ks_budget.h"
#include "ksb_stats.h"

/** As plugin/ks_client.c KS_PENDING_MAX. */
#define KSB_PENDING_MAX 65536

/** @returns wall-clock ms (for a topic's creation). */
static int64_t wall_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void ksb_topics_init(ksb_topics_t *kt, const char *const *props)
{
        char   errstr[512];
        size_t i;

        memset(kt, 0, sizeof(*kt));
        if (ks_config_init(&kt->conf))
                ksb_die("ks_config_init failed");
        for (i = 0; props && props[i]; i += 2)
                if (ks_config_set(&kt->conf, props[i], props[i + 1], errstr,
                                  sizeof(errstr)) != KS_CONFIG_OK)
                        ksb_die("%s=%s: %s", props[i], props[i + 1], errstr);
        kt->params.partitioner      = KS_PARTITIONER_CONSISTENT_RANDOM;
        kt->params.sticky_linger_ms = 10;
        memcpy(kt->params.proposed, kt->conf.proposed,
               sizeof(kt->conf.proposed));
        kt->params.proposed_cnt      = kt->conf.proposed_cnt;
        kt->params.key_sample_size   = (size_t)kt->conf.key_sample_size;
        kt->params.mixed_sample_size = (size_t)kt->conf.mixed_sample_size;
        kt->params.topk_capacity     = kt->conf.hot_keys * 16 > 1024
                                           ? (size_t)kt->conf.hot_keys * 16
                                           : 1024;
        kt->params.flow_max_cells    = kt->conf.flow_max_cells;
        kt->params.pending_max       = KSB_PENDING_MAX;
        if (!(kt->stage = ks_stage_new(
                  ks_budget_table((size_t)kt->conf.memory_max_mb << 20))))
                ksb_die("ks_stage_new failed");
        /* as ks_client_new(): an overflow while the drainer is behind */
        ks_stage_set_overflow(
            kt->stage,
            ks_budget_overflow((size_t)kt->conf.memory_max_mb << 20));
        /* as ks_client_new(): the sketches get what the key table leaves */
        kt->params.sketch_budget =
            ks_budget_sketches((size_t)kt->conf.memory_max_mb << 20);
        if (ks_registry_init(&kt->reg, (size_t)kt->conf.topics_max))
                ksb_die("ks_registry_init failed");
}

void ksb_topics_destroy(ksb_topics_t *kt)
{
        ks_stage_drain(kt->stage);
        ks_stage_destroy(kt->stage);
        ks_registry_destroy(&kt->reg);
        ks_config_destroy(&kt->conf);
}

ks_topic_t *ksb_topics_add(ksb_topics_t *kt, const char *name, int32_t current)
{
        int         created;
        ks_topic_t *t = ks_registry_get(&kt->reg, name, &kt->conf, &kt->params,
                                        wall_ms(), &created);

        if (!t)
                ksb_die("topic %s not analysed", name);
        if (created)
                ks_topic_set_partition_count(t, current, KS_COUNT_CONFIG,
                                             wall_ms());
        return t;
}

void ksb_topics_send(ksb_topics_t *kt, const char *topic, const void *key,
                     size_t keylen, size_t value_len)
{
        int created;
        /* 0: as ks_client_on_send() since 29cf2b2, which no longer reads
         * the wall clock per message (the registry reads it only when it
         * creates a topic). Before, it cost ~31 ns here (ksb_parts now_ms). */
        ks_topic_t *t = ks_registry_get(&kt->reg, topic, &kt->conf, &kt->params,
                                        0, &created);

        if (t)
                ks_topic_record(t, key, keylen, -1, value_len);
}

void ksb_topics_on_send(ksb_topics_t *kt, const char *topic, const void *key,
                        size_t keylen, size_t value_len)
{
        int         created;
        ks_topic_t *t = ks_stage_last_topic(kt->stage, topic);

        if (!t && !(t = ks_registry_get(&kt->reg, topic, &kt->conf, &kt->params,
                                        0, &created)))
                return;
        ks_stage_push(kt->stage, t, key, keylen, -1, value_len);
}

static void *drainer_main(void *arg)
{
        ksb_topics_t *kt        = arg;
        int           period_ms = KS_STAGE_BUSY_MS;

        while (!atomic_load(&kt->drainer_stop)) /* as the plugin's */
                ks_stage_pause(kt->stage, ks_stage_collect(kt->stage),
                               &period_ms);
        kt->drainer_cpu_ns = ksb_thread_cpu_ns();
        return NULL;
}

void ksb_topics_drainer_start(ksb_topics_t *kt)
{
        atomic_store(&kt->drainer_stop, 0);
        if (pthread_create(&kt->drainer, NULL, drainer_main, kt))
                ksb_die("pthread_create failed");
}

uint64_t ksb_topics_drainer_stop(ksb_topics_t *kt)
{
        uint64_t t0;

        atomic_store(&kt->drainer_stop, 1);
        pthread_join(kt->drainer, NULL);
        t0 = ksb_thread_cpu_ns();
        ks_stage_drain(kt->stage); /* the shutdown's last drain: counted */
        kt->drainer_cpu_ns += ksb_thread_cpu_ns() - t0;
        return kt->drainer_cpu_ns;
}

ks_report_opts_t ksb_topics_report_opts(const ksb_topics_t *kt, int hot_keys)
{
        ks_report_opts_t o;

        memset(&o, 0, sizeof(o));
        o.hot_keys           = hot_keys;
        o.now_ms             = wall_ms();
        o.final              = 0;
        o.sizing             = &kt->conf.sizing;
        o.queue_max_messages = 10000000.0;
        o.queue_max_bytes    = 2147483647.0 * 1024.0;
        return o;
}
