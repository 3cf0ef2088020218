"""The installation's Ed25519 signing key: created once, kept in the OS keyring or an encrypted file.

Where the key lives (stated in every certificate as ``key_storage``):

- ``PRIVET_KEYRING=memory`` (tests only): an in-memory keyring, one per Privet data folder, gone when
  the process ends.
- an operating-system keyring (macOS Keychain, Windows Credential Locker, Secret Service, KWallet)
  when ``keyring`` finds one. Plain-text or null backends (``keyrings.alt`` file keyrings, the
  "fail" backend of a headless Linux box) are not trusted.
- otherwise an encrypted PKCS#8 key file ``signing_key.pem`` in the data folder (0600), encrypted with
  ``BestAvailableEncryption``. The passphrase is ``PRIVET_KEY_PASSPHRASE`` when set. If it is not set,
  a random passphrase is generated and kept in ``signing_key.passphrase`` (0600) beside it: the key is
  then only as safe as the user account's file permissions, and the certificate says exactly that.
  ``PRIVET_KEYRING=file`` forces this fallback.
"""

from __future__ import annotations

import base64
import hashlib
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

import keyring
import keyring.backend
import keyring.errors
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from core.common.errors import PrivetError
from core.common.paths import data_dir

SERVICE = "privet"
USERNAME = "certificate-signing-key-ed25519"
KEY_FILE = "signing_key.pem"
PASSPHRASE_FILE = "signing_key.passphrase"
PASSPHRASE_ENV = "PRIVET_KEY_PASSPHRASE"
UNTRUSTED_BACKEND_MODULES = ("keyring.backends.fail", "keyring.backends.null", "keyrings.alt")


class MemoryKeyring(keyring.backend.KeyringBackend):
    """A keyring that lives in this process only (tests: ``PRIVET_KEYRING=memory``)."""

    priority = 0  # never chosen automatically

    def __init__(self) -> None:
        super().__init__()
        self._store: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self._store.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self._store[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        self._store.pop((service, username), None)


_MEMORY_KEYRINGS: dict[str, MemoryKeyring] = {}  # per data folder; only used when PRIVET_KEYRING=memory


@dataclass
class SigningKey:
    private_key: Ed25519PrivateKey
    storage: str  # where the key is kept, in words (goes into the certificate)

    @property
    def public_key(self) -> Ed25519PublicKey:
        return self.private_key.public_key()

    def sign(self, message: bytes) -> bytes:
        return self.private_key.sign(message)


# ---------------------------------------------------------------- public-key helpers
def public_key_pem(public_key: Ed25519PublicKey) -> str:
    return public_key.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    ).decode("ascii")


def export_public_key(path: Path) -> str:
    """Write this installation's public signing key (PEM) to ``path`` for the IRB; returns its fingerprint.
    ``privet keys export-public`` and the desktop's Settings both call this."""
    key = load_signing_key()
    Path(path).write_text(public_key_pem(key.public_key), encoding="ascii")
    return public_key_fingerprint(key.public_key)


def public_key_fingerprint(public_key: Ed25519PublicKey) -> str:
    """``SHA256:<hex>`` of the raw 32-byte public key."""
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return "SHA256:" + hashlib.sha256(raw).hexdigest()


def load_public_key_pem(data: bytes | str) -> Ed25519PublicKey:
    if isinstance(data, str):
        data = data.encode("ascii", errors="replace")
    try:
        key = serialization.load_pem_public_key(data)
    except (ValueError, TypeError):
        raise PrivetError("The public key is not a valid PEM file.", "Use the public_key.pem Privet exported.") from None
    if not isinstance(key, Ed25519PublicKey):
        raise PrivetError("The public key is not an Ed25519 key.", "Use the public_key.pem Privet exported.")
    return key


def verify_bytes(public_key: Ed25519PublicKey, signature: bytes, message: bytes) -> bool:
    try:
        public_key.verify(signature, message)
    except InvalidSignature:
        return False
    return True


def b64encode(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


# ---------------------------------------------------------------- key storage
def _trusted_keyring(backend: keyring.backend.KeyringBackend) -> bool:
    """True for a real OS keyring; False for null, fail and plain-text file backends."""
    inner = getattr(backend, "backends", None)  # keyring's ChainerBackend
    if inner is not None:
        return any(_trusted_keyring(b) for b in inner)
    module = type(backend).__module__
    if module.startswith(UNTRUSTED_BACKEND_MODULES):
        return False
    try:
        return float(backend.priority) > 0
    except Exception:  # a backend whose priority check fails is not usable
        return False


def _write_private_file(path: Path, data: bytes) -> None:
    fd = os.open(str(path), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    os.chmod(path, 0o600)


def _raw(private_key: Ed25519PrivateKey) -> bytes:
    return private_key.private_bytes(
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
    )


def _from_keyring(backend: keyring.backend.KeyringBackend, storage: str) -> SigningKey:
    stored = backend.get_password(SERVICE, USERNAME)
    if stored:
        key = Ed25519PrivateKey.from_private_bytes(base64.b64decode(stored))
    else:
        key = Ed25519PrivateKey.generate()
        backend.set_password(SERVICE, USERNAME, b64encode(_raw(key)))
    return SigningKey(key, storage)


def _file_passphrase(folder: Path, creating: bool) -> tuple[bytes, str]:
    env = os.environ.get(PASSPHRASE_ENV)
    if env:
        return env.encode("utf-8"), (
            f"encrypted key file ({KEY_FILE}, permissions 0600; no OS keyring available), "
            f"passphrase supplied by the user in {PASSPHRASE_ENV}"
        )
    path = folder / PASSPHRASE_FILE
    if not path.exists():
        if not creating:
            raise PrivetError(
                f"The signing key file {folder / KEY_FILE} is encrypted but no passphrase was given.",
                f"Set {PASSPHRASE_ENV} to the passphrase used when the key was created.",
            )
        _write_private_file(path, secrets.token_urlsafe(32).encode("ascii"))
    return path.read_bytes().strip(), (
        f"encrypted key file ({KEY_FILE}, permissions 0600; no OS keyring available) whose generated "
        f"passphrase is stored beside it ({PASSPHRASE_FILE}, 0600): the key is protected only by the "
        "user account's file permissions"
    )


def _from_file(folder: Path) -> SigningKey:
    path = folder / KEY_FILE
    if path.exists():
        passphrase, storage = _file_passphrase(folder, creating=False)
        try:
            key = serialization.load_pem_private_key(path.read_bytes(), password=passphrase)
        except (ValueError, TypeError):
            raise PrivetError(
                f"The signing key file {path} could not be opened with the passphrase given.",
                f"Set {PASSPHRASE_ENV} to the passphrase used when the key was created.",
            ) from None
        if not isinstance(key, Ed25519PrivateKey):
            raise PrivetError(f"{path} does not hold an Ed25519 key.", "Move it away; Privet will create a new key.")
        return SigningKey(key, storage)
    passphrase, storage = _file_passphrase(folder, creating=True)
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(passphrase),
    )
    _write_private_file(path, pem)
    return SigningKey(key, storage)


def load_signing_key() -> SigningKey:
    """The installation's signing key, created on first use (see the module docstring for where)."""
    folder = data_dir()
    mode = os.environ.get("PRIVET_KEYRING", "").strip().lower()
    if mode == "memory":
        backend = _MEMORY_KEYRINGS.setdefault(str(folder.resolve()), MemoryKeyring())
        return _from_keyring(backend, "in-memory keyring (test mode: the key is discarded when the process ends)")
    if mode != "file" and not (folder / KEY_FILE).exists():
        backend = keyring.get_keyring()
        if _trusted_keyring(backend):
            try:
                return _from_keyring(backend, f"operating-system keyring ({type(backend).__name__})")
            except keyring.errors.KeyringError:
                pass  # e.g. a locked or unreachable Secret Service: use the encrypted file
    return _from_file(folder)
