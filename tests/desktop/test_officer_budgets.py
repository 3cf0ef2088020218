"""Issue 35 items 1-3: caps as ceilings in Settings → Budgets, an ε the officer can follow, and the
certificate's first page (permitted use, the dataset's total and cap, only the parameters that ran).
pytest-qt, offscreen; no child process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.helpers import ROOT, wizard_notes
from tests.desktop.test_desktop_reading import finished_run
from tests.desktop.test_desktop_wizard import walk_to_confirm

from core.certificate.build import parameters_not_used
from core.certificate.render import PAGE_BREAK
from core.cli import main
from core.common.errors import PrivetError
from core.run.export import export_release
from core.ledger import Ledger
from core.ledger.total import COMBINING_PLAIN, COMBINING_WORDS
from core.ledger.view import run_spend
from core.specs.runspec import RunSpec
from desktop.controller_budget import in_app_words
from desktop.dialogs import BUDGETS, SettingsDialog
from desktop.settings import DesktopSettings

KEY = "ab" * 32  # the dataset finished_run charges
REASON = "Agreed with the IRB (protocol 17) on 1 December for a second study"


def budgets_dialog(qtbot) -> SettingsDialog:
    dialog = SettingsDialog(DesktopSettings(), page=BUDGETS)
    qtbot.addWidget(dialog)
    assert dialog.current_page() == BUDGETS
    return dialog


def pages(release: Path) -> tuple[str, str]:
    """Page 1 and the appendix of an exported certificate.html."""
    first, appendix = (release / "certificate.html").read_text(encoding="utf-8").split(PAGE_BREAK, 1)
    return first, appendix


# --- item 1: caps are ceilings, set in Settings → Budgets -------------------------------------------------


def test_a_cap_below_what_is_spent_is_refused_in_the_dialog_with_the_spent_figure(qtbot, tmp_path):
    with Ledger() as ledger:
        ledger.charge(KEY, "run-1", "all", 2.0, 1e-5, "an earlier run")
        spent = ledger.summary(KEY)
    assert spent.spent_epsilon > 5
    dialog = budgets_dialog(qtbot)
    panel = dialog.budgets
    assert [s.fingerprint for s in panel.datasets()] == [KEY]
    assert panel.table.item(0, 1).text() == f"ε = {spent.spent_epsilon:.3g} at δ = 1e-05"
    assert not panel.set_cap(5.0, 1e-5)
    text = panel.result.text()
    assert "below what this dataset has already spent" in text and f"ε = {spent.spent_epsilon:.4g}" in text
    assert "Nothing was changed" in text
    with Ledger() as ledger:
        assert ledger.cap(KEY) is None and not [r for r in ledger.entries(KEY) if r["kind"] == "cap"]
    assert panel.set_cap(spent.spent_epsilon + 1, 1e-5), panel.result.text()  # at least the spend: accepted
    assert panel.table.item(0, 2).text().startswith(f"ε = {spent.spent_epsilon + 1:g}")


def test_raising_a_cap_needs_a_reason_which_every_later_certificate_prints(qtbot, tmp_path):
    run = finished_run(tmp_path / "runs" / "run-a", epsilon=4.0, n_documents=3)
    dialog = budgets_dialog(qtbot)
    panel = dialog.budgets
    assert panel.set_cap(10.0, 1e-6), panel.result.text()  # a first cap needs no reason
    panel.reason.setText("   ")
    panel.set_button.click()  # the spin box still says 10: not a raise, recorded again without a reason
    assert not panel.set_cap(20.0, 1e-6, "")
    assert "reason" in panel.result.text() and "Nothing was changed" in panel.result.text()
    with Ledger() as ledger:
        assert ledger.cap(KEY) == (10.0, 1e-6)
    assert panel.set_cap(20.0, 1e-6, REASON), panel.result.text()
    with Ledger() as ledger:
        assert ledger.cap(KEY) == (20.0, 1e-6)
        assert REASON in [r for r in ledger.entries(KEY) if r["kind"] == "cap"][-1]["description"]
    release = export_release(run, tmp_path / "release", {"custodian": "Dr. Ada"})
    certificate = json.loads((release / "certificate.json").read_text(encoding="utf-8"))["certificate"]
    changes = certificate["budget_history"]["cap_changes"]
    assert [c["epsilon"] for c in changes][-1] == 20.0 and changes[-1]["reason"] == REASON
    first, appendix = pages(release)
    assert REASON in first and REASON in appendix
    assert "Budget of this dataset" in first and "cap is epsilon = 20 at delta = 1e-06" in first


def test_the_command_line_asks_for_a_reason_to_raise_a_cap(capsys):
    with Ledger() as ledger:
        ledger.charge(KEY, "run-1", "all", 0.1, 1e-5, "an earlier run")
    assert main(["ledger", KEY, "--set-cap", "8", "--delta", "1e-5"]) == 0  # a first cap
    assert main(["ledger", KEY, "--set-cap", "12", "--delta", "1e-5"]) != 0
    said = capsys.readouterr()
    assert "needs a reason" in said.out + said.err
    with Ledger() as ledger:
        assert ledger.cap(KEY) == (8.0, 1e-5)
    assert main(["ledger", KEY, "--set-cap", "12", "--delta", "1e-5", "--reason", REASON]) == 0
    with Ledger() as ledger:
        assert ledger.cap(KEY) == (12.0, 1e-5)
        assert [r for r in ledger.entries(KEY) if r["kind"] == "cap"][-1]["description"].endswith(REASON)


def test_a_refusal_in_the_app_says_what_is_spent_and_points_to_settings(wizard, tmp_path):
    controller = wizard.controller
    controller.load_data(str(wizard_notes(tmp_path)), "note", "id", "patient")
    key = controller.booking().key
    with Ledger() as ledger:
        ledger.charge(key, "earlier-run", "histogram", 0.5, 1e-5, "an earlier run")
    controller.set_cap(5.0, 1e-5)
    problem = controller.budget_problem(3.0, 1e-5)
    status = controller.ledger_status()
    assert "over its cap of ε = 5" in problem and "Settings → Budgets" in problem
    assert "privet ledger" not in problem and "zero-concentrated" not in problem
    assert f"Spent so far: ε = {status.spent_epsilon:.3g} of this dataset's cap ε = 5" in problem
    cli = PrivetError("x " + COMBINING_WORDS, "raise the cap with `privet ledger DATASET --set-cap EPS --delta D`.")
    assert "privet ledger" not in in_app_words(cli.user_message()) and COMBINING_PLAIN in in_app_words(cli.user_message())


def test_the_main_window_has_no_cap_dialog_but_opens_settings_budgets(qtbot):
    from desktop.main_window import MainWindow

    with Ledger() as ledger:
        ledger.charge(KEY, "run-1", "all", 0.3, 1e-5, "a run")
    window = MainWindow(DesktopSettings())
    qtbot.addWidget(window)
    assert not hasattr(window, "_set_cap")
    window.ledger.selectRow(0)
    dialog = window.show_budgets()
    qtbot.addWidget(dialog)
    assert dialog.current_page() == BUDGETS and dialog.budgets.selected().fingerprint == KEY
    assert dialog.budgets.set_cap(9.0, 1e-5)
    assert window.ledger.item(0, 2).text() == "9", "the main window re-reads the ledger after a cap is set"


# --- item 2: an ε a person can follow ------------------------------------------------------------------


def test_the_combining_sentence_and_the_runs_table_wherever_a_total_appears(wizard, qtbot, tmp_path):
    from desktop.main_window import MainWindow

    controller = wizard.controller
    controller.load_data(str(wizard_notes(tmp_path)), "note", "id", "patient")
    key = controller.booking().key
    with Ledger() as ledger:
        ledger.charge(key, "run-one", "histogram", 0.4, 1e-5, "a first run")
        ledger.charge(key, "run-two", "histogram", 0.9, 1e-5, "a second run")
        spends = [run_spend(ledger, r) for r in ("run-one", "run-two")]
    expected = [f"ε = {s.epsilon:.3g}" for s in spends]
    walk_to_confirm(wizard, tmp_path, epsilon=4.0)
    for view in (wizard.budget_page.dataset_runs, wizard.confirm_page.dataset_runs):
        assert view.combining.text() == COMBINING_PLAIN and not view.isHidden()
        assert [row[0] for row in view.cell_texts()] == ["run-one", "run-two"]
        assert [row[2] for row in view.cell_texts()] == expected
    assert "Settings → Budgets" in wizard.budget_page.ledger.text()
    window = MainWindow(DesktopSettings())
    qtbot.addWidget(window)
    assert window.dataset_runs.combining.text() == COMBINING_PLAIN
    assert [row[2] for row in window.dataset_runs.cell_texts()] == expected  # the one dataset, shown at once
    dialog = window.show_budgets()
    qtbot.addWidget(dialog)
    assert dialog.budgets.runs_view.combining.text() == COMBINING_PLAIN
    assert [row[2] for row in dialog.budgets.runs_view.cell_texts()] == expected


# --- item 3: the certificate's first page ----------------------------------------------------------------


def test_permitted_use_is_chosen_on_the_confirm_page_and_printed_on_page_one(wizard, tmp_path):
    walk_to_confirm(wizard, tmp_path, epsilon=8.0)
    confirm = wizard.confirm_page
    assert confirm.permitted_use.currentData() == "internal"  # the default
    confirm.set_permitted_use("approved_researchers")
    assert wizard.controller.spec.output.permitted_use == "approved_researchers"
    assert wizard.controller.identity()["permitted_use"] == "approved_researchers"
    assert "keep the release internal" in confirm.permitted_advice.text()
    assert "wider than common guidance" in confirm.permitted_advice.text()
    run = finished_run(tmp_path / "runs" / "run-b", epsilon=8.0, n_documents=3)
    release = export_release(run, tmp_path / "release", wizard.controller.identity())
    first, _ = pages(release)
    assert "Permitted use" in first and "Approved researchers" in first
    assert "keep the release internal" in first and "wider than common guidance" in first
    assert "Weak protection" in first
    record = json.loads((run / "privacy_record.json").read_text(encoding="utf-8"))
    assert "permitted_use" not in json.dumps(record), "the privacy record holds only public facts of the run"


def test_permitted_use_comes_from_the_run_spec_when_the_export_does_not_say(tmp_path):
    run = finished_run(tmp_path / "runs" / "run-c", epsilon=0.8, n_documents=2)
    meta = json.loads((run / "run.json").read_text(encoding="utf-8"))
    meta["spec"]["output"]["permitted_use"] = "public"
    (run / "run.json").write_text(json.dumps(meta), encoding="utf-8")
    first, _ = pages(export_release(run, tmp_path / "release", {"custodian": "Dr. Ada"}))
    assert "<b>Public.</b>" in first and "Strong protection" in first and "wider than" not in first
    spec = RunSpec()
    assert spec.output.permitted_use == "internal"
    data = spec.to_dict()
    data["output"]["permitted_use"] = "everyone"
    with pytest.raises(PrivetError, match="permitted_use"):
        RunSpec.from_dict(data)


def test_parameters_of_stages_that_did_not_run_are_listed_apart(tmp_path):
    params = {"R": 24, "k": 80, "T": 70, "tau": 1.0, "refine": False, "text": "realised", "discover_phrases": True,
              "phrases_per_unit": 4, "realisation_tokens": 80, "self_filter": True, "min_topic_units": 37.4}
    assert parameters_not_used("dp_synrag", params) == ["k", "T", "tau"]
    assert parameters_not_used("dp_synrag", {**params, "text": "private"}) == ["realisation_tokens"]
    assert parameters_not_used("rpsg", params) == []
    run = finished_run(tmp_path / "runs" / "run-d", epsilon=4.0, n_documents=2, method_parameters=params)
    first, appendix = pages(export_release(run, tmp_path / "release", {}))
    main_table, unused = appendix.split("Not used in this run", 1)
    main_table = main_table[main_table.index("Method parameters"):]
    for name, meaning in (("T", "tokens (word pieces) written"), ("k", "private units used to write"),
                          ("tau", "sampling temperature")):
        assert meaning in unused and meaning not in main_table and meaning not in first, name
    assert "longest document the public writer wrote" in main_table  # realisation ran
    assert "(30000 entries," not in first + appendix


def test_the_vocabulary_note_closes_its_parenthesis():
    source = ROOT.joinpath("core", "methods", "dp_synrag", "method.py").read_text(encoding="utf-8")
    assert "({len(vocab.words)} entries)\"" in source
