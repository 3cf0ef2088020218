"""Model backends: the batched logits session, chat prompts, generation, embedders, registry, CLI."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import time

import numpy as np
import pytest
import torch

from core import cli
from core.common.errors import ModelError
from core.models import gguf_convert
from core.models.generation import decode_rows, sample_next
from core.models.registry import (
    list_local_models,
    load_embedder,
    load_language_model,
    model_fingerprint,
    resolve_device,
    resolve_model,
)
from core.specs.runspec import ModelChoice

HAS_LLAMA_CPP = importlib.util.find_spec("llama_cpp") is not None


@pytest.fixture(scope="module")
def tiny():
    return load_language_model(ModelChoice(source="tiny-random"))


def _reference_logits(model, row: list[int]) -> torch.Tensor:
    """Last-position logits of one unpadded row, full forward, no cache."""
    with torch.inference_mode():
        return model.model(input_ids=torch.tensor([row]), use_cache=False).logits[0, -1].float()


def _assert_matches(session, model, rows: list[list[int]]) -> None:
    logits = session.logits()
    assert logits.dtype == torch.float32
    assert logits.shape == (len(rows), model.vocab_size)
    for i, row in enumerate(rows):
        torch.testing.assert_close(logits[i], _reference_logits(model, row), atol=1e-4, rtol=0)


# --- the tiny model's LogitsSession --------------------------------------------------------


def test_session_equals_unpadded_forward_through_appends_and_keep(tiny):
    messages = ["Hi", "Tell me about the weather in a long sentence please, with details.", "Short one"]
    rows = tiny.chat_prompt_ids(messages)
    assert len({len(r) for r in rows}) == 3  # different lengths: real left padding
    session = tiny.start_logits(rows)
    assert session.n_rows == 3
    _assert_matches(session, tiny, rows)
    for step in range(3):
        tokens = torch.tensor([100 + step, 2000 + step, 30000 + step])
        session.append(tokens)
        rows = [r + [int(t)] for r, t in zip(rows, tokens)]
        _assert_matches(session, tiny, rows)
    session.keep(torch.tensor([2, 0]))
    rows = [rows[2], rows[0]]
    assert session.n_rows == 2
    _assert_matches(session, tiny, rows)
    session.append(torch.tensor([7, 8]))
    _assert_matches(session, tiny, [rows[0] + [7], rows[1] + [8]])


@pytest.mark.parametrize("source", ["tiny-random", "default"])
def test_a_shared_template_prefix_gives_every_row_its_own_prompts_logits(tiny, source):
    from core.methods.private_prediction.prompts import template_prefix_length
    from core.common.prompts import render

    model = tiny if source == "tiny-random" else load_language_model(ModelChoice(source="default", device="cpu"))
    prefix = template_prefix_length(model)
    assert prefix >= 8  # the chat template and the rephrase instruction
    documents = ["Fever and cough for 3 days.", "(12) Rash: treated with tregedcillin.", "É", "a much longer note " * 6]
    rows = model.chat_prompt_ids([render("rephrase", document=d) for d in documents])
    assert all(r[:prefix] == rows[0][:prefix] for r in rows)  # private documents do not change the prefix
    shared = model.start_logits(rows, shared_prefix=prefix)
    _assert_matches(shared, model, rows)
    for step in range(2):
        tokens = torch.tensor([100 + step, 200 + step, 300 + step, 400 + step])
        shared.append(tokens)
        rows = [r + [int(t)] for r, t in zip(rows, tokens)]
        _assert_matches(shared, model, rows)
    shared.keep(torch.tensor([3, 1]))
    rows = [rows[3], rows[1]]
    shared.append(torch.tensor([7, 8]))
    _assert_matches(shared, model, [rows[0] + [7], rows[1] + [8]])


def test_a_row_without_the_prefix_turns_sharing_off(tiny):
    from core.models.transformers_backend import starts_with_prefix

    rows = tiny.chat_prompt_ids(["one note", "another note"])
    assert starts_with_prefix(rows, 3)
    assert not starts_with_prefix([rows[0], [5] + rows[1][1:]], 3)  # differs inside the prefix
    assert not starts_with_prefix([rows[0], rows[1][:3]], 3)  # nothing after the prefix
    odd = [rows[0], [5] + rows[1][1:]]
    _assert_matches(tiny.start_logits(odd, shared_prefix=3), tiny, odd)  # still each row's own logits


def test_padding_would_change_logits_without_mask(tiny):
    """Sanity check that the test above can fail: ignoring the padding shifts the logits a lot."""
    short, long = tiny.chat_prompt_ids(["Hi", "A considerably longer message than the other one."])
    padded = [tiny.chat.pad_token_id] * (len(long) - len(short)) + short
    with torch.inference_mode():
        naive = tiny.model(input_ids=torch.tensor([padded])).logits[0, -1]
    assert (naive - _reference_logits(tiny, short)).abs().max() > 1e-2


def test_vocab_and_eos(tiny):
    session = tiny.start_logits(tiny.chat_prompt_ids(["x"]))
    assert session.logits().shape[1] == tiny.vocab_size == 49152
    im_end = tiny.chat.tokenizer.convert_tokens_to_ids("<|im_end|>")
    assert im_end in tiny.eos_token_ids


def test_session_rejects_wrong_token_count(tiny):
    session = tiny.start_logits(tiny.chat_prompt_ids(["a", "b"]))
    with pytest.raises(ValueError):
        session.append(torch.tensor([1, 2, 3]))
    with pytest.raises(ValueError):
        tiny.start_logits([[1, 2], []])


# --- chat prompts --------------------------------------------------------------------------


def test_chat_prompt_truncates_only_the_message(tiny):
    empty = tiny.chat.render("")
    long_message = " ".join(f"word{i}" for i in range(400))
    full = tiny.chat_prompt_ids([long_message])[0]
    assert len(full) > 100
    cut = tiny.chat_prompt_ids([long_message], max_prompt_tokens=60)[0]
    assert 50 <= len(cut) <= 60
    # The template (system prompt, user header, generation prompt) is intact around the cut message.
    suffix = tiny.chat.tokenizer("<|im_end|>\n<|im_start|>assistant\n", add_special_tokens=False)["input_ids"]
    assert cut[: len(empty) - len(suffix)] == empty[: len(empty) - len(suffix)]
    assert cut[-len(suffix) :] == suffix
    assert "word0 word1" in tiny.decode(cut)
    assert tiny.chat_prompt_ids(["short"], max_prompt_tokens=60)[0] == tiny.chat.render("short")
    with pytest.raises(ModelError):
        tiny.chat_prompt_ids([long_message], max_prompt_tokens=len(empty) - 1)


# --- generation ----------------------------------------------------------------------------


def test_generate_returns_strings(tiny):
    out = tiny.generate(["Say hello", "Name a colour"], max_new_tokens=5, temperature=0.7)
    assert len(out) == 2 and all(isinstance(t, str) and t for t in out)
    greedy = tiny.generate(["Say hello"], max_new_tokens=5, temperature=0.0)
    assert greedy == tiny.generate(["Say hello"], max_new_tokens=5, temperature=0.0)
    assert tiny.generate([], max_new_tokens=5) == []


def test_generate_does_not_truncate_the_vocabulary(tiny, monkeypatch):
    """Sampling keeps the whole vocabulary even if the model's own config says top_k/top_p."""
    import core.models.transformers_backend as backend

    seen = []
    original = torch.multinomial

    def spy(probs, *args, **kwargs):
        seen.append(probs.clone())
        return original(probs, *args, **kwargs)

    monkeypatch.setattr(backend.torch, "multinomial", spy)
    monkeypatch.setattr(tiny.model.generation_config, "top_k", 50)
    monkeypatch.setattr(tiny.model.generation_config, "top_p", 0.9)
    tiny.generate(["hi"], max_new_tokens=2, temperature=0.7)
    assert seen and all(p.shape[-1] == tiny.vocab_size for p in seen)
    assert all(bool((p > 0).all()) for p in seen)  # no token's probability was zeroed
    logits = torch.randn(2, tiny.vocab_size)
    assert torch.equal(sample_next(logits, 0.0), logits.argmax(dim=-1))


class _CountingSession:
    """Row r's logits favour token (r + step) % vocab; records what the loop asked of it."""

    def __init__(self, n_rows, vocab):
        self.rows, self.vocab, self.step, self.kept = list(range(n_rows)), vocab, 0, []

    @property
    def n_rows(self):
        return len(self.rows)

    def logits(self):
        out = torch.zeros((len(self.rows), self.vocab))
        for i, r in enumerate(self.rows):
            out[i, (r + self.step) % self.vocab] = 9.0
        return out

    def append(self, tokens):
        assert tokens.shape == (len(self.rows),)
        self.step += 1

    def keep(self, rows):
        self.kept.append(rows.tolist())
        self.rows = [self.rows[i] for i in rows.tolist()]


def test_decode_rows_drops_rows_at_eos_and_stops_at_the_length():
    session = _CountingSession(3, 6)  # row 0 emits 0,1,2,...; row 1 emits 1,2,3...; row 2 emits 2,3,4,...
    rows = decode_rows(session, frozenset({3}), max_new_tokens=5, temperature=0.0)
    assert rows == [[0, 1, 2], [1, 2], [2]]  # EOS (3) ends a row and is not part of its output
    assert session.kept == [[0, 1], [0]]  # each row that ended left the batch (its cache freed)
    assert decode_rows(_CountingSession(2, 6), frozenset(), max_new_tokens=2, temperature=0.0) == [[0, 1], [1, 2]]
    assert decode_rows(_CountingSession(2, 6), frozenset({0, 1}), max_new_tokens=4, temperature=0.0) == [[], []]

def test_hashing_embedder_rows_have_unit_norm():
    embedder = load_embedder(ModelChoice(source="tiny-random"))
    texts = ["the cat sat on the mat", "the cat sat on a mat", "quantum chromodynamics lecture", ""]
    vectors = embedder.embed(texts)
    assert vectors.shape == (4, embedder.dim) == (4, 64)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    np.testing.assert_array_equal(vectors, embedder.embed(texts))
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]
    assert embedder.embed([]).shape == (0, 64)


# --- registry: errors, fingerprints, listing -----------------------------------------------


def test_loader_errors_are_model_errors(tmp_path, monkeypatch):
    with pytest.raises(ModelError, match="does not exist"):
        load_language_model(ModelChoice(source="gguf", path=str(tmp_path / "missing.gguf")))
    with pytest.raises(ModelError, match="not a Hugging Face model folder"):
        load_language_model(ModelChoice(source="hf", path=str(tmp_path)))
    with pytest.raises(ModelError, match="needs a GGUF file"):
        load_language_model(ModelChoice(source="hf", path=str(tmp_path), backend="llamacpp"))
    with pytest.raises(ModelError, match="Unknown model source"):
        load_language_model(ModelChoice(source="hub"))
    with pytest.raises(ModelError, match="not supported for embeddings"):
        load_embedder(ModelChoice(source="gguf", path=str(tmp_path / "x.gguf")))
    monkeypatch.setitem(__import__("sys").modules, "llama_cpp", None)  # import now fails
    with pytest.raises(ModelError, match="llama.cpp backend is not installed"):
        load_language_model(ModelChoice(backend="llamacpp", device="cpu"))


def test_resolve_device(monkeypatch):
    assert resolve_device("cpu") == "cpu"
    with pytest.raises(ModelError, match="Unknown device"):
        resolve_device("tpu")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert resolve_device("auto") == "cpu"
    with pytest.raises(ModelError, match="CUDA is not available"):
        resolve_device("cuda:0")
    with pytest.raises(ModelError, match="CUDA is not available"):
        load_language_model(ModelChoice(source="tiny-random", device="cuda"))


def test_fingerprint_of_a_gguf_file(tmp_path):
    fake = tmp_path / "my-model.gguf"
    fake.write_bytes(b"GGUF" + bytes(range(256)) * 10)
    fp = model_fingerprint(ModelChoice(source="gguf", path=str(fake), device="cpu"))
    assert fp["sha256"] == hashlib.sha256(fake.read_bytes()).hexdigest()
    assert fp["size"] == fake.stat().st_size
    assert (fp["name"], fp["backend"], fp["device"], fp["path"]) == ("my-model", "transformers", "cpu", str(fake))


def test_a_choice_is_resolved_once_and_loading_and_the_fingerprint_read_it(tmp_path):
    fake = tmp_path / "my-model.gguf"
    fake.write_bytes(b"GGUF" + bytes(range(256)) * 10)
    resolved = resolve_model(ModelChoice(source="gguf", path=str(fake), device="cpu"))
    assert (resolved.kind, resolved.backend, resolved.device, resolved.location, resolved.name) == (
        "llm", "transformers", "cpu", fake, "my-model")
    assert model_fingerprint(resolved) == model_fingerprint(ModelChoice(source="gguf", path=str(fake), device="cpu"))
    tiny = resolve_model(ModelChoice(source="tiny-random", device="cpu"), "embedder")
    assert (tiny.backend, tiny.name, tiny.location) == ("hashing", "tiny-random-hashing", None)
    assert load_embedder(tiny).embed(["a"]).shape == (1, 64)
    with pytest.raises(ValueError, match="embedder model"):
        load_language_model(tiny)


def test_fingerprint_of_packaged_models():
    llm = model_fingerprint(ModelChoice(device="cpu"))
    assert llm["name"] == "SmolLM2-135M-Instruct" and llm["path"].endswith(".gguf")
    assert len(llm["sha256"]) == 64 and llm["size"] > 50_000_000
    emb = model_fingerprint(ModelChoice(device="cpu"), kind="embedder")
    assert emb["name"] == "all-MiniLM-L6-v2" and emb["backend"] == "sentence-transformers"
    assert emb["sha256"] != llm["sha256"]


def test_list_local_models_finds_user_models(privet_home):
    models = privet_home / "models"
    (models / "my-llm").mkdir(parents=True)
    (models / "my-llm" / "config.json").write_text("{}")
    (models / "my-emb").mkdir()
    (models / "my-emb" / "config.json").write_text("{}")
    (models / "my-emb" / "modules.json").write_text("[]")
    (models / "other.gguf").write_bytes(b"GGUF0000")
    (models / "notes").mkdir()
    found = {m["name"]: m for m in list_local_models()}
    assert found["SmolLM2-135M-Instruct"]["packaged"] and found["all-MiniLM-L6-v2"]["kind"] == "embedder"
    assert (found["my-llm"]["kind"], found["my-llm"]["source"]) == ("llm", "hf")
    assert (found["my-emb"]["kind"], found["my-emb"]["source"]) == ("embedder", "hf")
    assert found["other"]["source"] == "gguf" and found["other"]["size"] == 8
    assert "notes" not in found


def test_privet_models_lists_the_packaged_models(capsys):
    assert cli.main(["models", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    names = {m["name"] for m in report["models"]}
    assert {"SmolLM2-135M-Instruct", "all-MiniLM-L6-v2"} <= names
    assert report["devices"][-1]["device"] == "cpu"
    assert cli.main(["models"]) == 0
    text = capsys.readouterr().out
    assert "SmolLM2-135M-Instruct" in text and "all-MiniLM-L6-v2" in text and "Devices:" in text


# --- the packaged models (slow) ------------------------------------------------------------


@pytest.mark.slow
def test_packaged_models_load_with_sockets_blocked(no_network):
    model = load_language_model(ModelChoice(device="cpu"))
    assert model.name == "SmolLM2-135M-Instruct" and model.vocab_size == 49152
    out = model.generate(["What is the capital of France?"], max_new_tokens=4)
    assert isinstance(out[0], str)
    embedder = load_embedder(ModelChoice(device="cpu"))
    vectors = embedder.embed(["a doctor's note", "a film review", "another film review"])
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


@pytest.mark.slow
def test_gguf_conversion_is_cached_and_reused(monkeypatch):
    load_language_model(ModelChoice(device="cpu"))  # converts on first use in this session
    cached = [p for p in gguf_convert.model_cache_root().iterdir() if p.name.endswith("-model")]
    assert len(cached) == 1 and (cached[0] / "model.safetensors").is_file()

    def no_conversion(*args, **kwargs):
        raise AssertionError("the GGUF was converted again instead of reusing the cache")

    monkeypatch.setattr(gguf_convert, "_convert_model", no_conversion)
    start = time.perf_counter()
    model = load_language_model(ModelChoice(device="cpu"))
    assert time.perf_counter() - start < 10  # ~0.5 s idle; generous for a shared 2-core box
    assert model.vocab_size == 49152


@pytest.mark.slow
@pytest.mark.skipif(not HAS_LLAMA_CPP, reason="llama-cpp-python is not installed (pip install llama-cpp-python)")
def test_backends_agree_on_prompt_ids_and_greedy_token():
    hf = load_language_model(ModelChoice(device="cpu"))
    cpp = load_language_model(ModelChoice(backend="llamacpp", device="cpu"))
    messages = ["What is the capital of France? Answer with one word.", "Write a haiku about rain."]
    prompts = hf.chat_prompt_ids(messages)
    assert cpp.chat_prompt_ids(messages) == prompts
    assert cpp.vocab_size == hf.vocab_size and cpp.eos_token_ids == hf.eos_token_ids
    first_hf = hf.start_logits(prompts).logits().argmax(-1)
    session = cpp.start_logits(prompts)
    assert torch.equal(session.logits().argmax(-1), first_hf)
    # The llama.cpp session keeps each row in its own sequence: after an append and a keep, a row's
    # logits equal a fresh evaluation of that row alone (prompt, then the appended token).
    session.append(first_hf)
    session.keep(torch.tensor([1]))
    cpp.llm.reset()
    cpp.llm.eval(prompts[1])
    cpp.llm.eval([int(first_hf[1])])
    fresh = torch.from_numpy(cpp.last_logits())
    torch.testing.assert_close(session.logits()[0], fresh, atol=1e-3, rtol=0)
    assert isinstance(cpp.generate(messages[:1], max_new_tokens=4)[0], str)
