"""Aug-PE's facts for the rest of Privet (``core.specs.method_catalogue.MethodFacts``): its stages' plain names (a
vote per round), the certificate's words for its settings, its work estimate and what the wizard asks for
it. Nothing heavy is imported at the top."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.specs.method_catalogue import MethodFacts, WizardOptions, WorkSpeeds

if TYPE_CHECKING:  # an annotation only
    from core.specs.runspec import RunSpec

STAGE_LABELS = {"aug_pe_generation": "writing candidate texts"}
ROUND_LABELS = {"aug_pe_histogram": "voting on candidate texts, round {round}"}  # aug_pe_histogram_<t>

PARAMETER_MEANINGS = {
    "iterations": "rounds of private votes (the budget is split equally over them)",
    "population": "candidate texts voted on in each round",
    "variations": "new variations the public model writes of each winning text",
    "threshold": "noisy vote counts below this are set to 0 (0 = twice the noise level)",
    "top_p": "the public model samples from the most likely words that make up this share of probability",
    "rho_per_iteration": "privacy loss of one round of votes, in zCDP",
    "sigma": "noise added to the candidates' scores (standard deviation)",
    "temperature": "sampling temperature (higher: more varied wording)",
    "max_new_tokens": "longest generated text, in tokens",
    "batch_size": "texts per batch of the model (speed only)",
}


class AugPEFacts(MethodFacts):
    """Aug-PE's facts: its settings are ``[aug_pe]`` (``core.specs.aug_pe``)."""

    stage_labels = STAGE_LABELS
    round_labels = ROUND_LABELS
    parameter_meanings = PARAMETER_MEANINGS
    # The wizard stores the count and the tokens in [dp_synrag] (R, T), which Aug-PE never reads: it asks for neither.
    wizard = WizardOptions(documents="settings", writes_tokens=False,
                           count_note="Aug-PE writes the winners of its last vote: at most population / (1 + variations) "
                                      "documents, set in the run spec's [aug_pe] section.")

    def work(self, spec: RunSpec, n_units: int, speeds: WorkSpeeds,
             topics: float | None = None) -> list[tuple[str, float]]:
        """Public generation dominates: every candidate text the model writes."""
        a = spec.aug_pe
        texts = a.population + (a.iterations - 1) * (a.population // (1 + a.variations)) * a.variations
        return [
            ("aug_pe_generation", speeds.llm(texts * (a.max_new_tokens + 60), texts * a.max_new_tokens)),
            ("embedding", (n_units + texts) / speeds.embed),
        ]


FACTS = AugPEFacts()
