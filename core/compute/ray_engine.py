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
  worker (at most ``MAX_ATTEMPTS`` times) and drawn afresh, so a retry is never charged again and
  only one text per group is ever released. When no worker is left the run stops with an error.
* Noise: each actor keys its token sampler from its own OS entropy. In the non-private test mode
  each actor gets the test seed and draws a group's tokens from (seed, group id, step), so the texts
  equal the single-process engine's whatever the sharding.
* No network beyond the Ray cluster itself: usage statistics off, no dashboard.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, replace
from typing import Callable, Sequence

from core.errors import PrivetError
from core.methods.private_prediction import EngineConfig, GroupOutput, PredictionGroup, pack_waves
from core.progress import StageProgress
from core.runspec import ComputeSpec, ModelChoice

MAX_ATTEMPTS = 3  # a wave whose worker died is handed out again at most this many times in all


def import_ray():
    """The ``ray`` module, or a PrivetError saying how to install it."""
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"  # never phone home (Ray reads this at init)
    try:
        import ray
    except ImportError as exc:
        raise PrivetError(
            "The run spec asks for Ray ([compute] backend = \"ray\"), but Ray is not installed.",
            'Install it with `pip install "ray==2.60.0"` (or the "cluster" extra), or set backend = "local".',
        ) from exc
    return ray


def start_ray(address: str) -> bool:
    """Connect to Ray; returns True when this call started it (and so should stop it)."""
    ray = import_ray()
    if ray.is_initialized():
        return False
    address = address.strip()
    try:
        if address:
            ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False)
        else:  # a private Ray on this machine: no dashboard, no usage statistics, nothing listening outside
            ray.init(
                include_dashboard=False,
                logging_level=logging.WARNING,
                log_to_driver=False,
                _node_ip_address="127.0.0.1",
            )
    except Exception as exc:  # Ray raises ConnectionError, RuntimeError, ValueError ...
        raise PrivetError(
            f"Could not start or reach Ray at '{address or 'this machine'}': {type(exc).__name__}.",
            'Check [compute] address (empty, "auto" or "ray://host:10001") and that the Ray cluster is up.',
        ) from exc
    return True


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


@dataclass
class _Task:
    wave: list[PredictionGroup]
    attempts: int = 0


class RayPredictionEngine:
    """Drop-in for ``PrivatePredictionEngine.run`` that spreads the waves over Ray actors."""

    def __init__(
        self, compute: ComputeSpec, llm: ModelChoice, config: EngineConfig, tau: float, test_seed: int | None
    ) -> None:
        self.compute = compute
        self.llm_choice = llm
        self.config = config
        self.tau = tau
        self.test_seed = test_seed
        self.workers: list = []  # the live actors (exposed for tests)

    def _start_workers(self, ray) -> None:
        gpus = int(ray.cluster_resources().get("GPU", 0))
        count = int(self.compute.workers) or gpus
        if count == 0:
            raise PrivetError(
                "[compute] workers = 0 means one worker per GPU, but the Ray cluster has no GPU.",
                "Set workers to the number of CPU workers you want, or add GPUs to the cluster.",
            )
        uses_gpu = gpus > 0 and not self.llm_choice.device.startswith("cpu")
        setup = WorkerSetup(self.llm_choice, self.config, self.tau, self.test_seed, uses_gpu)
        actor = ray.remote(PredictionWorker).options(
            num_gpus=1 if uses_gpu else 0, num_cpus=0 if uses_gpu else 1, max_restarts=0, max_task_retries=0
        )
        self.workers = [actor.remote(setup) for _ in range(count)]

    def run(
        self,
        groups: Sequence[PredictionGroup],
        progress: StageProgress | None = None,
        on_group_done: Callable[[GroupOutput], None] | None = None,
    ) -> dict[int, GroupOutput]:
        ray = import_ray()
        started = start_ray(self.compute.address)
        try:
            self._start_workers(ray)
            return self._drive(ray, groups, progress, on_group_done)
        finally:
            for worker in self.workers:
                ray.kill(worker)
            self.workers = []
            if started:
                ray.shutdown()

    def _drive(self, ray, groups, progress, on_group_done) -> dict[int, GroupOutput]:
        from ray.exceptions import RayActorError, RayTaskError

        queue = [_Task(list(w)) for w in pack_waves(groups, self.config.max_rows, self.config.public_anchor)]
        idle = list(self.workers)
        running: dict = {}  # object ref -> (worker, task)
        results: dict[int, GroupOutput] = {}
        while queue or running:
            if progress:
                progress.check_cancel()
            while queue and idle:
                worker, task = idle.pop(0), queue.pop(0)
                task.attempts += 1
                running[worker.run.remote(task.wave)] = (worker, task)
            if not running:
                raise PrivetError(
                    "Every compute worker stopped before private prediction finished.",
                    "Check the Ray workers' memory and logs, then start the run again (the budget already "
                    "charged for this stage stays charged).",
                )
            done, _ = ray.wait(list(running), num_returns=1, timeout=1.0)
            for ref in done:
                worker, task = running.pop(ref)
                try:
                    outputs = ray.get(ref)
                except RayActorError:  # the worker died: its tokens were never released
                    self.workers = [w for w in self.workers if w != worker]
                    if task.attempts >= MAX_ATTEMPTS:
                        raise PrivetError(
                            f"A group of documents failed on {MAX_ATTEMPTS} compute workers in a row.",
                            "Check the Ray workers' memory and logs, then start the run again.",
                        ) from None
                    queue.insert(0, task)
                    continue
                except RayTaskError as exc:
                    cause = exc.cause if isinstance(getattr(exc, "cause", None), PrivetError) else None
                    if cause is not None:
                        raise cause from None
                    raise PrivetError(
                        f"A compute worker failed with {type(getattr(exc, 'cause', exc)).__name__}.",
                        "Check the Ray workers' logs; run with [compute] backend = \"local\" to see the full error.",
                    ) from None
                idle.append(worker)
                for out in outputs:
                    results[out.gid] = out
                    if on_group_done:
                        on_group_done(out)
                    if progress:
                        progress.advance(1)
        return results
