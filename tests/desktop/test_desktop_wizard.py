"""The desktop wizard end to end (pytest-qt, offscreen) with the tiny test models.

The pipeline runs in a spawned child process, exactly as in the application.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.helpers import wizard_notes
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWizard

from core.ledger import Ledger
from core.ledger.view import charged_summary, run_spend
from core.specs.stage_labels import STAGE_LABELS
from core.specs.runspec import ModelChoice
from desktop.controller import verify_folder
from desktop.runner import TEST_HOOK_ENV
from desktop.wizard import RunWizard
from desktop.wizard.wizard import BUDGET, CONFIRM, DATA, METHOD, MODEL, REVIEW, RUN, TASK

RUN_TIMEOUT_MS = 240_000  # generous: CI machines are shared


def next_enabled(wiz: RunWizard) -> bool:
    button = wiz.button(QWizard.WizardButton.CommitButton if wiz.currentId() == CONFIRM else QWizard.WizardButton.NextButton)
    return button.isEnabled() and wiz.currentPage().isComplete()


def load_data(wiz: RunWizard, tmp_path: Path, n: int = 40) -> None:
    page = wiz.data_page
    page.path.setText(str(wizard_notes(tmp_path, n)))
    page.set_columns("note", "id", "patient")
    assert page.load(), page.message.text()


def walk_to_confirm(wiz: RunWizard, tmp_path: Path, epsilon: float = 10.0, n: int = 40) -> None:
    load_data(wiz, tmp_path, n)
    assert next_enabled(wiz)
    wiz.next()
    assert wiz.currentId() == METHOD
    wiz.method_page.select("dp_synrag")
    wiz.next()
    assert wiz.currentId() == BUDGET
    wiz.budget_page.set_epsilon(epsilon)
    wiz.budget_page.refresh_plan()
    assert wiz.budget_page.plan_result is not None, wiz.budget_page.message.text()
    assert wiz.budget_page.split.segments(), "the per-stage split is drawn"
    wiz.next()
    assert wiz.currentId() == MODEL
    wiz.model_page.select_source("tiny-random")
    wiz.next()
    assert wiz.currentId() == TASK
    wiz.next()
    assert wiz.currentId() == CONFIRM
    assert not next_enabled(wiz), "the commit page needs the confirmation tick"
    assert f"ε = {epsilon:g}" in wiz.confirm_page.recorded.text()
    wiz.confirm_page.understood.setChecked(True)
    if wiz.confirm_page.spend_anyway.needed:  # about 0 topics even at a stated public bound: the run needs consent
        assert not next_enabled(wiz)
        wiz.confirm_page.spend_anyway.box.setChecked(True)
    assert next_enabled(wiz)


def test_walk_the_wizard_to_a_verified_export(wizard, qtbot, tmp_path):
    walk_to_confirm(wizard, tmp_path)
    wizard.next()
    assert wizard.currentId() == RUN
    run = wizard.run_page
    qtbot.waitUntil(lambda: run.state != "running", timeout=RUN_TIMEOUT_MS)
    assert run.state == "succeeded", run.message.text() + run.log.toPlainText()
    assert run.charged and sum(r for _, r in run.charged) == pytest.approx(run.planned_rho, rel=1e-6)
    record_run_id = json.loads((run.run_dir / "privacy_record.json").read_text())["run_id"]
    assert record_run_id == run.run_dir.name == run.run_id, "one run id: run folder, ledger and certificate"
    assert run.stage_names(), "one progress bar per stage"
    wizard.next()
    assert wizard.currentId() == REVIEW
    review = wizard.review_page
    assert review.documents.count() == run.result["n_synthetic"] > 0
    check = review.check.text()  # the check ran on the loaded corpus (not the "Not available" fallback)
    assert "private names" in check and "Not available" not in check
    assert Path(review.out_dir.text()).name == run.run_id, "the suggested export folder carries the same run id"
    assert "ε =" in review.guarantee.text() and "safe to" not in review.title() + review.subTitle()
    review.out_dir.setText(str(tmp_path / "export"))
    out = review.export()
    assert out == (tmp_path / "export").absolute(), review.message.text()
    assert verify_folder(out).ok
    assert str(out) in review.export_result.text() and "verifies" in review.export_result.text()
    exported_text = "".join(p.read_text(errors="ignore") for p in out.rglob("*") if p.is_file())
    assert review.check.text() not in exported_text and "Internal check" not in exported_text


def test_invalid_inputs_block_next_with_a_message(wizard, tmp_path):
    page = wizard.data_page
    assert wizard.currentId() == DATA
    assert not next_enabled(wizard) and "Choose a folder" in page.message.text()
    page.path.setText(str(tmp_path / "missing.csv"))
    assert not page.load()
    assert not next_enabled(wizard) and "does not exist" in page.message.text()

    load_data(wizard, tmp_path)
    page.set_columns("note", "id", "")  # changed after loading: must load again
    assert not next_enabled(wizard) and "Load" in page.message.text()
    assert page.load() and next_enabled(wizard)
    wizard.next()
    wizard.next()
    budget = wizard.budget_page
    budget.set_delta_text("not a number")
    assert not next_enabled(wizard) and "δ must be" in budget.message.text()
    budget.set_delta_text("1e-6")
    assert next_enabled(wizard)
    wizard.next()
    model = wizard.model_page
    model.select_source("hf", str(tmp_path / "no-such-model"))
    assert not next_enabled(wizard) and "config.json" in model.message.text()
    model.select_source("gguf", str(tmp_path / "notes.csv"))
    assert not next_enabled(wizard) and ".gguf" in model.message.text()
    model.select_source("tiny-random")
    assert next_enabled(wizard)
    wizard.next()
    task = wizard.task_page
    task.task.setPlainText("")
    assert not next_enabled(wizard) and "task" in task.message.text()
    task.task.setPlainText("Answer questions about clinic visits.")
    for box in task.formats.values():
        box.setChecked(False)
    assert not next_enabled(wizard) and "format" in task.message.text()


def test_cancel_stops_the_run_and_the_ledger_keeps_the_charge(wizard, qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv(TEST_HOOK_ENV, "delay:0.4")  # slows the child so Cancel lands mid-run
    walk_to_confirm(wizard, tmp_path)
    wizard.next()
    run = wizard.run_page
    qtbot.waitUntil(lambda: bool(run.charged) or run.state != "running", timeout=RUN_TIMEOUT_MS)
    assert run.state == "running", run.log.toPlainText()
    questions = []
    monkeypatch.setattr(run, "confirm_cancel", lambda: questions.append(run.charged_now()) or False)
    qtbot.mouseClick(run.cancel_button, Qt.MouseButton.LeftButton)
    assert questions and run.state == "running" and wizard.relay.running, "'No' keeps the run going"
    assert "ε =" in questions[0], "the question says what the ledger has charged so far"
    monkeypatch.setattr(run, "confirm_cancel", lambda: True)
    qtbot.mouseClick(run.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: run.state != "running", timeout=20_000)
    assert run.state == "cancelled"
    assert not next_enabled(wizard) and "stopped" in run.message.text()
    assert run.resume_button.isVisible()
    fingerprint = wizard.controller.summary.fingerprint
    assert Ledger().spent_rho(fingerprint) >= run.charged[0][1] > 0
    spend = run_spend(Ledger(), run.run_id)
    assert charged_summary(spend, STAGE_LABELS) in run.message.text(), "the report is read from the ledger"


@pytest.mark.parametrize("hook, expected", [("raise", "internal error"), ("exit", "exit code 3")])
def test_a_child_crash_shows_an_error_and_the_gui_stays_alive(wizard, qtbot, tmp_path, monkeypatch, hook, expected):
    monkeypatch.setenv(TEST_HOOK_ENV, hook)
    walk_to_confirm(wizard, tmp_path)
    wizard.next()
    run = wizard.run_page
    qtbot.waitUntil(lambda: run.state != "running", timeout=30_000)
    assert run.state == "failed"
    assert run.error_box is not None and run.error_box.isVisible()
    assert expected in run.error_box.text()
    assert not run.resume_button.isVisible(), "nothing was started, so there is nothing to resume"
    assert not wizard.relay.running
    run.error_box.close()
    qtbot.wait(100)  # the event loop still runs
    assert wizard.isVisible() and wizard.currentId() == RUN
    assert not next_enabled(wizard) and expected in run.message.text()


def test_a_missing_model_folder_fails_in_the_child_with_a_plain_message(wizard, qtbot, tmp_path):
    walk_to_confirm(wizard, tmp_path)
    wizard.controller.spec.llm = ModelChoice(source="hf", path=str(tmp_path / "gone"))
    wizard.next()
    run = wizard.run_page
    qtbot.waitUntil(lambda: run.state != "running", timeout=RUN_TIMEOUT_MS)
    assert run.state == "failed"
    assert "Traceback" not in run.error_box.text() and str(tmp_path / "gone") in run.error_box.text()
