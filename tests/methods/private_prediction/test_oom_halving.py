"""Out-of-memory halving of the private-prediction engine, simulated on the CPU."""

from __future__ import annotations

import pytest
import torch

from core.methods.private_prediction import EngineConfig, PredictionGroup, PrivatePredictionEngine
from core.models.registry import load_language_model
from core.privacy.mechanisms import TokenSampler
from core.privacy.randomness import test_mode_torch_generator
from core.specs.runspec import ModelChoice


class OomSession:
    """A session that fails like CUDA does when its wave holds more than ``limit`` rows."""

    def __init__(self, session, limit: int) -> None:
        self._session, self._limit = session, limit

    @property
    def n_rows(self) -> int:
        return self._session.n_rows

    def logits(self) -> torch.Tensor:
        return self._session.logits()

    def append(self, tokens: torch.Tensor) -> None:
        if self._session.n_rows > self._limit:  # the cache grows with each step: fail on the first append
            raise torch.OutOfMemoryError("CUDA out of memory (simulated)")
        self._session.append(tokens)

    def keep(self, rows: torch.Tensor) -> None:
        self._session.keep(rows)


class OomAbove:
    """Wraps a language model; its sessions run out of memory above ``limit`` rows."""

    def __init__(self, llm, limit: int) -> None:
        self._llm, self.limit, self.waves = llm, limit, []

    def __getattr__(self, name):
        return getattr(self._llm, name)

    def start_logits(self, prompt_ids):
        self.waves.append(len(prompt_ids))
        return OomSession(self._llm.start_logits(prompt_ids), self.limit)


def two_row_groups(n_groups: int, limit: int, max_new_tokens: int, seed: int):
    """n groups of two tiny-model rows each, on an engine whose sessions fail above ``limit`` rows."""
    llm = load_language_model(ModelChoice(source="tiny-random", device="cpu"))
    prompts = llm.chat_prompt_ids([f"Note {i}: cough and fever since day {i}." for i in range(2 * n_groups)], 32)
    groups = [PredictionGroup(g, (tuple(prompts[2 * g]), tuple(prompts[2 * g + 1]))) for g in range(n_groups)]
    wrapped = OomAbove(llm, limit=limit)
    engine = PrivatePredictionEngine(
        wrapped,
        EngineConfig(max_new_tokens=max_new_tokens, clip=1.0, tau=1.0, max_rows=8),
        TokenSampler(1.0, test_mode_torch_generator(seed)),
    )
    return groups, wrapped, engine


def test_engine_halves_the_wave_on_out_of_memory_and_finishes_every_group():
    groups, wrapped, engine = two_row_groups(4, limit=3, max_new_tokens=4, seed=3)
    results = engine.run(groups)

    assert sorted(results) == [0, 1, 2, 3]  # the same groups, each finished once
    assert wrapped.waves[:2] == [8, 4]  # 8 rows fail, the wave is halved and retried
    assert engine.config.max_rows <= 2
    # Waves above the limit all failed; the ones that finished hold every group's rows exactly once.
    assert sum(n for n in wrapped.waves if n <= wrapped.limit) == 8
    assert all(results[g].n_rows == 2 for g in results)
    assert all(len(results[g].token_ids) == 4 or results[g].stopped_at_eos for g in results)


def test_after_halving_the_waves_still_pending_are_repacked_and_fail_no_more():
    groups, wrapped, engine = two_row_groups(8, limit=4, max_new_tokens=3, seed=5)
    results = engine.run(groups)
    assert sorted(results) == list(range(8))
    assert wrapped.waves == [8, 4, 4, 4, 4]  # one failure, then every wave at the halved size
    assert engine.config.max_rows == 4


def test_a_single_group_that_does_not_fit_is_an_error_not_a_loop():
    llm = load_language_model(ModelChoice(source="tiny-random", device="cpu"))
    prompts = llm.chat_prompt_ids(["a", "b", "c"], 48)
    group = PredictionGroup(0, tuple(tuple(p) for p in prompts))
    engine = PrivatePredictionEngine(OomAbove(llm, limit=1), EngineConfig(3, 1.0, 1.0, max_rows=8), TokenSampler(1.0))
    with pytest.raises(torch.OutOfMemoryError):
        engine.run([group])
