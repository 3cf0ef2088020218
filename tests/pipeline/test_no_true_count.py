"""SPEC §6 (issue 57, item 4): no decision that changes what is released or whether a release happens reads the
true count of units. The refusal to spend for nothing decides at the custodian's stated public bound (or not
at all); the forecast at the loaded count is shown on screen only. What a run reserves, charges and records
is the same for two corpora of different sizes with the same public values."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
from tests.helpers import tiny_spec

import core.corpus
import core.ledger.booking
import core.run.planning
from core.demo.clinic import make_clinic_corpus
from core.demo.files import write_clinic
from core.common.errors import PrivetError
from core.methods.class_conditional import method_for
from core.run.pipeline import _prepare
from core.run.planning import public_unit_bound, refuse_spending_for_nothing, spending_gate
from core.privacy.budget import resolve_delta
from core.common.progress import NULL_REPORTER
from core.specs.runspec import RunSpec

SIZES = (40, 600)  # two clinics: a topic needs most of the first; the second expects topics at ε = 4


def clinic_spec(tmp_path: Path, n: int, epsilon: float, max_units: int = 0) -> RunSpec:
    """The demo clinic of ``n`` patients; every other value (ε, δ, settings, model, bound) the same."""
    folder = tmp_path / f"clinic{n}"
    if not folder.exists():
        write_clinic(make_clinic_corpus(n), folder)
    spec = tiny_spec(tmp_path, folder / "notes.csv", settings={"text": "private"})
    spec.data.person_column = "patient"
    spec.privacy.epsilon, spec.privacy.max_units = epsilon, max_units
    return spec


def prepared(spec: RunSpec, require_consent: bool = True):
    return _prepare(spec, NULL_REPORTER, None, resume=False, require_consent=require_consent)


def test_the_gate_takes_no_corpus_and_plans_only_at_the_stated_bound(tmp_path, monkeypatch):
    for gate in (spending_gate, refuse_spending_for_nothing, public_unit_bound):
        assert not {"corpus", "units", "n", "n_units"} & set(inspect.signature(gate).parameters), gate
    spec = clinic_spec(tmp_path, 40, 4.0)
    delta, method = resolve_delta(spec), method_for(spec)
    asked: list[int] = []
    real = method.plan_summary

    def recording(spec, delta, n_units):
        asked.append(n_units)
        return real(spec, delta, n_units)

    monkeypatch.setattr(method, "plan_summary", recording)

    def refuse_to_load(*args, **kwargs):
        raise AssertionError("the gate loaded the private data")

    for module in (core.run.planning, core.ledger.booking):  # the gate cannot count the units by loading them
        monkeypatch.setattr(module, "load_spec_corpus", refuse_to_load)
    monkeypatch.setattr(core.corpus, "load_corpus", refuse_to_load)
    assert spending_gate(spec, delta, method) is None and asked == []  # no bound: nothing planned, nothing refused
    refuse_spending_for_nothing(spec, None)
    spec.privacy.max_units, spec.dp_synrag.size_bound = 1000, 700
    assert public_unit_bound(spec) == 700  # both stated: the smaller (both are upper bounds)
    gate = spending_gate(spec, delta, method)
    assert asked == [700] and gate is not None and gate.n_units == 700


def test_without_a_public_bound_no_size_is_refused_and_the_forecast_only_warns(tmp_path, privet_home):
    small, large = (prepared(clinic_spec(tmp_path, n, 4.0)) for n in SIZES)  # neither raises
    assert (small.summary.n_units, large.summary.n_units) == SIZES
    # the on-screen forecast reads the loaded count (allowed: it decides nothing) and differs ...
    assert small.summary.spends_for_nothing and not large.summary.spends_for_nothing
    # ... while the decision does not: neither needs 'spend anyway', and the warning says the run is not stopped
    assert not small.summary.needs_spend_anyway and not large.summary.needs_spend_anyway
    assert small.summary.gate_forecast is None and large.summary.gate_forecast is None
    assert not any("It needs an explicit 'spend anyway'" in w for w in small.summary.warnings)
    assert any("does not stop the run on this figure" in w for w in small.summary.warnings)


def test_at_a_stated_bound_two_sizes_get_the_same_refusal_word_for_word(tmp_path, privet_home):
    refusals = []
    for n in SIZES:
        with pytest.raises(PrivetError, match="Nothing was charged: even with the 1000 units") as refused:
            prepared(clinic_spec(tmp_path, n, 1.0, max_units=1000))
        refusals.append(refused.value.user_message())
    assert refusals[0] == refusals[1]  # nothing of either corpus's size in it
    for n in SIZES:  # the consent lets either run go; the test mode is exempt
        spec = clinic_spec(tmp_path, n, 1.0, max_units=1000)
        spec.privacy.spend_anyway = True
        assert prepared(spec).summary.needs_spend_anyway
        spec.privacy.spend_anyway, spec.test_mode_seed = False, 7
        prepared(spec)


def test_what_a_run_reserves_charges_and_records_is_the_same_for_two_sizes(tmp_path, privet_home):
    for epsilon, bound in ((4.0, 0), (4.0, 1000), (10.0, 0)):
        small, large = (prepared(clinic_spec(tmp_path, n, epsilon, bound)) for n in SIZES)
        a, b = small.summary, large.summary
        assert a.n_units != b.n_units
        assert (a.rho_total, a.delta_spent, a.stages, a.derived) == (b.rho_total, b.delta_spent, b.stages, b.derived)
        assert a.gate_forecast == b.gate_forecast and a.needs_spend_anyway == b.needs_spend_anyway
        assert small.delta == large.delta
        spec = clinic_spec(tmp_path, SIZES[0], epsilon, bound)
        assert small.method.parameters(spec, a) == large.method.parameters(spec, b)  # what the record holds
        assert small.method.record_stages(spec, small.delta) == large.method.record_stages(spec, large.delta)
