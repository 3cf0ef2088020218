"""Private prediction sharded over Ray workers (core/compute), on the CPU with the tiny model.

The Ray tests share one local Ray (two CPU workers) per module. Starting Ray and two workers costs
tens of seconds on a shared 2-core machine, so they are marked ``slow``; they are skipped (with the
reason) where Ray is not installed (`make setup-cluster`).
"""

from __future__ import annotations

import sys

import pytest
import torch
from tests.helpers import tiny_spec

from core.compute.factory import check_compute, compute_backend
from core.common.errors import PrivetError
from core.ledger import Ledger
from core.methods.dp_synrag.release.keywords import generate_greedy
from core.methods.private_prediction import EngineConfig, PredictionGroup, PrivatePredictionEngine
from core.methods.compute_backend import LOCAL, LocalUnitWork, local_engine
from core.models.registry import load_embedder, load_language_model
from core.run.pipeline import run_pipeline
from core.privacy.mechanisms import TokenSampler
from core.privacy.randomness import test_mode_torch_generator
from core.specs.runspec import ComputeSpec, ModelChoice, RunSpec

TINY = ModelChoice(source="tiny-random", device="cpu")
SEED = 4321

# --- without Ray ----------------------------------------------------------------------------------


def test_local_backend_needs_no_ray(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # importing ray would fail
    assert compute_backend(ComputeSpec(), TINY, TINY, None) is LOCAL


def test_missing_ray_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(PrivetError, match="Ray is not installed"):
        compute_backend(ComputeSpec(backend="ray", workers=2), TINY, TINY, None)


def test_a_ray_started_for_a_run_spills_into_a_private_folder_of_the_run(tmp_path, monkeypatch):
    from core.compute import ray_pool

    calls = []

    class FakeRay:
        def is_initialized(self) -> bool:
            return False

        def init(self, **kwargs) -> None:
            calls.append(kwargs)

    monkeypatch.setattr(ray_pool, "import_ray", FakeRay)
    spill = tmp_path / "run" / "compute-spill"
    assert ray_pool.start_ray("", spill) is True
    assert calls[-1]["object_spilling_directory"] == str(spill)
    assert calls[-1]["_node_ip_address"] == "127.0.0.1" and calls[-1]["include_dashboard"] is False
    assert spill.is_dir() and spill.stat().st_mode & 0o077 == 0  # private: owner only
    ray_pool.start_ray("auto", spill)  # an existing cluster spills where its own configuration says
    assert "object_spilling_directory" not in calls[-1] and calls[-1]["address"] == "auto"


class Advances:
    def __init__(self) -> None:
        self.done = 0

    def advance(self, n: int) -> None:
        self.done += n


class RecordingUnitWork:
    """Stands in for the Ray pool: answers with the local model and records how it was asked."""

    def __init__(self, llm) -> None:
        self.llm = llm
        self.calls: list[tuple[int, int, int]] = []

    def generate(self, llm, messages, max_new_tokens, batch, progress=None):
        self.calls.append((len(messages), max_new_tokens, batch))
        return generate_greedy(messages, self.llm, LOCAL.unit_work, max_new_tokens, progress)


def test_greedy_generation_goes_to_the_unit_work_when_there_is_one():
    llm = load_language_model(TINY)
    messages = [f"List the keywords of note {i}." for i in range(20)]
    here = Advances()
    local = generate_greedy(messages, llm, LOCAL.unit_work, 4, here)
    assert here.done == 20 and len(local) == 20
    work = RecordingUnitWork(llm)
    assert generate_greedy(messages, llm, work, 4, Advances()) == local
    assert work.calls == [(20, 4, 16)]  # all messages at once, with the single-process batch size


def test_the_local_backend_is_this_process_with_the_same_answers(monkeypatch):
    """[compute] backend = "local" hands a method this process's engine and unit work (never None), and they
    give what the single-process code gives: greedy answers in the same batches, the same embeddings."""
    monkeypatch.setitem(sys.modules, "ray", None)  # importing ray would fail
    llm, embedder = load_language_model(TINY), load_embedder(TINY)
    backend = compute_backend(ComputeSpec(), TINY, TINY, None)
    assert backend.engine_factory is local_engine and isinstance(backend.unit_work, LocalUnitWork)
    messages = [f"List the keywords of note {i}." for i in range(20)]
    there = Advances()
    assert backend.unit_work.generate(llm, messages, 4, 16, there) == [
        a for i in range(0, 20, 16) for a in llm.generate(messages[i : i + 16], max_new_tokens=4, temperature=0.0)]
    assert there.done == 20
    texts = [m.lower() for m in messages]
    assert (backend.unit_work.embed(embedder, texts, progress=there) == embedder.embed(texts)).all() and there.done == 40
    engine = backend.engine_factory(llm, EngineConfig(max_new_tokens=2, clip=1.0, tau=1.0), TokenSampler(1.0))
    assert isinstance(engine, PrivatePredictionEngine)


@pytest.mark.parametrize(("compute", "words"), [
    (ComputeSpec(backend="spark"), "Unknown compute backend 'spark' in [compute]."),
    (ComputeSpec(backend="ray", workers=-1), "[compute] workers must be ≥ 0 and ≤ 1024 (got -1)."),
    (ComputeSpec(backend="ray", address="10.0.0.1"), "[compute] address '10.0.0.1' is not a Ray address."),
], ids=["backend", "workers", "address"])
def test_bad_compute_settings_are_refused(compute, words):
    """The [compute] rules are stated once (ComputeSpec.RULES): loading a spec and the backend factory refuse alike."""
    with pytest.raises(PrivetError) as refused:
        check_compute(compute)
    assert refused.value.what == words
    spec = RunSpec()
    spec.compute = compute
    assert [p for p in spec.problems() if p.startswith("[compute]")]


def test_run_spec_reads_the_compute_section():
    spec = RunSpec.from_dict({"compute": {"backend": "ray", "address": "auto", "workers": 4}})
    assert spec.compute == ComputeSpec("ray", "auto", 4)
    assert RunSpec().compute.backend == "local"
    for address in ("", "auto", " auto ", "ray://head:10001"):
        check_compute(ComputeSpec("ray", address, 2))
        assert RunSpec.from_dict({"compute": {"backend": "ray", "address": address}}).problems() == []
    with pytest.raises(PrivetError, match="workers must be ≥ 0 and ≤ 1024"):
        check_compute(ComputeSpec("ray", "", 5000))


def test_keyed_test_mode_sampling_does_not_depend_on_batch_company():
    z = torch.randn(3, 50)
    a = TokenSampler(1.0, test_mode_torch_generator(SEED)).sample(z, keys=[7, 8, 9])
    b = TokenSampler(1.0, test_mode_torch_generator(SEED)).sample(z[1:2], keys=[8])
    assert int(a[1]) == int(b[0])
    # Without the test mode the keys are ignored and the draws come from OS entropy.
    many = torch.zeros(64, 1000)
    assert not torch.equal(TokenSampler(1.0).sample(many, keys=range(64)), TokenSampler(1.0).sample(many, keys=range(64)))


# --- with two local Ray workers -------------------------------------------------------------------


@pytest.fixture(scope="module")
def local_ray():
    ray = pytest.importorskip("ray", reason="Ray is not installed: `make setup-cluster` (ray==2.60.0, the 'cluster' extra)")
    from core.compute.ray_pool import start_ray

    started = start_ray("")
    yield ray
    if started:
        ray.shutdown()


def groups_for(llm, n_groups: int = 6) -> list[PredictionGroup]:
    texts = [f"Note {i}: the patient reported {['fever', 'cough', 'rash'][i % 3]} on day {i}." for i in range(14)]
    prompts = llm.chat_prompt_ids(texts, 48)
    groups = []
    for g in range(n_groups):
        members = [prompts[(g + j) % len(prompts)] for j in range(1 + g % 3)]
        groups.append(PredictionGroup(g, tuple(tuple(p) for p in members)))
    return groups


@pytest.mark.slow
def test_two_ray_workers_write_the_same_texts_and_survive_a_killed_worker(local_ray):
    ray = local_ray
    from core.compute.ray_engine import RayPredictionEngine

    llm = load_language_model(TINY)
    groups = groups_for(llm)
    config = EngineConfig(max_new_tokens=5, clip=1.0, tau=1.0, max_rows=3)
    single = PrivatePredictionEngine(llm, config, TokenSampler(1.0, test_mode_torch_generator(SEED))).run(groups)

    engine = RayPredictionEngine(ComputeSpec("ray", "", 2), TINY, config, 1.0, SEED)
    killed = []

    def kill_first_worker(out) -> None:
        if not killed:  # a worker dies mid-run: its wave (if any) goes to the other worker
            killed.append(engine.workers[0])
            ray.kill(engine.workers[0], no_restart=True)

    sharded = engine.run(groups, on_group_done=kill_first_worker)
    assert killed
    assert sorted(sharded) == sorted(single)
    assert {g: o.token_ids for g, o in sharded.items()} == {g: o.token_ids for g, o in single.items()}


@pytest.mark.slow
def test_keywords_and_embeddings_on_two_ray_workers_equal_the_single_process_ones(local_ray):
    ray = local_ray
    from core.compute import ray_units
    from core.compute.ray_units import RayUnitWork

    llm, embedder = load_language_model(TINY), load_embedder(TINY)
    messages = [f"List the keywords of note {i}: fever, cough and rash on day {i}." for i in range(40)]
    local = generate_greedy(messages, llm, LOCAL.unit_work, 6, Advances(), batch=4)
    local_embeddings = embedder.embed(messages, batch_size=4)

    work = RayUnitWork(ComputeSpec("ray", "", 2), TINY, TINY)
    progress = Advances()
    killed = []
    real_advance = progress.advance

    def advance_and_kill_once(n: int) -> None:  # a worker dies after the first chunk comes back
        real_advance(n)
        if not killed:
            killed.append(work.workers[0])
            ray.kill(work.workers[0], no_restart=True)

    progress.advance = advance_and_kill_once
    progress.check_cancel = lambda: None
    assert len(messages) > ray_units.BATCHES_PER_CHUNK * 4  # more than one chunk, so work is shared
    assert work.generate(llm, messages, 6, 4, progress) == local
    assert killed and progress.done == len(messages)
    sharded = work.embed(embedder, messages, batch_size=4)
    assert sharded.shape == local_embeddings.shape
    assert torch.allclose(torch.from_numpy(sharded), torch.from_numpy(local_embeddings), atol=1e-6)


@pytest.mark.slow
def test_pipeline_on_ray_matches_the_single_process_run_and_charges_once(tmp_path, local_ray):
    # LLM keywords and the refinement's embeddings are sharded too (refine is on in tiny_spec).
    local = tiny_spec(tmp_path, keywords="llm")
    local.test_mode_seed = SEED
    first = run_pipeline(local)
    sharded_spec = tiny_spec(tmp_path, keywords="llm")
    sharded_spec.test_mode_seed = SEED
    sharded_spec.compute = ComputeSpec(backend="ray", workers=2)
    second = run_pipeline(sharded_spec)

    assert first.synthetic_path.read_text() == second.synthetic_path.read_text()
    assert first.synthetic_path.read_text().strip()  # it wrote something to compare
    entries = Ledger().entries(first.record.dataset_fingerprint)

    def charges(run_id: str) -> list[tuple[str, float]]:
        return [(e["stage"], e["rho"]) for e in entries if e["run_id"] == run_id and e.get("kind", "charge") == "charge"]

    assert charges(first.run_id) == charges(second.run_id)
    assert [stage for stage, _ in charges(second.run_id)].count("private_prediction") == 1
