"""The methods a run spec can name, behind one small adapter each.

An adapter plans a spec (budget split, derived parameters), builds the token sampler, runs
the method on a corpus, and describes its stages for the privacy record. ``core.pipeline``
does everything else (ledger, run folder, models, export) the same way for every method.
"""

from __future__ import annotations

from core.errors import PrivetError
from core.methods.aug_pe import AugPEMethod
from core.methods.base import Method
from core.methods.dp_synrag.method import DPSynRAGMethod
from core.methods.dp_synth import DPSynthMethod
from core.methods.rpsg.method import RPSGMethod

_METHODS: dict[str, type[Method]] = {
    "dp_synrag": DPSynRAGMethod, "dp_synth": DPSynthMethod, "rpsg": RPSGMethod, "aug_pe": AugPEMethod,
}


def names() -> tuple[str, ...]:
    """The method names a run spec can use (``core.runspec.METHOD_NAMES`` lists the same)."""
    return tuple(sorted(_METHODS))


def get(name: str) -> Method:
    if name not in _METHODS:
        raise PrivetError(f"Unknown method {name!r}.", f"Choose one of: {', '.join(names())}.")
    return _METHODS[name]()
