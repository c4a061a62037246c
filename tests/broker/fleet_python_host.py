#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A confluent-kafka-python producer for broker.fleet (test_broker_fleet.c):
keyshift loaded by full path, its reports published to a report topic.

    fleet_python_host.py BOOTSTRAP TOPIC PROP=VALUE...

Reads "key:value" lines on stdin and produces each (empty lines skipped:
the test pushes the last lines out with them); at EOF flushes and exits
cleanly (keyshift's final report: the producer ended). The test may kill
it with SIGKILL instead (stale).
"""
import sys

from confluent_kafka import Producer


def main():
    bootstrap, topic = sys.argv[1], sys.argv[2]
    conf = {"bootstrap.servers": bootstrap}
    for a in sys.argv[3:]:
        k, v = a.split("=", 1)
        conf[k] = v
    p = Producer(conf)
    while True:
        line = sys.stdin.readline()
        if not line:
            break
        line = line.rstrip("\n")
        if not line:
            continue
        k, v = line.split(":", 1)
        p.produce(topic, key=k.encode(), value=v.encode())
        p.poll(0)
    p.flush(30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
