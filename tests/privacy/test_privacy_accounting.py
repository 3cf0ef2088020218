"""ρ-zCDP ↔ (ε, δ) conversion, the accountant and the budget planner (SPEC §1, §2, §3)."""

from __future__ import annotations

import math

import pytest

from core.common.errors import PrivetError
from core.methods.dp_synrag.release.budget import default_fractions, plan_dp_synrag
from core.privacy.accountant import Accountant, PrivacyEvent
from core.privacy.conversion import eps_to_rho, rho_to_eps
from core.privacy.planner import (
    STAGE_HISTOGRAM,
    STAGE_MEAN,
    STAGE_THRESHOLD,
    STAGE_TOKENS,
    delta_warnings,
    public_delta,
)
from core.methods.rpsg.plan import plan_rpsg
from core.methods.private_prediction.plan import prediction_charge
from core.specs.runspec import DPSynRAGSpec

RHO_GRID = [0.01, 0.1, 0.5, 1.0, 2.6, 10.0]
DELTA_GRID = [1e-3, 1e-5, 1e-8]
EPSILONS = [0.5, 1.0, 4.0, 10.0, 50.0]

# --- conversion ---------------------------------------------------------------------------------

# The seed's sizes (R, L, k): stated, so no DP size count runs and the seed's split is reproduced exactly.
SEED_SIZES = {"R": 500, "L": 5, "k": 80}


@pytest.mark.parametrize(
    "eps, delta, loose, tight", [(10.0, 1e-3, 2.2012, 2.6068), (4.0, 1e-5, 0.2977, 0.3731)]
)
def test_reference_numbers(eps, delta, loose, tight):
    assert round(eps_to_rho(eps, delta, "loose"), 4) == loose
    assert round(eps_to_rho(eps, delta, "tight"), 4) == tight
    assert round(eps_to_rho(eps, delta), 4) == tight  # tight is the default


@pytest.mark.parametrize("rho", RHO_GRID)
@pytest.mark.parametrize("delta", DELTA_GRID)
def test_tight_matches_opendp(rho, delta):
    import opendp.prelude as dp

    dp.enable_features("contrib", "honest-but-curious")
    zcdp = dp.m.make_user_measurement(
        dp.atom_domain(T=float, nan=False),
        dp.absolute_distance(T=float),
        dp.zero_concentrated_divergence(),
        lambda x: x,
        lambda d_in: rho,
    )
    theirs = dp.c.make_zCDP_to_approxDP(zcdp).map(1.0).epsilon(delta)
    ours = rho_to_eps(rho, delta)
    assert ours == pytest.approx(theirs, rel=1e-7, abs=1e-9)


@pytest.mark.parametrize("rho", RHO_GRID)
@pytest.mark.parametrize("delta", DELTA_GRID)
def test_tight_matches_dp_accounting_rdp(rho, delta):
    from dp_accounting import dp_event, rdp

    accountant = rdp.RdpAccountant()
    accountant.compose(dp_event.ZCDpEvent(rho))
    theirs = accountant.get_epsilon(delta)  # finite α grid: never below the true infimum
    ours = rho_to_eps(rho, delta)
    assert ours <= theirs + 1e-9
    assert theirs <= ours * 1.01


@pytest.mark.parametrize("rho", RHO_GRID)
@pytest.mark.parametrize("delta", DELTA_GRID)
def test_loose_formula_and_ordering(rho, delta):
    loose = rho_to_eps(rho, delta, "loose")
    assert loose == pytest.approx(rho + 2 * math.sqrt(rho * math.log(1 / delta)), rel=1e-12)
    assert rho_to_eps(rho, delta, "tight") < loose


@pytest.mark.parametrize("method", ["tight", "loose"])
def test_conversion_is_increasing_and_zero_at_zero(method):
    assert rho_to_eps(0.0, 1e-5, method) == 0.0
    values = [rho_to_eps(r, 1e-5, method) for r in [1e-6, 1e-4, 1e-2, 0.1, 1, 10, 100]]
    assert all(a < b for a, b in zip(values, values[1:]))
    assert rho_to_eps(1.0, 1e-8, method) > rho_to_eps(1.0, 1e-3, method)  # smaller δ costs more ε


@pytest.mark.parametrize("method", ["tight", "loose"])
@pytest.mark.parametrize("eps", EPSILONS + [0.01, 200.0])
@pytest.mark.parametrize("delta", DELTA_GRID)
def test_eps_to_rho_is_the_largest_safe_rho(method, eps, delta):
    rho = eps_to_rho(eps, delta, method)
    assert rho_to_eps(rho, delta, method) <= eps
    assert rho_to_eps(rho * (1 + 1e-6), delta, method) > eps  # and not much smaller than it could be


def test_conversion_refuses_bad_input():
    for bad in (0.0, 1.0, -1e-5, float("nan")):
        with pytest.raises(PrivetError):
            rho_to_eps(1.0, bad)
    for bad in (0.0, -1.0, float("inf")):
        with pytest.raises(PrivetError):
            eps_to_rho(bad, 1e-5)
    with pytest.raises(PrivetError):
        rho_to_eps(-0.1, 1e-5)
    with pytest.raises(PrivetError):
        eps_to_rho(1.0, 1e-5, method="renyi")


# --- accountant ----------------------------------------------------------------------------------


def test_gaussian_and_bounded_range_costs():
    acc = Accountant()
    g = acc.gaussian("h", sensitivity=math.sqrt(10), sigma=5.0)
    assert g.rho == pytest.approx(10 / 50)
    assert g.mechanism == "gaussian" and g.parameters == {"sensitivity": math.sqrt(10), "sigma": 5.0}
    b = acc.bounded_range("t", epsilon=0.4)
    assert b.rho == pytest.approx(0.02)
    assert b.mechanism == "bounded_range" and b.parameters == {"epsilon": 0.4}
    assert acc.total_rho() == pytest.approx(0.22)


def test_sequential_and_overlapping_parallel_composition():
    acc = Accountant()
    acc.bounded_range("tokens", epsilon=0.2, count=70, parallel=5)
    per_token = 0.2**2 / 8
    assert acc.total_rho() == pytest.approx(per_token * 70 * 5)  # L·T·ρ, not R·T·ρ
    acc.gaussian("mean", 1.0, 2.0, parallel=5)
    acc.gaussian("mean", 1.0, 2.0, parallel=5)
    assert acc.per_stage() == pytest.approx({"tokens": per_token * 350, "mean": 2 * 5 * 0.125})
    assert list(acc.per_stage()) == ["tokens", "mean"]
    assert acc.total_rho() == pytest.approx(per_token * 350 + 1.25)
    assert len(acc.events) == 3 and all(isinstance(e, PrivacyEvent) for e in acc.events)
    assert acc.events[0].total_rho == pytest.approx(per_token * 350)
    assert acc.to_dicts()[1]["total_rho"] == pytest.approx(0.625)


def test_accountant_epsilon_uses_conversion():
    acc = Accountant()
    acc.gaussian("a", 1.0, 1.0)  # ρ = 0.5
    assert acc.epsilon(1e-5) == pytest.approx(rho_to_eps(0.5, 1e-5))
    assert acc.epsilon(1e-5, "loose") == pytest.approx(0.5 + 2 * math.sqrt(0.5 * math.log(1e5)))
    assert Accountant().total_rho() == 0.0 and Accountant().epsilon(1e-5) == 0.0


def test_accountant_events_cannot_be_mutated_from_outside():
    acc = Accountant()
    acc.gaussian("a", 1.0, 1.0)
    acc.events.clear()
    assert len(acc.events) == 1


@pytest.mark.parametrize(
    "call",
    [
        lambda a: a.gaussian("a", 0.0, 1.0),
        lambda a: a.gaussian("a", 1.0, 0.0),
        lambda a: a.gaussian("a", 1.0, 1.0, count=0),
        lambda a: a.gaussian("a", 1.0, 1.0, parallel=0),
        lambda a: a.bounded_range("a", -1.0),
        lambda a: a.bounded_range("a", 1.0, count=1.5),
    ],
)
def test_accountant_refuses_bad_events(call):
    with pytest.raises(PrivetError):
        call(Accountant())


# --- planner -----------------------------------------------------------------------------------


@pytest.mark.parametrize("conversion, rho, c_over_tau", [("tight", 2.6068, 0.1162), ("loose", 2.2012, 0.1057)])
def test_planner_reproduces_the_seed_reference(conversion, rho, c_over_tau):
    plan = plan_dp_synrag(DPSynRAGSpec(
        **SEED_SIZES, text="private", refine=True, cluster_keywords=0, discover_phrases=False), 10.0, 1e-3, conversion)
    assert round(plan.rho_total, 4) == rho
    assert round(plan.c_over_tau, 4) == c_over_tau
    assert plan.rho_hist == pytest.approx(0.1, rel=1e-8)
    assert plan.rho_mu == pytest.approx(0.009, rel=1e-8)
    assert plan.eps_theta == pytest.approx(0.4, rel=1e-8)
    assert plan.sigma_h == pytest.approx(math.sqrt(10 / 0.2), rel=1e-8)
    assert plan.sigma_mu == pytest.approx(math.sqrt(1 / 0.018), rel=1e-8)


@pytest.mark.parametrize("conversion", ["tight", "loose"])
@pytest.mark.parametrize("eps", EPSILONS)
def test_planner_at_every_epsilon(conversion, eps):
    delta = 1e-5
    spec = DPSynRAGSpec(**SEED_SIZES, text="private", refine=True, cluster_keywords=0, discover_phrases=False)
    plan = plan_dp_synrag(spec, eps, delta, conversion)
    # The plan spends exactly the budget and no more.
    assert rho_to_eps(plan.rho_total, delta, conversion) <= eps
    assert plan.accountant().epsilon(delta, conversion) <= eps * (1 + 1e-12)
    assert plan.accountant().total_rho() == pytest.approx(plan.rho_total, rel=1e-12)
    # SPEC §2.4 cost formula, recomputed from the derived noise parameters.
    rho_cluster = plan.eps_theta**2 / 8 + 1 / (2 * plan.sigma_mu**2) + (spec.T / 2) * plan.c_over_tau**2
    assert plan.rho_cluster == pytest.approx(rho_cluster, rel=1e-12)
    assert spec.K / (2 * plan.sigma_h**2) + spec.L * rho_cluster == pytest.approx(plan.rho_total, rel=1e-12)
    # Stage split sums to the total and follows the default shares.
    stages = plan.per_stage()
    assert list(stages) == [STAGE_HISTOGRAM, STAGE_MEAN, STAGE_THRESHOLD, STAGE_TOKENS]
    assert sum(stages.values()) == pytest.approx(plan.rho_total, rel=1e-12)
    assert plan.accountant().per_stage() == pytest.approx(stages, rel=1e-12)
    f_hist, f_mu, f_theta = default_fractions(conversion)
    assert stages[STAGE_HISTOGRAM] == pytest.approx(f_hist * plan.rho_total)
    assert stages[STAGE_MEAN] == pytest.approx(f_mu * plan.rho_total)
    assert stages[STAGE_THRESHOLD] == pytest.approx(f_theta * plan.rho_total)
    assert min(plan.sigma_h, plan.sigma_mu, plan.eps_theta, plan.c_over_tau) > 0
    assert plan.c == pytest.approx(plan.c_over_tau * spec.tau)
    assert plan.to_dict()["per_stage"] == stages


@pytest.mark.parametrize("conversion", ["tight", "loose"])
def test_planner_without_refinement_gives_its_share_to_the_tokens(conversion):
    refined = plan_dp_synrag(DPSynRAGSpec(
        **SEED_SIZES, text="private", refine=True, cluster_keywords=0, discover_phrases=False), 10.0, 1e-6, conversion)
    plan = plan_dp_synrag(DPSynRAGSpec(
        **SEED_SIZES, text="private", refine=False, cluster_keywords=0, discover_phrases=False), 10.0, 1e-6, conversion)
    assert list(plan.per_stage()) == [STAGE_HISTOGRAM, STAGE_TOKENS]
    assert sum(plan.per_stage().values()) == pytest.approx(plan.rho_total, rel=1e-12)
    assert plan.accountant().total_rho() == pytest.approx(plan.rho_total, rel=1e-12)
    assert plan.accountant().epsilon(1e-6, conversion) <= 10.0 * (1 + 1e-12)
    assert plan.rho_hist == pytest.approx(refined.rho_hist)
    assert plan.c_over_tau > refined.c_over_tau
    assert math.isfinite(plan.to_dict()["sigma_h"]) and plan.to_dict()["sigma_mu"] is None


def test_planner_noise_shrinks_as_epsilon_grows():
    plans = [plan_dp_synrag(DPSynRAGSpec(
        **SEED_SIZES, text="private", refine=True, cluster_keywords=0, discover_phrases=False), e, 1e-5) for e in EPSILONS]
    for a, b in zip(plans, plans[1:]):
        assert a.sigma_h > b.sigma_h and a.sigma_mu > b.sigma_mu
        assert a.eps_theta < b.eps_theta and a.c_over_tau < b.c_over_tau


def test_planner_fraction_overrides_and_method_parameters():
    spec = DPSynRAGSpec(R=500, k=80, text="private", K=5, L=3, T=40, tau=2.0, hist_fraction=0.2, mu_fraction=0.05,
                        theta_fraction=0.05, refine=True,
                        cluster_keywords=0, discover_phrases=False)
    plan = plan_dp_synrag(spec, 4.0, 1e-6)
    assert plan.rho_hist == pytest.approx(0.2 * plan.rho_total)
    assert plan.rho_mu == pytest.approx(0.05 * plan.rho_total / 3)
    assert plan.rho_theta == pytest.approx(0.05 * plan.rho_total / 3)
    assert plan.tokens_fraction == pytest.approx(0.7)
    assert plan.sigma_h == pytest.approx(math.sqrt(5 / (2 * plan.rho_hist)))
    assert plan.c == pytest.approx(2.0 * plan.c_over_tau)
    assert plan.rho_per_token == pytest.approx(plan.c_over_tau**2 / 2)
    assert plan.token_epsilon**2 / 8 == pytest.approx(plan.rho_per_token)


@pytest.mark.parametrize(
    "spec, eps, delta",
    [
        (DPSynRAGSpec(**SEED_SIZES, text="private", hist_fraction=1.0), 10.0, 1e-5),
        (DPSynRAGSpec(**SEED_SIZES, text="private", mu_fraction=1.5, refine=True), 10.0, 1e-5),
        (DPSynRAGSpec(**SEED_SIZES, text="private", theta_fraction=-0.1, refine=True), 10.0, 1e-5),
        (DPSynRAGSpec(**SEED_SIZES, text="private", hist_fraction=0.5, mu_fraction=0.3, theta_fraction=0.2, refine=True), 10.0, 1e-5),
        (DPSynRAGSpec(**SEED_SIZES, text="private"), 0.0, 1e-5),
        (DPSynRAGSpec(**SEED_SIZES, text="private"), -1.0, 1e-5),
        (DPSynRAGSpec(**SEED_SIZES, text="private"), 10.0, 0.0),
        (DPSynRAGSpec(**SEED_SIZES, text="private"), 10.0, 1.0),
        (DPSynRAGSpec(**SEED_SIZES, text="private", K=0), 10.0, 1e-5),
        (DPSynRAGSpec(R=500, k=80, text="private", L=-1), 10.0, 1e-5),
        (DPSynRAGSpec(**SEED_SIZES, text="private", T=0), 10.0, 1e-5),
        (DPSynRAGSpec(**SEED_SIZES, text="private", tau=0.0), 10.0, 1e-5),
    ],
)
def test_planner_refuses_impossible_plans(spec, eps, delta):
    with pytest.raises(PrivetError) as info:
        plan_dp_synrag(spec, eps, delta)
    assert info.value.what and info.value.fix


def test_planner_refuses_unknown_conversion():
    with pytest.raises(PrivetError):
        plan_dp_synrag(DPSynRAGSpec(**SEED_SIZES, text="private"), 10.0, 1e-5, conversion="pld")


# --- δ ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("max_units, expected", [(0, 1e-6), (1, 0.1), (1000, 1e-4), (1001, 1 / 10010), (250_000, 4e-7)])
def test_default_delta_comes_from_public_numbers_only(max_units, expected):
    assert public_delta(max_units) == pytest.approx(expected, rel=1e-12)


def test_default_delta_does_not_follow_the_loaded_data(tmp_path):
    """Issue 11 item 3: the default δ used to jump at every power of ten of the private n (100 → 1e-3, 101 → 1e-4)."""
    from core.run.pipeline import resolve_delta
    from core.specs.runspec import RunSpec

    spec = RunSpec()
    assert resolve_delta(spec) == 1e-6
    spec.privacy.max_units = 5000  # the custodian's public bound N
    assert resolve_delta(spec) == pytest.approx(1 / 50_000)
    spec.privacy.delta = 1e-7
    assert resolve_delta(spec) == 1e-7
    import core.privacy.planner as planner

    assert not hasattr(planner, "default_delta")  # the n-dependent rule is gone
    with pytest.raises(PrivetError):
        public_delta(-1)


def test_plan_delta_is_the_same_for_100_and_101_units(tmp_path):
    from core.run.pipeline import plan
    from core.specs.runspec import RunSpec

    deltas = []
    for n in (100, 101):
        path = tmp_path / f"d{n}" / "notes.csv"
        path.parent.mkdir()
        path.write_text("note\n" + "".join(f"document number {i}\n" for i in range(n)), encoding="utf-8")
        spec = RunSpec()
        spec.data.path, spec.data.text_column = str(path), "note"
        deltas.append(plan(spec).delta)
    assert deltas[0] == deltas[1] == 1e-6


def test_delta_rule_is_stated_in_plain_words():
    from core.privacy.planner import delta_rule

    assert "1e-06" in delta_rule(0.0) and "never computed from the data" in delta_rule(0.0)
    assert "N = 5000" in delta_rule(0.0, 5000) and "2e-05" in delta_rule(0.0, 5000)
    assert delta_rule(1e-7, 5000).startswith("δ = 1e-07, as set")


def test_delta_warnings():
    assert delta_warnings(1e-6, 0) == []
    assert delta_warnings(1e-4, 1000) == []
    message = delta_warnings(1e-3, 1000)
    assert len(message) == 1 and "1/N" in message[0]
    too_many = delta_warnings(1e-6, 1000, n_units=1200)
    assert len(too_many) == 1 and "more than the stated upper bound" in too_many[0]
    assert delta_warnings(0.5, 0, n_units=10)  # no bound stated: still warned on screen when δ ≥ 1/n


def test_prediction_charge_on_resume_counts_only_redrawn_groups():
    per_group = 0.4
    assert prediction_charge(per_group, 5, 500, resumed=False) == pytest.approx(2.0)  # the plan: L groups
    assert prediction_charge(per_group, 5, 3, resumed=False) == pytest.approx(2.0)
    assert prediction_charge(per_group, 5, 3, resumed=True) == pytest.approx(1.2)  # min(L, 3) redrawn
    assert prediction_charge(per_group, 5, 40, resumed=True) == pytest.approx(2.0)
    assert prediction_charge(per_group, 1, 40, resumed=True) == pytest.approx(0.4)  # disjoint batches


# --- RPSG --------------------------------------------------------------------------------------


@pytest.mark.parametrize("eps, delta, m", [(0.5, 1e-5, 5), (1.0, 1e-5, 5), (4.0, 1e-6, 3)])
def test_rpsg_plan_is_accounted_honestly(eps, delta, m):
    plan = plan_rpsg(eps, delta, m=m)
    seed_sigma = math.sqrt(2 * math.log(1.25 / delta)) / eps
    assert plan.sigma >= seed_sigma  # never less noise than SPEC §3's formula
    assert plan.sensitivity == pytest.approx(math.sqrt(m))  # all m utilities depend on the seed
    assert plan.rho == pytest.approx(m / (2 * plan.sigma**2))
    assert plan.epsilon_guaranteed == pytest.approx(rho_to_eps(plan.rho, delta))
    assert plan.epsilon_guaranteed <= eps * (1 + 1e-9)  # the Δ = √m accounting meets the target
    # The seed's Δ = 1 calibration alone would under-state the cost:
    assert rho_to_eps(m / (2 * seed_sigma**2), delta) > eps
    assert plan.accountant().total_rho() == pytest.approx(plan.rho)
    assert "no differential-privacy guarantee" in plan.scope


def test_a_phrase_stage_redrawn_after_a_resume_spends_its_delta_again():
    """docs/method.md §2.0: a resume that draws the phrase stage again spends δ_p twice, so the record's δ
    is the planned δ plus δ_p, and the zCDP part is still converted at the planned δ − δ_p."""
    from core.privacy.conversion import REDRAWN_SUFFIX, approx_rho_to_eps, redrawn_delta

    stages = [{"stage": "phrases", "rho": 0.1, "delta": 5e-7}, {"stage": "histogram", "rho": 0.4},
              {"stage": "phrases" + REDRAWN_SUFFIX, "rho": 0.1, "delta": 5e-7}]
    assert redrawn_delta(stages) == pytest.approx(5e-7)
    assert redrawn_delta(stages[:2]) == 0.0
    delta = 1e-6 + redrawn_delta(stages)
    spent = sum(s.get("delta", 0.0) for s in stages)
    once = approx_rho_to_eps(0.6, 1e-6, 5e-7)
    twice = approx_rho_to_eps(0.6, delta, spent)  # same conversion δ (5e-7), δ_p counted twice
    assert twice == pytest.approx(once, rel=1e-6) and twice >= once
    with pytest.raises(PrivetError):
        approx_rho_to_eps(0.6, 1e-6, spent)  # without raising the record's δ, the conversion has no δ left
