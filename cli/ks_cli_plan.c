/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_cli_plan.c
 * @brief `keyshift plan`: partition count advice from planned rates, with
 *        no producer running. The formulas are the core's
 *        (core/report/ks_sizing.h, sources in core/report/ks_sizing.c):
 *
 *   floor       = ceil(max(ceil(peak / per_consumer), consumers)
 *                      x clamp(key_skew / 30, 2, 4))
 *   recommended = the next power of two >= floor
 *   rebalance   = recommended x 4 ms per stall, x 6 rebalances a day
 *   brokers     = Raptis & Passarella (2022) constraints at recommended,
 *                 and the fewest brokers meeting them
 *
 * With --current P it also says which share of keys an increase from P
 * to the recommended count would move: with a uniform hash, a key keeps
 * its partition exactly when h mod P == h mod Q, which holds for min(P, Q)
 * of every lcm(P, Q) consecutive hash values.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "keyshift/keyshift.h"
#include "ks_cli.h"
#include "ks_cli_fmt.h"
#include "ks_sizing.h"

/** Rates (--peak-msgs-s, --consumer-msgs-s) must be above 0: the least. */
#define KS_PLAN_RATE_MIN 1e-9
/** The most messages/s a rate or a key skew may say: past any cluster. */
#define KS_PLAN_RATE_MAX 1e12
/** The most --peak-bytes-s: a petabyte a second, past any cluster. */
#define KS_PLAN_BYTES_S_MAX 1e15
/** The most --message-bytes: a gigabyte, past Kafka's message.max.bytes. */
#define KS_PLAN_MESSAGE_BYTES_MAX 1e9
/** The most --consumers and --brokers: keyshift's partition ceiling
 *  (KEYSHIFT_PARTITIONS_MAX; a consumer past the partitions is idle). */
#define KS_PLAN_MEMBERS_MAX 100000
/** The most --replication-factor: a bound on typing errors (clusters
 *  run 3, rarely 5). */
#define KS_PLAN_RF_MAX 100
/** ks_plan_parse_args(): the arguments are good, plan on. */
#define KS_PLAN_GO_ON (-1)

typedef struct ks_plan {
        ks_sizing_params_t p;
        double             peak, per_consumer, skew, bytes_s, msg_bytes;
        long long          consumers, brokers, rf, current;
        int                json;
} ks_plan_t;

/** @brief Prints the usage of `keyshift plan` to @p fp. */
static void ks_plan_help(FILE *fp)
{
        fprintf(fp,
                "Usage: keyshift plan --peak-msgs-s X --consumer-msgs-s Y "
                "--consumers N [OPTIONS]\n"
                "Partition count advice without a running producer:\n"
                "  floor = max(ceil(X / Y), N) x clamp(key skew / 30, 2, 4), "
                "recommended = the\n"
                "  next power of two, with the rebalance stall it costs and "
                "the broker-side\n"
                "  constraints of Raptis & Passarella (2022).\n\n"
                "  --peak-msgs-s X          peak produce rate of the topic, "
                "messages/s (> 0)\n"
                "  --consumer-msgs-s Y      what one consumer processes, "
                "messages/s (> 0)\n"
                "  --consumers N            consumers planned in the group "
                "(1..100000)\n"
                "  --key-skew S             busiest key / median key "
                "(default: unknown, factor 2)\n"
                "  --peak-bytes-s T         peak produce bytes/s (for the "
                "throughput constraint)\n"
                "  --message-bytes M        or the mean message size: T = X "
                "x M\n"
                "  --brokers B              brokers in the cluster\n"
                "  --replication-factor R   the topic's replication factor\n"
                "  --current P              the topic's count today: is it "
                "enough, what moves\n"
                "  -X keyshift.NAME=VALUE   any sizing property, e.g.\n"
                "                           "
                "keyshift.rebalance.ms.per.partition=8\n"
                "  --json                   the figures as JSON\n"
                "  -h, --help               this help\n\n"
                "Exit: 0 ok, 2 bad or missing arguments.\n");
}

/** @returns the share of uniformly hashed keys whose partition changes
 *           from @p from to @p to partitions: 1 - min / lcm. */
static double ks_plan_moved_fraction(long long from, long long to)
{
        long long a = from, b = to, g;

        while (b) {
                g = a % b;
                a = b;
                b = g;
        }
        return 1.0 - (double)(from < to ? from : to) /
                         ((double)from / (double)a * (double)to);
}

/** @returns the plan as a JSON object (--json). */
static json_t *ks_plan_json(const ks_plan_t *pl, const ks_sizing_floor_t *fl,
                            const ks_sizing_rebalance_t   *rb,
                            const ks_sizing_constraints_t *cs)
{
        json_t *c = json_object(), *o;
        int     i;

        for (i = 0; i < KS_CONSTRAINT__CNT; i++) {
                const ks_sizing_constraint_t *k     = &cs->c[i];
                int                           known = k->known &&
                            (i != KS_CONSTRAINT_THROUGHPUT || pl->bytes_s > 0);
                json_object_set_new(
                    c, ks_sizing_constraint_name((ks_sizing_constraint_id_t)i),
                    known
                        ? json_pack("{s:f, s:f, s:s, s:f, s:b}", "value",
                                    k->value, "limit", k->limit, "bound",
                                    k->lower_bound ? "at_least" : "at_most",
                                    "utilisation", k->utilisation, "ok", k->ok)
                        : json_null());
        }
        o = json_pack(
            "{s:{s:f, s:f, s:I, s:o, s:o, s:o, s:o}, s:{s:I, s:I, s:s, s:f, "
            "s:I, s:I}, s:{s:I, s:f, s:f}, s:o, s:b, s:o}",
            "inputs", "peak_msgs_s", pl->peak, "per_consumer_msgs_s",
            pl->per_consumer, "consumers", (json_int_t)pl->consumers,
            "key_skew", pl->skew > 0 ? json_real(pl->skew) : json_null(),
            "peak_bytes_s",
            pl->bytes_s > 0 ? json_real(pl->bytes_s) : json_null(), "brokers",
            pl->brokers ? json_integer(pl->brokers) : json_null(),
            "replication_factor", pl->rf ? json_integer(pl->rf) : json_null(),
            "floor", "throughput_partitions",
            (json_int_t)fl->throughput_partitions, "base_partitions",
            (json_int_t)fl->base, "base_source",
            ks_sizing_base_name(fl->base_source), "skew_factor",
            fl->skew_factor, "partition_floor", (json_int_t)fl->partition_floor,
            "recommended", (json_int_t)fl->recommended, "rebalance",
            "partition_count", (json_int_t)fl->recommended, "per_rebalance_s",
            rb->per_rebalance_s, "per_day_s", rb->per_day_s, "constraints", c,
            "constraints_satisfied", cs->satisfied, "fewest_brokers",
            cs->fewest_brokers ? json_integer(cs->fewest_brokers)
                               : json_null());
        if (pl->current)
                json_object_set_new(
                    o, "from_current",
                    json_pack("{s:I, s:b, s:f}", "current",
                              (json_int_t)pl->current, "sufficient",
                              pl->current >= fl->partition_floor,
                              "keys_fraction_moved",
                              pl->current < fl->recommended
                                  ? ks_plan_moved_fraction(pl->current,
                                                           fl->recommended)
                                  : 0.0));
        return o;
}

/** @brief Prints the plan as text, each figure with its formula. */
static void ks_plan_print(const ks_plan_t *pl, const ks_sizing_floor_t *fl,
                          const ks_sizing_rebalance_t   *rb,
                          const ks_sizing_constraints_t *cs)
{
        char a[32], b[32], c[32];
        int  i;

        printf("partition floor   max(ceil(%s / %s) = %lld, %lld consumers) "
               "= %lld [%s]\n",
               ks_cli_fmt_count((uint64_t)pl->peak, a, sizeof(a)),
               ks_cli_fmt_count((uint64_t)pl->per_consumer, b, sizeof(b)),
               (long long)fl->throughput_partitions, pl->consumers,
               (long long)fl->base, ks_sizing_base_name(fl->base_source));
        if (pl->skew > 0)
                printf("                  x skew factor %.2f = clamp(key "
                       "skew %.3g / 30, 2, 4)",
                       fl->skew_factor, pl->skew);
        else
                printf("                  x skew factor %.2f (key skew "
                       "unknown: the minimum)",
                       fl->skew_factor);
        printf("  ->  %lld\n", (long long)fl->partition_floor);
        printf("recommended       %lld partitions (the next power of two: a "
               "later doubling\n"
               "                  splits every partition in two and moves "
               "nothing else)\n",
               (long long)fl->recommended);
        printf("rebalance stall   %.2f s per consumer-group rebalance at %lld "
               "partitions (%.3g ms each),\n"
               "                  %.1f s a day at %.3g rebalances a day\n",
               rb->per_rebalance_s, (long long)fl->recommended,
               pl->p.rebalance_ms_per_partition, rb->per_day_s,
               pl->p.rebalances_per_day);
        printf("constraints at %lld partitions (Raptis & Passarella 2022):\n",
               (long long)fl->recommended);
        for (i = 0; i < KS_CONSTRAINT__CNT; i++) {
                const ks_sizing_constraint_t *k = &cs->c[i];
                const char                   *name =
                    ks_sizing_constraint_name((ks_sizing_constraint_id_t)i);
                if (!k->known ||
                    (i == KS_CONSTRAINT_THROUGHPUT && pl->bytes_s <= 0)) {
                        printf("  %-24s unknown (%s)\n", name,
                               i == KS_CONSTRAINT_THROUGHPUT
                                   ? "give --peak-bytes-s or --message-bytes"
                                   : "give --brokers and "
                                     "--replication-factor");
                        continue;
                }
                if (k->lower_bound)
                        printf("  %-24s needs >= %s partitions, has %s", name,
                               ks_cli_fmt_si(k->limit, b, sizeof(b)),
                               ks_cli_fmt_si(k->value, a, sizeof(a)));
                else
                        printf("  %-24s %s per broker, limit %s", name,
                               ks_cli_fmt_si(k->value, a, sizeof(a)),
                               ks_cli_fmt_si(k->limit, b, sizeof(b)));
                printf(": %s%s\n", k->ok ? "ok" : "VIOLATED",
                       cs->binding == i ? " (the closest to its limit)" : "");
        }
        if (cs->fewest_brokers)
                printf("fewest brokers    %lld (replication factor %lld)\n",
                       (long long)cs->fewest_brokers, pl->rf);
        if (pl->current) {
                printf("current count     %lld: %s", pl->current,
                       pl->current >= fl->partition_floor
                           ? "already at or above the floor"
                           : "below the floor");
                if (pl->current < fl->recommended)
                        printf("; raising %lld -> %lld moves %s of keys "
                               "(uniform hashing)",
                               pl->current, (long long)fl->recommended,
                               ks_cli_fmt_pct(ks_plan_moved_fraction(
                                                  pl->current, fl->recommended),
                                              c, sizeof(c)));
                printf("\n");
        }
}

/** The long options of `keyshift plan` past the ASCII letters. */
enum {
        O_PEAK = 256,
        O_CONS_RATE,
        O_CONS,
        O_SKEW,
        O_BYTES,
        O_MSGB,
        O_BROKERS,
        O_RF,
        O_CURRENT,
        O_JSON
};

/**
 * @brief Parses the value @p arg of numeric option @p c into @p pl, and
 *        names the option in @p opt.
 * @returns 0, or non-zero with @p err set (out of range, not a number).
 */
static int ks_plan_number(ks_plan_t *pl, int c, const char *arg,
                          const char **opt, char *err, size_t errsz)
{
        switch (c) {
        case O_PEAK:
                *opt = "--peak-msgs-s";
                return ks_cli_parse_double(arg, KS_PLAN_RATE_MIN,
                                           KS_PLAN_RATE_MAX, &pl->peak, err,
                                           errsz);
        case O_CONS_RATE:
                *opt = "--consumer-msgs-s";
                return ks_cli_parse_double(arg, KS_PLAN_RATE_MIN,
                                           KS_PLAN_RATE_MAX, &pl->per_consumer,
                                           err, errsz);
        case O_CONS:
                *opt = "--consumers";
                return ks_cli_parse_long(arg, 1, KS_PLAN_MEMBERS_MAX,
                                         &pl->consumers, err, errsz);
        case O_SKEW:
                *opt = "--key-skew";
                return ks_cli_parse_double(arg, 0, KS_PLAN_RATE_MAX, &pl->skew,
                                           err, errsz);
        case O_BYTES:
                *opt = "--peak-bytes-s";
                return ks_cli_parse_double(arg, 0, KS_PLAN_BYTES_S_MAX,
                                           &pl->bytes_s, err, errsz);
        case O_MSGB:
                *opt = "--message-bytes";
                return ks_cli_parse_double(arg, 0, KS_PLAN_MESSAGE_BYTES_MAX,
                                           &pl->msg_bytes, err, errsz);
        case O_BROKERS:
                *opt = "--brokers";
                return ks_cli_parse_long(arg, 1, KS_PLAN_MEMBERS_MAX,
                                         &pl->brokers, err, errsz);
        case O_RF:
                *opt = "--replication-factor";
                return ks_cli_parse_long(arg, 1, KS_PLAN_RF_MAX, &pl->rf, err,
                                         errsz);
        default: /* O_CURRENT */
                *opt = "--current";
                return ks_cli_parse_long(arg, 1, KEYSHIFT_PARTITIONS_MAX,
                                         &pl->current, err, errsz);
        }
}

/**
 * @brief Sets the sizing property of -X NAME=VALUE @p arg in @p pl.
 * @returns 0, non-zero with @p err set for a bad value, or
 *          KS_CLI_EXIT_USAGE said on stderr (no '=', not a sizing
 *          property) as a negative number.
 */
static int ks_plan_property(ks_plan_t *pl, const char *arg, char *err,
                            size_t errsz)
{
        char        name[256];
        const char *eq;
        int         r;

        if (!(eq = strchr(arg, '=')) || (size_t)(eq - arg) >= sizeof(name))
                return -ks_cli_usage_error(
                    "plan", "-X: expected NAME=VALUE, got '%s'", arg);
        snprintf(name, sizeof(name), "%.*s", (int)(eq - arg), arg);
        r = ks_sizing_params_set(&pl->p, name, eq + 1, err, errsz);
        if (r < 0)
                return -ks_cli_usage_error("plan",
                                           "-X: '%s' is not a sizing "
                                           "property (see "
                                           "docs/keyshift-cli.md)",
                                           name);
        return r;
}

/**
 * @brief Parses `keyshift plan`'s arguments into @p pl (its sizing
 *        parameters initialised first), and checks the required ones.
 * @returns KS_PLAN_GO_ON, or the exit code (--help, or a usage error said
 *          on stderr).
 */
static int ks_plan_parse_args(int argc, char **argv, ks_plan_t *pl)
{
        static const struct option longopts[] = {
            {"peak-msgs-s", required_argument, NULL, O_PEAK},
            {"consumer-msgs-s", required_argument, NULL, O_CONS_RATE},
            {"consumers", required_argument, NULL, O_CONS},
            {"key-skew", required_argument, NULL, O_SKEW},
            {"peak-bytes-s", required_argument, NULL, O_BYTES},
            {"message-bytes", required_argument, NULL, O_MSGB},
            {"brokers", required_argument, NULL, O_BROKERS},
            {"replication-factor", required_argument, NULL, O_RF},
            {"current", required_argument, NULL, O_CURRENT},
            {"json", no_argument, NULL, O_JSON},
            {"help", no_argument, NULL, 'h'},
            {NULL, 0, NULL, 0}};
        char        err[512];
        const char *opt = NULL;
        int         c, r;

        ks_sizing_params_init(&pl->p);
        optind = 1;
        while ((c = getopt_long(argc, argv, "X:h", longopts, NULL)) != -1) {
                r = 0;
                switch (c) {
                case O_PEAK:
                case O_CONS_RATE:
                case O_CONS:
                case O_SKEW:
                case O_BYTES:
                case O_MSGB:
                case O_BROKERS:
                case O_RF:
                case O_CURRENT:
                        r = ks_plan_number(pl, c, optarg, &opt, err,
                                           sizeof(err));
                        break;
                case O_JSON:
                        pl->json = 1;
                        break;
                case 'X':
                        opt = "-X";
                        r   = ks_plan_property(pl, optarg, err, sizeof(err));
                        if (r < 0)
                                return -r;
                        break;
                case 'h':
                        ks_plan_help(stdout);
                        return KS_CLI_EXIT_OK;
                default:
                        return ks_cli_usage_error("plan", "bad option");
                }
                if (r)
                        return ks_cli_usage_error("plan", "%s: %s", opt, err);
        }
        if (optind < argc)
                return ks_cli_usage_error("plan", "unexpected argument '%s'",
                                          argv[optind]);
        if (pl->peak <= 0 || pl->per_consumer <= 0 || pl->consumers < 1)
                return ks_cli_usage_error("plan",
                                          "--peak-msgs-s, --consumer-msgs-s "
                                          "and --consumers "
                                          "are required");
        return KS_PLAN_GO_ON;
}

/** @brief Writes the plan as JSON (ks_plan_json()) to standard output. */
static void ks_plan_print_json(const ks_plan_t *pl, const ks_sizing_floor_t *fl,
                               const ks_sizing_rebalance_t   *rb,
                               const ks_sizing_constraints_t *cs)
{
        json_t *o = ks_plan_json(pl, fl, rb, cs);

        json_dumpf(o, stdout,
                   JSON_INDENT(2) | JSON_PRESERVE_ORDER |
                       JSON_REAL_PRECISION(10));
        printf("\n");
        json_decref(o);
}

int ks_cli_plan_main(int argc, char **argv)
{
        ks_plan_t               pl = {0};
        ks_sizing_floor_t       fl;
        ks_sizing_rebalance_t   rb;
        ks_sizing_constraints_t cs;
        int                     r;

        if ((r = ks_plan_parse_args(argc, argv, &pl)) != KS_PLAN_GO_ON)
                return r;
        /* what Kafka can hold, before any arithmetic: a topic of more
         * partitions than keyshift models (100,000; a whole cluster holds
         * ~200,000 under KRaft) is no plan, and its partitions count past
         * what the figures below can say ("/ 0 = 4611686018427387904") */
        if (ceil(pl.peak / pl.per_consumer) > KEYSHIFT_PARTITIONS_MAX)
                return ks_cli_usage_error(
                    "plan",
                    "--peak-msgs-s %g / --consumer-msgs-s %g "
                    "needs %.3g "
                    "partitions for throughput alone, more "
                    "than %d, the "
                    "most keyshift plans for: check the rates "
                    "(messages "
                    "per second)",
                    pl.peak, pl.per_consumer, ceil(pl.peak / pl.per_consumer),
                    KEYSHIFT_PARTITIONS_MAX);
        if (pl.bytes_s <= 0 && pl.msg_bytes > 0)
                pl.bytes_s = pl.peak * pl.msg_bytes;
        pl.p.consumer_msgs_per_s = pl.per_consumer;
        pl.p.consumers_max       = (double)pl.consumers;

        /* both consumer inputs are required above: the floor always has
         * a base (the plugin's report gives none without them) */
        ks_sizing_partition_floor(&pl.p, pl.peak, pl.skew > 0 ? pl.skew : 0,
                                  &fl);
        if (fl.recommended > KEYSHIFT_PARTITIONS_MAX)
                return ks_cli_usage_error(
                    "plan",
                    "the plan recommends %lld partitions (%lld "
                    "for "
                    "throughput x skew factor %.2f, to a power "
                    "of two), "
                    "more than %d, the most keyshift plans "
                    "for: check the "
                    "rates, or lower --key-skew",
                    (long long)fl.recommended,
                    (long long)fl.throughput_partitions, fl.skew_factor,
                    KEYSHIFT_PARTITIONS_MAX);
        ks_sizing_rebalance(&pl.p, fl.recommended, &rb);
        ks_sizing_constraints(&pl.p, fl.recommended, (int32_t)pl.brokers,
                              (int32_t)pl.rf, pl.bytes_s, &cs);
        if (pl.json)
                ks_plan_print_json(&pl, &fl, &rb, &cs);
        else
                ks_plan_print(&pl, &fl, &rb, &cs);
        return KS_CLI_EXIT_OK; /* main() flushes, and names a write error */
}
