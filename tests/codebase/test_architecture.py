"""Rules of the code base that a refactor could silently break."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from tests.helpers import ROOT

CORE_FILES = sorted((ROOT / "core").rglob("*.py"))
QT_MODULES = ("PySide6", "PyQt5", "PyQt6", "shiboken6", "qtpy")


def all_imports(tree: ast.Module) -> list[str]:
    """Every module imported anywhere in the file, function bodies included."""
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
    return names


def test_core_never_imports_qt():
    offenders = [
        str(path.relative_to(ROOT))
        for path in CORE_FILES
        if any(name.split(".")[0] in QT_MODULES for name in all_imports(ast.parse(path.read_text())))
    ]
    assert offenders == []


def test_importing_the_whole_core_and_cli_loads_no_qt():
    modules = [
        ".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__") for p in CORE_FILES
    ]
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        "from core.cli import build_parser; build_parser()\n"
        f"bad = [m for m in sys.modules if m.split('.')[0] in {QT_MODULES!r}]\n"
        "assert not bad, bad\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]


SEED_CALLS = {"manual_seed", "seed", "default_rng"}


def seeded_calls(path: Path) -> list[tuple[str, str]]:
    """(enclosing function, source) of every seeding call in a file."""
    tree = ast.parse(path.read_text())
    found = []

    def visit(node: ast.AST, func: str) -> None:
        for child in ast.iter_child_nodes(node):
            name = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else func
            if isinstance(child, ast.Call) and isinstance(child.func, ast.Attribute) and child.func.attr in SEED_CALLS:
                if child.args:
                    found.append((name, ast.unparse(child)))
            visit(child, name)

    visit(tree, "<module>")
    return found


def test_no_fixed_seed_outside_the_explicit_test_mode():
    """Private randomness comes from OS entropy; a seed is allowed only in test-mode helpers
    (which refuse to export) and for the public weights of the tiny test model and of the random-weight
    models of the GPU check."""
    offenders = []
    for path in CORE_FILES:
        for func, source in seeded_calls(path):
            from_entropy = "urandom" in source or "_entropy" in source
            public_weights = path.name in ("tiny.py", "random_weights.py")
            test_mode = func.startswith("test_mode") or public_weights or "evaluation" in path.parts or "demo" in path.parts
            if not (from_entropy or test_mode):
                offenders.append(f"{path.relative_to(ROOT)}:{func}: {source}")
    assert offenders == []


def test_the_run_spec_and_the_registry_name_the_same_methods():
    # core.specs.runspec validates method names without importing the methods (which import the run spec).
    from core.methods import registry
    from core.specs.runspec import METHOD_NAMES

    assert registry.names() == tuple(sorted(METHOD_NAMES))
    for name in METHOD_NAMES:
        assert registry.get(name).name == name


def test_every_method_list_derives_from_the_one_registration():
    """A method is registered once (core.specs.method_catalogue); the run spec, the record, the certificate, the
    time estimate and the desktop read that registration, and each entry's adapter and facts load under its key."""
    from core.specs import method_catalogue
    from core.certificate import build, privacy_record
    from core.methods import registry
    from core.specs.runspec import METHOD_NAMES
    from desktop import controller

    names = method_catalogue.names()
    assert len(names) == len(method_catalogue.METHODS) >= 4  # keys are unique
    assert METHOD_NAMES == names == tuple(sorted(privacy_record.METHODS)) == registry.names()
    assert set(build.METHOD_NAMES) == set(build.NEIGHBOURING) == set(names)
    assert all(m.facts for m in method_catalogue.METHODS), "each method's facts live in its package"
    assert set(controller.METHOD_SHORT_NAMES) == set(names)
    assert [m.key for m in controller.METHODS] == [m.key for m in method_catalogue.METHODS]
    for entry in method_catalogue.METHODS:
        assert registry.get(entry.key).name == entry.key
    no_guarantee = [m.key for m in method_catalogue.METHODS if not m.end_to_end_dp]
    assert no_guarantee == ["rpsg"]


def test_the_tests_mirror_the_code_and_are_packages():
    """Test files live in folders that mirror the code (tests/privacy/, tests/methods/dp_synrag/, …), never
    flat in tests/, and every folder is a package, so that they import ``tests.helpers`` (and each other) by one
    name whichever file pytest starts from. Only conftest.py and helpers.py stay at the top."""
    tests = ROOT / "tests"
    flat = sorted(p.name for p in tests.glob("test_*.py"))
    assert flat == [], f"move these into the folder of the code they test: {flat}"
    folders = [d for d in [tests, *tests.rglob("*")] if d.is_dir() and d.name != "__pycache__" and any(d.glob("*.py"))]
    assert [d for d in folders if not (d / "__init__.py").is_file()] == []
    offenders = [f"{p.relative_to(ROOT)}: {line.strip()}" for p in sorted(tests.rglob("*.py"))
                 for line in p.read_text(encoding="utf-8").splitlines()
                 if line.lstrip().startswith(("from helpers import", "import helpers", "from test_"))]
    assert offenders == [], "import tests.helpers / tests.<area>.test_x by their full names"


MAX_LINES = 420  # issue 59 item 6: no file of the code over 420 lines


def test_no_file_of_the_code_is_over_420_lines():
    """Every module of core/, desktop/ and resources/ fits in 420 lines: a longer one holds more than one idea."""
    lengths = {str(p.relative_to(ROOT)): len(p.read_text(encoding="utf-8").splitlines())
               for folder in ("core", "desktop", "resources") for p in sorted((ROOT / folder).rglob("*.py"))}
    too_long = {path: n for path, n in lengths.items() if n > MAX_LINES}
    assert too_long == {}, f"split these by their ideas: {too_long}"


MAX_FUNCTION_LINES, MAX_PARAMETERS = 60, 8  # issue 59 item 2: DP-SynRAG's steps as small functions


def test_dp_synrag_has_no_function_over_60_lines_or_8_parameters():
    """Every function of core/methods/dp_synrag/ (methods included; ``self``/``cls`` not counted) is at most 60 lines
    long, docstring included, and takes at most 8 parameters."""
    found = {}
    for path in sorted((ROOT / "core" / "methods" / "dp_synrag").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                a = node.args
                names = [x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)] + [x.arg for x in (a.vararg, a.kwarg) if x]
                params = len([n for n in names if n not in ("self", "cls")])
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_FUNCTION_LINES or params > MAX_PARAMETERS:
                    found[f"{path.relative_to(ROOT)}:{node.name}"] = (lines, params)
    assert found == {}, f"(lines, parameters) over the limits: {found}"
