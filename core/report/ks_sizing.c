/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_sizing.c
 * @brief Hot keys, skew and sizing advice: the formulas, their units and
 *        where each comes from.
 *
 * Skew (keyshift issue "[4 of 6] Hot keys, skew and sizing advice")
 * -----------------------------------------------------------------
 *   key skew       = busiest key's messages / median key's messages
 *   partition skew = busiest partition's load / median partition's load
 *   check          : busiest <= 2.5 x median (keyshift.partition.skew.max)
 * The median is the middle value (mean of the two middle ones for an even
 * count). The median key comes from the bottom-k key sample, a uniform
 * sample of distinct keys (ks_keysample.h), so it estimates the median
 * over all keys; the busiest key from the Space-Saving summary, which
 * holds every key above N/m messages (ks_topk.h). Median rather than mean:
 * under a Zipf-like key distribution the mean is dragged up by the very
 * keys whose weight we want to measure.
 *
 * Hot-key verdict
 * ---------------
 * A partition is a single log: it cannot carry less than the busiest key
 * hashed to it, at any partition count. So a key whose own rate exceeds
 * the rate one partition should carry (keyshift.partition.target.msgs.per.s,
 * else the fair share topic rate / count) keeps its partition above target
 * whatever the count: more partitions cannot fix it. Splitting the key into
 * n salted sub-keys key#0 .. key#n-1 spreads it over up to n partitions,
 * each sub-key carrying rate/n, which is <= target when
 *   salt_buckets n = ceil(key rate / target rate)
 * ("salting" hot row keys: Apache HBase Reference Guide, "Rowkey Design:
 * Hotspotting"). The price: order holds only within each sub-key; a
 * consumer that needs the key's order must merge the n sub-streams (by a
 * sequence number or timestamp the producer adds).
 *
 * Partition floor and recommended count
 * -------------------------------------
 *   base      = max(ceil(peak / per_consumer), max_consumers)
 *   floor     = ceil(base x skew_factor)
 *   skew_factor = clamp(key_skew / 30, 2, 4)
 *   recommended = the next power of two >= floor
 * The throughput term is the consumer half of Rao's max(t/p, t/c) (J. Rao,
 * "How to choose the number of topics/partitions in a Kafka cluster?",
 * Confluent blog, 2015; also Narkhede, Shapira & Palino, "Kafka: The
 * Definitive Guide", O'Reilly 2017, ch. 2 "How to Choose the Number of
 * Partitions") in messages, on the measured 0.999 peak rather than the
 * mean; the consumers term holds because a consumer group gives each
 * partition to at most one member, so members beyond the partition count
 * idle. The skew factor (keyshift's own rule, from the issue) adds at
 * least 2x headroom, more when the key skew says partitions will be
 * uneven, at most 4x. When neither the capacity nor the planned consumers
 * are set there is no base and no advice: the report gives the measured
 * peak, key skew and skew factor, names the two properties, and
 * illustrates the floor at KS_SIZING_ILLUSTRATION_RATES per consumer,
 * labelled assumptions (keyshift issue 28: a base of today's count made
 * every report say "at least double", an advice no figure supported).
 * With one of the two, its term is the base: a per-consumer rate alone
 * gives the throughput floor, a consumer count alone the parallelism the
 * group can use (members beyond the count idle). Powers of
 * two: since h mod 2P is h mod P or h mod P + P, a later doubling splits
 * every partition into exactly two and moves exactly half of each
 * partition's keys, the cheapest increase there is.
 *
 * Rebalance stall
 * ---------------
 *   per rebalance = P x ms_per_partition / 1000 s;  per day = that x
 *   rebalances a day. Linear in P: an eager rebalance revokes and
 *   reassigns every partition of the group (KIP-429, "Kafka Consumer
 *   Incremental Rebalance Protocol", motivation). The 4 ms per partition
 *   and 6 rebalances a day are keyshift defaults, to be replaced by
 *   measured ones (keyshift.rebalance.ms.per.partition,
 *   keyshift.rebalances.per.day). Warned above 30 s per rebalance.
 *
 * Broker-side constraints (T. P. Raptis & A. Passarella, "On efficiently
 * partitioning a topic in Apache Kafka", 2022, arXiv:2205.09415; their
 * model bounds a topic's partition count by throughput, OS load,
 * replication latency and unavailability, the factors of Rao 2015)
 * ------------------------------------------------------------------------
 * For P partitions, b brokers, replication factor r, produce throughput
 * T bytes/s (the measured 0.999 peak):
 *   throughput          P >= max(T / Tp, T / Tc)    Tp 10, Tc 20 MB/s
 *   consumers           P >= planned consumers
 *   OS load (open files) 2 P r / b <= H_max          H_max 10000
 *   replication latency l_r P r / b <= L             l_r 1 ms, L 200 ms
 *   unavailability      u P / b <= U                 u 5 ms, U 2000 ms
 * Each replica keeps at least a log and an index file open (2 per
 * replica); a broker leads or follows P r / b replicas when they are
 * spread evenly; a failed broker's P / b leaderships are re-elected one
 * after another, about 5 ms each (Rao 2015: "1000 partitions ... about 5
 * seconds"); each replica a follower fetches adds to the commit latency
 * (Rao 2015: about 20 ms per 1000 partitions; the 1 ms default is the
 * issue's conservative figure). The fewest brokers at P is the smallest b
 * meeting the three per-broker bounds, and b >= r (a partition's replicas
 * are on distinct brokers). The "binding" constraint is the one with the
 * largest utilisation (requirement / P for the lower bounds, value / limit
 * for the ceilings): violated when above 1, else the closest to its limit.
 * (The paper's full text was not at hand; the forms above are those of its
 * abstract's four factors as the issue states them.)
 *
 * Split window
 * ------------
 * Producers learn a new partition count at their next metadata refresh:
 * Java's metadata.max.age.ms and librdkafka's
 * topic.metadata.refresh.interval.ms, both 300000 ms by default
 * (keyshift.producers.metadata.max.age.ms: the longest among the topic's
 * producers). Until the last one has refreshed, a moving key is written
 * to its old and its new partition at once:
 *   seconds = max age / 1000;  messages = moving-key rate x seconds.
 *
 * Drain-and-switch
 * ----------------
 * Producers pause; consumers drain their lag; everyone switches to a new
 * topic with the new count. No key splits (the new topic starts empty),
 * at the cost of the pause. A lag of lag_s seconds of traffic is
 * rate x lag_s messages (Little's law); with producers paused it drains at
 * the group's capacity: drain_s = rate x lag_s / capacity (= lag_s when
 * the group only just keeps up). Producers hold rate x pause messages;
 * their queue absorbs min(queue messages / rate, queue bytes / byte rate)
 * seconds of it.
 */
#include "ks_sizing.h"

#include "ks_partitioner.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Parameters                                                           */
/* ------------------------------------------------------------------ */

#define KS_P(field) offsetof(ks_sizing_params_t, field)

const ks_sizing_param_desc_t ks_sizing_param_descs[] = {
    {"keyshift.partition.target.msgs.per.s",
     "0 (the fair share: topic rate / partitions), or 0.001 .. 1e9 msgs/s", 0,
     1e9, 0, 0, KS_P(partition_target_msgs_per_s), 0.001},
    {KS_SIZING_PROP_CONSUMERS, "0 (unknown) .. 100000 consumers", 0, 100000, 0,
     1, KS_P(consumers_max), 0},
    {KS_SIZING_PROP_CONSUMER_RATE, "0 (unknown), or 0.001 .. 1e9 msgs/s", 0,
     1e9, 0, 0, KS_P(consumer_msgs_per_s), 0.001},
    {"keyshift.rebalance.ms.per.partition", "0 .. 60000 ms", 0, 60000, 4, 0,
     KS_P(rebalance_ms_per_partition), 0},
    {"keyshift.rebalances.per.day", "0 .. 86400", 0, 86400, 6, 0,
     KS_P(rebalances_per_day), 0},
    {"keyshift.rebalance.stall.warn.s", "0 .. 86400 s", 0, 86400, 30, 0,
     KS_P(rebalance_stall_warn_s), 0},
    {"keyshift.peak.to.mean.warn", "1 .. 1e6", 1, 1e6, 4, 0,
     KS_P(peak_to_mean_warn), 0},
    {"keyshift.partition.skew.max", "1 .. 1e6 (busiest / median)", 1, 1e6, 2.5,
     0, KS_P(partition_skew_max), 0},
    {"keyshift.producer.throughput.mb.per.s", "0.001 .. 1e6 MB/s", 0.001, 1e6,
     10, 0, KS_P(producer_throughput_mb_per_s), 0},
    {"keyshift.consumer.throughput.mb.per.s", "0.001 .. 1e6 MB/s", 0.001, 1e6,
     20, 0, KS_P(consumer_throughput_mb_per_s), 0},
    {"keyshift.broker.file.handles.max", "1 .. 1000000000", 1, 1e9, 10000, 1,
     KS_P(broker_file_handles_max), 0},
    {"keyshift.replication.latency.ms.per.partition", "0 .. 10000 ms", 0, 1e4,
     1, 0, KS_P(replication_latency_ms_per_partition), 0},
    {"keyshift.replication.latency.max.ms", "0.001 .. 1e7 ms", 0.001, 1e7, 200,
     0, KS_P(replication_latency_max_ms), 0},
    {"keyshift.unavailability.ms.per.partition", "0 .. 10000 ms", 0, 1e4, 5, 0,
     KS_P(unavailability_ms_per_partition), 0},
    {"keyshift.unavailability.max.ms", "0.001 .. 1e8 ms", 0.001, 1e8, 2000, 0,
     KS_P(unavailability_max_ms), 0},
    {"keyshift.producers.metadata.max.age.ms", "0 .. 86400000 ms", 0, 86400000,
     300000, 1, KS_P(producers_metadata_max_age_ms), 0},
    {"keyshift.consumer.lag.ms", "0 (unknown) .. 86400000 ms", 0, 86400000, 0,
     1, KS_P(consumer_lag_ms), 0},
    {NULL, NULL, 0, 0, 0, 0, 0, 0},
};

static double *param_field(ks_sizing_params_t *p, size_t offset)
{
        return (double *)(void *)((char *)p + offset);
}

void ks_sizing_params_init(ks_sizing_params_t *p)
{
        const ks_sizing_param_desc_t *d;

        memset(p, 0, sizeof(*p));
        for (d = ks_sizing_param_descs; d->name; d++)
                *param_field(p, d->offset) = d->def;
}

/** @returns the end of a run of digits at @p s (== @p s: none). */
static const char *digits(const char *s)
{
        while (*s >= '0' && *s <= '9')
                s++;
        return s;
}

int ks_sizing_parse_decimal(const char *s, int integer, double *out)
{
        const char *c = s, *d;
        double      v;

        if (*c == '-')
                c++;
        if ((d = digits(c)) == c)
                return -1;
        c = d;
        if (!integer && *c == '.') {
                if ((d = digits(c + 1)) == c + 1)
                        return -1; /* "12." */
                c = d;
        }
        if (!integer && (*c == 'e' || *c == 'E')) {
                c += c[1] == '+' || c[1] == '-' ? 2 : 1;
                if ((d = digits(c)) == c)
                        return -1;
                c = d;
        }
        if (*c)
                return -1;
        errno = 0;
        v     = strtod(s, NULL); /* the grammar above is strtod()'s subset */
        if (errno || !isfinite(v))
                return -1;
        *out = v;
        return 0;
}

int ks_sizing_params_set(ks_sizing_params_t *p, const char *name,
                         const char *value, char *errstr, size_t errstr_size)
{
        const ks_sizing_param_desc_t *d;
        char                          text[64];
        size_t                        n;
        double                        v = NAN;

        for (d = ks_sizing_param_descs; d->name; d++)
                if (!strcmp(d->name, name))
                        break;
        if (!d->name)
                return -1;
        if (value) { /* white space around it ignored, as parse_int() does */
                const char *b = value;
                while (*b == ' ' || *b == '\t')
                        b++;
                n = strlen(b);
                while (n && (b[n - 1] == ' ' || b[n - 1] == '\t'))
                        n--;
                if (n < sizeof(text)) {
                        memcpy(text, b, n);
                        text[n] = '\0';
                        if (ks_sizing_parse_decimal(text, d->integer, &v))
                                v = NAN;
                }
        }
        if (!value || isnan(v) || v < d->min || v > d->max ||
            (v != 0 && v < d->min_nonzero) || (d->integer && v != floor(v))) {
                snprintf(errstr, errstr_size,
                         "Invalid value \"%s\" for %s: expected %s",
                         value ? value : "(null)", d->name, d->accepted);
                return 1;
        }
        *param_field(p, d->offset) = v;
        return 0;
}

/* ------------------------------------------------------------------ */
/* Hot keys                                                             */
/* ------------------------------------------------------------------ */

double ks_sizing_target_rate(const ks_sizing_params_t *p,
                             double topic_msgs_per_s, int64_t partition_count)
{
        if (p->partition_target_msgs_per_s > 0)
                return p->partition_target_msgs_per_s;
        if (partition_count < 1 || !(topic_msgs_per_s > 0))
                return 0.0;
        return topic_msgs_per_s / (double)partition_count;
}

/** @returns a / b capped to [0, 1]; 0 when b <= 0. */
static double share(double a, double b)
{
        double s;

        if (!(b > 0) || !(a > 0))
                return 0.0;
        s = a / b;
        return s > 1.0 ? 1.0 : s;
}

/** @returns ceil(x) as an integer >= 1 for x > 0, 0 otherwise; a value
 *           within a few units in the last place of an integer is that
 *           integer (1.1 / 0.1 is 11.000000000000002 in binary: 11). */
static uint64_t ceil_count(double x)
{
        double r, c;

        if (!(x > 0))
                return 0;
        r = nearbyint(x);
        c = fabs(x - r) <= 8 * DBL_EPSILON * (x > 1 ? x : 1) ? r : ceil(x);
        if (c >= 1.8e19)
                return UINT64_MAX;
        return c < 1 ? 1 : (uint64_t)c;
}

void ks_sizing_hot_key(double key_msgs_per_s, double topic_msgs_per_s,
                       double partition_msgs_per_s, double target_msgs_per_s,
                       ks_sizing_hot_verdict_t *out)
{
        memset(out, 0, sizeof(*out));
        out->share_of_topic     = share(key_msgs_per_s, topic_msgs_per_s);
        out->share_of_partition = share(key_msgs_per_s, partition_msgs_per_s);
        if (!(target_msgs_per_s > 0) || key_msgs_per_s <= target_msgs_per_s) {
                out->fixable_by_partitions = 1;
                out->salt_buckets          = 1;
                return;
        }
        out->salt_buckets = ceil_count(key_msgs_per_s / target_msgs_per_s);
        /* a rate above target by less than the noise ceil_count() ignores
         * still needs a second bucket */
        if (out->salt_buckets < 2)
                out->salt_buckets = 2;
}

/* ------------------------------------------------------------------ */
/* Partition floor and rebalance cost                                   */
/* ------------------------------------------------------------------ */

double ks_sizing_skew_factor(double key_skew)
{
        double f;

        if (isnan(key_skew) || key_skew <= 0)
                return KS_SIZING_SKEW_FACTOR_MIN;
        f = key_skew / KS_SIZING_SKEW_DIVISOR;
        if (f < KS_SIZING_SKEW_FACTOR_MIN)
                return KS_SIZING_SKEW_FACTOR_MIN;
        return f > KS_SIZING_SKEW_FACTOR_MAX ? KS_SIZING_SKEW_FACTOR_MAX : f;
}

const char *ks_sizing_base_name(ks_sizing_base_t b)
{
        switch (b) {
        case KS_SIZING_BASE_THROUGHPUT:
                return "throughput";
        case KS_SIZING_BASE_CONSUMERS:
                return "consumers";
        default:
                return "none";
        }
}

size_t ks_sizing_inputs_missing(const ks_sizing_params_t *p,
                                const char               *names[2])
{
        size_t n = 0;

        if (!(p->consumer_msgs_per_s > 0))
                names[n++] = KS_SIZING_PROP_CONSUMER_RATE;
        if (!(p->consumers_max >= 1))
                names[n++] = KS_SIZING_PROP_CONSUMERS;
        return n;
}

/** @returns @p x as a partition count: ceil, at least 0, at most 2^62. */
static int64_t count_of(double x)
{
        uint64_t c = ceil_count(x);
        return c > ((uint64_t)1 << 62) ? ((int64_t)1 << 62) : (int64_t)c;
}

void ks_sizing_partition_floor(const ks_sizing_params_t *p,
                               double peak_msgs_per_s, double key_skew,
                               ks_sizing_floor_t *out)
{
        int64_t consumers = (int64_t)p->consumers_max;

        memset(out, 0, sizeof(*out));
        out->skew_factor = ks_sizing_skew_factor(key_skew);
        if (!(p->consumer_msgs_per_s > 0) && consumers < 1) {
                /* no input to size on: no floor (it used to be today's
                 * count x the skew factor, a doubling no figure asked for) */
                out->base_source = KS_SIZING_BASE_NONE;
                return;
        }
        if (p->consumer_msgs_per_s > 0)
                out->throughput_partitions =
                    count_of(peak_msgs_per_s / p->consumer_msgs_per_s);
        out->base        = out->throughput_partitions;
        out->base_source = KS_SIZING_BASE_THROUGHPUT;
        if (consumers > out->base) {
                out->base        = consumers;
                out->base_source = KS_SIZING_BASE_CONSUMERS;
        }
        if (out->base < 1)
                out->base = 1; /* no traffic yet: one partition's worth */
        out->partition_floor = count_of((double)out->base * out->skew_factor);
        out->recommended     = ks_sizing_next_pow2(out->partition_floor);
}

void ks_sizing_rebalance(const ks_sizing_params_t *p, int64_t partitions,
                         ks_sizing_rebalance_t *out)
{
        out->per_rebalance_s =
            (double)partitions * p->rebalance_ms_per_partition / 1000.0;
        out->per_day_s = out->per_rebalance_s * p->rebalances_per_day;
        out->high      = out->per_rebalance_s > p->rebalance_stall_warn_s;
}

/* ------------------------------------------------------------------ */
/* Raptis & Passarella constraints                                      */
/* ------------------------------------------------------------------ */

const char *ks_sizing_constraint_name(ks_sizing_constraint_id_t id)
{
        static const char *names[KS_CONSTRAINT__CNT] = {
            "throughput", "consumers", "file_handles", "replication_latency_ms",
            "unavailability_ms"};
        return (unsigned)id < KS_CONSTRAINT__CNT ? names[id] : "?";
}

/** @brief Sets a ceiling constraint: value <= limit. */
static void ceiling(ks_sizing_constraint_t *c, double value, double limit)
{
        c->known       = 1;
        c->value       = value;
        c->limit       = limit;
        c->utilisation = limit > 0 ? value / limit : INFINITY;
        c->ok          = value <= limit * (1.0 + 1e-12);
}

/** @brief Sets a lower-bound constraint: P >= required. */
static void floor_of(ks_sizing_constraint_t *c, int64_t partitions,
                     double required)
{
        c->known       = 1;
        c->lower_bound = 1;
        c->value       = (double)partitions;
        c->limit       = required;
        c->utilisation = partitions > 0 ? required / (double)partitions
                                        : (required > 0 ? INFINITY : 0.0);
        c->ok          = (double)partitions >= required * (1.0 - 1e-12);
}

int64_t ks_sizing_fewest_brokers(const ks_sizing_params_t *p,
                                 int64_t partitions, int32_t replication_factor)
{
        double  pr = (double)partitions * replication_factor;
        int64_t b, need[3];
        int     i;

        if (replication_factor < 1)
                return 0;
        b       = replication_factor;
        need[0] = count_of(2.0 * pr / p->broker_file_handles_max);
        need[1] = count_of(p->replication_latency_ms_per_partition * pr /
                           p->replication_latency_max_ms);
        need[2] = count_of(p->unavailability_ms_per_partition *
                           (double)partitions / p->unavailability_max_ms);
        for (i = 0; i < 3; i++)
                if (need[i] > b)
                        b = need[i];
        return b;
}

void ks_sizing_constraints(const ks_sizing_params_t *p, int64_t partitions,
                           int32_t brokers, int32_t replication_factor,
                           double                   throughput_bytes_per_s,
                           ks_sizing_constraints_t *out)
{
        double T   = throughput_bytes_per_s > 0 ? throughput_bytes_per_s : 0;
        double tp  = T / (p->producer_throughput_mb_per_s * 1e6);
        double tc  = T / (p->consumer_throughput_mb_per_s * 1e6);
        double per = 0; /* replicas per broker: P r / b */
        int    i;

        memset(out, 0, sizeof(*out));
        out->binding = -1;
        floor_of(&out->c[KS_CONSTRAINT_THROUGHPUT], partitions,
                 tp > tc ? tp : tc);
        if (p->consumers_max > 0)
                floor_of(&out->c[KS_CONSTRAINT_CONSUMERS], partitions,
                         p->consumers_max);
        if (brokers > 0 && replication_factor > 0) {
                per = (double)partitions * replication_factor / brokers;
                ceiling(&out->c[KS_CONSTRAINT_FILE_HANDLES], 2.0 * per,
                        p->broker_file_handles_max);
                ceiling(&out->c[KS_CONSTRAINT_REPLICATION_LATENCY],
                        p->replication_latency_ms_per_partition * per,
                        p->replication_latency_max_ms);
        }
        if (brokers > 0)
                ceiling(&out->c[KS_CONSTRAINT_UNAVAILABILITY],
                        p->unavailability_ms_per_partition *
                            (double)partitions / brokers,
                        p->unavailability_max_ms);
        out->satisfied       = 1;
        out->brokers_suffice = 1;
        for (i = 0; i < KS_CONSTRAINT__CNT; i++) {
                const ks_sizing_constraint_t *c = &out->c[i];
                if (!c->known)
                        continue;
                if (!c->ok) {
                        out->satisfied = 0;
                        if (c->lower_bound)
                                out->brokers_suffice = 0;
                }
                if (out->binding < 0 ||
                    c->utilisation > out->c[out->binding].utilisation)
                        out->binding = i;
        }
        out->fewest_brokers =
            ks_sizing_fewest_brokers(p, partitions, replication_factor);
}

/* ------------------------------------------------------------------ */
/* What the increase costs                                              */
/* ------------------------------------------------------------------ */

void ks_sizing_split_window(const ks_sizing_params_t *p,
                            double                    moving_msgs_per_s,
                            ks_sizing_split_window_t *out)
{
        out->seconds = p->producers_metadata_max_age_ms / 1000.0;
        out->messages_of_moving_keys =
            moving_msgs_per_s > 0 ? moving_msgs_per_s * out->seconds : 0.0;
}

void ks_sizing_shard_add(ks_sizing_shard_t *s, const ks_sizing_hot_verdict_t *v,
                         double key_msgs_per_s, double topic_msgs_per_s,
                         uint64_t key_messages)
{
        if (v->fixable_by_partitions)
                return;
        s->keys_routed++;
        s->msgs_per_s_routed += key_msgs_per_s;
        s->share_of_topic = share(s->msgs_per_s_routed, topic_msgs_per_s);
        s->shard_partitions += v->salt_buckets;
        s->messages_split += key_messages;
}

void ks_sizing_drain_and_switch(const ks_sizing_params_t *p,
                                int64_t partition_count, double msgs_per_s,
                                double bytes_per_s,
                                double consumer_capacity_msgs_per_s,
                                double queue_max_messages,
                                double queue_max_bytes,
                                ks_sizing_drain_and_switch_t *out)
{
        double lag_s = p->consumer_lag_ms / 1000.0;
        double qs    = -1;

        memset(out, 0, sizeof(*out));
        out->partition_count  = partition_count;
        out->held_msgs_per_s  = msgs_per_s > 0 ? msgs_per_s : 0;
        out->held_bytes_per_s = bytes_per_s > 0 ? bytes_per_s : 0;
        if (lag_s > 0) {
                if (consumer_capacity_msgs_per_s > 0)
                        out->drain_s = out->held_msgs_per_s * lag_s /
                                       consumer_capacity_msgs_per_s;
                else
                        out->drain_s = out->held_msgs_per_s > 0 ? lag_s : 0;
                out->pause_s       = out->drain_s;
                out->messages_held = out->held_msgs_per_s * out->pause_s;
                out->bytes_held    = out->held_bytes_per_s * out->pause_s;
        } else {
                out->drain_s = out->pause_s = -1;
                out->messages_held = out->bytes_held = -1;
        }
        if (queue_max_messages > 0 && out->held_msgs_per_s > 0)
                qs = queue_max_messages / out->held_msgs_per_s;
        if (queue_max_bytes > 0 && out->held_bytes_per_s > 0) {
                double b = queue_max_bytes / out->held_bytes_per_s;
                if (qs < 0 || b < qs)
                        qs = b;
        }
        out->producer_queue_s = qs;
}
