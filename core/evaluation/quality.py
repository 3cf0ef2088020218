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
from functools import cache
from typing import Sequence

import numpy as np
from scipy import linalg

from core.paths import resources_dir

_TOKEN = re.compile(r"\w+|[^\w\s]")


def tokenize(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def ngrams(tokens: Sequence[str], n: int) -> list[tuple[str, ...]]:
    return [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]


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


# -- junk detector ------------------------------------------------------------------------------
# A synthetic document is "junk" when a reader would throw it away: it talks about the document
# instead of being one (meta-text), carries URLs or markup, echoes an instruction from
# resources/prompts/, loops, or holds next to no prose after its topic line. Each check returns a
# short reason a person can read; an empty list means the text is clean.

_META = re.compile(
    r"\b(?:document|source)\s*:"
    r"|\bthe\s+(?:original\s+|following\s+|above\s+|given\s+)?document\b"
    r"|\bthe\s+(?:original|following|above|given)\s+text\b"
    r"|\brephras(?:e|ed|es|ing)\b|\bparaphras(?:e|ed|es|ing)\b|\brewritten\s+(?:text|version)\b"
    r"|\bwithout\s+(?:changing|altering)\b"
    r"|\bhere(?:\s+is|'s|\s+are)\s+(?:the|a|an|your|my|one)\s+(?:\w+\s+){0,3}"
    r"(?:document|text|version|note|review|article|summary|rewrite|example)s?\b"
    r"|\b(?:your|this|the)\s+(?:prompt|request)\b|\b(?:kind|type)\s+of\s+(?:document|text)\b"
    r"|\bi(?:'m|\s+am)\s+(?:ready|happy|glad)\s+to\s+(?:help|assist)\b|\bi(?:'d|\s+would)\s+be\s+(?:happy|glad)\s+to\b"
    r"|\bas\s+an\s+ai\b|\blanguage\s+model\b|\bi\s+hope\s+this\s+helps\b|\blet\s+me\s+know\s+if\b",
    re.IGNORECASE | re.MULTILINE,
)
_URL = re.compile(r"\bhttps?://|\bwww\.|\bhref\b|\b[\w-]+\.(?:com|org|net|html?|php)/", re.IGNORECASE)
_MARKUP = re.compile(r"</?[a-z][a-z0-9]*(?:\s[^<>]*)?/?>|&(?:amp|lt|gt|quot|nbsp|#\d+);|\[[^\]\n]*\]\(|```",
                     re.IGNORECASE)
_PLACEHOLDER_SLOT = re.compile(r"\[[a-z][a-z _-]{1,30}\]", re.IGNORECASE)  # "[name]", "[Headline]": a form left unfilled
MAX_PLACEHOLDERS = 1  # a real text may hold one bracketed remark ("[ZHU LIXIN/CHINA DAILY]"); a form holds several
_TOPIC_LINE = re.compile(r"^\s*([^:.!?\n]{1,160}):(?=\s|$)")
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")
_PLACEHOLDER = re.compile(r"\{[^{}]*\}")
ECHO_WORDS = 6  # an instruction echo = this many consecutive words of a prompt template
MIN_BODY_WORDS = 4  # fewer words of prose (after the topic line) = near-empty
MIN_PROSE_SHARE = 0.5  # fewer whitespace tokens that are words = not prose
LOOP_NGRAM = 6  # a loop repeats whole phrases; shorter n-grams recur in real lists (MovieLens genres)
MAX_LOOP_REPEATS = 4  # one 6-gram this often = a loop
MIN_DISTINCT_NGRAMS = 0.7  # fewer distinct 6-grams than this share of all = a loop
_NOT_TEMPLATES = ("self_filter_offtopic",)  # public calibration sentences, not instructions


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


@cache
def prompt_ngrams(n: int = ECHO_WORDS) -> frozenset[tuple[str, ...]]:
    """Every run of ``n`` consecutive words of the shipped instruction templates (placeholders dropped)."""
    grams: set[tuple[str, ...]] = set()
    for path in sorted((resources_dir() / "prompts").glob("*.txt")):
        if path.stem in _NOT_TEMPLATES:
            continue
        for part in _PLACEHOLDER.split(path.read_text(encoding="utf-8")):
            grams.update(ngrams(_words(part), n))
    return frozenset(grams)


def split_topic_line(text: str) -> tuple[str, str]:
    """(topic line, body): the leading ``topic (co-keywords):`` prefix, if any, and the text after it."""
    match = _TOPIC_LINE.match(text)
    if not match or len(match.group(1).split()) > 16:
        return "", text.strip()
    return match.group(1).strip(), text[match.end() :].strip()


def _meta_reasons(text: str) -> list[str]:
    found = sorted({" ".join(m.group(0).split()).lower() for m in _META.finditer(text)})
    return [f"meta-text {', '.join(repr(f) for f in found)}"] if found else []


def _markup_reasons(text: str) -> list[str]:
    reasons = []
    if _URL.search(text):
        reasons.append("URL")
    if _MARKUP.search(text):
        reasons.append("markup")
    if len(_PLACEHOLDER_SLOT.findall(text)) > MAX_PLACEHOLDERS:
        reasons.append("unfilled placeholders")
    return reasons


def _echo_reasons(text: str, instructions: Sequence[str]) -> list[str]:
    echoed = set(ngrams(_words(text), ECHO_WORDS))
    extra = {g for extra_text in instructions for g in ngrams(_words(extra_text), ECHO_WORDS)}
    hits = echoed & (prompt_ngrams() | extra)
    return [f"prompt echo '{' '.join(min(hits))}'"] if hits else []


def _loop_reasons(text: str) -> list[str]:
    reasons = []
    lines = [" ".join(line.lower().split()) for line in text.splitlines()]
    counts = Counter(line for line in lines if len(line.split()) >= 3)
    if counts and max(counts.values()) >= 2:
        reasons.append("repeated line")
    grams = ngrams(_words(text), LOOP_NGRAM)
    if grams:
        top = Counter(grams).most_common(1)[0][1]
        if top >= MAX_LOOP_REPEATS or (len(grams) >= 6 and len(set(grams)) / len(grams) < MIN_DISTINCT_NGRAMS):
            reasons.append("repeated words (loop)")
    return reasons


def _prose_reasons(text: str) -> list[str]:
    topic, body = split_topic_line(text)
    words = _words(body)
    topic_words = set(_words(topic))
    if len(words) < MIN_BODY_WORDS or (topic_words and set(words) <= topic_words):
        return ["near-empty after the topic line" if topic else "near-empty"]
    tokens = body.split()
    prose = sum(1 for token in tokens if _WORD.fullmatch(token.strip(".,;:!?\"'()[]-–—"))) / len(tokens)
    return ["not prose"] if prose < MIN_PROSE_SHARE else []


def junk_reasons(text: str, instructions: Sequence[str] = ()) -> list[str]:
    """Why a reader would discard ``text`` (empty = clean). ``instructions``: further public
    instruction texts (e.g. the task description) whose echo also counts as junk."""
    return (_meta_reasons(text) + _markup_reasons(text) + _echo_reasons(text, instructions)
            + _loop_reasons(text) + _prose_reasons(text))


def junk_rate(texts: Sequence[str], instructions: Sequence[str] = ()) -> float:
    """Share of texts with at least one junk reason (nan for no texts)."""
    if not texts:
        return float("nan")
    return sum(1 for t in texts if junk_reasons(t, instructions)) / len(texts)
