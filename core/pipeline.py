"""Run orchestration: spec -> plan -> charged stages -> synthetic corpus -> export.

``plan(spec)`` says what a run would spend and derive, without charging anything.
``run_pipeline(spec, reporter)`` runs it: loads the corpus, refuses a plan over the
dataset's cap, loads the models, runs the method (which charges the ledger at the start of
each DP stage), writes the synthetic corpus and the privacy record to the run folder, and
exports the release (corpus + signed certificate) to the output folder.

The run folder (``data_dir()/runs/<run_id>``) keeps checkpoints of released DP outputs so
``resume`` never redraws a charged stage; it is private workspace and is never exported.
Checkpoints are kept per method (``checkpoints/<method>/``), and ``run.json`` records the run's
canonical spec, method, dataset fingerprint and dataset identity: a resume under anything that
changes what is drawn or what it costs is refused (see ``check_resumable``).
"""

from __future__ import annotations

import csv
import io
import json
import math
import secrets
import subprocess
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

import rfc8785

from core import __version__
from core.bundle import bundle_info
from core.certificate.privacy_record import PrivacyRecord
from core.checkpoints import Checkpoints
from core.compute.factory import engine_factory, unit_work
from core.corpus import Corpus, DatasetIdentity, load_corpus
from core.errors import PrivetError
from core.estimate import estimate
from core.export import check_writable, export_release, release_size
from core.ledger import Ledger, check_before_run
from core.ledger.booking import Booking, book_dataset, record_booking
from core.ledger.view import cumulative_after
from core.methods import registry
from core.methods.base import MethodContext, PlanSummary, SyntheticDoc
from core.methods.dp_synrag.realisation import check_spec_example
from core.methods.wave_size import default_batch_rows, wave_rows
from core.models.registry import load_embedder, load_language_model, model_fingerprint, resolve_model
from core.paths import data_dir
from core.privacy.conversion import REDRAWN_SUFFIX, approx_rho_to_eps, redrawn_delta
from core.privacy.budget import epsilon_of, resolve_delta
from core.privacy.planner import delta_warnings
from core.private_files import private_folder, write_private
from core.progress import NULL_REPORTER, ProgressEvent, Reporter, StageProgress
from core.runspec import RunSpec

SYNTHETIC_JSONL = "synthetic.jsonl"
SYNTHETIC_CSV = "synthetic.csv"
RUN_FILE = "run.json"
COMPUTE_SPILL = "compute-spill"  # where a Ray started for this run spills objects (core/compute/ray_pool.py)
# Spec fields a resume may change. They say where the release goes and who signs it, where the data
# file lies (its content is checked by fingerprint), and how much memory and which device are used;
# none of them changes what a stage draws or what it costs. Any other difference refuses the resume.
RESUMABLE_CHANGES = (
    "output", "privacy.rationale", "data.path", "privacy.spend_anyway",
    "llm.device", "embedder.device", "dp_synrag.batch_rows", "dp_synrag.memory_budget_mb",
)


@dataclass
class RunResult:
    run_id: str
    run_dir: Path
    synthetic_path: Path
    n_synthetic: int
    record: PrivacyRecord
    export_dir: Path | None = None
    private_diagnostics: dict[str, int] = field(default_factory=dict)  # on screen only


# -- planning ------------------------------------------------------------------------------


def load_spec_corpus(spec: RunSpec) -> Corpus:
    d = spec.data
    if not d.path:
        raise PrivetError("The run spec names no data.", "Set [data] path to a folder or a .csv/.tsv/.jsonl file.")
    return load_corpus(d.path, d.text_column, d.id_column, d.person_column, d.max_unit_chars)


def register_dataset(
    spec: RunSpec, fingerprint: str, ledger: Ledger, dry_run: bool = False
) -> tuple[DatasetIdentity, list[str]]:
    """The identity the data are budgeted under (``core.ledger.booking``); the view is recorded under it
    (unless ``dry_run``). Returns the booking's warnings. ``fingerprint`` must be the loaded view's."""
    booking = book_dataset(ledger, spec.data, load_spec_corpus(spec))
    if booking.fingerprint != fingerprint:
        raise PrivetError("The data changed while they were being loaded.", "Start again.")
    if not dry_run:
        record_booking(ledger, booking)
    return booking.identity, booking.warnings


def dataset_booking(spec: RunSpec, corpus: Corpus, ledger: Ledger | None = None) -> Booking:
    """The dataset these data are budgeted under: what `privet plan` prints, the wizard shows and the run books.

    Writes nothing (a fresh installation without a ledger is not given one).
    """
    if ledger is not None:
        return book_dataset(ledger, spec.data, corpus)
    if not (data_dir() / "ledger.db").exists():  # nothing budgeted yet: nothing to match
        return book_dataset(None, spec.data, corpus)
    with Ledger() as own:
        return book_dataset(own, spec.data, corpus)


def plan(spec: RunSpec, corpus: Corpus | None = None, ledger: Ledger | None = None) -> PlanSummary:
    """The budget split and derived parameters for this spec on this corpus (charges and writes nothing).

    The loaded view is matched against the datasets the ledger knows (``core.ledger.booking``): the
    plan names the dataset the run will be booked under; the same data under a new chosen name is refused.
    """
    spec.check()  # refuses nonsense before anything is loaded
    corpus = corpus or load_spec_corpus(spec)
    check_spec_example(spec, corpus)
    n = len(corpus.units)
    delta = resolve_delta(spec)
    method = _method(spec.method)
    summary = method.plan_summary(spec, delta, n)
    summary.warnings.extend(delta_warnings(delta, spec.privacy.max_units, n))
    booking = dataset_booking(spec, corpus, ledger)
    summary.dataset_name = booking.name
    summary.warnings.extend(booking.warnings)
    summary.warnings.extend(spec.warnings())
    summary.estimate_seconds, summary.estimate_memory_mb = estimate_cost(spec, n)
    return summary


def refuse_spending_for_nothing(spec: RunSpec, summary: PlanSummary) -> None:
    """Refuse a plan expected to release about 0 topics unless the spec says spend anyway (docs/method.md §1.9).

    The non-private test mode (a fixed seed; nothing can be exported) is exempt: its plan warns only."""
    if not summary.spends_for_nothing or spec.privacy.spend_anyway or spec.test_mode_seed is not None:
        return
    forecast = summary.topic_forecast
    assert forecast is not None
    raise PrivetError(
        f"Nothing was charged: this plan is expected to release about {forecast.expected_topics:.1f} topics "
        f"(a topic needs about {forecast.min_topic_support:.0f} units sharing its word), so ε = "
        f"{spec.privacy.epsilon:g} would be spent for text no better than a public model's.",
        " ".join(summary.forecast_advice)
        + " To spend the budget anyway, run with --spend-anyway (or set [privacy] spend_anyway = true).",
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

    @property
    def charges_anything(self) -> bool:
        return self.resume_rho > 0

    def words(self, label: Callable[[str], str] | None = None) -> str:
        """The consent text: which stages are charged again, the extra ε and the dataset's total after."""
        name = label or (lambda stage: stage)
        lines = [f"Run {self.run_id} on dataset '{self.dataset_name}' was charged ε = "
                 f"{epsilon_of(self.charged_rho, self.delta):.3g} before it stopped (that stays spent)."]
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
        cap = f" (cap ε = {self.cap_epsilon:g})" if self.cap_epsilon is not None else ""
        lines.append(f"The dataset's total goes from ε = {self.before_epsilon:.3g} to at most "
                     f"ε = {self.after_epsilon:.3g}{cap}, at δ = {self.delta:.2g}.")
        return "\n".join(lines)


def resume_quote(spec: RunSpec, run_dir: Path, corpus: Corpus | None = None, ledger: Ledger | None = None) -> ResumeQuote:
    """What ``run_pipeline(spec, run_dir=run_dir, resume=True)`` may charge (charges and writes nothing).

    A stage counts as finished only when the method confirms its checkpoint (``finished_stages``);
    any other stage this run was charged for counts as drawn again at its planned cost (an upper bound).
    """
    meta = _run_meta(run_dir)
    corpus = corpus or load_spec_corpus(spec)
    delta = resolve_delta(spec)
    method = _method(spec.method)
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
        cumulative = cumulative_after(ledger, booking.key, 0.0, delta)
        spent = ledger.spent_rho(booking.key)
    finally:
        if own:
            ledger.close()
    extra = sum(rho for _s, rho in redrawn)
    resume_rho = extra + sum(rho for _s, rho in remaining)
    at = cumulative.delta
    return ResumeQuote(
        run_id=meta["run_id"], dataset_name=booking.name, redrawn=redrawn, remaining=remaining,
        charged_rho=sum(float(r["rho"]) for r in rows), extra_rho=extra, extra_epsilon=epsilon_of(extra, at),
        resume_rho=resume_rho, before_epsilon=epsilon_of(spent, at), after_epsilon=epsilon_of(spent + resume_rho, at),
        delta=at, cap_epsilon=cumulative.cap_epsilon,
    )


def _run_meta(run_dir: Path | None) -> dict:
    path = Path(run_dir) / RUN_FILE if run_dir else None
    if path is None or not path.is_file():
        raise PrivetError("There is no interrupted run to resume in that folder.", "Start a new run instead.")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise PrivetError(f"The run file {path} cannot be read.", "Start a new run instead.") from None


def estimate_cost(spec: RunSpec, n_units: int) -> tuple[float, float]:
    """A rough time (s) and memory (MB) estimate: time from ``core.estimate`` (work over this
    computer's measured speed), memory from the wave size and the packaged model's KV cache."""

    p = spec.dp_synrag
    prompt = min(p.max_prompt_tokens, 200)
    seconds = estimate(spec, n_units).total_s
    wave_rows = p.batch_rows or default_batch_rows(spec.llm.device)
    kv_mb = wave_rows * (prompt + p.T) * 30 * 2 * 192 * 4 / 1e6  # SmolLM2: 30 layers, K and V, 3 heads x 64
    return seconds, 1200.0 + kv_mb


# -- running -------------------------------------------------------------------------------


def new_run_id() -> str:
    """The date and a random part: the run id is exported, so it holds no time of day."""
    return datetime.now(timezone.utc).strftime("%Y%m%d") + "-" + secrets.token_hex(4)


def canonical_spec(spec: RunSpec) -> str:
    """The whole run spec as canonical JSON (RFC 8785), as ``run.json`` records it."""
    return rfc8785.dumps(spec.to_dict()).decode("utf-8")


def spec_differences(before: str, after: str) -> list[str]:
    """Names (not values) of the settings that differ between two canonical specs, less ``RESUMABLE_CHANGES``."""
    old, new = _flatten(json.loads(before)), _flatten(json.loads(after))
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


def reconcile_stages(planned: list[dict], charges: list[dict]) -> list[dict]:
    """The record's stages: the plan's, plus one entry per ledger charge of the run that the plan lacks.

    A charge the plan lacks is a stage drawn again after a resume (its first, unfinished draw stays
    charged). With these entries the record's total equals what the ledger charged for the run.
    """
    unmatched = [s["stage"] for s in planned]
    extras = []
    for row in charges:
        if row["stage"] in unmatched:
            unmatched.remove(row["stage"])
            continue
        base = next((s for s in planned if s["stage"] == row["stage"]), {})
        per_group = base.get("rho", 0.0) / base["parallel"] if base.get("parallel") else 0.0
        extras.append({
            "stage": f"{row['stage']}{REDRAWN_SUFFIX}",
            "mechanism": base.get("mechanism", "charged"),
            "rho": float(row["rho"]),
            "count": base.get("count", 1),
            "parallel": round(row["rho"] / per_group) if per_group > 0 else None,
            "parameters": dict(base.get("parameters", {})),
            "description": "Drawn again after the run was interrupted and resumed: " + row["description"],
            **({"delta": base["delta"]} if base.get("delta") else {}),  # an (ε, δ) stage spends its δ again
        })
    return list(planned) + extras


def run_pipeline(
    spec: RunSpec,
    reporter: Reporter = NULL_REPORTER,
    run_dir: Path | None = None,
    resume: bool = False,
    ledger: Ledger | None = None,
    require_consent: bool = False,
    consent: Callable[[ResumeQuote], bool] | None = None,
) -> RunResult:
    """Run the spec end to end. ``resume`` reuses the checkpoints in ``run_dir``.

    ``require_consent`` (``privet run`` and the wizard): a plan expected to release about 0 topics is
    refused before anything is charged unless ``[privacy] spend_anyway`` says otherwise
    (``refuse_spending_for_nothing``).

    A resume is refused unless the spec (but for ``RESUMABLE_CHANGES``), the data and the dataset
    identity are those the run started with, and ``consent`` accepts the ``ResumeQuote`` (what the
    resume may charge again) before anything is drawn; the cap is checked again for all of it.
    """
    started = _now()
    spec.check()  # refuses nonsense before anything is loaded or charged
    check_before_run(ledger.path if ledger else None)  # a wiped or edited ledger refuses every run
    if resume:  # before anything loads
        _run_meta(run_dir)
        if consent is None:
            raise PrivetError(
                "Resuming this run may charge the privacy budget again for the stage that was in progress.",
                "Look at what it would charge (privet run --resume asks; the wizard shows a dialog) and agree to it.",
            )
    test_mode = spec.test_mode_seed is not None
    out_dir = Path(spec.output.folder) if spec.output.folder and spec.output.export_at_end else None
    if out_dir and not test_mode:
        _check_output_folder(out_dir, spec.output.overwrite)

    corpus = load_spec_corpus(spec)
    check_spec_example(spec, corpus)  # a pasted real document as the example of the form: refused before any charge
    n = len(corpus.units)
    delta = resolve_delta(spec)
    method = _method(spec.method)
    summary = method.plan_summary(spec, delta, n)
    booking_now = dataset_booking(spec, corpus, ledger)  # refuses the same data under a new name, before models load
    fingerprint = booking_now.fingerprint
    if require_consent and not resume:
        refuse_spending_for_nothing(spec, summary)  # before any model loads or anything is charged
    planner_warnings = [w for w in delta_warnings(delta, spec.privacy.max_units, n) if w not in summary.warnings]
    for warning in corpus.report.warnings + summary.warnings + planner_warnings + spec.warnings():
        reporter.emit(ProgressEvent("plan", "warning", message=warning))  # before anything is charged
    accepted_rho: float | None = None
    if resume and consent is not None:  # asked before the models load; nothing is charged before the answer
        meta = _run_meta(run_dir)
        check_resumable(meta, spec, fingerprint, booking_now.identity)
        quote = resume_quote(spec, Path(run_dir), corpus, ledger)
        if not consent(quote):
            raise PrivetError("The resume was not started: nothing more was charged.",
                              "Resume again and accept the charge shown, or start a new run.")
        accepted_rho = quote.resume_rho
    models = _load_models(spec, reporter)  # a model that fails to load leaves no run folder or ledger
    ledger = ledger or Ledger()
    booking = book_dataset(ledger, spec.data, corpus)  # again, now with the ledger the run books against
    identity = booking.identity
    for warning in booking.warnings:
        reporter.emit(ProgressEvent("plan", "warning", message=warning))

    if resume and accepted_rho is not None:
        check_resumable(meta, spec, fingerprint, identity)
        run_id = meta["run_id"]
        started = meta.get("started_at", started)
        # the cap is checked again (it may have been lowered), for everything the resume may charge; every
        # charge of the resume is also held to what was accepted
        reserve_rho = accepted_rho
    else:
        run_id = Path(run_dir).name if run_dir else new_run_id()  # one id: run folder, ledger, certificate
        ledger.check_plan(fingerprint, summary.rho_total, delta)  # a cap set on this view before it was registered
        reserve_rho = summary.rho_total
        accepted_rho = None
    # The whole plan is reserved atomically before the first stage: a run that lost a race for the cap is
    # refused here, before it is charged anything (core.ledger.store.Ledger.reserve).
    ledger.reserve(identity.key, run_id, reserve_rho)
    try:
        return _run_reserved(spec, reporter, run_dir, resume, ledger, models, corpus, method, summary, delta,
                             booking, run_id, started, out_dir, test_mode, accepted_rho)
    finally:
        ledger.release_reservation(run_id)


def _run_reserved(spec, reporter, run_dir, resume, ledger, models, corpus, method, summary, delta, booking,
                  run_id, started, out_dir, test_mode, accepted_rho) -> RunResult:
    """The run past its reservation: register the view, run the method, write the record, export."""
    identity, fingerprint = booking.identity, booking.fingerprint
    charged_before_resume = ledger.run_rho(identity.key, run_id)
    record_booking(ledger, booking)  # past the cap check: this view is budgeted under the identity
    if not resume:
        run_dir = Path(run_dir) if run_dir else data_dir() / "runs" / run_id
        private_folder(run_dir)
        meta = {
            "run_id": run_id,
            "started_at": started,  # exact time: private run folder only
            "method": spec.method,
            "spec": spec.to_dict(),
            "spec_canonical": canonical_spec(spec),
            "dataset_fingerprint": fingerprint,
            "dataset_id": identity.key,
        }
        write_private(run_dir / RUN_FILE, json.dumps(meta))
    run_dir = Path(run_dir)

    def charge(stage: str, rho: float, description: str) -> None:
        """Written to the ledger *before* the stage draws any noise; refused past the cap.

        The cap check reserves what the run still plans to charge, so a run is stopped at its first
        stage rather than midway when another run has spent the budget meanwhile.
        """
        if accepted_rho is not None:  # a resume never charges more than the custodian accepted
            so_far = ledger.run_rho(identity.key, run_id) - charged_before_resume
            if so_far + rho > accepted_rho * (1 + 1e-9) + 1e-15:
                raise PrivetError(
                    f"Resuming would charge rho={so_far + rho:.4g}, more than the rho={accepted_rho:.4g} accepted "
                    f"before it started. Nothing more was charged (rho={so_far:.4g} was charged by this resume).",
                    "Please report this: the resume quote should have been an upper bound.")
        ledger.charge(identity.key, run_id, stage, rho, delta, description)  # within the run's reservation
        reporter.emit(ProgressEvent(stage, "charged", rho=rho, message=description))

    ctx = MethodContext(
        llm=models.llm,
        embedder=models.embedder,
        task=spec.task,
        charge=charge,
        reporter=reporter,
        checkpoints=Checkpoints(run_dir / "checkpoints" / spec.method),  # never shared between methods
        test_seed=spec.test_mode_seed,
        max_prompt_tokens=spec.dp_synrag.max_prompt_tokens,
        batch_rows=wave_rows(spec, models.llm),
        engine_factory=engine_factory(spec.compute, spec.llm, spec.test_mode_seed, run_dir / COMPUTE_SPILL),
        unit_work=unit_work(spec.compute, spec.llm, spec.embedder, run_dir / COMPUTE_SPILL),
    )
    documents, diagnostics, notes = method.run(corpus, spec, delta, ctx)

    synthetic_path = write_synthetic(run_dir, documents)
    charges = [r for r in ledger.entries(identity.key) if r["kind"] == "charge" and r["run_id"] == run_id]
    planned = method.record_stages(spec, delta)
    stages = reconcile_stages(planned, charges)
    extra_rho = sum(s["rho"] for s in stages[len(planned):])
    # (ε, δ) stages (phrase discovery) spend part of δ; one drawn again after a resume spends it again, so the
    # record's δ grows by that much and the zCDP part is still converted at the planned δ − δ_p.
    record_delta = delta + redrawn_delta(stages)
    delta_spent = math.fsum(s.get("delta", 0.0) for s in stages)
    rho_total = summary.rho_total + extra_rho
    if extra_rho > 0:
        notes = list(notes) + [
            "This run was interrupted and resumed. Outputs that DP stages had finished were reused, not drawn "
            "again; the parts that had not finished were drawn again and charged again (listed as 'redrawn after "
            "resume'). The total above includes both charges, so it is conservative. Private prediction charges "
            "a redraw min(L, groups redrawn) times one group's cost: a unit is in at most L groups."
        ]
    record = PrivacyRecord(
        run_id=run_id,
        method=spec.method,
        method_parameters=method.parameters(spec, summary),
        unit_kind=corpus.unit_kind,
        person_column=spec.data.person_column,
        dataset_fingerprint=fingerprint,
        dataset_id=identity.key,
        dataset_name=identity.name if identity.chosen else "",
        epsilon_target=spec.privacy.epsilon,
        delta=record_delta,
        conversion="tight",
        rho_total=rho_total,
        stages=stages,
        epsilon_tight=approx_rho_to_eps(rho_total, record_delta, delta_spent, "tight"),
        epsilon_loose=approx_rho_to_eps(rho_total, record_delta, delta_spent, "loose"),
        samplers=method.samplers(),
        models=models.fingerprints,
        device=models.llm.device,
        started_at=started,
        finished_at=_now(),
        privet_version=__version__,
        privet_commit=_git_commit(),
        privet_bundle=_bundle_identity(),
        end_to_end_dp=summary.end_to_end_dp,
        scope_notes=notes,
        test_mode=test_mode,
        budget_rationale=spec.privacy.rationale.strip(),
    )
    record.save(run_dir)
    result = RunResult(run_id, run_dir, synthetic_path, len(documents), record, None, diagnostics)

    size = release_size(run_dir) if out_dir and not test_mode else None
    if size is not None and size.empty:  # an empty release is never written without the custodian's say-so
        reporter.emit(ProgressEvent("export", "warning", message=f"Not exported: {size.problem} Export it anyway with "
                                    f"privet export {run_dir} {out_dir} --allow-empty."))
        out_dir = None
    if out_dir and not test_mode:
        identity = {
            "custodian": spec.output.custodian,
            "organisation": spec.output.organisation,
            "irb_protocol": spec.output.irb_protocol,
        }
        progress = StageProgress(reporter, "export", 1).start("Writing the release and its certificate")
        result.export_dir = export_release(run_dir, out_dir, identity, overwrite=spec.output.overwrite, ledger=ledger)
        progress.advance()
        progress.finish()
    reporter.emit(ProgressEvent("run", "done", message=str(result.export_dir or run_dir)))
    return result


def write_synthetic(run_dir: Path, documents: list[SyntheticDoc]) -> Path:
    """synthetic.jsonl and synthetic.csv (id, text), each written atomically."""
    jsonl = "".join(json.dumps({"id": d.id, "text": d.text}, ensure_ascii=False) + "\n" for d in documents)
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["id", "text"])
    for d in documents:
        writer.writerow([d.id, d.text])
    _atomic_write(run_dir / SYNTHETIC_JSONL, jsonl)
    _atomic_write(run_dir / SYNTHETIC_CSV, buffer.getvalue())
    return run_dir / SYNTHETIC_JSONL


def read_synthetic(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


# -- helpers -------------------------------------------------------------------------------


@dataclass
class LoadedModels:
    llm: object
    embedder: object
    fingerprints: list[dict]


def _load_models(spec: RunSpec, reporter: Reporter) -> LoadedModels:
    progress = StageProgress(reporter, "models", 2).start("Loading models")
    # Resolved once: the files, backend and device that load are the ones the certificate names.
    llm_model, embedder_model = resolve_model(spec.llm, "llm"), resolve_model(spec.embedder, "embedder")
    llm = load_language_model(llm_model)
    progress.advance()
    embedder = load_embedder(embedder_model)
    progress.advance()
    progress.finish()
    fingerprints = [
        {"role": "language model", **model_fingerprint(llm_model)},
        {"role": "embedder", **model_fingerprint(embedder_model)},
    ]
    return LoadedModels(llm, embedder, fingerprints)


def _flatten(data: dict, prefix: str = "") -> dict:
    flat = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            flat.update(_flatten(value, name + "."))
        else:
            flat[name] = value
    return flat


def _method(name: str):
    return registry.get(name)


def _check_output_folder(out_dir: Path, overwrite: bool) -> None:
    """Refuse, before anything is charged, an output folder the export could not write (``check_writable``)."""
    if out_dir.exists() and not out_dir.is_dir():
        raise PrivetError(f"The output folder {out_dir} is a file, not a folder.", "Choose a new or empty folder.")
    try:
        if out_dir.exists() and any(out_dir.iterdir()) and not overwrite:
            raise PrivetError(
                f"The output folder {out_dir} is not empty.",
                "Choose an empty or new folder, or allow overwriting (--overwrite / [output] overwrite = true).",
            )
    except OSError as exc:
        raise PrivetError(f"The output folder {out_dir} cannot be read ({exc.strerror or type(exc).__name__}).",
                          "Choose a folder you can write to.") from None
    check_writable(out_dir)


def _atomic_write(path: Path, text: str) -> None:
    write_private(path, text)  # private (0600), atomic: the run folder is private workspace


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _bundle_identity() -> dict[str, str]:
    info = bundle_info()
    return {} if info is None else info.to_dict()


def _git_commit() -> str:
    info = bundle_info()
    if info is not None:  # frozen: no source tree to ask git; the commit the bundle was built from
        return info.commit
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=Path(__file__).resolve().parent,
            capture_output=True,
            text=True,
            timeout=5,
        )
        return out.stdout.strip() if out.returncode == 0 else ""
    except (OSError, subprocess.SubprocessError):
        return ""
