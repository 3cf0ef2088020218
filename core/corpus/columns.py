"""Guess which columns of a table hold the text, a document id and the person, from their names (or, in a file
without a header row, from each column's words per row); whether a first row reads as a header row
(``looks_like_header``), so that a message may name its columns; and whether a CSV's first row is plainly a record
(``first_row_reads_as_data``): its columns are then named by position, "column 1", "column 2", …"""

from __future__ import annotations

import re

TEXT_NAMES = ("text", "note", "notes", "body", "content", "document", "message", "narrative", "report",
              "description", "comment", "comments", "summary")
ID_NAMES = ("id", "doc_id", "document_id", "note_id", "record_id", "uid", "key")
MIN_TEXT_WORDS = 3.0  # a column of fewer words a row is not suggested as the text of a file without a header
POSITION_NAME = "column {}"  # the columns of a file without a header row: "column 1", "column 2", …
_POSITION = re.compile(r"^column [1-9][0-9]*$")
PERSON_NAMES = ("patient", "patient_id", "person", "person_id", "subject", "subject_id", "client", "client_id",
                "user", "user_id", "author", "customer", "customer_id")


def _first(columns: list[str], names: tuple[str, ...]) -> str:
    lowered = {c.strip().lower(): c for c in columns}
    return next((lowered[n] for n in names if n in lowered), "")


def suggest_columns(columns: list[str], words_per_row: dict[str, float] | None = None) -> dict[str, str]:
    """{"text", "id", "person"}: a column for each role whose name is a usual one ('' when none). Columns named by
    position (a file without a header row) have no telling names: with ``words_per_row`` (``core.corpus.profile``)
    the text column is the one with the most words a row, when it has a few."""
    text = _first(columns, TEXT_NAMES) or (columns[0] if len(columns) == 1 else "")
    if not text and words_per_row and all(is_position_name(c) for c in columns):
        wordiest = max(columns, key=lambda c: words_per_row.get(c, 0.0))
        text = wordiest if words_per_row.get(wordiest, 0.0) >= MIN_TEXT_WORDS else ""
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


MAX_HEADER_WORDS = 5


def position_names(n: int) -> list[str]:
    """The names of a header-less file's ``n`` columns: "column 1" … "column n"."""
    return [POSITION_NAME.format(i) for i in range(1, n + 1)]


def is_position_name(name: str) -> bool:
    return bool(_POSITION.match(name))


def first_row_reads_as_data(cells: list[str]) -> bool:
    """True when a CSV's first row is plainly a record, not a header row: one of its cells is a number, longer than
    a column name is, or a phrase of more than a few words. (A row of short words stays a header row, as before.)"""
    if looks_like_header(cells):
        return False
    for cell in cells:
        stripped = cell.strip()
        if not stripped:
            continue
        if (_is_number(stripped) or len(stripped) > MAX_HEADER_NAME_CHARS
                or len(stripped.split()) > MAX_HEADER_WORDS):
            return True
    return False


def _is_number(text: str) -> bool:
    try:
        float(text.replace(",", ""))
    except ValueError:
        return False
    return True
