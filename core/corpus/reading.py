"""Reading a corpus's files: a folder of ``.txt``/``.md`` documents (one document per file, recursive, sorted by
relative path; hidden files and folders are skipped, unusable files counted and warned about) or the text of one
table file, decoded (core/corpus/decoding.py) and normalised (Unicode NFC, ``\\n`` line ends, outer whitespace
stripped) so the same content always gives the same units.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from pathlib import Path

from core.corpus.collector import WarningCollector
from core.corpus.decoding import decode_bytes
from core.corpus.model import LoadReport, SkippedFile
from core.corpus.tables import TABLE_SUFFIXES
from core.common.errors import CorpusError

DOCUMENT_SUFFIXES = (".txt", ".md")


@dataclass(frozen=True)
class Document:
    """One non-empty document before grouping; ``where`` names its file or row for messages."""

    doc_id: str
    person: str
    text: str
    where: str
    label: str = ""


def existing_path(path: str | Path) -> Path:
    if not str(path).strip():
        raise CorpusError("No corpus path was given.", "Choose a folder of .txt/.md files or a table file.")
    source = Path(path).expanduser()
    if not source.exists():
        if source.is_symlink():
            raise CorpusError(
                f"{source} is a link that leads nowhere: its target is missing, or the link points back to "
                "itself (a loop).",
                "Point at the real folder or file instead of the link.",
            )
        raise CorpusError(f"{source} does not exist.", "Check the path (and that the drive is connected).")
    if not (source.is_dir() or source.is_file()):
        raise CorpusError(f"{source} is neither a folder nor a regular file.", "Choose a folder or a file.")
    return source


def read_folder(
    folder: Path, max_file_bytes: int, report: LoadReport, notes: WarningCollector
) -> list[Document]:
    files = _visible_files(folder)
    if not files:
        raise CorpusError(f"The folder {folder} is empty.", "Put one .txt or .md file per document in it.")
    documents: list[Document] = []
    for file in files:
        name = file.relative_to(folder).as_posix()
        if file.suffix.lower() not in DOCUMENT_SUFFIXES:
            report.n_ignored_files += 1
            notes.add("file(s) ignored (not .txt or .md)", name, skips_file=True)
            report.skipped_files.append(SkippedFile(name, "not a .txt or .md file",
                                                    "save it as a .txt file if it is one of the documents"))
            continue
        text = _read_document_file(file, name, max_file_bytes, report, notes)
        if text is None:
            continue
        report.n_files_read += 1
        text = normalise_text(text)
        if not text:
            report.n_empty_skipped += 1
            notes.add("empty document(s) skipped", name)
            continue
        documents.append(Document(doc_id=name, person="", text=text, where=name))
    if report.n_files_read == 0:
        raise CorpusError(
            f"No readable .txt or .md file in {folder} ({report.n_binary} binary, "
            f"{report.n_undecodable} undecodable, {report.n_too_large} too large, "
            f"{report.n_ignored_files} with other extensions).",
            "Save the documents as UTF-8 .txt or .md files, one document per file.",
        )
    return documents


def _visible_files(folder: Path) -> list[Path]:
    """Regular files under ``folder`` sorted by relative path, skipping hidden files and folders."""
    found = []
    for item in folder.rglob("*"):
        relative = item.relative_to(folder)
        if any(part.startswith(".") for part in relative.parts) or not item.is_file():
            continue
        found.append(item)
    return sorted(found, key=lambda f: f.relative_to(folder).as_posix())


def _read_document_file(
    file: Path, name: str, max_file_bytes: int, report: LoadReport, notes: WarningCollector
) -> str | None:
    """The decoded text of one folder file, or ``None`` (counted and warned) when unusable."""
    try:
        if file.stat().st_size > max_file_bytes:
            report.n_too_large += 1
            notes.add(f"file(s) over the {max_file_bytes:,}-byte limit skipped", name, skips_file=True)
            report.skipped_files.append(SkippedFile(name, f"over the {max_file_bytes:,}-byte limit",
                                                    "split it into one file per document"))
            return None
        data = file.read_bytes()
    except OSError:
        notes.add("file(s) that could not be opened skipped", name, skips_file=True)
        report.skipped_files.append(SkippedFile(name, "it could not be opened", "check that you may read it"))
        return None
    decoded = decode_bytes(data)
    if decoded.problem == "binary":
        report.n_binary += 1
        notes.add("binary file(s) skipped (NUL bytes)", name, skips_file=True)
        report.skipped_files.append(SkippedFile(name, "a binary file, not text (it holds NUL bytes)",
                                                "save the document as a .txt file"))
        return None
    if decoded.problem == "undecodable":
        report.n_undecodable += 1
        notes.add("file(s) not in UTF-8/UTF-16 skipped (save them as UTF-8)", f"{name} ({decoded.detail})", skips_file=True)
        report.skipped_files.append(SkippedFile(name, f"not in UTF-8 or UTF-16 ({decoded.detail})",
                                                "open it and save it again as UTF-8 text"))
        return None
    return decoded.text


def table_text(source: Path, max_file_bytes: int) -> str:
    suffix = source.suffix.lower()
    if suffix in DOCUMENT_SUFFIXES:
        raise CorpusError(
            f"{source.name} is a single document; one document cannot be protected on its own.",
            "Choose the folder that holds one .txt/.md file per document.",
        )
    if suffix not in TABLE_SUFFIXES:
        raise CorpusError(
            f"{source.name} has an unsupported file type ('{source.suffix or 'no extension'}').",
            "Use a folder of .txt/.md files, or a .csv, .tsv or .jsonl file.",
        )
    size = source.stat().st_size
    if size > max_file_bytes:
        raise CorpusError(
            f"{source.name} is {size:,} bytes, over the {max_file_bytes:,}-byte limit.",
            "Split the file, or raise the limit if this machine has the memory for it.",
        )
    try:
        data = source.read_bytes()
    except OSError as exc:
        raise CorpusError(f"{source} could not be read ({exc.strerror}).", "Check its permissions.") from None
    decoded = decode_bytes(data)
    if decoded.problem == "binary":
        raise CorpusError(
            f"{source.name} looks like a binary file ({decoded.detail}), not a text table.",
            "Export the table as UTF-8 CSV, TSV or JSON Lines.",
        )
    if decoded.problem == "undecodable":
        raise CorpusError(
            f"{source.name} is not UTF-8 or UTF-16 text ({decoded.detail}).",
            "Save it again as UTF-8 (in a spreadsheet: 'CSV UTF-8').",
        )
    return decoded.text


def normalise_text(text: str) -> str:
    text = unicodedata.normalize("NFC", text)
    return text.replace("\r\n", "\n").replace("\r", "\n").strip()
