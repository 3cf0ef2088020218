"""Entry point of the self-contained bundle: one executable for the command line and the desktop app.

``privet ARGS``          the command line (``core.cli``), e.g. ``privet --version``, ``privet run spec.toml``
``privet gui [ARGS]``    the desktop application (``desktop.app``); ``privet-desktop`` is a wrapper for it

``multiprocessing.freeze_support()`` comes first: the desktop app runs pipelines in a spawned child
process, which in the bundle is this same executable started with multiprocessing's arguments.
"""

from __future__ import annotations

import multiprocessing
import sys

GUI_COMMAND = "gui"


def main(argv: list[str]) -> int:
    if argv[:1] == [GUI_COMMAND]:
        from desktop.app import main as desktop_main

        return desktop_main(argv[1:])
    from core.cli import main as cli_main

    return cli_main(argv)


if __name__ == "__main__":
    multiprocessing.freeze_support()
    sys.exit(main(sys.argv[1:]))
