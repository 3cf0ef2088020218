"""Private folders and files: folders 0700, files 0600, whatever the process umask.

The data folder holds the ledger, keys and run folders (full spec, noisy statistics, synthetic
texts, RPSG's non-DP rewrites, the custodian's PII lists): nobody but the user may read them.
Modes are set explicitly at creation (and tightened if an existing entry is looser), so a
permissive umask (022) cannot leave them world-readable. On Windows the modes are not
meaningful and only the user-profile ACLs apply.
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path
import contextlib

FOLDER_MODE = 0o700
FILE_MODE = 0o600


def _tighten(path: Path, mode: int) -> None:
    if os.name == "posix" and stat.S_IMODE(path.stat().st_mode) != mode:
        path.chmod(mode)


def private_folder(path: Path) -> Path:
    """Create ``path`` (and missing parents) with mode 0700; tighten ``path`` itself if looser."""
    path = Path(path)
    missing = []
    probe = path
    while not probe.exists() and probe != probe.parent:
        missing.append(probe)
        probe = probe.parent
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):
            folder.mkdir(mode=FOLDER_MODE)
        _tighten(folder, FOLDER_MODE)
    _tighten(path, FOLDER_MODE)
    return path


def private_file(path: Path) -> Path:
    """Tighten an existing file to 0600 (for files a library created, e.g. SQLite)."""
    _tighten(Path(path), FILE_MODE)
    return Path(path)


def touch_private(path: Path) -> Path:
    """Create ``path`` empty with mode 0600 if it does not exist, then make sure it is 0600."""
    path = Path(path)
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE))
    return private_file(path)


def write_private(path: Path, data: str | bytes, encoding: str = "utf-8") -> Path:
    """Write ``data`` atomically (temporary 0600 file, fsync, rename) so no reader sees half a file."""
    path = Path(path)
    payload = data.encode(encoding) if isinstance(data, str) else data
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return private_file(path)
