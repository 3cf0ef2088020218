"""Step 4's private prediction over the clusters (docs/method.md §2.4): each group's rows, bounded without
refinement by a Poisson subsample from released counts only (§2.4.8), and what they are asked. ``text.py`` writes
with them for ``text = "private"`` and ``"realised+private"``; the groups are built by ``private_prediction`` only
after its charge, so the subsample is drawn inside the stage.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, NamedTuple, Sequence

from core.corpus import Unit
from core.methods.base import MethodContext
from core.methods.dp_synrag.release.plan import DPSynRAGPlan
from core.methods.dp_synrag.release.row_bound import poisson_subsample, subsample_rates
from core.methods.private_prediction.engine import PredictionGroup
from core.methods.private_prediction.groups import GroupSource, build_groups
from core.methods.private_prediction.prompts import rephrase_message
from core.specs.runspec import DPSynRAGSpec


def bounded_rows(
    clusters: Sequence[Sequence[int]], noisy_counts: Sequence[float], spec: DPSynRAGSpec, ctx: MethodContext
) -> list[list[int]]:
    """The rows of each group without refinement: all of C_r (``row_bound = "none"``), or a Poisson
    subsample at q_r = min(1, k / h'(w_r)) from released counts only (``"poisson"``, docs/method.md
    §2.4.8). Costs nothing extra: one unit still adds or removes at most its own row per group."""
    if spec.row_bound == "none":
        return [list(members) for members in clusters]
    if spec.row_bound != "poisson":
        raise ValueError(f"unknown row bound {spec.row_bound!r}")
    return poisson_subsample(clusters, subsample_rates(noisy_counts, spec.k), ctx.rng())


class GroupPrompts(NamedTuple):
    """What each group's rows are asked (public): the public row's message per group (None: no public row), each
    group's answer start, and the message a member's row is given (its own document in it)."""

    messages: Sequence[str] | None
    starts: Sequence[str]
    private_message: Callable[[str], str] = rephrase_message


def group_source(
    selected: list[list[int]],
    noisy_counts: Sequence[float],
    units: Sequence[Unit],
    spec: DPSynRAGSpec,
    plan: DPSynRAGPlan,
    ctx: MethodContext,
    prompts: GroupPrompts,
) -> GroupSource:
    """The prediction groups, built by ``private_prediction`` only after its charge, so that the row
    bound's subsample (docs/method.md §2.4.8) is drawn inside the stage. ``selected[r]`` is updated to
    the rows group r actually wrote with (on-screen diagnostics)."""
    messages, starts, private_message = prompts

    def build(gids: Sequence[int]) -> list[PredictionGroup]:
        rows = [selected[r] for r in gids]
        if not plan.refine:
            rows = bounded_rows(rows, [noisy_counts[r] for r in gids], spec, ctx)
        for r, chosen in zip(gids, rows):
            selected[r] = chosen
        built = build_groups(
            rows, units, ctx, None if messages is None else [messages[r] for r in gids], [starts[r] for r in gids],
            private_message,
        )
        return [replace(g, gid=r) for g, r in zip(built, gids)]

    return GroupSource(tuple(range(len(selected))), build)
