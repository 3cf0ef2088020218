"""[data] label_column (docs/method.md §6.3): the spec's rules, the loader's one label per unit, the refusal of
a column that is not a category (before anything is charged), labels in the export, and the canary test with
a label column."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from tests.helpers import CANARY, DISEASES, tiny_spec

from core.corpus import load_corpus
from core.corpus.labels import MAX_LABEL_CHARS, check_label_values, unit_label
from core.common.errors import CorpusError, PrivetError
from core.ledger import Ledger
from core.run.pipeline import run_pipeline
from core.specs.runspec import RunSpec
from core.specs.rules import MAX_LABELS

DEPARTMENTS = ("cardiology", "dermatology", "neurology")


def write_labelled(folder: Path, n: int = 60, label=lambda i: DEPARTMENTS[i % 3], person=lambda i: f"P{i}",
                   name=lambda i: f"Patient {i}") -> Path:
    """``n`` rows ``id, patient, note, department``."""
    path = Path(folder) / "labelled.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["id", "patient", "note", "department"])
        for i in range(n):
            writer.writerow([f"n{i}", person(i), f"{name(i)} came in with {DISEASES[i % 4]} and rested.", label(i)])
    return path


def all_bytes_under(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())


# --- the run spec ------------------------------------------------------------------------------------------


def _spec(**data) -> RunSpec:
    spec = RunSpec()
    spec.data.path = "x.csv"
    spec.data.text_column = "note"
    for key, value in data.items():
        setattr(spec.data, key, value)
    return spec


def test_spec_accepts_a_label_column_and_refuses_what_cannot_work():
    assert _spec(label_column="department").problems() == []
    assert _spec(label_column="department", labels=list(DEPARTMENTS)).problems() == []
    assert any("no label_column" in p for p in _spec(labels=["a"]).problems())
    assert any("more than once" in p for p in _spec(label_column="d", labels=["a", "a"]).problems())
    assert any("is empty" in p for p in _spec(label_column="d", labels=["a", " "]).problems())
    assert any("non-printable" in p for p in _spec(label_column="d", labels=["a\x00b"]).problems())
    assert any(f"at most {MAX_LABELS}" in p for p in
               _spec(label_column="d", labels=[f"l{i}" for i in range(MAX_LABELS + 1)]).problems())
    assert any("also the text" in p for p in _spec(label_column="note").problems())
    for method in ("dp_synth", "aug_pe", "rpsg"):  # every method synthesises per class
        spec = _spec(label_column="department")
        spec.method = method
        assert spec.problems() == []


def test_spec_round_trips_through_toml(tmp_path):
    spec = _spec(label_column="department", labels=list(DEPARTMENTS))
    path = tmp_path / "spec.toml"
    spec.save(path)
    loaded = RunSpec.load(path)
    assert loaded.data.label_column == "department" and loaded.data.labels == list(DEPARTMENTS)


# --- one label per unit --------------------------------------------------------------------------------


def test_a_unit_keeps_its_most_frequent_label_ties_by_label_order():
    assert unit_label(["b", "a", "b"]) == "b"
    assert unit_label(["b", "a"]) == "a"  # tie: alphabetical when not typed
    assert unit_label(["b", "a"], typed=("b", "a")) == "b"  # tie: the typed list's order
    assert unit_label(["x", "x", "a"], typed=("a", "b")) == "a"  # only typed labels count
    assert unit_label(["x"], typed=("a", "b")) == ""  # none typed: no class


def test_loader_gives_each_document_and_each_person_one_label(tmp_path):
    path = write_labelled(tmp_path, 60)
    corpus = load_corpus(path, "note", "id", "", label_column="department")
    assert [u.label for u in corpus.units[:4]] == ["cardiology", "dermatology", "neurology", "cardiology"]
    assert corpus.report.n_label_values == 3 and corpus.report.n_multi_label_units == 0
    # persons of three documents each, of labels c, d, d (and the next: n, c, c ...): the most frequent wins
    by_person = load_corpus(path, "note", "id", "patient", label_column="department")
    assert len(by_person.units) == 60  # one person per row here
    grouped = write_labelled(tmp_path, 60, person=lambda i: f"P{i // 3}",
                             label=lambda i: DEPARTMENTS[0] if i % 3 == 0 else DEPARTMENTS[1 + (i // 3) % 2])
    people = load_corpus(grouped, "note", "id", "patient", label_column="department")
    assert len(people.units) == 20
    assert [u.label for u in people.units[:2]] == ["dermatology", "neurology"]
    assert people.report.n_multi_label_units == 20
    assert any("several labels" in w for w in people.report.warnings)


def test_typed_labels_leave_out_units_without_one(tmp_path):
    path = write_labelled(tmp_path, 60)
    corpus = load_corpus(path, "note", "id", "", label_column="department", labels=("cardiology", "neurology"))
    assert {u.label for u in corpus.units} == {"cardiology", "neurology", ""}
    assert corpus.report.n_unlabelled_units == 20
    assert len(corpus.units) == 60  # still loaded (the dataset is the same); left out of the synthesis only


def test_rows_without_a_label_are_skipped_and_counted(tmp_path):
    path = write_labelled(tmp_path, 60, label=lambda i: "" if i == 5 else DEPARTMENTS[i % 3])
    corpus = load_corpus(path, "note", "id", "", label_column="department")
    assert len(corpus.units) == 59 and corpus.report.n_rows_skipped == 1
    assert any("without a label" in w for w in corpus.report.warnings)


# --- a column that is not a category is refused, in plain words, before anything is charged -------------


def test_free_text_high_cardinality_and_id_like_columns_are_refused_without_echoing_values(tmp_path):
    secret = "Zqx private remark about the patient that is long enough to read as free text"
    assert len(secret) > MAX_LABEL_CHARS
    free = write_labelled(tmp_path, 60, label=lambda i: f"{secret} {i}")
    with pytest.raises(CorpusError) as caught:
        load_corpus(free, "note", "id", "", label_column="department")
    message = caught.value.user_message()
    assert "looks like free text, not a category" in message and "Choose a column" in message
    assert "Zqx" not in message
    many = [f"code {i}" for i in range(MAX_LABELS + 1)] * 2
    with pytest.raises(CorpusError, match=f"{MAX_LABELS + 1} different values"):
        check_label_values(many, "code", "f.csv")
    with pytest.raises(CorpusError, match="reads as an id or free text"):
        check_label_values([f"v{i}" for i in range(30)] + ["v0"] * 10, "code", "f.csv")
    check_label_values(list(DEPARTMENTS) * 20, "department", "f.csv")  # a category: accepted


def test_a_free_text_label_column_is_refused_before_anything_is_charged(tmp_path):
    path = write_labelled(tmp_path, 60, label=lambda i: f"a remark of many words about this patient number {i}")
    spec = tiny_spec(tmp_path, path)
    spec.data.label_column = "department"
    with pytest.raises(PrivetError, match="free text"):
        run_pipeline(spec)
    with Ledger() as ledger:
        assert [e for e in ledger.entries() if e["kind"] == "charge"] == []


def test_a_folder_corpus_refuses_a_label_column(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    for i in range(3):
        (folder / f"{i}.txt").write_text(f"document {i}")
    with pytest.raises(CorpusError, match="columns only apply"):
        load_corpus(folder, label_column="department")


# --- labels in the export; the canary test with a label column -----------------------------------------


@pytest.mark.parametrize("mode", ["auto", "per_class"])  # auto: DP-SynRAG labels by topic (the default)
def test_labels_are_exported_and_nothing_private_leaves(tmp_path, privet_home, mode):
    """A canary in the text of one row and, as a label of one row alone, in the label column: with labels not
    typed the label set is a DP set union, so a label of one unit is not released; neither canary leaves
    (labels by topic too: the topic label counts' checkpoint, the certificate and the export hold none)."""
    label_canary = "Zqx-Label-Canary-4412"
    path = write_labelled(tmp_path, 90, name=lambda i: CANARY if i == 7 else f"Patient {i}",
                          label=lambda i: label_canary if i == 11 else DEPARTMENTS[i % 3])
    spec = tiny_spec(tmp_path, path)
    spec.data.label_column = "department"
    spec.data.label_mode = mode
    events = []
    from core.common.progress import CallbackReporter

    result = run_pipeline(spec, CallbackReporter(events.append))
    export = result.export_dir
    assert export is not None
    rows = list(csv.DictReader(open(export / "synthetic.csv", encoding="utf-8")))
    lines = [json.loads(line) for line in open(export / "synthetic.jsonl", encoding="utf-8")]
    assert rows and len(rows) == len(lines)
    assert all(set(r) == {"id", "text", "label"} for r in rows)
    assert all(set(line) == {"id", "text", "label"} for line in lines)
    released = {line["label"] for line in lines}
    assert released <= set(DEPARTMENTS)  # the one-unit label is never released
    certificate = json.loads((export / "certificate.json").read_text(encoding="utf-8"))
    assert "class_counts" in json.dumps(certificate)
    assert ("topic_labels" in json.dumps(certificate)) == (mode == "auto")
    for secret in (CANARY, label_canary):
        assert secret.encode() not in all_bytes_under(export)
        assert secret.encode() not in all_bytes_under(privet_home)
        assert all(secret not in (e.message or "") for e in events)


def test_typed_labels_are_exported_in_their_order(tmp_path):
    path = write_labelled(tmp_path, 60)
    spec = tiny_spec(tmp_path, path, release=None)
    spec.data.label_column = "department"
    spec.data.labels = list(DEPARTMENTS)
    spec.data.label_mode = "per_class"  # one run per class, in the typed order (labels by topic: by topic)
    result = run_pipeline(spec)
    lines = [json.loads(line) for line in open(result.run_dir / "synthetic.jsonl", encoding="utf-8")]
    labels = [line["label"] for line in lines]
    assert set(labels) <= set(DEPARTMENTS) and labels == sorted(labels, key=DEPARTMENTS.index)
    assert len({line["id"] for line in lines}) == len(lines)  # ids stay unique across classes


# --- the wizard: the label column on the Private data page, the class counts on the Review page -----------


def test_the_wizard_takes_a_label_column_and_shows_the_class_counts(wizard, qtbot, tmp_path):
    page = wizard.data_page
    (tmp_path / "free").mkdir()
    free = write_labelled(tmp_path / "free", 60, label=lambda i: f"a remark of many words about this patient number {i}")
    page.path.setText(str(free))
    page.set_columns("note", "id", "patient", label="department")
    assert not page.load()
    assert "free text" in page.blocking_message()  # refused in plain words, before anything is charged

    path = write_labelled(tmp_path, 60)
    page.path.setText(str(path))
    page.set_columns("note", "id", "patient", label="department")
    assert page.load(), page.message.text()
    assert wizard.controller.spec.data.label_column == "department"
    assert "Labels: <b>3</b> different values" in page.summary.text()
    assert page.blocking_message() == ""
    page.label_column.setCurrentIndex(0)  # "(none)": the loaded data no longer match the inputs
    assert "Press Load" in page.blocking_message()

    spec = tiny_spec(tmp_path, path, release=None)
    spec.data.label_column = "department"
    spec.data.labels = list(DEPARTMENTS)
    result = run_pipeline(spec)
    wizard.run_page.result = {"run_dir": str(result.run_dir), "synthetic_path": str(result.synthetic_path)}
    review = wizard.review_page
    review.initializePage()
    text = review.classes.text()
    assert all(f"<b>{label}</b>" in text for label in DEPARTMENTS) and "released with noise" in text
    classes = wizard.controller.class_counts(result.run_dir)
    assert [label for label, _, _ in classes] == list(DEPARTMENTS)
    assert sum(kept for _, _, kept in classes) == result.n_synthetic
    assert all(f"{kept} document" in text for _, _, kept in classes)
