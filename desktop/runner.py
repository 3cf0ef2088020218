"""Run ``core.run.pipeline.run_pipeline`` in a child process (multiprocessing, spawn).

The GUI never runs model code. The child receives the run spec as a plain dict and a run
folder, reports every ``ProgressEvent`` as a dict over a queue and polls a cancel event.
A crash, an out-of-memory kill or a hard stop of the child ends only the child; GPU memory
is freed with it. The fidelity report (``core.evaluation.run_fidelity``) is computed here too, from the corpus
and embedder the run loaded, and written to the private run folder, where the Review page reads it.

Messages from the child (dicts with a ``type``):
``event`` (a ``ProgressEvent.to_dict()`` under ``event``), and exactly one terminal message:
``result`` (run_dir, synthetic_path, n_synthetic), ``cancelled`` (message) or
``error`` (message, resumable). When the child dies without a terminal message,
``RunProcess.poll`` makes up a ``crashed`` message from its exit code.

Test hook: ``PRIVET_DESKTOP_TEST_CHILD`` = ``raise`` (the child raises), ``exit`` (the child
exits with code 3 at once) or ``delay:SECONDS`` (the child sleeps after each event).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import queue as queue_module
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TEST_HOOK_ENV = "PRIVET_DESKTOP_TEST_CHILD"
TERMINAL_TYPES = frozenset({"result", "cancelled", "error", "crashed"})
MAX_DETAIL_CHARS = 300


@dataclass
class QueueReporter:
    """The child's ``core.common.progress.Reporter``: events go into the queue, cancel comes from the event."""

    out: Any  # multiprocessing Queue
    cancel_event: Any  # multiprocessing Event
    delay_s: float = 0.0
    tracker: Any = None  # core.run.estimate.EtaTracker: adds the run's overall time left to each event

    def emit(self, event: Any) -> None:
        data = event.to_dict()
        if self.tracker is not None:
            self.tracker.update(data)
            data["overall_eta_s"] = self.tracker.remaining_s()
        self.out.put({"type": "event", "event": data})
        if self.delay_s:
            time.sleep(self.delay_s)

    def cancelled(self) -> bool:
        return self.cancel_event.is_set()


def _test_hook_delay() -> float:
    """Apply the test hook (raise / exit) and return the per-event delay it asks for."""
    hook = os.environ.get(TEST_HOOK_ENV, "")
    if hook == "raise":
        raise RuntimeError("test hook: the child process raised on purpose")
    if hook == "exit":
        os._exit(3)
    if hook.startswith("delay:"):
        return float(hook.split(":", 1)[1])
    return 0.0


def describe_failure(exc: BaseException) -> tuple[str, bool]:
    """A message a privacy officer can act on, and whether resuming the run can help."""
    from core.common.errors import PrivetError

    if isinstance(exc, PrivetError):
        return exc.user_message(), True
    text = str(exc)
    if isinstance(exc, MemoryError) or "out of memory" in text.lower() or type(exc).__name__ == "OutOfMemoryError":
        return (
            "The run ran out of memory.\nWhat to do: choose a smaller model, run on the CPU instead of "
            "the GPU (or the other way round), close other programs, then resume the run (or start it again).",
            True,
        )
    detail = f"{type(exc).__name__}: {text}"[:MAX_DETAIL_CHARS]
    return (
        f"The run stopped because of an internal error ({detail}).\nWhat to do: resume the run if that is "
        "offered, otherwise start it again; if it fails again, report the message above to your support contact.",
        True,
    )


def accepted_up_to(accepted_rho: float | None) -> Any:
    """The child's resume consent: what the custodian accepted in the wizard's dialog (``None``: nothing).

    The dialog showed a ``core.run.pipeline.ResumeQuote``; the resume goes ahead only if it would charge no more
    than that (the ledger may have changed in between)."""
    if accepted_rho is None:
        return None
    return lambda quote: quote.resume_rho <= float(accepted_rho) * (1 + 1e-9) + 1e-15


def child_main(request: dict[str, Any], out: Any, cancel_event: Any) -> None:
    """Entry point of the child process: run the pipeline and report one terminal message."""
    try:
        delay = _test_hook_delay()
        from core.common.errors import Cancelled
        from core.evaluation.run_fidelity import custodian_fidelity
        from core.run.pipeline import run_pipeline
        from core.specs.runspec import RunSpec

        spec = RunSpec.from_dict(request["spec"])
        tracker = None
        if request.get("estimate"):
            from core.run.estimate import Estimate, EtaTracker

            tracker = EtaTracker(Estimate.from_dict(request["estimate"]))
        reporter = QueueReporter(out, cancel_event, delay, tracker)
        try:
            result = run_pipeline(spec, reporter, run_dir=Path(request["run_dir"]), resume=request["resume"],
                                  require_consent=True,  # the Confirm page's "spend anyway" sets the spec's field
                                  consent=accepted_up_to(request.get("accepted_rho")),
                                  fidelity=custodian_fidelity)  # run folder only: the Review page reads it
        except Cancelled as exc:
            out.put({"type": "cancelled", "message": exc.user_message()})
            return
        _remember_speed(spec, tracker)
        out.put(
            {
                "type": "result",
                "run_dir": str(result.run_dir),
                "synthetic_path": str(result.synthetic_path),
                "n_synthetic": int(result.n_synthetic),
            }
        )
    except BaseException as exc:  # noqa: BLE001 - everything must reach the GUI as a message
        message, resumable = describe_failure(exc)
        out.put({"type": "error", "message": message, "resumable": resumable})


def _remember_speed(spec: Any, tracker: Any) -> None:
    """Save how fast this computer ran, for the next run's estimate (never fails the run)."""
    factor = tracker.finished_factor() if tracker is not None else None
    if factor is None:
        return
    try:
        from core.run.calibration import calibration_key, save_calibration

        save_calibration(calibration_key(spec), factor, tracker.stage_factors())
    except OSError:
        pass


def crash_message(exitcode: int | None, hard_stopped: bool) -> dict[str, Any]:
    """The terminal message for a child that died without saying why."""
    if hard_stopped:
        return {"type": "cancelled", "message": "The run was stopped."}
    if exitcode is not None and exitcode < 0:
        why = f"was killed by the operating system (signal {-exitcode}); this usually means it ran out of memory"
    else:
        why = f"ended unexpectedly (exit code {exitcode})"
    return {
        "type": "crashed",
        "message": f"The run process {why}.\nWhat to do: resume the run if that is offered, otherwise start "
        "it again; if it happens again, choose a smaller model or fewer documents.",
        "resumable": True,
    }


@dataclass
class RunProcess:
    """One pipeline run in a spawned child; ``poll()`` returns its messages as they arrive."""

    spec: dict[str, Any]
    run_dir: Path
    resume: bool = False
    estimate: dict[str, Any] | None = None  # core.run.estimate.Estimate.to_dict(), for the overall time left
    accepted_rho: float | None = None  # a resume: the most the custodian agreed it may charge (its quote)
    _ctx: Any = field(default_factory=lambda: mp.get_context("spawn"))
    _process: Any = None
    _queue: Any = None
    _cancel: Any = None
    _finished: bool = False
    _hard_stopped: bool = False

    def start(self) -> None:
        self._queue = self._ctx.Queue()
        self._cancel = self._ctx.Event()
        request = {"spec": self.spec, "run_dir": str(self.run_dir), "resume": self.resume, "estimate": self.estimate,
                   "accepted_rho": self.accepted_rho}
        self._process = self._ctx.Process(
            target=child_main, args=(request, self._queue, self._cancel), name="privet-run", daemon=True
        )
        self._process.start()

    @property
    def alive(self) -> bool:
        return self._process is not None and self._process.is_alive()

    @property
    def finished(self) -> bool:
        return self._finished

    @property
    def exitcode(self) -> int | None:
        return None if self._process is None else self._process.exitcode

    def request_cancel(self) -> None:
        """Cooperative cancel: the pipeline stops at its next progress check."""
        if self._cancel is not None:
            self._cancel.set()

    def hard_stop(self) -> None:
        """Terminate the child (then kill it if it does not go within a second)."""
        if not self.alive:
            return
        self._hard_stopped = True
        self._process.terminate()
        self._process.join(1.0)
        if self._process.is_alive():
            self._process.kill()
            self._process.join(1.0)

    def close(self) -> None:
        """Release the queue and the cancel event (their semaphores) once the child has ended."""
        if self.alive:
            self.hard_stop()
        if self._queue is not None:
            self._queue.close()
            self._queue.join_thread()
        self._queue = None
        self._cancel = None
        self._finished = True

    def poll(self) -> list[dict[str, Any]]:
        """Messages received since the last call; ends with one terminal message when the run is over."""
        if self._process is None or self._finished:
            return []
        dead = not self._process.is_alive()
        messages = self._drain()
        if any(m["type"] in TERMINAL_TYPES for m in messages):
            self._finished = True
            self._process.join(5.0)
            if self._process.is_alive():
                self.hard_stop()
        elif dead:
            messages.append(crash_message(self._process.exitcode, self._hard_stopped))
            self._finished = True
        return messages

    def _drain(self) -> list[dict[str, Any]]:
        messages = []
        while True:
            try:
                messages.append(self._queue.get_nowait())
            except queue_module.Empty:
                return messages
            except (EOFError, OSError, ValueError):
                return messages
