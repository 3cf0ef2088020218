"""The headless pipeline end to end with the tiny test models (and once with the packaged ones)."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest
from tests.helpers import CANARY, TINY, set_settings, tiny_spec, write_notes

from core.cli import main as privet
from core.common.errors import BudgetError, Cancelled, PrivetError
from core.ledger import Ledger
from core.run.pipeline import plan, run_pipeline
from core.common.progress import CallbackReporter
from core.specs.runspec import ModelChoice, RunSpec

def all_bytes_under(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())


def test_full_run_with_sockets_blocked_exports_a_verifiable_release(tmp_path, no_network, privet_home):
    spec = tiny_spec(tmp_path)
    events = []
    result = run_pipeline(spec, CallbackReporter(events.append))

    export = result.export_dir
    assert export is not None and export.is_dir()
    names = sorted(p.name for p in export.iterdir())
    assert "synthetic.jsonl" in names and "certificate.json" in names
    assert not any("checkpoint" in n or n.endswith(".log") or n == "run.json" for n in names)

    from core.certificate import verify_export

    assert verify_export(export).ok

    # The ledger holds one row per DP stage, charged before the stage drew, summing to the plan.
    entries = [e for e in Ledger().entries(result.record.dataset_fingerprint) if e.get("kind", "charge") == "charge"]
    charged = {e["stage"]: e["rho"] for e in entries}
    assert set(charged) == {"phrases", "histogram", "cluster_keywords", "retrieval_mean", "retrieval_threshold",
                            "private_prediction"}
    assert math.isclose(sum(charged.values()), result.record.rho_total, rel_tol=1e-9)
    assert [e.kind for e in events if e.kind == "charged"] == ["charged"] * 6
    # Phrase discovery is (ε, δ): its δ_p is recorded on its stage and ε is converted at δ − δ_p.
    phrase_stage = next(s for s in result.record.stages if s["stage"] == "phrases")
    assert 0 < phrase_stage["delta"] < result.record.delta

    # Nothing private leaves: the canary is in no exported file, no run-folder file, no event.
    assert CANARY.encode() not in all_bytes_under(export)
    assert CANARY.encode() not in all_bytes_under(privet_home)
    assert all(CANARY not in (e.message or "") for e in events)
    assert result.record.epsilon_tight <= spec.privacy.epsilon + 1e-6


def test_charges_are_written_before_noise_is_drawn(tmp_path, monkeypatch):
    import core.privacy.release as method  # every DP stage's Gaussian noise is drawn by its release

    real = method.gaussian_noise
    seen = []

    def spy(values, sigma, rng=None, sensitivity=1.0):
        seen.append(len(Ledger().entries()))
        return real(values, sigma, rng=rng, sensitivity=sensitivity)

    monkeypatch.setattr(method, "gaussian_noise", spy)
    spec = tiny_spec(tmp_path)
    spec.output.folder = ""
    run_pipeline(spec)
    assert seen[0] >= 1  # histogram charged before its noise
    assert seen[1] >= 2  # co-keyword counts charged before their noise
    assert all(n >= 4 for n in seen[2:])  # both retrieval stages charged before the first centre


def test_non_empty_output_folder_is_refused_before_anything_is_charged(tmp_path):
    spec = tiny_spec(tmp_path)
    Path(spec.output.folder).mkdir()
    (Path(spec.output.folder) / "old.txt").write_text("x")
    with pytest.raises(PrivetError, match="not empty"):
        run_pipeline(spec)
    assert Ledger().entries() == []


def test_cap_refuses_an_over_budget_run_before_charging(tmp_path):
    from core.corpus import dataset_fingerprint
    from core.run.pipeline import load_spec_corpus

    spec = tiny_spec(tmp_path)
    fp = dataset_fingerprint(load_spec_corpus(spec))
    Ledger().set_cap(fp, 1.0, 1e-3)
    with pytest.raises(BudgetError):
        run_pipeline(spec)
    assert [e for e in Ledger().entries(fp) if e.get("kind", "charge") == "charge"] == []


def test_test_mode_is_reproducible_and_refuses_export(tmp_path):
    spec = tiny_spec(tmp_path)
    spec.test_mode_seed = 1234
    first = run_pipeline(spec)
    second = run_pipeline(spec)
    assert first.export_dir is None and first.record.test_mode
    assert first.synthetic_path.read_text() == second.synthetic_path.read_text()
    from core.run.export import export_release

    with pytest.raises(PrivetError):
        export_release(first.run_dir, tmp_path / "never", {})


def test_cancelled_run_stays_charged_and_resume_reuses_released_outputs(tmp_path):
    spec = tiny_spec(tmp_path)
    state = {"cancel": False}

    def on_event(event):
        if event.stage == "private_prediction" and event.kind == "charged":
            state["cancel"] = True

    reporter = CallbackReporter(on_event, lambda: state["cancel"])
    run_dir = tmp_path / "run"
    with pytest.raises(Cancelled):
        run_pipeline(spec, reporter, run_dir=run_dir)
    ledger = Ledger()
    stages_before = [e["stage"] for e in ledger.entries() if e.get("kind", "charge") == "charge"]
    assert "private_prediction" in stages_before  # charged at stage start, stays charged
    hist_before = json.loads((run_dir / "checkpoints" / "dp_synrag" / "histogram.json").read_text())

    result = run_pipeline(spec, run_dir=run_dir, resume=True, consent=lambda quote: True)
    stages_after = [e["stage"] for e in ledger.entries() if e.get("kind", "charge") == "charge"]
    new = stages_after[len(stages_before):]
    assert new == ["private_prediction"]  # histogram and retrieval were not redrawn
    assert json.loads((run_dir / "checkpoints" / "dp_synrag" / "histogram.json").read_text()) == hist_before
    assert result.n_synthetic > 0


def test_dp_synth_baseline_runs(tmp_path):
    spec = tiny_spec(tmp_path)
    spec.method = "dp_synth"
    planned = plan(spec)
    result = run_pipeline(spec)
    assert result.record.method == "dp_synth"
    assert result.n_synthetic <= spec.dp_synrag.R
    # The ledger holds what the plan said: one private-prediction charge of the whole budget.
    with Ledger() as ledger:
        charged = [e for e in ledger.entries() if e["kind"] == "charge" and e["run_id"] == result.run_id]
    assert [e["stage"] for e in charged] == ["private_prediction"]
    assert sum(e["rho"] for e in charged) == pytest.approx(planned.rho_total, rel=1e-9)
    assert sum(s["rho"] for s in result.record.stages) == pytest.approx(planned.rho_total, rel=1e-9)


def test_plan_and_run_from_the_command_line(tmp_path, capsys):
    spec = tiny_spec(tmp_path)
    spec_path = tmp_path / "spec.toml"
    spec.save(spec_path)
    assert privet(["plan", str(spec_path)]) == 0
    out = capsys.readouterr().out
    assert "writing synthetic documents" in out and "c_over_tau" in out
    assert privet(["run", str(spec_path), "--quiet", "--spend-anyway"]) == 0  # 40 units: about 0 topics expected
    out = capsys.readouterr().out
    assert "Release" in out and CANARY not in out


def test_readme_spec_shape_with_the_icd10_cm_list_plans_and_runs(tmp_path, privet_home):
    """`[dp_synrag] domain_lists = ["icd10-cm"]` (README) plans and runs; the certificate names the list's
    file and SHA-256, never a path."""
    import hashlib

    from core.common.paths import resources_dir

    spec = tiny_spec(tmp_path, domain_lists=["icd10-cm"])
    spec.output.folder = ""
    summary = plan(spec)
    assert summary.stages[0][0] == "phrases" and summary.delta_spent > 0
    result = run_pipeline(spec)
    digest = hashlib.sha256((resources_dir() / "vocab" / "icd10-cm.txt").read_bytes()).hexdigest()
    assert result.record.method_parameters["domain_lists"] == [f"icd10-cm.txt (sha256 {digest})"]
    assert any("icd10-cm.txt" in n and digest in n and "cost no privacy budget" in n for n in result.record.scope_notes)
    assert any("delta_p" in n for n in result.record.scope_notes)
    out = tmp_path / "plan.txt"
    spec_path = tmp_path / "spec.toml"
    spec.save(spec_path)
    import contextlib
    import io

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        assert privet(["plan", str(spec_path)]) == 0
    text = buffer.getvalue()
    out.write_text(text)
    assert "Phrase discovery (first stage): rho =" in text and "delta_p =" in text
    assert "Expected phrases released on these data" in text
    assert CANARY not in text


def test_privet_vocab_lists_the_icd10_cm_list(capsys):
    assert privet(["vocab"]) == 0
    out = capsys.readouterr().out
    assert "icd10-cm" in out and "ICD-10-CM" in out and "costs no privacy budget" in out


def test_plan_reproduces_the_reference_split(tmp_path):
    spec = tiny_spec(tmp_path, K=10, L=5, T=70, R=500, k=80, cluster_keywords=0, discover_phrases=False)
    spec.privacy.delta = 1e-3
    summary = plan(spec)
    assert summary.rho_total == pytest.approx(2.6068, abs=1e-4)
    assert summary.derived["c_over_tau"] == pytest.approx(0.1162, abs=1e-4)


@pytest.mark.slow
def test_packaged_models_integration(tmp_path, no_network):
    """DP-SynRAG on 30 demo notes with the packaged SmolLM2 and MiniLM (CPU)."""
    from core.common.paths import resources_dir

    rows = list(csv.DictReader(open(resources_dir() / "demo" / "clinic" / "notes.csv", encoding="utf-8")))[:30]
    path = tmp_path / "notes.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    spec = RunSpec()
    spec.data.path = str(path)
    spec.data.text_column = "note"
    spec.llm = ModelChoice(source="default", backend="transformers", device="cpu")
    spec.embedder = ModelChoice(source="default")
    set_settings(spec, {"K": 5, "R": 3, "L": 2, "k": 8, "T": 8, "max_prompt_tokens": 128})
    spec.dp_synrag.domain_lists = [str(resources_dir() / "vocab" / "medical_demo_domain.txt")]
    spec.output.folder = str(tmp_path / "release")
    result = run_pipeline(spec)
    from core.certificate import verify_export

    if result.n_synthetic == 0:  # no topic cleared the noise: an empty release is not written unasked (issue 25)
        assert result.export_dir is None and not (tmp_path / "release").exists()
        return
    assert verify_export(result.export_dir).ok
    names = {r["patient"] for r in rows}
    exported = (result.export_dir / "synthetic.jsonl").read_text(encoding="utf-8")
    assert not any(name in exported for name in names)


def test_rpsg_run_is_recorded_without_an_end_to_end_guarantee(tmp_path):
    spec = tiny_spec(tmp_path)
    spec.method = "rpsg"
    spec.data.path = str(write_notes(tmp_path, n=6))
    spec.rpsg.m = 2
    spec.rpsg.max_new_tokens = 6
    spec.rpsg.n_variants = 1
    result = run_pipeline(spec)
    assert result.record.end_to_end_dp is False
    assert result.record.epsilon_tight <= spec.privacy.epsilon + 1e-6
    cert = json.loads((result.export_dir / "certificate.json").read_text())
    assert "no end-to-end" in json.dumps(cert).lower() or "no differential-privacy guarantee" in json.dumps(cert)
    assert CANARY.encode() not in all_bytes_under(result.export_dir)


def test_wave_rows_follow_the_memory_budget():
    from core.models.registry import load_language_model
    from core.methods.wave_size import kv_bytes_per_token, wave_rows

    llm = load_language_model(TINY)
    spec = RunSpec()
    spec.writing.memory_budget_mb = 100
    small = wave_rows(spec, llm)
    spec.writing.memory_budget_mb = 400
    assert wave_rows(spec, llm) >= 3 * small
    per_row = (spec.writing.max_prompt_tokens + spec.dp_synrag.T) * kv_bytes_per_token(llm) + 16 * llm.vocab_size
    assert wave_rows(spec, llm) == int(400e6 // per_row)
    spec.writing.batch_rows = 7
    assert wave_rows(spec, llm) == 7


def test_verify_against_the_ledger_detects_a_replaced_ledger(tmp_path, privet_home, capsys):
    result = run_pipeline(tiny_spec(tmp_path))
    assert privet(["verify", str(result.export_dir), "--ledger"]) == 0
    (privet_home / "ledger.db").unlink()  # a fresh, empty ledger in its place
    assert privet(["verify", str(result.export_dir), "--ledger"]) == 1
    assert "cut back or replaced" in capsys.readouterr().out
