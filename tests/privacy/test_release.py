"""The DP release object (core.privacy.release): plans are lists of releases, and a stage runs as
checkpoint, or compute → charge → noise → save."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from core.privacy.planner import STAGE_MEAN, STAGE_TOKENS
from core.methods.aug_pe.plan import aug_pe_stage, plan_aug_pe
from core.methods.dp_synrag.release.budget import plan_dp_synrag
from core.methods.dp_synrag.release.plan import WHOLE_STAGES
from core.methods.dp_synth.plan import plan_dp_synth
from core.methods.rpsg.plan import plan_rpsg
from core.privacy.release import GAUSSIAN, Release, accountant_of, checkpointed, run_release
from core.specs.runspec import AugPESpec, DPSynRAGSpec, DPSynthSpec
from tests.helpers import statistical


class MemoryCheckpoints:
    def __init__(self) -> None:
        self.saved: dict[str, object] = {}

    def has(self, name: str) -> bool:
        return name in self.saved

    def load(self, name: str) -> object:
        return self.saved[name]

    def save(self, name: str, value: object) -> None:
        self.saved[name] = value


class Ctx:
    """A method context with a ledger that remembers what was charged, and when."""

    def __init__(self) -> None:
        self.checkpoints = MemoryCheckpoints()
        self.log: list[tuple] = []

    def charge(self, stage: str, rho: float, words: str, delta_part: float = 0.0) -> None:
        self.log.append(("charge", stage, rho, words))


def gaussian_stage(sigma: float = 2.0, sensitivity: float = 1.0) -> Release:
    return Release("counts", GAUSSIAN, "noisy counts", f"Gaussian noise sigma={sigma}", sensitivity, sigma)


def test_a_fresh_stage_is_charged_after_computing_and_before_its_noise_then_saved():
    ctx, stage = Ctx(), gaussian_stage()

    def compute():
        ctx.log.append(("compute",))
        return np.zeros(3)

    def noise(exact):
        ctx.log.append(("noise",))
        return stage.noise(exact, np.random.default_rng(0))

    out = run_release(stage, ctx, compute, noise, dump=lambda a: a.tolist(), load=np.asarray)
    assert [e[0] for e in ctx.log] == ["compute", "charge", "noise"]
    assert ctx.log[1][1:] == ("counts", stage.rho, "Gaussian noise sigma=2.0")
    assert ctx.checkpoints.saved["counts"] == out.tolist()


def test_a_checkpointed_stage_is_neither_charged_nor_drawn_again():
    ctx, stage = Ctx(), gaussian_stage()
    ctx.checkpoints.save("counts", [1.0, 2.0])

    def fail():
        raise AssertionError("computed again")

    out = run_release(stage, ctx, fail, fail, load=np.asarray)
    assert out.tolist() == [1.0, 2.0] and ctx.log == []


def test_a_stage_of_two_releases_charges_both_with_the_run_detail():
    ctx = Ctx()
    plan = plan_dp_synrag(DPSynRAGSpec(K=4, R=5, L=2, k=5, T=6, refine=True), 4.0, 1e-6)
    stages = [plan.release(STAGE_MEAN), plan.release("retrieval_threshold")]
    run_release(stages, ctx, lambda: None, lambda _: [], detail="5 clusters, each unit in <= L=2")
    assert [(s, r) for _, s, r, _ in ctx.log] == [(x.stage, x.rho) for x in stages]
    assert all(words.endswith(", 5 clusters, each unit in <= L=2") for *_, words in ctx.log)
    assert list(ctx.checkpoints.saved) == ["retrieval"]  # one output, under the key both releases name
    assert stages[0].rho == pytest.approx(plan.L * plan.rho_mu, rel=1e-15)


def test_checkpointed_public_steps_are_computed_once():
    ctx, calls = Ctx(), []
    assert checkpointed(ctx, "batches", lambda: calls.append(1) or [[0, 1]]) == [[0, 1]]
    assert checkpointed(ctx, "batches", lambda: calls.append(1) or [[9]]) == [[0, 1]]
    assert calls == [1] and ctx.log == []


def test_release_noise_has_the_declared_sd_and_shape():
    stage = gaussian_stage(sigma=3.0)
    noisy = stage.noise(np.zeros((40, 50)), np.random.default_rng(1))
    assert noisy.shape == (40, 50)
    assert stats.kstest(noisy.ravel() / 3.0, "norm").pvalue > 1e-3


@statistical
def test_exact_sampler_is_used_without_a_test_generator():
    noisy = gaussian_stage(sigma=1.5, sensitivity=2.0).noise(np.zeros(4000))
    assert stats.kstest(noisy / 1.5, "norm").pvalue > 1e-3


@pytest.mark.parametrize("kwargs", [{}, {"refine": False}, {"cluster_keywords": 0}, {"discover_phrases": False},
                                    {"text": "realised"}])
def test_dp_synrag_plan_is_its_list_of_releases(kwargs):
    spec = DPSynRAGSpec(K=4, R=5, L=3, k=5, T=6, **{"refine": True, **kwargs})
    plan = plan_dp_synrag(spec, 4.0, 1e-6)
    releases = plan.releases()
    assert list(plan.per_stage()) == [r.stage for r in releases]
    # each stage released whole names the checkpoint a resume looks for (DPSynRAGMethod.finished_stages)
    assert {r.stage: r.key for r in releases if r.stage != STAGE_TOKENS}.items() <= WHOLE_STAGES.items()
    assert math.fsum(r.rho for r in releases) == pytest.approx(plan.rho_total, rel=1e-9)
    # the accountant reads the same list: each event's cost equals the stage's planned rho
    for event, release in zip(accountant_of(releases).events, releases, strict=True):
        assert event.stage == release.stage and event.total_rho == pytest.approx(release.rho, rel=1e-9)
        assert event.parallel_multiplier == release.parallel
    if plan.token_stage:  # the token stage carries the engine's clip c (each token 2c/τ-bounded-range)
        assert plan.release(STAGE_TOKENS).clip == plan.c


def test_every_other_plan_is_its_list_of_releases():
    aug = plan_aug_pe(AugPESpec(iterations=3), 2.0, 1e-6)
    assert [r.stage for r in aug.releases()] == [aug_pe_stage(t) for t in (1, 2, 3)]
    assert aug.accountant().total_rho() == pytest.approx(aug.rho_total, rel=1e-12)
    synth = plan_dp_synth(DPSynthSpec(T=12), 2.0, 1e-6)
    assert [(r.stage, r.parallel) for r in synth.releases()] == [(STAGE_TOKENS, 1)]
    assert synth.accountant().total_rho() == pytest.approx(synth.rho_total, rel=1e-12)
    rpsg = plan_rpsg(2.0, 1e-6, m=5)
    (release,) = rpsg.releases()
    assert release.sensitivity == pytest.approx(math.sqrt(5)) and release.rho == pytest.approx(rpsg.rho)


def test_a_statistical_check_is_redrawn_once_and_a_law_that_always_rejects_still_fails():
    draws: list[int] = []

    @statistical
    def rejects_first_draw_only() -> None:
        draws.append(1)
        assert len(draws) > 1

    @statistical
    def always_rejects() -> None:
        draws.append(1)
        raise AssertionError("rejected")

    rejects_first_draw_only()
    assert len(draws) == 2
    with pytest.raises(AssertionError):
        always_rejects()
    assert len(draws) == 4
