#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The keyshift wheel in a confluent-kafka-python producer, as a user
writes it: the plugin by keyshift.PLUGIN, its properties by
keyshift.config(), on librdkafka's mock cluster.

    wheel_host.py REPORT_DIR

Run with the virtualenv's python (the wheel and a confluent-kafka wheel
installed there). Checks:
  - tests/hosts/python_host.py's checks, with its producers configured by
    keyshift.PLUGIN + keyshift.config(proposed=..., report_path=...,
    overload=..., report_interval_ms=...): one librdkafka mapped (the
    client's own), the report's librdkafka is it, every delivery, load and
    moved figure equal to that librdkafka's own partitioner functions
    (ctypes), for consistent_random, murmur2_random and fnv1a_random;
  - bad keyshift.config() input raises keyshift.ConfigError (a ValueError)
    naming the property: proposed=[0], an unknown name (with the closest
    one and the list), a non-integer, a value of the wrong type, a report
    folder that does not exist; good input gives the expected strings;
  - a Producer given a bad keyshift property directly still fails as
    librdkafka does (KafkaException naming the property);
  - keyshift.__version__ is the version CMakeLists.txt gives (argv[2]).
Prints one line per check; exits 1 on the first failure.
"""
import os
import sys

import confluent_kafka
import keyshift

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "hosts"))
import python_host  # noqa: E402


def fail(msg):
    print("FAIL: " + msg, flush=True)
    sys.exit(1)


def wheel_conf(plugin, report):
    if plugin != keyshift.PLUGIN:
        fail("python_host ran with %s, not keyshift.PLUGIN" % plugin)
    conf = keyshift.config(proposed=python_host.PROPOSED, report_path=report,
                           overload="analyse", report_interval_ms=200)
    return dict(conf, **{"plugin.library.paths": keyshift.PLUGIN})


def expect_error(kwargs, prop, words):
    try:
        keyshift.config(**kwargs)
    except keyshift.ConfigError as e:
        if not isinstance(e, ValueError) or e.property != prop or \
                prop not in str(e) or any(w not in str(e) for w in words):
            fail("keyshift.config(%r): %s %r (property %r), expected %s "
                 "naming %s" % (kwargs, type(e).__name__, str(e), e.property,
                                words, prop))
        print("ok keyshift.config(%s) raises ConfigError: %s"
              % (", ".join("%s=%r" % kv for kv in kwargs.items()),
                 str(e)[:110]), flush=True)
        return
    fail("keyshift.config(%r) raised nothing" % (kwargs,))


def config_checks(report_dir):
    got = keyshift.config(proposed=[12, 24], report_path=os.path.join(
        report_dir, "r-%p.json"), report_interval_ms=1000,
        consumer_msgs_per_s=2500.5, enable=True,
        **{"keyshift.hot.keys": 50, "partitions_current": None})
    want = {"keyshift.partitions.proposed": "12,24",
            "keyshift.report.path": os.path.join(report_dir, "r-%p.json"),
            "keyshift.report.interval.ms": "1000",
            "keyshift.consumer.msgs.per.s": "2500.5",
            "keyshift.enable": "true",
            "keyshift.hot.keys": "50"}
    if got != want:
        fail("keyshift.config() gave %s, expected %s" % (got, want))
    props = keyshift.properties()
    if len(props) < 30 or "keyshift.partitions.proposed" not in props:
        fail("keyshift.properties(): %s" % props)
    print("ok keyshift.config() gives %d properties; keyshift.properties() "
          "lists %d" % (len(got), len(props)), flush=True)
    expect_error({"proposed": [0]}, "keyshift.partitions.proposed",
                 ["1..100000"])
    expect_error({"proposed": [12, "x"]}, "keyshift.partitions.proposed",
                 ["integers"])
    expect_error({"hot_key": 5}, "keyshift.hot.key",
                 ["unknown", "keyshift.hot.keys", "report_interval_ms"])
    expect_error({"hot_keys": "many"}, "keyshift.hot.keys", ["0..1000"])
    expect_error({"report_interval_ms": 2.5}, "keyshift.report.interval.ms",
                 ["expected"])
    expect_error({"consumers_max": {"a": 1}}, "keyshift.consumers.max",
                 ["dict"])
    expect_error({"report_path": "/nonexistent-keyshift/r.json"},
                 "keyshift.report.path", ["/nonexistent-keyshift"])
    expect_error({"proposed": 12, "partitions_proposed": 24},
                 "keyshift.partitions.proposed", ["twice"])
    # the plugin itself, given a bad property directly
    try:
        confluent_kafka.Producer({"plugin.library.paths": keyshift.PLUGIN,
                                  "test.mock.num.brokers": 1,
                                  "keyshift.hot.keys": "many"})
    except confluent_kafka.KafkaException as e:
        if "keyshift.hot.keys" not in str(e):
            fail("Producer with keyshift.hot.keys=many: %s" % e)
        print("ok Producer(keyshift.hot.keys=many) fails as librdkafka "
              "does: %s" % str(e)[:100], flush=True)
    else:
        fail("Producer accepted keyshift.hot.keys=many")


def main():
    report_dir, version = sys.argv[1], sys.argv[2]
    if keyshift.__version__ != version:
        fail("keyshift.__version__ %s, CMakeLists.txt says %s"
             % (keyshift.__version__, version))
    for path in (keyshift.PLUGIN, keyshift.COMMAND):
        if not os.path.isabs(path) or not os.path.isfile(path):
            fail("%s is not an absolute path to a file" % path)
    print("ok keyshift %s: PLUGIN %s" % (keyshift.__version__,
                                         keyshift.PLUGIN), flush=True)
    config_checks(report_dir)
    python_host.keyshift_conf = wheel_conf
    sys.argv = [sys.argv[0], keyshift.PLUGIN, report_dir]
    python_host.main()


if __name__ == "__main__":
    main()
