"""DP-SynRAG (SPEC §2, seed 000) as Algorithm 1: pay once at build time, query the synthetic corpus for free.

``run_dp_synrag`` reads as the paper's steps; each calls the package for what it does: ``release/`` (every charged
stage), ``shape/`` (the corpus's shape, post-processing of released values) and ``write/`` (the documents).

0. **First releases** (:func:`release_first`): a DP count of the units (``release/size.py``), from which the
   adaptive default chooses R (and k) when the spec leaves them to it (``shape/adaptive.py``; docs/method.md §2.7);
   with ``length = "dp"`` a DP median of the units' lengths (``release/length.py``; §6.2); **phrase discovery**
   (``release/phrases.py``; §2.0): the corpus's own phrases by DP set union extend V; **structure discovery**
   (``release/structure.py``; §2.0b): the corpus's own document forms (skeletons) by two DP set unions.
1. **Keyword histogram** (:func:`release_topics`; ``release/keywords.py``, ``release/histogram.py``): K keywords per
   unit from the public V; release h' = h + N(0, σ_h² I_|V|) and read the cluster words W from it.
2. **Soft clustering** (``release/clusters.py``): C_r for r = R .. 1, each unit in ≤ L clusters; 2b: each
   cluster's co-keywords by one Gaussian release of every cluster's votes; 2c (with ``[data] label_mode =
   "topic_labels"``, ``release/topic_labels.py``): every cluster's label counts, one Gaussian release.
3. **Retrieval refinement** (``release/refinement.py``): noisy centre μ_r and threshold θ_r; S_r ⊆ C_r.
   **Shape** (``shape/corpus_shape.py``; §6.2): topics that describe the same thing merged, N documents allocated
   by the released counts, each document's co-keywords sampled from its topic's released counts, and its label
   (``shape/labels.py``): post-processing.
4. **Text** (``write/text.py``): private prediction over S_r (``core.methods.private_prediction``), or a public
   realisation of the released topics, in the corpus's own released forms when they stand for enough of the corpus
   (``write/form_writer.py``), else in the shipped form (``write/realisation.py``); near-duplicates dropped
   (``write/dedup.py``, public text only), and a realised document a reader would discard (``core.common.junk``:
   meta-text, an echoed instruction, a bare "Key terms" line).
5. **Self-filter** (``core.methods.private_prediction.self_filter``): post-processing.

Every DP stage is a release of the plan (``core.privacy.release``): checkpointed, or charged before it
draws. Steps 2–4 run on every cluster; each unit lies in at most L of them and membership depends only
on the unit and the released W, so they cost L times one cluster's budget.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from core.corpus import Unit
from core.common.junk import without_junk
from core.methods.base import MethodContext, SyntheticDoc
from core.methods.dp_synrag.release.clusters import co_keywords, soft_clusters
from core.methods.dp_synrag.release.histogram import release_histogram, topic_words
from core.methods.dp_synrag.release.keywords import extract_keywords
from core.methods.dp_synrag.release.length import release_length
from core.methods.dp_synrag.release.phrases import discover_phrases
from core.methods.dp_synrag.release.plan import DPSynRAGPlan
from core.methods.dp_synrag.release.refinement import refine
from core.methods.dp_synrag.release.row_bound import cluster_counts
from core.methods.dp_synrag.release.size import release_size
from core.methods.dp_synrag.release.structure import ReleasedForms, discover_forms, followable, follows_forms
from core.methods.dp_synrag.release.topic_labels import release_cluster_labels
from core.methods.dp_synrag.shape.adaptive import chosen_settings_words, with_size
from core.methods.dp_synrag.shape.corpus_shape import CorpusShape, Releases, shape_corpus
from core.methods.dp_synrag.shape.examples import form_length, form_reference, form_words
from core.methods.dp_synrag.shape.labels import label_documents
from core.methods.dp_synrag.vocab.vocabulary import Vocabulary
from core.methods.dp_synrag.write.content_terms import public_terms
from core.methods.dp_synrag.write.dedup import drop_near_duplicates
from core.methods.dp_synrag.write.text import DocumentForm, write_texts
from core.methods.private_prediction.self_filter import self_filter
from core.privacy.forecast import significance_threshold
from core.specs.runspec import DPSynRAGSpec


@dataclass
class DPSynRAGResult:
    documents: list[SyntheticDoc]
    # On-screen diagnostics for the custodian only: computed on private data, never exported.
    private_diagnostics: dict[str, int] = field(default_factory=dict)
    settings: DPSynRAGSpec | None = None  # the settings that ran (R, k chosen from the released size)
    settings_note: str = ""  # the certificate's words on what the adaptive default chose (public)
    forms: ReleasedForms = field(default_factory=ReleasedForms)  # the corpus's own forms released (§2.0b)
    followed_forms: bool = False  # whether the documents were written in them (else in the shipped fallback form)


@dataclass(frozen=True)
class FirstReleases:
    """Step 0's released values, and the settings the adaptive default chose from them (public)."""

    size: float | None  # n̂ (None when no setting waits for it)
    length: float | None  # the DP length statistic (None unless asked for)
    vocab: Vocabulary  # V with the corpus's own released phrases
    names: frozenset[str]  # those phrases: the corpus's own released names (§2.0)
    forms: ReleasedForms  # the corpus's own released document forms (§2.0b)
    spec: DPSynRAGSpec  # the settings that run (R, k chosen from n̂)
    note: str  # the certificate's words on what the adaptive default chose


@dataclass(frozen=True)
class ReleasedTopics:
    """Steps 1–2c's released values (and the private clusters, which never leave the run)."""

    clusters: list[list[int]]  # C_r (private: membership of the units)
    releases: Releases  # W, h'(w_r), the co-keywords, n̂, the length, the label counts
    support: float  # the units a word needs to be a topic (public)


def run_dp_synrag(units: Sequence[Unit], vocab: Vocabulary, spec: DPSynRAGSpec, example: str, plan: DPSynRAGPlan,
                  ctx: MethodContext) -> DPSynRAGResult:
    """Algorithm 1 on ``units``. ``example``: the example of the document form the run shows (``[document]``'s,
    read by ``examples.public_example``; public, "" none)."""
    first = release_first(units, vocab, spec, plan, ctx)  # step 0: n̂, the length, the corpus's phrases and forms
    spec = first.spec
    topics = release_topics(units, first, not_topics(example, first.forms), plan, ctx)  # steps 1–2c: h', W, C_r, …
    selected = refine(units, topics.clusters, spec, plan, ctx)  # step 3: S_r ⊆ C_r
    shape = shape_corpus(topics.releases, spec, ctx, topics.support, form_length(example))  # post-processing
    followed = follows_forms(first.forms, spec.size_bound or first.size)
    own_forms = followable(first.forms) if followed else None  # else the shipped form
    form = DocumentForm(example, own_forms)
    texts = drop_near_duplicates(
        write_texts(units, shape, selected, topics.releases.counts, spec, plan, ctx, form))  # step 4
    readable = without_junk(texts, [ctx.task]) if spec.realisation else texts  # what a reader would discard
    # step 5, the self-filter; a document written in a released form of the corpus is in its form by construction:
    # the filter, which compares a text with the task's words, has nothing to add there and drops real-looking records
    reference = own_forms.skeletons[0] if own_forms else form_reference(example)  # a public document of the form
    kept = self_filter(readable, ctx, spec.self_filter and own_forms is None, spec.self_filter_mode, reference)
    documents = label_documents(synthetic_docs(kept, shape), shape, topics.releases.labelled, ctx)  # post-processing
    return DPSynRAGResult(documents, diagnostics(topics.clusters, selected, texts, readable, documents,
                                                 spec.min_cluster_size), spec, first.note, first.forms,
                          own_forms is not None)


def release_first(units: Sequence[Unit], vocab: Vocabulary, spec: DPSynRAGSpec, plan: DPSynRAGPlan,
                  ctx: MethodContext) -> FirstReleases:
    """Step 0: the size count and the length statistic (when a setting waits for them), the corpus's own phrases
    and document forms; then R (and k) chosen from the released size (the adaptive default, public rules)."""
    size = release_size(units, plan, ctx)
    length = release_length(units, plan, ctx)
    with_phrases = discover_phrases(units, vocab, plan, ctx)
    forms = discover_forms(units, plan, ctx)
    names = frozenset(with_phrases.words) - frozenset(vocab.words)
    chosen = with_size(spec, size, plan.sigma_h, len(with_phrases))
    return FirstReleases(size, length, with_phrases, names, forms, chosen, chosen_settings_words(spec, chosen, size))


def not_topics(example: str, forms: ReleasedForms) -> frozenset[str]:
    """The words no topic is (public): the shown form's (``form_words``) and the released skeletons' fixed words
    ("wk" in "Review in [number] wk."), how a document is written, not what it is about; a public condition or
    symptom name (ICD-10-CM) in a skeleton stays a topic word (a form kept for one condition: "Asthma review")."""
    return form_words(example) | (forms.fixed_words() - public_terms())


def release_topics(units: Sequence[Unit], first: FirstReleases, form: frozenset[str], plan: DPSynRAGPlan,
                   ctx: MethodContext) -> ReleasedTopics:
    """Steps 1–2c: each unit's keywords, the noisy histogram h' and the cluster words W read from it, the soft
    clusters C_r, every cluster's co-keywords and (labels by topic) its label counts. ``form``: the words of the
    document form (public: how a document is written, never a topic)."""
    spec, vocab = first.spec, first.vocab
    keywords = extract_keywords(units, ctx.llm, vocab, spec.K, ctx, spec.keywords, form)  # step 1
    noisy_hist = release_histogram(keywords, vocab, plan, ctx)
    W = topic_words(noisy_hist, vocab, spec.R, plan.sigma_h, spec.topic_words, form, spec.size_bound or first.size,
                    first.names if spec.name_topics else frozenset())
    clusters = soft_clusters(keywords, W, spec.L)  # step 2
    related = co_keywords(keywords, clusters, W, noisy_hist, vocab, spec.R, plan, ctx)  # step 2b
    labelled = release_cluster_labels(units, clusters, ctx)  # step 2c: label counts (label_mode "topic_labels")
    topic_counts = cluster_counts(noisy_hist, vocab.index, W)  # h'(w_r), released: the row bound's rates
    support = significance_threshold(plan.sigma_h, len(vocab))  # the units a word needs to be a topic (public)
    return ReleasedTopics(clusters, Releases(W, topic_counts, related, first.size, first.length, labelled), support)


def synthetic_docs(texts: dict[int, str], shape: CorpusShape) -> list[SyntheticDoc]:
    """The kept texts as synthetic documents, each with its topic's group and label (public)."""
    return [SyntheticDoc(id=f"syn-{i:04d}", text=text, group=shape.groups[i], label=shape.documents[i].label)
            for i, text in sorted(texts.items())]


def diagnostics(
    clusters: Sequence[Sequence[int]], selected: Sequence[Sequence[int]], texts: dict[int, str],
    readable: dict[int, str], documents: Sequence[SyntheticDoc], min_cluster_size: int,
) -> dict[str, int]:
    """Counts for the custodian's screen (computed on private data: never exported)."""
    return {
        "clusters": len(clusters),
        "low_signal_clusters": sum(1 for s in selected if len(s) < min_cluster_size),
        "empty_clusters": sum(1 for s in selected if not s),
        "generated": len(texts),
        "dropped_as_junk": len(texts) - len(readable),
        "kept_after_self_filter": len(documents),
    }
