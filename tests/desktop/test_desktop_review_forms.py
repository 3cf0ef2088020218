"""The Review page's two round-5 sections (issue 55 items 3-4): the corpus's own forms a run released under DP (or
that it followed a shipped form), and the fidelity report computed at the end of the run (on this screen only).
Fast: a fake finished run folder, no child process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtWidgets import QPlainTextEdit
from tests.desktop.test_desktop_reading import finished_run
from tests.helpers import tiny_controller
from tests.pipeline.test_run_fidelity import HashEmbedder, _corpus, _real

from core.evaluation.run_fidelity import custodian_fidelity
from core.specs.method_catalogue import ReleasedFormsView, facts
from desktop.wizard import RunWizard
from desktop.wizard.review_page import DOCUMENTS_TAB, PAIRS_TAB, forms_listing, forms_words

SEEN = "Seen today: [name], [number]. Presenting symptoms were [text]. Plan: review in [number] weeks."
DISCHARGE = "Discharge summary. Admitted with [text]; treated and discharged home on day [number]."


@pytest.fixture
def wizard(qtbot):
    wiz = RunWizard(tiny_controller(), gpus=[], grace_ms=3000)
    qtbot.addWidget(wiz, before_close_func=lambda w: w.relay.shutdown())
    yield wiz
    wiz.relay.shutdown()


def _forms(run: Path, items: list[str], counts: list[float], size: float | None = 40.2) -> None:
    """The run's released forms and size count, as the run's checkpoints hold them."""
    folder = run / "checkpoints" / "dp_synrag"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "form_skeletons.json").write_text(json.dumps({"items": items, "counts": counts}), encoding="utf-8")
    if size is not None:
        (folder / "size.json").write_text(json.dumps([size]), encoding="utf-8")


def _review(wizard, run: Path):
    wizard.run_page.result = {"run_dir": str(run), "synthetic_path": str(run / "synthetic.jsonl"), "n_synthetic": 12}
    review = wizard.review_page
    review.initializePage()
    return review


# -- the corpus's own forms -----------------------------------------------------------------------------------------


def test_the_facts_read_the_released_forms_and_decide_as_the_run_did(tmp_path):
    run = finished_run(tmp_path / "runs" / "20261201-forms", 10.0, 12)
    assert facts("dp_synrag").released_forms(run) == [], "no forms looked for"
    _forms(run, [DISCHARGE, SEEN], [14.0, 25.3])
    (view,) = facts("dp_synrag").released_forms(run)
    assert view.forms == ((SEEN, 25.3), (DISCHARGE, 14.0)) and view.followed and view.fallback_form == "Case file"
    _forms(run, [SEEN], [5.0], size=400.0)  # 5 of about 400: too few (structure.MIN_COVERAGE)
    assert not facts("dp_synrag").released_forms(run)[0].followed
    _forms(run, [], [])
    assert facts("dp_synrag").released_forms(run) == [ReleasedFormsView((), False, "Case file")]
    assert facts("rpsg").released_forms(run) == [], "other methods release no forms"


def test_the_review_page_shows_the_forms_written_in(wizard, tmp_path):
    run = finished_run(tmp_path / "runs" / "20261201-own", 10.0, 12)
    _forms(run, [SEEN, DISCHARGE], [25.3, 14.0])
    review = _review(wizard, run)
    words = review.forms.text()
    assert not review.forms_section.isHidden()
    assert words.startswith("Written in the corpus's own forms, released under DP: 2 forms.")
    assert "noisy count 25" in words and "Seen today: [name], [number]." in words
    assert not review.forms_more.isHidden() and review.forms_list.isHidden(), "the list waits to be opened"
    review.forms_more.set_expanded(True)
    listing = review.forms_list.toPlainText()
    assert "(noisy count 25) " + SEEN in listing and "(noisy count 14) " + DISCHARGE in listing


def test_the_review_page_says_when_the_shipped_form_was_followed(wizard, tmp_path):
    run = finished_run(tmp_path / "runs" / "20261201-shipped", 10.0, 12)
    _forms(run, [], [])
    review = _review(wizard, run)
    assert review.forms.text() == ("No form of the corpus stood for enough of it; the documents follow the shipped "
                                   "Case file form.")
    assert review.forms_more.isHidden()
    _forms(run, [SEEN], [5.0], size=400.0)
    review = _review(wizard, run)
    assert review.forms.text().startswith("No form of the corpus stood for enough of it") and "1 form was" in \
        review.forms.text()
    quiet = finished_run(tmp_path / "runs" / "20261201-none", 10.0, 12)
    assert _review(wizard, quiet).forms_section.isHidden(), "a run that looked for no forms says nothing of them"


def test_many_forms_are_counted_not_all_listed():
    view = ReleasedFormsView(tuple((f"Form {i}: [text].", 50.0 - i) for i in range(8)), True, "Case file")
    listing = forms_listing(view)
    assert listing.count("noisy count") == 5 and listing.endswith("… and 3 more.")
    assert forms_words(None) == "" and forms_listing(None) == ""


# -- the fidelity report --------------------------------------------------------------------------------------------


def test_the_fidelity_box_shows_the_figures_and_the_documents_side_by_side(wizard, tmp_path):
    run = finished_run(tmp_path / "runs" / "20261201-fidelity", 10.0, 12)
    report = custodian_fidelity(run, _corpus(_real()), _real(30)[::-1], HashEmbedder())
    assert report is not None
    review = _review(wizard, run)
    assert review.fidelity_box.title() == "Fidelity — shown on this screen only, never exported"
    text = review.fidelity.text()
    assert f"Real-vs-synthetic classifier AUC: {report['c2st_auc']:.2f} (0.5 = indistinguishable, 1.0 = always " \
           "told apart" in text
    assert f"In the corpus's own forms: {100 * report['own_form_share']:.0f}% of the synthetic documents" in text
    assert f"MMD² (distance of meaning, embeddings): {report['mmd2']:.4f}, beside {report['mmd2_real']:.4f}" in text
    assert review.tabs.tabText(review.tabs.currentIndex()) == DOCUMENTS_TAB
    assert review.tabs.isTabVisible(review.pairs_tab) and not review.side_by_side.isHidden()
    review.side_by_side.click()
    assert review.tabs.tabText(review.tabs.currentIndex()) == PAIRS_TAB
    boxes = {box.objectName(): box.toPlainText() for box in review.pairs.findChildren(QPlainTextEdit)}
    assert sorted(boxes) == sorted(f"pair_{side}_{i}" for i in (1, 2, 3) for side in ("real", "synthetic"))
    assert all(boxes[f"pair_real_{i}"] == report["pairs"][i - 1]["real"] for i in (1, 2, 3))
    assert all(boxes[f"pair_synthetic_{i}"] == report["pairs"][i - 1]["synthetic"] for i in (1, 2, 3))
    review.initializePage()  # shown again: three pairs, not six
    assert len(review.pairs.findChildren(QPlainTextEdit)) == 6


def test_without_a_report_or_an_embedder_the_box_says_so(wizard, tmp_path):
    run = finished_run(tmp_path / "runs" / "20261201-old", 10.0, 12)
    review = _review(wizard, run)
    assert review.fidelity.text().startswith("Not available: this run has no fidelity report")
    assert review.side_by_side.isHidden() and not review.tabs.isTabVisible(review.pairs_tab)
    custodian_fidelity(run, _corpus(_real()), _real(30)[::-1], None)
    review = _review(wizard, run)
    assert "MMD²: not computed: the run had no embedder loaded." in review.fidelity.text()


def test_the_page_fits_a_1280_by_720_screen_with_everything_open(wizard, qtbot, tmp_path):
    run = finished_run(tmp_path / "runs" / "20261201-fits", 10.0, 12)
    _forms(run, [SEEN * 3, DISCHARGE] + [f"Form {i}: [text], [number]." for i in range(6)],
           [25.3, 14.0, 9, 8, 7, 6, 5, 4])
    custodian_fidelity(run, _corpus(_real()), _real(30)[::-1], HashEmbedder())
    review_id = next(i for i in wizard.pageIds() if wizard.page(i) is wizard.review_page)
    wizard.run_page.result = {"run_dir": str(run), "synthetic_path": str(run / "synthetic.jsonl"), "n_synthetic": 12}
    wizard.setStartId(review_id)
    wizard.resize(1280, 720)
    wizard.show()
    wizard.restart()
    review = wizard.review_page
    assert wizard.currentPage() is review
    review.forms_more.set_expanded(True)
    review.show_side_by_side()
    qtbot.wait(10)
    assert wizard.height() <= 720 and wizard.width() <= 1280
    assert review.minimumSizeHint().height() <= 620 and review.minimumSizeHint().width() <= 900
