"""Guess which columns of a table hold the text, a document id and the person, from their names only;
and whether a first row reads as a header row (``looks_like_header``), so that a message may name its columns."""

from __future__ import annotations

import re

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


# Other usual header names: with the ones above, a first row holding one of them reads as a header row.
OTHER_HEADER_NAMES = ("date", "title", "label", "category", "type", "name", "created_at", "visit_date", "age",
                      "sex", "gender", "language", "source", "rating")
MAX_HEADER_NAME_CHARS = 40
_HEADER_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_ .()/#-]*$")


def looks_like_header(columns: list[str]) -> bool:
    """True when a table's first row reads as a header row, so its names may be repeated in a message.

    Conservative, because in a file without a header row the "column names" are a private record: every
    name must be short, start with a letter and hold no sentence punctuation, none may be a number, and at
    least one must be a usual column name (text, note, id, patient, date, ...). A header of unusual names
    only ("Visit Notes", "MRN") is not repeated: the message then gives the number of columns."""
    if not columns:
        return False
    for name in columns:
        stripped = name.strip()
        if not stripped or len(stripped) > MAX_HEADER_NAME_CHARS or not _HEADER_NAME.match(stripped):
            return False
    usual = set(TEXT_NAMES + ID_NAMES + PERSON_NAMES + OTHER_HEADER_NAMES)
    return any(name.strip().lower().replace(" ", "_") in usual for name in columns)
