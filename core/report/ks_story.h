/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_story.h
 * @brief One story per topic: the headline that the report's `summary`,
 *        `keyshift show` and `keyshift html` all print, made by one
 *        function from the topic's object in a keyshift.report.v2 report
 *        (docs/report-schema.md), so that they never disagree.
 *
 * The story, in this order, each part only when the report has its
 * figures:
 *  0. when messages were skipped (`keys.unanalysed`), first of all:
 *     "partial: keyshift analysed X of Y messages (P %)" and that the
 *     fractions are estimates and the counts lower bounds (ks_analysis.h);
 *     when messages were sampled (`analysis.sampled`), then: "estimated:
 *     the producer was out of CPU for S s of U (keyshift analysed 1
 *     message in up to N then); figures below are estimates (+/- 3
 *     sigma)" and what that makes of them;
 *  1. what the least-moving increase moves (keyed messages and distinct
 *     keys that change partition, from `proposals[].moved`), or that it
 *     cannot be predicted (`predictable: false`), or that no proposal is
 *     above the current count;
 *  2. whether partitions are balanced: the busiest partition over the
 *     median now and at each proposal (`skew.partitions`), against the
 *     limit (`keyshift.partition.skew.max`, 2.5 by default);
 *  3. what limits the topic: the busiest hot key that more partitions
 *     cannot spread (`hot_keys[].fixable_by_partitions` false: its rate
 *     exceeds one partition's target), with its salt buckets; held back
 *     under 10 s of traffic (`sizing.enough_data` false), as HOT_KEY is,
 *     and the advice is then marked rough;
 *  4. the advice and the inputs that drove it (`sizing`, ks_sizing.h):
 *     recommended = the next power of two >= floor, floor = base x skew
 *     factor, base from throughput (peak / per-consumer rate) or planned
 *     consumers, naming the consumer input not given (`sizing.needs`);
 *     with an unspreadable hot key the advice is for the other keys.
 *     Without keyshift.consumer.msgs.per.s and keyshift.consumers.max (or
 *     a report of an earlier keyshift whose base was today's count) no
 *     count is recommended: the story names the two properties, gives the
 *     measured peak, key skew and skew factor, and the floor at the
 *     report's assumed per-consumer rates (`sizing.illustration`), said
 *     to be an illustration;
 *  5. that deliveries disagreed with the model (`acknowledged.mismatched`).
 *
 * Thread-safety: a pure function of its arguments.
 */
#ifndef KS_STORY_H
#define KS_STORY_H

#include <stddef.h>

#include <jansson.h>

/** Bytes a headline needs at most (its five parts, with a long key, and
 *  both the partial and the sampled lines). */
#define KS_STORY_MAX 2560

/**
 * @brief Writes topic @p topic's headline (plain text, sentences, no
 *        newline) into @p buf of @p size bytes (cut, never overflowed).
 * @returns @p buf.
 */
const char *ks_story_headline(const json_t *topic, char *buf, size_t size);

#endif /* KS_STORY_H */
