"""The public facts of every token of the form writer's vocabulary (``form_writer.py``): which are digits, which
end a clause, which it never writes (brackets, special tokens, a public given name). Computed once per tokenizer from
the tokenizer and public lists only."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import torch

from core.methods.dp_synrag.vocab.vocabulary import load_person_names

_CLAUSE_END = re.compile(r"[.;:!?\n]")
_DIGITS = set("0123456789")
_ODD = set("[]\\|{}<>_#*=~^`@$%&")  # marks no document of prose writes inside a slot


@dataclass(frozen=True)
class TokenTable:
    """Public facts of every token of the writer's vocabulary, computed once per tokenizer."""

    texts: tuple[str, ...]
    digits: torch.Tensor  # bool [V]: digits only
    has_digit: torch.Tensor
    clause_end: torch.Tensor  # holds . ; : ! ? or a line break
    banned: torch.Tensor  # brackets, special tokens, control characters
    space_start: torch.Tensor  # starts with a space (and holds more)
    name_like: torch.Tensor  # a capitalised given name or surname of the public list: the writer never writes one
    letters: torch.Tensor  # letters only (no space): a unit or a letter written onto a number ("86M", "5mg")
    lone_capital: torch.Tensor  # one capital letter: an initial, never a slot's first word ("Issue: I.")

    @property
    def size(self) -> int:
        return len(self.texts)


@lru_cache(maxsize=4)
def token_table(tokenizer, vocab_size: int) -> TokenTable:
    special = set(getattr(tokenizer, "all_special_ids", []) or [])
    texts = []
    for i in range(vocab_size):
        try:
            texts.append(tokenizer.decode([i]) if i < len(tokenizer) else "")
        except Exception:  # an id the tokenizer cannot decode is never written
            texts.append("")
    digits = torch.tensor([bool(t.strip()) and set(t.strip()) <= _DIGITS and t.lstrip(" ") == t.strip() for t in texts])
    space_start = torch.tensor([t.startswith(" ") and len(t) > 1 for t in texts])
    has_digit = torch.tensor([any(c.isdigit() for c in t) for t in texts])
    clause_end = torch.tensor([bool(_CLAUSE_END.search(t)) for t in texts])
    banned = torch.tensor([
        i in special or not t or bool(set(t) & _ODD) or "\ufffd" in t or any(ord(c) < 32 and c != "\n" for c in t)
        for i, t in enumerate(texts)
    ])
    names = load_person_names()
    name_like = torch.tensor([t.strip()[:1].isupper() and t.strip().lower() in names for t in texts])
    letters = torch.tensor([t.isalpha() for t in texts])
    lone_capital = torch.tensor([len(t.strip()) == 1 and t.strip().isupper() for t in texts])
    return TokenTable(tuple(texts), digits, has_digit, clause_end, banned, space_start, name_like, letters, lone_capital)
