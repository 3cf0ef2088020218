"""δ in the ledger and the cap (issue 31, items 1, 5 and 8): every charge stores the δ it spends outright,
a dataset's total is one valid (ε, δ) statement, a run that would take Σδ_p to the cap's δ is refused before
any charge, the ledger binds each privacy record, and the resume quote bounds what the certificate says.
"""

from __future__ import annotations

import json
import math
import sqlite3

import pytest
from tests.helpers import tiny_spec

from core.certificate.privacy_record import MAC_FILE, RECORD_FILE, PrivacyRecord, record_mac
from core.cli import main as privet
from core.common.errors import BudgetError, PrivetError
from core.run.export import export_release
from core.run.export_cli import certificate_claim_problems
from core.ledger import Ledger
from core.ledger.total import dataset_total, run_deltas, stated
from core.run.pipeline import plan, run_pipeline
from core.privacy.conversion import approx_eps_to_rho, approx_rho_to_eps, rho_to_eps

KEY = "d" * 64


def _charge(ledger: Ledger, run: str, stage: str, rho: float, delta: float, part: float = 0.0) -> None:
    ledger.charge(KEY, run, stage, rho, delta, f"{stage} of {run}", delta_part=part)


def _independent_total(rho: float, part: float, delta: float) -> float:
    """The same statement from Google's dp-accounting: its RDP accountant converts Σρ-zCDP at δ − Σδ_p, and
    conditioning on the δ_p event adds log(1/(1 − Σδ_p)) (Bun & Steinke 2016, Def. 8.1)."""
    dp_accounting = pytest.importorskip("dp_accounting")
    acc = dp_accounting.rdp.RdpAccountant(orders=[1 + x / 20 for x in range(1, 4000)])
    acc.compose(dp_accounting.ZCDpEvent(rho))
    return float(acc.get_epsilon(delta - part)) - math.log1p(-part)


# --- the total -------------------------------------------------------------------------------------------


def test_dataset_total_adds_every_runs_delta_p_and_matches_an_independent_library():
    ledger = Ledger()
    for i in range(4):  # four default-like runs: ε = 10 at δ = 1e-6, δ_p = 5e-7 each
        _charge(ledger, f"r{i}", "phrases", 0.05, 1e-6, 5e-7)
        _charge(ledger, f"r{i}", "histogram", 1.2, 1e-6)
    total = ledger.total(KEY)
    assert total.delta_part == pytest.approx(2e-6)
    assert total.delta == pytest.approx(4e-6)  # no cap: the runs' δ add up, and Σδ_p stays below it
    assert total.epsilon == pytest.approx(approx_rho_to_eps(4 * 1.25, 4e-6, 2e-6))
    assert total.epsilon == pytest.approx(_independent_total(4 * 1.25, 2e-6, 4e-6), rel=2e-3)
    # the old figure dropped δ_p: Σρ converted at δ = 1e-6 alone is no valid statement once Σδ_p ≥ δ
    assert stated(5.0, 2e-6, 1e-6).epsilon == math.inf
    summary = ledger.summary(KEY)
    assert summary.spent_epsilon == total.epsilon and summary.spent_delta_part == total.delta_part


def test_one_run_is_listed_with_the_epsilon_its_certificate_states():
    ledger = Ledger()
    rho = 2.0
    _charge(ledger, "r1", "phrases", 0.1 * rho, 1e-6, 5e-7)
    _charge(ledger, "r1", "histogram", 0.9 * rho, 1e-6)
    certificate_eps = approx_rho_to_eps(rho, 1e-6, 5e-7)
    assert ledger.summary(KEY).spent_epsilon == pytest.approx(certificate_eps)
    assert ledger.summary(KEY).spent_epsilon > rho_to_eps(rho, 1e-6)  # δ_p costs ε: it is not dropped


def test_a_stage_drawn_again_after_a_resume_adds_its_delta_p_to_the_runs_delta():
    rows = [{"kind": "charge", "run_id": "r", "stage": "phrases", "rho": 0.1, "delta": 1e-6, "delta_part": 5e-7},
            {"kind": "charge", "run_id": "r", "stage": "phrases", "rho": 0.1, "delta": 1e-6, "delta_part": 5e-7}]
    assert run_deltas(rows) == {"r": pytest.approx(1.5e-6)}
    total = dataset_total(rows, None)
    assert total.delta == pytest.approx(1.5e-6) and total.delta_part == pytest.approx(1e-6)


# --- the cap ---------------------------------------------------------------------------------------------


def test_the_cap_refuses_a_run_whose_delta_p_would_reach_the_caps_delta_before_any_charge():
    ledger = Ledger()
    ledger.set_cap(KEY, 25.0, 1e-6)
    _charge(ledger, "r1", "phrases", 0.05, 1e-6, 5e-7)  # fits: 5e-7 < 1e-6
    rows = len(ledger.entries())
    with pytest.raises(BudgetError, match="δ"):  # a second δ_p of 5e-7 reaches δ = 1e-6
        ledger.check_plan(KEY, 0.05, 1e-6, 5e-7)
    with pytest.raises(BudgetError, match="Nothing was charged"):
        _charge(ledger, "r2", "phrases", 0.05, 1e-6, 5e-7)
    with pytest.raises(BudgetError):
        ledger.reserve(KEY, "r3", 0.05, 5e-7)
    assert len(ledger.entries()) == rows
    ledger.check_plan(KEY, 0.05, 1e-6, 0.0)  # a run without phrase discovery still fits


def test_the_cap_counts_delta_p_in_its_epsilon_and_speaks_in_epsilon():
    ledger = Ledger()
    ledger.set_cap(KEY, 10.0, 1e-6)
    room = approx_eps_to_rho(10.0, 1e-6, 5e-7)
    ledger.check_plan(KEY, room * 0.999, 1e-6, 5e-7)
    with pytest.raises(BudgetError) as refused:
        ledger.check_plan(KEY, room * 1.01, 1e-6, 5e-7)  # within the cap's ρ without δ_p, over it with δ_p
    assert refused.value.what.count("ε =") >= 2 and "rho=" not in refused.value.what
    assert room < approx_eps_to_rho(10.0, 1e-6, 0.0)


def test_reservations_hold_delta_p_too():
    ledger = Ledger()
    ledger.set_cap(KEY, 50.0, 1e-6)
    ledger.reserve(KEY, "r1", 0.1, 6e-7)  # this process is alive, so the reservation stands
    with pytest.raises(BudgetError):
        ledger.reserve(KEY, "r2", 0.1, 6e-7)
    ledger.release_reservation("r1")
    ledger.reserve(KEY, "r2", 0.1, 6e-7)


def test_a_cap_below_what_is_spent_is_refused_with_the_spent_figure():
    ledger = Ledger()
    _charge(ledger, "r1", "histogram", 5.0, 1e-6)
    spent = ledger.total(KEY)
    with pytest.raises(PrivetError, match="already spent"):
        ledger.set_cap(KEY, 5.0, 1e-6)
    _charge(ledger, "r2", "phrases", 0.0, 1e-6, 5e-7)
    with pytest.raises(PrivetError, match="already spent"):  # δ already spent outright
        ledger.set_cap(KEY, 1000.0, 4e-7)
    ledger.set_cap(KEY, spent.epsilon * 3, 1e-6)


def test_the_audits_delta_reproduction_is_refused_before_any_charge(tmp_path, privet_home, capsys):
    """`--set-cap 12 --delta 1e-9 --new-dataset`, then a run at ε = 1, δ = 0.5 whose phrase stage takes 0.9 of δ."""
    spec = tiny_spec(tmp_path, phrases_per_unit=1, phrases_delta_fraction=0.9)
    spec.privacy.epsilon, spec.privacy.delta, spec.privacy.spend_anyway = 1.0, 0.5, True
    assert privet(["ledger", "notes.csv", "--set-cap", "12", "--delta", "1e-9", "--new-dataset"]) == 0
    spec_file = tmp_path / "spec.toml"
    spec.save(spec_file)
    capsys.readouterr()
    assert privet(["plan", str(spec_file)]) == 0  # the plan says so before anything is tried
    said = capsys.readouterr().out
    assert "Dataset total after this run" in said and "This run would be refused" in said
    ledger = Ledger()
    before = len(ledger.entries())
    with pytest.raises(BudgetError, match="no ε can be stated"):
        run_pipeline(spec, ledger=ledger)
    assert len(ledger.entries()) == before
    assert not (tmp_path / "release").exists()


# --- the ledger's rows: old ledgers, tampering ------------------------------------------------------------


def test_a_ledger_written_before_delta_part_gains_the_column_and_still_verifies(privet_home):
    path = privet_home / "old.db"
    ledger = Ledger(path)
    _charge(ledger, "r1", "histogram", 1.0, 1e-6)
    ledger.close()
    conn = sqlite3.connect(path)  # make it an old-format ledger: the new columns removed, hashes unchanged
    conn.executescript("DROP TRIGGER charges_no_update; DROP TRIGGER charges_no_delete;"
                       "ALTER TABLE charges DROP COLUMN delta_part; ALTER TABLE charges DROP COLUMN record_hash;")
    conn.commit()
    conn.close()
    from core.ledger.schema import CHAIN_SCHEMA

    conn = sqlite3.connect(path)
    conn.executescript("\n".join(line for line in CHAIN_SCHEMA.splitlines()))  # triggers back (IF NOT EXISTS)
    conn.close()
    reopened = Ledger(path)
    assert reopened.verify_chain() == []
    assert reopened.spent_delta_part(KEY) == 0.0
    _charge(reopened, "r2", "phrases", 0.1, 1e-6, 5e-7)
    assert reopened.verify_chain() == []


def test_dropping_a_rows_delta_p_breaks_the_chain(privet_home):
    ledger = Ledger()
    _charge(ledger, "r1", "phrases", 0.1, 1e-6, 5e-7)
    ledger.close()
    conn = sqlite3.connect(privet_home / "ledger.db")
    conn.executescript("DROP TRIGGER charges_no_update; UPDATE charges SET delta_part = 0 WHERE seq = 1;")
    conn.close()
    assert any("changed" in p for p in Ledger().verify_chain())


# --- one run end to end: the same ε everywhere, the record bound, the quote an upper bound -----------------


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """One tiny run with phrase discovery (its default), exported; the module's own data folder."""
    import os

    root = tmp_path_factory.mktemp("delta_run")
    old = {k: os.environ.get(k) for k in ("PRIVET_HOME", "PRIVET_KEYRING")}
    os.environ["PRIVET_HOME"], os.environ["PRIVET_KEYRING"] = str(root / "home"), "memory"
    try:
        spec = tiny_spec(root)
        spec.privacy.spend_anyway = True
        result = run_pipeline(spec)
        yield spec, result
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _use_home(monkeypatch, spec_result) -> None:
    spec, result = spec_result
    monkeypatch.setenv("PRIVET_HOME", str(result.run_dir.parent.parent))


def test_the_ledger_the_meter_and_the_certificate_state_one_epsilon(exported, monkeypatch):
    _use_home(monkeypatch, exported)
    spec, result = exported
    record = result.record
    assert any(float(s.get("delta", 0.0)) > 0 for s in record.stages)  # phrase discovery ran and spent δ_p
    ledger = Ledger()
    from core.ledger.view import run_spend

    assert run_spend(ledger, result.run_id).epsilon == pytest.approx(record.epsilon_tight, rel=1e-9)
    summary = ledger.summary(record.dataset_id)
    assert summary.spent_epsilon == pytest.approx(record.epsilon_tight, rel=1e-9)
    assert summary.delta == pytest.approx(record.delta)
    assert summary.spent_epsilon == pytest.approx(spec.privacy.epsilon, rel=1e-6)  # not 9.76 of 10
    certificate = json.loads((result.export_dir / "certificate.json").read_text())["certificate"]
    history = certificate["budget_history"]
    assert history["cumulative_epsilon_tight"] == pytest.approx(record.epsilon_tight, rel=1e-9)
    assert certificate_claim_problems(certificate, ledger) == []


def test_a_record_edited_and_resealed_with_the_installation_key_is_refused(exported, monkeypatch, tmp_path):
    _use_home(monkeypatch, exported)
    spec, result = exported
    for edit in ({"unit_kind": "person", "person_column": "patient"},
                 {"stages": [{k: v for k, v in s.items() if k != "delta"} for s in result.record.stages]}):
        forged = PrivacyRecord.from_dict({**result.record.to_dict(), **edit})
        text = forged.to_json() + "\n"
        (result.run_dir / RECORD_FILE).write_text(text)
        (result.run_dir / MAC_FILE).write_text(record_mac(text) + "\n")  # re-sealed: the MAC authenticates it
        with pytest.raises(PrivetError, match="hash the ledger keeps|delta_p"):
            export_release(result.run_dir, tmp_path / "forged", {})
        assert not (tmp_path / "forged").exists()
    result.record.save(result.run_dir)  # the run's own record exports again
    ledger = Ledger()
    certificate = json.loads((result.export_dir / "certificate.json").read_text())["certificate"]
    certificate["guarantee"]["unit_of_privacy"] = "person"  # a certificate edited (and re-signed by its owner)
    assert any("hash the ledger keeps" in p for p in certificate_claim_problems(certificate, ledger))


def test_the_resume_quote_bounds_what_the_certificate_then_states(tmp_path, privet_home):
    from tests.privacy.test_privacy_audit import cancelled_run

    from core.run.pipeline import resume_quote

    spec = tiny_spec(tmp_path)
    spec.privacy.spend_anyway = True
    run_dir = tmp_path / "run"
    cancelled_run(spec, run_dir)
    quote = resume_quote(spec, run_dir)
    assert f"{quote.run_epsilon_after:.3g}" in quote.words()
    result = run_pipeline(spec, run_dir=run_dir, resume=True, consent=lambda q: True)
    assert result.record.epsilon_tight <= quote.run_epsilon_after * (1 + 1e-9)
    assert result.record.epsilon_tight == pytest.approx(quote.run_epsilon_after, rel=1e-9)  # it charged all it quoted
    assert result.record.delta == pytest.approx(quote.run_delta_after)
    summary = Ledger().summary(result.record.dataset_id)
    assert summary.spent_epsilon <= quote.after_epsilon * (1 + 1e-9)
    assert plan(spec).rho_total < result.record.rho_total  # the redraw was charged again


def test_a_rewitnessed_ledger_is_marked_on_every_later_certificate(tmp_path):
    from tests.certificate.test_certificate import FP, make_record

    from core.certificate.build import build_certificate
    from core.certificate.render import render_html

    ledger = Ledger()
    ledger.charge(FP, "run-1", "histogram", 0.1, 1e-3, "")
    ledger.charge(FP, "run-1", "clusters", 2.5, 1e-3, "")
    before = build_certificate(make_record(), [], {}, ledger)
    assert before["budget_history"]["history_notes"] == []
    ledger.rewitness(acknowledge=True)
    after = build_certificate(make_record(), [], {}, ledger)
    notes = after["budget_history"]["history_notes"]
    assert len(notes) == 1 and "re-witnessed" in notes[0]
    assert "re-witnessed, ledger entry" in render_html(after)
