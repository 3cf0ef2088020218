"""Which Privet wrote a run: the source commit (git, or the bundle's) and the desktop bundle's identity."""

from __future__ import annotations

import subprocess
from pathlib import Path

from core.install.bundle import bundle_info


def bundle_identity() -> dict[str, str]:
    """The frozen bundle's identity (``core.install.bundle``), or ``{}`` when run from source."""
    info = bundle_info()
    return {} if info is None else info.to_dict()


def source_root() -> Path:
    """The folder of this source checkout (the git work tree when run from source)."""
    return Path(__file__).resolve().parents[2]


def git_commit() -> str:
    """The short commit of the source tree, the bundle's commit when frozen, or '' when neither is known."""
    info = bundle_info()
    if info is not None:  # frozen: no source tree to ask git; the commit the bundle was built from
        return info.commit
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=Path(__file__).resolve().parent,
            capture_output=True,
            text=True,
            timeout=5,
        )
        return out.stdout.strip() if out.returncode == 0 else ""
    except (OSError, subprocess.SubprocessError):
        return ""
