"""DP-Synth's facts for the rest of Privet (``core.specs.method_catalogue.MethodFacts``): its work estimate and what
the wizard, ``privet plan`` and the certificate show for it. Its settings are ``[dp_synth]``
(``core.specs.dp_synth``); a spec written before that section existed keeps them in ``[dp_synrag]``, read as
before (``settings_of``). Nothing heavy is imported at the top."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING

from core.specs.method_catalogue import MethodFacts, WizardOptions, WorkSpeeds
from core.specs.dp_synth import DPSynthSpec, form_of, settings_of

if TYPE_CHECKING:  # an annotation only
    from core.specs.runspec import RunSpec

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


class DPSynthFacts(MethodFacts):
    """DP-Synth's facts: its settings are ``[dp_synth]``, or ``[dp_synrag]`` on the upgrade path."""

    parameter_meanings = PARAMETER_MEANINGS
    wizard = WizardOptions(count_note="Fewer documents can come out when the check for useful documents drops some.",
                           self_filter=True)

    def work(self, spec: RunSpec, n_units: int, speeds: WorkSpeeds,
             topics: float | None = None) -> list[tuple[str, float]]:
        """One private-prediction generation per unit."""
        return [("private_prediction", speeds.llm(n_units * speeds.prompt, n_units * settings_of(spec).T))]

    def plan_header(self, spec: RunSpec) -> list[str]:
        """The form the self-filter reads (``privet plan``)."""
        if spec.dp_synth is None:  # the upgrade path: [dp_synrag]'s form, worded as before
            from core.methods.dp_synrag.shape.forms import form_choice_words

            words = form_choice_words(spec)
            return [words] if words else []
        from core.specs.document_forms import form_words

        form = form_of(spec)
        return [form_words(form.document_form, form.public_example, spec.task, "document", spec.data.column_names())]

    def public_defaults(self, spec: RunSpec) -> RunSpec:
        """The spec with the self-filter's document form chosen by the public rule (a copy)."""
        if spec.dp_synth is None:  # the upgrade path: [dp_synrag] filled by its public rules, as before
            from core.methods.dp_synrag.facts import FACTS as SHARED_SECTION_FACTS

            return SHARED_SECTION_FACTS.public_defaults(spec)
        from core.specs.document_forms import reference_form

        chosen = copy.deepcopy(spec)
        form = chosen.document
        form.document_form = reference_form(form.document_form, form.public_example, spec.task, spec.data.column_names())
        return chosen

    def wizard_section(self, spec: RunSpec) -> DPSynthSpec:
        """The section the wizard's task page stores R, T and the self-filter in: ``[dp_synth]`` (written from
        ``[dp_synrag]``'s values when the spec has none yet)."""
        if spec.dp_synth is None:
            spec.document = form_of(spec)  # the form it read from [dp_synrag], kept once it has its own section
            spec.dp_synth = settings_of(spec)
        return spec.dp_synth

    def spec_problems(self, spec: RunSpec) -> list[str]:
        """Settings that contradict each other: DClip or Top-k+ without a public row (refused before any charge)."""
        return settings_of(spec).problems(upgraded=spec.dp_synth is None)


FACTS = DPSynthFacts()
