"""Resuming an interrupted run: what may change, what it may charge again, and the refusals.

``run.json`` in the run folder records the run's canonical spec, method, dataset fingerprint and
dataset identity. A resume under anything that changes what is drawn or what it costs is refused
(``check_resumable``); ``resume_quote`` says, before anything is charged, what the resume may charge
again (the consent dialogs' figures). The run folder's checkpoints mean a resume never redraws a
stage whose released output was saved.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import rfc8785

from core.common.checkpoints import Checkpoints
from core.corpus import Corpus, DatasetIdentity
from core.ledger.booking import book_dataset, load_spec_corpus
from core.common.errors import PrivetError
from core.run.export import RUN_FILE
from core.ledger import Ledger
from core.specs.method_catalogue import facts
from core.methods.class_conditional import method_for
from core.ledger.total import stated
from core.ledger.view import cumulative_after
from core.privacy.budget import epsilon_of, resolve_delta
from core.specs.runspec import RunSpec
from core.specs.document import move_document_settings
from core.specs.writing import move_shared_settings

# Spec fields a resume may change. They say where the release goes and who signs it, where the data
# file lies (its content is checked by fingerprint), and how much memory and which device are used;
# none of them changes what a stage draws or what it costs. Any other difference refuses the resume.
RESUMABLE_CHANGES = (
    "output", "privacy.rationale", "data.path", "privacy.spend_anyway",
    "llm.device", "embedder.device", "writing.batch_rows", "writing.memory_budget_mb",
    "compute.threads",  # how many threads run the models: the same draws, only faster or slower
)



@dataclass(frozen=True)
class ResumeQuote:
    """What resuming an interrupted run may charge, before anything is charged (the consent dialogs' figures).

    ``redrawn``: stages already charged whose output was not finished, charged again (at most their
    planned ρ); ``remaining``: planned stages not yet started. ``extra_*`` is the redraw only, the
    charge on top of the run's plan; ``after_epsilon`` is the dataset's total if the resume charges it all.
    """

    run_id: str
    dataset_name: str
    redrawn: list[tuple[str, float]]
    remaining: list[tuple[str, float]]
    charged_rho: float
    extra_rho: float
    extra_epsilon: float
    resume_rho: float  # everything the resume may charge: redraws plus the stages not yet started
    before_epsilon: float
    after_epsilon: float
    delta: float
    cap_epsilon: float | None
    resume_delta_part: float = 0.0  # the δ_p a redrawn or not yet started phrase stage spends
    run_epsilon_after: float = 0.0  # the run's own ε if the resume charges it all: its certificate's bound
    run_delta_after: float = 0.0  # ... at this δ (the run's δ, plus δ_p drawn again)
    charged_epsilon: float = 0.0  # what the run was charged before it stopped, as its certificate would state it

    @property
    def charges_anything(self) -> bool:
        return self.resume_rho > 0 or self.resume_delta_part > 0

    def words(self, label: Callable[[str], str] | None = None) -> str:
        """The consent text: which stages are charged again, the extra ε and the dataset's total after."""
        name = label or (lambda stage: stage)
        lines = [f"Run {self.run_id} on dataset '{self.dataset_name}' was charged ε = "
                 f"{self.charged_epsilon:.3g} before it stopped (that stays spent)."]
        if self.redrawn:
            listed = ", ".join(name(s) for s, _ in self.redrawn)
            lines.append(f"Resuming draws these stages again, and they are charged again: {listed}. That is at "
                         f"most ε = {self.extra_epsilon:.3g} extra on its own (ρ = {self.extra_rho:.4g}), on top "
                         "of the plan.")
        else:
            lines.append("No stage that was already charged is charged again.")
        if self.remaining:
            listed = ", ".join(name(s) for s, _ in self.remaining)
            lines.append(f"Stages not started yet, charged as planned: {listed}.")
        if not self.charges_anything:
            lines.append("Nothing more will be charged: every stage that was charged has finished.")
        cap = f" (cap ε = {self.cap_epsilon:g})" if self.cap_epsilon is not None else ""
        lines.append(f"This run's certificate will state at most ε = {self.run_epsilon_after:.3g} at "
                     f"δ = {self.run_delta_after:.2g}.")
        lines.append(f"The dataset's total goes from ε = {self.before_epsilon:.3g} to at most "
                     f"ε = {self.after_epsilon:.3g}{cap}, at δ = {self.delta:.2g}.")
        return "\n".join(lines)


def resume_quote(spec: RunSpec, run_dir: Path, corpus: Corpus | None = None, ledger: Ledger | None = None) -> ResumeQuote:
    """What ``run_pipeline(spec, run_dir=run_dir, resume=True)`` may charge (charges and writes nothing).

    A stage counts as finished only when the method confirms its checkpoint (``finished_stages``);
    any other stage this run was charged for counts as drawn again at its planned cost, ρ and δ_p (an upper
    bound). The run's ε after the resume is computed as its certificate will be (``approx_rho_to_eps`` of its
    charges and the quote's, at its δ plus the δ_p drawn again), and the dataset's by ``core.ledger.total``.
    """
    meta = run_meta(run_dir)
    spec = facts(spec.method).public_defaults(spec)  # as run_pipeline does: the run recorded them
    corpus = corpus or load_spec_corpus(spec)
    delta = resolve_delta(spec)
    method = method_for(spec)  # per class when [data] label_column is set
    summary = method.plan_summary(spec, delta, len(corpus.units))
    finished_of = getattr(method, "finished_stages", None)
    checkpoints = Path(run_dir) / "checkpoints" / spec.method
    finished: set[str] = set(finished_of(Checkpoints(checkpoints))) if finished_of and checkpoints.is_dir() else set()
    own = ledger is None
    ledger = ledger or Ledger()
    try:
        booking = book_dataset(ledger, spec.data, corpus)
        rows = [r for r in ledger.entries(booking.key) if r["kind"] == "charge" and r["run_id"] == meta["run_id"]]
        charged = {str(r["stage"]) for r in rows}
        # Every planned entry of a stage already charged and not confirmed finished may be drawn again at its
        # planned cost (a stage planned several times, e.g. once per iteration, counts each time).
        redrawn = [(s, rho) for s, rho in summary.stages if s in charged and s not in finished]
        remaining = [(s, rho) for s, rho in summary.stages if s not in charged]
        parts = {str(s["stage"]): float(s.get("delta", 0.0)) for s in method.record_stages(spec, delta)}
        extra = sum(rho for _s, rho in redrawn)
        resume_rho = extra + sum(rho for _s, rho in remaining)
        redrawn_part = sum(parts.get(s, 0.0) for s, _rho in redrawn)
        resume_part = redrawn_part + sum(parts.get(s, 0.0) for s, _rho in remaining)
        # without a cap the total is stated at the runs' δ, and this run's grows by the δ_p drawn again
        cumulative = cumulative_after(ledger, booking.key, resume_rho, redrawn_part, resume_part)
    finally:
        if own:
            ledger.close()
    charged_rho = sum(float(r["rho"]) for r in rows)
    charged_part = sum(float(r.get("delta_part", 0.0) or 0.0) for r in rows)
    run_delta = delta + redrawn_part + max(charged_part - sum(parts.get(s, 0.0) for s in charged), 0.0)
    at = cumulative.delta
    return ResumeQuote(
        run_id=meta["run_id"], dataset_name=booking.name, redrawn=redrawn, remaining=remaining,
        charged_rho=charged_rho, extra_rho=extra, extra_epsilon=epsilon_of(extra, at),
        resume_rho=resume_rho, before_epsilon=cumulative.before_epsilon, after_epsilon=cumulative.after_epsilon,
        delta=at, cap_epsilon=cumulative.cap_epsilon, resume_delta_part=resume_part,
        run_epsilon_after=stated(charged_rho + resume_rho, charged_part + resume_part, run_delta).epsilon,
        run_delta_after=run_delta,
        charged_epsilon=stated(charged_rho, charged_part, run_delta - redrawn_part).epsilon,
    )


def run_meta(run_dir: Path | None) -> dict:
    path = Path(run_dir) / RUN_FILE if run_dir else None
    if path is None or not path.is_file():
        raise PrivetError("There is no interrupted run to resume in that folder.", "Start a new run instead.")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise PrivetError(f"The run file {path} cannot be read.", "Start a new run instead.") from None


def canonical_spec(spec: RunSpec) -> str:
    """The whole run spec as canonical JSON (RFC 8785), as ``run.json`` records it."""
    return rfc8785.dumps(spec.to_dict()).decode("utf-8")


def spec_differences(before: str, after: str) -> list[str]:
    """Names (not values) of the settings that differ between two canonical specs, less ``RESUMABLE_CHANGES``.
    A spec recorded before ``[writing]`` or ``[document]`` existed is read as a spec file of its time is (its shared
    settings in ``[dp_synrag]`` are ``[writing]``'s, its form ``[document]``'s), so a resume of it under the same
    settings finds no difference."""
    old = _flatten(move_document_settings(move_shared_settings(json.loads(before))))
    new = _flatten(json.loads(after))
    missing = object()
    return sorted(
        name for name in set(old) | set(new)
        if old.get(name, missing) != new.get(name, missing)
        and not any(name == allowed or name.startswith(allowed + ".") for allowed in RESUMABLE_CHANGES)
    )


def check_resumable(meta: dict, spec: RunSpec, fingerprint: str, identity: DatasetIdentity) -> None:
    """Refuse to resume a run under a spec, data or dataset identity other than the ones it started with.

    The checkpoints hold DP outputs drawn under the original settings; reusing them under new ones
    would release outputs whose cost the certificate does not state.
    """
    fix = ("Start a new run with these settings (what the interrupted run was charged stays charged), "
           "or resume with the run spec and data the run started with.")
    if "spec_canonical" not in meta:
        raise PrivetError(
            "This run folder was made by an earlier version of Privet that did not record the run's settings, "
            "so it cannot be checked that resuming would draw under the same settings.",
            "Start a new run (what the interrupted run was charged stays charged).",
        )
    problems = []
    changed = spec_differences(meta["spec_canonical"], canonical_spec(spec))
    if changed:
        problems.append("these settings differ from the ones it started with: " + ", ".join(changed))
    if meta.get("dataset_fingerprint") != fingerprint:
        problems.append("the data loaded now are not the data it started with")
    if meta.get("dataset_id") != identity.key:
        problems.append("the data are now budgeted under another dataset name")
    if problems:
        raise PrivetError("This run cannot be resumed: " + "; ".join(problems) + ".", fix)


def _flatten(data: dict, prefix: str = "") -> dict:
    flat = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            flat.update(_flatten(value, name + "."))
        else:
            flat[name] = value
    return flat
