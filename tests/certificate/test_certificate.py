"""Certificate content, signing keys, rendering and verification of single certificates."""

from __future__ import annotations

import json
import shutil
import stat
import subprocess
import unicodedata

import pytest

from core.certificate import build_certificate, load_signing_key, render_html, render_pdf, sign_certificate
from core.certificate.privacy_record import PrivacyRecord
from core.certificate.render import pdf_page_count
from core.certificate.seal import canonical_bytes
from core.certificate.signing import (
    _trusted_keyring,
    load_public_key_pem,
    public_key_fingerprint,
    verify_bytes,
)
from core.cli import main
from core.common.errors import PrivetError
from core.ledger import Ledger

FP = "c3" * 32


def make_record(method: str = "dp_synrag", **changes) -> PrivacyRecord:
    fields = dict(
        run_id="run-1",
        method=method,
        method_parameters={"K": 10, "R": 500, "L": 5, "T": 70},
        dataset_fingerprint=FP,
        epsilon_target=10.0,
        delta=1e-3,
        rho_total=2.6,
        stages=[
            {"stage": "histogram", "mechanism": "gaussian", "rho": 0.1, "count": 1, "parallel": False,
             "parameters": {"sigma": 7.07}, "description": "noisy keyword histogram"},
            {"stage": "clusters", "mechanism": "private prediction", "rho": 2.5, "count": 500, "parallel": True,
             "parameters": {"L": 5}, "description": "synthetic text per cluster"},
        ],
        epsilon_tight=10.0,
        epsilon_loose=11.9,
        samplers=["histogram noise: OpenDP discrete Gaussian (exact)", "tokens: torch Gumbel-max (floating-point)"],
        models=[{"name": "SmolLM2-135M-Instruct", "backend": "llama.cpp", "sha256": "e" * 64, "size": 98_000_000}],
        device="cpu",
        started_at="2026-11-29T10:00:00+00:00",
        finished_at="2026-11-29T10:30:00+00:00",
        privet_version="0.1.0",
        privet_commit="abc123",
    )
    if method == "rpsg":
        fields.update(end_to_end_dp=False, stages=[
            {"stage": "selection", "mechanism": "gaussian report-noisy-max", "rho": 0.5, "count": 1,
             "parallel": True, "parameters": {"m": 5}, "description": "choose one abstraction per seed"}])
    fields.update(changes)
    return PrivacyRecord(**fields)


def _signed(tmp_path, record=None, ledger=None):
    out = tmp_path / "synthetic.jsonl"
    out.write_text('{"text": "a synthetic document"}\n', encoding="utf-8")
    key = load_signing_key()
    cert = build_certificate(record or make_record(), [out], {"custodian": "A. Custodian"}, ledger, signing_key=key)
    return cert, sign_certificate(cert, key), key


# ---------------------------------------------------------------- privacy record
def test_record_round_trip_and_refuses_unknown_fields():
    record = make_record()
    assert PrivacyRecord.from_json(record.to_json()) == record
    data = record.to_dict()
    data["n_units"] = 1234  # private under add/remove neighbouring
    with pytest.raises(PrivetError, match="n_units"):
        PrivacyRecord.from_dict(data)


def test_record_refuses_rpsg_claiming_end_to_end_dp():
    with pytest.raises(PrivetError, match="end-to-end"):
        make_record("rpsg", end_to_end_dp=True)


# ---------------------------------------------------------------- content
def test_certificate_content_and_budget_history(tmp_path):
    ledger = Ledger(tmp_path / "l.db")
    ledger.charge(FP, "run-0", "histogram", 0.4, 1e-3, "earlier run")
    ledger.charge(FP, "run-1", "histogram", 0.1, 1e-3, "")
    ledger.charge(FP, "run-1", "clusters", 2.5, 1e-3, "")
    cert, _, key = _signed(tmp_path, ledger=ledger)
    g, h = cert["guarantee"], cert["budget_history"]
    assert g["end_to_end_dp"] is True and g["unit_of_privacy"] == "document"
    assert [s["rho"] for s in g["stages"]] == [0.1, 2.5]
    assert g["epsilon_tight"] == 10.0 and g["epsilon_loose"] == 11.9
    assert h["other_runs_rho"] == pytest.approx(0.4)
    assert h["cumulative_rho"] == pytest.approx(3.0)
    assert h["ledger_matches_record"] is True
    from core.privacy.conversion import rho_to_eps

    # no cap: the total is stated at the two runs' δ added up (core.ledger.total)
    assert h["cumulative_delta"] == pytest.approx(2e-3)
    assert h["cumulative_epsilon_tight"] == pytest.approx(rho_to_eps(3.0, 2e-3, "tight"))
    hazards = " ".join(cert["scope_and_hazards"])
    for phrase in ("Pre-processing", "Memorisation", "Rare topics", "floating-point"):
        assert phrase in hazards
    assert [s["kind"] for s in cert["samplers"]] == ["exact", "floating-point"]
    section = cert["dataset_fingerprint"]
    assert section["value"] != FP and "HMAC" in section["kind"] and len(bytes.fromhex(section["salt"])) == 16
    assert cert["outputs"][0]["file"] == "synthetic.jsonl" and len(cert["outputs"][0]["sha256"]) == 64
    assert cert["signing_key"]["public_key_fingerprint"] == public_key_fingerprint(key.public_key)
    assert "in-memory" in cert["signing_key"]["storage"]


def test_rpsg_certificate_says_no_end_to_end_guarantee(tmp_path):
    cert, _, _ = _signed(tmp_path, record=make_record("rpsg"))
    assert cert["guarantee"]["end_to_end_dp"] is False
    assert "does NOT carry an end-to-end" in cert["summary"][0]
    hazards = " ".join(cert["scope_and_hazards"])
    assert "only the candidate selection is differentially private" in hazards
    assert "Rare topics are not reproduced" not in hazards
    assert "NO (see Scope and hazards)" in render_html(cert)


def test_person_unit_named_in_certificate(tmp_path):
    cert, _, _ = _signed(tmp_path, record=make_record(unit_kind="person", person_column="patient_id"))
    assert "patient_id" in cert["guarantee"]["unit_description"]
    assert not any("The unit is the document" in n for n in cert["scope_and_hazards"])


# ---------------------------------------------------------------- signing
def test_sign_verify_round_trip_and_tamper(tmp_path):
    cert, doc, key = _signed(tmp_path)
    message = canonical_bytes(doc["certificate"])
    import base64

    sig = base64.b64decode(doc["signature"]["value"])
    embedded = load_public_key_pem(doc["signature"]["public_key_pem"])
    assert verify_bytes(embedded, sig, message)
    edited = json.loads(json.dumps(doc["certificate"]))
    edited["guarantee"]["epsilon_tight"] = 1.0
    assert not verify_bytes(embedded, sig, canonical_bytes(edited))
    # canonical form does not depend on key order or whitespace
    reordered = json.loads(json.dumps(doc["certificate"], sort_keys=True, indent=4))
    assert canonical_bytes(reordered) == message


def test_key_is_created_once_per_installation():
    first = load_signing_key()
    second = load_signing_key()
    assert public_key_fingerprint(first.public_key) == public_key_fingerprint(second.public_key)


def test_encrypted_file_fallback_with_passphrase(monkeypatch, privet_home):
    monkeypatch.setenv("PRIVET_KEYRING", "file")
    monkeypatch.setenv("PRIVET_KEY_PASSPHRASE", "correct horse battery staple")
    key = load_signing_key()
    path = privet_home / "signing_key.pem"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert b"ENCRYPTED PRIVATE KEY" in path.read_bytes()
    assert "PRIVET_KEY_PASSPHRASE" in key.storage
    again = load_signing_key()
    assert public_key_fingerprint(again.public_key) == public_key_fingerprint(key.public_key)
    monkeypatch.setenv("PRIVET_KEY_PASSPHRASE", "wrong")
    with pytest.raises(PrivetError, match="passphrase"):
        load_signing_key()


def test_encrypted_file_fallback_with_generated_passphrase(monkeypatch, privet_home):
    monkeypatch.setenv("PRIVET_KEYRING", "file")
    monkeypatch.delenv("PRIVET_KEY_PASSPHRASE", raising=False)
    key = load_signing_key()
    for name in ("signing_key.pem", "signing_key.passphrase"):
        assert stat.S_IMODE((privet_home / name).stat().st_mode) == 0o600
    assert "file permissions" in key.storage  # the certificate states the weaker protection
    again = load_signing_key()
    assert public_key_fingerprint(again.public_key) == public_key_fingerprint(key.public_key)


def test_plaintext_and_fail_keyrings_are_not_trusted():
    from keyring.backends.fail import Keyring as FailKeyring
    from keyrings.alt.file import PlaintextKeyring

    assert not _trusted_keyring(FailKeyring())
    assert not _trusted_keyring(PlaintextKeyring())


def test_headless_default_falls_back_to_encrypted_file(monkeypatch, privet_home):
    from keyrings.alt.file import PlaintextKeyring

    monkeypatch.delenv("PRIVET_KEYRING")
    monkeypatch.setenv("PRIVET_KEY_PASSPHRASE", "pw")
    monkeypatch.setattr("keyring.get_keyring", lambda: PlaintextKeyring())
    key = load_signing_key()
    assert "encrypted key file" in key.storage
    assert (privet_home / "signing_key.pem").exists()


def test_cli_keys_export_public(tmp_path, capsys):
    target = tmp_path / "irb.pem"
    assert main(["keys", "export-public", str(target)]) == 0
    key = load_signing_key()
    assert public_key_fingerprint(load_public_key_pem(target.read_bytes())) == public_key_fingerprint(key.public_key)
    assert public_key_fingerprint(key.public_key) in capsys.readouterr().out


# ---------------------------------------------------------------- rendering
def test_pdf_renders_offscreen_with_expected_text(tmp_path):
    pytest.importorskip("PySide6")
    cert, _, _ = _signed(tmp_path)
    pdf = tmp_path / "certificate.pdf"
    pages = render_pdf(render_html(cert), pdf)
    data = pdf.read_bytes()
    assert data.startswith(b"%PDF-") and data.rstrip().endswith(b"%%EOF")
    assert 1 <= pages <= 3 and pages == pdf_page_count(data)
    if shutil.which("pdftotext"):
        text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
        flat = " ".join(unicodedata.normalize("NFKC", text).split())  # undo ligatures such as "ﬁ"
        assert flat.index("In plain words") < flat.index("The guarantee in figures")
        for expected in ("Privacy certificate", "Scope and hazards", "A. Custodian", "synthetic.jsonl",
                         cert["certificate_id"]):
            assert expected in flat, expected


def test_private_statistics_only_on_opt_in_and_labelled(tmp_path):
    cert, _, key = _signed(tmp_path)
    assert "non_dp_statistics" not in cert
    out = tmp_path / "synthetic.jsonl"
    opted = build_certificate(make_record(), [out], {}, None, signing_key=key, non_dp_statistics={"documents": 1200})
    assert opted["non_dp_statistics"]["values"] == {"documents": 1200}
    assert "NOT differentially private" in opted["non_dp_statistics"]["label"]
    assert "Statistics of the private data (not DP)" in render_html(opted)


def test_the_certificate_does_not_show_whether_the_data_changed(tmp_path):
    """Issue 57: two certificates of the same data carry different data values (a per-certificate salt), and
    the installation that ran them can still tell that each came from a view its ledger holds."""
    from core.certificate.build import commitment_matches

    import dataclasses

    record = dataclasses.replace(make_record(), dataset_id="a1" * 32)  # a run of this version names its identity
    one, _, _ = _signed(tmp_path, record=record)
    two, _, _ = _signed(tmp_path, record=record)
    first, second = one["dataset_fingerprint"], two["dataset_fingerprint"]
    assert first["value"] != second["value"] and first["salt"] != second["salt"]
    assert FP not in json.dumps(one) and FP not in json.dumps(two)
    assert commitment_matches(first, [FP]) and commitment_matches(second, ["00" * 32, FP])
    assert not commitment_matches(first, ["d4" * 32])
