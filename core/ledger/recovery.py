"""A new, honest history after the data folder was lost: ``privet ledger --recover-lost-data-folder
--acknowledge-lost-history`` (docs/using.md, docs/reliability.md "The ledger witness").

When the data folder is gone (``ledger.db``, ``ledger.witness``, ``installation.key``), the high-water mark
kept outside it (``core.ledger.highwater``) still says a ledger was here, so every command is refused; and
deleting the mark as well would leave Privet running with no cap and no trace. Recovery is the way on:

1. the ledger must fail its check (an intact ledger has nothing to recover);
2. whatever is left of the old ledger and its witness is moved aside (``*.lost-<time>``), never deleted;
3. a fresh ledger is started. Its first row (dataset ``LEDGER_EVENTS``, stage ``recovery``) says what was
   lost; then every dataset's floor in the mark (its total ρ, δ spent outright and runs' δ; its cap; its
   name) is carried over as one chained charge (run ``(recovery)``) and a cap row, under the identity key
   its *name* has under the current installation key (``core.corpus.identity``), so a later load under
   the same dataset name is charged against it;
4. the witness and the mark are written for the new ledger, the mark's floors now keyed as the new ledger.

What cannot be carried, said plainly: the views and content sketches of the old ledger (which loads were
the same data, by content) lived in ``ledger.db`` and are keyed with the old installation key, so data
loaded under *another* name than before is not matched to its old budget; a dataset the mark knew only by
a key (no name) is carried under that key, which no new load matches. ``history_notes`` gives the sentences
every later certificate prints, so the restart is never hidden.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

from core.corpus.identity import dataset_identity
from core.common.errors import LedgerError, PrivetError
from core.ledger import highwater
from core.ledger.chain import REWITNESS_STAGE, Carried, LedgerFile, check_before_run, default_path
from core.ledger.schema import LEDGER_EVENTS
from core.ledger.store import Ledger
from core.ledger.witness import witness_path

RECOVERY_STAGE = "recovery"  # the stage of the row (dataset LEDGER_EVENTS) that starts a new history
RECOVERY_RUN = "(recovery)"
RECOVERED_STAGE = "carried over (data folder lost)"
LEFTOVER_SUFFIXES = ("", "-journal", "-wal", "-shm")


class EventReader(Protocol):
    """What ``history_notes`` reads: the ledger's rows."""

    def entries(self, dataset_fp: str | None = None) -> list[dict[str, Any]]: ...


@dataclass(frozen=True)
class Recovered:
    """A new history: what the lost ledger had, what was carried over, what was moved aside."""

    lost_rows: int  # entries the lost ledger had, by its high-water mark (0: no mark could be read)
    carried: list[Carried]
    unnamed: list[str]  # datasets the mark knew by key only: carried under that key, which no new load matches
    moved_aside: list[Path]
    problems: list[str]  # what the check found
    mark_problem: str  # why the mark could not be read ("" when it was)


def _check_problems(path: Path) -> list[str]:
    try:
        check_before_run(path)
    except LedgerError as exc:
        return [line.strip()[2:] for line in exc.what.splitlines()[1:] if line.strip().startswith("- ")]
    return []


def _by_name(floors: dict[str, highwater.Floor]) -> dict[str, highwater.Floor]:
    """The mark's floors summed per dataset name (an identity and its old views' fingerprints are one
    dataset); unnamed keys stay as they are. Keys are names here, ``\\0``-prefixed keys for unnamed ones."""
    out: dict[str, highwater.Floor] = {}
    for key, floor in floors.items():
        group = " ".join(floor.name.split()).casefold() if floor.name.strip() else "\0" + key
        was = out.get(group)
        if was is None:
            out[group] = floor
            continue
        caps = [c for c in (was.cap, floor.cap) if c]
        out[group] = highwater.Floor(
            math.fsum((was.rho, floor.rho)), math.fsum((was.delta_part, floor.delta_part)),
            math.fsum((was.run_delta, floor.run_delta)), was.name or floor.name,
            (min(c[0] for c in caps), min(c[1] for c in caps)) if caps else None)
    return out


def _refusal_text(problems: list[str], mark: highwater.HighWater | None, mark_problem: str,
                  groups: dict[str, highwater.Floor]) -> str:
    found = "".join(f"\n  - {p}" for p in problems)
    if mark is None:
        kept = ("No totals kept outside the data folder can be read" + (f" ({mark_problem})" if mark_problem else "")
                + ": the budget spent before cannot be carried over.")
    else:
        named = sorted(f.name for f in groups.values() if f.name)
        unnamed = sum(1 for f in groups.values() if not f.name)
        kept = (f"The lost ledger had {mark.rows} entries. The totals kept outside the data folder are carried over "
                f"by dataset name: {', '.join(repr(n) for n in named) or 'none'}"
                + (f", and {unnamed} dataset(s) known only by key (which no new load can match)" if unnamed else "")
                + ".")
    return ("Recovering starts a new ledger: the old one and its witness are moved aside, its entries are not "
            f"brought back, and every later certificate says so. {kept} Which runs, views and documents the old "
            "budget came from is not carried over: data loaded under another name than before is not matched to it. "
            "The check found:" + found)


def recover_lost_data_folder(acknowledge: bool = False, path: Path | None = None) -> Recovered:
    """Start a new history in place of a lost ledger (see the module docstring); refused (``PrivetError``,
    nothing changed) when the ledger passes its check, and without ``acknowledge``."""
    path = Path(default_path() if path is None else path)
    problems = _check_problems(path)
    if not problems:
        raise PrivetError(
            "The ledger passes its integrity check (or this is a new installation): there is no lost history to recover.",
            "Nothing to do. `privet ledger --check` shows the ledger's state.",
        )
    mark, mark_problem = highwater.read_mark(path)
    groups = _by_name(dict(mark.floors) if mark is not None else {})
    if not acknowledge:
        raise PrivetError(
            _refusal_text(problems, mark, mark_problem, groups),
            "Restore the data folder from a backup if you can (that keeps everything). If it is lost for good, run "
            "`privet ledger --recover-lost-data-folder --acknowledge-lost-history`. If only the witness or the "
            "high-water mark is in question and ledger.db is still here, `privet ledger --rewitness "
            "--acknowledge-unverifiable-history` keeps more.",
        )
    moved = _move_aside(path)
    LedgerFile(path, new_history=True).close()  # the empty new ledger and its witness, despite the old mark
    with Ledger(path) as ledger:
        lost = (f"the ledger that was here had {mark.rows} entries (newest entry {mark.head_seq}, by its high-water "
                "mark kept outside the data folder)" if mark is not None else
                f"no high-water mark of the lost ledger could be read ({mark_problem or 'none was kept'})")
        seq = ledger.record_event(RECOVERY_STAGE, (
            f"new history started after the data folder was lost, acknowledged by the custodian: {lost}; found: "
            + "; ".join(problems) + f"; {sum(1 for f in groups.values() if f.name)} dataset total(s) carried over by "
            "name; which runs, views and documents they came from is not known (content matching is not carried over)"))
        floors: dict[str, highwater.Floor] = {}
        unnamed: list[str] = []
        for group, floor in groups.items():
            if floor.name:
                key = dataset_identity(floor.name, floor.name).key  # the identity the name has under the current key
                ledger.name_dataset(key, floor.name)
            else:
                key = group[1:]
                unnamed.append(key)
            floors[key] = floor
        carried = ledger.carry_floors(floors, run_id=RECOVERY_RUN, stage=RECOVERED_STAGE,
                                      why=f"carried over at the new history's start (ledger entry {seq})")
        ledger.start_new_history_mark()
    return Recovered(mark.rows if mark is not None else 0, carried, sorted(unnamed), moved, problems, mark_problem)


def _move_aside(path: Path) -> list[Path]:
    """Rename what is left of the old ledger and its witness to ``NAME.lost-<UTC time>`` (never deleted)."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    leftovers = [path.with_name(path.name + suffix) for suffix in LEFTOVER_SUFFIXES] + [witness_path(path)]
    moved = []
    for old in leftovers:
        if old.exists():
            new = old.with_name(f"{old.name}.lost-{stamp}")
            old.rename(new)
            moved.append(new)
    return moved


def history_notes(ledger: EventReader) -> list[str]:
    """Sentences for every certificate: each new history started after a lost data folder, and each
    acknowledged re-witnessing, that this installation's ledger records (empty list: none)."""
    notes = []
    for row in ledger.entries(LEDGER_EVENTS):
        when = str(row["created_at"])[:10]
        if row["stage"] == RECOVERY_STAGE:
            notes.append(
                f"This installation's budget ledger was restarted on {when} after its data folder was lost (ledger "
                f"entry {row['seq']}). Budget spent before then is carried over as one total per dataset name, kept "
                "outside the data folder; which runs and which documents it came from is not known, and data loaded "
                "under another dataset name than before is not matched to it.")
        elif row["stage"] == REWITNESS_STAGE:
            notes.append(
                f"On {when} the custodian accepted this installation's budget ledger as it was (re-witnessed, ledger "
                f"entry {row['seq']}); entries it had lost were not brought back, but their budget is carried over "
                "where the totals kept outside the data folder knew it.")
    return notes


def key_replaced_problem(ledger: Ledger) -> str:
    """A sentence when none of the ledger's dataset names has its identity key under the current installation
    key (``installation.key`` was lost or replaced: names now map to new keys, which hold no spend); else ""."""
    named = [(key, name) for name, key in ledger.known_datasets() if name]
    if not named or any(dataset_identity(name, name).key == key for key, name in named):
        return ""
    return ("none of the ledger's datasets is keyed under this installation's key (installation.key was lost or "
            "replaced): their names would now be budgeted afresh")
