"""Read a table file (.csv, .tsv, .jsonl) into named columns and numbered rows.

Row numbers are what a person would look up: for CSV/TSV the record number with the
header as row 1 (as a spreadsheet shows it); for JSONL the line number. Messages name
rows and columns, never cell contents.

A CSV/TSV whose first row is plainly a record (``core.corpus.columns.first_row_reads_as_data``) has no header
row: its columns are named by position ("column 1", "column 2", …) and its first row is a row of data.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.corpus.columns import first_row_reads_as_data, position_names
from core.common.errors import CorpusError

TABLE_SUFFIXES = (".csv", ".tsv", ".jsonl")


@dataclass(frozen=True)
class Row:
    number: int
    values: dict[str, Any]


@dataclass
class Table:
    """Column names (file order), rows, duplicated header names and per-row warnings."""

    columns: list[str]
    rows: list[Row]
    row_label: str  # "row" (CSV/TSV) or "line" (JSONL)
    duplicate_columns: set[str] = field(default_factory=set)
    warnings: list[str] = field(default_factory=list)
    n_rows_skipped: int = 0
    has_header: bool = True  # False: the columns are named by position, and the first row is data
    # The first row's cells as the file writes them (a header row's names, or a header-less file's first record:
    # private then). Only compared with a chosen column name (``core.corpus.loader``); never shown.
    first_row: list[str] = field(default_factory=list, repr=False)


def parse_table(text: str, path: Path, header: bool | None = None) -> Table:
    """Parse decoded ``text`` of ``path`` according to its suffix. ``header`` (CSV/TSV): whether the first row is a
    header row; ``None``: decided from the row (``first_row_reads_as_data``)."""
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        return _parse_jsonl(text, path)
    return _parse_delimited(text, path, "\t" if suffix == ".tsv" else _csv_delimiter(text), header)


def _csv_delimiter(text: str) -> str:
    """Comma, unless the header line has semicolons and no comma (a common spreadsheet export)."""
    header = text.split("\n", 1)[0]
    return ";" if ";" in header and "," not in header else ","


def _parse_delimited(text: str, path: Path, delimiter: str, header_row: bool | None = None) -> Table:
    # The csv module's field limit (128 KiB) is process-wide; only ever raise it, to fit this file.
    if csv.field_size_limit() < len(text) + 1:
        csv.field_size_limit(len(text) + 1)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    records: list[tuple[int, list[str]]] = []
    try:
        for number, record in enumerate(reader, start=1):
            records.append((number, record))
    except csv.Error:
        # The csv module's own message is not repeated: messages name rows, never contents.
        raise CorpusError(
            f"{path.name} is not a well-formed {path.suffix.lstrip('.').upper()} file "
            f"(row {len(records) + 1}: unbalanced quotes, a NUL character or a broken line).",
            "Check that quotes are balanced and every row uses the same delimiter, then try again.",
        ) from None
    records = [(n, r) for n, r in records if any(cell.strip() for cell in r)]
    if not records:
        raise CorpusError(f"{path.name} has no header row and no data.", "Choose a file with a header row.")
    _header_number, header = records[0]
    if header_row is None:
        header_row = not first_row_reads_as_data(header)
    columns = [name.strip() for name in header] if header_row else position_names(len(header))
    table = Table(columns=_unique(columns), rows=[], row_label="row", duplicate_columns=_duplicates(columns),
                  has_header=header_row, first_row=[cell.strip() for cell in header])
    first_words = "the header has" if header_row else "the first row has"
    for number, record in records[1:] if header_row else records:
        if len(record) != len(columns):
            table.warnings.append(
                f"{path.name} row {number}: {len(record)} fields but {first_words} {len(columns)}."
            )
        values = {name: (record[i] if i < len(record) else "") for i, name in enumerate(columns)}
        table.rows.append(Row(number=number, values=values))
    return table


def _parse_jsonl(text: str, path: Path) -> Table:
    table = Table(columns=[], rows=[], row_label="line")
    seen: dict[str, None] = {}
    # Split on "\n" only: JSON strings may legally hold U+2028 and other line separators.
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            table.warnings.append(f"{path.name} line {number}: not valid JSON, skipped.")
            table.n_rows_skipped += 1
            continue
        if not isinstance(obj, dict):
            table.warnings.append(f"{path.name} line {number}: not a JSON object, skipped.")
            table.n_rows_skipped += 1
            continue
        for key in obj:
            seen.setdefault(str(key), None)
        table.rows.append(Row(number=number, values={str(k): v for k, v in obj.items()}))
    table.columns = list(seen)
    if not table.rows:
        raise CorpusError(
            f"{path.name} has no JSON objects to read.",
            "Put one JSON object per line, for example {\"id\": \"1\", \"text\": \"...\"}.",
        )
    return table


def _unique(names: list[str]) -> list[str]:
    return list(dict.fromkeys(names))


def _duplicates(names: list[str]) -> set[str]:
    seen: set[str] = set()
    return {n for n in names if n in seen or seen.add(n)}
