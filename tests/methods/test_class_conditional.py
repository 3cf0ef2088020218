"""Class-conditional synthesis (docs/method.md §6.3): the class counts' Gaussian noise, the parallel composition
across classes (charges = plan = one ρ, cross-checked with dp-accounting), the documents per class, a resume."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from tests.helpers import statistical, tiny_spec
from scipy import stats
from tests.corpus.test_label_column import DEPARTMENTS, write_labelled

from core.common.errors import Cancelled
from core.ledger import Ledger
from core.methods.base import SyntheticDoc
from core.methods.class_budget import ParallelCharge, split_budget
from core.methods.class_conditional import ClassConditional, method_for, released_class_counts
from core.methods.class_shares import allocate, proportional_quotas
from core.methods.registry import get
from core.run.pipeline import plan, run_pipeline
from core.privacy.class_counts import (
    LABEL_SHARE,
    STAGE_CLASS_COUNTS,
    ClassCounts,
    exact_counts,
    noisy_counts,
    plan_class_counts,
)
from core.privacy.conversion import approx_eps_to_rho, approx_rho_to_eps
from core.privacy.release import run_release
from core.common.progress import CallbackReporter


def _independent_epsilon(stage_rhos: list[float], delta: float, delta_spent: float) -> float:
    """dp-accounting's ε of these zCDP stages composed once each, at δ − δ_spent (plus the conditioning term)."""
    dp_accounting = pytest.importorskip("dp_accounting")
    acc = dp_accounting.rdp.RdpAccountant(orders=[1 + x / 20 for x in range(1, 4000)])
    for rho in stage_rhos:
        acc.compose(dp_accounting.ZCDpEvent(rho))
    return float(acc.get_epsilon(delta - delta_spent)) - math.log1p(-delta_spent)


def _labelled_spec(tmp_path, labels=None, method="dp_synrag", n=60, mode="per_class"):
    """A labelled tiny spec, per class by default (labels by topic: tests/methods/dp_synrag/test_topic_labels.py)."""
    spec = tiny_spec(tmp_path, write_labelled(tmp_path, n), release=None)
    spec.method = method
    spec.data.label_column = "department"
    spec.data.labels = list(labels or [])
    spec.data.label_mode = mode
    return spec


# --- the budget split ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["dp_synrag", "dp_synth"])
@pytest.mark.parametrize("typed", [True, False])
@pytest.mark.parametrize(("epsilon", "delta"), [(10.0, 1e-3), (4.0, 1e-6), (1.0, 1e-6)])
def test_split_leaves_the_class_counts_their_share_and_stays_within_epsilon(tmp_path, method, typed, epsilon, delta):
    spec = _labelled_spec(tmp_path, DEPARTMENTS if typed else None, method)
    spec.privacy.epsilon = epsilon
    split = split_budget(get(method), spec, delta, 60)
    spent = split.inner.delta_spent + split.counts.delta
    total = split.inner.rho_total + split.counts.rho
    rho_all = approx_eps_to_rho(epsilon, delta, spent)
    assert total <= rho_all * (1 + 1e-9)
    assert total == pytest.approx(rho_all, rel=1e-6)  # the budget is used, not wasted
    assert split.counts.rho == pytest.approx(LABEL_SHARE * rho_all, rel=1e-9)
    assert approx_rho_to_eps(total, delta, spent) <= epsilon * (1 + 1e-9)
    assert (split.counts.delta == 0) == typed
    assert split.inner_delta == pytest.approx(delta - split.counts.delta)


# --- the parallel charge ------------------------------------------------------------------------------------


def test_parallel_charge_charges_a_stage_once_for_all_classes_and_sequential_charges_in_full():
    charged = []
    charge = ParallelCharge(lambda stage, rho, words, delta_part=0.0: charged.append((stage, rho, delta_part)))
    charge.next_class()
    charge("histogram", 0.3, "h")
    charge("tokens", 0.5, "t")
    charge("tokens", 0.5, "t again")  # a second charge of a stage within one class: sequential, charged
    for _ in range(3):  # later classes: covered by parallel composition
        charge.next_class()
        charge("histogram", 0.3, "h")
        charge("tokens", 0.5, "t")
        charge("tokens", 0.5, "t again")
    charge.next_class()
    charge("histogram", 0.4, "h", delta_part=1e-7)  # asks more than before: only the difference
    assert [c[0] for c in charged] == ["histogram", "tokens", "tokens", "histogram"]
    assert charged[-1][1] == pytest.approx(0.1) and charged[-1][2] == pytest.approx(1e-7)
    assert sum(c[1] for c in charged) == pytest.approx(0.4 + 0.5 + 0.5)  # the largest class's total


# --- the class counts' noise --------------------------------------------------------------------------------


class _Fresh:
    """A stage context with nothing released yet; it records charges and checks noise comes after them."""

    def __init__(self):
        self.charged = []
        self.saved = {}

    def charge(self, stage, rho, description, delta_part=0.0):
        self.charged.append((stage, rho, delta_part))

    @property
    def checkpoints(self):
        ctx = self

        class Store:
            has = staticmethod(lambda name: False)

            @staticmethod
            def save(name, value):
                assert ctx.charged, "released before it was charged"
                ctx.saved[name] = value

        return Store


@statistical
def test_typed_class_counts_carry_the_planned_gaussian_noise_and_are_charged_first():
    labels = tuple(f"label {i}" for i in range(2000))
    counts = plan_class_counts(0.005, 0.0, labels)
    assert counts.sigma == pytest.approx(math.sqrt(1 / (2 * 0.005)))
    exact = exact_counts([labels[i % 7] for i in range(70)], labels)  # 10 units in 7 labels, 0 in the rest
    ctx = _Fresh()
    released = run_release(counts.release(), ctx, compute=lambda: exact,
                           noise=lambda e: noisy_counts(counts, e),
                           dump=lambda out: list(out.noisy))
    assert ctx.charged == [(STAGE_CLASS_COUNTS, pytest.approx(0.005), 0.0)]
    assert released.labels == labels  # every typed label, zeros included
    residual = np.asarray(released.noisy) - np.asarray([exact[label] for label in labels])
    assert stats.kstest(residual / counts.sigma, "norm").pvalue > 1e-3
    assert stats.kstest(residual / (1.3 * counts.sigma), "norm").pvalue < 1e-3  # a wrong σ is caught


@statistical
def test_labels_not_typed_are_a_set_union_whose_counts_carry_the_planned_noise():
    counts = plan_class_counts(0.01, 1e-7, ())
    assert counts.tau > 1 + 5 * counts.sigma  # a label of one unit alone clears τ with probability ≤ δ_c
    assert counts.release().delta == pytest.approx(1e-7)
    exact = {f"label {i}": 500 for i in range(300)} | {"one unit only": 1}
    released = noisy_counts(counts, exact)
    assert "one unit only" not in released.labels
    assert len(released.labels) == 300
    residual = np.asarray(released.noisy) - 500.0
    assert stats.kstest(residual / counts.sigma, "norm").pvalue > 1e-3


def test_documents_per_class_follow_the_released_counts():
    assert proportional_quotas(10, [0.5, 0.3, 0.2]) == [5, 3, 2]
    assert proportional_quotas(7, [1, 1, 1]) == [3, 2, 2]
    assert proportional_quotas(5, [0, 0]) == [0, 0]
    docs = {label: [SyntheticDoc(f"{label}{i}", "t", i, label) for i in range(n)]
            for label, n in (("a", 10), ("b", 10), ("c", 1))}
    shares = ClassCounts(("a", "b", "c"), (60.0, 20.0, -3.0)).shares()
    assert shares == {"a": 0.75, "b": 0.25, "c": 0.0}
    kept = allocate(docs, shares)
    per = {label: sum(d.label == label for d in kept) for label in "abc"}
    assert per == {"a": 10, "b": 5, "c": 0}  # a keeps all it wrote (under its share of 21 docs), b is cut to 5
    docs["d"] = []  # a class that wrote nothing takes no share from the others
    kept = allocate(docs, {"a": 0.3, "b": 0.1, "c": 0.0, "d": 0.6})
    per = {label: sum(d.label == label for d in kept) for label in "abcd"}
    assert per == {"a": 10, "b": 5, "c": 0, "d": 0}  # shares 0.75 : 0.25 of 21 documents, not 0.3 : 0.1


# --- end to end: charges = plan = one ρ ---------------------------------------------------------------------


@pytest.mark.parametrize("method", ["dp_synrag", "dp_synth"])
def test_classes_compose_in_parallel_charges_equal_the_plan_and_one_rho(tmp_path, privet_home, method):
    spec = _labelled_spec(tmp_path, DEPARTMENTS, method)
    planned = plan(spec)
    result = run_pipeline(spec)
    with Ledger() as ledger:
        charges = [e for e in ledger.entries() if e["kind"] == "charge" and e["run_id"] == result.run_id]
    stages = [e["stage"] for e in charges]
    assert stages[0] == STAGE_CLASS_COUNTS
    assert len(stages) == len(set(stages))  # every stage charged once, whatever the number of classes
    assert [s for s, _ in planned.stages] == stages
    charged_rho = math.fsum(e["rho"] for e in charges)
    assert charged_rho == pytest.approx(planned.rho_total, rel=1e-9)
    assert charged_rho == pytest.approx(result.record.rho_total, rel=1e-9)
    assert math.fsum(s["rho"] for s in result.record.stages) == pytest.approx(charged_rho, rel=1e-9)
    # one ρ: the same run without labels has the same total; three classes are not three runs
    unlabelled = tiny_spec(tmp_path, write_labelled(tmp_path, 60), release=None)
    unlabelled.method = method
    assert charged_rho == pytest.approx(plan(unlabelled).rho_total, rel=1e-6)
    # an independent library agrees: ε within the target when each stage counts once, far above it per class
    delta_spent = math.fsum(float(s.get("delta", 0.0)) for s in result.record.stages)
    rhos = [e["rho"] for e in charges]
    theirs = _independent_epsilon(rhos, result.record.delta, delta_spent)
    assert result.record.epsilon_tight <= theirs + 1e-6 and theirs <= spec.privacy.epsilon * 1.01
    per_class = rhos[:1] + rhos[1:] * len(DEPARTMENTS)
    assert _independent_epsilon(per_class, result.record.delta, delta_spent) > 1.5 * spec.privacy.epsilon
    lines = [json.loads(line) for line in open(result.run_dir / "synthetic.jsonl", encoding="utf-8")]
    assert lines and {line["label"] for line in lines} <= set(DEPARTMENTS)
    assert set(released_class_counts(result.run_dir, method)) == set(DEPARTMENTS)
    assert any("parallel" in note for note in result.record.scope_notes)


def test_finished_run_has_every_stage_finished_and_a_cancelled_one_resumes(tmp_path, privet_home):
    spec = _labelled_spec(tmp_path, DEPARTMENTS)
    state = {"cancel": False}

    def on_event(event):
        if event.kind == "log" and event.message.startswith("Class 2 of"):
            state["cancel"] = True

    run_dir = tmp_path / "run"
    with pytest.raises(Cancelled):
        run_pipeline(spec, CallbackReporter(on_event, lambda: state["cancel"]), run_dir=run_dir)
    folder = run_dir / "checkpoints" / "dp_synrag"
    assert (folder / "class_counts.json").is_file() and (folder / "class-00").is_dir()
    counts_before = (folder / "class_counts.json").read_text()
    method = method_for(spec)
    assert isinstance(method, ClassConditional)
    assert method.finished_stages(__import__("core.common.checkpoints", fromlist=["Checkpoints"]).Checkpoints(folder)) == {
        STAGE_CLASS_COUNTS}
    with Ledger() as ledger:
        before = [e["stage"] for e in ledger.entries() if e["kind"] == "charge"]
    result = run_pipeline(spec, run_dir=run_dir, resume=True, consent=lambda quote: True)
    with Ledger() as ledger:
        charges = [e for e in ledger.entries() if e["kind"] == "charge" and e["run_id"] == result.run_id]
    after = [e["stage"] for e in charges][len(before):]
    assert STAGE_CLASS_COUNTS not in after  # released before: reused, never redrawn
    assert (folder / "class_counts.json").read_text() == counts_before
    assert len(after) == len(set(after))  # the resume charges each unfinished stage once for the classes left
    assert math.fsum(e["rho"] for e in charges) == pytest.approx(result.record.rho_total, rel=1e-9)
    assert result.n_synthetic > 0


@pytest.mark.parametrize("typed", [True, False])
def test_every_parameter_of_a_labelled_run_has_a_meaning_on_the_certificate(tmp_path, typed):
    from core.certificate.render import HIDDEN_PARAMETERS, PARAMETER_MEANINGS
    from core.specs.stage_labels import stage_label

    spec = _labelled_spec(tmp_path, DEPARTMENTS if typed else None)
    method = method_for(spec)
    summary = method.plan_summary(spec, 1e-6, 500)
    assert any("up to that many per class" in w for w in summary.warnings)  # each class writes its own documents
    params = method.parameters(spec, summary)
    own = {"class_conditional", "label_column", "labels", "label_share", "sigma_labels", "method_epsilon"}
    assert own <= set(params) and params["class_conditional"] is True
    assert all(PARAMETER_MEANINGS.get(k) for k in params if k in own or k.endswith("_labels")
               if k not in HIDDEN_PARAMETERS)
    assert stage_label(STAGE_CLASS_COUNTS) != "class counts"  # a plain name on the run page


def test_aug_pe_prompts_name_the_class_and_votes_stay_within_it(tmp_path, privet_home, monkeypatch):
    from core.methods.class_conditional import ClassConditional
    from core.specs.runspec import AugPESpec

    spec = _labelled_spec(tmp_path, DEPARTMENTS, "aug_pe")
    spec.aug_pe = AugPESpec(iterations=2, population=4, variations=1, max_new_tokens=4, batch_size=4)
    tasks = []
    real_run = ClassConditional.run

    def spy(self, corpus, spec_, delta, ctx):
        inner = self.method.run

        def recording(corpus_, spec__, delta_, ctx_):
            tasks.append((ctx_.task, {u.label for u in corpus_.units}))
            return inner(corpus_, spec__, delta_, ctx_)

        monkeypatch.setattr(self.method, "run", recording)
        return real_run(self, corpus, spec_, delta, ctx)

    monkeypatch.setattr(ClassConditional, "run", spy)
    planned = plan(spec)
    result = run_pipeline(spec)
    assert [labels for _, labels in tasks] == [{label} for label in DEPARTMENTS]  # each class votes on its own units
    assert all(task.endswith(f"category: {label}.") for (task, _), label in zip(tasks, DEPARTMENTS))
    with Ledger() as ledger:
        charges = [e for e in ledger.entries() if e["kind"] == "charge" and e["run_id"] == result.run_id]
    assert [e["stage"] for e in charges] == [s for s, _ in planned.stages]
    assert math.fsum(e["rho"] for e in charges) == pytest.approx(planned.rho_total, rel=1e-9)


def test_rpsg_keeps_each_seeds_label_and_says_it_is_released_without_dp(tmp_path, privet_home):
    spec = _labelled_spec(tmp_path, DEPARTMENTS, "rpsg", n=12)
    spec.rpsg.m = 2
    spec.rpsg.max_new_tokens = 6
    spec.rpsg.n_variants = 1
    result = run_pipeline(spec)
    assert result.record.end_to_end_dp is False
    assert any("WITHOUT differential privacy" in note for note in result.record.scope_notes)
    lines = [json.loads(line) for line in open(result.run_dir / "synthetic.jsonl", encoding="utf-8")]
    assert {line["label"] for line in lines} <= set(DEPARTMENTS)
    with Ledger() as ledger:
        stages = [e["stage"] for e in ledger.entries() if e["kind"] == "charge" and e["run_id"] == result.run_id]
    assert stages[0] == STAGE_CLASS_COUNTS and len(stages) == len(set(stages))
