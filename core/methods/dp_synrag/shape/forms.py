"""Which document form the public writer follows when the custodian picks none: a public rule on the task's words
(the rule itself is shared, in ``core.specs.document_forms``; here, DP-SynRAG's ``[dp_synrag]`` reads it).

Round 3 measured the writer with no example of the form ("a plain document") worst of all: on 200 clinic notes
it kept 5 documents, three of them only "Key terms: …". So ``[document] document_form = ""`` (the
default) no longer means "no example": it means *choose a shipped form by this rule*, and ``"none"`` asks for
the plain document explicitly. The rule reads only public words: the task the custodian typed, then the names
of the columns she chose; when neither names a kind of document, the case file, the most general of the shipped
forms (a dated record about one person or matter). ``privet plan`` and
the wizard's Task page say which form was chosen and why; the certificate records the form that ran.
"""

from __future__ import annotations

import copy

from core.specs.document_forms import AUTOMATIC, FORM_LABELS, form_for_task, form_words
from core.specs.runspec import RunSpec

__all__ = ["form_choice_words", "with_chosen_form"]


def with_chosen_form(spec: RunSpec) -> RunSpec:
    """``spec`` with ``document_form`` chosen by the rule when it is automatic and no example was typed (a copy;
    ``spec`` itself is unchanged). ``"none"`` stays a plain document; any other value is kept."""
    p, form = spec.dp_synrag, spec.document
    if p.form_by_rule or form.document_form != AUTOMATIC or form.public_example.strip() or not p.realisation:
        return spec  # chosen already, or by hand (then no structure discovery: ``DPSynRAGSpec.discovers_forms_with``)
    chosen = copy.deepcopy(spec)
    # the fallback when no form of the corpus is released
    chosen.document.document_form = form_for_task(spec.task, spec.data.column_names())[0]
    chosen.dp_synrag.form_by_rule = True
    return chosen


def form_choice_words(spec: RunSpec) -> str:
    """One line for `privet plan` and the Task page: the form the writer follows and why."""
    p, form = spec.dp_synrag, spec.document
    if not p.realisation:
        return ""
    if p.discovers_forms_with(form) and form.document_form == AUTOMATIC:
        fallback, why = form_for_task(spec.task, spec.data.column_names())
        return ("Document form: the corpus's own forms, released under DP (structure discovery, docs/method.md §2.0b); "
                f"if none stands for enough of the corpus (free text), the {FORM_LABELS[fallback]}, chosen because {why}.")
    return form_words(form.document_form, form.public_example, spec.task, "document", spec.data.column_names())
