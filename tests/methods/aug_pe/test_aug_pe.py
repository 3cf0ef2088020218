"""Aug-PE (private evolution, docs/method.md §4): vote sensitivity, noise scale, accounting, a tiny run.

Statistical tests reject at p < 1e-4, like tests/privacy/test_mechanisms.py.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch
from tests.helpers import canary_at_7, statistical, tiny_spec, write_notes
from scipy import stats

from core.common.errors import Cancelled, PrivetError
from core.ledger import Ledger
from core.methods.aug_pe.histogram import (
    nearest_neighbour_votes,
    threshold_counts,
    winners,
)
from core.models.generation import sample_next
from core.methods.aug_pe.population import parents_per_iteration, select_parents
from core.run.pipeline import plan, run_pipeline
from core.privacy.conversion import eps_to_rho
from core.methods.aug_pe.plan import aug_pe_stage, plan_aug_pe
from core.common.progress import CallbackReporter
from core.specs.runspec import AugPESpec

P_REJECT = 1e-4
CANARY = "Qorvath Mellendrix-5529"


def all_bytes_under(folder) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())


def unit_rows(rng: np.random.Generator, n: int, dim: int = 16) -> np.ndarray:
    x = rng.normal(size=(n, dim))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


# --- the vote histogram --------------------------------------------------------------------------


def test_each_unit_votes_once_for_its_nearest_candidate():
    rng = np.random.default_rng(1)
    private, candidates = unit_rows(rng, 200), unit_rows(rng, 12)
    votes = nearest_neighbour_votes(private, candidates)
    assert votes.sum() == len(private)
    brute = [int(np.argmin(np.linalg.norm(candidates - p, axis=1))) for p in private]
    assert votes.tolist() == np.bincount(brute, minlength=12).astype(float).tolist()


def test_removing_or_adding_a_unit_moves_the_histogram_by_at_most_one_vote_in_l2():
    rng = np.random.default_rng(2)
    private, candidates = unit_rows(rng, 60), unit_rows(rng, 9)
    full = nearest_neighbour_votes(private, candidates)
    for u in range(len(private)):
        without = nearest_neighbour_votes(np.delete(private, u, axis=0), candidates)
        assert np.linalg.norm(full - without) <= 1.0 + 1e-12
        assert np.abs(full - without).sum() == 1.0  # exactly one bin, by one vote
    newcomer = unit_rows(rng, 1) * 3.0  # an embedding of any norm still casts one vote
    added = nearest_neighbour_votes(np.vstack([private, newcomer]), candidates)
    assert np.linalg.norm(added - full) == pytest.approx(1.0)


def test_an_empty_corpus_gives_an_empty_histogram():
    assert nearest_neighbour_votes(np.zeros((0, 4)), np.eye(4)).tolist() == [0.0] * 4


# --- planning and noise ---------------------------------------------------------------------------


@pytest.mark.parametrize("iterations", [1, 3, 10])
def test_plan_splits_epsilon_equally_over_the_iterations(iterations):
    spec = AugPESpec(iterations=iterations, threshold=0.0)
    p = plan_aug_pe(spec, 4.0, 1e-5)
    assert p.rho_total == pytest.approx(eps_to_rho(4.0, 1e-5))
    assert p.rho_per_iteration == pytest.approx(p.rho_total / iterations)
    assert 1.0 / (2.0 * p.sigma**2) == pytest.approx(p.rho_per_iteration)  # Δ = 1
    assert p.threshold == pytest.approx(2.0 * p.sigma)
    events = p.accountant().events
    assert [e.stage for e in events] == [aug_pe_stage(t) for t in range(1, iterations + 1)]
    assert all(e.parameters["sensitivity"] == 1.0 for e in events)
    assert p.accountant().total_rho() == pytest.approx(p.rho_total)
    assert p.epsilon_tight <= 4.0 + 1e-9


def test_plan_total_converts_back_to_the_target_with_opendp():
    import opendp.prelude as dp

    dp.enable_features("contrib")
    p = plan_aug_pe(AugPESpec(iterations=4), 10.0, 1e-3)
    space = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
    gaussian = dp.m.make_gaussian(*space, scale=1.0 / math.sqrt(2.0 * p.rho_total))  # ρ(Δ=1) = rho_total
    approx = dp.c.make_zCDP_to_approxDP(gaussian)
    curve = approx.map(1.0)
    assert curve.epsilon(1e-3) == pytest.approx(10.0, rel=1e-3)


def test_plan_refuses_bad_settings():
    with pytest.raises(PrivetError):
        plan_aug_pe(AugPESpec(iterations=0), 4.0, 1e-5)
    with pytest.raises(PrivetError):
        plan_aug_pe(AugPESpec(threshold=-1.0), 4.0, 1e-5)
    with pytest.raises(PrivetError):
        plan_aug_pe(AugPESpec(), 0.0, 1e-5)


@statistical
def test_released_histogram_noise_has_the_planned_scale_and_is_charged_first():
    p = plan_aug_pe(AugPESpec(iterations=3), 4.0, 1e-5)
    n = 20_000
    votes = np.arange(n, dtype=np.float64) % 7
    charged = []
    stage = p.release(2)  # the release the Aug-PE loop runs (runner.py: charge, then noise)
    stage.charge(lambda name, rho, desc, delta_part=0.0: charged.append((name, rho)))
    noisy = stage.noise(votes)
    assert charged == [(aug_pe_stage(2), pytest.approx(p.rho_per_iteration))]
    noise = noisy - votes
    sigma = p.sigma
    assert abs(noise.mean()) < 4.42 * sigma / math.sqrt(n)
    variance_stat = (n - 1) * noise.var(ddof=1) / sigma**2
    assert stats.chi2.sf(variance_stat, n - 1) > P_REJECT / 2
    assert stats.chi2.cdf(variance_stat, n - 1) > P_REJECT / 2
    assert stats.kstest(noise / sigma, "norm").pvalue > P_REJECT


def test_threshold_and_selection_read_only_the_released_counts():
    noisy = np.array([5.0, 1.0, -2.0, 3.0, 2.9])
    kept = threshold_counts(noisy, 3.0)
    assert kept.tolist() == [5.0, 0.0, 0.0, 3.0, 0.0]
    assert winners(noisy, kept, 2) == ([0, 3], False)
    assert winners(noisy, np.zeros(5), 2) == ([0, 3], True)
    parents = select_parents(kept, 500, np.random.default_rng(3))
    assert set(parents) <= {0, 3}
    assert parents_per_iteration(48, 2) == 16


# --- public generation --------------------------------------------------------------------------


@statistical
def test_public_sampling_keeps_to_the_top_p_nucleus_in_proportion():
    probs = torch.tensor([[0.5, 0.3, 0.15, 0.05]])
    logits = probs.log().repeat(4000, 1)
    generator = torch.Generator().manual_seed(7)
    drawn = sample_next(logits, temperature=1.0, top_p=0.7, generator=generator)
    counts = np.bincount(drawn.numpy(), minlength=4)
    assert counts[2] == counts[3] == 0  # outside the 0.7 nucleus
    assert stats.binomtest(int(counts[0]), int(counts[:2].sum()), 0.5 / 0.8).pvalue > P_REJECT


# --- end to end with the tiny models --------------------------------------------------------------


def aug_pe_spec(tmp_path, **settings):
    spec = tiny_spec(tmp_path, write_notes(tmp_path, name=canary_at_7(CANARY)), settings={})
    spec.method = "aug_pe"
    spec.aug_pe = AugPESpec(**{"iterations": 3, "population": 4, "variations": 1, "max_new_tokens": 4,
                               "batch_size": 4, **settings})
    return spec


def charges(ledger: Ledger) -> list[dict]:
    return [e for e in ledger.entries() if e.get("kind", "charge") == "charge"]


def test_tiny_run_charges_the_plan_and_exports_no_private_text(tmp_path, privet_home):
    spec = aug_pe_spec(tmp_path)
    events = []
    summary = plan(spec)
    result = run_pipeline(spec, CallbackReporter(events.append))

    entries = charges(Ledger())
    assert [e["stage"] for e in entries] == [aug_pe_stage(t) for t in (1, 2, 3)]
    assert math.fsum(e["rho"] for e in entries) == pytest.approx(summary.rho_total, rel=1e-12)
    assert result.record.rho_total == pytest.approx(summary.rho_total)
    assert result.record.method == "aug_pe" and result.record.end_to_end_dp
    assert result.record.epsilon_tight <= spec.privacy.epsilon + 1e-6
    assert [e.stage for e in events if e.kind == "charged"] == [aug_pe_stage(t) for t in (1, 2, 3)]
    assert any(e.stage == "aug_pe_generation" and e.kind == "progress" and e.eta_s is not None for e in events)
    assert 1 <= result.n_synthetic <= spec.aug_pe.population

    from core.certificate import verify_export

    export = result.export_dir
    assert verify_export(export).ok
    cert = json.loads((export / "certificate.json").read_text())
    assert "Aug-PE" in json.dumps(cert)
    # Canary: the planted name is in no exported file, no file of the data folder, no event.
    assert CANARY.encode() not in all_bytes_under(export)
    assert CANARY.encode() not in all_bytes_under(privet_home)
    assert all(CANARY not in (e.message or "") for e in events)


def test_cancelled_run_resumes_without_redrawing_a_charged_iteration(tmp_path):
    spec = aug_pe_spec(tmp_path)
    spec.output.folder = ""
    state = {"cancel": False}

    def on_event(event):  # cancel right after iteration 2 is charged: it draws, saves, then stops
        if event.kind == "charged" and event.stage == aug_pe_stage(2):
            state["cancel"] = True

    run_dir = tmp_path / "run"
    with pytest.raises(Cancelled):
        run_pipeline(spec, CallbackReporter(on_event, lambda: state["cancel"]), run_dir=run_dir)
    before = [e["stage"] for e in charges(Ledger())]
    assert before == [aug_pe_stage(1), aug_pe_stage(2)]  # charged at the start, stays charged
    saved = {p.name: p.read_text() for p in run_dir.rglob("aug_pe_histogram_*.json")}
    assert set(saved) == {"aug_pe_histogram_1.json", "aug_pe_histogram_2.json"}

    result = run_pipeline(spec, run_dir=run_dir, resume=True, consent=lambda quote: True)
    after = [e["stage"] for e in charges(Ledger())]
    assert after[len(before):] == [aug_pe_stage(3)]  # iterations 1 and 2 were not redrawn
    assert {name: (run_dir.rglob(name).__next__()).read_text() for name in saved} == saved
    assert result.n_synthetic >= 1


def test_test_mode_run_is_reproducible(tmp_path):
    spec = aug_pe_spec(tmp_path, iterations=1)
    spec.test_mode_seed = 99
    first, second = run_pipeline(spec), run_pipeline(spec)
    assert first.export_dir is None
    assert first.synthetic_path.read_text() == second.synthetic_path.read_text()


def test_bad_generation_settings_are_refused_before_anything_is_charged(tmp_path):
    spec = aug_pe_spec(tmp_path, top_p=0.0)
    with pytest.raises(PrivetError):
        run_pipeline(spec)
    assert charges(Ledger()) == []


def test_evaluation_sweeps_aug_pe_over_epsilon_at_the_scale_sizes():
    from pathlib import Path

    from core.evaluation.config import SCALE_CONFIGS, make_config
    from core.evaluation.runs import plan_runs, run_spec

    demo = make_config("clinic", "out", "demo", (4.0, 10.0), ("dp_synrag", "aug_pe", "dp_synth"))
    assert plan_runs(demo) == [("dp_synrag", 4.0), ("dp_synrag", 10.0), ("aug_pe", 4.0), ("aug_pe", 10.0),
                               ("dp_synth", 10.0)]
    spec = run_spec(demo, Path("members.csv"), "aug_pe", 4.0)
    assert spec.method == "aug_pe" and spec.aug_pe == SCALE_CONFIGS["demo"].aug_pe
    assert spec.output.folder == ""


def test_privet_plan_shows_the_per_iteration_budget(tmp_path, capsys):
    from core.cli import main as privet
    from core.specs.stage_labels import stage_label

    spec = aug_pe_spec(tmp_path, iterations=2)
    path = tmp_path / "spec.toml"
    spec.save(path)
    assert privet(["plan", str(path)]) == 0
    out = capsys.readouterr().out
    assert "voting on candidate texts, round 1" in out and "round 2" in out and "sigma" in out
    assert stage_label(aug_pe_stage(2)) == "voting on candidate texts, round 2"
    assert CANARY not in out
