"""The echo rule of public decoding (docs/method.md §2.4b): what the stage's other documents wrote, remembered as
token n-grams, so that a token that would repeat an n-gram written c times elsewhere loses ``penalty · ln(1 + c)``
of its logit (``logit_shaping.shape``): documents do not all say the same thing the same way. Earlier batches are
found by binary search in their counted n-grams (:class:`EchoIndex`); public text only."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Collection, Sequence

import torch

PAD = -1  # an unused place of a token table (never a token id)


class Echo:
    """The n-grams of the documents this stage has already written (public drafts), for the echo rule.
    ``free``: the tokens never discouraged (the form's own tokens: its labels and small words stay the
    writer's); ``penalty`` 0 turns the rule off."""

    def __init__(self, penalty: float, n: int, free: Collection[int] = ()) -> None:
        self.penalty, self.n = penalty, n
        self.free = torch.tensor(sorted(set(free)), dtype=torch.long)
        self._grams = torch.empty((0, n), dtype=torch.long)
        self._index: EchoIndex | None = None

    def add(self, documents: Sequence[Sequence[int]]) -> None:
        """Remember what these documents wrote (their tokens, answer starts included)."""
        grams = [list(d[i : i + self.n]) for d in documents for i in range(len(d) - self.n + 1)]
        if grams:
            self._grams = torch.cat([self._grams, torch.tensor(grams, dtype=torch.long, device=self._grams.device)])
            self._index = None

    def grams(self, device: str | torch.device) -> torch.Tensor:
        """``[G, n]`` every n-gram remembered, on ``device``."""
        if self._grams.device != torch.device(device):
            self._grams = self._grams.to(device)
        return self._grams

    def index(self, device: str | torch.device) -> "EchoIndex":
        """The remembered n-grams counted and sorted for lookup (built once per :meth:`add`), on ``device``."""
        if self._index is None or self._index.after.device != torch.device(device):
            self._index = EchoIndex.of(self.grams(device))
        return self._index

    def free_on(self, device: str | torch.device) -> torch.Tensor:
        """The tokens never discouraged, on ``device``."""
        if self.free.device != torch.device(device):
            self.free = self.free.to(device)
        return self.free

_KEY_BITS = 21  # a token id below 2**21 (2,097,152) is one digit of an n-gram's key; 3 digits fit an int64


def prefix_keys(tokens: torch.Tensor) -> torch.Tensor:
    """``[rows]`` one int64 key for each row of ``[rows, k]`` tokens (k ≤ 3, each id below 2**21; a
    negative id, the padding, gives a negative key that matches no n-gram's)."""
    key = torch.zeros(tokens.shape[0], dtype=torch.long, device=tokens.device)
    for j in range(tokens.shape[1]):
        key = key * (1 << _KEY_BITS) + tokens[:, j]
    return key


@dataclass(frozen=True)
class EchoIndex:
    """The remembered n-grams, counted: each distinct (first n-1 tokens, next token) once, with how many
    times it was written, sorted by the key of its first n-1 tokens. A row finds what followed its last n-1
    tokens by binary search, so a step costs the rows times the continuations found, whatever the memory's
    size (no ``[rows, G]`` comparison)."""

    n: int
    prefix: torch.Tensor  # [U] int64, sorted
    after: torch.Tensor  # [U] the next token
    count: torch.Tensor  # [U] float32

    @classmethod
    def of(cls, grams: torch.Tensor) -> "EchoIndex":
        k = grams.shape[1] - 1
        if not 1 <= k <= 3 or (grams.numel() and int(grams.max()) >= 1 << _KEY_BITS):
            raise ValueError("the echo indexes 2- to 4-grams of token ids below 2**21")
        both = torch.stack([prefix_keys(grams[:, :k]), grams[:, k]], 1)
        distinct, count = torch.unique(both, dim=0, return_counts=True)  # sorted by prefix, then next token
        return cls(k + 1, distinct[:, 0].contiguous(), distinct[:, 1].contiguous(), count.float())

    def add_to(self, counts: torch.Tensor, suffix: torch.Tensor, ok: torch.Tensor, vocab: int) -> None:
        """Add to ``counts`` ``[rows, vocab + 1]`` how often each token followed each row's ``suffix``
        ``[rows, k]`` (rows where ``ok`` is False: nothing)."""
        if not self.prefix.numel():
            return
        key = prefix_keys(suffix)
        low = torch.searchsorted(self.prefix, key)
        high = torch.where(ok, torch.searchsorted(self.prefix, key, right=True), low)
        width = int((high - low).max()) if key.numel() else 0
        if width == 0:
            return
        place = low[:, None] + torch.arange(width, device=low.device)
        valid = place < high[:, None]
        place = place.clamp(max=self.prefix.numel() - 1)
        after = torch.where(valid, self.after[place].clamp(max=vocab), vocab)
        counts.scatter_add_(1, after, torch.where(valid, self.count[place], 0.0))


def echo_counts(remembered: EchoIndex, written: torch.Tensor, length: torch.Tensor, vocab: int) -> torch.Tensor:
    """``[rows, vocab + 1]``: how many times each token follows the row's last n-1 tokens in the n-grams
    ``remembered`` and in those the batch's rows have written so far (the last column counts nothing)."""
    n, k = remembered.n, remembered.n - 1
    counts = torch.zeros((written.shape[0], vocab + 1), dtype=torch.float32, device=written.device)
    suffix = last_tokens(written, length, k)
    ok = length >= k
    remembered.add_to(counts, suffix, ok, vocab)
    if written.shape[1] >= n:  # the batch's own windows, each row's written part only: few, compared directly
        windows = written.unfold(1, n, 1)
        place = torch.arange(windows.shape[1], device=written.device)
        table = windows[place[None, :] + n <= length[:, None]]
        hit = (table[None, :, :k] == suffix[:, None, :]).all(-1) & ok[:, None]
        counts.scatter_add_(1, torch.where(hit, table[None, :, k].clamp(max=vocab), vocab), hit.float())
    return counts


def last_tokens(written: torch.Tensor, length: torch.Tensor, k: int, fill: int = PAD) -> torch.Tensor:
    """Each row's last ``k`` written tokens ``[rows, k]`` (``fill`` where a row holds fewer)."""
    index = length[:, None] - k + torch.arange(k, device=written.device)
    tokens = written.gather(1, index.clamp(min=0, max=written.shape[1] - 1))
    return torch.where(index >= 0, tokens, torch.full_like(tokens, fill))
