"""Relay a child run's messages to the GUI thread as Qt signals (a QTimer polls the queue).

Cancel is cooperative first (the child stops at its next progress check) and becomes a
hard stop (terminate) after a grace period.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal

from desktop.runner import RunProcess

POLL_MS = 50
DEFAULT_GRACE_MS = 5000


class RunRelay(QObject):
    """Owns one ``RunProcess`` and turns its messages into signals.

    ``event(dict)``: a ProgressEvent dict; ``succeeded(dict)``: the result message;
    ``cancelled(str)``; ``failed(str, bool)``: message and whether resume is offered.
    ``ended()`` follows any of the last three.
    """

    event = Signal(object)
    succeeded = Signal(object)
    cancelled = Signal(str)
    failed = Signal(str, bool)
    ended = Signal()

    def __init__(self, parent: QObject | None = None, grace_ms: int = DEFAULT_GRACE_MS) -> None:
        super().__init__(parent)
        self.grace_ms = grace_ms
        self._process: RunProcess | None = None
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_MS)
        self._timer.timeout.connect(self._poll)

    @property
    def running(self) -> bool:
        return self._process is not None and not self._process.finished

    @property
    def run_dir(self) -> Path | None:
        return None if self._process is None else self._process.run_dir

    def start(self, spec: dict[str, Any], run_dir: Path, resume: bool = False,
              estimate: dict[str, Any] | None = None, accepted_rho: float | None = None) -> None:
        if self.running:
            raise RuntimeError("a run is already in progress")
        self._process = RunProcess(spec, Path(run_dir), resume, estimate, accepted_rho)
        self._process.start()
        self._timer.start()

    def cancel(self) -> None:
        """Ask the child to stop; terminate it if it has not stopped after the grace period."""
        if not self.running:
            return
        process = self._process
        process.request_cancel()
        QTimer.singleShot(self.grace_ms, lambda: self._hard_stop_if_running(process))

    def hard_stop(self) -> None:
        if self._process is not None:
            self._process.hard_stop()
            self._poll()

    def shutdown(self) -> None:
        """The application is quitting: stop the child if it still runs and release its queue."""
        self._timer.stop()
        if self._process is not None:
            self._process.close()

    def _hard_stop_if_running(self, process: RunProcess) -> None:
        """The grace period of ``process`` is over: stop it by force if it still runs (never a run
        started since, such as a resume right after the cancel)."""
        if self._process is process and self.running:
            self.hard_stop()

    def _poll(self) -> None:
        if self._process is None:
            return
        for message in self._process.poll():
            kind = message["type"]
            if kind == "event":
                self.event.emit(message["event"])
            elif kind == "result":
                self._end()
                self.succeeded.emit(message)
                self.ended.emit()
            elif kind == "cancelled":
                self._end()
                self.cancelled.emit(message["message"])
                self.ended.emit()
            else:  # error / crashed
                self._end()
                self.failed.emit(message["message"], bool(message.get("resumable", False)))
                self.ended.emit()

    def _end(self) -> None:
        self._timer.stop()
