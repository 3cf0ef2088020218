"""A pool of Ray actors fed from one work queue (used by every sharded stage).

The driver starts the actors, hands each idle actor the next task, and passes each finished task's
result back in the driver process (where checkpoints, progress bars and the ledger live). An actor
that dies loses only its own task, which goes back to the front of the queue and to another actor
(at most ``MAX_ATTEMPTS`` times in all); when no actor is left the run stops with a clear error.
The pool never touches the ledger: a stage's charge is written by the driver before the stage runs.

No network beyond the Ray cluster itself: usage statistics off, no dashboard, and a Ray started
here listens on the loopback address only.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from core.common.errors import PrivetError
from core.common.private_files import private_folder
from core.common.progress import StageProgress
from core.specs.runspec import ComputeSpec

MAX_ATTEMPTS = 3  # a task whose actor died is handed out again at most this many times in all


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


def start_ray(address: str, spill_dir: Path | None = None) -> bool:
    """Connect to Ray; returns True when this call started it (and so should stop it).

    A Ray started here spills objects it cannot keep in memory (the private units and prompts the
    workers are sent) into ``spill_dir``, a private folder inside the run folder, never into Ray's
    default temporary folder. An existing cluster spills where its own configuration says."""
    ray = import_ray()
    if ray.is_initialized():
        return False
    address = address.strip()
    try:
        if address:
            ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False)
        else:  # a private Ray on this machine: no dashboard, no usage statistics, nothing listening outside
            spill = {"object_spilling_directory": str(private_folder(spill_dir))} if spill_dir else {}
            ray.init(
                include_dashboard=False,
                logging_level=logging.WARNING,
                log_to_driver=False,
                _node_ip_address="127.0.0.1",
                **spill,
            )
    except Exception as exc:  # Ray raises ConnectionError, RuntimeError, ValueError ...
        raise PrivetError(
            f"Could not start or reach Ray at '{address or 'this machine'}': {type(exc).__name__}.",
            'Check [compute] address (empty, "auto" or "ray://host:10001") and that the Ray cluster is up.',
        ) from exc
    return True


def cluster_gpus(ray) -> int:
    return int(ray.cluster_resources().get("GPU", 0))


def worker_count(compute: ComputeSpec, gpus: int) -> int:
    """``workers`` actors, or one per GPU when ``workers = 0``."""
    count = int(compute.workers) or gpus
    if count == 0:
        raise PrivetError(
            "[compute] workers = 0 means one worker per GPU, but the Ray cluster has no GPU.",
            "Set workers to the number of CPU workers you want, or add GPUs to the cluster.",
        )
    return count


def start_actors(ray, actor_class: type, setup: Any, count: int, uses_gpu: bool) -> list:
    """``count`` actors of ``actor_class(setup)``: one GPU each when ``uses_gpu``, else one CPU each.
    Never restarted by Ray: the pool decides what happens to a dead actor's task."""
    actor = ray.remote(actor_class).options(
        num_gpus=1 if uses_gpu else 0, num_cpus=0 if uses_gpu else 1, max_restarts=0, max_task_retries=0
    )
    return [actor.remote(setup) for _ in range(count)]


@dataclass
class _Task:
    index: int
    payload: Any
    attempts: int = 0


def drive(
    ray,
    workers: list,
    payloads: Sequence[Any],
    submit: Callable[[Any, Any], Any],
    on_result: Callable[[int, Any], None],
    progress: StageProgress | None = None,
) -> None:
    """Run every payload on the pool: ``submit(worker, payload)`` returns the object ref of the
    remote call; ``on_result(index, result)`` is called in the driver as each task returns.

    ``workers`` is edited in place: a dead actor is removed from it."""
    from ray.exceptions import RayActorError, RayTaskError

    queue = [_Task(i, p) for i, p in enumerate(payloads)]
    idle = list(workers)
    running: dict = {}  # object ref -> (worker, task)
    while queue or running:
        if progress:
            progress.check_cancel()
        while queue and idle:
            worker, task = idle.pop(0), queue.pop(0)
            task.attempts += 1
            running[submit(worker, task.payload)] = (worker, task)
        if not running:
            raise PrivetError(
                "Every compute worker stopped before this stage finished.",
                "Check the Ray workers' memory and logs, then start the run again (the budget already "
                "charged for a private stage stays charged).",
            )
        done, _ = ray.wait(list(running), num_returns=1, timeout=1.0)
        for ref in done:
            worker, task = running.pop(ref)
            try:
                result = ray.get(ref)
            except RayActorError:  # the actor died: its task's output was never released
                workers[:] = [w for w in workers if w != worker]
                if task.attempts >= MAX_ATTEMPTS:
                    raise PrivetError(
                        f"A piece of work failed on {MAX_ATTEMPTS} compute workers in a row.",
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
            on_result(task.index, result)


class RayPool:
    """Ray started (or reached) and the actors, for one ``map`` (or a ``with`` block)."""

    def __init__(
        self,
        compute: ComputeSpec,
        actor_class: type,
        make_setup: Callable[[bool], Any],
        device: str,
        spill_dir: Path | None = None,
    ) -> None:
        self.compute = compute
        self.spill_dir = spill_dir
        self.actor_class = actor_class
        self.make_setup = make_setup  # uses_gpu -> the actors' setup
        self.device = device
        self.ray: Any = None
        self.workers: list = []  # the live actors (exposed for tests)
        self._started = False

    def __enter__(self) -> "RayPool":
        self.ray = import_ray()
        self._started = start_ray(self.compute.address, self.spill_dir)
        try:
            gpus = cluster_gpus(self.ray)
            count = worker_count(self.compute, gpus)
            uses_gpu = gpus > 0 and not self.device.startswith("cpu")
            self.workers = start_actors(self.ray, self.actor_class, self.make_setup(uses_gpu), count, uses_gpu)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def map(
        self,
        payloads: Sequence[Any],
        submit: Callable[[Any, Any], Any],
        on_result: Callable[[int, Any], None],
        progress: StageProgress | None = None,
    ) -> None:
        """Start the actors, run every payload, stop them (``workers`` is empty again afterwards)."""
        with self:
            drive(self.ray, self.workers, payloads, submit, on_result, progress)

    def __exit__(self, *exc_info) -> None:
        for worker in self.workers:
            self.ray.kill(worker)
        self.workers = []
        if self._started:
            self.ray.shutdown()
            self._started = False
