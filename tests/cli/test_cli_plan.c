/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file test_cli_plan.c
 * @brief `keyshift plan`: its figures against the formulas of the issue,
 *        computed here independently of core/report/ks_sizing.c:
 *
 *   floor       = ceil(max(ceil(peak / per_consumer), consumers)
 *                      x clamp(key_skew / 30, 2, 4))   (2 if skew unknown)
 *   recommended = the next power of two >= floor
 *   rebalance   = recommended x ms per partition (4) / 1000 s, x 6 a day
 *   brokers     = the fewest b >= r with 2 P r / b <= 10000,
 *                 1 ms x P r / b <= 200 ms and 5 ms x P / b <= 2000 ms
 *   moved keys  = 1 - min(P, Q) / lcm(P, Q) from P to Q partitions
 *
 * and its command line: required options, ranges, -X properties, exit 2.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_test_support.h"
#include "ks_e2e_support.h"
#include "ks_test.h"

static long long next_pow2(long long n)
{
        long long p = 1;
        while (p < n)
                p *= 2;
        return p;
}

static long long expected_floor(double peak, double per, long long consumers,
                                double skew)
{
        double base = ceil(peak / per);
        double f    = skew > 0 ? skew / 30 : 2;

        if (base < (double)consumers)
                base = (double)consumers;
        f = f < 2 ? 2 : f > 4 ? 4 : f;
        return (long long)ceil(base * f - 1e-9);
}

static json_t *plan_json(const char *args)
{
        ks_clit_run_t r;
        json_t       *j;

        CU_ASSERT_EQUAL(ks_clit_run(&r, "plan --json %s", args), 0);
        j = json_loads(r.out, 0, NULL);
        CU_ASSERT_PTR_NOT_NULL(j);
        ks_clit_run_free(&r);
        return j;
}

static void test_plan_floor_and_recommended(void)
{
        static const struct {
                double    peak, per;
                long long consumers;
                double    skew; /* 0: not given */
        } cases[] = {
            {50000, 4000, 12, 90},  /* throughput 13, x3 = 39 -> 64 */
            {50000, 4000, 12, 0},   /* unknown skew: x2 = 26 -> 32 */
            {1000, 4000, 24, 45},   /* consumers 24, x2 = 48 -> 64 */
            {1e6, 1000, 10, 1000},  /* 1000, x4 = 4000 -> 4096 */
            {7, 10, 1, 61},         /* 1, x2.0333 = 3 -> 4 */
            {120000, 1000, 100, 75} /* 120 x 2.5 = 300 -> 512 */
        };
        size_t i;

        for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char      args[256], skew[64] = "";
                json_t   *j;
                long long fl;
                if (cases[i].skew > 0)
                        snprintf(skew, sizeof(skew), "--key-skew %g",
                                 cases[i].skew);
                snprintf(args, sizeof(args),
                         "--peak-msgs-s %g --consumer-msgs-s %g "
                         "--consumers %lld %s",
                         cases[i].peak, cases[i].per, cases[i].consumers, skew);
                j  = plan_json(args);
                fl = expected_floor(cases[i].peak, cases[i].per,
                                    cases[i].consumers, cases[i].skew);
                CU_ASSERT_EQUAL(ks_e2e_int(j, "floor/partition_floor"), fl);
                CU_ASSERT_EQUAL(ks_e2e_int(j, "floor/recommended"),
                                next_pow2(fl));
                CU_ASSERT(fabs(json_number_value(
                                   ks_e2e_get(j, "rebalance/per_rebalance_s")) -
                               (double)next_pow2(fl) * 4 / 1000) < 1e-9);
                CU_ASSERT(fabs(json_number_value(
                                   ks_e2e_get(j, "rebalance/per_day_s")) -
                               (double)next_pow2(fl) * 4 / 1000 * 6) < 1e-9);
                json_decref(j);
        }
}

static void test_plan_brokers_and_current(void)
{
        json_t   *j;
        long long P, b;

        /* 1000 x 2 = 2000 -> 2048 partitions, replication factor 3 */
        j = plan_json("--peak-msgs-s 1e6 --consumer-msgs-s 1000 --consumers "
                      "10 --brokers 40 --replication-factor 3 "
                      "--message-bytes 500");
        P = ks_e2e_int(j, "floor/recommended");
        CU_ASSERT_EQUAL(P, 2048);
        b = 3;
        while (2.0 * P * 3 / b > 10000 || 1.0 * P * 3 / b > 200 ||
               5.0 * P / b > 2000)
                b++;
        CU_ASSERT_EQUAL(ks_e2e_int(j, "fewest_brokers"), b); /* 31 */
        /* 40 brokers: 2048 x 3 / 40 = 153.6 ms <= 200 */
        CU_ASSERT(json_is_true(
            ks_e2e_get(j, "constraints/replication_latency_ms/ok")));
        /* 500 MB/s over 10 MB/s per partition: 50 needed */
        CU_ASSERT(fabs(json_number_value(
                           ks_e2e_get(j, "constraints/throughput/limit")) -
                       50) < 1e-9);
        json_decref(j);

        /* 20 brokers: the replication latency bound is violated */
        j = plan_json("--peak-msgs-s 1e6 --consumer-msgs-s 1000 --consumers "
                      "10 --brokers 20 --replication-factor 3");
        CU_ASSERT(json_is_false(
            ks_e2e_get(j, "constraints/replication_latency_ms/ok")));
        CU_ASSERT(json_is_false(ks_e2e_get(j, "constraints_satisfied")));
        CU_ASSERT(json_is_null(ks_e2e_get(j, "constraints/throughput")));
        json_decref(j);

        /* from 6 to 32 partitions: 1 - 6 / lcm(6, 32) = 1 - 6/96 */
        j = plan_json("--peak-msgs-s 50000 --consumer-msgs-s 4000 "
                      "--consumers 12 --current 6");
        CU_ASSERT_EQUAL(ks_e2e_int(j, "floor/recommended"), 32);
        CU_ASSERT(fabs(json_number_value(
                           ks_e2e_get(j, "from_current/keys_fraction_moved")) -
                       (1 - 6.0 / 96)) < 1e-12);
        CU_ASSERT(json_is_false(ks_e2e_get(j, "from_current/sufficient")));
        json_decref(j);

        /* a sizing property: 10 ms per partition */
        j = plan_json("--peak-msgs-s 50000 --consumer-msgs-s 4000 "
                      "--consumers 12 -X "
                      "keyshift.rebalance.ms.per.partition=10");
        CU_ASSERT(
            fabs(json_number_value(ks_e2e_get(j, "rebalance/per_rebalance_s")) -
                 0.32) < 1e-9);
        json_decref(j);
}

static void test_plan_text_and_usage(void)
{
        ks_clit_run_t r;

        CU_ASSERT_EQUAL(ks_clit_run(&r, "plan --peak-msgs-s 50000 "
                                        "--consumer-msgs-s 4000 --consumers 12 "
                                        "--key-skew 90 --brokers 3 "
                                        "--replication-factor 3 "
                                        "--message-bytes 1000 --current 6"),
                        0);
        CU_ASSERT(ks_clit_has(r.out, "recommended       64 partitions"));
        CU_ASSERT(ks_clit_has(r.out, "skew factor 3.00"));
        CU_ASSERT(ks_clit_has(r.out, "fewest brokers    3"));
        CU_ASSERT(ks_clit_has(r.out, "raising 6 -> 64 moves 96.9% of keys"));
        printf("%s", r.out);
        ks_clit_run_free(&r);

        CU_ASSERT_EQUAL(ks_clit_run(&r, "plan --help"), 0);
        CU_ASSERT(ks_clit_has(r.out, "Usage: keyshift plan"));
        ks_clit_run_free(&r);
        CU_ASSERT_EQUAL(ks_clit_run(&r, "plan --peak-msgs-s 100"), 2);
        CU_ASSERT(ks_clit_has(r.err, "required"));
        ks_clit_run_free(&r);
        CU_ASSERT_EQUAL(ks_clit_run(&r, "plan --peak-msgs-s -5 "
                                        "--consumer-msgs-s 1 --consumers 1"),
                        2);
        CU_ASSERT(ks_clit_has(r.err, "--peak-msgs-s"));
        ks_clit_run_free(&r);
        CU_ASSERT_EQUAL(ks_clit_run(&r, "plan --peak-msgs-s 5 "
                                        "--consumer-msgs-s 1 --consumers 0"),
                        2);
        CU_ASSERT(ks_clit_has(r.err, "--consumers"));
        ks_clit_run_free(&r);
        CU_ASSERT_EQUAL(ks_clit_run(&r, "plan --peak-msgs-s 5 "
                                        "--consumer-msgs-s x --consumers 1"),
                        2);
        ks_clit_run_free(&r);
        CU_ASSERT_EQUAL(ks_clit_run(&r, "plan --peak-msgs-s 5 "
                                        "--consumer-msgs-s 1 --consumers 1 "
                                        "-X keyshift.nope=1"),
                        2);
        CU_ASSERT(ks_clit_has(r.err, "keyshift.nope"));
        ks_clit_run_free(&r);
        CU_ASSERT_EQUAL(ks_clit_run(&r, "plan --peak-msgs-s 5 "
                                        "--consumer-msgs-s 1 --consumers 1 "
                                        "-X keyshift.rebalances.per.day=-1"),
                        2);
        ks_clit_run_free(&r);
        CU_ASSERT_EQUAL(ks_clit_run(&r, "plan --peak-msgs-s 5 "
                                        "--consumer-msgs-s 1 --consumers 1 "
                                        "extra"),
                        2);
        ks_clit_run_free(&r);
}

/** @brief `plan ARGS` refused as a usage error (2), one message holding
 *         @p needle, nothing on stdout. */
static void plan_refused(const char *args, const char *needle)
{
        ks_clit_run_t r;

        CU_ASSERT_EQUAL(ks_clit_run(&r, "plan %s", args), 2);
        CU_ASSERT(ks_clit_has(r.err, needle));
        CU_ASSERT_EQUAL(r.out_len, 0);
        ks_clit_run_free(&r);
}

/**
 * @brief Inputs beyond what Kafka can hold are refused, not computed
 *        (issue 30: 1e12 / 1e-9 printed "/ 0 = 4611686018427387904"), and
 *        numbers are the properties' decimal grammar: "12." and "0x10"
 *        are refused, as keyshift.hot.keys refuses them.
 */
static void test_plan_limits_and_numbers(void)
{
        ks_clit_run_t r;

        plan_refused("--peak-msgs-s 1e12 --consumer-msgs-s 1e-9 --consumers 1",
                     "more than 100000");
        plan_refused("--peak-msgs-s 1e6 --consumer-msgs-s 20 --consumers 1",
                     "recommends 131072 partitions");
        plan_refused("--peak-msgs-s 12. --consumer-msgs-s 1 --consumers 1",
                     "'12.' is not a decimal number");
        plan_refused("--peak-msgs-s 12 --consumer-msgs-s 0x10 --consumers 1",
                     "'0x10' is not a decimal number");
        plan_refused("--peak-msgs-s inf --consumer-msgs-s 1 --consumers 1",
                     "not a decimal number");
        plan_refused("--peak-msgs-s 12 --consumer-msgs-s 1 --consumers ' 1'",
                     "not a whole number");
        plan_refused("--peak-msgs-s 12 --consumer-msgs-s 1 --consumers 0x10",
                     "not a whole number");
        /* the largest plan that fits is computed */
        CU_ASSERT_EQUAL(ks_clit_run(&r, "plan --peak-msgs-s 1e6 "
                                        "--consumer-msgs-s 40 --consumers 1"),
                        0);
        CU_ASSERT(ks_clit_has(r.out, "65536 partitions"));
        ks_clit_run_free(&r);
        /* the sizing properties share the grammar (integers: digits) */
        CU_ASSERT_EQUAL(ks_clit_run(&r, "config "
                                        "keyshift.consumer.msgs.per.s=0x10"),
                        1);
        ks_clit_run_free(&r);
        CU_ASSERT_EQUAL(
            ks_clit_run(&r, "config keyshift.consumer.msgs.per.s=12."), 1);
        ks_clit_run_free(&r);
        CU_ASSERT_EQUAL(ks_clit_run(&r, "config keyshift.consumers.max=1e3"),
                        1);
        ks_clit_run_free(&r);
        CU_ASSERT_EQUAL(
            ks_clit_run(&r, "config keyshift.consumer.msgs.per.s=1.5e3"), 0);
        ks_clit_run_free(&r);
}

void ks_test_register(void)
{
        KS_ADD_SUITE(
            "cli plan",
            {"limits and the number grammar", test_plan_limits_and_numbers},
            {"floor and recommended count", test_plan_floor_and_recommended},
            {"brokers, constraints, current count",
             test_plan_brokers_and_current},
            {"text output and usage errors", test_plan_text_and_usage});
}
