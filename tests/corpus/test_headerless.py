"""Issue 56 item 7 in core: a CSV without a header row is read by column position, its columns' statistics quote
no cell, and a folder's skipped files are listed by name with why and what to do."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.cli import main
from core.corpus import list_columns, load_corpus
from core.corpus.columns import first_row_reads_as_data, suggest_columns
from core.corpus.profile import table_columns
from core.common.errors import CorpusError

CANARY = "Zqxvortimer Blandquist-7731"
ROWS = "".join(f"{17 + i},{CANARY},{CANARY} came in with a cough and went home to rest for {i} days\n"
               for i in range(6))


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("row, data", [
    (["17", "Alma Fenwick", "came in with flu"], True),  # a number
    (["Alma Fenwick came in with flu and a cough today"], True),  # a phrase of many words
    (["x" * 41, "note"], True),  # longer than a column name
    (["id", "patient", "note"], False),
    (["Visit Notes", "MRN"], False),  # unusual names, still a header row
    (["", "text", "label"], False),  # a spreadsheet's unnamed index column
])
def test_a_first_row_reads_as_data_only_when_it_plainly_is(row, data):
    assert first_row_reads_as_data(row) is data


def test_a_headerless_file_is_read_by_position_with_its_first_row(tmp_path):
    path = _write(tmp_path / "notes.csv", ROWS)
    assert list_columns(path) == ["column 1", "column 2", "column 3"]
    corpus = load_corpus(path, text_column="column 3", id_column="column 1")
    assert len(corpus.units) == 6 and corpus.units[0].uid == "17", "row 1 is a record"
    assert corpus.columns["text"] == "column 3"
    with pytest.raises(CorpusError) as info:
        load_corpus(path)
    words = info.value.user_message()
    assert "no header row, so its 3 columns are named by position: column 1, column 2, column 3" in words
    assert '--text-column "column 3"' in words and "Text column picker on the Private data page" in words
    with pytest.raises(CorpusError, match="'column 4' is not in notes.csv") as info:
        load_corpus(path, text_column="column 4")
    with pytest.raises(CorpusError, match="The text column chosen is not in") as info:
        load_corpus(path, text_column=f"{CANARY} x")
    assert CANARY not in info.value.user_message(), "a name that may be a cell is not repeated"


def test_a_spec_that_names_the_first_rows_cells_still_loads_as_before(tmp_path):
    """Before header-less files were recognised, a first-row cell was the column's name: such a spec still loads
    (the first row is then the header, as it was)."""
    path = _write(tmp_path / "old.csv", "17,Alma Fenwick,came in with flu and a cough\n" + ROWS)
    corpus = load_corpus(path, text_column="came in with flu and a cough")
    assert len(corpus.units) == 6


def test_column_statistics_quote_no_cell(tmp_path):
    found = table_columns(_write(tmp_path / "notes.csv", ROWS))
    assert not found.has_header and found.names == ["column 1", "column 2", "column 3"]
    first, person, text = found.profiles
    assert (first.numeric_share, first.words_per_row, first.distinct) == (1.0, 1.0, 6)
    assert person.distinct == 1 and person.numeric_share == 0.0
    assert text.words_per_row > 10
    assert found.suggested()["text"] == "column 3", "the wordiest column, without a header row"
    shown = json.dumps([p.choice() for p in found.profiles]) + repr(found)
    assert CANARY not in shown and "cough" not in shown and "17" not in shown.replace("1.0", "")
    with_header = table_columns(_write(tmp_path / "h.csv", "id,note\n1,a b c\n2,d e\n"))
    assert with_header.has_header and with_header.names == ["id", "note"]
    assert suggest_columns(["column 1", "column 2"], {"column 1": 1.0, "column 2": 2.0})["text"] == "", \
        "too few words a row to call it the text"


def test_inspect_lists_headerless_columns_without_their_text(tmp_path, capsys):
    path = _write(tmp_path / "notes.csv", ROWS)
    assert main(["inspect", str(path), "--columns"]) == 0
    out = capsys.readouterr().out
    assert "No header row" in out and "3. column 3 — " in out and CANARY not in out
    assert main(["inspect", str(path)]) == 1
    err = capsys.readouterr().err
    assert '--text-column "column 3"' in err and "wizard" in err and CANARY not in err


def test_a_folders_skipped_files_are_listed_by_name(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    for i in range(3):
        _write(folder / f"n{i}.txt", f"note {i} about a cough")
    (folder / "latin.txt").write_bytes(f"caf\xe9 {CANARY}".encode("latin-1"))
    (folder / "blob.txt").write_bytes(b"\x00\x01" + CANARY.encode())
    corpus = load_corpus(folder)
    skipped = {f.name: f for f in corpus.report.skipped_files}
    assert sorted(skipped) == ["blob.txt", "latin.txt"]
    assert "UTF-8" in skipped["latin.txt"].why and "UTF-8" in skipped["latin.txt"].fix
    assert "binary" in skipped["blob.txt"].why
    assert corpus.report.file_warnings and all(w in corpus.report.warnings for w in corpus.report.file_warnings)
    assert CANARY not in json.dumps(corpus.report.to_dict())
