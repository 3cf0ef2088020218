"""Each released word's role, where public knowledge has one (docs/method.md §2.4c): post-processing.

A released word (a topic's word or co-keyword) is a **condition**, a **drug** (a treatment) or a **symptom**
when a public source says so, and has no role otherwise. The sources, first that knows the word wins:

1. **Typed public lists** the run spec names: the shipped ICD-10-CM list (``domain_lists = ["icd10-cm"]``)
   is of conditions, except its entries that come only from chapter R ("Symptoms, signs and abnormal
   clinical and laboratory findings": ``cough``, ``nausea``, ``chest pain``), which are symptoms
   (``icd10-cm.symptoms.txt``, built with it); a custodian's own list may type its entries with
   ``# role: condition`` / ``drug`` / ``symptom`` lines (each applies to the entries after it).
2. **Dosage forms**: a phrase holding a dosage-form word ("… ointment", "… sachets", "… inhaler") is a
   treatment, so a drug.
3. **Public morphology**, on the phrase's last word, for words that are **not** among the 30,000 commonest
   English words (``english.txt``: there "diagnosis", "academia", "aroma", "april", "tourism" would match):
   WHO INN stems of drugs (``DRUG_STEMS``: -cillin, -pril, -olol, -statin, -zole, -mab, -vir, -tinib, …)
   and the condition suffixes of medical Greek and Latin (``CONDITION_SUFFIXES``: -itis, -osis, -emia,
   -algia, -opathy, -oma, -iasis, …).

Nothing here reads a private document: the released words, public lists and fixed suffix tables only.
A word with no role is written as before (no slot is forced on it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from core.paths import resources_dir

CONDITION, DRUG, SYMPTOM = "condition", "drug", "symptom"
ROLES = (SYMPTOM, CONDITION, DRUG)

# WHO INN stems (WHO, "The use of stems in the selection of International Nonproprietary Names for
# pharmaceutical substances", 2018 and later), as word endings; "-dine" covers -idine / -tidine / -dipine-like.
DRUG_STEMS = (
    "cillin", "pril", "sartan", "olol", "alol", "dipine", "statin", "azole", "zole", "prazole", "mab", "vir",
    "tinib", "dine", "oxacin", "mycin", "cycline", "caine", "parin", "profen", "fenac", "triptan", "setron",
    "lukast", "semide", "thiazide", "gliptin", "gliflozin", "afil", "azepam", "oxetine", "pramine", "peridol",
    "dronate", "terol", "sonide", "asone", "olone", "conazole", "navir", "ciclovir", "micin", "peridone",
    "triptyline", "azepine", "formin",
)
# Medical suffixes that name a condition (inflammation, state, blood condition, pain, disease, tumour, ...).
CONDITION_SUFFIXES = (
    "itis", "osis", "emia", "aemia", "algia", "opathy", "pathy", "oma", "iasis", "ism", "plegia", "penia",
    "megaly", "rrhea", "rrhoea", "ectasis", "oses",
)
# Dosage forms: a phrase holding one names a treatment.
DOSAGE_FORMS = frozenset({
    "ointment", "ointments", "cream", "creams", "tablet", "tablets", "capsule", "capsules", "sachet", "sachets",
    "drops", "inhaler", "inhalers", "injection", "injections", "syrup", "gel", "lotion", "patch", "patches",
    "spray", "suppository", "suppositories", "pessary", "pessaries", "lozenge", "lozenges", "infusion",
})
ROLE_LINE = re.compile(r"^#\s*role\s*:\s*(\w+)\s*$", re.IGNORECASE)
SHIPPED_TYPED = {"icd10-cm": (("icd10-cm.txt", CONDITION), ("icd10-cm.symptoms.txt", SYMPTOM))}


@dataclass(frozen=True)
class RoleSources:
    """The public knowledge roles are read from: typed entries (word -> role) and the common English words."""

    typed: Mapping[str, str]
    english: frozenset[str]

    @classmethod
    def of(cls, domain_lists: Sequence[str] = ()) -> "RoleSources":
        """The typed entries of the run spec's public ``domain_lists`` (shipped names or paths)."""
        typed: dict[str, str] = {}
        for name in domain_lists:
            typed.update(typed_entries(name))
        return cls(typed, frozenset(_lines(resources_dir() / "vocab" / "english.txt")))


def _lines(path: Path) -> list[str]:
    return [x.strip().lower() for x in path.read_text(encoding="utf-8").splitlines() if x.strip() and not x.startswith("#")]


def typed_entries(name: str) -> dict[str, str]:
    """A public list's typed entries: the shipped ICD-10-CM list's (conditions; chapter R: symptoms), or a
    file's entries after a ``# role: …`` line (an untyped list gives none)."""
    vocab = resources_dir() / "vocab"
    if name in SHIPPED_TYPED:
        out: dict[str, str] = {}
        for file, role in SHIPPED_TYPED[name]:
            out.update((w, role) for w in _lines(vocab / file))
        return out
    path = Path(name)
    if not path.is_file():
        return {}
    out, role = {}, None
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        found = ROLE_LINE.match(line)
        if found:
            role = found.group(1).lower() if found.group(1).lower() in ROLES else None
        elif line and not line.startswith("#") and role:
            out[line.lower()] = role
    return out


def morphology_role(word: str, english: frozenset[str] = frozenset()) -> str | None:
    """The role public morphology gives a word or phrase: a dosage form anywhere makes a drug; else the last
    word's INN stem (drug) or condition suffix, when that word is no common English word."""
    words = re.findall(r"[^\W\d_]+", word.lower())
    if not words:
        return None
    if any(w in DOSAGE_FORMS for w in words):
        return DRUG
    head = words[-1]
    if head in english or len(head) < 6:
        return None
    if head.endswith(DRUG_STEMS):
        return DRUG
    if head.endswith(CONDITION_SUFFIXES):
        return CONDITION
    return None


def role_of(word: str, sources: RoleSources) -> str | None:
    """A released word's role: a typed list's, else morphology's (None: no public source knows it)."""
    return sources.typed.get(word.lower()) or morphology_role(word, sources.english)


def assign_roles(words: Sequence[str], sources: RoleSources) -> dict[str, str | None]:
    """Each released word's role (None when no public source knows it)."""
    return {w: role_of(w, sources) for w in words}
