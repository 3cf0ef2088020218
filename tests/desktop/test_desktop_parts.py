"""The desktop's small parts: guidance bands, hardware parsing, the internal check, the runner's
messages, the controller's spec files, the main window and its dialogs (fast, no child runs)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.helpers import write_notes

from core.common.errors import ModelError
from core.evaluation.internal_check import find_identifiers, private_identifiers
from core.ledger import Ledger
from core.specs.runspec import RunSpec
from desktop.budget_bands import band_for
from desktop.controller import WizardController
from desktop.hardware import parse_nvidia_smi
from desktop.launch_or_demo import has_display
from desktop.runner import crash_message, describe_failure
from desktop.settings import DesktopSettings
from desktop.wizard.budget_page import eps_to_slider, slider_to_eps


def notes(folder: Path) -> Path:
    return write_notes(folder, 30, note="Visit {i}: seen by Nurse Ottoline Brack for a cough.",
                       name=lambda i: f"Person{i:02d} Quellmark")


@pytest.mark.parametrize("eps, band", [(0.5, "green"), (1.0, "green"), (1.01, "amber"), (5.0, "amber"), (8, "red")])
def test_budget_bands(eps, band):
    assert band_for(eps).name == band


def test_slider_is_log_scaled_and_round_trips():
    assert slider_to_eps(0) == pytest.approx(0.1) and slider_to_eps(200) == pytest.approx(50.0)
    for eps in (0.1, 1.0, 4.0, 10.0, 50.0):
        assert slider_to_eps(eps_to_slider(eps)) == pytest.approx(eps, rel=0.04)


def test_parse_nvidia_smi():
    gpus = parse_nvidia_smi("0, NVIDIA H200, 143771\n1, NVIDIA A100-SXM4-80GB, 81920\ngarbage\n")
    assert [(g.index, g.name, g.memory_mb) for g in gpus] == [(0, "NVIDIA H200", 143771),
                                                            (1, "NVIDIA A100-SXM4-80GB", 81920)]
    assert "140 GiB" in gpus[0].label()


def test_internal_check_finds_person_values_and_rare_names():
    private = ["Alma Fenwick has a cough.", "Seen by Doctor Who. Alma Fenwick again.", "Nothing here."]
    ids = private_identifiers(private, ["Zed Quorra", "Al"])
    assert {"Zed Quorra", "Alma Fenwick", "Doctor Who"} <= ids and "Al" not in ids
    check = find_identifiers(ids, ["A note about alma fenwick.", "Zed Quorra and Alma Fenwick.", "nothing"])
    assert check.found[0] == ("Alma Fenwick", 2) and ("Zed Quorra", 1) in check.found
    assert check.n_found == 2 and check.n_identifiers == len(ids)


def test_runner_messages_are_readable():
    message, resumable = describe_failure(ModelError("The model folder /x is missing.", "Choose another."))
    assert message.startswith("The model folder /x is missing.") and resumable
    assert "out of memory" in describe_failure(MemoryError())[0]
    assert "signal 9" in crash_message(-9, hard_stopped=False)["message"]
    assert crash_message(-15, hard_stopped=True)["type"] == "cancelled"
    assert "exit code 3" in crash_message(3, hard_stopped=False)["message"]


def test_has_display():
    assert not has_display({"QT_QPA_PLATFORM": "offscreen", "DISPLAY": ":0"})
    assert has_display({"DISPLAY": ":0"}) and has_display({"WAYLAND_DISPLAY": "wayland-0"})
    assert not has_display({})


def test_settings_round_trip(privet_home):
    DesktopSettings(custodian="Dr. Ada", organisation="Clinic").save()
    loaded = DesktopSettings.load()
    assert loaded.identity() == {"custodian": "Dr. Ada", "organisation": "Clinic", "irb_protocol": ""}


def test_controller_loads_data_and_saves_and_opens_specs(tmp_path):
    controller = WizardController()
    summary = controller.load_data(str(notes(tmp_path)), "note", "id", "patient")
    assert (summary.n_units, summary.unit_kind) == (30, "person") and len(summary.fingerprint) == 64
    assert "one person" in controller.unit_description()
    controller.spec.privacy.epsilon = 3.5
    controller.spec.output.folder = str(tmp_path / "release")
    path = controller.save_spec(tmp_path / "run.toml")
    other = WizardController()
    spec = other.open_spec(path)
    assert spec.privacy.epsilon == 3.5 and other.summary == summary
    assert RunSpec.load(path).data.person_column == "patient"
    exported = other.run_spec_dict()["output"]
    assert exported["export_at_end"] is False and exported["folder"] == other.spec.output.folder  # the wizard exports
    plan = other.plan()
    assert plan.rho_total > 0 and plan.stages
    check = other.internal_check(["Person07 Quellmark met Ottoline Brack."])
    assert check.found == [("Person07 Quellmark", 1)]  # the nurse is in every unit: not identifying


def test_ledger_status_shows_spent_budget_and_cap(tmp_path):
    controller = WizardController()
    controller.load_data(str(notes(tmp_path)), "note", "id", "")
    assert controller.ledger_status().spent_rho == 0.0
    Ledger().charge(controller.booking().key, "run-1", "histogram", 0.25, 1e-4, "test charge")  # as a run books it
    controller.set_cap(8.0, 1e-4)
    status = controller.ledger_status()  # the ledger's one total, at the cap's δ
    assert status.dataset_name == "notes.csv"
    assert status.spent_rho == pytest.approx(0.25) and status.n_entries == 1
    assert (status.cap_epsilon, status.cap_delta) == (8.0, 1e-4) and status.spent_epsilon > 0.25
    assert "cap" in controller.budget_problem(100.0, 1e-4).lower()


def test_main_window_lists_the_ledger_and_verify_dialog_reports_problems(qtbot, tmp_path):
    from desktop.main_window import MainWindow

    controller = WizardController()
    summary = controller.load_data(str(notes(tmp_path)), "note", "id", "")
    Ledger().charge(summary.fingerprint, "run-1", "histogram", 0.25, 1e-4, "test charge")
    window = MainWindow(DesktopSettings())
    qtbot.addWidget(window)
    assert [b.fingerprint for b in window.budgets()] == [summary.fingerprint]
    assert window.ledger.item(0, 3).text() == "1"  # runs
    assert summary.fingerprint in window.ledger.item(0, 1).toolTip()
    dialog = window.show_verify()
    dialog.folder.setText(str(tmp_path))
    assert not dialog.verify() and "Not verified" in dialog.result.text()
    settings = window.show_settings()
    assert "keyring" in settings.keyring.text().lower()
    settings.custodian.setText("Dr. Ada")
    settings.accept()
    assert DesktopSettings.load().custodian == "Dr. Ada"


def test_launch_without_a_display_runs_the_headless_demo(monkeypatch):
    import desktop.launch_or_demo as launch

    calls = []
    monkeypatch.setattr("core.cli.main", lambda argv: calls.append(argv) or 0)
    monkeypatch.setattr(launch, "has_display", lambda: False)
    assert launch.main([]) == 0
    assert calls[0][0] == "run" and calls[0][1].endswith("demo/demo_run.toml") and "--output" in calls[0]


def test_models_folder_setting_reaches_the_core_model_listing(privet_home, tmp_path, monkeypatch):
    from core.models.sources import user_models_dir

    monkeypatch.delenv("PRIVET_MODELS_DIR", raising=False)
    assert user_models_dir() == privet_home / "models"
    settings = DesktopSettings(models_folder=str(tmp_path / "my-models"))
    settings.apply_to_environment()
    try:
        assert user_models_dir() == tmp_path / "my-models"
    finally:
        DesktopSettings().apply_to_environment()
    assert user_models_dir() == privet_home / "models"


def test_topic_names_box_relays_lists_and_phrase_discovery(qtbot):
    from desktop.wizard.topic_names import TRADE_OFF, TopicNamesBox

    box = TopicNamesBox()
    qtbot.addWidget(box)
    spec = RunSpec()
    spec.dp_synrag.domain_lists = ["/somewhere/own_list.txt"]
    box.load(spec)
    assert box.discover.isChecked()  # on by default
    assert "icd10-cm" in box.lists and not box.lists["icd10-cm"].isChecked()
    box.lists["icd10-cm"].setChecked(True)
    box.discover.setChecked(False)
    box.store(spec)
    assert spec.dp_synrag.domain_lists == ["/somewhere/own_list.txt", "icd10-cm"]  # a path list is kept
    assert spec.dp_synrag.discover_phrases is False
    assert "no privacy budget" in TRADE_OFF and "costs a share of the budget" in TRADE_OFF


class _FakeProcess:
    """Stands in for a child process: records what the relay asks of it."""

    def __init__(self) -> None:
        self.finished = False
        self.cancel_requested = False
        self.hard_stopped = False
        self.run_dir = None

    def request_cancel(self) -> None:
        self.cancel_requested = True

    def hard_stop(self) -> None:
        self.hard_stopped = True
        self.finished = True

    def poll(self) -> list:
        return []


def test_a_cancel_grace_period_never_stops_the_run_started_after_it(qtbot):
    from desktop.relay import RunRelay

    relay = RunRelay(grace_ms=50)
    first, resumed = _FakeProcess(), _FakeProcess()
    relay._process = first
    relay.cancel()
    assert first.cancel_requested
    first.finished = True  # the child stopped at its next check
    relay._process = resumed  # ... and the officer pressed Resume at once
    qtbot.wait(300)
    assert not resumed.hard_stopped  # the first run's grace timer leaves the resumed run alone
    stubborn = _FakeProcess()
    relay._process = stubborn
    relay.cancel()
    qtbot.waitUntil(lambda: stubborn.hard_stopped, timeout=5_000)  # a child that ignores the request is stopped
