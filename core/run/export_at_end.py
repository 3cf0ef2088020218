"""The release at the end of a run: where it goes (checked before anything is charged) and writing it there.

``output_folder`` is called before the run charges anything, so a folder the export would refuse stops the run
first; ``export_at_end`` writes the release (corpus and signed certificate, ``core.run.export``) once the privacy
record is saved, unless the run is in test mode or the release would be empty without the custodian's say-so.
"""

from __future__ import annotations

from pathlib import Path

from core.common.progress import ProgressEvent, Reporter, StageProgress
from core.ledger import Ledger
from core.run.export import check_output_folder, export_release, refuse_protected_output, release_size
from core.specs.runspec import RunSpec


def output_folder(spec: RunSpec) -> Path | None:
    """Where the release goes at the end (None: kept in the run folder), checked before any charge.

    A folder exported at the end gets every check of the export (``check_output_folder``); a folder the
    desktop exports to later (``export_at_end = false``) is at least never the data or state folder
    (``refuse_protected_output``). A test-mode run exports nothing, so its folder is not checked.
    """
    if not spec.output.folder or spec.test_mode_seed is not None:
        return None
    folder = Path(spec.output.folder)
    if not spec.output.export_at_end:
        refuse_protected_output(folder)
        return None
    check_output_folder(folder, spec.output.overwrite)
    return folder


def export_at_end(
    spec: RunSpec, reporter: Reporter, ledger: Ledger, run_dir: Path, out_dir: Path | None
) -> Path | None:
    """Export the release to ``out_dir`` (never in test mode, never empty without the custodian's say-so)."""
    if out_dir is None or spec.test_mode_seed is not None:
        return None
    size = release_size(run_dir)
    if size.empty:  # an empty release is never written without the custodian's say-so
        reporter.emit(ProgressEvent("export", "warning", message=f"Not exported: {size.problem} Export it anyway with "
                                    f"privet export {run_dir} {out_dir} --allow-empty."))
        return None
    identity = {
        "custodian": spec.output.custodian,
        "organisation": spec.output.organisation,
        "irb_protocol": spec.output.irb_protocol,
    }
    progress = StageProgress(reporter, "export", 1).start("Writing the release and its certificate")
    export_dir = export_release(run_dir, out_dir, identity, overwrite=spec.output.overwrite, ledger=ledger)
    progress.advance()
    progress.finish()
    return export_dir
