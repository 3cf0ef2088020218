"""Length distribution of units (characters): quantiles and a 10-bin histogram.

Bins have whole-number edges: bin i holds lengths in ``[edges[i], edges[i+1])``, all of the
same width, starting at the shortest unit, so labels never repeat or need decimals.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from core.corpus.model import LengthSummary

N_BINS = 10


def length_summary(lengths: Sequence[int]) -> LengthSummary | None:
    """Quantiles (min, p25, median, p75, max) and a histogram; ``None`` for no units."""
    if not lengths:
        return None
    values = np.asarray(lengths, dtype=float)
    p25, median, p75 = np.percentile(values, [25, 50, 75])
    low, high = int(values.min()), int(values.max())
    width = max(1, math.ceil((high - low + 1) / N_BINS))
    edges = [float(low + i * width) for i in range(N_BINS + 1)]
    counts, _ = np.histogram(values, bins=edges)
    return LengthSummary(
        min=int(values.min()),
        p25=float(p25),
        median=float(median),
        p75=float(p75),
        max=int(values.max()),
        bin_edges=[float(e) for e in edges],
        bin_counts=[int(c) for c in counts],
    )
