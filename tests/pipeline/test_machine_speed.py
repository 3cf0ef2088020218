"""The estimate's speed test (core.run.machine_speed): a busy or slow computer is priced slower, a GPU is not probed."""

from __future__ import annotations

import pytest

from core.run import machine_speed
from core.run.estimate import estimate
from core.run.machine_speed import REFERENCE_ROUNDS_S, busy_factor
from tests.helpers import tiny_spec


def test_a_computer_at_a_third_of_the_reference_rate_is_three_times_slower():
    assert busy_factor("cpu", rate=REFERENCE_ROUNDS_S / 3) == pytest.approx(3.0)
    assert busy_factor("cpu", rate=REFERENCE_ROUNDS_S * 2) == pytest.approx(0.5)


def test_the_factor_is_bounded_and_a_gpu_is_not_probed(monkeypatch):
    monkeypatch.setattr(machine_speed, "probe_rate", lambda seconds=0.0: pytest.fail("a GPU run was probed"))
    assert busy_factor("cuda:0") == 1.0
    lo, hi = machine_speed.BUSY_BOUNDS
    assert busy_factor("cpu", rate=1e-12) == hi
    assert busy_factor("cpu", rate=1e12) == lo


def test_every_cpu_stage_scales_with_the_busy_factor(tmp_path):
    spec = tiny_spec(tmp_path)
    plain = estimate(spec, 200, calibrate=False, topics=10)
    busy = estimate(spec, 200, calibrate=False, topics=10, busy=3.0)
    assert [s for s, _ in busy.stages] == [s for s, _ in plain.stages]
    for (stage, a), (_, b) in zip(plain.stages, busy.stages, strict=True):
        assert b == pytest.approx(3.0 * a), stage
    assert "speed test" in busy.basis and "3.0× slower" in busy.basis
    assert "speed test" not in plain.basis


def test_the_plan_prices_the_run_at_the_speed_measured_when_it_was_made(tmp_path, monkeypatch):
    from core.run.pipeline import plan

    spec = tiny_spec(tmp_path)
    steady = plan(spec)
    monkeypatch.setattr(machine_speed, "probe_rate", lambda seconds=0.0: REFERENCE_ROUNDS_S / 2)
    halved = plan(spec)
    assert steady.busy_factor == pytest.approx(1.0)
    assert halved.busy_factor == pytest.approx(2.0)
    assert halved.estimate_seconds == pytest.approx(2 * steady.estimate_seconds)


@pytest.mark.real_speed_test
def test_the_speed_test_runs_for_about_the_time_asked_and_counts_rounds():
    import time

    start = time.perf_counter()
    rate = machine_speed.probe_rate(0.05)
    elapsed = time.perf_counter() - start
    assert rate > 0
    assert elapsed >= 0.05
    assert busy_factor("cpu", rate=rate) > 0


def test_the_wizard_reuses_one_speed_test_for_a_minute(monkeypatch):
    from desktop import controller as ctl, controller_budget

    calls: list[float] = []

    def probe(seconds: float = 0.0) -> float:
        calls.append(seconds)
        return REFERENCE_ROUNDS_S / 2

    monkeypatch.setattr(machine_speed, "probe_rate", probe)
    wizard = ctl.WizardController()
    clock = [1000.0]
    monkeypatch.setattr(controller_budget.time, "monotonic", lambda: clock[0])
    assert wizard._speed_test() == pytest.approx(2.0)
    clock[0] += 30
    assert wizard._speed_test() == pytest.approx(2.0) and len(calls) == 1  # a slider move: no new test
    clock[0] += controller_budget.SPEED_TEST_REUSE_S
    wizard._speed_test()
    assert len(calls) == 2  # a minute later: taken again


@pytest.mark.real_speed_test
def test_the_speed_is_the_median_of_several_readings_and_their_spread_is_kept(monkeypatch):
    import torch

    from core.models import threads

    walls = [REFERENCE_ROUNDS_S / 2, 3.0, REFERENCE_ROUNDS_S / 2.2, REFERENCE_ROUNDS_S, REFERENCE_ROUNDS_S / 1.8]
    readings = iter([(w, w) for w in walls])
    monkeypatch.setattr(machine_speed, "_reading", lambda seconds: next(readings))
    before = torch.get_num_threads()
    probe = machine_speed.probe(threads=1)
    assert probe.rate == pytest.approx(REFERENCE_ROUNDS_S / 2)  # one reading disturbed by a burst: not the speed
    assert len(probe.readings) == machine_speed.PROBE_ROUNDS and probe.threads == 1
    assert probe.spread == pytest.approx((REFERENCE_ROUNDS_S - 3.0) / (REFERENCE_ROUNDS_S / 2))
    assert torch.get_num_threads() == before  # the probe leaves torch's threads as it found them
    readings = iter([(w, w) for w in (100.0, 5.0, 120.0, 740.0, 90.0)])
    monkeypatch.setattr(threads, "choose_threads", lambda *a, **k: threads.ThreadChoice(2, "free cores", 2, 0.0, 0.0))
    assert busy_factor("cpu") == pytest.approx(REFERENCE_ROUNDS_S / 100.0)  # the median, not the mean or the last


@pytest.mark.real_speed_test
def test_a_busy_machine_is_priced_by_the_cpu_rate_times_the_fair_share_of_a_core(monkeypatch):
    """Beside two busy programs on two cores the run gets 2/3 of a core over minutes, whatever half a second of
    the probe got: the probe's CPU rate (its speed when it runs) times that share is the price."""
    from core.models import threads

    shares = iter([0.5, 0.7, 0.55, 0.65, 0.6])  # one thread's share of a core over each reading swings
    monkeypatch.setattr(machine_speed, "_reading", lambda seconds: (next(shares) * 300.0, 300.0))
    two_busy = threads.ThreadChoice(1, "free cores", 2, 3.0, 1.0)  # 3 runnable, 1 of them ours: 2 others
    monkeypatch.setattr(threads, "choose_threads", lambda *a, **k: two_busy)
    assert machine_speed.fair_share(two_busy) == pytest.approx(2 / 3)
    assert machine_speed.probe_rate() == pytest.approx(200.0)
    assert machine_speed.fair_share(threads.ThreadChoice(1, "free cores", 2, 2.0, 1.0)) == 1.0  # a core left free
    assert machine_speed.fair_share(threads.ThreadChoice(2, "free cores", 2, 0.0, 0.0)) == 1.0  # idle


@pytest.mark.real_speed_test
def test_the_speed_test_runs_on_one_thread_whatever_the_models_will_run_on(monkeypatch):
    """One core's speed now: a busy machine (the models on one thread) is not compared with a reference on two."""
    from core.models import threads

    seen: list[int] = []

    def reading(seconds: float) -> float:
        import torch

        seen.append(torch.get_num_threads())
        return REFERENCE_ROUNDS_S, REFERENCE_ROUNDS_S

    monkeypatch.setattr(machine_speed, "_reading", reading)
    monkeypatch.setattr(threads, "choose_threads", lambda *a, **k: threads.ThreadChoice(2, "free cores", 2, 0.0, 0.0))
    assert machine_speed.probe().threads == 1 and set(seen) == {1}
    assert machine_speed.probe(threads=2).threads == 2 and set(seen) == {1, 2}


@pytest.mark.real_speed_test
def test_on_one_thread_the_cpu_rate_counts_the_probes_own_thread_only(monkeypatch):
    """A model's threads still spinning after a run are the process's CPU time, not the probe's."""
    import itertools

    import torch

    ticks = itertools.count(0.0, 1.0)  # a thread clock that says each reading took a whole second of CPU
    monkeypatch.setattr(machine_speed.time, "thread_time", lambda: next(ticks))
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        wall, cpu = machine_speed._reading(0.02)
    finally:
        torch.set_num_threads(before)
    assert cpu < wall / 10  # read from the thread's clock: one second of CPU for 0.02 s of wall time
