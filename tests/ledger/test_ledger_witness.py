"""The ledger witness: a wiped, deleted, cut-back or junk ledger is refused, never silently recreated."""

from __future__ import annotations

import json
import os
import sqlite3
import stat

import pytest

from core.cli import main
from core.common.errors import LedgerError
from core.ledger import Ledger, check_before_run
from core.ledger.witness import read_witness, witness_path

FP = "a1" * 32


def _fill(n: int = 4) -> Ledger:
    ledger = Ledger()
    for i in range(n):
        ledger.charge(FP, f"run{i}", "histogram", 0.1, 1e-3, "a stage")
    return ledger


def _tamper(path, *statements):
    conn = sqlite3.connect(path)
    triggers = [r[0] for r in conn.execute("SELECT sql FROM sqlite_master WHERE type = 'trigger'")]
    conn.execute("DROP TRIGGER charges_no_update")
    conn.execute("DROP TRIGGER charges_no_delete")
    for statement in statements:
        conn.execute(statement)
    for sql in triggers:
        conn.execute(sql)
    conn.commit()
    conn.close()


def test_witness_follows_every_append_and_is_private(privet_home):
    ledger = _fill(3)
    witness, problem = read_witness(ledger.path)
    assert problem == "" and witness is not None
    assert (witness.rows, witness.head_seq) == (3, 3)
    assert witness.head_hash == ledger.head()["row_hash"]
    assert ledger.verify_chain() == []
    if os.name == "posix":
        assert stat.S_IMODE(witness_path(ledger.path).stat().st_mode) == 0o600
    ledger.close()


def test_fresh_installation_is_fine_and_check_creates_nothing(privet_home, capsys):
    check_before_run()
    assert main(["ledger", "--check"]) == 0
    assert "no entries yet" in capsys.readouterr().out
    assert not (privet_home / "ledger.db").exists()
    with Ledger() as ledger:  # first use writes the schema and a witness of 0 rows
        assert ledger.verify_chain() == []
    assert read_witness(privet_home / "ledger.db")[0].rows == 0


@pytest.mark.parametrize("wipe", ["truncate", "delete"])
def test_wiped_or_deleted_ledger_is_refused_not_recreated(privet_home, capsys, wipe):
    _fill().close()
    path = privet_home / "ledger.db"
    if wipe == "truncate":
        path.write_bytes(b"")  # : > ledger.db
    else:
        path.unlink()
    with pytest.raises(LedgerError, match="witness recorded 4 entries"):
        check_before_run()
    with pytest.raises(LedgerError):
        Ledger()  # never silently recreated: caps and history would be gone
    assert main(["ledger", "--check"]) == 1
    out = capsys.readouterr().out
    assert "tampered" in out and "restore" in out.lower()
    assert (not path.exists()) or path.stat().st_size == 0


def test_deleting_the_last_rows_and_resetting_the_counter_is_refused(privet_home):
    _fill(4).close()
    path = privet_home / "ledger.db"
    _tamper(path, "DELETE FROM charges WHERE seq > 2", "UPDATE sqlite_sequence SET seq = 2 WHERE name = 'charges'")
    problems = Ledger(path).verify_chain()
    assert any("witness recorded 4" in p for p in problems), problems
    with pytest.raises(LedgerError):
        check_before_run()


def test_replaced_ledger_with_same_length_is_refused(privet_home, tmp_path):
    _fill(2).close()
    path = privet_home / "ledger.db"
    other = Ledger(tmp_path / "other" / "ledger.db")  # another ledger of the same length
    other.charge(FP, "x", "s", 0.5, 1e-3, "")
    other.charge(FP, "y", "s", 0.5, 1e-3, "")
    other.close()
    path.write_bytes((tmp_path / "other" / "ledger.db").read_bytes())
    assert any("differs from the witnessed one" in p for p in Ledger(path).verify_chain())


@pytest.mark.parametrize("damage", [b"junk" * 1000, None])
def test_junk_or_half_truncated_ledger_is_a_refusal_not_a_traceback(privet_home, damage):
    _fill(200).close()
    path = privet_home / "ledger.db"
    data = path.read_bytes()
    path.write_bytes(damage if damage is not None else data[: len(data) // 2])
    with pytest.raises(LedgerError, match="integrity check"):
        check_before_run()
    assert main(["ledger", "--check"]) == 1


def test_edited_witness_and_replaced_installation_key_do_not_authenticate(privet_home):
    _fill().close()
    path = privet_home / "ledger.db"
    witness = witness_path(path)
    original = witness.read_text()
    data = json.loads(original)
    data["rows"] = 1
    witness.write_text(json.dumps(data))
    assert any("does not authenticate" in p for p in Ledger(path).verify_chain())
    witness.write_text(original)
    assert Ledger(path).verify_chain() == []
    (privet_home / "installation.key").write_bytes(os.urandom(32))
    assert any("does not authenticate" in p for p in Ledger(path).verify_chain())


def test_deleted_witness_is_reported_and_rewitness_only_fixes_that(privet_home, capsys):
    _fill().close()
    path = privet_home / "ledger.db"
    witness_path(path).unlink()
    assert any("witness file" in p and "missing" in p for p in Ledger(path).verify_chain())
    assert main(["ledger", "--rewitness"]) == 1  # refused without the acknowledgement
    assert "acknowledge-unverifiable-history" in capsys.readouterr().err
    assert main(["ledger", "--rewitness", "--acknowledge-unverifiable-history"]) == 0
    assert Ledger(path).verify_chain() == []
    rewitnessed = [e for e in Ledger(path).entries() if e["stage"] == "rewitness"]  # recorded in the ledger
    assert len(rewitnessed) == 1 and "witness file" in rewitnessed[0]["description"]
    _tamper(path, "UPDATE charges SET rho = 0 WHERE seq = 1")
    witness_path(path).unlink()
    assert main(["ledger", "--rewitness", "--acknowledge-unverifiable-history"]) == 1  # refused: the chain is broken
    assert "changed" in capsys.readouterr().err


def test_a_witness_never_moves_back(privet_home):
    ledger = _fill(3)
    _tamper(ledger.path, "DELETE FROM charges WHERE seq = 3", "UPDATE sqlite_sequence SET seq = 2 WHERE name = 'charges'")
    with pytest.raises(sqlite3.DatabaseError):
        ledger.db.conn.execute("DELETE FROM charges")  # triggers back in place
    ledger.charge(FP, "later", "histogram", 0.1, 1e-3, "appended after the cut")  # row 3 again, another hash
    assert read_witness(ledger.path)[0].head_seq == 3
    assert any("differs from the witnessed one" in p for p in ledger.verify_chain())
    ledger.close()


def test_ledger_longer_than_its_witness_is_fine(privet_home):
    """A process stopped between writing a row and its witness: the chain vouches for the extra row."""
    ledger = _fill(2)
    witness_before = witness_path(ledger.path).read_bytes()
    ledger.charge(FP, "r", "s", 0.1, 1e-3, "")
    witness_path(ledger.path).write_bytes(witness_before)
    assert ledger.verify_chain() == []
    ledger.close()
