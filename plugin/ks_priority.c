/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_priority.c
 * @brief SCHED_IDLE, else nice 19, for the calling thread (ks_priority.h).
 */
#include "ks_priority.h"

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

ks_priority_t ks_priority_lower_self(void)
{
#ifdef SCHED_IDLE
        struct sched_param sp = {.sched_priority = 0};

        if (!pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp))
                return KS_PRIORITY_IDLE;
#endif
#ifdef SYS_gettid
        /* the thread's own nice value (Linux), not the process's: with
         * PRIO_PROCESS and a thread id, setpriority() changes that thread
         * only; gettid() itself is glibc 2.30's, the syscall older */
        if (!setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19))
                return KS_PRIORITY_NICE19;
#endif
        return KS_PRIORITY_NORMAL;
}

const char *ks_priority_name(ks_priority_t p)
{
        switch (p) {
        case KS_PRIORITY_IDLE:
                return "SCHED_IDLE";
        case KS_PRIORITY_NICE19:
                return "nice 19";
        case KS_PRIORITY_NORMAL:
                return "normal";
        default:
                return NULL;
        }
}
