"""The private-prediction engine a run spec asks for (``[compute] backend``).

``backend = "local"`` (the default) returns None: the method builds the single-process
``PrivatePredictionEngine`` itself and nothing imports Ray. ``backend = "ray"`` returns a factory
that builds a :class:`core.compute.ray_engine.RayPredictionEngine` with the same call signature,
and :func:`unit_work` the Ray pool for keyword extraction and embedding.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from core.errors import PrivetError
from core.models.base import LanguageModel
from core.runspec import ComputeSpec, ModelChoice

EngineFactory = Callable[[LanguageModel, Any, Any], Any]
"""factory(llm, EngineConfig, TokenSampler) -> an object with the engine's ``run`` method."""

BACKENDS = ("local", "ray")


def check_compute(compute: ComputeSpec) -> None:
    if compute.backend not in BACKENDS:
        raise PrivetError(
            f"Unknown compute backend '{compute.backend}' in [compute].", 'Use backend = "local" or "ray".'
        )
    if int(compute.workers) < 0:
        raise PrivetError(
            f"[compute] workers must be 0 or more (got {compute.workers}).",
            "Use 0 for one worker per GPU, or the number of CPU workers.",
        )
    address = compute.address.strip()
    if address not in ("", "auto") and not address.startswith("ray://"):
        raise PrivetError(
            f"[compute] address '{compute.address}' is not a Ray address.",
            'Leave it empty (Ray on this machine), or use "auto" or "ray://host:10001".',
        )


def engine_factory(
    compute: ComputeSpec, llm_choice: ModelChoice, test_seed: int | None, spill_dir: Path | None = None
) -> EngineFactory | None:
    """None for the single-process engine; otherwise a factory for the Ray engine (a Ray started
    here spills into ``spill_dir``, a folder inside the run folder)."""
    check_compute(compute)
    if compute.backend == "local":
        return None
    from core.compute.ray_engine import RayPredictionEngine
    from core.compute.ray_pool import import_ray

    import_ray()  # fail before any budget is charged when Ray is missing

    def make(llm: LanguageModel, config, sampler) -> RayPredictionEngine:
        return RayPredictionEngine(compute, llm_choice, config, sampler.tau, test_seed, spill_dir)

    return make


def unit_work(
    compute: ComputeSpec, llm_choice: ModelChoice, embedder_choice: ModelChoice, spill_dir: Path | None = None
):
    """None for this process; otherwise keyword extraction and embedding over Ray actors
    (:class:`core.compute.ray_units.RayUnitWork`)."""
    check_compute(compute)
    if compute.backend == "local":
        return None
    from core.compute.ray_pool import import_ray
    from core.compute.ray_units import RayUnitWork

    import_ray()
    return RayUnitWork(compute, llm_choice, embedder_choice, spill_dir)
