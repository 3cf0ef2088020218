"""``privet fidelity REAL SYNTHETIC``: the fidelity report of a synthetic corpus against the real one, as JSON.

For the custodian's own screen: the figures are computed on the private corpus without noise, and the
side-by-side pairs quote real documents (``--pairs 0`` leaves them out). Nothing is written to a file
and nothing is exported (core/evaluation/fidelity.py).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from core.common.errors import PrivetError

EMBEDDERS = ("default", "tiny", "none")


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "fidelity",
        help="compare a synthetic corpus with the real one (classifier AUC, own-form share, MMD²; custodian only)",
        description="Print the fidelity report of SYNTHETIC (e.g. a run's synthetic.jsonl) against REAL (the private "
        "corpus: .csv, .tsv, .jsonl or a folder) as JSON: a real-vs-synthetic classifier's cross-validated AUC "
        "(0.5: indistinguishable), the share of synthetic documents in the corpus's own forms (by --templates, "
        "else a skeleton proxy), MMD² of the embeddings beside a same-size real sample's, and a few real and "
        "synthetic documents side by side. Computed on private data without noise: for the custodian's eyes only, "
        "never for export.",
    )
    p.add_argument("real", metavar="REAL", type=Path, help="the real corpus (as for privet run)")
    p.add_argument("synthetic", metavar="SYNTHETIC", type=Path, help="the synthetic corpus (synthetic.jsonl or .csv)")
    p.add_argument("--templates", type=Path, default=None,
                   help="templates.json (as privet demo-data writes it) or a JSON list of templates with {slots}")
    p.add_argument("--text-column", default="", help="REAL's text column (default: guessed from its name)")
    p.add_argument("--synthetic-text-column", default="", help="SYNTHETIC's text column (default: text)")
    p.add_argument("--embedder", choices=EMBEDDERS, default="default",
                   help="embeddings for MMD²: the packaged MiniLM (default), the test hashing embedder, or none")
    p.add_argument("--pairs", type=int, default=3, help="side-by-side pairs shown (default 3; 0: none)")
    p.add_argument("--seed", type=int, default=0, help="seed of the real sample and the folds (default 0)")
    p.set_defaults(func=run)


def _texts(path: Path, column: str) -> list[str]:
    from core.corpus.columns import suggest_columns
    from core.corpus.loader import list_columns, load_corpus

    if not column and path.is_file():  # a usual name (text, note, document, ...) chooses itself
        column = suggest_columns(list_columns(path))["text"]
    corpus = load_corpus(path, text_column=column)
    return [t for t in corpus.document_texts if t.strip()]


def _synthetic_texts(path: Path, column: str) -> list[str]:
    """A run's synthetic.jsonl (one {"text": ...} per line) directly, any other table through the loader."""
    if path.suffix.lower() != ".jsonl" or not path.is_file():
        return _texts(path, column)
    texts = []
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                text = row[column or "text"]
            except (ValueError, KeyError, TypeError):
                raise PrivetError(f"Line {number} of {path} is not a JSON object with a {column or 'text'!r} field.",
                                  "Give the synthetic.jsonl a run wrote, or choose --synthetic-text-column.") from None
            if isinstance(text, str) and text.strip():
                texts.append(text)
    return texts


def _embedder(choice: str):
    if choice == "none":
        return None
    from core.models.registry import load_embedder
    from core.specs.runspec import ModelChoice

    model = load_embedder(ModelChoice(source="tiny-random" if choice == "tiny" else "default"))
    return lambda texts: model.embed(texts)


def run(args: argparse.Namespace) -> int:
    from core.evaluation.fidelity import fidelity_report
    from core.evaluation.own_form import load_templates

    real = _texts(args.real, args.text_column)
    synthetic = _synthetic_texts(args.synthetic, args.synthetic_text_column)
    if not synthetic:
        raise PrivetError(f"{args.synthetic} holds no documents.", "Give the synthetic.jsonl a run wrote.")
    templates = None
    if args.templates is not None:
        try:
            templates = load_templates(args.templates)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise PrivetError(f"Cannot read templates from {args.templates} ({type(exc).__name__}).",
                              "Give the templates.json that privet demo-data wrote, or a JSON list of "
                              "templates such as [\"Patient {name}, {age}.\"].") from None
    report = fidelity_report(real, synthetic, templates=templates, embed=_embedder(args.embedder),
                             n_pairs=max(0, args.pairs), seed=args.seed)
    print(json.dumps(report.to_dict(pairs=args.pairs > 0), indent=2, ensure_ascii=False))
    return 0
