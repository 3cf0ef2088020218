"""Sign a certificate and verify an export folder against it.

``certificate.json`` = ``{"certificate": {...}, "signature": {"algorithm": "Ed25519",
"public_key_fingerprint": ..., "public_key_pem": ..., "value": base64}}``; the signature is over the
RFC 8785 canonical JSON of the ``certificate`` object.

An export folder verifies when: the signature is valid (under the key given by the IRB, or else the
embedded one), every file listed under ``outputs`` and ``renderings`` has the listed size and SHA-256,
``public_key.pem`` is the signing key, and the folder holds nothing else (but the release marker
``.privet-release``, which says Privet wrote the folder: ``core.run.export``).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import rfc8785

from core.certificate.signing import (
    SigningKey,
    b64encode,
    load_public_key_pem,
    public_key_fingerprint,
    public_key_pem,
    verify_bytes,
)
from core.common.errors import PrivetError

CERTIFICATE_FILE = "certificate.json"
PUBLIC_KEY_FILE = "public_key.pem"
RELEASE_MARKER = ".privet-release"  # written by every export; only a folder holding it may be overwritten (core.run.export)


def canonical_bytes(certificate: dict[str, Any]) -> bytes:
    """RFC 8785 canonical JSON of the certificate (what is signed)."""
    try:
        return rfc8785.dumps(certificate)
    except Exception as exc:  # rfc8785 refuses NaN, infinities and oversized integers
        raise PrivetError(
            f"The certificate cannot be written as canonical JSON ({exc}).",
            "A figure in the privacy record is not a finite number; re-run the pipeline.",
        ) from None


def sign_certificate(certificate: dict[str, Any], key: SigningKey) -> dict[str, Any]:
    """The signed document written to ``certificate.json``."""
    fingerprint = public_key_fingerprint(key.public_key)
    stated = certificate.get("signing_key", {}).get("public_key_fingerprint")
    if stated != fingerprint:
        raise PrivetError("The certificate names a different signing key.", "This is a bug; please report it.")
    return {
        "certificate": certificate,
        "signature": {
            "algorithm": "Ed25519",
            "public_key_fingerprint": fingerprint,
            "public_key_pem": public_key_pem(key.public_key),
            "value": b64encode(key.sign(canonical_bytes(certificate))),
        },
    }


def write_document(document: dict[str, Any], path: Path) -> None:
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


ORIGIN_NOT_PROVEN = (
    "Origin NOT proven: no public key was given, so this only shows that the files match a certificate "
    "signed by the key shipped inside the folder, and anyone can re-sign an edited release with their own "
    "key. To prove the release comes from the data custodian, verify it with the custodian's public key, "
    "obtained from them directly: privet verify FOLDER --public-key CUSTODIAN_public_key.pem"
)


@dataclass
class VerificationReport:
    """Outcome of ``verify_export``: ``problems`` names each failure; empty means verified."""

    folder: Path
    problems: list[str] = field(default_factory=list)
    fingerprint: str = ""
    key_source: str = ""
    files_checked: int = 0
    origin_checked: bool = False  # True only when checked against a public key given by the verifier

    @property
    def ok(self) -> bool:
        return not self.problems

    def summary(self) -> str:
        if self.ok:
            text = (
                f"Verified: {self.folder} — signature valid ({self.key_source}, key {self.fingerprint}); "
                f"{self.files_checked} files match their SHA-256; nothing unlisted."
            )
            if self.origin_checked:
                return text + "\nOrigin proven: signed by the public key you gave."
            return text + "\n" + ORIGIN_NOT_PROVEN
        return f"NOT verified: {self.folder}\n" + "\n".join(f"  - {p}" for p in self.problems)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _check_signature(document: dict[str, Any], public_key_file: Path | None, report: VerificationReport) -> Any:
    """Check the signature block; returns the key used (or None when it could not be checked)."""
    certificate, signature = document.get("certificate"), document.get("signature")
    if not isinstance(certificate, dict) or not isinstance(signature, dict):
        report.problems.append(f"{CERTIFICATE_FILE} lacks its 'certificate' or 'signature' section")
        return None
    if signature.get("algorithm") != "Ed25519":
        report.problems.append(f"unsupported signature algorithm {signature.get('algorithm')!r}")
        return None
    try:
        embedded = load_public_key_pem(signature.get("public_key_pem", ""))
    except PrivetError:
        report.problems.append(f"the public key embedded in {CERTIFICATE_FILE} is not a valid Ed25519 key")
        return None
    if public_key_fingerprint(embedded) != signature.get("public_key_fingerprint"):
        report.problems.append("the embedded public key does not match the fingerprint stated beside it")
    key, report.key_source = embedded, "key embedded in the certificate (pass --public-key to check who signed)"
    if public_key_file is not None:
        if not Path(public_key_file).is_file():
            raise PrivetError(f"The public key file {public_key_file} does not exist.", "Give the path of a PEM file.")
        key = load_public_key_pem(Path(public_key_file).read_bytes())
        report.key_source = f"public key from {public_key_file}"
        report.origin_checked = True
        if public_key_fingerprint(key) != signature.get("public_key_fingerprint"):
            report.problems.append(
                f"the certificate was signed by key {signature.get('public_key_fingerprint')}, "
                f"not by the key given ({public_key_fingerprint(key)})"
            )
    report.fingerprint = public_key_fingerprint(key)
    if certificate.get("signing_key", {}).get("public_key_fingerprint") != signature.get("public_key_fingerprint"):
        report.problems.append("the signing key named inside the certificate differs from the signature's key")
    try:
        value = base64.b64decode(signature.get("value", ""), validate=True)
    except (binascii.Error, ValueError):
        value = b""
    try:
        message = canonical_bytes(certificate)
    except PrivetError:
        message = b""
    if not message or not verify_bytes(key, value, message):
        report.problems.append(
            f"the signature does not match: {CERTIFICATE_FILE} was edited after signing, or signed by another key"
        )
    return embedded


def _listed_files(certificate: dict[str, Any], report: VerificationReport) -> dict[str, dict[str, Any]]:
    listed: dict[str, dict[str, Any]] = {}
    for section in ("outputs", "renderings"):
        for entry in certificate.get(section, []) or []:
            name = str(entry.get("file", ""))
            if not name or Path(name).name != name or name in (".", ".."):
                report.problems.append(f"the certificate lists an invalid file name {name!r}")
                continue
            listed[name] = entry
    return listed


def verify_export(folder: Path, public_key: Path | None = None) -> VerificationReport:
    """Verify an export folder; see the module docstring for what is checked."""
    folder = Path(folder)
    report = VerificationReport(folder=folder)
    cert_path = folder / CERTIFICATE_FILE
    if not folder.is_dir():
        report.problems.append(f"{folder} is not a folder")
        return report
    if not cert_path.is_file():
        report.problems.append(f"{CERTIFICATE_FILE} is missing")
        return report
    try:
        document = json.loads(cert_path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        report.problems.append(f"{CERTIFICATE_FILE} is not valid JSON (it was damaged or edited)")
        return report
    if not isinstance(document, dict):
        report.problems.append(f"{CERTIFICATE_FILE} is not a JSON object")
        return report
    embedded = _check_signature(document, public_key, report)
    certificate = document.get("certificate") if isinstance(document.get("certificate"), dict) else {}
    listed = _listed_files(certificate, report)
    if not certificate.get("outputs"):
        report.problems.append("the certificate lists no output files")
    for name, entry in listed.items():
        path = folder / name
        if path.is_symlink() or not path.is_file():
            report.problems.append(f"{name}: listed in the certificate but missing (or not a regular file)")
            continue
        size = path.stat().st_size
        if size != entry.get("size_bytes"):
            report.problems.append(f"{name}: size is {size} bytes, the certificate says {entry.get('size_bytes')}")
        if _sha256(path) != entry.get("sha256"):
            report.problems.append(f"{name}: content changed (its SHA-256 differs from the certificate)")
        report.files_checked += 1
    key_path = folder / PUBLIC_KEY_FILE
    if not key_path.is_file():
        report.problems.append(f"{PUBLIC_KEY_FILE} is missing")
    elif embedded is not None:
        try:
            if public_key_fingerprint(load_public_key_pem(key_path.read_bytes())) != public_key_fingerprint(embedded):
                report.problems.append(f"{PUBLIC_KEY_FILE} is not the key that signed the certificate")
        except PrivetError:
            report.problems.append(f"{PUBLIC_KEY_FILE} is not a valid Ed25519 public key")
    allowed = set(listed) | {CERTIFICATE_FILE, PUBLIC_KEY_FILE, RELEASE_MARKER}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        if rel not in allowed:
            kind = "folder" if path.is_dir() else "file"
            report.problems.append(f"unexpected {kind} '{rel}' is not listed in the certificate")
    return report
