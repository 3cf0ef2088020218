"""Private prediction (docs/method.md §2.4), shared by DP-SynRAG's step 4 and DP-Synth.

* ``engine`` — the batched engine: every row's clipped logits summed per group, one token sampled per
  step over the whole vocabulary (or the public Top-k+ set);
* ``prompts`` — the private rows' messages (each unit's own document) and the public row's (released
  or public text only);
* ``groups`` — the groups (one per DP-SynRAG cluster or DP-Synth batch), built after the stage's charge;
* ``stage`` — the charged stage, checkpointed group by group;
* ``self_filter`` — step 5: keep the texts useful for the public task (post-processing).

The engine's names are importable from the package itself (``from core.methods.private_prediction
import PrivatePredictionEngine``).
"""

from core.methods.private_prediction.engine import (
    CLIP_MODES,
    EngineConfig,
    GroupOutput,
    PredictionGroup,
    PrivatePredictionEngine,
    anchored_aggregate,
    dclip,
    deliver,
    pack_waves,
    top_k_plus_candidates,
    top_k_plus_margin,
    without_eos,
)

__all__ = [
    "CLIP_MODES",
    "EngineConfig",
    "GroupOutput",
    "PredictionGroup",
    "PrivatePredictionEngine",
    "anchored_aggregate",
    "dclip",
    "deliver",
    "pack_waves",
    "top_k_plus_candidates",
    "top_k_plus_margin",
    "without_eos",
]
