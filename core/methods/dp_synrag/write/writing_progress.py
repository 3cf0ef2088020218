"""How far the public writer has got (docs/method.md §2.6): its work in drafts, and its decoding steps.

The writing stage's bar counts finished documents; its time left needs the work behind them. A topic
takes one draft, or two when its first draft lacks a released word (``realisation.ATTEMPTS``), and a
batch of drafts is decoded step by step. :class:`DraftWork` turns that into the share of the stage's
work done (``ProgressEvent.fraction``); :func:`stepping` lets a batch report each decoding step, so the
time left counts down within a batch instead of waiting minutes for it to end. Counts of public drafts
only: nothing here reads a document.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence, cast

from core.models.base import LanguageModel, LogitsSession

# share of first drafts expected to need a second one, before any batch has shown it (a run of a 200-note file
# on 2026-12-04: 41 of 200, docs/bench/estimate.md)
PRIOR_RETRY_SHARE = 0.25
WRITER_BATCH = 16  # drafts the writer decodes together (of one demonstration: one decoding guard per batch)


def planned_batches(documents: float, demonstrations: int, attempts: int = 2, batch: int = WRITER_BATCH,
                    retry_share: float = PRIOR_RETRY_SHARE) -> list[float]:
    """The rows of each batch the writer is expected to decode for ``documents`` documents: the documents are
    shown the form's ``demonstrations`` in turn and batched per demonstration (``realisation.realise``), and
    ``retry_share`` of them are drafted again, up to ``attempts`` drafts. For the time estimate: a full batch
    costs far less per row than a small one."""
    rows: list[float] = []
    per_attempt = [max(documents, 0.0)] + [max(documents, 0.0) * retry_share] * max(attempts - 1, 0)
    for drafts in per_attempt:
        groups = max(1, min(demonstrations, int(drafts)))  # never more groups than drafts
        for _ in range(groups):
            left = drafts / groups
            while left > 0:
                rows.append(min(left, batch))
                left -= batch
    return rows


@dataclass
class DraftWork:
    """The drafts this writing session does: one per topic still to write, and the second drafts needed
    (expected at the share seen so far, known once the first pass is done). Exact for two attempts."""

    topics: int  # topics to write in this session (finished ones reused from a checkpoint are not counted)
    attempts: int = 2
    drafted: int = 0  # drafts written
    first_done: int = 0  # first drafts written
    retries: int = 0  # first drafts that lacked a released word (each needs a later draft)
    in_flight: float = 0.0  # drafts of the batch being decoded, counted by the share of its steps done

    def batch_done(self, rows: int, unfinished: int, first: bool) -> None:
        """A batch of ``rows`` drafts is written; ``unfinished`` of them still lack a released word."""
        self.drafted += rows
        self.in_flight = 0.0
        if first:
            self.first_done += rows
            self.retries += unfinished

    def step(self, rows: int, step: int, max_steps: int) -> None:
        """``step`` of ``max_steps`` decoding steps of a batch of ``rows`` drafts are done."""
        self.in_flight = rows * min(step / max(max_steps, 1), 1.0)

    def planned(self) -> float:
        """All drafts of the session: the first ones and the expected later ones."""
        share = self.retries / self.first_done if self.first_done else PRIOR_RETRY_SHARE
        later = self.retries if self.first_done >= self.topics else share * self.topics
        return self.topics + later * max(self.attempts - 1, 0)

    def fraction(self) -> float:
        """Share of the session's drafting done (1.0 when there is nothing to write)."""
        planned = self.planned()
        return 1.0 if planned <= 0 else min((self.drafted + self.in_flight) / planned, 1.0)


class _SteppingSession:
    """A decoding session that calls ``on_step(n)`` after its n-th step's logits are read."""

    def __init__(self, session: LogitsSession, on_step: Callable[[int], None]) -> None:
        self._session = session
        self._on_step = on_step
        self._steps = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)

    def logits(self) -> Any:
        out = self._session.logits()
        self._steps += 1
        self._on_step(self._steps)
        return out


class _SteppingModel:
    """``llm`` itself, except that its decoding sessions report their steps (every other call passes through)."""

    def __init__(self, llm: LanguageModel, on_step: Callable[[int], None]) -> None:
        self._llm = llm
        self._on_step = on_step

    def __getattr__(self, name: str) -> Any:
        return getattr(self._llm, name)

    def start_logits(self, prompt_ids: Sequence[Sequence[int]], shared_prefix: int = 0) -> LogitsSession:
        session = self._llm.start_logits(prompt_ids, shared_prefix)
        return cast(LogitsSession, _SteppingSession(session, self._on_step))


def stepping(llm: LanguageModel, on_step: Callable[[int], None]) -> LanguageModel:
    """``llm`` whose decoding sessions call ``on_step(n)`` at each step n (1, 2, …): for progress within a
    batch. The model's outputs are unchanged; ``on_step`` may raise (a cancel) to stop the batch."""
    return cast(LanguageModel, _SteppingModel(llm, on_step))
