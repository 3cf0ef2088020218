"""Where Privet keeps its files: packaged resources, packaged models and the per-user data folder.

Every lookup of a shipped file goes through this module, so the source tree, an installed wheel and
the self-contained bundle (PyInstaller one-folder build, see ``installer/README.md``) behave the same.
In the bundle, ``sys.frozen`` is set and ``sys._MEIPASS`` is the bundle's internal folder, laid out as::

    _MEIPASS/resources/        the resources package (prompts, vocabularies, demo data, icons, templates)
    _MEIPASS/models/<package>/  the packaged model files, copied out of their pip packages
    _MEIPASS/bundle.json        the bundle's version, commit and content hash (core.install.bundle)
"""

from __future__ import annotations

import os
import sys
from importlib import resources as _res
from pathlib import Path

from core.common.private_files import private_folder

BUNDLE_MODELS = "models"


def bundle_dir() -> Path | None:
    """The bundle's internal folder when running frozen (PyInstaller), else ``None``."""
    if not getattr(sys, "frozen", False):
        return None
    meipass = getattr(sys, "_MEIPASS", None)
    return Path(meipass) if meipass else Path(sys.executable).resolve().parent


def resources_dir() -> Path:
    """The shipped ``resources/`` folder (prompts, word lists, demo data, icons, templates)."""
    bundle = bundle_dir()
    if bundle is not None:
        return bundle / "resources"
    return Path(str(_res.files("resources")))


def packaged_model_dir(package: str) -> Path | None:
    """In the bundle: the folder holding the files of a packaged model's pip package, else ``None``.

    From source, packaged models are located through their installed pip packages (core.models.sources).
    """
    bundle = bundle_dir()
    return None if bundle is None else bundle / BUNDLE_MODELS / package


def data_location() -> Path:
    """Where the per-user data folder is, without creating it (``data_dir`` creates it).

    ``PRIVET_HOME`` overrides it (tests point it at a temporary folder); else
    ``$XDG_DATA_HOME/privet`` (``~/.local/share/privet``).
    """
    env = os.environ.get("PRIVET_HOME")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_DATA_HOME")
    return (Path(xdg) if xdg else Path.home() / ".local" / "share") / "privet"


def data_dir() -> Path:
    """Per-user data folder: ledger, installation key, converted-model cache (``data_location``).

    It is created, or tightened, to mode 0700: it holds the ledger, keys and private run folders.
    No export may write into it, contain it or replace it (``core.run.export.refuse_protected_output``).
    """
    return private_folder(data_location())


def cache_dir() -> Path:
    return private_folder(data_dir() / "cache")
