"""Progress events and cooperative cancellation for long stages.

A stage reports ``ProgressEvent``s through a ``Reporter``. The CLI prints them as
progress bars; the desktop application receives them from a child process and only
relays them to widgets. Events never carry private text. The stages' plain names are in
``core.specs.stage_labels`` (they come from the method catalogue).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, asdict
from typing import Callable, Protocol

from core.common.errors import Cancelled


@dataclass(frozen=True)
class ProgressEvent:
    """One update of one stage. ``kind`` is 'progress', 'stage_start', 'stage_end',
    'charged' (budget charged, ``rho`` set), 'preview' (a finished *synthetic* text in
    ``message``), 'log' or 'done'."""

    stage: str
    kind: str = "progress"
    done: int = 0
    total: int = 0
    eta_s: float | None = None
    message: str = ""
    rho: float | None = None
    fraction: float | None = None  # share of the stage done, counting work within unfinished items (token steps)

    def to_dict(self) -> dict:
        return asdict(self)


class Reporter(Protocol):
    def emit(self, event: ProgressEvent) -> None: ...

    def cancelled(self) -> bool: ...


@dataclass
class CallbackReporter:
    """A reporter that forwards events to a callback and polls a cancel flag."""

    callback: Callable[[ProgressEvent], None] = lambda e: None
    is_cancelled: Callable[[], bool] = lambda: False

    def emit(self, event: ProgressEvent) -> None:
        self.callback(event)

    def cancelled(self) -> bool:
        return self.is_cancelled()


NULL_REPORTER = CallbackReporter()


@dataclass
class StageProgress:
    """Tracks done/total of one stage, computes an ETA, and checks for cancellation."""

    reporter: Reporter
    stage: str
    total: int
    done: int = 0
    _t0: float = field(default_factory=time.monotonic)
    _last_emit: float = 0.0

    def start(self, message: str = "") -> "StageProgress":
        self.reporter.emit(ProgressEvent(self.stage, "stage_start", self.done, self.total, None, message))
        return self

    def advance(self, n: int = 1, message: str = "", fraction: float | None = None) -> None:
        """``n`` more items done. ``fraction``: the share of the stage's work done, when items are not equal
        work (e.g. some documents need a second draft, or a resume reused some): the ETA is then its own."""
        self.check_cancel()
        self.done += n
        now = time.monotonic()
        if now - self._last_emit < 0.2 and self.done < self.total:
            return
        self._last_emit = now
        elapsed = now - self._t0
        if fraction is not None:
            eta = elapsed * (1.0 - fraction) / fraction if fraction > 0 else None
        else:
            eta = elapsed / self.done * (self.total - self.done) if self.done else None
        self.reporter.emit(ProgressEvent(self.stage, "progress", self.done, self.total, eta, message, None,
                                         None if fraction is None else min(max(fraction, 0.0), 1.0)))

    def share(self, fraction: float) -> None:
        """The share of the stage's work done, between items (e.g. the decoding steps of a batch): lets the
        time left count down while no item finishes. Rate-limited, like :meth:`partial`."""
        self.check_cancel()
        now = time.monotonic()
        if now - self._last_emit < 0.5 or self.total <= 0:
            return
        self._last_emit = now
        self.reporter.emit(ProgressEvent(self.stage, "progress", self.done, self.total, None, "", None,
                                         min(max(fraction, 0.0), 1.0)))

    def partial(self, items_in_flight: float) -> None:
        """Work inside items not yet finished (e.g. token steps of a wave of groups), as a number of items:
        lets the time left count down within a stage whose items all finish together. Rate-limited."""
        self.check_cancel()
        now = time.monotonic()
        if now - self._last_emit < 0.5 or self.total <= 0:
            return
        self._last_emit = now
        fraction = min((self.done + max(items_in_flight, 0.0)) / self.total, 1.0)
        self.reporter.emit(ProgressEvent(self.stage, "progress", self.done, self.total, None, "", None, fraction))

    def finish(self, message: str = "") -> None:
        self.reporter.emit(ProgressEvent(self.stage, "stage_end", self.total, self.total, 0.0, message))

    def check_cancel(self) -> None:
        if self.reporter.cancelled():
            raise Cancelled()
