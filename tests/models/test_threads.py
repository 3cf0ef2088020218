"""Threads that match the free cores (core.models.threads): one thread on a busy 2-core machine, two on an idle
one, this process's own load not counted as a neighbour's, and [compute] threads or PRIVET_THREADS winning."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import time

import pytest
import torch

from core.models import threads
from core.specs.runspec import ComputeSpec, RunSpec


@pytest.fixture(autouse=True)
def torch_threads_kept(monkeypatch):
    """Each test leaves torch's threads, the module's run setting and the environment as it found them."""
    monkeypatch.delenv(threads.ENV, raising=False)
    before = torch.get_num_threads()
    monkeypatch.setattr(threads, "_current", None)
    monkeypatch.setattr(threads, "_models", [])
    monkeypatch.setattr(threads, "_setting", 0)
    yield
    torch.set_num_threads(before)


def test_a_busy_two_core_machine_gets_one_thread_and_an_idle_one_two():
    assert threads.choose_threads(cores=2, load=1.1, own=0.0).threads == 1  # one neighbour busy
    assert threads.choose_threads(cores=2, load=5.0, own=0.0).threads == 1  # at least one
    assert threads.choose_threads(cores=2, load=0.2, own=0.0).threads == 2  # idle but for noise
    assert threads.choose_threads(cores=2, load=0.0, own=0.0).threads == 2
    assert threads.choose_threads(cores=16, load=3.0, own=0.0).threads == 13
    choice = threads.choose_threads(cores=2, load=1.1, own=0.0)
    assert choice.source == "free cores" and "1 thread of 2 cores" in choice.words()


def test_our_own_load_is_not_a_neighbour():
    # this process kept both cores busy: the load is ours, both cores are free for us
    assert threads.choose_threads(cores=2, load=2.0, own=2.0).threads == 2
    # ours and one neighbour's
    assert threads.choose_threads(cores=2, load=3.0, own=2.0).threads == 1


def test_the_machine_is_read_when_nothing_is_given(monkeypatch):
    monkeypatch.setattr(threads, "usable_cores", lambda: 2)
    monkeypatch.setattr(threads, "runnable_now", lambda: (3.0, 1.0))  # two neighbours' threads runnable now
    assert threads.choose_threads() == threads.ThreadChoice(1, "free cores", 2, 3.0, 1.0)
    monkeypatch.setattr(threads, "runnable_now", lambda: (2.0, 2.0))  # only ours
    assert threads.choose_threads().threads == 2
    monkeypatch.setattr(threads, "runnable_now", lambda: None)  # not Linux: the load average
    monkeypatch.setattr(threads, "load_average", lambda: 1.5)
    monkeypatch.setattr(threads._own, "sample", lambda load, cores: 0.0)
    assert threads.choose_threads() == threads.ThreadChoice(1, "free cores", 2, 1.5, 0.0)
    monkeypatch.setattr(threads, "load_average", lambda: None)  # no load average (Windows): every core
    assert threads.choose_threads().threads == 2


def test_the_setting_and_the_environment_win(monkeypatch):
    busy = {"cores": 2, "load": 1.9, "own": 0.0}
    assert threads.choose_threads(2, **busy) == threads.ThreadChoice(2, "setting", 2, 1.9, 0.0)
    assert threads.choose_threads(8, **busy).threads == 2  # never more than the cores
    monkeypatch.setenv(threads.ENV, "2")
    assert threads.choose_threads(0, **busy).threads == 2 and threads.choose_threads(0, **busy).source == "environment"
    assert threads.choose_threads(1, **{**busy, "load": 0.0}).source == "setting"  # the spec's setting beats it
    for unset in ("", "0", "two", "-3"):
        monkeypatch.setenv(threads.ENV, unset)
        assert threads.choose_threads(0, **busy).threads == 1


@pytest.mark.skipif(not os.path.exists("/proc/loadavg"), reason="the runnable threads are read on Linux only")
def test_two_busy_programs_are_seen_at_once_and_our_own_threads_are_not_theirs():
    """The 1-minute load average sees two busy programs started 1 s ago as about 0.03; the runnable threads now
    count both at once (a spinning program is runnable whether it runs or waits for a core), and this process's
    own running thread is not counted as a neighbour's."""
    idle_total, idle_own = threads.runnable_now() or (0.0, 0.0)
    assert idle_own >= 1 and idle_total >= idle_own  # the thread that reads is ours, and runnable
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        time.sleep(1.0)
        total, own = threads.runnable_now() or (0.0, 0.0)
        choice = threads.choose_threads(cores=2)
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()
    assert total - own >= 2 and choice.threads == 1


def test_own_load_is_averaged_over_a_minute_as_the_kernel_does(monkeypatch):
    clock = {"wall": 0.0, "cpu": 0.0}
    monkeypatch.setattr(threads.time, "monotonic", lambda: clock["wall"])
    monkeypatch.setattr(threads.time, "process_time", lambda: clock["cpu"])
    own = threads._OwnLoad()
    assert own.sample(load=2.0, cores=2) == 0.0  # nothing measured yet
    clock["wall"], clock["cpu"] = 60.0, 120.0  # a minute on both cores
    assert own.sample(load=2.0, cores=2) == pytest.approx(2 * (1 - math.exp(-1)))
    clock["wall"] += 0.1  # too short to sample again
    assert own.sample(load=2.0, cores=2) == pytest.approx(2 * (1 - math.exp(-1)))
    clock["wall"], clock["cpu"] = 10_060.0, 120.0 + 10_000.0  # one core's worth, but three runnable on two cores
    assert own.sample(load=3.0, cores=2) == pytest.approx(1.5)  # each thread got 2/3 of a core


class FakeLlama:
    def __init__(self) -> None:
        self.threads: list[int] = []

    def set_threads(self, n: int) -> None:
        self.threads.append(n)


def test_applying_sets_torch_and_the_followed_models(monkeypatch):
    model, other = FakeLlama(), FakeLlama()
    threads.configure(1)
    threads.follow(model)
    threads.follow(model)  # once only
    assert threads.apply_threads(1, other) == 1
    assert torch.get_num_threads() == 1 and threads.current_threads() == 1
    assert model.threads == [1] and other.threads == [1]
    monkeypatch.setattr(threads, "runnable_now", lambda: None)
    monkeypatch.setattr(threads, "load_average", lambda: 0.0)
    monkeypatch.setattr(threads, "usable_cores", lambda: 2)
    assert threads.match_free_cores().threads == 1  # the run's setting is kept
    assert threads.match_free_cores(setting=0).threads == 2
    assert torch.get_num_threads() == 2 and model.threads == [1, 1, 2]
    threads.configure(0)  # a new run follows its own models only
    threads.apply_threads(1)
    assert model.threads == [1, 1, 2]


def test_the_compute_section_holds_the_threads():
    assert RunSpec().compute.threads == 0
    assert RunSpec.from_dict({"compute": {"threads": 2}}).compute.threads == 2
    spec = RunSpec()
    spec.compute = ComputeSpec(threads=-1)
    assert [p for p in spec.problems() if p.startswith("[compute] threads")]


def test_a_run_loads_its_models_on_the_threads_its_spec_asks_for(tmp_path):
    from core.run.loaded_models import load_models
    from core.common.progress import NULL_REPORTER
    from tests.helpers import tiny_spec

    spec = tiny_spec(tmp_path)
    spec.compute.threads = 1
    load_models(spec, NULL_REPORTER)
    assert torch.get_num_threads() == 1 and threads.current_threads() == 1


def test_a_llamacpp_model_changes_the_threads_of_its_contexts():
    from core.models.llamacpp_backend import LlamaCppLanguageModel

    calls: list[tuple[object, int, int]] = []

    class Lib:
        def llama_set_n_threads(self, ctx, n, n_batch):
            calls.append((ctx, n, n_batch))

    class Context:
        def __init__(self, ctx):
            self.ctx = ctx

    model = LlamaCppLanguageModel.__new__(LlamaCppLanguageModel)
    model._lib, model._threads = Lib(), 2
    model.llm = Context("main")
    model._contexts = [Context("shard")]  # type: ignore[list-item]
    model.set_threads(1)
    model.set_threads(1)  # unchanged: nothing to do
    assert calls == [("main", 1, 1), ("shard", 1, 1)]
    model._contexts = []  # nothing for __del__ to free


def _busy_two_cores(monkeypatch) -> None:
    monkeypatch.setattr(threads, "usable_cores", lambda: 2)
    monkeypatch.setattr(threads, "runnable_now", lambda: None)
    monkeypatch.setattr(threads, "load_average", lambda: 1.5)  # one neighbour keeps a core busy
    monkeypatch.setattr(threads._own, "sample", lambda load, cores: 0.0)


def _threads_per_batch(llm) -> list[int]:
    """torch's threads at each batch the writer starts (each batch opens one logits session)."""
    seen: list[int] = []
    start = llm.start_logits

    def counted(*args, **kwargs):
        seen.append(torch.get_num_threads())
        return start(*args, **kwargs)

    llm.start_logits = counted
    return seen


def test_the_form_writer_writes_each_batch_on_the_free_cores_unless_told(monkeypatch):
    """The writing stage is post-processing (no charge, so no charged stage's start re-chooses the threads): the
    writer chooses them from the free cores at each batch, and a followed llama.cpp model follows; [compute]
    threads and PRIVET_THREADS still win."""
    import random

    from core.methods.dp_synrag.write.form_writer import FormWriter
    from core.models.registry import packaged_tokenizer
    from core.models.tiny import build_tiny_language_model

    _busy_two_cores(monkeypatch)
    llm = build_tiny_language_model(packaged_tokenizer())
    seen = _threads_per_batch(llm)
    llama = FakeLlama()
    threads.configure(0)
    threads.follow(llama)
    torch.set_num_threads(2)
    writer = FormWriter(llm, torch.Generator().manual_seed(3), random.Random(3))
    write = lambda: writer.write("Answer questions.", ["Seen: [name]. [text]."] * 3, [("fever", ())] * 3, batch=2)  # noqa: E731
    write()
    assert seen == [1, 1] and set(llama.threads) == {1}
    threads.configure(2)  # [compute] threads = 2
    threads.follow(llama)
    write()
    assert seen[2:] == [2, 2] and llama.threads[-1] == 2
    threads.configure(0)
    monkeypatch.setenv(threads.ENV, "2")
    torch.set_num_threads(1)
    write()
    assert seen[4:] == [2, 2]


def test_the_realised_writer_writes_each_batch_on_the_free_cores(monkeypatch):
    from core.methods.dp_synrag.shape import released_topics as rt
    from core.methods.dp_synrag.write import realisation as rl
    from core.models.registry import load_language_model
    from core.common.progress import NULL_REPORTER
    from core.specs.runspec import ModelChoice

    _busy_two_cores(monkeypatch)
    llm = load_language_model(ModelChoice(source="tiny-random"))
    seen = _threads_per_batch(llm)
    threads.configure(0)
    torch.set_num_threads(2)
    topics = [rt.Topic(f"topic{i}", ("cough",)) for i in range(3)]
    rl.realise(topics, "Write notes.", "", llm, NULL_REPORTER, rl.WriterSettings(4, batch=2))
    assert seen and set(seen) == {1}


def test_writing_in_the_corpus_s_forms_asks_the_roles_on_the_free_cores(monkeypatch, tmp_path):
    """The roles of the released words are asked of the model before the form writer's first batch: they run on
    the free cores too, not on the threads the last charged stage chose (a busy run's role scoring took 2 threads)."""
    from core.common.checkpoints import Checkpoints
    from core.common.progress import NULL_REPORTER
    from core.methods.base import MethodContext
    from core.methods.dp_synrag.release.structure import ReleasedForms
    from core.methods.dp_synrag.shape.released_topics import Topic
    from core.methods.dp_synrag.write.text import written_in_forms
    from core.models.registry import packaged_tokenizer
    from core.models.tiny import build_tiny_language_model
    from core.specs.runspec import DPSynRAGSpec

    _busy_two_cores(monkeypatch)
    llm = build_tiny_language_model(packaged_tokenizer())
    seen = _threads_per_batch(llm)
    threads.configure(0)
    torch.set_num_threads(2)
    ctx = MethodContext(llm=llm, embedder=None, task="Answer questions.",  # type: ignore[arg-type]
                        charge=lambda *a, **k: None, reporter=NULL_REPORTER, checkpoints=Checkpoints(tmp_path),
                        test_seed=3)
    forms = ReleasedForms(("Seen: [name]. [text].",), (40.0,), 2)
    written_in_forms([Topic("fever", ("cough",)), Topic("rash", ())], forms, DPSynRAGSpec(), ctx)
    assert seen and set(seen) == {1}, seen  # the role scorer's session and the writer's batch, all on 1 thread
