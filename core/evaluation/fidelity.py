"""The fidelity report: how close a synthetic corpus is to the custodian's real one (issue 55).

**For the custodian's eyes only.** Every figure here is computed on the private corpus *without noise*: it
may be shown on screen to the custodian (SPEC §5, §7) and never enters an export, a certificate or a
published page with real text. (``privet evaluate`` records the figures, never the real texts, for its
public demo corpora.)

Figures (:class:`FidelityReport`):

* ``c2st_auc`` — a classifier two-sample test: TF-IDF (words and word pairs, sublinear tf) + logistic
  regression told to separate real documents from synthetic ones, 5-fold stratified cross-validated ROC
  AUC, on as many real documents (a random sample) as synthetic ones. **0.5: the classifier cannot tell
  them apart; 1.0: it always can.** ``c2st_auc_real`` is the same test between two disjoint real samples
  of the same size (the floor: about 0.5).
* ``own_form_share`` — the share of synthetic documents written in one of the corpus's own forms. When the
  templates are known (the demo corpora: ``templates.json``), a document counts when it matches one of them
  in full (:mod:`core.evaluation.own_form`). Otherwise a data-driven **proxy** (``own_form_method`` =
  "skeleton proxy"): a document's *skeleton* keeps the 100 most common words of the real corpus (numbers
  aside; only words at least 5 % of the real documents hold) and its punctuation, every other word becomes
  ``_``, and slots joined only by list connectors ("_ , _ and _") or runs of ``_`` collapse into one; a
  synthetic document counts when its skeleton equals, or is at least 0.8 similar to (difflib ratio over the
  tokens), the skeletons of at least two real documents. (Exact equality over the 200 commonest words, the
  first design, kept so many content words on a clinic corpus that 0-2 % of *real* notes shared a skeleton;
  with these rules 96-100 % of held real notes of the three demo clinic corpora count, shuffled notes and
  notes of another corpus's forms 0 %. With 200 words, the writer's own words in the slots of released forms,
  many of them common words, made the proxy read 0.23 where the templates read 0.83 on the demo clinic; with 100
  it reads 0.67, 0.85 where they read 0.935 on the discharge file, and still 0 for the shipped form's
  documents: round 5, session 2.)
  ``own_form_share_real`` is the same figure for held real documents (the ceiling).
  ``template_mix_tv`` (known templates only): total variation between the synthetic and real template mixes.
* ``mmd2`` — squared MMD (RBF kernel, :func:`core.evaluation.quality.mmd_rbf`) between the synthetic
  documents' sentence embeddings and a held sample of real ones; ``mmd2_real`` — the mean MMD² of
  same-size real samples to the same held sample (:func:`core.evaluation.ablation.real_sample_mmd2`). A
  ratio ``mmd2 / mmd2_real`` near 1 means as close as real text of that size gets.
* ``pairs`` — a few (synthetic, nearest real by TF-IDF cosine) pairs to read side by side: on screen only.

Randomness here (which real sample, the folds) is seeded evaluation randomness, not a DP draw.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

from core.evaluation import own_form

FOLDS = 5
PROXY_WORDS = 100  # the skeleton proxy keeps the real corpus's most common words
PROXY_MIN_REAL = 2  # a skeleton counts as one of the corpus's forms when at least this many real documents hold it
PROXY_MIN_DOC_SHARE = 0.05  # ... and a kept word is in at least this share of the real documents
PROXY_SIMILARITY = 0.8  # skeletons this similar (difflib ratio over their tokens) count as the same form
PROXY_MAX_TOKENS = 300  # a skeleton reads a document's first tokens only (forms show at the start; bounds the time)
PROXY_MAX_REAL = 1000  # real documents the proxy compares with at most (a seeded sample beyond)
_CONNECTORS = frozenset({",", ";", ":", "/", "-", "'", "and", "or", "of", "the", "a", "an", "in", "on", "to", "with"})
MAX_C2ST_PER_CLASS = 2000  # documents per class the classifier test uses at most (a random sample beyond)
_TOKEN = re.compile(r"\w+|[^\w\s]")
_NUMBER = re.compile(r"\d")

OWN_FORM_TEMPLATES = "templates"
OWN_FORM_PROXY = "skeleton proxy"


@dataclass
class FidelityReport:
    """The fidelity figures of one synthetic corpus against the real one (see the module's docstring)."""

    n_real: int
    n_synthetic: int
    c2st_auc: float | None = None
    c2st_auc_real: float | None = None
    c2st_per_class: int = 0
    own_form_share: float | None = None
    own_form_share_real: float | None = None
    own_form_method: str = ""
    own_form_loose_share: float | None = None  # known templates: their fixed parts in order, extra text allowed
    template_mix_tv: float | None = None
    mmd2: float | None = None
    mmd2_real: float | None = None
    pairs: list[dict] = field(default_factory=list)  # real text: on screen only, never exported

    @property
    def mmd2_ratio(self) -> float | None:
        if self.mmd2 is None or not self.mmd2_real:
            return None
        return self.mmd2 / self.mmd2_real

    def to_dict(self, pairs: bool = True) -> dict:
        """The figures as a JSON-ready dict; ``pairs=False`` leaves the real texts out."""
        out = asdict(self)
        out["mmd2_ratio"] = self.mmd2_ratio
        if not pairs:
            out.pop("pairs")
        return out


# ----------------------------------------------------------------------------- C2ST


def _sample(rng: np.random.Generator, texts: Sequence[str], n: int) -> list[str]:
    if len(texts) <= n:
        return list(texts)
    return [texts[i] for i in sorted(rng.choice(len(texts), n, replace=False).tolist())]


def c2st_auc(real: Sequence[str], synthetic: Sequence[str], folds: int = FOLDS, seed: int = 0,
             max_per_class: int = MAX_C2ST_PER_CLASS) -> tuple[float | None, int]:
    """Cross-validated ROC AUC of TF-IDF + logistic regression telling ``real`` from ``synthetic``, and the
    documents per class it used (the same number of each; None when fewer than ``folds`` a side)."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.pipeline import make_pipeline

    real = [t for t in real if t.strip()]
    synthetic = [t for t in synthetic if t.strip()]
    n = min(len(real), len(synthetic), max_per_class)
    if n < folds:
        return None, n
    rng = np.random.default_rng(seed)
    texts = _sample(rng, real, n) + _sample(rng, synthetic, n)
    labels = np.array([0] * n + [1] * n)
    model = make_pipeline(TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, min_df=1),
                          LogisticRegression(max_iter=2000, C=10.0))
    split = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    scores = cross_val_score(model, texts, labels, cv=split, scoring="roc_auc")
    return float(np.mean(scores)), n


# ----------------------------------------------------------------------------- skeleton proxy


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def common_words(texts: Sequence[str], k: int = PROXY_WORDS, min_share: float = PROXY_MIN_DOC_SHARE) -> set[str]:
    """The ``k`` most common words (letters, no digits) of ``texts`` that at least ``min_share`` of them hold."""
    counts = Counter(t for text in texts for t in tokens(text) if t[0].isalpha() and not _NUMBER.search(t))
    df = Counter(t for text in texts for t in set(tokens(text)))
    floor = min_share * len(texts)
    return {w for w, _ in counts.most_common(k) if df[w] >= floor}


def skeleton(text: str, keep: set[str], max_tokens: int = PROXY_MAX_TOKENS) -> str:
    """Kept words and punctuation in order; any other word (or number) is ``_``; slots joined only by list
    connectors ("_ , _ and _", "_ of the _", "_ - _ - _") are one slot; runs of ``_`` collapse."""
    out: list[str] = []
    for tok in tokens(text)[:max_tokens]:
        is_word = tok[0].isalnum() or tok[0] == "_"
        piece = tok if (not is_word or tok in keep) else "_"
        if piece == "_" and out:
            j = len(out) - 1
            while j >= 0 and out[j] in _CONNECTORS:
                j -= 1
            if j >= 0 and out[j] == "_":
                del out[j + 1:]
                continue
        out.append(piece)
    return " ".join(out)


def _similar(a: tuple[str, ...], b: tuple[str, ...], threshold: float) -> bool:
    from difflib import SequenceMatcher

    matcher = SequenceMatcher(None, a, b, autojunk=False)
    return (matcher.real_quick_ratio() >= threshold and matcher.quick_ratio() >= threshold
            and matcher.ratio() >= threshold)


def skeleton_share(documents: Sequence[str], real: Sequence[str], k: int = PROXY_WORDS,
                   min_real: int = PROXY_MIN_REAL, threshold: float = PROXY_SIMILARITY, seed: int = 0) -> float | None:
    """The proxy own-form share: documents whose skeleton equals, or is at least ``threshold`` similar to
    (difflib ratio over tokens), the skeletons of at least ``min_real`` of the ``real`` documents."""
    if not documents or not real:
        return None
    if len(real) > PROXY_MAX_REAL:
        real = _sample(np.random.default_rng(seed), real, PROXY_MAX_REAL)
    keep = common_words(real, k)
    held = Counter(tuple(skeleton(t, keep).split()) for t in real)
    items = sorted(held.items(), key=lambda kv: -kv[1])
    hits = 0
    for text in documents:
        own = tuple(skeleton(text, keep).split())
        found = held.get(own, 0)
        for other, count in items:
            if found >= min_real:
                break
            if other != own and _similar(own, other, threshold):
                found += count
        hits += found >= min_real
    return hits / len(documents)


# ----------------------------------------------------------------------------- pairs


def nearest_pairs(real: Sequence[str], synthetic: Sequence[str], n: int = 3,
                  templates: Sequence[str] | None = None) -> list[dict]:
    """``n`` evenly spaced synthetic documents, each beside its nearest real document (TF-IDF cosine)."""
    if not real or not synthetic or n < 1:
        return []
    from sklearn.feature_extraction.text import TfidfVectorizer

    vectoriser = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True).fit(list(real) + list(synthetic))
    picks = sorted({int(i * len(synthetic) / n) for i in range(min(n, len(synthetic)))})
    chosen = [synthetic[i] for i in picks]
    sims = (vectoriser.transform(chosen) @ vectoriser.transform(real).T).toarray()
    matcher = own_form.TemplateMatcher(templates) if templates else None
    pairs = []
    for text, row in zip(chosen, sims):
        best = int(np.argmax(row))
        pair = {"synthetic": text, "real": real[best], "similarity": round(float(row[best]), 3)}
        if matcher is not None:
            pair["synthetic_template"] = matcher.which(text)
            pair["real_template"] = matcher.which(real[best])
        pairs.append(pair)
    return pairs


# ----------------------------------------------------------------------------- the report


def split_held(real: Sequence[str]) -> tuple[list[str], list[str]]:
    """Every third document (by position) held out, the rest the pool (as the evaluation splits members)."""
    pool = [t for i, t in enumerate(real) if i % 3 != 2]
    held = [t for i, t in enumerate(real) if i % 3 == 2]
    return pool, held


def fidelity_report(
    real: Sequence[str],
    synthetic: Sequence[str],
    *,
    templates: Sequence[str] | None = None,
    held: Sequence[str] | None = None,
    embed: Callable[[list[str]], np.ndarray] | None = None,
    real_embeddings: np.ndarray | None = None,
    held_embeddings: np.ndarray | None = None,
    synthetic_embeddings: np.ndarray | None = None,
    n_pairs: int = 3,
    seed: int = 0,
) -> FidelityReport:
    """Every figure of the report for ``synthetic`` against ``real``.

    ``held``: a held sample of real documents (the reference of MMD², the real-vs-real classifier test and the
    own-form ceiling); when None, every third real document is held and the rest stand for the real corpus.
    Embeddings come from ``embed`` or are given; without either, MMD² is left out.
    """
    real, synthetic = list(real), list(synthetic)
    if held is None:
        real, held = split_held(real)
        if real_embeddings is not None:
            all_emb = real_embeddings
            real_embeddings = all_emb[[i for i in range(len(all_emb)) if i % 3 != 2]]
            held_embeddings = all_emb[[i for i in range(len(all_emb)) if i % 3 == 2]]
    held = list(held)
    report = FidelityReport(n_real=len(real) + len(held), n_synthetic=len(synthetic))

    report.c2st_auc, report.c2st_per_class = c2st_auc(real, synthetic, seed=seed)
    size = report.c2st_per_class or len(synthetic)
    report.c2st_auc_real, _ = c2st_auc(real, _sample(np.random.default_rng(seed + 1), held, size), seed=seed)

    if templates:
        report.own_form_method = OWN_FORM_TEMPLATES
        report.own_form_share = own_form.own_form_share(synthetic, templates)
        report.own_form_loose_share = own_form.loose_share(synthetic, templates)
        report.own_form_share_real = own_form.own_form_share(held, templates)
        if synthetic:
            report.template_mix_tv = own_form.mix_total_variation(own_form.template_mix(synthetic, templates),
                                                                  own_form.template_mix(real + held, templates))
    else:
        report.own_form_method = OWN_FORM_PROXY
        report.own_form_share = skeleton_share(synthetic, real)
        report.own_form_share_real = skeleton_share(held, real)

    if embed is not None:
        real_embeddings = embed(real) if real_embeddings is None else real_embeddings
        held_embeddings = embed(held) if held_embeddings is None else held_embeddings
        if synthetic_embeddings is None and synthetic:
            synthetic_embeddings = embed(synthetic)
    if synthetic_embeddings is not None and held_embeddings is not None and len(synthetic) and len(held):
        from core.evaluation.ablation import real_sample_mmd2
        from core.evaluation.quality import mmd_rbf

        report.mmd2 = mmd_rbf(np.asarray(synthetic_embeddings), np.asarray(held_embeddings))
        if real_embeddings is not None:
            value = real_sample_mmd2(np.asarray(real_embeddings), np.asarray(held_embeddings), len(synthetic))
            report.mmd2_real = None if value != value else value

    report.pairs = nearest_pairs(real, synthetic, n_pairs, templates)
    return report
