"""Step 2 (docs/method.md §2.2): soft clusters C_r, visited from the end of W, each unit in at most L of them;
step 2b (§2.2b): each cluster's co-keywords, one Gaussian release of every cluster's vote counts.

Membership depends only on the unit and the released W, so the cluster stages compose in parallel
(each unit in ≤ L clusters). Co-keyword candidates are the 4·|W| words with the largest noisy counts (public);
each member of C_r votes for its M most specific candidates other than w_r (L2 sensitivity √(L·M)).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from core.methods.base import MethodContext
from core.methods.dp_synrag.release.cluster_index import cluster_keyword_counts_indexed, soft_clusters_indexed
from core.methods.dp_synrag.release.histogram import top_words
from core.methods.dp_synrag.release.plan import DPSynRAGPlan
from core.methods.dp_synrag.vocab.vocabulary import Vocabulary, english_zipf
from core.privacy.planner import STAGE_CLUSTER_KEYWORDS
from core.privacy.release import run_release


def soft_clusters(keywords: Sequence[Sequence[str]], W: Sequence[str], L: int) -> list[list[int]]:
    """C_1..C_R (indices into the units), built from the end of W (``topic_words``: the rarest word first, or
    the most specific); each unit in <= L clusters.

    C_r takes, in unit order, every unit whose keywords contain w_r and that is in fewer than L
    clusters so far (an inverted index reads each unit once: ``cluster_index``)."""
    return soft_clusters_indexed(keywords, W, L)


CANDIDATES_PER_CLUSTER = 4  # the co-keyword candidates: 4 per cluster, the words with the largest noisy counts


def cluster_keyword_candidates(noisy_hist: np.ndarray, vocab: Vocabulary, R: int) -> list[str]:
    """The words a cluster may release as co-keywords: the ``4R`` largest noisy counts for R clusters (the run
    passes |W| ≤ R, the clusters there are; post-processing of the released histogram, so public), most frequent
    first."""
    return top_words(noisy_hist, vocab, CANDIDATES_PER_CLUSTER * R)


def cluster_keyword_votes(unit_keywords: Sequence[str], word: str, candidates: dict[str, int], M: int) -> list[int]:
    """Which candidates one unit votes for in the cluster of ``word``: its M most specific candidate
    keywords other than ``word`` (rarest in general English first). A function of the unit and of
    public values only, so one unit casts at most M votes in each of its at most L clusters."""
    mine = sorted({w for w in unit_keywords if w in candidates and w != word}, key=lambda w: (english_zipf(w), w))
    return [candidates[w] for w in mine[:M]]


def cluster_keyword_counts(
    keywords: Sequence[Sequence[str]], clusters: Sequence[Sequence[int]], W: Sequence[str], candidates: Sequence[str],
    M: int,
) -> np.ndarray:
    """The R × |candidates| vote counts (one row per cluster): each member of C_r votes as
    :func:`cluster_keyword_votes` says (each unit's candidates ranked once: ``cluster_index``).
    Adding or removing one unit changes at most M entries in each of at most L rows, by 1 each:
    L2 sensitivity sqrt(L·M)."""
    return cluster_keyword_counts_indexed(keywords, clusters, W, candidates, M, english_zipf)


def release_cluster_keywords(
    keywords: Sequence[Sequence[str]], clusters: Sequence[Sequence[int]], W: Sequence[str], candidates: Sequence[str],
    plan: DPSynRAGPlan, ctx: MethodContext,
) -> np.ndarray:
    """The checkpoint, or charge, then add N(0, sigma_c^2) to every entry of the count matrix (zeros included)."""
    stage = plan.release(STAGE_CLUSTER_KEYWORDS)
    return run_release(
        stage, ctx, lambda: cluster_keyword_counts(keywords, clusters, W, candidates, plan.M),
        noise=lambda counts: stage.noise(counts, ctx.test_rng()),
        dump=lambda noisy: noisy.tolist(),
        load=lambda saved: np.asarray(saved, dtype=np.float64).reshape(len(W), len(candidates)),
    )


CO_KEYWORD_MARGIN_SIGMAS = 1.0  # above the typical maximum of all R·|candidates| pure-noise draws


def co_keyword_level(sigma_c: float, n_clusters: int, n_candidates: int, margin_sigmas: float = CO_KEYWORD_MARGIN_SIGMAS) -> float:
    """The noisy count a co-keyword must reach: sigma_c·(sqrt(2 ln N) + margin), N = R·|candidates| — the
    typical largest of *all* clusters' pure-noise draws plus a margin, so that across every cluster pure
    noise releases about N·Φ̄(sqrt(2 ln N) + margin) words (≈ 0.001 for N = 2,000). Public: σ_c, R, |candidates|."""
    draws = max(int(n_clusters) * int(n_candidates), 2)
    return sigma_c * (math.sqrt(2.0 * math.log(draws)) + margin_sigmas)


def released_cluster_keyword_counts(
    noisy_counts: np.ndarray, candidates: Sequence[str], M: int, sigma_c: float
) -> list[list[tuple[str, float]]]:
    """Per cluster, the co-keywords its noisy counts support with their noisy counts (post-processing): at
    most M words whose noisy count reaches :func:`co_keyword_level`, which pure noise rarely reaches in any
    cluster, so a word released is very likely used by the cluster's units. Most frequent first."""
    if noisy_counts.size == 0:
        return [[] for _ in range(noisy_counts.shape[0])]
    level = co_keyword_level(sigma_c, noisy_counts.shape[0], len(candidates))
    released = []
    for row in noisy_counts:
        order = np.argsort(-row, kind="stable")[:M]
        released.append([(candidates[j], float(row[j])) for j in order if row[j] >= level])
    return released


def released_cluster_keywords(noisy_counts: np.ndarray, candidates: Sequence[str], M: int, sigma_c: float) -> list[list[str]]:
    """Per cluster, the released co-keywords of :func:`released_cluster_keyword_counts`, without their counts."""
    return [[w for w, _ in row] for row in released_cluster_keyword_counts(noisy_counts, candidates, M, sigma_c)]


SUPPORT_SIGMAS = 2.0  # a cluster's released vote total must clear this many standard deviations of its noise


def supported_clusters(noisy_counts: np.ndarray, sigma_c: float, sigmas: float = SUPPORT_SIGMAS) -> list[bool]:
    """Per cluster, whether its released votes show that it holds units (post-processing): the row's noisy
    total, Σ_j (votes_rj + noise_rj), clears ``sigmas`` standard deviations of the total's noise, σ_c·√|candidates|.
    A cluster whose units all went to more specific clusters first (each unit joins at most L, most specific
    first) casts no votes: its word was held by units that other topics already describe (docs/method.md §2.2b)."""
    if noisy_counts.size == 0:
        return [False] * int(noisy_counts.shape[0])
    spread = sigma_c * math.sqrt(noisy_counts.shape[1])
    return [bool(total >= sigmas * spread) for total in noisy_counts.sum(axis=1)]


@dataclass(frozen=True)
class CoKeywords:
    """Step 2b's released output, per cluster: its co-keywords and their noisy vote counts (both released), and
    whether its released votes show it holds units (:func:`supported_clusters`; all True without step 2b)."""

    words: list[list[str]]
    counts: list[list[float]]
    supported: list[bool] | None = None

    @classmethod
    def of(cls, released: Sequence[Sequence[tuple[str, float]]], supported: list[bool] | None = None) -> CoKeywords:
        return cls([[w for w, _ in row] for row in released], [[c for _, c in row] for row in released], supported)

    @classmethod
    def none(cls, clusters: int) -> CoKeywords:
        return cls([[] for _ in range(clusters)], [[] for _ in range(clusters)])

    def held(self, r: int) -> bool:
        """Whether cluster r is described (released co-keywords) or its released votes show it holds units."""
        return bool(self.words[r]) or self.supported is None or self.supported[r]


def co_keywords(
    keywords: Sequence[Sequence[str]], clusters: Sequence[Sequence[int]], W: Sequence[str], noisy_hist: np.ndarray,
    vocab: Vocabulary, R: int, plan: DPSynRAGPlan, ctx: MethodContext,
) -> CoKeywords:
    """Step 2b: each cluster's released co-keywords and their noisy counts (none when ``cluster_keywords = 0``)."""
    if not plan.M:
        return CoKeywords.none(len(W))
    candidates = cluster_keyword_candidates(noisy_hist, vocab, min(R, len(W)))
    noisy_counts = release_cluster_keywords(keywords, clusters, W, candidates, plan, ctx)
    return CoKeywords.of(released_cluster_keyword_counts(noisy_counts, candidates, plan.M, plan.sigma_c),
                         supported_clusters(noisy_counts, plan.sigma_c))
