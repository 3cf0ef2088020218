"""The README and the docs name only things that exist: files, links, make targets, commands, options, spec fields."""

from __future__ import annotations

import argparse
import re
import tomllib
from pathlib import Path

import pytest

from core.cli import build_parser
from core.specs.runspec import RunSpec
from tests.helpers import ROOT

README = ROOT / "README.md"
DOCS = [README, ROOT / "installer" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# Pages other branches of round 3 add (docs/benchmarks.md links them); they must exist once merged.
TOP_LEVEL = ("core/", "desktop/", "resources/", "installer/", "bench/", "tests/", "tools/", "docs/", ".ci/")


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _relative(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _code_blocks(text: str, language: str = "") -> list[str]:
    return re.findall(r"```" + re.escape(language) + r"[^\n]*\n(.*?)```", text, flags=re.S)


@pytest.mark.parametrize("page", DOCS, ids=_relative)
def test_every_relative_link_points_to_a_file(page):
    missing = []
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", _text(page)):
        if re.match(r"[a-z]+:", target):
            continue  # an absolute URL
        resolved = (page.parent / target).resolve()
        if not resolved.exists():
            missing.append(target)
    assert missing == [], f"{_relative(page)} links to missing files: {missing}"


def test_every_path_the_readme_names_exists():
    named = {m.rstrip("/.,") for m in re.findall(r"`([^`\s]+)`", _text(README)) if m.startswith(TOP_LEVEL)}
    assert "core/specs/runspec.py" in named  # the pattern does find paths
    missing = sorted(p for p in named if not any(ROOT.glob(p)))
    assert missing == [], f"README names paths that do not exist: {missing}"


def test_every_make_target_the_readme_names_exists():
    targets = set(re.findall(r"^([a-z][\w-]*):", _text(ROOT / "Makefile"), flags=re.M))
    named = set(re.findall(r"\bmake ([a-z][\w-]*)", _text(README)))
    assert {"run", "test"} <= named
    assert named - targets == set()


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_every_privet_command_and_option_in_the_readme_exists():
    commands = _subcommands()
    lines = [line for block in _code_blocks(_text(README)) for line in block.splitlines()]
    used = [line.split("#")[0].split() for line in lines if line.startswith("privet ")]
    assert len(used) >= 10  # the command-line block is there
    problems = []
    for words in used:
        sub = commands.get(words[1])
        if sub is None:
            problems.append(f"no command {words[1]!r}")
            continue
        options = {s for a in sub._actions for s in a.option_strings}
        nested = next((a for a in sub._actions if isinstance(a, argparse._SubParsersAction)), None)
        if nested is not None and len(words) > 2 and words[2] not in nested.choices:
            problems.append(f"no action {words[2]!r} of privet {words[1]}")
        for word in words[2:]:
            for option in re.findall(r"(--[a-z][\w-]*)", word):
                if option not in options:
                    problems.append(f"privet {words[1]} has no option {option}")
    assert problems == []


def test_the_readme_minimal_spec_loads_and_names_only_known_settings():
    blocks = _code_blocks(_text(README), "toml")
    assert len(blocks) == 1
    spec = RunSpec.from_dict(tomllib.loads(blocks[0]))  # unknown settings or bad values raise here
    assert spec.method == "dp_synrag" and spec.privacy.epsilon == 4.0 and spec.data.person_column == "patient"


def test_the_full_spec_in_docs_using_loads_with_every_section():
    blocks = _code_blocks(_text(ROOT / "docs" / "using.md"), "toml")
    assert len(blocks) == 1
    data = tomllib.loads(blocks[0])
    assert {"data", "privacy", "llm", "embedder", "dp_synrag", "aug_pe", "output"} <= set(data)
    RunSpec.from_dict(data)  # unknown settings or bad values raise here


def test_the_readme_lists_every_method_the_wizard_offers():
    from core.methods.registry import names

    text = _text(README)
    assert all(f"`{name}`" in text for name in names())
    assert "Aug-PE" in text.split("## The desktop wizard")[1].split("##")[0]


def test_the_readme_is_a_how_to_not_a_lab_notebook():
    text = _text(README)
    assert len(text.splitlines()) <= 220
    assert not re.search(r"\b[0-9a-f]{64}\b", text)  # SHA-256s belong in installer/README.md
    assert "| variant | seconds" not in text  # benchmark tables belong in docs/benchmarks.md


def test_the_refactor_tooling_is_gone_and_unreferenced():
    for gone in ("tools/refactor.py", "tools/apply_refactor.sh", "docs/refactor-plan.md"):
        assert not (ROOT / gone).exists()
    sources = [ROOT / "Makefile", ROOT / "pyproject.toml", *DOCS, *(ROOT / "tests").rglob("*.py"), *(ROOT / "tools").glob("*")]
    for source in sources:
        if source.name == Path(__file__).name or not source.is_file():
            continue
        text = _text(source)
        assert "refactor.py" not in text and "apply_refactor" not in text and "refactor-plan" not in text, source


def test_every_test_file_named_anywhere_exists():
    """A test file named by path (``tests/<area>/test_x.py``) in the docs, a README, a docstring or a script
    exists: the tests are laid out by folder, and moving one must update whoever names it."""
    kinds = ("*.md", "*.py", "*.sh", "*.toml")
    sources = [ROOT / "Makefile", ROOT / "pyproject.toml", *DOCS,
               *(p for folder in ("core", "desktop", "resources", "installer", "bench", "tools", "tests", "docs")
                 for kind in kinds for p in (ROOT / folder).rglob(kind))]
    missing = sorted({f"{_relative(source)}: {name}" for source in set(sources) if source.is_file()
                      for name in re.findall(r"(?<![\w/.])(tests/[\w/]*test_\w+\.py)", _text(source))
                      if not (ROOT / name).is_file()})
    assert missing == [], missing


def _method_sections() -> list[str]:
    return re.findall(r"^#{2,4} (\d+(?:\.\d+)*[a-z]?)\.? ", _text(ROOT / "docs" / "method.md"), flags=re.M)


def test_method_md_is_a_guide_in_the_order_of_the_algorithm():
    """docs/method.md (issue 59): at most 700 lines, its sections in numerical order (2.4b after 2.4.9, no gap such
    as a missing 6.1), every section but the chapter heads naming the test files that check it (they exist:
    test_every_test_file_named_anywhere_exists)."""
    text = _text(ROOT / "docs" / "method.md")
    assert len(text.splitlines()) <= 700
    sections = _method_sections()

    def key(number: str) -> tuple:
        return tuple((int(re.match(r"\d+", p).group()), p.lstrip("0123456789")) for p in number.split("."))

    assert sections == sorted(sections, key=key), sections
    for chapter in {s.split(".")[0] for s in sections}:
        subsections = [s for s in sections if s.startswith(f"{chapter}.") and s != f"{chapter}."]
        assert not subsections or subsections[0] in (f"{chapter}.0", f"{chapter}.1"), (chapter, subsections[:2])
    bodies = re.split(r"^#{2,4} ", text, flags=re.M)[1:]
    untested = [b.splitlines()[0] for b in bodies if re.match(r"\d+\.\d", b) and "tests/" not in b
                and not b.startswith(("2.4 ", "3.2 ", "3.4 ", "3.6 ", "2.4.3 ", "2.4.5 "))]
    assert untested == [], untested


def test_every_method_md_section_cited_exists():
    """A citation "method.md §2.4b" or "method.md, section 2.0b" (the certificate's words) anywhere in the code, the
    tests, the bench scripts or the docs names a section docs/method.md has."""
    sections = set(_method_sections()) | {s.split(".")[0] for s in _method_sections()}
    sources = [*DOCS, *(p for folder in ("core", "desktop", "bench", "tests", "tools") for p in (ROOT / folder).rglob("*.py"))]
    cited = {(_relative(p), n) for p in sources for n in re.findall(
        r"method\.md(?:,? (?:§|section )|[^\n§]{0,3}§)(\d+(?:\.\d+)*[a-z]?)", _text(p))}
    missing = sorted((path, n) for path, n in cited if n.rstrip(".") not in sections)
    assert len(cited) > 50 and missing == [], missing
