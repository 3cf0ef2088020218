"""How fast this computer runs *now*: a short public workload, timed just before a run is priced.

The estimate's built-in speed figures (``core.run.estimate``) were measured on one computer at one load. The same
run on a faster computer, or on this one while other programs keep its cores busy, takes a different time:
session 3's first run of a 200-note file took 4x longer than priced because the machine was shared. So the
estimate scales its CPU speeds by ``busy_factor()``: how many times longer than on the reference computer a
fixed workload takes here, now. The workload is public (numbers made up on the spot: no data, no model), the
shape of one decoding step of the packaged model (a 16-row batch through 576-wide layers, torch matrix products),
and it runs for half a second in the process that prices the run.

``REFERENCE_ROUNDS_S`` is the workload's rate on the computer the built-in figures come from.

One reading is easily disturbed (a neighbour's burst, the scheduler moving a thread): the half second is cut
into ``PROBE_ROUNDS`` readings and the speed is their median, with their spread (``SpeedProbe.spread``) kept to
say how steady the machine was.

The workload runs on **one thread**, whatever the models will run on. The packaged model's decoding step barely
gains from a second thread (16 rows: 7.5 steps/s on one thread, 8.8 on two, on the idle 2-core machine, 2026-12-07),
while the matrix product gains 1.7x: priced on the threads the models would use, a busy machine (one thread chosen)
was compared with an idle reference on two and priced 3x slower where the run took 1.7x.

**A busy machine is priced by its fair share, not by half a second of it.** Beside two busy programs on two cores,
one thread's share of a core over half a second swings from 0.5 to 0.7 (the scheduler moves the three threads
between the two cores), and so did the probe's rate: two busy runs of the same file were priced 4.0x and 2.3x the
reference for 405 s and 444 s (docs/bench/estimate.md, "Round 5, session 5"). The probe's *CPU rate* (rounds per
second of CPU time it got) holds still (0.77-0.95 of idle), and the share a run gets over minutes is the fair one:
``cores / (other programs' runnable threads + ours)``, at most 1, read from the runnable count as the thread choice
reads it (``core.models.threads``). So the speed is the CPU rate times that share (``probe_rate``).
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass

from core.models import threads as thread_choice

# rounds/s of the one-thread probe on the computer where core.run.estimate's built-in figures were measured: that
# computer ran the two-thread probe at 740 rounds/s (709-802 between the writer's batches on 2026-12-04,
# docs/bench/estimate.md); its one-thread rate is 740 x 246 / 426, this 2-core machine's one- to two-thread ratio
# measured side by side when the probe moved to one thread (2026-12-07), so an idle machine is priced as before
REFERENCE_ROUNDS_S = 427.0
PROBE_THREADS = 1  # what one core gives this process now (the module's docstring says why not the models' threads)
PROBE_SECONDS = 0.5  # 0.25 s readings spread ±30 % on the loaded 2-core machine, 1 s ones ±2 %
PROBE_ROUNDS = 5  # readings of PROBE_SECONDS / PROBE_ROUNDS each; the speed is their median
BUSY_BOUNDS = (0.2, 20.0)  # a probe outside these says more about the probe than about the computer
_ROWS, _WIDTH, _LAYERS = 16, 576, 4


@dataclass(frozen=True)
class SpeedProbe:
    """One speed test: the median ``rate`` (rounds/s of wall time) of its ``readings`` and their ``spread``
    ((largest - smallest) / median: 0 on a steady machine), on ``threads`` torch threads."""

    rate: float
    readings: tuple[float, ...]
    threads: int
    cpu_rate: float = 0.0  # the median rounds per second of CPU time the probe got (its speed when it runs)

    @property
    def spread(self) -> float:
        return (max(self.readings) - min(self.readings)) / max(self.rate, 1e-9)


def median_rate(readings: list[float] | tuple[float, ...]) -> float:
    """The speed a probe reports: the median of its readings (one disturbed reading does not move it)."""
    return float(statistics.median(readings))


def probe(seconds: float = PROBE_SECONDS, rounds: int = PROBE_ROUNDS, threads: int = PROBE_THREADS) -> SpeedProbe:
    """The public workload timed ``rounds`` times over about ``seconds`` of wall time in all, on ``threads``
    torch threads."""
    import torch

    count = max(int(threads), 1)
    before = torch.get_num_threads()
    if count != before:
        torch.set_num_threads(count)
    try:
        pairs = [_reading(seconds / max(rounds, 1)) for _ in range(max(rounds, 1))]
    finally:
        if count != before:
            torch.set_num_threads(before)
    readings = tuple(wall for wall, _ in pairs)
    return SpeedProbe(median_rate(readings), readings, count, median_rate([cpu for _, cpu in pairs]))


def fair_share(choice: thread_choice.ThreadChoice) -> float:
    """The share of a core each of the models' threads gets over a run: ``cores / (others + threads)``, at most 1,
    where ``others`` are the other programs' runnable threads now."""
    others = max(choice.load - choice.own, 0.0)
    return min(1.0, choice.cores / max(others + choice.threads, 1e-9))


def probe_rate(seconds: float = PROBE_SECONDS) -> float:
    """Rounds per second the run can expect now: the workload's CPU rate (the median of ``PROBE_ROUNDS`` readings
    over about ``seconds`` of wall time in all, ``probe``) times the fair share of a core (``fair_share``)."""
    return probe(seconds).cpu_rate * fair_share(thread_choice.choose_threads())


def _reading(seconds: float) -> tuple[float, float]:
    """Rounds per second of wall time and of CPU time of the public workload over about
    ``seconds`` of wall time (one round: ``_LAYERS`` products of a 16 x 576 batch with a 576 x 1536 matrix and
    back, the shape of a decoding step), with torch, as the writer runs."""
    import torch  # the writer's library and threads; imported here so that reading this module stays light

    with torch.inference_mode():
        # fixed made-up numbers, no random generator: the test must not consume torch's global random state
        x = torch.cos(torch.arange(_ROWS * _WIDTH, dtype=torch.float32)).reshape(_ROWS, _WIDTH)
        up = torch.sin(torch.arange(_WIDTH * (_WIDTH * 8 // 3), dtype=torch.float32)).reshape(_WIDTH, -1) / _WIDTH**0.5
        down = up.T.contiguous()
        # on one thread the work runs on this thread: its own CPU time, not the process's (a model's threads still
        # spinning after a run would count as the probe's)
        clock = time.thread_time if torch.get_num_threads() == 1 else time.process_time
        rounds, start, cpu = 0, time.perf_counter(), clock()
        deadline = start + seconds
        while True:
            h = x
            for _ in range(_LAYERS):
                h = torch.tanh(h @ up) @ down
            rounds += 1
            now = time.perf_counter()
            if now >= deadline:
                return rounds / (now - start), rounds / max(clock() - cpu, 1e-9)


def busy_factor(device: str = "cpu", rate: float | None = None) -> float:
    """How many times slower than the reference computer this one runs the workload now (1.0 on a GPU, whose
    speed the probe does not see); ``rate``: a probe already measured."""
    if device.startswith("cuda"):
        return 1.0
    measured = probe_rate() if rate is None else rate
    lo, hi = BUSY_BOUNDS
    return min(max(REFERENCE_ROUNDS_S / max(measured, 1e-9), lo), hi)
