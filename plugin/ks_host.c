/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file ks_host.c
 * @brief Binds keyshift to the host's own librdkafka at run time
 *        (ks_host.h explains why and how).
 */
#include "ks_host.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ks_warn.h"

ks_host_api_t ks_rdk;

static pthread_mutex_t ks_host_lock = PTHREAD_MUTEX_INITIALIZER;
static const void     *ks_host_base; /**< the bound object's dli_fbase */
static char            ks_host_file[4096];

/** The names of KS_HOST_FUNCS, in the order of ks_host_api_t's fields. */
static const char *const ks_host_names[] = {
#define KS_HOST_NAME(fn) #fn,
    KS_HOST_FUNCS(KS_HOST_NAME)
#undef KS_HOST_NAME
};

#define KS_HOST_FUNC_CNT (sizeof(ks_host_names) / sizeof(ks_host_names[0]))

/** The table seen as an array of function pointers, for the loop below. */
typedef union ks_host_slots {
        ks_host_api_t api;
        void (*fn[KS_HOST_FUNC_CNT])(void);
} ks_host_slots_t;

_Static_assert(sizeof(ks_host_api_t) ==
                   KS_HOST_FUNC_CNT * sizeof(void (*)(void)),
               "ks_host_api_t holds exactly the KS_HOST_FUNCS pointers");

/**
 * @brief Resolves every function of KS_HOST_FUNCS from @p handle, each of
 *        which must lie in the object based at @p base (dlsym() searches a
 *        handle's dependencies too, and the main program's handle the
 *        whole global scope: a function found elsewhere belongs to another
 *        librdkafka).
 * @returns NULL, or the name of the first function not found there.
 */
static const char *resolve(void *handle, const void *base, ks_host_slots_t *out)
{
        size_t i;

        for (i = 0; i < KS_HOST_FUNC_CNT; i++) {
                void   *sym = dlsym(handle, ks_host_names[i]);
                Dl_info si;

                if (!sym || !dladdr(sym, &si) || si.dli_fbase != base)
                        return ks_host_names[i];
                /* POSIX (dlsym): a data pointer converts to a function's */
                memcpy(&out->fn[i], &sym, sizeof(sym));
        }
        return NULL;
}

/** @brief Writes "a.b.c" of librdkafka version @p v into @p out. */
static void version_text(int v, char *out, size_t size)
{
        snprintf(out, size, "%d.%d.%d", (v >> 24) & 0xff, (v >> 16) & 0xff,
                 (v >> 8) & 0xff);
}

/**
 * @brief Fails the binding: @p brief goes to @p errstr, which hosts keep
 *        short (librdkafka's rd_kafka_conf_set() callers pass 128 to 512
 *        bytes, and it appends " (plugin <path>)"), so it leads with what
 *        to do; the whole story goes to stderr in librdkafka's log format.
 * @returns -1.
 */
static int fail(char *errstr, size_t errstr_size, const char *brief,
                const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int fail(char *errstr, size_t errstr_size, const char *brief,
                const char *fmt, ...)
{
        char    full[1024];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(full, sizeof(full), fmt, ap);
        va_end(ap);
        snprintf(errstr, errstr_size, "keyshift: %s", brief);
        ks_warn_log_line(stderr, 3, "keyshift", "%s; keyshift is not loaded",
                         full);
        return -1;
}

/** @returns 0 when @p caller's object was bound, else -1 with errstr. */
static int bind_locked(const void *caller, char *errstr, size_t errstr_size)
{
        Dl_info          ci;
        struct link_map *lm = NULL;
        void            *h  = NULL;
        int              in_program, v;
        const char      *missing = NULL, *file;
        ks_host_slots_t  s;
        char             have[32], min[32], brief[128];

        if (!dladdr1(caller, &ci, (void **)&lm, RTLD_DL_LINKMAP) ||
            !ci.dli_fbase)
                return fail(errstr, errstr_size,
                            "cannot find the librdkafka that loaded it",
                            "conf_init()'s caller %p is in no loaded object",
                            caller);
        file = ci.dli_fname ? ci.dli_fname : "?";
        if (ks_host_base) {
                if (ks_host_base == ci.dli_fbase)
                        return 0;
                return fail(errstr, errstr_size,
                            "already bound to another librdkafka in this "
                            "process (load a copy of libkeyshift.so)",
                            "this process already runs keyshift with the "
                            "librdkafka in %s; a second librdkafka (%s) "
                            "cannot load the same libkeyshift.so: load a copy "
                            "of it under another file name",
                            ks_host_file, file);
        }
        /* the main program's link map has no name (glibc, dladdr1) */
        in_program = lm && lm->l_name && !lm->l_name[0];
        if (!in_program && *file)
                h = dlopen(file, RTLD_NOW | RTLD_NOLOAD);
        if (!h)
                h = dlopen(NULL, RTLD_NOW);
        if (h)
                missing = resolve(h, ci.dli_fbase, &s);
        if (!h || missing) {
                if (h)
                        dlclose(h);
                if (in_program)
                        return fail(
                            errstr, errstr_size,
                            "librdkafka is linked into the program without "
                            "exported symbols (Go: build with -tags dynamic)",
                            "the librdkafka that loaded it is linked into "
                            "the program (%s) and does not export %s, as "
                            "with a Go program built with confluent-kafka-"
                            "go's bundled static librdkafka: keyshift needs "
                            "a shared librdkafka 2.x (build the Go program "
                            "with -tags dynamic, or link the program with "
                            "-rdynamic)",
                            file, missing ? missing : "its functions");
                snprintf(brief, sizeof(brief),
                         "the librdkafka that loaded it does not export %s",
                         missing ? missing : "its functions");
                return fail(errstr, errstr_size, brief,
                            "the librdkafka that loaded it (%s) does not "
                            "export %s",
                            file, missing ? missing : "its functions");
        }
        v = s.api.rd_kafka_version();
        if (v < KS_HOST_VERSION_MIN || v >= KS_HOST_VERSION_END) {
                dlclose(h);
                version_text(v, have, sizeof(have));
                version_text(KS_HOST_VERSION_MIN, min, sizeof(min));
                snprintf(brief, sizeof(brief),
                         "librdkafka %s is not supported: needs 2.x, %s or "
                         "newer",
                         have, min);
                return fail(errstr, errstr_size, brief,
                            "librdkafka %s (%s) is not supported: keyshift "
                            "needs librdkafka 2.x, %s or newer",
                            have, file, min);
        }
        /* the handle stays open: the host's librdkafka outlives keyshift */
        ks_rdk       = s.api;
        ks_host_base = ci.dli_fbase;
        snprintf(ks_host_file, sizeof(ks_host_file), "%s", file);
        return 0;
}

int ks_host_bind(const void *caller, char *errstr, size_t errstr_size)
{
        int r;

        pthread_mutex_lock(&ks_host_lock);
        r = bind_locked(caller, errstr, errstr_size);
        pthread_mutex_unlock(&ks_host_lock);
        return r;
}

const char *ks_host_library(void)
{
        return ks_host_file;
}
