"""The compute backend a run spec asks for (``[compute] backend``): :func:`compute_backend`, never None.

``backend = "local"`` (the default) gives this process's engine and unit work
(``core.methods.compute_backend.LOCAL``, every method context's default) and nothing imports Ray.
``backend = "ray"`` gives a factory that builds a :class:`core.compute.ray_engine.RayPredictionEngine` with
the same call signature, and the Ray pool for keyword extraction and embedding
(:class:`core.compute.ray_units.RayUnitWork`).
"""

from __future__ import annotations

from pathlib import Path

from core.errors import PrivetError
from core.methods.compute_backend import LOCAL, ComputeBackend, EngineFactory
from core.models.base import LanguageModel
from core.runspec import ComputeSpec, ModelChoice

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


def compute_backend(
    compute: ComputeSpec,
    llm_choice: ModelChoice,
    embedder_choice: ModelChoice,
    test_seed: int | None,
    spill_dir: Path | None = None,
) -> ComputeBackend:
    """The local backend, or Ray's (a Ray started here spills into ``spill_dir``, a folder inside the run
    folder); Ray is imported, and must be installed, only for Ray's."""
    check_compute(compute)
    if compute.backend == "local":
        return LOCAL
    return ComputeBackend(_ray_engine_factory(compute, llm_choice, test_seed, spill_dir),
                          _ray_unit_work(compute, llm_choice, embedder_choice, spill_dir))


def _ray_engine_factory(
    compute: ComputeSpec, llm_choice: ModelChoice, test_seed: int | None, spill_dir: Path | None
) -> EngineFactory:
    from core.compute.ray_engine import RayPredictionEngine
    from core.compute.ray_pool import import_ray

    import_ray()  # fail before any budget is charged when Ray is missing

    def make(llm: LanguageModel, config, sampler) -> RayPredictionEngine:
        return RayPredictionEngine(compute, llm_choice, config, sampler.tau, test_seed, spill_dir)

    return make


def _ray_unit_work(compute: ComputeSpec, llm_choice: ModelChoice, embedder_choice: ModelChoice,
                   spill_dir: Path | None):
    """Keyword extraction and embedding over Ray actors (:class:`core.compute.ray_units.RayUnitWork`)."""
    from core.compute.ray_pool import import_ray
    from core.compute.ray_units import RayUnitWork

    import_ray()
    return RayUnitWork(compute, llm_choice, embedder_choice, spill_dir)
