#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The report check of the `keyshift` command and the published schema
(docs/keyshift.report.v2.schema.json, validated by python3-jsonschema)
say the same thing: the same broken reports, fed to both, are refused by
both, and the same good ones accepted (issue 29).

Every report given (a producer's through the plugin, and its `keyshift
merge`) is broken one way at a time, at every member of every object (the
first entry of each array): the member removed, an unknown member added,
the value replaced by one of another type, a negative and a fractional
number where an integer is. Each broken report goes to `keyshift show`
and to the schema. They must agree, except where the check knows more
than a schema can say (the lengths of per-partition columns against the
partition count, counts that must restate each other, the sketches'
contents): those refusals are listed by the check's message and allowed
only when the schema accepted the report for a reason it cannot see.

Usage: test_cli_schema.py [KEYSHIFT REPORT.json...]  (exit 0: agreement)
Without arguments (ctest): $KS_CLI, and two reports of keyshift-replay
($KS_REPLAY, with the plugin $KS_PLUGIN: 6 partitions, proposals 8 and
12, one MMSI in ten also sent as a 4-byte int) and their `keyshift merge`.
"""
import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "support"))
import validate_report  # noqa: E402

# what only the check says (cli/ks_cli_report_check.c, after the schema)
SEMANTIC = ("values (the partition count)", "is not a partition count",
            "does not restate", "but distinct_lower_bound", "one_in_max",
            "sampled", "this keyshift samples one in", "more than",
            "registers", "rows (the current count)", "cells", "flow_nonzero",
            "null although partition_count.current", "proposals, at most",
            "must be true exactly when",
            "not a hex string", "bytes, expected", "hll", "exceeds",
            "expected [hash64_hex", "is beyond the", "above keyshift's limit",
            "but current.partitions has")


def walk_leaves(node, tokens):
    """Yields (tokens, value) for every leaf and (tokens, dict) for every
    object, descending into the first entry of arrays."""
    yield tokens, node
    if isinstance(node, dict):
        for k, v in node.items():
            yield from walk_leaves(v, tokens + [k])
    elif isinstance(node, list) and node:
        yield from walk_leaves(node[0], tokens + [0])


def shape(tokens):
    """A path with topic names, counts and indexes folded: each place of
    the schema is broken once per report, not once per partition count."""
    out = []
    for i, t in enumerate(tokens):
        if i == 1 and tokens[0] == "topics":
            out.append("<topic>")
        elif isinstance(t, int) or t.isdigit():
            out.append("<n>")
        else:
            out.append(t)
    return tuple(out)


def cases(report):
    seen = set()
    for tokens, node in walk_leaves(report, []):
        if shape(tokens) in seen:
            continue
        seen.add(shape(tokens))
        name = ".".join(str(t) for t in tokens) or "(top)"
        if isinstance(node, dict):
            yield name + " + unknown member", tokens + ["x_not_in_schema"], 1, False
            for k in node:
                yield name + "." + k + " removed", tokens + [k], None, True
        elif tokens and not isinstance(node, list):
            alts = [("a number", 17)] if isinstance(node, str) else [("a string", "x")]
            if isinstance(node, bool):
                alts.append(("an integer", 1))
            elif isinstance(node, int):
                alts += [("negative", -1), ("fractional", 1.5)]
            if node is not None:
                alts.append(("null", None))
            for what, v in alts:
                yield name + " = " + what, tokens, v, False


def make_reports(cli, tmp):
    """A producer's report (two, merged: the merge's report too)."""
    out = []
    for name, n in (("a", 3000), ("b", 2000)):
        path = os.path.join(tmp, name + ".json")
        subprocess.run([os.environ["KS_REPLAY"], "--plugin",
                        os.environ["KS_PLUGIN"], "-n", str(n), "-p", "6",
                        "--proposed", "8,12", "--int32-keys", "10",
                        # the count known before the first message, however
                        # short the run (no wait for metadata)
                        "-X", "keyshift.partitions.current=6",
                        "--report", path], check=True,
                       stdout=subprocess.DEVNULL)
        out.append(path)
    merged = os.path.join(tmp, "merged.json")
    subprocess.run([cli, "merge", out[0], out[1], "-o", merged], check=True)
    for path in (out[0], merged):
        if validate_report.main(["validate_report.py", path]):
            sys.exit("%s: off the schema before any break" % path)
    return [out[0], merged]


def trim(report):
    """Keeps the first 3 hot keys (each column's first 3 values; the
    sketches are packed strings): the same places of the schema, 10x less
    to validate per break."""
    for t in report.get("topics", {}).values():
        h = t.get("hot_keys")
        if not isinstance(h, dict):
            continue
        for k, v in h.items():
            if isinstance(v, list):
                h[k] = v[:3]
            elif isinstance(v, dict):
                h[k] = {c: col[:3] for c, col in v.items()}
    return report


def main(argv):
    tmp = tempfile.mkdtemp(prefix="keyshift-schema-")
    if len(argv) > 2:
        cli, reports = argv[1], argv[2:]
    else:
        cli = os.environ["KS_CLI"]
        reports = make_reports(cli, tmp)
    v = validate_report.validator(validate_report.SCHEMA)
    bad, total, semantic = 0, 0, 0
    for rp in reports:
        with open(rp) as f:
            good = trim(json.load(f))
        path = os.path.join(tmp, "m.json")
        with open(path, "w") as f:
            json.dump(good, f)
        if not v.is_valid(good) or subprocess.run(
                [cli, "show", path], stdout=subprocess.DEVNULL).returncode:
            sys.exit("%s: refused before any break" % rp)
        for desc, tokens, value, remove in cases(good):
            r = copy.deepcopy(good)
            n = r
            for t in tokens[:-1]:
                n = n[t]
            if remove:
                del n[tokens[-1]]
            else:
                n[tokens[-1]] = value
            with open(path, "w") as f:
                json.dump(r, f)
            schema_ok = v.is_valid(r)
            p = subprocess.run([cli, "show", "--color", "never", path],
                               stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
            cli_ok = p.returncode == 0
            total += 1
            if p.returncode not in (0, 1):
                print("CRASH or usage (%d): %s: %s" % (p.returncode, desc,
                                                       p.stderr.strip()))
                bad += 1
            elif not cli_ok and len(p.stderr.strip().splitlines()) != 1:
                print("more than one line: %s: %s" % (desc, p.stderr))
                bad += 1
            elif schema_ok == cli_ok:
                continue
            elif schema_ok and any(s in p.stderr for s in SEMANTIC):
                semantic += 1  # what the schema cannot say
            else:
                bad += 1
                print("DISAGREE %s: schema %s, keyshift %s%s" % (
                    desc, "accepts" if schema_ok else "refuses",
                    "accepts" if cli_ok else "refuses",
                    (": " + p.stderr.strip()) if not cli_ok else ""))
    print("%d broken reports, %d disagreements, %d refused by the check "
          "alone for what a schema cannot say" % (total, bad, semantic))
    shutil.rmtree(tmp, ignore_errors=True)
    return 1 if bad or not total else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
