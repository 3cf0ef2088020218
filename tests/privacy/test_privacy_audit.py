"""Regression tests for the privacy audit (issue 11): one section per finding, each failing on the old code."""

from __future__ import annotations

import json
import multiprocessing
import re
from pathlib import Path

import pytest
from tests.helpers import CANARY, ROOT, tiny_spec
from tests.certificate.test_certificate import make_record

from core.corpus import dataset_fingerprint
from core.common.errors import BudgetError, Cancelled, PrivetError
from core.ledger import Ledger
from core.run.pipeline import RUN_FILE, load_spec_corpus, plan, register_dataset, run_pipeline
from core.common.progress import CallbackReporter


def charges(ledger: Ledger, key: str | None = None) -> list[dict]:
    return [e for e in ledger.entries(key) if e["kind"] == "charge"]


def cancelled_run(spec, run_dir: Path) -> None:
    """Run ``spec`` and cancel it as soon as private prediction is charged (histogram and retrieval are done)."""
    state = {"cancel": False}

    def on_event(event):
        if event.stage == "private_prediction" and event.kind == "charged":
            state["cancel"] = True

    with pytest.raises(Cancelled):
        run_pipeline(spec, CallbackReporter(on_event, lambda: state["cancel"]), run_dir=run_dir)


# --- 1, 2, 4, 5 and 8 on one interrupted run (each pipeline run costs tens of seconds on 2 cores) ----------


def test_interrupted_run_resumes_only_under_its_own_settings_and_is_certified_as_charged(tmp_path, privet_home):
    from desktop import runner

    spec = tiny_spec(tmp_path)  # R=5 groups, L=2, T=6; 40 units
    run_dir = tmp_path / "run"
    cancelled_run(spec, run_dir)
    ledger = Ledger()
    before = charges(ledger)
    meta = json.loads((run_dir / RUN_FILE).read_text())
    assert {"spec_canonical", "method", "dataset_fingerprint", "dataset_id"} <= set(meta)

    # Item 1: checkpoints are kept per method (DP-Synth and DP-SynRAG never share one).
    assert (run_dir / "checkpoints" / "dp_synrag" / "histogram.json").is_file()
    assert not (run_dir / "checkpoints" / "histogram.json").exists()

    # Item 1, the audit's reproduction: resume with ε=1 after an ε=10 start is refused, nothing charged.
    lower = tiny_spec(tmp_path)
    lower.privacy.epsilon = 1.0
    with pytest.raises(PrivetError) as info:
        run_pipeline(lower, run_dir=run_dir, resume=True, consent=lambda quote: True)
    assert "privacy.epsilon" in info.value.user_message() and "new run" in info.value.user_message()
    # ... and so are another method and other data.
    other = tiny_spec(tmp_path)
    other.method = "dp_synth"
    with pytest.raises(PrivetError, match="method"):
        run_pipeline(other, run_dir=run_dir, resume=True, consent=lambda quote: True)
    data = Path(spec.data.path)
    original = data.read_text(encoding="utf-8")
    data.write_text(original + "n99,Patient 99,one more note about a cough\n", encoding="utf-8")
    with pytest.raises(PrivetError, match="not the data it started with"):
        run_pipeline(spec, run_dir=run_dir, resume=True, consent=lambda quote: True)
    data.write_text(original, encoding="utf-8")
    # The wizard's Resume (also after Back) runs this same core function in its child process.
    source = Path(runner.__file__).read_text(encoding="utf-8")
    assert 'run_pipeline(spec, reporter, run_dir=Path(request["run_dir"]), resume=request["resume"],' in source

    # Item 1: a run folder from before this change (no recorded spec) is not resumed.
    old_dir = tmp_path / "old-run"
    old_dir.mkdir()
    (old_dir / RUN_FILE).write_text(json.dumps({"run_id": meta["run_id"], "started_at": meta["started_at"]}))
    with pytest.raises(PrivetError, match="earlier version"):
        run_pipeline(spec, run_dir=old_dir, resume=True, consent=lambda quote: True)

    # Item 1/2: the cap is checked again on resume (here a redraw is needed and the cap was lowered).
    hist = run_dir / "checkpoints" / "dp_synrag" / "histogram.json"
    saved = hist.read_text()
    hist.unlink()  # as after a crash in the middle of the histogram stage
    ledger.set_cap(meta["dataset_id"], ledger.summary(meta["dataset_id"], 1e-3).spent_epsilon * 1.001, 1e-3)  # no room
    with pytest.raises(BudgetError):
        run_pipeline(spec, run_dir=run_dir, resume=True, consent=lambda quote: True)
    hist.write_text(saved)
    ledger.set_cap(meta["dataset_id"], 100.0, 1e-3)
    assert len(charges(ledger)) == len(before)  # no refused attempt charged anything

    # Item 5: as if four of the five groups had finished before the interruption. Only the output
    # folder and memory settings change, which a resume allows.
    (run_dir / "checkpoints" / "dp_synrag" / "private_prediction.json").write_text(
        json.dumps({str(g): f"synthetic text {g}" for g in range(4)}))
    spec.output.folder = str(tmp_path / "elsewhere")
    spec.writing.batch_rows = 3
    result = run_pipeline(spec, run_dir=run_dir, resume=True, consent=lambda quote: True)
    assert result.export_dir == tmp_path / "elsewhere"
    new = charges(ledger)[len(before):]
    assert [r["stage"] for r in new] == ["private_prediction"]
    tokens = next(r for r in before if r["stage"] == "private_prediction")["rho"]
    assert new[0]["rho"] == pytest.approx(tokens / spec.dp_synrag.L)  # min(L, 1 redrawn) groups, not L
    record = result.record
    charged = ledger.run_rho(record.dataset_id, record.run_id)
    assert record.rho_total == pytest.approx(charged, rel=1e-9)
    assert sum(s["rho"] for s in record.stages) == pytest.approx(charged, rel=1e-9)
    assert any("redrawn after resume" in s["stage"] for s in record.stages)
    cert_doc = (result.export_dir / "certificate.json").read_text(encoding="utf-8")
    cert = json.loads(cert_doc)["certificate"]
    assert cert["budget_history"]["ledger_matches_record"] is True
    assert cert["budget_history"]["cumulative_rho"] == pytest.approx(ledger.spent_rho(record.dataset_id))
    assert any("resumed" in note for note in cert["scope_and_hazards"])

    # Item 3: δ is the public default, not a function of the 40 units (the old rule gave 1e-3).
    assert record.delta == 1e-6

    # Item 4: dates only in the export; the exact start time stays in the private run folder.
    time_of_day = re.compile(r"\d{2}:\d{2}:\d{2}")
    assert not time_of_day.search(cert_doc)
    assert not time_of_day.search((result.export_dir / "certificate.html").read_text(encoding="utf-8"))
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", cert["created_on"])
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", cert["identity"]["run_date"])
    assert time_of_day.search(meta["started_at"])

    # Item 8: the embedder is recorded as the embedder, not with the language model's name and hash.
    llm, embedder = record.models
    assert embedder["role"] == "embedder" and embedder["backend"] == "hashing"
    assert embedder["name"] == "tiny-random-hashing" and embedder["sha256"] != llm["sha256"]

    # Nothing private in the new fields: no canary, and the default dataset name (a file name) stays home.
    exported = b"".join(p.read_bytes() for p in result.export_dir.iterdir())
    assert CANARY.encode() not in exported and b"notes.csv" not in exported
    assert CANARY.encode() not in (privet_home / "ledger.db").read_bytes()

    # Item 2: dropping one row gives a new fingerprint but the same budget: the cap still holds.
    ledger.set_cap(meta["dataset_id"], 10.0, 1e-3)  # ρ ≈ 2.6, less than this dataset has spent plus a run
    fresh = tiny_spec(tmp_path)  # (rewrites the same notes.csv)
    fresh.output.folder = ""
    data.write_text("".join(original.splitlines(keepends=True)[:-1]), encoding="utf-8")
    spent = ledger.spent_rho(meta["dataset_id"])
    with pytest.raises(BudgetError):
        run_pipeline(fresh)
    assert ledger.spent_rho(meta["dataset_id"]) == pytest.approx(spent)


def test_new_run_ids_hold_no_time_of_day():
    from core.run.pipeline import new_run_id

    assert re.fullmatch(r"\d{8}-[0-9a-f]{8}", new_run_id())


# --- 2. the per-dataset cap ---------------------------------------------------------------------------


def test_views_of_one_source_share_one_budget(tmp_path):
    from core.run.pipeline import load_spec_corpus

    spec = tiny_spec(tmp_path)
    by_document = plan(spec)
    ledger = Ledger()
    fp_doc = dataset_fingerprint(load_spec_corpus(spec))
    register_dataset(spec, fp_doc, ledger)  # what a run does once past its cap check
    ledger.charge(fp_doc, "run-a", "histogram", 1.0, 1e-6, "test charge")

    for change in ({"person_column": "patient"}, {"id_column": ""}, {"max_unit_chars": 30}):
        view = tiny_spec(tmp_path)
        for name, value in change.items():
            setattr(view.data, name, value)
        summary = plan(view)
        fp = dataset_fingerprint(load_spec_corpus(view))
        register_dataset(view, fp, ledger)
        assert fp != fp_doc
        assert summary.dataset_name == by_document.dataset_name == "notes.csv"
        assert ledger.spent_rho(fp) == pytest.approx(1.0)  # the charge made under another view counts
        assert ledger.dataset_name(fp) == "notes.csv"
    assert ledger.dataset_name("0" * 64) is None


def test_the_same_data_under_a_new_name_is_refused_and_a_known_source_warns(tmp_path):
    spec = tiny_spec(tmp_path)
    with Ledger() as ledger:  # a run registered this view under its default name
        register_dataset(spec, dataset_fingerprint(load_spec_corpus(spec)), ledger)
    renamed = tiny_spec(tmp_path)
    renamed.data.dataset_name = "Fresh budget please"
    with pytest.raises(PrivetError, match="already budgeted under the dataset name 'notes.csv'"):
        plan(renamed)
    changed = tiny_spec(tmp_path)
    changed.data.person_column = "patient"  # another view of the same file, now under a new name: same documents
    changed.data.dataset_name = "Clinic notes"
    with pytest.raises(PrivetError, match="already budgeted under the dataset name 'notes.csv'.*100%"):
        plan(changed)


def test_charge_itself_refuses_to_exceed_the_cap(tmp_path):
    ledger = Ledger(tmp_path / "l.db")
    ledger.set_cap("ds", 1.0, 1e-3)  # rho ≈ 0.0594
    with pytest.raises(BudgetError):
        ledger.charge("ds", "r", "histogram", 1.0, 1e-6, "too much")
    assert charges(ledger) == []
    ledger.charge("ds", "r", "histogram", 0.04, 1e-6, "fits")
    with pytest.raises(BudgetError):  # the first stage fits alone, but the rest of the run would not
        ledger.charge("ds", "r2", "histogram", 0.001, 1e-6, "first stage", reserve=0.04)
    assert len(charges(ledger)) == 1


def test_two_runs_that_both_passed_the_check_cannot_both_charge(tmp_path):
    path = tmp_path / "ledger.db"
    first, second = Ledger(path), Ledger(path)
    first.set_cap("ds", 1.0, 1e-3)
    plan_rho = 0.04  # the cap (rho ≈ 0.0594) has room for one such run, not two
    first.check_plan("ds", plan_rho, 1e-6)
    second.check_plan("ds", plan_rho, 1e-6)  # both pass before either charges
    first.charge("ds", "run-1", "tokens", plan_rho, 1e-6, "x")
    with pytest.raises(BudgetError):
        second.charge("ds", "run-2", "tokens", plan_rho, 1e-6, "x")
    assert {r["run_id"] for r in charges(first)} == {"run-1"}


def test_a_run_is_stopped_at_its_first_stage_when_its_whole_plan_no_longer_fits(tmp_path):
    path = tmp_path / "ledger.db"
    first, second = Ledger(path), Ledger(path)
    first.set_cap("ds", 1.0, 1e-3)
    first.charge("ds", "run-1", "histogram", 0.02, 1e-6, "x", reserve=0.04)
    with pytest.raises(BudgetError):  # its histogram (0.02) would fit, its whole plan (0.04) would not
        second.charge("ds", "run-2", "histogram", 0.02, 1e-6, "x", reserve=0.04)
    first.charge("ds", "run-1", "tokens", 0.02, 1e-6, "x", reserve=0.02)
    assert {r["run_id"] for r in charges(first)} == {"run-1"}


def _charge_in_process(path: str, run_id: str, barrier, results) -> None:
    ledger = Ledger(Path(path))
    barrier.wait()
    try:
        ledger.charge("ds", run_id, "histogram", 0.04, 1e-6, "x")
        results.put("charged")
    except BudgetError:
        results.put("refused")


def test_concurrent_processes_charge_at_most_the_cap(tmp_path):
    path = tmp_path / "ledger.db"
    with Ledger(path) as setup:
        setup.set_cap("ds", 1.0, 1e-3)  # rho ≈ 0.0594: room for one charge of 0.04, not two
    ctx = multiprocessing.get_context("fork")
    barrier, results = ctx.Barrier(2), ctx.Queue()
    procs = [ctx.Process(target=_charge_in_process, args=(str(path), f"run-{i}", barrier, results)) for i in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert sorted(results.get(timeout=5) for _ in procs) == ["charged", "refused"]
    assert Ledger(path).spent_rho("ds") == pytest.approx(0.04)


def test_certificate_cumulative_spend_is_read_from_the_ledger(tmp_path):
    from core.certificate import build_certificate

    ledger = Ledger()
    record = make_record()  # rho_total 2.6
    ledger.charge(record.dataset_fingerprint, record.run_id, "histogram", 0.1, 1e-3, "x")
    ledger.charge(record.dataset_fingerprint, record.run_id, "clusters", 2.5, 1e-3, "x")
    ledger.charge(record.dataset_fingerprint, record.run_id, "clusters", 1.5, 1e-3, "charged again")
    out = tmp_path / "synthetic.jsonl"
    out.write_text("{}\n")
    history = build_certificate(record, [out], {}, ledger)["budget_history"]
    assert history["cumulative_rho"] == pytest.approx(4.1)
    assert history["ledger_matches_record"] is False


# --- 3. δ never from n: see tests/privacy/test_privacy_accounting.py --------------------------------------------


# --- 4. timestamps ---------------------------------------------------------------------------------------


def test_certificate_gives_dates_not_times(tmp_path):
    from core.certificate import build_certificate, render_html

    out = tmp_path / "synthetic.jsonl"
    out.write_text("{}\n")
    cert = build_certificate(make_record(), [out], {}, Ledger())
    text = json.dumps(cert) + render_html(cert)
    assert not re.search(r"\d{2}:\d{2}:\d{2}", text)
    assert cert["identity"]["run_date"] == "2026-11-29" and "started_at" not in cert["identity"]


# --- 6. batch-dependent logits: stated as not covered ------------------------------------------------------


def test_batch_effects_are_listed_as_not_covered(tmp_path):
    from core.certificate.build import scope_and_hazards

    for method in ("dp_synrag", "dp_synth"):
        notes = " ".join(scope_and_hazards(make_record(method)))
        assert "Batch effects" in notes and "not covered" in notes
    docs = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "batch" in docs.lower() and "not covered" in docs


# --- 7. RPSG wording ------------------------------------------------------------------------------------------


def test_rpsg_certificate_says_replace_one_with_candidates_fixed(tmp_path):
    from core.certificate import build_certificate

    out = tmp_path / "synthetic.jsonl"
    out.write_text("{}\n")
    rpsg = build_certificate(make_record("rpsg"), [out], {})["guarantee"]["neighbouring_relation"]
    assert "replace one unit" in rpsg and "held fixed" in rpsg and "add or remove" not in rpsg
    synrag = build_certificate(make_record(), [out], {})["guarantee"]["neighbouring_relation"]
    assert synrag.startswith("add or remove one unit")


# --- 8. the embedder in the certificate -----------------------------------------------------------------


def test_models_are_fingerprinted_by_their_kind(monkeypatch):
    import core.models.registry as registry
    from core.run.loaded_models import load_models
    from core.common.progress import NULL_REPORTER
    from core.specs.runspec import ModelChoice, RunSpec

    monkeypatch.setattr(registry, "load_language_model", lambda choice: object())
    monkeypatch.setattr(registry, "load_embedder", lambda choice: object())
    spec = RunSpec()
    spec.llm = spec.embedder = ModelChoice(source="tiny-random")
    llm, embedder = load_models(spec, NULL_REPORTER).fingerprints
    assert embedder == {"role": "embedder", **registry.model_fingerprint(spec.embedder, "embedder")}
    assert embedder["backend"] == "hashing" and embedder["name"] == "tiny-random-hashing"
    assert embedder["sha256"] != llm["sha256"]
