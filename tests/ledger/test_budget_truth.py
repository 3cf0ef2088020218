"""Issue 24: every budget figure true. Each audit finding as a test that fails without its fix.

1 resume asks before it charges again; 2 one dataset identity (content overlap, not file names);
3 rollback evidence outside the data folder; 4 certificates only from records the ledger confirms;
5 checks before the first charge; 6 the cap race; 7 certificate dates and file names.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import socket
import sqlite3
import threading
from pathlib import Path

import pytest
from tests.helpers import FakeKeyring, tiny_spec
from tests.certificate.test_export import IDENTITY, charged_run_dir, make_run_dir
from tests.privacy.test_privacy_audit import cancelled_run, charges

from core.certificate.privacy_record import RECORD_FILE, PrivacyRecord
from core.cli import main as privet
from core.common.errors import BudgetError, LedgerError, PrivetError
from core.run.export import export_release
from core.run.export_cli import certificate_claim_problems
from core.ledger import Ledger, check_before_run, highwater
from core.ledger.booking import book_dataset, record_booking
from core.run.pipeline import load_spec_corpus, plan, resume_quote, run_pipeline
from core.run.pipeline_cli import resume_consent
from core.specs.runspec import RunSpec


class _NotATerminal(io.StringIO):
    def isatty(self) -> bool:
        return False


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


# --- 1. resume shows what it charges and needs consent -----------------------------------------------------


def test_resume_quotes_the_redraw_and_charges_nothing_without_consent(tmp_path, capsys, monkeypatch):
    spec = tiny_spec(tmp_path)
    spec.output.folder = ""
    run_dir = tmp_path / "run"
    cancelled_run(spec, run_dir)  # stopped while writing (private prediction charged, not finished)
    ledger = Ledger()
    before = charges(ledger)
    planned = dict(plan(spec).stages)

    quote = resume_quote(spec, run_dir)
    assert [s for s, _ in quote.redrawn] == ["private_prediction"]  # histogram and retrieval are checkpointed
    assert quote.extra_rho == pytest.approx(planned["private_prediction"])
    assert quote.extra_epsilon > 0 and quote.after_epsilon > quote.before_epsilon
    words = quote.words()
    assert "private_prediction" in words and "charged again" in words and f"{quote.extra_epsilon:.3g}" in words

    with pytest.raises(PrivetError, match="agree"):  # a library caller must pass a consent
        run_pipeline(spec, run_dir=run_dir, resume=True)
    with pytest.raises(PrivetError, match="not started"):  # the custodian said no
        run_pipeline(spec, run_dir=run_dir, resume=True, consent=lambda q: False)
    assert charges(ledger) == before

    spec_file = tmp_path / "spec.toml"
    spec.save(spec_file)
    monkeypatch.setattr("sys.stdin", _NotATerminal(""))
    assert privet(["run", str(spec_file), "--resume", str(run_dir), "--quiet"]) == 1  # no terminal, no flag
    err = capsys.readouterr().err
    assert "--accept-recharge" in err and "charged again" in err
    assert charges(ledger) == before
    monkeypatch.setattr("sys.stdin", _Terminal("no\n"))
    assert privet(["run", str(spec_file), "--resume", str(run_dir), "--quiet"]) == 1  # asked, declined
    assert charges(ledger) == before

    assert privet(["run", str(spec_file), "--resume", str(run_dir), "--quiet", "--accept-recharge"]) == 0
    new = charges(ledger)[len(before):]
    assert [r["stage"] for r in new] == ["private_prediction"]
    assert sum(r["rho"] for r in new) <= quote.extra_rho * (1 + 1e-9)  # never more than the quote said


def test_resume_consent_asks_in_a_terminal(tmp_path):
    class Quote:
        charges_anything, resume_rho = True, 0.5

        def words(self, label=None):
            return "Resuming charges private prediction again: at most ε = 1.2 extra"

    out = io.StringIO()
    assert resume_consent(False, _Terminal("yes\n"), out)(Quote()) is True
    assert "ε = 1.2 extra" in out.getvalue() and "yes" in out.getvalue()
    assert resume_consent(False, _Terminal("\n"), io.StringIO())(Quote()) is False
    assert resume_consent(True, _NotATerminal(""), io.StringIO())(Quote()) is True
    with pytest.raises(PrivetError, match="--accept-recharge"):
        resume_consent(False, _NotATerminal(""), io.StringIO())(Quote())


# --- 2. one dataset identity ----------------------------------------------------------------------------


def _rows(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines(keepends=True)


def _booked(spec: RunSpec, ledger: Ledger):
    return book_dataset(ledger, spec.data, load_spec_corpus(spec))


def test_rekeyed_copies_share_one_budget_and_a_new_name_for_the_same_documents_is_refused(tmp_path):
    spec = tiny_spec(tmp_path)
    ledger = Ledger()
    first = _booked(spec, ledger)
    record_booking(ledger, first)  # what a run does past its cap check
    ledger.charge(first.key, "run-a", "histogram", 1.0, 1e-6, "earlier run")
    header, *rows = _rows(Path(spec.data.path))

    dropped = tmp_path / "other" / "notes_v2.csv"  # a dropped row plus a new file name
    dropped.parent.mkdir()
    dropped.write_text(header + "".join(rows[1:]), encoding="utf-8")
    view = tiny_spec(tmp_path)
    view.data.path = str(dropped)
    booked = _booked(view, ledger)
    assert (booked.key, booked.how, booked.name) == (first.key, "content", "notes.csv")
    assert ledger.summary(booked.key).spent_rho == pytest.approx(1.0)
    assert plan(view, ledger=ledger).dataset_name == "notes.csv"  # what plan prints is what the run books

    reordered = tmp_path / "shuffled.csv"  # reordered rows, a new name, no id column
    reordered.write_text(header + "".join(reversed(rows)), encoding="utf-8")
    view = tiny_spec(tmp_path)
    view.data.path, view.data.id_column = str(reordered), ""
    assert _booked(view, ledger).key == first.key

    for change in ({"person_column": "patient"}, {"max_unit_chars": 30}):  # same file, new name, another view
        view = tiny_spec(tmp_path)
        view.data.dataset_name = "A fresh budget"
        for name, value in change.items():
            setattr(view.data, name, value)
        with pytest.raises(PrivetError, match="already budgeted under the dataset name 'notes.csv'"):
            _booked(view, ledger)
        with pytest.raises(PrivetError, match="already budgeted"):
            plan(view)


def test_other_documents_under_a_known_default_name_are_another_dataset_and_said_so(tmp_path):
    spec = tiny_spec(tmp_path)
    ledger = Ledger()
    first = _booked(spec, ledger)
    record_booking(ledger, first)
    ledger.charge(first.key, "run-a", "histogram", 1.0, 1e-6, "earlier run")
    other = tmp_path / "elsewhere" / "notes.csv"  # a different notes.csv in another folder
    other.parent.mkdir()
    other.write_text("id,patient,note\n" + "".join(f"m{i},P{i},a different visit {i} about knees\n"
                                                  for i in range(30)), encoding="utf-8")
    view = tiny_spec(tmp_path)
    view.data.path = str(other)
    booked = _booked(view, ledger)
    # issue 31: a name does not make data the same; another file with the same default name is another dataset
    assert booked.key != first.key and (booked.how, booked.name) == ("separate", "notes.csv (2)")
    assert ledger.summary(booked.key).spent_rho == 0.0
    assert any("Another file named 'notes.csv' is already budgeted" in w for w in booked.warnings)
    view.data.dataset_name = "notes.csv"  # a chosen name groups data: booked there, and said so
    named = _booked(view, ledger)
    assert named.key == first.key and any("holds other documents" in w for w in named.warnings)
    view.data.dataset_name = "Knee clinic"
    assert _booked(view, ledger).how == "new" and ledger.summary(_booked(view, ledger).key).spent_rho == 0.0


def test_set_cap_on_an_unknown_dataset_is_refused_and_lists_the_known_ones(tmp_path, capsys):
    spec = tiny_spec(tmp_path)
    with Ledger() as ledger:
        record_booking(ledger, _booked(spec, ledger))
        rows_before = len(ledger.entries())
    assert privet(["ledger", "notes_canary.csv", "--set-cap", "0.5", "--delta", "1e-3"]) == 1
    err = capsys.readouterr().err
    assert "No dataset named 'notes_canary.csv'" in err and "'notes.csv'" in err and "--new-dataset" in err
    with Ledger() as ledger:
        assert len(ledger.entries()) == rows_before
    assert privet(["ledger", "notes.csv", "--set-cap", "0.5", "--delta", "1e-3"]) == 0
    assert privet(["ledger", "Ward 7", "--set-cap", "0.5", "--delta", "1e-3", "--new-dataset"]) == 0
    named = tiny_spec(tmp_path)
    named.data.path = str(tmp_path / "ward.csv")  # documents no known dataset holds
    Path(named.data.path).write_text("id,patient,note\n" + "".join(f"x{i},Q{i},a ward visit {i}\n" for i in range(9)),
                                     encoding="utf-8")
    named.data.dataset_name = "ward  7"  # case and spacing do not matter
    with Ledger() as ledger:
        booked = _booked(named, ledger)
        assert ledger.cap(booked.key) == (0.5, 1e-3)  # the cap set before the first run applies
        with pytest.raises(BudgetError):
            ledger.check_plan(booked.key, 1.0, 1e-6)


# --- 3. rollback evidence outside the data folder ---------------------------------------------------------


def _fill(n: int = 3) -> Path:
    with Ledger() as ledger:
        for i in range(n):
            ledger.charge("a1" * 32, f"run{i}", "histogram", 0.01, 1e-3, "earlier run")
        return ledger.path


def test_restoring_an_older_ledger_with_its_witness_is_caught(privet_home, tmp_path, capsys):
    path = _fill()
    backup = tmp_path / "backup"
    backup.mkdir()
    for name in ("ledger.db", "ledger.witness"):
        shutil.copy2(privet_home / name, backup / name)
    with Ledger() as ledger:  # a run the cap should count
        ledger.charge("a1" * 32, "run-late", "histogram", 0.5, 1e-3, "the run to forget")
    for name in ("ledger.db", "ledger.witness"):  # the audit: restore ledger.db TOGETHER with its witness
        shutil.copy2(backup / name, privet_home / name)
    assert not (privet_home / highwater.state_dir().name).exists()  # the mark is not in the data folder
    problems = Ledger(path).verify_chain()
    assert any("high-water mark" in p and "had 4" in p for p in problems)
    assert privet(["ledger", "--check"]) == 1
    assert "had 4" in capsys.readouterr().out
    with pytest.raises(LedgerError):
        check_before_run()


def test_rewitness_needs_an_acknowledgement_and_records_what_it_accepted(privet_home, capsys):
    path = _fill(4)
    conn = sqlite3.connect(path)  # cut back the last rows, as the audit did
    for trigger in ("charges_no_update", "charges_no_delete"):
        conn.execute(f"DROP TRIGGER {trigger}")
    conn.execute("DELETE FROM charges WHERE seq > 2")
    conn.execute("UPDATE sqlite_sequence SET seq = 2 WHERE name = 'charges'")
    conn.commit()
    conn.close()
    conn = sqlite3.connect(path)  # the triggers put back, so only the witnesses can tell
    conn.executescript(
        "CREATE TRIGGER charges_no_update BEFORE UPDATE ON charges BEGIN SELECT RAISE(ABORT, 'x'); END;"
        "CREATE TRIGGER charges_no_delete BEFORE DELETE ON charges BEGIN SELECT RAISE(ABORT, 'x'); END;")
    conn.close()
    path.with_suffix(".witness").unlink()  # and delete the witness, as the old advice allowed
    assert privet(["ledger", "--rewitness"]) == 1
    assert "had 4" in capsys.readouterr().err  # the high-water mark still knows
    assert privet(["ledger", "--rewitness", "--acknowledge-unverifiable-history"]) == 0
    with Ledger(path) as ledger:
        assert ledger.verify_chain() == []
        event = [e for e in ledger.entries() if e["stage"] == "rewitness"]
        assert len(event) == 1 and "had 4" in event[0]["description"]  # never forgotten silently
        assert ledger.datasets() == ["a1" * 32]  # the ledger event is not a dataset


def test_the_mark_uses_the_os_keyring_when_one_is_trusted(privet_home, monkeypatch, tmp_path):
    fake = FakeKeyring()
    monkeypatch.setattr(highwater, "keyring_backend", lambda: fake)
    path = _fill(2)
    assert len(fake.store) == 1 and not highwater.state_dir().exists()
    backup = tmp_path / "b"
    backup.mkdir()
    for name in ("ledger.db", "ledger.witness"):
        shutil.copy2(privet_home / name, backup / name)
    _fill(1)
    for name in ("ledger.db", "ledger.witness"):
        shutil.copy2(backup / name, privet_home / name)
    assert any("high-water mark" in p for p in Ledger(path).verify_chain())


# --- 4. certificates only from records the ledger confirms ---------------------------------------------


def test_an_edited_record_is_not_certified(tmp_path):
    run = charged_run_dir(tmp_path)
    record_path = run / RECORD_FILE
    data = json.loads(record_path.read_text())
    data["epsilon_tight"], data["rho_total"] = 0.5, 0.0179
    data["stages"][0]["rho"] = 0.0179
    record_path.write_text(json.dumps(data))  # the audit's edit: ε = 0.5 while the ledger charged more
    with pytest.raises(PrivetError, match="does not authenticate"):
        export_release(run, tmp_path / "out", IDENTITY)
    PrivacyRecord.from_dict(data).save(run)  # even re-authenticated (someone holding the key): the ledger disagrees
    with pytest.raises(PrivetError, match="disagrees with the budget ledger"):
        export_release(run, tmp_path / "out", IDENTITY)
    assert not (tmp_path / "out").exists()
    with Ledger() as ledger:
        assert not [e for e in ledger.entries() if e["kind"] == "release"]


def test_a_record_without_a_ledger_charge_is_not_certified(tmp_path):
    run = make_run_dir(tmp_path)  # no charge in this installation's ledger
    with pytest.raises(PrivetError, match="holds no charge for run run-42"):
        export_release(run, tmp_path / "out", IDENTITY)


def test_verify_ledger_compares_the_certificates_budget_with_the_ledger(tmp_path):
    run = charged_run_dir(tmp_path)
    out = export_release(run, tmp_path / "out", IDENTITY)
    certificate = json.loads((out / "certificate.json").read_text())["certificate"]
    with Ledger() as ledger:
        assert certificate_claim_problems(certificate, ledger) == []
        certificate["guarantee"]["rho_total"] = 0.0179
        assert any("states rho=0.0179" in p for p in certificate_claim_problems(certificate, ledger))


# --- 5. checks before the first charge ------------------------------------------------------------------


@pytest.mark.parametrize("where", ["under_a_file", "proc"])
def test_an_unwritable_output_folder_is_refused_before_anything_is_charged(tmp_path, where, capsys):
    spec = tiny_spec(tmp_path)
    if where == "under_a_file":
        (tmp_path / "a_file").write_text("x")
        spec.output.folder = str(tmp_path / "a_file" / "release")
    else:
        spec.output.folder = "/proc/privet-release"
    spec_file = tmp_path / "spec.toml"
    spec.save(spec_file)
    assert privet(["run", str(spec_file), "--quiet"]) == 1
    assert "cannot be written" in capsys.readouterr().err or where == "under_a_file"
    assert not (Path(os.environ["PRIVET_HOME"]) / "ledger.db").exists()


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root can write into read-only folders")
def test_a_read_only_output_folder_is_refused(tmp_path):
    spec = tiny_spec(tmp_path)
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    spec.output.folder = str(locked / "release")
    try:
        with pytest.raises(PrivetError, match="cannot be written"):
            run_pipeline(spec)
    finally:
        locked.chmod(0o755)


def test_bad_spec_files_and_huge_sizes_are_user_errors(tmp_path, capsys):
    folder = tmp_path / "spec.toml"
    folder.mkdir()
    assert privet(["plan", str(folder)]) == 1 and "is a folder" in capsys.readouterr().err
    latin = tmp_path / "latin.toml"
    latin.write_bytes("method = \"dp_synrag\" # caf\xe9\n".encode("latin-1"))
    assert privet(["run", str(latin)]) == 1 and "not UTF-8" in capsys.readouterr().err
    spec = tiny_spec(tmp_path, R=10**9)
    with pytest.raises(PrivetError, match=r"\[dp_synrag\] R"):
        spec.check()
    spec_file = tmp_path / "huge.toml"
    spec.dp_synrag.R = 5
    spec.save(spec_file)
    spec_file.write_text(spec_file.read_text().replace("R = 5", "R = 1000000000"))
    for command in ("plan", "run"):
        assert privet([command, str(spec_file)]) == 1
        assert "R (the number of clusters) = 1000000000 is out of range" in capsys.readouterr().err
    assert not (Path(os.environ["PRIVET_HOME"]) / "ledger.db").exists()


# --- 6. the cap race ------------------------------------------------------------------------------------


def test_two_racing_runs_the_loser_is_refused_before_any_charge(tmp_path):
    path = tmp_path / "ledger.db"
    Ledger(path).set_cap("ds", 1.0, 1e-3)  # rho ≈ 0.0594: room for one run of 0.04, not two
    barrier, outcomes = threading.Barrier(2), {}

    def run(run_id: str) -> None:
        ledger = Ledger(path)
        ledger.check_plan("ds", 0.04, 1e-6)  # both pass the plan check
        barrier.wait()
        try:
            ledger.reserve("ds", run_id, 0.04)
        except BudgetError as exc:
            outcomes[run_id] = exc.what
            return
        barrier_done.wait()
        for stage in ("histogram", "tokens"):
            ledger.charge("ds", run_id, stage, 0.02, 1e-6, "x")
        ledger.release_reservation(run_id)
        outcomes[run_id] = "ran"

    barrier_done = threading.Event()
    threads = [threading.Thread(target=run, args=(f"run-{i}",)) for i in range(2)]
    for t in threads:
        t.start()
    while len(outcomes) < 1:
        threads[0].join(0.05)
    barrier_done.set()
    for t in threads:
        t.join()
    loser = next(r for r, o in outcomes.items() if o != "ran")
    assert "Nothing was charged" in outcomes[loser] and "reserved" in outcomes[loser]
    assert {r["run_id"] for r in charges(Ledger(path))} == {next(r for r, o in outcomes.items() if o == "ran")}


def test_a_refusal_midway_says_what_the_run_was_charged_and_stale_reservations_expire(tmp_path):
    ledger = Ledger(tmp_path / "ledger.db")
    ledger.set_cap("ds", 1.0, 1e-3)
    ledger.charge("ds", "r", "histogram", 0.03, 1e-6, "x")
    ledger.set_cap("ds", 0.9, 1e-3)  # lowered while the run is in progress
    with pytest.raises(BudgetError) as info:
        ledger.charge("ds", "r", "tokens", 0.03, 1e-6, "x")
    assert "already charged" in info.value.what and "Nothing was charged" not in info.value.what
    ledger.db.execute("INSERT INTO reservations (run_id, dataset_id, rho, pid, host, created_at) "
                      "VALUES ('gone', 'ds', 0.01, 999999999, ?, '')",
                      [socket.gethostname()])  # a run whose process died
    ledger.reserve("ds", "next", 0.001)  # the dead run's reservation does not block it
    assert ledger.reserved_by_others("ds", "x") == pytest.approx(0.001)


def test_run_pipeline_reserves_its_plan_and_releases_it(tmp_path, monkeypatch):
    spec = tiny_spec(tmp_path)
    spec.output.folder = ""
    seen = []
    real = Ledger.reserve

    def spy(self, dataset, run_id, rho, delta_part=0.0):
        real(self, dataset, run_id, rho, delta_part)
        seen.append((rho, delta_part))

    monkeypatch.setattr(Ledger, "reserve", spy)
    result = run_pipeline(spec)
    delta_p = sum(float(s.get("delta", 0.0)) for s in result.record.stages)  # phrase discovery's δ_p is reserved too
    assert delta_p > 0 and seen == [(pytest.approx(result.record.rho_total), pytest.approx(delta_p))]
    with Ledger() as ledger:
        assert ledger.db.execute("SELECT COUNT(*) FROM reservations").fetchone()[0] == 0


# --- 7. certificate dates and names -----------------------------------------------------------------------


def test_pdf_date_is_the_run_date_and_parameters_name_files_not_paths(tmp_path):
    from core.methods.dp_synrag.method import DPSynRAGMethod

    run = charged_run_dir(tmp_path, started_at="2026-03-04T05:06:07+00:00")
    out = export_release(run, tmp_path / "out", IDENTITY)
    pdf = (out / "certificate.pdf").read_bytes()
    assert b"/CreationDate (D:20260304000000Z" in pdf or b"/CreationDate (D:20260304000000+00'00'" in pdf
    assert b"050607" not in pdf
    spec = tiny_spec(tmp_path)
    listed = tmp_path / "private" / "folder" / "icd10_titles.txt"
    listed.parent.mkdir(parents=True)
    listed.write_text("cinder asthma\nvelvet throat\n", encoding="utf-8")
    spec.dp_synrag.domain_lists = [str(listed)]
    params = DPSynRAGMethod().parameters(spec, type("Summary", (), {"derived": {}})())
    (entry,) = params["domain_lists"]
    assert entry.startswith("icd10_titles.txt (sha256 ")  # the file's name and content hash, never its folder
    assert "private" not in entry and str(tmp_path) not in entry
