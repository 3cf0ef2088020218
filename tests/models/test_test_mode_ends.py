"""Fast tiny runs: in the explicit test mode the tiny random model's sampled texts end after a few tokens
(core.models.tiny.end_quickly), and the nucleus sampler ranks a few thousand tokens before it sorts them all."""

from __future__ import annotations

import torch

from core.models import generation
from core.models.generation import decode_rows, end_now, nucleus_candidates, sample_next
from core.models.tiny import TEST_MODE_TOKENS, end_quickly
from tests.models.test_models import _CountingSession


class _Ending(_CountingSession):
    ends_after = 2


def test_a_session_past_its_end_ends_every_row_that_may_end():
    rows = decode_rows(_Ending(3, 6), frozenset({5}), max_new_tokens=10, temperature=0.7)
    assert [len(r) for r in rows] == [2, 2, 2]  # two tokens each, then the end of text
    assert [len(r) for r in decode_rows(_CountingSession(3, 6), frozenset({5}), 4, 0.0)] == [4, 4, 3]  # no cap


def test_a_banned_end_is_kept_banned():
    logits = torch.zeros(2, 5)
    logits[1, 4] = float("-inf")  # a rule keeps row 1 writing (a released word is missing)
    ended = end_now(logits, frozenset({4}))
    assert ended[0, 4] == generation.END_MARGIN and torch.isneginf(ended[1, 4])
    assert torch.equal(ended[:, :4], logits[:, :4])
    assert sample_next(ended, 0.5, 0.9, torch.Generator().manual_seed(1))[0] == 4


def test_the_nucleus_is_the_same_whether_thousands_are_ranked_or_all_are_sorted():
    generator = torch.Generator().manual_seed(3)
    for scale in (0.5, 2.0, 8.0):  # near-flat (a random model) to peaked (a trained one)
        log_p = torch.log_softmax(torch.randn(4, 20_000, generator=generator) * scale, -1)
        ranked, order = nucleus_candidates(log_p, 0.9)
        full, full_order = log_p.sort(dim=-1, descending=True)
        for row in range(4):
            p, q = ranked[row].exp(), full[row].exp()
            inside, inside_full = (p.cumsum(0) - p) < 0.9, (q.cumsum(0) - q) < 0.9
            assert set(order[row][inside].tolist()) == set(full_order[row][inside_full].tolist())


def test_only_a_test_mode_run_of_the_tiny_model_ends_quickly(tmp_path):
    from core.run.loaded_models import load_models
    from core.common.progress import NULL_REPORTER
    from tests.helpers import tiny_spec

    spec = tiny_spec(tmp_path)
    assert getattr(load_models(spec, NULL_REPORTER).llm, "ends_after", None) is None
    spec.test_mode_seed = 5
    llm = load_models(spec, NULL_REPORTER).llm
    assert llm.ends_after == TEST_MODE_TOKENS and end_quickly(llm) is llm
    session = llm.start_logits(llm.chat_prompt_ids(["Write a note."] * 2))
    assert session.ends_after == TEST_MODE_TOKENS
    rows = decode_rows(session, llm.eos_token_ids, 80, 0.5, 0.9, torch.Generator().manual_seed(2))
    assert all(len(r) == TEST_MODE_TOKENS for r in rows)
