/**
 * @file test_report_real.c
 * @brief The report writer's reals (ks_report_fmt_real()) are the bytes
 *        jansson's own dump gives for them ("%.17g", ".0" appended), and
 *        the values it does not cover are left to jansson.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ks_report_parts.h"
#include "ks_test.h"

/** @returns 1 when ks_report_fmt_real(v) is what jansson dumps, or when it
 *           declines a value it does not cover (then jansson formats it). */
static int same_as_jansson(double v)
{
        char    buf[64], *e = ks_report_fmt_real(buf, v);
        json_t *j = json_real(v);
        char   *want;
        int     ok;

        if (!j) /* NaN, infinities: jansson has no such real */
                return e == NULL;
        want = json_dumps(j, JSON_ENCODE_ANY | JSON_COMPACT);
        json_decref(j);
        if (!e) {
                /* declined: only outside the covered range */
                double a = fabs(v);
                ok       = a >= 9007199254740992.0 ||
                     (a < 1e-4 && a != floor(a));
        } else {
                ok = (size_t)(e - buf) == strlen(want) &&
                     !memcmp(buf, want, strlen(want));
        }
        if (!ok)
                fprintf(stderr, "real %a: jansson \"%s\", ours \"%.*s\"\n", v,
                        want, e ? (int)(e - buf) : 4, e ? buf : "NULL");
        free(want);
        return ok;
}

static uint64_t rng = 88172645463325252ULL;
static uint64_t next(void)
{
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        return rng;
}

static void test_fixed_values(void)
{
        static const double v[] = {
            0.0, -0.0, 1.0, -1.0, 0.5, 0.1, 0.2, 0.3, 1.0 / 3, 2.0 / 3,
            0.008125, 9918.323839919445, 1e-4, 0.00010000000000000001,
            9.9999999999999991e-5, 0.0001234, 0.99999999999999989,
            0.99999999999999994, 9.9999999999999982, 123456.789,
            4503599627370496.5, 4503599627370495.5, 9007199254740991.0,
            9007199254740992.0, 1e16, 1e17, 1e300, 1e-300, 5e-324,
            2.2250738585072014e-308, 1234567890123456.8, 0.05, 2.5, 3.5,
            100.0 / 7, 1e15 + 0.125, NAN, INFINITY, -INFINITY, 1.5e-5,
            0.035, 0.000152587890625, 7.450580596923828125e-9};
        size_t i;

        for (i = 0; i < sizeof(v) / sizeof(v[0]); i++)
                CU_ASSERT(same_as_jansson(v[i]));
}

/** Values as a report holds them: fractions, ratios, rates, and any
 *  double's bit pattern in the covered range. */
static void test_random_values(void)
{
        size_t i, bad = 0;

        for (i = 0; i < 300000 && bad < 10; i++) {
                uint64_t r = next();
                double   v;
                switch (i % 5) {
                case 0: /* any bits */
                        memcpy(&v, &r, sizeof(v));
                        break;
                case 1: /* a fraction a / b */
                        v = (double)(r % 100000) / (double)(1 + (r >> 40) % 100000);
                        break;
                case 2: /* a magnitude from 1e-5 to 1e17 */
                        v = (double)(r >> 11) / 9007199254740992.0 *
                            pow(10.0, (double)((r % 23)) - 5);
                        break;
                case 3: /* a short decimal (ties to even in the 17th digit) */
                        v = (double)(r % 1000000) / pow(10.0, (double)(r >> 60));
                        break;
                default: /* a neighbour of an integer */
                        v = nextafter((double)(r % 100000),
                                      (r >> 63) ? 0.0 : 1e6);
                        break;
                }
                if (r & 0x100)
                        v = -v;
                if (!same_as_jansson(v))
                        bad++;
        }
        CU_ASSERT_EQUAL(bad, 0);
}

void ks_test_register(void)
{
        KS_ADD_SUITE("report reals",
                     {"fixed values as jansson dumps them", test_fixed_values},
                     {"random values as jansson dumps them",
                      test_random_values});
}
