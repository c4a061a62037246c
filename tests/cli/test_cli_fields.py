#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Every field checked, as the docs promise (issue 30): each corrupt
report of the issue's list (negative counts, fractions outside 0..1,
negative rates, a partition beyond its count, a time that is not one, a
sketch capacity of 0 or beyond keyshift's limits, ...) is refused by
`keyshift show`, `html`, `metrics` and `merge` with exit code 1 and one
line naming the file and the field's path, and by the published schema
(python3-jsonschema on the same file) unless the check alone can say it
(a partition against its topic's count). A merge whose counters sum past
2^63 - 1 says "overflow" and names the counter. A merge of a report whose
sketch capacity is 100,000,000 runs under a 1 GiB address-space limit:
it must refuse by name, not allocate what the file says.

Usage: test_cli_fields.py   (ctest: $KS_CLI, $KS_REPLAY, $KS_PLUGIN)
"""
import copy
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "support"))
import validate_report  # noqa: E402

T = "ais"


def topic(r):
    return r["topics"][T]


def setp(path, value):
    """An edit that sets the member at @p path (a list of keys/indexes
    below the topic, or below the top when it starts with '/')."""
    def edit(r):
        n = r if path[0] == "/" else topic(r)
        keys = path[1:] if path[0] == "/" else path
        for k in keys[:-1]:
            n = n[k]
        n[keys[-1]] = value
    return edit


# (what, edit, the path the refusal must name, the schema refuses it too)
CASES = [
    ("messages -5", setp(["messages"], -5), "topics.ais.messages", True),
    ("acknowledged.messages -1", setp(["acknowledged", "messages"], -1),
     "topics.ais.acknowledged.messages", True),
    ("messages_fraction -3",
     setp(["proposals", 0, "moved", "messages_fraction"], -3),
     "topics.ais.proposals[0].moved.messages_fraction", True),
    ("traffic_fraction 1.5",
     setp(["proposals", 0, "moved", "traffic_fraction"], 1.5),
     "topics.ais.proposals[0].moved.traffic_fraction", True),
    ("share -7.5", setp(["hot_keys", "share", 0], -7.5),
     "topics.ais.hot_keys.share[0]", True),
    ("msgs_per_s -1", setp(["rates", "msgs_per_s"], -1),
     "topics.ais.rates.msgs_per_s", True),
    ("uptime_s -1e308", setp(["/", "uptime_s"], -1e308), "uptime_s", True),
    ("partition_current 99999",
     setp(["hot_keys", "partition_current", 0], 99999),
     "topics.ais.hot_keys.partition_current[0]", False),
    ("partition_proposed -3",
     setp(["hot_keys", "partition_proposed", "8", 0], -3),
     "topics.ais.hot_keys.partition_proposed.8[0]", True),
    ("partition_proposed 8 of 8",
     setp(["hot_keys", "partition_proposed", "8", 0], 8),
     "topics.ais.hot_keys.partition_proposed.8[0]", False),
    ("other client's partition beyond the count",
     setp(["other_clients", "java", "examples", 0, "partition_theirs"], 6),
     "topics.ais.other_clients.java.examples[0].partition_theirs", False),
    ("partition_count.current 5, columns of 6",
     setp(["partition_count", "current"], 5),
     "topics.ais.partition_count.current", False),
    ("generated_at not a time", setp(["/", "generated_at"], "not a time"),
     "generated_at", True),
    ("generated_at month 13",
     setp(["/", "generated_at"], "2026-13-01T10:00:00.000Z"),
     "generated_at", True),
    ("key_sample.capacity 0", setp(["merge", "key_sample", "capacity"], 0),
     "topics.ais.merge.key_sample.capacity", True),
    ("key_sample.capacity 2^40",
     setp(["merge", "key_sample", "capacity"], 2 ** 40),
     "topics.ais.merge.key_sample.capacity", True),
    ("hot_keys.capacity 100,000,000",
     setp(["merge", "hot_keys", "capacity"], 100000000),
     "topics.ais.merge.hot_keys.capacity", True),
    ("mixed_keys.sample_capacity 2^40",
     setp(["mixed_keys", "sample_capacity"], 2 ** 40),
     "topics.ais.mixed_keys.sample_capacity", True),
]


def limit_memory():
    """1 GiB of address space: a merge that allocates what a capacity of
    100,000,000 says (GBs) fails; keyshift itself needs tens of MB."""
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


# A sanitizer build (KS_PRELOAD: its runtime) maps terabytes of shadow
# memory at start: no address-space limit there (the refusal by name is
# checked all the same; the plain build checks the memory)
SANITIZED = bool(os.environ.get("KS_PRELOAD"))


def run(cmd):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, errors="replace",
                          preexec_fn=None if SANITIZED else limit_memory)


def make_reports(tmp):
    out = []
    for name, n in (("a", 3000), ("b", 2000)):
        path = os.path.join(tmp, name + ".json")
        subprocess.run([os.environ["KS_REPLAY"], "--plugin",
                        os.environ["KS_PLUGIN"], "-n", str(n), "-p", "6",
                        "--proposed", "8,12",
                        "-X", "keyshift.partitions.current=6",
                        "--report", path], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        out.append(path)
    return out


def refused_by_all(cli, tmp, good, bad, needles):
    """Each reading subcommand refuses @p bad: exit 1, one line holding
    the file name and every needle. @returns the number of failures."""
    fails = 0
    cmds = [[cli, "show", "--color", "never", bad],
            [cli, "html", bad, "-o", os.path.join(tmp, "o.html")],
            [cli, "metrics", bad],
            [cli, "merge", good, bad, "-o", os.path.join(tmp, "o.json")]]
    for cmd in cmds:
        p = run(cmd)
        err = p.stderr.strip()
        ok = (p.returncode == 1 and len(err.splitlines()) == 1 and
              bad in err and all(n in err for n in needles))
        if not ok:
            fails += 1
            print("FAIL %s: exit %d: %s" % (" ".join(cmd[1:2]),
                                            p.returncode, err[:300]))
    return fails


def flow_cap(cli, tmp, v):
    """A flow matrix of more cells than keyshift.flow.max.cells allows
    (12 x 100,000 > 1,048,576; the plugin writes it null) is refused by
    its path before it is read, whatever it holds. @returns failures."""
    src = os.path.join(tmp, "wide.json")
    subprocess.run([os.environ["KS_REPLAY"], "--plugin",
                    os.environ["KS_PLUGIN"], "-n", "2000", "-p", "12",
                    "--proposed", "16,100000",
                    "-X", "keyshift.partitions.current=12",
                    "--report", src], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(src) as f:
        r = json.load(f)
    wide = [i for i, p in enumerate(topic(r)["proposals"])
            if p["partition_count"] == 100000]
    if len(wide) != 1 or topic(r)["proposals"][wide[0]]["flow"] is not None:
        print("FAIL flow cap: the plugin wrote a flow of 1,200,000 cells")
        return 1
    other = os.path.join(tmp, "wide2.json")
    with open(other, "w") as f:
        json.dump(r, f)
    topic(r)["proposals"][wide[0]]["flow"] = [[1] * 12]
    bad = os.path.join(tmp, "bad.json")
    with open(bad, "w") as f:
        json.dump(r, f)
    path = "topics.ais.proposals[%d].flow" % wide[0]
    n = refused_by_all(cli, tmp, other, bad,
                       [path + ":", "above keyshift's limit of 1048576"])
    print("%s flow of 12 x 100000 cells: %s" % ("ok  " if not n else "FAIL",
                                                 path))
    return n


def main():
    cli = os.environ["KS_CLI"]
    tmp = tempfile.mkdtemp(prefix="keyshift-fields-")
    a, b = make_reports(tmp)
    v = validate_report.validator(validate_report.SCHEMA)
    with open(a) as f:
        good = json.load(f)
    if not v.is_valid(good) or run([cli, "show", a]).returncode:
        sys.exit("the good report is refused")
    fails = 0
    for what, edit, path, schema_too in CASES:
        r = copy.deepcopy(good)
        edit(r)
        bad = os.path.join(tmp, "bad.json")
        with open(bad, "w") as f:
            json.dump(r, f)
        n = refused_by_all(cli, tmp, b, bad, [path + ":"])
        schema_refuses = not v.is_valid(r)
        if schema_refuses != schema_too:
            n += 1
            print("FAIL the schema %s it" %
                  ("refuses" if schema_refuses else "accepts"))
        print("%s %s: %s" % ("ok  " if not n else "FAIL", what, path))
        fails += n
    fails += flow_cap(cli, tmp, v)
    # counters summing past 2^63 - 1 in a merge: "overflow", by name
    for name, src in (("o1.json", a), ("o2.json", b)):
        with open(src) as f:
            r = json.load(f)
        topic(r)["acknowledged"]["messages"] = 2 ** 63 - 1
        with open(os.path.join(tmp, name), "w") as f:
            json.dump(r, f)
        if not v.is_valid(r):
            sys.exit("2^63 - 1 is a valid count")
    p = run([cli, "merge", os.path.join(tmp, "o1.json"),
             os.path.join(tmp, "o2.json"), "-o", os.path.join(tmp, "o.json")])
    if (p.returncode != 1 or "overflow" not in p.stderr or
            "topics.ais.acknowledged.messages" not in p.stderr or
            "internal error" in p.stderr):
        fails += 1
        print("FAIL merge overflow: exit %d: %s" % (p.returncode,
                                                    p.stderr.strip()))
    else:
        print("ok   merge overflow: " + p.stderr.strip())
    print("%d failures" % fails)
    shutil.rmtree(tmp, ignore_errors=True)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
