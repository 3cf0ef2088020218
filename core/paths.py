"""Where Privet keeps its files: packaged resources and the per-user data folder."""

from __future__ import annotations

import os
from importlib import resources as _res
from pathlib import Path


def resources_dir() -> Path:
    """The shipped ``resources/`` folder (prompts, word lists, demo data, templates)."""
    return Path(str(_res.files("resources")))


def data_dir() -> Path:
    """Per-user data folder: ledger, installation key, converted-model cache.

    ``PRIVET_HOME`` overrides it (tests point it at a temporary folder). It is created, or
    tightened, to mode 0700: it holds the ledger, keys and private run folders.
    """
    env = os.environ.get("PRIVET_HOME")
    if env:
        base = Path(env)
    else:
        xdg = os.environ.get("XDG_DATA_HOME")
        base = (Path(xdg) if xdg else Path.home() / ".local" / "share") / "privet"
    from core.private_files import private_folder

    return private_folder(base)


def cache_dir() -> Path:
    from core.private_files import private_folder

    return private_folder(data_dir() / "cache")
