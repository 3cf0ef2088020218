"""The offline GPU check: random-weight models from public configs, the forced-T option, and a CPU dry run
of the same script (bench/gpu_check.sh --offline-kit --cpu-dry-run) with the GPU machine's missing
packages hidden."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import torch

from core.methods.dp_synrag.release.budget import plan_dp_synrag
from core.methods.private_prediction import EngineConfig, PredictionGroup, PrivatePredictionEngine, without_eos
from core.models.random_weights import SHAPES, random_language_model, shape_config
from core.models.registry import packaged_tokenizer
from core.privacy.mechanisms import TokenSampler
from core.privacy.randomness import test_mode_torch_generator
from core.specs.runspec import DPSynRAGSpec
from tests.helpers import ROOT

sys.path.insert(0, str(ROOT / "bench"))


@pytest.fixture(scope="module")
def tokenizer():
    return packaged_tokenizer()


def test_public_configs_have_the_models_parameter_counts(tokenizer):
    from transformers import AutoModelForCausalLM

    def count(shape: str) -> int:
        with torch.device("meta"):  # shapes only: no memory, no weights
            model = AutoModelForCausalLM.from_config(shape_config(shape, tokenizer))
        return sum(p.numel() for p in model.parameters())

    assert count("smollm2-135m") == 134_515_008  # SmolLM2-135M (the packaged GGUF's 134.5M parameters)
    # Llama-3.1-8B has 8.03e9 with its 128,256-token vocabulary; with SmolLM2's 49,152 the two embedding
    # matrices shrink by 2 x 79,104 x 4096.
    assert count("llama-3.1-8b-shape") == 8_030_261_248 - 2 * (128_256 - 49_152) * 4096


def test_random_weight_model_from_a_config_is_deterministic_and_runs(tokenizer):
    a = random_language_model("tiny", tokenizer, "cpu")
    b = random_language_model(dict(SHAPES["tiny"], name="tiny-copy"), tokenizer, "cpu")
    assert a.name == "random:tiny" and b.name == "random:tiny-copy"
    config = a.model.config
    assert (config.hidden_size, config.num_hidden_layers, config.vocab_size) == (64, 2, len(tokenizer))
    assert next(a.model.parameters()).dtype == torch.float32  # CPU: fp32 (CUDA: bf16)
    for (name, p), (_, q) in zip(sorted(a.model.named_parameters()), sorted(b.model.named_parameters())):
        assert torch.equal(p, q), name
    prompts = a.chat_prompt_ids(["fever and cough"], 32)
    logits = a.start_logits(prompts).logits()
    assert logits.shape == (1, a.vocab_size) and torch.isfinite(logits).all()


def test_forced_length_masks_only_eos_and_changes_no_plan():
    z = torch.tensor([[1.0, 2.0, 3.0, 0.5]])
    masked = without_eos(z, frozenset({2}))
    expected = torch.softmax(torch.tensor([1.0, 2.0, 0.5]), -1)
    probs = torch.softmax(masked, -1)[0]
    assert probs[2] == 0.0
    torch.testing.assert_close(probs[[0, 1, 3]], expected)  # the rest keep their relative probabilities
    spec = DPSynRAGSpec()
    forced = DPSynRAGSpec(force_length=True)
    assert plan_dp_synrag(forced, 4.0, 1e-6) == plan_dp_synrag(spec, 4.0, 1e-6)
    with pytest.raises(ValueError):
        EngineConfig(4, 1.0, 1.0, public_anchor=True, top_k_plus=5, force_length=True)


def test_forced_length_writes_exactly_T_tokens_per_group(tokenizer):
    llm = random_language_model("tiny", tokenizer, "cpu")
    eos = sorted(llm.eos_token_ids)

    class EosFirst:  # a sampler that would stop every group at once, if EOS were allowed
        def sample(self, z, keys=None):
            allowed = torch.isfinite(z[:, eos[0]])
            return torch.where(allowed, torch.tensor(eos[0]), TokenSampler(1.0, test_mode_torch_generator(1)).sample(z))

    prompts = llm.chat_prompt_ids(["a note", "another note"], 32)
    groups = [PredictionGroup(g, (tuple(prompts[g]),)) for g in range(2)]
    free = PrivatePredictionEngine(llm, EngineConfig(5, 1.0, 1.0), EosFirst()).run(groups)  # type: ignore[arg-type]
    assert all(out.stopped_at_eos and not out.token_ids for out in free.values())
    forced = PrivatePredictionEngine(llm, EngineConfig(5, 1.0, 1.0, force_length=True), EosFirst()).run(groups)  # type: ignore[arg-type]
    assert all(len(out.token_ids) == 5 and not out.stopped_at_eos for out in forced.values())
    assert not any(t in llm.eos_token_ids for out in forced.values() for t in out.token_ids)


def test_cpu_dry_run_of_the_offline_gpu_check(tmp_path):
    from gpu_check import NOT_ON_THE_GPU_MACHINE
    from gpu_kit import build_kit

    kit = tmp_path / "kit"
    info = build_kit(kit, units=240)
    assert info["bytes"] < 16 * 2**20 and (kit / "tokenizer" / "tokenizer.json").is_file()
    env = dict(os.environ, PY=sys.executable, OUT_DIR=str(tmp_path / "out"), OMP_NUM_THREADS="1",
               PRIVET_HIDE_MODULES=",".join(NOT_ON_THE_GPU_MACHINE))
    done = subprocess.run(["bash", str(ROOT / "bench" / "gpu_check.sh"), "--offline-kit", str(kit), "--cpu-dry-run"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert figures == json.loads((tmp_path / "out" / "gpu_check.json").read_text())
    assert set(NOT_ON_THE_GPU_MACHINE) <= set(figures["missing_modules"])  # ran without any of them
    assert "skipped" in figures["cuda_tests"]  # no GPU here: the CUDA tests skip, the dry run goes on
    bench = figures["bench"]
    assert set(bench["row_tokens_per_s"]) == {"engine", "hf_generate", "dp_rag_style"}
    assert bench["engine_over_hf_generate"] > 0 and bench["engine_over_dp_rag_style"] > 0
    assert figures["oom"]["simulated"] and figures["oom"]["rows_after_halving"] < figures["oom"]["budget_rows"]
    run = figures["dp_synrag"]
    assert run["charges_equal_plan"] and run["units"] == 240 and run["groups"] >= 1
    assert run["rows_total"] >= run["groups"] and run["rows_per_group_max"] >= 1
    writer = figures["realisation"]  # the realised writer on the device, and realise() itself
    assert set(writer["tokens_per_s"]) == {"writer", "hf_generate"} and writer["writer_over_hf_generate"] > 0
    assert writer["realise"]["documents"] == writer["rows"]


def test_the_check_refuses_to_run_without_a_kit(tmp_path):
    env = dict(os.environ, PY=sys.executable, OUT_DIR=str(tmp_path / "out"))
    done = subprocess.run(["bash", str(ROOT / "bench" / "gpu_check.sh"), "--offline-kit", str(tmp_path / "none"),
                           "--cpu-dry-run"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "GPU CHECK FAILED: no offline kit" in done.stderr
    assert "bench/gpu_kit.py" in done.stderr  # says what to do
