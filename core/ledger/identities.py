"""Dataset identities: which budget a loaded view of the data counts against (``docs/reliability.md``).

Datasets are budgeted by *identity* (``core.corpus.identity``): the column ``dataset_fp`` of new rows holds
the identity's budget key, and the table ``views`` maps the fingerprint of every loaded view of the data
(another id column, person column, truncation, a dropped row) to that key, so all views share one budget.
Every method that takes a dataset accepts the identity key or the fingerprint of any view registered under
it (rows of older ledgers, keyed by a fingerprint, count towards its identity). These tables are settings,
outside the hash chain (``core.ledger.chain``).

Each registered view keeps content sketches (``core.corpus.content_sketch``) so that ``core.ledger.booking``
can tell a copy of known data under another name: the table ``sketches`` holds the v1 sketch (whole
documents; the only one older versions wrote, and still written so that they keep working), and the
table ``content_sketches`` (``CONTENT_SCHEMA``, created here, beside the schema of ``core.ledger.schema``)
holds the content sketch (v3: word shingles, character n-grams and document signatures) with its version.
A view with only a v1 sketch, or a v2 one (an older identity form), is compared the v1 way.
"""

from __future__ import annotations

import json
from pathlib import Path

from core.corpus.content_sketch import SHINGLE_VERSION, ContentSketch
from core.common.errors import PrivetError
from core.ledger.chain import LedgerFile
from core.ledger.schema import LEDGER_EVENTS, now

CONTENT_SCHEMA = """
CREATE TABLE IF NOT EXISTS content_sketches (
    fingerprint TEXT PRIMARY KEY,
    dataset_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    sketch TEXT NOT NULL,
    created_at TEXT NOT NULL
);
"""


class DatasetIdentities(LedgerFile):
    """The ledger file with its dataset identities, views and content sketches."""

    def __init__(self, path: Path | None = None) -> None:
        super().__init__(path)
        self.db.conn.executescript(CONTENT_SCHEMA)  # a settings table; added to older ledgers

    def register_view(
        self, dataset_id: str, name: str, fingerprint: str, source: str, dry_run: bool = False,
        sketch: list[int] | None = None, shingles: ContentSketch | None = None,
    ) -> list[str]:
        """Budget the view ``fingerprint`` (loaded from ``source``) under the identity ``dataset_id`` (named ``name``).

        Returns warnings for the custodian's screen. Refuses (``PrivetError``) a fingerprint that is already
        budgeted under another identity: the same data cannot get a fresh budget under a new name.
        ``dry_run``: check and warn only, write nothing (a plan, or a run not yet past its cap check).
        """
        conn = self.db.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            bound = conn.execute("SELECT dataset_id FROM views WHERE fingerprint = ?", [fingerprint]).fetchone()
            if bound and bound[0] != dataset_id:
                other = self.dataset_name(bound[0]) or bound[0][:16]
                raise PrivetError(
                    f"Exactly this data is already budgeted under the dataset name '{other}', not '{name}'.",
                    f"Set [data] dataset_name = \"{other}\" in the run spec (the wizard's dataset name) so that it "
                    "is charged to the budget it already has; the same data cannot get a fresh budget under a new name.",
                )
            others = conn.execute(
                "SELECT DISTINCT dataset_id FROM views WHERE source = ? AND dataset_id != ?", [source, dataset_id]
            ).fetchall()
            warnings = [
                f"The file or folder {source} was loaded before under the dataset name "
                f"'{self.dataset_name(row[0]) or row[0][:16]}'; it is now budgeted separately as '{name}'. If it holds "
                "the same people or documents, use the earlier name so that both share one budget."
                for row in others
            ]
            conn.execute("INSERT OR IGNORE INTO datasets (dataset_id, name, created_at) VALUES (?, ?, ?)",
                         [dataset_id, name, now()])
            conn.execute("INSERT OR IGNORE INTO views (fingerprint, dataset_id, source, created_at) VALUES (?, ?, ?, ?)",
                         [fingerprint, dataset_id, source, now()])
            if sketch:
                conn.execute("INSERT OR IGNORE INTO sketches (fingerprint, dataset_id, sketch) VALUES (?, ?, ?)",
                             [fingerprint, dataset_id, json.dumps(sketch)])
            if shingles is not None and shingles.hashes:
                conn.execute("INSERT OR IGNORE INTO content_sketches (fingerprint, dataset_id, version, sketch, "
                             "created_at) VALUES (?, ?, ?, ?, ?)",
                             [fingerprint, dataset_id, shingles.version, shingles.to_json(), now()])
            conn.execute("ROLLBACK" if dry_run else "COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return warnings

    def name_dataset(self, dataset_id: str, name: str) -> None:
        """Record that ``dataset_id`` is the identity named ``name`` (a cap set before its first run)."""
        self.db.execute("INSERT OR IGNORE INTO datasets (dataset_id, name, created_at) VALUES (?, ?, ?)",
                        [dataset_id, name, now()])

    def shingle_sketches(self) -> list[tuple[str, ContentSketch]]:
        """``(dataset_id, content sketch)`` of every view registered with one of the version this code reads
        (``SHINGLE_VERSION``; a v2 sketch was made with an older identity form and is not comparable)."""
        rows = self.db.execute("SELECT dataset_id, sketch FROM content_sketches WHERE version = ?",
                               [SHINGLE_VERSION]).fetchall()
        return [(str(r[0]), ContentSketch.from_json(r[1])) for r in rows]

    def document_sketches(self) -> list[tuple[str, list[int]]]:
        """``(dataset_id, v1 sketch)`` of the views that have no content sketch of the current version
        (registered by older versions): they are compared by whole documents."""
        rows = self.db.execute(
            "SELECT dataset_id, sketch FROM sketches WHERE fingerprint NOT IN "
            "(SELECT fingerprint FROM content_sketches WHERE version = ?)", [SHINGLE_VERSION]).fetchall()
        return [(str(r[0]), json.loads(r[1])) for r in rows]

    def has_sketch(self, dataset_id: str) -> bool:
        """Whether a view of ``dataset_id`` was registered with a content sketch (so its text can be compared)."""
        key = self.dataset_key(dataset_id)
        return any(self.db.execute(f"SELECT 1 FROM {table} WHERE dataset_id = ? LIMIT 1", [key]).fetchone()
                   for table in ("sketches", "content_sketches"))

    def has_views(self, dataset_id: str) -> bool:
        """Whether any loaded data are registered under ``dataset_id`` (False: named, e.g. capped, but never run)."""
        key = self.dataset_key(dataset_id)
        return self.db.execute("SELECT 1 FROM views WHERE dataset_id = ? LIMIT 1", [key]).fetchone() is not None

    def datasets_without_views(self) -> list[tuple[str, str]]:
        """``(identity key, name)`` of the datasets that were named (a cap set with --new-dataset) but have
        no data registered yet."""
        rows = self.db.execute(
            "SELECT dataset_id, name FROM datasets WHERE dataset_id NOT IN (SELECT dataset_id FROM views) "
            "ORDER BY created_at").fetchall()
        return [(str(r[0]), str(r[1])) for r in rows]

    def identity_of_name(self, name: str) -> str | None:
        """The identity key of a dataset registered under ``name`` (case and spacing ignored); ``None`` if none."""
        wanted = " ".join(name.split()).casefold()
        for dataset_id, known in self.db.execute("SELECT dataset_id, name FROM datasets"):
            if " ".join(str(known).split()).casefold() == wanted:
                return str(dataset_id)
        return None

    def known_datasets(self) -> list[tuple[str, str]]:
        """``(name, identity key)`` of every registered dataset, by name; plus unnamed keys that hold rows."""
        named = {str(r[0]): str(r[1]) for r in self.db.execute("SELECT dataset_id, name FROM datasets")}
        out = sorted(((name, key) for key, name in named.items()), key=lambda p: p[0].casefold())
        out += [("", key) for key in self.datasets() if key not in named]
        return out

    def resolve_dataset(self, text: str) -> str:
        """The identity key of the dataset ``text`` names (its name, key, a view's fingerprint, or a unique
        prefix of a key); refuses (``PrivetError``, listing the known datasets) anything else."""
        if text in {key for _name, key in self.known_datasets()} or self.dataset_key(text) != text:
            return self.dataset_key(text)
        by_name = self.identity_of_name(text)
        if by_name is not None:
            return by_name
        matches = sorted({key for _name, key in self.known_datasets() if key.startswith(text)}) if len(text) >= 4 else []
        if len(matches) == 1:
            return matches[0]
        known = self.known_datasets()
        listed = "; ".join(f"'{name}' ({key[:12]})" if name else key[:12] for name, key in known) or "none yet"
        if len(matches) > 1:
            raise PrivetError(f"'{text}' matches {len(matches)} datasets.", f"Give more characters. Known datasets: {listed}.")
        raise PrivetError(
            f"No dataset named '{text}' is known to this ledger, so a cap set on it would protect nothing.",
            f"Give the name (or key) of a known dataset: {listed}. To cap data that has never been run, give "
            "the dataset name its run spec will use ([data] dataset_name, else the file name) and add --new-dataset.",
        )

    def dataset_key(self, dataset: str) -> str:
        """The budget key of ``dataset``: an identity key, or the fingerprint of a view registered under one."""
        row = self.db.execute("SELECT dataset_id FROM views WHERE fingerprint = ?", [dataset]).fetchone()
        return row[0] if row else dataset

    def dataset_name(self, dataset: str) -> str | None:
        """The name a dataset (identity key or view fingerprint) is budgeted under; ``None`` if unknown."""
        row = self.db.execute("SELECT name FROM datasets WHERE dataset_id = ?", [self.dataset_key(dataset)]).fetchone()
        return row[0] if row else None

    def _keys(self, dataset: str) -> list[str]:
        """The identity key and the fingerprints of its views (rows of older ledgers are keyed by these)."""
        key = self.dataset_key(dataset)
        views = [r[0] for r in self.db.execute("SELECT fingerprint FROM views WHERE dataset_id = ?", [key])]
        return [key, *views]


    def datasets(self) -> list[str]:
        rows = self.db.execute("SELECT DISTINCT dataset_fp FROM charges ORDER BY dataset_fp").fetchall()
        return sorted({self.dataset_key(r[0]) for r in rows} - {LEDGER_EVENTS})

