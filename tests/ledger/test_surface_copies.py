"""Issue 57: copies that change only the surface stay under the cap; different corpora stay apart.

Every copy of ``tests/ledger/surface_copies.COPIES`` (the audit's ten escapes, the cases caught since issue 31 and
new ones: PDF-to-text, translated template words, rows cut to half, …) is booked under the capped demo corpus and
the next run is refused by its cap, before any charge, with a message naming the dataset and the share. The
demo's other corpora and other seeds of its generator are still their own datasets. The shares are those of
docs/reliability.md ("Surface copies").
"""

from __future__ import annotations

import csv
import time
from pathlib import Path

import pytest
from tests.helpers import tiny_spec
from tests.ledger.surface_copies import COPIES, DEMO_NOTES, different_corpora, read_notes

from core.corpus import Corpus, LoadReport, Unit
from core.corpus.containment import containment
from core.corpus.content_scan import scan_content
from core.corpus.identity_form import identity_text
from core.common.errors import BudgetError
from core.ledger import Ledger
from core.ledger.booking import Booking, book_dataset, record_booking, same_dataset
from core.run.pipeline import load_spec_corpus
from core.privacy.conversion import eps_to_rho
from core.specs.runspec import RunSpec

DELTA = 1e-6
RHO_10 = eps_to_rho(10.0, DELTA, "tight")
KEY = bytes(range(32))


def _corpus(texts: list[str]) -> Corpus:
    units = [Unit(uid=str(i), text=t) for i, t in enumerate(texts)]
    return Corpus(units=units, report=LoadReport(), unit_kind="document", source="test", document_texts=texts)


def _found(known: list[str], new: list[str]):
    sketch = scan_content(_corpus(known), key=KEY).sketch
    scan = scan_content(_corpus(new), sketch.probe(), known=[sketch.documents], key=KEY)
    return containment(sketch, scan, scan.document_matches[0])


def _write_csv(path: Path, texts: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["id", "patient", "note"])
        writer.writerows([f"r{i}", f"P{i}", t] for i, t in enumerate(texts))
    return path


def _spec(tmp_path: Path, path: Path) -> RunSpec:
    spec = tiny_spec(tmp_path, corpus=path, release=None)
    spec.data.dataset_name = ""
    return spec


def _book(ledger: Ledger, spec: RunSpec) -> Booking:
    return book_dataset(ledger, spec.data, load_spec_corpus(spec))


# --- identity form -----------------------------------------------------------------------------------------


def test_identity_form_folds_look_alikes_markup_digits_for_letters_and_hyphenation():
    plain = identity_text("Seen today: Austin Weaver, 89. I prescribed tregedcillin.")
    assert identity_text("Sееn tоdаy: Аustin Wеаvеr, 89. І рrеscribеd trеgеdcillin.") == plain  # Cyrillic
    assert identity_text("Sεεn tοdαy: Austin Wεαvεr, 89. I ρrεscribεd trεgεdcillin.") == plain  # Greek
    assert identity_text("<p>Seen&nbsp;today: Austin&nbsp;Weaver,&nbsp;89. I pr&#101;scribed tregedcillin.</p>") == plain
    assert identity_text("S33n t0day: Aust1n W3av3r, 89. I pr3scrib3d tr3g3dc1ll1n.") == plain
    assert identity_text("Seen today: Austin Weaver, 89. I pre-\nscribed tregedcillin.") == plain  # PDF
    assert identity_text("Séén tödáy: Äustin Weaver, 89. I prescribed tregedcillin.") == plain
    assert "89" in plain.split() and "100" in identity_text("100 mg").split()  # numbers stay numbers
    assert identity_text("BP < 120 & falling") == "bp 120 falllng"  # no tag, no entity: left as text


# --- every surface copy is the demo's dataset; every other corpus is not ----------------------------------


@pytest.fixture(scope="module")
def demo() -> list[str]:
    return read_notes(DEMO_NOTES)


@pytest.mark.parametrize("kind", sorted(COPIES))
def test_every_surface_copy_is_the_same_dataset(demo, kind):
    found = _found(demo, COPIES[kind][1](demo))
    assert same_dataset(found), (kind, found)


@pytest.mark.parametrize("other", ["patients_200", "seed_7", "seed_7_patients_1000", "movielens"])
def test_different_corpora_stay_their_own_datasets(demo, other):
    texts = different_corpora()[other][1]
    for found in (_found(demo, texts), _found(texts, demo)):  # with either one known first
        assert not same_dataset(found) and found.documents_matched < 30, (other, found)


def test_there_are_at_least_thirty_copies_and_the_audit_escapes_are_among_them():
    escapes = {"cyrillic_all", "cyrillic_oe", "shuffled", "reversed", "filler_4", "drop_5", "html", "leet_e",
               "joined_pairs", "dilution_20"}
    assert len(COPIES) >= 30 and escapes <= set(COPIES) and {"pdf", "translated", "truncated_half"} <= set(COPIES)


# --- through the ledger: booked under the capped demo, refused by its cap, naming it ----------------------


@pytest.fixture
def capped_demo(tmp_path):
    ledger = Ledger()
    booking = _book(ledger, _spec(tmp_path, DEMO_NOTES))
    ledger.reserve(booking.key, "run-eps10", RHO_10)
    record_booking(ledger, booking)
    ledger.charge(booking.key, "run-eps10", "histogram", RHO_10, DELTA, "a run")
    ledger.release_reservation("run-eps10")
    ledger.set_cap(booking.key, 12.0, DELTA)
    yield ledger, booking
    ledger.close()


@pytest.mark.parametrize("kind", ["dilution_20", "shuffled", "html", "cyrillic_all", "joined_pairs"])
def test_a_copy_is_refused_by_the_cap_naming_the_dataset_and_the_share(tmp_path, capped_demo, kind, demo):
    ledger, original = capped_demo
    path = _write_csv(tmp_path / "elsewhere" / f"copy_{kind}.csv", COPIES[kind][1](demo))
    booked = _book(ledger, _spec(tmp_path, path))
    assert (booked.key, booked.how) == (original.key, "content")
    before = len(ledger.entries())
    with pytest.raises(BudgetError) as refused:
        ledger.reserve(booked.key, f"run-{kind}", RHO_10)
    message = booked.explained(refused.value).user_message()
    assert "budgeted as the dataset 'notes.csv'" in message and "%" in message and "Nothing was charged" in message
    assert len(ledger.entries()) == before
    if kind == "dilution_20":
        assert "of these documents (" in message and "of 200) are its documents" in message


# --- the cost per document is measured ---------------------------------------------------------------------


def test_the_cost_per_document_stays_small(demo):
    texts = demo * 10  # 6,000 documents
    sketch = scan_content(_corpus(demo), key=KEY).sketch
    start = time.process_time()
    scan_content(_corpus(texts), sketch.probe(), known=[sketch.documents], key=KEY)
    per_document = (time.process_time() - start) / len(texts)
    assert per_document < 1e-3  # measured about 0.2 ms (docs/reliability.md); a loose bound for slow CI machines
