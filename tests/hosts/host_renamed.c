/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file host_renamed.c
 * @brief A .NET-style host: librdkafka under another file name, loaded
 *        with RTLD_LOCAL by the program, with keyshift loaded by full path.
 *
 *   host_renamed LIBRDKAFKA_COPY PLUGIN REPORT [SECOND_LIBRDKAFKA]
 *
 * Confluent.Kafka's librdkafka.redist ships runtimes/<rid>/native/librdkafka.so
 * (SONAME librdkafka.so.1) and loads it itself; this program does the same
 * with a copy of a librdkafka made by the test script. This program links
 * no librdkafka: every call goes through dlsym() on the copy. It produces
 * keyed messages to the mock cluster and checks, with no tolerance:
 *  - /proc/self/maps shows one librdkafka file, the copy;
 *  - the report names the copy's version; its deliveries all matched;
 *  - current.partitions and the proposals' moved messages equal the copy's
 *    own rd_kafka_msg_partitioner_consistent() for the same keys;
 *  - with SECOND_LIBRDKAFKA (another file, so a second librdkafka in the
 *    process), that one's rd_kafka_conf_set("plugin.library.paths") of
 *    the same plugin is refused with keyshift's "already bound" error:
 *    one libkeyshift.so serves one librdkafka per process.
 * Exits 0 when all hold, 1 otherwise (with the reason on stderr).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <librdkafka/rdkafka.h>

#define MESSAGES 5000
#define TOPIC "vessels"
static const int proposed[] = {6, 12};

/* The copy's functions (the names of rdkafka.h, through the copy). */
static struct {
        __typeof__(rd_kafka_conf_new)           *conf_new;
        __typeof__(rd_kafka_conf_set)           *conf_set;
        __typeof__(rd_kafka_conf_set_dr_msg_cb) *set_dr_msg_cb;
        __typeof__(rd_kafka_new)                *kafka_new;
        __typeof__(rd_kafka_topic_new)          *topic_new;
        __typeof__(rd_kafka_topic_destroy)      *topic_destroy;
        __typeof__(rd_kafka_produce)            *produce;
        __typeof__(rd_kafka_poll)               *poll;
        __typeof__(rd_kafka_flush)              *flush;
        __typeof__(rd_kafka_destroy)            *destroy;
        __typeof__(rd_kafka_version_str)        *version_str;
        int32_t (*consistent)(const rd_kafka_topic_t *, const void *, size_t,
                              int32_t, void *, void *);
} rdk;

static int delivered, mismatched_dr, bad_dr;

static int failed(const char *what)
{
        fprintf(stderr, "host_renamed: FAIL: %s\n", what);
        return 1;
}

static void dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
        (void)rk, (void)opaque;
        delivered++;
        if (m->err)
                bad_dr++;
        else if (m->key_len > 0 &&
                 m->partition !=
                     rdk.consistent(NULL, m->key, m->key_len, 4, NULL, NULL))
                mismatched_dr++;
}

/** @returns the number of distinct librdkafka files mapped; the first
 *           one's path in @p first. */
static int mapped_librdkafkas(char *first, size_t size)
{
        FILE *fp = fopen("/proc/self/maps", "r");
        char  line[4096], seen[8][1024];
        int   n = 0, i;

        while (fp && fgets(line, sizeof(line), fp)) {
                char *path = strchr(line, '/');
                if (!path || !strstr(path, "librdkafka") ||
                    strstr(path, "librdkafka++"))
                        continue;
                path[strcspn(path, "\n")] = 0;
                for (i = 0; i < n && strcmp(seen[i], path); i++)
                        ;
                if (i == n && n < 8)
                        snprintf(seen[n++], sizeof(seen[0]), "%s", path);
        }
        if (fp)
                fclose(fp);
        snprintf(first, size, "%s", n ? seen[0] : "");
        return n;
}

static int bind_copy(const char *path)
{
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);

        if (!h) {
                fprintf(stderr, "host_renamed: %s\n", dlerror());
                return -1;
        }
#define SYM(field, name)                                                       \
        if (!(*(void **)&rdk.field = dlsym(h, name)))                          \
                return -1;
        SYM(conf_new, "rd_kafka_conf_new");
        SYM(conf_set, "rd_kafka_conf_set");
        SYM(set_dr_msg_cb, "rd_kafka_conf_set_dr_msg_cb");
        SYM(kafka_new, "rd_kafka_new");
        SYM(topic_new, "rd_kafka_topic_new");
        SYM(topic_destroy, "rd_kafka_topic_destroy");
        SYM(produce, "rd_kafka_produce");
        SYM(poll, "rd_kafka_poll");
        SYM(flush, "rd_kafka_flush");
        SYM(destroy, "rd_kafka_destroy");
        SYM(version_str, "rd_kafka_version_str");
        SYM(consistent, "rd_kafka_msg_partitioner_consistent");
#undef SYM
        return 0;
}

/** @returns 0 when the librdkafka at @p path, a second one in the
 *           process, is refused the plugin @p plugin with keyshift's error
 *           (and without a crash). */
static int second_librdkafka(const char *path, const char *plugin)
{
        void                          *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        __typeof__(rd_kafka_conf_new) *conf_new;
        __typeof__(rd_kafka_conf_set) *conf_set;
        __typeof__(rd_kafka_conf_destroy) *conf_destroy;
        rd_kafka_conf_t                   *conf;
        rd_kafka_conf_res_t                res;
        char                               errstr[512] = "", lib[1024];

        if (!h || !(*(void **)&conf_new = dlsym(h, "rd_kafka_conf_new")) ||
            !(*(void **)&conf_set = dlsym(h, "rd_kafka_conf_set")) ||
            !(*(void **)&conf_destroy = dlsym(h, "rd_kafka_conf_destroy")))
                return failed("cannot load the second librdkafka");
        if (mapped_librdkafkas(lib, sizeof(lib)) != 2)
                return failed("the second librdkafka is not a second copy");
        conf = conf_new();
        res  = conf_set(conf, "plugin.library.paths", plugin, errstr,
                        sizeof(errstr));
        conf_destroy(conf);
        if (res == RD_KAFKA_CONF_OK || !strstr(errstr, "already bound"))
                return failed("a second librdkafka in the process was not "
                              "refused with keyshift's error");
        printf("ok: a second librdkafka (%s) in the process is refused: %s\n",
               path, errstr);
        return 0;
}

int main(int argc, char **argv)
{
        rd_kafka_conf_t  *conf;
        rd_kafka_t       *rk;
        rd_kafka_topic_t *rkt;
        char              errstr[512], key[32], val[32], lib[1024];
        json_t           *r, *t;
        json_error_t      jerr;
        long long         moved[2] = {0}, load[4] = {0};
        int               i, j, cnt;
        size_t            k;

        if (argc != 4 && argc != 5) {
                fprintf(stderr,
                        "usage: host_renamed COPY PLUGIN REPORT [SECOND]\n");
                return 2;
        }
        if (bind_copy(argv[1]))
                return failed("cannot load the copy or find its functions");
        conf = rdk.conf_new();
        if (rdk.conf_set(conf, "plugin.library.paths", argv[2], errstr,
                         sizeof(errstr)) != RD_KAFKA_CONF_OK) {
                fprintf(stderr, "host_renamed: %s\n", errstr);
                return failed("plugin.library.paths refused");
        }
        rdk.conf_set(conf, "test.mock.num.brokers", "1", errstr,
                     sizeof(errstr));
        rdk.conf_set(conf, "keyshift.report.path", argv[3], errstr,
                     sizeof(errstr));
        rdk.conf_set(conf, "keyshift.partitions.proposed", "6,12", errstr,
                     sizeof(errstr));
        rdk.conf_set(conf, "keyshift.overload", "analyse", errstr,
                     sizeof(errstr));
        rdk.set_dr_msg_cb(conf, dr_cb);
        if (!(rk = rdk.kafka_new(RD_KAFKA_PRODUCER, conf, errstr,
                                 sizeof(errstr))))
                return failed(errstr);
        rkt = rdk.topic_new(rk, TOPIC, NULL);
        for (i = 0; i < MESSAGES; i++) {
                snprintf(key, sizeof(key), "%d", 257000000 + i % 977);
                snprintf(val, sizeof(val), "pos-%d", i);
                while (rdk.produce(rkt, RD_KAFKA_PARTITION_UA,
                                   RD_KAFKA_MSG_F_COPY, val, strlen(val), key,
                                   strlen(key), NULL) == -1)
                        rdk.poll(rk, 10);
                rdk.poll(rk, 0);
        }
        rdk.flush(rk, 30000);
        if ((cnt = mapped_librdkafkas(lib, sizeof(lib))) != 1 ||
            strcmp(lib, argv[1]))
                return failed("not exactly one librdkafka mapped, the copy");
        rdk.topic_destroy(rkt);
        rdk.destroy(rk); /* the final report */

        if (delivered != MESSAGES || bad_dr || mismatched_dr)
                return failed("deliveries: missing, failed or not where the "
                              "copy's own partitioner puts them");
        if (!(r = json_load_file(argv[3], 0, &jerr)))
                return failed(jerr.text);
        if (strcmp(json_string_value(json_object_get(
                       json_object_get(r, "producer"), "librdkafka_version")),
                   rdk.version_str()))
                return failed("the report names another librdkafka version");
        t = json_object_get(json_object_get(r, "topics"), TOPIC);
        if (json_integer_value(json_object_get(
                json_object_get(t, "partition_count"), "current")) != 4)
                return failed("the mock cluster's topic has not 4 partitions");
        if (json_integer_value(json_object_get(
                json_object_get(t, "acknowledged"), "matched")) != MESSAGES ||
            json_integer_value(json_object_get(
                json_object_get(t, "acknowledged"), "mismatched")) != 0)
                return failed("acknowledgements not all matched");
        for (i = 0; i < MESSAGES; i++) {
                int32_t p;
                snprintf(key, sizeof(key), "%d", 257000000 + i % 977);
                p = rdk.consistent(NULL, key, strlen(key), 4, NULL, NULL);
                load[p]++;
                for (j = 0; j < 2; j++)
                        moved[j] +=
                            rdk.consistent(NULL, key, strlen(key), proposed[j],
                                           NULL, NULL) != p;
        }
        for (k = 0; k < 4; k++)
                if (json_integer_value(json_array_get(
                        json_object_get(
                            json_object_get(json_object_get(t, "current"),
                                            "partitions"),
                            "messages"),
                        k)) != load[k])
                        return failed("current.partitions differ from the "
                                      "copy's own partitioner");
        for (j = 0; j < 2; j++)
                if (json_integer_value(json_object_get(
                        json_object_get(
                            json_array_get(json_object_get(t, "proposals"),
                                           (size_t)j),
                            "moved"),
                        "messages")) != moved[j])
                        return failed("moved messages differ from the copy's "
                                      "own partitioner");
        if (argc == 5 && second_librdkafka(argv[4], argv[2]))
                return 1;
        printf("ok: librdkafka %s loaded as %s (RTLD_LOCAL), 1 librdkafka "
               "mapped; %d messages all matched; 4 -> 6 moves %lld, 4 -> 12 "
               "moves %lld, as the copy's own partitioner says\n",
               rdk.version_str(), argv[1], MESSAGES, moved[0], moved[1]);
        json_decref(r);
        return 0;
}
