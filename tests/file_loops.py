#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Finds loops of calls between source files (issue 31, "One-way calls").

Reads the object files of the production targets in a build directory
(`nm`: the global symbols each defines and the ones it uses), draws an
edge A -> B when A's object uses a symbol B's object defines, and prints
every loop (a strongly connected component of more than one file) with
the symbols that close it.

    tests/file_loops.py BUILD_DIR [--allow N]

Exit status: 0 when there are at most N loops (default 0), 1 when more,
2 on a usage error or when no object file is found. A file's static and
inline functions are its own: they never make an edge.
"""
import os
import subprocess
import sys

# the production targets: the plugin, its core, the command and replay
TARGETS = ("keyshift_core.dir", "keyshift.dir", "keyshift-cli.dir",
           "keyshift-replay.dir", "keyshift_ais.dir")


def objects(build):
    """Yields (source path relative to the tree, object path)."""
    for root, _dirs, files in os.walk(build):
        part = root.split(os.sep + "CMakeFiles" + os.sep, 1)
        if len(part) != 2:
            continue
        target = part[1].split(os.sep, 1)[0]
        if target not in TARGETS:
            continue
        rel = part[1].split(os.sep, 1)[1] if os.sep in part[1] else ""
        for f in files:
            if f.endswith(".c.o"):
                src = os.path.join(rel, f[:-2])
                yield target, src, os.path.join(root, f)


def symbols(obj):
    """@returns (defined, used): the object's global symbols."""
    out = subprocess.run(["nm", "-g", obj], check=True,
                         capture_output=True, text=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        f = line.split()
        if len(f) == 2 and f[0] == "U":
            used.add(f[1])
        elif len(f) == 3 and f[1] in "TDBRCVWtdbr":
            defined.add(f[2])
    return defined, used


def sccs(nodes, edges):
    """Tarjan's strongly connected components, iterative."""
    index, low, on, stack, out, n = {}, {}, set(), [], [], [0]
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = n[0]
        n[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = n[0]
                    n[0] += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(edges.get(nxt, ())))))
                elif nxt in on:
                    low[v] = min(low[v], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(sorted(comp))
    return out


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    allow = 0
    if len(argv) == 4 and argv[2] == "--allow":
        allow = int(argv[3])
    by_target = {}
    for target, src, obj in objects(argv[1]):
        by_target.setdefault(target, {})[src] = symbols(obj)
    if not by_target:
        print("file_loops: no object file under %s" % argv[1], file=sys.stderr)
        return 2
    # one graph per linked whole: the plugin and the command each link
    # the core, so the core's files join both
    core = by_target.get("keyshift_core.dir", {})
    loops = []
    for target, files in sorted(by_target.items()):
        whole = dict(files)
        if target != "keyshift_core.dir":
            whole.update(core)
        owner = {}
        for src, (defined, _used) in whole.items():
            for s in defined:
                owner.setdefault(s, src)
        edges, why = {}, {}
        for src, (_defined, used) in whole.items():
            for s in used:
                dst = owner.get(s)
                if dst and dst != src:
                    edges.setdefault(src, set()).add(dst)
                    why.setdefault((src, dst), []).append(s)
        for comp in sccs(sorted(whole), edges):
            if len(comp) < 2 or comp in loops:
                continue
            loops.append(comp)
            print("loop of %d files:" % len(comp))
            members = set(comp)
            for a in comp:
                for b in sorted(edges.get(a, ())):
                    if b in members:
                        print("  %s -> %s (%s)" % (
                            a, b, ", ".join(sorted(why[(a, b)])[:4])))
    print("file_loops: %d loop(s) between source files" % len(loops))
    return 0 if len(loops) <= allow else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
