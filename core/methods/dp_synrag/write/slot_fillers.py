"""What fills a slot of a released form (docs/method.md §2.6b): a ``[number]``'s plausible values from the form's
wording around it, a ``[text]`` slot's role from the wording before it, and the topic's released words of that
role. Public rules on the released form's words and on released words only: post-processing, no cost."""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Container, Mapping, Sequence

from core.methods.dp_synrag.write.content_terms import MONTH, english_words, public_terms
from core.methods.dp_synrag.write.roles import CONDITION, DRUG, SYMPTOM, RoleSources, assign_roles
from core.models.base import LanguageModel

# Words before a ``[text]`` slot that say which role its filler has (public: the released form's own wording). The
# slot is then written as the topic's released words of that role, when it has some (docs/method.md §2.6b).
SLOT_CUES = (
    (CONDITION, ("diagnos", "assessment", "impression", "consistent with", "condition", "suspected", "problem",
                 "confirmed", "cause", "due to", "known", "dx", "possible", "probable", "likely", "?")),
    (DRUG, ("prescri", "start", "treat", "medic", "meds", "rx", "take", "given", "therapy", "drug", "dose",
            "continue", "plan")),
    (SYMPTOM, ("symptom", "complain", "report", "present", "has had", "suffer", "experienc", "because of",
               "reason", "concern", "with", "cc", "c/o")),
)

CUE_CHARS = 40  # how far back the cue words are read

# A word of the calendar or the clock is no symptom, typed or not ("Presented with: november, day"): public.
_TIME_WORD = re.compile(rf"(?:{MONTH}|monday|tuesday|wednesday|thursday|friday|saturday|sunday|today|yesterday|tomorrow"
                        r"|daily|weekly|morning|evening|night|tonight|(?:day|week|wk|month|year|yr|hour|hr|minute|min)s?)$",
                        re.I)

YEARS = tuple(range(2019, 2026))

# Numbers a form's wording says the kind of (public rules on the released form's words; anything else is the
# writer's own digits): (pattern on the wording before, pattern on the wording after, choices).
_DOSES = (5, 10, 20, 25, 40, 50, 100, 200, 250, 500)

MONTH_NUMBERS = tuple(range(1, 13))  # a numeric date's middle part: its month (the writer keeps dates in order)

NUMBER_RULES: tuple[tuple[re.Pattern[str], re.Pattern[str], Sequence[int | str]], ...] = (
    (re.compile(r"$"), re.compile(r"^\s*(mg|mcg|µg|ml|g|units?|iu)\b", re.I), _DOSES),
    (re.compile(r"$"), re.compile(r"^[\s-]*(years?[\s-]*old|y/?o|yrs?|y\b)", re.I), tuple(range(18, 91))),
    (re.compile(r"\b(age|aged)\W*$", re.I), re.compile(r""), tuple(range(18, 91))),
    (re.compile(r"\($"), re.compile(r"^\s*,?\s*(male|female|man|woman|m|f)\b", re.I), tuple(range(18, 91))),  # "(67, male)"
    (re.compile(r"$"), re.compile(r"^\s*(weeks?|days?|months?|hours?|wks?|hrs?)\b", re.I), tuple(range(2, 13))),
    (re.compile(r"\b(bp|blood pressure)\W*$", re.I), re.compile(r""), tuple(range(100, 171))),
    (re.compile(r"(\bpulse|\bhr|heart rate|\bbpm)(\s+of)?\W*$", re.I), re.compile(r""), tuple(range(55, 121))),
    (re.compile(r"\b(temp|temperature|t)\W*$", re.I), re.compile(r""), tuple(range(36, 40))),
    (re.compile(r"\b(cat|category|level|triage category|priority)\W*$", re.I), re.compile(r""), tuple(range(1, 6))),
    (re.compile(r"(spo|sat|sats|saturation)\W*$", re.I), re.compile(r"^\s*%"), tuple(range(90, 101))),
    (re.compile(r"$"), re.compile(r"^\s*%"), tuple(range(5, 96))),
    (re.compile(r"^[/-]$"), re.compile(r"^[/-]$"), MONTH_NUMBERS),  # a date's middle part
    (re.compile(r"^[/-]$"), re.compile(r""), YEARS),  # a date's last part
    (re.compile(r""), re.compile(r"^[/-]$"), tuple(range(1, 29))),  # a date's first part
)

HOURS = tuple(range(24))

MINUTES = tuple(f"{m:02d}" for m in range(60))

DAYS = tuple(range(1, 29))


def number_choices(before: str, after: str) -> Sequence[int | str]:
    """The plausible values of a ``[number]`` slot from the form's wording around it (public), or () for the writer."""
    for left, right, choices in NUMBER_RULES:
        if left.search(before[-30:]) and right.search(after[:30]):
            return choices
    return ()


def released_roles(llm: LanguageModel, words: Sequence[str], domain_lists: Sequence[str] = ()) -> dict[str, str | None]:
    """Each released word's public role (typed lists, morphology, the public model asked): ``roles.py``."""
    return assign_roles(words, RoleSources.of(domain_lists).asking(llm, words))

_DOSE_AFTER = re.compile(r"^\s*(mg|mcg|µg|ml|g|units?|iu)\b", re.I)


def slot_role(before: str, dose_after: bool = False) -> str | None:
    """The role of a ``[text]`` slot from the fixed wording just before it ("Presenting symptoms were" → symptom); a
    slot followed by a dose ("[text] [number] mg") is a drug's."""
    if dose_after:
        return DRUG
    tail = before.lower()[-CUE_CHARS:]
    if re.search(r"\b(confirmed|supported|shown) by\W*$", tail):
        return None  # "confirmed by [text]": a test, not the condition
    found = [(tail.rfind(stem) + len(stem), len(stem), role) for role, stems in SLOT_CUES for stem in stems
             if stem in tail]
    return max(found)[2] if found else None  # the cue nearest the slot; of two ending there, the longer


Picker = Callable[[list[str]], list[str]]
LISTED_SYMPTOMS = (3, 5)  # how many symptoms a note lists, at most as many as its topic's released ones


def first_symptoms(symptoms: list[str]) -> list[str]:
    """The first three, in their released order (a writer passes :func:`some_symptoms` instead)."""
    return symptoms[: LISTED_SYMPTOMS[0]]


def some_symptoms(rng: random.Random) -> Picker:
    """A draw of a note's symptoms among its topic's: between three and five of them (all of them when it has fewer),
    in a random order, as each patient reports some of what the condition causes. Public: the released words and the
    writer's own randomness."""
    def pick(symptoms: list[str]) -> list[str]:
        low, high = (min(n, len(symptoms)) for n in LISTED_SYMPTOMS)
        return rng.sample(symptoms, rng.randint(low, high))
    return pick


def role_filler(role: str | None, words: Sequence[str], roles: Mapping[str, str | None], topic: str,
                form_words: str = "", pick: Picker = first_symptoms) -> str:
    """The words a typed slot is written with: the topic's released words of its role, the topic's own word for a
    condition slot when no word is typed as one; for a symptom slot the words typed as a symptom or untyped (a clinical
    form's untyped released words are mostly what patients report) that ``pick`` chooses, joined with commas and
    "and", leaving out the topic's own word, the form's own words (``form_words``: "triage" in "Triage category:",
    "diagnosis" in "Working diagnosis of") and words of time ("november", "day"); "" when none."""
    if role is None:
        return ""
    if role == SYMPTOM:
        fixed = form_words.lower()
        return listed(pick([w for w in words if roles.get(w) in (None, SYMPTOM) and w != topic
                            and not _TIME_WORD.match(w) and not re.search(rf"\b{re.escape(w.lower())}\b", fixed)]))
    typed = [w for w in words if roles.get(w) == role]
    if role == CONDITION and not typed:  # the topic's own word stands for what the form names there, unless typed
        typed = [topic] if roles.get(topic) == CONDITION or (roles.get(topic) is None and named(topic)) else []
    return typed[0] if typed else ""  # as another role ("Final diagnosis: <drug>") or common English ("tightness")


def named(word: str) -> bool:
    """Whether an untyped released word may name a condition: a public condition name, or not every word of it common
    English ("lounthounosis", not "tightness" or "mouth", halves of the symptoms "chest tightness", "mouth ulcers"),
    and no test's name ("ecg" of "ECG confirmed …": what confirmed the diagnosis, not the diagnosis)."""
    if word in public_terms():
        return True
    return not all(w in english_words() for w in word.split()) and not any(w in TESTS for w in word.split())


# The names of common tests and investigations (public): a note's "[test] confirmed [condition]" releases them as words.
TESTS = frozenset(("ecg", "ekg", "eeg", "emg", "mri", "ct", "pet", "x-ray", "xray", "cxr", "swab", "swabs", "biopsy",
                   "ultrasound", "usg", "echo", "echocardiogram", "urinalysis", "spirometry", "endoscopy",
                   "colonoscopy", "angiogram", "angiography", "fbc", "cbc", "crp", "esr", "lft", "lfts", "troponin",
                   "hba1c", "inr", "abg", "culture", "cultures", "serology", "pcr"))


def listed(words: Sequence[str]) -> str:
    """"a", "a and b", "a, b and c"; "" for none."""
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1] if words else ""


def complaint_filler(words: Sequence[str], roles: Mapping[str, str | None], topic: str, form_words: str,
                     pick: Picker = first_symptoms) -> str:
    """The words of a form's complaint slot (:func:`symptom_slot`): a symptom slot's (:func:`role_filler`); "" unless
    a released word of the run is typed as a symptom (``roles``: the run's words; a clinical corpus, whether or not
    this document's sampled words hold one)."""
    return role_filler(SYMPTOM, words, roles, topic, form_words, pick) if SYMPTOM in roles.values() else ""


SUBJECTS = ("He", "She", "They", "We", "I")  # a sentence's subject where its wording goes on without it: a person (public)
VERBS = frozenset(("is", "was", "are", "were", "has", "had", "have", "will", "would", "can", "could", "should", "may",
                   "must", "does", "did", "reports", "presents", "complains", "returns", "remains", "lives", "takes",
                   "says", "feels", "needs", "went", "came", "left"))


def subject_slot(pieces: Sequence[tuple[str, str]], at: int) -> bool:
    """Whether the ``at``-th of a skeleton's (kind, text) pieces is a ``[text]`` slot that opens a sentence whose released
    wording goes on with a verb (``VERBS``, or a word ending in -es: "[text] leaves hospital on"; not "[text] diagnosis
    of", "[text] confirmed"): its subject, one word of ``SUBJECTS`` ("He", "She")."""
    before, after = (pieces[k] if 0 <= k < len(pieces) else ("", "") for k in (at - 1, at + 1))
    verb = re.match(r" ?([a-z]+)\b", after[1]) if after[0] == "fixed" else None
    return (before[0] == "fixed" and before[1].rstrip()[-1:] in ".!?" and verb is not None
            and (verb[1] in VERBS or (len(verb[1]) >= 5 and verb[1].endswith("es"))))


def symptom_slot(pieces: Sequence[tuple[str, str]], closed: Container[int] = ()) -> int:
    """Which ``[text]`` slot (its place among the form's text slots) holds the topic's symptoms when the form's own
    wording for them was not released (docs/method.md §2.6b), or -1. ``pieces``: the skeleton's (kind, text) pieces.

    A template's complaint clause often loses its lead to a slot ("[name], [number], [text]." for "…, 39, was
    referred because of A, B and C."): the writer's own words there are fiction, and the document then names its
    condition without what the patient reported. So a form with no symptom slot gives that role to a slot that is a
    clause of its own: it follows a comma, a sentence's end or "and" (or opens the form), its wording before names no
    role, it is followed by the end of a sentence, and its released values are no closed list (``closed``: "female").
    Of several, the last before the form's condition slot (a note states the complaint just before its assessment:
    "Follow-up note for [name], [text]. [text]. Working diagnosis of [text]." is "…, aged 30. Complains of …"),
    else the first after it."""
    slots = [(i, j) for j, i in enumerate(i for i, (kind, _) in enumerate(pieces) if kind == "text")]
    fixed = lambda k: pieces[k][1] if 0 <= k < len(pieces) and pieces[k][0] == "fixed" else None  # noqa: E731
    if any(slot_role(fixed(i - 1) or "") == SYMPTOM for i, _ in slots):
        return -1
    before_condition, after_condition, assessed = -1, -1, False
    for i, j in slots:
        before, after = fixed(i - 1), fixed(i + 1)
        assessed = assessed or slot_role(before or "") == CONDITION
        opens = before.rstrip()[-1:] in (",", ".", ";") or before.endswith(" and ") if before is not None else i == 0
        if opens and slot_role(before or "") is None and (after or "").lstrip()[:1] in (".", ";") and j not in closed:
            if not assessed:
                before_condition = j
            elif after_condition < 0:
                after_condition = j
    return before_condition if before_condition >= 0 else after_condition
    for i, j in slots:
        before, after = fixed(i - 1), fixed(i + 1)
        opens = before.rstrip()[-1:] in (",", ".", ";") or before.endswith(" and ") if before is not None else i == 0
        if opens and slot_role(before or "") is None and (after or "").lstrip()[:1] in (".", ";") and j not in closed:
            return j
    return -1
