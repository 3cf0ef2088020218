"""The compute backend a run spec asks for (``[compute] backend``): :func:`compute_backend`, never None.

``backend = "local"`` (the default) gives this process's engine and unit work
(``core.methods.compute_backend.LOCAL``, every method context's default) and nothing imports Ray.
``backend = "ray"`` gives a factory that builds a :class:`core.compute.ray_engine.RayPredictionEngine` with
the same call signature, and the Ray pool for keyword extraction and embedding
(:class:`core.compute.ray_units.RayUnitWork`).
"""

from __future__ import annotations

from pathlib import Path

from core.common.errors import PrivetError
from core.methods.compute_backend import LOCAL, ComputeBackend, EngineFactory
from core.models.base import LanguageModel
from core.specs.runspec import ComputeSpec, ModelChoice
from core.specs.rules import check_value, rules_of

BACKENDS = ComputeSpec.RULES["backend"].choices  # ("local", "ray"): the [compute] rules say which


def check_compute(compute: ComputeSpec) -> None:
    """Refuse a ``[compute]`` section that breaks its rules (``ComputeSpec.RULES``, the ones a loaded spec was
    checked against), for a section handed here directly; each setting with its own message and what to do."""
    rules = rules_of(ComputeSpec)
    _, problem = check_value(rules["backend"], compute.backend)
    if problem:
        raise PrivetError(f"Unknown compute backend '{compute.backend}' in [compute].",
                          "Use backend = " + " or ".join(f'"{name}"' for name in BACKENDS) + ".")
    workers = rules["workers"]
    _, problem = check_value(workers, compute.workers)
    if problem:
        out_of_range = isinstance(compute.workers, int) and not isinstance(compute.workers, bool)
        raise PrivetError(
            f"[compute] workers must be {workers.range_words()} (got {compute.workers})." if out_of_range
            else f"[compute] workers {problem}.",
            "Use 0 for one worker per GPU, or the number of CPU workers.",
        )
    _, problem = check_value(rules["address"], compute.address)
    if problem:
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
