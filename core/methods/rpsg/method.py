"""RPSG (docs/method.md §3) behind the pipeline's method interface.

The pipeline treats RPSG like any method: the plan is shown before anything is charged, the
selection stage is charged in the ledger before it draws noise, and the privacy record states
``end_to_end_dp = False`` with the plain-words scope, which the certificate repeats.
"""

from __future__ import annotations

from dataclasses import asdict

from core.corpus import Corpus
from core.methods.base import (
    COMMON_NOTES,
    MethodContext,
    MethodOutput,
    PlanSummary,
    SyntheticDoc,
    sampler_descriptions,
    stages_from_events,
)
from core.methods.rpsg.algorithm import run_rpsg
from core.methods.rpsg.pii import PIIOptions
from core.privacy.mechanisms import GAUSSIAN_OPENDP
from core.methods.rpsg.plan import RPSG_SCOPE, RPSGPlan, plan_rpsg
from core.specs.runspec import RunSpec


class RPSGMethod:
    name = "rpsg"

    def _plan(self, spec: RunSpec, delta: float) -> RPSGPlan:
        return plan_rpsg(spec.privacy.epsilon, delta, spec.rpsg.m, spec.privacy.conversion)

    def plan_summary(self, spec: RunSpec, delta: float, n_units: int) -> PlanSummary:
        plan = self._plan(spec, delta)
        return PlanSummary(
            method=self.name,
            epsilon=spec.privacy.epsilon,
            delta=delta,
            rho_total=plan.rho,
            stages=list(plan.accountant().per_stage().items()),
            derived={"sigma": plan.sigma, "sensitivity": plan.sensitivity, "epsilon_guaranteed": plan.epsilon_guaranteed},
            warnings=["RPSG has no end-to-end differential-privacy guarantee: only the choice among candidate "
                      "abstractions is private. Rely on the empirical audit (privet evaluate)."],
            n_units=n_units,
            end_to_end_dp=False,
        )

    def run(self, corpus: Corpus, spec: RunSpec, delta: float, ctx: MethodContext) -> MethodOutput:
        p = spec.rpsg
        pii = PIIOptions(patterns=p.pii_patterns, names=p.pii_names, places=p.pii_places)
        result = run_rpsg(
            corpus.units,
            ctx.llm,
            ctx.embedder,
            p,
            spec.privacy.epsilon,
            delta,
            ctx.charge,
            ctx.reporter,
            ctx.test_rng(),
            pii=pii,
            conversion=spec.privacy.conversion,
            batch_size=p.batch_size,
        )
        documents = [SyntheticDoc(id=f"syn-{i:05d}", text=t, group=i) for i, t in enumerate(result.texts)]
        notes = [RPSG_SCOPE, *COMMON_NOTES,
                 "PII masking, the similarity filter and the memorisation (NLL) filter read the private text and "
                 "are outside any formal guarantee."]
        return documents, dict(result.stats), notes

    def record_stages(self, spec: RunSpec, delta: float) -> list[dict]:
        return stages_from_events(self._plan(spec, delta).accountant().events)

    def parameters(self, spec: RunSpec, summary: PlanSummary) -> dict:
        p = asdict(spec.rpsg)
        p.pop("pii_patterns"), p.pop("pii_names"), p.pop("pii_places")  # the custodian's terms may be private
        return {**p, **summary.derived}

    def samplers(self) -> list[str]:
        return sampler_descriptions(GAUSSIAN_OPENDP)
