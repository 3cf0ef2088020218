"""DP-Synth (Amin et al. 2024; docs/method.md §4): private prediction over random disjoint batches.

The same engine as DP-SynRAG's step 4, without keywords, clustering or retrieval: every unit
is assigned to one of R groups uniformly at random (OS entropy), and each group writes one
text. Its settings are the run spec's ``[dp_synth]`` (``core.specs.dp_synth.settings_of``). Each unit is in
exactly one group, so the whole run costs one group's budget:
rho = (T/2)(c/tau)^2, i.e. c/tau = sqrt(2 rho / T).
"""

from __future__ import annotations

import numpy as np

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
from core.specs.document_forms import public_example, reference_form
from core.methods.dp_synrag.shape.examples import form_reference
from core.methods.dp_synth.plan import plan_dp_synth
from core.methods.private_prediction.groups import build_groups
from core.methods.private_prediction.prompts import public_message
from core.methods.private_prediction.self_filter import self_filter
from core.methods.private_prediction.stage import private_prediction
from core.privacy.mechanisms import TOKEN_SAMPLER
from core.privacy.release import checkpointed
from core.privacy.release import per_stage as stage_totals
from core.specs.runspec import RunSpec
from core.specs.dp_synth import form_of, settings_of


def random_batches(n_units: int, n_groups: int, rng: np.random.Generator) -> list[list[int]]:
    """Each unit goes to one of ``n_groups`` groups uniformly at random (data-independent)."""
    groups: list[list[int]] = [[] for _ in range(n_groups)]
    for u, g in enumerate(rng.integers(0, n_groups, size=n_units)):
        groups[int(g)].append(u)
    return groups


class DPSynthMethod:
    name = "dp_synth"

    def plan_summary(self, spec: RunSpec, delta: float, n_units: int) -> PlanSummary:
        p = settings_of(spec)
        plan = plan_dp_synth(p, spec.privacy.epsilon, delta, spec.privacy.conversion)
        return PlanSummary(
            method=self.name,
            epsilon=spec.privacy.epsilon,
            delta=delta,
            rho_total=plan.rho_total,
            stages=list(stage_totals(plan.releases()).items()),
            derived={"rho_total": plan.rho_total, "c_over_tau": plan.c_over_tau, "c": plan.c_over_tau * p.tau},
            warnings=[],
            n_units=n_units,
        )

    def run(self, corpus: Corpus, spec: RunSpec, delta: float, ctx: MethodContext) -> MethodOutput:
        p = settings_of(spec)
        plan = plan_dp_synth(p, spec.privacy.epsilon, delta, spec.privacy.conversion)
        batches = checkpointed(ctx, "batches", lambda: random_batches(len(corpus.units), p.R, ctx.rng()))
        # A random batch has no released keyword: its public row, if any, holds the empty document.
        public = public_message(p.public_row, ctx.task)
        groups = build_groups(batches, corpus.units, ctx, None if public is None else [public] * len(batches))
        # Disjoint batches: the plan's cost has overlap 1 (each unit in one group).
        (stage,) = plan.releases()
        texts = private_prediction(groups, stage, p, ctx)
        form = form_of(spec)
        chosen = reference_form(form.document_form, form.public_example, spec.task, spec.data.column_names())
        reference = form_reference(public_example(chosen, form.public_example))
        kept = self_filter(texts, ctx, p.self_filter, p.self_filter_mode, reference)
        docs = [SyntheticDoc(id=f"syn-{gid:04d}", text=text, group=gid) for gid, text in sorted(kept.items())]
        diagnostics = {"groups": len(groups), "generated": len(texts), "kept_after_self_filter": len(docs)}
        notes = list(COMMON_NOTES) + ["Units were split into random disjoint batches; each unit is in exactly one."]
        return docs, diagnostics, notes

    def record_stages(self, spec: RunSpec, delta: float) -> list[dict]:
        plan = plan_dp_synth(settings_of(spec), spec.privacy.epsilon, delta, spec.privacy.conversion)
        return stages_from_events(plan.accountant().events)

    def parameters(self, spec: RunSpec, summary: PlanSummary) -> dict:
        p = settings_of(spec)
        return {"R": p.R, "T": p.T, "tau": p.tau, "clip": p.clip, "public_row": p.public_row, **summary.derived}

    def samplers(self) -> list[str]:
        return sampler_descriptions(TOKEN_SAMPLER)
