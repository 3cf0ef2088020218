"""Shared test setup: every test gets its own Privet data folder and no network."""

from __future__ import annotations

import os
import socket

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture(autouse=True)
def privet_home(tmp_path_factory, monkeypatch):
    """A fresh per-test data folder (ledger, installation key, caches stay isolated).

    The converted-model cache is shared across tests (``PRIVET_MODEL_CACHE``) so the
    packaged GGUF is converted once per session, not once per test.
    """
    home = tmp_path_factory.mktemp("privet_home")
    monkeypatch.setenv("PRIVET_HOME", str(home))
    monkeypatch.setenv("PRIVET_KEYRING", "memory")
    return home


@pytest.fixture(autouse=True)
def steady_computer(request, monkeypatch):
    """The estimate's speed test (``core.run.machine_speed``) reads the reference rate, so that estimates in tests
    do not depend on how busy the machine is; tests of the speed test itself opt out (``real_speed_test``)."""
    if "real_speed_test" in request.keywords:
        return
    import core.run.machine_speed

    monkeypatch.setattr(core.run.machine_speed, "probe_rate", lambda seconds=0.0: core.run.machine_speed.REFERENCE_ROUNDS_S)


@pytest.fixture
def no_network(monkeypatch):
    """Every attempt to open a network connection fails (a run must work air-gapped)."""

    def refuse(*args, **kwargs):
        raise OSError("network access attempted during a test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


@pytest.fixture(scope="session", autouse=True)
def shared_model_cache(tmp_path_factory):
    cache = os.environ.get("PRIVET_MODEL_CACHE") or str(tmp_path_factory.mktemp("model_cache"))
    os.environ["PRIVET_MODEL_CACHE"] = cache
    return cache


def pytest_collection_modifyitems(config, items):
    """Tests marked ``cuda`` need an NVIDIA GPU: skipped (with the reason) where torch sees none."""
    cuda_items = [item for item in items if "cuda" in item.keywords]
    if not cuda_items:
        return
    import torch

    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs CUDA (run `make gpu-check` on a machine with an NVIDIA GPU)")
    for item in cuda_items:
        item.add_marker(skip)


@pytest.fixture
def wizard(qtbot):
    """The run wizard on the tiny models (``helpers.tiny_controller``), shown; a child still running at
    teardown is stopped, and the relay is shut down (no close question)."""
    from tests.helpers import tiny_controller

    from desktop.wizard import RunWizard

    wiz = RunWizard(tiny_controller(), gpus=[], grace_ms=3000)
    qtbot.addWidget(wiz, before_close_func=lambda w: w.relay.shutdown())  # no close question at teardown
    wiz.show()
    yield wiz
    if wiz.relay.running:
        wiz.relay.hard_stop()
    wiz.relay.shutdown()
