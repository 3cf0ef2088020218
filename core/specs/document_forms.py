"""The document form, in one place: the shipped forms' names and labels, the public rule that picks one when the
custodian picks none, and the example a run shows (the custodian's own, or the shipped one).

Shared by the methods that read a document form (DP-SynRAG's public writer, DP-Synth's self-filter) and the run
spec's rules; choosing a form from a run's released data is DP-SynRAG's own (``core/methods/dp_synrag/shape/``),
as are the shipped forms' demonstrations (``<form>.demo.toml``). Round 3
measured DP-SynRAG's writer with no example of the form ("a plain document") worst of all: on 200 clinic notes it
kept 5 documents, three of them only "Key terms: …". So ``document_form = ""`` (the default) does not mean "no
example": it means *choose a shipped form by this rule*, and ``"none"`` asks for the plain document explicitly.
The rule reads only public words: the task the custodian typed, then the names of the columns she chose (the
file's schema, never its text). The first form, in the order of ``FORM_RULES``, one of whose stems appears in the
task; else in the column names (a clinic's file whose person column is "patient" gets the clinical note even when
the wizard's default task names no kind of document: the case file wrote a clinic's notes as social-work case
files); else the case file, the most general of the shipped forms (a dated record about one person or matter).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from core.common.errors import PrivetError
from core.common.paths import resources_dir

# The shipped forms: resources/examples/<form>.txt (an invented example) and <form>.demo.toml (demonstrations)
DOCUMENT_FORMS = ("clinical_note", "case_file", "review", "news_article", "film_ratings")
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
    AUTOMATIC: "Automatic: the corpus's own forms, released with DP (else one chosen from the task's words)",
    "clinical_note": "Clinical note (shipped example)",
    "case_file": "Case file (shipped example)",
    "review": "Product review (shipped example)",
    "news_article": "News article (shipped example)",
    "film_ratings": "A person's film ratings (shipped example)",
    NO_FORM: "No example (a plain document; measured worst)",
}


def _named_form(text: str) -> tuple[str, str] | None:
    """The first form of FORM_RULES one of whose stems begins a word of ``text``, and that stem."""
    words = text.casefold().replace("_", " ")
    for form, stems in FORM_RULES:
        for stem in stems:
            if re.search(r"\b" + re.escape(stem), words):
                return form, stem
    return None


def form_for_task(task: str, columns: Sequence[str] = ()) -> tuple[str, str]:
    """The shipped form the rule picks for ``task`` (else for the chosen ``columns``' names) and why, in words
    (e.g. "the task mentions 'patient'")."""
    named = _named_form(task)
    if named is not None:
        return named[0], f"the task mentions '{named[1]}'"
    named = _named_form(" ".join(columns))
    if named is not None:
        return named[0], f"the task names no kind of document, and the column names mention '{named[1]}'"
    return FALLBACK_FORM, "the task names no kind of document Privet knows, so the most general form is used"


def reference_form(document_form: str, example: str, task: str, columns: Sequence[str] = ()) -> str:
    """The form a run follows: ``document_form`` as stated, else (automatic, no example typed) the rule's choice
    for ``task`` and ``columns``. With an example typed the example is the form, whatever this returns."""
    if document_form != AUTOMATIC or example.strip():
        return document_form
    return form_for_task(task, columns)[0]


def form_words(document_form: str, example: str, task: str, section: str, columns: Sequence[str] = ()) -> str:
    """One line for ``privet plan`` and the Task page: the form followed and why (``section``: where it is set)."""
    if example.strip():
        return "Document form: the custodian's own invented example."
    if document_form == NO_FORM:
        return "Document form: none (a plain document), as the run spec asks; this measured worst."
    if document_form != AUTOMATIC:
        return f"Document form: {FORM_LABELS[document_form]}, as the run spec asks."
    form, why = form_for_task(task, columns)
    return (f"Document form: {FORM_LABELS[form]}, chosen because {why} (set [{section}] document_form, or pick one "
            "on the Task page, to choose another).")


def shipped_example(form: str) -> str:
    """The shipped invented example of ``form`` (one of DOCUMENT_FORMS)."""
    if form not in DOCUMENT_FORMS:
        raise PrivetError(f"Unknown document form {form!r}.",
                          f"Choose one of: {', '.join(DOCUMENT_FORMS)}, or type an example.")
    return (resources_dir() / "examples" / f"{form}.txt").read_text(encoding="utf-8").strip()


def public_example(document_form: str, example: str) -> str:
    """The example a run shows: the custodian's own text if given, else the shipped form ("" = none)."""
    if example.strip():
        return example.strip()
    return shipped_example(document_form) if document_form and document_form != NO_FORM else ""
