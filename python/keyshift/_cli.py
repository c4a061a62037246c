# SPDX-License-Identifier: Apache-2.0
"""The ``keyshift`` console script: runs the command bundled in the wheel
(``keyshift.COMMAND``) with the same arguments, in place of this Python
process (exec: its exit status and signals are the command's own).

The command reads reports (show, html, merge, metrics), computes without
a producer (hash, plan), lists and checks properties (config), and reads a
topic's stored records (scan, with the librdkafka bundled in the wheel).
"""

import os
import sys

from . import COMMAND


def main() -> None:
    """Replaces this process with ``keyshift ARGS...``; exits 1 with a
    message when the command cannot be run (a broken installation)."""
    try:
        os.execv(COMMAND, ["keyshift"] + sys.argv[1:])
    except OSError as e:
        sys.stderr.write("keyshift: cannot run %s: %s\n" % (COMMAND, e))
        sys.exit(1)
