"""The per-installation secret: 32 random bytes kept in the user's data folder (mode 0600).

It keys the dataset fingerprint, so a certificate can name a dataset without letting
anyone else test a guess of its content. It is created on first use and never replaced:
a damaged key file is reported, because a new key would change every fingerprint.
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

from core.common.errors import PrivetError
from core.common.paths import data_dir

KEY_BYTES = 32
KEY_FILE = "installation.key"


def installation_secret() -> bytes:
    """The installation's 32-byte secret, created (atomically, 0600) if it does not exist yet."""
    path = data_dir() / KEY_FILE
    if not path.exists():
        _create(path)
    return _read(path)


def _create(path: Path) -> None:
    """Write a fresh key to a private temporary file, then link it into place unless another process won."""
    tmp = path.with_name(f".{KEY_FILE}.{secrets.token_hex(8)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(secrets.token_bytes(KEY_BYTES))
            handle.flush()
            os.fsync(handle.fileno())
        os.link(tmp, path)
    except FileExistsError:
        pass  # created concurrently: keep the existing key
    finally:
        tmp.unlink(missing_ok=True)


def _read(path: Path) -> bytes:
    if os.name == "posix" and stat.S_IMODE(path.stat().st_mode) & 0o077:
        path.chmod(0o600)
    key = path.read_bytes()
    if len(key) != KEY_BYTES:
        raise PrivetError(
            f"The installation key {path} is damaged ({len(key)} bytes instead of {KEY_BYTES}).",
            "Restore it from a backup. Deleting it creates a new key, and dataset fingerprints "
            "in earlier certificates will no longer match this installation.",
        )
    return key
