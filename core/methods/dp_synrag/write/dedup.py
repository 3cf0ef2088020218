"""The near-duplicate filter (docs/method.md §6.2): a document too close to one already kept is dropped.

Two documents are near-duplicates when the Jaccard similarity of their word 3-gram sets (lower-cased words,
punctuation ignored) is at least ``NEAR_DUPLICATE_JACCARD`` (0.5, a public constant). Documents are visited in
order and each is kept unless it is a near-duplicate of one kept before it. The filter reads synthetic text only
(post-processing, no privacy cost). It is exact and fast for thousands of documents: with the 3-grams in one
order, rarest first, two sets of Jaccard ≥ t share one of the first |A| − ⌈t·|A|⌉ + 1 3-grams of each
(prefix filtering, Bayardo, Ma & Srikant 2007), so only documents sharing such a 3-gram are compared.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Mapping

NEAR_DUPLICATE_JACCARD = 0.5
SHINGLE_WORDS = 3

_WORD = re.compile(r"[^\W_]+")


def shingles(text: str, n: int = SHINGLE_WORDS) -> frozenset[str]:
    """The word n-grams of ``text`` (lower case); a text of fewer than n words is one n-gram of itself."""
    words = _WORD.findall(text.lower())
    if len(words) < n:
        return frozenset({" ".join(words)}) if words else frozenset()
    return frozenset(" ".join(words[i : i + n]) for i in range(len(words) - n + 1))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def drop_near_duplicates(texts: Mapping[int, str], threshold: float = NEAR_DUPLICATE_JACCARD) -> dict[int, str]:
    """``texts`` (in key order) without every text whose 3-gram Jaccard with a text kept before it is at
    least ``threshold``."""
    sets = {key: shingles(text) for key, text in sorted(texts.items())}
    frequency = Counter(g for grams in sets.values() for g in grams)
    index: dict[str, list[int]] = {}
    kept: dict[int, str] = {}
    for key, grams in sets.items():
        ordered = sorted(grams, key=lambda g: (frequency[g], g))
        prefix = ordered[: len(ordered) - math.ceil(threshold * len(ordered)) + 1] if ordered else []
        candidates = {other for g in prefix for other in index.get(g, ())}
        if not grams and any(not sets[other] for other in kept):
            continue  # a second empty text
        if any(jaccard(grams, sets[other]) >= threshold for other in candidates):
            continue
        kept[key] = texts[key]
        for g in prefix:
            index.setdefault(g, []).append(key)
    return kept
