"""Chat-template tokenisation shared by every backend.

Both backends tokenise with the Hugging Face tokenizer of the model (for a GGUF file, the
tokenizer transformers rebuilds from the GGUF metadata), so the same model gives the same
prompt ids whichever backend runs it.
"""

from __future__ import annotations

from typing import Sequence

from core.common.errors import ModelError

# End-of-turn tokens of common chat formats; counted as EOS when the tokenizer has them.
_END_OF_TURN_TOKENS = ("<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<end_of_turn>", "</s>")


class ChatTokenizer:
    """Wraps a Hugging Face tokenizer: chat prompts with message-only truncation, decoding, EOS ids."""

    def __init__(self, tokenizer, generation_eos: int | Sequence[int] | None = None) -> None:
        if not getattr(tokenizer, "chat_template", None):
            raise ModelError(
                "This model's tokenizer has no chat template.",
                "Use an instruction-tuned (chat) model; base models cannot follow the prompts.",
            )
        self.tokenizer = tokenizer
        self.eos_token_ids = self._eos_ids(generation_eos)
        pad = tokenizer.pad_token_id
        self.pad_token_id = int(pad) if pad is not None else min(self.eos_token_ids)

    def _eos_ids(self, generation_eos: int | Sequence[int] | None) -> frozenset[int]:
        ids: set[int] = set()
        if isinstance(generation_eos, int):
            ids.add(generation_eos)
        elif generation_eos:
            ids.update(int(i) for i in generation_eos)
        if self.tokenizer.eos_token_id is not None:
            ids.add(int(self.tokenizer.eos_token_id))
        special = set(self.tokenizer.all_special_tokens)
        for token in _END_OF_TURN_TOKENS:
            if token in special:
                ids.add(int(self.tokenizer.convert_tokens_to_ids(token)))
        if not ids:
            raise ModelError("The model defines no end-of-sequence token.", "Use a chat model with an EOS token.")
        return frozenset(ids)

    def render(self, message: str) -> list[int]:
        """Token ids of one user message in the chat template, with the generation prompt."""
        text = self.tokenizer.apply_chat_template(
            [{"role": "user", "content": message}], add_generation_prompt=True, tokenize=False
        )
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def prompt_ids(self, message: str, max_prompt_tokens: int | None = None) -> list[int]:
        """The chat prompt of ``message``; when too long, only the message is cut (at a token boundary)."""
        ids = self.render(message)
        if max_prompt_tokens is None or len(ids) <= max_prompt_tokens:
            return ids
        overhead = len(self.render(""))
        if overhead >= max_prompt_tokens:
            raise ModelError(
                f"The chat template alone needs {overhead} tokens, more than the limit of {max_prompt_tokens}.",
                "Raise the prompt length limit.",
            )
        offsets = self.tokenizer(message, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"]
        budget = min(max_prompt_tokens - overhead, len(offsets))
        while budget > 0:
            ids = self.render(message[: offsets[budget - 1][1]])
            if len(ids) <= max_prompt_tokens:
                return ids
            budget -= len(ids) - max_prompt_tokens
        return self.render("")

    def decode(self, token_ids: Sequence[int]) -> str:
        return self.tokenizer.decode(list(token_ids), skip_special_tokens=True)

    def decode_until_eos(self, token_ids: Sequence[int]) -> str:
        """Decode generated ids up to (not including) the first EOS token."""
        kept: list[int] = []
        for token in token_ids:
            if int(token) in self.eos_token_ids:
                break
            kept.append(int(token))
        return self.decode(kept).strip()
