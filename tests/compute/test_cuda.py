"""The CUDA path (bf16, the engine on the GPU, real out-of-memory halving). Run by `make gpu-check`;
skipped on machines without CUDA (every test here is marked ``cuda``)."""

from __future__ import annotations

import pytest
import torch

from core.methods.private_prediction import EngineConfig, PredictionGroup, PrivatePredictionEngine
from core.models.registry import load_language_model
from core.privacy.mechanisms import TokenSampler
from core.privacy.randomness import test_mode_torch_generator
from core.specs.runspec import ModelChoice

pytestmark = pytest.mark.cuda


@pytest.fixture(scope="module")
def tiny_pair():
    return (
        load_language_model(ModelChoice(source="tiny-random", device="cpu")),
        load_language_model(ModelChoice(source="tiny-random", device="cuda")),
    )


def test_cuda_model_is_bf16_and_agrees_with_the_cpu(tiny_pair):
    cpu, gpu = tiny_pair
    dtype = next(gpu.model.parameters()).dtype
    assert dtype == (torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float32)
    prompts = cpu.chat_prompt_ids(["fever and cough", "a much longer note about a rash on the left arm"], 32)
    a, b = cpu.start_logits(prompts), gpu.start_logits(prompts)
    assert b.logits().device.type == "cuda" and b.logits().dtype == torch.float32
    torch.testing.assert_close(b.logits().cpu(), a.logits(), atol=0.15, rtol=0.05)  # bf16 rounding
    tokens = a.logits().argmax(-1)
    a.append(tokens)
    b.append(tokens.cuda())
    b.keep(torch.tensor([1], device="cuda"))
    torch.testing.assert_close(b.logits().cpu()[0], a.logits()[1], atol=0.15, rtol=0.05)


def test_engine_runs_on_cuda_in_test_mode(tiny_pair):
    _, gpu = tiny_pair
    prompts = gpu.chat_prompt_ids([f"note {i}: cough" for i in range(6)], 32)
    groups = [PredictionGroup(g, (tuple(prompts[2 * g]), tuple(prompts[2 * g + 1]))) for g in range(3)]
    sampler = TokenSampler(1.0, test_mode_torch_generator(5, "cuda"))
    results = PrivatePredictionEngine(gpu, EngineConfig(6, 1.0, 1.0, max_rows=64), sampler).run(groups)
    assert sorted(results) == [0, 1, 2]


def test_real_out_of_memory_halves_the_wave(tiny_pair):
    _, gpu = tiny_pair
    torch.cuda.empty_cache()
    _free, total = torch.cuda.mem_get_info()
    cap_bytes = 2 * 2**30  # this process may use 2 GiB of the GPU during the test
    torch.cuda.set_per_process_memory_fraction(cap_bytes / total)
    try:
        # More rows than their float32 logits ([rows, vocab]) alone can hold in the cap: the first wave fails.
        rows = int(cap_bytes // (4 * gpu.vocab_size)) + 1024
        prompt = tuple(gpu.chat_prompt_ids(["cough"], 16)[0])
        groups = [PredictionGroup(g, (prompt,)) for g in range(rows)]
        engine = PrivatePredictionEngine(gpu, EngineConfig(1, 1.0, 1.0, max_rows=rows), TokenSampler(1.0))
        results = engine.run(groups)
    finally:
        torch.cuda.set_per_process_memory_fraction(1.0)
        torch.cuda.empty_cache()
    assert engine.config.max_rows < rows
    assert len(results) == rows
