"""Export folders: only safe artefacts, atomic, signed; ``privet verify`` catches every tamper case."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from core.certificate.privacy_record import PrivacyRecord
from core.certificate.seal import verify_export
from core.certificate.signing import public_key_pem
from core.cli import main
from core.common.errors import PrivetError
from core.run.export import export_release
from core.ledger import Ledger

CANARY = "CANARY-7f3a9c-Jane-Q-Private-DOB-1961-04-02"
FP = "d4" * 32
IDENTITY = {"custodian": "Dr A. Custodian", "organisation": "St Example Hospital", "irb_protocol": "IRB-2026-042"}


def make_run_dir(root: Path, **changes) -> Path:
    """A finished run folder whose checkpoints, caches and logs contain private text (the canary)."""
    run = root / "run"
    (run / "checkpoints").mkdir(parents=True)
    (run / "cache").mkdir()
    (run / "checkpoints" / "clusters.json").write_text(json.dumps({"members": [CANARY]}), encoding="utf-8")
    (run / "cache" / "keywords.jsonl").write_text(json.dumps({"uid": "u1", "text": CANARY}) + "\n", encoding="utf-8")
    (run / "run.log").write_text(f"debug: {CANARY}\n", encoding="utf-8")
    (run / "private_copy.jsonl").write_text(json.dumps({"text": CANARY}) + "\n", encoding="utf-8")
    (run / "synthetic.jsonl").write_text(
        "".join(json.dumps({"id": i, "text": f"Synthetic note {i} about a common cold."}) + "\n" for i in range(5)),
        encoding="utf-8",
    )
    (run / "synthetic.csv").write_text(
        "id,text\n" + "".join(f"{i},Synthetic note {i} about a common cold.\n" for i in range(5)), encoding="utf-8"
    )
    fields = dict(
        run_id="run-42", method="dp_synrag", method_parameters={"K": 10, "R": 500}, dataset_fingerprint=FP,
        epsilon_target=4.0, delta=1e-5, rho_total=0.3731,
        stages=[{"stage": "all", "mechanism": "zCDP composition", "rho": 0.3731, "count": 1, "parallel": False,
                 "parameters": {}, "description": "all stages"}],
        epsilon_tight=4.0, epsilon_loose=4.7, samplers=["noise: OpenDP (exact)"],
        models=[{"name": "m", "backend": "llama.cpp", "sha256": "0" * 64, "size": 1}],
    )
    fields.update(changes)
    PrivacyRecord(**fields).save(run)
    return run


def charged_run_dir(root: Path, **changes) -> Path:
    """``make_run_dir`` whose run the installation's ledger charged as its record states."""
    run = make_run_dir(root, **changes)
    with Ledger() as ledger:
        ledger.charge(FP, "run-42", "all", 0.3731, 1e-5, "all stages")
    return run


@pytest.fixture
def exported(tmp_path):
    run = make_run_dir(tmp_path)
    ledger = Ledger()
    ledger.charge(FP, "run-42", "all", 0.3731, 1e-5, "all stages")
    out = export_release(run, tmp_path / "release", IDENTITY, ledger=ledger)
    return out


def _problems(folder: Path, **kw) -> str:
    report = verify_export(folder, **kw)
    assert not report.ok
    return "\n".join(report.problems)


def test_export_contains_only_safe_artefacts_and_verifies(exported):
    names = sorted(p.name for p in exported.iterdir())
    assert names == [".privet-release", "certificate.html", "certificate.json", "certificate.pdf", "public_key.pem",
                     "synthetic.csv", "synthetic.jsonl"]
    report = verify_export(exported)
    assert report.ok, report.problems
    assert report.files_checked == 4
    assert not [p for p in exported.parent.iterdir() if p.name.startswith(".")]  # no staging left behind


def test_canary_never_leaves_the_run_folder(exported):
    needle = CANARY.encode()
    for path in exported.rglob("*"):
        assert needle not in path.read_bytes(), path.name
    cert = json.loads((exported / "certificate.json").read_text(encoding="utf-8"))
    assert CANARY not in json.dumps(cert)


def test_release_is_recorded_in_ledger(exported):
    releases = [e for e in Ledger().entries(FP) if e["kind"] == "release"]
    assert len(releases) == 1 and releases[0]["export_path"] == str(exported)
    cert = json.loads((exported / "certificate.json").read_text())["certificate"]
    assert cert["budget_history"]["this_run_rho_charged_in_ledger"] == pytest.approx(0.3731)
    assert cert["identity"]["irb_protocol"] == "IRB-2026-042"


def test_changed_byte_of_corpus_fails(exported):
    path = exported / "synthetic.jsonl"
    data = bytearray(path.read_bytes())
    data[10] ^= 0x01
    path.write_bytes(bytes(data))
    assert "synthetic.jsonl: content changed" in _problems(exported)


@pytest.mark.parametrize("name", ["certificate.pdf", "certificate.html", "synthetic.csv"])
def test_changed_rendering_or_csv_fails(exported, name):
    with open(exported / name, "ab") as handle:
        handle.write(b" ")
    assert f"{name}: size is" in _problems(exported)


def test_added_files_fail(exported):
    (exported / "notes.txt").write_text("extra")
    (exported / ".hidden").write_text("extra")
    (exported / "sub").mkdir()
    problems = _problems(exported)
    for name in ("'notes.txt'", "'.hidden'", "folder 'sub'"):
        assert name in problems


def test_missing_file_fails(exported):
    (exported / "synthetic.csv").unlink()
    assert "synthetic.csv: listed in the certificate but missing" in _problems(exported)


def test_edited_certificate_field_fails(exported):
    path = exported / "certificate.json"
    doc = json.loads(path.read_text())
    doc["certificate"]["guarantee"]["epsilon_tight"] = 0.5
    path.write_text(json.dumps(doc, indent=2))
    assert "signature does not match" in _problems(exported)


def test_resigned_with_another_key_fails_against_the_irb_key(exported, tmp_path):
    irb_key = tmp_path / "irb.pem"
    assert main(["keys", "export-public", str(irb_key)]) == 0
    assert verify_export(exported, public_key=irb_key).ok
    other = Ed25519PrivateKey.generate()
    other_pem = tmp_path / "other.pem"
    other_pem.write_text(public_key_pem(other.public_key()))
    assert "signed by key" in _problems(exported, public_key=other_pem)


def test_replaced_public_key_file_fails(exported):
    (exported / "public_key.pem").write_text(public_key_pem(Ed25519PrivateKey.generate().public_key()))
    assert "public_key.pem is not the key that signed" in _problems(exported)


def test_cli_verify_exit_codes(exported, capsys):
    assert main(["verify", str(exported)]) == 0
    assert "Verified" in capsys.readouterr().out
    (exported / "extra.txt").write_text("x")
    assert main(["verify", str(exported)]) == 1
    assert "extra.txt" in capsys.readouterr().out


@pytest.mark.parametrize("formats, files", [(["jsonl"], {"synthetic.jsonl"}), (["csv"], {"synthetic.csv"}),
                                             (["jsonl", "csv"], {"synthetic.jsonl", "synthetic.csv"})])
def test_export_writes_the_formats_the_run_spec_asked_for(tmp_path, formats, files):
    run = make_run_dir(tmp_path)
    (run / "run.json").write_text(json.dumps({"spec": {"output": {"formats": formats}}}), encoding="utf-8")
    ledger = Ledger()
    ledger.charge(FP, "run-42", "all", 0.3731, 1e-5, "all stages")
    out = export_release(run, tmp_path / "release", IDENTITY, ledger=ledger)
    assert {p.name for p in out.glob("synthetic.*")} == files
    assert verify_export(out).ok


def test_refuses_test_mode_run(tmp_path):
    run = make_run_dir(tmp_path, test_mode=True)
    with pytest.raises(PrivetError, match="test mode"):
        export_release(run, tmp_path / "release", IDENTITY)
    assert not (tmp_path / "release").exists()


def test_refuses_non_empty_folder_unless_overwrite(tmp_path):
    run = charged_run_dir(tmp_path)
    out = tmp_path / "release"
    out.mkdir()
    (out / "old.txt").write_text("old")
    with pytest.raises(PrivetError, match="not empty"):
        export_release(run, out, IDENTITY)
    assert (out / "old.txt").exists()
    with pytest.raises(PrivetError, match="release marker"):  # not a release Privet wrote (tests/pipeline/test_output_guard.py)
        export_release(run, out, IDENTITY, overwrite=True)
    assert (out / "old.txt").exists()
    (out / "old.txt").unlink()
    export_release(run, out, IDENTITY)  # an empty folder
    export_release(run, out, IDENTITY, overwrite=True)  # a release Privet wrote is replaced
    assert verify_export(out).ok


def test_failed_export_leaves_nothing(tmp_path, monkeypatch):
    run = charged_run_dir(tmp_path)

    def broken(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr("core.run.export.render_html", broken)
    with pytest.raises(RuntimeError):
        export_release(run, tmp_path / "release", IDENTITY)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]
    assert not [e for e in Ledger().entries() if e["kind"] == "release"]


def test_cli_export(tmp_path, capsys):
    run = charged_run_dir(tmp_path)
    out = tmp_path / "cli-release"
    assert main(["export", str(run), str(out), "--custodian", "X", "--irb", "P-1"]) == 0
    cert = json.loads((out / "certificate.json").read_text())["certificate"]
    assert cert["identity"]["custodian"] == "X" and cert["identity"]["irb_protocol"] == "P-1"
    assert main(["verify", str(out)]) == 0
