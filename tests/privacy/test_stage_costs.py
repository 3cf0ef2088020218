"""Every charge comes from the plan: the private-prediction cost the plan records is the one charged."""

from __future__ import annotations

import pytest

from core.privacy.planner import STAGE_TOKENS
from core.methods.dp_synrag.release.budget import plan_dp_synrag
from core.methods.dp_synth.plan import plan_dp_synth
from core.methods.private_prediction.plan import prediction_groups
from core.specs.runspec import DPSynRAGSpec, DPSynthSpec


@pytest.mark.parametrize("L", [1, 3])
def test_dp_synrag_prediction_charge_equals_the_planned_stage(L):
    spec = DPSynRAGSpec(text="private", K=4, R=10, L=L, k=5, T=20)
    plan = plan_dp_synrag(spec, 4.0, 1e-6)
    stage = plan.release(STAGE_TOKENS)
    planned = plan.per_stage()[STAGE_TOKENS]
    recorded = sum(e.total_rho for e in plan.accountant().events if e.stage == STAGE_TOKENS)
    assert stage.event(prediction_groups(stage.parallel, spec.R, resumed=False)).total_rho == planned
    assert recorded == planned and stage.clip == plan.c and stage.count == spec.T
    # A resume that redraws one group charges one group's cost, not the plan's L-fold one.
    assert stage.event(prediction_groups(stage.parallel, 1, resumed=True)).total_rho == pytest.approx(planned / L, rel=1e-12)


def test_dp_synth_spends_its_whole_budget_on_one_disjoint_prediction():
    plan = plan_dp_synth(DPSynthSpec(T=12, tau=0.8), 2.0, 1e-6)  # DP-Synth's batches are disjoint
    (stage,) = plan.releases()
    assert stage.parallel == 1
    assert stage.event(prediction_groups(1, 40, resumed=False)).total_rho == pytest.approx(plan.rho_total, rel=1e-12)
    assert plan.accountant().total_rho() == pytest.approx(plan.rho_total, rel=1e-12)
    assert stage.clip / plan.tau == pytest.approx(plan.c_over_tau)
