"""Issue 14: the wizard as a privacy officer lives it (pytest-qt, offscreen).

Fast tests use no child process; the ones marked "child" run the tiny test models in a spawned
child exactly as the application does (closing during a run, one run per dataset, resume).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication
from tests.helpers import tiny_controller, wizard_notes
from tests.desktop.test_desktop_wizard import RUN_TIMEOUT_MS, walk_to_confirm

from core.run.estimate import Estimate, EtaTracker, estimate
from core.ledger import Ledger
from core.ledger.view import RunSpend, charged_summary, cumulative_after, run_spend
from core.privacy.budget import RECOMMENDED_EPSILON, epsilon_of
from core.common.progress import ProgressEvent
from core.specs.stage_labels import STAGE_LABELS, stage_label
from core.specs.runspec import RunSpec
from desktop.budget_bands import band_for
from desktop.runner import TEST_HOOK_ENV
from desktop.settings import DesktopSettings
from desktop.wizard import RunWizard
from desktop.wizard.wizard import (
    BUDGET,
    CONFIRM,
    KEEP,
    METHOD,
    MODEL,
    RUN,
    STOP,
    TASK,
)


def to_task_page(wiz: RunWizard, tmp_path: Path) -> None:
    page = wiz.data_page
    page.path.setText(str(wizard_notes(tmp_path)))
    page.set_columns("note", "id", "patient")
    assert page.load(), page.message.text()
    for expected in (METHOD, BUDGET, MODEL):
        wiz.next()
        assert wiz.currentId() == expected
    wiz.model_page.select_source("tiny-random")
    wiz.next()
    assert wiz.currentId() == TASK


# --- item 2: Back keeps every field; item 6: Confirm shows them and the cumulative ε -----------------


def test_back_keeps_every_field_and_confirm_shows_them(wizard, tmp_path):
    to_task_page(wizard, tmp_path)
    task = wizard.task_page
    task.count.setValue(24)
    task.folder.setText(str(tmp_path / "release"))
    task.custodian.setText("Dr. Ada Quill")
    task.organisation.setText("North Clinic")
    task.irb.setText("IRB-2026-17")
    task.tokens.setValue(33)
    task.task.setPlainText("Answer questions about clinic visits.")
    wizard.back()
    assert wizard.currentId() == MODEL
    wizard.back()
    wizard.budget_page.set_epsilon(3.0)
    wizard.next()
    wizard.next()
    assert wizard.currentId() == TASK
    assert task.count.value() == 24 and task.tokens.value() == 33
    assert task.folder.text() == str(tmp_path / "release")
    assert (task.custodian.text(), task.organisation.text(), task.irb.text()) == (
        "Dr. Ada Quill", "North Clinic", "IRB-2026-17")
    assert task.task.toPlainText() == "Answer questions about clinic visits."
    wizard.next()
    assert wizard.currentId() == CONFIRM
    text = wizard.confirm_page.summary.text()
    for expected in ("24 (shared among the topics found", "Dr. Ada Quill", "North Clinic", "IRB-2026-17",
                     str(tmp_path / "release"), "about"):
        assert expected in text, expected
    assert "ε = 3" in wizard.confirm_page.recorded.text() and "ρ" not in wizard.confirm_page.recorded.text()


def test_confirm_shows_the_cumulative_epsilon_of_the_dataset(wizard, tmp_path):
    wizard.controller.load_data(str(wizard_notes(tmp_path)), "note", "id", "patient")
    key = wizard.controller.booking().key  # the dataset the run books against (core.run.pipeline.dataset_booking)
    Ledger().charge(key, "earlier-run", "histogram", 0.5, 1e-3, "an earlier run")
    Ledger().set_cap(key, 30.0, 1e-3)
    walk_to_confirm(wizard, tmp_path, epsilon=4.0)
    plan = wizard.confirm_page.plan_result
    with Ledger() as ledger:
        expected = cumulative_after(ledger, key, plan.rho_total, plan.delta)
    text = wizard.confirm_page.cumulative.text()
    assert f"total will be ε ≈ {expected.after_epsilon:.3g} at δ = 0.001" in text and "Its cap is ε = 30" in text
    assert f"Spent so far: ε = {expected.before_epsilon:.3g} at δ = 0.001 in 1 run" in text  # as on the Budget page
    assert "Why the δ changes" not in text  # with a cap, both totals are stated at the cap's δ
    assert expected.before_epsilon == pytest.approx(epsilon_of(0.5, 1e-3))
    assert expected.after_epsilon > expected.before_epsilon and expected.after_epsilon > 4.0


# --- item 3: one run at a time per dataset ---------------------------------------------------------


def test_a_second_run_on_the_same_dataset_is_refused(wizard, tmp_path):
    walk_to_confirm(wizard, tmp_path)
    fingerprint = wizard.controller.summary.fingerprint
    other = object()
    assert wizard.active.claim(fingerprint, tmp_path / "runs" / "other-run", other) == ""
    assert not wizard.confirm_page.isComplete()
    assert "Another run on this dataset is in progress" in wizard.confirm_page.message.text()
    wizard.run_page.start()
    assert wizard.run_page.state == "failed" and not wizard.relay.running
    assert "Another run on this dataset" in wizard.run_page.failure
    wizard.active.release(other)
    assert wizard.confirm_page.isComplete()


# --- item 4: cancel reports what the ledger charged --------------------------------------------------


def test_charged_summary_says_nothing_was_charged_or_exactly_what_was():
    nothing = charged_summary(RunSpend("r", 0.0, 0.0, 1e-4, []))
    assert nothing.startswith("Nothing was charged")
    some = charged_summary(RunSpend("r", 0.2, epsilon_of(0.2, 1e-4), 1e-4, [("histogram", 0.2)]), STAGE_LABELS)
    assert f"ε = {epsilon_of(0.2, 1e-4):.3g}" in some and "finding topics" in some


def test_run_spend_reads_one_runs_charges_from_the_ledger():
    with Ledger() as ledger:
        ledger.charge("fp-a", "run-1", "histogram", 0.1, 1e-4, "x")
        ledger.charge("fp-a", "run-2", "histogram", 0.3, 1e-4, "x")
        ledger.charge("fp-a", "run-1", "private_prediction", 0.2, 1e-4, "x")
        spend = run_spend(ledger, "run-1")
    assert spend.rho == pytest.approx(0.3) and [s for s, _ in spend.stages] == ["histogram", "private_prediction"]
    assert spend.epsilon == pytest.approx(epsilon_of(0.3, 1e-4))


# --- item 5, 7: ε everywhere, plain names, a moderate default, an honest heading ----------------------


def test_new_runs_default_to_a_moderate_epsilon_and_say_the_trade_off(wizard):
    assert wizard.controller.spec.privacy.epsilon == RECOMMENDED_EPSILON
    assert band_for(RECOMMENDED_EPSILON).name == "amber"
    assert "generic" in wizard.budget_page.subTitle()


def test_budget_page_speaks_epsilon_with_plain_stage_names_and_no_duplicate_rows(wizard, tmp_path):
    walk_to_confirm(wizard, tmp_path)
    wizard.back()
    wizard.back()
    wizard.back()
    assert wizard.currentId() == BUDGET
    page = wizard.budget_page
    for _ in range(3):
        page.refresh_plan()
    rows = page.derived_rows()
    assert len(rows) == len(set(rows)) and any(r.startswith("ρ") for r in rows)
    names = [name for name, _ in page.split.segments()]
    # the wizard's default writes realised documents: no token stage, its share goes to the topics
    assert "finding topics" in names and "describing each topic" in names and "writing synthetic documents" not in names
    assert all("_" not in name for name in names)  # plain stage names, never the code's
    assert "ρ" not in page.split_caption.text() or "Advanced" in page.split_caption.text()
    assert "ρ" not in page.ledger.text()


def test_stage_labels_are_used_by_the_command_line_progress():
    import io

    from core.run.pipeline_cli import TerminalReporter

    stream = io.StringIO()
    reporter = TerminalReporter(stream)
    reporter.emit(ProgressEvent("histogram", "charged", rho=0.1))
    reporter.emit(ProgressEvent("private_prediction", "stage_end", 3, 3))
    out = stream.getvalue()
    assert "finding topics" in out and "writing synthetic documents" in out
    assert stage_label("retrieval_threshold").startswith("choosing documents per topic")


# --- item 8: model table, dataset names ----------------------------------------------------------------


def test_model_page_lists_local_models_in_a_table(wizard, tmp_path, monkeypatch):
    models = [{"name": "SmolLM2-135M-Instruct", "kind": "llm", "source": "default", "path": "/opt/m.gguf",
               "size": 270_000_000, "packaged": True},
              {"name": "my-model", "kind": "llm", "source": "hf", "path": str(tmp_path), "size": 2_500_000_000,
               "packaged": False}]
    monkeypatch.setattr(wizard.controller, "local_models", lambda: models)
    to_task_page(wizard, tmp_path)
    wizard.back()
    table = wizard.model_page.local_models
    assert table.rowCount() == 2 and table.columnCount() == 4
    assert [table.item(0, c).text() for c in range(3)] == ["SmolLM2-135M-Instruct", "language model", "270 MB"]
    assert table.item(1, 2).text() == "2.5 GB" and str(tmp_path) in table.item(1, 3).text()
    assert "{" not in "".join(table.item(r, c).text() for r in range(2) for c in range(4))


def test_main_window_shows_the_dataset_name_beside_the_fingerprint(qtbot, monkeypatch):
    from desktop.main_window import MainWindow

    Ledger().charge("f" * 64, "run-1", "histogram", 0.25, 1e-4, "test charge")
    monkeypatch.setattr(Ledger, "dataset_name", lambda self, fp: "clinic notes 2026")
    window = MainWindow(DesktopSettings())
    qtbot.addWidget(window)
    assert window.ledger.item(0, 0).text() == "clinic notes 2026"
    assert "ffff" in window.ledger.item(0, 0).toolTip()  # the identity is a detail, not a column


# --- item 9, 10: data page, methods, Advanced task settings, task text per dataset -------------------


def test_data_page_picks_columns_keeps_choices_and_forgets_old_summaries(wizard, tmp_path):
    page = wizard.data_page
    first = wizard_notes(tmp_path)
    page.path.setText(str(first))
    page._path_changed()
    assert page._column(page.text_column) == "note" and page._column(page.person_column) == "patient"
    page.set_columns("note", "", "")
    assert page.load() and "The privacy guarantee protects each document" in page.summary.text()
    second_dir = tmp_path / "b"
    second_dir.mkdir()
    second = wizard_notes(second_dir)
    page.path.setText(str(second))
    page._path_changed()
    assert page._column(page.text_column) == "note" and page._column(page.person_column) == ""
    assert page.summary.text() == "Nothing loaded yet."
    assert "“notes”" in wizard.controller.spec.task


def test_a_tiny_corpus_is_warned_about(wizard, tmp_path):
    page = wizard.data_page
    page.path.setText(str(wizard_notes(tmp_path, n=2)))
    page.set_columns("note", "id", "")
    assert page.load()
    assert "⚠" in page.warnings.text()


def test_method_page_offers_dp_synth(wizard):
    assert {"dp_synrag", "dp_synth", "rpsg"} <= set(wizard.method_page.buttons)


def test_task_page_advanced_settings_reach_the_spec(wizard, tmp_path):
    to_task_page(wizard, tmp_path)
    task = wizard.task_page
    task.tokens.setValue(21)
    task.cluster_size.setValue(7)
    task.self_filter.setChecked(True)
    wizard.next()
    p = wizard.controller.spec.dp_synrag
    assert (p.T, p.k, p.self_filter) == (21, 7, True)


def test_aug_pe_asks_for_no_count_and_leaves_the_dp_synrag_section_alone(wizard, tmp_path):
    """Aug-PE's documents are its last vote's winners ([aug_pe] population and variations): the wizard asks for
    no count and no tokens, and stores nothing in [dp_synrag], which Aug-PE never reads."""
    from dataclasses import replace

    to_task_page(wizard, tmp_path)
    wizard.controller.spec.method = "aug_pe"
    task = wizard.task_page
    task.initializePage()
    before = replace(wizard.controller.spec.dp_synrag)
    assert not task.count.isEnabled() and task.advanced.isHidden()
    assert "[aug_pe]" in task.count_note.text()
    task.count.setValue(77)
    task.tokens.setValue(21)
    task.store()
    assert wizard.controller.spec.dp_synrag == before


# --- item 11: estimates from the work, refined while running -----------------------------------------


def test_the_estimate_grows_with_r_and_the_model_size():
    spec = RunSpec()
    spec.dp_synrag.R = 24
    small = estimate(spec, 2000, calibrate=False).total_s
    spec.dp_synrag.R = 500
    large = estimate(spec, 2000, calibrate=False).total_s
    assert large > 1.5 * small
    assert estimate(spec, 2000, model_bytes=2.7e9, calibrate=False).total_s > 5 * large


def test_eta_tracker_refines_the_overall_time_from_finished_stages():
    now = [0.0]
    tracker = EtaTracker(Estimate([("keywords", 100.0), ("private_prediction", 300.0)], "test"), clock=lambda: now[0])
    assert tracker.remaining_s() == pytest.approx(400.0)
    tracker.update({"stage": "keywords", "kind": "stage_start"})
    now[0] = 200.0
    tracker.update({"stage": "keywords", "kind": "stage_end"})
    assert tracker.factor() == pytest.approx(2.0)
    assert tracker.remaining_s() == pytest.approx(600.0), "the stages left take twice their estimate"
    tracker.update({"stage": "private_prediction", "kind": "stage_start"})
    now[0] = 300.0
    tracker.update({"stage": "private_prediction", "kind": "progress", "done": 1, "total": 4})
    assert tracker.remaining_s() == pytest.approx(300.0), "the current stage's own rate: 100 s per group"
    tracker.update({"stage": "private_prediction", "kind": "progress", "done": 3, "total": 4})
    assert tracker.remaining_s() == pytest.approx(100 / 0.75 - 100)
    assert tracker.finished_factor() == pytest.approx(2.0)


# --- item 15: open folder without a file manager -----------------------------------------------------------


def test_open_folder_without_a_file_manager_shows_the_path_and_copies_it(wizard, tmp_path):
    review = wizard.review_page
    review.exported = tmp_path / "release"
    assert not review.open_folder(opener=lambda url: False)
    assert str(tmp_path / "release") in review.message.text()
    review.exported_path.setText(str(review.exported))
    review.copy_path()
    assert QApplication.clipboard().text() == str(tmp_path / "release")


# --- item 16: Qt's xcb libraries ----------------------------------------------------------------------


def test_qt_dependency_check_names_the_exact_apt_command(monkeypatch, capsys):
    from desktop import qt_deps

    monkeypatch.setattr(qt_deps.sys, "platform", "linux")
    missing = qt_deps.missing_packages(loadable=lambda soname: "cursor" not in soname and "icccm" not in soname)
    assert missing == ["libxcb-cursor0", "libxcb-icccm4"]
    assert qt_deps.install_command(missing).endswith("apt-get install -y libxcb-cursor0 libxcb-icccm4")
    monkeypatch.setattr(qt_deps, "missing_packages", lambda: ["libxcb-keysyms1"])
    assert qt_deps.main() == 0, "only a warning: setup must not fail on a headless box"
    assert "apt-get install -y libxcb-keysyms1" in capsys.readouterr().err


# --- items 1, 3, 4: closing during a run, live main window, Resume (child process) -------------------


def test_closing_during_a_run_asks_keeps_it_running_then_stops_and_the_main_window_resumes_it(
        qtbot, tmp_path, monkeypatch):
    from desktop.main_window import MainWindow

    monkeypatch.setenv(TEST_HOOK_ENV, "delay:0.1")  # slows the child so the close lands mid-run
    window = MainWindow(DesktopSettings())
    qtbot.addWidget(window, before_close_func=lambda w: [wz.relay.shutdown() for wz in w.wizards])
    wizard = window._open_wizard(tiny_controller())
    wizard.show()
    walk_to_confirm(wizard, tmp_path)
    wizard.next()
    run = wizard.run_page
    qtbot.waitUntil(lambda: bool(run.charged) or run.state != "running", timeout=RUN_TIMEOUT_MS)
    assert run.state == "running", run.log.toPlainText()

    # The main window shows the run live: running status, a Show action, and the ledger charge.
    qtbot.waitUntil(lambda: any(b.spent_epsilon > 0 for b in window.budgets()), timeout=10_000)
    statuses = [window.runs.item(r, 4).text() for r in range(window.runs.rowCount())]
    assert "running" in statuses
    # A second wizard on the same dataset cannot start.
    second = window._open_wizard(tiny_controller())
    second.controller.load_data(wizard.controller.spec.data.path, "note", "id", "patient")
    assert "Another run on this dataset" in second.active.busy_message(second.controller.summary.fingerprint,
                                                                         second.run_page)

    questions = []
    monkeypatch.setattr(wizard, "ask_about_running_run", lambda: questions.append(wizard.running_question()) or KEEP)
    wizard.close()
    assert questions and "ε =" in questions[0] and "charged" in questions[0]
    assert not wizard.isVisible() and wizard.relay.running, "Keep: the run goes on, the window hides"
    assert window.show_run(run.run_dir) is wizard and wizard.isVisible()

    monkeypatch.setattr(wizard, "ask_about_running_run", lambda: STOP)
    wizard.close()
    qtbot.waitUntil(lambda: not wizard.relay.running, timeout=20_000)
    assert run.state == "cancelled" and not wizard.isVisible()
    spend = run_spend(Ledger(), run.run_id)
    assert spend.charged and charged_summary(spend, STAGE_LABELS) in run.stop_report

    window.refresh()
    row = next(r for r in range(window.runs.rowCount()) if window.runs.item(r, 0).text() == run.run_id)
    assert window.runs.item(row, 4).text() == "interrupted"
    assert window.runs.cellWidget(row, 5).text() == "Resume"
    monkeypatch.setenv(TEST_HOOK_ENV, "")
    from PySide6.QtWidgets import QMessageBox

    from desktop.wizard import run_page as run_page_module

    asked = []  # the resume asks first, stating what it charges again (issue 24)
    monkeypatch.setattr(run_page_module.QMessageBox, "question", staticmethod(
        lambda parent, title, text, *a, **k: asked.append(text) or QMessageBox.StandardButton.Yes))
    resumed = window.resume_run(run.run_dir)
    assert asked and "ε =" in asked[0]
    assert resumed.currentId() == RUN and resumed.run_page.run_dir == run.run_dir
    qtbot.waitUntil(lambda: resumed.run_page.state != "running", timeout=RUN_TIMEOUT_MS)
    assert resumed.run_page.state == "succeeded", resumed.run_page.log.toPlainText()
    assert run_spend(Ledger(), run.run_id).rho >= resumed.run_page.planned_rho * (1 - 1e-9)
    record = json.loads((run.run_dir / "privacy_record.json").read_text())
    assert record["run_id"] == run.run_id


def test_quitting_during_a_run_asks_and_no_keeps_the_app_open(qtbot, tmp_path, monkeypatch):
    from desktop.main_window import MainWindow

    window = MainWindow(DesktopSettings())
    qtbot.addWidget(window)
    window.show()
    wizard = window._open_wizard(tiny_controller())
    monkeypatch.setattr(type(wizard.relay), "running", property(lambda self: True))
    monkeypatch.setattr(wizard.run_page, "charged_now", lambda: "Nothing has been charged to the privacy budget yet.")
    asked = []
    monkeypatch.setattr(window, "ask_to_quit", lambda: asked.append(window.quit_question()) or False)
    window.close()
    assert asked and "1 run(s) in progress" in asked[0] and window.isVisible()


# --- item 14: the certificate an IRB reads ------------------------------------------------------------


def test_certificate_has_a_parameter_table_prose_and_the_number_of_documents(tmp_path):
    from tests.certificate.test_certificate import make_record

    from core.certificate import build_certificate, load_signing_key, render_html

    record = make_record(method_parameters={"K": 10, "R": 24, "c": 0.1788000238739732, "sigma_h": 12.345678,
                                            "self_filter": False, "pii_names": ["Alma Fenwick"]})
    out = tmp_path / "synthetic.jsonl"
    out.write_text('{"id": "s1", "text": "one"}\n{"id": "s2", "text": "two"}\n\n', encoding="utf-8")
    cert = build_certificate(record, [out], {"custodian": "A. Custodian"}, None, signing_key=load_signing_key())
    assert cert["documents_released"] == 2
    words = " ".join(cert["summary"])
    assert "e^epsilon =" not in words and "22,000 times" in words and "2 synthetic documents" in words
    html = render_html(cert)
    assert ">parameter</th><th width='12%' align='left'>value</th><th width='58%' align='left'>meaning</th>" in html
    assert "0.1788" in html and "0.1788000238739732" not in html and "noise added to each keyword count" in html
    assert "c=0.1788" not in html and "Alma Fenwick" not in html
    assert "Synthetic documents released: <b>2</b>" in html


def test_verify_with_ledger_says_what_the_ledger_check_found():
    from core.run.export_cli import ledger_check_words

    ok = ledger_check_words({"seq": 7, "row_hash": "x"}, [], [], 9)
    assert "still holds row 7" in ok and "intact (9 entries)" in ok
    bad = ledger_check_words({"seq": 7}, ["the ledger has no row 7"], [], 3)
    assert bad.startswith("Ledger check FAILED") and "no row 7" in bad
    assert "no ledger row" in ledger_check_words({}, [], [], 0)
