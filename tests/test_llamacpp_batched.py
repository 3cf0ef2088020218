"""The llama.cpp batched session: one sequence per row, same logits as decoding each row alone."""

from __future__ import annotations

import importlib.util

import pytest
import torch

from core.models import llamacpp_backend
from core.models.registry import load_language_model
from core.runspec import ModelChoice

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
