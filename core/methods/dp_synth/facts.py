"""DP-Synth's facts for the rest of Privet (``core.method_catalogue.MethodFacts``): its work estimate and what
the wizard and ``privet plan`` show for it. Its stage (private prediction) and its settings (R, T, tau, the
clip: the shared ``[dp_synrag]`` section) are named by the shared labels and DP-SynRAG's words. Nothing heavy
is imported at the top."""

from __future__ import annotations

from typing import Any

from core.method_catalogue import MethodFacts, WizardOptions
from core.methods.dp_synrag.facts import PARAMETER_MEANINGS as SHARED_SECTION_MEANINGS
from core.methods.dp_synrag.facts import public_defaults

# Its settings are the shared [dp_synrag] section's, in DP-SynRAG's words.
PARAMETER_MEANINGS = {key: SHARED_SECTION_MEANINGS[key] for key in ("R", "T", "tau", "clip", "public_row", "c_over_tau", "c")}


def work(spec: Any, n: int, s: Any, topics: float | None = None) -> list[tuple[str, float]]:
    """One private-prediction generation per unit."""
    return [("private_prediction", s.llm(n * s.prompt, n * spec.dp_synrag.T))]


def form_lines(spec: Any) -> list[str]:
    """The form the self-filter reads (``privet plan``), as DP-SynRAG words it."""
    from core.methods.dp_synrag.forms import form_choice_words

    words = form_choice_words(spec)
    return [words] if words else []


FACTS = MethodFacts(
    parameter_meanings=PARAMETER_MEANINGS,
    work=work,
    plan_header=form_lines,
    public_defaults=public_defaults,  # the shared section's: the form its self-filter reads
    wizard=WizardOptions(count_note="Fewer documents can come out when the check for useful documents drops some.",
                         self_filter=True),
)
