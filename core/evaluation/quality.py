"""Quality (docs/method.md §5): diversity of a synthetic corpus and its distance to the private text.

* distinct-n — distinct n-grams / all n-grams over the corpus (Li et al. 2016);
* Self-BLEU — mean BLEU-4 of each sampled text against the other sampled texts as references
  (Zhu et al. 2018); 1.0 = every text repeats the others, lower = more diverse. Sentence BLEU
  with add-one smoothing of the higher-order precisions (Lin & Och 2004), brevity penalty
  against the closest reference length;
* Fréchet distance between Gaussians fitted to the two sets of embeddings (FID-style) and the
  squared MMD with an RBF kernel (median-distance bandwidth), both on the sentence embeddings.
"""

from __future__ import annotations

import math
import re
import warnings
from collections import Counter
from typing import Sequence

import numpy as np
from scipy import linalg

from core.common.junk import junk_rate, junk_reasons, ngrams, prompt_ngrams, split_topic_line  # the one junk rule

_TOKEN = re.compile(r"\w+|[^\w\s]")


def tokenize(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def distinct_n(texts: Sequence[str], n: int) -> float:
    grams = [g for t in texts for g in ngrams(tokenize(t), n)]
    return len(set(grams)) / len(grams) if grams else 0.0


def sentence_bleu(hypothesis: Sequence[str], references: Sequence[Sequence[str]], max_n: int = 4) -> float:
    """Smoothed sentence BLEU of token lists (clipped n-gram precisions, geometric mean, BP)."""
    if not hypothesis or not references:
        return 0.0
    log_p = 0.0
    for n in range(1, max_n + 1):
        hyp = Counter(ngrams(hypothesis, n))
        total = sum(hyp.values())
        max_ref: Counter = Counter()
        for ref in references:
            for gram, count in Counter(ngrams(ref, n)).items():
                max_ref[gram] = max(max_ref[gram], count)
        clipped = sum(min(c, max_ref[g]) for g, c in hyp.items())
        if n == 1:
            if clipped == 0:
                return 0.0
            log_p += math.log(clipped / total)
        else:
            log_p += math.log((clipped + 1) / (total + 1))
    h = len(hypothesis)
    r = min((len(ref) for ref in references), key=lambda length: (abs(length - h), length))
    bp = 1.0 if h > r else math.exp(1 - r / h)
    return bp * math.exp(log_p / max_n)


def self_bleu(texts: Sequence[str], sample: int = 50) -> float:
    """Mean BLEU-4 of each of the first ``sample`` texts against the others (0 for < 2 texts)."""
    toks = [tokenize(t) for t in texts[:sample] if t.strip()]
    if len(toks) < 2:
        return 0.0
    scores = [sentence_bleu(h, toks[:i] + toks[i + 1 :]) for i, h in enumerate(toks)]
    return float(np.mean(scores))


def frechet_distance(a: np.ndarray, b: np.ndarray) -> float:
    """||mu_a − mu_b||² + Tr(S_a + S_b − 2 (S_a S_b)^½) between Gaussian fits of two samples."""
    if len(a) < 2 or len(b) < 2:
        return float("nan")
    mu_a, mu_b = a.mean(axis=0), b.mean(axis=0)
    s_a = np.cov(a.astype(np.float64), rowvar=False)
    s_b = np.cov(b.astype(np.float64), rowvar=False)
    with warnings.catch_warnings():  # rank-deficient covariances (few texts, 384 dims) are expected
        warnings.simplefilter("ignore")
        covmean = np.real(linalg.sqrtm(s_a @ s_b))
    value = float(np.sum((mu_a - mu_b) ** 2) + np.trace(s_a + s_b - 2.0 * covmean))
    return max(value, 0.0)


def mmd_rbf(a: np.ndarray, b: np.ndarray) -> float:
    """Biased squared MMD with an RBF kernel, bandwidth = median pairwise distance of the pool."""
    if len(a) == 0 or len(b) == 0:
        return float("nan")
    pool = np.vstack([a, b]).astype(np.float64)
    sq = np.sum(pool**2, axis=1)
    d2 = np.maximum(sq[:, None] + sq[None, :] - 2.0 * pool @ pool.T, 0.0)
    off = d2[~np.eye(len(pool), dtype=bool)]
    median = float(np.median(off)) if off.size else 1.0
    gamma = 1.0 / (median if median > 0 else 1.0)
    k = np.exp(-gamma * d2)
    n = len(a)
    return float(k[:n, :n].mean() + k[n:, n:].mean() - 2.0 * k[:n, n:].mean())


def quality_scores(texts: Sequence[str], text_embeddings: np.ndarray, private_embeddings: np.ndarray,
                   self_bleu_sample: int) -> dict[str, float]:
    return {
        "n_documents": len(texts),
        "mean_words": float(np.mean([len(t.split()) for t in texts])) if texts else 0.0,
        "distinct_1": distinct_n(texts, 1),
        "distinct_2": distinct_n(texts, 2),
        "self_bleu": self_bleu(texts, self_bleu_sample),
        "frechet_to_private": frechet_distance(text_embeddings, private_embeddings),
        "mmd2_to_private": mmd_rbf(text_embeddings, private_embeddings),
    }


__all__ = ["distinct_n", "frechet_distance", "junk_rate", "junk_reasons", "mmd_rbf", "ngrams", "prompt_ngrams",
           "quality_scores", "self_bleu", "sentence_bleu", "split_topic_line", "tokenize"]
