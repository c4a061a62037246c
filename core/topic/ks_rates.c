/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_rates.c
 * @brief Per-second message and byte counts of a topic in fixed memory,
 *        with the rates and the peak the sizing advice is built on.
 *
 * What it estimates
 * -----------------
 * Over the whole run: messages/s and bytes/s since start and since the last
 * ks_rates_mark() (exact: ratios of exact counters), and the distribution
 * of the per-second counts, from which the peak, its 0.999 quantile, and
 * the peak-to-mean ratio come. Sizing "on the peak" means provisioning for
 * the busiest second but one in a thousand rather than for the average: a
 * partition or a consumer sized for the mean falls behind in every burst.
 *
 * Why not keep the series itself
 * ------------------------------
 * A producer runs for days; one counter per second is 86,400 a day per
 * topic. The quantile only needs the distribution of the per-second
 * values, not their order, so each completed second is dropped into a
 * histogram and forgotten. The "last interval" rates need only the
 * counters at the interval's start (ks_rates_mark()), not the seconds in
 * between.
 *
 * Histogram layout (log-linear, as in HdrHistogram: G. Tene,
 * http://hdrhistogram.org)
 * ------------------------------------------------------------------------
 * With S = 2^KS_RATES_SUB_BITS = 32 sub-buckets per power of two:
 *  - values 0 .. 2S-1 = 63 have one bucket each (exact);
 *  - a value v >= 64 with highest set bit e (2^e <= v < 2^(e+1), e >= 6)
 *    falls in one of the S equal sub-buckets of [2^e, 2^(e+1)), each
 *    w = 2^(e-5) wide: bucket 64 + (e-6) S + ((v >> (e-5)) - S).
 * A bucket's lower end is at least S w, so every value in it is within
 * w / (S w) = 1/32 of the bucket's upper end. The quantile returns the
 * upper end (never an underestimate: sizing must not come out short),
 * capped at the exact maximum: true <= returned < (1 + 1/32) x true.
 * Values from 2^40 on (10^12 messages or bytes in one second, beyond any
 * producer) share the last bucket; the exact maximum still caps them.
 *
 * Quantile definition: nearest rank (Hyndman & Fan 1996, definition 1): of
 * n completed seconds, the ceil(q n)-th smallest count. With fewer than
 * 1000 seconds the 0.999 quantile is therefore the busiest second.
 *
 * Memory: 2 histograms x (1152 buckets x 4 bytes + an 8-byte maximum) (a
 * bucket counts seconds: 2^32 s is 136 years) + 72 bytes of counters:
 * 9,304 bytes per topic.
 *
 * Merging across producer processes: the since-start and interval rates
 * add up; the histograms do not (the per-second total of two producers is
 * not a sum of their histograms), so each process reports its own peak.
 */
#include "ks_rates.h"

#include <string.h>

#define KS_RATES_SUB (1u << KS_RATES_SUB_BITS)

/** @returns the index of the highest set bit of @p v (v > 0). */
static unsigned high_bit(uint64_t v)
{
        return 63u - (unsigned)__builtin_clzll(v);
}

size_t ks_rates_bucket(uint64_t v)
{
        unsigned e;

        if (v < KS_RATES_EXACT)
                return (size_t)v;
        if (v >> KS_RATES_VALUE_BITS)
                return KS_RATES_BUCKETS - 1;
        e = high_bit(v);
        return KS_RATES_EXACT +
               (size_t)(e - KS_RATES_SUB_BITS - 1) * KS_RATES_SUB +
               (size_t)((v >> (e - KS_RATES_SUB_BITS)) - KS_RATES_SUB);
}

uint64_t ks_rates_bucket_lo(size_t b, uint64_t *hi)
{
        unsigned e, s;
        uint64_t lo;

        if (b < KS_RATES_EXACT) {
                if (hi)
                        *hi = b;
                return b;
        }
        e = (unsigned)((b - KS_RATES_EXACT) / KS_RATES_SUB) +
            KS_RATES_SUB_BITS + 1;
        s  = (unsigned)((b - KS_RATES_EXACT) % KS_RATES_SUB);
        lo = (uint64_t)(KS_RATES_SUB + s) << (e - KS_RATES_SUB_BITS);
        if (hi)
                *hi = b == KS_RATES_BUCKETS - 1
                          ? UINT64_MAX
                          : lo + (1ull << (e - KS_RATES_SUB_BITS)) - 1;
        return lo;
}

/** @brief Adds @p n seconds with value @p v (saturating at 2^32 - 1). */
static void hist_add(ks_rates_hist_t *h, uint64_t v, uint64_t n)
{
        uint32_t *c = &h->seconds[ks_rates_bucket(v)];

        *c = n >= (uint64_t)(UINT32_MAX - *c) ? UINT32_MAX : *c + (uint32_t)n;
        if (n && v > h->max)
                h->max = v;
}

void ks_rates_init(ks_rates_t *r, int64_t now_ms)
{
        memset(r, 0, sizeof(*r));
        r->start_ms = now_ms;
        r->mark_ms  = now_ms;
}

void ks_rates_roll(ks_rates_t *r, int64_t sec)
{
        uint64_t idle;

        if (sec <= r->sec)
                return;
        /* the second in progress is complete; the ones after it, up to the
         * second @p sec now starting, saw no message */
        idle = (uint64_t)(sec - r->sec - 1);
        hist_add(&r->hist_msgs, r->sec_msgs, 1);
        hist_add(&r->hist_bytes, r->sec_bytes, 1);
        hist_add(&r->hist_msgs, 0, idle);
        hist_add(&r->hist_bytes, 0, idle);
        r->sec       = sec;
        r->sec_msgs  = 0;
        r->sec_bytes = 0;
}

void ks_rates_mark(ks_rates_t *r, int64_t now_ms)
{
        r->mark_ms    = now_ms;
        r->mark_msgs  = r->msgs;
        r->mark_bytes = r->bytes;
}

/** @returns the second (from start) in progress at @p now_ms. */
static int64_t second_at(const ks_rates_t *r, int64_t now_ms)
{
        int64_t sec = now_ms > r->start_ms ? (now_ms - r->start_ms) / 1000 : 0;
        return sec > r->sec ? sec : r->sec;
}

uint64_t ks_rates_quantile(const ks_rates_t *r, int64_t now_ms,
                           ks_rates_series_t series, uint32_t ppm)
{
        const ks_rates_hist_t *h =
            series == KS_RATES_BYTES ? &r->hist_bytes : &r->hist_msgs;
        uint64_t pending =
            series == KS_RATES_BYTES ? r->sec_bytes : r->sec_msgs;
        int64_t  now_sec = second_at(r, now_ms);
        uint64_t n       = (uint64_t)r->sec; /* seconds in h */
        uint64_t idle = 0, rank, cum = 0, max = h->max, hi;
        size_t   pb     = 0, b;
        int      closed = now_sec > r->sec; /* the second in progress ended */

        /* The histogram as it would be after ks_rates_roll(r, now_sec),
         * without modifying it: the pending second in bucket pb, then idle
         * zero seconds. */
        if (closed) {
                idle = (uint64_t)(now_sec - r->sec - 1);
                pb   = ks_rates_bucket(pending);
                n += 1 + idle;
                if (pending > max)
                        max = pending;
        }
        if (!n)
                return 0;
        if (ppm > 1000000u)
                ppm = 1000000u;
        /* ceil(ppm n / 10^6) in integers: 0.999 x 1000 is not 999.0 in
         * binary floating point. n < 2^44 in practice (136 years x 4096). */
        rank = (n * ppm + 999999u) / 1000000u;
        if (!rank)
                rank = 1;
        for (b = 0; b < KS_RATES_BUCKETS; b++) {
                cum += h->seconds[b];
                if (closed && b == pb)
                        cum++;
                if (closed && b == 0)
                        cum += idle;
                if (cum >= rank)
                        break;
        }
        if (b == KS_RATES_BUCKETS)
                b = KS_RATES_BUCKETS - 1;
        ks_rates_bucket_lo(b, &hi);
        return hi < max ? hi : max;
}

void ks_rates_summarize(const ks_rates_t *r, int64_t now_ms,
                        ks_rates_summary_t *out)
{
        int64_t  now_sec = second_at(r, now_ms);
        uint64_t done_msgs; /* messages in completed seconds */
        uint64_t max = r->hist_msgs.max;

        memset(out, 0, sizeof(*out));
        if (now_ms > r->start_ms) {
                out->elapsed_s   = (double)(now_ms - r->start_ms) / 1000.0;
                out->msgs_per_s  = (double)r->msgs / out->elapsed_s;
                out->bytes_per_s = (double)r->bytes / out->elapsed_s;
        }
        if (now_ms > r->mark_ms) {
                out->interval_s = (double)(now_ms - r->mark_ms) / 1000.0;
                out->interval_msgs_per_s =
                    (double)(r->msgs - r->mark_msgs) / out->interval_s;
                out->interval_bytes_per_s =
                    (double)(r->bytes - r->mark_bytes) / out->interval_s;
        }
        /* completed seconds: every second before the one in progress at
         * now_ms (seconds are counted from start, so there are now_sec) */
        out->seconds = (uint64_t)now_sec;
        done_msgs    = now_sec > r->sec ? r->msgs : r->msgs - r->sec_msgs;
        if (now_sec > r->sec && r->sec_msgs > max)
                max = r->sec_msgs;
        out->max_msgs_per_s = max;
        if (out->seconds)
                out->mean_msgs_per_s = (double)done_msgs / (double)out->seconds;
        out->peak_msgs_per_s =
            ks_rates_quantile(r, now_ms, KS_RATES_MSGS, KS_RATES_PEAK_PPM);
        out->peak_bytes_per_s =
            ks_rates_quantile(r, now_ms, KS_RATES_BYTES, KS_RATES_PEAK_PPM);
        if (out->mean_msgs_per_s > 0)
                out->peak_to_mean =
                    (double)out->peak_msgs_per_s / out->mean_msgs_per_s;
}
