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

The steps: reading a folder's files or a table file (core/corpus/reading.py), checking the chosen columns
(core/corpus/column_choice.py), a table's rows to documents (core/corpus/rows.py) and documents to units
(core/corpus/units.py).
"""

from __future__ import annotations

from pathlib import Path
from collections.abc import Sequence

from core.corpus.collector import WarningCollector
from core.corpus.column_choice import choose_columns
from core.corpus.columns import is_position_name
from core.corpus.labels import check_label_values
from core.corpus.model import Corpus, LoadReport
from core.corpus.reading import existing_path, read_folder, table_text
from core.corpus.rows import table_documents
from core.corpus.stats import length_summary
from core.corpus.tables import Table, parse_table
from core.corpus.units import make_units, refuse_too_few, report_labels
from core.common.errors import CorpusError

DEFAULT_MAX_UNIT_CHARS = 4000
DEFAULT_MAX_FILE_BYTES = 200_000_000


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
    source = existing_path(path)
    report = LoadReport()
    notes = WarningCollector()
    if source.is_dir():
        if text_column or id_column or person_column or label_column:
            raise CorpusError(
                f"{source} is a folder; columns only apply to a .csv, .tsv or .jsonl file.",
                "Leave the column options empty for a folder (one document per file).",
            )
        documents = read_folder(source, max_file_bytes, report, notes)
        columns: dict[str, str] = {}
    else:
        table = read_table(source, max_file_bytes, chosen=(text_column, id_column, person_column, label_column))
        report.n_files_read = 1
        columns = choose_columns(table, source, text_column, id_column, person_column, label_column)
        documents = table_documents(table, source, columns, report, notes)
        if label_column:
            check_label_values([d.label for d in documents], label_column, source.name)
    by_person = bool(person_column)
    units = make_units(documents, by_person, bool(id_column), max_unit_chars, report, notes, tuple(labels))
    refuse_too_few(units, source, report)
    report.n_documents = len(documents)
    report.n_units = len(units)
    report.lengths = length_summary([len(u.text) for u in units])
    if label_column:
        report_labels(documents, units, tuple(labels), by_person, report, notes)
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
    source = existing_path(path)
    if source.is_dir():
        return []
    return read_table(source, max_file_bytes).columns


def read_table(path: str | Path, max_file_bytes: int = DEFAULT_MAX_FILE_BYTES, chosen: Sequence[str] = ()) -> Table:
    """The table file ``path``, its header row decided from its first row (``core.corpus.tables``). ``chosen``: the
    column names asked for; a file read as header-less whose first row holds one of them (and none is a position
    name such as "column 2") is read with that row as its header, as a spec written before header-less files were
    recognised names its columns."""
    source = existing_path(path)
    text = table_text(source, max_file_bytes)
    table = parse_table(text, source)
    names = [name for name in chosen if name]
    if (not table.has_header and names and not any(is_position_name(n) for n in names)
            and any(n in table.first_row for n in names)):
        table = parse_table(text, source, header=True)
    return table


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
