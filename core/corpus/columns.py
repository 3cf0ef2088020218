"""Guess which columns of a table hold the text, a document id and the person, from their names only."""

from __future__ import annotations

TEXT_NAMES = ("text", "note", "notes", "body", "content", "document", "message", "narrative", "report",
              "description", "comment", "comments", "summary")
ID_NAMES = ("id", "doc_id", "document_id", "note_id", "record_id", "uid", "key")
PERSON_NAMES = ("patient", "patient_id", "person", "person_id", "subject", "subject_id", "client", "client_id",
                "user", "user_id", "author", "customer", "customer_id")


def _first(columns: list[str], names: tuple[str, ...]) -> str:
    lowered = {c.strip().lower(): c for c in columns}
    return next((lowered[n] for n in names if n in lowered), "")


def suggest_columns(columns: list[str]) -> dict[str, str]:
    """{"text", "id", "person"}: a column for each role whose name is a usual one ('' when none)."""
    text = _first(columns, TEXT_NAMES) or (columns[0] if len(columns) == 1 else "")
    id_ = _first([c for c in columns if c != text], ID_NAMES)
    person = _first([c for c in columns if c not in (text, id_)], PERSON_NAMES)
    return {"text": text, "id": id_, "person": person}
