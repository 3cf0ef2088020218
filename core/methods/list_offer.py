"""Public word lists offered when they fit (issue 56 item 3): the ICD-10-CM list for clinical text.

Whether a shipped public list fits is decided from **public words only**: the task description and the column
names the custodian chose or typed (text, id, person and label columns, and a label set she typed). The private
text is never read for it. When those words point to clinical text, the wizard ticks the ICD-10-CM list (the
officer can untick it) and ``privet plan`` says that it fits. A public list costs no privacy budget: it is
published, not drawn from the data, and adding it to the topic vocabulary is a public choice (docs/method.md §2.0).
Shared by the methods that find topic names (DP-SynRAG's ``[dp_synrag] domain_lists``), read through their facts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from core.specs.runspec import RunSpec

ICD10_CM = "icd10-cm"
FREE_WORDS = "A public word list costs no privacy budget: it is published, not read from your data."
# Words (or their beginnings) that say a collection is clinical. Matched on whole words of the public words above,
# a word matching when it equals an entry or starts with an entry ending in '*'.
CLINICAL_WORDS = (
    "patient*", "clinic*", "medic*", "hospital*", "diagnos*", "physician*", "doctor*", "nurse", "nurses", "nursing",
    "discharge*", "admission*", "symptom*", "disease*", "prescri*", "triage*", "ehr", "emr", "icd", "mrn",
    "health*", "healthcare", "consultation*", "surgery", "surgical", "radiolog*", "patholog*", "oncolog*",
    "cardiolog*", "psychiatr*", "gp", "outpatient*", "inpatient*", "therap*", "illness*",
)
_WORD = re.compile(r"[a-z]+")


@dataclass(frozen=True)
class ListOffer:
    """A shipped public list that fits, and the public words that say so."""

    name: str
    because: tuple[str, ...]  # the public words that pointed to it, in the order found

    def words(self) -> str:
        """One line: why the list is offered, and why it is free."""
        found = ", ".join(f"“{w}”" for w in self.because[:3])
        return (f"ICD-10-CM offered: the task or the column names mention {found}, so the text looks clinical. "
                f"{FREE_WORDS}")


def _clinical(word: str) -> bool:
    return any(word.startswith(entry[:-1]) if entry.endswith("*") else word == entry for entry in CLINICAL_WORDS)


def offered_lists(public_texts: Iterable[str]) -> list[ListOffer]:
    """The shipped lists that fit these public words (the task, the column names): ICD-10-CM when they point to
    clinical text. Never pass private text."""
    found: list[str] = []
    for text in public_texts:
        for word in _WORD.findall((text or "").lower().replace("_", " ")):
            if _clinical(word) and word not in found:
                found.append(word)
    return [ListOffer(ICD10_CM, tuple(found))] if found else []


def public_words(spec: RunSpec, task: str | None = None) -> list[str]:
    """The public words a spec holds that may decide an offer: the task (``task`` when the wizard's field is being
    edited), the chosen column names and a typed label set. Never the file's text."""
    return [spec.task if task is None else task, *spec.data.column_names(), *spec.data.labels]


def plan_offer_lines(spec: RunSpec) -> list[str]:
    """What `privet plan` says about the public lists that fit this spec ([] when none fits, or when the method
    finds no topic names: its facts, ``core.specs.method_catalogue``)."""
    from core.specs import method_catalogue

    facts = method_catalogue.facts(spec.method)
    if not facts.wizard.topic_names:
        return []
    chosen = facts.wizard_values(spec).domain_lists
    lines = []
    for offer in offered_lists(public_words(spec)):
        if offer.name in chosen:
            lines.append(f"Public word list: {offer.name} is used ({FREE_WORDS})")
        else:
            because = ", ".join(f"'{w}'" for w in offer.because[:3])
            lines.append(f"Public word list: {offer.name} fits this task (the task or the column names mention "
                         f"{because}). {FREE_WORDS} To use it, add domain_lists = [\"{offer.name}\"] under "
                         "[dp_synrag].")
    return lines
