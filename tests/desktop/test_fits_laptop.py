"""Issue 56 item 1: every wizard page is usable on a laptop screen — 1280 × 720, and 1366 × 768 at 125 % scaling.

Each page is shown at the screen's free area (``tests.desktop.fits.SCREENS``) with its longest contents (every
Advanced section open, a long file path, the run page with every stage of the plan reporting and charged, the review
page with forms and the fidelity box); ``fits.layout_problems`` then fails the test when the window is larger than
the screen, when a visible control or label lies outside the window or is cut by a parent, when anything scrolls
sideways, or when a label's text is cut short. Fast: no child process (the run page is fed events directly).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtWidgets import QLabel
from tests.desktop.fits import SCREENS, desktop_font, layout_problems, settle, show_at
from tests.desktop.test_desktop_reading import finished_run
from tests.desktop.test_desktop_review_forms import DISCHARGE, SEEN, _forms
from tests.helpers import tiny_controller, wizard_notes
from tests.pipeline.test_run_fidelity import HashEmbedder, _corpus, _real

from core.run.estimate import EtaTracker
from core.evaluation.run_fidelity import custodian_fidelity
from desktop.wizard import RunWizard
from desktop.wizard.wizard import BUDGET, CONFIRM, DATA, METHOD, MODEL, REVIEW, RUN, TASK

PAGES = {"data": DATA, "method": METHOD, "budget": BUDGET, "model": MODEL, "task": TASK, "confirm": CONFIRM,
         "run": RUN, "review": REVIEW, "review-side-by-side": REVIEW}


@pytest.fixture
def make_wizard(qtbot):
    made = []

    def make() -> RunWizard:
        wiz = RunWizard(tiny_controller(), gpus=[], grace_ms=3000)
        qtbot.addWidget(wiz, before_close_func=lambda w: w.relay.shutdown())
        made.append(wiz)
        return wiz

    yield make
    for wiz in made:
        wiz.relay.shutdown()


def loaded(wizard: RunWizard, tmp_path: Path) -> None:
    """The wizard's notes, from a folder with a long name (the path field and the summary say it whole)."""
    folder = tmp_path / ("a-long-folder-name-as-hospital-shares-have-them-" * 3)
    folder.mkdir()
    page = wizard.data_page
    page.path.setText(str(wizard_notes(folder, 40)))
    page.set_columns("note", "id", "patient")
    assert page.load(), page.message.text()


def running(wizard: RunWizard) -> None:
    """The run page mid-run: every stage of the plan started, half done, charged; previews and log lines."""
    run = wizard.run_page
    run.run_dir = wizard.controller.new_run_dir()
    estimate = wizard.controller.estimate()
    run.tracker = EtaTracker(estimate)
    run.planned_rho = float(wizard.controller.plan().rho_total)
    run.planned_epsilon = float(wizard.controller.plan().epsilon)
    run.state = "running"
    stages = [stage for stage, _seconds in estimate.stages]
    for stage in stages:
        run.on_event({"kind": "stage_start", "stage": stage, "done": 0, "total": 200})
        run.on_event({"kind": "progress", "stage": stage, "done": 100, "total": 200, "eta_s": 1800})
        run.on_event({"kind": "charged", "stage": stage, "rho": run.planned_rho / max(len(stages), 1)})
    for i in range(12):
        run.on_event({"kind": "preview", "stage": stages[-1], "message": "A synthetic note. " * 30})
        run.on_event({"kind": "log", "stage": stages[-1], "message": f"/a/very/long/path/{'x' * 150}/line {i}"})
    run.show_time_left()
    run.meter_advanced.set_expanded(True)


def finished(wizard: RunWizard, tmp_path: Path) -> None:
    run_dir = finished_run(tmp_path / "runs" / "20261201-fits", 10.0, 12)
    long = "Case file. Client: M. S., 21, referred by a sympathetic school nurse for a persistent cough and fever. " * 3
    (run_dir / "synthetic.jsonl").write_text("".join(json.dumps({"id": f"s{i}", "text": f"{long} {i}"}) + "\n"
                                                     for i in range(12)), encoding="utf-8")
    _forms(run_dir, [SEEN * 3, DISCHARGE] + [f"Form {i}: [text], [number]." for i in range(6)],
           [25.3, 14.0, 9, 8, 7, 6, 5, 4])
    custodian_fidelity(run_dir, _corpus(_real()), _real(30)[::-1], HashEmbedder())
    wizard.run_page.show_finished(run_dir, 12)


def open_page(wizard: RunWizard, name: str, tmp_path: Path) -> None:
    """Show page ``name`` with its longest contents."""
    if name != "data":
        loaded(wizard, tmp_path)
    if name == "run":
        running(wizard)
    if name.startswith("review"):
        finished(wizard, tmp_path)
    wizard.setStartId(PAGES[name])
    wizard.restart()
    page = wizard.currentPage()
    for section in ("advanced", "meter_advanced"):
        if hasattr(page, section):
            getattr(page, section).set_expanded(True)
    if name == "data":
        loaded(wizard, tmp_path)
    if name.startswith("review"):
        page.forms_more.set_expanded(True)
    if name == "review-side-by-side":
        page.show_side_by_side()  # the second tab: 3 documents beside the nearest of hers
    assert wizard.currentId() == PAGES[name]


@pytest.mark.parametrize("screen", list(SCREENS))
@pytest.mark.parametrize("name", list(PAGES))
def test_every_page_fits_a_laptop_screen(make_wizard, tmp_path, name, screen):
    size, points = SCREENS[screen]
    with desktop_font(points):
        wizard = make_wizard()
        open_page(wizard, name, tmp_path)
        show_at(wizard, size)
        problems = layout_problems(wizard, size)
    assert not problems, f"{name} page at {screen}:\n" + "\n".join(problems)


def test_the_check_fails_when_a_control_leaves_the_window(make_wizard, tmp_path):
    """The check is not vacuous: a long label that does not wrap, a wrapped label
    squeezed below its text's height and a page larger than the screen are each named."""
    size, _points = SCREENS["1366x768-125%"]
    wizard = make_wizard()
    open_page(wizard, "model", tmp_path)  # a page that does not scroll
    page = wizard.model_page
    long_label = QLabel("A label far too long for any laptop screen " * 8)
    page.layout().addWidget(long_label)
    show_at(wizard, size)
    problems = layout_problems(wizard, size)
    assert any("A label far too long" in p and "cut short" in p for p in problems), problems
    long_label.hide()
    wizard.resize(*size)
    settle(wizard)
    assert not layout_problems(wizard, size)
    squeezed = QLabel("Words that wrap onto several lines " * 20)
    squeezed.setWordWrap(True)
    squeezed.setFixedHeight(12)
    page.layout().addWidget(squeezed)
    settle(wizard)
    assert any("wrapped text needs" in p for p in layout_problems(wizard, size))
    squeezed.hide()
    wizard.resize(size[0] + 200, size[1] + 200)
    settle(wizard)
    assert any("larger than the screen" in p for p in layout_problems(wizard, size))
