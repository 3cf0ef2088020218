"""How many threads the models run on: the cores that are free now, not every core.

On a shared 2-core machine two torch threads ran the writer at 3.0 tokens/s and one thread at 26.7
(docs/benchmarks.md): when another program keeps a core busy, a second thread of ours waits for it at every
step and drags the other one down. So the thread count is chosen from the cores this process may use
(``os.sched_getaffinity``) less the work *other* programs ask of them now.

Where the system says (Linux), that work is read as it is *now*: the threads the kernel counts as runnable
(``/proc/loadavg``'s fourth field) less this process's own runnable threads (``/proc/self/task/*/stat``, read
before and after it, the fewer counted), the median of a few samples a few milliseconds apart (one sample can catch
a neighbour between two time slices). The
1-minute load average reacts too slowly: 20 s after two busy programs start it reads about 0.6 (2 · (1 − e^(−1/3))),
so the writer took both cores beside them and fell to 0.38 of its idle speed (issue 58). Elsewhere the 1-minute load average
(``os.getloadavg``) is used, less this process's own share of it, estimated as the kernel keeps the load average:
an exponential average, over a minute, of the cores this process used (its CPU time) between two calls, scaled up
by load / cores when the cores are oversubscribed (each runnable thread then gets cores / load of a core). Either
way the count is at least 1 and never more than the cores.

``[compute] threads = N`` (N > 0) or the environment variable ``PRIVET_THREADS`` (when the setting is 0)
fixes the count (still at most the cores). ``apply_threads`` sets torch's threads and those of the llama.cpp
models it is given; ``match_free_cores`` chooses again and applies it, at the start of a long stage (a busy
neighbour may have started or stopped since the models were loaded): every charged stage (``core.run.pipeline``), and
every batch of the public writer (``realisation.realise``, ``form_writer.FormWriter.write``), whose stage is
post-processing and so starts no charge while it runs for minutes.
"""

from __future__ import annotations

import math
import os
import statistics
import threading
import time
from dataclasses import dataclass

ENV = "PRIVET_THREADS"  # a fixed thread count for every run of this process ([compute] threads wins)
LOAD_WINDOW_S = 60.0  # the load average used: the kernel's 1-minute one
_SHORT_WINDOW_S = 1.0  # own CPU use over less than this is not sampled again (too noisy)
RUNNABLE_SAMPLES = 7  # samples of the runnable threads, RUNNABLE_GAP_S apart; their median is used
RUNNABLE_GAP_S = 0.01


@dataclass(frozen=True)
class ThreadChoice:
    """A thread count and why: ``source`` is "setting" ([compute] threads), "environment" (PRIVET_THREADS)
    or "free cores" (chosen from the load); ``cores``, ``load`` and ``own`` are what it was chosen from."""

    threads: int
    source: str
    cores: int
    load: float
    own: float

    def words(self) -> str:
        if self.source != "free cores":
            return f"{self.threads} thread{'s' * (self.threads != 1)} ({self.source})"
        return (f"{self.threads} thread{'s' * (self.threads != 1)} of {self.cores} cores (load {self.load:.1f}, "
                f"{max(self.load - self.own, 0.0):.1f} of it other programs')")


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system says; else every core)."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except (AttributeError, OSError):  # not Linux
        return max(os.cpu_count() or 1, 1)


def load_average() -> float | None:
    """The 1-minute load average, or None where the system keeps none (Windows)."""
    try:
        return float(os.getloadavg()[0])
    except (AttributeError, OSError):
        return None


def _own_runnable() -> int:
    """This process's threads the kernel counts as runnable now (state R in ``/proc/self/task/*/stat``)."""
    count = 0
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/stat", encoding="ascii", errors="replace") as stat:
                fields = stat.read().rsplit(")", 1)[-1].split()
        except OSError:  # the thread ended while we looked
            continue
        count += bool(fields) and fields[0] == "R"
    return count


def runnable_now() -> tuple[float, float] | None:
    """(runnable threads on the machine, this process's own of them) now, from RUNNABLE_SAMPLES samples; None where
    the system does not say (not Linux). Each sample reads our own threads before and after the machine's count and
    takes the fewer: one of our threads that woke between the two reads is then counted as another program's (one
    thread too few for us, the safe side) rather than a neighbour's as ours (a thread too many beside a busy program
    ran the writer at a ninth of its speed). The result is our median plus the median of the others'."""
    others: list[int] = []
    owns: list[int] = []
    try:
        for i in range(RUNNABLE_SAMPLES):
            if i:
                time.sleep(RUNNABLE_GAP_S)
            before = _own_runnable()
            with open("/proc/loadavg", encoding="ascii") as loadavg:
                total = int(loadavg.read().split()[3].split("/")[0])
            own = min(before, _own_runnable())
            others.append(max(total - own, 0))
            owns.append(own)
    except (OSError, IndexError, ValueError):
        return None
    own_median = float(statistics.median(owns))
    return own_median + float(statistics.median(others)), own_median


def free_threads(cores: int, load: float, own: float = 0.0) -> int:
    """The threads that fit the free cores: ``cores`` less the load of other work (``load - own``), counting a
    neighbour's core as taken once it uses more than half of one; at least 1, at most ``cores``."""
    others = max(load - max(own, 0.0), 0.0)
    return min(max(math.floor(cores - others + 0.5), 1), cores)


class _OwnLoad:
    """This process's share of the load average: an exponential 1-minute average of its CPU use, as the
    kernel averages the run queue (sampled at each call, not in the background)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._wall, self._cpu = time.monotonic(), time.process_time()
        self.average = 0.0  # the process has just started: it has added nothing to the load yet

    def sample(self, load: float, cores: int) -> float:
        with self._lock:
            wall, cpu = time.monotonic(), time.process_time()
            elapsed = wall - self._wall
            if elapsed < _SHORT_WINDOW_S:
                return self.average
            used = max(cpu - self._cpu, 0.0) / elapsed  # cores this process used since the last sample
            runnable = used * max(load, cores) / cores  # oversubscribed: each thread got cores / load of a core
            decay = math.exp(-elapsed / LOAD_WINDOW_S)
            self.average = self.average * decay + runnable * (1.0 - decay)
            self._wall, self._cpu = wall, cpu
            return self.average


_own = _OwnLoad()
_lock = threading.Lock()
_setting = 0  # the running spec's [compute] threads (0: automatic), kept for match_free_cores
_current: int | None = None  # the count last applied (None: never; llama.cpp then takes the free cores at load)
_models: list[object] = []  # llama.cpp models loaded since the last configure(), whose threads follow


def _env_threads() -> int:
    """PRIVET_THREADS as a whole number ≥ 1, or 0 when it is unset, 0 or not a whole number."""
    text = os.environ.get(ENV, "").strip()
    try:
        value = int(text)
    except ValueError:
        return 0
    return max(value, 0)


def choose_threads(setting: int = 0, cores: int | None = None, load: float | None = None,
                   own: float | None = None) -> ThreadChoice:
    """The thread count for now. ``setting`` > 0 ([compute] threads) wins, then ``PRIVET_THREADS``; else the
    free cores. ``cores``, ``load`` and ``own`` default to this machine's, now (given: for tests): the runnable
    threads and our own of them where the system says, else the load average and our share of it."""
    cores = usable_cores() if cores is None else max(int(cores), 1)
    now = runnable_now() if load is None else None
    if now is not None:  # the runnable threads now (Linux), ours among them
        measured, own = now[0], now[1] if own is None else own
    else:
        average = load_average() if load is None else load
        measured = 0.0 if average is None else average  # no load average: all the cores, as torch would take
        if own is None:
            own = _own.sample(measured, cores)
    fixed, source = (setting, "setting") if setting > 0 else (_env_threads(), "environment")
    if fixed > 0:
        return ThreadChoice(min(fixed, cores), source, cores, measured, own)
    return ThreadChoice(free_threads(cores, measured, own), "free cores", cores, measured, own)


def current_threads() -> int:
    """The thread count last applied, or the free cores now when none was (a llama.cpp model loaded outside a run)."""
    with _lock:
        if _current is not None:
            return _current
    return choose_threads(_setting).threads


def follow(model: object) -> None:
    """Let ``model``'s threads (a llama.cpp model: ``set_threads``) follow every later ``apply_threads``."""
    if hasattr(model, "set_threads"):
        with _lock:
            if not any(m is model for m in _models):
                _models.append(model)


def configure(setting: int = 0) -> None:
    """Start of a run: its ``[compute] threads`` (0: automatic), and no models followed from an earlier run."""
    global _setting
    with _lock:
        _setting = max(int(setting), 0)
        _models.clear()


def apply_threads(threads: int, *models: object) -> int:
    """Run torch (intra-op) and the llama.cpp ``models`` (and those followed) on ``threads`` threads."""
    global _current
    threads = max(int(threads), 1)
    import torch  # imported here so that reading the count stays light

    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
    with _lock:
        _current = threads
        targets = list(_models)
    for model in (*models, *(m for m in targets if not any(m is g for g in models))):
        set_threads = getattr(model, "set_threads", None)
        if set_threads is not None:
            set_threads(threads)
    return threads


def match_free_cores(*models: object, setting: int | None = None) -> ThreadChoice:
    """Choose the thread count again (the run's ``[compute] threads`` unless ``setting`` is given) and apply it
    to torch and the llama.cpp models (``models`` and those followed). Call it at the start of a long stage."""
    choice = choose_threads(_setting if setting is None else setting)
    apply_threads(choice.threads, *models)
    return choice
