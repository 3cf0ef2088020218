"""Step 4 (docs/method.md §2.4, §2.6): each cluster's text, as ``[dp_synrag] text`` says.

"private" and "realised+private" write by private prediction (``core.methods.private_prediction``) over
each cluster's rows; "topic_line" and "realised" are post-processing of the released topics, one document
per entry of the corpus's shape (``shape/corpus_shape.py``: documents allocated by released counts, docs/method.md §6.2). The public
writer's documents are checkpointed one by one as they are finished (``written_documents.py``), so a
resumed run writes only those it had not finished, and charges nothing for them; the private-prediction groups
over the clusters' rows are ``private_rows.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from core.corpus import Unit
from core.methods.base import MethodContext
from core.common.progress import ProgressEvent, StageProgress
import random
from core.methods.dp_synrag.release.plan import DPSynRAGPlan
from core.methods.dp_synrag.release.structure import ReleasedForms
from core.methods.dp_synrag.shape.corpus_shape import CorpusShape
from core.methods.dp_synrag.shape.released_topics import Topic
from core.methods.dp_synrag.write.drafts import clean_draft, fit_length, guarantee_words
from core.methods.dp_synrag.write.compounds import compound_topics
from core.methods.dp_synrag.write.content_terms import invented_terms
from core.methods.dp_synrag.write.form_writer import FormWriter, assign_forms
from core.methods.dp_synrag.write.roles import CONDITION
from core.methods.dp_synrag.write.slot_fillers import released_roles, role_filler
from core.methods.dp_synrag.write.public_decoding import writer_generator
from core.methods.dp_synrag.write.realisation import REALISATION_STAGE
from core.methods.dp_synrag.write.private_rows import GroupPrompts, group_source
from core.methods.dp_synrag.write.written_documents import realised_drafts
from core.methods.dp_synrag.write.writer_prompt import example_lead, form_rewrite_message
from core.methods.private_prediction.prompts import answer_start, public_message
from core.methods.private_prediction.stage import private_prediction
from core.models import threads
from core.privacy.planner import STAGE_TOKENS
from core.specs.document_forms import shipped_example
from core.specs.runspec import DPSynRAGSpec


@dataclass(frozen=True)
class DocumentForm:
    """The form the documents are written in (public): the corpus's own released forms when they are followed
    (``release/structure.follows_forms``), else the example the run shows (``examples.public_example``: the
    custodian's own or the shipped form's; "" none)."""

    example: str
    released: ReleasedForms | None = None


def written_in_forms(topics: Sequence[Topic], forms: ReleasedForms, spec: DPSynRAGSpec,
                     ctx: MethodContext) -> dict[int, str]:
    """Each topic's document in a released skeleton drawn by the skeletons' noisy counts (post-processing)."""
    skeletons = assign_forms(forms, len(topics), ctx.rng())
    progress = StageProgress(ctx.reporter, REALISATION_STAGE, len(topics)).start("Writing in the corpus's own forms")
    threads.match_free_cores()  # the roles are asked of the model before the writer's first batch chooses again
    roles = released_roles(ctx.llm, sorted({w for t in topics for w in t.words}), spec.domain_lists)
    writer = FormWriter(ctx.llm, writer_generator("cpu", ctx.test_seed), random.Random(int(ctx.rng().integers(2**63))),
                        roles)
    texts = writer.write(ctx.task, skeletons, compound_topics(ctx.llm, [(t.keyword, t.related) for t in topics], roles),
                         on_done=lambda i, _: progress.advance(), forms=forms)
    progress.finish()
    return {r: text for r, text in enumerate(texts) if text}


def named_topics(topics: Sequence[Topic], example: str, spec: DPSynRAGSpec, ctx: MethodContext) -> list[int]:
    """The documents the shipped form's writer writes: in the clinical note (``example`` is its shipped example), when
    some released word is typed as a condition, only those whose topic holds a word that names one
    (``slot_fillers.role_filler``); a topic of symptoms alone ("stiffness") has no impression to state, and the
    writer's own was fiction ("Impression: glaucoma"). Every document in any other form (a news article about "cancer"
    names no condition of its own). Public roles of released words and the public form: post-processing."""
    if example.strip() != shipped_example("clinical_note"):
        return list(range(len(topics)))
    roles = released_roles(ctx.llm, sorted({w for t in topics for w in t.words}), spec.domain_lists)
    if CONDITION not in roles.values():
        return list(range(len(topics)))
    named = [r for r, t in enumerate(topics) if role_filler(CONDITION, t.words, roles, t.keyword)]
    if len(named) < len(topics):
        ctx.reporter.emit(ProgressEvent(REALISATION_STAGE, "log", message=(
            f"{len(topics) - len(named)} of {len(topics)} documents not written: their topic names no condition")))
    return named


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
    if spec.text == "realised":  # a draft with nothing beyond the form's opening is not a document (public text),
        lead = example_lead(example)  # nor one stating a fact no released word holds (content_terms.py)
        named = named_topics(topics, example, spec, ctx)
        drafts = dict(zip(named, realised_drafts([topics[r] for r in named], example, spec, ctx, target)))
        texts = {r: fit_length(d.text, topics[r].words, target) for r, d in drafts.items() if d.written}
        known = frozenset(w for topic in topics for w in topic.words if " " in w)  # the run's released phrases
        return {r: t for r, t in texts.items() if not invented_terms([t], (*topics[r].words, lead), known)}
    drafts = realised_drafts(topics, example, spec, ctx, target)
    # "realised+private": the draft is the public row; every member rewrites its own document in the same form.
    rewrite = form_rewrite_message(example)
    lead = example_lead(example)
    prompts = GroupPrompts([rewrite(d.text) for d in drafts], [lead] * len(drafts), rewrite)
    groups = group_source(selected, noisy_counts, units, spec, plan, ctx, prompts)
    texts = private_prediction(
        groups, plan.release(STAGE_TOKENS), spec, ctx, private_message=rewrite
    )
    return {r: guarantee_words(clean_draft(t), topics[r].words)[0] for r, t in texts.items()}
