"""``[data] label_mode = "auto"`` with DP-SynRAG (docs/method.md §6.3): planned and charged as labels by topic,
then per class or by topic as the released class counts say; charges = plan = record either way."""

from __future__ import annotations

import json
import math

import pytest
from tests.corpus.test_label_column import DEPARTMENTS
from tests.methods.dp_synrag.test_topic_labels import _spec  # mode "topic_labels" unless told

import core.methods.class_conditional as class_conditional
from core.checkpoints import Checkpoints
from core.errors import Cancelled
from core.ledger import Ledger
from core.methods.class_conditional import (
    CHECKPOINT_CHOICE,
    PER_CLASS_SUPPORT,
    AutoLabelled,
    TopicLabelled,
    chooses_per_class,
    method_for,
    units_per_class_needed,
)
from core.pipeline import plan, run_pipeline
from core.privacy.class_counts import STAGE_CLASS_COUNTS, STAGE_TOPIC_LABELS, ClassCounts
from core.progress import CallbackReporter
from core.specs.label_modes import label_mode_words


def test_auto_is_planned_exactly_as_labels_by_topic_and_names_the_units_a_class_needs(tmp_path):
    spec = _spec(tmp_path, mode="auto")
    auto = method_for(spec)
    assert isinstance(auto, AutoLabelled)
    spec.data.label_mode = "topic_labels"
    by_topic = method_for(spec)
    assert not isinstance(by_topic, AutoLabelled)
    spec.data.label_mode = "auto"
    ours, theirs = auto.plan_summary(spec, 1e-6, 500), by_topic.plan_summary(spec, 1e-6, 500)
    assert ours.stages == theirs.stages and ours.rho_total == theirs.rho_total  # the same charges, whichever runs
    need = units_per_class_needed(auto.split(spec, 1e-6, 500))
    assert need == pytest.approx(PER_CLASS_SUPPORT * theirs.derived["min_topic_units"])
    assert f"at least about {need:.0f}" in ours.warnings[-1]
    params = auto.parameters(spec, ours)
    assert params["label_mode"] == "auto" and params["units_per_class_needed"] == pytest.approx(need)
    assert "automatically" in label_mode_words("auto", "dp_synrag")
    assert "per category" in label_mode_words("auto", "aug_pe")  # the other methods: per class, as before


def test_the_choice_reads_the_released_counts_only():
    assert chooses_per_class(ClassCounts(("a", "b"), (80.0, 75.0)), 74.0)
    assert not chooses_per_class(ClassCounts(("a", "b"), (800.0, 73.9)), 74.0)  # every class must hold enough
    assert not chooses_per_class(ClassCounts((), ()), 0.0)  # no label released: nothing to split by


def _charges(run_id: str) -> list[dict]:
    with Ledger() as ledger:
        return [e for e in ledger.entries() if e["kind"] == "charge" and e["run_id"] == run_id]


@pytest.mark.parametrize("support", [0.0, 1e9])
def test_either_choice_charges_the_plan_once_and_says_which_ran(tmp_path, privet_home, monkeypatch, support):
    monkeypatch.setattr(class_conditional, "PER_CLASS_SUPPORT", support)  # 0: per class; 1e9: by topic
    spec = _spec(tmp_path, mode="auto")
    planned = plan(spec)
    result = run_pipeline(spec)
    charges = _charges(result.run_id)
    stages = [e["stage"] for e in charges]
    assert sorted(stages) == sorted(s for s, _ in planned.stages) and len(stages) == len(set(stages))
    assert stages[0] == STAGE_CLASS_COUNTS
    charged = math.fsum(e["rho"] for e in charges)
    assert charged == pytest.approx(planned.rho_total, rel=1e-9) == result.record.rho_total
    folder = result.run_dir / "checkpoints" / "dp_synrag"
    choice = json.loads((folder / f"{CHECKPOINT_CHOICE}.json").read_text())
    topic_counts = json.loads((folder / f"{STAGE_TOPIC_LABELS}.json").read_text())
    lines = [json.loads(line) for line in open(result.run_dir / "synthetic.jsonl", encoding="utf-8")]
    assert lines and all(line["label"] in DEPARTMENTS for line in lines)
    notes = " ".join(result.record.scope_notes)
    if support == 0.0:
        assert choice["mode"] == "per_class" and topic_counts == {"drawn": False}  # charged, nothing drawn
        assert (folder / "class-00").is_dir() and "(per class)" in notes and "not used" in notes
        reserved = next(e for e in charges if e["stage"] == STAGE_TOPIC_LABELS)
        assert "not drawn" in reserved["description"]
    else:
        assert choice["mode"] == "topic_labels" and len(topic_counts[0]) == len(DEPARTMENTS)
        assert not (folder / "class-00").exists() and "(by topic)" in notes


def test_a_resume_after_per_class_was_chosen_keeps_the_choice_and_redraws_nothing_released(
        tmp_path, privet_home, monkeypatch):
    monkeypatch.setattr(class_conditional, "PER_CLASS_SUPPORT", 0.0)
    spec = _spec(tmp_path, mode="auto")
    state = {"cancel": False}

    def on_event(event):
        if event.kind == "log" and event.message.startswith("Class 2 of"):
            state["cancel"] = True

    run_dir = tmp_path / "run"
    with pytest.raises(Cancelled):
        run_pipeline(spec, CallbackReporter(on_event, lambda: state["cancel"]), run_dir=run_dir)
    folder = run_dir / "checkpoints" / "dp_synrag"
    method = method_for(spec)
    assert isinstance(method, TopicLabelled)
    assert {STAGE_CLASS_COUNTS, STAGE_TOPIC_LABELS} <= method.finished_stages(Checkpoints(folder))
    with Ledger() as ledger:
        before = [e["stage"] for e in ledger.entries() if e["kind"] == "charge"]
    counts = (folder / "class_counts.json").read_text()
    monkeypatch.setattr(class_conditional, "PER_CLASS_SUPPORT", 1e9)  # the saved choice stands, not a new one
    result = run_pipeline(spec, run_dir=run_dir, resume=True, consent=lambda quote: True)
    after = [e["stage"] for e in _charges(result.run_id)][len(before):]
    assert STAGE_CLASS_COUNTS not in after and STAGE_TOPIC_LABELS not in after
    assert (folder / "class_counts.json").read_text() == counts
    assert json.loads((folder / f"{CHECKPOINT_CHOICE}.json").read_text())["mode"] == "per_class"
    assert math.fsum(e["rho"] for e in _charges(result.run_id)) == pytest.approx(result.record.rho_total, rel=1e-9)
    assert result.n_synthetic > 0
