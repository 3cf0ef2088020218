"""What a run or an export may never touch (issue 31, items 3 and 6).

- The data folder (ledger, witness, installation and signing keys, run folders) and the state folder of the
  ledger's high-water mark are never an output: not themselves, not through a symlink, not a folder inside
  them, not a folder holding them. ``privet run --output … --overwrite`` and ``privet export … --overwrite``
  are refused before anything is charged, and nothing is deleted.
- ``--overwrite`` replaces only a release folder Privet wrote and marked (``.privet-release``).
- A test-mode run books and charges a throwaway ledger: the installation's ledger, its witness and its
  high-water mark are byte-for-byte unchanged.
- Every whole-number setting has an upper bound in the rule table.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
from pathlib import Path

import pytest
from tests.helpers import tiny_spec

from core.certificate.seal import RELEASE_MARKER, verify_export
from core.cli import main as privet
from core.common.errors import PrivetError
from core.run.export import check_output_folder, export_release, previous_release_problem
from core.ledger import Ledger
from core.ledger.highwater import state_dir
from core.specs.runspec import DPSynRAGSpec

FP = "c3" * 32
IDENTITY = {"custodian": "Dr A. Custodian", "organisation": "St Example Hospital", "irb_protocol": "IRB-2026-042"}


# -- fixtures ---------------------------------------------------------------------------------------------------


def _used_installation(home: Path) -> None:
    """A data folder as a used installation holds it: ledger rows, a cap, a run folder, the keys."""
    with Ledger() as ledger:
        ledger.charge("a1" * 32, "run-1", "histogram", 0.1, 1e-3, "an earlier run")
        ledger.set_cap("a1" * 32, 20.0, 1e-3)
    run = home / "runs" / "20260101-aaaaaaaa"
    run.mkdir(parents=True)
    (run / "run.json").write_text("{}", encoding="utf-8")


def _tree(*folders: Path) -> dict[str, str]:
    """Every file under ``folders`` with its SHA-256: what must survive unchanged."""
    out = {}
    for folder in folders:
        for path in sorted(Path(folder).rglob("*")) if Path(folder).exists() else []:
            if path.is_file() and "cache" not in path.parts:
                out[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def _spec_file(tmp_path: Path) -> Path:
    """The shared tiny spec with the library's way of writing (``text``), saved; no output folder of its own."""
    spec = tiny_spec(tmp_path, release=None, text=DPSynRAGSpec().text, realisation_tokens=8)  # short drafts: the
    # random model never ends one, and these tests read the release's files, not its text
    spec.privacy.epsilon, spec.privacy.spend_anyway = 4.0, True
    path = tmp_path / "spec.toml"
    spec.save(path)
    return path


def _privet(argv: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = privet(argv)
    return code, err.getvalue() + out.getvalue()


def _charged_run(root: Path) -> Path:
    """A finished run folder whose privacy record the installation's ledger charged."""
    from core.certificate.privacy_record import PrivacyRecord

    run = root / "run"
    run.mkdir()
    (run / "synthetic.jsonl").write_text(
        "".join(json.dumps({"id": i, "text": f"Synthetic note {i}."}) + "\n" for i in range(5)), encoding="utf-8")
    PrivacyRecord(run_id="run-42", method="dp_synrag", method_parameters={"K": 10, "R": 5}, dataset_fingerprint=FP,
                  epsilon_target=4.0, delta=1e-5, rho_total=0.3731, epsilon_tight=4.0, epsilon_loose=4.7,
                  stages=[{"stage": "all", "mechanism": "zCDP composition", "rho": 0.3731, "count": 1,
                           "parallel": False, "parameters": {}, "description": "all stages"}]).save(run)
    with Ledger() as ledger:
        ledger.charge(FP, "run-42", "all", 0.3731, 1e-5, "all stages")
    return run


def _protected_targets(home: Path, tmp_path: Path) -> dict[str, Path]:
    link = tmp_path / "home-link"
    link.symlink_to(home, target_is_directory=True)
    inside = home / "runs" / "20260101-aaaaaaaa"
    return {
        "the data folder": home,
        "a symlink to the data folder": link,
        "a folder inside the data folder": inside,
        "a folder inside it, through the symlink": link / "runs" / "20260101-aaaaaaaa",
        "the parent of the data folder": home.parent,
        "the state folder": state_dir(),
        "a new folder in the state folder": state_dir() / "release",
    }


# -- privet run --output X --overwrite ---------------------------------------------------------------------------


def test_run_refuses_the_data_and_state_folders_before_any_charge(tmp_path, privet_home):
    _used_installation(privet_home)
    spec = _spec_file(tmp_path)
    assert state_dir().is_dir()  # the high-water mark's file fallback is there (PRIVET_KEYRING=memory)
    rows = [dict(r) for r in Ledger().entries()]
    for what, target in _protected_targets(privet_home, tmp_path).items():
        before = _tree(privet_home, state_dir(), tmp_path)
        code, text = _privet(["run", str(spec), "--output", str(target), "--overwrite", "--quiet"])
        assert code == 1, (what, text)
        assert "Nothing was charged" in text and ("Privet data folder" in text or "Privet state folder" in text), what
        assert "Traceback" not in text
        assert _tree(privet_home, state_dir(), tmp_path) == before, what  # nothing deleted, nothing written
        assert [dict(r) for r in Ledger().entries()] == rows, what  # nothing charged
    assert (privet_home / "ledger.db").is_file() and (privet_home / "installation.key").is_file()


def test_run_refuses_an_unmarked_non_empty_folder_even_with_overwrite(tmp_path, privet_home):
    _used_installation(privet_home)
    rows = [dict(r) for r in Ledger().entries()]
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "thesis.docx").write_text("years of work", encoding="utf-8")
    code, text = _privet(["run", str(_spec_file(tmp_path)), "--output", str(mine), "--overwrite", "--quiet"])
    assert code == 1
    assert "no Privet release marker" in text and "never deletes files it did not write" in text
    assert (mine / "thesis.docx").read_text(encoding="utf-8") == "years of work"
    assert [dict(r) for r in Ledger().entries()] == rows


def test_a_marked_previous_release_is_replaced_by_a_run(tmp_path, privet_home):
    spec = _spec_file(tmp_path)
    out = tmp_path / "release"
    code, text = _privet(["run", str(spec), "--output", str(out), "--quiet"])
    assert code == 0, text
    assert (out / RELEASE_MARKER).is_file() and verify_export(out).ok
    first = json.loads((out / "certificate.json").read_text(encoding="utf-8"))["certificate"]["certificate_id"]
    code, text = _privet(["run", str(spec), "--output", str(out), "--quiet"])
    assert code == 1 and "not empty" in text  # without --overwrite: refused
    code, text = _privet(["run", str(spec), "--output", str(out), "--overwrite", "--quiet"])
    assert code == 0, text
    second = json.loads((out / "certificate.json").read_text(encoding="utf-8"))["certificate"]["certificate_id"]
    assert second != first and verify_export(out).ok
    assert not [p for p in tmp_path.iterdir() if ".replaced-" in p.name or ".export-" in p.name]


# -- privet export RUN X --overwrite -----------------------------------------------------------------------------


def test_export_refuses_the_data_and_state_folders_and_records_no_release(tmp_path, privet_home):
    _used_installation(privet_home)
    run = _charged_run(tmp_path)
    rows = [dict(r) for r in Ledger().entries()]
    for what, target in _protected_targets(privet_home, tmp_path).items():
        before = _tree(privet_home, state_dir(), tmp_path)
        code, text = _privet(["export", str(run), str(target), "--overwrite"])
        assert code == 1, (what, text)
        assert "Privet data folder" in text or "Privet state folder" in text, what
        assert _tree(privet_home, state_dir(), tmp_path) == before, what
        assert [dict(r) for r in Ledger().entries()] == rows, what  # no release row


def test_overwrite_replaces_only_a_release_privet_marked(tmp_path):
    run = _charged_run(tmp_path)
    out = tmp_path / "release"
    export_release(run, out, IDENTITY)
    assert previous_release_problem(out) == ""
    export_release(run, out, IDENTITY, overwrite=True)  # a marked release: replaced
    assert verify_export(out).ok

    (out / "my-notes.txt").write_text("mine", encoding="utf-8")  # the custodian added a file of their own
    with pytest.raises(PrivetError, match="1 other file"):
        export_release(run, out, IDENTITY, overwrite=True)
    assert (out / "my-notes.txt").read_text(encoding="utf-8") == "mine"
    (out / "my-notes.txt").unlink()

    (out / RELEASE_MARKER).unlink()  # a release without its marker (an older Privet's) is not replaced either
    with pytest.raises(PrivetError, match="no Privet release marker"):
        export_release(run, out, IDENTITY, overwrite=True)
    assert (out / "certificate.json").is_file()


def test_a_marker_that_is_a_symlink_or_junk_does_not_count(tmp_path):
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / "certificate.json").write_text("{}", encoding="utf-8")
    real = tmp_path / "real-marker"
    real.write_text(json.dumps({"privet_release": 1}), encoding="utf-8")
    (folder / RELEASE_MARKER).symlink_to(real)
    assert "no Privet release marker" in previous_release_problem(folder)
    (folder / RELEASE_MARKER).unlink()
    (folder / RELEASE_MARKER).write_text("not json", encoding="utf-8")
    assert "no Privet release marker" in previous_release_problem(folder)
    with pytest.raises(PrivetError, match="no Privet release marker"):
        check_output_folder(folder, overwrite=True)


def test_a_symlink_to_a_marked_release_is_replaced_where_it_points(tmp_path):
    run = _charged_run(tmp_path)
    real = tmp_path / "real-release"
    export_release(run, real, IDENTITY)
    link = tmp_path / "release-link"
    link.symlink_to(real, target_is_directory=True)
    assert export_release(run, link, IDENTITY, overwrite=True) == real.resolve()
    assert link.is_symlink() and verify_export(real).ok
    assert not [p for p in tmp_path.iterdir() if ".replaced-" in p.name]


def test_a_desktop_run_exporting_later_is_refused_the_data_folder_too(tmp_path, privet_home):
    from core.run.pipeline import run_pipeline

    spec = tiny_spec(tmp_path)
    spec.output.folder = str(privet_home)
    spec.output.export_at_end = False
    with pytest.raises(PrivetError, match="Privet data folder"):
        run_pipeline(spec)
    assert not (privet_home / "ledger.db").exists()


# -- test mode never touches the real ledger ---------------------------------------------------------------------


def test_a_test_mode_run_leaves_the_real_ledger_byte_for_byte_unchanged(tmp_path, privet_home):
    from core.run.pipeline import run_pipeline

    _used_installation(privet_home)
    ledger_files = [privet_home / "ledger.db", privet_home / "ledger.witness"]
    before = {p.name: p.read_bytes() for p in ledger_files}
    marks, names = _tree(state_dir()), sorted(p.name for p in privet_home.iterdir())
    spec = tiny_spec(tmp_path)
    spec.test_mode_seed = 7
    result = run_pipeline(spec)
    assert result.record.test_mode and result.n_synthetic >= 0
    assert any(s.get("rho", 0) > 0 for s in result.record.stages)  # it was charged, on its own ledger
    assert {p.name: p.read_bytes() for p in ledger_files} == before
    assert _tree(state_dir()) == marks  # no high-water mark written for the throwaway ledger either
    assert sorted(p.name for p in privet_home.iterdir()) == names  # the run folder is in runs/, which was there


def test_a_test_mode_run_on_a_fresh_installation_creates_no_ledger(tmp_path, privet_home):
    from core.run.pipeline import run_pipeline

    spec = tiny_spec(tmp_path)
    spec.test_mode_seed = 7
    run_pipeline(spec)
    assert not (privet_home / "ledger.db").exists() and not (privet_home / "ledger.witness").exists()
    assert not state_dir().exists() or not any(state_dir().iterdir())


# -- sizes and caps ----------------------------------------------------------------------------------------------


def test_every_whole_number_setting_has_an_upper_bound():
    from dataclasses import fields, is_dataclass

    from core.specs.runspec import RunSpec
    from core.specs.rules import UNBOUNDED, rules_of

    def unbounded(cls: type, where: str) -> list[str]:
        found = []
        defaults = cls()
        for f in fields(cls):
            value = getattr(defaults, f.name)
            if is_dataclass(value):
                found += unbounded(type(value), f.name)
                continue
            rule = rules_of(cls).get(f.name)
            if rule is not None and rule.kind == "whole" and rule.high is None and f.name not in UNBOUNDED:
                found.append(f"[{where}] {f.name}")
        return found

    assert unbounded(RunSpec, "") == []


@pytest.mark.parametrize("section,name,value", [
    ("dp_synrag", "realisation_tokens", 10**7), ("rpsg", "max_new_tokens", 10**7), ("aug_pe", "population", 10**9),
    ("aug_pe", "max_new_tokens", 10**7), ("dp_synrag", "top_k_plus", 10**9), ("compute", "workers", 10**6),
])
def test_huge_sizes_are_refused_by_plan(tmp_path, section, name, value):
    from core.run.planning import plan

    spec = tiny_spec(tmp_path)
    setattr(getattr(spec, section), name, value)
    with pytest.raises(PrivetError, match=rf"\[{section}\] {name}"):
        plan(spec)
    assert not (Path(os.environ["PRIVET_HOME"]) / "ledger.db").exists()


@pytest.mark.parametrize("epsilon", [float("inf"), float("nan"), 0.0, -1.0])
def test_ledger_set_cap_refuses_a_cap_that_is_no_budget(epsilon):
    with Ledger() as ledger, pytest.raises(PrivetError, match="not valid"):
        ledger.set_cap("a1" * 32, epsilon, 1e-5)
    with Ledger() as ledger:
        assert [r for r in ledger.entries() if r["kind"] == "cap"] == []
