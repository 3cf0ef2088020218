"""Export a finished run: only the synthetic corpus and the signed certificate, written atomically.

The run folder also holds checkpoints, caches and logs, some of which are derived from private data.
Export copies files by an explicit allow-list (``synthetic.jsonl``, ``synthetic.csv``: those the run
spec's ``[output] formats`` names), never by walking the run folder. Everything is written into a hidden
temporary folder beside the destination, verified, then moved into place with one rename; a failure
leaves no partial folder behind.

The destination is checked before anything is charged (``check_output_folder``, which a run calls before
its first stage and every export calls again):

- it may not be, contain or sit inside the data folder (ledger, witness, keys, run folders) or the state
  folder of the ledger's high-water mark, symlinks resolved (``refuse_protected_output``): replacing an
  output folder deletes what was in it;
- a non-empty folder is replaced only with ``overwrite`` and only when it is a release Privet wrote: every
  export writes the marker file ``.privet-release`` into its folder, and a folder without it, or holding
  anything an export does not write, is refused even with ``overwrite`` (Privet never deletes files it
  did not write).
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import shutil
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from core.specs import method_catalogue
from core.certificate.build import build_certificate, file_entry
from core.certificate.privacy_record import PrivacyRecord
from core.certificate.render import render_html, render_pdf
from core.certificate.seal import (
    CERTIFICATE_FILE,
    PUBLIC_KEY_FILE,
    RELEASE_MARKER,
    sign_certificate,
    verify_export,
    write_document,
)
from core.certificate.signing import load_signing_key, public_key_pem
from core.common.errors import PrivetError
from core.ledger import Ledger, highwater
from core.common.paths import data_location
from core.common.private_files import write_private
from core.privacy.conversion import approx_rho_to_eps, redrawn_delta

if TYPE_CHECKING:  # annotations only: the export never loads the model code
    from core.methods.base import SyntheticDoc

SYNTHETIC_JSONL = "synthetic.jsonl"
SYNTHETIC_CSV = "synthetic.csv"
CORPUS_FILES = (SYNTHETIC_JSONL, SYNTHETIC_CSV)  # the only files taken from a run folder
RUN_FILE = "run.json"  # the run's spec: [output] formats says which of CORPUS_FILES are exported
REQUIRED_FILE = "synthetic.jsonl"
HTML_FILE = "certificate.html"
PDF_FILE = "certificate.pdf"
FEW_SHARE = 0.1  # a release with fewer than this share of the documents asked for (R) is asked about
# Every name an export writes into its folder: a marked folder holding only these may be replaced.
RELEASE_FILES = frozenset({*CORPUS_FILES, HTML_FILE, PDF_FILE, CERTIFICATE_FILE, PUBLIC_KEY_FILE, RELEASE_MARKER})
MARKER_KEY = "privet_release"


def write_synthetic(run_dir: Path, documents: list[SyntheticDoc]) -> Path:
    """synthetic.jsonl and synthetic.csv (id, text; and label, when the run kept a label column) in the run
    folder, each written atomically and private (0600). A label is the class a document was synthesised for:
    a typed (public) label or one released with DP (docs/method.md §6.3)."""
    labelled = any(d.label for d in documents)
    jsonl = "".join(json.dumps({"id": d.id, "text": d.text, **({"label": d.label} if labelled else {})},
                               ensure_ascii=False) + "\n" for d in documents)
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["id", "text", "label"] if labelled else ["id", "text"])
    for d in documents:
        writer.writerow([d.id, d.text, d.label] if labelled else [d.id, d.text])
    write_private(run_dir / SYNTHETIC_JSONL, jsonl)  # the run folder is private workspace
    write_private(run_dir / SYNTHETIC_CSV, buffer.getvalue())
    return run_dir / SYNTHETIC_JSONL


def read_synthetic(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


@dataclass(frozen=True)
class ReleaseSize:
    """How many synthetic documents a finished run holds, and why a small number is a problem ('' if not)."""

    n_documents: int
    problem: str

    @property
    def empty(self) -> bool:
        return self.n_documents == 0


def _why_few(record: PrivacyRecord) -> str:
    """Why a run wrote few documents, from public facts of its record only."""
    params = record.method_parameters
    reasons = []
    method_reason = method_catalogue.facts(record.method).few_documents_reason(record)  # the method's own words
    if method_reason:
        reasons.append(method_reason)
    if params.get("self_filter"):
        reasons.append("the self-filter dropped documents it judged off-task")
    if not reasons:
        reasons.append("the method kept only the documents its noisy votes supported")
    return "; or ".join(reasons)


def release_size(run_dir: Path) -> ReleaseSize:
    """The number of synthetic documents of a finished run and, when there are none or very few, what that
    means and what to do (for the export question in the desktop and ``privet export``'s refusal)."""
    run_dir = Path(run_dir)
    path = run_dir / REQUIRED_FILE
    with open(path, encoding="utf-8") as handle:
        n = sum(1 for line in handle if line.strip())
    record = PrivacyRecord.load(run_dir)
    asked_key = method_catalogue.facts(record.method).documents_asked  # None: no number is asked for (RPSG)
    asked = record.method_parameters.get(asked_key) if asked_key else None
    if n > 0 and not (isinstance(asked, (int, float)) and n < FEW_SHARE * asked):
        return ReleaseSize(n, "")
    head = ("This run produced no synthetic documents: the release would be empty, yet it is signed and counted "
            "as a release of this dataset" if n == 0 else
            f"This run produced only {n} synthetic document{'s' if n != 1 else ''} of the up to {asked:g} asked "
            "for, too few to be useful for most purposes")
    return ReleaseSize(n, f"{head}. Why: {_why_few(record)}. The budget it spent stays spent either way. "
                          "What to do: run again with a larger ε, more data or fewer, larger topics; or "
                          "export anyway if a small release is what you need.")


def check_writable(out_dir: Path) -> None:
    """Refuse an output folder whose release could not be written: a path under a file, a read-only or
    special folder (``/proc``). The export writes a staging folder beside ``out_dir`` and renames it, so
    the nearest existing folder above is probed by making (and removing) an empty folder in it."""
    out_dir = Path(out_dir).absolute()
    parent = out_dir.parent
    while not parent.exists():
        parent = parent.parent
    fix = "Choose an output folder on a disk you can write to (for example in your home folder)."
    if not parent.is_dir():
        raise PrivetError(f"The output folder {out_dir} is under {parent}, which is a file, not a folder.", fix)
    try:
        probe = Path(tempfile.mkdtemp(prefix=".privet-write-check-", dir=parent))
        probe.rmdir()
    except OSError as exc:
        raise PrivetError(
            f"The output folder {out_dir} cannot be written: making a folder in {parent} failed "
            f"({exc.strerror or type(exc).__name__}). Nothing was charged.", fix) from None


def _write_release(run_dir: Path, staging: Path, record: PrivacyRecord, identity: dict[str, str],
                   ledger: "Ledger | None", non_dp_statistics: dict | None) -> None:
    """Fill ``staging`` with the corpus files, renderings, signed certificate and public key."""
    outputs = []
    for name in corpus_files(run_dir):
        source = run_dir / name
        if source.is_file() and not source.is_symlink():
            shutil.copyfile(source, staging / name)
            outputs.append(staging / name)
    key = load_signing_key()
    certificate = build_certificate(record, outputs, identity, ledger, signing_key=key,
                                    non_dp_statistics=non_dp_statistics)
    html_path = staging / HTML_FILE
    html_path.write_text(render_html(certificate), encoding="utf-8")
    renderings = [html_path]
    pages = render_pdf(html_path.read_text(encoding="utf-8"), staging / PDF_FILE,
                       title=f"Privacy certificate {certificate['certificate_id']}", run_date=record.started_at[:10])
    if pages is None:
        certificate["rendering_note"] = "No PDF: fpdf2 is not installed; certificate.html holds the same facts."
    else:
        renderings.append(staging / PDF_FILE)
    certificate["renderings"] = [file_entry(p) for p in renderings]
    write_document(sign_certificate(certificate, key), staging / CERTIFICATE_FILE)
    (staging / PUBLIC_KEY_FILE).write_text(public_key_pem(key.public_key), encoding="ascii")
    write_marker(staging, str(certificate["certificate_id"]))


def write_marker(folder: Path, certificate_id: str) -> None:
    """The marker that says Privet wrote ``folder`` as a release (``--overwrite`` replaces only such a folder)."""
    marker = {MARKER_KEY: 1, "certificate_id": certificate_id,
              "note": "Written by Privet's export. `privet run/export --overwrite` may replace this folder as a whole."}
    (folder / RELEASE_MARKER).write_text(json.dumps(marker, indent=1) + "\n", encoding="utf-8")


def refuse_disagreeing_record(record: PrivacyRecord, ledger: Ledger) -> None:
    """Refuse (``PrivetError``) a record whose budget figures differ from what the ledger charged the run:
    a certificate is made only from figures the ledger confirms."""
    dataset = record.dataset_id or record.dataset_fingerprint
    delta_spent = math.fsum(float(s.get("delta", 0.0)) for s in record.stages)  # (ε, δ) stages: phrase discovery
    problems = ledger.claim_problems(dataset, record.run_id, record.rho_total, record.delta - redrawn_delta(record.stages),
                                     delta_spent)
    bound = ledger.bound_record_hash(dataset, record.run_id)
    if bound is not None and bound != record.claim_hash():
        problems.append("its unit of privacy, a stage's rho or delta, or its epsilon or delta differ from the record "
                        "the run wrote, whose hash the ledger keeps")
    stage_sum = sum(float(s.get("rho", 0.0)) for s in record.stages)
    if not math.isclose(stage_sum, record.rho_total, rel_tol=1e-9, abs_tol=1e-12):
        problems.append(f"its stages add up to rho={stage_sum:.6g}, not the total rho={record.rho_total:.6g}")
    tight = approx_rho_to_eps(record.rho_total, record.delta, delta_spent, "tight")
    if record.rho_total > 0 and not math.isclose(record.epsilon_tight, tight, rel_tol=1e-3):
        problems.append(f"its epsilon={record.epsilon_tight:g} is not the tight conversion of its rho at its delta")
    if problems:
        raise PrivetError(
            f"The privacy record of run {record.run_id} disagrees with the budget ledger, so no certificate is made:\n"
            + "\n".join(f"  - {p}" for p in problems),
            "Export the run folder as the run left it, on the installation that ran it; if the record was edited, "
            "run again (what the run was charged stays charged).",
        )


def corpus_files(run_dir: Path) -> list[str]:
    """The corpus files to export: those of the run spec's ``[output] formats`` (both when it names none)."""
    try:
        formats = json.loads((run_dir / RUN_FILE).read_text(encoding="utf-8"))["spec"]["output"]["formats"]
    except (OSError, ValueError, KeyError, TypeError):  # a run folder without a readable spec: both formats
        formats = []
    chosen = [name for name in CORPUS_FILES if name.rsplit(".", 1)[1] in formats]
    return chosen or list(CORPUS_FILES)


def spec_permitted_use(run_dir: Path) -> str:
    """The run spec's ``[output] permitted_use`` (from run.json; "internal" when the spec predates it)."""
    try:
        use = json.loads((run_dir / RUN_FILE).read_text(encoding="utf-8"))["spec"]["output"]["permitted_use"]
    except (OSError, ValueError, KeyError, TypeError):
        return "internal"
    return str(use) if use else "internal"


def export_release(run_dir: Path, out_dir: Path, identity: dict[str, str], overwrite: bool = False,
                   ledger: "Ledger | None" = None, non_dp_statistics: dict | None = None,
                   allow_empty: bool = False) -> Path:
    """Write the release folder ``out_dir`` for a finished run and record it in the ledger.

    ``identity`` holds ``custodian``, ``organisation``, ``irb_protocol`` (any may be empty) and
    ``permitted_use`` (when absent or empty: the run spec's ``[output] permitted_use``, else "internal").
    ``ledger`` defaults to the installation's ledger. ``non_dp_statistics`` (custodian opt-in only)
    are figures computed on the private data; the certificate labels them as not DP. A run without any
    synthetic document is refused unless ``allow_empty`` (the caller asked the custodian). Returns ``out_dir``.
    """
    run_dir, out_dir = Path(run_dir), resolved(out_dir)  # a symlink is replaced where it points, never followed later
    identity = {**identity, "permitted_use": identity.get("permitted_use") or spec_permitted_use(run_dir)}
    record = PrivacyRecord.load_authenticated(run_dir)  # the record the run wrote, not an edited one
    if record.test_mode:
        raise PrivetError(
            "This run was made in test mode (fixed seed): it is not private and cannot be exported.",
            "Run it again without test mode.",
        )
    if not (run_dir / REQUIRED_FILE).is_file():
        raise PrivetError(f"The run folder {run_dir} has no {REQUIRED_FILE}.", "Export a run that finished.")
    size = release_size(run_dir)
    if size.empty and not allow_empty:
        raise PrivetError(size.problem, "To export the empty release anyway, add --allow-empty (privet export) or "
                          "answer Yes when the desktop asks.")
    check_output_folder(out_dir, overwrite)  # again: the folder may have changed since the run started
    if ledger is None:
        ledger = Ledger()
    ledger.require_intact()  # a wiped or edited ledger would make the certificate's budget history false
    refuse_disagreeing_record(record, ledger)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = out_dir.parent / f".{out_dir.name}.export-{uuid.uuid4().hex}"
    staging.mkdir()
    try:
        _write_release(run_dir, staging, record, identity, ledger, non_dp_statistics)
        report = verify_export(staging)
        if not report.ok:
            raise PrivetError("The export did not verify: " + "; ".join(report.problems), "Please report this bug.")
        _move_into_place(staging, out_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    ledger.release(record.dataset_id or record.dataset_fingerprint, record.run_id, record.epsilon_tight, record.delta,
                   str(out_dir), fingerprint=record.dataset_fingerprint, record_hash=record.claim_hash())
    return out_dir


def _move_into_place(staging: Path, out_dir: Path) -> None:
    """Rename ``staging`` to ``out_dir``; an existing folder is moved aside first and removed after."""
    if not out_dir.exists():
        os.rename(staging, out_dir)
        return
    aside = out_dir.parent / f".{out_dir.name}.replaced-{uuid.uuid4().hex}"
    os.rename(out_dir, aside)
    try:
        os.rename(staging, out_dir)
    except BaseException:
        os.rename(aside, out_dir)
        raise
    shutil.rmtree(aside, ignore_errors=True)


def resolved(path: Path) -> Path:
    """``path`` made absolute with every symlink resolved (a missing tail is kept as written)."""
    return Path(os.path.realpath(Path(path).expanduser()))


def protected_folders() -> list[tuple[str, Path]]:
    """The folders no release may be written to, contain or sit inside, each with what it holds in words."""
    return [
        ("the Privet data folder (the budget ledger, its witness, the installation and signing keys and every run "
         "folder)", data_location()),
        ("the Privet state folder (the ledger's high-water mark)", highwater.state_dir()),
    ]


def refuse_protected_output(out_dir: Path) -> None:
    """Refuse (``PrivetError``) an output folder that is, contains or sits inside a protected folder.

    Exporting replaces what is in the output folder, so a release written to the data folder (or to a
    folder above it) would delete the ledger and the keys. Paths are compared with symlinks resolved.
    """
    target = resolved(out_dir)
    for what, folder in protected_folders():
        protected = resolved(folder)
        if target == protected:
            where = "is"
        elif protected in target.parents:
            where = "is inside"
        elif target in protected.parents:
            where = "contains"
        else:
            continue
        raise PrivetError(
            f"The output folder {out_dir} {where} {what}: {protected}. A release is never written there, because "
            "writing or replacing it would delete that folder's contents. Nothing was charged.",
            f"Choose an output folder outside {protected} (for example a new folder in your documents or on a "
            "shared drive), and not a folder that holds it.")


def previous_release_problem(out_dir: Path) -> str:
    """Why the non-empty ``out_dir`` is not a release folder Privet wrote ('' when it is one).

    A release folder holds the marker ``.privet-release`` (``write_marker``) and nothing but the files an
    export writes (``RELEASE_FILES``), each a regular file."""
    marker = out_dir / RELEASE_MARKER
    try:
        stamp = json.loads(marker.read_text(encoding="utf-8")) if marker.is_file() and not marker.is_symlink() else {}
    except (OSError, UnicodeDecodeError, ValueError):
        stamp = {}
    if not isinstance(stamp, dict) or stamp.get(MARKER_KEY) != 1:
        return (f"it holds no Privet release marker ({RELEASE_MARKER}), so it is not a release folder Privet wrote "
                "(releases written before Privet marked them have none either)")
    foreign = [p for p in out_dir.iterdir() if p.name not in RELEASE_FILES or p.is_symlink() or not p.is_file()]
    if foreign:
        n = len(foreign)
        return f"besides a Privet release it holds {n} other file{'s' if n != 1 else ''} or folder{'s' if n != 1 else ''}"
    return ""


def check_output_folder(out_dir: Path, overwrite: bool) -> None:
    """Refuse, before anything is charged, an output folder the export must not or could not write.

    In order: a protected folder (``refuse_protected_output``), a file, a non-empty folder (unless
    ``overwrite`` and it is a release Privet wrote: ``previous_release_problem``), one that cannot be
    written (``check_writable``)."""
    out_dir = Path(out_dir)
    refuse_protected_output(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise PrivetError(f"The output folder {out_dir} is a file, not a folder.", "Choose a new or empty folder.")
    try:
        if out_dir.exists() and any(out_dir.iterdir()):
            if not overwrite:
                raise PrivetError(
                    f"The output folder {out_dir} is not empty.",
                    "Choose an empty or new folder, or, to replace a release Privet wrote there before, allow "
                    "overwriting (--overwrite / [output] overwrite = true).",
                )
            problem = previous_release_problem(out_dir)
            if problem:
                raise PrivetError(
                    f"The output folder {out_dir} is not empty, and overwriting only ever replaces a release folder "
                    f"that Privet wrote: {problem}. Nothing was charged and nothing was deleted.",
                    "Choose a new or empty folder. If the folder's contents are yours to discard, move or delete them "
                    "yourself first: Privet never deletes files it did not write.",
                )
    except OSError as exc:
        raise PrivetError(f"The output folder {out_dir} cannot be read ({exc.strerror or type(exc).__name__}).",
                          "Choose a folder you can write to.") from None
    check_writable(out_dir)
