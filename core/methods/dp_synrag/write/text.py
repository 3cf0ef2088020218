"""Step 4 (docs/method.md §2.4, §2.6): each cluster's text, as ``[dp_synrag] text`` says.

"private" and "realised+private" write by private prediction (``core.methods.private_prediction``) over
each cluster's rows; "topic_line" and "realised" are post-processing of the released topics, one document
per entry of the corpus's shape (``shape/corpus_shape.py``: documents allocated by released counts, docs/method.md §6.2). The public
writer's documents are checkpointed one by one as they are finished (``written_documents.py``), so a
resumed run writes only those it had not finished, and charges nothing for them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, NamedTuple, Sequence

from core.corpus import Unit
from core.methods.base import MethodContext
from core.common.progress import StageProgress
import random
from core.methods.dp_synrag.release.plan import DPSynRAGPlan
from core.methods.dp_synrag.release.row_bound import poisson_subsample, subsample_rates
from core.methods.dp_synrag.release.structure import ReleasedForms
from core.methods.dp_synrag.shape.corpus_shape import CorpusShape
from core.methods.dp_synrag.shape.released_topics import Topic
from core.methods.dp_synrag.write.drafts import clean_draft, fit_length, guarantee_words
from core.methods.dp_synrag.write.form_writer import FormWriter, assign_forms
from core.methods.dp_synrag.write.slot_fillers import released_roles
from core.methods.dp_synrag.write.public_decoding import writer_generator
from core.methods.dp_synrag.write.realisation import REALISATION_STAGE, Realisation, WriterSettings, realise
from core.methods.dp_synrag.write.roles import RoleSources
from core.methods.dp_synrag.write.writer_prompt import example_lead, form_rewrite_message
from core.methods.dp_synrag.write.written_documents import load_written, save_written, writing_key
from core.methods.private_prediction.engine import PredictionGroup
from core.methods.private_prediction.groups import GroupSource, build_groups
from core.methods.private_prediction.prompts import answer_start, public_message, rephrase_message
from core.methods.private_prediction.stage import private_prediction
from core.privacy.planner import STAGE_TOKENS
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


@dataclass(frozen=True)
class DocumentForm:
    """The form the documents are written in (public): the corpus's own released forms when they are followed
    (``release/structure.follows_forms``), else the example the run shows (``examples.public_example``: the
    custodian's own or the shipped form's; "" none)."""

    example: str
    released: ReleasedForms | None = None


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


def realised_drafts(topics: Sequence[Topic], example: str, spec: DPSynRAGSpec, ctx: MethodContext,
                    target_words: int = 0) -> list[Realisation]:
    """The public writer's document of each topic (post-processing of released topics: no charge), aiming at
    ``target_words`` (0: the form's sentences). Each is
    checkpointed as soon as it is final; a resumed run reuses those written for the same topic and settings
    (``written_documents``) and writes only the rest, so resuming the writing charges nothing."""
    key = writing_key(ctx.task, example, spec.realisation_tokens, target_words)
    done = load_written(ctx.checkpoints, topics, key)

    def keep(index: int, doc: Realisation) -> None:
        save_written(ctx.checkpoints, index, topics[index], key, doc)

    settings = WriterSettings(
        spec.realisation_tokens, max_prompt_tokens=ctx.max_prompt_tokens,
        generator=writer_generator(ctx.llm.device, ctx.test_seed),  # OS entropy; seeded in test mode
        roles=RoleSources.of(spec.domain_lists),  # public role sources (docs/method.md §2.4c)
        target_words=target_words)
    return realise(topics, ctx.task, example, ctx.llm, ctx.reporter, settings, finished=done, on_final=keep)


def written_in_forms(topics: Sequence[Topic], forms: ReleasedForms, spec: DPSynRAGSpec,
                     ctx: MethodContext) -> dict[int, str]:
    """Each topic's document in a released skeleton drawn by the skeletons' noisy counts (post-processing)."""
    skeletons = assign_forms(forms, len(topics), ctx.rng())
    progress = StageProgress(ctx.reporter, REALISATION_STAGE, len(topics)).start("Writing in the corpus's own forms")
    roles = released_roles(ctx.llm, sorted({w for t in topics for w in t.words}), spec.domain_lists)
    writer = FormWriter(ctx.llm, writer_generator("cpu", ctx.test_seed), random.Random(int(ctx.rng().integers(2**63))),
                        roles)
    texts = writer.write(ctx.task, skeletons, [(t.keyword, t.related) for t in topics],
                         on_done=lambda i, _: progress.advance(), forms=forms)
    progress.finish()
    return {r: text for r, text in enumerate(texts) if text}


def write_texts(
    units: Sequence[Unit],
    shape: CorpusShape,
    selected: list[list[int]],
    noisy_counts: Sequence[float],
    spec: DPSynRAGSpec,
    plan: DPSynRAGPlan,
    ctx: MethodContext,
    form: DocumentForm,
) -> dict[int, str]:
    """Each document's text, keyed by its index in ``shape.documents``, as ``[dp_synrag] text`` says
    (docs/method.md §2.4 and §2.6).

    Only "private" and "realised+private" read private documents (step 4, charged when it starts); their
    shape is one document per cluster (``shape/corpus_shape.py``). "topic_line" and "realised" are post-processing of the
    released topics: one document per entry of the shape, however many it holds (docs/method.md §6.2).
    """
    topics = list(shape.documents)
    W, related = [t.keyword for t in topics], [t.related for t in topics]
    if spec.text == "topic_line":
        mode = spec.answer_start if spec.answer_start != "none" else "keywords"
        return {r: answer_start(mode, w, rel) for r, (w, rel) in enumerate(zip(W, related))}
    if spec.text == "private":
        messages = (
            [public_message(spec.public_row, ctx.task, w, rel) for w, rel in zip(W, related)]
            if spec.public_row != "none"
            else None
        )
        starts = [answer_start(spec.answer_start, w, rel) for w, rel in zip(W, related)]
        groups = group_source(selected, noisy_counts, units, spec, plan, ctx, GroupPrompts(messages, starts))
        return private_prediction(groups, plan.release(STAGE_TOKENS), spec, ctx)
    if form.released is not None and spec.text == "realised":  # the corpus's own released forms (§2.6b)
        return written_in_forms(topics, form.released, spec, ctx)
    example = form.example
    # the form's length or the released one (docs/method.md §6.2); a private rewrite aims at none
    target = shape.words_per_document if spec.text == "realised" else 0
    drafts = realised_drafts(topics, example, spec, ctx, target)
    if spec.text == "realised":  # a draft with nothing beyond the form's opening is not a document (public text)
        return {r: fit_length(d.text, topics[r].words, target) for r, d in enumerate(drafts) if d.written}
    # "realised+private": the draft is the public row; every member rewrites its own document in the same form.
    rewrite = form_rewrite_message(example)
    lead = example_lead(example)
    prompts = GroupPrompts([rewrite(d.text) for d in drafts], [lead] * len(drafts), rewrite)
    groups = group_source(selected, noisy_counts, units, spec, plan, ctx, prompts)
    texts = private_prediction(
        groups, plan.release(STAGE_TOKENS), spec, ctx, private_message=rewrite
    )
    return {r: guarantee_words(clean_draft(t), topics[r].words)[0] for r, t in texts.items()}
