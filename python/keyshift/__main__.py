"""``python -m keyshift ARGS...``: the same as the ``keyshift`` command."""

from ._cli import main

main()
