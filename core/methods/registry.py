"""The methods a run spec can name, behind one small adapter each.

Every method is registered once, in ``core.specs.method_catalogue`` (its key, names, adapter and scope);
this module loads the adapter a run asks for. An adapter plans a spec (budget split, derived
parameters), builds the token sampler, runs the method on a corpus, and describes its stages for the
privacy record. ``core.run.pipeline`` does everything else (ledger, run folder, models, export) the same
way for every method.
"""

from __future__ import annotations

from importlib import import_module

from core.specs import method_catalogue
from core.common.errors import PrivetError
from core.methods.base import Method


def names() -> tuple[str, ...]:
    """The method names a run spec can use (``core.specs.method_catalogue.names``)."""
    return method_catalogue.names()


def get(name: str) -> Method:
    """A fresh adapter of the method ``name`` (its module is imported on first use)."""
    entry = method_catalogue.entry(name)
    if entry is None:
        raise PrivetError(f"Unknown method {name!r}.", f"Choose one of: {', '.join(names())}.")
    module, cls = entry.adapter.split(":")
    adapter: Method = getattr(import_module(module), cls)()
    return adapter
