"""Which document form the public writer follows when the custodian picks none: a public rule on the task's words.

Round 3 measured the writer with no example of the form ("a plain document") worst of all: on 200 clinic notes
it kept 5 documents, three of them only "Key terms: …". So ``[dp_synrag] document_form = ""`` (the
default) no longer means "no example": it means *choose a shipped form by this rule*, and ``"none"`` asks for
the plain document explicitly. The rule reads only the task the custodian typed (public text): the first
form, in the order of ``FORM_RULES``, one of whose stems appears in it; a task that names none gets the case
file, the most general of the shipped forms (a dated record about one person or matter). ``privet plan`` and
the wizard's Task page say which form was chosen and why; the certificate records the form that ran.
"""

from __future__ import annotations

import copy
import re

from core.runspec import DOCUMENT_FORMS, RunSpec

AUTOMATIC = ""  # document_form: choose by FORM_RULES from the task's words
NO_FORM = "none"  # document_form: no example of the form (a plain document; measured worst)
FALLBACK_FORM = "case_file"

# (form, word stems). Order matters: films before reviews ("film reviews" are ratings of films).
FORM_RULES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("film_ratings", ("film", "movie", "cinema", "watched")),
    ("review", ("review", "product", "customer", "purchase", "bought", "rating", "rated", "stars")),
    ("news_article", ("news", "article", "headline", "journalis", "reporter", "press")),
    ("clinical_note", ("patient", "clinic", "diagnos", "symptom", "medical", "doctor", "nurse", "hospital",
                       "disease", "treatment", "health", "medication", "consultation")),
    ("case_file", ("case", "client", "caseworker", "social work", "beneficiar", "legal", "household", "refugee")),
)

FORM_LABELS = {
    AUTOMATIC: "Chosen from the task's words (automatic)",
    "clinical_note": "Clinical note (shipped example)",
    "case_file": "Case file (shipped example)",
    "review": "Product review (shipped example)",
    "news_article": "News article (shipped example)",
    "film_ratings": "A person's film ratings (shipped example)",
    NO_FORM: "No example (a plain document; measured worst)",
}


def form_for_task(task: str) -> tuple[str, str]:
    """The shipped form the rule picks for ``task`` and why, in words (e.g. "the task mentions 'patient'")."""
    words = task.casefold()
    for form, stems in FORM_RULES:
        for stem in stems:
            if re.search(r"\b" + re.escape(stem), words):
                return form, f"the task mentions '{stem}'"
    return FALLBACK_FORM, "the task names no kind of document Privet knows, so the most general form is used"


def with_chosen_form(spec: RunSpec) -> RunSpec:
    """``spec`` with ``document_form`` chosen by the rule when it is automatic and no example was typed (a copy;
    ``spec`` itself is unchanged). ``"none"`` stays a plain document; any other value is kept."""
    p = spec.dp_synrag
    if p.document_form != AUTOMATIC or p.public_example.strip() or not p.realisation:
        return spec
    chosen = copy.deepcopy(spec)
    chosen.dp_synrag.document_form = form_for_task(spec.task)[0]
    return chosen


def form_choice_words(spec: RunSpec) -> str:
    """One line for `privet plan` and the Task page: the form the writer follows and why."""
    p = spec.dp_synrag
    if not p.realisation:
        return ""
    if p.public_example.strip():
        return "Document form: the custodian's own invented example."
    if p.document_form == NO_FORM:
        return "Document form: none (a plain document), as the run spec asks; this measured worst."
    if p.document_form in DOCUMENT_FORMS:
        return f"Document form: {FORM_LABELS[p.document_form]}, as the run spec asks."
    form, why = form_for_task(spec.task)
    return (f"Document form: {FORM_LABELS[form]}, chosen because {why} (set [dp_synrag] document_form, or pick one "
            "on the Task page, to choose another).")
