"""Private corpus loading: units, a load report without text, and a keyed dataset fingerprint."""

from core.corpus.fingerprint import dataset_fingerprint
from core.corpus.identity import DatasetIdentity, dataset_identity
from core.corpus.loader import list_columns, load_corpus
from core.corpus.model import Corpus, LengthSummary, LoadReport, Unit

__all__ = [
    "Corpus",
    "DatasetIdentity",
    "LengthSummary",
    "LoadReport",
    "Unit",
    "dataset_fingerprint",
    "dataset_identity",
    "list_columns",
    "load_corpus",
]
