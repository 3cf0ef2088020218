"""The dataset identity: the one name under which a source is budgeted, whatever view of it is loaded.

A dataset *fingerprint* (fingerprint.py) names one exact list of units. Choosing an id or person
column, another ``max_unit_chars`` or dropping one row changes it, so a budget keyed on the
fingerprint alone can be walked around. The ledger therefore keys spend on the *identity*: a name
the custodian gives the source once (``[data] dataset_name`` in the run spec), or by default the
source's file or folder name. Every view (fingerprint) loaded under that name is budgeted together,
and each release records its own fingerprint.

The budget key is HMAC-SHA256 of the normalised name under the installation's secret, so neither
the ledger key nor a certificate reveals a file name. The name itself is exported only when the
custodian chose it (``chosen``); a default derived from the file name stays on this machine.

A name does not make data the same (``core.ledger.booking``): a *different* file that happens to have
the default name of a known dataset gets an identity of its own (``separate_identity``), keyed by the
name and the view's fingerprint, and listed under the name with a number ("notes.csv (2)").
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from pathlib import Path

from core.common.errors import PrivetError
from core.install.installation import installation_secret

FORMAT_TAG = b"privet/dataset-identity/v1\n"
DATA_SUFFIXES = (".csv", ".tsv", ".jsonl", ".json", ".txt", ".md")
SEPARATE_TAG = b"privet/dataset-identity/separate/v1\n"


@dataclass(frozen=True)
class DatasetIdentity:
    key: str  # the ledger's budget key: keyed hash of the normalised name
    name: str  # the custodian's name, or the source's file/folder name
    chosen: bool  # True when the custodian named it; only then may the name be exported


def normalise_name(name: str) -> str:
    """Names that differ only in case or spacing are the same dataset."""
    return " ".join(name.split()).casefold()


def name_stem(name: str) -> str:
    """A dataset name without the extension of a file Privet loads: "notes.csv" and "notes.jsonl" are
    both "notes" (case and spacing ignored)."""
    path = Path(name)
    stem = path.stem if path.suffix.lower() in DATA_SUFFIXES else name
    return normalise_name(stem)


def default_dataset_name(source: str) -> str:
    """The source's file or folder name (not its full path): moving the file keeps its budget."""
    path = Path(source)
    return path.name or path.resolve().name


def dataset_identity(dataset_name: str, source: str, *, key: bytes | None = None) -> DatasetIdentity:
    """The identity for a run spec's ``[data] dataset_name`` (empty: the default from ``source``)."""
    chosen = bool(dataset_name.strip())
    name = " ".join(dataset_name.split()) if chosen else default_dataset_name(source)
    if not normalise_name(name):
        raise PrivetError("The data has no name to budget it under.", "Set [data] dataset_name in the run spec.")
    mac = hmac.new(installation_secret() if key is None else key, digestmod=hashlib.sha256)
    mac.update(FORMAT_TAG + normalise_name(name).encode("utf-8"))
    return DatasetIdentity(key=mac.hexdigest(), name=name, chosen=chosen)


def separate_identity(name: str, fingerprint: str, shown: str, *, key: bytes | None = None) -> DatasetIdentity:
    """The identity of data loaded under the default ``name`` of a known dataset whose documents they do not
    share: keyed by the name and the view's ``fingerprint``, listed as ``shown`` (e.g. "notes.csv (2)")."""
    mac = hmac.new(installation_secret() if key is None else key, digestmod=hashlib.sha256)
    mac.update(SEPARATE_TAG + normalise_name(name).encode("utf-8") + b"\n" + fingerprint.encode("ascii"))
    return DatasetIdentity(key=mac.hexdigest(), name=shown, chosen=False)
