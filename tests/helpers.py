"""Shared test helpers: tiny corpora of notes and tiny run specs on the tiny random models.

``write_notes`` writes the CSV most tests read (``id``, a person column, ``note``), with a planted canary
name in row 7 by default; ``tiny_spec`` builds a DP-SynRAG run spec over it with the small sizes the
tests use (``TINY_DP_SYNRAG``). Each test file passes its own note text or settings where it needs them.
The desktop tests load ``wizard_notes`` into ``tiny_controller()`` (the ``wizard`` fixture of conftest.py).
``statistical`` marks a statistical test of a mechanism whose noise comes from OS entropy.
"""

from __future__ import annotations

import csv
import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from core.specs.runspec import ModelChoice, RunSpec
from core.specs.document import DOCUMENT_SETTINGS
from core.specs.writing import SHARED_SETTINGS

if TYPE_CHECKING:
    from desktop.controller import WizardController

ROOT = Path(__file__).resolve().parents[1]  # the repository (tests/ is one folder below it)
TINY = ModelChoice(source="tiny-random")
CANARY = "Zqxvortimer Blandquist-7731"
DISEASES = ("fever", "cough", "rash", "headache")
NOTE = "{name} came in with {disease} and was treated with rest and water."
# The small DP-SynRAG sizes of the tiny runs (docs/method.md §2: K clusters, R documents, L refinement
# samples, k retrieved units, T tokens).
# documents = 0: one per topic, so that the tiny runs of the mechanics draw no size count for the automatic number of
# documents (the default, tested in tests/methods/dp_synrag/test_corpus_shape.py)
TINY_SIZES = {"K": 4, "R": 5, "L": 2, "k": 5, "T": 6, "self_filter": False, "max_prompt_tokens": 64, "documents": 0}
# The tiny runs keep the seed's token stage (text = "private"; the library default is "realised") so that the
# accounting, resume and canary tests exercise private prediction.
TINY_DP_SYNRAG = {**TINY_SIZES, "topic_words": "frequent", "refine": True, "text": "private"}



def statistical(test: Callable[..., Any]) -> Callable[..., Any]:
    """A statistical test of a mechanism drawn from OS entropy: it fails only when two independent draws
    both reject. Each check rejects a correct law with probability p (1e-3 or 1e-4), so one run of the
    suite's dozen checks would fail a correct mechanism about 1 % of the time; redrawn once, that is p²
    per check, while a wrong law (which rejects every draw at these sample sizes) still fails."""

    @functools.wraps(test)
    def redrawn_once(*args: Any, **kwargs: Any) -> Any:
        try:
            return test(*args, **kwargs)
        except AssertionError:
            return test(*args, **kwargs)

    return pytest.mark.statistical(redrawn_once)


def canary_at_7(canary: str = CANARY) -> Callable[[int], str]:
    """Row names: ``canary`` in row 7, ``Patient i`` elsewhere."""
    return lambda i: canary if i == 7 else f"Patient {i}"


def write_notes(folder: Path, n: int = 40, note: str = NOTE, name: Callable[[int], str] | None = None,
                file_name: str = "notes.csv", person: str | None = "patient") -> Path:
    """``folder/file_name``: ``n`` rows ``id, person, note``; ``note`` is formatted with the row's
    ``name`` (default ``canary_at_7()``), ``disease`` and index ``i``. ``person`` ``None``: no person column."""
    path = Path(folder) / file_name
    name_of = name or canary_at_7()
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["id", "note"] if person is None else ["id", person, "note"])
        for i in range(n):
            who = name_of(i)
            text = note.format(name=who, disease=DISEASES[i % 4], i=i)
            writer.writerow([f"n{i}", text] if person is None else [f"n{i}", who, text])
    return path


def set_settings(spec: RunSpec, settings: dict[str, object]) -> None:
    """Set DP-SynRAG's settings by name: each in ``[dp_synrag]``, or in the shared section that holds it: ``[writing]``
    (``max_prompt_tokens``, ``batch_rows``, ``memory_budget_mb``) or ``[document]`` (``document_form``,
    ``public_example``)."""
    for key, value in settings.items():
        section = (spec.writing if key in SHARED_SETTINGS else spec.document if key in DOCUMENT_SETTINGS
                   else spec.dp_synrag)
        if not hasattr(section, key):
            raise AttributeError(f"no setting {key!r} in [dp_synrag], [writing] or [document]")
        setattr(section, key, value)


def tiny_spec(tmp_path: Path, corpus: Path | None = None, settings: dict[str, object] | None = None,
              release: str | None = "release", **dp: object) -> RunSpec:
    """A DP-SynRAG run spec on the tiny random models over ``corpus`` (default: ``write_notes(tmp_path)``).

    ``settings`` (default ``TINY_DP_SYNRAG``) and then ``dp`` set ``[dp_synrag]`` (and ``[writing]``, for the
    settings every method shares: ``set_settings``); the release goes to
    ``tmp_path/release`` (``release`` ``None``: the spec's default, the run folder only).
    """
    spec = RunSpec()
    spec.data.path = str(corpus if corpus is not None else write_notes(tmp_path))
    spec.data.text_column = "note"
    spec.data.id_column = "id"
    spec.llm = TINY
    spec.embedder = TINY
    set_settings(spec, {**(TINY_DP_SYNRAG if settings is None else settings), **dp})
    if release is not None:
        spec.output.folder = str(tmp_path / release)
    return spec


class FakeKeyring:
    """A trusted in-memory OS keyring (``highwater.keyring_backend`` is monkeypatched to return one)."""

    priority = 5

    def __init__(self) -> None:
        self.store: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, name: str) -> str | None:
        return self.store.get((service, name))

    def set_password(self, service: str, name: str, value: str) -> None:
        self.store[(service, name)] = value


# -- the desktop tests ----------------------------------------------------------------------------------

WIZARD_NAMES = ("Alma Fenwick", "Borislav Quint", "Carys Odell", "Dorian Plaskett")


def wizard_notes(folder: Path, n: int = 40) -> Path:
    """The wizard tests' notes: four named patients, then ``Patient i``."""
    return write_notes(folder, n, note="{name} came in with {disease} and was sent home to rest.",
                       name=lambda i: WIZARD_NAMES[i % 4] if i < 4 else f"Patient {i}")


def tiny_controller() -> WizardController:
    """The wizard's controller on the tiny random models with the tiny DP-SynRAG sizes."""
    from desktop.controller import WizardController

    controller = WizardController()
    controller.spec.llm = TINY
    controller.spec.embedder = TINY
    # the wizard keeps the library's default way of writing (realised)
    set_settings(controller.spec, {key: value for key, value in TINY_DP_SYNRAG.items() if key != "text"})
    return controller
