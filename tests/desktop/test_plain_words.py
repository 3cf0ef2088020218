"""Issue 35 items 4 and 5: plain words on the wizard's main path, and the small things (pytest-qt, offscreen).

The scan walks the main-path pages with every Advanced section closed and reads only what a person sees
there (labels, buttons, check boxes, group titles, combo boxes; hidden widgets skipped): no symbol of the
forbidden list may appear. Symbols stay allowed under Advanced, each explained.
"""

from __future__ import annotations

import argparse
import io
import re

import pytest
from tests.helpers import wizard_notes
from PySide6.QtWidgets import QAbstractButton, QApplication, QComboBox, QGroupBox, QLabel, QWidget, QWizardPage

from core.corpus import load_corpus
from core.corpus.columns import looks_like_header
from core.common.errors import CorpusError
from core.run.estimate import duration_words
from core.methods.dp_synrag.guidance import forecast_warning, spend_advice
from core.common.paths import resources_dir
from core.run.pipeline_cli import TerminalReporter, cmd_plan
from core.run.planning import plan
from core.privacy.forecast import forecast_topics
from core.common.progress import ProgressEvent
from core.specs.stage_labels import STAGE_LABELS, stage_label
from core.specs.runspec import DPSynRAGSpec, RunSpec
from core.common.wording import factor_words, guarantee_words
from desktop.controller import WizardController
from desktop.wizard import RunWizard
from desktop.wizard.wizard import BUDGET, CONFIRM, DATA, METHOD, MODEL, TASK

DEMO_SPEC = resources_dir() / "demo" / "demo_run.toml"

# (what the officer would not understand, pattern): each must be absent from the main path's visible text
FORBIDDEN = {
    "ρ": re.compile("ρ"),
    "rho": re.compile(r"\brho\b", re.IGNORECASE),
    "zCDP": re.compile("zCDP"),
    "zero-concentrated": re.compile("zero-concentrated", re.IGNORECASE),
    "L)": re.compile(r"\bL\)"),
    "k=": re.compile(r"\bk\s?="),
    "T)": re.compile(r"\bT\)"),
    "R = 50": re.compile(r"\b[RLT]\s?=\s?\d"),
    "τ": re.compile("τ"),
    "JSONL": re.compile("JSONL"),
    "co-keyword": re.compile("co-keyword", re.IGNORECASE),
    "privacy unit": re.compile("privacy unit", re.IGNORECASE),
    "Fingerprint": re.compile("fingerprint", re.IGNORECASE),
    "OpenDP": re.compile("OpenDP", re.IGNORECASE),
    "e^": re.compile(r"e\^"),
    "clear the noise": re.compile("clear the noise"),
    "N% of this corpus over 100": re.compile(r"\b\d{4,}% |\b[1-9]\d{2,}% of"),
}


def visible_text(page: QWidget) -> list[str]:
    """What a person sees on ``page``: titles, labels, buttons, group titles, combo boxes (no hidden widget)."""
    out = [page.title(), page.subTitle()] if isinstance(page, QWizardPage) else []
    for widget in page.findChildren(QWidget):
        if not widget.isVisibleTo(page):
            continue
        if isinstance(widget, (QLabel, QAbstractButton)):
            out.append(widget.text())
        elif isinstance(widget, QGroupBox):
            out.append(widget.title())
        elif isinstance(widget, QComboBox):
            out.append(widget.currentText())
    return [re.sub(r"<[^>]+>", " ", text).replace("&amp;", "&") for text in out if text]


def jargon(page: QWidget) -> list[tuple[str, str]]:
    """(forbidden term, the visible text holding it) on ``page``."""
    return [(term, text) for text in visible_text(page) for term, pattern in FORBIDDEN.items()
            if pattern.search(text)]


def closed_advanced(page: QWidget) -> None:
    """Every Advanced section of the page starts closed; the scan checks that it is."""
    from desktop.widgets.collapsible import Collapsible

    for section in page.findChildren(Collapsible):
        assert not section.body.isVisibleTo(page), f"{section.toggle.text()} is open on {page}"


def walk(wiz: RunWizard, epsilon: float | None = None) -> dict[str, list[tuple[str, str]]]:
    """From the Data page to Confirm (and the Run page's meter, without a run), the jargon on each page."""
    found = {}
    for expected in (DATA, METHOD, BUDGET, MODEL, TASK, CONFIRM):
        assert wiz.currentId() == expected, (expected, wiz.currentPage().message.text())
        page = wiz.currentPage()
        if expected == BUDGET and epsilon is not None:
            page.set_epsilon(epsilon)
            page.refresh_plan()
        if expected == MODEL:
            page.select_source("tiny-random")
        closed_advanced(page)
        found[page.title()] = jargon(page)
        if expected != CONFIRM:
            wiz.next()
    run = wiz.run_page
    plan_result = wiz.confirm_page.plan_result
    run.planned_rho, run.planned_epsilon, run.planned_delta = plan_result.rho_total, plan_result.epsilon, 1e-6
    run.charged = [(name, rho) for name, rho in plan_result.stages]
    run._update_meter()
    for stage in STAGE_LABELS:
        run._bar(stage)
    closed_advanced(run)
    found[run.title()] = jargon(run)
    return found


@pytest.fixture
def demo_wizard(qtbot):
    """The wizard on the demo spec (the default configuration of `make run`)."""
    controller = WizardController()
    controller.open_spec(DEMO_SPEC)
    wiz = RunWizard(controller, gpus=[], grace_ms=3000)
    qtbot.addWidget(wiz, before_close_func=lambda w: w.relay.shutdown())
    wiz.show()
    yield wiz
    wiz.relay.shutdown()


@pytest.fixture
def default_wizard(qtbot):
    """The wizard with Privet's default DP-SynRAG settings (k = 80, R = 500, private prediction)."""
    wiz = RunWizard(WizardController(), gpus=[], grace_ms=3000)
    qtbot.addWidget(wiz, before_close_func=lambda w: w.relay.shutdown())
    wiz.show()
    yield wiz
    wiz.relay.shutdown()


# --- item 4: the forbidden-symbol scan ----------------------------------------------------------------


def test_the_demo_run_main_path_has_no_jargon(demo_wizard):
    found = walk(demo_wizard)
    assert set(found) >= {"Private data", "Privacy budget", "Task and output", "Confirm", "Run"}
    assert all(not hits for hits in found.values()), found


def test_a_small_corpus_with_default_settings_is_warned_about_in_plain_words(default_wizard, tmp_path):
    page = default_wizard.data_page
    page.path.setText(str(wizard_notes(tmp_path, n=40)))
    page.set_columns("note", "id", "patient")
    assert page.load(), page.message.text()
    warnings = page.warnings.text()
    assert "⚠" in warnings and "40 units" in warnings  # the planner's warnings reached the page ...
    found = walk(default_wizard, epsilon=1.0)
    assert all(not hits for hits in found.values()), found  # ... in plain words, as the other pages
    confirm = default_wizard.confirm_page
    assert confirm.spend_anyway.warned and confirm.spend_anyway.isVisibleTo(confirm)  # its advice was scanned


def test_the_scan_catches_the_jargon_it_looks_for(default_wizard):
    page = default_wizard.data_page
    page.warnings.setText("⚠ The target cluster size k=80 exceeds the number of privacy units (ρ = 1.5).")
    page.warnings.show()
    hits = {term for term, _ in jargon(page)}
    assert {"k=", "privacy unit", "ρ"} <= hits
    page.warnings.hide()
    assert not jargon(page), "hidden widgets are not read"


def test_advanced_sections_keep_their_symbols_each_explained(demo_wizard):
    for _ in range(5):
        demo_wizard.next()
    confirm = demo_wizard.confirm_page
    assert demo_wizard.currentId() == CONFIRM
    confirm.advanced.set_expanded(True)
    text = confirm.rho.text()
    assert "ρ = " in text and "zero-concentrated differential privacy" in text and "adds up exactly" in text


def test_core_words_have_no_symbols_at_any_epsilon():
    for epsilon in (0.5, 4, 10, 14, 20, 30, 48.4, 60, 1000):
        words = guarantee_words(epsilon, 1e-6)
        for text in (words.advice, words.meaning, factor_words(epsilon)):
            assert "e^" not in text and "OpenDP" not in text and "inf" not in text, text
    assert factor_words(20) == "at most about 490 million times"
    assert factor_words(4) == "at most about 55 times"


def test_the_spend_advice_names_no_symbols():
    advice = " ".join(spend_advice(DPSynRAGSpec(), 1.0, 1e-6, 40, 5000))
    assert not [term for term, pattern in FORBIDDEN.items() if pattern.search(advice)], advice
    assert "synthetic documents, each drawn from about" in advice and "% of the budget for finding topics" in advice


# --- item 5: a missing column is an error naming the columns found --------------------------------------


def test_a_missing_column_names_the_columns_found(tmp_path):
    path = tmp_path / "body.csv"
    path.write_text("id,body,patient\n" + "".join(f"{i},note {i},P{i % 7}\n" for i in range(20)))
    for role, kwargs in (("text", {"text_column": "note"}), ("id", {"text_column": "body", "id_column": "ident"}),
                         ("person", {"text_column": "body", "person_column": "who"})):
        with pytest.raises(CorpusError) as info:
            load_corpus(path, **kwargs)
        assert f"The {role} column" in str(info.value) and "3 columns: id, body, patient." in str(info.value)


def test_a_file_without_a_header_row_keeps_its_first_record_private(tmp_path):
    path = tmp_path / "rows.csv"
    path.write_text("".join(f"MRN-{i},Alma Fenwick,came in with flu\n" for i in range(20)))
    with pytest.raises(CorpusError) as info:
        load_corpus(path, text_column="note")
    message = info.value.user_message()
    assert "which has 3 columns" in message and "Alma" not in message and "MRN" not in message
    assert not looks_like_header(["17", "Alma Fenwick", "flu"]) and not looks_like_header(["Alma Fenwick", "flu"])
    assert looks_like_header(["id", "body", "patient"]) and looks_like_header(["Patient ID", "Note"])
    assert not looks_like_header(["note", "Alma came in with flu, and rested."])  # a sentence is not a name


def test_the_wizard_says_a_missing_column_instead_of_using_another(wizard, tmp_path):
    path = tmp_path / "body.csv"
    path.write_text("id,body,patient\n" + "".join(f"{i},note {i} about flu,P{i % 7}\n" for i in range(40)))
    page = wizard.data_page
    page.path.setText(str(path))
    page.set_columns("note", "id", "patient")  # as a run spec that names 'note' would
    assert not page.load()
    assert "The text column 'note' is not in body.csv" in page.message.text()
    assert "id, body, patient" in page.message.text()
    assert wizard.controller.summary is None and not page.isComplete()


def test_a_changed_file_says_which_choice_it_lacks(wizard, tmp_path):
    page = wizard.data_page
    page.path.setText(str(wizard_notes(tmp_path)))
    page._path_changed()
    assert page._column(page.text_column) == "note"
    other = tmp_path / "other.csv"
    other.write_text("id,body,patient\n" + "".join(f"{i},note {i} about flu,P{i % 7}\n" for i in range(40)))
    page.path.setText(str(other))
    page._path_changed()
    assert page._column(page.text_column) == "body"
    assert "other.csv has no text column 'note'" in page.message.text()


# --- item 5: shares over 100 % are counts -----------------------------------------------------------------


def test_a_share_over_100_percent_is_worded_as_a_count():
    forecast = forecast_topics(40, 24, 30.0, 1474.0)
    text = forecast_warning(forecast, 1.0)
    assert "% of this corpus" not in text and "more than the 40 units of this corpus" in text
    assert "be found" in text and "clear the noise" not in text


# --- item 5: layout, the histogram axis, seconds, whole progress labels -------------------------------------


def test_opening_advanced_on_the_task_page_squashes_nothing(demo_wizard):
    for _ in range(4):
        demo_wizard.next()
    assert demo_wizard.currentId() == TASK
    task = demo_wizard.task_page
    task.advanced.set_expanded(True)
    for _ in range(3):
        QApplication.processEvents()
    boxes = [*task.topic_names.lists.values(), task.topic_names.discover, task.self_filter]
    for box in boxes:
        assert box.isVisibleTo(task) and box.height() >= box.minimumSizeHint().height(), box.text()
    tops = [box.mapTo(task, box.rect().topLeft()).y() for box in boxes[:-1]]
    bottoms = [box.mapTo(task, box.rect().bottomLeft()).y() for box in boxes[:-1]]
    assert all(bottom < top for bottom, top in zip(bottoms, tops[1:])), "the check boxes overlap"


def test_the_histogram_axis_says_the_lengths_of_the_text(demo_wizard):
    page = demo_wizard.data_page
    lengths = demo_wizard.controller.summary.lengths
    assert f"(from {lengths.min} to {lengths.max})" in page.summary.text()
    assert page.histogram._edges[0] == lengths.min and page.histogram._edges[-1] == lengths.max
    tips = page.histogram.toolTip().splitlines()
    assert tips[0].startswith(f"{lengths.min}–") and tips[-1].split(" characters")[0].endswith(f"–{lengths.max}")
    assert lengths.bin_edges[-1] != lengths.max  # the case the issue saw ("273 chars" for a longest of 263)


def test_one_second_and_one_minute_are_singular():
    assert duration_words(1) == "about 1 second" and duration_words(0.3) == "about 1 second"
    assert duration_words(2) == "about 2 seconds" and duration_words(40) == "about 40 seconds"
    assert duration_words(3000) == "about 50 minutes"
    assert all(not re.search(r"\b1 (seconds|minutes)", duration_words(s)) for s in (0.5, 1, 1.4, 60, 91, 100))


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("stream_type", [io.StringIO, _Terminal])
def test_progress_labels_are_printed_whole(stream_type):
    stream = stream_type()
    reporter = TerminalReporter(stream)
    for stage in ("keywords", "realisation"):
        reporter.emit(ProgressEvent(stage, "stage_start", 0, 10))
        reporter.emit(ProgressEvent(stage, "progress", 5, 10, eta_s=3.0))
        reporter.emit(ProgressEvent(stage, "stage_end", 10, 10))
    out = stream.getvalue()
    assert "finding keywords in each document" in out
    assert "writing documents from the released topics (public, no budget)" in out
    if stream_type is _Terminal:  # the updated bar line stays short enough for an 80-column terminal
        assert all(len(line) <= 80 for line in out.replace("\r", "\n").splitlines())


def test_the_run_page_shows_stage_labels_whole(wizard):
    run = wizard.run_page
    for stage in STAGE_LABELS:
        run._bar(stage)
    labels = {label.text() for label in run.findChildren(QLabel)}
    for stage in STAGE_LABELS:
        assert stage_label(stage).capitalize() in labels
    long = next(label for label in run.findChildren(QLabel) if label.text().startswith("Writing documents from"))
    assert long.wordWrap()


# --- item 5: no "Warning:" for the default configuration ----------------------------------------------------


def test_the_default_configuration_prints_no_warning(capsys):
    out = io.StringIO()
    assert cmd_plan(argparse.Namespace(spec=str(DEMO_SPEC)), out) == 0
    text = out.getvalue()
    assert "Warning:" not in text, text
    assert "Note (advanced): No token stage" in text  # still said, as information for specialists
    summary = plan(RunSpec.load(DEMO_SPEC))
    assert not summary.warnings
