"""The custodians' wheelhouse downloads ``installer/requirements.txt``: runtime dependencies only. The tests' and
the developers' tools are in ``installer/requirements-test.txt`` (pinned as pyproject.toml's ``test`` extra), and
``make setup`` installs both."""

from __future__ import annotations

import re
import tomllib

from core.install.provenance import source_root

TEST_ONLY = {"dp-accounting", "pytest", "pytest-qt", "pytest-timeout", "ruff", "mypy", "import-linter"}


def _requirements(name: str) -> dict[str, str]:
    """{package name: the whole requirement} of one installer requirements file."""
    found = {}
    for line in (source_root() / "installer" / name).read_text(encoding="utf-8").splitlines():
        requirement = line.split("#", 1)[0].strip()
        if requirement:
            found[re.split(r"[=<>!~\[ ]", requirement, maxsplit=1)[0].lower()] = requirement
    return found


def test_the_wheelhouse_requirements_hold_no_test_tool():
    assert not TEST_ONLY & set(_requirements("requirements.txt"))


def test_the_test_requirements_are_the_test_extra():
    pyproject = tomllib.loads((source_root() / "pyproject.toml").read_text(encoding="utf-8"))
    extra = pyproject["project"]["optional-dependencies"]["test"]
    assert set(_requirements("requirements-test.txt")) >= TEST_ONLY
    assert sorted(_requirements("requirements-test.txt").values()) == sorted(extra)


def test_make_setup_installs_both_and_reinstalls_when_either_changes():
    makefile = (source_root() / "Makefile").read_text(encoding="utf-8")
    stamp_rule = next(line for line in makefile.splitlines() if line.startswith("$(STAMP):"))
    assert "installer/requirements.txt" in stamp_rule and "installer/requirements-test.txt" in stamp_rule
    assert "-r installer/requirements.txt -r installer/requirements-test.txt" in makefile
    wheelhouse = (source_root() / "installer" / "build_wheelhouse.sh").read_text(encoding="utf-8")
    assert "requirements.txt" in wheelhouse and "requirements-test.txt" not in wheelhouse
