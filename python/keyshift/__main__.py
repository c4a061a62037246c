# SPDX-License-Identifier: Apache-2.0
"""``python -m keyshift ARGS...``: the same as the ``keyshift`` command."""

from ._cli import main

main()
