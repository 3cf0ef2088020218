"""How long each realised document is (docs/method.md §6.2; ``[dp_synrag] length``).

* ``"form"``: the median word count of the form's shipped, invented demonstrations (public; no
  target for a custodian's own example, whose placeholders say nothing of length);
* ``"dp"``: the corpus's own length, released: a noisy median of the units' words per document, clipped to
  the public range [MIN_WORDS, MAX_WORDS] and taken on the log scale (so the long tail of the range does not
  outweigh the data), by the exponential mechanism of ``core.privacy.median`` (ε-bounded-range, ρ = ε²/8).
  A unit's value depends on that unit alone (its words over its documents), so one unit moves the
  utility by at most 1. The stage (``length``, ``length_fraction`` of ρ, default 0.02) is charged before
  its draw, checkpointed, and on the certificate;
* ``"none"``: as the writer wrote it;
* ``"auto"`` (the default): ``"dp"`` with the public writer (``text = "realised"``), else ``"none"``
  (``DPSynRAGSpec.length_setting``).

:func:`fit_length` then shortens a realised document toward the target: post-processing of public text,
no cost. It keeps the sentences in order while the document stays within about the target
(``LENGTH_SLACK``), the first sentence (the form's opening) always, and every sentence that holds a released
word no earlier kept sentence holds, so no released word is lost.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from core.corpus import Unit
from core.methods.base import MethodContext
from core.methods.dp_synrag.release.plan import STAGE_LENGTH, DPSynRAGPlan
from core.privacy.median import dp_median
from core.privacy.release import run_release

MIN_WORDS, MAX_WORDS = 5, 400  # the public range of the DP median (words per document)


def unit_lengths(units: Sequence[Unit]) -> np.ndarray:
    """Each unit's words per document (private: the DP median's input, never released as such)."""
    return np.asarray([len(u.text.split()) / max(u.n_documents, 1) for u in units], dtype=np.float64)


def release_length(units: Sequence[Unit], plan: DPSynRAGPlan, ctx: MethodContext) -> float | None:
    """The DP length statistic (None when the plan has none: nothing drawn or charged): the checkpoint, or
    charge, then the exponential-mechanism median of log(words per document) over [log 5, log 400]."""
    if not plan.releases_length:
        return None
    stage = plan.release(STAGE_LENGTH)
    low, high = math.log(MIN_WORDS), math.log(MAX_WORDS)
    noisy = run_release(
        stage, ctx, lambda: np.log(np.clip(unit_lengths(units), MIN_WORDS, MAX_WORDS)),
        noise=lambda logs: math.exp(dp_median(logs, low, high, plan.epsilon_length, ctx.test_rng())),
        dump=lambda words: [float(words)], load=lambda saved: float(saved[0]),
    )
    return float(noisy)


