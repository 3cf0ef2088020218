"""The lead's released words joined into the phrases they come from (docs/method.md §2.4c): post-processing.

Released keywords are single words, so a complaint of two words reaches the writer in pieces: a topic of
notes about "metallic taste" and "blisters on the palms" releases "metallic", "taste", "blisters" and
"palms", and the lead read "… reports palms, blisters, taste and metallic". The public model knows which of
them make a phrase. For each ordered pair (a, b) of the lead's words and each public joiner j ("", "of",
"of the", "on the", "in the"), it scores how much writing "a j b" after the lead raises the chance of b
over b written first on its own:

    gain(a, j, b) = log P(j b | lead a) − log P(b | lead)

A pair is joined when its gain is at least ``JOIN_GAIN`` nats, "j b" is itself likely enough after
"lead a" (``JOIN_LOGP``) and at least ``JOIN_APART`` nats likelier than after "lead a," (b goes with a, not after
it as the list's next item: "sweating rash" is not joined), best pairs first, each word in at most one phrase. "metallic taste",
"blisters on the palms", "brittle nails", "shortness of breath" are joined; "fever, rash" or "metallic,
fever" are not. The thresholds were set on a dozen general symptom lists (round 4, session 15,
docs/results/history.md), not on a corpus.

It reads only released words, the form's public lead and the public model: no privacy cost.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import permutations
from typing import Mapping, Sequence

import torch

from core.models.base import LanguageModel

JOINERS = ("", " of", " of the", " on the", " in the")
JOIN_GAIN = 5.5  # nats: how much "a j" must raise the chance of b
JOIN_LOGP = -9.5  # nats: the least log-probability of "j b" after "lead a"
JOIN_APART = 1.5  # nats: how much likelier "j b" is after "lead a" than after "lead a," (round 5, session 10)
SCORE_BATCH = 64
MAX_LEAD_WORDS = 10  # a bigger pool is written as listed (pairs grow as the square)


@dataclass(frozen=True)
class Join:
    """One candidate phrase: ``first`` + ``joiner`` + ``second`` and its two scores (nats)."""

    first: str
    joiner: str
    second: str
    gain: float
    logp: float
    apart: float = -math.inf  # log P(j b | lead a,): b written as the list's next item instead

    @property
    def phrase(self) -> str:
        return f"{self.first}{self.joiner} {self.second}"


def continuation_logprobs(llm: LanguageModel, contexts: Sequence[str], continuations: Sequence[str]) -> list[float]:
    """log P(continuation | context) under the public model, for each pair (raw text, no chat template)."""
    tokenizer = llm.chat.tokenizer
    out: list[float] = []
    for start in range(0, len(contexts), SCORE_BATCH):
        ctx = [tokenizer.encode(c, add_special_tokens=False) for c in contexts[start : start + SCORE_BATCH]]
        cont = [tokenizer.encode(c, add_special_tokens=False) for c in continuations[start : start + SCORE_BATCH]]
        steps = max(len(c) for c in cont)
        totals = torch.zeros(len(ctx), dtype=torch.float64)
        with torch.inference_mode():
            session = llm.start_logits(ctx)
            for step in range(steps):
                logp = torch.log_softmax(session.logits().float(), -1).cpu()
                wanted = torch.tensor([c[step] if step < len(c) else 0 for c in cont])
                live = torch.tensor([step < len(c) for c in cont])
                totals += torch.where(live, logp[torch.arange(len(ctx)), wanted], 0.0).double()
                if step + 1 < steps:
                    session.append(wanted.to(llm.device))
        out.extend(totals.tolist())
    return out


@dataclass
class JoinScorer:
    """The scores of :func:`candidate_joins` after one public ``lead``, each pair scored once per run (the
    documents of a topic draw their words from the same few released co-keywords)."""

    llm: LanguageModel
    lead: str
    _alone: dict[str, float] = field(default_factory=dict)
    _after: dict[tuple[str, str, str], float] = field(default_factory=dict)
    _apart: dict[tuple[str, str, str], float] = field(default_factory=dict)

    def candidate_joins(self, words: Sequence[str]) -> list[Join]:
        """Every pair and joiner of ``words`` with its gain and log-probability, best gain first."""
        new = [w for w in words if w not in self._alone]
        self._alone.update(zip(new, continuation_logprobs(self.llm, [self.lead] * len(new), [f" {w}" for w in new])))
        triples = [(a, j, b) for a, b in permutations(words, 2) for j in JOINERS]
        todo = [t for t in triples if t not in self._after]
        for mark, scored in (("", self._after), (",", self._apart)):
            scored.update(zip(todo, continuation_logprobs(self.llm, [f"{self.lead} {a}{mark}" for a, _, _ in todo],
                                                          [f"{j} {b}" for _, j, b in todo])))
        joins = [Join(a, j, b, self._after[a, j, b] - self._alone[b], self._after[a, j, b], self._apart[a, j, b])
                 for a, j, b in triples]
        return sorted(joins, key=lambda x: -x.gain)


def chosen_joins(candidates: Sequence[Join]) -> list[Join]:
    """The joins taken, best first: gain ≥ ``JOIN_GAIN``, log-probability ≥ ``JOIN_LOGP`` and ``JOIN_APART`` above
    the list's next item's, each word once."""
    used: set[str] = set()
    taken = []
    for join in candidates:
        if join.gain < JOIN_GAIN or join.logp < JOIN_LOGP or join.logp - join.apart < JOIN_APART or \
                {join.first, join.second} & used:
            continue
        used |= {join.first, join.second}
        taken.append(join)
    return taken


def joined(words: Sequence[str], phrase_of: Mapping[str, str]) -> list[str]:
    """``words`` with each joined pair replaced by its phrase, where the earlier of the two stood."""
    out: list[str] = []
    for w in words:
        item = phrase_of.get(w, w)
        if item not in out:
            out.append(item)
    return out


def phrases_of(scorer: JoinScorer, words: Sequence[str]) -> dict[str, str]:
    """Each of the lead's ``words`` that the public model joins with another, mapped to their phrase."""
    if len(words) < 2 or len(words) > MAX_LEAD_WORDS:
        return {}
    joins = chosen_joins(scorer.candidate_joins(words))
    return {w: j.phrase for j in joins for w in (j.first, j.second)}
