"""No cell contents in any loader message, warning or exception: a canary in every error path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.corpus import load_corpus
from core.corpus.decoding import decode_bytes
from core.common.errors import CorpusError

CANARY = "Zqxvortimer Blandquist-7731"
CANARY_ID = "MRN-88817713"


def _write(folder: Path, name: str, data: str | bytes) -> Path:
    path = folder / name
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


ROWS = f"{CANARY_ID},{CANARY},{CANARY} has a fever\n"

# (file name, content, load_corpus keyword arguments): each must raise CorpusError
ERROR_CASES = {
    "no header, text column missing": ("a.csv", ROWS * 3, {"text_column": "note"}),
    "no header, id column missing": ("b.csv", "text,x\n" + ROWS * 3, {"id_column": CANARY_ID.lower()}),
    "no header, no text column chosen": ("c.csv", ROWS * 3, {}),
    "no header, person column missing": ("d.csv", ROWS * 3, {"text_column": CANARY, "person_column": "who"}),
    "duplicate ids": ("e.csv", f"id,text\n{CANARY_ID},{CANARY}\n{CANARY_ID},{CANARY} again\n", {"id_column": "id"}),
    "duplicate header": ("f.csv", f"text,text\n{CANARY},{CANARY}\nx,y\n", {"text_column": "text"}),
    "same column twice": ("g.csv", f"text,id\n{CANARY},1\nx,2\n", {"text_column": "text", "id_column": "text"}),
    "unbalanced quote": ("h.csv", f'text\n"{CANARY}\nmore', {}),
    "NUL inside CSV": ("i.csv", b"text\n" + CANARY.encode() + b"\x00\n", {}),
    "Latin-1": ("j.csv", f"text\ncaf\xe9 {CANARY}\n".encode("latin-1"), {}),
    "UTF-16 without BOM": ("k.csv", f"text\n{CANARY}\nb\n".encode("utf-16-le"), {}),
    "bad UTF-16 with BOM": ("l.csv", b"\xff\xfe" + f"text\n{CANARY}".encode("utf-16-le") + b"\x00\xd8", {}),
    "binary": ("m.csv", b"\x00\x01" + CANARY.encode() + b"\x00" * 50, {}),
    "one unit only": ("n.csv", f"text\n{CANARY}\n", {}),
    "no text at all": ("o.csv", f"text,{CANARY}\n,{CANARY}\n,{CANARY}\n", {"text_column": "text"}),
    "JSONL no objects": ("p.jsonl", f'["{CANARY}"]\n{CANARY}\n', {}),
    "JSONL missing text column": ("q.jsonl", json.dumps({CANARY: CANARY}) + "\n" + json.dumps({"a": 1}) + "\n",
                                  {"text_column": "text"}),
    "JSONL which column": ("r.jsonl", json.dumps({"a": CANARY, "b": CANARY}) + "\n" + json.dumps({"a": "x"}) + "\n", {}),
    "single document file": ("s.txt", CANARY, {}),
    "unsupported type": ("t.docx", CANARY, {}),
    "oversized": ("u.csv", f"text\n{CANARY}\n" * 50, {"max_file_bytes": 100}),
    "bad limit": ("v.csv", f"text\n{CANARY}\n", {"max_unit_chars": 0}),
}


@pytest.mark.parametrize("name", sorted(ERROR_CASES))
def test_error_messages_hold_no_cell_contents(tmp_path, name):
    file_name, content, kwargs = ERROR_CASES[name]
    path = _write(tmp_path, file_name, content)
    with pytest.raises(CorpusError) as info:
        load_corpus(path, **kwargs)
    exc = info.value
    chained = [exc.__cause__, exc.__context__ if not exc.__suppress_context__ else None]
    texts = [str(exc), exc.user_message(), repr(exc.args)] + [str(c) for c in chained if c is not None]
    for text in texts:
        assert CANARY not in text and CANARY_ID not in text, (name, text)


def test_folder_errors_and_warnings_hold_no_contents(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    _write(folder, "a.txt", f"{CANARY} one")
    _write(folder, "b.txt", f"{CANARY} two " * 400)  # truncated
    _write(folder, "c.txt", b"\x00" + CANARY.encode())  # binary
    _write(folder, "d.txt", f"caf\xe9 {CANARY}".encode("latin-1"))  # undecodable
    _write(folder, "e.txt", f"{CANARY}".encode("utf-16-le"))  # UTF-16 without BOM
    _write(folder, "f.txt", "   ")  # empty
    _write(folder, "g.pdf", CANARY)  # ignored
    (folder / "loop.txt").symlink_to("loop.txt")
    corpus = load_corpus(folder, max_unit_chars=100)
    assert corpus.report.warnings
    for warning in corpus.report.warnings:
        assert CANARY not in warning
    assert any("UTF-16" in w for w in corpus.report.warnings)


def test_table_warnings_hold_no_contents(tmp_path):
    rows = "".join(f"{i},{'' if i % 3 == 0 else CANARY + str(i)},{CANARY} note {i}\n" for i in range(30))
    path = _write(tmp_path, "w.csv", "id,who,text\n" + rows + f"99,{CANARY}\n")  # one short row
    corpus = load_corpus(path, "text", "id", "who", max_unit_chars=20)
    assert corpus.report.warnings
    assert not any(CANARY in w for w in corpus.report.warnings)
    path = _write(tmp_path, "w.jsonl", "\n".join([json.dumps({"text": CANARY}), CANARY, json.dumps([CANARY]),
                                                  json.dumps({"text": [CANARY]}), json.dumps({"text": "x"})]))
    corpus = load_corpus(path)
    assert corpus.report.warnings and not any(CANARY in w for w in corpus.report.warnings)


def test_symlink_loop_is_not_called_missing(tmp_path):
    loop = tmp_path / "loop.csv"
    loop.symlink_to(loop.name)
    with pytest.raises(CorpusError, match="leads nowhere"):
        load_corpus(loop)


def test_utf16_without_bom_is_not_called_binary():
    decoded = decode_bytes("text\nhello world\n".encode("utf-16-be"))
    assert decoded.problem == "undecodable" and "UTF-16" in decoded.detail
    assert decode_bytes(b"\x00\x01\x02" * 50).problem == "binary"
