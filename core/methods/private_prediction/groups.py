"""The groups of private prediction (docs/method.md §2.4): one per DP-SynRAG cluster or DP-Synth batch.

A group holds one prompt per member unit (its own document) and, optionally, the public row's prompt.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Sequence

from core.corpus import Unit
from core.methods.private_prediction.engine import PredictionGroup
from core.methods.private_prediction.prompts import rephrase_message

if TYPE_CHECKING:  # an annotation only: the context (core.methods.base) holds the local engine
    from core.methods.base import MethodContext


def build_groups(
    selected: Sequence[Sequence[int]],
    units: Sequence[Unit],
    ctx: MethodContext,
    public_messages: Sequence[str] | None = None,
    answer_starts: Sequence[str] | None = None,
    private_message: Callable[[str], str] = rephrase_message,
) -> list[PredictionGroup]:
    """One prediction group per cluster: a rephrase prompt per member, plus the public row.

    ``public_messages[r]`` is group r's public message (built by :func:`public_message` from
    released or public text only), or None for no public row. ``answer_starts[r]`` is a public
    text every row of group r (private and public alike) already has as the start of its answer
    (:func:`answer_start`); the synthetic text begins with it.
    """
    llm = ctx.llm
    prompt_cache: dict[int, tuple[int, ...]] = {}

    def prompt_of(u: int) -> tuple[int, ...]:
        if u not in prompt_cache:
            message = private_message(units[u].text)
            prompt_cache[u] = tuple(llm.chat_prompt_ids([message], ctx.max_prompt_tokens)[0])
        return prompt_cache[u]

    publics: list[tuple[int, ...]] = [()] * len(selected)
    if public_messages is not None:
        distinct = sorted(set(public_messages))
        ids = dict(zip(distinct, llm.chat_prompt_ids(distinct, ctx.max_prompt_tokens)))
        publics = [tuple(ids[m]) for m in public_messages]
    starts: list[tuple[int, ...]] = [()] * len(selected)
    if answer_starts is not None:
        starts = [tuple(llm.chat.tokenizer.encode(a, add_special_tokens=False)) if a else () for a in answer_starts]
    return [
        PredictionGroup(
            gid=r,
            prompt_ids=tuple(prompt_of(u) + starts[r] for u in members),
            public_prompt_ids=publics[r] + starts[r] if publics[r] else (),
            start_ids=starts[r],
        )
        for r, members in enumerate(selected)
    ]


@dataclass(frozen=True)
class GroupSource:
    """Groups built only once the private-prediction stage is charged: ``build(gids)`` returns the
    groups of those ids (drawing their rows, e.g. the Poisson subsample of §2.4.8, inside the stage)."""

    gids: tuple[int, ...]
    build: Callable[[Sequence[int]], list[PredictionGroup]]
