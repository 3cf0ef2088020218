"""The privacy-budget ledger: what has been spent on each dataset, kept so that it cannot be rewritten.

* ``core.ledger.store`` — ``Ledger``: charges (before a stage draws), releases, caps and reservations;
* ``core.ledger.identities`` — which dataset identity a loaded view counts against;
* ``core.ledger.booking`` — which dataset a run is booked under (the answer plan, wizard and run share);
* ``core.ledger.chain`` — the append-only hash-chained table, its integrity checks, ``check_before_run``;
* ``core.ledger.witness`` / ``core.ledger.highwater`` — the ledger's head kept beside the database and
  outside the data folder, sealed with the installation key (``core.ledger.seal``);
* ``core.ledger.view`` — what a dataset or a run has spent, as the desktop and the CLI show it;
* ``core.ledger.schema`` — the tables and the row hash.
"""

from core.ledger.chain import check_before_run
from core.ledger.store import Ledger

__all__ = ["Ledger", "check_before_run"]
