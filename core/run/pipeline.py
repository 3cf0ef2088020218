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
changes what is drawn or what it costs is refused (``core.run.resume``).

``run_pipeline`` reads as its steps: checks before loading, the plan (``core.run.planning``), consent to
a resume, the models (``core.run.loaded_models``), the reservation, the run folder, the method, the privacy
record (``core.run.privacy_record``), the export (``core.run.export_at_end``; ``core.run.export`` writes the files).
"""

from __future__ import annotations

import contextlib
import json
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from core.certificate.privacy_record import PrivacyRecord
from core.common.checkpoints import Checkpoints
from core.compute.factory import compute_backend
from core.corpus import Corpus
from core.ledger.booking import Booking, book_dataset, load_spec_corpus, new_run_id, record_booking
from core.common.errors import BudgetError, PrivetError
from core.run.export import RUN_FILE, read_synthetic, write_synthetic
from core.run.export_at_end import export_at_end, output_folder
from core.run.loaded_models import load_models
from core.run.privacy_record import now, privacy_record
from core.ledger import Ledger, check_before_run
from core.specs.method_catalogue import facts
from core.methods.class_conditional import method_for
from core.methods.base import Method, MethodContext, PlanSummary, SyntheticDoc
from core.methods.wave_size import default_batch_rows, wave_rows
from core.models import threads
from core.common.paths import data_dir
from core.run.planning import (
    dataset_booking,
    estimate_cost,
    plan,
    refuse_spending_for_nothing,
    register_dataset,
    screen_forecast_warnings,
    spending_gate,
)
from core.privacy.budget import resolve_delta
from core.privacy.planner import delta_warnings
from core.common.private_files import private_folder, write_private
from core.common.progress import NULL_REPORTER, ProgressEvent, Reporter
from core.run.resume import ResumeQuote, canonical_spec, check_resumable, resume_quote, run_meta
from core.specs.runspec import RunSpec

# Names callers import from here (the desktop, the CLI, tests).
__all__ = [
    "RUN_FILE", "ResumeQuote", "RunResult", "dataset_booking", "default_batch_rows", "estimate_cost",
    "load_spec_corpus", "new_run_id", "plan", "read_synthetic", "register_dataset", "resume_quote", "run_pipeline",
    "write_synthetic",
]

COMPUTE_SPILL = "compute-spill"  # where a Ray started for this run spills objects (core/compute/ray_pool.py)


@dataclass
class RunResult:
    run_id: str
    run_dir: Path
    synthetic_path: Path
    n_synthetic: int
    record: PrivacyRecord
    export_dir: Path | None = None
    private_diagnostics: dict[str, int] = field(default_factory=dict)  # on screen only
    fidelity: dict | None = None  # the fidelity report (real text in its pairs): on screen only, never exported


# The fidelity hook (``core.evaluation.run_fidelity.custodian_fidelity``, which ``privet run`` and the desktop's run
# process pass): (run folder, loaded private corpus, synthetic documents, loaded embedder, reporter) -> the report,
# written to the private run folder only. Passed in, not imported: the command line and the desktop choose it.
FidelityHook = Callable[[Path, Corpus, list[SyntheticDoc], Any, Reporter], dict | None]


# -- running -------------------------------------------------------------------------------


@dataclass
class Prepared:
    """What a run knows before any model loads or anything is charged."""

    corpus: Corpus
    method: Method
    summary: PlanSummary
    delta: float
    booking: Booking  # the booking as planned (before the run's own ledger books it again)


@dataclass
class Reserved:
    """The run being started or resumed: its id and folder, its start time and (resuming) the ρ accepted.
    The id is fixed by ``_identify_run``, just before the reservation."""

    run_id: str
    run_dir: Path | None
    started: str
    resume: bool
    accepted_rho: float | None
    meta: dict = field(default_factory=dict)
    accepted_delta_part: float = 0.0  # the δ_p a resume may spend again (phrase discovery drawn again)


def run_pipeline(
    spec: RunSpec,
    reporter: Reporter = NULL_REPORTER,
    run_dir: Path | None = None,
    resume: bool = False,
    ledger: Ledger | None = None,
    require_consent: bool = False,
    consent: Callable[[ResumeQuote], bool] | None = None,
    fidelity: FidelityHook | None = None,
) -> RunResult:
    """Run the spec end to end. ``resume`` reuses the checkpoints in ``run_dir``.

    ``require_consent`` (``privet run`` and the wizard): a plan expected to release about 0 topics even at
    the custodian's stated public bound on the units is refused before anything is charged unless
    ``[privacy] spend_anyway`` says otherwise (``refuse_spending_for_nothing``: public values only, never the
    true count; without a stated bound nothing is refused and the forecast at the loaded count only warns).

    A resume is refused unless the spec (but for ``RESUMABLE_CHANGES``), the data and the dataset
    identity are those the run started with, and ``consent`` accepts the ``ResumeQuote`` (what the
    resume may charge again) before anything is drawn; the cap is checked again for all of it.

    A test-mode run (``test_mode_seed``) without an explicit ``ledger`` books and charges a throwaway
    ledger (``TestModeLedger``), never the installation's.

    ``fidelity``: called once the synthetic corpus and the privacy record are written, before the export, with
    the corpus and the embedder the run loaded; its report lands in ``RunResult.fidelity`` (on screen only).
    """
    if spec.test_mode_seed is not None and ledger is None:  # never the installation's ledger (TestModeLedger)
        with _test_mode_ledger() as scratch:
            return run_pipeline(spec, reporter, run_dir, resume, scratch, require_consent, consent, fidelity)
    started = now()
    _check_before_loading(spec, ledger, run_dir, resume, consent)
    spec = facts(spec.method).public_defaults(spec)  # what the method's public rules pick (a copy)
    out_dir = output_folder(spec)
    prepared = _prepare(spec, reporter, ledger, resume, require_consent)
    run = Reserved("", run_dir, started, resume, None)
    if resume and consent is not None:  # asked before the models load; nothing is charged before the answer
        run.meta, run.accepted_rho, run.accepted_delta_part = _consent_to_resume(
            spec, Path(run_dir), prepared, ledger, consent)
    models = load_models(spec, reporter)  # a model that fails to load leaves no run folder or ledger
    ledger = ledger or Ledger()
    booking = book_dataset(ledger, spec.data, prepared.corpus)  # again, now with the ledger the run books against
    for warning in booking.warnings:
        reporter.emit(ProgressEvent("plan", "warning", message=warning))
    reserve_rho, reserve_delta = _identify_run(spec, ledger, prepared, booking, run)
    # The whole plan (its ρ and the δ its phrase stage spends) is reserved atomically before the first stage: a
    # run that lost a race for the cap is refused here, before it is charged anything (core.ledger.Ledger.reserve).
    try:
        ledger.reserve(booking.identity.key, run.run_id, reserve_rho, reserve_delta)
    except BudgetError as refusal:  # name the dataset matched and why, before anything is charged
        raise booking.explained(refusal) from None
    try:
        return _run_reserved(spec, reporter, ledger, models, prepared, booking, run, out_dir, fidelity)
    finally:
        ledger.release_reservation(run.run_id)


class TestModeLedger(Ledger):
    """The ledger of a test-mode run: a temporary file deleted when the run ends.

    A test-mode run (``[test_mode_seed]``: fixed seed, not private, never exported) still goes through
    every step a real run takes (booking, cap check, reservation, a charge before each stage, a privacy
    record built from the charges), so it needs a ledger; it gets this one, and the installation's ledger,
    its witness and its high-water mark are never read or written. Its head is neither witnessed nor
    marked (``_record_head`` does nothing): no file outside its temporary folder, and no keyring entry,
    ever names it. Its caps are those of an empty ledger, i.e. none.
    """

    __test__ = False  # not a pytest test class

    def _record_head(self, *args: Any, **kwargs: Any) -> None:  # whatever LedgerFile passes: nothing is recorded
        return None


@contextlib.contextmanager
def _test_mode_ledger() -> Iterator[TestModeLedger]:
    with tempfile.TemporaryDirectory(prefix="privet-test-mode-ledger-") as folder, \
            TestModeLedger(Path(folder) / "ledger.db") as scratch:
        yield scratch


def _check_before_loading(
    spec: RunSpec, ledger: Ledger | None, run_dir: Path | None, resume: bool, consent: Callable | None
) -> None:
    """Refuse nonsense, a wiped ledger and a resume without consent before anything is loaded or charged."""
    spec.check()
    check_before_run(ledger.path if ledger else None)  # a wiped or edited ledger refuses every run
    if resume:  # before anything loads
        run_meta(run_dir)
        if consent is None:
            raise PrivetError(
                "Resuming this run may charge the privacy budget again for the stage that was in progress.",
                "Look at what it would charge (privet run --resume asks; the wizard shows a dialog) and agree to it.",
            )


def _prepare(spec: RunSpec, reporter: Reporter, ledger: Ledger | None, resume: bool, require_consent: bool) -> Prepared:
    """Load the corpus, plan the method on it and say every warning, before any model loads."""
    corpus = load_spec_corpus(spec)
    facts(spec.method).check_corpus(spec, corpus)  # e.g. a pasted real document as the example of the form
    n = len(corpus.units)
    delta = resolve_delta(spec)
    method = method_for(spec)  # per class when [data] label_column is set
    summary = method.plan_summary(spec, delta, n)  # on screen; its ρ and δ read public values only
    booking_now = dataset_booking(spec, corpus, ledger)  # refuses the same data under a new name, before models load
    gate = spending_gate(spec, delta, method)  # public values only, never n (SPEC §6)
    if require_consent and not resume:
        refuse_spending_for_nothing(spec, gate)  # before any model loads or anything is charged
    summary.gate_forecast = None if gate is None else gate.topic_forecast
    screen_forecast_warnings(summary)
    planner_warnings = [w for w in delta_warnings(delta, spec.privacy.max_units, n) if w not in summary.warnings]
    for warning in corpus.report.warnings + summary.warnings + planner_warnings + spec.warnings():
        reporter.emit(ProgressEvent("plan", "warning", message=warning))  # before anything is charged
    return Prepared(corpus, method, summary, delta, booking_now)


def _consent_to_resume(
    spec: RunSpec, run_dir: Path, prepared: Prepared, ledger: Ledger | None, consent: Callable[[ResumeQuote], bool]
) -> tuple[dict, float, float]:
    """The run file and the ρ and δ_p the custodian accepted for the resume (``ResumeQuote``); refused otherwise."""
    meta = run_meta(run_dir)
    check_resumable(meta, spec, prepared.booking.fingerprint, prepared.booking.identity)
    quote = resume_quote(spec, run_dir, prepared.corpus, ledger)
    if not consent(quote):
        raise PrivetError("The resume was not started: nothing more was charged.",
                          "Resume again and accept the charge shown, or start a new run.")
    return meta, quote.resume_rho, quote.resume_delta_part


def _identify_run(
    spec: RunSpec, ledger: Ledger, prepared: Prepared, booking: Booking, run: Reserved
) -> tuple[float, float]:
    """Fix the run's id and start time (a resume keeps its own) and return the ρ and δ_p to reserve for it."""
    if run.resume and run.accepted_rho is not None:
        check_resumable(run.meta, spec, prepared.booking.fingerprint, booking.identity)
        run.run_id = run.meta["run_id"]
        run.started = run.meta.get("started_at", run.started)
        # the cap is checked again (it may have been lowered), for everything the resume may charge; every
        # charge of the resume is also held to what was accepted
        return run.accepted_rho, run.accepted_delta_part
    run.run_id = Path(run.run_dir).name if run.run_dir else new_run_id()  # one id: run folder, ledger, certificate
    # a cap set on this view before it was registered
    ledger.check_plan(prepared.booking.fingerprint, prepared.summary.rho_total, prepared.delta,
                      prepared.summary.delta_spent)
    run.accepted_rho = None
    return prepared.summary.rho_total, prepared.summary.delta_spent


def _open_run_folder(spec: RunSpec, booking: Booking, run: Reserved) -> Path:
    """The run folder: a new one gets its ``run.json`` (spec, method, dataset); a resume keeps its own."""
    if run.resume:
        return Path(run.run_dir)  # type: ignore[arg-type]
    run_dir = Path(run.run_dir) if run.run_dir else data_dir() / "runs" / run.run_id
    private_folder(run_dir)
    meta = {
        "run_id": run.run_id,
        "started_at": run.started,  # exact time: private run folder only
        "method": spec.method,
        "spec": spec.to_dict(),
        "spec_canonical": canonical_spec(spec),
        "dataset_fingerprint": booking.fingerprint,
        "dataset_id": booking.identity.key,
    }
    write_private(run_dir / RUN_FILE, json.dumps(meta))
    return run_dir


def _run_reserved(spec, reporter, ledger, models, prepared, booking, run, out_dir, fidelity=None) -> RunResult:
    """The run past its reservation: register the view, run the method, write the record, export."""
    identity, delta = booking.identity, prepared.delta
    run_id, accepted_rho = run.run_id, run.accepted_rho
    charged_before_resume = ledger.run_rho(identity.key, run_id)
    part_before_resume = ledger.run_delta_part(identity.key, run_id)
    record_booking(ledger, booking)  # past the cap check: this view is budgeted under the identity
    run_dir = _open_run_folder(spec, booking, run)

    def charge(stage: str, rho: float, description: str, delta_part: float = 0.0) -> None:
        """Written to the ledger *before* the stage draws any noise; refused past the cap.

        The cap check reserves what the run still plans to charge, so a run is stopped at its first
        stage rather than midway when another run has spent the budget meanwhile.
        """
        if accepted_rho is not None:  # a resume never charges more than the custodian accepted
            so_far = ledger.run_rho(identity.key, run_id) - charged_before_resume
            part_so_far = ledger.run_delta_part(identity.key, run_id) - part_before_resume
            if (so_far + rho > accepted_rho * (1 + 1e-9) + 1e-15
                    or part_so_far + delta_part > run.accepted_delta_part * (1 + 1e-9) + 1e-18):
                raise PrivetError(
                    f"Resuming would charge rho={so_far + rho:.4g}, more than the rho={accepted_rho:.4g} accepted "
                    f"before it started. Nothing more was charged (rho={so_far:.4g} was charged by this resume).",
                    "Please report this: the resume quote should have been an upper bound.")
        ledger.charge(identity.key, run_id, stage, rho, delta, description, delta_part=delta_part)  # within the reservation
        reporter.emit(ProgressEvent(stage, "charged", rho=rho, message=description))
        threads.match_free_cores()  # a stage starts: the threads fit the cores free now (a neighbour may have come)

    backend = compute_backend(spec.compute, spec.llm, spec.embedder, spec.test_mode_seed,
                              run_dir / COMPUTE_SPILL)  # this process's, or Ray's: never None
    ctx = MethodContext(
        llm=models.llm,
        embedder=models.embedder,
        task=spec.task,
        charge=charge,
        reporter=reporter,
        checkpoints=Checkpoints(run_dir / "checkpoints" / spec.method),  # never shared between methods
        test_seed=spec.test_mode_seed,
        max_prompt_tokens=spec.writing.max_prompt_tokens,
        batch_rows=wave_rows(spec, models.llm),
        compute=backend,
    )
    documents, diagnostics, notes = prepared.method.run(prepared.corpus, spec, delta, ctx)
    synthetic_path = write_synthetic(run_dir, documents)
    record = privacy_record(spec, ledger, models, prepared, booking, run, documents, notes)
    record.save(run_dir)
    ledger.bind_record(identity.key, run_id, record.claim_hash(), record.epsilon_tight, record.delta)
    result = RunResult(run_id, run_dir, synthetic_path, len(documents), record, None, diagnostics)
    if fidelity is not None:  # private run folder and screen only (SPEC §7); never fails the run
        result.fidelity = fidelity(run_dir, prepared.corpus, documents, models.embedder, reporter)
    result.export_dir = export_at_end(spec, reporter, ledger, run_dir, out_dir)
    reporter.emit(ProgressEvent("run", "done", message=str(result.export_dir or run_dir)))
    return result
