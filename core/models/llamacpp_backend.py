"""The llama.cpp backend for GGUF files (llama-cpp-python).

Prompts are tokenised with the Hugging Face tokenizer rebuilt from the same GGUF (see
chat.py), so prompt ids are identical to the transformers backend's for the same file.

``start_logits`` decodes all rows of a batch together, through llama-cpp-python's low-level API:
every row is its own llama.cpp *sequence* (one ``seq_id`` per row) in one multi-sequence
``llama_batch``; the prompts are prefilled in chunks of at most ``n_batch`` tokens, each row asking
for the logits of its last token only; every step then decodes one token per row in a single
``llama_decode`` call and reads one logits row per sequence. Rows that leave (``keep``) have their
cache freed with the bundled version's sequence-removal call (``llama_memory_seq_rm`` in 0.3.36;
the older ``llama_kv_self_seq_rm`` / ``llama_kv_cache_seq_rm`` are used when that is what the
installed version offers). llama.cpp holds at most 256 sequences per context, so a batch of more
rows is spread over several contexts ("shards") that share the loaded weights.

On the CPU, a file whose weight type has no fast batched CPU kernel in llama.cpp (Q4_1, the packaged
file's type) runs from a Q8_0 copy made once in the model cache (``gguf_cpu.py``).
"""

from __future__ import annotations

import contextlib

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import torch

from core.common.errors import ModelError
from core.models.chat import ChatTokenizer
from core.models.generation import decode_rows
from core.models.gguf_cpu import cpu_copy, existing_cpu_copy, slow_on_cpu
from core.models.threads import current_threads
from core.privacy.randomness import secure_torch_generator

N_CTX = 2048
MAX_SEQUENCES = 256  # llama.cpp's LLAMA_MAX_SEQ: sequences one context can hold
ROW_HEADROOM = 256  # tokens a row may append after its prompt (start_logits' default max_new_tokens)
N_BATCH = 512  # tokens per llama_decode call during prefill
KV_UNIFIED = False  # False: one cache stream per row (rows share no prefix)


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


class SequenceMemory:
    """The bundled llama.cpp's calls to clear a context and to drop one sequence from it.

    llama.cpp renamed these twice (``llama_kv_cache_*`` → ``llama_kv_self_*`` → ``llama_memory_*``);
    this picks whichever the installed llama-cpp-python exposes.
    """

    def __init__(self, lib, ctx) -> None:
        if hasattr(lib, "llama_memory_seq_rm") and hasattr(lib, "llama_get_memory"):
            mem = lib.llama_get_memory(ctx)
            self.remove = lambda seq: lib.llama_memory_seq_rm(mem, seq, -1, -1)
            self.clear = lambda: lib.llama_memory_clear(mem, True)
        elif hasattr(lib, "llama_kv_self_seq_rm"):
            self.remove = lambda seq: lib.llama_kv_self_seq_rm(ctx, seq, -1, -1)
            self.clear = lambda: lib.llama_kv_self_clear(ctx)
        elif hasattr(lib, "llama_kv_cache_seq_rm"):
            self.remove = lambda seq: lib.llama_kv_cache_seq_rm(ctx, seq, -1, -1)
            self.clear = lambda: lib.llama_kv_cache_clear(ctx)
        else:
            raise ModelError(
                "This llama-cpp-python has no call to remove a sequence from the cache.",
                "Install llama-cpp-python 0.3.36 (see README), or use the transformers backend.",
            )


class BatchContext:
    """One llama.cpp context for up to ``n_seq`` rows of ``n_ctx_seq`` tokens each, and its batch buffer."""

    def __init__(self, lib, model_ptr, base_params, n_seq: int, n_ctx_seq: int, n_threads: int) -> None:
        self._lib = lib
        params = type(base_params).from_buffer_copy(base_params)  # the high-level context's settings
        params.n_seq_max = n_seq
        params.n_ctx = n_seq * n_ctx_seq
        params.n_batch = max(N_BATCH, n_seq)
        params.n_ubatch = max(N_BATCH, n_seq)
        params.n_threads = n_threads
        params.n_threads_batch = n_threads
        params.kv_unified = KV_UNIFIED
        params.no_perf = True
        self.ctx = lib.llama_init_from_model(model_ptr, params)
        if not self.ctx:
            raise ModelError(
                f"llama.cpp could not make a context for {n_seq} rows of {n_ctx_seq} tokens (out of memory?).",
                "Lower batch_rows or the prompt length in the run spec.",
            )
        self.n_seq = n_seq
        self.n_ctx_seq = int(lib.llama_n_ctx(self.ctx)) // n_seq
        self.n_batch = int(params.n_batch)
        self.memory = SequenceMemory(lib, self.ctx)
        self.batch = lib.llama_batch_init(self.n_batch, 0, 1)

    def fits(self, n_seq: int, n_ctx_seq: int) -> bool:
        return n_seq <= self.n_seq and n_ctx_seq <= self.n_ctx_seq

    def decode(self, entries: Sequence[tuple[int, int, int, bool]]) -> None:
        """One ``llama_decode`` over (token, position, seq_id, wants_logits) entries (≤ n_batch)."""
        batch = self.batch
        for i, (token, pos, seq, out) in enumerate(entries):
            batch.token[i] = token
            batch.pos[i] = pos
            batch.n_seq_id[i] = 1
            batch.seq_id[i][0] = seq
            batch.logits[i] = 1 if out else 0
        batch.n_tokens = len(entries)
        status = self._lib.llama_decode(self.ctx, batch)
        if status != 0:
            raise ModelError(
                f"llama.cpp could not decode a batch of {len(entries)} tokens (status {status}).",
                "A row may exceed its context: lower the prompt or output length, or use the transformers backend.",
            )

    def logits_row(self, batch_index: int, vocab_size: int) -> np.ndarray:
        pointer = self._lib.llama_get_logits_ith(self.ctx, batch_index)
        return np.ctypeslib.as_array(pointer, shape=(vocab_size,)).astype(np.float32, copy=True)

    def free(self) -> None:
        if self.ctx:
            self._lib.llama_batch_free(self.batch)
            self._lib.llama_free(self.ctx)
            self.ctx = None


@dataclass
class _Row:
    shard: int  # index of the BatchContext holding the row
    seq: int  # the row's sequence id in that context
    n_tokens: int  # tokens in the row's cache (= the position of its next token)


class LlamaCppLogitsSession:
    """N rows decoded together: one llama.cpp sequence per row, one ``llama_decode`` per step and shard."""

    def __init__(
        self, backend: "LlamaCppLanguageModel", prompt_ids: Sequence[Sequence[int]], max_new_tokens: int = ROW_HEADROOM
    ) -> None:
        if not prompt_ids or any(len(r) == 0 for r in prompt_ids):
            raise ValueError("every prompt must have at least one token")
        longest = max(len(p) for p in prompt_ids)
        backend.check_length(longest)
        self._backend = backend
        self._vocab = backend.vocab_size
        n_shards = -(-len(prompt_ids) // MAX_SEQUENCES)
        per_shard = -(-len(prompt_ids) // n_shards)
        self._shards = backend.batch_contexts(n_shards, per_shard, longest + max(1, max_new_tokens))
        self._rows = [_Row(i // per_shard, i % per_shard, 0) for i in range(len(prompt_ids))]
        logits: list[np.ndarray | None] = [None] * len(prompt_ids)
        for s, shard in enumerate(self._shards):
            members = [i for i, row in enumerate(self._rows) if row.shard == s]
            entries = [
                (int(tok), pos, self._rows[i].seq, pos == len(prompt_ids[i]) - 1, i)
                for i in members
                for pos, tok in enumerate(prompt_ids[i])
            ]
            for start in range(0, len(entries), shard.n_batch):
                chunk = entries[start : start + shard.n_batch]
                shard.decode([e[:4] for e in chunk])
                for j, e in enumerate(chunk):
                    if e[3]:
                        logits[e[4]] = shard.logits_row(j, self._vocab)
            for i in members:
                self._rows[i].n_tokens = len(prompt_ids[i])
        self._logits = torch.from_numpy(np.stack(logits))

    @property
    def n_rows(self) -> int:
        return len(self._rows)

    def logits(self) -> torch.Tensor:
        return self._logits

    def append(self, tokens: torch.Tensor) -> None:
        if tokens.shape != (self.n_rows,):
            raise ValueError(f"expected {self.n_rows} tokens, got shape {tuple(tokens.shape)}")
        if self.n_rows == 0:
            return
        token_list = tokens.tolist()
        logits: list[np.ndarray | None] = [None] * self.n_rows
        for s, shard in enumerate(self._shards):
            members = [i for i, row in enumerate(self._rows) if row.shard == s]
            if not members:
                continue
            if max(self._rows[i].n_tokens for i in members) >= shard.n_ctx_seq:
                raise ModelError(
                    f"A row reached llama.cpp's per-row context of {shard.n_ctx_seq} tokens.",
                    "Lower the number of tokens per document (T) or the prompt length.",
                )
            shard.decode([(int(token_list[i]), self._rows[i].n_tokens, self._rows[i].seq, True) for i in members])
            for j, i in enumerate(members):
                logits[i] = shard.logits_row(j, self._vocab)
                self._rows[i].n_tokens += 1
        self._logits = torch.from_numpy(np.stack(logits))

    def keep(self, rows: torch.Tensor) -> None:
        index = rows.to("cpu", dtype=torch.long)
        kept = index.tolist()
        for i in sorted(set(range(self.n_rows)) - set(kept)):
            row = self._rows[i]
            self._shards[row.shard].memory.remove(row.seq)  # frees the row's cache cells
        self._rows = [self._rows[i] for i in kept]
        self._logits = self._logits.index_select(0, index)


class LlamaCppLanguageModel:
    """A GGUF chat model run by llama.cpp. Logits come back as CPU float32 tensors."""

    def __init__(self, gguf: Path, tokenizer, name: str, offload: str) -> None:
        llama_cpp = import_llama_cpp()
        self._lib = llama_cpp
        self._threads = current_threads()  # the free cores (core.models.threads), not every core
        on_cpu = not offload.startswith("cuda")
        # The file whose weights run: on the CPU, a Q8_0 copy when the file's type is slow there (gguf_cpu.py).
        self.weights_file = (existing_cpu_copy(gguf) if on_cpu else None) or gguf
        self.llm = self._load(self.weights_file, offload)
        if on_cpu and self.weights_file == gguf and slow_on_cpu(llama_cpp, self._file_type()):
            copy = cpu_copy(llama_cpp, gguf)  # first start only: made once, then found above
            if copy is not None:
                self.llm.close()
                self.llm = self._load(copy, offload)
                self.weights_file = copy
        self.name = name
        self.device = "cpu"  # where the logits tensors live; the weights may be offloaded
        self.offload = offload
        self.chat = ChatTokenizer(tokenizer, int(self.llm.token_eos()))
        self.eos_token_ids = self.chat.eos_token_ids
        self.vocab_size = int(self.llm.n_vocab())
        self.max_context = N_CTX
        self._contexts: list[BatchContext] = []  # contexts of the batched sessions, reused across waves

    def _load(self, gguf: Path, offload: str):
        try:
            return self._lib.Llama(
                model_path=str(gguf),
                n_ctx=N_CTX,
                n_threads=self._threads,
                n_threads_batch=self._threads,
                n_gpu_layers=-1 if offload.startswith("cuda") else 0,
                logits_all=False,
                verbose=False,
            )
        except (ValueError, RuntimeError, OSError) as exc:
            raise ModelError(
                f"llama.cpp could not load {gguf}: {exc}", "Check that the file is a complete GGUF model."
            ) from exc

    def set_threads(self, threads: int) -> None:
        """Decode on ``threads`` threads from now on (the loaded context and the batched sessions' contexts)."""
        threads = max(int(threads), 1)
        if threads == self._threads:
            return
        self._threads = threads
        self._lib.llama_set_n_threads(self.llm.ctx, threads, threads)
        for context in self._contexts:
            self._lib.llama_set_n_threads(context.ctx, threads, threads)

    def _file_type(self) -> int:
        """The GGUF's weight type (``general.file_type``, a ``LLAMA_FTYPE_*`` value; -1 if unstated)."""
        try:
            return int(self.llm.metadata.get("general.file_type", -1))
        except (TypeError, ValueError):
            return -1

    # -- low-level helpers used by the session ------------------------------------------
    def check_length(self, n_tokens: int) -> None:
        if n_tokens > N_CTX:
            raise ModelError(
                f"A sequence of {n_tokens} tokens exceeds llama.cpp's context of {N_CTX}.",
                "Lower the maximum prompt or output length.",
            )

    def last_logits(self) -> np.ndarray:
        """Logits of the last token evaluated by the high-level ``Llama`` object (one row, no batching)."""
        pointer = self._lib.llama_get_logits_ith(self.llm.ctx, -1)
        return np.ctypeslib.as_array(pointer, shape=(self.vocab_size,)).astype(np.float32, copy=True)

    def batch_contexts(self, n_shards: int, n_seq: int, n_ctx_seq: int) -> list[BatchContext]:
        """``n_shards`` cleared contexts of at least ``n_seq`` rows x ``n_ctx_seq`` tokens (reused when big enough)."""
        n_ctx_seq = -(-n_ctx_seq // 256) * 256  # llama.cpp pads contexts to multiples of 256
        for i in range(n_shards):
            if i < len(self._contexts) and self._contexts[i].fits(n_seq, n_ctx_seq):
                continue
            grown_seq = max(n_seq, self._contexts[i].n_seq if i < len(self._contexts) else 0)
            grown_ctx = max(n_ctx_seq, self._contexts[i].n_ctx_seq if i < len(self._contexts) else 0)
            if i < len(self._contexts):
                self._contexts[i].free()
            context = BatchContext(
                self._lib, self.llm.model, self.llm.context_params, min(grown_seq, MAX_SEQUENCES), grown_ctx, self._threads
            )
            if i < len(self._contexts):
                self._contexts[i] = context
            else:
                self._contexts.append(context)
        for context in self._contexts[:n_shards]:
            context.memory.clear()
        return self._contexts[:n_shards]

    # -- LanguageModel ---------------------------------------------------------------------
    def chat_prompt_ids(self, user_messages: Sequence[str], max_prompt_tokens: int | None = None) -> list[list[int]]:
        return [self.chat.prompt_ids(m, max_prompt_tokens) for m in user_messages]

    def decode(self, token_ids: Sequence[int]) -> str:
        return self.chat.decode(token_ids)

    def start_logits(
        self, prompt_ids: Sequence[Sequence[int]], shared_prefix: int = 0, max_new_tokens: int = ROW_HEADROOM
    ) -> LlamaCppLogitsSession:
        """``shared_prefix`` is accepted and not used yet: every row prefills its whole prompt."""
        return LlamaCppLogitsSession(self, prompt_ids, max_new_tokens)

    def generate(self, user_messages: Sequence[str], max_new_tokens: int, temperature: float = 0.7) -> list[str]:
        """Batched chat completions for the non-private steps, over the batched session.

        Same rule as the transformers backend (``core.models.generation``): temperature 0 is greedy,
        otherwise a sample from softmax(logits / temperature) over the whole vocabulary (no top-k /
        top-p / penalties) with a generator keyed by OS entropy. Rows that emit EOS leave the batch
        and free their cache. At most ``MAX_SEQUENCES`` rows decode together.
        """
        limit = max(1, N_CTX - max_new_tokens)
        texts: list[str] = []
        for start in range(0, len(user_messages), MAX_SEQUENCES):
            chunk = user_messages[start : start + MAX_SEQUENCES]
            session = self.start_logits(self.chat_prompt_ids(chunk, limit), max_new_tokens=max_new_tokens)
            generator = secure_torch_generator("cpu") if temperature > 0 else None
            rows = decode_rows(session, self.eos_token_ids, max_new_tokens, temperature, generator=generator)
            texts.extend(self.chat.decode(ids) for ids in rows)
        return texts

    def close(self) -> None:
        """Free the batch contexts (before the model they were made from)."""
        for context in self._contexts:
            context.free()
        self._contexts = []

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # interpreter shutdown: the library may be gone already
            self.close()
