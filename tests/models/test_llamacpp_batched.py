"""The llama.cpp batched session: one sequence per row, same logits as decoding each row alone."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
import torch

from core.models import llamacpp_backend
from core.models.registry import load_language_model, resolve_model
from core.specs.runspec import ModelChoice

pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None, reason="llama-cpp-python is not installed (see README)"
)]
ATOL = 1e-3  # logits are O(10); measured difference: 0.0 (the same kernels run for each row)


@pytest.fixture(scope="module")
def cpp():
    return load_language_model(ModelChoice(source="default", backend="llamacpp", device="cpu"))


def alone(cpp, prompt: list[int], appended: list[int]) -> torch.Tensor:
    """Reference: one-row decoding in the high-level Llama context (no batch, no sequences): the prompt,
    then each appended token on its own. (Re-evaluating prompt + tokens as one prefill is not a fair
    reference: llama.cpp's prefill and one-token kernels differ by up to ~0.6 in a logit.)"""
    cpp.llm.reset()
    cpp.llm.eval(list(prompt))
    for token in appended:
        cpp.llm.eval([token])
    return torch.from_numpy(cpp.last_logits())


def check(session, cpp, rows: list[tuple[list[int], list[int]]]) -> None:
    logits = session.logits()
    assert logits.shape == (len(rows), cpp.vocab_size) and logits.dtype == torch.float32
    for i, (prompt, appended) in enumerate(rows):
        reference = alone(cpp, prompt, appended)
        torch.testing.assert_close(logits[i], reference, atol=ATOL, rtol=0)
        assert int(logits[i].argmax()) == int(reference.argmax())


@pytest.mark.parametrize("max_sequences", [256, 2])  # 2: three rows spread over two contexts ("shards")
def test_batched_rows_equal_one_row_decoding_through_appends_and_keep(cpp, monkeypatch, max_sequences):
    monkeypatch.setattr(llamacpp_backend, "MAX_SEQUENCES", max_sequences)
    messages = ["Say hello.", "Describe a cough in one sentence, please.", "What is two plus two? Answer briefly."]
    prompts = [list(p) for p in cpp.chat_prompt_ids(messages)]
    session = cpp.start_logits(prompts)
    rows = [(p, []) for p in prompts]
    assert session.n_rows == 3
    check(session, cpp, rows)

    tokens = session.logits().argmax(-1)
    session.append(tokens)
    rows = [(p, a + [int(t)]) for (p, a), t in zip(rows, tokens)]
    check(session, cpp, rows)

    session.keep(torch.tensor([2, 0]))  # row 1 leaves (its sequence is removed), order changes
    rows = [rows[2], rows[0]]
    tokens = torch.tensor([11, 42])
    session.append(tokens)
    rows = [(p, a + [int(t)]) for (p, a), t in zip(rows, tokens)]
    check(session, cpp, rows)


def test_session_rejects_a_wrong_token_count(cpp):
    session = cpp.start_logits([list(cpp.chat_prompt_ids(["Hi."])[0])])
    with pytest.raises(ValueError):
        session.append(torch.tensor([1, 2]))


def test_batched_generate_returns_one_text_per_message(cpp):
    texts = cpp.generate(["Name a colour.", "Name a fruit.", "Name a city."], max_new_tokens=4, temperature=0.0)
    assert len(texts) == 3 and all(isinstance(t, str) for t in texts)


def test_on_the_cpu_the_q4_1_file_runs_from_one_cached_q8_0_copy_with_near_equal_logits(cpp):
    from core.models import gguf_cpu
    from core.models.sources import model_cache_root

    source = resolve_model(ModelChoice(backend="llamacpp", device="cpu")).location
    assert cpp.weights_file != source and cpp.weights_file.parent == model_cache_root()
    assert cpp.weights_file.name.endswith("-q8_0.gguf")
    made = cpp.weights_file.stat().st_mtime_ns
    assert gguf_cpu.cpu_copy(cpp._lib, source) == cpp.weights_file  # reused, not made again
    assert cpp.weights_file.stat().st_mtime_ns == made
    assert not any(p.name.startswith(".") for p in model_cache_root().glob("*q8_0*"))  # no half-written copy left

    prompt = cpp.chat_prompt_ids(["Summarise: the patient reported a cough and a mild fever for three days."])[0]
    copy_logits = alone(cpp, prompt, [])
    original = cpp._load(source, "cpu")
    try:
        original.eval(list(prompt))
        pointer = cpp._lib.llama_get_logits_ith(original.ctx, -1)
        source_logits = torch.from_numpy(np.ctypeslib.as_array(pointer, shape=(cpp.vocab_size,)).copy())
    finally:
        original.close()
    # llama.cpp's own kernel rounding is of the same size: on three prompts the Q4_1 file's next-token
    # distribution is 0.026-0.069 (total variation) from the exactly dequantised weights run by the
    # transformers backend, and the Q8_0 copy's 0.023-0.064; copy vs file measured 0.03-0.05.
    total_variation = 0.5 * float((torch.softmax(copy_logits, -1) - torch.softmax(source_logits, -1)).abs().sum())
    assert total_variation < 0.1
    assert int(copy_logits.argmax()) == int(source_logits.argmax())


def test_without_a_writable_cache_the_file_is_used_as_it_is(cpp, monkeypatch, tmp_path):
    from core.models import gguf_cpu

    source = resolve_model(ModelChoice(backend="llamacpp", device="cpu")).location

    def read_only_cache():
        raise PermissionError("read-only file system")

    monkeypatch.setattr(gguf_cpu, "model_cache_root", read_only_cache)
    assert gguf_cpu.cpu_copy(cpp._lib, source) is None

    class FailingLib:  # llama.cpp refuses to quantise: nothing is left behind
        LLAMA_FTYPE_MOSTLY_Q8_0 = 7

        def llama_model_quantize_default_params(self):
            return cpp._lib.llama_model_quantize_default_params()

        def llama_model_quantize(self, *args):
            return 1

    monkeypatch.setattr(gguf_cpu, "model_cache_root", lambda: tmp_path)
    assert gguf_cpu.cpu_copy(FailingLib(), source) is None
    assert list(tmp_path.iterdir()) == []
