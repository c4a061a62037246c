/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ksb_trip.c
 * @brief Issue 31's "files a message's trip enters and re-enters": the
 *        functions of keyshift's core one message passes through, in
 *        order, from on_send's work to its analysis in its topic.
 *
 * Built by bench/ksb_trip.sh with gcc's -finstrument-functions (every
 * function entry, inlined ones too, calls __cyg_profile_func_enter()). On
 * one thread, as bench/ksb_core.c --profile does: a topic is set up and
 * filled with 10,000 Zipf messages, drained; then the traced trip: one
 * message of a new key staged as ks_client_on_send() stages it
 * (ksb_topics_on_send()), collected by the drainer's pass
 * (ks_stage_collect()) and flushed into its topic (ks_stage_drain()).
 * Prints each function entered, as an address in this executable (its
 * load base subtracted), one a line; ksb_trip.sh names them with
 * addr2line and counts the files.
 *
 * Usage: ksb_trip   (output on stdout)
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ksb_keys.h"
#include "ksb_topics.h"

#define KSB_TRIP_MAX 100000

static void     *trip[KSB_TRIP_MAX];
static size_t    trip_cnt;
static int       tracing;
static uintptr_t base;

void __cyg_profile_func_enter(void *fn, void *site)
    __attribute__((no_instrument_function));
void __cyg_profile_func_exit(void *fn, void *site)
    __attribute__((no_instrument_function));

void __cyg_profile_func_enter(void *fn, void *site)
{
        (void)site;
        if (tracing && trip_cnt < KSB_TRIP_MAX)
                trip[trip_cnt++] = fn;
}

void __cyg_profile_func_exit(void *fn, void *site)
{
        (void)fn;
        (void)site;
}

static const char *const props[] = {"keyshift.partitions.proposed",
                                    "12,16,24", NULL};

int main(void)
{
        ksb_topics_t kt;
        ksb_stream_t st;
        Dl_info      info;
        size_t       i;

        if (dladdr((void *)main, &info) && info.dli_fbase)
                base = (uintptr_t)info.dli_fbase;
        ksb_stream_zipf(&st, 10000, 1000, 1.0, 0.01, 7);
        ksb_topics_init(&kt, props);
        ksb_topics_add(&kt, "ais", 6);
        for (i = 0; i < st.n; i++)
                ksb_topics_on_send(&kt, "ais", st.msgs[i].bytes,
                                   st.msgs[i].len, 64);
        ks_stage_drain(kt.stage);
        tracing = 1;
        ksb_topics_on_send(&kt, "ais", "999999999", 9, 64);
        ks_stage_collect(kt.stage);
        ks_stage_drain(kt.stage);
        tracing = 0;
        for (i = 0; i < trip_cnt; i++)
                printf("%#lx\n", (unsigned long)((uintptr_t)trip[i] - base));
        ksb_topics_destroy(&kt);
        ksb_stream_free(&st);
        return trip_cnt == KSB_TRIP_MAX;
}
