"""Turn a file's bytes into text, or say why not (binary, undecodable) without quoting it.

Accepted encodings, in this order: UTF-8 with a byte-order mark, UTF-16 with a byte-order
mark (either endianness), plain UTF-8. Anything else is reported, never guessed: a wrong
guess such as Latin-1 would silently corrupt private text.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass
from typing import Literal

Problem = Literal["", "binary", "undecodable"]


@dataclass(frozen=True)
class Decoded:
    """``text`` when decoding worked; otherwise ``problem`` and a ``detail`` such as a line number."""

    text: str = ""
    problem: Problem = ""
    detail: str = ""

    @property
    def ok(self) -> bool:
        return not self.problem


def decode_bytes(data: bytes) -> Decoded:
    """Decode ``data`` as UTF-8-sig, UTF-16 (with BOM) or UTF-8; NUL bytes mean binary."""
    if data.startswith(codecs.BOM_UTF8):
        return _strict(data, "utf-8-sig")
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        decoded = _strict(data, "utf-16")
        if decoded.ok and "\x00" in decoded.text:
            return Decoded(problem="binary", detail="contains NUL characters")
        return decoded
    if _looks_like_bomless_utf16(data):
        return Decoded(
            problem="undecodable", detail="it looks like UTF-16 saved without the byte-order mark Privet needs to read it"
        )
    if b"\x00" in data:
        return Decoded(problem="binary", detail="contains NUL bytes")
    return _strict(data, "utf-8")


def _looks_like_bomless_utf16(data: bytes) -> bool:
    """Mostly-ASCII UTF-16 (LE or BE) without a BOM: NUL in (nearly) every other byte, none between."""
    sample = data[:4096]
    if len(sample) < 4:
        return False
    even, odd = sample[0::2], sample[1::2]
    for zeros, chars in ((odd, even), (even, odd)):
        if zeros.count(0) >= 0.9 * len(zeros) and chars.count(0) <= 0.05 * len(chars):
            return True
    return False


def _strict(data: bytes, encoding: str) -> Decoded:
    try:
        return Decoded(text=data.decode(encoding))
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return Decoded(problem="undecodable", detail=f"not valid {encoding.upper()} at line {line}")
