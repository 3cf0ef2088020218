"""Private prediction's charge on a resume (DP-SynRAG step 4, DP-Synth; the stage itself is its plan's
token ``Release``). DP-Synth's plan is ``core.methods.dp_synth.plan``.
"""

from __future__ import annotations


def prediction_groups(L: int, n_redrawn: int, resumed: bool) -> int:
    """How many of a unit's groups private prediction charges when it (re)draws ``n_redrawn`` groups.

    A fresh run charges the plan's L. A resumed run redraws only the groups that did not finish (their
    first, unfinished draw was charged and is thrown away). Groups overlap — a unit lies in at most L of
    them — so the redrawn groups cost min(L, number redrawn) groups by overlapping parallel composition.
    For disjoint groups (DP-Synth, L = 1) that is one group's cost. The charge is the token stage's
    ``Release`` evaluated on that many groups (``Release.charge(parallel=...)``).
    """
    return min(int(L), int(n_redrawn)) if resumed else int(L)


def prediction_charge(per_group_rho: float, L: int, n_redrawn: int, resumed: bool) -> float:
    """ρ to charge when private prediction (re)draws ``n_redrawn`` groups; ``per_group_rho`` is one group's cost."""
    return prediction_groups(L, n_redrawn, resumed) * per_group_rho
