"""Role accuracy: does each typed word of a document stand in the section of its role (docs/method.md §2.4c)?

A clinical note has sections of three roles: what the patient *reports* (symptoms), the *impression*
(the condition) and the *plan* (the drug). The demo clinic's generator knows every word's true role
(``resources/demo/clinic/diseases.json``: each disease name is a condition, its drug a drug, its symptoms
symptoms), so a corpus can be scored on where it puts them.

**Definition.** A word's *section* at one of its occurrences is the role of the last section cue before it
in the same sentence (``SECTION_CUES``: "reports", "complains of" → symptom; "Impression", "diagnosed",
"consistent with" → condition; "Plan", "Treatment", "prescribed", "started on" → drug; "Examination",
"History", "Key terms" → no role); an occurrence with no cue before it in its sentence has no section.
Over every pair (document, word of the truth that occurs in it), a pair is **placed** when the word has an
occurrence in the section of its own role and none in the section of another role. Role accuracy is the
share of placed pairs. "reports uricalm sachets and pumice cystitis" places neither a drug nor a condition;
a word left to the "Key terms:" line is not placed either. The demo's own notes (seven wordings) score
1.0 (tests/methods/dp_synrag/test_roles.py), so the cues read the generator's wordings as well as the form's.

**Topic shares.** The same catalogue says which condition each real note is about. A corpus's *topic shares*
are the shares of its documents whose first named condition is each one ("none" for a document that names no
condition); :func:`topic_share_tv` is the total variation ½·Σ|p − q| between a corpus's shares and the real
members' (0: the same mix of conditions; 1: disjoint). A corpus that writes one document per topic, whatever
the topic's size, or documents about symptoms alone, is far from the real mix. :func:`topic_tv_floor` is the least
TV a corpus could reach with the conditions it names (the real share of those it never names first): the part
of the distance the DP thresholds decide, whatever the allocation.

Evaluation only: it reads the generator's public catalogue and the documents' text, and writes counts.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

CONDITION, DRUG, SYMPTOM = "condition", "drug", "symptom"
ROLES = (SYMPTOM, CONDITION, DRUG)

# (cue, role): the cue opens a section of that role (None: a section of no role); matched as whole words.
SECTION_CUES: tuple[tuple[str, str | None], ...] = (
    ("reports", SYMPTOM), ("reported", SYMPTOM), ("complains of", SYMPTOM), ("complaining of", SYMPTOM),
    ("complaints", SYMPTOM), ("presents with", SYMPTOM), ("presenting with", SYMPTOM), ("symptoms", SYMPTOM),
    ("has had", SYMPTOM), ("because of", SYMPTOM), ("suffering from", SYMPTOM),
    ("impression", CONDITION), ("diagnosis", CONDITION), ("diagnosed", CONDITION), ("assessment", CONDITION),
    ("consistent with", CONDITION), ("suggestive of", CONDITION),
    ("plan", DRUG), ("treatment", DRUG), ("treated with", DRUG), ("prescribed", DRUG), ("started on", DRUG),
    ("start", DRUG), ("take", DRUG), ("recommended", DRUG),
    ("examination", None), ("findings", None), ("history", None), ("key terms", None), ("review", None),
    ("confirmed by", None), ("supported", None),
)
_CUE = re.compile(r"(?<![\w-])(" + "|".join(re.escape(c) for c, _ in SECTION_CUES) + r")(?![\w-])", re.IGNORECASE)
_CUE_ROLE = dict(SECTION_CUES)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


@dataclass(frozen=True)
class RoleScore:
    """Role accuracy of one corpus: ``placed`` of ``pairs`` (document, typed word) pairs; per role too."""

    pairs: int = 0
    placed: int = 0
    by_role: dict[str, tuple[int, int]] = field(default_factory=dict)  # role -> (pairs, placed)

    @property
    def accuracy(self) -> float | None:
        return self.placed / self.pairs if self.pairs else None

    def to_dict(self) -> dict:
        return {"pairs": self.pairs, "placed": self.placed, "role_accuracy": self.accuracy,
                "by_role": {r: {"pairs": n, "placed": k} for r, (n, k) in self.by_role.items()}}


def sections(sentence: str) -> list[tuple[int, str | None]]:
    """The section cues of one sentence: (where the section starts, its role), in order."""
    return [(m.end(), _CUE_ROLE[m.group(1).lower()]) for m in _CUE.finditer(sentence)]


def section_at(cues: Sequence[tuple[int, str | None]], position: int) -> str | None:
    """The role of the section holding ``position`` (None: no cue before it in its sentence, or a neutral one)."""
    role = None
    for start, cue_role in cues:
        if start > position:
            break
        role = cue_role
    return role


def word_sections(document: str, word: str) -> list[str | None]:
    """The section (role or None) of every occurrence of ``word`` in ``document`` (case-insensitive, whole words)."""
    pattern = re.compile(rf"(?<![\w-]){re.escape(word)}(?![\w-])", re.IGNORECASE)
    found: list[str | None] = []
    for sentence in _SENTENCE.split(document):
        cues = sections(sentence)
        found.extend(section_at(cues, m.start()) for m in pattern.finditer(sentence))
    return found


def is_placed(found: Sequence[str | None], role: str) -> bool:
    """A word is placed when one occurrence is in its role's section and none is in another role's."""
    return role in found and all(f is None or f == role for f in found)


def role_accuracy(documents: Sequence[str], truth: Mapping[str, str]) -> RoleScore:
    """Role accuracy of ``documents`` against ``truth`` (word -> role), as defined in the module docstring."""
    pairs = placed = 0
    by_role = {r: [0, 0] for r in ROLES}
    for document in documents:
        for word, role in truth.items():
            found = word_sections(document, word)
            if not found:
                continue
            ok = is_placed(found, role)
            pairs += 1
            placed += ok
            by_role.setdefault(role, [0, 0])
            by_role[role][0] += 1
            by_role[role][1] += ok
    return RoleScore(pairs, placed, {r: (n, k) for r, (n, k) in by_role.items() if n})


NO_CONDITION = "none"
SHARE_DIGITS = 12  # TV and its floor, rounded alike: sums of 1/n shares differ in the last bits (0.325 vs 0.325)


def first_condition(document: str, conditions: Sequence[str]) -> str:
    """The condition ``document`` names first (whole words, case-insensitive), or NO_CONDITION."""
    found = [(m.start(), c) for c in conditions
             for m in [re.search(rf"(?<![\w-]){re.escape(c)}(?![\w-])", document, re.IGNORECASE)] if m]
    return min(found)[1] if found else NO_CONDITION


def topic_shares(documents: Sequence[str], conditions: Sequence[str]) -> dict[str, float]:
    """The share of ``documents`` whose first named condition is each one (NO_CONDITION: none named)."""
    shares: dict[str, float] = {}
    for document in documents:
        key = first_condition(document, conditions)
        shares[key] = shares.get(key, 0.0) + 1.0 / len(documents)
    return shares


def topic_share_tv(documents: Sequence[str], real: Sequence[str], truth: Mapping[str, str]) -> float | None:
    """Total variation between the topic shares of ``documents`` and of the ``real`` documents (None when
    either is empty)."""
    if not documents or not real:
        return None
    p, q = _condition_shares(documents, real, truth)
    return round(0.5 * sum(abs(p.get(k, 0.0) - q.get(k, 0.0)) for k in set(p) | set(q)), SHARE_DIGITS)


def topic_tv_floor(documents: Sequence[str], real: Sequence[str], truth: Mapping[str, str]) -> float | None:
    """The least topic TV ``documents`` could have with the conditions they name: the real share of the conditions
    (and of "none") that no document names first. TV = Σ over k with p_k < q_k of (q_k − p_k) ≥ Σ over k with
    p_k = 0 of q_k. A condition no released topic holds (fewer units than the threshold needs) is in it whatever
    the allocation does; None when either corpus is empty."""
    if not documents or not real:
        return None
    p, q = _condition_shares(documents, real, truth)
    return round(sum(share for k, share in q.items() if p.get(k, 0.0) == 0.0), SHARE_DIGITS)


def _condition_shares(documents: Sequence[str], real: Sequence[str], truth: Mapping[str, str]
                      ) -> tuple[dict[str, float], dict[str, float]]:
    """The topic shares of ``documents`` and of ``real`` over the catalogue's conditions."""
    conditions = [w for w, role in truth.items() if role == CONDITION]
    return topic_shares(documents, conditions), topic_shares(real, conditions)


def clinic_truth(path: Path) -> dict[str, str]:
    """The demo clinic's true roles (``diseases.json`` of ``core/demo/clinic.py``): word -> role."""
    data = json.loads(path.read_text(encoding="utf-8"))
    truth: dict[str, str] = {}
    for disease in data["diseases"]:
        truth[disease["name"]] = CONDITION
        truth[disease["drug"]] = DRUG
        for symptom in disease["symptoms"]:
            truth[symptom] = SYMPTOM
    return truth
