"""DP-SynRAG (SPEC §2, seed 000) as Algorithm 1: pay once at build time, query the synthetic corpus for free.

``run_dp_synrag`` calls one function per step, each in the module named for it:

0. **Size** (``size``, ``adaptive``; docs/method.md §2.7): a DP count of the units, from which the adaptive
   default chooses R (and k) when the spec leaves them to it; with ``length = "dp"`` a DP median of the
   units' lengths (``length``; §6.2). **Phrase discovery** (``phrases``; §2.0): the
   corpus's own phrases by DP set union extend V. **Structure discovery** (``structure``; §2.0b): the corpus's own
   document forms (skeletons) by two DP set unions; the public writer follows them (``form_writer``) when they
   stand for enough of the corpus, else the shipped form.
1. **Keyword histogram** (``keywords``, ``histogram``): K keywords per unit from the public V; release
   h' = h + N(0, σ_h² I_|V|) and read the cluster words W from it.
2. **Soft clustering** (``clusters``): C_r for r = R .. 1, each unit in ≤ L clusters; 2b: each
   cluster's co-keywords by one Gaussian release of every cluster's votes; 2c (with ``[data] label_mode =
   "topic_labels"``, ``topic_labels``): every cluster's label counts, one Gaussian release, from which each
   document takes its label (post-processing). **Shape** (``shape``; §6.2):
   topics that describe the same thing merged, N documents allocated by the released counts, each
   document's co-keywords sampled from its topic's released counts (post-processing).
3. **Retrieval refinement** (``refinement``): noisy centre μ_r and threshold θ_r; S_r ⊆ C_r.
4. **Text** (``text``): private prediction over S_r (``core.methods.private_prediction``), or a public
   realisation of the released topics; near-duplicates dropped (``dedup``, public text only), and a realised
   document a reader would discard (``core.common.junk``: meta-text, an echoed instruction, a bare "Key terms" line).
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
from core.methods.dp_synrag.adaptive import chosen_settings_words, with_size
from core.methods.dp_synrag.clusters import co_keywords, soft_clusters
from core.methods.dp_synrag.dedup import drop_near_duplicates
from core.methods.dp_synrag.histogram import release_histogram, topic_words
from core.methods.dp_synrag.keywords import extract_keywords
from core.methods.dp_synrag.length import release_length
from core.methods.dp_synrag.phrases import discover_phrases
from core.methods.dp_synrag.refinement import refine
from core.methods.dp_synrag.structure import ReleasedForms, discover_forms, follows_forms
from core.methods.dp_synrag.row_bound import cluster_counts
from core.methods.dp_synrag.shape import shape_corpus
from core.methods.dp_synrag.size import release_size
from core.methods.dp_synrag.text import write_texts
from core.methods.dp_synrag.topic_labels import label_documents, release_cluster_labels
from core.methods.dp_synrag.vocabulary import Vocabulary
from core.methods.dp_synrag.realisation import form_reference, form_words
from core.methods.private_prediction.self_filter import self_filter
from core.methods.dp_synrag.plan import DPSynRAGPlan
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


def run_dp_synrag(
    units: Sequence[Unit], vocab: Vocabulary, spec: DPSynRAGSpec, plan: DPSynRAGPlan, ctx: MethodContext
) -> DPSynRAGResult:
    size = release_size(units, plan, ctx)  # step 0: n̂ (when a setting waits for it)
    length = release_length(units, plan, ctx)  # and the DP length statistic (when asked for)
    public_vocab, vocab = vocab, discover_phrases(units, vocab, plan, ctx)
    forms = discover_forms(units, plan, ctx)  # step 0b: the corpus's own document forms (§2.0b)
    names = frozenset(vocab.words) - frozenset(public_vocab.words)  # the corpus's own released names (§2.0)
    chosen = with_size(spec, size, plan.sigma_h, len(vocab))
    spec, note = chosen, chosen_settings_words(spec, chosen, size)
    form = form_words(spec.document_form, spec.public_example)  # public: how a document is written
    keywords = extract_keywords(units, ctx.llm, vocab, spec.K, ctx, spec.keywords, form)  # step 1
    noisy_hist = release_histogram(keywords, vocab, plan, ctx)
    W = topic_words(noisy_hist, vocab, spec.R, plan.sigma_h, spec.topic_words,
                    form, spec.size_bound or size,
                    names if spec.name_topics else frozenset())
    clusters = soft_clusters(keywords, W, spec.L)  # step 2
    related = co_keywords(keywords, clusters, W, noisy_hist, vocab, spec.R, plan, ctx)  # step 2b
    labelled = release_cluster_labels(units, clusters, ctx)  # step 2c: label counts (label_mode "topic_labels")
    selected = refine(units, clusters, spec, plan, ctx)  # step 3
    topic_counts = cluster_counts(noisy_hist, vocab.index, W)  # h'(w_r), released: the row bound's rates
    support = significance_threshold(plan.sigma_h, len(vocab))  # the units a word needs to be a topic (public)
    shape = shape_corpus(W, topic_counts, related, size, length, spec, ctx, labelled, support)  # documents per topic
    own_forms = forms if follows_forms(forms, spec.size_bound or size) else None  # else the shipped form (fallback)
    texts = drop_near_duplicates(write_texts(units, shape, selected, topic_counts, spec, plan, ctx, own_forms))  # step 4
    readable = without_junk(texts, [ctx.task]) if spec.realisation else texts  # what a reader would discard
    reference = own_forms.skeletons[0] if own_forms else form_reference(spec.document_form, spec.public_example)
    # step 5; a document written in a released form of the corpus is in its form by construction: the filter, which
    # compares a text with the task's words, has nothing to add there and drops real-looking records (docs/method.md §2.5)
    kept = self_filter(readable, ctx, spec.self_filter and own_forms is None, spec.self_filter_mode, reference)
    documents = [SyntheticDoc(id=f"syn-{i:04d}", text=text, group=shape.groups[i], label=shape.documents[i].label)
                 for i, text in sorted(kept.items())]
    documents = label_documents(documents, shape, labelled, ctx)  # each its topic's label: post-processing
    return DPSynRAGResult(documents, diagnostics(clusters, selected, texts, readable, documents, spec.min_cluster_size),
                          spec, note, forms, own_forms is not None)


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
