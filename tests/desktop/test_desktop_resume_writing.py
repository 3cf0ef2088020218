"""Issue 35 in the wizard (pytest-qt, offscreen, tiny models): a run interrupted while the public writer
writes resumes without a question, says that nothing more will be charged, and charges nothing."""

from __future__ import annotations

from PySide6.QtWidgets import QMessageBox
from tests.desktop.test_desktop_wizard import RUN_TIMEOUT_MS, walk_to_confirm
from tests.pipeline.test_resume_writing import charges, interrupt_while_writing

from core.ledger import Ledger
from core.specs.runspec import RunSpec
from desktop.wizard import run_page as run_page_module

NOTHING_MORE = "Nothing more will be charged"


def test_a_resume_that_charges_nothing_says_so_and_asks_no_consent(wizard, qtbot, tmp_path, monkeypatch):
    walk_to_confirm(wizard, tmp_path)
    # the shipped form's writer, which checkpoints its documents one by one: with discovery on, a draw of the tiny
    # corpus's forms decided whether that writer ran at all (the test failed 2 runs in 7), as in test_resume_writing
    wizard.controller.spec.dp_synrag.discover_forms = False
    spec = RunSpec.from_dict(wizard.controller.run_spec_dict())  # the spec the wizard's run would run
    assert spec.dp_synrag.text == "realised"
    run_dir = wizard.controller.new_run_dir()
    interrupt_while_writing(spec, run_dir)  # every charged stage finished; the writer had written one document
    with Ledger() as ledger:
        before = charges(ledger)
    assert before

    asked: list[str] = []

    def question(parent, title, text, *args, **kwargs):
        asked.append(text)
        return QMessageBox.StandardButton.No

    monkeypatch.setattr(run_page_module.QMessageBox, "question", staticmethod(question))
    run = wizard.run_page
    run.prepare_resume(run_dir)
    wizard.next()  # the Run page resumes the run as it is shown
    assert asked == [], "nothing to consent to"
    assert run.state == "running" and NOTHING_MORE in run.message.text()
    assert NOTHING_MORE in run.resume_text and NOTHING_MORE in run.log.toPlainText()
    qtbot.waitUntil(lambda: run.state != "running", timeout=RUN_TIMEOUT_MS)
    assert run.state == "succeeded", run.message.text() + run.log.toPlainText()
    assert NOTHING_MORE in run.log.toPlainText()  # still there after the run: what the officer was told
    with Ledger() as ledger:
        assert charges(ledger) == before, "and nothing more was charged"
    assert asked == []
