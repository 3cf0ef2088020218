"""The DP size count (docs/method.md §2.7): n̂ = n + N(0, σ_n²), the corpus's number of units.

Adding or removing one unit changes n by 1 (sensitivity 1), so ρ_n = 1/(2σ_n²). It runs first, charged
before its draw like every stage (``run_release``), and only when a setting waits for it
(``DPSynRAGSpec.size_count``); with a public bound (``size_bound``) nothing is drawn.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from core.corpus import Unit
from core.methods.base import MethodContext
from core.methods.dp_synrag.release.plan import DPSynRAGPlan
from core.privacy.planner import STAGE_SIZE
from core.privacy.release import run_release


def release_size(units: Sequence[Unit], plan: DPSynRAGPlan, ctx: MethodContext) -> float | None:
    """n̂, the noisy number of units (None when the plan has no size count: nothing drawn or charged)."""
    if not plan.counts_size:
        return None
    stage = plan.release(STAGE_SIZE)
    noisy = run_release(
        stage, ctx, lambda: np.array([float(len(units))]),
        noise=lambda n: stage.noise(n, ctx.test_rng()),
        dump=lambda n: [float(v) for v in n], load=lambda saved: np.asarray(saved, dtype=np.float64),
    )
    return float(noisy[0])
