"""Bounded private prediction (docs/method.md §2.4.8): Poisson subsampling of C_r at q_r = min(1, k / h'(w_r))."""

from __future__ import annotations

import csv
from dataclasses import replace

import numpy as np
import pytest
from scipy import stats

from core.common.checkpoints import Checkpoints
from core.corpus import Unit
from core.methods.base import MethodContext
from core.methods.compute_backend import LOCAL
from core.methods.dp_synrag import algorithm
from core.methods.dp_synrag.release.budget import plan_dp_synrag
from core.methods.dp_synrag.release.row_bound import poisson_subsample, subsample_rates
from core.methods.dp_synrag.vocab.vocabulary import load_vocabulary
from core.methods.dp_synrag.write import private_rows
from core.models.registry import load_language_model
from core.models.tiny import HashingEmbedder
from core.common.paths import resources_dir
from core.privacy.planner import STAGE_TOKENS
from core.common.progress import NULL_REPORTER
from core.specs.runspec import DPSynRAGSpec, ModelChoice
from tests.helpers import statistical

DOMAIN = str(resources_dir() / "vocab" / "medical_demo_domain.txt")


def test_rates_are_k_over_the_released_count_and_one_at_or_below_k():
    rates = subsample_rates([1000.0, 80.0, 40.0, -3.0, 160.0], k=80)
    np.testing.assert_allclose(rates, [0.08, 1.0, 1.0, 1.0, 0.5])
    with pytest.raises(ValueError):
        subsample_rates([10.0], k=0)


@statistical
def test_each_member_is_kept_independently_at_rate_q():
    rng = np.random.default_rng(7)  # the test's own draws; the mechanism takes whatever generator it is given
    members, q, draws = list(range(400)), 0.1, 500
    kept = np.zeros((draws, len(members)), dtype=bool)
    for d in range(draws):
        kept[d, poisson_subsample([members], [q], rng)[0]] = True
    # The total is Binomial(draws * n, q) (two-sided test, false-failure rate 1e-3).
    assert stats.binomtest(int(kept.sum()), kept.size, q).pvalue > 1e-3
    # Every member has the same rate: chi-square of the per-member counts against draws * q.
    per_member = kept.sum(axis=0)
    chi2 = ((per_member - draws * q) ** 2 / (draws * q * (1 - q))).sum()
    assert stats.chi2.sf(chi2, len(members) - 1) > 1e-3
    # Coins are independent: sizes per draw have the binomial variance n q (1 - q) (chi-square on the variance).
    sizes = kept.sum(axis=1)
    statistic = (draws - 1) * sizes.var(ddof=1) / (len(members) * q * (1 - q))
    assert 1e-3 < stats.chi2.cdf(statistic, draws - 1) < 1 - 1e-3


def test_rate_one_keeps_every_member_and_draws_nothing():
    class NoDraws:
        def random(self, *_args):
            raise AssertionError("a cluster at rate 1 must not draw")

    assert poisson_subsample([[3, 1, 2], []], [1.0, 1.0], NoDraws()) == [[3, 1, 2], []]  # type: ignore[arg-type]


def clinic_units(n: int) -> list[Unit]:
    with open(resources_dir() / "demo" / "clinic" / "notes.csv", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))[:n]
    return [Unit(uid=r["id"], text=r["note"]) for r in rows]


@pytest.fixture(scope="module")
def tiny_llm():
    return load_language_model(ModelChoice(source="tiny-random", device="cpu"))


def small_spec(**changes) -> DPSynRAGSpec:
    spec = DPSynRAGSpec(K=8, R=12, L=3, k=5, T=2, self_filter=False, domain_lists=[DOMAIN], hist_fraction=0.4, text="private",
                       discover_phrases=False)
    return replace(spec, **changes)


def run(units, spec, llm, tmp_path, name, test_seed: int | None = 3, log=None, engine_factory=None):
    log = [] if log is None else log
    ctx = MethodContext(
        llm=llm, embedder=HashingEmbedder(), task="Answer questions about diseases.",
        charge=lambda stage, rho, _d, delta_part=0.0: log.append(("charge", stage, rho)), reporter=NULL_REPORTER,
        checkpoints=Checkpoints(tmp_path / name), test_seed=test_seed, batch_rows=64,
        compute=LOCAL if engine_factory is None else replace(LOCAL, engine_factory=engine_factory),
    )
    plan = plan_dp_synrag(spec, 10.0, 1e-6)
    algorithm.run_dp_synrag(units, load_vocabulary(spec.domain_lists), spec, "", plan, ctx)
    return plan, log


class Recorder:
    """Records every call of ``poisson_subsample`` (rates and sizes) and of the engine (rows per group)."""

    def __init__(self, log: list) -> None:
        self.log = log
        self.rates: list[list[float]] = []
        self.rows: list[int] = []

    def subsample(self, clusters, rates, rng):
        self.log.append(("subsample",))
        self.rates.append([float(q) for q in rates])
        return poisson_subsample(clusters, rates, rng)

    def engine(self, llm, config, sampler):
        from core.methods.private_prediction import PrivatePredictionEngine

        engine, recorder = PrivatePredictionEngine(llm, config, sampler), self

        class Counting:
            def run(self, groups, progress=None, on_group_done=None):
                recorder.rows.extend(len(g.prompt_ids) for g in groups)
                return engine.run(groups, progress, on_group_done)

        return Counting()


def test_subsample_is_drawn_after_the_stage_is_charged_and_charges_equal_the_plan(tiny_llm, tmp_path, monkeypatch):
    log: list = []
    recorder = Recorder(log)
    monkeypatch.setattr(private_rows, "poisson_subsample", recorder.subsample)
    plan, log = run(clinic_units(300), small_spec(), tiny_llm, tmp_path, "a", log=log)
    order = [entry[0] if entry[0] == "subsample" else entry[1] for entry in log]
    assert "subsample" in order and order.index(STAGE_TOKENS) < order.index("subsample")
    charged = {stage: rho for kind, stage, rho in (e for e in log if e[0] == "charge")}
    assert charged == pytest.approx(plan.per_stage())
    assert any(q < 1.0 for q in recorder.rates[0])  # the bound applied: some noisy counts exceed k = 5

    none_plan, none_log = run(clinic_units(300), small_spec(row_bound="none"), tiny_llm, tmp_path, "b")
    assert none_plan == plan  # the row bound is not a privacy parameter
    assert {s: r for _k, s, r in none_log} == pytest.approx(charged)


def test_rates_come_from_the_released_histogram_only(tiny_llm, tmp_path, monkeypatch):
    """Two corpora with different private counts but the same released histogram get the same rates."""
    recorder = Recorder([])
    monkeypatch.setattr(private_rows, "poisson_subsample", recorder.subsample)
    units = clinic_units(300)
    run(units, small_spec(), tiny_llm, tmp_path, "first")
    released = Checkpoints(tmp_path / "first").load("histogram")
    # A second corpus: the same notes twice over (every private count doubles), resumed from the same release.
    other = Checkpoints(tmp_path / "second")
    other.save("histogram", released)
    doubled = units + [Unit(uid=u.uid + "-copy", text=u.text) for u in units]
    run(doubled, small_spec(), tiny_llm, tmp_path, "second")
    assert recorder.rates[0] == recorder.rates[1]


def test_rows_per_group_stay_near_k_as_the_corpus_grows(tiny_llm, tmp_path, monkeypatch):
    recorder = Recorder([])
    monkeypatch.setattr(private_rows, "poisson_subsample", recorder.subsample)
    spec = small_spec(cluster_keywords=0)
    units = clinic_units(600)
    means = []
    for copies in (1, 4):
        recorder.rows.clear()
        run([Unit(uid=f"{u.uid}-{c}", text=u.text) for c in range(copies) for u in units], spec, tiny_llm,
            tmp_path, f"n{copies}", engine_factory=recorder.engine)
        means.append(np.mean(recorder.rows))
    # Four times the units: without the bound the rows would grow fourfold; with it they stay about k.
    assert means[1] < 2.0 * spec.k and means[1] < 2.0 * means[0]


def test_private_runs_draw_the_subsample_from_os_entropy(tmp_path):
    ctx = MethodContext(llm=None, embedder=None, task="", charge=lambda *a, **k: None,  # type: ignore[arg-type]
                        reporter=NULL_REPORTER, checkpoints=Checkpoints(tmp_path / "cp"))
    members, counts = [list(range(2000))], [10.0]  # q = k / 10 = 1/2
    a = private_rows.bounded_rows(members, counts, small_spec(), ctx)
    b = private_rows.bounded_rows(members, counts, small_spec(), ctx)
    assert a != b  # no seed outside the test mode: two draws of 2000 fair coins agree with probability 2^-2000
    assert 800 < len(a[0]) < 1200
