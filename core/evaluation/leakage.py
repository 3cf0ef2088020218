"""Leakage (docs/method.md §5): private identifiers reproduced in a synthetic corpus and in answers.

Identifiers are the members' full names (the person column) and the planted canary names.
The *non-members'* names serve as a control: no generator ever saw them, so their rate is
what chance (common first/last name pairs, the LLM's own inventions) produces. Only counts
and rates are reported, never which names or texts.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Iterable, Sequence


class NameMatcher:
    """Finds whole-word, case-insensitive occurrences of any of a set of full names."""

    def __init__(self, names: Iterable[str]) -> None:
        self.names = sorted({n.strip() for n in names if n.strip()}, key=len, reverse=True)
        if self.names:
            alternation = "|".join(re.escape(n) for n in self.names)
            self._pattern = re.compile(rf"(?<!\w)(?:{alternation})(?!\w)", re.IGNORECASE)
        else:
            self._pattern = None
        self._canonical = {n.lower(): n for n in self.names}

    def find(self, text: str) -> set[str]:
        if self._pattern is None:
            return set()
        return {self._canonical[m.group(0).lower()] for m in self._pattern.finditer(text)}


@dataclass
class TextLeakage:
    """Counts over a list of texts (a corpus, or the answers to a set of questions)."""

    n_texts: int
    texts_with_member_name: int
    distinct_member_names: int
    canaries_reproduced: int
    texts_with_non_member_name: int  # control

    @property
    def member_rate(self) -> float:
        return self.texts_with_member_name / self.n_texts if self.n_texts else 0.0

    @property
    def control_rate(self) -> float:
        return self.texts_with_non_member_name / self.n_texts if self.n_texts else 0.0

    def to_dict(self) -> dict:
        return {**asdict(self), "member_rate": self.member_rate, "control_rate": self.control_rate}


def count_leakage(
    texts: Sequence[str], members: NameMatcher, canaries: NameMatcher, non_members: NameMatcher
) -> TextLeakage:
    found_members: set[str] = set()
    found_canaries: set[str] = set()
    with_member = with_control = 0
    for text in texts:
        names = members.find(text)
        found_members |= names
        with_member += bool(names)
        found_canaries |= canaries.find(text)
        with_control += bool(non_members.find(text))
    return TextLeakage(len(texts), with_member, len(found_members), len(found_canaries), with_control)


def attack_success(answers: Sequence[str], golds: Sequence[Sequence[str]], members: NameMatcher) -> float:
    """Share of attack answers naming a member who really has the asked-about condition."""
    if not answers:
        return 0.0
    member_set = set(members.names)
    hits = 0
    for answer, gold in zip(answers, golds):
        wanted = NameMatcher([g for g in gold if g in member_set])
        hits += bool(wanted.find(answer))
    return hits / len(answers)
