"""No method name is branched on outside core/methods/ (and core/specs/method_catalogue.py), and desktop/ never asks
for a method by name: a method's facts are read through the one registration (core.specs.method_catalogue).

Read from the source tree (AST): a registered method key as a string literal compared with something (``==``,
``in``, ``match``), or two or more of them as a per-method table or list (a dict's keys, a tuple), outside the
methods' packages; in desktop/, any method key at all, or an import of a method's package; and anywhere outside
the methods, their spec sections and the run spec, a read or write of a method's section as an attribute
(``spec.dp_synrag.R``), which a string check cannot see. The allow-lists below say why each entry remains.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from dataclasses import fields

from core.specs import method_catalogue
from core.specs.runspec import RunSpec
from tests.helpers import ROOT

KEYS = frozenset(method_catalogue.names())
PACKAGES = frozenset(m.adapter.split(":")[0].split(".")[2] for m in method_catalogue.METHODS)  # core.methods.<p>
OWN_PLACES = ("core/methods/", "core/specs/method_catalogue.py")
SECTIONS = frozenset(f.name for f in fields(RunSpec)) & KEYS  # a method's own section of the run spec
SECTION_PLACES = ("core/methods/", "core/specs/", "core/specs/runspec.py", "core/specs/method_catalogue.py")

# Paths (a folder ends in "/") that may still hold a list or a table of method names, and why. Each must still
# need it (checked below). A comparison or a match with a method name is allowed in none of them.
ALLOWED = {
    "core/evaluation/config.py": "privet evaluate is an experiment over named methods (docs/method.md §5): its "
                                 "scales list the methods it compares, and it names the method under test and "
                                 "the methods it sweeps over ε once, here (the other evaluation modules compare "
                                 "with those names)",
}
COMPARISONS = ("compared with a method name", "matched against a method name")
# Paths that still read or write a method's section as an attribute, and why. Each must still need it.
SECTION_ALLOWED = {
    "core/evaluation/": "privet evaluate sets each compared method's section for its scales (an experiment)",
    "core/compute/memory.py": "a private-prediction wave's memory from [dp_synrag] T, with the shared [writing] "
                              "settings (T is [dp_synrag]'s even for a [dp_synth] spec: a rough figure)",
}
# desktop/ imports of a method's package, and why: the shared [dp_synrag] section's public choices, built once
# when the page is made (before a method is chosen) and shown only when the method's WizardOptions ask for them.
DESKTOP_IMPORTS = {
    ("desktop/wizard/topic_names.py", "core.methods.dp_synrag.vocab.vocabulary"): "the shipped public word lists",
}


def _is_key(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in KEYS


def _keys_in(node: ast.AST) -> int:
    """Method keys in a literal or a literal collection."""
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return sum(_is_key(e) for e in node.elts)
    return int(_is_key(node))


def branches(source: str) -> list[tuple[int, str]]:
    """Where ``source`` branches on a method key: a comparison or ``match`` with one, or a table or list of two
    or more."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare) and any(_keys_in(n) for n in [node.left, *node.comparators]):
            found.append((node.lineno, "compared with a method name"))
        elif isinstance(node, ast.Dict) and sum(_is_key(k) for k in node.keys if k is not None) >= 2:
            found.append((node.lineno, "a table keyed by method names"))
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set)) and _keys_in(node) >= 2:
            found.append((node.lineno, "a list of method names"))
        elif isinstance(node, ast.MatchValue) and _is_key(node.value):
            found.append((node.lineno, "matched against a method name"))
    return found


def section_attributes(source: str) -> list[tuple[int, str]]:
    """Where ``source`` reads or writes a method's section as an attribute (``spec.dp_synrag``, ``x.rpsg``)."""
    return [(node.lineno, f"uses the [{node.attr}] section") for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Attribute) and node.attr in SECTIONS]


def _section_allowed(path: str) -> bool:
    return path.startswith(SECTION_PLACES) or any(
        path == a or (a.endswith("/") and path.startswith(a)) for a in SECTION_ALLOWED)


def method_package_imports(source: str) -> list[tuple[int, str]]:
    """Where ``source`` imports a method's package (``core.methods.<m>``, a registered method's)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        modules = ([a.name for a in node.names] if isinstance(node, ast.Import)
                   else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
        for module in modules:
            parts = module.split(".")
            if parts[:2] == ["core", "methods"] and len(parts) > 2 and parts[2] in PACKAGES:
                found.append((node.lineno, f"imports {module}"))
    return found


def named_in_desktop(source: str) -> list[tuple[int, str]]:
    """Where desktop ``source`` asks for a method by name: any method key, or an import of a method's package."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if _is_key(node):
            found.append((node.lineno, f"names the method {node.value!r}"))  # type: ignore[attr-defined]
    return sorted(found + method_package_imports(source))


def _sources(folder: str) -> list[tuple[str, str]]:
    return [(p.relative_to(ROOT).as_posix(), p.read_text(encoding="utf-8")) for p in sorted((ROOT / folder).rglob("*.py"))]


def _allowed(path: str) -> bool:
    return path.startswith(OWN_PLACES) or any(path == a or (a.endswith("/") and path.startswith(a)) for a in ALLOWED)


def test_the_checks_find_a_planted_branch():
    assert branches('if spec.method == "rpsg":\n    pass\n') == [(1, "compared with a method name")]
    assert branches('x = spec.method in ("dp_synrag", "dp_synth")\n')
    assert branches('WORK = {"rpsg": 1, "aug_pe": 2}\n') == [(1, "a table keyed by method names")]
    assert branches('match m:\n    case "aug_pe":\n        pass\n')
    assert not branches('method: str = "dp_synrag"\nsection = data.get("dp_synrag")\n')  # a default, a section
    assert named_in_desktop('from core.methods.dp_synrag.shape.corpus_shape import released_allocation\n')
    assert named_in_desktop('label = NAMES["dp_synth"]\n')
    assert not named_in_desktop('from core.methods.base import PlanSummary\nx = spec.dp_synrag.R\n')
    assert method_package_imports('from core.methods.dp_synrag.shape.adaptive import with_public_defaults\n')
    assert not method_package_imports('from core.methods.class_conditional import method_for\n')
    assert section_attributes('n = spec.dp_synrag.max_prompt_tokens\n') == [(1, "uses the [dp_synrag] section")]
    assert section_attributes('spec.aug_pe.population = 4\n')
    assert not section_attributes('m = spec.method\nx = getattr(spec, spec.method)\n')


def test_no_method_name_is_branched_on_outside_the_methods():
    found = [f"{path}:{line}: {what}" for path, source in _sources("core") + _sources("desktop")
             if not path.startswith(OWN_PLACES) for line, what in branches(source)
             if what in COMPARISONS or not _allowed(path)]
    assert not found, "ask core.specs.method_catalogue.facts(key) instead:\n" + "\n".join(found)


def test_the_evaluation_compares_no_method_name():
    """The 7 comparisons privet evaluate once made (runs.py, downstream.py, evaluate.py) read the catalogue or the
    experiment's named choices (core.evaluation.config) instead."""
    found = [f"{path}:{line}: {what}" for path, source in _sources("core/evaluation")
             for line, what in branches(source) if what in COMPARISONS]
    assert not found, found


def test_no_method_section_is_read_outside_the_methods():
    found = [f"{path}:{line}: {what}" for path, source in _sources("core") + _sources("desktop")
             if not _section_allowed(path) for line, what in section_attributes(source)]
    assert not found, "read the setting through the method's facts (core.specs.method_catalogue) instead:\n" + "\n".join(
        found)


def test_the_desktop_never_asks_for_a_method_by_name():
    found = []
    for path, source in _sources("desktop"):
        for line, what in named_in_desktop(source):
            module = what.removeprefix("imports ")
            if (path, module) not in DESKTOP_IMPORTS:
                found.append(f"{path}:{line}: {what}")
    assert not found, "ask the controller (core.specs.method_catalogue) instead:\n" + "\n".join(found)


def test_the_pipeline_the_plan_and_a_resume_import_no_method_package():
    """They ask the method (core.methods.registry, core.methods.class_conditional) or its facts
    (core.specs.method_catalogue) instead of importing a method's internals."""
    run_modules = ("pipeline", "planning", "resume", "privacy_record", "export_at_end", "loaded_models")
    found = [f"{path}:{line}: {what}" for path in (f"core/run/{name}.py" for name in run_modules)
             for line, what in method_package_imports((ROOT / path).read_text(encoding="utf-8"))]
    assert not found, "ask core.specs.method_catalogue.facts(spec.method) instead:\n" + "\n".join(found)


def test_every_allowed_entry_is_still_needed():
    sources = dict(_sources("core") + _sources("desktop"))
    for allowed in ALLOWED:
        assert any(branches(s) for p, s in sources.items() if p == allowed or p.startswith(allowed)), (
            f"{allowed} no longer names methods: drop it from ALLOWED")
    for allowed in SECTION_ALLOWED:
        assert any(section_attributes(s) for p, s in sources.items() if p == allowed or p.startswith(allowed)), (
            f"{allowed} no longer uses a method's section: drop it from SECTION_ALLOWED")
    for path, module in DESKTOP_IMPORTS:
        assert f"imports {module}" in [w for _, w in named_in_desktop(sources[path])], f"{path}: drop {module}"


def test_the_facts_agree_and_load_without_the_model_code():
    """Two methods may share a parameter's or a stage's words only word for word, and reading the facts
    (every label and meaning, as the certificate and the progress lines do) imports no torch."""
    from core.certificate.render import SHARED_PARAMETER_MEANINGS
    from core.specs.stage_labels import SHARED_STAGE_LABELS

    for field, shared in (("parameter_meanings", SHARED_PARAMETER_MEANINGS), ("stage_labels", SHARED_STAGE_LABELS)):
        seen = dict(shared)
        for method in method_catalogue.METHODS:
            for key, words in getattr(method_catalogue.facts(method.key), field).items():
                assert seen.setdefault(key, words) == words, f"{method.key}: {field}[{key!r}] differs"
    code = ("import sys; from core.specs import method_catalogue as c; from core.specs.stage_labels import STAGE_LABELS; "
            "from core.certificate.render import PARAMETER_MEANINGS; dict(STAGE_LABELS); dict(PARAMETER_MEANINGS); "
            "[c.facts(k) for k in c.names()]; print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
