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
4. **The public model, asked** (:func:`asked_roles`), for a word none of the above knows ("ibuprofen",
   "leisomafen", "tremors"): a fixed few-shot prompt ("lisinopril: drug / appendicitis: disease /
   headache: symptom / husband: other / …", ``ASK_EXAMPLES``) ends with the word, and the model's
   next-token log-probabilities of the four answers are compared. The word takes the answer's role only
   when that answer beats every other one by ``ASK_MARGIN`` nats and is a drug or a symptom
   (``ASK_TRUSTED``); "disease", "other" or a close call leaves it untyped.

Nothing here reads a private document: the released words, public lists, fixed suffix tables and the public
model with a fixed prompt only.
A word with no role is written as before (no slot is forced on it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Mapping, Sequence

import torch

from core.models.base import LanguageModel
from core.common.paths import resources_dir

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
# The public model's few-shot examples (real words, none of them a demo word) and its answers; a word takes
# the role of an answer that beats every other answer by ASK_MARGIN nats (bench/roles.py measures the rule).
ASK_EXAMPLES: tuple[tuple[str, str | None], ...] = (
    ("lisinopril", DRUG), ("appendicitis", CONDITION), ("headache", SYMPTOM), ("husband", None),
    ("vaccine", DRUG), ("cholera", CONDITION), ("wheezing", SYMPTOM), ("twice", None),
    ("salbutamol inhaler", DRUG), ("rickets", CONDITION), ("swollen feet", SYMPTOM), ("right elbow", None),
)
ASK_ANSWERS: Mapping[str | None, str] = {DRUG: "drug", CONDITION: "disease", SYMPTOM: "symptom", None: "other"}
ASK_HEADER = "Words from clinical notes and their type (drug, disease, symptom or other).\n"
ASK_MARGIN = 1.0
# The answers taken. "disease" is not: the small model calls signs and symptoms diseases (bench/roles.py: 113 of
# ICD-10-CM's 218 untyped chapter-R entries; "insomnia", "cramps", "ankles"), while it answered "drug" for 9 of
# 535 words that are no drug and "symptom" for none of 305 that are no symptom.
ASK_TRUSTED = frozenset({DRUG, SYMPTOM})
ASK_BATCH = 32
ROLE_LINE = re.compile(r"^#\s*role\s*:\s*(\w+)\s*$", re.IGNORECASE)
SHIPPED_TYPED = {"icd10-cm": (("icd10-cm.txt", CONDITION), ("icd10-cm.symptoms.txt", SYMPTOM))}


@dataclass(frozen=True)
class RoleSources:
    """The public knowledge roles are read from: typed entries (word -> role) and the common English words."""

    typed: Mapping[str, str]
    english: frozenset[str]
    asked: Mapping[str, str] = field(default_factory=dict)  # the public model's clear answers (asked_roles)

    @classmethod
    def of(cls, domain_lists: Sequence[str] = ()) -> "RoleSources":
        """The typed entries of the run spec's public ``domain_lists`` (shipped names or paths)."""
        typed: dict[str, str] = {}
        for name in domain_lists:
            typed.update(typed_entries(name))
        return cls(typed, frozenset(_lines(resources_dir() / "vocab" / "english.txt")))

    def asking(self, llm: LanguageModel, words: Sequence[str]) -> "RoleSources":
        """These sources plus the public model's answer for each of ``words`` that no other source types."""
        unknown = [w for w in dict.fromkeys(words) if role_of(w, self) is None]
        return replace(self, asked={**self.asked, **asked_roles(llm, unknown)}) if unknown else self


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
    """A released word's role: a typed list's, else morphology's, else the public model's clear answer
    (None: no public source knows it)."""
    return sources.typed.get(word.lower()) or morphology_role(word, sources.english) or sources.asked.get(word)


def asked_roles(llm: LanguageModel, words: Sequence[str]) -> dict[str, str]:
    """The role the public model gives each word (source 4 above), where its answer is clear and is one the
    model is trusted with (``ASK_TRUSTED``)."""
    return {w: r for w, r in clear_answers(llm, words).items() if r in ASK_TRUSTED}


def clear_answers(llm: LanguageModel, words: Sequence[str]) -> dict[str, str]:
    """The model's clear answer for each word, any role: a word it answers "other", or by less than
    ``ASK_MARGIN`` nats, is left out. None at all when the model's tokenizer does not tell the four
    answers apart by their first token."""
    tokenizer = llm.chat.tokenizer
    answers = [tokenizer.encode(" " + a, add_special_tokens=False)[:1] for a in ASK_ANSWERS.values()]
    if any(not a for a in answers) or len({a[0] for a in answers}) < len(answers):
        return {}
    roles = list(ASK_ANSWERS)
    picks = torch.tensor([a[0] for a in answers])
    shots = "".join(f"{w}: {ASK_ANSWERS[r]}\n" for w, r in ASK_EXAMPLES)
    head = tokenizer.encode(ASK_HEADER + shots, add_special_tokens=False)
    out: dict[str, str] = {}
    for start in range(0, len(words), ASK_BATCH):
        chunk = list(words[start : start + ASK_BATCH])
        prompts = [head + tokenizer.encode(f"{w}:", add_special_tokens=False) for w in chunk]
        with torch.inference_mode():
            logp = torch.log_softmax(llm.start_logits(prompts, shared_prefix=len(head)).logits().float().cpu(), -1)
        for word, row in zip(chunk, logp[:, picks]):
            best, second = torch.topk(row, 2).values.tolist()
            role = roles[int(row.argmax())]
            if role is not None and best - second >= ASK_MARGIN:
                out[word] = role
    return out


def assign_roles(words: Sequence[str], sources: RoleSources) -> dict[str, str | None]:
    """Each released word's role (None when no public source knows it)."""
    return {w: role_of(w, sources) for w in words}
