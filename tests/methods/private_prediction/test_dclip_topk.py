"""DClip, the keyword-conditioned public row and Top-k+ (docs/method.md §2.4; issue 10)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from tests.methods.private_prediction.test_private_prediction import (
    EOS,
    FakeLM,
    RecordingSampler,
    make_groups,
    reference_logits,
)

from core.methods.private_prediction.prompts import public_message
from core.methods.private_prediction.stage import engine_config
from core.methods.private_prediction import (
    EngineConfig,
    PrivatePredictionEngine,
    anchored_aggregate,
    dclip,
    top_k_plus_candidates,
    top_k_plus_margin,
)
from core.privacy.mechanisms import TokenSampler
from core.common.prompts import render
from core.specs.runspec import DPSynRAGSpec, RunSpec
from tests.helpers import statistical

V = 23


def _z(private: torch.Tensor, public: torch.Tensor, cfg: EngineConfig) -> torch.Tensor:
    slots = torch.zeros(len(private), dtype=torch.long)
    return anchored_aggregate(private, slots, public.unsqueeze(0), cfg)[0]


@pytest.mark.parametrize("scale", [0.1, 3.0, 40.0])
def test_removing_one_unit_moves_every_coordinate_by_at_most_c_under_dclip(scale):
    torch.manual_seed(0)  # public test data, not a mechanism draw
    c = 0.37
    cfg = EngineConfig(8, c, 1.0, public_anchor=True, clip_mode="dclip", public_weight=1.7)
    public = torch.randn(V, dtype=torch.float64) * scale  # float64: the test's own sums must not round
    for trial in range(50):
        private = torch.randn(6, V, dtype=torch.float64) * scale * (1 + trial % 5)
        private[0, trial % V] = float("inf") if trial % 7 == 0 else private[0, trial % V]
        full, without = _z(private, public, cfg), _z(private[1:], public, cfg)
        diff = full - without
        assert torch.all(diff.abs() <= c + 1e-9)
        assert float(diff.max() - diff.min()) <= 2 * c + 1e-9  # range 2C: per token rho = (C/tau)^2/2


def test_dclip_is_a_clamp_of_log_probability_differences():
    d = torch.tensor([[-5.0, -0.1, 0.0, 0.2, 9.0, float("nan")]])
    assert torch.allclose(dclip(d, 0.5), torch.tensor([[-0.5, -0.1, 0.0, 0.2, 0.5, 0.0]]))
    with pytest.raises(ValueError):
        dclip(d, 0.0)


def test_dclip_base_is_lambda_tau_log_p_public_and_shifts_add_up():
    cfg = EngineConfig(4, 0.5, 2.0, public_anchor=True, clip_mode="dclip", public_weight=1.5)
    public = torch.tensor([2.0, 1.0, 0.0, -1.0])
    # every private row raises token 3 by far more than C: each adds exactly +C there
    private = torch.tensor([[2.0, 1.0, 0.0, 9.0]] * 4)
    z = _z(private, public, cfg)
    logp_pub = torch.log_softmax(public, dim=0)
    diffs = torch.clamp(torch.log_softmax(private[0], 0) - logp_pub, -0.5, 0.5)
    assert torch.allclose(z, 1.5 * 2.0 * logp_pub + 4 * diffs)
    assert float(4 * diffs[3]) == pytest.approx(2.0)


def test_top_k_plus_candidates_come_from_public_logits_only():
    public = torch.log_softmax(torch.tensor([[5.0, 4.0, 3.9, 1.0, -3.0, 3.95]]), dim=-1)
    assert top_k_plus_candidates(public, 2, 0.0).tolist() == [[True, True, False, False, False, False]]
    # the margin admits tokens within 0.2 of the 2nd-largest public log-probability (4.0)
    assert top_k_plus_candidates(public, 2, 0.2).tolist() == [[True, True, True, False, False, True]]
    assert top_k_plus_margin(0.25, 2.0, 1.0, rows=8) == pytest.approx(2.0)
    # private rows never change the candidate set: outside it z is -inf whatever they say
    cfg = EngineConfig(4, 0.5, 1.0, public_anchor=True, clip_mode="dclip", top_k_plus=2, top_k_margin=0.0)
    raw_public = torch.tensor([5.0, 4.0, 3.9, 1.0])
    for private in (torch.tensor([[0.0, 0.0, 50.0, 50.0]]), torch.tensor([[50.0, 0.0, 0.0, 0.0]])):
        z = _z(private, raw_public, cfg)
        assert torch.isinf(z[2:]).all() and torch.isfinite(z[:2]).all()


@statistical
def test_restricted_sampler_draws_each_candidate_with_the_right_probability():
    """Chi-square test of the exact sampler over V_k+ (false-failure rate 1e-4)."""
    from scipy.stats import chi2

    cfg = EngineConfig(4, 0.3, 1.0, public_anchor=True, clip_mode="dclip", top_k_plus=4, top_k_margin=0.5)
    public = torch.tensor([3.0, 2.9, 2.5, 2.2, 1.9, 1.0, 0.0, -2.0])
    private = torch.tensor([[0.0, 1.0, 0.0, 3.0, 2.0, 0.0, 5.0, 0.0], [1.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0]])
    z = _z(private, public, cfg)
    mask = torch.isfinite(z)
    assert mask.tolist() == [True, True, True, True, True, False, False, False]
    expected = torch.softmax(z[mask].double(), dim=0).numpy()
    n = 40_000
    sampler = TokenSampler(1.0)  # OS entropy, as in a real run
    draws = sampler.sample(z.unsqueeze(0).repeat(n, 1)).numpy()
    assert set(np.unique(draws)) <= set(range(5))  # never a token outside V_k+
    counts = np.bincount(draws, minlength=5)[:5]
    stat = float(((counts - n * expected) ** 2 / (n * expected)).sum())
    assert stat < chi2.ppf(1 - 1e-4, df=4), (counts, n * expected)


def test_engine_dclip_matches_an_uncached_reference():
    groups = make_groups([2, 3], anchor=True)
    c, lam = 0.4, 1.3
    cfg = EngineConfig(4, c, 1.0, max_rows=64, public_anchor=True, clip_mode="dclip", public_weight=lam)
    results = PrivatePredictionEngine(FakeLM(), cfg, RecordingSampler()).run(groups)
    for g in groups:
        generated: list[int] = []
        for _ in range(4):
            pub = torch.log_softmax(reference_logits(list(g.public_prompt_ids) + generated), dim=0)
            z = lam * pub
            for p in g.prompt_ids:
                own = torch.log_softmax(reference_logits(list(p) + generated), dim=0)
                z = z + torch.clamp(own - pub, -c, c)
            generated.append(int(torch.argmax(z[1:])) + 1)
        assert results[g.gid].token_ids == generated
    assert EOS not in results[0].token_ids


def test_public_row_holds_only_released_keyword_and_public_task():
    task = "Answer patients' questions about which disease matches their symptoms."
    private_note = "Patient CANARY-Zorvath Quellington reports chills; diagnosed with tusfosemia."
    message = public_message("keyword", task, "tusfosemia")
    assert "CANARY" not in message and "Zorvath" not in message and "chills" not in message
    stand_in = render("public_document", keyword="tusfosemia", task=task)
    assert message == render("rephrase", document=stand_in)
    # it mirrors the private rows' prompt: the same instruction, only the document differs
    private_message = render("rephrase", document=private_note)
    head = render("rephrase", document="")
    assert message.startswith(head.rstrip()) and private_message.startswith(head.rstrip())
    assert public_message("empty", task, "tusfosemia") == head
    assert public_message("none", task, "tusfosemia") is None


def test_engine_config_follows_the_run_spec():
    spec = DPSynRAGSpec(k=20, top_k_plus=50, public_weight=2.0)
    cfg = engine_config(spec, c=0.2, batch_rows=64)
    assert (cfg.clip_mode, cfg.public_anchor, cfg.top_k_plus) == ("dclip", True, 50)
    assert cfg.top_k_margin == pytest.approx(2 * 20 * 0.2 / 2.0)
    with pytest.raises(ValueError):
        EngineConfig(4, 0.2, 1.0, public_anchor=False, clip_mode="dclip")


def test_round_one_specs_keep_their_meaning():
    old = RunSpec.from_dict({"dp_synrag": {"public_anchor": True}})
    assert (old.dp_synrag.clip, old.dp_synrag.public_prompt) == ("spec", "empty")
    old = RunSpec.from_dict({"dp_synrag": {"public_anchor": False}})
    assert (old.dp_synrag.clip, old.dp_synrag.public_prompt) == ("spec", "none")
    new = RunSpec.from_dict({})
    assert (new.dp_synrag.clip, new.dp_synrag.public_prompt) == ("dclip", "keyword")
    assert math.isfinite(new.dp_synrag.public_weight)
