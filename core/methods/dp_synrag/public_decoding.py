"""Public decoding for the public writer (docs/method.md §2.4b): greedy, with a repetition penalty, no
repeated n-grams, a copy guard against a demonstration, and released words pulled in by lexically
constrained decoding. It reads public prompts and public logits only (post-processing of released words).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Sequence

import torch

from core.models.base import LanguageModel

REPETITION_PENALTY = 1.3  # public decoding (CTRL-style): divides a positive logit, multiplies a negative one
NO_REPEAT_NGRAM = 3  # a token that would repeat a 3-gram already written is never chosen
COPY_NGRAM = 4  # the writer never writes a 4-token run of the demonstration that the bare form does not hold


def missing_words(text: str, words: Sequence[str]) -> list[str]:
    """The released words that do not appear verbatim (case-insensitive, on word boundaries) in ``text``."""
    lowered = text.lower()
    return [w for w in words if not re.search(rf"(?<!\w){re.escape(w.lower())}(?!\w)", lowered)]



def _banned_by_ngrams(tokens: Sequence[int], n: int) -> set[int]:
    """Tokens that would repeat an n-gram already in ``tokens``."""
    if n < 2 or len(tokens) < n - 1:
        return set()
    prefix = tuple(tokens[len(tokens) - n + 1 :])
    return {tokens[i + n - 1] for i in range(len(tokens) - n + 1) if tuple(tokens[i : i + n - 1]) == prefix}


CopyGuard = dict[tuple[int, ...], set[int]]


def _word_ids(tokenizer, word: str) -> list[list[int]]:
    """The token ids of ``word`` as written after a space: as given, capitalised and in title case."""
    forms = dict.fromkeys((word, word[:1].upper() + word[1:], " ".join(w[:1].upper() + w[1:] for w in word.split())))
    return [ids for ids in (list(tokenizer.encode(" " + f, add_special_tokens=False)) for f in forms) if ids]


def copy_guard(tokenizer, demo_document: str, example: str, avoid: Sequence[str] = (), n: int = COPY_NGRAM) -> CopyGuard:
    """The next tokens that would copy the demonstration, keyed by the tokens before them: an n-token run
    the bare form does not hold, or one of its own words (``avoid``: its topic, names, details). The
    writer keeps the form's words but invents its own."""
    def grams(text: str) -> set[tuple[int, ...]]:
        ids = list(tokenizer.encode(text, add_special_tokens=False))
        return {tuple(ids[i : i + n]) for i in range(len(ids) - n + 1)}

    guard: CopyGuard = {}
    for gram in grams(demo_document) - grams(example):
        guard.setdefault(gram[:-1], set()).add(gram[-1])
    for word in avoid:
        for ids in _word_ids(tokenizer, word):
            key = tuple(ids[:1]) if len(ids) > 1 else ()  # a one-token word is never written; else not finished
            guard.setdefault(key, set()).add(ids[1] if len(ids) > 1 else ids[0])
    return guard


SCAFFOLD = ("Topic", "topic", "Related", "Document", "document", "Key terms")  # the prompt's labels, never a document's


def with_scaffold(tokenizer, guard: CopyGuard, labels: Sequence[str] = SCAFFOLD) -> CopyGuard:
    """``guard`` that also keeps the writer from the prompt's own labels, as written at the start or after a
    space ("The topic of …", "Related words: …"); lower-case "related" stays a word it may write."""
    out = {key: set(tokens) for key, tokens in guard.items()}
    for label in labels:
        for text in (label, " " + label):
            ids = list(tokenizer.encode(text, add_special_tokens=False))
            if 0 < len(ids) <= COPY_NGRAM:
                out.setdefault(tuple(ids[:-1]), set()).add(ids[-1])
    return out


def _banned_by_guard(tokens: Sequence[int], guard: CopyGuard, n: int = COPY_NGRAM) -> set[int]:
    """The guard's bans after ``tokens`` (keys of every length up to n-1 are looked up)."""
    banned: set[int] = set()
    for k in range(min(n - 1, len(tokens)) + 1):
        banned |= guard.get(tuple(tokens[len(tokens) - k :]) if k else (), set())
    return banned


@dataclass
class WordPull:
    """Lexically constrained decoding for one row: the released words not yet written pull the writer
    (their first tokens gain ``bias``, growing over the answer), a word once begun is finished, and the
    answer does not end while one is missing."""

    words: Sequence[str]
    variants: list[tuple[str, list[int]]]
    queue: list[int] = field(default_factory=list)

    @classmethod
    def of(cls, tokenizer, words: Sequence[str]) -> "WordPull":
        return cls(words, [(w, ids) for w in words for ids in _word_ids(tokenizer, w)])

    def missing(self, text: str) -> set[str]:
        return set(missing_words(text, self.words))

    def first_tokens(self, missing: set[str]) -> set[int]:
        return {ids[0] for w, ids in self.variants if w in missing}

    def chosen(self, token: int, missing: set[str]) -> None:
        """After ``token`` was written: queue the rest of the missing word it begins."""
        if self.queue:
            self.queue.pop(0)
            return
        for word, ids in self.variants:
            if word in missing and ids[0] == token and len(ids) > 1:
                self.queue = list(ids[1:])
                return


PULL_START, PULL_END = 1.0, 6.0  # the released words' bias at the first and the last token of an answer


@dataclass(frozen=True)
class _Rules:
    """What public decoding does to every row's logits before its greedy choice."""

    repetition_penalty: float
    no_repeat_ngram: int
    guard: CopyGuard
    eos: frozenset[int]
    max_new_tokens: int


def _shape_row(logits: torch.Tensor, written: list[int], rules: _Rules, pull: WordPull | None, step: int,
               decode) -> set[str]:
    """Apply the rules to one row's logits (in place); returns the released words it still misses."""
    if pull is not None and pull.queue:  # finishing a released word
        forced = pull.queue[0]
        logits[:] = float("-inf")
        logits[forced] = 0.0
        return set()
    seen = torch.tensor(sorted(set(written)), dtype=torch.long)
    if len(seen):
        values = logits[seen]
        logits[seen] = torch.where(values > 0, values / rules.repetition_penalty, values * rules.repetition_penalty)
    banned = _banned_by_ngrams(written, rules.no_repeat_ngram) | _banned_by_guard(written, rules.guard)
    missing: set[str] = set()
    if pull is not None:
        missing = pull.missing(decode(written))
        wanted = pull.first_tokens(missing)
        banned -= wanted
        if missing:
            logits[sorted(wanted)] += PULL_START + (PULL_END - PULL_START) * step / max(1, rules.max_new_tokens - 1)
            banned |= {t for t in rules.eos if t < logits.shape[0]}
    if banned:
        logits[sorted(banned)] = float("-inf")
    return missing


def public_greedy(
    llm: LanguageModel,
    messages: Sequence[str],
    answer_starts: Sequence[str],
    max_new_tokens: int,
    repetition_penalty: float = REPETITION_PENALTY,
    no_repeat_ngram: int = NO_REPEAT_NGRAM,
    max_prompt_tokens: int | None = None,
    guard: CopyGuard | None = None,
    pulls: Sequence[WordPull] | None = None,
) -> list[str]:
    """Greedy decoding with a repetition penalty and no repeated n-grams, over public prompts only.

    Each row's answer begins with its public ``answer_starts`` text, returned as part of the answer.
    ``guard``: what of a demonstration the writer must not copy (:func:`copy_guard`); ``pulls``: each row's
    released words, written by constrained decoding (:class:`WordPull`).
    """
    if not messages:
        return []
    tokenizer = llm.chat.tokenizer
    starts = [list(tokenizer.encode(s, add_special_tokens=False)) if s else [] for s in answer_starts]
    prompts = [p + s for p, s in zip(llm.chat_prompt_ids(messages, max_prompt_tokens), starts)]
    session = llm.start_logits(prompts)
    written: list[list[int]] = [list(s) for s in starts]
    active = list(range(len(messages)))
    rules = _Rules(repetition_penalty, no_repeat_ngram, guard or {}, frozenset(llm.eos_token_ids), max_new_tokens)
    for step in range(max_new_tokens):
        logits = session.logits().float().cpu().clone()
        missing = {row: _shape_row(logits[pos], written[row], rules, pulls[row] if pulls else None, step, llm.decode)
                   for pos, row in enumerate(active)}
        tokens = torch.argmax(logits, dim=-1)
        keep = []
        for pos, row in enumerate(active):
            token = int(tokens[pos])
            if token in rules.eos:
                continue
            if pulls:
                pulls[row].chosen(token, missing[row])
            written[row].append(token)
            keep.append(pos)
        if not keep or step == max_new_tokens - 1:
            break
        if len(keep) < len(active):
            index = torch.tensor(keep, dtype=torch.long)
            session.keep(index.to(llm.device))
            tokens = tokens[index]
            active = [active[pos] for pos in keep]
        session.append(tokens.to(llm.device))
    return [llm.decode(ids) for ids in written]
