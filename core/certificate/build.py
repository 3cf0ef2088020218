"""Build the content of a privacy certificate (NIST SP 800-226 style) from a run's privacy record.

The certificate states: who and what (identity), the guarantee in plain words and in figures, the
budget history of the dataset from the ledger, what is not covered (always present), which samplers
were used, and every exported file with its SHA-256. It is built only from the privacy record, the
ledger and the exported (synthetic) files; nothing computed on the private data enters it.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import os
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.certificate.privacy_record import PrivacyRecord, sampler_kind
from core.certificate.signing import SigningKey, load_signing_key, public_key_fingerprint
from core.specs import method_catalogue
from core.common.errors import PrivetError
from core.ledger.schema import RELEASE_STAGE
from core.ledger.store import CAP_REASON
from core.ledger.recovery import history_notes
from core.ledger.total import COMBINING_PLAIN, COMBINING_WORDS
from core.common.wording import PERMITTED_USES, guarantee_words, permitted_use_words

if TYPE_CHECKING:
    from core.ledger import Ledger

FORMAT = "privet-certificate/1"
IDENTITY_FIELDS = ("custodian", "organisation", "irb_protocol", "permitted_use")
DEFAULT_PERMITTED_USE = "internal"  # core.specs.common.OutputSpec.permitted_use
METHOD_NAMES = {m.key: m.certificate_name for m in method_catalogue.METHODS}
NEIGHBOURING = {m.key: m.neighbouring for m in method_catalogue.METHODS}
BATCH_EFFECTS = (
    "Batch effects in floating-point arithmetic are not covered: the language model processes several units "
    "together (keyword extraction in fixed chunks of documents, private prediction in waves of rows that shrink "
    "as texts finish), and padding and batch shape change each row's floating-point results very slightly "
    "(an audit measured about 4e-5 in a logit on a CPU in 32-bit arithmetic; 16-bit arithmetic on a GPU may "
    "differ more). So one unit's presence can move another unit's keywords or logits by a tiny amount, whereas the "
    "analysis assumes that each unit's contribution depends on that unit alone."
)
NON_DP_LABEL = (
    "NOT differentially private: computed directly on the private data and included only because the "
    "custodian explicitly asked for it. These figures are not covered by the guarantee above."
)
ACCOUNTING = (
    "Privacy loss is tracked in rho-zero-concentrated differential privacy (rho-zCDP, Bun & Steinke 2016). "
    "A Gaussian mechanism with L2 sensitivity D and noise sigma costs rho = D^2/(2 sigma^2); an exponential "
    "mechanism with parameter epsilon is epsilon-bounded-range and costs rho = epsilon^2/8 (Cesar & Rogers 2021); "
    "sequential steps add their rho; a step run on overlapping groups in which every unit appears in at most "
    "L groups costs L times the per-group rho (parallel composition). The total rho is converted to "
    "(epsilon, delta) with the tight conversion of Canonne, Kamath & Steinke (2020, via Renyi DP); the looser "
    "formula epsilon = rho + 2 sqrt(rho ln(1/delta)) is shown for comparison."
)


def file_entry(path: Path) -> dict[str, Any]:
    """Name, SHA-256 and size of one exported file."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return {"file": path.name, "sha256": digest.hexdigest(), "size_bytes": path.stat().st_size}


def _unit_words(record: PrivacyRecord) -> str:
    if record.unit_kind == "person":
        return f"person (all documents sharing the same value of the column '{record.person_column}')"
    return "document"


def plain_summary(record: PrivacyRecord) -> list[str]:
    """The guarantee in plain words (shown first in the readable certificate)."""
    unit = "person" if record.unit_kind == "person" else "document"
    eps, delta = record.epsilon_tight, record.delta
    if not record.end_to_end_dp:
        return [
            f"This synthetic corpus was made with {record.method.upper()}. It does NOT carry an end-to-end "
            "differential privacy guarantee.",
            "Only one step is differentially private: the choice of which candidate abstraction of each private "
            f"text is used (epsilon = {eps:.3g} at delta = {delta:.3g} for that step). The candidates themselves, "
            "the generation and the filters all read the private texts directly, so private details can reach "
            "the output in ways these figures do not bound.",
            "Judge the risk of this release by the empirical privacy audit (membership-inference test, "
            "replay of personal identifiers), not by epsilon.",
        ]
    words = guarantee_words(eps, delta, unit)
    return [
        f"This synthetic corpus was made with differential privacy (epsilon = {eps:.3g}, delta = {delta:.2g}), with "
        f"each {unit} as the unit of privacy. {words.headline} by common guidance.",
        f"{words.meaning} (Except with a probability of at most delta = {delta:.2g}.) Smaller epsilon means "
        "stronger protection.",
        "The guarantee covers everything derived from this release, including any number of questions answered "
        "from the synthetic corpus. It does not cover the limits listed under 'What is not covered'.",
    ]


def rare_topics_words(min_topic_units: Any, unit_kind: str = "document") -> str:
    """Why rare topics are missing, with the one figure the wizard also shows (``min_topic_units``)."""
    units = "people" if unit_kind == "person" else "documents"
    if isinstance(min_topic_units, (int, float)) and min_topic_units > 0:
        return (f"Rare topics are not reproduced, by design: at this budget a topic must be mentioned by about "
                f"{min_topic_units:.0f} or more {units} to be found; rarer topics are drowned out by the noise, "
                f"because reproducing them would reveal those {units}.")
    return (f"Rare topics are not reproduced, by design: topics mentioned by only a few {units} are drowned out "
            f"by the noise, because reproducing them would reveal those {units}.")


def not_covered(record: PrivacyRecord) -> list[str]:
    """The few limits an IRB reviewer must know, in plain words, for the certificate's first page (the full
    technical list is ``scope_and_hazards``)."""
    units = "people" if record.unit_kind == "person" else "documents"
    notes = []
    if not record.end_to_end_dp:
        notes.append("Most of the process: only the choice of summary is private; the rewriting reads the private "
                     "texts directly. Treat the output as de-identified text, not as differentially private.")
    notes.append("What the public language model already knew: it was trained by others on public text, and "
                 "anything it memorised can appear in the output.")
    notes.append("Work done on the data before Privet loaded it, and Privet's own masking of names, which is a "
                 "best effort.")
    if record.unit_kind == "document":
        notes.append("People with several documents: the unit is the document, so a person who wrote k documents is "
                     "protected up to k times less.")
    notes.append("Other releases: every run on the same data spends budget; only the runs recorded on this "
                 "computer are counted in the budget history.")
    if record.end_to_end_dp:
        notes.append(f"Rare topics are left out on purpose (see the appendix); the release says nothing about "
                     f"topics few {units} share.")
    if record.test_mode:
        notes.append("TEST MODE: this run used a fixed seed and is NOT private. It must not be released.")
    return notes


def scope_and_hazards(record: PrivacyRecord) -> list[str]:
    """What the guarantee does not cover. Always present, whatever the method."""
    notes = [
        "Pre-processing is outside the guarantee: the guarantee is about the units as Privet loaded them. "
        "Anything done to the data beforehand, and Privet's own clean-up such as masking of personal "
        "identifiers, is heuristic and not covered by differential privacy.",
        "Memorisation in the public models: the language model and embedder were trained by others on public "
        "data. Anything they memorised (which may include real people's information) can appear in the output; "
        "differential privacy protects only the private corpus, not what the public models already contain.",
    ]
    if record.end_to_end_dp:
        notes.append(rare_topics_words(record.method_parameters.get("min_topic_units"), record.unit_kind))
    else:
        notes.append(
            "No end-to-end guarantee: only the candidate selection is differentially private. Abstraction, "
            "generation and the similarity, likelihood and identifier filters all look at the private texts, "
            "and rare details of a private text can survive into its rewrite."
        )
    if record.unit_kind == "document":
        notes.append(
            "The unit is the document: a person who wrote several documents is protected less (for k documents, "
            "up to k times the privacy loss). Choose a person column to protect people rather than documents."
        )
    notes.append(
        "Repeated releases add up: every run on the same dataset spends budget; the budget history below lists "
        "what this installation's ledger recorded for every view of the data budgeted under the same dataset "
        "name. Releases made elsewhere are not included, nor runs on a copy of the data saved under another "
        "file name and loaded without the same dataset name (an exact copy is recognised, a modified one is not)."
    )
    if record.end_to_end_dp:
        notes.append(BATCH_EFFECTS)
    floating = [s for s in record.samplers if sampler_kind(s) != "exact"]
    if floating:
        notes.append(
            "Some random draws use floating-point samplers (listed under 'Samplers'). Floating-point noise can in "
            "principle leak information through its bit pattern (Mironov 2012); exact samplers avoid this."
        )
    if record.test_mode:
        notes.append("TEST MODE: this run used a fixed seed and is NOT private. It must not be released.")
    notes.extend(record.scope_notes)
    return notes


def parameters_not_used(method: str, params: dict[str, Any]) -> list[str]:
    """The method parameters whose stage did not run, as the method's facts say (DP-SynRAG: no token stage,
    no public writer, no phrase discovery, ...; ``core.methods.dp_synrag.facts``); none for an unknown method."""
    if method_catalogue.entry(method) is None:
        return []
    return method_catalogue.facts(method).parameters_not_used(params)


def permitted_use_section(record: PrivacyRecord, identity: dict[str, str]) -> dict[str, str]:
    """What the custodian permits the release to be used for, with the advice for its ε band."""
    use = str(identity.get("permitted_use") or DEFAULT_PERMITTED_USE)
    if use not in PERMITTED_USES:
        raise PrivetError(f"The permitted use {use!r} is not one Privet knows.",
                          f"Choose one of: {', '.join(PERMITTED_USES)}.")
    name, meaning, advice = permitted_use_words(use, record.epsilon_tight)
    if not record.end_to_end_dp:
        advice = ("This method has no end-to-end differential privacy guarantee: treat the release as de-identified "
                  "text and review it before any use beyond the custodian's organisation.")
    return {"value": use, "name": name, "meaning": meaning, "advice": advice}


def cap_changes(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every change of the dataset's cap in the ledger: date, new cap and the custodian's reason ('' if none)."""
    changes = []
    for row in rows:
        if row["kind"] != "cap":
            continue
        description = str(row.get("description") or "")
        reason = description.split(CAP_REASON, 1)[1] if CAP_REASON in description else ""
        changes.append({"date": str(row.get("created_at", ""))[:10], "epsilon": float(row["epsilon"]),
                        "delta": float(row["delta"]), "reason": reason})
    return changes


def _budget_history(record: PrivacyRecord, ledger: "Ledger | None") -> dict[str, Any]:
    if ledger is None:
        return {
            "ledger_consulted": False,
            "note": "The budget ledger was not consulted: earlier spending on this dataset is not shown.",
        }
    key = record.dataset_id or record.dataset_fingerprint
    per_run: dict[str, float] = {}
    releases = 0
    rows = ledger.entries(key)
    for row in rows:
        if row["kind"] == "charge" and row["run_id"] != record.run_id:
            per_run[row["run_id"]] = per_run.get(row["run_id"], 0.0) + row["rho"]
        elif row["kind"] == "release" and row["stage"] == RELEASE_STAGE and row["run_id"] != record.run_id:
            releases += 1
    other_rho = sum(per_run.values())
    total = ledger.total(key)  # what the ledger holds, this run's actual charges included (core.ledger.total)
    cumulative = total.rho
    charged = ledger.run_rho(key, record.run_id)
    cap = ledger.cap(key)
    return {
        "ledger_consulted": True,
        "other_runs": [{"run_id": run, "rho": rho} for run, rho in per_run.items()],
        "other_releases": releases,
        "other_runs_rho": other_rho,
        "this_run_rho_charged_in_ledger": charged,
        "ledger_matches_record": math.isclose(charged, record.rho_total, rel_tol=1e-9, abs_tol=1e-12),
        "cumulative_rho": cumulative,
        "cumulative_epsilon_tight": total.epsilon if total.finite else None,
        "cumulative_delta": total.delta,
        "cumulative_delta_p": total.delta_part,
        "cap": {"epsilon": cap[0], "delta": cap[1]} if cap else None,
        "cap_changes": cap_changes(rows),  # each set or raise of the cap, with the custodian's reason
        "combining": COMBINING_PLAIN,
        "ledger_head": ledger.head(),
        "history_notes": history_notes(ledger),  # a rewitnessed ledger or a new history after a lost data folder
        "note": "Budget spent on this dataset (every view of it budgeted under the same dataset identity) by other "
        "runs in this installation's ledger, including runs that were cancelled or failed after being charged. "
        "Cumulative figures are read from the ledger, this run's charges included. Cumulative epsilon is stated "
        "at the cumulative delta: the cap's delta, else the sum of the runs' deltas; the delta that phrase "
        "discovery spends outright adds up run by run and is part of it. " + COMBINING_WORDS,
    }


def build_certificate(
    record: PrivacyRecord,
    outputs: list[Path],
    identity: dict[str, str],
    ledger: "Ledger | None" = None,
    signing_key: SigningKey | None = None,
    non_dp_statistics: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The certificate content (unsigned) for a run and the files it exports.

    ``non_dp_statistics`` are figures computed directly on the private data; they appear only when the
    custodian explicitly opts in, and are then labelled as not differentially private.
    """
    if not record.dataset_fingerprint:
        raise PrivetError("The run's privacy record has no dataset fingerprint.", "Re-run the pipeline.")
    unknown = sorted(set(identity) - set(IDENTITY_FIELDS))
    if unknown:
        raise PrivetError(f"Unknown identity fields: {', '.join(unknown)}.", f"Use only {', '.join(IDENTITY_FIELDS)}.")
    key = signing_key or load_signing_key()
    documents = _documents_released(outputs)
    return {
        "format": FORMAT,
        "certificate_id": str(uuid.uuid4()),
        "created_on": datetime.now(timezone.utc).date().isoformat(),  # the date only: run time grows with the data
        "identity": _identity_section(record, identity),
        "permitted_use": permitted_use_section(record, identity),
        "summary": plain_summary(record) + ([f"This release contains {documents} synthetic "
                                             f"document{'' if documents == 1 else 's'}."]
                                            if documents is not None else []),
        "guarantee": _guarantee_section(record),
        "budget_history": _budget_history(record, ledger),
        "budget_rationale": record.budget_rationale,
        "not_covered": not_covered(record),
        "scope_and_hazards": scope_and_hazards(record),
        "samplers": [{"sampler": s, "kind": sampler_kind(s)} for s in record.samplers],
        **_dataset_sections(record),
        "outputs": [file_entry(Path(p)) for p in outputs],
        "documents_released": documents,
        "renderings": [],
        "signing_key": {
            "algorithm": "Ed25519",
            "public_key_fingerprint": public_key_fingerprint(key.public_key),
            "storage": key.storage,
        },
        "test_mode": record.test_mode,
        **_non_dp_section(non_dp_statistics),
    }


def _entry(record: PrivacyRecord) -> method_catalogue.MethodEntry:
    """The record's method as registered (read when asked: a method registered later is found too)."""
    entry = method_catalogue.entry(record.method)
    if entry is None:  # PrivacyRecord.validate refuses an unknown method
        raise PrivetError(f"Unknown method {record.method!r} in the privacy record.", "Re-run the pipeline.")
    return entry


def _identity_section(record: PrivacyRecord, identity: dict[str, str]) -> dict[str, Any]:
    """Who made the release, with what (the custodian's identity fields, the run, method and models)."""
    return {
        **{name: str(identity.get(name, "")) for name in IDENTITY_FIELDS},
        "permitted_use": str(identity.get("permitted_use") or DEFAULT_PERMITTED_USE),
        "run_id": record.run_id,
        "method": record.method,
        "method_name": _entry(record).certificate_name,
        "method_parameters": record.method_parameters,
        "parameters_not_used": parameters_not_used(record.method, record.method_parameters),
        "models": record.models,
        "device": record.device,
        "run_date": record.started_at[:10],  # exact times stay in the private run folder
        "privet_version": record.privet_version,
        "privet_commit": record.privet_commit,
        "privet_bundle": record.privet_bundle,
    }


def _guarantee_section(record: PrivacyRecord) -> dict[str, Any]:
    """The guarantee: unit of privacy, neighbouring relation, the stages' ρ and the (ε, δ) conversion."""
    stage_sum = sum(float(s.get("rho", 0.0)) for s in record.stages)
    return {
        "end_to_end_dp": record.end_to_end_dp,
        "unit_of_privacy": record.unit_kind,
        "unit_description": _unit_words(record),
        "person_column": record.person_column,
        "neighbouring_relation": _entry(record).neighbouring,
        "definition": "rho-zCDP, converted to (epsilon, delta)-differential privacy",
        "rho_total": record.rho_total,
        "rho_sum_of_stages": stage_sum,
        "stages": record.stages,
        "delta": record.delta,
        "epsilon_target": record.epsilon_target,
        "epsilon_tight": record.epsilon_tight,
        "epsilon_loose": record.epsilon_loose,
        "conversion": "tight (Canonne, Kamath & Steinke 2020); loose shown for comparison",
        "accounting_method": ACCOUNTING,
    }


DATA_COMMITMENT_TAG = b"privet/certificate-data-commitment/v1\n"


def data_commitment(fingerprint: str, salt: bytes, key: bytes | None = None) -> str:
    """HMAC-SHA256, under the installation secret, of a view's keyed fingerprint and a per-certificate salt."""
    from core.install.installation import installation_secret

    secret = installation_secret() if key is None else key
    return hmac.new(secret, DATA_COMMITMENT_TAG + salt + fingerprint.encode("ascii"), hashlib.sha256).hexdigest()


def commitment_matches(section: dict[str, Any], fingerprints: list[str], key: bytes | None = None) -> bool:
    """Whether a certificate's ``dataset_fingerprint`` section was made from one of ``fingerprints`` (the views
    the ledger holds for its dataset): only the installation holding the secret can tell."""
    salt = bytes.fromhex(str(section.get("salt", "")))
    value = str(section.get("value", ""))
    return any(hmac.compare_digest(data_commitment(fp, salt, key), value) for fp in fingerprints)


def _dataset_sections(record: PrivacyRecord) -> dict[str, Any]:
    """A salted commitment to the data and the identity its budget is kept under (no plain hash of the data,
    and no value that stays the same while the data do: docs/method.md, "What a certificate says about the data")."""
    salt = os.urandom(16)  # drawn per certificate: two certificates of unchanged data carry different values
    return {
        "dataset_fingerprint": {
            "value": data_commitment(record.dataset_fingerprint, salt),
            "salt": salt.hex(),
            "kind": "HMAC-SHA256, under this installation's secret key, of the loaded data's keyed fingerprint "
            "and a random salt drawn for this certificate. The installation that ran it can check that the "
            "release came from data its ledger holds; no one can recompute it without the key, and two "
            "certificates carry different values whether or not the data changed between them.",
        },
        "dataset_identity": {
            "value": record.dataset_id or record.dataset_fingerprint,
            "name": record.dataset_name or None,
            "kind": "The key this dataset's budget is kept under: HMAC-SHA256 of the dataset name under this "
            "installation's secret key. Every view of the data (other columns, truncation, rows left out) is "
            "budgeted under it. The name is shown only when the custodian chose it.",
        },
    }


def _documents_released(outputs: list[Path]) -> int | None:
    """Number of synthetic documents in the exported synthetic.jsonl (one per non-empty line)."""
    for path in outputs:
        if Path(path).name == "synthetic.jsonl":
            with open(path, encoding="utf-8") as handle:
                return sum(1 for line in handle if line.strip())
    return None


def _non_dp_section(statistics: dict[str, Any] | None) -> dict[str, Any]:
    if not statistics:
        return {}
    return {
        "non_dp_statistics": {
            "label": NON_DP_LABEL,
            "values": {str(k): v for k, v in statistics.items()},
        }
    }
