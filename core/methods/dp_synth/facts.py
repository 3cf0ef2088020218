"""DP-Synth's facts for the rest of Privet (``core.specs.method_catalogue.MethodFacts``): its work estimate and what
the wizard, ``privet plan`` and the certificate show for it. Its settings are ``[dp_synth]``
(``core.specs.dp_synth``); a spec written before that section existed keeps them in ``[dp_synrag]``, read as
before (``settings_of``). Nothing heavy is imported at the top."""

from __future__ import annotations

import copy
from typing import Any

from core.specs.method_catalogue import MethodFacts, WizardOptions
from core.specs.dp_synth import section_name, settings_of

# The certificate's words for DP-Synth's parameters (``DPSynthMethod.parameters``). The certificate keeps one
# meaning per parameter name for every method (core.certificate.render), so the names DP-SynRAG also uses (R,
# T, tau, clip, public_row, c_over_tau, c) carry its words, word for word (tests/codebase/test_method_names.py).
PARAMETER_MEANINGS = {
    "R": "topics (clusters) at most; one synthetic document each unless 'documents' asks for more (0: chosen "
         "by the adaptive default from the released size; the chosen value is in the notes)",
    "T": "tokens (word pieces) written per synthetic document",
    "tau": "sampling temperature (higher: more varied wording)",
    "clip": "how each document's say on the next word is limited: 'dclip' = clamped difference to a public row",
    "public_row": "what the public row holds: 'empty' = an instruction around an empty document; 'none' = none",
    "c_over_tau": "most one document can move the score of a next word, over the temperature",
    "c": "most one document can move the score of a next word (clipping bound)",
}


def work(spec: Any, n: int, s: Any, topics: float | None = None) -> list[tuple[str, float]]:
    """One private-prediction generation per unit."""
    return [("private_prediction", s.llm(n * s.prompt, n * settings_of(spec).T))]


def form_lines(spec: Any) -> list[str]:
    """The form the self-filter reads (``privet plan``)."""
    if spec.dp_synth is None:  # the upgrade path: [dp_synrag]'s form, worded as before
        from core.methods.dp_synrag.shape.forms import form_choice_words

        words = form_choice_words(spec)
        return [words] if words else []
    from core.methods.document_forms import form_words

    p = settings_of(spec)
    return [form_words(p.document_form, p.public_example, spec.task, section_name(spec))]


def public_defaults(spec: Any) -> Any:
    """The spec with the self-filter's document form chosen by the public rule (a copy)."""
    if spec.dp_synth is None:  # the upgrade path: [dp_synrag] filled by its public rules, as before
        from core.methods.dp_synrag.facts import public_defaults as shared_section_defaults

        return shared_section_defaults(spec)
    from core.methods.document_forms import reference_form

    chosen = copy.deepcopy(spec)
    p = chosen.dp_synth
    p.document_form = reference_form(p.document_form, p.public_example, spec.task)
    return chosen


def wizard_section(spec: Any) -> Any:
    """The section the wizard's task page stores R, T and the self-filter in: ``[dp_synth]`` (written from
    ``[dp_synrag]``'s values when the spec has none yet)."""
    if spec.dp_synth is None:
        spec.dp_synth = settings_of(spec)
    return spec.dp_synth


def spec_problems(spec: Any) -> list[str]:
    """Settings that contradict each other: DClip or Top-k+ without a public row (refused before any charge)."""
    return settings_of(spec).problems(upgraded=spec.dp_synth is None)


FACTS = MethodFacts(
    parameter_meanings=PARAMETER_MEANINGS,
    work=work,
    plan_header=form_lines,
    public_defaults=public_defaults,
    spec_problems=spec_problems,
    wizard_section=wizard_section,
    wizard=WizardOptions(count_note="Fewer documents can come out when the check for useful documents drops some.",
                         self_filter=True),
)
