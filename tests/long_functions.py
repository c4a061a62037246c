#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Lists the production functions longer than 80 lines (issue 31,
"functions over ~80 lines split by what they build").

Reads the C files of core/, plugin/, cli/ and replay/. The code is
clang-formatted in kernel style, so a function's body opens with `{` at
column 0 and closes with `}` at column 0; a function's length is the
number of lines between the two (blank and comment lines included).

    tests/long_functions.py [SOURCE_DIR] [--allow N] [--max LINES]

Prints every function longer than LINES (default 80), longest first, as
`file:line name length`. Exit status: 0 when there are at most N such
functions (default 0), 1 when more, 2 on a usage error or when no source
file is found.
"""
import os
import re
import sys

# the production folders: the analysis, the plugin, the command, replay
FOLDERS = ("core", "plugin", "cli", "replay")

# issue 31: past ~80 lines a function builds more than one thing
DEFAULT_MAX_LINES = 80

# the function's name: the first identifier followed by '(' on the line
# that starts its declaration, once attributes are taken out
NAME = re.compile(r"([A-Za-z_]\w*)\s*\(")
ATTRIBUTE = re.compile(r"__attribute__\s*\(\(.*?\)\)")


def functions(path):
    """Yields (line of the opening brace, name, body length) for each
    function of the file at path."""
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        if not lines[i].startswith("{"):
            i += 1
            continue
        # the declaration starts at the last line before the brace that
        # begins at column 0
        start = i - 1
        while start > 0 and (lines[start][:1].isspace() or
                             lines[start] == ""):
            start -= 1
        decl = ATTRIBUTE.sub("", " ".join(lines[start:i]))
        m = NAME.search(decl)
        name = m.group(1) if m else "?"
        end = i + 1
        while end < len(lines) and not lines[end].startswith("}"):
            end += 1
        yield i + 1, name, end - i - 1
        i = end + 1


def sources(top):
    """Yields the path of every .c file under the production folders,
    relative to top, sorted."""
    for folder in FOLDERS:
        for root, _dirs, files in os.walk(os.path.join(top, folder)):
            for f in sorted(files):
                if f.endswith(".c"):
                    yield os.path.relpath(os.path.join(root, f), top)


def main(argv):
    """@returns the exit status (see the module's comment)."""
    top = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    allow, max_lines = 0, DEFAULT_MAX_LINES
    args = list(argv[1:])
    try:
        while args:
            a = args.pop(0)
            if a == "--allow":
                allow = int(args.pop(0))
            elif a == "--max":
                max_lines = int(args.pop(0))
            elif a.startswith("-"):
                raise ValueError(a)
            else:
                top = a
    except (ValueError, IndexError):
        print(__doc__, file=sys.stderr)
        return 2
    long, n_files = [], 0
    for rel in sorted(sources(top)):
        n_files += 1
        for line, name, length in functions(os.path.join(top, rel)):
            if length > max_lines:
                long.append((length, rel, line, name))
    if n_files == 0:
        print(f"long_functions: no C file under {top}", file=sys.stderr)
        return 2
    long.sort(key=lambda x: (-x[0], x[1], x[2]))
    for length, rel, line, name in long:
        print(f"{rel}:{line} {name} {length}")
    print(f"{len(long)} functions over {max_lines} lines "
          f"(allowed: {allow})")
    return 0 if len(long) <= allow else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
