"""Private prediction sharded over Ray workers (core/compute), on the CPU with the tiny model.

The Ray tests share one local Ray (two CPU workers) per module. Starting Ray and two workers costs
tens of seconds on a shared 2-core machine, so they are marked ``slow``; they are skipped (with the
reason) where Ray is not installed (`make setup-cluster`).
"""

from __future__ import annotations

import sys

import pytest
import torch
from test_pipeline import tiny_spec

from core.compute.factory import check_compute, engine_factory
from core.errors import PrivetError
from core.ledger import Ledger
from core.methods.private_prediction import EngineConfig, PredictionGroup, PrivatePredictionEngine
from core.models.registry import load_language_model
from core.pipeline import run_pipeline
from core.privacy.mechanisms import TokenSampler
from core.privacy.randomness import test_mode_torch_generator
from core.runspec import ComputeSpec, ModelChoice, RunSpec

TINY = ModelChoice(source="tiny-random", device="cpu")
SEED = 4321

# --- without Ray ----------------------------------------------------------------------------------


def test_local_backend_needs_no_ray(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # importing ray would fail
    assert engine_factory(ComputeSpec(), TINY, None) is None


def test_missing_ray_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(PrivetError, match="Ray is not installed"):
        engine_factory(ComputeSpec(backend="ray", workers=2), TINY, None)


@pytest.mark.parametrize(
    "compute", [ComputeSpec(backend="spark"), ComputeSpec(backend="ray", workers=-1), ComputeSpec(backend="ray", address="10.0.0.1")]
)
def test_bad_compute_settings_are_refused(compute):
    with pytest.raises(PrivetError):
        check_compute(compute)


def test_run_spec_reads_the_compute_section():
    spec = RunSpec.from_dict({"compute": {"backend": "ray", "address": "auto", "workers": 4}})
    assert spec.compute == ComputeSpec("ray", "auto", 4)
    assert RunSpec().compute.backend == "local"


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
    from core.compute.ray_engine import start_ray

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
def test_pipeline_on_ray_matches_the_single_process_run_and_charges_once(tmp_path, local_ray):
    local = tiny_spec(tmp_path)
    local.test_mode_seed = SEED
    first = run_pipeline(local)
    sharded_spec = tiny_spec(tmp_path)
    sharded_spec.test_mode_seed = SEED
    sharded_spec.compute = ComputeSpec(backend="ray", workers=2)
    second = run_pipeline(sharded_spec)

    assert first.synthetic_path.read_text() == second.synthetic_path.read_text()
    entries = Ledger().entries(first.record.dataset_fingerprint)

    def charges(run_id: str) -> list[tuple[str, float]]:
        return [(e["stage"], e["rho"]) for e in entries if e["run_id"] == run_id and e.get("kind", "charge") == "charge"]

    assert charges(first.run_id) == charges(second.run_id)
    assert [stage for stage, _ in charges(second.run_id)].count("private_prediction") == 1
