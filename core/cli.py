"""``privet`` — the command line on top of the core library.

Each sub-command lives beside the code it drives and exposes ``register(subparsers)``;
the registered handler takes the parsed arguments and returns an exit code.
Errors meant for users (``PrivetError``) are printed as plain messages, never tracebacks.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from core import __version__
from core.install.bundle import version_text
from core.common.errors import PrivetError

INTERNAL_ERROR = 70  # EX_SOFTWARE: a bug; user errors exit 1

COMMAND_MODULES = (
    "core.corpus.cli",  # inspect
    "core.models.cli",  # models
    "core.methods.dp_synrag.vocab.cli",  # vocab
    "core.run.pipeline_cli",  # plan, run
    "core.run.export_cli",  # export, verify, ledger, keys
    "core.evaluation.cli",  # evaluate
    "core.evaluation.fidelity_cli",  # fidelity
    "core.demo.cli",  # demo-data
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="privet",
        description="Differentially private synthetic text corpora with a signed privacy certificate.",
    )
    parser.add_argument("--version", action="version", version=version_text(__version__))
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except PrivetError as exc:
        print(f"privet: {exc.user_message()}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("privet: interrupted. Stages that had started stay charged in the ledger.", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug, not a user error: say so plainly and never print its text,
        # which could quote private data (PRIVET_DEBUG=1 shows the traceback to whoever reports it).
        if os.environ.get("PRIVET_DEBUG"):
            raise
        print(
            f"privet: an unexpected internal error ({type(exc).__name__}) stopped the command. Its details are not "
            "shown because they could contain private text. Stages that had started stay charged in the ledger; "
            "nothing half-written was exported.\nWhat to do: run the same command again with PRIVET_DEBUG=1 to "
            "see the technical details, and report them to the Privet maintainers after checking they hold no "
            "private text.",
            file=sys.stderr,
        )
        return INTERNAL_ERROR


if __name__ == "__main__":
    sys.exit(main())
