#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A confluent-kafka-python producer with keyshift loaded by full path, on
librdkafka's mock cluster, checked against the librdkafka that this client
brings (a PyPI wheel's bundled copy, or Debian's for python3-confluent-kafka).

    python_host.py PLUGIN REPORT_DIR [PARTITIONER ...]

For each partitioner (default: consistent_random murmur2_random
fnv1a_random) one producer sends the same shuffled key set: random binary
keys of 1..40 bytes, MMSI-like decimal keys with a hot one, empty keys and
NULL keys. Checks, with no tolerance:
  - exactly one librdkafka is mapped in the process, the client's own;
  - the report's librdkafka_version is the client's (libversion());
  - every delivered partition of a hashed key equals that librdkafka's own
    rd_kafka_msg_partitioner_<partitioner>() (through ctypes, from the same
    mapped library), and the report has 0 mismatched acknowledgements and
    as many matched as hashed messages;
  - current.partitions and each proposal's partitions and moved messages
    and bytes equal a recomputation with those functions.
Prints one line per run; exits 1 on the first failure.
"""
import ctypes
import gc
import json
import os
import random
import sys
import time

import confluent_kafka
from confluent_kafka import Producer

PROPOSED = [6, 7, 12]
TOPIC = "ships"

# librdkafka's rule for which keys a partitioner hashes (rdkafka.h; the
# rest are placed at random or on the sticky partition).
HASHES = {
    "consistent_random": lambda k: k is not None and len(k) > 0,
    "murmur2_random": lambda k: k is not None,
    "fnv1a_random": lambda k: k is not None,
    "consistent": lambda k: True,
    "murmur2": lambda k: True,
    "fnv1a": lambda k: True,
}
# The function that hashes them: the non-random variant, which a hashed
# key reaches in the _random one too (rdkafka_msg.c); the _random ones
# would dereference the topic for an unhashed key.
HASH_FN = {
    "consistent_random": "rd_kafka_msg_partitioner_consistent",
    "murmur2_random": "rd_kafka_msg_partitioner_murmur2",
    "fnv1a_random": "rd_kafka_msg_partitioner_fnv1a",
    "consistent": "rd_kafka_msg_partitioner_consistent",
    "murmur2": "rd_kafka_msg_partitioner_murmur2",
    "fnv1a": "rd_kafka_msg_partitioner_fnv1a",
}


def fail(msg):
    print("FAIL: " + msg, flush=True)
    sys.exit(1)


def mapped_librdkafkas():
    """Files of every librdkafka mapped in this process."""
    files = set()
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 6 and "librdkafka" in os.path.basename(parts[5]) \
                    and "++" not in parts[5]:
                files.add(parts[5])
    return sorted(files)


def key_set(seed):
    rnd = random.Random(seed)
    keys = []
    for _ in range(3000):
        keys.append(bytes(rnd.getrandbits(8) for _ in range(rnd.randint(1, 40))))
    for _ in range(4000):
        keys.append(str(rnd.choice(range(211000000, 211000400))).encode())
    keys += [b"211999999"] * 1500  # a hot vessel
    keys += [b""] * 200
    keys += [None] * 300
    rnd.shuffle(keys)
    return keys


def keyshift_conf(plugin, report):
    """keyshift's properties for run()'s producers. tests/wheel/wheel_host.py
    replaces it with the wheel's keyshift.PLUGIN and keyshift.config()."""
    return {
        "plugin.library.paths": plugin,
        "keyshift.partitions.proposed": ",".join(map(str, PROPOSED)),
        "keyshift.report.path": report,
        "keyshift.overload": "analyse",
        "keyshift.report.interval.ms": "200",
    }


def run(plugin, report_dir, partitioner, lib, keys):
    report = os.path.join(report_dir, "report-%s.json" % partitioner)
    delivered = []

    def on_delivery(err, msg):
        delivered.append((err, msg.key(), msg.partition()))

    p = Producer(dict(keyshift_conf(plugin, report), **{
        "test.mock.num.brokers": 1,
        "partitioner": partitioner,
    }))
    maps = mapped_librdkafkas()
    if len(maps) != 1:
        fail("%s: %d librdkafka files mapped: %s" % (partitioner, len(maps), maps))
    for i, k in enumerate(keys):
        while True:
            try:
                p.produce(TOPIC, value=b"v%06d" % i, key=k, on_delivery=on_delivery)
                break
            except BufferError:
                p.poll(0.05)
        p.poll(0)
    if p.flush(30) != 0:
        fail("%s: flush left messages" % partitioner)
    # keyshift learns the count from its own metadata requests (bounded to
    # 1 s each so that a destroy is never held longer); on a loaded machine
    # under ASan the whole run can end before one answers. Wait, as a
    # producer that lives longer than a second would, for a periodic report
    # with the count, then destroy: the final report is the one checked.
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        p.poll(0.1)
        try:
            with open(report) as f:
                pc = json.load(f)["topics"][TOPIC]["partition_count"]
            if pc["current"] is not None:
                break
        except (OSError, ValueError, KeyError):
            pass
    else:
        fail("%s: no report with the partition count within 30 s" % partitioner)
    del p
    gc.collect()  # rd_kafka_destroy(): the final report is written

    with open(report) as f:
        r = json.load(f)
    version = confluent_kafka.libversion()[0]
    if r["producer"]["librdkafka_version"] != version:
        fail("report says librdkafka %s, the client has %s"
             % (r["producer"]["librdkafka_version"], version))
    lib_file = r["producer"].get("librdkafka_library", "")
    if os.path.realpath(lib_file) != os.path.realpath(mapped_librdkafkas()[0]):
        fail("report says keyshift ran in %r, the client's is %s"
             % (lib_file, mapped_librdkafkas()[0]))
    t = r["topics"][TOPIC]
    count = t["partition_count"]["current"]
    fn = getattr(lib, HASH_FN[partitioner])
    fn.restype = ctypes.c_int32
    fn.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t,
                   ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p]
    hashed = HASHES[partitioner]

    def place(k, n):
        return fn(None, k, len(k), n, None, None)

    # deliveries against the host's own function
    n_hashed = 0
    for err, k, part in delivered:
        if err is not None:
            fail("%s: delivery failed: %s" % (partitioner, err))
        if hashed(k):
            n_hashed += 1
            if part != place(k, count):
                fail("%s: key %r delivered to %d, librdkafka %s's function "
                     "says %d" % (partitioner, k, part, version, place(k, count)))
    ack = t["acknowledged"]
    if ack["mismatched"] != 0 or ack["matched"] != n_hashed or \
            ack["messages"] != len(keys):
        fail("%s: acknowledged %s, expected %d matched of %d"
             % (partitioner, ack, n_hashed, len(keys)))

    # loads and moved figures against the same function
    cur = [[0, 0] for _ in range(count)]
    props = {n: [[0, 0] for _ in range(n)] for n in PROPOSED}
    moved = {n: [0, 0] for n in PROPOSED}
    for i, k in enumerate(keys):
        if not hashed(k):
            continue
        size = len(k) + len(b"v%06d" % i)
        pc = place(k, count)
        cur[pc][0] += 1
        cur[pc][1] += size
        for n in PROPOSED:
            pn = place(k, n)
            props[n][pn][0] += 1
            props[n][pn][1] += size
            if pn != pc:
                moved[n][0] += 1
                moved[n][1] += size
    got = [list(mb) for mb in zip(t["current"]["partitions"]["messages"],
                                 t["current"]["partitions"]["bytes"])]
    if got != cur:
        fail("%s: current.partitions %s, expected %s" % (partitioner, got, cur))
    for prop in t["proposals"]:
        n = prop["partition_count"]
        got = [list(mb) for mb in zip(prop["partitions"]["messages"],
                                     prop["partitions"]["bytes"])]
        if got != props[n]:
            fail("%s: proposal %d partitions %s, expected %s"
                 % (partitioner, n, got, props[n]))
        if [prop["moved"]["messages"], prop["moved"]["bytes"]] != moved[n]:
            fail("%s: %d -> %d moved %s, expected %s"
                 % (partitioner, count, n, prop["moved"], moved[n]))
    print("ok librdkafka %s (%s): %d messages, %d hashed, %d -> %s moved "
          "%s messages; 1 librdkafka mapped: %s"
          % (version, partitioner, len(keys),
             n_hashed, count, PROPOSED, [moved[n][0] for n in PROPOSED],
             os.path.basename(maps[0])), flush=True)
    return maps[0]


def many_topics(plugin, report_dir, n=20):
    """One keyed message to each of n topics on the mock cluster: every
    topic's partition count must come from metadata. The bootstrap
    connection and the broker it leads to share host and port there; when
    keyshift counted brokers by host, the first going down made it think
    no broker was up, and most counts stayed unknown (METADATA_FAILED)."""
    report = os.path.join(report_dir, "report-many.json")
    p = Producer({
        "plugin.library.paths": plugin,
        "test.mock.num.brokers": 1,
        "keyshift.report.path": report,
        "keyshift.report.interval.ms": "500",
    })
    for i in range(n):
        p.produce("many-%02d" % i, key=b"k%d" % i, value=b"v")
    if p.flush(30) != 0:
        fail("many topics: flush left messages")
    deadline = time.monotonic() + 20
    unknown = None
    while time.monotonic() < deadline:
        p.poll(0.2)
        try:
            with open(report) as f:
                topics = json.load(f)["topics"]
            unknown = [t for t, v in topics.items()
                       if v["partition_count"]["current"] is None]
            if len(topics) == n and not unknown:
                break
        except (OSError, ValueError, KeyError):
            pass
    del p
    gc.collect()
    if unknown is None or unknown:
        fail("many topics: counts still unknown after 20 s: %s" % unknown)
    print("ok %d topics: every partition count known" % n, flush=True)


def main():
    plugin, report_dir = sys.argv[1], sys.argv[2]
    partitioners = sys.argv[3:] or ["consistent_random", "murmur2_random",
                                    "fnv1a_random"]
    print("client: %s from %s" % (confluent_kafka.version(),
                                  os.path.dirname(confluent_kafka.__file__)),
          flush=True)
    keys = key_set(17)
    # the client's librdkafka is mapped once its extension is imported;
    # ctypes opens that same file, which the loader finds already mapped
    maps = mapped_librdkafkas()
    if len(maps) != 1:
        fail("before any producer: librdkafka files mapped: %s" % maps)
    lib = ctypes.CDLL(maps[0])
    for partitioner in partitioners:
        if run(plugin, report_dir, partitioner, lib, keys) != maps[0]:
            fail("keyshift ran with another librdkafka than the client's")
    many_topics(plugin, report_dir)

if __name__ == "__main__":
    main()
