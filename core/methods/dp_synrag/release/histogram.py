"""Step 1 (docs/method.md §2.1): the keyword histogram h, released as h' = h + N(0, σ_h² I_|V|) (L2
sensitivity √K), and W, the cluster words read from h' by post-processing only.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from core.methods.base import MethodContext
from core.methods.dp_synrag.release.plan import DPSynRAGPlan
from core.methods.dp_synrag.vocab.vocabulary import Vocabulary, english_zipf, in_form
from core.privacy.forecast import significance_threshold  # the public topic threshold (one home: forecast)
from core.privacy.planner import STAGE_HISTOGRAM
from core.privacy.release import run_release


def keyword_histogram(keywords: Sequence[Sequence[str]], vocab: Vocabulary) -> np.ndarray:
    """h = sum over units of the one-hot vector of the unit's keyword set (|V| entries)."""
    h = np.zeros(len(vocab.words), dtype=np.float64)
    for words in keywords:
        for word in set(words):
            h[vocab.index[word]] += 1.0
    return h


def release_histogram(
    keywords: Sequence[Sequence[str]], vocab: Vocabulary, plan: DPSynRAGPlan, ctx: MethodContext
) -> np.ndarray:
    """h' = h + N(0, sigma_h^2 I): the checkpoint, or charged, counted, noised and saved (``run_release``)."""
    stage = plan.release(STAGE_HISTOGRAM)
    return run_release(
        stage, ctx, lambda: keyword_histogram(keywords, vocab),
        noise=lambda h: stage.noise(h, ctx.test_rng()), dump=lambda h: h.tolist(), load=np.asarray,
    )


def top_words(noisy_hist: np.ndarray, vocab: Vocabulary, R: int) -> list[str]:
    """W: the R words with the largest noisy counts, most frequent first (post-processing)."""
    order = np.argsort(-noisy_hist, kind="stable")[:R]
    return [vocab.words[i] for i in order]


def name_threshold(sigma_h: float, n_names: int) -> float:
    """The bar of a released corpus name (:func:`topic_words`): σ_h·√(2 ln n), the typical largest of n pure-noise
    draws (n ≥ 2). Public: σ_h and the number of released names only."""
    return sigma_h * float(np.sqrt(2.0 * np.log(max(n_names, 2))))


MOST_UNITS_SHARE = 0.5  # a word the released counts put in more than half of the units is the corpus's form, no topic
GENERIC_ZIPF = 5.5  # a word at least this common in English ("new", "help", "try", "people", "time") says no topic
FEWEST_SPECIFIC = 3  # generic words are left out only while at least this many others clear


def without_generic(words: Sequence[str]) -> list[str]:
    """``words`` less the generic ones (public English Zipf frequency ≥ GENERIC_ZIPF), unless fewer than
    FEWEST_SPECIFIC would remain. A tweet corpus of 600 released "new", "help" and "try" beside "ebola" and
    "weight" (round 4, session 11), and the writer turned "New." into a town's renaming: a topic a custodian
    can read names what units are about, which words that common do not."""
    specific = [w for w in words if english_zipf(w) < GENERIC_ZIPF]
    return specific if len(specific) >= FEWEST_SPECIFIC else list(words)


def topic_words(noisy_hist: np.ndarray, vocab: Vocabulary, R: int, sigma_h: float, mode: str = "specific",
                not_topics: frozenset[str] = frozenset(), size: float | None = None,
                corpus_names: frozenset[str] = frozenset()) -> list[str]:
    """W, the cluster words, chosen from the released histogram by post-processing only.

    ``"frequent"`` (SPEC §2.2 as written): the R largest noisy counts. ``"specific"``: among the
    words whose noisy count clears :func:`significance_threshold` (so the word is supported by
    real units, not noise), the R most *specific* ones by their public English frequency
    (:func:`core.methods.dp_synrag.vocab.vocabulary.english_zipf`): a disease or product name makes a topic, "weeks" or
    "patient" do not. Clusters are visited from the end of W (``soft_clusters``): "frequent" returns W most frequent
    first (SPEC §2.2: rarest visited first); "specific" least specific first, ties most frequent first, so the most
    specific word is visited first (docs/method.md §2.2). Fewer than R words may clear the threshold; then W is
    shorter.

    In "specific" mode two public rules keep the form out of the topics (docs/method.md §2.7): a word of
    ``not_topics`` (the document form's own words) is never one, nor, with a released size n' (``size``), a
    word whose noisy count exceeds half of n' (what most units say is how they are written, not what they are
    about). Nor is a generic English word while enough others clear (:func:`without_generic`). All read
    released or public values only.

    ``corpus_names``: the entries phrase discovery released that no public list holds (§2.0; public, DP outputs).
    Each already has about τ_p units behind it, so it needs no guard against the |V| pure-noise draws of the rest
    of V: it is significant when its noisy count reaches :func:`name_threshold` (the typical largest of that many
    pure-noise draws), not the whole vocabulary's threshold.
    """
    if mode == "frequent":
        return top_words(noisy_hist, vocab, R)
    if mode != "specific":
        raise ValueError(f"unknown topic word mode {mode!r}")
    bar = np.full(len(vocab.words), significance_threshold(sigma_h, len(vocab)))
    names = [vocab.index[w] for w in corpus_names if w in vocab.index]
    bar[names] = name_threshold(sigma_h, len(names))
    significant = np.flatnonzero(noisy_hist >= bar).tolist()
    most = MOST_UNITS_SHARE * size if size is not None else np.inf
    significant = [i for i in significant if not in_form(vocab.words[i], not_topics) and noisy_hist[i] <= most]
    kept = set(without_generic([vocab.words[i] for i in significant]))
    significant = [i for i in significant if vocab.words[i] in kept]
    significant.sort(key=lambda i: (english_zipf(vocab.words[i]), -noisy_hist[i]))
    chosen = sorted(significant[:R], key=lambda i: (-english_zipf(vocab.words[i]), -noisy_hist[i]))
    return [vocab.words[i] for i in chosen]
