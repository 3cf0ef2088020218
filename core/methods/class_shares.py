"""Documents per class after labelled synthesis (post-processing of released class counts and synthetic text): each
class keeps documents in proportion to its released count (largest remainders).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from core.methods.base import SyntheticDoc
from core.privacy.class_counts import ClassCounts


def allocate(by_class: dict[str, list[SyntheticDoc]], shares: dict[str, float]) -> list[SyntheticDoc]:
    """Each class keeps its first documents up to its share of all documents written (largest remainders;
    post-processing of released counts and synthetic text): a class that wrote more than its released share
    is cut to it, one that wrote fewer keeps all it wrote. The shares are those of the classes that wrote any
    document (a class that wrote none cannot follow its count, and would otherwise cut the others)."""
    total = sum(len(docs) for docs in by_class.values())
    quotas = proportional_quotas(total, [shares.get(label, 0.0) if docs else 0.0 for label, docs in by_class.items()])
    kept: list[SyntheticDoc] = []
    for docs, quota in zip(by_class.values(), quotas):
        kept.extend(docs[:quota])
    return kept


def proportional_quotas(total: int, shares: Sequence[float]) -> list[int]:
    """``total`` split in proportion to ``shares`` (largest remainders; sums to ``total`` when any share > 0)."""
    weight = sum(shares)
    if total <= 0 or weight <= 0:
        return [0] * len(shares)
    exact = [total * s / weight for s in shares]
    quotas = [math.floor(x) for x in exact]
    order = sorted(range(len(shares)), key=lambda i: (-(exact[i] - quotas[i]), i))
    for i in order[: total - sum(quotas)]:
        quotas[i] += 1
    return quotas


def keep_class_shares(docs: Sequence[SyntheticDoc], released: ClassCounts, rng: np.random.Generator
                      ) -> list[SyntheticDoc]:
    """Labels by topic: per label, documents in proportion to the released class counts (``allocate``: a label
    above its share is cut to it, one below keeps all). Which of a label's documents are kept is drawn at
    random (``rng``: OS entropy), so that a cut label keeps documents of all its topics, not of the first ones;
    the kept documents stay in writing order. Post-processing of released values and synthetic text."""
    if not released.labels:  # no label released: the documents carry none, nothing to follow
        return list(docs)
    order = {id(d): i for i, d in enumerate(docs)}
    by_class: dict[str, list[SyntheticDoc]] = {label: [] for label in released.labels}
    for d in docs:
        by_class.setdefault(d.label, []).append(d)
    shuffled = {label: [group[i] for i in rng.permutation(len(group))] for label, group in by_class.items()}
    return sorted(allocate(shuffled, released.shares()), key=lambda d: order[id(d)])
