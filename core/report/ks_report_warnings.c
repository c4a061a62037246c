/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_report_warnings.c
 * @brief A topic's warnings, from its snapshot alone (ks_warn.h lists the
 *        codes; docs/report-schema.md says what each means).
 */
#include "ks_report.h"

#include <stdio.h>
#include <string.h>

#include "ks_report_fmt.h"
#include "ks_report_parts.h"

/** @returns whether topic @p s rehearses another count than its own:
 *           keyshift.partitions.current differs from the cluster's. */
int ks_report_rehearsal(const ks_topic_snapshot_t *s)
{
        return s->count_source == KS_COUNT_CONFIG && s->metadata_count &&
               s->metadata_count != s->partition_count;
}

/**
 * @returns how many of the topic's Schema Registry ids frame two keys or
 *          more; the two of them with the most messages in @p top[0..1]
 *          (-1 when fewer). An id that frames one key may be random bytes
 *          that look framed (ks_schema_ids_t).
 */
static size_t schema_ids_multi_key(const ks_schema_ids_t *ids, int32_t top[2])
{
        size_t   i, n = 0;
        uint64_t m[2] = {0, 0};

        top[0] = top[1] = -1;
        for (i = 0; i < ids->cnt; i++) {
                if (ids->keys[i] < 2)
                        continue;
                n++;
                if (top[0] < 0 || ids->messages[i] > m[0]) {
                        top[1] = top[0];
                        m[1]   = m[0];
                        top[0] = ids->id[i];
                        m[0]   = ids->messages[i];
                } else if (top[1] < 0 || ids->messages[i] > m[1]) {
                        top[1] = ids->id[i];
                        m[1]   = ids->messages[i];
                }
        }
        return n;
}

/** Bytes of a mismatched key the PARTITIONER_MISMATCH warning shows, in
 *  hex (a longer key is cut, and "..." says so). */
#define KS_MISMATCH_KEY_SHOWN 16
/** The shown key's prefix. */
#define KS_MISMATCH_KEY_PREFIX "key 0x"

/**
 * @brief The warnings of what the analysis counted: Schema Registry ids
 *        that frame several keys, a count not yet known (@p why: why it
 *        may still be, or NULL), messages not analysed or not placed, a
 *        change of count.
 */
static void counting_warnings(const ks_topic_snapshot_t *s, const char *why,
                              ks_warn_list_t *wl)
{
        const ks_topic_counters_t *c = &s->c;
        size_t                     multi;
        int32_t                    top[2];
        char                       ts[40];

        if ((multi = schema_ids_multi_key(&s->schema_ids, top)) > 1)
                ks_warn_add(wl, KS_WARN_MULTIPLE_SCHEMA_IDS, s->name,
                            "keys are framed with %zu Schema Registry ids that "
                            "each frame several keys (%d and %d the busiest): "
                            "the same logical key under two schemas has two "
                            "byte forms: two partitions when it is hashed, "
                            "two keys to compaction",
                            multi, (int)top[0], (int)top[1]);
        if (!s->partition_count)
                ks_warn_add(wl, KS_WARN_CURRENT_COUNT_UNKNOWN, s->name,
                            "the current partition count is unknown "
                            "(no metadata yet; set keyshift.partitions."
                            "current to override): %zu messages wait to be "
                            "placed%s%s",
                            s->pending, why ? "; " : "", why ? why : "");
        if (c->unanalysed)
                ks_warn_add(
                    wl, KS_WARN_ANALYSIS_BEHIND, s->name,
                    "%llu of %llu messages (%.2f%%) were not "
                    "analysed: keyshift's analysis fell behind this "
                    "producer (its staging ring was full) and skipped "
                    "them rather than slow produce(); the figures "
                    "describe the others (keyshift.overload=analyse "
                    "analyses them on the producing thread instead)",
                    (unsigned long long)c->unanalysed,
                    (unsigned long long)(c->unanalysed + c->total.messages),
                    100.0 * (double)c->unanalysed /
                        (double)(c->unanalysed + c->total.messages));
        if (c->unplaced)
                ks_warn_add(wl, KS_WARN_MESSAGES_UNPLACED, s->name,
                            "%llu messages arrived while the partition count "
                            "was unknown and could not be kept; they are "
                            "missing from the per-partition figures",
                            (unsigned long long)c->unplaced);
        if (s->count_changed_at_ms) {
                ks_report_rfc3339(s->count_changed_at_ms, ts, sizeof(ts));
                ks_warn_add(wl, KS_WARN_PARTITION_COUNT_CHANGED, s->name,
                            "partition count changed from %d to %d at %s; "
                            "per-partition figures restart there",
                            (int)s->previous_count, (int)s->partition_count,
                            ts);
        }
}

/**
 * @brief follows := "; all N checked deliveries follow the X hash: ..."
 *        when every delivery diagnosed follows one hash family other than
 *        the modelled partitioner's, else "".
 */
static void mismatch_follows(const ks_topic_snapshot_t *s, char *follows,
                             size_t followsz)
{
        const ks_topic_counters_t *c = &s->c;
        size_t                     f, best = 0;

        *follows = '\0';
        for (f = 1; f < sizeof(c->diag_follow) / sizeof(c->diag_follow[0]); f++)
                if (c->diag_follow[f] > c->diag_follow[best])
                        best = f;
        if (c->diag_checked && c->diag_follow[best] == c->diag_checked &&
            ks_topic_diag_families[best] !=
                ks_partitioner_hash_family(s->partitioner))
                snprintf(follows, followsz,
                         "; all %llu checked deliveries follow the "
                         "%s hash: this topic's own partitioner "
                         "setting (a topic configuration, as kcat -X "
                         "partitioner=... makes) is invisible to a "
                         "plugin: set keyshift.partitioner",
                         (unsigned long long)c->diag_checked,
                         ks_partitioner_name(ks_topic_diag_families[best]));
}

/**
 * @brief keybuf := the mismatched key kept in @p s as "key 0x<hex>" (its
 *        first KS_MISMATCH_KEY_SHOWN bytes, "..." when longer), or "a key
 *        not kept".
 */
static void mismatch_key(const ks_topic_snapshot_t *s, char *keybuf,
                         size_t keybufsz)
{
        const size_t prefix = sizeof(KS_MISMATCH_KEY_PREFIX) - 1;
        size_t       k, kl = s->mismatch.keylen < KS_MISMATCH_KEY_SHOWN
                                 ? s->mismatch.keylen
                                 : KS_MISMATCH_KEY_SHOWN;

        snprintf(keybuf, keybufsz, "%s", KS_MISMATCH_KEY_PREFIX);
        for (k = 0; k < kl; k++)
                snprintf(keybuf + prefix + 2 * k, 3, "%02x",
                         s->mismatch.key[k]);
        if (s->mismatch.keylen > KS_MISMATCH_KEY_SHOWN)
                strcat(keybuf, "...");
        if (s->mismatch.keylen == KS_MISMATCH_KEY_NOT_KEPT)
                snprintf(keybuf, keybufsz, "a key not kept");
}

/**
 * @brief The warnings of the deliveries: a rehearsal (not checked), or
 *        deliveries that disagree with the model (PARTITIONER_MISMATCH),
 *        with an example and the hash they follow, or more disagreements
 *        than messages sent to explicit partitions.
 */
static void delivery_warnings(const ks_topic_snapshot_t *s, ks_warn_list_t *wl)
{
        const ks_topic_counters_t *c = &s->c;

        if (ks_report_rehearsal(s)) {
                ks_warn_add(
                    wl, KS_WARN_COUNT_REHEARSED, s->name,
                    "a rehearsal: keyshift.partitions.current says %d "
                    "partitions, the topic has %d; every figure is modelled "
                    "for %d, and the deliveries (to the topic's %d) are not "
                    "checked against the model",
                    (int)s->partition_count, (int)s->metadata_count,
                    (int)s->partition_count, (int)s->metadata_count);
        } else if (c->ack_mismatched) {
                /* the prefix and its NUL, 2 hex digits a byte, "..." */
                char keybuf[sizeof(KS_MISMATCH_KEY_PREFIX) +
                            2 * KS_MISMATCH_KEY_SHOWN + 3];
                char follows[256];

                mismatch_follows(s, follows, sizeof(follows));
                mismatch_key(s, keybuf, sizeof(keybuf));
                ks_warn_add(
                    wl, KS_WARN_PARTITIONER_MISMATCH, s->name,
                    "%llu of %llu delivered keyed messages landed in another "
                    "partition than %s predicts (e.g. %s: expected %d, "
                    "delivered to %d of %d): %s%s",
                    (unsigned long long)c->ack_mismatched,
                    (unsigned long long)(c->ack_matched + c->ack_mismatched),
                    ks_partitioner_name(s->partitioner), keybuf,
                    (int)s->mismatch.expected, (int)s->mismatch.actual,
                    (int)s->mismatch.partition_count,
                    s->count_source == KS_COUNT_CONFIG
                        ? "the count comes from keyshift.partitions.current: "
                          "is it the topic's real count? Else a custom or "
                          "per-topic partitioner"
                        : "a custom or per-topic partitioner, or a model bug",
                    follows);
        } else if (c->ack_disagree_explicit >
                   c->explicit_partition.messages + c->unanalysed) {
                /* more disagreements than messages sent to explicit
                 * partitions (or not analysed, which may have been):
                 * not all of them can be explicit */
                ks_warn_add(
                    wl, KS_WARN_PARTITIONER_MISMATCH, s->name,
                    "%llu delivered keyed messages landed in another partition "
                    "than %s predicts, on a topic with only %llu messages sent "
                    "to explicit partitions: at least %llu were placed by "
                    "something else (a custom or per-topic partitioner?); "
                    "counted as unverified",
                    (unsigned long long)c->ack_disagree_explicit,
                    ks_partitioner_name(s->partitioner),
                    (unsigned long long)c->explicit_partition.messages,
                    (unsigned long long)(c->ack_disagree_explicit -
                                         c->explicit_partition.messages -
                                         c->unanalysed));
        }
}

/**
 * @brief The warnings of the proposed counts: one that is no increase,
 *        and the keyed messages an increase would move.
 */
static void proposal_warnings(const ks_topic_snapshot_t *s, ks_warn_list_t *wl)
{
        size_t i;

        for (i = 0; i < s->proposal_cnt; i++) {
                const ks_proposal_t *p = &s->proposals[i];
                if (p->partition_count <= s->partition_count) {
                        ks_warn_add(
                            wl, KS_WARN_PROPOSAL_NOT_AN_INCREASE, s->name,
                            "proposed count %d is not above the "
                            "current %d: Kafka cannot lower a "
                            "partition count",
                            (int)p->partition_count, (int)s->partition_count);
                        continue;
                }
                if (p->moved.messages && !s->learned.unexplained)
                        ks_warn_add(
                            wl, KS_WARN_KEYS_WOULD_MOVE, s->name,
                            "raising %d -> %d partitions would move %.1f%% "
                            "of keyed messages (%llu) to another partition; "
                            "per-key ordering breaks for them at the switch",
                            (int)s->partition_count, (int)p->partition_count,
                            100.0 * ks_report_frac(p->moved.messages,
                                                   s->window_hashed.messages),
                            (unsigned long long)p->moved.messages);
        }
}

void ks_report_topic_warnings(const ks_topic_snapshot_t *s, const char *why,
                              ks_warn_list_t *wl)
{
        counting_warnings(s, why, wl);
        delivery_warnings(s, wl);
        proposal_warnings(s, wl);
}
