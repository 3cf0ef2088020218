"""``privet vocab``: the public word lists a run spec can name in ``[dp_synrag] domain_lists``."""

from __future__ import annotations

import argparse
import sys
from typing import TextIO


def register(subparsers) -> None:
    p = subparsers.add_parser("vocab", help="list the public domain word lists shipped with Privet")
    p.set_defaults(func=cmd_vocab)


def cmd_vocab(args: argparse.Namespace, out: TextIO | None = None) -> int:
    from core.methods.dp_synrag.vocab.vocabulary import load_vocabulary, shipped_domain_lists

    out = out or sys.stdout
    print("Public domain word lists (name them in a run spec: [dp_synrag] domain_lists = [\"NAME\"]):", file=out)
    for info in shipped_domain_lists():
        print(f"  {info.name:<22} {info.entries:>6} entries  {info.file}  sha256 {info.sha256[:16]}…", file=out)
        print(f"  {'':<22} {info.description}", file=out)
    print(f"Always included: the English word list ({len(load_vocabulary())} words, stop words and non-words removed).",
          file=out)
    print("A list costs no privacy budget. Without one, DP phrase discovery (discover_phrases = true, the default) "
          "finds the corpus's own frequent phrases for part of the budget.", file=out)
    return 0
