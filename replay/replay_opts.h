/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file replay_opts.h
 * @brief keyshift-replay's command line (replay_args.c).
 */
#ifndef KS_REPLAY_OPTS_H
#define KS_REPLAY_OPTS_H

typedef struct replay_opts {
        const char  *file; /**< NULL: synthetic feed */
        long long    count;
        const char  *topic;
        int          partitions;
        const char  *brokers; /**< NULL: mock cluster */
        const char **props;   /**< -X key=value, in order */
        int          props_cnt;
        const char  *plugin; /**< NULL: default search */
        int          no_plugin;
        const char  *proposed;
        const char  *report;
        double       rate;
        const char  *partitioner;
        int int32_pct; /**< MMSIs (in %) whose odd messages are int32 keys */
} replay_opts_t;

/** @brief Parses argv into @p o. @returns -1 to exit 0 (help, version),
 *         0 to run, 2 for a usage error (printed). */
int replay_parse_args(int argc, char **argv, replay_opts_t *o);

#endif /* KS_REPLAY_OPTS_H */
