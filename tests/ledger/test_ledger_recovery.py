"""Issue 31 item 4: an acknowledged re-witnessing never lowers a total, and a lost data folder has an honest way on.

The high-water mark (kept outside the data folder) keeps per-dataset floors: Σρ, Σδ spent outright, the runs'
δ, the cap and the name. A re-witnessed ledger gets a chained carry-over charge for what it lost and its caps
back; ``privet ledger --recover-lost-data-folder --acknowledge-lost-history`` starts a new, marked history
carrying each total by dataset name.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from tests.helpers import FakeKeyring, tiny_spec

from core.cli import main as privet
from core.corpus.identity import dataset_identity
from core.common.errors import BudgetError, LedgerError
from core.ledger import Ledger, check_before_run, highwater
from core.ledger.booking import book_dataset, record_booking
from core.ledger.chain import CARRIED_STAGE
from core.ledger.recovery import RECOVERED_STAGE, RECOVERY_RUN, history_notes
from core.ledger.schema import LEDGER_EVENTS
from core.ledger.seal import sealed
from core.run.pipeline import load_spec_corpus, plan

KEY = "c3" * 32
NAME = "notes.csv"
FILES = ("ledger.db", "ledger.witness")


def _backup(home: Path, to: Path) -> Path:
    to.mkdir(exist_ok=True)
    for name in FILES:
        shutil.copy2(home / name, to / name)
    return to


def _restore(backup: Path, home: Path) -> None:
    for name in FILES:
        shutil.copy2(backup / name, home / name)


def _named(ledger: Ledger, name: str = NAME) -> str:
    identity = dataset_identity(name, name)
    ledger.name_dataset(identity.key, identity.name)
    return identity.key


def _refused(ledger: Ledger, key: str, rho: float) -> bool:
    try:
        ledger.check_plan(key, rho, 1e-6)
    except BudgetError:
        return True
    return False


def _restored_history(home: Path, tmp_path: Path) -> tuple[float, float]:
    """The audit's case: 1.478 charged, a backup, 4.436 more (5.914 in all), the backup restored. Returns the
    total (ρ, Σδ_p) the ledger had before the restore."""
    with Ledger() as ledger:
        ledger.set_cap(KEY, 25.0, 1e-6)
        ledger.charge(KEY, "run1", "histogram", 1.478, 1e-6, "first run")
    backup = _backup(home, tmp_path / "backup")
    with Ledger() as ledger:
        ledger.charge(KEY, "run2", "phrases", 4.436, 1e-6, "second run", delta_part=2e-7)
        before = (ledger.spent_rho(KEY), ledger.spent_delta_part(KEY))
        assert before[0] == pytest.approx(5.914)
        assert _refused(ledger, KEY, 1.5)
    _restore(backup, home)
    return before


# --- 1. an acknowledged re-witnessing never lowers a total ----------------------------------------------


def test_rewitness_of_a_restored_ledger_keeps_its_total_and_lists_the_acknowledgement(privet_home, tmp_path, capsys):
    before = _restored_history(privet_home, tmp_path)
    with pytest.raises(LedgerError):
        check_before_run()
    with Ledger() as ledger:
        assert ledger.spent_rho(KEY) == pytest.approx(1.478)  # what the audit's rewitness then accepted
    assert privet(["ledger", "--rewitness"]) == 1
    assert "carried over" in capsys.readouterr().err  # the refusal says what the acknowledgement will do
    assert privet(["ledger", "--rewitness", "--acknowledge-unverifiable-history"]) == 0
    out = capsys.readouterr().out
    assert "Carried over" in out and "rho=4.436" in out
    check_before_run()
    with Ledger() as ledger:
        assert ledger.verify_chain() == []
        assert ledger.spent_rho(KEY) == pytest.approx(before[0], rel=1e-12)
        assert ledger.spent_delta_part(KEY) == pytest.approx(before[1], rel=1e-12)
        assert _refused(ledger, KEY, 1.5)  # the run the cap had refused is still refused
        carried = [r for r in ledger.entries(KEY) if r["stage"] == CARRIED_STAGE]
        assert len(carried) == 1 and carried[0]["kind"] == "charge" and carried[0]["run_id"].startswith("(rewitness")
        assert carried[0]["delta"] == pytest.approx(1e-6)  # the lost run's δ, so a cap-less total keeps its δ
        assert ledger.datasets() == [KEY]  # the acknowledgement is not a dataset ...
    assert privet(["ledger"]) == 0
    listing = capsys.readouterr().out
    assert "Ledger events" in listing and "re-witnessed by the custodian" in listing  # ... but it is listed
    assert "carried over" in listing


def test_rewitness_restores_a_cap_the_restored_ledger_lost_or_loosened(privet_home, tmp_path, capsys):
    with Ledger() as ledger:
        ledger.set_cap(KEY, 25.0, 1e-6)
        ledger.charge(KEY, "run1", "histogram", 0.2, 1e-6, "")
    backup = _backup(privet_home, tmp_path / "b")
    other = "d4" * 32
    with Ledger() as ledger:
        ledger.set_cap(KEY, 12.0, 1e-7)  # stricter, after the backup
        ledger.set_cap(other, 8.0, 1e-6)  # a dataset capped before its first run
    _restore(backup, privet_home)
    assert privet(["ledger", "--rewitness", "--acknowledge-unverifiable-history"]) == 0
    out = capsys.readouterr().out
    assert "Cap restored" in out and "epsilon=12" in out and "epsilon=8" in out
    with Ledger() as ledger:
        assert ledger.cap(KEY) == (12.0, 1e-7)
        assert ledger.cap(other) == (8.0, 1e-6)
        assert ledger.spent_rho(KEY) == pytest.approx(0.2)  # nothing lost: no carry-over charge
        assert not [r for r in ledger.entries() if r["stage"] == CARRIED_STAGE]
        assert ledger.verify_chain() == []  # the restored caps are chained rows, and the caps table agrees


def test_rewitness_twice_and_on_an_intact_ledger_carries_nothing_more(privet_home, tmp_path):
    before = _restored_history(privet_home, tmp_path)
    assert privet(["ledger", "--rewitness", "--acknowledge-unverifiable-history"]) == 0
    assert privet(["ledger", "--rewitness", "--acknowledge-unverifiable-history"]) == 0  # intact: a no-op carry
    with Ledger() as ledger:
        assert ledger.spent_rho(KEY) == pytest.approx(before[0])
        assert len([r for r in ledger.entries() if r["stage"] == CARRIED_STAGE]) == 1
        assert len(ledger.entries(LEDGER_EVENTS)) == 2


def test_the_floors_never_move_back_and_survive_a_second_rollback(privet_home, tmp_path):
    with Ledger() as ledger:
        ledger.charge(KEY, "run1", "histogram", 1.0, 1e-6, "")
    first = _backup(privet_home, tmp_path / "first")
    with Ledger() as ledger:
        ledger.charge(KEY, "run2", "histogram", 2.0, 1e-6, "")
    _restore(first, privet_home)
    with Ledger() as ledger:  # appended to the rolled-back ledger: the mark does not follow it down
        ledger.charge(KEY, "run3", "histogram", 0.5, 1e-6, "")
    mark, problem = highwater.read_mark(privet_home / "ledger.db")
    assert problem == "" and mark is not None and mark.floors[KEY].rho == pytest.approx(3.0)
    assert privet(["ledger", "--rewitness", "--acknowledge-unverifiable-history"]) == 0
    with Ledger() as ledger:
        assert ledger.spent_rho(KEY) == pytest.approx(3.0)  # 1.0 + 0.5 held, 1.5 carried
    second = _backup(privet_home, tmp_path / "second")
    with Ledger() as ledger:
        ledger.charge(KEY, "run4", "histogram", 1.0, 1e-6, "")
    _restore(second, privet_home)
    assert privet(["ledger", "--rewitness", "--acknowledge-unverifiable-history"]) == 0
    with Ledger() as ledger:
        assert ledger.spent_rho(KEY) == pytest.approx(4.0)


# --- 2. the mark outlives the data folder, sealed with a key kept beside it ------------------------------


def test_the_mark_authenticates_after_the_data_folder_is_deleted(privet_home):
    with Ledger() as ledger:
        ledger.charge(KEY, "run1", "histogram", 1.0, 1e-6, "")
    assert (highwater.state_dir() / highwater.STATE_KEY_FILE).is_file()
    assert not (privet_home / highwater.STATE_KEY_FILE).exists()
    if os.name == "posix":
        assert (highwater.state_dir() / highwater.STATE_KEY_FILE).stat().st_mode & 0o077 == 0
    shutil.rmtree(privet_home)
    with pytest.raises(LedgerError) as refused:
        check_before_run()
    assert "recorded 1 entries" in refused.value.what  # not "does not authenticate": the key was not in the folder
    assert "--recover-lost-data-folder" in refused.value.fix


def test_an_edited_or_foreign_mark_does_not_authenticate(privet_home, tmp_path):
    with Ledger() as ledger:
        ledger.charge(KEY, "run1", "histogram", 1.0, 1e-6, "")
        path = ledger.path
    mark_file = highwater.state_dir() / f"{highwater._entry_name(path)}.json"
    original = mark_file.read_text()
    data = json.loads(original)
    data["floors"][KEY]["rho"] = 0.0  # lower the floor
    mark_file.write_text(json.dumps(data))
    assert any("does not authenticate" in p for p in Ledger(path).verify_chain())
    mark_file.write_text(original)
    assert Ledger(path).verify_chain() == []
    (highwater.state_dir() / highwater.STATE_KEY_FILE).write_bytes(os.urandom(32))  # another installation's key
    assert any("does not authenticate" in p for p in Ledger(path).verify_chain())


def test_a_version_1_mark_is_read_until_the_state_key_exists_and_never_after(privet_home):
    with Ledger() as ledger:
        ledger.charge(KEY, "run1", "histogram", 1.0, 1e-6, "")
        path, head = ledger.path, ledger.head()
    mark_file = highwater.state_dir() / f"{highwater._entry_name(path)}.json"
    old = json.dumps(sealed(b"privet-ledger-high-water-v1\x00",  # as Privet wrote it before: installation key
                            {"rows": 1, "head_seq": head["seq"], "head_hash": head["row_hash"]}))
    mark_file.write_text(old)
    assert any("does not authenticate" in p for p in Ledger(path).verify_chain())  # a downgrade: refused
    (highwater.state_dir() / highwater.STATE_KEY_FILE).unlink()  # an installation from before the state key
    assert Ledger(path).verify_chain() == []
    with Ledger(path) as ledger:  # the next append writes version 2, with the floors
        ledger.charge(KEY, "run2", "histogram", 1.0, 1e-6, "")
    mark, problem = highwater.read_mark(path)
    assert problem == "" and mark.floors[KEY].rho == pytest.approx(2.0)


# --- 3. recovery after the data folder is lost ---------------------------------------------------------


def _history_then_lose_the_folder(home: Path) -> dict[str, float]:
    with Ledger() as ledger:
        key = _named(ledger)
        ledger.set_cap(key, 12.0, 1e-6)
        ledger.charge(key, "run1", "histogram", 0.8, 1e-6, "", delta_part=1e-8)
        ledger.register_view(key, NAME, "f0" * 32, "/data/notes.csv")
        ledger._append("charge", "f0" * 32, run_id="old", stage="histogram", rho=0.3, delta=1e-6)  # an older row
        other = _named(ledger, "movies.jsonl")
        ledger.charge(other, "run2", "histogram", 0.1, 1e-6, "")
        ledger.charge("e5" * 32, "run3", "histogram", 0.05, 1e-6, "")  # known by key only
        totals = {"rho": ledger.spent_rho(key), "part": ledger.spent_delta_part(key), "other": ledger.spent_rho(other)}
    shutil.rmtree(home)
    return totals


def test_recovery_starts_a_marked_history_carrying_each_total_and_cap_by_name(privet_home, capsys):
    totals = _history_then_lose_the_folder(privet_home)
    assert privet(["ledger", "--check"]) == 1
    assert privet(["ledger", "--recover-lost-data-folder"]) == 1  # refused without the acknowledgement
    err = capsys.readouterr().err
    assert "'notes.csv'" in err and "acknowledge-lost-history" in err and "not matched" in err
    assert not (privet_home / "ledger.db").exists()  # the refusal changed nothing
    assert privet(["ledger", "--recover-lost-data-folder", "--acknowledge-lost-history"]) == 0
    out = capsys.readouterr().out
    assert "The lost ledger had 5 entries" in out and "known only by its key" in out
    check_before_run()  # every command works again
    key = dataset_identity(NAME, NAME).key  # under the NEW installation key
    with Ledger() as ledger:
        assert ledger.verify_chain() == []
        assert ledger.identity_of_name(NAME) == key  # a new load named notes.csv is booked here
        assert ledger.spent_rho(key) == pytest.approx(totals["rho"])  # the identity's charge and its old view's
        assert ledger.spent_delta_part(key) == pytest.approx(totals["part"])
        assert ledger.cap(key) == (12.0, 1e-6)
        assert ledger.spent_rho(dataset_identity("movies.jsonl", "x").key) == pytest.approx(totals["other"])
        assert ledger.spent_rho("e5" * 32) == pytest.approx(0.05)
        rows = [r for r in ledger.entries(key) if r["kind"] == "charge"]
        assert [(r["run_id"], r["stage"]) for r in rows] == [(RECOVERY_RUN, RECOVERED_STAGE)]
        notes = history_notes(ledger)
        assert len(notes) == 1 and "restarted" in notes[0] and "data folder was lost" in notes[0]
        over = ledger.total(key, plus_rho=10.0).epsilon
        assert over > 12.0 and _refused(ledger, key, 10.0)  # the cap still binds the carried total
    mark, problem = highwater.read_mark(privet_home / "ledger.db")
    assert problem == "" and set(mark.floors) == {key, dataset_identity("movies.jsonl", "x").key, "e5" * 32}
    assert privet(["ledger"]) == 0
    assert "new history started after the data folder was lost" in capsys.readouterr().out
    assert privet(["ledger", "--recover-lost-data-folder", "--acknowledge-lost-history"]) == 1  # nothing lost now


def test_recovery_moves_leftovers_aside_and_a_later_rewitness_does_not_carry_twice(privet_home, tmp_path):
    with Ledger() as ledger:
        key = _named(ledger)
        ledger.charge(key, "run1", "histogram", 1.0, 1e-6, "")
    (privet_home / "ledger.db").unlink()  # only the ledger lost: its witness and installation.key remain
    with pytest.raises(LedgerError):
        check_before_run()
    assert privet(["ledger", "--recover-lost-data-folder", "--acknowledge-lost-history"]) == 0
    assert [p.name.split(".lost-")[0] for p in privet_home.glob("*.lost-*")] == ["ledger.witness"]
    with Ledger() as ledger:
        assert ledger.spent_rho(key) == pytest.approx(1.0)  # the same installation key: the same identity
        ledger.charge(key, "run2", "histogram", 0.5, 1e-6, "")
    backup = _backup(privet_home, tmp_path / "b")
    with Ledger() as ledger:
        ledger.charge(key, "run3", "histogram", 0.25, 1e-6, "")
    _restore(backup, privet_home)
    assert privet(["ledger", "--rewitness", "--acknowledge-unverifiable-history"]) == 0
    with Ledger() as ledger:
        assert ledger.spent_rho(key) == pytest.approx(1.75)
        assert len(history_notes(ledger)) == 2  # the new history and the re-witnessing


def test_recovery_with_an_unreadable_mark_carries_nothing_and_says_so(privet_home, capsys):
    _history_then_lose_the_folder(privet_home)
    (highwater.state_dir() / highwater.STATE_KEY_FILE).unlink()
    assert privet(["ledger", "--recover-lost-data-folder", "--acknowledge-lost-history"]) == 0
    assert "nothing was carried over" in capsys.readouterr().out
    with Ledger() as ledger:
        assert ledger.datasets() == [] and len(history_notes(ledger)) == 1


def test_rewitness_after_the_installation_key_was_replaced_points_to_recovery(privet_home, capsys):
    with Ledger() as ledger:
        key = _named(ledger)
        ledger.charge(key, "run1", "histogram", 1.0, 1e-6, "")
    (privet_home / "installation.key").write_bytes(os.urandom(32))
    assert privet(["ledger", "--rewitness", "--acknowledge-unverifiable-history"]) == 1
    assert "--recover-lost-data-folder" in capsys.readouterr().err
    assert privet(["ledger", "--recover-lost-data-folder", "--acknowledge-lost-history"]) == 0
    with Ledger() as ledger:
        assert ledger.spent_rho(dataset_identity(NAME, NAME).key) == pytest.approx(1.0)


def test_recovery_reads_the_mark_from_a_trusted_keyring(privet_home, monkeypatch):
    fake = FakeKeyring()
    monkeypatch.setattr(highwater, "keyring_backend", lambda: fake)
    totals = _history_then_lose_the_folder(privet_home)
    assert len(fake.store) == 1 and not highwater.state_dir().exists()
    assert privet(["ledger", "--recover-lost-data-folder", "--acknowledge-lost-history"]) == 0
    with Ledger() as ledger:
        assert ledger.spent_rho(dataset_identity(NAME, NAME).key) == pytest.approx(totals["rho"])


def test_a_copied_data_folder_gets_its_mark_carried_with_the_state_key_it_was_sealed_with(privet_home, tmp_path,
                                                                                         monkeypatch):
    with Ledger() as ledger:
        ledger.charge(KEY, "run1", "histogram", 1.0, 1e-6, "")
    source_state = highwater.state_dir()
    copy = tmp_path / "copy"
    shutil.copytree(privet_home, copy)
    monkeypatch.setenv("PRIVET_HOME", str(copy))  # the copy has its own state folder, with another key
    assert any("no high-water mark" in p for p in Ledger(copy / "ledger.db").verify_chain())
    assert highwater.carry_mark(privet_home / "ledger.db", source_state, copy / "ledger.db")
    with Ledger(copy / "ledger.db") as ledger:
        assert ledger.verify_chain() == []
        assert highwater.read_mark(ledger.path)[0].floors[KEY].rho == pytest.approx(1.0)


def test_after_recovery_a_run_of_the_same_file_is_booked_under_its_carried_total(privet_home, tmp_path):
    spec = tiny_spec(tmp_path)  # notes.csv, booked under its default name
    with Ledger() as ledger:
        booking = book_dataset(ledger, spec.data, load_spec_corpus(spec))
        record_booking(ledger, booking)
        ledger.set_cap(booking.key, 12.0, 1e-6)
        ledger.charge(booking.key, "run1", "histogram", 1.0, 1e-6, "an earlier run")
        spent = ledger.total(booking.key).epsilon
    shutil.rmtree(privet_home)
    with pytest.raises(LedgerError):
        check_before_run()  # what every run does first
    assert privet(["ledger", "--recover-lost-data-folder", "--acknowledge-lost-history"]) == 0
    with Ledger() as ledger:
        again = book_dataset(ledger, spec.data, load_spec_corpus(spec))
        assert again.key != booking.key and again.name == "notes.csv"  # a new installation key ...
        assert ledger.total(again.key).epsilon == pytest.approx(spent)  # ... the same total
        assert ledger.cap(again.key) == (12.0, 1e-6)
    assert plan(spec).dataset_name == "notes.csv"
