"""Each typed released word in its slot of the form (docs/method.md §2.4c): post-processing of released words.

A form's example names its slots in square brackets; some slots have a role (``SLOT_ROLES``: "[symptoms]",
"[condition]", "[treatment]"), and the words before a slot in its sentence are its *label* ("reports",
"Impression:", "Plan:"). For the shipped clinical note, "… reports [symptoms] … Impression: [condition].
Plan: [treatment] …" gives three typed slots. A topic's words whose role (``roles.py``) is a slot's role
are written in that slot:

* the slot the public lead ends on ("Consultation note. K. M., 47, reports") gets its words in the lead
  ("… reports nausea and chest pain"), so the writer continues after them; the words of no role join it
  there too (a clinical note's untyped words are mostly what patients report: "cramps", "brittle"), so no
  word of such a form is left to a closing "Key terms:" line;
* every other typed slot becomes one pulled phrase, its label and its words ("Impression: tusfosemia"):
  the writer is pulled toward it like any released word, and once it writes the label's first token the
  phrase is finished token by token (``WordPull``); the bare word is banned elsewhere (the copy guard), so
  it is not written in another role's place;
* a word still missing at the end goes to its slot's line ("Impression: tusfosemia.") before the
  ``Key terms`` line of the untyped ones.

A word of no role in a form whose lead ends on no slot, and every word of a form without typed slots (news,
reviews), is written as before.
Public text only: the form, the released words and public role sources; no privacy cost.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from core.methods.dp_synrag.write.roles import CONDITION, DRUG, SYMPTOM

SLOT_ROLES = {
    "symptoms": SYMPTOM, "symptom": SYMPTOM, "complaint": SYMPTOM, "complaints": SYMPTOM,
    "condition": CONDITION, "diagnosis": CONDITION, "impression": CONDITION, "disease": CONDITION,
    "treatment": DRUG, "medication": DRUG, "drug": DRUG, "drugs": DRUG, "prescription": DRUG,
}
_PLACEHOLDER = re.compile(r"\[([^\]]*)\]")
_SENTENCE_BREAK = re.compile(r"[.!?]\s+")


@dataclass(frozen=True)
class Slot:
    """A typed slot of the form: its role and the words before it in its sentence ("Impression:")."""

    role: str
    label: str


@dataclass(frozen=True)
class Placement:
    """Where one topic's typed words go: ``lead`` (text the lead ends with, "nausea and chest pain"),
    ``phrases`` (each pulled slot phrase and its words), ``untyped`` (the words written as before) and
    ``lead_ends_bare`` (the lead ends on a slot label that no released word follows: "… reports")."""

    lead: str = ""
    lead_words: tuple[str, ...] = ()
    phrases: tuple[tuple[str, tuple[str, ...]], ...] = ()
    untyped: tuple[str, ...] = ()
    lead_ends_bare: bool = False

    @property
    def placed(self) -> tuple[str, ...]:
        """The words written in a pulled slot phrase (banned bare elsewhere)."""
        return tuple(w for _, words in self.phrases for w in words)

    @property
    def pull_words(self) -> tuple[str, ...]:
        """What the writer is pulled to write: the untyped words, the lead's words and the slot phrases."""
        return (*self.untyped, *self.lead_words, *(p for p, _ in self.phrases))

    def slot_lines(self, missing: Sequence[str]) -> list[str]:
        """The slot line of each phrase one of whose words is ``missing`` ("Impression: tusfosemia.")."""
        return [phrase + "." for phrase, words in self.phrases if any(w in missing for w in words)]


def form_slots(example: str) -> tuple[Slot, ...]:
    """The typed slots of a form's example, in order (none for a form without them)."""
    slots: list[Slot] = []
    end = 0
    for match in _PLACEHOLDER.finditer(example):
        role = SLOT_ROLES.get(match.group(1).strip().lower())
        before = example[end:match.start()]
        end = match.end()
        if role is None or any(s.role == role for s in slots):
            continue
        label = _SENTENCE_BREAK.split(before)[-1].strip(" ,;")
        if label:
            slots.append(Slot(role, label))
    return tuple(slots)


def slot_of_lead(slots: Sequence[Slot], lead: str) -> Slot | None:
    """The slot whose label the public lead ends on ("… reports"), if any."""
    return next((slot for slot in slots if lead.rstrip().endswith(slot.label)), None)


def lead_pool(words: Sequence[str], roles: Mapping[str, str | None], slots: Sequence[Slot], lead: str) -> tuple[str, ...]:
    """Those of ``words`` that would go to the lead's slot: its role's and the words of no role (none when the
    lead ends on no slot)."""
    slot = slot_of_lead(slots, lead)
    if slot is None:
        return ()
    return tuple(dict.fromkeys(w for w in words if roles.get(w) in (slot.role, None)))


def join_words(words: Sequence[str]) -> str:
    """"a", "a and b", "a, b and c"."""
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


PhraseJoiner = Callable[[str, Sequence[str]], list[str]]  # (lead, words) -> the words, pairs joined into phrases


def place(words: Sequence[str], roles: Mapping[str, str | None], slots: Sequence[Slot], lead: str,
          turn: int = 0, joiner: PhraseJoiner | None = None) -> Placement:
    """Where each of a topic's ``words`` goes, given their ``roles`` and the form's ``slots``; ``lead`` is the
    topic's public lead, whose last slot label (if it ends on one) takes that slot's words, joined into
    phrases by ``joiner`` when given ("metallic taste", ``lead_phrases.py``). ``turn`` (the document's index)
    rotates the lead's words, so that the many documents of one topic do not all open with the same list
    ("reports cough, fever and rash", "reports fever, rash and cough", …)."""
    if not slots:
        return Placement(untyped=tuple(words))
    by_role: dict[str, list[str]] = {}
    untyped: list[str] = []
    slot_roles = {s.role for s in slots}
    for w in words:
        role = roles.get(w)
        (by_role.setdefault(role, []) if role in slot_roles else untyped).append(w)
    lead_slot = slot_of_lead(slots, lead)
    lead_text, lead_words, phrases = "", (), []
    for slot in slots:
        chosen = list(by_role.get(slot.role, ()))
        if slot is lead_slot:  # the words of no role join the slot the lead ends on: "… reports cramps and brittle"
            chosen, untyped = chosen + untyped, []
        if not chosen:
            continue
        if slot is lead_slot:
            items = joiner(lead, chosen) if joiner is not None else chosen
            items = items[turn % len(items):] + items[: turn % len(items)]
            lead_text, lead_words = join_words(items), tuple(chosen)
        else:
            phrases.append((f"{slot.label} {join_words(chosen)}", tuple(chosen)))
    return Placement(lead_text, lead_words, tuple(phrases), tuple(untyped),
                     lead_ends_bare=lead_slot is not None and not lead_text)
