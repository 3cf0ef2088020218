"""The certificate's plain words on the labels of a labelled run, per class or by topic (public settings and
released values only).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from core.methods.base import SyntheticDoc
from core.methods.class_budget import BudgetSplit
from core.privacy.class_counts import TOPIC_LABEL_SHARE, ClassCounts, TopicLabelStage


def class_notes_for(split: BudgetSplit, released: ClassCounts, by_class: dict[str, list[SyntheticDoc]],
                    kept: list[SyntheticDoc]) -> list[str]:
    """The certificate's plain words on the labels (public settings and released values only)."""
    counts = split.counts
    how = ("The labels were typed by the custodian (public): " + ", ".join(counts.typed) if counts.typed else
           "The labels were not typed, so they were released by a DP set union: a label was kept only when its noisy "
           f"count of units cleared {counts.tau:.3g} (sigma {counts.sigma:.3g}); labels carried by fewer units were "
           "left out, with their documents")
    kept_per = {label: sum(1 for d in kept if d.label == label) for label in by_class}
    listed = "; ".join(f"{label}: released count {n:.1f}, {kept_per.get(label, 0)} documents"
                       for label, n in zip(released.labels, released.noisy))
    return [
        f"Labels (class-conditional synthesis): {how}. Each unit carries one label (a person whose documents carry "
        "several keeps the most frequent, ties by label order). The number of units per label was released with "
        f"Gaussian noise (sigma {counts.sigma:.3g}; charged above as class counts). The method then ran once per "
        "label on that label's units only; the labels split the units into disjoint classes, so by parallel "
        "composition every stage was charged once for all classes, not once per class. The method ran at epsilon "
        f"{split.inner_spec.privacy.epsilon:.4g} so that, with the class counts, the total stays within the stated "
        f"budget. Documents per label follow the released counts (post-processing): {listed}."
    ]


def topic_label_notes(split: BudgetSplit, stage: TopicLabelStage, docs: Sequence[SyntheticDoc]) -> list[str]:
    """The certificate's plain words on labels by topic (public settings and released values only)."""
    counts, topic = split.counts, stage.plan
    how = ("The labels were typed by the custodian (public): " + ", ".join(counts.typed) if counts.typed else
           "The labels were not typed, so they were released first by a DP set union: a label was kept only when "
           f"its noisy count of units cleared {counts.tau:.3g} (sigma {counts.sigma:.3g})")
    kept = Counter(d.label for d in docs)
    listed = "; ".join(f"{label}: released count {n:.1f}, {kept.get(label, 0)} documents"
                       for label, n in zip(stage.counts.labels, stage.counts.noisy))
    return [
        f"Labels (by topic): {how}. Each unit carries one label (a person whose documents carry several keeps the "
        "most frequent, ties by label order). The number of units per label was released with Gaussian noise "
        f"(sigma {counts.sigma:.3g}; charged above as class counts). The method ran once on all units at epsilon "
        f"{split.inner_spec.privacy.epsilon:.4g}; then, for every topic's cluster, how many of its units carry each "
        f"label was released with Gaussian noise (sigma {topic.sigma:.3g}; each unit is in at most {topic.L} "
        f"clusters, so sensitivity sqrt({topic.L}); {TOPIC_LABEL_SHARE:.0%} of the budget, charged above as topic "
        "label counts). Each synthetic document took its label from its topic's released counts (a merged topic's "
        "clusters summed, lowered by twice their noise and clipped at 0; a random split from the operating system's "
        "entropy), and each label kept documents in proportion to its released count (a label above its share was "
        f"cut to it): post-processing, no further cost. {listed}."
    ]
