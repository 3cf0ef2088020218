"""A symptom the corpus writes in two words, written whole (docs/method.md §2.6b).

A note's symptoms are often two words ("brittle nails", "facial swelling", "stomach cramps"); the keyword histogram
releases them as single words, so a topic's words hold "brittle" and "nails", and a symptom list wrote "nails, brittle
and itchy". The public model says which two of a topic's released words make one phrase: "brittle" is followed by
"nails" far more often than "brittle," is, and the phrase is one it knows. Those two are then listed as one symptom, in
that order. It reads released words and the public model only: post-processing, no cost.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import permutations

import torch

from core.methods.dp_synrag.write.roles import SYMPTOM
from core.models.base import LanguageModel

HEAD = "Symptoms:"  # the list the model continues
JOIN_MARGIN = 1.5  # nats: log P(b | "Symptoms: a") − log P(b | "Symptoms: a,"): b goes with a, not after it
JOIN_FLOOR = -8.0  # nats: log P(b | "Symptoms: a") of a phrase the model knows ("excessive swelling" is not one)
BATCH = 32


def listable(word: str, roles: Mapping[str, str | None]) -> bool:
    """A single released word a symptom list may hold (typed as a symptom or untyped)."""
    return word.isalpha() and roles.get(word) in (None, SYMPTOM)


def pair_scores(llm: LanguageModel, words: Sequence[str]) -> dict[tuple[str, str], float]:
    """For each ordered pair (a, b) of ``words`` that the model writes as one phrase (:data:`JOIN_MARGIN`,
    :data:`JOIN_FLOOR`), log P(b | "Symptoms: a"), read at b's first token (a word with no token is left out)."""
    tokenizer = llm.chat.tokenizer
    words = sorted(set(words))
    first = {w: tokenizer.encode(" " + w, add_special_tokens=False)[:1] for w in words}
    words = [w for w in words if first[w]]
    prompts = [tokenizer.encode(f"{HEAD} {w}{mark}", add_special_tokens=False) for w in words for mark in ("", ",")]
    rows: list[torch.Tensor] = []
    for start in range(0, len(prompts), BATCH):
        with torch.inference_mode():
            logits = llm.start_logits(prompts[start : start + BATCH]).logits().float().cpu()
        rows.extend(torch.log_softmax(logits, -1))
    out: dict[tuple[str, str], float] = {}
    for (i, a), (_, b) in permutations(enumerate(words), 2):
        token = first[b][0]
        joined, listed = float(rows[2 * i][token]), float(rows[2 * i + 1][token])
        if joined - listed >= JOIN_MARGIN and joined >= JOIN_FLOOR:
            out[(a, b)] = joined
    return out


def joined(words: Sequence[str], scores: Mapping[tuple[str, str], float]) -> tuple[str, ...]:
    """``words`` with each pair the model writes as one phrase joined, most likely first, a word in one pair at most;
    the phrase stands where its first word stood ("brittle", "itchy", "nails" → "brittle nails", "itchy")."""
    pairs = sorted(((s, a, b) for (a, b), s in scores.items() if a in words and b in words), reverse=True)
    partner: dict[str, str] = {}
    taken: set[str] = set()
    for _, a, b in pairs:
        if a not in taken and b not in taken:
            partner[a] = b
            taken.update((a, b))
    second = set(partner.values())
    return tuple(f"{w} {partner[w]}" if w in partner else w for w in words if w not in second)


def compound_topics(llm: LanguageModel, topics: Sequence[tuple[str, Sequence[str]]],
                    roles: Mapping[str, str | None]) -> list[tuple[str, tuple[str, ...]]]:
    """Each topic (its word, its other released words) with the other words' two-word symptoms joined; unchanged
    unless a released word of the run is typed as a symptom (a clinical corpus)."""
    if SYMPTOM not in roles.values():
        return [(word, tuple(related)) for word, related in topics]
    words = {w for _, related in topics for w in related if listable(w, roles)}
    scores = pair_scores(llm, sorted(words)) if len(words) > 1 else {}
    out = []
    for word, related in topics:
        mine = [w for w in related if listable(w, roles)]
        phrases = {phrase.split(" ")[0]: phrase for phrase in joined(mine, scores)}
        seconds = set(mine) - set(phrases)
        out.append((word, tuple(phrases.get(w, w) for w in related if w not in seconds)))
    return out
