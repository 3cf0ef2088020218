"""Reliability items not covered by the bad-input matrix: warnings before the first charge, verify's
origin wording (CLI and dialog), refusal of a run or an export on a tampered ledger, internal errors."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from tests.helpers import TINY_SIZES, tiny_spec, write_notes

from core.cli import INTERNAL_ERROR
from core.cli import main as privet
from core.common.errors import LedgerError
from core.ledger import Ledger
from core.run.pipeline import run_pipeline
from core.common.progress import CallbackReporter
from core.specs.runspec import RunSpec


def _spec(tmp_path: Path, blank_every: int = 0) -> RunSpec:
    corpus = write_notes(tmp_path, note="Patient {i} came in with fever and was treated with rest.", person="who",
                         name=lambda i: "" if blank_every and i % blank_every == 0 else f"P{i}")
    spec = tiny_spec(tmp_path, corpus, TINY_SIZES, release=None)
    if blank_every:
        spec.data.person_column = "who"
    return spec


def test_load_and_plan_warnings_come_before_the_first_charge(tmp_path, capsys):
    spec = _spec(tmp_path, blank_every=4)
    spec.privacy.delta = 0.5  # planner warning: delta >= 1/n
    events = []
    run_pipeline(spec, CallbackReporter(events.append))
    kinds = [e.kind for e in events]
    warnings = [e.message for e in events if e.kind == "warning"]
    assert any("without a person" in w for w in warnings) and any("1/n" in w for w in warnings)
    assert kinds.index("warning") < kinds.index("charged")
    assert max(i for i, k in enumerate(kinds) if k == "warning") < kinds.index("charged")
    # the command line shows them even with --quiet
    spec_path = tmp_path / "spec.toml"
    spec.save(spec_path)
    assert privet(["run", str(spec_path), "--quiet", "--spend-anyway"]) == 0  # 40 units: about 0 topics expected
    err = capsys.readouterr().err
    assert "Warning: 10 row(s) without a person" in err and "Warning: δ = 0.5" in err


def test_a_run_on_a_ledger_that_fails_its_check_is_refused_and_charges_nothing(tmp_path, privet_home):
    ledger = Ledger()
    for i in range(3):
        ledger.charge("a1" * 32, f"r{i}", "histogram", 0.1, 1e-3, "earlier")
    ledger.close()
    conn = sqlite3.connect(privet_home / "ledger.db")  # drop triggers, delete a row, recreate triggers
    triggers = [r[0] for r in conn.execute("SELECT sql FROM sqlite_master WHERE type = 'trigger'")]
    conn.execute("DROP TRIGGER charges_no_delete")
    conn.execute("DELETE FROM charges WHERE seq = 2")
    for sql in triggers:
        if "charges_no_delete" in sql:
            conn.execute(sql)
    conn.commit()
    conn.close()
    with pytest.raises(LedgerError, match="integrity check"):
        run_pipeline(_spec(tmp_path))
    conn = sqlite3.connect(privet_home / "ledger.db")
    assert conn.execute("SELECT COUNT(*) FROM charges").fetchone()[0] == 2
    conn.close()
    assert not (privet_home / "runs").exists()


def test_export_is_refused_on_a_tampered_ledger(tmp_path, privet_home):
    from core.run.export import export_release

    spec = _spec(tmp_path)
    result = run_pipeline(spec)
    (privet_home / "ledger.db").write_bytes(b"")  # wiped after the run
    with pytest.raises(LedgerError):  # allow_empty: the tiny model's every document may have been dropped
        export_release(result.run_dir, tmp_path / "release", {}, allow_empty=True)
    assert not (tmp_path / "release").exists()


def test_verify_says_origin_is_only_proven_with_the_custodians_key(tmp_path, capsys):
    spec = _spec(tmp_path)
    spec.output.folder = str(tmp_path / "release")
    result = run_pipeline(spec)
    release = result.export_dir
    if release is None:  # the tiny model's every document stated an unreleased fact and was dropped: export it anyway
        release = tmp_path / "release"
        assert privet(["export", str(result.run_dir), str(release), "--allow-empty"]) == 0
    assert privet(["verify", str(release)]) == 0
    assert "Origin NOT proven" in capsys.readouterr().out
    assert privet(["keys", "export-public", str(tmp_path / "custodian.pem")]) == 0
    capsys.readouterr()
    assert privet(["verify", str(release), "--public-key", str(tmp_path / "custodian.pem")]) == 0
    out = capsys.readouterr().out
    assert "Origin proven" in out and "NOT proven" not in out

    from PySide6.QtWidgets import QApplication

    from desktop.dialogs import VerifyDialog

    app = QApplication.instance() or QApplication([])  # noqa: F841 - keeps the dialog's application alive
    dialog = VerifyDialog()
    dialog.folder.setText(str(release))
    assert dialog.verify() is True
    assert "origin NOT proven" in dialog.result.text()
    dialog.public_key.setText(str(tmp_path / "custodian.pem"))
    assert dialog.verify() is True
    assert "custodian's public key" in dialog.result.text() and "NOT" not in dialog.result.text()


def test_an_internal_error_prints_no_exception_text(monkeypatch, capsys):
    import core.run.pipeline_cli as pipeline_cli

    def explode(args):
        raise RuntimeError("Zqxvortimer Blandquist-7731 leaked into an exception")

    monkeypatch.setattr(pipeline_cli, "cmd_plan", explode)
    monkeypatch.delenv("PRIVET_DEBUG", raising=False)
    code = privet(["plan", "whatever.toml"])
    err = capsys.readouterr().err
    assert code == INTERNAL_ERROR
    assert "RuntimeError" in err and "Zqxvortimer" not in err and "PRIVET_DEBUG=1" in err
