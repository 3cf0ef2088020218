"""The budget ledger: append-only, hash-chained, caps refuse over-budget plans."""

from __future__ import annotations

import sqlite3

import pytest

from core.cli import main
from core.common.errors import BudgetError
from core.ledger import Ledger

FP = "a1" * 32
OTHER = "b2" * 32


@pytest.fixture
def ledger(tmp_path):
    led = Ledger(tmp_path / "ledger.db")
    yield led
    led.close()


def _fill(led: Ledger) -> None:
    led.charge(FP, "run1", "histogram", 0.1, 1e-3, "keyword histogram")
    led.charge(FP, "run1", "clusters", 2.5, 1e-3, "private prediction")
    led.charge(OTHER, "run2", "histogram", 0.3, 1e-5, "keyword histogram")
    led.release(FP, "run1", 10.0, 1e-3, "/tmp/out")


def test_default_path_is_in_data_dir(privet_home):
    led = Ledger()
    assert led.path == privet_home / "ledger.db"
    led.close()


def test_charges_accumulate_per_dataset(ledger):
    _fill(ledger)
    assert ledger.spent_rho(FP) == pytest.approx(2.6)
    assert ledger.spent_rho(OTHER) == pytest.approx(0.3)
    assert ledger.spent_rho(FP, exclude_run="run1") == 0.0
    kinds = [e["kind"] for e in ledger.entries(FP)]
    assert kinds == ["charge", "charge", "release"]
    assert len(ledger.entries()) == 4
    assert ledger.verify_chain() == []


def test_negative_or_nan_charge_refused(ledger):
    from core.common.errors import PrivetError

    for bad in (-0.1, float("nan")):
        with pytest.raises(PrivetError):
            ledger.charge(FP, "r", "s", bad, 1e-3, "")
    assert ledger.entries() == []


@pytest.mark.parametrize("sql", ["UPDATE charges SET rho = 0", "DELETE FROM charges"])
def test_update_and_delete_are_refused(ledger, sql):
    _fill(ledger)
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        ledger.db.conn.execute(sql)
    assert ledger.spent_rho(FP) == pytest.approx(2.6)


def _tamper(path, statements):
    """Edit the ledger the way an attacker with file access would: drop triggers, edit, recreate them."""
    conn = sqlite3.connect(path)
    trigger_sql = [r[0] for r in conn.execute("SELECT sql FROM sqlite_master WHERE type = 'trigger'")]
    conn.execute("DROP TRIGGER charges_no_update")
    conn.execute("DROP TRIGGER charges_no_delete")
    for stmt in statements:
        conn.execute(stmt)
    for sql in trigger_sql:
        conn.execute(sql)
    conn.commit()
    conn.close()


def test_edited_row_is_detected(ledger):
    _fill(ledger)
    _tamper(ledger.path, ["UPDATE charges SET rho = 0.01 WHERE seq = 2"])
    problems = Ledger(ledger.path).verify_chain()
    assert any("row 2" in p and "changed" in p for p in problems), problems


def test_edited_row_with_recomputed_hash_breaks_the_next_link(ledger):
    from core.ledger.schema import row_hash

    _fill(ledger)
    row = ledger.entries()[1]
    row["rho"] = 0.01
    new_hash = row_hash(row["prev_hash"], row)
    _tamper(ledger.path, [f"UPDATE charges SET rho = 0.01, row_hash = '{new_hash}' WHERE seq = 2"])
    problems = Ledger(ledger.path).verify_chain()
    assert any("row 3" in p and "link" in p for p in problems), problems


def test_deleted_rows_are_detected(ledger):
    _fill(ledger)
    _tamper(ledger.path, ["DELETE FROM charges WHERE seq = 2"])
    assert any("missing" in p for p in Ledger(ledger.path).verify_chain())


def test_deleted_last_row_is_detected(ledger):
    _fill(ledger)
    _tamper(ledger.path, ["DELETE FROM charges WHERE seq = 4"])
    assert any("end of the ledger" in p for p in Ledger(ledger.path).verify_chain())


def test_dropped_trigger_is_reported(ledger):
    _fill(ledger)
    ledger.db.conn.execute("DROP TRIGGER charges_no_delete")
    reopened = Ledger(ledger.path)  # opening must not silently recreate the missing trigger
    problems = reopened.verify_chain()
    assert any("charges_no_delete" in p for p in problems)


def test_cap_refuses_over_budget_plan(ledger):
    from core.privacy.conversion import eps_to_rho

    cap_rho = eps_to_rho(4.0, 1e-5, "tight")
    ledger.set_cap(FP, 4.0, 1e-5)
    assert ledger.cap(FP) == (4.0, 1e-5)
    ledger.check_plan(FP, cap_rho * 0.6, 1e-5)  # fits
    ledger.charge(FP, "run1", "all", cap_rho * 0.6, 1e-5, "first run")
    with pytest.raises(BudgetError, match="Nothing was charged"):
        ledger.check_plan(FP, cap_rho * 0.6, 1e-5)  # 1.2 x cap
    ledger.check_plan(FP, cap_rho * 0.39, 1e-5)  # what is left still fits
    ledger.check_plan(OTHER, 1e6, 1e-3)  # no cap on the other dataset
    assert ledger.spent_rho(FP) == pytest.approx(cap_rho * 0.6)


def test_cap_changes_are_logged_and_caps_table_edit_detected(ledger):
    ledger.set_cap(FP, 4.0, 1e-5)
    ledger.set_cap(FP, 8.0, 1e-5)
    assert ledger.cap(FP) == (8.0, 1e-5)
    assert [e["epsilon"] for e in ledger.entries(FP) if e["kind"] == "cap"] == [4.0, 8.0]
    assert ledger.verify_chain() == []
    ledger.db.conn.execute("UPDATE caps SET epsilon = 100 WHERE dataset_fp = ?", [FP])
    assert any("caps" in p for p in ledger.verify_chain())


def test_cli_ledger_list_check_and_cap(privet_home, capsys):
    led = Ledger()
    _fill(led)
    led.close()
    assert main(["ledger", FP[:6], "--set-cap", "12", "--delta", "1e-3"]) == 0
    assert main(["ledger", FP[:6]]) == 0
    out = capsys.readouterr().out
    assert FP in out and "cap: epsilon=12" in out and "(rho 2.6" in out
    assert main(["ledger", "--check"]) == 0
    assert "intact" in capsys.readouterr().out
    _tamper(privet_home / "ledger.db", ["UPDATE charges SET rho = 0 WHERE seq = 1"])
    assert main(["ledger", "--check"]) == 1
    assert "tampered" in capsys.readouterr().out
