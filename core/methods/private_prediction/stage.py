"""The private-prediction stage (docs/method.md §2.4): charged when it starts, checkpointed group by group.

The one DP stage that checkpoints as it goes: a resume reuses the finished groups and charges only
the groups it draws again (``prediction_groups``). The engine (``engine.py``) does the drawing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Protocol, Sequence

from core.methods.private_prediction.engine import (
    EngineConfig,
    PredictionGroup,
    top_k_plus_margin,
)
from core.methods.private_prediction.groups import GroupSource
from core.methods.private_prediction.prompts import rephrase_message, template_prefix_length
from core.methods.private_prediction.plan import prediction_groups
from core.privacy.release import Release
from core.common.progress import ProgressEvent, StageProgress

if TYPE_CHECKING:  # an annotation only: the context (core.methods.base) holds the local engine
    from core.methods.base import MethodContext


class PredictionSettings(Protocol):
    """The settings the private-prediction stage reads: a method's run-spec section (``[dp_synrag]``,
    ``[dp_synth]``) has them all."""

    @property
    def T(self) -> int: ...  # noqa: N802 - the run spec's name; tokens per group
    @property
    def tau(self) -> float: ...  # sampling temperature
    @property
    def clip(self) -> str: ...  # "dclip" | "spec"
    @property
    def public_weight(self) -> float: ...  # lambda
    @property
    def top_k_plus(self) -> int: ...  # candidate tokens (0 = all)
    @property
    def k(self) -> int: ...  # the public rows per group the Top-k+ margin assumes
    @property
    def force_length(self) -> bool: ...
    @property
    def prediction_anchor(self) -> bool: ...  # whether each group's first row is a public row


def engine_config(spec: PredictionSettings, c: float, batch_rows: int, shared_prefix: int = 0) -> EngineConfig:
    """The private-prediction engine's settings from the run spec (DClip, public row, Top-k+)."""
    anchored = spec.prediction_anchor
    margin = top_k_plus_margin(c, spec.public_weight, spec.tau, spec.k) if spec.top_k_plus else 0.0
    return EngineConfig(
        max_new_tokens=spec.T,
        clip=c,
        tau=spec.tau,
        max_rows=batch_rows,
        public_anchor=anchored,
        clip_mode=spec.clip,
        public_weight=spec.public_weight,
        top_k_plus=spec.top_k_plus,
        top_k_margin=margin,
        shared_prefix=shared_prefix,
        force_length=spec.force_length,
    )


def private_prediction(
    groups: Sequence[PredictionGroup] | GroupSource,
    release: Release,
    spec: PredictionSettings,
    ctx: MethodContext,
    private_message: Callable[[str], str] = rephrase_message,
) -> dict[int, str]:
    """Texts for the groups not yet finished in the checkpoint; checkpoints each finished one.

    The one stage that checkpoints as it goes: charged when it starts (``release.charge``), and on a
    resume only for the groups drawn again (``prediction_groups``). ``release`` is the plan's token stage:
    T = its count, L = its parallel factor, c = its clip."""
    stage = release.stage
    done: dict[str, str] = ctx.checkpoints.load(stage) if ctx.checkpoints.has(stage) else {}
    gids = list(groups.gids) if isinstance(groups, GroupSource) else [g.gid for g in groups]
    todo_ids = [gid for gid in gids if str(gid) not in done]
    progress = StageProgress(ctx.reporter, stage, len(gids)).start("Writing synthetic documents")
    progress.done = len(gids) - len(todo_ids)
    # Charged when the stage starts, even with no group to write (the plan, the ledger and the
    # certificate then agree); on a resume only if some group must be written again.
    if todo_ids or not ctx.checkpoints.has(stage):
        release.charge(
            ctx.charge,
            prediction_groups(release.parallel, len(todo_ids), resumed=bool(done)),  # the plan's L; a resume: redrawn
            f"{len(todo_ids)} groups, each unit in <= L={release.parallel}",
        )
        ctx.checkpoints.save(stage, done)  # after the charge: a checkpoint means "charged"
        wanted = set(todo_ids)
        todo = groups.build(todo_ids) if isinstance(groups, GroupSource) else [g for g in groups if g.gid in wanted]
        config = engine_config(spec, release.clip, ctx.batch_rows, template_prefix_length(ctx.llm, private_message))
        engine = ctx.compute.engine_factory(ctx.llm, config, ctx.token_sampler(spec.tau))

        starts = {g.gid: list(g.start_ids) for g in todo}

        def finished(out) -> None:
            text = ctx.llm.decode(starts.get(out.gid, []) + out.token_ids).strip()
            done[str(out.gid)] = text
            ctx.checkpoints.save(stage, done)
            ctx.reporter.emit(ProgressEvent(stage, "preview", message=text))

        engine.run(todo, progress, finished)
    progress.finish()
    return {int(gid): text for gid, text in done.items()}
