"""Signed privacy certificate: build, sign, render (HTML/PDF) and verify.

Public API: ``build_certificate``, ``sign_certificate``, ``verify_export`` (returns a
``VerificationReport``), ``render_html``, ``render_pdf``, ``load_signing_key``,
``public_key_pem``, ``public_key_fingerprint``.
"""

from core.certificate.build import build_certificate
from core.certificate.render import render_html, render_pdf
from core.certificate.seal import VerificationReport, sign_certificate, verify_export
from core.certificate.signing import SigningKey, load_signing_key, public_key_fingerprint, public_key_pem

__all__ = [
    "SigningKey",
    "VerificationReport",
    "build_certificate",
    "load_signing_key",
    "public_key_fingerprint",
    "public_key_pem",
    "render_html",
    "render_pdf",
    "sign_certificate",
    "verify_export",
]
