"""Private corpus loading: inputs, every bad-input case, the report, and `privet inspect`."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from core.cli import main
from core.corpus import Corpus, Unit, list_columns, load_corpus
from core.common.errors import CorpusError

CANARY = "ZEBRA-CANARY-7731"


def write_csv(path: Path, header: list[str], rows: list[list[object]], delimiter: str = ",") -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, delimiter=delimiter)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def write_jsonl(path: Path, objects: list[object]) -> Path:
    path.write_text("\n".join(json.dumps(o) for o in objects) + "\n", encoding="utf-8")
    return path


def make_folder(root: Path, files: dict[str, bytes | str]) -> Path:
    for name, content in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
    return root


def all_messages(corpus: Corpus) -> str:
    return "\n".join(corpus.report.warnings)


# --- inputs that load ---------------------------------------------------------------------------


def test_folder_is_recursive_sorted_and_skips_hidden(tmp_path):
    make_folder(
        tmp_path,
        {"b.txt": "second", "a.md": "first", "sub/c.txt": "third", ".hidden.txt": "no", ".git/x.txt": "no"},
    )
    corpus = load_corpus(tmp_path)
    assert [u.uid for u in corpus.units] == ["a.md", "b.txt", "sub/c.txt"]
    assert [u.text for u in corpus.units] == ["first", "second", "third"]
    assert corpus.unit_kind == "document"
    assert corpus.report.n_files_read == 3
    assert corpus.report.n_documents == corpus.report.n_units == 3
    assert corpus.columns == {}


def test_csv_with_text_and_id_columns(tmp_path):
    path = write_csv(tmp_path / "n.csv", ["id", "note"], [["d1", "alpha"], ["d2", "beta\r\ngamma"]])
    corpus = load_corpus(path, text_column="note", id_column="id")
    assert [(u.uid, u.text) for u in corpus.units] == [("d1", "alpha"), ("d2", "beta\ngamma")]
    assert corpus.columns == {"text": "note", "id": "id", "person": ""}
    assert corpus.source == str(path.resolve())


def test_rows_are_numbered_without_id_column(tmp_path):
    path = write_csv(tmp_path / "n.csv", ["note"], [["alpha"], ["beta"]])
    corpus = load_corpus(path)  # the only column is taken as the text column
    assert [u.uid for u in corpus.units] == ["row-2", "row-3"]


def test_tsv_and_semicolon_csv(tmp_path):
    tsv = write_csv(tmp_path / "n.tsv", ["id", "text"], [["1", "a, b"], ["2", "c; d"]], delimiter="\t")
    semi = write_csv(tmp_path / "s.csv", ["id", "text"], [["1", "a, b"], ["2", "c"]], delimiter=";")
    assert load_corpus(tsv).texts == ["a, b", "c; d"]
    assert load_corpus(semi, id_column="id").texts == ["a, b", "c"]


def test_jsonl_numbers_and_nulls(tmp_path):
    objects = [{"id": 1, "body": "x"}, {"id": 2, "body": "y"}, {"id": 3, "body": None}]
    path = write_jsonl(tmp_path / "d.jsonl", objects)
    corpus = load_corpus(path, text_column="body", id_column="id")
    assert [u.uid for u in corpus.units] == ["1", "2"]
    assert corpus.report.n_empty_skipped == 1


def test_person_unit_concatenates_in_id_order_and_bounds(tmp_path):
    rows = [["n10", "ann", "ten"], ["n2", "bob", "b"], ["n2a", "ann", "two-a"], ["n1", "ann", "one"]]
    path = write_csv(tmp_path / "p.csv", ["id", "person", "text"], rows)
    corpus = load_corpus(path, id_column="id", person_column="person")
    assert corpus.unit_kind == "person"
    by_uid = {u.uid: u for u in corpus.units}
    assert list(by_uid) == ["ann", "bob"]  # order of first appearance
    assert by_uid["ann"] == Unit(uid="ann", text="one\n\ntwo-a\n\nten", n_documents=3)
    assert corpus.report.n_documents == 4 and corpus.report.n_units == 2
    bounded = load_corpus(path, id_column="id", person_column="person", max_unit_chars=5)
    assert {u.uid: u.text for u in bounded.units}["ann"] == "one"  # cut to "one\n\n", trailing blank removed
    assert bounded.report.n_truncated == 1


def test_person_unit_without_id_keeps_file_order(tmp_path):
    path = write_csv(tmp_path / "p.csv", ["who", "text"], [["a", "z"], ["b", "q"], ["a", "y"]])
    corpus = load_corpus(path, person_column="who")
    assert corpus.units[0] == Unit(uid="a", text="z\n\ny", n_documents=2)


def test_utf8_bom_and_utf16_bom_decode(tmp_path):
    header_bom = tmp_path / "bom.csv"
    header_bom.write_bytes("id,text\n1,café\n2,naïve\n".encode("utf-8-sig"))
    assert list_columns(header_bom) == ["id", "text"]  # the BOM is not part of the first column name
    folder = make_folder(
        tmp_path / "docs", {"le.txt": "héllo".encode("utf-16"), "be.txt": codecs_utf16_be("wörld")}
    )
    assert sorted(load_corpus(folder).texts) == ["héllo", "wörld"]


def codecs_utf16_be(text: str) -> bytes:
    return b"\xfe\xff" + text.encode("utf-16-be")


def test_length_summary_and_histogram(tmp_path):
    rows = [[str(i), "x" * n] for i, n in enumerate([10, 20, 30, 40, 50])]
    corpus = load_corpus(write_csv(tmp_path / "n.csv", ["id", "text"], rows), id_column="id")
    lengths = corpus.report.lengths
    assert (lengths.min, lengths.p25, lengths.median, lengths.p75, lengths.max) == (10, 20, 30, 40, 50)
    assert len(lengths.bin_counts) == 10 and len(lengths.bin_edges) == 11
    assert sum(lengths.bin_counts) == 5
    assert lengths.bin_edges[0] == 10 and lengths.bin_edges[-1] > 50


def test_list_columns(tmp_path):
    assert list_columns(write_csv(tmp_path / "a.csv", ["id", "patient", "note"], [["1", "p", "n"]])) == [
        "id",
        "patient",
        "note",
    ]
    assert list_columns(write_jsonl(tmp_path / "a.jsonl", [{"a": 1}, {"b": 2, "a": 3}])) == ["a", "b"]
    assert list_columns(make_folder(tmp_path / "f", {"x.txt": "x"})) == []


# --- bad input: one test per case ---------------------------------------------------------------


def test_missing_path(tmp_path):
    with pytest.raises(CorpusError, match="does not exist"):
        load_corpus(tmp_path / "nope")


def test_empty_folder(tmp_path):
    with pytest.raises(CorpusError, match="is empty"):
        load_corpus(tmp_path)


def test_no_readable_file(tmp_path):
    make_folder(tmp_path, {"a.bin": b"\x00\x01", "b.txt": b"\x00\x00binary", "c.pdf": "x"})
    with pytest.raises(CorpusError, match="No readable") as info:
        load_corpus(tmp_path)
    assert "1 binary" in info.value.what and info.value.fix


def test_binary_file_is_skipped_with_warning(tmp_path):
    binary = b"PK\x03\x04\x00\x00" + CANARY.encode()
    make_folder(tmp_path, {"a.txt": "one", "b.txt": "two", "bad.txt": binary})
    corpus = load_corpus(tmp_path)
    assert corpus.report.n_binary == 1 and corpus.report.n_units == 2
    assert "bad.txt" in all_messages(corpus) and CANARY not in all_messages(corpus)


def test_binary_table_file_is_refused(tmp_path):
    path = tmp_path / "t.csv"
    path.write_bytes(b"id,text\n1,\x00\x00\n")
    with pytest.raises(CorpusError, match="binary"):
        load_corpus(path)


def test_undecodable_file_is_skipped_with_its_name(tmp_path):
    latin = f"{CANARY}\ncaf\xe9".encode("latin-1")
    make_folder(tmp_path, {"a.txt": "one", "b.txt": "two", "latin.txt": latin})
    corpus = load_corpus(tmp_path)
    assert corpus.report.n_undecodable == 1
    assert "latin.txt (not valid UTF-8 at line 2)" in all_messages(corpus)
    assert CANARY not in all_messages(corpus)


def test_undecodable_table_file_is_refused(tmp_path):
    path = tmp_path / "t.csv"
    path.write_bytes("id,text\n1,caf\xe9\n".encode("cp1252"))
    with pytest.raises(CorpusError, match="not UTF-8") as info:
        load_corpus(path)
    assert "UTF-8" in info.value.fix


def test_missing_column_is_named_with_the_columns_of_a_header_row(tmp_path):
    # A first row that reads as a header row is named (issue 35); one that does not is a private record.
    path = write_csv(tmp_path / "n.csv", ["id", "patient", "note"], [["1", "p", "n"], ["2", "q", "m"]])
    with pytest.raises(CorpusError, match="'text' is not in n.csv, which has 3 columns: id, patient, note"):
        load_corpus(path, text_column="text")
    headerless = write_csv(tmp_path / "h.csv", ["17", "Alma Fenwick", "came in with flu"], [["2", "q", "m"]])
    with pytest.raises(CorpusError, match="which has no header row, so its 3 columns are named by position") as info:
        load_corpus(headerless, text_column="text")  # issue 56: a first row that is plainly a record is data
    assert "Alma" not in info.value.user_message() and "column 1, column 2, column 3" in info.value.user_message()
    unusual = write_csv(tmp_path / "u.csv", ["Visit Notes", "MRN"], [["came in with flu", "17"], ["a rash", "18"]])
    with pytest.raises(CorpusError, match="which has 2 columns") as info:  # a header of unusual names: not repeated
        load_corpus(unusual, text_column="text")
    assert "Visit Notes" not in info.value.user_message() and "not repeated" in info.value.user_message()
    with pytest.raises(CorpusError, match="person column 'who'"):
        load_corpus(path, text_column="note", person_column="who")


def test_ambiguous_text_column_asks(tmp_path):
    path = write_csv(tmp_path / "n.csv", ["a", "b"], [["1", "2"], ["3", "4"]])
    with pytest.raises(CorpusError, match="Which column"):
        load_corpus(path)


def test_duplicate_ids_name_rows_not_values(tmp_path):
    rows = [[f"{CANARY}-1", "a"], ["x", "b"], [f"{CANARY}-1", "c"]]
    path = write_csv(tmp_path / "n.csv", ["id", "text"], rows)
    with pytest.raises(CorpusError, match="row 4 repeats the id of row 2") as info:
        load_corpus(path, id_column="id")
    assert CANARY not in str(info.value)


def test_empty_documents_are_skipped_and_counted(tmp_path):
    make_folder(tmp_path, {"a.txt": "one", "b.txt": "  \n\t", "c.txt": "three", "d.md": ""})
    corpus = load_corpus(tmp_path)
    assert corpus.report.n_empty_skipped == 2
    assert corpus.report.n_files_read == 4 and corpus.report.n_documents == 2
    assert "2 empty document(s) skipped: b.txt, d.md." in corpus.report.warnings


def test_single_unit_is_refused(tmp_path):
    make_folder(tmp_path, {"a.txt": "only", "b.txt": ""})
    with pytest.raises(CorpusError, match="Only one privacy unit"):
        load_corpus(tmp_path)


def test_single_person_is_refused(tmp_path):
    path = write_csv(tmp_path / "p.csv", ["who", "text"], [["ann", "a"], ["ann", "b"]])
    with pytest.raises(CorpusError, match="Only one privacy unit"):
        load_corpus(path, person_column="who")


def test_all_documents_empty(tmp_path):
    path = write_csv(tmp_path / "n.csv", ["id", "text"], [["1", ""], ["2", " "]])
    with pytest.raises(CorpusError, match="No document with text"):
        load_corpus(path, id_column="id")


def test_overlong_documents_are_bounded_and_counted(tmp_path):
    make_folder(tmp_path, {"a.txt": "x" * 50, "b.txt": "y" * 10, "c.txt": "z" * 21})
    corpus = load_corpus(tmp_path, max_unit_chars=20)
    assert [len(t) for t in corpus.texts] == [20, 10, 20]
    assert corpus.report.n_truncated == 2
    assert "2 document(s) cut to 20 characters: a.txt, c.txt." in corpus.report.warnings


def test_table_file_over_size_limit(tmp_path):
    path = write_csv(tmp_path / "n.csv", ["text"], [["a" * 100], ["b"]])
    with pytest.raises(CorpusError, match="over the 50-byte limit"):
        load_corpus(path, max_file_bytes=50)


def test_folder_file_over_size_limit_is_skipped(tmp_path):
    make_folder(tmp_path, {"a.txt": "one", "b.txt": "two", "big.txt": "x" * 100})
    corpus = load_corpus(tmp_path, max_file_bytes=50)
    assert corpus.report.n_too_large == 1 and corpus.report.n_units == 2
    assert "big.txt" in all_messages(corpus)


def test_unsupported_extension(tmp_path):
    path = tmp_path / "data.xlsx"
    path.write_bytes(b"PK")
    with pytest.raises(CorpusError, match="unsupported file type"):
        load_corpus(path)


def test_single_text_file_points_to_folder(tmp_path):
    path = tmp_path / "one.txt"
    path.write_text("hello", encoding="utf-8")
    with pytest.raises(CorpusError, match="single document") as info:
        load_corpus(path)
    assert "folder" in info.value.fix


def test_columns_on_a_folder_are_refused(tmp_path):
    make_folder(tmp_path, {"a.txt": "a", "b.txt": "b"})
    with pytest.raises(CorpusError, match="is a folder"):
        load_corpus(tmp_path, person_column="who")


def test_malformed_csv_names_the_row(tmp_path):
    path = tmp_path / "n.csv"
    path.write_text('id,text\n1,"fine"\n2,"never closed\n3,more\n', encoding="utf-8")
    with pytest.raises(CorpusError, match="not a well-formed CSV file \\(row 3"):
        load_corpus(path, id_column="id")


def test_bad_jsonl_lines_are_skipped_and_counted(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text(f'{{"text": "a"}}\n{{"text": "{CANARY}"\n[1, 2]\n{{"text": "b"}}\n', encoding="utf-8")
    corpus = load_corpus(path)
    assert corpus.texts == ["a", "b"] and corpus.report.n_rows_skipped == 2
    assert "d.jsonl line 2: not valid JSON, skipped." in corpus.report.warnings
    assert CANARY not in all_messages(corpus)


def test_rows_without_person_are_skipped(tmp_path):
    path = write_csv(tmp_path / "p.csv", ["who", "text"], [["a", "x"], ["", "y"], ["b", "z"]])
    corpus = load_corpus(path, person_column="who")
    assert corpus.report.n_rows_skipped == 1 and [u.uid for u in corpus.units] == ["a", "b"]


def test_text_column_equal_to_person_column_is_refused(tmp_path):
    path = write_csv(tmp_path / "p.csv", ["who", "text"], [["a", "x"], ["b", "y"]])
    with pytest.raises(CorpusError, match="both as the text column"):
        load_corpus(path, text_column="who", person_column="who")


def test_bad_limit_is_refused(tmp_path):
    make_folder(tmp_path, {"a.txt": "a", "b.txt": "b"})
    with pytest.raises(CorpusError, match="at least 1 character"):
        load_corpus(tmp_path, max_unit_chars=0)


# --- privet inspect -----------------------------------------------------------------------------


@pytest.fixture
def canary_csv(tmp_path) -> Path:
    rows = [
        [f"id-{CANARY}-{i}", f"patient-{CANARY}-{i % 3}", f"{CANARY} note {i} " + "w" * (30 * i)]
        for i in range(12)
    ]
    rows.append(["id-empty", "patient-x", ""])
    return write_csv(tmp_path / "notes.csv", ["id", "patient", "note"], rows)


def test_inspect_prints_counts_and_no_text(canary_csv, capsys):
    args = ["--text-column", "note", "--id-column", "id", "--person-column", "patient"]
    code = main(["inspect", str(canary_csv), *args, "--max-unit-chars", "300"])
    out, err = capsys.readouterr()
    assert code == 0
    assert CANARY not in out and CANARY not in err
    assert "Privacy unit: person" in out
    assert "Units:        3 (from 12 documents in 1 file(s))" in out
    assert "Skipped:      1 empty" in out
    assert "Truncated:    3 unit(s) cut to 300 characters" in out
    assert out.count(" | ") >= 1 and "#" in out  # the ASCII histogram


def test_inspect_json(canary_csv, capsys):
    assert main(["inspect", str(canary_csv), "--text-column", "note", "--json"]) == 0
    out, err = capsys.readouterr()
    assert CANARY not in out and CANARY not in err
    data = json.loads(out)
    assert data["unit_kind"] == "document" and data["report"]["n_units"] == 12
    assert data["report"]["n_empty_skipped"] == 1 and len(data["fingerprint"]) == 64
    assert sum(data["report"]["lengths"]["bin_counts"]) == 12


def test_inspect_error_is_a_message_not_a_traceback(canary_csv, capsys):
    assert main(["inspect", str(canary_csv), "--text-column", "body"]) == 1
    out, err = capsys.readouterr()
    assert "'body' is not in notes.csv" in err and "Traceback" not in err
    assert "--columns" in err  # how to see the header row on purpose
    assert CANARY not in out + err
