#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A confluent-kafka-python producer that bursts keyed messages right after
it is created, with keyshift loaded by full path and its default settings
(keyshift.overload=skip): nothing may be lost to keyshift's start-up.

    python_burst.py PLUGIN REPORT_DIR BOOTSTRAP RUNS MESSAGES

BOOTSTRAP is "mock" (librdkafka's mock cluster, whose topics have 4
partitions) or host:port of a real cluster, where a topic of 6 partitions
is created for the runs and deleted after them. Each run creates a new
producer and, with no pause, produces MESSAGES messages keyed by 20,011
MMSI-like decimal keys as fast as this interpreter can, then checks the
final report, with no tolerance:
  - keys.unanalysed and keys.unplaced are 0 and every message is hashed;
  - every delivery landed where that librdkafka's own
    rd_kafka_msg_partitioner_consistent() (ctypes, the mapped library)
    says, and the report matched every acknowledgement it checked (the
    others counted as not checked while the host was out of CPU);
  - current.partitions, each proposal's partitions and moved messages and
    bytes equal a recomputation with that function.
Prints one line per run; exits 1 on the first failure.
"""
import ctypes
import gc
import json
import os
import sys
import time

import confluent_kafka
from confluent_kafka import Producer

PROPOSED = [12, 24]
KEYS = 20011


def fail(msg):
    print("FAIL: " + msg, flush=True)
    sys.exit(1)


def librdkafka():
    """The one librdkafka mapped in this process (the client's own)."""
    with open("/proc/self/maps") as f:
        maps = {line.split()[-1] for line in f
                if "librdkafka" in line and line.split()[-1].startswith("/")}
    if len(maps) != 1:
        fail("%d librdkafka files mapped: %s" % (len(maps), sorted(maps)))
    return maps.pop()


def key_of(i):
    return b"%d" % (200000000 + (i * 7919) % KEYS)


def run(plugin, report, conf, topic, n, place):
    delivered = {}

    def on_delivery(err, msg):
        if err is not None:
            fail("delivery failed: %s" % err)
        delivered[msg.partition()] = delivered.get(msg.partition(), 0) + 1

    p = Producer(dict(conf, **{
        "plugin.library.paths": plugin,
        "keyshift.partitions.proposed": ",".join(map(str, PROPOSED)),
        "keyshift.report.path": report,
        "keyshift.report.interval.ms": "200",
        "linger.ms": 5,
    }))
    t0 = time.monotonic()
    for i in range(n):
        while True:
            try:
                p.produce(topic, value=b"v%06d" % i, key=key_of(i),
                          on_delivery=on_delivery)
                break
            except BufferError:
                p.poll(0.01)
    rate = n / (time.monotonic() - t0)
    if p.flush(60) != 0:
        fail("flush left messages")
    # as python_host.py: a report with the count before the final one
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        p.poll(0.1)
        try:
            with open(report) as f:
                if json.load(f)["topics"][topic]["partition_count"]["current"]:
                    break
        except (OSError, ValueError, KeyError, TypeError):
            pass
    else:
        fail("no report with the partition count within 30 s")
    del p
    gc.collect()  # rd_kafka_destroy(): the final report is written

    with open(report) as f:
        r = json.load(f)
    t = r["topics"][topic]
    # deliveries not checked while the host was out of CPU (counted,
    # unread: core/stage/ks_cpuwatch.h)
    unchecked = r["producer"]["out_of_cpu"]["deliveries_unchecked"]
    keys = t["keys"]
    if keys["unanalysed"] or keys["unplaced"] or keys["hashed"] != n:
        fail("keys %s: expected %d hashed, none unanalysed or unplaced "
             "(produced at %.0f msgs/s)" % (keys, n, rate))
    count = t["partition_count"]["current"]
    cur = [[0, 0] for _ in range(count)]
    props = {c: [[0, 0] for _ in range(c)] for c in PROPOSED}
    moved = {c: [0, 0] for c in PROPOSED}
    for i in range(n):
        k = key_of(i)
        size = len(k) + len(b"v%06d" % i)
        pc = place(k, count)
        cur[pc][0] += 1
        cur[pc][1] += size
        for c in PROPOSED:
            pn = place(k, c)
            props[c][pn][0] += 1
            props[c][pn][1] += size
            if pn != pc:
                moved[c][0] += 1
                moved[c][1] += size
    if sorted(delivered.items()) != [(i, m) for i, (m, _) in enumerate(cur) if m]:
        fail("deliveries per partition %s, librdkafka's function says %s"
             % (sorted(delivered.items()), [m for m, _ in cur]))
    ack = t["acknowledged"]
    if ack["mismatched"] or ack["matched"] + unchecked != n or \
            ack["messages"] + unchecked != n:
        fail("acknowledged %s, %d unchecked, expected %d matched"
             % (ack, unchecked, n))
    got = [list(mb) for mb in zip(t["current"]["partitions"]["messages"],
                                 t["current"]["partitions"]["bytes"])]
    if got != cur:
        fail("current.partitions %s, expected %s" % (got, cur))
    for prop in t["proposals"]:
        c = prop["partition_count"]
        got = [list(mb) for mb in zip(prop["partitions"]["messages"],
                                     prop["partitions"]["bytes"])]
        if got != props[c]:
            fail("proposal %d partitions %s, expected %s" % (c, got, props[c]))
        if [prop["moved"]["messages"], prop["moved"]["bytes"]] != moved[c]:
            fail("%d -> %d moved %s, expected %s"
                 % (count, c, prop["moved"], moved[c]))
    return rate, count, [moved[c][0] for c in PROPOSED]


def main():
    plugin, report_dir, bootstrap = sys.argv[1], sys.argv[2], sys.argv[3]
    runs, n = int(sys.argv[4]), int(sys.argv[5])
    admin = None
    if bootstrap == "mock":
        conf, topic = {"test.mock.num.brokers": 1}, "ais"
    else:
        from confluent_kafka.admin import AdminClient, NewTopic
        conf = {"bootstrap.servers": bootstrap}
        topic = "keyshift-burst-%d" % os.getpid()
        admin = AdminClient(conf)
        for f in admin.create_topics([NewTopic(topic, 6, 1)]).values():
            f.result(30)
    path = librdkafka()
    fn = ctypes.CDLL(path).rd_kafka_msg_partitioner_consistent
    fn.restype = ctypes.c_int32
    fn.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t,
                   ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p]

    def place(k, c):
        return fn(None, k, len(k), c, None, None)

    version = confluent_kafka.libversion()[0]
    try:
        for i in range(runs):
            report = os.path.join(report_dir, "burst-%d.json" % i)
            rate, count, moved = run(plugin, report, conf, topic, n, place)
            print("ok librdkafka %s, %s, run %d: %d messages at %.0f msgs/s "
                  "from the producer's creation, 0 unanalysed; %d -> %s "
                  "moved %s messages, as librdkafka's function says"
                  % (version, bootstrap, i + 1, n, rate, count, PROPOSED,
                     moved), flush=True)
    finally:
        if admin:
            for f in admin.delete_topics([topic]).values():
                f.result(30)


if __name__ == "__main__":
    main()
