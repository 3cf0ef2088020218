"""Private prediction sharded by group over Ray workers (docs/method.md §2.4 unchanged).

Once W, μ_r and θ_r are released, the groups S_r are independent: each writes its text from its
own members' logits only. So the driver packs the groups into waves (as the single-process
engine does), hands the waves to a pool of actors through a work queue, and streams each
finished group back to the caller (checkpoints, progress bars, previews) as its wave returns.

* One actor per GPU (``workers = 0``), or ``workers`` actors (one GPU each when the cluster has
  GPUs, else one CPU each). Each actor loads the model once from local files and runs the
  ordinary ``PrivatePredictionEngine`` (waves, out-of-memory halving) on what it is given.
* The ledger is never touched here: the driver charged the whole stage *before* calling ``run``.
  A worker that dies loses only tokens that were never released; its wave is handed to another
  worker (at most ``ray_pool.MAX_ATTEMPTS`` times) and drawn afresh, so a retry is never charged again and
  only one text per group is ever released. When no worker is left the run stops with an error.
* Noise: each actor keys its token sampler from its own OS entropy. In the non-private test mode
  each actor gets the test seed and draws a group's tokens from (seed, group id, step), so the texts
  equal the single-process engine's whatever the sharding.
* No network beyond the Ray cluster itself (``core.compute.ray_pool``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Sequence

from core.compute.ray_pool import RayPool
from core.methods.private_prediction import EngineConfig, GroupOutput, PredictionGroup, deliver, pack_waves
from core.common.progress import StageProgress
from core.specs.runspec import ComputeSpec, ModelChoice


@dataclass(frozen=True)
class WorkerSetup:
    llm: ModelChoice
    config: EngineConfig
    tau: float
    test_seed: int | None
    uses_gpu: bool


class PredictionWorker:
    """Body of one Ray actor: a model and a single-process engine (see module docstring)."""

    def __init__(self, setup: WorkerSetup) -> None:
        from core.methods.private_prediction import PrivatePredictionEngine
        from core.models.registry import load_language_model
        from core.privacy.mechanisms import TokenSampler
        from core.privacy.randomness import test_mode_torch_generator

        # Ray shows each GPU actor exactly one GPU, as device 0.
        choice = replace(setup.llm, device="cuda" if setup.uses_gpu else "cpu")
        self.llm = load_language_model(choice)
        generator = None
        if setup.test_seed is not None:  # NON-PRIVATE test mode only
            generator = test_mode_torch_generator(setup.test_seed, self.llm.device)
        self.engine = PrivatePredictionEngine(self.llm, setup.config, TokenSampler(setup.tau, generator))

    def run(self, groups: Sequence[PredictionGroup]) -> list[GroupOutput]:
        return list(self.engine.run(groups).values())

    def pid(self) -> int:
        return os.getpid()


class RayPredictionEngine:
    """Drop-in for ``PrivatePredictionEngine.run`` that spreads the waves over Ray actors."""

    def __init__(
        self,
        compute: ComputeSpec,
        llm: ModelChoice,
        config: EngineConfig,
        tau: float,
        test_seed: int | None,
        spill_dir: Path | None = None,
    ) -> None:
        self.llm_choice = llm
        self.config = config
        self.tau = tau
        self.test_seed = test_seed
        self.pool = RayPool(compute, PredictionWorker, self._setup, llm.device, spill_dir)

    @property
    def workers(self) -> list:
        """The live actors while ``run`` is going (exposed for tests)."""
        return self.pool.workers

    def _setup(self, uses_gpu: bool) -> WorkerSetup:
        return WorkerSetup(self.llm_choice, self.config, self.tau, self.test_seed, uses_gpu)

    def run(
        self,
        groups: Sequence[PredictionGroup],
        progress: StageProgress | None = None,
        on_group_done: Callable[[GroupOutput], None] | None = None,
    ) -> dict[int, GroupOutput]:
        waves = [list(w) for w in pack_waves(groups, self.config.max_rows, self.config.public_anchor)]
        results: dict[int, GroupOutput] = {}

        def finished(_index: int, outputs: list[GroupOutput]) -> None:
            deliver(outputs, results, on_group_done, progress)

        self.pool.map(waves, lambda worker, wave: worker.run.remote(wave), finished, progress)
        return results
