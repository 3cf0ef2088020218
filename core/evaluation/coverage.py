"""Model-independent coverage scores: how much of a held-out real collection a corpus carries.

Every score compares a corpus (synthetic, public-only or a real sample) with **held-out non-members**,
real documents no generator ever saw, so a corpus can only score well by carrying what the population
of real documents is about:

* ``best_cosine`` — for each held-out document, the cosine of its nearest corpus document in the
  embedder's space (MiniLM in the demo), averaged over the held-out documents;
* ``content_words`` — the share of the held-out documents' common content words (the ``COMMON_WORDS``
  words, not stop words, found in the most held-out documents) that occur anywhere in the corpus;
* ``mmd2`` — squared MMD (RBF, :func:`core.evaluation.quality.mmd_rbf`) between the corpus's and the
  held-out embeddings, beside ``mmd2_real`` — the same figure for a random sample of real *member*
  documents of the same size (the reference a reader understands: MMD² is biased upward for small sets);
* ``junk_rate``, ``distinct_2`` and ``mean_words`` of the corpus (:mod:`core.evaluation.quality`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from functools import cache

import numpy as np

from core.evaluation.quality import distinct_n, junk_rate, mmd_rbf
from core.methods.dp_synrag.vocab.vocabulary import load_stop_words

COMMON_WORDS = 200  # held-out content words scored by ``content_words``
MIN_WORD_LETTERS = 3
REAL_SAMPLE_DRAWS = 5  # random same-size real samples averaged for ``mmd2_real``
_WORD = re.compile(r"[^\W\d_]+")


@dataclass(frozen=True)
class CoverageScores:
    corpus: str
    kind: str  # "synthetic" | "public_only" | "real_sample"
    epsilon: float | None
    n_documents: int
    best_cosine: float
    content_words: float
    mmd2: float
    mmd2_real: float  # a same-size random real sample's MMD² to the same held-out documents
    junk_rate: float
    distinct_2: float
    mean_words: float

    def to_dict(self) -> dict:
        return asdict(self)


@cache
def _stop_words() -> frozenset[str]:
    return load_stop_words()


def content_words(text: str) -> set[str]:
    """Lower-cased alphabetic words of at least three letters that are not stop words."""
    stop = _stop_words()
    return {w for w in (m.lower() for m in _WORD.findall(text)) if len(w) >= MIN_WORD_LETTERS and w not in stop}


def common_content_words(texts: Sequence[str], top: int = COMMON_WORDS) -> list[str]:
    """The ``top`` content words found in the most documents (ties: alphabetical)."""
    df = Counter(w for t in texts for w in content_words(t))
    return [w for w, _ in sorted(df.items(), key=lambda item: (-item[1], item[0]))[:top]]


def content_word_share(corpus: Sequence[str], common: Sequence[str]) -> float:
    """Share of ``common`` words that occur in at least one corpus document (nan for no common words)."""
    if not common:
        return float("nan")
    present = set().union(*(content_words(t) for t in corpus)) if corpus else set()
    return sum(1 for w in common if w in present) / len(common)


def mean_best_cosine(held_out: np.ndarray, corpus: np.ndarray) -> float:
    """Mean over held-out rows of the largest cosine to any corpus row (rows L2-normalised here)."""
    if len(held_out) == 0 or len(corpus) == 0:
        return float("nan")
    a = held_out / np.maximum(np.linalg.norm(held_out, axis=1, keepdims=True), 1e-12)
    b = corpus / np.maximum(np.linalg.norm(corpus, axis=1, keepdims=True), 1e-12)
    return float(np.mean(np.max(a @ b.T, axis=1)))


def real_sample_mmd2(member_emb: np.ndarray, held_emb: np.ndarray, size: int, rng: np.random.Generator,
                     draws: int = REAL_SAMPLE_DRAWS) -> float:
    """Mean MMD² to the held-out documents of ``draws`` random samples of ``size`` member documents."""
    if size < 1 or len(member_emb) == 0:
        return float("nan")
    size = min(size, len(member_emb))
    values = [mmd_rbf(member_emb[rng.choice(len(member_emb), size, replace=False)], held_emb) for _ in range(draws)]
    return float(np.mean(values))


def coverage_scores(label: str, kind: str, epsilon: float | None, texts: Sequence[str], emb: np.ndarray,
                    held_emb: np.ndarray, common: Sequence[str], member_emb: np.ndarray,
                    rng: np.random.Generator) -> CoverageScores:
    """All coverage scores of one corpus against the held-out documents (``common`` from them)."""
    words = [len(t.split()) for t in texts]
    return CoverageScores(
        corpus=label,
        kind=kind,
        epsilon=epsilon,
        n_documents=len(texts),
        best_cosine=mean_best_cosine(held_emb, emb),
        content_words=content_word_share(texts, common),
        mmd2=mmd_rbf(emb, held_emb) if len(texts) else float("nan"),
        mmd2_real=real_sample_mmd2(member_emb, held_emb, len(texts), rng),
        junk_rate=junk_rate(texts),
        distinct_2=distinct_n(texts, 2),
        mean_words=float(np.mean(words)) if words else 0.0,
    )
