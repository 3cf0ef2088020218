"""A table's rows to documents: the chosen cells as text, rows without text, id, person or label skipped (counted
and warned about), duplicate ids refused.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path
from typing import Any

from core.corpus.collector import WarningCollector
from core.corpus.model import LoadReport
from core.corpus.reading import Document, normalise_text
from core.corpus.tables import Table
from core.common.errors import CorpusError


def table_documents(
    table: Table, source: Path, columns: dict[str, str], report: LoadReport, notes: WarningCollector
) -> list[Document]:
    for line in table.warnings:
        notes.note(line)
    report.n_rows_skipped += table.n_rows_skipped
    where_rows = f"{source.name} {table.row_label}"
    documents: list[Document] = []
    first_row_of_id: dict[str, int] = {}
    duplicates: list[str] = []
    for row in table.rows:
        where = f"{source.name} {table.row_label} {row.number}"
        text = _cell_text(row.values.get(columns["text"]))
        numbered = f"{table.row_label}-{row.number}"
        doc_id = _cell_text(row.values.get(columns["id"])) if columns["id"] else numbered
        person = _cell_text(row.values.get(columns["person"])) if columns["person"] else ""
        label = _cell_text(row.values.get(columns["label"])) if columns.get("label") else ""
        if text is None or doc_id is None or person is None or label is None:
            report.n_rows_skipped += 1
            notes.add(f"{table.row_label}(s) skipped (a chosen cell is a list or object, not text)", where)
            continue
        text = normalise_text(text)
        doc_id = doc_id.strip()
        person = person.strip()
        label = unicodedata.normalize("NFC", label).strip()
        if not text:
            report.n_empty_skipped += 1
            notes.add(f"empty document(s) skipped in {where_rows}s", str(row.number))
            continue
        if columns["id"] and not doc_id:
            report.n_rows_skipped += 1
            notes.add(f"{table.row_label}(s) without an id skipped in {where_rows}s", str(row.number))
            continue
        if columns["person"] and not person:
            report.n_rows_skipped += 1
            notes.add(f"{table.row_label}(s) without a person skipped in {where_rows}s", str(row.number))
            continue
        if columns.get("label") and not label:
            report.n_rows_skipped += 1
            notes.add(f"{table.row_label}(s) without a label skipped in {where_rows}s", str(row.number))
            continue
        if doc_id in first_row_of_id:
            first = first_row_of_id[doc_id]
            duplicates.append(f"{table.row_label} {row.number} repeats the id of {table.row_label} {first}")
            continue
        first_row_of_id[doc_id] = row.number
        documents.append(Document(doc_id=doc_id, person=person, text=text, where=where, label=label))
    if duplicates:
        more = f" (and {len(duplicates) - 3} more)" if len(duplicates) > 3 else ""
        raise CorpusError(
            f"The id column '{columns['id']}' of {source.name} has duplicate ids: "
            f"{'; '.join(duplicates[:3])}{more}.",
            "Give every document a unique id, or leave the id column empty to number rows.",
        )
    return documents


def _cell_text(value: Any) -> str | None:
    """A cell as text: strings as they are, numbers written out, empty for null; None for lists/objects."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, int, float)):
        return str(value)
    return None
