"""The columns a load names (text, id, person, label), checked against the table file, and the messages that say
how to choose one: by its header name, or by its position ("column 3") in a file without a header row, whose first
row is a private record and is never echoed.
"""

from __future__ import annotations

from pathlib import Path

from core.corpus.columns import is_position_name, looks_like_header
from core.corpus.tables import Table
from core.common.errors import CorpusError

# Column names are echoed in messages only when the first row reads as a header row (core.corpus.columns):
# in a file without a header row they are a private record.
COLUMNS_NOT_SHOWN = ("(Column names are not repeated here: the first row does not read as a header row, and in a "
                     "file without one they would be private text.)")


def choose_columns(table: Table, source: Path, text: str, id_: str, person: str, label: str = "") -> dict[str, str]:
    text = text or _default_text_column(table, source)
    for role, name in (("text", text), ("id", id_), ("person", person), ("label", label)):
        if not name:
            continue
        if name not in table.columns and not table.has_header:
            asked = f"'{name}'" if is_position_name(name) else "chosen"  # any other name may be private text
            raise CorpusError(
                f"The {role} column {asked} is not in {source.name}, which has {_columns_found(table)}",
                f"Choose the {role} column by its position: {_both_ways(source, role)}.",
            )
        if name not in table.columns:
            raise CorpusError(
                f"The {role} column '{name}' is not in {source.name}, which has {_columns_found(table)}",
                f"Give the exact name of a column as its header row writes it as the {role} column "
                f"(`privet inspect {source.name} --columns` shows the header row; so do the wizard's column "
                "pickers), or add a header row if the file has none.",
            )
        if name in table.duplicate_columns:
            raise CorpusError(
                f"The header of {source.name} names the column '{name}' more than once.",
                "Rename the repeated column headers so each is unique.",
            )
    if text in (id_, person):
        raise CorpusError(
            f"The column '{text}' was chosen both as the text column and as an id/person column.",
            "Choose a different column for the text.",
        )
    if label and label in (text, id_, person):
        raise CorpusError(
            f"The column '{label}' was chosen both as the label column and as the text, id or person column.",
            "Choose the column that holds each document's category as the label column.",
        )
    return {"text": text, "id": id_, "person": person, **({"label": label} if label else {})}


def _default_text_column(table: Table, source: Path) -> str:
    """A column literally named 'text', or the only column; otherwise ask the user."""
    named = [c for c in table.columns if c.lower() == "text"]
    if len(named) == 1:
        return named[0]
    if len(table.columns) == 1:
        return table.columns[0]
    if not table.has_header:
        raise CorpusError(
            f"Which column of {source.name} holds the text? It has {_columns_found(table)}",
            f"Choose the text column: {_both_ways(source, 'text')}.",
        )
    raise CorpusError(
        f"Which column of {source.name} holds the text? None is named 'text'; it has {_columns_found(table)}",
        f"Choose the text column by its header name: on the command line --text-column NAME "
        f"(`privet inspect {source.name} --columns` shows the header row with each column's words per row); in the "
        "wizard, the Text column picker on the Private data page.",
    )


def _both_ways(source: Path, role: str) -> str:
    """The two ways to choose a column of a file without a header row: the command line and the wizard."""
    return (f'on the command line --{role}-column "column 3" for the third column (`privet inspect {source.name} '
            "--columns` lists each column with its words per row and its share of numbers, never its text); in the "
            f"wizard, the {role.capitalize()} column picker on the Private data page, which lists the same")


def _columns_found(table: Table) -> str:
    """'3 columns: id, body, patient.' when the first row reads as a header row (``looks_like_header``); for a
    file without a header row, its columns' names by position; otherwise the number only, with why: without a
    header row the names would be a private record."""
    if not table.has_header:
        named = "is named" if len(table.columns) == 1 else "are named"
        return f"no header row, so its {_count_columns(table)} {named} by position: {', '.join(table.columns)}."
    if looks_like_header(table.columns):
        return f"{_count_columns(table)}: {', '.join(name.strip() for name in table.columns)}."
    return f"{_count_columns(table)}. {COLUMNS_NOT_SHOWN}"


def _count_columns(table: Table) -> str:
    n = len(table.columns)
    return f"{n} column{'s' if n != 1 else ''}"
