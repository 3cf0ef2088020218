"""Issue 25: the wizard and the certificate as a privacy officer and an IRB reviewer read them.

Honest time (the time left counts down and is refined), one voice for ε (never reassuring above the
moderate band), one figure for how many units a topic needs, the empty-release question, the export
folder kept through a resume, the public-key export, the Help menu and the first-start panel. Fast:
no child process (the run page is fed events directly, with a fake clock).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from tests.helpers import tiny_controller, wizard_notes

from core.certificate.build import rare_topics_words
from core.certificate.privacy_record import PrivacyRecord
from core.ledger import Ledger
from core.privacy.conversion import eps_to_rho, rho_to_eps
from core.certificate.signing import load_public_key_pem, load_signing_key, public_key_fingerprint
from core.run.calibration import calibration_key, load_calibration, save_calibration
from core.run.estimate import Estimate, EtaTracker, estimate
from core.common.wording import BANDS, band_of, guarantee_words
from core.specs.runspec import ModelChoice, RunSpec
from desktop.controller import WizardController
from desktop.settings import DesktopSettings
from desktop.wizard import RunWizard


@pytest.fixture
def wizard(qtbot):
    wiz = RunWizard(tiny_controller(), gpus=[], grace_ms=3000)
    qtbot.addWidget(wiz, before_close_func=lambda w: w.relay.shutdown())
    yield wiz
    wiz.relay.shutdown()


def finished_run(folder: Path, epsilon: float, n_documents: int, **record: object) -> Path:
    """A run folder as the pipeline leaves it: synthetic.jsonl, privacy_record.json, run.json."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = "".join(json.dumps({"id": f"s{i}", "text": f"synthetic document {i}"}) + "\n" for i in range(n_documents))
    (folder / "synthetic.jsonl").write_text(lines, encoding="utf-8")
    rho = eps_to_rho(epsilon, 1e-6)  # a record the ledger confirms (export refuses any other)
    fields = dict(run_id=folder.name, method="dp_synrag", dataset_fingerprint="ab" * 32, epsilon_target=epsilon,
                  delta=1e-6, rho_total=rho, epsilon_tight=epsilon, epsilon_loose=rho_to_eps(rho, 1e-6, "loose"),
                  stages=[{"stage": "all", "mechanism": "zCDP composition", "rho": rho, "count": 1,
                           "parallel": False, "parameters": {}, "description": "all stages"}],
                  method_parameters={"R": 24, "self_filter": True, "min_topic_units": 37.4},
                  started_at="2026-12-01T10:00:00+00:00")
    fields.update(record)
    PrivacyRecord(**fields).save(folder)  # type: ignore[arg-type]
    with Ledger() as ledger:
        ledger.charge("ab" * 32, folder.name, "all", float(fields["rho_total"]), 1e-6, "all stages")  # type: ignore[arg-type]
    spec = RunSpec()
    (folder / "run.json").write_text(json.dumps({"run_id": folder.name, "spec": spec.to_dict(),
                                                 "started_at": "2026-12-01T10:00:00+00:00"}), encoding="utf-8")
    return folder


# --- one voice for the guarantee -------------------------------------------------------------------------


@pytest.mark.parametrize("eps", [0.3, 1.0, 1.5, 4.0, 5.0, 5.01, 8.0, 14.1, 20.0, 25.0, 80.0, 1e9])
def test_only_the_strong_band_says_reveals_little_and_nothing_above_moderate_reassures(eps):
    words = guarantee_words(eps, 1e-6, "person")
    text = " ".join((words.headline, words.advice, words.meaning))
    assert ("reveals little" in text) == (eps <= 1.0)
    if eps > 5.0:
        assert not words.reassuring and ("weak" in text.lower() or "no meaningful" in text.lower())
        assert "protects" not in text.replace("Do not describe this release as protecting", "")
    assert "inf" not in text and "person" in words.meaning
    assert words.band == band_of(eps) and words.band in BANDS


def test_delta_is_explained_in_one_sentence():
    sentence = guarantee_words(4.0, 1e-6).delta
    assert "1e-06" in sentence and sentence.count(".") <= 2 and "chance" in sentence


def test_review_page_never_says_reveals_little_above_the_weak_band(wizard, tmp_path):
    review = wizard.review_page
    for eps, little in ((0.8, True), (14.1, False), (40.0, False)):
        run = finished_run(tmp_path / f"run-{eps}", eps, 8)
        wizard.run_page.result = {"run_dir": str(run), "synthetic_path": str(run / "synthetic.jsonl"),
                                  "n_synthetic": 8}
        review.initializePage()
        heading = review.guarantee.text()
        assert f"ε = {eps:.3g}" in heading
        assert ("reveals little" in heading) == little, heading
        if not little:
            assert "weak" in heading.lower() or "no meaningful" in heading.lower()


def test_certificate_and_budget_page_speak_with_the_same_words(wizard):
    from core.certificate.build import plain_summary

    record = PrivacyRecord(run_id="r", method="dp_synrag", dataset_fingerprint="ab" * 32, epsilon_tight=14.1,
                           delta=1e-6)
    certificate = " ".join(plain_summary(record))
    words = guarantee_words(14.1, 1e-6, "document")
    assert words.meaning in certificate and "reveals little" not in certificate
    wizard.budget_page.set_epsilon(14.1)
    assert "Weak protection" in wizard.budget_page.band.text()
    assert "reveals little" not in wizard.budget_page.meaning.text()
    assert "chance" in wizard.budget_page.delta_meaning.text()


def test_one_figure_for_how_many_units_a_topic_needs(wizard, tmp_path):
    controller = wizard.controller
    controller.load_data(str(wizard_notes(tmp_path)), "note", "id", "patient")
    figure = controller.topic_units()
    plan = controller.plan()
    assert figure is not None and figure == plan.derived["min_topic_units"] > 0
    wizard.task_page.initializePage()
    assert f"about {figure:.0f} or more people or documents" in wizard.task_page.count_note.text()
    assert f"about {figure:.0f} or more" in rare_topics_words(figure, "person")
    guidance = [w for w in plan.warnings if "topic" in w.lower() and "mentioned" in w]
    assert all(f"about {figure:.0f} or more" in w for w in guidance), guidance


def test_budget_rationale_is_kept_and_printed_on_the_certificate(wizard, tmp_path):
    from tests.certificate.test_certificate import make_record

    from core.certificate import build_certificate, render_html

    page = wizard.budget_page
    page.initializePage()
    page.rationale.setPlainText("  ε = 4 as agreed with the IRB for internal analysis  ")
    page.store()
    assert wizard.controller.spec.privacy.rationale == "ε = 4 as agreed with the IRB for internal analysis"
    assert RunSpec.from_dict(wizard.controller.spec.to_dict()).privacy.rationale.startswith("ε = 4 as agreed")
    out = tmp_path / "synthetic.jsonl"
    out.write_text('{"text": "a"}\n', encoding="utf-8")
    record = make_record(budget_rationale="ε = 4 as agreed with the IRB")
    cert = build_certificate(record, [out], {}, None, signing_key=load_signing_key())
    assert cert["budget_rationale"] == "ε = 4 as agreed with the IRB"
    html = render_html(cert)
    assert html.index("Why this budget was chosen") < html.index("ε = 4 as agreed") < html.index("Technical appendix")
    empty = render_html(build_certificate(make_record(), [out], {}, None, signing_key=load_signing_key()))
    assert "No reason was recorded" in empty


# --- the certificate an IRB reads ------------------------------------------------------------------------


def test_every_parameter_of_every_method_has_a_meaning_on_the_certificate():
    from core.certificate.render import HIDDEN_PARAMETERS, PARAMETER_MEANINGS
    from core.methods.registry import get as get_method

    missing = {}
    for method in ("dp_synrag", "dp_synth", "rpsg", "aug_pe"):
        spec = RunSpec(method=method)
        adapter = get_method(method)
        summary = adapter.plan_summary(spec, 1e-6, 500)
        params = adapter.parameters(spec, summary)
        gaps = [k for k in params if k not in HIDDEN_PARAMETERS and not PARAMETER_MEANINGS.get(k)]
        if gaps:
            missing[method] = gaps
    assert not missing


@pytest.mark.skipif(shutil.which("pdftotext") is None, reason="needs pdftotext (poppler-utils)")
def test_pdf_page_one_is_the_summary_and_tables_do_not_break_words(tmp_path):
    from tests.certificate.test_certificate import make_record

    from core.certificate import build_certificate, render_html, render_pdf
    from core.certificate.render import pdf_page_count

    out = tmp_path / "synthetic.jsonl"
    out.write_text('{"text": "a"}\n', encoding="utf-8")
    stages = [{"stage": "private_prediction", "mechanism": "gaussian_private_prediction", "rho": 2.5, "count": 24,
               "parallel": True, "parameters": {}, "description": "synthetic text per cluster"}]
    record = make_record(stages=stages, method_parameters={"K": 8, "R": 24, "cluster_keywords_fraction": 0.4},
                         rho_total=2.5)
    cert = build_certificate(record, [out], {"custodian": "A. Custodian", "irb_protocol": "IRB-7"}, None,
                             signing_key=load_signing_key())
    pdf = tmp_path / "certificate.pdf"
    render_pdf(render_html(cert), pdf)

    def page(n: int, last: int | None = None) -> str:
        text = subprocess.run(["pdftotext", "-f", str(n), "-l", str(last or n), "-layout", str(pdf), "-"],
                              capture_output=True, text=True, check=True).stdout
        return " ".join(text.split())

    first = page(1)
    order = ["What was released", "In plain words", "Unit of privacy", "What is not covered", "Who signed",
             "How to verify"]
    position = 0
    for heading in order:  # the headings in this order (a heading's words may also appear in the prose)
        position = first.index(heading, position) + len(heading)
    assert "A. Custodian" in first and "IRB-7" in first and "privet verify" in first
    assert "Technical appendix" not in first and page(2).startswith("Technical appendix")
    everything = page(2, pdf_page_count(pdf.read_bytes()))
    assert "Writing synthetic" in everything  # the stage by its plain name, wrapped between whole words
    assert not re.search(r"predictio\s+n|gaussia\s+n", everything)
    assert "cluster_keywords_fraction" in everything


# --- honest time -------------------------------------------------------------------------------------------


def test_time_left_counts_down_within_a_stage_during_a_fake_run(wizard):
    page = wizard.run_page
    now = [0.0]
    page.tracker = EtaTracker(Estimate([("models", 10.0), ("private_prediction", 100.0)], "test"),
                              clock=lambda: now[0])
    page.state = "running"
    shown = []
    for kind, stage, t, extra in (("stage_start", "models", 0.0, {}), ("stage_end", "models", 10.0, {}),
                                  ("stage_start", "private_prediction", 11.0, {}),
                                  ("progress", "private_prediction", 30.0, {"done": 0, "total": 8, "fraction": 0.2})):
        now[0] = t
        page.on_event({"kind": kind, "stage": stage, "done": 0, "total": 8, **extra})
        shown.append(page.time_left_s())
    for t in (35.0, 45.0, 60.0):  # no event: one group of eight, all finishing together, writes tokens
        now[0] = t
        page.show_time_left()
        shown.append(page.time_left_s())
    assert all(b <= a for a, b in zip(shown, shown[1:])), shown
    assert shown[-4] > shown[-3] > shown[-2] > shown[-1], "between events the time left counts down"
    assert "left" in page.overall.text() and "refined" in page.overall.text()
    now[0] = 90.0
    page.on_event({"kind": "stage_end", "stage": "private_prediction", "done": 8, "total": 8})
    page.on_event({"kind": "done", "stage": "run"})
    assert page.time_left_s() == 0.0


def test_early_in_a_stage_the_plan_counts_and_later_its_own_rate_alone():
    now = [0.0]
    tracker = EtaTracker(Estimate([("private_prediction", 100.0), ("self_filter", 50.0)], "t"), clock=lambda: now[0])
    tracker.update({"kind": "stage_start", "stage": "private_prediction", "done": 0, "total": 20})
    now[0] = 10.0
    tracker.update({"kind": "progress", "stage": "private_prediction", "done": 0, "total": 20, "fraction": 0.05})
    # 5 % done in 10 s: the rate says 200 s, the plan 100 s; halfway to trusting the rate: 150 s, 10 s spent
    assert tracker.stage_remaining_s("private_prediction") == pytest.approx(140.0)
    now[0] = 100.0
    tracker.update({"kind": "progress", "stage": "private_prediction", "done": 5, "total": 20, "fraction": 0.25})
    assert tracker.stage_remaining_s("private_prediction") == pytest.approx(300.0), "400 s at its own rate"
    assert tracker.stage_remaining_s("self_filter") == pytest.approx(200.0), "the slowness carries to what follows"


def test_after_a_resume_stages_done_before_count_as_done():
    now = [0.0]
    tracker = EtaTracker(Estimate([("models", 10.0), ("keywords", 50.0), ("private_prediction", 100.0)], "t"),
                         clock=lambda: now[0])
    tracker.update({"kind": "stage_start", "stage": "private_prediction"})  # resumed: keywords were checkpointed
    assert tracker.remaining_s() == pytest.approx(100.0)
    now[0] = 40.0
    assert tracker.remaining_s() == pytest.approx(60.0), "it counts down without events"


def test_a_stage_with_fewer_groups_than_planned_is_priced_by_its_real_count():
    now = [0.0]
    tracker = EtaTracker(Estimate([("private_prediction", 240.0)], "t", [("private_prediction", 120.0)],
                                  {"private_prediction": 24.0}), clock=lambda: now[0])
    tracker.update({"kind": "stage_start", "stage": "private_prediction", "done": 0, "total": 6})
    assert tracker.remaining_s() == pytest.approx(60.0), "6 topics cleared the noise, not 24"
    now[0] = 100.0
    tracker.update({"kind": "stage_end", "stage": "private_prediction", "done": 6, "total": 6})
    assert tracker.stage_factors() == {"private_prediction": pytest.approx(100.0 / 30.0)}


def test_loading_the_models_does_not_scale_the_compute_estimate():
    now = [0.0]
    tracker = EtaTracker(Estimate([("models", 5.0), ("private_prediction", 100.0)], "t"), clock=lambda: now[0])
    tracker.update({"kind": "stage_start", "stage": "models"})
    now[0] = 25.0  # a slow start-up: five times the estimate
    tracker.update({"kind": "stage_end", "stage": "models"})
    assert tracker.remaining_s() == pytest.approx(100.0)


def test_calibration_is_per_model_and_per_stage():
    spec = RunSpec()
    spec.dp_synrag.text = "private"  # a plan with a token stage: its calibration is per stage
    tiny = RunSpec()
    tiny.llm = ModelChoice(source="tiny-random")
    assert calibration_key(spec) != calibration_key(tiny)
    before = dict(estimate(spec, 600, calibrate=False).stages)
    save_calibration(calibration_key(spec), 2.0, {"private_prediction": 0.5})
    after = estimate(spec, 600)
    assert dict(after.stages)["private_prediction"] == pytest.approx(0.5 * before["private_prediction"])
    assert dict(after.stages)["keywords"] == pytest.approx(2.0 * before["keywords"])
    assert dict(after.raw) == pytest.approx(before)
    assert dict(estimate(tiny, 600).stages) == pytest.approx(dict(estimate(tiny, 600, calibrate=False).stages))
    assert "earlier runs with this model" in after.basis
    save_calibration(calibration_key(spec), 1.5, {"keywords": 3.0})
    stored = load_calibration(calibration_key(spec))
    assert stored is not None and stored.stages == {"private_prediction": 0.5, "keywords": 3.0}
    # a run's speed moves with its draw: what is remembered is the geometric mean of the earlier factor and this one's
    assert stored.factor == pytest.approx((2.0 * 1.5) ** 0.5)
    save_calibration(calibration_key(spec), 1.5, {"private_prediction": 2.0})
    stored = load_calibration(calibration_key(spec))
    assert stored is not None and stored.stages["private_prediction"] == pytest.approx(1.0)


def test_model_page_shows_no_time_before_the_task_settings_are_known(wizard, tmp_path):
    wizard.controller.load_data(str(wizard_notes(tmp_path)), "note", "id", "patient")
    wizard.model_page.initializePage()
    text = wizard.model_page.estimate.text()
    assert "Confirm page" in text and not re.search(r"about \d+ (seconds|minutes)", text)


# --- no empty release without a question --------------------------------------------------------------------


def test_an_empty_release_asks_before_exporting(wizard, tmp_path):
    run = finished_run(tmp_path / "runs" / "20261201-empty", 4.0, 0)
    wizard.run_page.result = {"run_dir": str(run), "synthetic_path": str(run / "synthetic.jsonl"), "n_synthetic": 0}
    review = wizard.review_page
    review.initializePage()
    assert "no synthetic documents" in review.message.text() and "Why:" in review.message.text()
    asked: list[str] = []
    review.ask_about_small_release = lambda problem: asked.append(problem) or False
    review.out_dir.setText(str(tmp_path / "release"))
    assert review.export() is None and asked and "about 37 units" in asked[0]
    assert not (tmp_path / "release").exists()
    review.ask_about_small_release = lambda problem: True
    out = review.export()
    assert out is not None and (out / "certificate.json").is_file()


def test_very_few_documents_of_those_asked_for_are_asked_about_too(wizard, tmp_path):
    few = finished_run(tmp_path / "runs" / "20261201-few", 4.0, 1)  # R = 24 asked for
    size = wizard.controller.release_size(few)
    assert not size.empty and "only 1 synthetic document of the up to 24" in size.problem
    rewrites = finished_run(tmp_path / "runs" / "20261201-rpsg", 4.0, 1, method="rpsg", end_to_end_dp=False)
    assert wizard.controller.release_size(rewrites).problem == "", "RPSG asks for no number of documents"


def test_a_full_release_is_exported_without_a_question(wizard, tmp_path):
    run = finished_run(tmp_path / "runs" / "20261201-full", 4.0, 12)
    wizard.run_page.result = {"run_dir": str(run), "synthetic_path": str(run / "synthetic.jsonl"), "n_synthetic": 12}
    review = wizard.review_page
    review.initializePage()
    review.ask_about_small_release = lambda problem: pytest.fail("asked about a release of 12 documents")
    review.out_dir.setText(str(tmp_path / "release"))
    assert review.export() is not None


def test_privet_export_refuses_an_empty_release_without_the_flag(tmp_path, capsys):
    from core.cli import main

    run = finished_run(tmp_path / "run-empty", 4.0, 0)
    assert main(["export", str(run), str(tmp_path / "out")]) != 0
    assert "no synthetic documents" in capsys.readouterr().err and not (tmp_path / "out").exists()
    assert main(["export", str(run), str(tmp_path / "out"), "--allow-empty"]) == 0
    assert (tmp_path / "out" / "certificate.json").is_file() and "Note:" in capsys.readouterr().out


# --- export folder through a resume; public key; first start ---------------------------------------------------


def test_the_export_folder_chosen_in_the_wizard_is_kept_after_a_resume(tmp_path):
    controller = WizardController()
    controller.load_data(str(wizard_notes(tmp_path)), "note", "id", "patient")
    chosen = tmp_path / "releases for the IRB"
    controller.spec.output.folder = str(chosen)
    run_dir = tmp_path / "runs" / "20261201-abcd1234"
    run_dir.mkdir(parents=True)
    (run_dir / "run.json").write_text(json.dumps({"spec": controller.run_spec_dict()}), encoding="utf-8")
    resumed = WizardController.for_run(run_dir)
    assert resumed.export_folder(run_dir.name) == chosen / run_dir.name
    assert resumed.run_spec_dict()["output"]["export_at_end"] is False, "the child still does not export itself"
    fresh = WizardController()
    assert fresh.export_folder("r1").is_absolute(), "no relative privet-output/ folder"


def test_settings_export_the_public_key_for_the_irb(qtbot, tmp_path):
    from desktop.dialogs import SettingsDialog

    dialog = SettingsDialog(DesktopSettings())
    qtbot.addWidget(dialog)
    target = tmp_path / "public_key.pem"
    assert dialog.export_public_key(target)
    key = load_signing_key()
    assert public_key_fingerprint(load_public_key_pem(target.read_bytes())) == public_key_fingerprint(key.public_key)
    assert str(target) in dialog.export_key_result.text()
    assert not dialog.export_public_key(tmp_path / "no such folder" / "key.pem")
    assert "could not be written" in dialog.export_key_result.text()


def test_help_menu_getting_started_demo_and_status_line(qtbot, tmp_path):
    from core.common.paths import data_dir
    from desktop.main_window import DEMO_CORPUS, MainWindow
    from core.common.paths import resources_dir

    window = MainWindow(DesktopSettings())
    qtbot.addWidget(window)
    titles = [a.text().replace("&", "") for a in window.help_menu.actions()]
    assert "Getting started" in titles and "Try with the demo corpus" in titles
    assert (resources_dir() / DEMO_CORPUS).is_file() and str(resources_dir() / DEMO_CORPUS) in window.help_text()
    assert "three steps" in window.help_text().lower()
    assert window.start_box.isVisibleTo(window), "a first start greets with the getting-started panel"
    wizard = window.try_demo()
    try:
        assert wizard.controller.spec.data.path.endswith("notes.csv") and wizard.controller.data_loaded
    finally:
        wizard.relay.shutdown()
    long = "The run goes on in the background; " * 6
    window.show_status(long)
    assert window.status.wordWrap() and window.status_text() == long
    wizard.relay.succeeded.emit({"run_dir": str(tmp_path), "synthetic_path": "", "n_synthetic": 0})
    assert window.status_text() == "", "the status line clears when a run ends"
    assert data_dir().is_dir()


def test_runs_are_listed_newest_first(tmp_path):
    from core.common.paths import data_dir
    from desktop.overview import recent_runs

    for name, started in (("20261201-ffffffff", "2026-12-01T09:00:00+00:00"),
                          ("20261201-00000000", "2026-12-01T11:00:00+00:00"),
                          ("20261130-99999999", "2026-11-30T23:00:00+00:00")):
        folder = data_dir() / "runs" / name
        folder.mkdir(parents=True)
        (folder / "run.json").write_text(json.dumps({"run_id": name, "started_at": started, "spec": {}}))
    assert [r.run_id for r in recent_runs()] == ["20261201-00000000", "20261201-ffffffff", "20261130-99999999"]
    empty = finished_run(data_dir() / "runs" / "20261201-11111111", 4.0, 0)
    assert {r.run_id: r.status for r in recent_runs()}[empty.name] == "finished, no documents"


def test_instructions_are_not_in_the_error_colour(wizard, tmp_path):
    from desktop.wizard.common import ERROR_STYLE

    page = wizard.data_page
    page.initializePage()
    assert not page.isComplete()
    assert "Choose a folder" in page.message.text() and page.message.styleSheet() != ERROR_STYLE
    page.path.setText(str(tmp_path / "missing.csv"))
    page.load()
    page.isComplete()
    assert page.message.styleSheet() == ERROR_STYLE, "a real error stays red"


def test_default_task_names_the_collection_and_reads_as_a_task(tmp_path):
    controller = WizardController()
    controller.load_data(str(wizard_notes(tmp_path)), "note", "id", "patient")
    assert "“notes”" in controller.spec.task and "documents in notes." not in controller.spec.task
