"""tools/import_graph.py finds the cycles that function-level imports hide.

The small packages are called ``app`` so that they can never be mistaken for Privet's own ``core``.
"""

from __future__ import annotations

from pathlib import Path

from tools.import_graph import build_graph, module_cycles, package_cycles
from tests.helpers import ROOT



def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_a_cycle_through_a_function_level_import_is_found(tmp_path):
    root = _write(
        tmp_path,
        {
            "app/__init__.py": "",
            "app/a.py": "from app.b import thing\n",
            "app/b.py": "thing = 1\n\ndef later():\n    from app.a import thing\n    return thing\n",
            "app/c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from app.a import thing\n",
        },
    )
    edges = build_graph(root, packages=("app",))
    kinds = {(e.source, e.target): e.kind for e in edges}
    assert kinds == {("app.a", "app.b"): "top", ("app.b", "app.a"): "function", ("app.c", "app.a"): "typing"}
    assert module_cycles(edges) == [["app.a", "app.b"]]


def test_modules_named_in_strings_are_edges_of_their_own_kind(tmp_path):
    root = _write(
        tmp_path,
        {
            "app/__init__.py": "",
            "app/a.py": "import importlib\nmod = importlib.import_module('app.b')\n",
            "app/b.py": "from app import a\n",
        },
    )
    edges = build_graph(root, packages=("app",))
    assert {(e.source, e.target, e.kind) for e in edges} == {
        ("app.a", "app.b", "string"),
        ("app.b", "app.a", "top"),
    }
    assert module_cycles(edges) == []
    assert module_cycles(edges, include_strings=True) == [["app.a", "app.b"]]


def test_package_level_cycles_collapse_sub_packages(tmp_path):
    root = _write(
        tmp_path,
        {
            "app/__init__.py": "",
            "app/sealing/__init__.py": "",
            "app/sealing/cli.py": "def run():\n    from app.release import export\n",
            "app/sealing/build.py": "x = 1\n",
            "app/release.py": "from app.sealing.build import x\n",
        },
    )
    edges = build_graph(root, packages=("app",))
    assert module_cycles(edges) == []
    assert package_cycles(edges, root) == [["app.release", "app.sealing"]]


def test_privet_has_no_import_cycles_counting_function_level_imports():
    edges = build_graph(ROOT)
    assert module_cycles(edges) == []
    assert package_cycles(edges, ROOT) == []
