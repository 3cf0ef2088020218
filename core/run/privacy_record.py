"""The run's privacy record, built once its method has run: the plan's stages and every charge the ledger holds.

``privacy_record`` reconciles the stages the method planned with the charges the ledger holds for the run (a stage
drawn again after a resume is charged again and listed as such, ``RESUMED_NOTE``), converts the total to (ε, δ) and
names the models, the samplers and this installation's version. ``core.run.pipeline`` saves it to the run folder and
binds it in the ledger; the certificate (``core.certificate``) is built from it at export.
"""

from __future__ import annotations

import math
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from core import __version__
from core.certificate.privacy_record import PrivacyRecord, reconcile_stages
from core.install.provenance import bundle_identity, git_commit
from core.ledger import Ledger
from core.ledger.booking import Booking
from core.methods.base import SyntheticDoc
from core.privacy.conversion import approx_rho_to_eps, redrawn_delta
from core.specs.runspec import RunSpec

if TYPE_CHECKING:  # annotations only: the run's state is the pipeline's
    from core.run.loaded_models import LoadedModels
    from core.run.pipeline import Prepared, Reserved


def privacy_record(
    spec: RunSpec, ledger: Ledger, models: LoadedModels, prepared: Prepared, booking: Booking, run: Reserved,
    documents: list[SyntheticDoc], notes: list[str],
) -> PrivacyRecord:
    """The run's privacy record: the plan's stages and every charge the ledger holds for the run."""
    identity, delta, summary, method = booking.identity, prepared.delta, prepared.summary, prepared.method
    charges = [r for r in ledger.entries(identity.key) if r["kind"] == "charge" and r["run_id"] == run.run_id]
    planned = method.record_stages(spec, delta)
    stages = reconcile_stages(planned, charges)
    extra_rho = sum(s["rho"] for s in stages[len(planned):])
    # (ε, δ) stages (phrase discovery) spend part of δ; one drawn again after a resume spends it again, so the
    # record's δ grows by that much and the zCDP part is still converted at the planned δ − δ_p.
    record_delta = delta + redrawn_delta(stages)
    delta_spent = math.fsum(s.get("delta", 0.0) for s in stages)
    rho_total = summary.rho_total + extra_rho
    if extra_rho > 0:
        notes = list(notes) + [RESUMED_NOTE]
    return PrivacyRecord(
        run_id=run.run_id,
        method=spec.method,
        method_parameters=method.parameters(spec, summary),
        unit_kind=prepared.corpus.unit_kind,
        person_column=spec.data.person_column,
        dataset_fingerprint=booking.fingerprint,
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
        started_at=run.started,
        finished_at=now(),
        privet_version=__version__,
        privet_commit=git_commit(),
        privet_bundle=bundle_identity(),
        end_to_end_dp=summary.end_to_end_dp,
        scope_notes=notes,
        test_mode=spec.test_mode_seed is not None,
        budget_rationale=spec.privacy.rationale.strip(),
    )


RESUMED_NOTE = (
    "This run was interrupted and resumed. Outputs that DP stages had finished were reused, not drawn "
    "again; the parts that had not finished were drawn again and charged again (listed as 'redrawn after "
    "resume'). The total above includes both charges, so it is conservative. Private prediction charges "
    "a redraw min(L, groups redrawn) times one group's cost: a unit is in at most L groups."
)


def now() -> str:
    """The time as the privacy record and the run file write it: UTC, to the second."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")
