"""The machine-readable privacy record of one run (``privacy_record.json`` in the run folder).

The pipeline writes it when a run finishes; the certificate is built from it. It holds only
public facts about the run (method, parameters, budgets, models, times). It must never hold
document text or any statistic of the private data: under add/remove-one neighbouring even the
number of units is private, so there is deliberately no field for it, and unknown fields are
refused when a record is read back.

Sampler strings follow the convention ``"<what it samples>: <implementation> (exact)"`` or
``"... (floating-point)"``; the certificate reads the last bracket to say which kind was used.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import rfc8785

from core.specs import method_catalogue
from core.common.errors import PrivetError
from core.install.installation import installation_secret
from core.common.private_files import write_private
from core.privacy.conversion import REDRAWN_SUFFIX

METHODS = method_catalogue.names()
UNIT_KINDS = ("document", "person")
CONVERSIONS = ("tight",)
STAGE_KEYS = ("stage", "mechanism", "rho", "count", "parallel", "parameters", "description", "delta")
RECORD_FILE = "privacy_record.json"
MAC_FILE = "privacy_record.mac"
_MAC_LABEL = b"privet-privacy-record-v1\x00"


_CLAIM_TAG = "privet/guarantee-claim/v1"


def guarantee_claim(guarantee: dict[str, Any], run_id: str, method: str, dataset_id: str) -> dict[str, Any]:
    """The facts of a release's guarantee that the ledger binds (``claim_hash``): run, method, dataset, unit of
    privacy, every stage's ρ and δ, the total ρ, δ and ε, and whether the guarantee is end to end.

    ``guarantee`` has the certificate's ``guarantee`` keys (``unit_of_privacy``, ``rho_total``, ...), so the
    same claim is computed from a privacy record (``PrivacyRecord.claim``) and from an exported certificate.
    """
    stages = [{"stage": str(s.get("stage", "")), "mechanism": str(s.get("mechanism", "")),
               "rho": float(s.get("rho", 0.0)), "delta": float(s.get("delta", 0.0))}
              for s in guarantee.get("stages", [])]
    return {
        "tag": _CLAIM_TAG, "run_id": str(run_id), "method": str(method), "dataset_id": str(dataset_id),
        "unit_of_privacy": str(guarantee.get("unit_of_privacy", "")),
        "person_column": str(guarantee.get("person_column", "")),
        "end_to_end_dp": bool(guarantee.get("end_to_end_dp", True)),
        "stages": stages,
        "rho_total": float(guarantee.get("rho_total", 0.0)),
        "delta": float(guarantee.get("delta", 0.0)),
        "delta_spent": math.fsum(s["delta"] for s in stages),
        "epsilon_tight": float(guarantee.get("epsilon_tight", 0.0)),
    }


def claim_hash(claim: dict[str, Any]) -> str:
    """SHA-256 of the claim's canonical JSON (RFC 8785): what the ledger's record rows hold."""
    return hashlib.sha256(rfc8785.dumps(claim)).hexdigest()


def record_mac(text: str) -> str:
    """HMAC-SHA256 of a record's exact file text under the installation secret (``core.install.installation``)."""
    return hmac.new(installation_secret(), _MAC_LABEL + text.encode("utf-8"), hashlib.sha256).hexdigest()


@dataclass
class PrivacyRecord:
    """Everything the certificate states about one run; see the module docstring for what is excluded."""

    run_id: str
    method: str
    method_parameters: dict[str, Any] = field(default_factory=dict)
    unit_kind: str = "document"
    person_column: str = ""
    dataset_fingerprint: str = ""  # the exact view that was released
    dataset_id: str = ""  # the identity's budget key in the ledger (keyed hash of the dataset name)
    dataset_name: str = ""  # only when the custodian chose the name (a default file name is not recorded)
    epsilon_target: float = 0.0
    delta: float = 0.0
    conversion: str = "tight"
    rho_total: float = 0.0
    stages: list[dict[str, Any]] = field(default_factory=list)
    epsilon_tight: float = 0.0
    epsilon_loose: float = 0.0
    samplers: list[str] = field(default_factory=list)
    models: list[dict[str, Any]] = field(default_factory=list)
    device: str = ""
    started_at: str = ""  # exact times stay in the run folder; the certificate exports the date only
    finished_at: str = ""
    privet_version: str = ""
    privet_commit: str = ""
    privet_bundle: dict[str, str] = field(default_factory=dict)  # core.install.bundle.BundleInfo; {} from source
    end_to_end_dp: bool = True
    scope_notes: list[str] = field(default_factory=list)
    test_mode: bool = False
    budget_rationale: str = ""  # the custodian's reason for this ε (run spec ``privacy.rationale``)

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise ``PrivetError`` if the record is not something a certificate can be built from."""
        problems = []
        if self.method not in method_catalogue.names():  # read when asked: a method registered later is known
            problems.append(f"unknown method {self.method!r}")
        if self.unit_kind not in UNIT_KINDS:
            problems.append(f"unknown unit kind {self.unit_kind!r}")
        if self.unit_kind == "person" and not self.person_column:
            problems.append("the unit is the person but no person column is named")
        if self.conversion not in CONVERSIONS:
            problems.append(f"unknown conversion {self.conversion!r}")
        entry = method_catalogue.entry(self.method)
        if entry is not None and not entry.end_to_end_dp and self.end_to_end_dp:
            problems.append(f"an {entry.short_name} run cannot claim an end-to-end DP guarantee")
        for stage in self.stages:
            missing = [k for k in ("stage", "mechanism", "rho") if k not in stage]
            extra = [k for k in stage if k not in STAGE_KEYS]
            if missing or extra:
                problems.append(f"stage entry {stage.get('stage', '?')!r} has missing {missing} / unknown {extra} keys")
        if problems:
            raise PrivetError(
                "The privacy record of this run is not valid: " + "; ".join(problems) + ".",
                "Re-run the pipeline; if this keeps happening, report it as a bug.",
            )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def claim(self) -> dict[str, Any]:
        """The facts of this record's guarantee that the ledger binds (``guarantee_claim``)."""
        guarantee = {"unit_of_privacy": self.unit_kind, "person_column": self.person_column,
                     "end_to_end_dp": self.end_to_end_dp, "stages": self.stages, "rho_total": self.rho_total,
                     "delta": self.delta, "epsilon_tight": self.epsilon_tight}
        return guarantee_claim(guarantee, self.run_id, self.method, self.dataset_id or self.dataset_fingerprint)

    def claim_hash(self) -> str:
        """The hash the ledger keeps for this record (``Ledger.bind_record``): an edit of the unit of privacy,
        of any ρ, δ or ε, re-sealed with the installation key, no longer matches it."""
        return claim_hash(self.claim())

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=True, ensure_ascii=False)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "PrivacyRecord":
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise PrivetError(
                f"The privacy record has fields Privet does not know: {', '.join(unknown)}.",
                "Only the documented fields may appear in a privacy record (it must hold no private statistics).",
            )
        if "run_id" not in data or "method" not in data:
            raise PrivetError("The privacy record has no run id or method.", "Re-run the pipeline.")
        return cls(**data)

    @classmethod
    def from_json(cls, text: str) -> "PrivacyRecord":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise PrivetError(f"The privacy record is not valid JSON ({exc.msg}).", "Re-run the pipeline.") from None
        if not isinstance(data, dict):
            raise PrivetError("The privacy record is not a JSON object.", "Re-run the pipeline.")
        return cls.from_dict(data)

    def save(self, run_dir: Path) -> Path:
        """Write the record and its MAC (``privacy_record.mac``, HMAC-SHA256 under the installation secret)."""
        path = Path(run_dir) / RECORD_FILE
        text = self.to_json() + "\n"
        write_private(path, text)
        write_private(Path(run_dir) / MAC_FILE, record_mac(text) + "\n")
        return path

    @classmethod
    def load_authenticated(cls, run_dir: Path) -> "PrivacyRecord":
        """The record, refused (``PrivetError``) unless its MAC made at run time authenticates it."""
        path = Path(run_dir) / RECORD_FILE
        mac_path = Path(run_dir) / MAC_FILE
        record = cls.load(run_dir)
        try:
            mac = mac_path.read_text(encoding="ascii").strip()
        except (OSError, UnicodeDecodeError):
            mac = ""
        if not mac or not hmac.compare_digest(mac, record_mac(path.read_text(encoding="utf-8"))):
            raise PrivetError(
                f"The privacy record of run {record.run_id} does not authenticate: {RECORD_FILE} was changed after "
                f"the run wrote it, or its {MAC_FILE} is missing. A certificate is made only from the record the run "
                "wrote.",
                "Export a run folder as the run left it; if the record was edited, run again (what the run was "
                "charged stays charged).",
            )
        return record

    @classmethod
    def load(cls, run_dir: Path) -> "PrivacyRecord":
        path = Path(run_dir) / RECORD_FILE
        if not path.is_file():
            raise PrivetError(
                f"No {RECORD_FILE} in {run_dir}.",
                "Point at the folder of a finished run (it holds synthetic.jsonl and privacy_record.json).",
            )
        return cls.from_json(path.read_text(encoding="utf-8"))


def sampler_kind(sampler: str) -> str:
    """``"exact"``, ``"floating-point"`` or ``"unspecified"`` from a sampler description."""
    text = sampler.lower()
    if "floating" in text:
        return "floating-point"
    if "exact" in text:
        return "exact"
    return "unspecified"


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
