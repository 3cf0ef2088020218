"""Aug-PE behind the pipeline's method interface (``core.methods.registry``)."""

from __future__ import annotations

from dataclasses import asdict

from core.corpus import Corpus
from core.methods.aug_pe.runner import run_aug_pe
from core.methods.base import (
    COMMON_NOTES,
    MethodContext,
    MethodOutput,
    PlanSummary,
    sampler_descriptions,
    stages_from_events,
)
from core.privacy.mechanisms import GAUSSIAN_OPENDP
from core.methods.aug_pe.plan import AugPEPlan, plan_aug_pe
from core.specs.runspec import RunSpec

SCOPE_NOTES = (
    (
        "Aug-PE: the public language model writes every candidate text from public prompts (the task "
        "description, then candidates it wrote itself); no private text is ever given to the model."
    ),
    (
        "Each iteration, every unit casts one vote for its nearest candidate in embedding space; only the "
        "Gaussian-noised vote histogram is released. Thresholding it, drawing the winners and writing their "
        "variations are post-processing of released values and cost nothing extra."
    ),
)


class AugPEMethod:
    name = "aug_pe"

    def _plan(self, spec: RunSpec, delta: float) -> AugPEPlan:
        # The plan checks [aug_pe] against AugPESpec.RULES, the one statement of them.
        return plan_aug_pe(spec.aug_pe, spec.privacy.epsilon, delta, spec.privacy.conversion)

    def plan_summary(self, spec: RunSpec, delta: float, n_units: int) -> PlanSummary:
        plan = self._plan(spec, delta)
        warnings = []
        if n_units / spec.aug_pe.population < plan.threshold:
            warnings.append(
                f"With {spec.aug_pe.population} candidates each gets on average fewer votes than the threshold "
                f"H={plan.threshold:.3g}, so few candidates will be kept. Use a smaller population, fewer "
                "iterations or a larger ε."
            )
        return PlanSummary(
            method=self.name,
            epsilon=spec.privacy.epsilon,
            delta=delta,
            rho_total=plan.rho_total,
            stages=list(plan.accountant().per_stage().items()),
            derived=self._derived(plan),
            warnings=warnings,
            n_units=n_units,
        )

    @staticmethod
    def _derived(plan: AugPEPlan) -> dict[str, float]:
        return {
            "rho_total": plan.rho_total,
            "rho_per_iteration": plan.rho_per_iteration,
            "sigma": plan.sigma,
            "threshold": plan.threshold,
        }

    def run(self, corpus: Corpus, spec: RunSpec, delta: float, ctx: MethodContext) -> MethodOutput:
        result = run_aug_pe(corpus.units, spec.aug_pe, self._plan(spec, delta), ctx)
        return result.documents, result.private_diagnostics, list(COMMON_NOTES) + list(SCOPE_NOTES)

    def record_stages(self, spec: RunSpec, delta: float) -> list[dict]:
        return stages_from_events(self._plan(spec, delta).accountant().events)

    def parameters(self, spec: RunSpec, summary: PlanSummary) -> dict:
        return {**asdict(spec.aug_pe), **{k: float(v) for k, v in summary.derived.items()}}

    def samplers(self) -> list[str]:
        return sampler_descriptions(GAUSSIAN_OPENDP)
