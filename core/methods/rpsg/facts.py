"""RPSG's facts for the rest of Privet (``core.specs.method_catalogue.MethodFacts``): its stages' plain names, the
certificate's words for its settings, its work estimate and what the wizard asks for it (nothing: one
rewrite per private document). Nothing heavy is imported at the top."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.specs.method_catalogue import MethodFacts, WizardOptions, WorkSpeeds

if TYPE_CHECKING:  # an annotation only
    from core.specs.runspec import RunSpec

STAGE_LABELS = {
    "rpsg_mask": "masking personal details",
    "rpsg_abstract": "summarising each document",
    "rpsg_selection": "choosing one summary per document",
    "rpsg_generate": "writing synthetic documents",
    "rpsg_refine": "filtering the synthetic documents",
}

PARAMETER_MEANINGS = {
    "m": "candidate summaries per private document",
    "sigma": "noise added to the candidates' scores (standard deviation)",
    "sensitivity": "most one unit can change a candidate's score",
    "epsilon_guaranteed": "ε of the summary choice alone (the only private step of RPSG)",
    "similarity_threshold": "rewrites more similar than this to their source are dropped",
    "nll_percentile": "least likely rewrites dropped (percentile)",
    "temperature": "sampling temperature (higher: more varied wording)",
    "max_new_tokens": "longest generated text, in tokens",
    "n_variants": "rewrites made per summary",
    "batch_size": "texts per batch of the model (speed only)",
}


class RPSGFacts(MethodFacts):
    """RPSG's facts: its settings are ``[rpsg]`` (``core.specs.rpsg``)."""

    stage_labels = STAGE_LABELS
    parameter_meanings = PARAMETER_MEANINGS
    documents_asked = None  # one rewrite per private document: no number is asked for
    wizard = WizardOptions(documents="one_per_unit", count_note="RPSG writes one rewrite per private document.",
                           writes_tokens=False)

    def work(self, spec: RunSpec, n_units: int, speeds: WorkSpeeds,
             topics: float | None = None) -> list[tuple[str, float]]:
        """Seconds per stage at the built-in ``speeds`` (``core.run.estimate``)."""
        r, prompt, n, s = spec.rpsg, speeds.prompt, n_units, speeds
        return [
            ("rpsg_mask", s.cpu(n * 0.005)),
            ("rpsg_abstract", s.llm(n * r.m * prompt, n * r.m * r.max_new_tokens)),
            ("embedding", n * (r.m + 1) / s.embed),
            ("rpsg_selection", s.cpu(n * 0.001)),
            ("rpsg_generate", s.llm(n * (r.n_variants + 1) * prompt, n * (r.n_variants + 1) * r.max_new_tokens)),
            ("rpsg_refine", s.llm(n * (r.n_variants + 1) * prompt, 0)),
        ]


FACTS = RPSGFacts()
