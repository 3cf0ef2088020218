"""The installation secret and the keyed dataset fingerprint."""

from __future__ import annotations

import hashlib
import hmac
import os
import stat

import pytest

from core.corpus import Corpus, LoadReport, Unit, dataset_fingerprint, load_corpus
from core.corpus.fingerprint import canonical_chunks
from core.common.errors import PrivetError
from core.install.installation import KEY_FILE, installation_secret


def corpus_of(*pairs: tuple[str, str]) -> Corpus:
    units = [Unit(uid=uid, text=text) for uid, text in pairs]
    return Corpus(units=units, report=LoadReport(), unit_kind="document", source="test")


def write_docs(folder, texts: dict[str, str]):
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in texts.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


# --- installation secret ------------------------------------------------------------------------


def test_secret_is_32_bytes_private_and_stable(privet_home):
    first = installation_secret()
    assert len(first) == 32 and installation_secret() == first
    path = privet_home / KEY_FILE
    assert path.read_bytes() == first
    if os.name == "posix":
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in privet_home.iterdir()] == [KEY_FILE]  # no temporary file left behind


def test_secret_differs_between_installations(tmp_path, monkeypatch):
    first = installation_secret()
    monkeypatch.setenv("PRIVET_HOME", str(tmp_path / "other"))
    assert installation_secret() != first


def test_damaged_secret_is_reported_not_replaced(privet_home):
    (privet_home / KEY_FILE).write_bytes(b"short")
    with pytest.raises(PrivetError, match="damaged"):
        installation_secret()
    assert (privet_home / KEY_FILE).read_bytes() == b"short"


def test_loose_permissions_are_tightened(privet_home):
    installation_secret()
    path = privet_home / KEY_FILE
    path.chmod(0o644)
    installation_secret()
    if os.name == "posix":
        assert stat.S_IMODE(path.stat().st_mode) == 0o600


# --- dataset fingerprint ------------------------------------------------------------------------


def test_stable_across_loads(tmp_path):
    folder = write_docs(tmp_path / "d", {"a.txt": "alpha", "b.txt": "beta", "c.txt": "gamma"})
    first = dataset_fingerprint(load_corpus(folder))
    assert first == dataset_fingerprint(load_corpus(folder))
    assert len(first) == 64 and int(first, 16) >= 0


def test_changes_when_one_unit_changes(tmp_path):
    folder = write_docs(tmp_path / "d", {"a.txt": "alpha", "b.txt": "beta", "c.txt": "gamma"})
    before = dataset_fingerprint(load_corpus(folder))
    (folder / "b.txt").write_text("betA", encoding="utf-8")
    assert dataset_fingerprint(load_corpus(folder)) != before


def test_differs_under_another_installation_key(tmp_path, monkeypatch):
    corpus = corpus_of(("a", "alpha"), ("b", "beta"))
    here = dataset_fingerprint(corpus)
    monkeypatch.setenv("PRIVET_HOME", str(tmp_path / "elsewhere"))
    assert dataset_fingerprint(corpus) != here


def test_is_not_a_plain_hash_of_the_content():
    corpus = corpus_of(("a", "alpha"), ("b", "beta"))
    fp = dataset_fingerprint(corpus)
    plain = [
        hashlib.sha256(b"alphabeta").hexdigest(),
        hashlib.sha256(b"aalphabbeta").hexdigest(),
        hashlib.sha256("\n".join(corpus.texts).encode()).hexdigest(),
        hashlib.sha256(b"".join(canonical_chunks(corpus.units))).hexdigest(),
    ]
    assert fp not in plain


def test_order_independent_and_unambiguous():
    assert dataset_fingerprint(corpus_of(("a", "x"), ("b", "y"))) == dataset_fingerprint(
        corpus_of(("b", "y"), ("a", "x"))
    )
    # Length prefixes keep the uid/text boundary: these must not collide.
    assert dataset_fingerprint(corpus_of(("ab", "c"), ("z", "z"))) != dataset_fingerprint(
        corpus_of(("a", "bc"), ("z", "z"))
    )


def test_canonical_format_is_pinned():
    """An independent restatement of the documented format, under an explicit key."""
    key = bytes(range(32))
    corpus = corpus_of(("u2", "é"), ("u1", "hi"))

    def field(s: str) -> bytes:
        data = s.encode("utf-8")
        return len(data).to_bytes(8, "big") + data

    message = b"privet/dataset-fingerprint/v1\n" + (2).to_bytes(8, "big")
    message += field("u1") + field("hi") + field("u2") + field("é")
    expected = hmac.new(key, message, hashlib.sha256).hexdigest()
    assert dataset_fingerprint(corpus, key=key) == expected
