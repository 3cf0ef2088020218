"""The corpus's shape (docs/method.md §6.2): which topic each synthetic document describes, with which words.

Between the released topics (steps 1–2b) and the writer (step 4), for the public ways of writing
(``text = "realised"`` or ``"topic_line"``):

1. topics whose released descriptions say they are the same thing are merged (``merge.py``;
   ``[dp_synrag] merge_topics``), and topics with nothing behind them left out (``held_topics``) unless
   their own units stand for a topic while the held ones stand for less than the corpus (``standing_alone``);
2. the documents, N of them (``[dp_synrag] documents``), are allocated across the topics in proportion to
   the units their released counts say each cluster holds (``released_topics.unclaimed_units``), and each
   document's co-keywords are sampled from its topic's released co-keyword counts (``allocation.py``); with
   ``documents = 0`` each topic has one document naming all its co-keywords. With labels by topic every
   document gets its label here, before it is written (``topic_labels``: with N documents, labels first — N split by
   the released class counts, each label's among the topics by its released label counts;
   with one per topic, one draw per topic from its counts);
3. the realised documents' length: the form's public one, or the released DP length statistic (:func:`target_words`;
   ``release/length.py``, ``examples.form_length``).

Everything here reads released values and public settings only: post-processing, no privacy cost. The shape
is checkpointed (``corpus-shape``), so a resumed run writes the same documents and reuses those already
written. With a token stage (``"private"``, ``"realised+private"``) each cluster writes its one document, as
charged: nothing is merged or added.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Sequence

from core.common.checkpoints import Checkpoints
from core.methods.base import MethodContext
from core.methods.dp_synrag.release.clusters import CoKeywords
from core.methods.dp_synrag.release.length import MIN_WORDS
from core.methods.dp_synrag.release.topic_labels import ClusterLabels
from core.methods.dp_synrag.shape.allocation import ONE_PER_TOPIC, allocate, document_total, sample_co_keywords
from core.methods.dp_synrag.shape.labels import label_allocation, label_probabilities, systematic_labels, weights_of
from core.methods.dp_synrag.shape.merge import merge_topics
from core.methods.dp_synrag.shape.released_topics import ReleasedTopic, Topic, released_topics
from core.privacy.forecast import FEWEST_TOPICS  # below this many held topics, unheld ones are written too
from core.specs.runspec import DPSynRAGSpec

CHECKPOINT_SHAPE = "corpus-shape"


@dataclass(frozen=True)
class CorpusShape:
    """The (merged) topics, the documents each gets, and every document's topic and words, in writing order
    (a topic's documents together; document i is shown demonstration i mod n)."""

    topics: tuple[ReleasedTopic, ...]
    allocation: tuple[int, ...]
    documents: tuple[Topic, ...]
    groups: tuple[int, ...]  # per document: the index of its topic in ``topics``
    words_per_document: int = 0  # the length a realised document aims at (:func:`target_words`; 0: none)

    def to_dict(self) -> dict[str, Any]:
        return {"topics": [asdict(t) for t in self.topics], "allocation": list(self.allocation),
                "documents": [list(d.words) for d in self.documents], "groups": list(self.groups),
                "words_per_document": self.words_per_document, "labels": [d.label for d in self.documents]}

    @classmethod
    def from_dict(cls, saved: dict[str, Any]) -> CorpusShape:
        topics = tuple(ReleasedTopic(t["word"], float(t["count"]), tuple(t["co_keywords"]),
                                     tuple(float(c) for c in t["co_counts"]), tuple(int(c) for c in t["clusters"]),
                                     tuple(t.get("merged_words", ())), t.get("units"))
                       for t in saved["topics"])
        labels = list(saved.get("labels") or [""] * len(saved["documents"]))
        return cls(topics, tuple(int(a) for a in saved["allocation"]),
                   tuple(Topic(words[0], tuple(words[1:]), str(label))
                         for words, label in zip(saved["documents"], labels)),
                   tuple(int(g) for g in saved["groups"]), int(saved.get("words_per_document", 0)))


def one_per_topic(topics: Sequence[ReleasedTopic], M: int | None = None) -> CorpusShape:
    """Each topic's one document, naming the words merged into it and its first M released co-keywords (all
    when M is None)."""
    return CorpusShape(tuple(topics), (1,) * len(topics),
                       tuple(Topic(t.word, (*t.merged_words, *t.co_keywords[:M])) for t in topics),
                       tuple(range(len(topics))))


def sampled_shape(topics: Sequence[ReleasedTopic], total: int, ctx: MethodContext) -> CorpusShape:
    """``total`` documents allocated by released count, each with co-keywords sampled from its topic's
    released co-keyword counts (randomness: OS entropy, or the test mode's generator)."""
    allocation = allocate([t.size for t in topics], total)
    rng = ctx.rng()
    documents: list[Topic] = []
    groups: list[int] = []
    for g, (topic, n) in enumerate(zip(topics, allocation)):
        rates = topic.mention_rates()
        for _ in range(n):
            documents.append(Topic(topic.word, (*topic.merged_words, *sample_co_keywords(topic.co_keywords, rates, rng))))
            groups.append(g)
    return CorpusShape(tuple(topics), tuple(allocation), tuple(documents), tuple(groups))


def labelled_shape(topics: Sequence[ReleasedTopic], total: int, released: ClusterLabels, ctx: MethodContext
                   ) -> CorpusShape:
    """Labels by topic, labels first (docs/method.md §6.3): ``total`` documents split among the labels by the
    released class counts and each label's among the topics by its estimated units there
    (``labels.label_allocation``); every document is written for its label (a class-conditional prompt)
    with co-keywords sampled as in :func:`sampled_shape`. A topic's documents stay together, label by label."""
    per = label_allocation(topics, released, total)
    rng = ctx.rng()
    documents: list[Topic] = []
    groups: list[int] = []
    for g, topic in enumerate(topics):
        rates = topic.mention_rates()
        for j, label in enumerate(released.labels):
            for _ in range(int(per[g, j])):
                words = (*topic.merged_words, *sample_co_keywords(topic.co_keywords, rates, rng))
                documents.append(Topic(topic.word, words, label))
                groups.append(g)
    return CorpusShape(tuple(topics), tuple(int(n) for n in per.sum(axis=1)), tuple(documents), tuple(groups))


def labelled_one_per_topic(shape: CorpusShape, released: ClusterLabels, ctx: MethodContext) -> CorpusShape:
    """One document per topic, each given its label before writing as ``labels.label_documents`` would
    after (one systematic draw per topic from its released counts), so that it is written for that label."""
    probs = label_probabilities(weights_of(shape.topics, released), released.shares)
    rng = ctx.rng()
    labelled = []
    for doc, g in zip(shape.documents, shape.groups):
        labelled.append(replace(doc, label=released.labels[systematic_labels(probs[g], 1, float(rng.random()))[0]]))
    return replace(shape, documents=tuple(labelled))




def held_topics(topics: Sequence[ReleasedTopic], related: CoKeywords, fewest: int = FEWEST_TOPICS,
                labelled: ClusterLabels | None = None, size: float | None = None,
                min_units: float = math.inf) -> list[ReleasedTopic]:
    """The topics whose cluster is described or shown to hold units (``CoKeywords.held``, or with labels by topic
    ``ClusterLabels.holds``: the cluster's released label counts; ``labelled`` holds at least one label), and those
    that stand alone (:func:`standing_alone`), in their order; when fewer than ``fewest`` are, the others join them,
    the largest released count first, up to ``fewest``.

    A topic that released no co-keyword and whose cluster's released votes show no units was a word of units that
    more specific topics already describe (a templated corpus's wording, a symptom every condition note also
    names); written alone it is the public model's invention around one word, and a retriever returns it for
    every question that shares the word. A diverse corpus (news) clears few topics and describes fewer still:
    there its bare topic words are most of what was released, so a corpus too thin to share keeps them."""
    def holds(r: int) -> bool:
        return related.held(r) or (labelled is not None and labelled.holds(r))

    held = {i for i, t in enumerate(topics) if any(holds(r) for r in t.clusters)}
    held |= standing_alone(topics, held, size, min_units)
    others = sorted((i for i in range(len(topics)) if i not in held), key=lambda i: -topics[i].count)
    held |= set(others[: max(0, fewest - len(held))])
    return [t for i, t in enumerate(topics) if i in held]


def standing_alone(topics: Sequence[ReleasedTopic], held: set[int], size: float | None, min_units: float) -> set[int]:
    """The topics not held that are written all the same (docs/method.md §6.2): while the held topics stand for
    fewer units than the corpus holds (``size``: the released DP size count or the public bound), the others whose
    own units, as released values estimate them (``ReleasedTopic.size``: h'(w_r) less what other clusters' released
    co-keywords claim), reach ``min_units`` (the noisy count a word needs to be a topic at all, public), the
    largest first, until the topics written stand for the corpus.

    A diverse corpus (news) describes few of its topics: on 1,000 articles at ε = 10 the held topics stood for a
    third of the units, and "china" (83 units, none claimed by another topic) was left out while "trump" took
    three in ten documents. A drug whose notes its condition's co-keywords claim keeps almost nothing of its h'
    and stays out. Released values and public constants only: post-processing."""
    if size is None:
        return set()
    covered = sum(max(topics[i].size, 0.0) for i in held)
    chosen: set[int] = set()
    for i in sorted((i for i in range(len(topics)) if i not in held), key=lambda i: -topics[i].size):
        if covered >= size or topics[i].size < min_units:
            break
        chosen.add(i)
        covered += topics[i].size
    return chosen


def shape_key(topics: Sequence[ReleasedTopic], spec: DPSynRAGSpec, total: int, length: int,
              labelled: ClusterLabels | None = None) -> list[Any]:
    """What a checkpointed shape must match to be reused: the released topics (and label counts) and the public
    settings."""
    key = [[asdict(t) for t in topics], total, spec.documents, spec.merge_topics, spec.cluster_keywords, length]
    if labelled is not None and labelled.labels:
        key.append([list(labelled.labels), labelled.noisy.tolist(), list(labelled.shares)])
    return key


@dataclass(frozen=True)
class Releases:
    """The released values a shape is made of (steps 0–2c): the cluster words W, their counts h'(w_r), the
    co-keywords, the size count n̂ and the length statistic (None when not released), and the clusters' label counts
    (labels by topic)."""

    W: Sequence[str]
    counts: Sequence[float]
    related: CoKeywords
    size: float | None = None
    length: float | None = None
    labelled: ClusterLabels | None = None


def shape_corpus(released: Releases, spec: DPSynRAGSpec, ctx: MethodContext, min_units: float = math.inf,
                 shipped_length: int = 0) -> CorpusShape:
    """The shape of the corpus to write (post-processing of the released W, h'(w_r), co-keywords, size and
    length statistic, of the topics' released label counts with labels by topic, and of public settings).
    ``min_units``: the noisy count a word needs to be a topic (``significance_threshold``, public), which a topic
    not held must reach in its own units to stand alone (:func:`standing_alone`); infinite: none does.
    ``shipped_length``: the median length of the form's shipped demonstrations (``examples.form_length``; 0: none)."""
    related, size, length, labelled = released.related, released.size, released.length, released.labelled
    topics = released_topics(released.W, released.counts, related, spec.clusters_per_unit)
    if spec.token_stage:
        if spec.documents_setting != ONE_PER_TOPIC:  # automatic: one per topic, as charged
            raise ValueError("documents applies to the public ways of writing only")
        return one_per_topic(topics)
    if spec.merge_topics:
        topics = merge_topics(topics)  # a topic with no co-keyword never merges: held_topics sees it alone
    labels = labelled if labelled is not None and labelled.labels else None
    n = float(spec.size_bound) if spec.size_bound else size
    topics = held_topics(topics, related, labelled=labels, size=n, min_units=min_units)
    total = document_total(spec.documents_setting, len(topics), n, sum(max(t.size, 1.0) for t in topics))
    words = target_words(spec, length, shipped_length) if spec.text == "realised" else 0
    key = json.loads(json.dumps(shape_key(topics, spec, total, words, labels)))
    if ctx.checkpoints.has(CHECKPOINT_SHAPE):
        saved = ctx.checkpoints.load(CHECKPOINT_SHAPE)
        if isinstance(saved, dict) and saved.get("key") == key:
            return CorpusShape.from_dict(saved["shape"])
    if spec.documents_setting == ONE_PER_TOPIC:
        shape = one_per_topic(topics, spec.cluster_keywords)
        shape = shape if labels is None else labelled_one_per_topic(shape, labels, ctx)
    elif labels is not None:
        shape = labelled_shape(topics, total, labels, ctx)
    else:
        shape = sampled_shape(topics, total, ctx)
    shape = replace(shape, words_per_document=words)
    ctx.checkpoints.save(CHECKPOINT_SHAPE, {"key": key, "shape": shape.to_dict()})
    return shape


def released_allocation(run_dir: Path | str, method: str = "dp_synrag") -> list[tuple[str, float, int]]:
    """A finished run's allocation, for the Review page: each topic's word, released count and documents
    (released values and their post-processing only; [] when the run kept no shape). With a label column,
    every class's topics, one after another."""
    root = Path(run_dir) / "checkpoints" / method
    folders = [root, *sorted(p for p in root.glob("class-*") if p.is_dir())] if root.is_dir() else []
    out: list[tuple[str, float, int]] = []
    for folder in folders:
        store = Checkpoints(folder)
        if not store.has(CHECKPOINT_SHAPE):
            continue
        try:
            shape = CorpusShape.from_dict(store.load(CHECKPOINT_SHAPE)["shape"])
        except (KeyError, TypeError, ValueError):
            continue
        out += [(t.word, t.count, n) for t, n in zip(shape.topics, shape.allocation)]
    return out


def target_words(spec: DPSynRAGSpec, released: float | None, shipped_length: int) -> int:
    """The words a realised document aims at: the released DP median, the form's public length (``shipped_length``,
    ``examples.form_length``), or 0 (none)."""
    if spec.length_setting == "dp":
        if released is None and spec.length == "auto":  # shaped without the run's release (the plan draws it)
            return shipped_length
        if released is None:
            raise ValueError('length = "dp" needs the released length statistic')
        return max(round(released), MIN_WORDS)
    return shipped_length if spec.length_setting == "form" else 0
