"""Issue 24 in the wizard (pytest-qt, offscreen, tiny models): the Budget page shows the dataset and prior
spend the run books against, the Cancel dialog says what a resume charges again, and Resume asks first."""

from __future__ import annotations

import shutil

from PySide6.QtWidgets import QMessageBox
from tests.helpers import wizard_notes
from tests.desktop.test_desktop_wizard import RUN_TIMEOUT_MS, walk_to_confirm

from core.corpus import load_corpus
from core.ledger import Ledger
from core.ledger.booking import book_dataset, record_booking
from core.specs.stage_labels import stage_label
from core.specs.runspec import DataSpec
from desktop.runner import TEST_HOOK_ENV
from desktop.wizard import run_page as run_page_module


def _earlier_run_on_a_renamed_copy(tmp_path) -> str:
    """An earlier run booked the same documents as 'old_notes.csv' (another file name, by document)."""
    folder = tmp_path / "earlier"
    folder.mkdir()
    old = folder / "old_notes.csv"
    shutil.copy(wizard_notes(folder), old)
    data = DataSpec(path=str(old), text_column="note", id_column="id")
    with Ledger() as ledger:
        booking = book_dataset(ledger, data, load_corpus(old, "note", "id"))
        record_booking(ledger, booking)
        ledger.charge(booking.key, "earlier-run", "histogram", 0.5, 1e-6, "an earlier run")
        return booking.key


def test_budget_page_shows_what_the_run_books_and_resume_asks_first(wizard, qtbot, tmp_path, monkeypatch):
    key = _earlier_run_on_a_renamed_copy(tmp_path)
    monkeypatch.setenv(TEST_HOOK_ENV, "delay:0.3")  # slows the child so Cancel lands mid-run
    walk_to_confirm(wizard, tmp_path)  # loads notes.csv with a person column: another view, same documents

    budget = wizard.budget_page
    status = wizard.controller.ledger_status()
    with Ledger() as ledger:
        booked = ledger.summary(key)  # the same figure as `privet ledger` lists
    assert status.dataset_name == "old_notes.csv" and status.spent_epsilon == booked.spent_epsilon > 0
    assert "booked on the dataset 'old_notes.csv'" in budget.ledger.text()
    assert f"ε = {booked.spent_epsilon:.3g}" in budget.ledger.text()
    assert budget.dataset_name.text() == ""  # asked for: empty means the name it is booked under

    asked: list[str] = []
    answers: list[QMessageBox.StandardButton] = []

    def question(parent, title, text, *args, **kwargs):
        asked.append(text)
        return answers.pop(0)

    monkeypatch.setattr(run_page_module.QMessageBox, "question", staticmethod(question))
    wizard.next()
    run = wizard.run_page
    qtbot.waitUntil(lambda: bool(run.charged) or run.state != "running", timeout=RUN_TIMEOUT_MS)
    assert run.state == "running", run.log.toPlainText()
    answers.append(QMessageBox.StandardButton.Yes)
    run.cancel()
    qtbot.waitUntil(lambda: run.state != "running", timeout=30_000)
    assert run.state == "cancelled" and run.resume_button.isVisible()
    cancel_text = asked[-1]
    assert "resumed later" in cancel_text and "without charging the budget again" not in cancel_text

    with Ledger() as ledger:
        charged_before = [r for r in ledger.entries(key) if r["kind"] == "charge"]
    assert {r["run_id"] for r in charged_before} == {"earlier-run", run.run_id}  # booked where it was shown
    quote = wizard.controller.resume_quote(run.run_dir)

    monkeypatch.delenv(TEST_HOOK_ENV)
    answers.append(QMessageBox.StandardButton.No)  # Resume, then decline: nothing starts, nothing is charged
    run.resume()
    assert quote.charges_anything  # stopped mid-run: the stage in progress or those not started yet
    assert asked[-1].startswith(quote.words(stage_label)) and f"ε = {quote.after_epsilon:.3g}" in asked[-1]
    assert run.state == "cancelled" and not wizard.relay.running and "not resumed" in run.message.text()
    with Ledger() as ledger:
        assert [r for r in ledger.entries(key) if r["kind"] == "charge"] == charged_before
    answers.append(QMessageBox.StandardButton.Yes)
    run.resume()
    qtbot.waitUntil(lambda: run.state not in ("running", "idle"), timeout=RUN_TIMEOUT_MS)
    assert run.state == "succeeded", run.message.text() + run.log.toPlainText()
    with Ledger() as ledger:
        rows = [r for r in ledger.entries(key) if r["kind"] == "charge"]
    added = sum(r["rho"] for r in rows[len(charged_before):])
    assert added <= quote.resume_rho * (1 + 1e-9)  # never more than the dialog said
    labels = [label for label, _ in run.meter.segments()]
    assert len(labels) == len(set(labels)), "no duplicate legend entries after a resume"
