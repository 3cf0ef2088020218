"""Adding a method: a toy method registered only here runs through the whole of Privet (docs/architecture.md,
"Add a method").

``ToyMethod`` releases one Gaussian count of the units (charged before it draws, through
``core.privacy.release``) and writes that many public template documents (post-processing: it reads no
private text). Everything Privet needs to know about it is in this file, the stand-in for its package
``core/methods/toy_count/`` (its plan, its adapter and its ``MethodFacts`` subclass), plus one ``MethodEntry`` in
``core.specs.method_catalogue.METHODS`` (patched in here). Nothing else is edited: the run spec accepts it, ``privet
plan`` prints it, the estimate prices it, the ledger charges it, the certificate names its stage and its
parameters in its own words and the wizard offers it.
"""

from __future__ import annotations

import argparse
import importlib
import io
import math
from dataclasses import dataclass

import numpy as np
import pytest

from core.specs import method_catalogue
from core.corpus import Corpus
from core.specs.method_catalogue import MethodEntry, MethodFacts, WizardOptions
from core.methods.base import COMMON_NOTES, MethodContext, MethodOutput, PlanSummary, SyntheticDoc, stages_from_events
from core.privacy.conversion import approx_eps_to_rho
from core.privacy.release import GAUSSIAN, Release, accountant_of, run_release
from core.specs.runspec import RunSpec
from tests.helpers import tiny_spec

KEY = "toy_count"
STAGE = "toy_count"
DOCUMENTS_PER_UNIT = 0.25


# -- the method's package: its plan, its adapter, its facts ------------------------------------------


@dataclass(frozen=True)
class ToyPlan:
    """The toy's plan: one Gaussian release of the unit count with the whole budget (Δ = 1)."""

    rho: float

    @property
    def sigma(self) -> float:
        return 1.0 / math.sqrt(2.0 * self.rho)

    def releases(self) -> list[Release]:
        return [Release(STAGE, GAUSSIAN, "a noisy count of the units (toy)",
                        f"toy count, sigma={self.sigma:.4g}", sensitivity=1.0, sigma=self.sigma)]


def toy_plan(spec: RunSpec, delta: float) -> ToyPlan:
    return ToyPlan(approx_eps_to_rho(spec.privacy.epsilon, delta))


class ToyMethod:
    name = KEY

    def plan_summary(self, spec: RunSpec, delta: float, n_units: int) -> PlanSummary:
        plan = toy_plan(spec, delta)
        return PlanSummary(KEY, spec.privacy.epsilon, delta, plan.rho, [(STAGE, plan.rho)],
                           {"rho_total": plan.rho, "sigma_count": plan.sigma}, [], n_units)

    def run(self, corpus: Corpus, spec: RunSpec, delta: float, ctx: MethodContext) -> MethodOutput:
        (release,) = toy_plan(spec, delta).releases()
        noisy = run_release(release, ctx, lambda: float(len(corpus.units)),
                            lambda n: float(release.noise(np.array([n]), ctx.test_rng())[0]))
        n_docs = max(1, round(DOCUMENTS_PER_UNIT * noisy))  # post-processing of the released count
        docs = [SyntheticDoc(f"toy-{i:03d}", f"Toy document {i + 1} of {n_docs}.", i) for i in range(n_docs)]
        return docs, {"documents": n_docs}, list(COMMON_NOTES)

    def record_stages(self, spec: RunSpec, delta: float) -> list[dict]:
        return stages_from_events(accountant_of(toy_plan(spec, delta).releases()).events)

    def parameters(self, spec: RunSpec, summary: PlanSummary) -> dict:
        return {"documents_per_unit": DOCUMENTS_PER_UNIT, **summary.derived}

    def samplers(self) -> list[str]:
        return []


STAGE_LABELS = {STAGE: "counting the units (toy, with noise)"}
PARAMETER_MEANINGS = {"documents_per_unit": "template documents written per unit of the noisy count (toy)",
                      "sigma_count": "noise added to the count of units (toy; standard deviation)"}


class ToyFacts(MethodFacts):
    stage_labels = STAGE_LABELS
    parameter_meanings = PARAMETER_MEANINGS
    documents_asked = None
    wizard = WizardOptions(documents="one_per_unit", count_note="The toy writes a quarter as many documents as units.",
                           writes_tokens=False)

    def work(self, spec, n_units, speeds, topics=None):
        return [(STAGE, 0.001 * n_units)]

    def plan_notes(self, spec):
        return ["The toy method writes template documents only."]


FACTS = ToyFacts()

# -- its one registration ---------------------------------------------------------------------------

ENTRY = MethodEntry(
    key=KEY, short_name="Toy count", adapter=f"{__name__}:ToyMethod", facts=f"{__name__}:FACTS",
    certificate_name="Toy count: template documents, as many as a noisy count of the units says",
    title="Toy count — a test method", explanation="Writes template documents from a noisy count of the units.",
)


@pytest.fixture
def registered(monkeypatch):
    # These read the registered methods once, on import: imported here first, none keeps the toy after this
    # test, whichever test file ran before it (tests/codebase/test_architecture.py checks their lists).
    for module in ("core.certificate.build", "core.certificate.privacy_record", "desktop.controller"):
        importlib.import_module(module)

    monkeypatch.setattr(method_catalogue, "METHODS", (*method_catalogue.METHODS, ENTRY))
    return ENTRY


def _spec(tmp_path) -> RunSpec:
    spec = tiny_spec(tmp_path, release=None)
    spec.method = KEY
    spec.privacy.epsilon = 2.0
    return spec


def test_the_toy_is_refused_until_it_is_registered(tmp_path):
    assert any("Unknown method 'toy_count'" in p for p in _spec(tmp_path).problems())


def test_a_registered_toy_plans_runs_and_is_certified(registered, tmp_path):
    from core.certificate.build import build_certificate
    from core.certificate.render import render_html
    from core.run.estimate import estimate
    from core.methods import registry
    from core.run.pipeline import run_pipeline
    from core.run.pipeline_cli import cmd_plan
    from core.specs.stage_labels import stage_label

    spec = _spec(tmp_path)
    assert spec.problems() == [] and registry.get(KEY).name == KEY
    assert stage_label(STAGE) == "counting the units (toy, with noise)"
    assert (STAGE, 0.04) in estimate(spec, 40, calibrate=False).stages

    path = tmp_path / "toy.toml"
    spec.save(path)
    out = io.StringIO()
    cmd_plan(argparse.Namespace(spec=str(path)), out)
    plan_text = out.getvalue()
    assert "Method: toy_count" in plan_text and "counting the units (toy, with noise)" in plan_text
    assert "Note (advanced): The toy method writes template documents only." in plan_text

    spec.test_mode_seed = 5
    result = run_pipeline(spec, run_dir=tmp_path / "run")
    record = result.record
    plan = toy_plan(spec, record.delta)
    assert [(s["stage"], s["rho"]) for s in record.stages] == [(STAGE, pytest.approx(plan.rho))]
    assert record.rho_total == pytest.approx(plan.rho) and result.n_synthetic >= 1
    cert = build_certificate(record, [result.synthetic_path], {"custodian": "toy"})
    assert cert["identity"]["method_name"] == ENTRY.certificate_name
    html = render_html(cert)
    assert "Counting the units (toy, with noise)" in html
    assert "template documents written per unit of the noisy count (toy)" in html


def test_the_wizard_offers_the_toy_with_its_own_options(registered):
    from tests.helpers import tiny_controller

    controller = tiny_controller()
    assert KEY in [m.key for m in controller.available_methods()]
    controller.spec.method = KEY
    assert controller.wizard_options() == FACTS.wizard

