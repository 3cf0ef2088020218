"""Mechanical moves for the issue-12 refactor: move modules, move top-level definitions, fix imports.

Used by ``tools/apply_refactor.sh`` (see docs/refactor-plan.md); each sub-command edits the working
tree in place and prints what it changed. Every operation is by *name*, not by line number, so it
still applies after other branches have changed the bodies of the files involved.

    python tools/refactor.py move-module core.pii core.methods.rpsg.pii
    python tools/refactor.py move-symbols core.pipeline core.methods.base PlanSummary
    python tools/refactor.py rename-symbol _stages_from_events stages_from_events
    python tools/refactor.py hoist core/methods/registry.py core/pipeline.py
    python tools/refactor.py replace FILE OLD NEW   # one exact text replacement; fails if OLD is absent

Imports are rewritten in every Python file of the repository (function bodies included), dotted
names in strings (``monkeypatch.setattr("core.x.y", ...)``, ``COMMAND_MODULES``) and file paths in
Markdown/TOML/shell files. No compatibility shim is left behind. After the moves, run
``ruff check --fix --select I,F401`` on the touched files (apply_refactor.sh does).
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY_DIRS = ("core", "desktop", "resources", "tests", "bench", "docs", "tools", "installer")
TEXT_GLOBS = ("*.md", "docs/*.md", "resources/**/*.md", "*.toml", "Makefile", "installer/*.sh", ".ci/run")
SELF = Path(__file__).resolve()
TOUCHED: set[Path] = set()


def say(message: str) -> None:
    print(f"refactor: {message}")


def py_files() -> list[Path]:
    out = []
    for d in PY_DIRS:
        base = ROOT / d
        if base.is_dir():
            out += [p for p in base.rglob("*.py") if "__pycache__" not in p.parts and p.resolve() != SELF]
    return sorted(out)


def text_files() -> list[Path]:
    out: set[Path] = set()
    for pattern in TEXT_GLOBS:
        out.update(p for p in ROOT.glob(pattern) if p.is_file())
    out.discard(ROOT / "docs" / "refactor-plan.md")  # names the old locations on purpose
    return sorted(out)


def module_path(module: str) -> Path:
    base = ROOT / Path(*module.split("."))
    return base / "__init__.py" if base.is_dir() else base.with_suffix(".py")


def write(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
    TOUCHED.add(path)


# --- text-level rewrites ------------------------------------------------------------------------


def rewrite_dotted(old: str, new: str) -> int:
    """``old`` as a dotted name (``old`` or ``old.attr``) becomes ``new`` in every Python and text file."""
    pattern = re.compile(r"(?<![\w.])" + re.escape(old) + r"(?!\w)")
    old_path = old.replace(".", "/") + ".py"
    new_path = str(module_path(new).relative_to(ROOT)) if module_path(new).exists() else new.replace(".", "/") + ".py"
    path_pattern = re.compile(r"(?<![\w/.])" + re.escape(old_path))
    changed = 0
    for path in py_files() + text_files():
        text = path.read_text(encoding="utf-8")
        updated = path_pattern.sub(new_path, pattern.sub(new, text))
        if updated != text:
            write(path, updated)
            changed += 1
    return changed


def _import_lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def rewrite_parent_imports(old: str, new: str) -> int:
    """``from old_parent import old_last`` (a module imported by name) -> ``from new_parent import new_last as old_last``."""
    old_parent, _, old_last = old.rpartition(".")
    new_parent, _, new_last = new.rpartition(".")
    changed = 0
    for path in py_files():
        text = path.read_text(encoding="utf-8")
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        lines = _import_lines(text)
        edits = []
        for node in ast.walk(tree):
            if not (isinstance(node, ast.ImportFrom) and node.module == old_parent and node.level == 0):
                continue
            hit = [a for a in node.names if a.name == old_last]
            if not hit:
                continue
            rest = [a for a in node.names if a.name != old_last]
            indent = re.match(r"\s*", lines[node.lineno - 1]).group(0)
            stmts = []
            if rest:
                stmts.append(f"{indent}from {old_parent} import {_aliases(rest)}\n")
            for alias in hit:
                name = alias.asname or old_last
                as_part = f" as {name}" if name != new_last else ""
                stmts.append(f"{indent}from {new_parent} import {new_last}{as_part}\n")
            edits.append((node.lineno, node.end_lineno, "".join(stmts)))
        if edits:
            for start, end, replacement in sorted(edits, reverse=True):
                lines[start - 1 : end] = [replacement]
            write(path, "".join(lines))
            changed += 1
    return changed


def _aliases(names: Iterable[ast.alias]) -> str:
    return ", ".join(f"{a.name} as {a.asname}" if a.asname else a.name for a in names)


# --- move a module --------------------------------------------------------------------------------


def ensure_package(directory: Path, doc: str) -> None:
    """Create ``directory/__init__.py`` (a docstring only) for a new package."""
    directory.mkdir(parents=True, exist_ok=True)
    init = directory / "__init__.py"
    if not init.exists():
        write(init, f'"""{doc}"""\n')
        subprocess.run(["git", "add", str(init)], cwd=ROOT, check=True)
        say(f"new package {init.relative_to(ROOT)}")


def move_module(old: str, new: str, package_doc: str = "") -> None:
    src = module_path(old)
    if not src.exists():
        raise SystemExit(f"refactor: {old} ({src}) does not exist")
    dst = ROOT / Path(*new.split(".")).with_suffix(".py")
    if dst.exists():
        raise SystemExit(f"refactor: {dst} exists already")
    if not dst.parent.exists() or not (dst.parent / "__init__.py").exists():
        if dst.parent != ROOT / "tools":
            ensure_package(dst.parent, package_doc or f"{new.rpartition('.')[0]}.")
        else:
            dst.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "mv", str(src), str(dst)], cwd=ROOT, check=True)
    TOUCHED.add(dst)
    n = rewrite_dotted(old, new)
    n_parent = rewrite_parent_imports(old, new)
    say(f"git mv {src.relative_to(ROOT)} {dst.relative_to(ROOT)}; rewrote {n} files (+{n_parent} `from parent import`)")


# --- move top-level definitions -------------------------------------------------------------------


def _top_level_spans(tree: ast.Module, lines: list[str]) -> dict[str, tuple[int, int]]:
    """Name -> (first line, last line), 1-based inclusive, with decorators, attached comments and a
    docstring-like string right after an assignment."""
    spans: dict[str, tuple[int, int]] = {}
    body = tree.body
    for i, node in enumerate(body):
        names: list[str] = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names = [node.name]
        elif isinstance(node, ast.Assign):
            names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names = [node.target.id]
        if not names:
            continue
        start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        while start > 1 and lines[start - 2].lstrip().startswith("#"):
            start -= 1
        end = node.end_lineno or node.lineno
        nxt = body[i + 1] if i + 1 < len(body) else None
        if (
            isinstance(node, (ast.Assign, ast.AnnAssign))
            and isinstance(nxt, ast.Expr)
            and isinstance(nxt.value, ast.Constant)
            and isinstance(nxt.value.value, str)
        ):
            end = nxt.end_lineno or end
        for name in names:
            spans[name] = (start, end)
    return spans


def _import_block(tree: ast.Module, lines: list[str]) -> tuple[str, int]:
    """The text of the module's top-level imports and the line after the last one (0 if none)."""
    parts, last = [], 0
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if isinstance(node, ast.ImportFrom) and node.module == "__future__":
                last = node.end_lineno or node.lineno
                continue
            parts.append("".join(lines[node.lineno - 1 : node.end_lineno]))
            last = node.end_lineno or node.lineno
    return "".join(parts), last


def _used_names(code: str) -> set[str]:
    return {n.id for n in ast.walk(ast.parse(code)) if isinstance(n, ast.Name)}


def move_symbols(src_mod: str, dst_mod: str, names: list[str], doc: str = "") -> None:
    src = module_path(src_mod)
    text = src.read_text(encoding="utf-8")
    lines = _import_lines(text)
    tree = ast.parse(text)
    spans = _top_level_spans(tree, lines)
    missing = [n for n in names if n not in spans]
    if missing:
        raise SystemExit(f"refactor: {src_mod} defines no top-level {missing}")
    chosen = sorted({spans[n] for n in names})
    moved_code = "\n\n".join("".join(lines[a - 1 : b]).rstrip() + "\n" for a, b in chosen)
    imports, _ = _import_block(tree, lines)

    # What the moved code still needs from the source module (would make a cycle).
    left_defs = set(spans) - set(names)
    needs = sorted(_used_names(moved_code) & left_defs)
    if needs:
        raise SystemExit(f"refactor: moving {names} out of {src_mod} needs {needs} too (move them as well)")

    # Remove from the source (from the bottom up) and tidy blank lines.
    for a, b in sorted(chosen, reverse=True):
        del lines[a - 1 : b]
    remaining = re.sub(r"\n{4,}", "\n\n\n", "".join(lines))
    still_used = sorted(set(names) & _used_names(remaining))

    dst = module_path(dst_mod)
    if dst.exists():
        _drop_imports_of(dst, src_mod, set(names))
        dtext = dst.read_text(encoding="utf-8")
        dlines = _import_lines(dtext)
        _, last = _import_block(ast.parse(dtext), dlines)
        # Right after the imports: a moved class may be used at import time further down (defaults).
        dlines[last:last] = [imports, "\n\n", moved_code, "\n"]
        new_dst = re.sub(r"\n{4,}", "\n\n\n", "".join(dlines))
    else:
        if not dst.parent.joinpath("__init__.py").exists():
            ensure_package(dst.parent, f"{dst_mod.rpartition('.')[0]}.")
        header = f'"""{doc or dst_mod}"""\n\nfrom __future__ import annotations\n\n'
        new_dst = header + imports + "\n\n" + moved_code
    write(dst, new_dst)
    _drop_imports_of(dst, dst_mod, None)  # the copied import block may import from dst itself
    subprocess.run(["git", "add", str(dst)], cwd=ROOT, check=True)

    if still_used:
        rtree = ast.parse(remaining)
        rlines = _import_lines(remaining)
        _, last = _import_block(rtree, rlines)
        rlines[last:last] = [f"from {dst_mod} import {', '.join(still_used)}\n"]
        remaining = "".join(rlines)
    write(src, remaining)
    n = rewrite_importers(src_mod, dst_mod, names)
    say(f"moved {', '.join(names)} from {src_mod} to {dst_mod}; rewrote imports in {n} files")


def _drop_imports_of(path: Path, src_mod: str, names: set[str] | None) -> None:
    """Remove ``names`` (all when None) from every ``from src_mod import ...`` in ``path``."""
    text = path.read_text(encoding="utf-8")
    lines = _import_lines(text)
    edits = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom) and node.module == src_mod and node.level == 0:
            rest = [a for a in node.names if names is not None and a.name not in names]
            if len(rest) != len(node.names):
                indent = re.match(r"\s*", lines[node.lineno - 1]).group(0)
                stmt = f"{indent}from {src_mod} import {_aliases(rest)}\n" if rest else ""
                edits.append((node.lineno, node.end_lineno, stmt))
    for start, end, replacement in sorted(edits, reverse=True):
        lines[start - 1 : end] = [replacement]
    if edits:
        write(path, "".join(lines))


def rewrite_importers(src_mod: str, dst_mod: str, names: list[str]) -> int:
    """Split ``from src_mod import a, moved`` into two statements in every file; fix dotted strings."""
    moved = set(names)
    changed = 0
    for path in py_files():
        if path == module_path(dst_mod):
            continue
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        lines = _import_lines(text)
        edits = []
        for node in ast.walk(tree):
            if not (isinstance(node, ast.ImportFrom) and node.module == src_mod and node.level == 0):
                continue
            hit = [a for a in node.names if a.name in moved]
            if not hit:
                continue
            rest = [a for a in node.names if a.name not in moved]
            indent = re.match(r"\s*", lines[node.lineno - 1]).group(0)
            stmt = ""
            if rest:
                stmt += f"{indent}from {src_mod} import {_aliases(rest)}\n"
            stmt += f"{indent}from {dst_mod} import {_aliases(hit)}\n"
            edits.append((node.lineno, node.end_lineno, stmt))
        updated = text
        if edits:
            for start, end, replacement in sorted(edits, reverse=True):
                lines[start - 1 : end] = [replacement]
            updated = "".join(lines)
        for name in names:
            updated = re.sub(r"(?<![\w.])" + re.escape(f"{src_mod}.{name}") + r"(?!\w)", f"{dst_mod}.{name}", updated)
        if updated != text:
            write(path, updated)
            changed += 1
    return changed


def rename_symbol(old: str, new: str, files: list[Path] | None = None) -> None:
    pattern = re.compile(r"(?<![\w])" + re.escape(old) + r"(?!\w)")
    n = 0
    for path in files or py_files():
        text = path.read_text(encoding="utf-8")
        updated = pattern.sub(new, text)
        if updated != text:
            write(path, updated)
            n += 1
    say(f"renamed {old} -> {new} in {n} files")


# --- hoist function-level project imports -----------------------------------------------------------


def _is_project_import(node: ast.stmt, prefixes: tuple[str, ...]) -> bool:
    if isinstance(node, ast.ImportFrom):
        return node.level == 0 and (node.module or "").split(".")[0] in prefixes
    return isinstance(node, ast.Import) and all(a.name.split(".")[0] in prefixes for a in node.names)


_KEEP_PASS: set[int] = set()  # ids of import nodes that were alone in their block


def _project_imports_in(body: list[ast.stmt], prefixes: tuple[str, ...]) -> list[ast.stmt]:
    """Project imports in a function body, also under if/for/while/with; never under try (optional imports)."""
    out: list[ast.stmt] = []
    for node in body:
        if _is_project_import(node, prefixes):
            out.append(node)
        elif isinstance(node, (ast.If, ast.For, ast.While, ast.With)):
            out += _project_imports_in(node.body, prefixes) + _project_imports_in(getattr(node, "orelse", []), prefixes)
    if out and len(out) == len(body):  # the block held nothing else: it keeps a `pass`
        _KEEP_PASS.add(id(out[-1]))
    return out


def hoist(paths: list[Path], prefixes: tuple[str, ...] = ("core", "desktop", "resources")) -> None:
    """Move function-level imports of project modules to the module's top-level import block."""
    for path in paths:
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        lines = _import_lines(text)
        found = []
        for func in ast.walk(tree):
            if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            found += _project_imports_in(func.body, prefixes)
        if not found:
            continue
        statements = sorted({ast.unparse(n) + "\n" for n in found})
        for node in sorted(found, key=lambda n: n.lineno, reverse=True):
            start, end = node.lineno, node.end_lineno or node.lineno
            if id(node) in _KEEP_PASS:
                indent = re.match(r"\s*", lines[start - 1]).group(0)
                lines[start - 1 : end] = [f"{indent}pass\n"]
                continue
            del lines[start - 1 : end]
            # No blank line left at the top of a function body.
            if start - 1 < len(lines) and not lines[start - 1].strip() and lines[start - 2].rstrip().endswith(":"):
                del lines[start - 1]
        text2 = "".join(lines)
        tree2 = ast.parse(text2)
        lines2 = _import_lines(text2)
        _, last = _import_block(tree2, lines2)
        lines2[last:last] = statements
        write(path, "".join(lines2))
        say(f"hoisted {len(found)} function-level imports in {path.relative_to(ROOT)}")


def replace(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    if old not in text:
        raise SystemExit(f"refactor: {path.relative_to(ROOT)} no longer contains {old!r}: apply this step by hand")
    write(path, text.replace(old, new, 1))
    say(f"edited {path.relative_to(ROOT)}")


# --- exact text edits, by step (each fails loudly if its text is no longer there) -------------------

PATCHES: dict[str, list[tuple[str, str, str]]] = {
    "method-protocol": [
        (
            "core/methods/base.py",
            "def plan_summary(self, spec: RunSpec, delta: float, n_units: int): ...",
            "def plan_summary(self, spec: RunSpec, delta: float, n_units: int) -> PlanSummary: ...",
        ),
        (
            "core/methods/base.py",
            "def parameters(self, spec: RunSpec, summary) -> dict: ...",
            "def parameters(self, spec: RunSpec, summary: PlanSummary) -> dict: ...",
        ),
    ],
    "models-init": [
        ("core/models/__init__.py", "from core.runspec import ModelChoice\n", ""),
        (
            "core/models/__init__.py",
            '__all__ = ["Embedder", "LanguageModel", "LogitsSession", "ModelChoice"]',
            '__all__ = ["Embedder", "LanguageModel", "LogitsSession"]',
        ),
    ],
    "demo-seed-allowed": [
        (
            # The demo generator (now under core/) seeds its generator on purpose: its output is the public,
            # reproducible demo corpus. It was outside the check while it lived in resources/.
            "tests/test_architecture.py",
            'or "evaluation" in path.parts',
            'or "evaluation" in path.parts or "demo" in path.parts',
        ),
    ],
    "demo-lint": [
        (
            "pyproject.toml",
            '"resources/**/*.py" = ["T20"]\n',
            '"resources/**/*.py" = ["T20"]\n"core/demo/*.py" = ["T20"]\n',
        ),
    ],
    "runspec-method-names": [
        (
            # The run spec names its methods itself: importing the registry made runspec -> methods -> runspec.
            "core/runspec.py",
            '''def _method_problems(method: str) -> list[str]:
    from core.methods import registry

    try:
        registry.get(method)
    except PrivetError as exc:
        return [f"method: {exc.what} {exc.fix}"]
    return []
''',
            '''# The methods a run spec can name; core.methods.registry maps each to its adapter (a test checks both agree).
METHOD_NAMES = ("aug_pe", "dp_synrag", "dp_synth", "rpsg")


def _method_problems(method: str) -> list[str]:
    if method in METHOD_NAMES:
        return []
    return [f"method: Unknown method {method!r}. Choose one of: {', '.join(METHOD_NAMES)}."]
''',
        ),
    ],
    "ledger-conversion-top": [
        (
            "core/ledger.py",
            '''def _conversion():
    """The zCDP <-> (epsilon, delta) conversions (imported lazily: core.privacy.conversion)."""
    try:
        from core.privacy import conversion
    except ImportError:
        raise PrivetError(
            "The privacy conversion module (core.privacy.conversion) is missing from this installation.",
            "Reinstall Privet.",
        ) from None
    return conversion


''',
            "",
        ),
        ("core/ledger.py", "_conversion().eps_to_rho(", "eps_to_rho("),
        ("core/ledger.py", "_conversion().eps_to_rho(", "eps_to_rho("),
        (
            "core/ledger.py",
            "from core.errors import BudgetError, PrivetError\n",
            "from core.errors import BudgetError, PrivetError\nfrom core.privacy.conversion import eps_to_rho\n",
        ),
    ],
    "importlinter-type-checking": [
        (
            "pyproject.toml",
            'root_packages = ["core", "desktop", "resources"]\n',
            'root_packages = ["core", "desktop", "resources"]\n'
            "# `if TYPE_CHECKING:` imports are annotations only (core.privacy.budget names core.ledger.Ledger that way).\n"
            "exclude_type_checking_imports = true\n",
        ),
    ],
    "lint-rules-on": [
        (
            "pyproject.toml",
            'select = ["E", "W", "F", "B", "C4", "PIE", "SIM", "T20", "N", "RUF", "PERF"]',
            'select = ["E", "W", "F", "I", "UP", "B", "C4", "PIE", "SIM", "T20", "N", "RUF", "PERF"]',
        ),
    ],
    "contracts-on": [
        (
            "Makefile",
            "# Import contracts that hold today (pyproject.toml [tool.importlinter]). TODO(docs/refactor-plan.md, step 10):\n"
            "# run every contract (drop the --contract filters) and `python tools/import_graph.py --check` once the\n"
            "# issue-12 moves have landed.\n"
            "IMPORT_CONTRACTS ?= core-no-qt\n",
            "# Import contracts to check (pyproject.toml [tool.importlinter]); empty: every contract there.\n"
            "IMPORT_CONTRACTS ?=\n",
        ),
        (
            "Makefile",
            "\t$(BIN)/mypy\n",
            "\t$(BIN)/mypy\n\t$(BIN)/python tools/import_graph.py --check > /dev/null\n",
        ),
        (
            "pyproject.toml",
            "# grimp reads every import statement, function bodies included. `make lint` runs the contracts that\n"
            "# hold today (IMPORT_CONTRACTS in the Makefile); the others are listed in docs/refactor-plan.md with\n"
            "# the plan step after which they hold, and `lint-imports` without --contract shows their violations.\n",
            "# grimp reads every import statement, function bodies included. `make lint` (run by `make test`, so\n"
            "# by CI) checks every contract below, and `tools/import_graph.py --check` finds any cycle of modules.\n",
        ),
        (
            "tests/test_import_graph.py",
            '@pytest.mark.xfail(strict=True, reason="cycles removed by docs/refactor-plan.md steps 1-4 (issue 12)")\n',
            "",
        ),
    ],
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("move-module")
    p.add_argument("old")
    p.add_argument("new")
    p.add_argument("--package-doc", default="")
    p = sub.add_parser("move-symbols")
    p.add_argument("src")
    p.add_argument("dst")
    p.add_argument("names", nargs="+")
    p.add_argument("--doc", default="")
    p = sub.add_parser("rename-symbol")
    p.add_argument("old")
    p.add_argument("new")
    p = sub.add_parser("hoist")
    p.add_argument("files", nargs="+", type=Path)
    p = sub.add_parser("replace")
    p.add_argument("file", type=Path)
    p.add_argument("old")
    p.add_argument("new")
    p = sub.add_parser("patch", help="apply one named set of exact text edits (PATCHES)")
    p.add_argument("name", choices=sorted(PATCHES))
    args = parser.parse_args(argv)
    if args.cmd == "move-module":
        move_module(args.old, args.new, args.package_doc)
    elif args.cmd == "move-symbols":
        move_symbols(args.src, args.dst, args.names, args.doc)
    elif args.cmd == "rename-symbol":
        rename_symbol(args.old, args.new)
    elif args.cmd == "hoist":
        hoist([(ROOT / f).resolve() for f in args.files])
    elif args.cmd == "replace":
        replace((ROOT / args.file).resolve(), args.old, args.new)
    elif args.cmd == "patch":
        for file, old, new in PATCHES[args.name]:
            replace(ROOT / file, old, new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
