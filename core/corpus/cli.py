"""``privet inspect PATH``: what was loaded (counts, length distribution, warnings), never text."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TextIO

from core.corpus.fingerprint import dataset_fingerprint
from core.corpus.loader import DEFAULT_MAX_UNIT_CHARS, load_corpus
from core.corpus.model import Corpus, LengthSummary
from core.corpus.profile import table_columns

BAR_WIDTH = 40


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "inspect",
        help="show what a private corpus loads as (counts, lengths, warnings; never its text)",
        description="Load a private corpus and show units, documents, the unit length distribution, "
        "skipped and truncated counts and warnings. Document text is never printed.",
    )
    parser.add_argument("path", metavar="PATH", help="a folder of .txt/.md files, or a .csv/.tsv/.jsonl file")
    parser.add_argument("--text-column", default="", metavar="C", help="column holding the document text")
    parser.add_argument("--id-column", default="", metavar="C", help="column holding unique document ids")
    parser.add_argument(
        "--person-column", default="", metavar="C", help="column naming the person; makes the person the unit"
    )
    parser.add_argument(
        "--label-column", default="", metavar="C",
        help="column holding each document's category (checked: few values, not free text)",
    )
    parser.add_argument(
        "--max-unit-chars",
        type=int,
        default=DEFAULT_MAX_UNIT_CHARS,
        metavar="N",
        help=f"bound every unit to N characters (default {DEFAULT_MAX_UNIT_CHARS})",
    )
    parser.add_argument("--json", action="store_true", help="print a JSON summary instead of text")
    parser.add_argument(
        "--columns",
        action="store_true",
        help="only list the columns of a table file: its header row's names (or 'column 1', 'column 2', ... in a "
        "file without one), each with its words per row and share of numbers, never its text",
    )
    parser.set_defaults(func=run_inspect)


def run_inspect(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    if getattr(args, "columns", False):
        found = table_columns(args.path)
        if found.has_header:
            out.write("Header row (first line of the file; if the file has no header row this is a private "
                      "record, do not share it), each column with its statistics (never its text):\n")
        else:
            out.write("No header row: the columns are named by position (--text-column \"column 3\" chooses the "
                      "third). Each with its statistics, never its text:\n")
        out.write("".join(f"  {i}. {p.choice()}\n" for i, p in enumerate(found.profiles, 1)))
        return 0
    corpus = load_corpus(
        args.path,
        text_column=args.text_column,
        id_column=args.id_column,
        person_column=args.person_column,
        max_unit_chars=args.max_unit_chars,
        label_column=getattr(args, "label_column", ""),
    )
    fingerprint = dataset_fingerprint(corpus)
    if args.json:
        out.write(json.dumps(summary_dict(corpus, fingerprint, args.max_unit_chars), indent=2) + "\n")
    else:
        out.write("\n".join(summary_lines(corpus, fingerprint, args.max_unit_chars)) + "\n")
    return 0


def summary_dict(corpus: Corpus, fingerprint: str, max_unit_chars: int) -> dict:
    """Everything ``inspect`` shows, as JSON-ready data (counts and statistics, no text, no ids)."""
    return {
        "source": corpus.source,
        "unit_kind": corpus.unit_kind,
        "columns": corpus.columns,
        "max_unit_chars": max_unit_chars,
        "fingerprint": fingerprint,
        "report": corpus.report.to_dict(),
    }


def summary_lines(corpus: Corpus, fingerprint: str, max_unit_chars: int) -> list[str]:
    r = corpus.report
    lines = [
        f"Source:       {corpus.source}",
        f"Privacy unit: {corpus.unit_kind}",
    ]
    chosen = ", ".join(f"{role}={name}" for role, name in corpus.columns.items() if name)
    if chosen:
        lines.append(f"Columns:      {chosen}")
    lines += [
        f"Units:        {r.n_units:,} (from {r.n_documents:,} documents in {r.n_files_read:,} file(s))",
        f"Skipped:      {r.n_empty_skipped:,} empty, {r.n_binary:,} binary, {r.n_undecodable:,} undecodable, "
        f"{r.n_too_large:,} too large, {r.n_rows_skipped:,} unusable rows, {r.n_ignored_files:,} other files",
        f"Truncated:    {r.n_truncated:,} unit(s) cut to {max_unit_chars:,} characters",
        *([f"Labels:       {r.n_label_values:,} different values; {r.n_multi_label_units:,} unit(s) with several "
           "(each keeps its most frequent)"] if corpus.columns.get("label") else []),
        f"Fingerprint:  {fingerprint}  (HMAC-SHA256 under this installation's key)",
    ]
    if r.lengths is not None:
        lines += ["", *length_lines(r.lengths)]
    lines += ["", f"Warnings ({len(r.warnings)}):" if r.warnings else "Warnings: none"]
    lines += [f"  - {w}" for w in r.warnings]
    lines += ["", "These statistics are not differentially private: show them, do not publish them."]
    return lines


def length_lines(lengths: LengthSummary) -> list[str]:
    """Quantiles and an ASCII histogram of unit lengths in characters."""
    lines = [
        "Unit length (characters): "
        f"min {lengths.min:,} | p25 {lengths.p25:,.0f} | median {lengths.median:,.0f} | "
        f"p75 {lengths.p75:,.0f} | max {lengths.max:,}"
    ]
    peak = max(lengths.bin_counts) or 1
    bins = [
        (int(low), min(int(high) - 1, lengths.max), count)
        for low, high, count in zip(lengths.bin_edges, lengths.bin_edges[1:], lengths.bin_counts)
        if low <= lengths.max
    ]
    width = max(len(f"{b[1]:,}") for b in bins)
    for low, high, count in bins:
        bar = "#" * round(BAR_WIDTH * count / peak)
        lines.append(f"  {low:>{width},} - {high:>{width},} | {bar} {count:,}")
    return lines
