"""The compute backend a run spec asks for (``[compute] backend``): :func:`compute_backend`.

``backend = "local"`` (the default) gives this process's engine and unit work (``core.compute.local``)
and nothing imports Ray. ``backend = "ray"`` gives a factory that builds a
:class:`core.compute.ray_engine.RayPredictionEngine` with the same call signature, and the Ray pool
for keyword extraction and embedding (:class:`core.compute.ray_units.RayUnitWork`). ``engine_factory``
and ``unit_work`` alone say None for the local backend.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from core.errors import PrivetError
from core.models.base import Embedder, LanguageModel
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


@dataclass(frozen=True)
class ComputeBackend:
    """Where a run's model work goes: never None, so a method never asks which backend it has."""

    engine_factory: EngineFactory  # factory(llm, EngineConfig, TokenSampler) -> a private-prediction engine
    unit_work: Any  # core.methods.base.UnitWork: greedy generation and embeddings


def compute_backend(
    compute: ComputeSpec,
    llm_choice: ModelChoice,
    embedder_choice: ModelChoice,
    test_seed: int | None,
    llm: LanguageModel,
    embedder: Embedder,
    spill_dir: Path | None = None,
) -> ComputeBackend:
    """The local backend with the loaded models, or Ray's (a Ray started here spills into ``spill_dir``)."""
    from core.compute.local import LocalUnitWork, local_engine

    factory = engine_factory(compute, llm_choice, test_seed, spill_dir) or local_engine
    work = unit_work(compute, llm_choice, embedder_choice, spill_dir) or LocalUnitWork(llm, embedder)
    return ComputeBackend(factory, work)
