"""DP-SynRAG behind the pipeline's method interface (plan, run, record, samplers)."""

from __future__ import annotations

from dataclasses import asdict

from core.corpus import Corpus
from core.methods.base import (
    COMMON_NOTES,
    MethodContext,
    PlanSummary,
    sampler_descriptions,
    stages_from_events,
)
from core.methods.dp_synrag.algorithm import run_dp_synrag
from core.methods.dp_synrag.guidance import guide
from core.methods.dp_synrag.vocabulary import load_vocabulary
from core.privacy.mechanisms import GAUSSIAN_OPENDP, THRESHOLD_EM, TOKEN_SAMPLER
from core.privacy.planner import plan_dp_synrag
from core.runspec import RunSpec


class DPSynRAGMethod:
    name = "dp_synrag"

    def _plan(self, spec: RunSpec, delta: float):
        return plan_dp_synrag(spec.dp_synrag, spec.privacy.epsilon, delta, spec.privacy.conversion)

    def plan_summary(self, spec: RunSpec, delta: float, n_units: int):
        p = spec.dp_synrag
        plan = self._plan(spec, delta)
        stages = list(plan.per_stage().items())
        derived = {"rho_total": plan.rho_total, "sigma_h": plan.sigma_h}
        if plan.M:
            derived["sigma_c"] = plan.sigma_c
        if plan.refine:
            derived.update(sigma_mu=plan.sigma_mu, eps_theta=plan.eps_theta)
        derived.update(c_over_tau=plan.c_over_tau, c=plan.c)
        guidance = dp_synrag_guidance(spec, delta, n_units)
        derived["min_topic_units"] = guidance.min_topic_support  # public: from σ_h and the public vocabulary
        warnings = list(guidance.warnings)
        if p.k > n_units:
            warnings.append(
                f"The target cluster size k={p.k} exceeds the number of units; clusters will be small "
                "and their synthetic text mostly noise."
            )
        return PlanSummary(
            method=self.name,
            epsilon=spec.privacy.epsilon,
            delta=delta,
            rho_total=plan.rho_total,
            stages=stages,
            derived=derived,
            warnings=warnings,
            n_units=n_units,
        )

    def run(self, corpus: Corpus, spec: RunSpec, delta: float, ctx: MethodContext):
        vocab = load_vocabulary(spec.dp_synrag.domain_lists)
        result = run_dp_synrag(corpus.units, vocab, spec.dp_synrag, self._plan(spec, delta), ctx)
        notes = list(COMMON_NOTES) + [
            f"Keyword vocabulary: a fixed public English word list ({len(vocab.words)} words"
            + (f", with {len(spec.dp_synrag.domain_lists)} public domain list(s)" if spec.dp_synrag.domain_lists else "")
            + "); no word list was derived from the private data.",
            "Keyword extraction, clustering membership and the self-filter are deterministic or post-processing "
            "steps; every step that looks at the private data through a released value is charged above.",
            *generation_notes(spec.dp_synrag),
        ]
        return result.documents, result.private_diagnostics, notes

    def record_stages(self, spec: RunSpec, delta: float) -> list[dict]:
        return stages_from_events(self._plan(spec, delta).accountant().events)

    def parameters(self, spec: RunSpec, summary) -> dict:
        return {**asdict(spec.dp_synrag), **{k: float(v) for k, v in summary.derived.items()}}

    def samplers(self) -> list[str]:
        return sampler_descriptions(GAUSSIAN_OPENDP, THRESHOLD_EM, TOKEN_SAMPLER)


def dp_synrag_guidance(spec: RunSpec, delta: float, n_units: int):
    """Consensus strength and topic support of this plan, with suggested parameters (on screen only)."""
    p = spec.dp_synrag

    vocab_size = len(load_vocabulary(p.domain_lists))
    return guide(p, spec.privacy.epsilon, delta, n_units, vocab_size, spec.privacy.conversion)


def generation_notes(p) -> list[str]:
    """How the synthetic text was written, in plain words for the certificate (all public settings)."""
    notes = []
    if p.topic_words == "specific":
        notes.append(
            "Topics: the cluster words were chosen from the released noisy keyword counts only, keeping words "
            "whose noisy count is well above what noise alone reaches and preferring words that are rare in "
            "general English (public word frequencies); this is post-processing of a released value."
        )
    if p.cluster_keywords:
        notes.append(
            f"Topic descriptions (co-keywords): in each cluster every document voted for at most {p.cluster_keywords} "
            "of its own keywords among the most frequent released words; Gaussian noise was added to every cluster's "
            "vote counts at once (charged above), and a cluster's words were released only where the noisy count "
            "clears the noise level. Only these released words describe a cluster to the public row."
        )
    if p.clip == "dclip":
        notes.append(
            "Token aggregation (DClip): each document of a cluster adds its log-probability difference to a public "
            f"row, clamped to [-c, c], on top of the public row's log-probabilities weighted by {p.public_weight:g} "
            "(a fixed public constant). One document moves every token's score by at most c, the same bound "
            "as the standard clip, so the cost per token is unchanged."
        )
    if p.public_prompt == "keyword":
        notes.append(
            "The public row of each cluster contains only public text: the rephrase instruction around the "
            "cluster's released keyword and released co-keywords (and the public task); never a private document."
        )
    elif p.public_prompt == "empty":
        notes.append("The public row of each cluster is the rephrase instruction around an empty document.")
    if p.top_k_plus:
        notes.append(
            f"Candidate tokens (Top-k+): each token was drawn exactly among the {p.top_k_plus} tokens the public "
            "row ranks highest plus those within a margin of them computed from public settings (c, the public "
            "weight, the temperature and the target cluster size k); the set depends on public text only, so "
            "the cost per token is unchanged."
        )
    if p.self_filter:
        notes.append(
            f"Self-filter ({p.self_filter_mode}): synthetic texts were kept or dropped by reading only synthetic "
            "and public text (threshold calibrated on shipped public sentences): post-processing, no cost."
        )
    return notes
