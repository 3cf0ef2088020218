"""The import graph of Privet's own packages, function-level imports included, and its cycles.

``lint-imports`` and most tools only see imports at the top of a module. A cycle hidden by an
import inside a function body is still a cycle in the design (the two modules cannot be
understood, tested or moved apart), so this script reads *every* ``import`` statement with
:mod:`ast` and classifies each edge:

* ``top``       — executed when the module is imported;
* ``function``  — inside a function or method body (runs on first call);
* ``typing``    — under ``if TYPE_CHECKING:`` (never runs; left out of cycles unless ``--typing``);
* ``string``    — a string constant that names a project module (``importlib.import_module("core.x")``,
  ``optional_module("core.ledger")``, a table of module names): a dependency hidden from every tool
  (left out of cycles unless ``--strings``).

Usage (from the repository root)::

    python tools/import_graph.py                 # cycles between modules and between packages
    python tools/import_graph.py --edges         # also list every function-level import
    python tools/import_graph.py --check         # exit 1 when any module-level cycle exists

The functions :func:`build_graph`, :func:`module_cycles` and :func:`package_cycles` are also called
from ``tests/codebase/test_import_graph.py``.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("core", "desktop", "resources")
KINDS = ("top", "function", "typing", "string")


@dataclass(frozen=True)
class Edge:
    """``source`` imports ``target`` at ``line`` of ``source``'s file; ``kind`` is one of KINDS."""

    source: str
    target: str
    line: int
    kind: str


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def discover(root: Path, packages: Iterable[str] = PACKAGES) -> dict[str, Path]:
    """Every module of the given top-level packages, by dotted name."""
    found: dict[str, Path] = {}
    for package in packages:
        base = root / package
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*.py")):
            if "__pycache__" not in path.parts:
                found[module_name(path, root)] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.Module) -> Iterator[tuple[ast.Import | ast.ImportFrom, str]]:
    """Every import node with its kind (top / function / typing)."""

    def visit(node: ast.AST, kind: str) -> Iterator[tuple[ast.Import | ast.ImportFrom, str]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                yield child, kind
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                yield from visit(child, "typing" if kind == "typing" else "function")
            elif isinstance(child, ast.If) and _is_type_checking(child.test):
                for stmt in child.body:
                    yield from visit(ast.Module(body=[stmt], type_ignores=[]), "typing")
                for stmt in child.orelse:
                    yield from visit(ast.Module(body=[stmt], type_ignores=[]), kind)
            else:
                yield from visit(child, kind)

    yield from visit(tree, "top")


def _resolve(node: ast.Import | ast.ImportFrom, importer: str, is_package: bool, modules: set[str]) -> list[str]:
    """The project modules an import statement loads (names of symbols are resolved to modules when they are)."""
    if isinstance(node, ast.Import):
        candidates = [alias.name for alias in node.names]
    else:
        if node.level:
            base = importer.split(".")
            if not is_package:
                base = base[:-1]
            base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
            prefix = ".".join(base + ([node.module] if node.module else []))
        else:
            prefix = node.module or ""
        candidates = []
        for alias in node.names:
            sub = f"{prefix}.{alias.name}"
            candidates.append(sub if sub in modules else prefix)
    out = []
    for name in candidates:
        # `import core.models.registry` -> the deepest project module named.
        while name and name not in modules:
            name = name.rpartition(".")[0]
        if name:
            out.append(name)
    return out


def build_graph(root: Path = ROOT, packages: Iterable[str] = PACKAGES) -> list[Edge]:
    """All import edges between project modules (no self-edges, one per source/target/line)."""
    found = discover(root, packages)
    modules = set(found)
    edges: set[Edge] = set()
    for name, path in found.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node, kind in _imports(tree):
            for target in _resolve(node, name, path.name == "__init__.py", modules):
                if target != name:
                    edges.add(Edge(name, target, node.lineno, kind))
        for const in ast.walk(tree):
            is_name = isinstance(const, ast.Constant) and isinstance(const.value, str) and const.value in modules
            if is_name and const.value != name:
                edges.add(Edge(name, const.value, const.lineno, "string"))
    return sorted(edges, key=lambda e: (e.source, e.line, e.target))


def function_level_statements(root: Path = ROOT, packages: Iterable[str] = PACKAGES) -> list[tuple[str, int, str]]:
    """Every import statement inside a function body, of any module (project or third party)."""
    out = []
    for name, path in discover(root, packages).items():
        for node, kind in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            if kind == "function":
                what = node.module if isinstance(node, ast.ImportFrom) else ", ".join(a.name for a in node.names)
                out.append((name, node.lineno, "." * getattr(node, "level", 0) + (what or "")))
    return sorted(out)


def _adjacency(edges: Iterable[Edge], kinds: Iterable[str], collapse=None) -> dict[str, set[str]]:
    allowed = set(kinds)
    graph: dict[str, set[str]] = defaultdict(set)
    for e in edges:
        if e.kind not in allowed:
            continue
        a, b = (collapse(e.source), collapse(e.target)) if collapse else (e.source, e.target)
        graph[a]
        graph[b]
        if a != b:
            graph[a].add(b)
    return graph


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative; components with more than one node, each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    result: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    result.append(sorted(component))
    return sorted(result)


def shortest_cycle(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    """One shortest cycle through the first node of ``component`` (breadth-first), closed."""
    inside = set(component)
    start = component[0]
    parents: dict[str, str] = {}
    frontier = [start]
    seen = {start}
    while frontier:
        nxt = []
        for node in frontier:
            for child in sorted(graph[node] & inside):
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(parents[path[-1]])
                    return list(reversed(path)) + [start]
                if child not in seen:
                    seen.add(child)
                    parents[child] = node
                    nxt.append(child)
        frontier = nxt
    return [start]


def package_of(module: str) -> str:
    """``core.privacy.planner`` -> ``core.privacy``; top-level modules (``core.cli``) stay themselves."""
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) >= 2 else module


def _kinds(include_typing: bool, include_strings: bool) -> tuple[str, ...]:
    return ("top", "function") + (("typing",) if include_typing else ()) + (("string",) if include_strings else ())


def module_cycles(edges: list[Edge], include_typing: bool = False, include_strings: bool = False) -> list[list[str]]:
    """Cycles between modules, function-level imports included."""
    return strongly_connected(_adjacency(edges, _kinds(include_typing, include_strings)))


def package_cycles(
    edges: list[Edge], root: Path = ROOT, include_typing: bool = False, include_strings: bool = False
) -> list[list[str]]:
    """Cycles between sub-packages (``core.privacy``, ``core.certificate``…) and top-level modules."""
    kinds = _kinds(include_typing, include_strings)
    packages = {module_name(p.parent, root) for p in root.glob("*/*/__init__.py")}

    def collapse(module: str) -> str:
        pkg = package_of(module)
        return pkg if pkg in packages else module

    return strongly_connected(_adjacency(edges, kinds, collapse))


def _edges_within(edges: list[Edge], component: list[str], collapse=None) -> list[Edge]:
    inside = set(component)
    out = []
    for e in edges:
        a, b = (collapse(e.source), collapse(e.target)) if collapse else (e.source, e.target)
        if a in inside and b in inside and a != b and e.kind in ("top", "function"):
            out.append(e)
    return out


def report(
    root: Path = ROOT, show_edges: bool = False, include_typing: bool = False, include_strings: bool = False
) -> tuple[str, int]:
    edges = build_graph(root)
    lines: list[str] = []
    counts = {k: sum(1 for e in edges if e.kind == k) for k in KINDS}
    files = {e.source for e in edges if e.kind == "function"}
    statements = function_level_statements(root)
    lines.append(
        f"{len(edges)} import edges between project modules: {counts['top']} top-level, "
        f"{counts['function']} function-level (in {len(files)} modules), {counts['typing']} TYPE_CHECKING-only, "
        f"{counts['string']} by module name in a string."
    )
    lines.append(f"Import statements inside function bodies (any module, project or third party): {len(statements)}.")
    kinds = _kinds(include_typing, include_strings)
    graph = _adjacency(edges, kinds)
    cycles = module_cycles(edges, include_typing, include_strings)
    top_only = strongly_connected(_adjacency(edges, ("top",)))
    lines.append(
        f"Module cycles counting function-level imports: {len(cycles)} (top-level imports only: {len(top_only)})."
    )
    for i, component in enumerate(cycles, 1):
        lines.append(f"\n[{i}] {len(component)} modules: {', '.join(component)}")
        lines.append("    e.g. " + " -> ".join(shortest_cycle(graph, component)))
        for e in _edges_within(edges, component):
            lines.append(f"    {e.source}:{e.line} -> {e.target}  ({e.kind})")

    packages = {module_name(p.parent, root) for p in root.glob("*/*/__init__.py")}

    def collapse(module: str) -> str:
        pkg = package_of(module)
        return pkg if pkg in packages else module

    pgraph = _adjacency(edges, kinds, collapse)
    pcycles = strongly_connected(pgraph)
    lines.append(f"\nPackage-level cycles (sub-packages collapsed): {len(pcycles)}.")
    for i, component in enumerate(pcycles, 1):
        lines.append(f"\n[P{i}] {', '.join(component)}")
        lines.append("    e.g. " + " -> ".join(shortest_cycle(pgraph, component)))
    if show_edges:
        lines.append("\nImport statements inside function bodies:")
        for source, line, what in statements:
            lines.append(f"    {source}:{line} imports {what}")
        lines.append("\nProject modules named in strings (hidden dependencies):")
        for e in edges:
            if e.kind == "string":
                lines.append(f"    {e.source}:{e.line} -> {e.target}")
    return "\n".join(lines), len(cycles)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="repository root (default: this checkout)")
    parser.add_argument("--edges", action="store_true", help="also list every function-level import")
    parser.add_argument("--typing", action="store_true", help="count TYPE_CHECKING imports as edges too")
    parser.add_argument("--strings", action="store_true", help="count modules named in strings as edges too")
    parser.add_argument("--check", action="store_true", help="exit 1 when a module-level cycle exists")
    args = parser.parse_args(argv)
    text, n_cycles = report(args.root.resolve(), args.edges, args.typing, args.strings)
    print(text)
    return 1 if (args.check and n_cycles) else 0


if __name__ == "__main__":
    sys.exit(main())
