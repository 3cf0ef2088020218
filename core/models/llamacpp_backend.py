"""The llama.cpp backend for GGUF files (llama-cpp-python).

Prompts are tokenised with the Hugging Face tokenizer rebuilt from the same GGUF (see
chat.py), so prompt ids are identical to the transformers backend's for the same file.

``start_logits`` is correct but **slower than the transformers backend**: llama-cpp-python's
high-level API holds one sequence per context, so the rows are evaluated one after another.
Each row's KV cache is saved after its step (``llama_state_seq_get_data``, a few kB per token)
and restored before its next step, so a step costs one single-token decode per row rather than a
re-evaluation of the row's prefix. The private-prediction engine prefers the transformers
backend, which decodes all rows in one batched forward pass.
"""

from __future__ import annotations

import ctypes
import os
import secrets
from pathlib import Path
from typing import Sequence

import numpy as np
import torch

from core.errors import ModelError
from core.models.chat import ChatTokenizer

N_CTX = 2048


def import_llama_cpp():
    """The ``llama_cpp`` module, or a ModelError saying how to install it."""
    try:
        import llama_cpp
    except ImportError as exc:
        raise ModelError(
            "The llama.cpp backend is not installed (Python package llama-cpp-python).",
            'Install it (see README: build it portably with CMAKE_ARGS), or use backend = "transformers".',
        ) from exc
    return llama_cpp


def llama_supports_gpu() -> bool:
    try:
        return bool(import_llama_cpp().llama_supports_gpu_offload())
    except ModelError:
        return False


class _RowState:
    """A saved KV cache of one row (sequence 0) and its token count."""

    def __init__(self, data: bytes, n_tokens: int) -> None:
        self.data = data
        self.n_tokens = n_tokens


class LlamaCppLogitsSession:
    """N rows decoded one after another on a single llama.cpp context (see module docstring)."""

    def __init__(self, backend: "LlamaCppLanguageModel", prompt_ids: Sequence[Sequence[int]]) -> None:
        if not prompt_ids or any(len(r) == 0 for r in prompt_ids):
            raise ValueError("every prompt must have at least one token")
        self._backend = backend
        self._states: list[_RowState] = []
        rows = []
        for prompt in prompt_ids:
            backend.check_length(len(prompt))
            backend.llm.reset()
            backend.llm.eval(list(prompt))
            rows.append(backend.last_logits())
            self._states.append(backend.save_row())
        self._logits = torch.from_numpy(np.stack(rows))

    @property
    def n_rows(self) -> int:
        return len(self._states)

    def logits(self) -> torch.Tensor:
        return self._logits

    def append(self, tokens: torch.Tensor) -> None:
        if tokens.shape != (self.n_rows,):
            raise ValueError(f"expected {self.n_rows} tokens, got shape {tuple(tokens.shape)}")
        backend = self._backend
        rows = []
        for i, token in enumerate(tokens.tolist()):
            backend.check_length(self._states[i].n_tokens + 1)
            backend.load_row(self._states[i])
            backend.llm.eval([int(token)])
            rows.append(backend.last_logits())
            self._states[i] = backend.save_row()
        if rows:
            self._logits = torch.from_numpy(np.stack(rows))

    def keep(self, rows: torch.Tensor) -> None:
        index = rows.to("cpu", dtype=torch.long)
        self._states = [self._states[i] for i in index.tolist()]
        self._logits = self._logits.index_select(0, index)


class LlamaCppLanguageModel:
    """A GGUF chat model run by llama.cpp. Logits come back as CPU float32 tensors."""

    def __init__(self, gguf: Path, tokenizer, name: str, offload: str) -> None:
        llama_cpp = import_llama_cpp()
        self._lib = llama_cpp
        try:
            self.llm = llama_cpp.Llama(
                model_path=str(gguf),
                n_ctx=N_CTX,
                n_threads=os.cpu_count() or 1,
                n_gpu_layers=-1 if offload.startswith("cuda") else 0,
                logits_all=False,
                verbose=False,
            )
        except (ValueError, RuntimeError, OSError) as exc:
            raise ModelError(
                f"llama.cpp could not load {gguf}: {exc}", "Check that the file is a complete GGUF model."
            ) from exc
        self.name = name
        self.device = "cpu"  # where the logits tensors live; the weights may be offloaded
        self.offload = offload
        self.chat = ChatTokenizer(tokenizer, int(self.llm.token_eos()))
        self.eos_token_ids = self.chat.eos_token_ids
        self.vocab_size = int(self.llm.n_vocab())
        self.max_context = N_CTX

    # -- low-level helpers used by the session ------------------------------------------
    def check_length(self, n_tokens: int) -> None:
        if n_tokens > N_CTX:
            raise ModelError(
                f"A sequence of {n_tokens} tokens exceeds llama.cpp's context of {N_CTX}.",
                "Lower the maximum prompt or output length.",
            )

    def last_logits(self) -> np.ndarray:
        pointer = self._lib.llama_get_logits_ith(self.llm.ctx, -1)
        return np.ctypeslib.as_array(pointer, shape=(self.vocab_size,)).astype(np.float32, copy=True)

    def save_row(self) -> _RowState:
        size = self._lib.llama_state_seq_get_size(self.llm.ctx, 0)
        buffer = (ctypes.c_uint8 * size)()
        written = self._lib.llama_state_seq_get_data(self.llm.ctx, buffer, size, 0)
        return _RowState(bytes(buffer[:written]), self.llm.n_tokens)

    def load_row(self, state: _RowState) -> None:
        buffer = (ctypes.c_uint8 * len(state.data)).from_buffer_copy(state.data)
        if self._lib.llama_state_seq_set_data(self.llm.ctx, buffer, len(state.data), 0) != len(state.data):
            raise ModelError("llama.cpp could not restore a saved row state.", "Use the transformers backend.")
        self.llm.n_tokens = state.n_tokens

    # -- LanguageModel ---------------------------------------------------------------------
    def chat_prompt_ids(self, user_messages: Sequence[str], max_prompt_tokens: int | None = None) -> list[list[int]]:
        return [self.chat.prompt_ids(m, max_prompt_tokens) for m in user_messages]

    def decode(self, token_ids: Sequence[int]) -> str:
        return self.chat.decode(token_ids)

    def start_logits(self, prompt_ids: Sequence[Sequence[int]]) -> LlamaCppLogitsSession:
        return LlamaCppLogitsSession(self, prompt_ids)

    def generate(self, user_messages: Sequence[str], max_new_tokens: int, temperature: float = 0.7) -> list[str]:
        """Completions one message at a time; sampling over the full vocabulary (no truncation)."""
        limit = max(1, N_CTX - max_new_tokens)
        texts = []
        for prompt in self.chat_prompt_ids(user_messages, limit):
            result = self.llm.create_completion(
                prompt=prompt,
                max_tokens=max_new_tokens,
                temperature=max(float(temperature), 0.0),
                top_k=0,  # <= 0: whole vocabulary
                top_p=1.0,
                min_p=0.0,
                typical_p=1.0,
                repeat_penalty=1.0,
                seed=secrets.randbits(31),  # non-private sampling, seeded from OS entropy
            )
            texts.append(result["choices"][0]["text"].strip())
        return texts
