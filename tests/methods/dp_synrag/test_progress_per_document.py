"""Issue 32 item 2: progress per document while writing, and a time left that is never frozen.

The public writer advances its bar as each document becomes final and reports its decoding steps in
between; ``EtaTracker`` turns such events into a time left that keeps counting, and once a stage runs past
its estimate it says so ("a little longer than planned") instead of a frozen "about 1 second".
"""

from __future__ import annotations

import re

import pytest

import core.common.progress as progress_module
from core.run.estimate import LONGER_THAN_PLANNED, Estimate, EtaTracker, duration_words
from core.methods.dp_synrag.shape import examples as ex
from core.methods.dp_synrag.shape import released_topics as rt
from core.methods.dp_synrag.write import realisation as rl
from core.methods.dp_synrag.write.writing_progress import PRIOR_RETRY_SHARE, WRITER_BATCH, DraftWork, planned_batches
from core.common.progress import CallbackReporter, ProgressEvent, StageProgress

WRITING = rl.REALISATION_STAGE
ONE_SECOND = re.compile(r"\babout 1 seconds?\b")


def tracker_at(clock: list[float], planned_s: float) -> EtaTracker:
    estimate = Estimate([("models", 10.0), (WRITING, planned_s), ("export", 20.0)], "test")
    return EtaTracker(estimate, clock=lambda: clock[0])


def start_writing(tracker: EtaTracker, clock: list[float]) -> None:
    for kind, stage, t in (("stage_start", "models", 0.0), ("stage_end", "models", 10.0),
                           ("stage_start", WRITING, 10.0)):
        clock[0] = t
        tracker.update({"kind": kind, "stage": stage, "done": 0, "total": 40})


def test_the_time_left_keeps_counting_while_progress_events_arrive_on_a_stage_ten_times_slower_than_planned():
    clock = [0.0]
    tracker = tracker_at(clock, planned_s=60.0)  # the writing really takes 600 s
    start_writing(tracker, clock)
    shown: list[tuple[float, float, str]] = []
    for second in range(1, 600):
        clock[0] = 10.0 + second
        if second % 5 == 0:  # a decoding step every 5 s: the share of the stage's work done
            tracker.update({"kind": "progress", "stage": WRITING, "done": second // 15, "total": 40,
                            "fraction": second / 600})
        shown.append((clock[0], tracker.stage_remaining_s(WRITING) or 0.0, tracker.run_words()))
    values = [left for _, left, _ in shown]
    assert all(a != b for a, b in zip(values, values[1:])), "the figure changes every second: never frozen"
    for t, left, words in shown:
        assert not ONE_SECOND.search(words), (t, words)
        assert left > 0 and words.endswith("left") and "longer" not in words
        if t - 10.0 >= 60:  # a tenth of the stage done: its own rate alone, the true time left
            assert left == pytest.approx(600 - (t - 10.0), abs=5.0), (t, left)
    assert tracker.stage_words(WRITING) != LONGER_THAN_PLANNED


def test_a_stage_past_its_estimate_without_events_says_it_takes_longer_never_about_one_second():
    clock = [0.0]
    tracker = tracker_at(clock, planned_s=60.0)
    start_writing(tracker, clock)
    clock[0] = 30.0
    assert tracker.stage_words(WRITING) == "about 40 seconds left" and not tracker.overdue(WRITING)
    for t in (71.0, 120.0, 300.0):  # no event for minutes: the estimate is used up, the stage is not done
        clock[0] = t
        assert tracker.overdue(WRITING)
        assert tracker.stage_words(WRITING) == LONGER_THAN_PLANNED
        words = tracker.run_words()
        assert not ONE_SECOND.search(words)
        assert words == "about 20 seconds left after this stage, which is taking longer than planned"
    tracker.update({"kind": "stage_end", "stage": WRITING, "done": 40, "total": 40})
    assert tracker.stage_words(WRITING) == "done" and not tracker.overdue(WRITING)
    words = tracker.run_words()  # the export's 20 s, as much slower as the writing was
    assert words == "about 2 minutes left" and tracker.remaining_s() == pytest.approx(20.0 * 290.0 / 60.0)
    tracker.update({"kind": "stage_start", "stage": "export"})
    clock[0] = 400.0
    assert tracker.run_words() == LONGER_THAN_PLANNED, "the last stage past its estimate, nothing after it"
    tracker.update({"kind": "done", "stage": "run"})
    assert tracker.run_words() == "finished"


def test_durations_agree_with_their_number():
    assert duration_words(1) == "about 1 second" and duration_words(89) == "about 89 seconds"
    assert duration_words(90) == "about 2 minutes" and duration_words(61 * 60) == "about 61 minutes"
    assert not any(re.search(r"\b1 (seconds|minutes)\b", duration_words(s)) for s in (0.2, 1, 1.4, 60, 91, 100, 5400))


def test_the_share_of_drafting_done_counts_the_second_drafts_the_first_ones_show_are_needed():
    assert DraftWork(topics=8).planned() == 8 * (1 + PRIOR_RETRY_SHARE)  # before any batch: the prior share
    work = DraftWork(topics=8)
    work.step(rows=4, step=3, max_steps=6)
    assert work.fraction() == pytest.approx(2 / work.planned())
    work.batch_done(rows=4, unfinished=2, first=True)
    assert work.fraction() == pytest.approx(4 / 12)  # 2 of 4 lacked a word: 12 drafts in all
    work.batch_done(rows=4, unfinished=0, first=True)
    assert work.planned() == 10.0 and work.fraction() == pytest.approx(8 / 10)  # the first pass done: 2 retries
    work.batch_done(rows=2, unfinished=0, first=False)
    assert work.fraction() == 1.0
    assert DraftWork(topics=0).fraction() == 1.0  # a resume with every document already written


class _Clock:
    """``time.monotonic`` for ``core.common.progress``: one second passes at every call, so no event is rate-limited."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        self.now += 1.0
        return self.now


def test_the_writer_advances_its_bar_per_document_and_reports_steps_within_a_batch(monkeypatch):
    from core.models.registry import load_language_model
    from core.specs.runspec import ModelChoice

    monkeypatch.setattr(progress_module, "time", _Clock())
    events: list[ProgressEvent] = []
    llm = load_language_model(ModelChoice(source="tiny-random"))
    topics = [rt.Topic(f"topic{i}", ("cough",)) for i in range(6)]
    done = rl.realise(topics, "Write notes.", ex.shipped_example("clinical_note"), llm,
                      CallbackReporter(events.append), rl.WriterSettings(6, batch=2))
    writing = [e for e in events if e.stage == WRITING]
    bars = [e.done for e in writing if e.kind == "progress"]
    assert bars == sorted(bars) and bars[-1] == len(topics)
    assert any(0 < n < len(topics) for n in bars), "the bar moves as documents finish, not all at the end"
    previews = [i for i, e in enumerate(writing) if e.kind == "preview"]
    advances = [i for i, e in enumerate(writing) if e.kind == "progress" and e.done > 0]
    assert previews[0] < advances[0] < previews[-1], "a document is counted when it is final"
    steps = [e for e in writing if e.kind == "progress" and e.fraction is not None and e.done < len(topics)]
    assert len({(e.done, e.fraction) for e in steps}) > len(set(bars)), "progress within a batch, between documents"
    assert all(0.0 <= (e.fraction or 0.0) <= 1.0 for e in steps)
    assert len(done) == len(topics) and writing[-1].kind == "stage_end"


def test_a_stage_that_resumes_with_finished_items_starts_its_bar_there():
    events: list[ProgressEvent] = []
    StageProgress(CallbackReporter(events.append), WRITING, 10, done=4).start()
    assert (events[0].kind, events[0].done, events[0].total) == ("stage_start", 4, 10)


def test_the_writer_is_priced_per_batch_so_many_documents_cost_less_each_than_a_few():
    rows = planned_batches(200, demonstrations=4)
    assert sum(rows) == pytest.approx(200 * (1 + PRIOR_RETRY_SHARE))  # every draft, second ones included
    assert max(rows) <= WRITER_BATCH and len(rows) == 20  # 4 x (16, 16, 16, 2) first, 4 x 12.5 again
    assert planned_batches(3, demonstrations=4)[:3] == [1.0, 1.0, 1.0]  # fewer documents than demonstrations
    from core.run.estimate import _Speeds

    speeds = _Speeds(prefill=1.0, decode=1.0, embed=1.0, prompt=1)
    each_of_200 = speeds.batches(rows, 80) / 200
    each_of_12 = speeds.batches(planned_batches(12, demonstrations=4), 80) / 12
    assert each_of_200 < each_of_12 / 2  # per-row pricing made them equal: 198 documents took 3 minutes, not 13
