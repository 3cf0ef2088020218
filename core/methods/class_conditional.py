"""Labelled synthesis (docs/method.md §6.3): a method run once per class of a label column, or (DP-SynRAG's
default, ``[data] label_mode = "topic_labels"``, :class:`TopicLabelled` at the end of this module) once on all
units with every document labelled from its topic's released label counts.

With ``[data] label_column`` every unit carries one label (``core.corpus.labels``). The run then

1. releases the class counts (``core.privacy.class_counts``: a charged Gaussian stage on the certificate;
   with labels not typed, a DP set union that releases the labels too), charged before its draw;
2. runs the method once per released class, on that class's units only, with the class's checkpoints in
   their own folder (``class-NN``) so a resume reuses each class's released outputs. Aug-PE writes its
   candidates from a class-conditional public prompt (the task and the label, ``class_task``) and votes within
   the class, as microsoft/DPSDA does; RPSG rewrites each seed within its class, so every rewrite keeps its
   seed's label, which is then released without DP (the certificate says so: ``RPSG_LABEL_NOTE``);
3. labels every synthetic document with its class and keeps, per class, documents in proportion to the
   released class counts (post-processing).

Privacy. Which class a unit falls in depends only on that unit (its own label) and on the released label
set, so the classes are disjoint subsets chosen as parallel composition requires: one unit changes the
data of one class only, and the runs over all classes together cost what one run costs, not one run per
class. The charge passed to each class's run therefore charges a stage only the first time it is met: the
k-th charge of a stage in a later class is covered by the k-th charge of that stage in an earlier one
(when it asks more, only the difference is charged, so the total is the largest class's and never less).
The method gets the run's budget less the class counts' share: its ε is lowered so that
ρ_method + ρ_counts stays within the run's (ε, δ), the label set union's δ is taken off its δ, and the
plan, the ledger's charges and the certificate add up to one ρ.

The budget split and the per-class charge are in core/methods/class_budget.py, the documents kept per class in
core/methods/class_shares.py and the certificate's words on the labels in core/methods/label_notes.py.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from core.common.checkpoints import Checkpoints
from core.corpus import Corpus
from core.common.errors import PrivetError
from core.methods import registry
from core.methods.base import Method, MethodContext, MethodOutput, PlanSummary, SyntheticDoc, stages_from_events
from core.methods.class_budget import BudgetSplit, ParallelCharge, split_budget
from core.methods.class_shares import allocate, keep_class_shares
from core.methods.label_notes import class_notes_for, topic_label_notes
from core.privacy.class_counts import (
    LABEL_SHARE,
    STAGE_CLASS_COUNTS,
    STAGE_TOPIC_LABELS,
    TOPIC_LABEL_SHARE,
    TopicLabelsPlan,
    TopicLabelStage,
    plan_topic_labels,
    ClassCounts,
    ClassCountsPlan,
    exact_counts,
    noisy_counts,
)
from core.privacy.mechanisms import GAUSSIAN_OPENDP, SAMPLER_DESCRIPTIONS
from core.privacy.release import accountant_of, run_release
from core.common.progress import ProgressEvent
from core.specs.method_catalogue import class_conditional_methods, topic_label_methods
from core.specs.runspec import RunSpec
from core.specs.common import label_mode_of

CHECKPOINT_COUNTS = "class_counts"  # {"labels": [...], "noisy": [...]}: released, so a resume never redraws it
MIN_CLASS_COUNT = 2.0  # a class whose released count is below this is not synthesised (post-processing)
CLASS_PROMPT_METHODS = ("aug_pe",)  # methods whose public prompts name the class (class_task)
RPSG_LABEL_NOTE = (
    "Labels with RPSG: every synthetic document is a rewrite of one private document and carries that document's "
    "own label. These labels are released WITHOUT differential privacy: the label of each rewritten document is "
    "shown as it is (only the class counts used to size the classes are noisy)."
)


def class_task(task: str, label: str) -> str:
    """The public task of one class's run (Aug-PE's class-conditional prompts): the task and the label's name."""
    return f"{task.rstrip()} Write documents of this category: {label}."


def method_for(spec: RunSpec) -> Method:
    """The method a run spec names: with a label column, per class or labelled by topic (``[data] label_mode``)."""
    method = registry.get(spec.method)
    mode = label_mode_of(spec.data, spec.method)
    if mode == "topic_labels":
        return TopicLabelled(method)
    return ClassConditional(method) if mode == "per_class" else method


def class_folder(index: int) -> str:
    """The checkpoint folder of the index-th released class (in label order), under the method's."""
    return f"class-{index:02d}"


class ClassConditional:
    """A method run once per class of the label column, its stages charged once for all classes."""

    def __init__(self, method: Method) -> None:
        if method.name not in class_conditional_methods():
            raise PrivetError(
                f"The method {method.name!r} cannot keep a label column yet.",
                f"Choose {' or '.join(class_conditional_methods())}, or leave the label column empty.")
        self.method = method
        self.name = method.name
        self.topic_share = 0.0  # the topic label counts' share of ρ (TopicLabelled: TOPIC_LABEL_SHARE)
        self._splits: dict[tuple[str, float, int], BudgetSplit] = {}

    # -- the plan -----------------------------------------------------------------------------------------
    def split(self, spec: RunSpec, delta: float, n_units: int | None = None) -> BudgetSplit:
        """The budget split (cached). Its ρ and δ figures never depend on ``n_units`` (a plan reads public
        quantities only); the method's on-screen warnings do, so ``None`` takes the split last planned."""
        if n_units is None:
            planned = [s for (r, d, _n), s in self._splits.items() if r == repr(spec) and d == delta]
            if planned:
                return planned[-1]
            n_units = 2
        key = (repr(spec), delta, n_units)
        if key not in self._splits:
            self._splits[key] = split_budget(self.method, spec, delta, n_units, self.topic_share)
        return self._splits[key]

    def plan_summary(self, spec: RunSpec, delta: float, n_units: int) -> PlanSummary:
        split = self.split(spec, delta, n_units)
        inner, counts = split.inner, split.counts
        derived = {**inner.derived, "rho_total": inner.rho_total + counts.rho, "sigma_labels": counts.sigma}
        if not counts.typed:
            derived.update(tau_labels=counts.tau, delta_labels=counts.delta)
        words = ("the typed labels" if counts.typed else
                 f"the labels released by a DP set union (a label needs about {counts.tau:.0f} units to be kept)")
        warnings = [*inner.warnings, f"Labels: each class of {words} is synthesised from its own units only, so a "
                    "topic needs that many units within one class; a class with few units yields few documents. "
                    "The expected documents above are one run's: each class writes its own, so the corpus may hold "
                    "up to that many per class, kept in proportion to the released class counts."]
        return replace(
            inner, epsilon=spec.privacy.epsilon, delta=delta, rho_total=inner.rho_total + counts.rho,
            stages=[(STAGE_CLASS_COUNTS, counts.release().rho), *inner.stages], derived=derived, warnings=warnings,
            delta_spent=inner.delta_spent + counts.delta,
        )

    def record_stages(self, spec: RunSpec, delta: float) -> list[dict]:
        split = self.split(spec, delta)
        own = stages_from_events(accountant_of([split.counts.release()]).events)
        return own + self.method.record_stages(split.inner_spec, split.inner_delta)

    def parameters(self, spec: RunSpec, summary: PlanSummary) -> dict:
        split = self.split(spec, summary.delta, summary.n_units)
        params = self.method.parameters(split.inner_spec, split.inner)
        params.update(
            class_conditional=True, label_column=spec.data.label_column,
            labels=list(split.counts.typed) if split.counts.typed else "released by DP set union",
            label_share=LABEL_SHARE, sigma_labels=split.counts.sigma, method_epsilon=split.inner_spec.privacy.epsilon,
        )
        if not split.counts.typed:
            params.update(tau_labels=split.counts.tau, delta_labels=split.counts.delta)
        return params

    def samplers(self) -> list[str]:
        own = SAMPLER_DESCRIPTIONS[GAUSSIAN_OPENDP]
        inner = self.method.samplers()
        return inner if own in inner else [own, *inner]

    def finished_stages(self, checkpoints: Checkpoints) -> set[str]:
        """The class counts once checkpointed; a method's stage once every released class has finished it."""
        if not checkpoints.has(CHECKPOINT_COUNTS):
            return set()
        finished_of = getattr(self.method, "finished_stages", None)
        released = _load_counts(checkpoints.load(CHECKPOINT_COUNTS))
        done = {STAGE_CLASS_COUNTS}
        if finished_of is None:
            return done
        folders = [checkpoints.folder / class_folder(i) for i, n in enumerate(released.noisy) if n >= MIN_CLASS_COUNT]
        per_class = [set(finished_of(Checkpoints(f))) if f.is_dir() else set() for f in folders]
        return done | set.intersection(*per_class) if per_class else done

    # -- the run ------------------------------------------------------------------------------------------
    def run(self, corpus: Corpus, spec: RunSpec, delta: float, ctx: MethodContext) -> MethodOutput:
        split = self.split(spec, delta, len(corpus.units))
        released = self._class_counts(corpus, split.counts, ctx)
        shares = released.shares()
        charge = ParallelCharge(ctx.charge)
        by_class: dict[str, list[SyntheticDoc]] = {}
        diagnostics: dict[str, int] = {}
        notes: dict[str, None] = {}
        for index, label in enumerate(released.labels):
            if released.noisy[index] < MIN_CLASS_COUNT:
                by_class[label] = []
                continue
            ctx.reporter.emit(ProgressEvent("run", "log", message=f"Class {index + 1} of {len(released.labels)}"))
            charge.next_class()
            units = [u for u in corpus.units if u.label == label]
            class_ctx = replace(ctx, charge=charge,
                                checkpoints=Checkpoints(ctx.checkpoints.folder / class_folder(index)),
                                task=class_task(ctx.task, label) if self.name in CLASS_PROMPT_METHODS else ctx.task)
            docs, diag, class_notes = self.method.run(_class_corpus(corpus, units), split.inner_spec,
                                                      split.inner_delta, class_ctx)
            by_class[label] = [replace(d, id=f"c{index:02d}-{d.id}", label=label) for d in docs]
            for key, value in diag.items():
                diagnostics[key] = diagnostics.get(key, 0) + int(value)
            notes.update(dict.fromkeys(class_notes))
        kept = allocate(by_class, shares)
        diagnostics.update(classes=len(released.labels), kept_after_class_shares=len(kept))
        label_notes = class_notes_for(split, released, by_class, kept)
        if self.name == "rpsg":
            label_notes.append(RPSG_LABEL_NOTE)
        if self.name in CLASS_PROMPT_METHODS:
            label_notes.append("Class-conditional prompts: each label's candidates were written from the public task "
                               f"and the label's name (\"{class_task('<task>', '<label>')}\") and voted on by that "
                               "label's units only.")
        return kept, diagnostics, [*notes, *label_notes]

    def _class_counts(self, corpus: Corpus, plan: ClassCountsPlan, ctx: MethodContext) -> ClassCounts:
        """The released class counts: the checkpoint, or compute → charge → noise → save."""
        return run_release(
            plan.release(), ctx,
            compute=lambda: exact_counts([u.label for u in corpus.units], plan.typed),
            noise=lambda exact: noisy_counts(plan, exact, ctx.test_rng()),
            dump=lambda out: {"labels": list(out.labels), "noisy": list(out.noisy)},
            load=_load_counts,
        )


def _load_counts(saved: Any) -> ClassCounts:
    return ClassCounts(tuple(saved["labels"]), tuple(float(v) for v in saved["noisy"]))


def _class_corpus(corpus: Corpus, units: list) -> Corpus:
    """The units of one class as a corpus of their own (its report is the whole corpus's: on screen only)."""
    return Corpus(units=units, report=corpus.report, unit_kind=corpus.unit_kind, source=corpus.source,
                  columns=dict(corpus.columns), document_texts=[])


def released_class_counts(run_dir: Path, method: str) -> dict[str, float]:
    """A finished run's released class counts (DP outputs; {} without a label column), for the Review page."""
    checkpoints = Path(run_dir) / "checkpoints" / method
    path = checkpoints / f"{CHECKPOINT_COUNTS}.json"
    if not path.is_file():
        return {}
    return _load_counts(Checkpoints(checkpoints).load(CHECKPOINT_COUNTS)).as_dict()


def _after(stages: list, new: list, stage_of, before_any: tuple[str, ...]) -> list:
    """``stages`` with ``new`` inserted after the last of ``before_any`` met (the order the run charges them)."""
    names = [stage_of(s) for s in stages]
    at = max((i + 1 for i, n in enumerate(names) if n in before_any), default=0)
    return [*stages[:at], *new, *stages[at:]]


STAGES_BEFORE_TOPIC_LABELS = ("size", "length", "phrases", "histogram", "cluster_keywords")


class TopicLabelled(ClassConditional):
    """``[data] label_mode = "topic_labels"`` (docs/method.md §6.3): DP-SynRAG runs once on all units; after the
    class counts (which release the label set), every cluster's label counts are released (one Gaussian stage,
    L2 sensitivity √L, ``TOPIC_LABEL_SHARE`` of ρ) and each document takes its label from its topic's counts
    (``core.methods.dp_synrag.release.topic_labels``). The budget: ρ_all as for class-conditional synthesis, the class
    counts ``LABEL_SHARE`` of it, the topic label counts ``TOPIC_LABEL_SHARE``, and DP-SynRAG the rest (every one
    of its shares scaled down by the same factor); all compose sequentially."""

    def __init__(self, method: Method) -> None:
        if method.name not in topic_label_methods():
            raise PrivetError(f"The method {method.name!r} cannot label documents by topic.",
                              'Set [data] label_mode = "per_class" (or "auto"), or choose DP-SynRAG.')
        super().__init__(method)
        self.topic_share = TOPIC_LABEL_SHARE

    def topic_plan(self, split: BudgetSplit) -> TopicLabelsPlan:
        return plan_topic_labels(split.topic_rho, split.inner_spec.dp_synrag.clusters_per_unit)

    def plan_summary(self, spec: RunSpec, delta: float, n_units: int) -> PlanSummary:
        split = self.split(spec, delta, n_units)
        inner, counts, topic = split.inner, split.counts, self.topic_plan(split)
        rho = inner.rho_total + counts.rho + topic.rho
        derived = {**inner.derived, "rho_total": rho, "sigma_labels": counts.sigma, "sigma_topic_labels": topic.sigma}
        if not counts.typed:
            derived.update(tau_labels=counts.tau, delta_labels=counts.delta)
        warnings = [*inner.warnings, "Labels: the method runs once on all units and each document takes its label "
                    "from its topic's noisy label counts; a label whose units share no topic yields few documents."]
        stages = [(STAGE_CLASS_COUNTS, counts.release().rho),  # each stage's ρ from its privacy map
                  *_after(list(inner.stages), [(STAGE_TOPIC_LABELS, topic.release().rho)], lambda s: s[0],
                          STAGES_BEFORE_TOPIC_LABELS)]
        return replace(inner, epsilon=spec.privacy.epsilon, delta=delta, rho_total=rho, stages=stages,
                       derived=derived, warnings=warnings, delta_spent=inner.delta_spent + counts.delta)

    def record_stages(self, spec: RunSpec, delta: float) -> list[dict]:
        split = self.split(spec, delta)
        own = stages_from_events(accountant_of([split.counts.release()]).events)
        topic = stages_from_events(accountant_of([self.topic_plan(split).release()]).events)
        inner = self.method.record_stages(split.inner_spec, split.inner_delta)
        return own + _after(inner, topic, lambda s: s["stage"], STAGES_BEFORE_TOPIC_LABELS)

    def parameters(self, spec: RunSpec, summary: PlanSummary) -> dict:
        params = super().parameters(spec, summary)
        split = self.split(spec, summary.delta, summary.n_units)
        params.pop("class_conditional", None)
        params.update(label_mode="topic_labels", topic_label_share=TOPIC_LABEL_SHARE,
                      sigma_topic_labels=self.topic_plan(split).sigma)
        return params

    def finished_stages(self, checkpoints: Checkpoints) -> set[str]:
        """The label stages once checkpointed, and the method's own (it runs in the same folder)."""
        done = {stage for stage, key in ((STAGE_CLASS_COUNTS, CHECKPOINT_COUNTS),
                                         (STAGE_TOPIC_LABELS, STAGE_TOPIC_LABELS)) if checkpoints.has(key)}
        finished_of = getattr(self.method, "finished_stages", None)
        return done | (set(finished_of(checkpoints)) if finished_of is not None else set())

    def run(self, corpus: Corpus, spec: RunSpec, delta: float, ctx: MethodContext) -> MethodOutput:
        split = self.split(spec, delta, len(corpus.units))
        released = self._class_counts(corpus, split.counts, ctx)  # first: it makes the label set public
        stage = TopicLabelStage(self.topic_plan(split), released)
        docs, diagnostics, notes = self.method.run(corpus, split.inner_spec, split.inner_delta,
                                                   replace(ctx, label_stage=stage))
        kept = keep_class_shares(docs, released, ctx.rng())
        diagnostics = {**diagnostics, "classes": len(released.labels), "kept_after_class_shares": len(kept)}
        return kept, diagnostics, [*notes, *topic_label_notes(split, stage, kept)]
