"""Regression tests for the privacy audit (issue 11): one section per finding, each failing on the old code."""

from __future__ import annotations

import json
import math
import multiprocessing
import re
from pathlib import Path

import pytest

from core.errors import BudgetError, Cancelled, PrivetError
from core.ledger import Ledger
from core.pipeline import RUN_FILE, plan, run_pipeline
from core.progress import CallbackReporter
from test_certificate import make_record
from test_pipeline import CANARY, tiny_spec, write_corpus


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


# --- 1. resume ignores what was already drawn ---------------------------------------------------------


def test_resume_with_another_epsilon_is_refused(tmp_path):
    """The audit's reproduction: cancel an ε=10 run in private prediction, resume with ε=1."""
    spec = tiny_spec(tmp_path)
    run_dir = tmp_path / "run"
    cancelled_run(spec, run_dir)
    before = len(Ledger().entries())
    spec.privacy.epsilon = 1.0
    with pytest.raises(PrivetError) as info:
        run_pipeline(spec, run_dir=run_dir, resume=True)
    message = info.value.user_message()
    assert "privacy.epsilon" in message and "new run" in message
    assert len(Ledger().entries()) == before  # nothing charged, nothing drawn
    assert not (run_dir / "privacy_record.json").exists()


def test_resume_with_other_data_or_method_is_refused(tmp_path):
    spec = tiny_spec(tmp_path)
    run_dir = tmp_path / "run"
    cancelled_run(spec, run_dir)

    other = tiny_spec(tmp_path)
    other.method = "dp_synth"
    with pytest.raises(PrivetError, match="method"):
        run_pipeline(other, run_dir=run_dir, resume=True)

    changed = tiny_spec(tmp_path)
    data = Path(changed.data.path)
    data.write_text(data.read_text(encoding="utf-8") + "n99,Patient 99,one more note about a cough\n", encoding="utf-8")
    with pytest.raises(PrivetError, match="not the data it started with"):
        run_pipeline(changed, run_dir=run_dir, resume=True)


def test_resume_may_change_only_where_the_release_goes(tmp_path):
    spec = tiny_spec(tmp_path)
    run_dir = tmp_path / "run"
    cancelled_run(spec, run_dir)
    meta = json.loads((run_dir / RUN_FILE).read_text())
    assert {"spec_canonical", "method", "dataset_fingerprint", "dataset_id"} <= set(meta)
    spec.output.folder = str(tmp_path / "elsewhere")
    spec.dp_synrag.batch_rows = 3
    result = run_pipeline(spec, run_dir=run_dir, resume=True)
    assert result.export_dir == tmp_path / "elsewhere"


def test_run_json_without_recorded_spec_is_not_resumed(tmp_path):
    spec = tiny_spec(tmp_path)
    run_dir = tmp_path / "run"
    cancelled_run(spec, run_dir)
    meta = json.loads((run_dir / RUN_FILE).read_text())
    (run_dir / RUN_FILE).write_text(json.dumps({"run_id": meta["run_id"], "started_at": meta["started_at"]}))
    with pytest.raises(PrivetError, match="earlier version"):
        run_pipeline(spec, run_dir=run_dir, resume=True)


def test_checkpoints_are_namespaced_by_method(tmp_path):
    spec = tiny_spec(tmp_path)
    run_dir = tmp_path / "run"
    cancelled_run(spec, run_dir)
    assert (run_dir / "checkpoints" / "dp_synrag" / "histogram.json").is_file()
    assert not (run_dir / "checkpoints" / "histogram.json").exists()


def test_resume_checks_the_cap_again(tmp_path):
    spec = tiny_spec(tmp_path)
    run_dir = tmp_path / "run"
    cancelled_run(spec, run_dir)
    ledger = Ledger()
    key = json.loads((run_dir / RUN_FILE).read_text())["dataset_id"]
    ledger.set_cap(key, 0.5, 1e-3)  # below what is already spent
    # Make the resume need a new charge: the histogram checkpoint is gone, as after a crash mid-stage.
    (run_dir / "checkpoints" / "dp_synrag" / "histogram.json").unlink()
    before = len(charges(ledger))
    with pytest.raises(BudgetError):
        run_pipeline(spec, run_dir=run_dir, resume=True)
    assert len(charges(ledger)) == before


def test_wizard_resume_goes_through_the_same_check(tmp_path):
    """The wizard's child process calls core.pipeline.run_pipeline with the edited spec (e.g. after Back)."""
    from desktop import runner

    spec = tiny_spec(tmp_path)
    run_dir = tmp_path / "run"
    cancelled_run(spec, run_dir)
    spec.privacy.epsilon = 1.0
    source = Path(runner.__file__).read_text(encoding="utf-8")
    assert "run_pipeline(spec, reporter, run_dir=Path(request[\"run_dir\"]), resume=request[\"resume\"])" in source
    with pytest.raises(PrivetError, match="privacy.epsilon"):
        run_pipeline(spec, run_dir=run_dir, resume=True)


# --- 2. the per-dataset cap ---------------------------------------------------------------------------


def test_views_of_one_source_share_one_budget(tmp_path):
    from core.corpus import dataset_fingerprint
    from core.pipeline import load_spec_corpus

    spec = tiny_spec(tmp_path)
    by_document = plan(spec)
    ledger = Ledger()
    fp_doc = dataset_fingerprint(load_spec_corpus(spec))
    ledger.charge(fp_doc, "run-a", "histogram", 1.0, 1e-6, "test charge")

    for change in ({"person_column": "patient"}, {"id_column": ""}, {"max_unit_chars": 30}):
        view = tiny_spec(tmp_path)
        for name, value in change.items():
            setattr(view.data, name, value)
        summary = plan(view)
        fp = dataset_fingerprint(load_spec_corpus(view))
        assert fp != fp_doc
        assert summary.dataset_name == by_document.dataset_name == "notes.csv"
        assert ledger.spent_rho(fp) == pytest.approx(1.0)  # the charge made under another view counts
        assert ledger.dataset_name(fp) == "notes.csv"
    assert ledger.dataset_name("0" * 64) is None


def test_dropping_a_row_keeps_the_budget_and_a_cap_set_on_one_view_holds_for_all(tmp_path):
    spec = tiny_spec(tmp_path)
    spec.output.folder = ""
    run_pipeline(spec)
    ledger = Ledger()
    (key,) = ledger.datasets()
    spent = ledger.spent_rho(key)
    ledger.set_cap(key, 10.0, 1e-3)  # room for about one run of this size
    data = Path(spec.data.path)
    lines = data.read_text(encoding="utf-8").splitlines(keepends=True)
    data.write_text("".join(lines[:-1]), encoding="utf-8")  # one row dropped: a new fingerprint
    with pytest.raises(BudgetError):
        run_pipeline(spec)
    assert ledger.spent_rho(key) == pytest.approx(spent)


def test_the_same_data_under_a_new_name_is_refused_and_a_known_source_warns(tmp_path):
    spec = tiny_spec(tmp_path)
    plan(spec)
    renamed = tiny_spec(tmp_path)
    renamed.data.dataset_name = "Fresh budget please"
    with pytest.raises(PrivetError, match="already budgeted under the dataset name 'notes.csv'"):
        plan(renamed)
    changed = tiny_spec(tmp_path)
    changed.data.person_column = "patient"  # another view of the same file, now under a new name
    changed.data.dataset_name = "Clinic notes"
    warnings = plan(changed).warnings
    assert any("loaded before under the dataset name 'notes.csv'" in w for w in warnings)


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
    first.charge("ds", "run-1", "histogram", plan_rho / 2, 1e-6, "x", reserve=plan_rho)
    with pytest.raises(BudgetError):
        second.charge("ds", "run-2", "histogram", plan_rho / 2, 1e-6, "x", reserve=plan_rho)
    first.charge("ds", "run-1", "tokens", plan_rho / 2, 1e-6, "x", reserve=plan_rho / 2)
    assert {r["run_id"] for r in charges(first)} == {"run-1"}


def _charge_in_process(path: str, run_id: str, barrier, results) -> None:
    ledger = Ledger(Path(path))
    barrier.wait()
    try:
        ledger.charge("ds", run_id, "histogram", 0.04, 1e-6, "x", reserve=0.04)
        results.put("charged")
    except BudgetError:
        results.put("refused")


def test_concurrent_processes_charge_at_most_the_cap(tmp_path):
    path = tmp_path / "ledger.db"
    Ledger(path).set_cap("ds", 1.0, 1e-3)  # rho ≈ 0.0594: room for one charge of 0.04, not two
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


# --- 3. δ never from n: see tests/test_privacy_accounting.py ------------------------------------------


def test_delta_is_not_exported_as_a_function_of_n(tmp_path):
    spec = tiny_spec(tmp_path)
    result = run_pipeline(spec)
    assert result.record.delta == 1e-6
    spec.privacy.max_units = 1000
    assert plan(spec).delta == pytest.approx(1e-4)


# --- 4. timestamps -------------------------------------------------------------------------------------


def test_export_holds_dates_only(tmp_path):
    result = run_pipeline(tiny_spec(tmp_path))
    time_of_day = re.compile(r"\d{2}:\d{2}:\d{2}")
    for name in ("certificate.json", "certificate.html"):
        text = (result.export_dir / name).read_text(encoding="utf-8")
        assert not time_of_day.search(text), name
    cert = json.loads((result.export_dir / "certificate.json").read_text())["certificate"]
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", cert["created_on"])
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", cert["identity"]["run_date"])
    assert re.fullmatch(r"\d{8}-[0-9a-f]{8}", result.run_id)  # no time of day in the run id
    assert time_of_day.search(json.loads((result.run_dir / RUN_FILE).read_text())["started_at"])  # kept privately


# --- 5. resume charges only the redrawn groups ----------------------------------------------------------


def test_resume_charges_only_the_redrawn_groups_and_record_ledger_certificate_agree(tmp_path):
    spec = tiny_spec(tmp_path)  # R=5 groups, L=2, T=6
    run_dir = tmp_path / "run"
    cancelled_run(spec, run_dir)
    # As if four of the five groups had finished before the interruption.
    (run_dir / "checkpoints" / "dp_synrag" / "private_prediction.json").write_text(
        json.dumps({str(g): f"synthetic text {g}" for g in range(4)}))
    ledger = Ledger()
    before = charges(ledger)
    result = run_pipeline(spec, run_dir=run_dir, resume=True)
    new = charges(ledger)[len(before):]
    assert [r["stage"] for r in new] == ["private_prediction"]
    tokens = next(r for r in before if r["stage"] == "private_prediction")["rho"]
    per_group = tokens / spec.dp_synrag.L
    assert new[0]["rho"] == pytest.approx(per_group)  # min(L, 1 redrawn) groups, not L

    record = result.record
    charged = ledger.run_rho(record.dataset_id, record.run_id)
    assert record.rho_total == pytest.approx(charged, rel=1e-9)
    assert sum(s["rho"] for s in record.stages) == pytest.approx(charged, rel=1e-9)
    assert any("redrawn after resume" in s["stage"] for s in record.stages)
    cert = json.loads((result.export_dir / "certificate.json").read_text())["certificate"]
    assert cert["budget_history"]["ledger_matches_record"] is True
    assert cert["budget_history"]["cumulative_rho"] == pytest.approx(ledger.spent_rho(record.dataset_id))
    assert any("resumed" in note for note in cert["scope_and_hazards"])


# --- 6. batch-dependent logits: stated as not covered ------------------------------------------------------


def test_batch_effects_are_listed_as_not_covered(tmp_path):
    from core.certificate.build import scope_and_hazards

    for method in ("dp_synrag", "dp_synth"):
        notes = " ".join(scope_and_hazards(make_record(method)))
        assert "Batch effects" in notes and "not covered" in notes
    docs = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
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


# --- 8. the embedder in the certificate ---------------------------------------------------------------------


def test_record_names_the_embedder_not_the_language_model(tmp_path):
    from core.models.registry import model_fingerprint
    from core.models.base import ModelChoice

    result = run_pipeline(tiny_spec(tmp_path))
    llm, embedder = result.record.models
    assert llm["role"] == "language model" and embedder["role"] == "embedder"
    assert embedder["backend"] == "hashing" and embedder["name"] == "tiny-random-hashing"
    assert embedder["sha256"] == model_fingerprint(ModelChoice(source="tiny-random"), "embedder")["sha256"]
    assert embedder["sha256"] != llm["sha256"]


def test_nothing_private_in_the_new_fields(tmp_path, privet_home):
    spec = tiny_spec(tmp_path)
    result = run_pipeline(spec)
    exported = b"".join(p.read_bytes() for p in result.export_dir.iterdir())
    assert CANARY.encode() not in exported
    assert b"notes.csv" not in exported  # the default dataset name (a file name) is not exported
    assert CANARY.encode() not in (privet_home / "ledger.db").read_bytes()
    assert write_corpus  # shared helper kept importable
