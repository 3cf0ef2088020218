"""``privet demo-data OUT_DIR``: write a public demo corpus into a folder.

The demo corpora are invented or public data (core/demo/), so this command may
print their file names and counts; it never touches a private corpus.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from core.common.errors import PrivetError

_CLINIC_FILES = ("notes.csv", "questions.jsonl", "diseases.json", "domain_words.txt", "templates.json")
_FILES = {
    "clinic": _CLINIC_FILES,
    "discharge": _CLINIC_FILES,  # discharge summaries in four templates of their own
    "triage": _CLINIC_FILES,  # emergency triage notes in four templates of their own
    "movielens": ("users.csv", "questions.jsonl"),
}


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "demo-data",
        help="write a public demo corpus (synthetic clinic notes or MovieLens users) into a folder",
        description="Generate a public demo corpus with evaluation questions. The clinic corpus is "
        "invented (fake patients, invented diseases); 'discharge' (discharge summaries) and 'triage' (triage "
        "notes) are invented clinic-like corpora in forms of their own, with their own invented diseases and "
        "drugs; each clinic-like folder also holds templates.json, the public templates its notes are written in. "
        "The MovieLens corpus uses public ratings with fake user names. Output is deterministic for a given --seed.",
    )
    parser.add_argument("out_dir", metavar="OUT_DIR", type=Path, help="folder to write into (created if missing)")
    parser.add_argument("--kind", choices=sorted(_FILES), default="clinic", help="which corpus (default: clinic)")
    parser.add_argument("--patients", type=int, default=600, help="clinic, discharge, triage: number of patients (default 600)")
    parser.add_argument("--diseases", type=int, default=25, help="clinic, discharge, triage: number of invented diseases (default 25)")
    parser.add_argument("--users", type=int, default=300, help="movielens: number of users (default 300)")
    parser.add_argument("--seed", type=int, default=None, help="generator seed (default: the shipped demo's)")
    parser.add_argument("--force", action="store_true", help="overwrite demo files already in OUT_DIR")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from core.demo.clinic import make_clinic_corpus
    from core.demo.draws import DEMO_SEED
    from core.demo.files import write_clinic, write_movielens
    from core.demo.forms import make_form_corpus
    from core.demo.movielens import make_movielens_corpus

    out_dir: Path = args.out_dir
    if out_dir.exists() and not out_dir.is_dir():
        raise PrivetError(f"{out_dir} exists and is not a folder.", "Choose a folder path for OUT_DIR.")
    clashes = [name for name in _FILES[args.kind] if (out_dir / name).exists()]
    if clashes and not args.force:
        raise PrivetError(
            f"{out_dir} already holds {', '.join(clashes)}.",
            "Choose an empty folder, or add --force to overwrite them.",
        )
    seed = DEMO_SEED if args.seed is None else args.seed
    try:
        if args.kind != "movielens":
            corpus = (make_clinic_corpus(args.patients, args.diseases, seed) if args.kind == "clinic"
                      else make_form_corpus(args.kind, args.patients, args.diseases, seed))
            written = write_clinic(corpus, out_dir)
            summary = (f"{len(corpus.notes)} notes in {len(corpus.templates)} templates, {len(corpus.diseases)} "
                       f"diseases, {len(corpus.questions)} questions")
        else:
            ml = make_movielens_corpus(args.users, seed)
            written = write_movielens(ml, out_dir)
            summary = f"{len(ml.users)} users, {len(ml.questions)} questions"
    except ValueError as exc:
        raise PrivetError(f"Cannot generate the {args.kind} demo: {exc}.", "Adjust the sizes and try again.") from None
    print(f"Wrote the {args.kind} demo corpus ({summary}):")
    for path in written:
        print(f"  {path}")
    return 0
