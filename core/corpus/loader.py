"""Load a private corpus into privacy units, with a report that never contains text.

Inputs: a folder of ``.txt``/``.md`` files (one document per file, recursive, sorted by
relative path; hidden files and folders are skipped), or one ``.csv``/``.tsv``/``.jsonl``
file with a text column, an optional id column, an optional person column and an optional label column
(a category with few values, docs/method.md §6.3: each unit gets one label, ``core.corpus.labels``).

With a person column the privacy unit is the person: all of that person's documents
(sorted by document id when an id column is chosen, otherwise in file order) are joined
with blank lines and then bounded to ``max_unit_chars``, so every later sensitivity is
that of one unit. Text is normalised (Unicode NFC, ``\\n`` line ends, outer whitespace
stripped) so the same content always gives the same units and fingerprint.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Sequence
from typing import Any

from core.corpus.collector import WarningCollector
from core.corpus.columns import is_position_name, looks_like_header
from core.corpus.decoding import decode_bytes
from core.corpus.labels import UNLABELLED, check_label_values, unit_label
from core.corpus.model import Corpus, LoadReport, SkippedFile, Unit
from core.corpus.stats import length_summary
from core.corpus.tables import TABLE_SUFFIXES, Table, parse_table
from core.common.errors import CorpusError

DOCUMENT_SUFFIXES = (".txt", ".md")
DEFAULT_MAX_UNIT_CHARS = 4000
DEFAULT_MAX_FILE_BYTES = 200_000_000
# Column names are echoed in messages only when the first row reads as a header row (core.corpus.columns):
# in a file without a header row they are a private record.
COLUMNS_NOT_SHOWN = ("(Column names are not repeated here: the first row does not read as a header row, and in a "
                     "file without one they would be private text.)")
UNIT_SEPARATOR = "\n\n"


@dataclass(frozen=True)
class _Document:
    """One non-empty document before grouping; ``where`` names its file or row for messages."""

    doc_id: str
    person: str
    text: str
    where: str
    label: str = ""


def load_corpus(
    path: str | Path,
    text_column: str = "",
    id_column: str = "",
    person_column: str = "",
    max_unit_chars: int = DEFAULT_MAX_UNIT_CHARS,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    label_column: str = "",
    labels: Sequence[str] = (),
) -> Corpus:
    """Load ``path`` into units; raise ``CorpusError`` (what + fix) for anything unusable.

    ``label_column``: each unit gets one label (``Unit.label``); ``labels``, the custodian's typed (public)
    labels: only they count, and a unit carrying none of them gets none (``core.corpus.labels``)."""
    _check_limits(max_unit_chars, max_file_bytes)
    source = _existing(path)
    report = LoadReport()
    notes = WarningCollector()
    if source.is_dir():
        if text_column or id_column or person_column or label_column:
            raise CorpusError(
                f"{source} is a folder; columns only apply to a .csv, .tsv or .jsonl file.",
                "Leave the column options empty for a folder (one document per file).",
            )
        documents = _read_folder(source, max_file_bytes, report, notes)
        columns: dict[str, str] = {}
    else:
        table = read_table(source, max_file_bytes, chosen=(text_column, id_column, person_column, label_column))
        report.n_files_read = 1
        columns = _choose_columns(table, source, text_column, id_column, person_column, label_column)
        documents = _table_documents(table, source, columns, report, notes)
        if label_column:
            check_label_values([d.label for d in documents], label_column, source.name)
    by_person = bool(person_column)
    units = _make_units(documents, by_person, bool(id_column), max_unit_chars, report, notes, tuple(labels))
    _refuse_too_few(units, source, report)
    report.n_documents = len(documents)
    report.n_units = len(units)
    report.lengths = length_summary([len(u.text) for u in units])
    if label_column:
        _report_labels(documents, units, tuple(labels), by_person, report, notes)
    report.warnings = notes.render()
    report.file_warnings = notes.render(files_only=True)
    return Corpus(
        units=units,
        report=report,
        unit_kind="person" if by_person else "document",
        source=str(source.resolve()),
        columns=columns,
        document_texts=[d.text for d in documents],
    )


def list_columns(path: str | Path, max_file_bytes: int = DEFAULT_MAX_FILE_BYTES) -> list[str]:
    """Column names of a table file in file order (``[]`` for a folder), for the column pickers: a header row's
    names, or "column 1", "column 2", … for a file without one (``core.corpus.tables``)."""
    source = _existing(path)
    if source.is_dir():
        return []
    return read_table(source, max_file_bytes).columns


def read_table(path: str | Path, max_file_bytes: int = DEFAULT_MAX_FILE_BYTES, chosen: Sequence[str] = ()) -> Table:
    """The table file ``path``, its header row decided from its first row (``core.corpus.tables``). ``chosen``: the
    column names asked for; a file read as header-less whose first row holds one of them (and none is a position
    name such as "column 2") is read with that row as its header, as a spec written before header-less files were
    recognised names its columns."""
    source = _existing(path)
    text = _table_text(source, max_file_bytes)
    table = parse_table(text, source)
    names = [name for name in chosen if name]
    if (not table.has_header and names and not any(is_position_name(n) for n in names)
            and any(n in table.first_row for n in names)):
        table = parse_table(text, source, header=True)
    return table


# --- reading --------------------------------------------------------------------------------


def _check_limits(max_unit_chars: int, max_file_bytes: int) -> None:
    if max_unit_chars < 1:
        raise CorpusError(
            f"The maximum unit length must be at least 1 character (got {max_unit_chars}).",
            f"Use a positive number; the default is {DEFAULT_MAX_UNIT_CHARS}.",
        )
    if max_file_bytes < 1:
        raise CorpusError(
            f"The file size limit must be positive (got {max_file_bytes}).",
            f"Use a positive number of bytes; the default is {DEFAULT_MAX_FILE_BYTES}.",
        )


def _existing(path: str | Path) -> Path:
    if not str(path).strip():
        raise CorpusError("No corpus path was given.", "Choose a folder of .txt/.md files or a table file.")
    source = Path(path).expanduser()
    if not source.exists():
        if source.is_symlink():
            raise CorpusError(
                f"{source} is a link that leads nowhere: its target is missing, or the link points back to "
                "itself (a loop).",
                "Point at the real folder or file instead of the link.",
            )
        raise CorpusError(f"{source} does not exist.", "Check the path (and that the drive is connected).")
    if not (source.is_dir() or source.is_file()):
        raise CorpusError(f"{source} is neither a folder nor a regular file.", "Choose a folder or a file.")
    return source


def _read_folder(
    folder: Path, max_file_bytes: int, report: LoadReport, notes: WarningCollector
) -> list[_Document]:
    files = _visible_files(folder)
    if not files:
        raise CorpusError(f"The folder {folder} is empty.", "Put one .txt or .md file per document in it.")
    documents: list[_Document] = []
    for file in files:
        name = file.relative_to(folder).as_posix()
        if file.suffix.lower() not in DOCUMENT_SUFFIXES:
            report.n_ignored_files += 1
            notes.add("file(s) ignored (not .txt or .md)", name, skips_file=True)
            report.skipped_files.append(SkippedFile(name, "not a .txt or .md file",
                                                    "save it as a .txt file if it is one of the documents"))
            continue
        text = _read_document_file(file, name, max_file_bytes, report, notes)
        if text is None:
            continue
        report.n_files_read += 1
        text = _normalise(text)
        if not text:
            report.n_empty_skipped += 1
            notes.add("empty document(s) skipped", name)
            continue
        documents.append(_Document(doc_id=name, person="", text=text, where=name))
    if report.n_files_read == 0:
        raise CorpusError(
            f"No readable .txt or .md file in {folder} ({report.n_binary} binary, "
            f"{report.n_undecodable} undecodable, {report.n_too_large} too large, "
            f"{report.n_ignored_files} with other extensions).",
            "Save the documents as UTF-8 .txt or .md files, one document per file.",
        )
    return documents


def _visible_files(folder: Path) -> list[Path]:
    """Regular files under ``folder`` sorted by relative path, skipping hidden files and folders."""
    found = []
    for item in folder.rglob("*"):
        relative = item.relative_to(folder)
        if any(part.startswith(".") for part in relative.parts) or not item.is_file():
            continue
        found.append(item)
    return sorted(found, key=lambda f: f.relative_to(folder).as_posix())


def _read_document_file(
    file: Path, name: str, max_file_bytes: int, report: LoadReport, notes: WarningCollector
) -> str | None:
    """The decoded text of one folder file, or ``None`` (counted and warned) when unusable."""
    try:
        if file.stat().st_size > max_file_bytes:
            report.n_too_large += 1
            notes.add(f"file(s) over the {max_file_bytes:,}-byte limit skipped", name, skips_file=True)
            report.skipped_files.append(SkippedFile(name, f"over the {max_file_bytes:,}-byte limit",
                                                    "split it into one file per document"))
            return None
        data = file.read_bytes()
    except OSError:
        notes.add("file(s) that could not be opened skipped", name, skips_file=True)
        report.skipped_files.append(SkippedFile(name, "it could not be opened", "check that you may read it"))
        return None
    decoded = decode_bytes(data)
    if decoded.problem == "binary":
        report.n_binary += 1
        notes.add("binary file(s) skipped (NUL bytes)", name, skips_file=True)
        report.skipped_files.append(SkippedFile(name, "a binary file, not text (it holds NUL bytes)",
                                                "save the document as a .txt file"))
        return None
    if decoded.problem == "undecodable":
        report.n_undecodable += 1
        notes.add("file(s) not in UTF-8/UTF-16 skipped (save them as UTF-8)", f"{name} ({decoded.detail})", skips_file=True)
        report.skipped_files.append(SkippedFile(name, f"not in UTF-8 or UTF-16 ({decoded.detail})",
                                                "open it and save it again as UTF-8 text"))
        return None
    return decoded.text


def _table_text(source: Path, max_file_bytes: int) -> str:
    suffix = source.suffix.lower()
    if suffix in DOCUMENT_SUFFIXES:
        raise CorpusError(
            f"{source.name} is a single document; one document cannot be protected on its own.",
            "Choose the folder that holds one .txt/.md file per document.",
        )
    if suffix not in TABLE_SUFFIXES:
        raise CorpusError(
            f"{source.name} has an unsupported file type ('{source.suffix or 'no extension'}').",
            "Use a folder of .txt/.md files, or a .csv, .tsv or .jsonl file.",
        )
    size = source.stat().st_size
    if size > max_file_bytes:
        raise CorpusError(
            f"{source.name} is {size:,} bytes, over the {max_file_bytes:,}-byte limit.",
            "Split the file, or raise the limit if this machine has the memory for it.",
        )
    try:
        data = source.read_bytes()
    except OSError as exc:
        raise CorpusError(f"{source} could not be read ({exc.strerror}).", "Check its permissions.") from None
    decoded = decode_bytes(data)
    if decoded.problem == "binary":
        raise CorpusError(
            f"{source.name} looks like a binary file ({decoded.detail}), not a text table.",
            "Export the table as UTF-8 CSV, TSV or JSON Lines.",
        )
    if decoded.problem == "undecodable":
        raise CorpusError(
            f"{source.name} is not UTF-8 or UTF-16 text ({decoded.detail}).",
            "Save it again as UTF-8 (in a spreadsheet: 'CSV UTF-8').",
        )
    return decoded.text


# --- columns --------------------------------------------------------------------------------


def _choose_columns(table: Table, source: Path, text: str, id_: str, person: str, label: str = "") -> dict[str, str]:
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


# --- rows to documents ------------------------------------------------------------------------


def _table_documents(
    table: Table, source: Path, columns: dict[str, str], report: LoadReport, notes: WarningCollector
) -> list[_Document]:
    for line in table.warnings:
        notes.note(line)
    report.n_rows_skipped += table.n_rows_skipped
    where_rows = f"{source.name} {table.row_label}"
    documents: list[_Document] = []
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
        text = _normalise(text)
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
        documents.append(_Document(doc_id=doc_id, person=person, text=text, where=where, label=label))
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


def _normalise(text: str) -> str:
    text = unicodedata.normalize("NFC", text)
    return text.replace("\r\n", "\n").replace("\r", "\n").strip()


# --- documents to units -----------------------------------------------------------------------


def _make_units(
    documents: list[_Document],
    by_person: bool,
    order_by_id: bool,
    max_chars: int,
    report: LoadReport,
    notes: WarningCollector,
    typed_labels: tuple[str, ...] = (),
) -> list[Unit]:
    """One unit per document, or per person (in order of first appearance), bounded to ``max_chars``; each
    unit's label is chosen from its own documents only (``unit_label``)."""
    if not by_person:
        groups = [(d.doc_id, [d]) for d in documents]
    else:
        grouped: dict[str, list[_Document]] = {}
        for doc in documents:
            grouped.setdefault(doc.person, []).append(doc)
        groups = list(grouped.items())
    units = []
    for uid, docs in groups:
        ordered = sorted(docs, key=lambda d: _natural_key(d.doc_id)) if order_by_id else docs
        text = UNIT_SEPARATOR.join(d.text for d in ordered)
        if len(text) > max_chars:
            text = text[:max_chars].rstrip()
            report.n_truncated += 1
            kind = "person unit(s) (named by each person's first row)" if by_person else "document(s)"
            notes.add(f"{kind} cut to {max_chars:,} characters", docs[0].where)
        label = unit_label([d.label for d in docs], typed_labels) if any(d.label for d in docs) else UNLABELLED
        units.append(Unit(uid=uid, text=text, n_documents=len(docs), label=label))
    return units


def _report_labels(documents: list[_Document], units: list[Unit], typed: tuple[str, ...], by_person: bool,
                   report: LoadReport, notes: WarningCollector) -> None:
    """The label counts the load report shows on screen (counts only; never exported)."""
    labels_of: dict[str, set[str]] = {}
    for d in documents:
        labels_of.setdefault(d.person if by_person else d.doc_id, set()).add(d.label)
    report.n_label_values = len({d.label for d in documents})
    report.n_multi_label_units = sum(1 for found in labels_of.values() if len(found) > 1)
    report.n_unlabelled_units = sum(1 for u in units if u.label == UNLABELLED)
    if report.n_multi_label_units:
        notes.note(f"{report.n_multi_label_units} unit(s) carry several labels; each keeps its most frequent label "
                   "(ties: the first in label order), so it counts in one class only.")
    if typed and report.n_unlabelled_units:
        notes.note(f"{report.n_unlabelled_units} unit(s) carry no label of the typed list; they are left out of the "
                   "synthesis.")


def _natural_key(doc_id: str) -> tuple[tuple[int, int, str], ...]:
    """Sort ids so that 'note-2' comes before 'note-10'; ties cannot occur (ids are unique)."""
    parts = re.split(r"([0-9]+)", doc_id)
    return tuple((1, int(p), p) if i % 2 else (0, 0, p) for i, p in enumerate(parts))


def _refuse_too_few(units: list[Unit], source: Path, report: LoadReport) -> None:
    if not units:
        raise CorpusError(
            f"No document with text was found in {source} ({report.n_empty_skipped} empty, "
            f"{report.n_rows_skipped} rows skipped).",
            "Check that the right text column is chosen and that the documents are not empty.",
        )
    if len(units) == 1:
        raise CorpusError(
            f"Only one privacy unit was found in {source}. Differential privacy over a single unit is "
            "meaningless: the output would either reveal it or say nothing.",
            "Load a corpus with many documents (or many people when a person column is chosen).",
        )
