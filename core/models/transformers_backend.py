"""The transformers backend: batched logits with a KV cache, and text generation.

CPU runs in float32, CUDA in bfloat16 (float32 on GPUs without bf16); logits are always
returned as float32. This is the backend the private-prediction engine prefers: one forward
pass serves every row of a batch.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import torch

from core.common.errors import ModelError
from core.models.chat import ChatTokenizer
from core.models.generation import decode_rows
from core.models.hf_loading import load_tokenizer, quiet_loading
from core.privacy.randomness import secure_torch_generator


def torch_dtype_for(device: str) -> torch.dtype:
    if device.startswith("cuda"):
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float32
    return torch.float32


def left_pad(rows: Sequence[Sequence[int]], pad_id: int, device: str) -> tuple[torch.Tensor, torch.Tensor]:
    """Left-padded ids [n, L] and attention mask [n, L] (1 = real token)."""
    if not rows or any(len(r) == 0 for r in rows):
        raise ValueError("every prompt must have at least one token")
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, row in enumerate(rows):
        ids[i, width - len(row) :] = torch.as_tensor(list(row), dtype=torch.long)
        mask[i, width - len(row) :] = 1
    return ids.to(device), mask.to(device)


def starts_with_prefix(rows: Sequence[Sequence[int]], shared_prefix: int) -> bool:
    """True when every row starts with the same first ``shared_prefix`` tokens and has more after them."""
    if shared_prefix <= 0 or len(rows) < 2:
        return False
    head = list(rows[0][:shared_prefix])
    return all(len(r) > shared_prefix and list(r[:shared_prefix]) == head for r in rows)


class TransformersLogitsSession:
    """N rows over one DynamicCache: left-padded prefill, then one token per row per step.

    Left padding is neutralised by the attention mask and by position ids that count only real
    tokens, so each row's logits equal those of an unpadded forward over that row alone.

    ``shared_prefix`` > 0: the caller says that every prompt starts with the same first
    ``shared_prefix`` tokens of a *public* template (the chat template and the instruction before
    the document). Those are run once, their cache is copied to every row, and only the rest of
    each prompt is prefilled (padding then sits between the prefix and the rest, masked out and not
    counted in the positions). Each row's logits are those of its own prompt either way; if some
    row does not start with the prefix, nothing is shared.
    """

    def __init__(
        self, model, prompt_ids: Sequence[Sequence[int]], pad_id: int, device: str, shared_prefix: int = 0
    ) -> None:
        from transformers import DynamicCache

        self._model = model
        self._cache = DynamicCache(config=model.config)
        prefix = shared_prefix if starts_with_prefix(prompt_ids, shared_prefix) else 0
        if prefix:
            head = torch.as_tensor([list(prompt_ids[0][:prefix])], dtype=torch.long, device=device)
            with torch.inference_mode():
                model(
                    input_ids=head,
                    attention_mask=torch.ones_like(head),
                    position_ids=torch.arange(prefix, device=device)[None, :],
                    past_key_values=self._cache,
                    use_cache=True,
                    logits_to_keep=1,
                )
            self._cache.batch_repeat_interleave(len(prompt_ids))
        ids, rest_mask = left_pad([list(r[prefix:]) for r in prompt_ids], pad_id, device)
        self._mask = torch.cat([torch.ones((len(prompt_ids), prefix), dtype=torch.long, device=device), rest_mask], 1)
        positions = (self._mask.cumsum(-1) - 1).clamp(min=0)[:, prefix:]
        self._next_position = self._mask.sum(-1)
        with torch.inference_mode():
            out = model(
                input_ids=ids,
                attention_mask=self._mask,
                position_ids=positions,
                past_key_values=self._cache,
                use_cache=True,
                logits_to_keep=1,
            )
        self._logits = out.logits[:, -1, :].float()

    @property
    def n_rows(self) -> int:
        return int(self._mask.shape[0])

    def logits(self) -> torch.Tensor:
        return self._logits

    def append(self, tokens: torch.Tensor) -> None:
        if tokens.shape != (self.n_rows,):
            raise ValueError(f"expected {self.n_rows} tokens, got shape {tuple(tokens.shape)}")
        if self.n_rows == 0:
            return
        device = self._mask.device
        self._mask = torch.cat([self._mask, torch.ones((self.n_rows, 1), dtype=torch.long, device=device)], dim=1)
        with torch.inference_mode():
            out = self._model(
                input_ids=tokens.to(device=device, dtype=torch.long)[:, None],
                attention_mask=self._mask,
                position_ids=self._next_position[:, None],
                past_key_values=self._cache,
                use_cache=True,
            )
        self._next_position = self._next_position + 1
        self._logits = out.logits[:, -1, :].float()

    def keep(self, rows: torch.Tensor) -> None:
        index = rows.to(device=self._mask.device, dtype=torch.long)
        self._cache.reorder_cache(index)  # index_select on every layer: the dropped rows are freed
        self._mask = self._mask.index_select(0, index)
        self._next_position = self._next_position.index_select(0, index)
        self._logits = self._logits.index_select(0, index)


class TransformersLanguageModel:
    """A causal LM run by transformers (a local folder, a converted GGUF, or the tiny test model)."""

    def __init__(self, model, tokenizer, name: str, device: str) -> None:
        self.model = model.eval()
        self.name = name
        self.device = device
        self.chat = ChatTokenizer(tokenizer, getattr(model.generation_config, "eos_token_id", None))
        self.eos_token_ids = self.chat.eos_token_ids
        self.vocab_size = int(model.get_output_embeddings().weight.shape[0])
        self.max_context = int(getattr(model.config, "max_position_embeddings", 2048) or 2048)

    def chat_prompt_ids(self, user_messages: Sequence[str], max_prompt_tokens: int | None = None) -> list[list[int]]:
        return [self.chat.prompt_ids(m, max_prompt_tokens) for m in user_messages]

    def decode(self, token_ids: Sequence[int]) -> str:
        return self.chat.decode(token_ids)

    def start_logits(self, prompt_ids: Sequence[Sequence[int]], shared_prefix: int = 0) -> TransformersLogitsSession:
        return TransformersLogitsSession(self.model, prompt_ids, self.chat.pad_token_id, self.device, shared_prefix)

    def generate(self, user_messages: Sequence[str], max_new_tokens: int, temperature: float = 0.7) -> list[str]:
        """Batched chat completions for the non-private steps, decoded over our own KV-cache session.

        temperature 0 is greedy; otherwise tokens are sampled from softmax(logits / temperature)
        over the whole vocabulary (no top-k / top-p / repetition penalty) with a generator keyed
        by OS entropy (``core.models.generation``). Rows that emit EOS leave the batch.
        """
        if not user_messages:
            return []
        limit = max(1, self.max_context - max_new_tokens)
        session = self.start_logits(self.chat_prompt_ids(user_messages, limit))
        generator = secure_torch_generator(self.device) if temperature > 0 else None
        rows = decode_rows(session, self.eos_token_ids, max_new_tokens, temperature, generator=generator)
        return [self.chat.decode(ids) for ids in rows]


def load_transformers_folder(folder: Path, device: str, name: str) -> TransformersLanguageModel:
    """A local Hugging Face causal-LM folder on ``device`` (fp32 on CPU, bf16 on CUDA)."""
    with quiet_loading():
        from transformers import AutoModelForCausalLM

        try:
            model = AutoModelForCausalLM.from_pretrained(
                str(folder), dtype=torch_dtype_for(device), local_files_only=True
            )
        except (OSError, ValueError, KeyError, RuntimeError) as exc:
            raise ModelError(
                f"Could not load a language model from {folder}: {exc}",
                "Point at a complete Hugging Face causal-LM folder (config.json plus weight files).",
            ) from exc
    return TransformersLanguageModel(model.to(device), load_tokenizer(folder), name, device)
