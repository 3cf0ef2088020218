"""Issue 31, item 2: one dataset identity by content (core/ledger/booking.py, core/corpus/content_scan.py).

The audit's eight re-keyings that escaped a cap of ε = 12 after an ε = 10 run, each booked through
``book_dataset`` under the demo corpus's budget and refused by its cap; the notes.jsonl-before-notes.csv
order through ``privet`` with the tiny models; two different files named notes.csv as two datasets; and
the false positive: two different clinic corpora from the demo's generator are not matched, which is what
the threshold ``SAME_CONTENT_SHARE`` is chosen by. Old ledgers' v1 sketches still match the v1 way.
"""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

import pytest
from tests.helpers import tiny_spec, write_notes

from core.cli import main as privet
from core.corpus import Corpus, LoadReport, Unit
from core.corpus.containment import containment
from core.corpus.content_scan import scan_content
from core.corpus.content_sketch import EVIDENCE_BAR, HOLDS_A_RARE_WORD, BottomK, ShingleSketch
from core.corpus.identity_form import identity_text
from core.demo.clinic import make_clinic_corpus
from core.demo.draws import DEMO_SEED
from core.common.errors import BudgetError, PrivetError
from core.ledger import Ledger
from core.ledger.booking import SAME_CONTENT_SHARE, Booking, book_dataset, record_booking, same_dataset
from core.common.paths import resources_dir
from core.run.pipeline import load_spec_corpus
from core.privacy.conversion import eps_to_rho
from core.specs.runspec import RunSpec

DEMO_NOTES = resources_dir() / "demo" / "clinic" / "notes.csv"
DELTA = 1e-6
RHO_10 = eps_to_rho(10.0, DELTA, "tight")  # one ε = 10 run


# --- corpora ----------------------------------------------------------------------------------------------


def _read(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _write_csv(path: Path, rows: list[dict[str, str]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=["id", "patient", "note"])
        writer.writeheader()
        writer.writerows(rows)
    return path


def _write_jsonl(path: Path, rows: list[dict[str, str]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _clinic(n: int, seed: int) -> list[dict[str, str]]:
    return make_clinic_corpus(n, seed=seed).notes


def _retexted(rows: list[dict[str, str]], texts: list[str]) -> list[dict[str, str]]:
    """New rows with these note texts (ids and patients numbered afresh, as a re-keyed export would)."""
    return [{"id": f"r{i}", "patient": f"P{i}", "note": t} for i, t in enumerate(texts)]


def _halves(text: str) -> tuple[str, str]:
    words = text.split()
    return " ".join(words[: len(words) // 2]), " ".join(words[len(words) // 2:])


def _rekeyed(kind: str, rows: list[dict[str, str]]) -> list[dict[str, str]]:
    """The audit's re-keyings of a corpus that escaped the cap before issue 31."""
    notes = [r["note"] for r in rows]
    if kind == "upper":
        return _retexted(rows, [t.upper() for t in notes])
    if kind == "lower":
        return _retexted(rows, [t.lower() for t in notes])
    if kind == "space_dot":
        return _retexted(rows, [t + " ." for t in notes])
    if kind == "note_prefix":
        return _retexted(rows, ["Note: " + t for t in notes])
    if kind == "zero_width":
        return _retexted(rows, [t[:12] + "\u200b" + t[12:] for t in notes])
    if kind == "dilution_45":  # 45 % of the real rows among filler rows of the same kind
        real = random.Random(31).sample(rows, round(0.45 * len(rows)))
        filler = _clinic(len(rows) - len(real), seed=4242)
        return _retexted(rows, [r["note"] for r in real + filler])
    if kind == "split":
        return _retexted(rows, [half for t in notes for half in _halves(t)])
    if kind == "merge":
        return _retexted(rows, [notes[i] + " " + notes[i + 1] for i in range(0, len(notes) - 1, 2)])
    raise ValueError(kind)


REKEYINGS = ("upper", "lower", "space_dot", "note_prefix", "zero_width", "dilution_45", "split", "merge")


def _spec(tmp_path: Path, path: Path, name: str = "") -> RunSpec:
    spec = tiny_spec(tmp_path, corpus=path, release=None)
    spec.data.dataset_name = name
    return spec


def _book(ledger: Ledger, spec: RunSpec) -> Booking:
    return book_dataset(ledger, spec.data, load_spec_corpus(spec))


def _run_recorded(ledger: Ledger, spec: RunSpec, run_id: str, rho: float = RHO_10) -> Booking:
    """What a run does to the ledger: book, reserve, register the view, charge (core.run.pipeline)."""
    booking = _book(ledger, spec)
    ledger.reserve(booking.key, run_id, rho)
    record_booking(ledger, booking)
    ledger.charge(booking.key, run_id, "histogram", rho, DELTA, "a run")
    ledger.release_reservation(run_id)
    return booking


def _corpus(texts: list[str]) -> Corpus:
    units = [Unit(uid=str(i), text=t) for i, t in enumerate(texts)]
    return Corpus(units=units, report=LoadReport(), unit_kind="document", source="test", document_texts=texts)


def _share(known: list[str], new: list[str]) -> float:
    """The share that decides (``same_dataset``), scaled to the word shingles' bar (0 when not the same)."""
    key = bytes(range(32))
    sketch = scan_content(_corpus(known), key=key).sketch
    scan = scan_content(_corpus(new), sketch.probe(), known=[sketch.documents], key=key)
    found = containment(sketch, scan, scan.document_matches[0])
    return found.share / EVIDENCE_BAR[found.evidence] if same_dataset(found) else min(found.share, 0.0)


# --- identity form and the sketch ------------------------------------------------------------------------


def test_identity_form_folds_case_width_format_characters_and_punctuation():
    assert identity_text("Ｎｏｔｅ：  Patient\u200b SEEN,\ttoday!! .") == "note patlent seen today"  # i is l
    assert identity_text("STRASSE") == identity_text("straße") == "strasse"
    assert identity_text("soft\u00adhyphen and zero\u2060width\ufeff") == "softhyphen and zerowldth"
    assert identity_text("caf\u0065\u0301") == identity_text("café") == identity_text("cafe")
    assert identity_text("a 35-year-old (F)") == "a 35 year old f"
    assert identity_text("x\u034fy\ufe0f") == "xy"  # default-ignorable marks render as nothing too


def test_bottom_k_keeps_exact_document_counts_within_bounded_memory():
    rng = random.Random(7)
    docs = [{rng.randrange(5000): "" for _ in range(rng.randrange(1, 40))} for _ in range(3000)]
    sample = BottomK(64)
    for doc in docs:
        sample.add_document(doc)
    every = sorted({v for doc in docs for v in doc})
    assert sample.smallest() == every[:64] and len(sample.counts) == 64
    for value in sample.smallest():
        assert sample.counts[value] == sum(value in doc for doc in docs)


def test_the_sketch_is_keyed_bounded_and_round_trips():
    texts = [r["note"] for r in _read(DEMO_NOTES)]
    one = scan_content(_corpus(texts), key=bytes(32)).shingles
    other = scan_content(_corpus(texts), key=bytes(range(32))).shingles
    assert len(one.hashes) == one.size and not set(one.hashes) & set(other.hashes)
    assert ShingleSketch.from_json(one.to_json()) == one
    assert HOLDS_A_RARE_WORD in one.strength and 200 < len(one.evidence()) < len(one.hashes)


# --- the re-keyings are booked under the capped dataset, and its cap refuses them ------------------------


@pytest.fixture
def capped_demo(tmp_path):
    """The demo corpus after one ε = 10 run, with a cap of ε = 12 (the audit's setting)."""
    ledger = Ledger()
    original = _run_recorded(ledger, _spec(tmp_path, DEMO_NOTES), "run-eps10")
    ledger.set_cap(original.key, 12.0, DELTA)
    yield ledger, original
    ledger.close()


@pytest.mark.parametrize("kind", REKEYINGS)
def test_every_rekeying_of_the_audit_counts_against_the_capped_budget(tmp_path, capped_demo, kind):
    ledger, original = capped_demo
    path = _write_csv(tmp_path / "other" / f"rekeyed_{kind}.csv", _rekeyed(kind, _read(DEMO_NOTES)))
    booked = _book(ledger, _spec(tmp_path, path))
    assert (booked.key, booked.how, booked.name) == (original.key, "content", "notes.csv")
    assert booked.overlap >= SAME_CONTENT_SHARE + 0.15  # clear of the threshold, not just over it
    assert any("budgeted as the known dataset 'notes.csv'" in w for w in booked.warnings)
    with pytest.raises(BudgetError, match="Nothing was charged"):  # a second ε = 10 run: over the cap of 12
        ledger.reserve(booked.key, f"run-{kind}", RHO_10)
    with pytest.raises(PrivetError, match="already budgeted under the dataset name 'notes.csv'"):
        _book(ledger, _spec(tmp_path, path, name="A fresh budget"))  # nor under a new chosen name


# --- the false positive: different corpora of one kind are different datasets ----------------------------


@pytest.mark.parametrize("other", ["patients_200", "seed_7", "seed_7_patients_1000"])
def test_different_clinic_corpora_from_the_same_generator_are_not_matched(tmp_path, other):
    """The threshold's other side. ``privet demo-data --patients 200`` (the audit's "different 200-note file")
    shares the demo's invented diseases, drugs and every template; another seed shares the templates."""
    n, seed = {"patients_200": (200, DEMO_SEED), "seed_7": (600, 7), "seed_7_patients_1000": (1000, 7)}[other]
    demo, different = [r["note"] for r in _read(DEMO_NOTES)], [r["note"] for r in _clinic(n, seed)]
    assert _share(demo, different) < SAME_CONTENT_SHARE / 2
    assert _share(different, demo) < SAME_CONTENT_SHARE / 2  # with either one known first
    assert all(_share(demo, [r["note"] for r in _rekeyed(k, _read(DEMO_NOTES))]) >= SAME_CONTENT_SHARE + 0.15
               for k in ("dilution_45", "split"))  # the hardest two re-keyings, for comparison


def test_a_different_file_named_notes_csv_is_another_dataset(tmp_path, capsys):
    ledger = Ledger()
    demo = _run_recorded(ledger, _spec(tmp_path, DEMO_NOTES), "run-demo")
    assert privet(["demo-data", str(tmp_path / "mine"), "--patients", "200"]) == 0  # as a new user would
    capsys.readouterr()
    spec = _spec(tmp_path, tmp_path / "mine" / "notes.csv")
    booked = _book(ledger, spec)
    assert booked.key != demo.key and (booked.how, booked.name) == ("separate", "notes.csv (2)")
    assert any("Another file named 'notes.csv' is already budgeted" in w and "'notes.csv (2)'" in w
               for w in booked.warnings)
    _run_recorded(ledger, spec, "run-mine", rho=0.5)
    assert ledger.spent_rho(demo.key) == pytest.approx(RHO_10)  # the demo's budget shows the demo's spend only
    assert ledger.spent_rho(booked.key) == pytest.approx(0.5)
    assert _book(ledger, spec).key == booked.key  # and it keeps its own identity from now on
    ledger.close()
    assert privet(["ledger"]) == 0
    listing = capsys.readouterr().out
    assert "(notes.csv)" in listing and "(notes.csv (2))" in listing


def test_a_chosen_name_groups_other_documents_and_a_cap_binds_its_name(tmp_path):
    ledger = Ledger()
    demo = _run_recorded(ledger, _spec(tmp_path, DEMO_NOTES), "run-demo")
    other = _write_csv(tmp_path / "b" / "notes.csv", _clinic(200, 7))
    chosen = _book(ledger, _spec(tmp_path, other, name="notes.csv"))
    assert chosen.key == demo.key and any("holds other documents" in w for w in chosen.warnings)
    ledger.set_cap(demo.key, 12.0, DELTA)  # once capped, the default name binds to the cap too
    capped = _book(ledger, _spec(tmp_path, other))
    assert capped.key == demo.key and any("a cap binds its name" in w for w in capped.warnings)


def test_a_load_holding_two_budgeted_datasets_is_refused(tmp_path):
    """Merged with a second, uncapped dataset, the capped data would be charged to the other budget only."""
    ledger = Ledger()
    demo = _run_recorded(ledger, _spec(tmp_path, DEMO_NOTES), "run-demo")
    ledger.set_cap(demo.key, 12.0, DELTA)
    other_rows = _clinic(900, 7)
    other = _run_recorded(ledger, _spec(tmp_path, _write_csv(tmp_path / "o" / "clinic_b.csv", other_rows)), "run-b")
    assert other.how == "new"
    both = _write_csv(tmp_path / "m" / "merged.csv", _retexted(other_rows, [r["note"] for r in
                                                                             _read(DEMO_NOTES) + other_rows]))
    with pytest.raises(PrivetError, match="more than one budgeted dataset .*'notes.csv'.*'clinic_b.csv'|"
                                          "more than one budgeted dataset .*'clinic_b.csv'.*'notes.csv'"):
        _book(ledger, _spec(tmp_path, both))


# --- a capped name is bound to its content ----------------------------------------------------------------


def _cli_spec(tmp_path: Path, data: Path, label: str) -> Path:
    spec = tiny_spec(tmp_path, corpus=data, release=None)
    spec.privacy.epsilon = 10.0
    spec.privacy.spend_anyway = True
    path = tmp_path / f"{label}.toml"
    spec.save(path)
    return path


def _charged(ledger: Ledger) -> dict[str, float]:
    out: dict[str, float] = {}
    for row in ledger.entries():
        if row["kind"] == "charge":
            key = ledger.dataset_key(row["dataset_fp"])
            out[key] = out.get(key, 0.0) + float(row["rho"])
    return out


def test_cap_then_notes_jsonl_first_then_notes_csv_all_count_against_the_one_cap(tmp_path, capsys):
    """The audit's order: cap notes.csv (no data yet), run the same notes as notes.jsonl, then run notes.csv."""
    csv_path = write_notes(tmp_path)
    jsonl = _write_jsonl(tmp_path / "notes.jsonl", _read(csv_path))
    assert privet(["ledger", "notes.csv", "--set-cap", "12", "--delta", "1e-5", "--new-dataset"]) == 0
    assert privet(["run", str(_cli_spec(tmp_path, jsonl, "jsonl")), "--quiet"]) == 0  # ε = 10 of the 12
    err = capsys.readouterr().err
    assert "budgeted as 'notes.csv', whose cap was set before its first run" in err
    with Ledger() as ledger:
        capped = ledger.resolve_dataset("notes.csv")
        assert list(_charged(ledger)) == [capped]  # no uncapped twin named notes.jsonl
        assert ledger.identity_of_name("notes.jsonl") is None
        before = len(ledger.entries())
    assert privet(["run", str(_cli_spec(tmp_path, csv_path, "csv")), "--quiet"]) == 1  # another ε = 10: over 12
    assert "cap" in capsys.readouterr().err
    assert privet(["run", str(_cli_spec(tmp_path, jsonl, "jsonl")), "--quiet"]) == 1  # and again as notes.jsonl
    with Ledger() as ledger:
        assert len(ledger.entries()) == before  # both refused before any charge
        spec = RunSpec.load(tmp_path / "csv.toml")
        booked = _book(ledger, spec)
        assert booked.key == capped and booked.how in ("view", "content")  # the same units: the same view


def test_content_already_budgeted_elsewhere_under_a_capped_default_name_is_refused(tmp_path):
    """Cap notes.csv, run the same notes as export.jsonl (another stem: a dataset of its own), then notes.csv:
    the run under the capped name would neither count the earlier spend nor be free of the cap, so it asks."""
    ledger = Ledger()
    csv_path = write_notes(tmp_path)
    ledger.set_cap(ledger_new_dataset(ledger, "notes.csv"), 12.0, 1e-3)
    export = _run_recorded(ledger, _spec(tmp_path, _write_jsonl(tmp_path / "export.jsonl", _read(csv_path))), "r1")
    assert (export.how, export.name) == ("new", "export.jsonl")
    with pytest.raises(PrivetError, match="a cap was set on 'notes.csv' before its first run") as info:
        _book(ledger, _spec(tmp_path, csv_path))
    assert "export.jsonl" in info.value.what
    assert _book(ledger, _spec(tmp_path, csv_path, name="export.jsonl")).key == export.key  # the custodian chose


def test_two_capped_names_with_one_stem_are_not_guessed(tmp_path):
    ledger = Ledger()
    for name in ("notes.csv", "notes.tsv"):
        ledger.set_cap(ledger_new_dataset(ledger, name), 12.0, 1e-3)
    jsonl = _write_jsonl(tmp_path / "notes.jsonl", _read(write_notes(tmp_path)))
    with pytest.raises(PrivetError, match="could be any of them"):
        _book(ledger, _spec(tmp_path, jsonl))
    assert _book(ledger, _spec(tmp_path, jsonl, name="notes.tsv")).how == "cap"


def ledger_new_dataset(ledger: Ledger, name: str) -> str:
    """What ``privet ledger NAME --set-cap … --new-dataset`` registers (core.run.export_cli)."""
    from core.corpus import dataset_identity

    identity = dataset_identity(name, name)
    ledger.name_dataset(identity.key, identity.name)
    return identity.key


# --- old ledgers -------------------------------------------------------------------------------------------


def test_a_view_sketched_by_an_older_version_is_compared_by_whole_documents(tmp_path):
    ledger = Ledger()
    rows = _read(DEMO_NOTES)
    old = _book(ledger, _spec(tmp_path, DEMO_NOTES))
    ledger.register_view(old.key, old.name, old.fingerprint, old.source, sketch=old.sketch)  # v1 only, as before
    ledger.charge(old.key, "old-run", "histogram", RHO_10, DELTA, "a run of an older version")
    assert ledger.shingle_sketches() == [] and len(ledger.document_sketches()) == 1
    real = random.Random(3).sample(rows, 300)  # half the rows among filler: the v1 way, with lookups, catches it
    diluted = _write_csv(tmp_path / "x" / "diluted.csv", _retexted(rows, [r["note"] for r in real + _clinic(300, 99)]))
    booked = _book(ledger, _spec(tmp_path, diluted))
    assert (booked.key, booked.how) == (old.key, "content") and booked.overlap >= 0.4
    record_booking(ledger, booked)  # the new view brings a v2 sketch; the old view keeps its v1 one
    assert len(ledger.shingle_sketches()) == 1 and len(ledger.document_sketches()) == 1
    ledger.db.execute("INSERT INTO content_sketches VALUES ('f' || hex(randomblob(8)), ?, 4, '{}', '')", [old.key])
    assert len(ledger.shingle_sketches()) == 1  # a version this code does not read is left alone
